"""An MCP tool call of a run is traced under its tool span: the `mcp` package's own client span
(`MCP send tools/call add`, opened through `opentelemetry-api`) is a child of the run's
`execute_tool` span, because the tool span is current while the tool runs and the hub carries
that context into its asyncio loop."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from llmspace.agent.run_types import RunOptions
from llmspace.app import App
from llmspace.paths import DataRoot
from tests.agent.conftest import make_thread, save_thread, user
from tests.mcp.conftest import stdio_fields
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

from .otlp_receiver import OtlpReceiver
from .test_otel_export import enable_tracing


@pytest.fixture
def srv() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


def test_the_mcp_call_of_a_run_is_a_child_of_its_tool_span(home, srv):
    configure_provider(home, srv)
    with OtlpReceiver() as rx:
        enable_tracing(home, rx.url, capture=True)
        app = App(DataRoot(home))
        try:
            cfg = app.mcp.add_server(**stdio_fields())
            tool = {"type": "mcp", "name": "mcp__demo__add", "serverId": cfg.id, "serverName": "demo", "toolName": "add",
                    "parameters": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}}
            srv.push(Turn(tool_calls=[ToolCallSpec(id="m1", name="mcp__demo__add", arguments={"a": 2, "b": 3})]),
                     Turn(text="It is 5."))
            thread = make_thread([user("2+3?")], context={"tools": [tool]})
            save_thread(app, "mcp.json", thread)
            result = app.runner.run(thread, RunOptions(react=True))
            assert result.status == "completed", result.error
            assert "5" in thread.messages[1].toolCalls[0].output.text()
            spans = rx.wait_for(lambda got: any(s.name.startswith("MCP send tools/call") for s in got)
                                and any(s.name.startswith("invoke_agent") for s in got))
        finally:
            app.close()
    [tool_span] = [s for s in spans if s.name == "execute_tool mcp__demo__add"]
    [mcp_span] = [s for s in spans if s.name == "MCP send tools/call add"]
    [agent] = [s for s in spans if s.name.startswith("invoke_agent")]
    assert mcp_span.parent_id == tool_span.span_id and mcp_span.trace_id == tool_span.trace_id
    assert tool_span.parent_id == agent.span_id
    assert mcp_span.scope == "mcp-python-sdk" and mcp_span.kind == "CLIENT"
    assert mcp_span.resource["openinference.project.name"] == "llmspace-test"
    assert json.loads(tool_span.attributes["gen_ai.tool.call.arguments"]) == {"a": 2, "b": 3}
