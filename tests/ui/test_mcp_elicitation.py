"""MCP elicitation in the app, in a real window against the features test server
(`tests/support/mcp_servers/features_server.py`, stdio): a run's tool call that asks for
input opens a dialog built from the requested schema; Accept answers it (a wrong e-mail is
refused first), Decline and Cancel answer without content, Stop cancels the waiting call and
closes the dialog, and a URL request shows its origin and opens the browser only on Open.
Only the fact that the server asked lands in the tool result, never the answers."""

from __future__ import annotations

import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from llmspace.mcp.elicitation import ElicitationRequest
from llmspace.ui.mcp_elicitation import AppElicitor, ElicitationDialog
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from .conftest import pump_until

FEATURES = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "features_server.py"


@pytest.fixture
def features(app: Any) -> str:
    cfg = app.mcp.add_server(name="features", transport="stdio", command=sys.executable, args=[str(FEATURES), "stdio"])
    return str(cfg.id)


@pytest.fixture
def srv(home: Path) -> Any:
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def call_in_worker(app: Any, server: str, tool: str, args: dict[str, Any], elicitor: Any,
                   cancel: threading.Event | None = None) -> list[Any]:
    """Call the tool on a worker thread as a run does; the result lands in the returned list."""
    out: list[Any] = []
    threading.Thread(target=lambda: out.append(app.mcp.call_tool(server, tool, args, cancel=cancel, elicit=elicitor)),
                     daemon=True).start()
    return out


def dialog_of(window: Any, elicitor: AppElicitor) -> ElicitationDialog:
    pump_until(window.root, lambda: elicitor.dialog is not None and elicitor.dialog.winfo_exists(), 90)
    assert elicitor.dialog is not None
    return elicitor.dialog


def test_a_runs_tool_call_asks_in_a_dialog_and_the_accepted_answer_reaches_the_server(window, app, srv, features):
    rel = app.workspace.create_thread("", "signup")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    ed.p.thread.context.tools = [t for t in app.mcp.thread_tools(features) if t.name == "mcp__features__sign_up"]
    ed.list.order[0].text.insert("1.0", "Sign me up for gold.")
    window.root.update()
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name="mcp__features__sign_up", arguments={"plan": "gold"})]),
             Turn(text="You are signed up."))
    window.switches.react.set(True)  # ReAct: the tool runs and the model gets its result
    try:
        assert ed.run_controls.start_run()
        dlg = dialog_of(window, window.elicitor)
        assert any(w.winfo_class() == "TLabel" and w.cget("text") == "Who signs up for gold?" for w in widgets(dlg))
        assert set(dlg.inputs) == {"name", "email"}
        dlg.inputs["name"].set("Ann")
        dlg.inputs["email"].set("not-an-email")
        window.root.update()
        assert not dlg.accept()  # refused: the form stays open and says why under the field
        assert "valid email" in dlg.errors["email"].cget("text")
        dlg.inputs["email"].set("ann@example.com")
        window.root.update()
        assert dlg.accept()
        pump_until(window.root, lambda: ed.run.status != "running" and ed.p.messages[-1].text() == "You are signed up.", 120)
    finally:
        window.switches.react.set(False)
    call = next(m for m in ed.p.messages if m.role == "assistant" and m.toolCalls).toolCalls[0]
    text = call.output.text()
    assert text.startswith("signed up Ann <ann@example.com> for gold")
    assert text.rstrip().endswith("(form: 'Who signs up for gold?'); answered.]")
    assert "ann@example.com" not in text.splitlines()[-1]  # the note never holds the answers


def test_decline_and_cancel_answer_the_server_without_content(window, app, features):
    elicitor = AppElicitor(window.pump, window.root)
    declined = call_in_worker(app, features, "sign_up", {"plan": "gold"}, elicitor)
    dialog_of(window, elicitor).buttons["Decline"].invoke()
    pump_until(window.root, lambda: declined, 90)
    assert declined[0].text().startswith("sign-up declined") and "declined by the user" in declined[0].text()

    cancelled = call_in_worker(app, features, "sign_up", {"plan": "gold"}, elicitor)
    dialog_of(window, elicitor).buttons["Cancel"].invoke()
    pump_until(window.root, lambda: cancelled, 90)
    assert cancelled[0].text().startswith("sign-up cancelled") and "cancelled by the user" in cancelled[0].text()


def test_stop_cancels_the_waiting_call_and_closes_its_dialog(window, app, features):
    elicitor = AppElicitor(window.pump, window.root)
    stop = threading.Event()
    result = call_in_worker(app, features, "sign_up", {"plan": "gold"}, elicitor, cancel=stop)
    dlg = dialog_of(window, elicitor)
    stop.set()
    pump_until(window.root, lambda: result and not dlg.winfo_exists(), 90)
    assert result[0].isError and "was cancelled" in result[0].text()


