"""Every presenter -> view update has a handler: the editor view handles each `EditorUpdate`
(`ui/editor/view.EditorView._on_change`) and the run controls each `RunUpdate`
(`ui/editor/run_controls.RunControls.on_run`), as both run-event consumers do
(`tests/agent/test_events_consumed.py`).

A new class in `presenters/view_updates.py` left out of its union, or out of its consumer's
`match`, fails here (mypy's `assert_never` catches the second case too)."""

from __future__ import annotations

import types
import typing
from typing import Any

import pytest

from llmspace.presenters import view_updates as vu
from llmspace.ui.editor.run_controls import RunControls
from llmspace.ui.editor.view import EditorView
from tests.support.closed_unions import dataclasses_of, matched_names, sample

UNIONS = {"editor": vu.EditorUpdate, "run": vu.RunUpdate}
CONSUMERS = {"editor": EditorView._on_change, "run": RunControls.on_run}


def _sample(cls: type) -> Any:
    by_name: dict[str, Any] = {"rel": "support-reply.json", "index": 0, "read_only": False, "error": "could not save",
                               "cause": "edit", "status": "idle", "model": "loop/loopback-model",
                               "note": "Retrying in 1.0 s (attempt 2): busy", "reason": "waiting", "risky": False}
    return sample(cls, by_name, {"str": "x", "int": 0, "bool": False})


def test_the_two_unions_hold_every_update_class_of_the_module_once():
    members = [cls for union in UNIONS.values() for cls in typing.get_args(union)]
    assert all(isinstance(union, types.UnionType) for union in UNIONS.values())
    assert len(members) == len(set(members)) and set(members) == dataclasses_of(vu)


@pytest.mark.parametrize("name", sorted(UNIONS))
def test_each_consumer_names_every_update_class_of_its_union_in_its_match(name):
    named = matched_names(CONSUMERS[name])
    missing = sorted(c.__name__ for c in typing.get_args(UNIONS[name]) if c.__name__ not in named)
    assert not missing, f"{CONSUMERS[name].__qualname__} does not handle {missing}"


def test_the_editor_view_and_run_controls_take_one_of_every_update_without_falling_through(window, app):
    rel = app.workspace.create_thread("", "support-reply")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    for cls in typing.get_args(vu.EditorUpdate):
        ed._on_change(_sample(cls))  # assert_never raises for an unhandled class
    for cls in typing.get_args(vu.RunUpdate):
        ed.run_controls.on_run(_sample(cls))
    window.root.update()
    assert window.status.msg.cget("text") == "Retrying in 1.0 s (attempt 2): busy"  # RetryNote, shown last
