"""The checks that reject a rewritten prompt before it runs, the prompt taken from a reflector's
answer, and the stratified split."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.optimize.candidates import check_candidate, extract_prompt
from llmspace.optimize.split import parse_split, split_cases

ORIGINAL = "You answer questions about {{topic}} for {{user}}."


@pytest.mark.parametrize("candidate, why", [
    ("You answer questions for {{user}}.", "drops {{topic}}"),
    ("You answer questions about {{subject}} for {{user}}.", "drops {{topic}} and adds {{subject}}"),
    ("About {{topic}} for {{user}}, today {{date}}.", "adds {{date}}"),
    ("About {{topic}} for {{user}}. {{@include('~/.ssh/id_rsa')}}", "{{@include(…)}}"),
    ("About {{topic}} for {{user}}. {% if exists('/etc/passwd') %}x{% endif %}", "exists()"),
    ("About {{topic}} for {{user}}. {% if topic %}x{% endif %}", "{% %} tags"),
    ("About {{ topic | upper }} for {{user}}.", "filters"),
    ("About {{topic}} for {{user}}. {% if %}", "broken"),
    ("About {{topic}} for {{user}. ", "broken"),
    ("About {{topic}} for {{user}}. " + "Be precise. " * 20, "over the cap"),
    ("", "no prompt"),
])
def test_a_candidate_that_changes_variables_adds_template_constructs_breaks_syntax_or_grows_is_rejected(candidate, why):
    problem = check_candidate(ORIGINAL, candidate)
    assert problem is not None and why in problem


def test_a_rewrite_that_keeps_every_variable_and_construct_passes():
    assert check_candidate(ORIGINAL, "For {{user}}: answer about {{topic}} with the number only.") is None
    templated = "{% if topic %}About {{topic}}{% endif %} for {{user}}."
    assert check_candidate(templated, "{% if topic %}Strictly about {{topic}}{% endif %} for {{user}}.") is None


def test_the_prompt_is_the_first_fence_of_the_answer_else_the_whole_answer():
    assert extract_prompt("Sure:\n```text\nNew {{topic}}\n```\nand\n```\nsecond\n```") == "New {{topic}}"
    assert extract_prompt("  Just this prompt.  ") == "Just this prompt."


def test_the_split_is_stratified_seeded_and_puts_failing_cases_in_every_part():
    ids = [f"c{i}" for i in range(70)]
    failing = {f"c{i}" for i in range(0, 70, 5)}  # 14 failing
    split = split_cases(ids, failing, (0.4, 0.3, 0.3), seed=3)
    assert split == split_cases(ids, failing, (0.4, 0.3, 0.3), seed=3)
    assert split != split_cases(ids, failing, (0.4, 0.3, 0.3), seed=4)
    assert sorted(split.train + split.validation + split.holdout) == sorted(ids)
    assert [len(set(p) & failing) for p in (split.train, split.validation, split.holdout)] == [6, 4, 4]
    assert len(split.holdout) == 21


def test_a_bad_split_or_too_few_cases_is_an_error():
    assert parse_split("50/25/25") == (0.5, 0.25, 0.25)
    with pytest.raises(UserFacingError):
        parse_split("50/50")
    with pytest.raises(UserFacingError):
        split_cases(["a", "b"], {"a"})
