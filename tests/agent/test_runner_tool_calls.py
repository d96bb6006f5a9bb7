"""`Runner.call_tools`: tool calls outside a run, on the runner's pool, with a future whose
cancel() stops calls already started — with the real bash built-in."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
import pytest

from llmspace.errors import UserFacingError
from llmspace.tools.builtins import builtin_tool

from .conftest import assistant, make_thread, user

STOP_WITHIN_S = 5.0


def _thread(tmp_path: Path, *calls: tuple[str, str]):
    bash = builtin_tool("bash")
    assert bash is not None
    return make_thread([user("go"), assistant("", "a1", [{"id": cid, "input": {"name": "bash", "arguments": {"command": cmd}}}
                                                         for cid, cmd in calls])],
                       context={"tools": [bash.model_dump(exclude_unset=True, by_alias=True, mode="json")],
                                "variables": {"cwd": {"type": "workingDirectory", "value": str(tmp_path)}}})


def test_call_tools_runs_the_calls_and_returns_their_outputs_by_id(app, tmp_path):
    thread = _thread(tmp_path, ("one", "echo one"), ("two", "echo two >&2; exit 3"))
    outputs = app.runner.call_tools(thread, ["two", "one"]).result(timeout=20)
    assert list(outputs) == ["two", "one"]
    assert orjson.loads(outputs["one"].text())["stdout"] == "one\n"
    two = orjson.loads(outputs["two"].text())
    assert two["stderr"] == "two\n" and two["exitCode"] == 3
    assert thread.messages[-1].toolCalls[0].output is None  # the caller decides where results go


def _started_long_call(app, tmp_path):
    """The future of a 30 s bash call, once the call has started."""
    marker = tmp_path / "started"
    future = app.runner.call_tools(_thread(tmp_path, ("long", f"touch {marker}; sleep 30")), ["long"])
    deadline = time.monotonic() + 10
    while not marker.exists():
        assert time.monotonic() < deadline, "the call did not start"
        time.sleep(0.01)
    return future


def test_cancel_stops_a_call_that_already_started(app, tmp_path):
    future = _started_long_call(app, tmp_path)
    started = time.monotonic()
    assert future.cancel() is False  # already running: it ends with a "Cancelled" output
    out = future.result(timeout=STOP_WITHIN_S)["long"]
    assert time.monotonic() - started < STOP_WITHIN_S
    assert out.isError is True and out.text() == "Cancelled"


def test_closing_the_runner_stops_tool_calls_in_flight(app, tmp_path):
    future = _started_long_call(app, tmp_path)
    app.runner.close()
    assert future.result(timeout=STOP_WITHIN_S)["long"].text() == "Cancelled"


def test_an_unknown_call_id_is_refused_at_once(app, tmp_path):
    with pytest.raises(UserFacingError, match="No tool call 'missing'"):
        app.runner.call_tools(_thread(tmp_path, ("one", "echo one")), ["one", "missing"])
