"""Fixtures for the MCP tests: the demo server over stdio, streamable HTTP and SSE, and a hub.

HTTP/SSE servers run in subprocesses on free 127.0.0.1 ports; readiness is awaited by
polling the port with a bounded deadline.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmspace.mcp.hub import McpHub
from llmspace.paths import DataRoot

DEMO = Path(__file__).resolve().parents[1] / "support" / "mcp_servers" / "demo_server.py"
PY = sys.executable


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "npm: needs npm and @modelcontextprotocol/server-everything (installed on demand)")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    """Poll until something accepts connections on the port (bounded); fail if the process died."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on 127.0.0.1:{port} after {timeout} s")


def start_server(argv: list[str], port: int, env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env={**os.environ, **(env or {})}, start_new_session=True)
    try:
        wait_for_port(port, proc)
    except BaseException:
        proc.kill()
        proc.wait(10)
        raise
    return proc


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(10)


@pytest.fixture(scope="session")
def http_url() -> Iterator[str]:
    port = free_port()
    proc = start_server([PY, str(DEMO), "http", str(port)], port)
    yield f"http://127.0.0.1:{port}/mcp"
    stop_server(proc)


@pytest.fixture(scope="session")
def sse_url() -> Iterator[str]:
    port = free_port()
    proc = start_server([PY, str(DEMO), "sse", str(port)], port)
    yield f"http://127.0.0.1:{port}/sse"
    stop_server(proc)


@pytest.fixture
def hub(home: Path) -> Iterator[McpHub]:
    h = McpHub(DataRoot(home))
    yield h
    h.close()


def stdio_fields(name: str = "demo", *extra: str, **fields: object) -> dict[str, object]:
    return {"name": name, "transport": "stdio", "command": PY, "args": [str(DEMO), "stdio", *extra], **fields}


def process_gone(pid: int) -> bool:
    """True when `pid` no longer exists or is a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return True
    return stat.rsplit(")", 1)[1].split()[0] == "Z"