def test_a_url_request_shows_its_origin_and_opens_the_browser_only_on_open(window, app, features):
    opened: list[str] = []
    elicitor = AppElicitor(window.pump, window.root, opener=opened.append)
    declined = call_in_worker(app, features, "pay", {"amount": 3}, elicitor)
    dlg = dialog_of(window, elicitor)
    shown = dlg.url_label.cget("text")
    assert "https://pay.example.com/checkout?id=1" in shown and "Site: https://pay.example.com" in shown
    assert opened == []
    dlg.buttons["Decline"].invoke()
    pump_until(window.root, lambda: declined, 90)
    assert declined[0].text().startswith("payment decline") and opened == []

    accepted = call_in_worker(app, features, "pay", {"amount": 3}, elicitor)
    dialog_of(window, elicitor).buttons["Open in browser"].invoke()
    pump_until(window.root, lambda: accepted, 90)
    assert accepted[0].text().startswith("payment accept") and opened == ["https://pay.example.com/checkout?id=1"]


def test_titled_enums_multi_select_and_number_bounds_build_the_answer(window):
    schema = {"type": "object", "required": ["size", "count"], "properties": {
        "size": {"type": "string", "title": "Size", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "tags": {"type": "array", "title": "Tags", "items": {"anyOf": [{"const": "a", "title": "Alpha"}, {"const": "b", "title": "Beta"}]}},
        "count": {"type": "integer", "minimum": 1, "maximum": 5},
        "when": {"type": "string", "format": "date"},
        "ok": {"type": "boolean"}}}
    answers: list[Any] = []
    dlg = ElicitationDialog(window.root, ElicitationRequest("s", "t", "form", "Pick", schema), answers.append)
    try:
        window.root.update()
        size = next(w for w in widgets(dlg) if w.winfo_class() == "TCombobox")
        assert list(size.cget("values")) == ["Small", "Large"]  # titles shown, values sent
        size.set("Large")
        size.event_generate("<<ComboboxSelected>>")
        beta = next(w for w in widgets(dlg) if w.winfo_class() == "TCheckbutton" and w.cget("text") == "Beta")
        beta.invoke()
        dlg.inputs["count"].set("9")
        dlg.inputs["when"].set("2026-12-07")
        window.root.update()
        assert any(w.winfo_class() == "TLabel" and w.cget("text") == "Enter 1 to 5." for w in widgets(dlg))
        assert not dlg.accept() and dlg.errors["count"].cget("text") == "at most 5"
        dlg.inputs["count"].set("3")
        window.root.update()
        assert dlg.accept()
    finally:
        if dlg.winfo_exists():
            dlg.destroy()
    assert answers[0].action == "accept"
    assert answers[0].content == {"size": "l", "tags": ["b"], "count": 3, "when": "2026-12-07"}


def widgets(w: Any) -> list[Any]:
    out = []
    for child in w.winfo_children():
        out += [child, *widgets(child)]
    return out


def test_stop_in_the_editor_cancels_the_runs_waiting_tool_call_and_closes_the_dialog(window, app, srv, features):
    rel = app.workspace.create_thread("", "signup-stop")
    window.tree_view.refresh()
    ed = window.open_thread(rel)
    window.root.update()
    ed.p.thread.context.tools = [t for t in app.mcp.thread_tools(features) if t.name == "mcp__features__sign_up"]
    ed.list.order[0].text.insert("1.0", "Sign me up.")
    window.root.update()
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name="mcp__features__sign_up", arguments={"plan": "gold"})]),
             Turn(text="unused"))
    window.switches.react.set(True)
    try:
        assert ed.run_controls.start_run()
        dlg = dialog_of(window, window.elicitor)
        ed.run_controls.stop_run()
        pump_until(window.root, lambda: ed.run.status != "running" and not dlg.winfo_exists(), 120)
    finally:
        window.switches.react.set(False)
    assert ed.header.status.cget("text") == "Stopped"
    assert dlg.answered is not None and dlg.answered.action == "cancel"


def test_a_tool_called_by_hand_from_its_card_asks_in_the_dialog_too(window, app, features):
    import orjson

    from llmspace.jsonio import write_bytes_atomic

    tools = [t.model_dump(mode="json", exclude_none=True) for t in app.mcp.thread_tools(features)
             if t.name == "mcp__features__sign_up"]
    write_bytes_atomic(app.workspace.root / "by-hand.json", orjson.dumps({
        "title": "by-hand", "context": {"tools": tools, "messages": [
            {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": ""}],
             "toolCalls": [{"id": "c1", "input": {"name": "mcp__features__sign_up", "arguments": {"plan": "silver"}}}]}]}}))
    window.tree_view.refresh()
    ed = window.open_thread("by-hand.json")
    window.root.update()
    assert ed.run_controls.call_tool("c1")
    dlg = dialog_of(window, window.elicitor)
    dlg.inputs["name"].set("Bo")
    dlg.inputs["email"].set("bo@example.com")
    window.root.update()
    assert dlg.accept()
    pump_until(window.root, lambda: ed.p.messages[0].toolCalls[0].output is not None, 120)
    assert ed.p.messages[0].toolCalls[0].output.text().startswith("signed up Bo <bo@example.com> for silver")
