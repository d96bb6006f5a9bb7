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
    window.tab_pages.close_tab(clean)
    assert app.workspace.resolve(clean).read_bytes() == clean_bytes


def _run(rid, ts, answer):
    return {"id": rid, "timestamp": ts, "thread": {"title": "h", "context": {"systemPrompt": f"sp {rid}", "messages": [
        {"id": "u", "role": "user", "content": [{"type": "text", "text": "q"}]},
        {"id": "a" + rid, "role": "assistant", "content": [{"type": "text", "text": answer}]}]}}}


def _panel(window, app):
    write_bytes_atomic(app.workspace.root / "h.json", orjson.dumps({
        "title": "h", "context": {"systemPrompt": "now"},
        "runHistory": [_run("r1", 1000, "one"), _run("r2", 2000, "two"), _run("r3", 3000, "three")],
        "evaluations": [{"id": "e1", "leftRunId": "r1", "rightRunId": "r2", "verdict": "tie", "createdAt": 1, "updatedAt": 1},
                        {"id": "e2", "leftRunId": "r2", "rightRunId": "r3", "verdict": "pass", "createdAt": 2, "updatedAt": 2}]}))
    window.tree_view.refresh()
    ed = window.open_thread("h.json")
    ed.toggle_history()
    window.root.update()
    return ed, ed.history_panel


def test_inspect_walks_the_runs_and_forks_from_a_chosen_message_into_a_new_tab(window, app):
    _ed, panel = _panel(window, app)
    assert panel.list.get_children("") == ("r3", "r2", "r1")
    panel.list.selection_set("r2")
    window.root.update()
    insp = panel.inspect()
    assert insp.run_id == "r2" and insp.messages.get_children("") == ("u", "ar2")
    assert "sp r2" in insp.text.get("1.0", "end") and str(insp.text.cget("state")) == "disabled"
    assert insp.previous() == "r3" and str(insp.prev_btn.cget("state")) == "disabled"
    assert insp.next() == "r2" and insp.next() == "r1" and insp.next() is None
    insp.messages.selection_set("u")
    window.root.update()
    new_rel = insp.fork()
    insp.destroy()
    assert new_rel and window.tabs.active == new_rel and window.tree_view.tree.exists(new_rel)
    data = read(app, new_rel)
    assert [m["id"] for m in data["context"]["messages"]] == ["u"] and data["context"]["systemPrompt"] == "sp r1"
    assert "Forked into" in window.status_msg.cget("text")


def test_fork_button_forks_the_selected_run_at_its_last_message(window, app):
    _ed, panel = _panel(window, app)
    panel.list.selection_set("r3")
    window.root.update()
    new_rel = panel.fork()
    assert window.tabs.active == new_rel
    assert [m["id"] for m in read(app, new_rel)["context"]["messages"]] == ["u", "ar3"]


def test_restore_is_undoable_and_remove_asks_then_drops_the_runs_evaluations(window, app):
    ed, panel = _panel(window, app)
    assert len(panel.evals.get_children("")) == 2
    panel.list.selection_set("r1")
    window.root.update()
    panel.restore()
    assert ed.prompt.get("1.0", "end-1c") == "sp r1"
    ed.undo()
    window.root.update()
    assert ed.prompt.get("1.0", "end-1c") == "now"
    panel.list.selection_set("r1")
    window.dialogs.answer = False
    panel.remove()
    assert "r1" in panel.list.get_children("") and "Evaluations that use it" in window.dialogs.confirms[-1]
    window.dialogs.answer = True
    panel.remove()
    assert panel.list.get_children("") == ("r3", "r2") and panel.evals.get_children("") == ("e2",)
    panel.evals.selection_set("e2")
    dlg = panel.open_evaluation()
    assert (dlg.run_a, dlg.run_b) == ("r2", "r3") and dlg.p.verdict == "pass"
    dlg.destroy()
    assert panel.remove_evaluation() and panel.evals.get_children("") == ()
    ed.flush()
    data = read(app, "h.json")
    assert [r["id"] for r in data["runHistory"]] == ["r2", "r3"] and data["evaluations"] == []
