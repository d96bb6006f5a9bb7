"""Run history in a real window: load rules applied when a thread is opened (autosave writes
them; clean files are left alone), Inspect with previous/next, Restore as one undo step,
Remove with confirmation (and its evaluations), Fork from a message into a new tab."""

from __future__ import annotations

import json

import orjson

from llmspace.jsonio import write_bytes_atomic

from .conftest import pump_until


def read(app, rel):
    return json.loads(app.workspace.resolve(rel).read_text("utf-8"))


def test_opening_a_thread_applies_the_load_rules_and_autosave_writes_them(window, app):
    write_bytes_atomic(app.workspace.root / "messy.json", orjson.dumps({
        "title": "messy", "runHistory": [
            {"id": "r1", "timestamp": 1000, "thread": {"title": "messy"}},
            {"timestamp": 2000, "thread": {"title": "messy"}},
            {"id": "r1", "timestamp": 3000, "thread": {"title": "messy"}}],
        "evaluations": [{"id": "e1", "leftRunId": "r1", "rightRunId": "r1", "verdict": "tie"}]}))
    clean = app.workspace.create_thread("", "clean")
    clean_bytes = app.workspace.resolve(clean).read_bytes()
    window.tree_view.refresh()
    ed = window.open_thread("messy.json")
    assert ed.p.dirty
    pump_until(window.root, lambda: not ed.p.dirty)  # autosave, as after any edit
    data = read(app, "messy.json")
    assert [r["id"] for r in data["runHistory"]] == ["run-2000-1", "r1"] and data["evaluations"] == []
    ed2 = window.open_thread(clean)
    assert not ed2.p.dirty
    ed2.flush()
    window.close_tab(clean)
    assert app.workspace.resolve(clean).read_bytes() == clean_bytes
