"""Tool calls started from a card in a real window: while one runs the Run button is Stop and
stops it; a risky command asks first and does not run on No — the run presenter and
`app.runner.call_tools` do the work (real bash built-in)."""

from __future__ import annotations

import orjson

from llmspace.jsonio import write_bytes_atomic
from llmspace.tools.builtins import builtin_tool

from ..conftest import pump_until


def open_with_calls(window, app, tmp_path, *calls):
    bash = builtin_tool("bash")
    assert bash is not None
    write_bytes_atomic(app.workspace.root / "calls.json", orjson.dumps({"title": "calls", "context": {
        "tools": [bash.model_dump(exclude_unset=True, by_alias=True, mode="json")],
        "variables": {"cwd": {"type": "workingDirectory", "value": str(tmp_path)}},
        "messages": [
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "go"}]},
            {"id": "a", "role": "assistant", "content": [{"type": "text", "text": ""}],
             "toolCalls": [{"id": cid, "input": {"name": "bash", "arguments": {"command": cmd}}} for cid, cmd in calls]}]}}))
    window.tree_view.refresh()
    ed = window.open_thread("calls.json")
    window.root.update()
    return ed


def test_the_run_button_stops_a_tool_call_started_from_its_card(window, app, tmp_path):
    ed = open_with_calls(window, app, tmp_path, ("long", "sleep 30"))
    assert ed.run_controls.call_tool("long")
    window.root.update()
    assert ed.header.run_btn.cget("text") == "■ Stop"
    ed.header.run_btn.invoke()
    pump_until(window.root, lambda: not ed.run.running, timeout=5)
    assert ed.header.run_btn.cget("text") == "▶ Run"
    out = ed.p.messages[-1].toolCalls[0].output
    assert out.isError is True and out.text() == "Cancelled"


def test_a_risky_command_on_a_card_asks_first_and_runs_only_on_yes(window, app, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x", "utf-8")
    ed = open_with_calls(window, app, tmp_path, ("rm", f"rm -f {victim}"))
    window.dialogs.answer = False
    assert not ed.run_controls.call_tool("rm")
    assert window.dialogs.confirms and str(victim) in window.dialogs.confirms[-1]
    assert victim.exists() and not ed.run.running
    window.dialogs.answer = True
    assert ed.run_controls.call_tool("rm")
    pump_until(window.root, lambda: ed.run.tool_status.get("rm") == "done")
    assert not victim.exists()
