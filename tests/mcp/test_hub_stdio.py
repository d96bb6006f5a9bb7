"""McpHub against the real demo MCP server over stdio."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from llmspace.cancel import CancelToken
from llmspace.errors import UserFacingError
from llmspace.mcp.hub import McpHub
from llmspace.paths import DataRoot

from .conftest import PY, process_gone, stdio_fields


def test_test_connects_lists_tools_and_persists_ready_readiness(hub: McpHub, home: Path) -> None:
    hub.add_server(**stdio_fields())
    readiness = hub.test("demo")
    assert readiness.status == "ready"
    assert readiness.toolCount == len(readiness.tools) >= 10
    saved = json.loads((home / "settings" / "mcp.json").read_text())
    assert saved["servers"][0]["readiness"]["status"] == "ready"
    assert (home / "settings" / "mcp.json").read_bytes().endswith(b"}\n")


def test_text_results_include_structured_content_as_pretty_json(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    out = hub.call_tool("demo", "add", {"a": 2, "b": 3})
    assert out.isError is False
    assert out.text() == '5\n\n{\n  "result": 5\n}'


def test_image_results_become_a_placeholder_with_mime_type_and_size(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    out = hub.call_tool("demo", "picture", {})
    assert out.text() == "a tiny picture\n\n[image: image/png, 70 bytes]"


def test_tool_errors_keep_is_error_and_the_message(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    out = hub.call_tool("demo", "fail", {"message": "the disk is full"})
    assert out.isError is True
    assert "the disk is full" in out.text()


def test_long_output_is_capped_with_a_visible_marker(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    out = hub.call_tool("demo", "big", {"size": 25_000})
    assert out.text().endswith("\n\n[truncated]")
    assert len(out.text()) == 20_000 + len("\n\n[truncated]")


def test_a_slow_tool_times_out_and_the_connection_keeps_working(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    out = hub.call_tool("demo", "slow", {"seconds": 30}, timeout=0.5)
    assert out.isError is True
    assert "did not finish within 0.5 s" in out.text()
    assert hub.call_tool("demo", "echo", {"text": "still here"}).text().startswith("still here")


def test_timeout_seconds_of_the_server_is_the_default_call_timeout(hub: McpHub) -> None:
    hub.add_server(**stdio_fields(timeoutSeconds=0.5))
    out = hub.call_tool("demo", "slow", {"seconds": 30})
    assert out.isError and "within 0.5 s" in out.text()


def test_a_cancel_token_cancels_a_running_call(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    token = CancelToken()
    started = threading.Event()
    threading.Thread(target=lambda: (started.wait(30), token.cancel())).start()
    out = hub.call_tool("demo", "slow", {"seconds": 30}, cancel=token,
                        on_progress=lambda p, t, m: started.set())
    assert out.isError and "cancelled" in out.text()
    assert hub.call_tool("demo", "echo", {"text": "next"}).isError is False


def test_a_threading_event_also_cancels(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    stop = threading.Event()
    out = hub.call_tool("demo", "slow", {"seconds": 30}, cancel=stop, on_progress=lambda p, t, m: stop.set())
    assert out.isError and "cancelled" in out.text()


def test_progress_is_reported(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    seen: list[tuple[float, float | None, str | None]] = []
    out = hub.call_tool("demo", "slow", {"seconds": 0.01}, on_progress=lambda p, t, m: seen.append((p, t, m)))
    assert out.text().startswith("slept 0.01")
    assert seen == [(0, 2, "starting"), (1, 2, "half way")]


def test_a_server_that_dies_mid_call_gives_an_error_and_the_next_call_restarts_it(hub: McpHub, home: Path) -> None:
    hub.add_server(**stdio_fields())
    first_pid = int(hub.call_tool("demo", "pid", {}).text().split()[0])
    out = hub.call_tool("demo", "die", {})
    assert out.isError is True
    assert "closed the connection" in out.text()
    second_pid = int(hub.call_tool("demo", "pid", {}).text().split()[0])
    assert second_pid != first_pid
    assert "dying on request" in (home / "logs" / "mcp-demo.log").read_text()


def test_server_stderr_goes_to_its_log_file(hub: McpHub, home: Path) -> None:
    hub.add_server(**stdio_fields())
    hub.call_tool("demo", "complain", {"text": "a note for the log"})
    hub.close()
    assert "a note for the log" in (home / "logs" / "mcp-demo.log").read_text()


def test_junk_on_stdout_is_ignored_and_noted_in_the_log(hub: McpHub, home: Path) -> None:
    hub.add_server(**stdio_fields("demo", "--junk"))
    assert hub.call_tool("demo", "echo", {"text": "fine"}).text().startswith("fine")
    hub.close()
    assert "not an MCP message" in (home / "logs" / "mcp-demo.log").read_text()


def test_a_server_that_only_writes_junk_gives_a_clear_error_and_the_hub_keeps_working(hub: McpHub) -> None:
    hub.add_server(name="junk", command=PY, args=["-c", "print('hello, I am not MCP')"])
    hub.add_server(**stdio_fields())
    readiness = hub.test("junk")
    assert readiness.status == "error"
    assert "closed the connection while starting" in (readiness.lastError or "")
    assert "not MCP messages" in (readiness.lastError or "")
    out = hub.call_tool("junk", "anything", {})
    assert out.isError
    assert hub.call_tool("demo", "echo", {"text": "ok"}).isError is False


def test_a_missing_command_is_reported_clearly(hub: McpHub) -> None:
    hub.add_server(name="nope", command="llmspace-no-such-command-xyz")
    readiness = hub.test("nope")
    assert readiness.status == "error"
    assert "'llmspace-no-such-command-xyz' was not found" in (readiness.lastError or "")


def test_prompts_and_resources_are_listed(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    prompts = hub.list_prompts("demo")
    assert [p["name"] for p in prompts] == ["greet"]
    assert prompts[0]["arguments"][0]["name"] == "name"
    resources = hub.list_resources("demo")
    assert [(r["uri"], r["mimeType"]) for r in resources] == [("demo://greeting", "text/plain")]


def test_env_values_are_interpolated_and_passed_to_the_server(hub: McpHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LLMSPACE_TEST_TOKEN", "tok-123456")
    hub.add_server(**stdio_fields(env={"DEMO_TOKEN": "Bearer ${LLMSPACE_TEST_TOKEN}"}))
    assert hub.call_tool("demo", "env", {"name": "DEMO_TOKEN"}).text().startswith("Bearer tok-123456")


def test_an_unset_env_variable_is_a_clear_error(hub: McpHub, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LLMSPACE_TEST_UNSET", raising=False)
    hub.add_server(**stdio_fields(env={"DEMO_TOKEN": "$LLMSPACE_TEST_UNSET"}))
    with pytest.raises(UserFacingError, match=r"Environment variable LLMSPACE_TEST_UNSET is not set\."):
        hub.call_tool("demo", "echo", {"text": "x"})
    readiness = hub.test("demo")
    assert readiness.status == "error"
    assert readiness.lastError is not None and readiness.lastError.startswith("Environment variable LLMSPACE_TEST_UNSET is not set.")


def test_changing_the_configuration_marks_tools_stale_and_reconnects(hub: McpHub, home: Path) -> None:
    hub.add_server(**stdio_fields())
    assert hub.test("demo").status == "ready"
    pid = hub.call_tool("demo", "pid", {}).text().split()[0]
    # Another process (the CLI, a text editor) edits the file.
    path = home / "settings" / "mcp.json"
    data = json.loads(path.read_text())
    data["servers"][0]["env"] = {"CHANGED": "1"}
    path.write_text(json.dumps(data, indent=2) + "\n")
    assert hub.servers()[0].readiness is not None and hub.servers()[0].readiness.status == "stale"
    assert hub.call_tool("demo", "env", {"name": "CHANGED"}).text().startswith("1")
    assert hub.call_tool("demo", "pid", {}).text().split()[0] != pid
    assert hub.test("demo").status == "ready"


def test_editing_through_the_hub_marks_the_server_stale(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    hub.test("demo")
    hub.update_server("demo", args=[*stdio_fields()["args"], "--junk"])  # type: ignore[list-item]
    readiness = hub.servers()[0].readiness
    assert readiness is not None and readiness.status == "stale"


def test_thread_tools_are_mcp_tools_with_server_and_raw_tool_names(hub: McpHub) -> None:
    cfg = hub.add_server(**stdio_fields("My Demo!"))
    tools = {t.name: t for t in hub.thread_tools("My Demo!")}
    echo = tools["mcp__My_Demo__echo"]
    assert echo.model_dump(exclude_unset=True) == {
        "type": "mcp", "name": "mcp__My_Demo__echo", "description": "Echo the text back.",
        "parameters": echo.parameters, "serverId": cfg.id, "serverName": "My_Demo", "toolName": "echo"}
    assert echo.parameters is not None and echo.parameters["required"] == ["text"]
    assert "mcp__My_Demo__weird_name" not in tools  # colliding names are not offered


def test_colliding_tool_names_are_listed_but_unavailable_with_a_reason(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    weird = [t for t in hub.list_tools("demo") if t.normalizedName == "weird_name"]
    assert [t.name for t in weird] == ["weird.name", "weird-name"]
    assert all(not t.available and "weird_name" in (t.reason or "") for t in weird)


def test_a_tool_can_be_called_by_its_exposed_name(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    assert hub.call_tool("demo", "mcp__demo__echo", {"text": "by name"}).text().startswith("by name")


def test_concurrent_calls_share_one_connection(hub: McpHub) -> None:
    hub.add_server(**stdio_fields())
    results: list[str] = []
    lock = threading.Lock()

    def worker() -> None:
        text = hub.call_tool("demo", "pid", {}).text().split()[0]
        with lock:
            results.append(text)

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(results) == 8 and len(set(results)) == 1


def test_close_ends_every_child_process_and_the_loop_thread(home: Path) -> None:
    hub = McpHub(DataRoot(home))
    hub.add_server(**stdio_fields("one"))
    hub.add_server(**stdio_fields("two"))
    pids = [int(hub.call_tool(n, "pid", {}).text().split()[0]) for n in ("one", "two")]
    hub.close()
    assert all(process_gone(p) for p in pids)
    assert not [t for t in threading.enumerate() if t.name == "mcp-loop"]


def test_unknown_and_disabled_servers_are_clear_errors(hub: McpHub) -> None:
    hub.add_server(**stdio_fields(enabled=False))
    with pytest.raises(UserFacingError, match="No MCP server named 'other'"):
        hub.call_tool("other", "echo", {})
    with pytest.raises(UserFacingError, match="is disabled"):
        hub.call_tool("demo", "echo", {})


def test_importing_the_hub_does_not_import_mcp() -> None:
    import subprocess

    code = "import llmspace.mcp.hub, llmspace.commands.mcp, sys; print('mcp' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    assert out.stdout.strip() == "False"


def test_a_server_that_writes_junk_and_never_answers_times_out_with_a_clear_error(home: Path) -> None:
    hub = McpHub(DataRoot(home), connect_timeout=1.0)
    try:
        hub.add_server(name="mute", command=PY, args=["-c", "import sys; print('junk, not MCP', flush=True); sys.stdin.read()"])
        readiness = hub.test("mute")
        assert readiness.status == "error"
        assert "did not answer within 1 s" in (readiness.lastError or "")
        assert "not MCP messages" in (readiness.lastError or "")
    finally:
        hub.close()


def test_a_stdio_server_that_takes_twelve_seconds_to_start_still_connects_with_the_default_bound(home: Path) -> None:
    """A stdio server is a process start plus `initialize`: a Python server importing its SDK takes
    seconds on a busy machine (a 10 s bound failed on a loaded 2-core CI), so the default waits longer."""
    from .conftest import DEMO

    slow_start = (f"import runpy, sys, time; time.sleep(12); sys.argv = [{str(DEMO)!r}, 'stdio'];"
                  f" runpy.run_path({str(DEMO)!r}, run_name='__main__')")
    hub = McpHub(DataRoot(home))
    try:
        hub.add_server(name="slow", transport="stdio", command=PY, args=["-c", slow_start])
        assert "hello" in hub.call_tool("slow", "echo", {"text": "hello"}).text()
    finally:
        hub.close()


def test_closing_during_a_call_ends_the_call_with_an_error_and_the_child(home: Path) -> None:
    hub = McpHub(DataRoot(home))
    hub.add_server(**stdio_fields())
    pid = int(hub.call_tool("demo", "pid", {}).text().split()[0])
    started = threading.Event()
    box: dict[str, object] = {}

    def slow_call() -> None:
        box["out"] = hub.call_tool("demo", "slow", {"seconds": 60}, on_progress=lambda p, t, m: started.set())

    worker = threading.Thread(target=slow_call)
    worker.start()
    assert started.wait(30)
    hub.close()
    worker.join(30)
    out = box["out"]
    assert out.isError is True
    assert process_gone(pid)


def test_a_missing_working_directory_is_reported_clearly(hub: McpHub, tmp_path: Path) -> None:
    hub.add_server(**stdio_fields(cwd=str(tmp_path / "nowhere")))
    readiness = hub.test("demo")
    assert readiness.status == "error"
    assert "working directory" in (readiness.lastError or "") and "does not exist" in (readiness.lastError or "")
