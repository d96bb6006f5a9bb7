"""`llmspace mcp …` on the command line, against the demo server."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from llmspace.cli import main

from .conftest import DEMO, PY

REPO = Path(__file__).resolve().parents[2]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_list_test_call_and_remove_a_stdio_server(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "mcp", "list")
    assert code == 0 and "No MCP servers configured" in out
    code, out, _ = run(capsys, "mcp", "add", "demo", "--env", "A=1", "--stdio", PY, str(DEMO), "stdio")
    assert code == 0 and "Added MCP server 'demo'" in out
    code, out, _ = run(capsys, "mcp", "list")
    assert out.split("\n")[1].split() == ["demo", "stdio", "untested", "-"]
    code, out, _ = run(capsys, "mcp", "test", "demo")
    assert code == 0 and "ready" in out and "mcp__demo__echo" in out and "unavailable:" in out
    code, out, _ = run(capsys, "mcp", "list")
    assert out.split("\n")[1].split()[:3] == ["demo", "stdio", "ready"]
    code, out, _ = run(capsys, "mcp", "call", "demo", "echo", '{"text": "from the shell"}')
    assert code == 0 and out.startswith("from the shell\n")
    code, out, _ = run(capsys, "mcp", "prompts", "demo")
    assert "greet(name)" in out
    code, out, _ = run(capsys, "mcp", "resources", "demo")
    assert "demo://greeting" in out
    code, out, _ = run(capsys, "mcp", "remove", "demo")
    assert code == 0 and json.loads((home / "settings" / "mcp.json").read_text()) == {"servers": []}


def test_call_exits_1_when_the_result_is_an_error(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "mcp", "add", "demo", "--stdio", PY, str(DEMO), "stdio")
    code, _out, err = run(capsys, "mcp", "call", "demo", "fail", '{"message": "no way"}')
    assert code == 1 and "no way" in err


def test_bad_json_arguments_and_unknown_servers_are_clear_errors(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "mcp", "add", "demo", "--stdio", PY, str(DEMO), "stdio")
    code, _, err = run(capsys, "mcp", "call", "demo", "echo", "{bad")
    assert code == 1 and "JSON_ARGS is not valid JSON" in err
    code, _, err = run(capsys, "mcp", "call", "other", "echo", "{}")
    assert code == 1 and "No MCP server named 'other'" in err


def test_test_reports_an_error_with_exit_1(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "mcp", "add", "bad", "--stdio", "llmspace-no-such-command-xyz")
    code, _, err = run(capsys, "mcp", "test", "bad")
    assert code == 1 and "was not found" in err


@pytest.mark.parametrize("transport", ["http", "sse"])
def test_call_works_over_http_and_sse(home: Path, capsys: pytest.CaptureFixture[str], transport: str,
                                      request: pytest.FixtureRequest) -> None:
    url = request.getfixturevalue("http_url" if transport == "http" else "sse_url")
    run(capsys, "mcp", "add", "remote", f"--{transport}", url)
    code, out, _ = run(capsys, "mcp", "call", "remote", "add", '{"a": 20, "b": 22}')
    assert code == 0 and out.startswith("42\n")


def test_the_installed_command_line_calls_a_tool_in_a_fresh_process(home: Path) -> None:
    assert main(["mcp", "add", "demo", "--stdio", PY, str(DEMO), "stdio"]) == 0  # here; the call is the fresh process
    done = subprocess.run([sys.executable, "-m", "llmspace", "mcp", "call", "demo", "echo", '{"text": "hi"}'],
                          cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hi\n")


def test_an_invalid_settings_file_is_reported_and_left_alone(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = home / "settings" / "mcp.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{not json")
    code, out, err = run(capsys, "mcp", "list")
    assert code == 0 and "malformed JSON at line 1" in err and "fix settings/mcp.json first" in out
    code, _, err = run(capsys, "mcp", "add", "x", "--http", "http://127.0.0.1:1/mcp")
    assert code == 1 and "Not changing" in err
    assert path.read_text() == "{not json"
