"""Deleting custom function tools in the Tools dialog, in a real window: each tool of the
Custom function tab has a Delete button that asks first; the tool leaves the thread (and the
file), and Undo — in the editor or Ctrl+Z in the dialog — brings it back, in the list too."""

from __future__ import annotations

import json

import orjson
import pytest

from llmspace.jsonio import write_bytes_atomic

TOOL = {"type": "function", "name": "get_weather", "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}
OTHER = {**TOOL, "name": "get_time", "description": "Time in a city"}


@pytest.fixture
def ed(window, app):
    write_bytes_atomic(app.workspace.root / "fn-tools.json", orjson.dumps({
        "title": "fn-tools", "context": {"tools": [TOOL, OTHER], "messages": [
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": ""}],
             "toolCalls": [{"id": "c1", "input": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]}]}}))
    window.tree_view.refresh()
    return window.open_thread("fn-tools.json")


def rows(dlg) -> dict[str, dict[str, object]]:
    out = {}
    for row in dlg.custom_list.winfo_children():
        kids = row.winfo_children()
        out[str(kids[0].cget("text"))] = {str(k.cget("text")): k for k in kids[1:]}
    return out


def tool_names(app, rel) -> list[str]:
    return [t["name"] for t in json.loads(app.workspace.resolve(rel).read_text("utf-8"))["context"].get("tools", [])]


def test_a_function_tool_is_deleted_after_a_confirmation_and_undo_brings_it_back(ed, window, app):
    dlg = ed.settings.edit_tools()
    window.root.update()
    assert set(rows(dlg)) == {"get_weather", "get_time"}
    window.dialogs.answer = False
    rows(dlg)["get_weather"]["Delete"].invoke()
    assert "get_weather" in ed.p.tool_names()
    assert "get_weather" in window.dialogs.confirms[-1] and "calls in the messages stay" in window.dialogs.confirms[-1]
    window.dialogs.answer = True
    rows(dlg)["get_weather"]["Delete"].invoke()
    window.root.update()
    assert ed.p.tool_names() == {"get_time"} and set(rows(dlg)) == {"get_time"}
    assert "Undo" in dlg.msg.cget("text")
    assert "get_weather" not in ed.settings.tools_lbl.cget("text")
    ed.flush()
    assert tool_names(app, ed.p.rel) == ["get_time"]
    ed.undo()
    window.root.update()
    assert set(rows(dlg)) == {"get_weather", "get_time"}  # the open dialog follows the undo
    ed.flush()
    assert tool_names(app, ed.p.rel) == ["get_weather", "get_time"]
    dlg.destroy()


def test_ctrl_z_in_the_tools_dialog_undoes_the_deletion(ed, window):
    dlg = ed.settings.edit_tools()
    window.root.update()
    rows(dlg)["get_time"]["Delete"].invoke()
    assert ed.p.tool_names() == {"get_weather"}
    dlg.focus_force()
    dlg.event_generate("<Control-z>")
    window.root.update()
    assert ed.p.tool_names() == {"get_weather", "get_time"}
    dlg.destroy()
    window.root.update()
    assert dlg._on_change not in ed.p.listeners  # a closed dialog stops listening
