"""`llmspace mcp call` against a server these tests did not write: the reference
`@modelcontextprotocol/server-everything` (npm), over stdio, streamable HTTP and SSE.

The package is installed once into `~/.cache/llmspace-test/npm` (outside the repo). If npm
is missing or the install fails these tests FAIL with the reason (they are marked `npm`,
so `-m "not npm"` runs the rest of the suite without them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmspace.cli import main

from .conftest import free_port, start_server, stop_server

pytestmark = pytest.mark.npm

CACHE = Path(os.environ.get("LLMSPACE_TEST_NPM_CACHE", Path.home() / ".cache" / "llmspace-test" / "npm"))
PACKAGE = "@modelcontextprotocol/server-everything"


@pytest.fixture(scope="session")
def everything_bin() -> Path:
    binary = CACHE / "node_modules" / ".bin" / "mcp-server-everything"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(f"npm is not installed, so {PACKAGE} cannot be installed for this test (install Node.js and npm).")
    CACHE.mkdir(parents=True, exist_ok=True)
    if not (CACHE / "package.json").exists():
        (CACHE / "package.json").write_text('{"name": "llmspace-test-npm", "private": true}\n')
    done = subprocess.run([npm, "install", "--no-audit", "--no-fund", PACKAGE], cwd=CACHE,
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 or not binary.exists():
        pytest.fail(f"`npm install {PACKAGE}` in {CACHE} failed (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return binary


@pytest.fixture(scope="session")
def everything_url(everything_bin: Path, request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    urls: dict[str, str] = {}
    procs = []
    for mode, path in (("streamableHttp", "/mcp"), ("sse", "/sse")):
        port = free_port()
        procs.append(start_server([str(everything_bin), mode], port, env={"PORT": str(port)}))
        urls[mode] = f"http://127.0.0.1:{port}{path}"
    yield urls
    for p in procs:
        stop_server(p)


def call(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    assert code == 0, out.err
    return code, out.out


def check_echo_and_sum(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = call(capsys, "mcp", "call", "everything", "echo", '{"message": "hello everything"}')
    assert out.strip() == "Echo: hello everything"
    _, out = call(capsys, "mcp", "call", "everything", "get-sum", '{"a": 2, "b": 3}')
    assert out.strip() == "The sum of 2 and 3 is 5."
    _, out = call(capsys, "mcp", "test", "everything")
    assert "mcp__everything__get_sum" in out


def test_server_everything_over_stdio(home: Path, everything_bin: Path, capsys: pytest.CaptureFixture[str]) -> None:
    call(capsys, "mcp", "add", "everything", "--stdio", str(everything_bin), "stdio")
    check_echo_and_sum(capsys)
    _, out = call(capsys, "mcp", "call", "everything", "get-tiny-image", "{}")
    assert "[image: image/png," in out


@pytest.mark.parametrize("transport", ["streamableHttp", "sse"])
def test_server_everything_over_http_and_sse(home: Path, everything_url: dict[str, str], transport: str,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    flag = "--http" if transport == "streamableHttp" else "--sse"
    call(capsys, "mcp", "add", "everything", flag, everything_url[transport])
    check_echo_and_sum(capsys)
