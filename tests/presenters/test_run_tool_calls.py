"""Tool calls a human starts from the editor go through the run presenter and the runner:
"Call this tool" runs a real built-in (bash), Stop and closing the tab cancel a long call
(its process is killed), risky calls ask first because the router says so, and a risky pause
runs its calls and continues the run — against the loopback model server."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from llmspace.core.model import Variable
from llmspace.errors import UserFacingError
from llmspace.jsonio import write_bytes_atomic
from llmspace.presenters.editor import EditorPresenter
from llmspace.presenters.run import RunPresenter
from llmspace.tools.builtins import builtin_tool
from tests.presenters.test_run import QueuePump
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

STOP_WITHIN_S = 5.0


@pytest.fixture
def srv(home):
    with LoopbackLLM() as s:
        configure_provider(home, s)
        yield s


def _bash_thread(app, tmp_path: Path, calls: list[tuple[str, str]], stem: str = "tools") -> RunPresenter:
    """A thread whose last assistant message holds these bash calls (id, command)."""
    bash = builtin_tool("bash")
    assert bash is not None
    rel = f"{stem}.json"
    write_bytes_atomic(app.workspace.root / rel, orjson.dumps({"title": stem, "context": {
        "tools": [bash.model_dump(exclude_unset=True, by_alias=True, mode="json"),
                  {"type": "function", "name": "lookup", "description": "Look up",
                   "parameters": {"type": "object", "properties": {}}}],
        "variables": {"cwd": {"type": "workingDirectory", "value": str(tmp_path)}},
        "messages": [
            {"id": "u", "role": "user", "content": [{"type": "text", "text": "go"}]},
            {"id": "a", "role": "assistant", "content": [{"type": "text", "text": ""}],
             "toolCalls": [{"id": cid, "input": {"name": "bash", "arguments": {"command": cmd}}} for cid, cmd in calls]
             + [{"id": "fn", "input": {"name": "lookup", "arguments": {}}}]}]}}))
    return RunPresenter(EditorPresenter(app.workspace, rel), app)


def _wait_for(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.01)


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):  # reaped while being read
        return True
    return state in ("Z", "X")  # killed (a zombie until its parent reaps it)


def _output(run: RunPresenter, call_id: str):
    return next(c for c in run.editor.thread.messages[-1].toolCalls if c.id == call_id).output


def test_call_this_tool_runs_bash_and_puts_its_result_in_the_response(app, tmp_path):
    run = _bash_thread(app, tmp_path, [("c1", "echo hello from bash; pwd")])
    pump = QueuePump()
    assert run.confirmation_for("c1") is None
    future = run.call_tool("c1", pump.post)
    assert run.running and run.tool_status["c1"] == "running"
    pump.drain_until(lambda: "c1" not in run.tool_calls)
    assert future.done() and not run.running and run.tool_status["c1"] == "done"
    out = _output(run, "c1")
    assert out.isError is not True
    result = orjson.loads(out.text())
    assert result["stdout"] == f"hello from bash\n{tmp_path}\n" and result["exitCode"] == 0
    assert run.editor.dirty and run.editor.can_undo()


def test_stop_cancels_a_long_tool_call_and_kills_its_process(app, tmp_path):
    pidfile = tmp_path / "pid"
    run = _bash_thread(app, tmp_path, [("long", f"echo $$ > {pidfile}; exec sleep 30")])
    pump = QueuePump()
    run.call_tool("long", pump.post)
    _wait_for(lambda: pidfile.exists() and pidfile.read_text().strip())
    pid = int(pidfile.read_text())
    started = time.monotonic()
    run.stop()
    pump.drain_until(lambda: not run.running, timeout=STOP_WITHIN_S)
    assert time.monotonic() - started < STOP_WITHIN_S
    out = _output(run, "long")
    assert out.isError is True and out.text() == "Cancelled"
    assert run.tool_status["long"] == "error"
    _wait_for(lambda: _gone(pid), timeout=STOP_WITHIN_S)


def test_closing_the_tab_cancels_a_tool_call_and_saves_its_result(app, tmp_path):
    run = _bash_thread(app, tmp_path, [("long", "sleep 30")], stem="closing")
    pump = QueuePump()
    future = run.call_tool("long", pump.post)
    run.detach()
    assert future.token.cancelled
    pump.drain_until(lambda: not run.running, timeout=STOP_WITHIN_S)
    saved = orjson.loads(app.workspace.resolve("closing.json").read_bytes())
    output = saved["context"]["messages"][-1]["toolCalls"][0]["output"]
    assert output["isError"] is True and output["content"][0]["text"] == "Cancelled"


def test_a_risky_call_asks_first_because_the_router_says_so(app, tmp_path):
    run = _bash_thread(app, tmp_path, [("rm", "rm -f nothing.txt"), ("ok", "echo fine")])
    question = run.confirmation_for("rm")
    assert question is not None and "rm -f nothing.txt" in question
    assert run.confirmation_for("ok") is None


def test_a_function_tool_cannot_be_called_and_an_unknown_call_is_refused(app, tmp_path):
    run = _bash_thread(app, tmp_path, [("ok", "echo fine")])
    pump = QueuePump()
    with pytest.raises(UserFacingError, match="type its result instead"):
        run.call_tool("fn", pump.post)
    with pytest.raises(UserFacingError, match="no longer in the thread"):
        run.call_tool("nope", pump.post)
    assert not run.running and run.callable_calls("a") == ["ok"]


def test_run_the_risky_calls_then_the_run_continues(app, srv, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x", "utf-8")
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_rm", name="bash", arguments={"command": f"rm -f {victim}"})]),
             Turn(text="Removed."))
    run = _new_thread_with_bash(app, tmp_path)
    pump = QueuePump()
    run.start(pump.post, pump.post_text, auto_tools=True)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "paused" and run.pause_risky and victim.exists()
    run.run_risky_calls(pump.post, pump.post_text, auto_tools=True)
    assert run.running and run.editor.read_only
    pump.drain_until(lambda: run.status not in ("running", "paused") and run.editor.messages[-1].text() == "Removed.")
    assert not victim.exists() and run.status == "idle" and not run.stopped
    assert run.editor.messages[-2].toolCalls[0].output.isError is not True


def test_stopping_the_risky_calls_cancels_them_and_does_not_continue(app, srv, tmp_path):
    victim = tmp_path / "victim.txt"
    victim.write_text("x", "utf-8")
    marker = tmp_path / "started"
    command = f"touch {marker}; sleep 30 && rm -f {victim}"
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_rm", name="bash", arguments={"command": command})]))
    run = _new_thread_with_bash(app, tmp_path)
    pump = QueuePump()
    run.start(pump.post, pump.post_text, auto_tools=True)
    pump.drain_until(lambda: run.status != "running")
    assert run.pause_risky
    requests = len(srv.requests)
    run.run_risky_calls(pump.post, pump.post_text, auto_tools=True)
    _wait_for(marker.exists)
    started = time.monotonic()
    run.stop()
    pump.drain_until(lambda: not run.running, timeout=STOP_WITHIN_S)
    assert time.monotonic() - started < STOP_WITHIN_S
    assert run.status == "idle" and run.stopped and not run.editor.read_only
    assert victim.exists() and len(srv.requests) == requests
    out = run.editor.messages[-1].toolCalls[0].output
    assert out.isError is True and out.text() == "Cancelled"


def test_a_pause_for_a_function_tool_is_not_risky(app, srv, tmp_path):
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name="lookup", arguments={})]))
    run = _new_thread_with_bash(app, tmp_path)
    run.editor.upsert_function_tool('{"name": "lookup", "description": "Look up", "parameters": {"type": "object", "properties": {}}}')
    pump = QueuePump()
    run.start(pump.post, pump.post_text, auto_tools=True)
    pump.drain_until(lambda: run.status != "running")
    assert run.status == "paused" and not run.pause_risky
    with pytest.raises(UserFacingError, match="No risky tool calls"):
        run.run_risky_calls(pump.post, pump.post_text)
    with pytest.raises(UserFacingError, match="Add tool responses"):
        run.continue_run(pump.post, pump.post_text)


def _new_thread_with_bash(app, tmp_path: Path) -> RunPresenter:
    rel = app.workspace.create_thread("", "risky")
    editor = EditorPresenter(app.workspace, rel)
    editor.message_intents.set_message_text(0, "clean up")
    editor.add_tools([builtin_tool("bash")])
    editor.thread.ensure_context().variables = {"cwd": Variable(type="workingDirectory", value=str(tmp_path))}
    return RunPresenter(editor, app)


def test_quitting_while_a_tool_call_runs_stops_it(app, tmp_path):
    run = _bash_thread(app, tmp_path, [("long", "sleep 30")], stem="quit")
    pump = QueuePump()
    future = run.call_tool("long", pump.post)
    run.save_partial()
    assert future.token.cancelled
    pump.drain_until(lambda: not run.running, timeout=STOP_WITHIN_S)
    assert run.tool_status["long"] == "error" and _output(run, "long").text() == "Cancelled"
