"""The compare dialog's "new rubric" refuses a 21st rubric, keeping all 20 and the selection."""

from __future__ import annotations

import pytest

from llmspace.core import run_verdicts as E
from llmspace.errors import UserFacingError
from llmspace.presenters.compare import ComparePresenter
from llmspace.presenters.editor import EditorPresenter

CRITERIA = [{"name": "Accuracy"}, {"name": "Clarity"}]


def _run(rid: str, ts: int) -> dict:
    return {"id": rid, "timestamp": ts, "thread": {"title": "cmp"}}


def test_creating_a_twenty_first_rubric_in_the_dialog_is_refused_and_nothing_changes(app):
    rel = app.workspace.create_thread("", "cmp")
    ed = EditorPresenter(app.workspace, rel)
    ed.thread = ed.thread.model_validate({"title": "cmp", "runHistory": [_run("r1", 1000), _run("r2", 2000)]})
    for i in range(E.MAX_RUBRICS):
        E.create_rubric(ed.thread, f"R{i}", CRITERIA, rubric_id=f"id{i}", now=i)
    p = ComparePresenter(ed, "r1", "r2")
    selected = p.rubric
    ed.dirty = False

    with pytest.raises(UserFacingError, match="already has 20 rubrics"):
        p.create_rubric("One more", CRITERIA)

    assert [r.id for r in ed.thread.evaluationRubrics] == [f"id{i}" for i in range(E.MAX_RUBRICS)]
    assert p.rubric is selected and not ed.dirty
