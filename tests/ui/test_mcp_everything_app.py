"""The app's MCP dialogs against a server these tests did not write,
`@modelcontextprotocol/server-everything` (npm, installed on demand by
`tests/mcp/test_server_everything.py`'s fixture; stdio, it speaks 2025-11-25): a prompt
inserted into a thread and a resource attached to its user message are sent to a model
(loopback server); its `trigger-elicitation-request` form — every field kind MCP elicitation
allows — is answered in the app's dialog, and the server says it got the answer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.mcp.test_server_everything import everything_bin  # noqa: F401  (the npm fixture)
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from .conftest import pump_until

pytestmark = pytest.mark.npm


@pytest.fixture
def srv(home: Path) -> Any:
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


@pytest.fixture
def ed(window: Any, app: Any, everything_bin: Path) -> Any:  # noqa: F811
    app.mcp.add_server(name="everything", transport="stdio", command=str(everything_bin), args=["stdio"])
    rel = app.workspace.create_thread("", "everything")
    window.tree_view.refresh()
    editor = window.open_thread(rel)
    window.root.update()
    return editor


def new_dialog(window: Any, open_it: Any) -> Any:
    before = {str(w) for w in window.root.winfo_children()}
    open_it()
    return next(w for w in window.root.winfo_children() if str(w) not in before)


def test_a_prompt_and_an_attached_resource_from_server_everything_reach_the_model(window, app, srv, ed):
    srv.push(Turn(text="Read it."))
    ed.p.message_intents.remove_message(0)  # the thread holds what the server gives
    dlg = ed.insert_mcp_prompt()
    pump_until(window.root, lambda: dlg.items, 120)
    dlg.select("simple-prompt")
    dlg.insert()
    pump_until(window.root, lambda: dlg.inserted, 120)
    window.root.update()
    user = ed.p.messages[-1]
    assert user.role == "user" and user.text() == "This is a simple prompt without arguments."
    res = new_dialog(window, lambda: ed.list.cards[user.id].mcp_btn.invoke())
    pump_until(window.root, lambda: res.items, 120)
    res.select("architecture.md")
    res.attach()
    pump_until(window.root, lambda: res.attached, 120)
    assert ed.run_controls.start_run()
    pump_until(window.root, lambda: ed.run.status != "running" and ed.p.messages[-1].text() == "Read it.", 120)
    sent = str(srv.requests[0].body_json["messages"])
    assert "This is a simple prompt without arguments." in sent
    assert "[resource: demo://resource/static/document/architecture.md]" in sent


def test_server_everythings_elicitation_is_answered_in_the_apps_dialog(window, app, srv, ed):
    sid = next(s.id for s in app.mcp.servers() if s.name == "everything")
    ed.p.thread.context.tools = [t for t in app.mcp.thread_tools(sid)
                                 if t.name == "mcp__everything__trigger_elicitation_request"]
    ed.list.order[0].text.insert("1.0", "Ask me.")
    window.root.update()
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name="mcp__everything__trigger_elicitation_request",
                                           arguments={})]), Turn(text="Thanks."))
    window.switches.react.set(True)
    try:
        assert ed.run_controls.start_run()
        pump_until(window.root, lambda: window.elicitor.dialog is not None, 120)
        dlg = window.elicitor.dialog
        assert {"name", "email", "titledSingleSelectEnum", "titledMultipleSelectEnum", "legacyTitledEnum"} <= set(dlg.inputs)
        dlg.inputs["name"].set("Ann Example")
        window.root.update()
        assert dlg.accept(), dlg.status.cget("text")
        pump_until(window.root, lambda: ed.run.status != "running" and ed.p.messages[-1].text() == "Thanks.", 120)
    finally:
        window.switches.react.set(False)
    call = next(m for m in ed.p.messages if m.role == "assistant" and m.toolCalls).toolCalls[0]
    text = call.output.text()
    assert "Ann Example" in text and "hero-1" in text  # the server echoes what it got, defaults included
    assert text.rstrip().endswith("answered.]")


def test_settings_mcp_names_server_everythings_revision_and_what_it_offers(window, app, ed):
    sid = next(s.id for s in app.mcp.servers() if s.name == "everything")
    dlg = window.open_settings()
    page = dlg.mcp_page
    page.list.selection_set(sid)
    assert page.test()
    pump_until(window.root, lambda: page.details.shown is not None, 120)
    shown = page.details.summary.cget("text")
    assert "Protocol: 2025-11-25 (with initialize)" in shown
    assert "prompts" in shown and "resources" in shown and "completions" in shown
    details = page.details.shown
    assert details.tools and details.prompts == 4 and details.resources and not details.changed
    dlg.destroy()
