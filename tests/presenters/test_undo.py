"""The undo history of one thread (`presenters/undo.py`): merged steps, the byte budget,
rename steps and the redo stack."""

from __future__ import annotations

import pytest

from llmspace.errors import UserFacingError
from llmspace.presenters import undo as U


def test_edits_of_one_key_in_quick_succession_share_a_step_and_none_never_merges():
    h = U.UndoHistory()
    h.record("prompt", lambda: b"a")
    h.record("prompt", lambda: b"ab")
    h.record(None, lambda: b"x")
    h.record(None, lambda: b"y")
    assert h.undo == [b"a", b"x", b"y"]


def test_the_oldest_snapshots_go_when_the_byte_budget_is_exceeded(monkeypatch):
    monkeypatch.setattr(U, "UNDO_BYTES", 10)
    h = U.UndoHistory()
    for step in (b"123456", b"abcdef", b"xy"):
        h.push(step)
    assert h.undo == [b"abcdef", b"xy"]


def test_a_rename_step_renames_back_and_forth_and_a_new_step_clears_redo():
    h = U.UndoHistory()
    titles: list[str] = []
    h.renamed("old", "new")
    assert h.step(True, lambda: b"now", titles.append) is None and titles == ["old"]
    assert h.step(False, lambda: b"now", titles.append) is None and titles == ["old", "new"]
    assert h.step(True, lambda: b"now", titles.append) is None and h.redo
    h.push(b"edit")
    assert h.redo == []


def test_a_rename_without_a_renamer_is_refused_and_the_stacks_stay():
    h = U.UndoHistory()
    h.renamed("old", "new")
    with pytest.raises(UserFacingError):
        h.step(True, lambda: b"now", None)
    assert h.undo == [U.RenameStep("old", "new")] and h.redo == []


def test_undoing_a_snapshot_keeps_the_current_state_for_redo():
    h = U.UndoHistory()
    h.record(None, lambda: b"before")
    assert h.step(True, lambda: b"after", None) == b"before"
    assert h.undo == [] and h.redo == [b"after"]
