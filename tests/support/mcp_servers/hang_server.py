"""A misbehaving stdio MCP server for the timeout and interrupt tests (low-level `mcp.server.lowlevel.Server`).

Run: `python hang_server.py [--hang-list] [--stubborn] [--notify PORT]`.
  --hang-list   `tools/list` never answers (the handler awaits forever).
  --stubborn    a hanging handler shields itself from cancellation, so the server does not
                exit when its stdin closes (like a server with a stuck worker); only a signal ends it.
  --notify PORT when a handler starts to hang, connect to 127.0.0.1:PORT and send the server's
                pid (so a test waits on an event, not a clock, to know the request is in flight).
Tools: `echo(text)` returns the text; `hang()` never returns.
Started by `tests/mcp/test_timeouts_and_interrupt.py`.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

TOOLS = [
    types.Tool(name="echo", description="Echo the text back.",
               input_schema={"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    types.Tool(name="hang", description="Never returns.", input_schema={"type": "object", "properties": {}}),
]


async def hang(opts: argparse.Namespace) -> None:
    if opts.notify:
        async with await anyio.connect_tcp("127.0.0.1", opts.notify) as sock:
            await sock.send(str(os.getpid()).encode())
    if opts.stubborn:
        with anyio.CancelScope(shield=True):
            await anyio.sleep_forever()
    await anyio.sleep_forever()


def build(opts: argparse.Namespace) -> Server[Any]:
    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        if opts.hang_list:
            await hang(opts)
        return types.ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name == "echo":
            text = str((params.arguments or {}).get("text", ""))
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        if params.name == "hang":
            await hang(opts)
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"unknown tool {params.name}")],
                                    is_error=True)

    return Server("hang-server", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(opts: argparse.Namespace) -> None:
    server = build(opts)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--hang-list", action="store_true")
    parser.add_argument("--stubborn", action="store_true")
    parser.add_argument("--notify", type=int)
    anyio.run(main, parser.parse_args())
