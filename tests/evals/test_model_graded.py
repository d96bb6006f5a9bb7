"""promptfoo's model-graded types through the evaluation's judge (issue 42, item 3):
`factuality`, `model-graded-closedqa` and `g-eval` ask their own prompts and are scored by
promptfoo's rules — a category (D fails), Y/N, a 0–10 score over 10 against 0.7 — and an answer
that cannot be read is an error of the cell, never a pass."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from llmspace.cli import main
from llmspace.errors import UserFacingError
from llmspace.evals.assertions import JUDGED, parse_assertion
from llmspace.evals.model_graded import grade, prompt
from tests.evals.support import last_user, write_eval
from tests.support.llm_server import Turn


def test_factuality_passes_every_category_but_a_disagreement():
    assert grade("factuality", '{"category": "B", "reason": "adds a detail"}', None)[:2] == (True, 1.0)
    passed, score, why = grade("factuality", '{"category": "D", "reason": "wrong year"}', None)
    assert (passed, score) == (False, 0.0) and "disagreement" in why and "wrong year" in why
    assert grade("factuality", "The answer is (E).", None)[0] is True  # a bare letter is read too
    with pytest.raises(ValueError):
        grade("factuality", '{"category": "maybe"}', None)


def test_closedqa_reads_the_final_y_or_n_and_g_eval_scores_over_ten():
    assert grade("model-graded-closedqa", "It names Paris.\nY\nY", None)[0] is True
    assert grade("model-graded-closedqa", "It does not.\nN\nN", None)[0] is False
    with pytest.raises(ValueError):
        grade("model-graded-closedqa", "I think so", None)
    assert grade("g-eval", '{"score": 8, "reason": "clear"}', None)[:2] == (True, 0.8)
    assert grade("g-eval", '{"score": 6, "reason": "vague"}', None)[0] is False  # 0.6 < 0.7
    assert grade("g-eval", '{"score": 6}', 0.5)[0] is True
    with pytest.raises(ValueError):
        grade("g-eval", '{"score": 11}', None)


def test_the_prompts_carry_the_reference_and_the_criteria():
    assert "[Expert answer]: Paris" in prompt("factuality", "Paris", "Capital of France?", "Paris.", None)[1]
    assert "[Expert answer]: Lyon" in prompt("factuality", None, "Capital?", "x", "Lyon")[1]  # the case's expected
    assert "[Criterion]: mentions Paris" in prompt("model-graded-closedqa", "mentions Paris", "Q", "A", None)[1]
    assert "- clear\n- short" in prompt("g-eval", ["clear", "short"], "Q", "A", None)[1]


def test_model_graded_assertions_are_judged_and_keep_their_name():
    a = parse_assertion({"type": "g-eval", "value": "is clear", "threshold": 0.5}, "t")
    assert (a.type, a.grader, a.label, a.to_data()["type"]) == (JUDGED, "g-eval", "g-eval 'is clear'", "g-eval")
    with pytest.raises(UserFacingError, match="no not- form"):
        parse_assertion({"type": "not-factuality", "value": "x"}, "t")
    with pytest.raises(UserFacingError, match="needs the criteria"):
        parse_assertion({"type": "model-graded-closedqa"}, "t")


def _grader_answer(system: str, text: str) -> str:
    if "factual content" in system:
        return '{"category": "D", "reason": "says 5"}' if "[Submitted answer]: 5" in text else '{"category": "C", "reason": "same"}'
    if "meets a criterion" in system:
        return "The answer is a number.\nY\nY"
    return '{"steps": ["read"], "score": 9, "reason": "clear"}' if "## The model's answer\n7" in text else '{"score": 3}'


def test_an_evaluation_grades_factuality_closedqa_and_g_eval_with_its_judge(home, srv, oracle, capsys):
    def respond(kind: str, body: Any) -> Any:
        system = next((m.get("content") for m in body.get("messages", []) if m.get("role") == "system"), "")
        if isinstance(system, str) and ("factual content" in system or "criterion" in system or "criteria" in system):
            return Turn(text=_grader_answer(system, last_user(body)), usage=(40, 10))
        return oracle(kind, body)

    srv.responder = respond
    path = write_eval(home, srv, [], assertions=[], judge="loop/judge")
    ws = home / "workspace"
    tests = [{"vars": {"question": "What is 3 + 4?"}, "assert": [
                 {"type": "factuality", "value": "7"}, {"type": "model-graded-closedqa", "value": "is a number"},
                 {"type": "g-eval", "value": "correct and short"}]},
             {"vars": {"question": "What is 2 + 2?"}, "assert": [
                 {"type": "factuality", "value": "4"}, {"type": "g-eval", "value": "correct and short"}]}]
    (ws / "tests.yaml").write_text(yaml.safe_dump(tests), encoding="utf-8")

    assert main(["eval", "run", str(path), "--dataset", str(ws / "tests.yaml")]) == 1, capsys.readouterr().err

    (folder,) = sorted((home / "evals" / "quiz").iterdir())
    rows = {r["output"]: r for r in map(json.loads, (folder / "results.jsonl").read_text("utf-8").splitlines())}
    seven = {c["assertion"].split()[0]: c for c in rows["7"]["checks"]}
    assert [seven[k]["pass"] for k in ("factuality", "model-graded-closedqa", "g-eval")] == [True, True, True]
    assert seven["g-eval"]["score"] == 0.9
    four = {c["assertion"].split()[0]: c for c in rows["4"]["checks"]}
    assert four["factuality"]["pass"] and not four["g-eval"]["pass"] and "0.30 < 0.7" in four["g-eval"]["reason"]


def test_the_context_types_read_the_context_variable_and_score_the_share_the_judge_counts():
    text = prompt("context-faithfulness", None, "Q", "Paris is big.", None, {"context": "Paris has 2M people."})[1]
    assert "[Context]: Paris has 2M people." in text and "[Answer]: Paris is big." in text
    assert "[Reference answer]: Lyon" in prompt("context-recall", None, "Q", "A", "Lyon", {"context": "c"})[1]
    assert "[Query]: Q" in prompt("context-relevance", None, "Q", "A", None, {"context": "c"})[1]
    assert grade("context-faithfulness", '{"total": 4, "count": 3, "reason": "one unsupported"}', None)[:2] == (True, 0.75)
    assert grade("context-recall", '{"total": 2, "count": 1}', None)[:2] == (False, 0.5)  # below the default 0.7
    assert grade("context-relevance", '{"total": 2, "count": 1}', 0.5)[0] is True
    with pytest.raises(ValueError):
        grade("context-relevance", '{"total": 1, "count": 2}', None)
