"""Runs exported to a real Arize Phoenix (tests/traces/conftest.py): a ReAct run with two tool
calls shows up as AGENT, LLM and TOOL spans with messages, tool calls and token counts, read back
through Phoenix's REST API; and the round trip run -> Phoenix -> `traces sync` -> thread gives the
thread that ran (rendered messages, tool calls, usage and model), content capture on."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import requests

from llmspace.app import App
from llmspace.paths import DataRoot
from llmspace.traces.connect import connect_phoenix, search, sync
from llmspace.traces.langfuse_api import SearchFilters
from tests.support.llm_server import LoopbackLLM, configure_provider

from . import shapes
from .test_otel_export import two_tool_run
from .test_phoenix import _thread, _wait_for_project


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


def _settings(home: Any, url: str, project: str, capture: bool) -> None:
    import json

    (home / "settings").mkdir(parents=True, exist_ok=True)
    (home / "settings" / "tracing.json").write_text(json.dumps({
        "enabled": True, "endpoint": url, "captureContent": capture, "serviceName": "llmspace", "project": project}))


def _spans(phoenix: Any, project: str, trace_id: str, count: int) -> list[dict[str, Any]]:
    deadline = time.monotonic() + 120
    while True:
        got = requests.get(f"{phoenix.url}/v1/projects/{project}/spans",
                           params={"trace_id": trace_id, "limit": 1000}, timeout=30).json()["data"]
        if len(got) >= count or time.monotonic() > deadline:
            return got
        time.sleep(0.5)


def _exported_run(home: Any, srv: LoopbackLLM, tmp_path: Any, phoenix: Any, capture: bool) -> tuple[Any, str, App]:
    project = f"run-{uuid.uuid4().hex[:8]}"
    configure_provider(home, srv)
    _settings(home, phoenix.url, project, capture)
    app = App(DataRoot(home))
    thread, _result = two_tool_run(app, srv, tmp_path)
    [exporter] = app.traces.observers._observers
    assert exporter.flush(90), "Phoenix did not take the spans"
    _wait_for_project(phoenix, project)
    return thread, project, app


def _trace_id(app: App, phoenix: Any, project: str) -> tuple[dict[str, Any], str]:
    store = app.trace_projects
    connected = connect_phoenix(store, f"p {project}", phoenix.url, project)
    now = datetime.now(UTC)
    window = SearchFilters(start=(now - timedelta(hours=1)).isoformat(), end=(now + timedelta(hours=1)).isoformat(), limit=10)
    deadline = time.monotonic() + 120
    while not (found := search(store, connected, window)) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(found) == 1, found
    return connected, found[0]["id"]


def test_a_run_exported_to_phoenix_has_agent_llm_and_tool_spans_and_syncs_back_into_the_thread_that_ran(
        home, srv, tmp_path, phoenix):
    thread, project, app = _exported_run(home, srv, tmp_path, phoenix, capture=True)
    try:
        connected, trace_id = _trace_id(app, phoenix, project)
        spans = _spans(phoenix, project, trace_id, 6)
        kinds = sorted(s["span_kind"] for s in spans)
        assert kinds == ["AGENT", "LLM", "LLM", "LLM", "TOOL", "TOOL"]
        [agent] = [s for s in spans if s["span_kind"] == "AGENT"]
        assert all(s["parent_id"] == agent["context"]["span_id"] for s in spans if s is not agent)
        llm = [s["attributes"] for s in spans if s["span_kind"] == "LLM"]
        assert sorted(a["llm.token_count.prompt"] for a in llm) == [11, 21, 31], llm[0]
        assert all(a["llm.input_messages.0.message.content"] == "Read a.txt and b.txt" for a in llm)
        assert any(a.get("llm.output_messages.0.message.tool_calls.0.tool_call.function.name") == "read" for a in llm)
        assert agent["attributes"]["session.id"] == thread.runHistory[-1].id

        report = sync(app.trace_projects, connected, [trace_id])
        assert report.skipped == []
        (record, _state), = report.synced
        synced = _thread(app.trace_projects, connected["id"], record["key"])
        ran = shapes.shape_of(thread)
        back = shapes.shape_of(synced)
        assert back["messages"] == ran["messages"]
        assert [(len(m["calls"]), m["tokens"]) for m in ran["messages"] if m["role"] == "assistant"] == \
            [(1, (11, 3)), (1, (21, 4)), (0, (31, 5))]
        recorded = thread.runHistory[-1].thread.model
        assert recorded is not None and back["model"] == recorded.model_dump(), (back["model"], recorded)
    finally:
        app.close()


def test_with_capture_off_phoenix_gets_no_message_text(home, srv, tmp_path, phoenix):
    _thread_ran, project, app = _exported_run(home, srv, tmp_path, phoenix, capture=False)
    try:
        _connected, trace_id = _trace_id(app, phoenix, project)
        spans = _spans(phoenix, project, trace_id, 6)
        assert sorted(s["span_kind"] for s in spans) == ["AGENT", "LLM", "LLM", "LLM", "TOOL", "TOOL"]
        text = str(spans)
        for words in ("Read a.txt", "alpha file", "Both files are read"):
            assert words not in text
    finally:
        app.close()


def test_an_evaluation_with_a_judge_exported_to_phoenix_has_its_verdicts_as_events_on_the_cell_spans(home, phoenix):
    import json

    from tests.evals.support import Oracle, arithmetic_and_extraction, write_eval
    from tests.support.cli import cli_in_process

    project = f"eval-{uuid.uuid4().hex[:8]}"
    with LoopbackLLM() as srv:
        srv.responder = Oracle()
        path = write_eval(home, srv, arithmetic_and_extraction(10)[:5], judge="loop/judge",
                          assertions=[{"type": "contains"}, {"type": "llm-rubric", "value": "correct\nconcise"}])
        (home / "settings" / "tracing.json").write_text(json.dumps({
            "enabled": True, "endpoint": phoenix.url, "captureContent": True, "serviceName": "llmspace", "project": project}))
        done = cli_in_process(["eval", "run", str(path), "--no-cache"], env={"LLM_SPACE_HOME": str(home)})
        assert done.returncode == 0, done.stderr
    _wait_for_project(phoenix, project)
    deadline = time.monotonic() + 120
    while True:
        spans = requests.get(f"{phoenix.url}/v1/projects/{project}/spans", params={"limit": 1000}, timeout=30).json()["data"]
        cells = [s for s in spans if s["name"].startswith("evaluate ")]
        if len(cells) >= 5 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    [evaluation] = [s for s in spans if s["name"] == "evaluation quiz"]
    assert len(cells) == 5 and all(c["parent_id"] == evaluation["context"]["span_id"] for c in cells)
    for cell in cells:
        verdicts = {e["attributes"]["gen_ai.evaluation.name"].split()[0]: e["attributes"] for e in cell["events"]
                    if e["name"] == "gen_ai.evaluation.result"}
        assert set(verdicts) == {"contains", "llm-rubric"}
        assert verdicts["llm-rubric"]["gen_ai.evaluation.score.label"] == "pass"
        assert verdicts["llm-rubric"]["gen_ai.evaluation.explanation"] == "Right and short."


def test_an_mcp_call_exported_to_phoenix_hangs_under_its_tool_span(home, srv, tmp_path, phoenix):
    from llmspace.agent.run_types import RunOptions
    from tests.agent.conftest import make_thread, save_thread, user
    from tests.mcp.conftest import stdio_fields
    from tests.support.llm_server import ToolCallSpec, Turn

    project = f"mcp-{uuid.uuid4().hex[:8]}"
    configure_provider(home, srv)
    _settings(home, phoenix.url, project, capture=True)
    app = App(DataRoot(home))
    try:
        cfg = app.mcp.add_server(**stdio_fields())
        tool = {"type": "mcp", "name": "mcp__demo__add", "serverId": cfg.id, "serverName": "demo", "toolName": "add",
                "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}
        srv.push(Turn(tool_calls=[ToolCallSpec(id="m1", name="mcp__demo__add", arguments={"a": 2, "b": 3})]), Turn(text="5."))
        thread = make_thread([user("2+3?")], context={"tools": [tool]})
        save_thread(app, "mcp.json", thread)
        assert app.runner.run(thread, RunOptions(react=True)).status == "completed"
        [exporter] = app.traces.observers._observers
        assert exporter.flush(90)
        _wait_for_project(phoenix, project)
        deadline = time.monotonic() + 120
        while True:
            spans = requests.get(f"{phoenix.url}/v1/projects/{project}/spans", params={"limit": 1000}, timeout=30).json()["data"]
            if (any(s["name"].startswith("MCP send tools/call") for s in spans) and len(spans) >= 5) or time.monotonic() > deadline:
                break
            time.sleep(0.5)
    finally:
        app.close()
    [tool_span] = [s for s in spans if s["span_kind"] == "TOOL"]
    [mcp_span] = [s for s in spans if s["name"] == "MCP send tools/call add"]
    assert mcp_span["parent_id"] == tool_span["context"]["span_id"]
    assert mcp_span["context"]["trace_id"] == tool_span["context"]["trace_id"]
