"""MCP tool-call round trip through `McpHub`, per transport: median and p95 over 500 calls.

Starts the demo server from `tests/support/mcp_servers/demo_server.py` over stdio, and as
subprocesses on free 127.0.0.1 ports for streamable HTTP and SSE. Budget: 2 ms over stdio.
Run with `python -m bench mcp`.
"""

from __future__ import annotations

import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CALLS = 500
WARMUP = 20
DEMO = Path(__file__).resolve().parents[1] / "tests" / "support" / "mcp_servers" / "demo_server.py"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _serve(mode: str) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, str(DEMO), "http" if mode == "streamableHttp" else "sse", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            time.sleep(0.05)
    path = "/mcp" if mode == "streamableHttp" else "/sse"
    return proc, f"http://127.0.0.1:{port}{path}"


def run() -> list[tuple[str, float, str, float | None]]:
    from llmspace.mcp.hub import McpHub
    from llmspace.paths import DataRoot

    rows: list[tuple[str, float, str, float | None]] = []
    with tempfile.TemporaryDirectory() as tmp:
        hub = McpHub(DataRoot(Path(tmp)))
        procs = []
        try:
            hub.add_server(name="stdio", transport="stdio", command=sys.executable, args=[str(DEMO), "stdio"])
            for mode in ("streamableHttp", "sse"):
                proc, url = _serve(mode)
                procs.append(proc)
                hub.add_server(name=mode, transport=mode, url=url)
            for name, budget in (("stdio", 2.0), ("streamableHttp", None), ("sse", None)):
                t0 = time.perf_counter()
                hub.test(name)
                rows.append((f"mcp connect+list {name}", (time.perf_counter() - t0) * 1000, "ms", None))
                for _ in range(WARMUP):
                    hub.call_tool(name, "echo", {"text": "ping"})
                times = []
                for _ in range(CALLS):
                    t = time.perf_counter()
                    out = hub.call_tool(name, "echo", {"text": "ping"})
                    times.append((time.perf_counter() - t) * 1000)
                    if out.isError:
                        raise RuntimeError(out.text())
                times.sort()
                rows.append((f"mcp call round trip {name} median", statistics.median(times), "ms", budget))
                rows.append((f"mcp call round trip {name} p95", times[int(len(times) * 0.95) - 1], "ms", None))
        finally:
            hub.close()
            for p in procs:
                p.terminate()
                p.wait(10)
    return rows
