"""A run's traces: every model call and every tool call of a run writes one trace under
`traces/calls/` with the run's id and its step index, tool calls with their timing; the
run-history entry lists its traces (a key the original app ignores, round-tripped as written);
no configured secret — an API key, a Basic credential in the base URL — appears in any trace,
not even when a tool's result holds it."""

from __future__ import annotations

import base64
import json
import uuid
from pathlib import Path
from typing import Any

from llmspace.agent.run_types import RunOptions
from llmspace.core.history import run_traces
from llmspace.core.threadio import parse_thread, serialize_thread
from llmspace.tools.builtins import builtin_tool
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from .conftest import make_thread, save_thread, user


def secret_provider(home: Path, srv: LoopbackLLM) -> dict[str, str]:
    """The loopback provider with an API key that is not `sk-…` and a base URL carrying a
    Basic credential (`user:password@`); returns the secrets to look for."""
    u = uuid.uuid4().hex
    key, password = f"gw-{u[:20]}", f"pw{u[8:24]}"
    path = configure_provider(home, srv, api_key=key)
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0]["baseUrl"] = f"http://alice:{password}@127.0.0.1:{srv.port}/v1"
    path.write_text(json.dumps(data), "utf-8")
    basic = base64.b64encode(f"alice:{password}".encode()).decode()
    return {"key": key, "password": password, "pair": f"alice:{password}", "basic": basic}


def run_reading_a_secret_file(app: Any, home: Path, srv: LoopbackLLM, tmp_path: Path) -> tuple[Any, Any, dict[str, str]]:
    """A ReAct run whose model calls `read` on a file holding the secrets, then answers."""
    s = secret_provider(home, srv)
    notes = tmp_path / "notes.txt"
    notes.write_text(f"key={s['key']}\nauth=Basic {s['basic']}\npassword={s['password']}\n", "utf-8")
    srv.push(Turn(tool_calls=[ToolCallSpec(id="c1", name="read", arguments={"description": "d", "path": str(notes)})]),
             Turn(text="The file holds credentials."))
    read = builtin_tool("read")
    assert read is not None
    thread = make_thread([user("What is in notes.txt?")], context={"tools": [read.model_dump(exclude_unset=True)]})
    save_thread(app, "t.json", thread)
    result = app.runner.run(thread, RunOptions(react=True))
    assert result.status == "completed", result.error
    return thread, result, s


def test_a_run_with_a_tool_call_traces_each_step_with_its_run_id_and_the_entry_lists_them(app, home, srv, tmp_path):
    thread, result, _s = run_reading_a_secret_file(app, home, srv, tmp_path)

    run = thread.runHistory[-1]
    assert run.id == result.run_id
    names = run_traces(run)
    assert len(names) == 3
    folder = home / "traces" / "calls"
    docs = [json.loads((folder / n).read_text("utf-8")) for n in names]
    assert [d["kind"] for d in docs] == ["model", "tool", "model"]
    assert [d["step"] for d in docs] == [1, 2, 3]
    assert {d["runId"] for d in docs} == {result.run_id}
    tool = docs[1]
    assert tool["tool"] == "read" and tool["callId"] == "c1"
    assert tool["arguments"]["path"].endswith("notes.txt")
    assert "key=***" in tool["result"]["text"] and tool["result"]["isError"] is False
    assert tool["timing"]["durationMs"] >= 0 and tool["startedAt"]
    assert docs[2]["timing"]["durationMs"] >= 0 and "credentials" in json.dumps(docs[2]["events"])


def test_no_secret_appears_in_any_trace_of_the_run(app, home, srv, tmp_path):
    _thread, _result, s = run_reading_a_secret_file(app, home, srv, tmp_path)

    files = list((home / "traces" / "calls").glob("*.json"))
    assert len(files) == 3
    for path in files:
        text = path.read_text("utf-8")
        for name, value in s.items():
            assert value not in text, f"{name} in {path.name}"
    assert "alice:***@127.0.0.1" in "".join(p.read_text("utf-8") for p in files)


def test_the_traces_key_of_a_run_entry_round_trips_and_a_run_without_it_reads_as_none(app, home, srv, tmp_path):
    thread, result, _s = run_reading_a_secret_file(app, home, srv, tmp_path)
    app.workspace.save("t.json", thread)

    raw = (home / "workspace" / "t.json").read_bytes()
    entry = json.loads(raw)["runHistory"][-1]
    assert entry["id"] == result.run_id and entry["traces"] == run_traces(thread.runHistory[-1])
    assert list(entry)[-1] == "traces"  # after the original app's keys
    assert serialize_thread(parse_thread(raw)) == raw
    del entry["traces"]
    assert run_traces(parse_thread(json.dumps({"runHistory": [entry]}).encode()).runHistory[0]) == []
