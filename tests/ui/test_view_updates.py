"""Every presenter -> view update has a handler: the editor view handles each `EditorUpdate`
(`ui/editor/view.EditorView._on_change`) and the run controls each `RunUpdate`
(`ui/editor/run_controls.RunControls.on_run`), as both run-event consumers do
(`tests/agent/test_events_consumed.py`).

A new class in `presenters/view_updates.py` left out of its union, or out of its consumer's
`match`, fails here (mypy's `assert_never` catches the second case too)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import types
import typing
from typing import Any

import pytest

from llmspace.presenters import view_updates as vu
from llmspace.ui.editor.run_controls import RunControls
from llmspace.ui.editor.view import EditorView

UNIONS = {"editor": vu.EditorUpdate, "run": vu.RunUpdate}
CONSUMERS = {"editor": EditorView._on_change, "run": RunControls.on_run}


def _defined_update_classes() -> set[type]:
    return {obj for _name, obj in vars(vu).items()
            if inspect.isclass(obj) and dataclasses.is_dataclass(obj) and obj.__module__ == vu.__name__}


def _matched_names(function: Any) -> set[str]:
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.MatchClass):
            cls = node.cls
            names.add(cls.attr if isinstance(cls, ast.Attribute) else getattr(cls, "id", ""))
    return names


def _sample(cls: type) -> Any:
    by_name: dict[str, Any] = {"rel": "support-reply.json", "index": 0, "read_only": False, "error": "could not save",
                               "cause": "edit", "status": "idle", "model": "loop/loopback-model",
                               "note": "Retrying in 1.0 s (attempt 2): busy", "reason": "waiting", "risky": False}
    by_type: dict[str, Any] = {"str": "x", "int": 0, "bool": False}
    kwargs = {}
    for field in dataclasses.fields(cls):
        if field.name in by_name:
            kwargs[field.name] = by_name[field.name]
        elif str(field.type) in by_type:
            kwargs[field.name] = by_type[str(field.type)]
        else:
            raise AssertionError(f"add a sample value for {cls.__name__}.{field.name} ({field.type}) to this test")
    return cls(**kwargs)


def test_the_two_unions_hold_every_update_class_of_the_module_once():
    members = [cls for union in UNIONS.values() for cls in typing.get_args(union)]
    assert all(isinstance(union, types.UnionType) for union in UNIONS.values())
    assert len(members) == len(set(members)) and set(members) == _defined_update_classes()


@pytest.mark.parametrize("name", sorted(UNIONS))
def test_each_consumer_names_every_update_class_of_its_union_in_its_match(name):
    named = _matched_names(CONSUMERS[name])
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
