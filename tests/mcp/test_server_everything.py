"""`llmspace mcp call` against a server these tests did not write: the reference
`@modelcontextprotocol/server-everything` (npm), over stdio, streamable HTTP and SSE.

The package is installed once into `~/.cache/llmspace-test/npm` (outside the repo). If npm
is missing or the install fails these tests FAIL with the reason (they are marked `npm`,
so `-m "not npm"` runs the rest of the suite without them).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from llmspace.cli import main
from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from llmspace.mcp.hub import McpHub
from llmspace.paths import DataRoot
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

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


# -- MCP beyond tools (issue 45): server-everything speaks 2025-11-25 (the 2.x client's auto
# mode falls back to the initialize handshake), so it is also the old era's server here.

ROOT = Path(__file__).resolve().parents[2]


def cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "llmspace", *args], cwd=ROOT, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=180)


def thread_file(home: Path, tools: list[dict[str, Any]] | None = None) -> Path:
    path = home / "workspace" / "t.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data: dict[str, Any] = {"title": "t", "context": {"tools": tools or [], "messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Summarise the attachment."}]}]}}
    path.write_bytes(serialize_thread(thread_from_data(data)))
    return path


@pytest.fixture
def llm() -> Iterator[LoopbackLLM]:
    with LoopbackLLM() as server:
        yield server


def test_mcp_test_names_revision_2025_11_25_for_server_everything(home: Path, everything_bin: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    call(capsys, "mcp", "add", "everything", "--stdio", str(everything_bin), "stdio")
    _, out = call(capsys, "mcp", "test", "everything")
    assert "protocol 2025-11-25 (with initialize)" in out and "prompts" in out and "resources" in out
    assert "mcp__everything__trigger_elicitation_request" in out  # offered: we declare elicitation


def test_server_everything_prompt_into_a_thread_and_resource_sent_to_a_model(
        home: Path, everything_bin: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]) -> None:
    call(capsys, "mcp", "add", "everything", "--stdio", str(everything_bin), "stdio")
    path = thread_file(home)
    call(capsys, "mcp", "prompt", "everything", "simple-prompt", "--into", "t.json")
    uri = "demo://resource/static/document/architecture.md"
    call(capsys, "mcp", "read", "everything", uri, "--into", "t.json", "--message", "u1")
    saved = json.loads(path.read_text())["context"]["messages"]
    assert saved[0]["literal"] is True and saved[0]["content"][1]["text"].startswith(f"[resource: {uri}]\n")
    assert saved[1]["role"] == "user" and saved[1]["literal"] is True
    configure_provider(home, llm)
    llm.push(Turn(text="A summary."))

    done = cli(home, "run", "t.json")

    assert done.returncode == 0, done.stderr
    sent = json.dumps(llm.requests[0].body_json)
    assert f"[resource: {uri}]" in sent and "This is a simple prompt without arguments." in sent


def test_server_everything_elicitation_is_declined_in_a_run_without_a_terminal(
        home: Path, everything_bin: Path, llm: LoopbackLLM, capsys: pytest.CaptureFixture[str]) -> None:
    call(capsys, "mcp", "add", "everything", "--stdio", str(everything_bin), "stdio")
    server_id = json.loads((home / "settings" / "mcp.json").read_text())["servers"][0]["id"]
    tool = {"type": "mcp", "name": "mcp__everything__trigger_elicitation_request", "serverId": server_id,
            "serverName": "everything", "toolName": "trigger-elicitation-request",
            "parameters": {"type": "object", "properties": {}}}
    path = thread_file(home, [tool])
    configure_provider(home, llm)
    llm.push(Turn(tool_calls=[ToolCallSpec(id="call_1", name=tool["name"], arguments={})]))

    done = cli(home, "run", "t.json", "--auto-tools")  # standard input is /dev/null, as in CI

    assert done.returncode == 0, done.stderr
    text = parse_thread(path.read_bytes()).messages[-1].toolCalls[0].output.text()
    assert "declined: standard input is not a terminal" in text


def test_server_everything_resource_updates_reach_a_watcher_through_resources_subscribe(
        home: Path, everything_bin: Path) -> None:
    hub = McpHub(DataRoot(home))
    try:
        hub.add_server(name="everything", transport="stdio", command=str(everything_bin), args=["stdio"])
        seen = threading.Event()
        uri = "demo://resource/static/document/architecture.md"
        stop = hub.extras.watch_resources("everything", [uri], lambda changed: seen.set() if changed == uri else None)
        hub.call_tool("everything", "toggle-subscriber-updates", {})
        assert seen.wait(60)  # sent at once, then every 5 s
        stop()
    finally:
        hub.close()
