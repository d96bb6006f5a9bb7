"""Judge answers: the asked-for JSON, a single score, a bare number, fenced JSON; anything
else cannot be read. Criteria come from a thread rubric by name, or from the text."""

from __future__ import annotations

import pytest

from llmspace.core.run_verdicts import create_rubric
from llmspace.core.threadio import thread_from_data
from llmspace.evals.judge import SYSTEM, criteria_for, judge_prompt, parse_answer, prompt_hash

NAMES = ["accuracy", "clarity"]


@pytest.mark.parametrize(("text", "scores", "reason"), [
    ('{"scores": {"accuracy": 4, "clarity": 5}, "reason": "Good."}', {"accuracy": 4.0, "clarity": 5.0}, "Good."),
    ('{"scores": {"Accuracy": "3", "CLARITY": 2}}', {"accuracy": 3.0, "clarity": 2.0}, ""),
    ('{"score": 2, "reason": "Weak."}', {"accuracy": 2.0, "clarity": 2.0}, "Weak."),
    ("5", {"accuracy": 5.0, "clarity": 5.0}, ""),
    ("4/5", {"accuracy": 4.0, "clarity": 4.0}, ""),
    ('Sure! Here you go: {"scores": {"accuracy": 1, "clarity": 1}, "reason": "x"} Hope it helps.', {"accuracy": 1.0, "clarity": 1.0}, "x"),
    ('```json\n{"scores": {"accuracy": 3, "clarity": 3}}\n```', {"accuracy": 3.0, "clarity": 3.0}, ""),
])
def test_readable_answers_give_a_score_per_criterion(text, scores, reason):
    assert parse_answer(text, NAMES) == (scores, reason)


@pytest.mark.parametrize("text", ["It is pretty good.", '{"scores": {"accuracy": 4}}', '{"scores": {"accuracy": 9, "clarity": 3}}',
                                  "7", '{"reason": "no score"}', "[4, 5]"])
def test_unreadable_answers_raise(text):
    with pytest.raises(ValueError):
        parse_answer(text, NAMES)


def test_criteria_come_from_a_rubric_of_the_thread_by_name_or_from_the_text():
    thread = thread_from_data({"title": "t", "context": {"messages": []}})
    create_rubric(thread, "Quality", [{"name": "accuracy", "description": "facts right"}, {"name": "clarity"}])
    assert criteria_for("quality", thread).items == (("accuracy", "facts right"), ("clarity", ""))
    assert criteria_for("- is polite\n- is short", thread).names == ["is polite", "is short"]


def test_the_prompt_hash_changes_with_the_prompt():
    from llmspace.evals.judge import Criteria

    c = Criteria((("accuracy", ""),))
    one = prompt_hash(SYSTEM, judge_prompt("Q", "A", None, c))
    assert one == prompt_hash(SYSTEM, judge_prompt("Q", "A", None, c))
    assert one != prompt_hash(SYSTEM, judge_prompt("Q", "B", None, c))


@pytest.mark.parametrize("text", ['{"scores": ' + "[" * 100_000 + "]" * 100_000 + "}",
                                  'Sure: {"scores": ' + "[" * 100_000 + "]" * 100_000 + "} done"])
def test_an_answer_nested_100000_deep_is_unreadable_with_the_reason_not_a_recursion_error(text):
    with pytest.raises(ValueError, match="the answer's JSON is nested more than 254 levels deep"):
        parse_answer(text, NAMES)
