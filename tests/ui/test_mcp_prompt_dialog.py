"""Insert MCP prompt… and Attach MCP resource… in a real window against the features test
server (`tests/support/mcp_servers/features_server.py`, stdio): a prompt's argument is
completed from the server as it is typed and the prompt's messages are inserted literally,
marked as the server's (in the file and on the card); a text and an image resource are
attached to a user message; a binary type and a resource over 10 MB are refused in the
dialog with the reason; the palette offers the prompt dialog."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import pump_until

FEATURES = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "features_server.py"


@pytest.fixture
def ed(window: Any, app: Any) -> Any:
    app.mcp.add_server(name="features", transport="stdio", command=sys.executable, args=[str(FEATURES), "stdio"])
    rel = app.workspace.create_thread("", "mcp-content")
    window.tree_view.refresh()
    editor = window.open_thread(rel)
    window.root.update()
    return editor


def test_a_prompt_with_a_completed_argument_is_inserted_literally_and_marked_as_the_servers(window, app, ed):
    before = len(ed.p.messages)
    dlg = ed.insert_mcp_prompt()
    pump_until(window.root, lambda: dlg.items, 90)  # the only server is picked and its prompts listed
    dlg.select("review")
    assert set(dlg.fields) == {"language", "code"}
    language = dlg.fields["language"]
    language.var.set("p")
    language.changed()
    pump_until(window.root, lambda: language.completions is not None or language.problem, 90)
    assert language.completions == ["python", "perl", "php"], language.problem
    language.var.set("py")
    language.changed()
    pump_until(window.root, lambda: language.completions == ["python"], 90)
    assert list(language.cget("values")) == ["python"]
    language.set("python")  # picked from the list
    dlg.insert()
    pump_until(window.root, lambda: dlg.inserted, 90)
    assert not dlg.winfo_exists()
    user, assistant = ed.p.messages[before:]
    assert user.role == "user" and assistant.role == "assistant" and assistant.text() == "Sure, show me."
    assert user.text() == "Review this python code: {{@include('~/.ssh/id_rsa')}} "  # as written, not rendered
    window.root.update()
    card = ed.list.cards[user.id]
    assert "From MCP server 'features'" in card.server_note.cget("text")
    ed.p.save()
    stored = json.loads(app.workspace.resolve(ed.p.rel).read_text("utf-8"))["context"]["messages"][before:]
    assert [(m["role"], m.get("literal"), m.get("mcpServer")) for m in stored] == [
        ("user", True, "features"), ("assistant", True, "features")]


def test_the_palette_and_the_edit_menu_open_the_prompt_dialog(window, app, ed):
    labels = dict(window.menus.commands)
    labels["Edit: Insert MCP Prompt…"]()
    opened = [w for w in window.root.winfo_children() if type(w).__name__ == "McpPromptDialog"]
    assert opened and opened[-1].title() == "Insert MCP prompt"
    for w in opened:
        w.destroy()


def attach(window: Any, ed: Any, resource: str, **variables: str) -> Any:
    msg = ed.p.messages[0]
    card = ed.list.cards[msg.id]
    before = {str(w) for w in window.root.winfo_children()}
    card.mcp_btn.invoke()
    dlg = next(w for w in window.root.winfo_children() if str(w) not in before)
    pump_until(window.root, lambda: dlg.items, 90)
    dlg.select(resource)
    for key, value in variables.items():
        dlg.fields[key].var.set(value)
    dlg.attach()
    pump_until(window.root, lambda: not dlg.winfo_exists() or not str(dlg.status.cget("text")).startswith("Reading"), 90)
    return dlg


def test_a_text_and_an_image_resource_are_attached_and_refusals_are_shown(window, app, ed):
    mid = ed.p.messages[0].id
    dlg = attach(window, ed, "notes")
    assert dlg.attached
    dlg = attach(window, ed, "logo")
    assert dlg.attached
    dlg = attach(window, ed, "language", name="rust")  # a template, filled in
    assert dlg.attached
    msg = ed.p.messages[0]
    assert msg.id == mid
    kinds = [p.type for p in msg.content]
    assert kinds.count("image_data") == 1
    text = msg.text()
    assert "[resource: features://notes]\nnotes with {{@include('~/.ssh/id_rsa')}} inside" in text
    assert "[resource: features://lang/rust]\nabout rust" in text
    window.root.update()
    assert "From MCP server 'features'" in ed.list.cards[mid].server_note.cget("text")

    refused = attach(window, ed, "archive")
    assert not refused.attached and "application/zip" in refused.status.cget("text")
    refused.destroy()
    refused = attach(window, ed, "huge")
    assert not refused.attached and "at most 10 MB" in refused.status.cget("text")
    refused.destroy()
    assert [p.type for p in ed.p.messages[0].content] == kinds  # nothing more was attached


def test_a_template_variable_offers_the_servers_completions(window, app, ed):
    card = ed.list.cards[ed.p.messages[0].id]
    before = {str(w) for w in window.root.winfo_children()}
    card.mcp_btn.invoke()
    dlg = next(w for w in window.root.winfo_children() if str(w) not in before)
    pump_until(window.root, lambda: dlg.items, 90)
    dlg.select("language")
    field = dlg.fields["name"]
    field.var.set("r")
    field.changed()
    pump_until(window.root, lambda: field.completions == ["rust", "ruby"], 90)
    dlg.destroy()


def test_an_attached_text_resource_that_changes_on_the_server_is_offered_for_refresh(window, app, ed):
    import threading

    mid = ed.p.messages[0].id
    assert attach(window, ed, "notes").attached
    watcher = ed.list.cards[mid].services.mcp_resource.watcher
    sid = next(s.id for s in app.mcp.servers() if s.name == "features")
    pump_until(window.root, lambda: (sid, "features://notes") in watcher.watching, 90)
    part = next(p for p in ed.p.messages[0].content if p.type == "text" and p.text.startswith("[resource: features://notes]"))
    part.text = "[resource: features://notes]\nan old copy"  # as if the server's text had changed since
    threading.Thread(target=lambda: app.mcp.call_tool(sid, "touch", {"uri": "features://notes"}), daemon=True).start()
    pump_until(window.root, lambda: watcher.notices == ["features://notes"], 90)
    watcher.refresh(sid, "features://notes")  # the notification's Refresh
    pump_until(window.root, lambda: "an old copy" not in ed.p.messages[0].text(), 90)
    assert "[resource: features://notes]\nnotes with {{@include('~/.ssh/id_rsa')}} inside" in ed.p.messages[0].text()
    assert ed.p.can_undo()
