"""The MCP client: one asyncio loop thread holds a connection per configured MCP server
(stdio, streamable HTTP or SSE) behind a synchronous facade that any thread may call.
`mcp` (the SDK) is imported only on that loop thread, on first use. Nothing runs on import.

Modules:
- `hub.py`         `McpHub`: servers, test, list/call tools, prompts, resources, close
- `connection.py`  one live client connection, owned by one task on the loop
- `loop.py`        the asyncio loop in a daemon thread
- `naming.py`      exposed tool names (`mcp__<server>__<tool>`) and collisions
- `flatten.py`     a tool result -> the text a thread records
- `env.py`         `$VAR` interpolation and the environment of stdio servers
- `diagnose.py`    clear, redacted messages for connection and call failures
"""
