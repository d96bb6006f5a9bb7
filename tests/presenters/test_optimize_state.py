"""The Optimize view's state without a display (`presenters/optimize.py`): the form's checks, the
engine's events folded into the progress line and the per-step chart, a candidate's diff, and a
results folder taken as the evaluation file it ran plus its baseline."""

from __future__ import annotations

from pathlib import Path

import pytest

from llmspace.errors import UserFacingError
from llmspace.evals.journal import VERSION, JournalWriter
from llmspace.evals.records import Candidate, Header
from llmspace.optimize.events import CandidateSeen, Phase, Progress
from llmspace.presenters.optimize import OptimizeForm, OptimizeState, source_of

ORIGINAL = "You answer questions about {{topic}}."


def test_the_form_names_each_field_that_cannot_run():
    assert OptimizeForm("loop/reflector", "150", "", "").problems() == []
    problems = OptimizeForm("reflector", "many", "-1", "0.5").problems()
    assert problems == ["Reflector: give a model as provider/model (e.g. ollama/qwen3).",
                        "Rollouts: 'many' is not a whole number.", "Budget must be more than 0."]


def test_events_fill_the_progress_line_the_chart_and_the_candidates():
    state = OptimizeState(ORIGINAL)
    state.apply(Phase("search", "Searching", original_validation=0.25))
    state.apply(CandidateSeen(Candidate("c1", 1, "c0", "x", "rejected", "drops {{topic}}")))
    state.apply(CandidateSeen(Candidate("c2", 2, "c0", ORIGINAL + " Be brief.", "validated", None, 0.75, 0.25, 0.5)))
    state.apply(CandidateSeen(Candidate("c3", 3, "c2", ORIGINAL + " Be vague.", "validated", None, 0.5, 0.25, 0.4)))
    state.apply(Progress(4, 60, 150, 0.5, 0.0123, 90.0))

    assert state.progress_line() == "step 4 · rollouts 60/150 · best validation 50% · $0.0123 · 1.5 min left"
    points, best = state.chart()
    assert [(p.step, p.value) for p in points] == [(2, 0.5), (3, 0.4)]
    assert [(p.step, p.value) for p in best] == [(0, 0.25), (2, 0.5), (4, 0.5)]  # the best so far, to the last step
    assert [r.status_text for r in state.candidates] == ["⊘ rejected", "✓ validated", "✓ validated"]
    lines = state.diff("c2")
    assert [(ln.kind, ln.text) for ln in lines if ln.kind in ("removed", "added")] == [
        ("removed", f"-{ORIGINAL}"), ("added", f"+{ORIGINAL} Be brief.")]
    # a resumed run replays its steps: a candidate seen again replaces its row
    state.apply(CandidateSeen(Candidate("c2", 2, "c0", ORIGINAL + " Be brief.", "validated", None, 0.75, 0.25, 0.5)))
    assert [r.id for r in state.candidates] == ["c1", "c2", "c3"]


def test_a_results_folder_stands_for_its_evaluation_file_and_is_the_baseline(tmp_path: Path):
    eval_file = tmp_path / "quiz.eval.yaml"
    eval_file.write_text("thread: quiz.json\n", encoding="utf-8")
    folder = tmp_path / "results"
    folder.mkdir()
    writer = JournalWriter(folder / "journal.jsonl")
    writer.append(Header(VERSION, "quiz", str(eval_file), "quiz.json", "cases.jsonl", {}, 0))
    writer.close()

    assert source_of(eval_file) == (eval_file, None)
    assert source_of(folder) == (eval_file, folder)
    eval_file.unlink()
    with pytest.raises(UserFacingError, match="is gone"):
        source_of(folder)
    with pytest.raises(UserFacingError, match="neither an evaluation file nor a results folder"):
        source_of(tmp_path)
