"""A demo MCP server for the tests and the benchmark, built with `mcp.server.MCPServer`.

Run: `python demo_server.py stdio` | `python demo_server.py http PORT` | `python demo_server.py sse PORT`.
Options: `--junk` writes non-JSON lines to stdout before serving (stdio only), so the client
must cope with a misbehaving server. Tools cover text, images, errors, slow calls with
progress, a server that dies mid-call, big output, environment, stderr; it also has one
prompt and one resource. Started by `tests/mcp/*` and `bench/bench_mcp.py`.
"""

from __future__ import annotations

import base64
import os
import sys

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context, Image
from mcp.server.mcpserver.exceptions import ToolError

# 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)

server = MCPServer("demo-server", log_level="WARNING")


@server.tool()
def echo(text: str) -> str:
    """Echo the text back."""
    return text


@server.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def picture() -> list:
    """Return a caption and a tiny PNG image."""
    return ["a tiny picture", Image(data=PNG, format="png")]


@server.tool()
def fail(message: str) -> str:
    """Always fails with the given message."""
    raise ToolError(message)


@server.tool()
async def slow(seconds: float, ctx: Context) -> str:
    """Sleep for `seconds`, reporting progress twice."""
    await ctx.report_progress(0, 2, "starting")
    await anyio.sleep(seconds / 2)
    await ctx.report_progress(1, 2, "half way")
    await anyio.sleep(seconds / 2)
    return f"slept {seconds}"


@server.tool()
def die() -> str:
    """Exit the server process in the middle of the call."""
    sys.stderr.write("demo-server: dying on request\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool()
def big(size: int) -> str:
    """Return `size` characters of text."""
    return "x" * size


@server.tool()
def env(name: str) -> str:
    """Return the value of one environment variable ('<unset>' when unset)."""
    return os.environ.get(name, "<unset>")


@server.tool()
def complain(text: str) -> str:
    """Write `text` to stderr and return 'ok'."""
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
    return "ok"


@server.tool()
def pid() -> int:
    """The server's process id."""
    return os.getpid()


@server.tool(name="weird.name")
def weird_dot() -> str:
    """Its name normalises to weird_name."""
    return "dot"


@server.tool(name="weird-name")
def weird_dash() -> str:
    """Its name also normalises to weird_name (a collision)."""
    return "dash"


@server.resource("demo://greeting", name="greeting", mime_type="text/plain")
def greeting() -> str:
    """A greeting text."""
    return "hello from the demo server"


@server.prompt()
def greet(name: str) -> str:
    """Ask the model to greet someone."""
    return f"Please greet {name}."


def main(argv: list[str]) -> None:
    junk = "--junk" in argv
    args = [a for a in argv if not a.startswith("--")]
    mode = args[0] if args else "stdio"
    if mode == "stdio":
        if junk:
            sys.stdout.write("this is not JSON-RPC\n{broken json\n")
            sys.stdout.flush()
        server.run("stdio")
    elif mode == "http":
        server.run("streamable-http", host="127.0.0.1", port=int(args[1]))
    elif mode == "sse":
        server.run("sse", host="127.0.0.1", port=int(args[1]))
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
