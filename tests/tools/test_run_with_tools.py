"""Acceptance: with auto-run (ReAct) on, a thread whose model calls `read`, an MCP tool and a
custom function tool records the read and MCP results, pauses at the function call, and
continues when its result is supplied. Real parts: the loopback model server, the demo MCP
server over stdio, the real router and run loop."""

from __future__ import annotations

import json
from pathlib import Path

from llmspace.agent.run_types import RunOptions
from llmspace.core.threadio import thread_from_data
from llmspace.tools.builtins import builtin_tool
from tests.mcp.conftest import stdio_fields
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

FUNCTION_TOOL = {"type": "function", "name": "lookup_order", "description": "Look up an order by ID.",
                 "parameters": {"type": "object", "properties": {"orderId": {"type": "string"}}, "required": ["orderId"]}}


def test_read_mcp_and_function_tools_in_one_react_run(app, home: Path, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("order A123", encoding="utf-8")
    server = app.mcp.add_server(**stdio_fields("demo"))
    mcp_add = next(t for t in app.mcp.thread_tools(server.id) if t.toolName == "add")
    read = builtin_tool("read")
    assert read is not None
    tools = [read.model_dump(exclude_unset=True), mcp_add.model_dump(exclude_unset=True), FUNCTION_TOOL]
    thread = thread_from_data({"title": "t", "context": {
        "tools": tools,
        "messages": [{"id": "u1", "role": "user", "content": [{"type": "text", "text": "Check order A123"}]}]}})

    with LoopbackLLM() as srv:
        configure_provider(home, srv)
        srv.push(
            Turn(tool_calls=[ToolCallSpec(id="c_read", name="read", arguments={"description": "d", "path": str(tmp_path / "notes.txt")}),
                             ToolCallSpec(id="c_mcp", name=mcp_add.name, arguments={"a": 2, "b": 3})]),
            Turn(tool_calls=[ToolCallSpec(id="c_fn", name="lookup_order", arguments={"orderId": "A123"})]),
            Turn(text="Order A123 has shipped."),
        )
        paused = app.runner.run(thread, RunOptions(react=True))

        assert paused.status == "paused", paused.error
        assert [c for _m, c in paused.paused_calls] == ["c_fn"]
        first = {c.id: c for c in thread.messages[1].toolCalls}
        assert first["c_read"].output.text() == "1\torder A123" and first["c_read"].output.isError is False
        assert first["c_mcp"].output.text().startswith("5") and not first["c_mcp"].output.isError
        pending = thread.messages[2].toolCalls[0].output
        assert pending is None or pending.text() == ""  # awaiting the human result

        done = app.runner.run(thread, RunOptions(react=True, tool_results={"c_fn": ("Shipped on Monday", False)}))

        assert done.status == "completed", done.error
        assert thread.messages[2].toolCalls[0].output.text() == "Shipped on Monday"
        assert thread.messages[-1].text() == "Order A123 has shipped."
        assert "Shipped on Monday" in json.dumps(srv.requests[-1].body_json)
