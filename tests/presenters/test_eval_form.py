"""New Evaluation…'s form without a display: the dataset preview, where each variable of the
thread gets its value, and what the form refuses before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

from llmspace.core.threadio import thread_from_data
from llmspace.presenters.eval_form import NewEvalForm, dataset_preview, parse_assertion_lines

THREAD = thread_from_data({"title": "quiz", "context": {"messages": [
    {"id": "u1", "role": "user", "content": [{"type": "text", "text": "{{question}} ({{tone}})"}]}],
    "variableVariants": {"active": "default", "variants": {"default": {"tone": "brief"}}}}})


def _dataset(tmp_path: Path, rows: list[dict], name: str = "cases.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_preview_shows_the_first_rows_and_maps_variables_to_columns_or_the_threads_value(tmp_path):
    path = _dataset(tmp_path, [{"id": f"c{i}", "question": f"What is {i} + 1?", "expected": str(i + 1)} for i in range(8)])
    preview = dataset_preview(path, THREAD, limit=5)
    assert preview.cases == 8 and preview.columns == ["id", "question", "expected"]
    assert preview.rows[0] == ["c0", "What is 0 + 1?", "1"] and len(preview.rows) == 5
    assert ("question", "column 'question'", True) in preview.mapping
    assert ("tone", "the thread's value", True) in preview.mapping
    assert preview.problem is None


def test_a_variable_without_a_column_or_value_and_bad_fields_are_refused(tmp_path):
    path = _dataset(tmp_path, [{"id": "c1", "prompt": "hi"}])
    preview = dataset_preview(path, THREAD)
    assert ("question", "no column of this name and no value in the thread", False) in preview.mapping
    form = NewEvalForm("quiz.json", str(path), models="nope", assertions="contains\nfrobnicate", judge="")
    problems = form.problems(preview)
    assert any("'question' has no value" in p for p in problems)
    assert any("'nope' is not PROVIDER/MODEL" in p for p in problems)
    assert any("frobnicate" in p for p in problems)
    rubric = NewEvalForm("quiz.json", str(path), models="p/m", assertions="llm-rubric: Is it right?")
    assert "An llm-rubric assertion needs a judge model." in rubric.problems(None)


def test_an_unreadable_dataset_is_a_problem_not_a_crash(tmp_path):
    bad = tmp_path / "cases.json"
    bad.write_text("{not json", encoding="utf-8")
    preview = dataset_preview(bad, THREAD)
    assert preview.problem and preview.rows == []
    assert preview.problem in NewEvalForm("quiz.json", str(bad), models="p/m").problems(preview)


def test_a_valid_form_makes_the_evaluation_files_content(tmp_path):
    path = _dataset(tmp_path, [{"id": "c1", "question": "q", "expected": "a"}])
    form = NewEvalForm("quiz.json", str(path), models="p/a, p/b", assertions="contains\nnot-regex: ^error", judge="p/j")
    assert form.problems(dataset_preview(path, THREAD)) == []
    data = form.spec_data(tmp_path / "quiz.json", tmp_path)
    assert data["dataset"] == "cases.jsonl" and data["thread"] == "quiz.json"
    assert data["models"] == ["p/a", "p/b"] and data["judge"] == "p/j"
    assert data["assert"] == [{"type": "contains"}, {"type": "not-regex", "value": "^error"}]
    assert parse_assertion_lines("# comment\n\nequals: 4") == [{"type": "equals", "value": "4"}]
