"""`llmspace run` against a real loopback LLM server and real files: through the command
line's `main` in this process (a subprocess costs a second of start-up on a loaded machine), and
as a real subprocess where the process matters — a terminal as stdin, Ctrl-C."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from tests.support.cli import cli_in_process
from tests.support.llm_server import LoopbackLLM, ToolCallSpec, Turn, configure_provider

ROOT = Path(__file__).resolve().parents[2]
LOOKUP = {"type": "function", "name": "lookup", "description": "Look a word up.",
          "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}


def _user(text: str, mid: str = "u1") -> dict[str, Any]:
    return {"id": mid, "role": "user", "content": [{"type": "text", "text": text}]}


def _write(home: Path, rel: str, data: dict[str, Any]) -> Path:
    path = home / "workspace" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(serialize_thread(thread_from_data(data)))
    return path


def _run(home: Path, *args: str, stdin: Any = None) -> subprocess.CompletedProcess[str]:
    """`llmspace run ARGS` on `home` from the repository folder: in this process, or as a
    subprocess reading `stdin` (a terminal needs a process of its own)."""
    if stdin is None:
        return cli_in_process(["run", *args], env={"LLM_SPACE_HOME": str(home)}, cwd=ROOT)
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "llmspace", "run", *args], cwd=ROOT, env=env, stdin=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def srv():
    with LoopbackLLM() as server:
        yield server


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
def test_run_streams_the_reply_and_saves_it_with_usage_timing_and_history(home, srv, api):
    configure_provider(home, srv, api=api)
    srv.push(Turn(text="Bonjour!", thinking="French it is.", usage=(20, 4)))
    path = _write(home, "greet.json", {"title": "greet", "context": {"messages": [_user("Say hi in French")]}})

    proc = _run(home, "greet.json")

    assert proc.returncode == 0, proc.stderr
    assert "[thinking]\nFrench it is." in proc.stdout
    assert "Bonjour!" in proc.stdout
    saved = parse_thread(path.read_bytes())
    reply = saved.messages[-1]
    assert reply.role == "assistant" and reply.text() == "Bonjour!"
    assert reply.usage.input == 20 and reply.usage.output == 4
    assert reply.timing is not None and reply.timing.durationMs >= 0
    assert len(saved.runHistory) == 1 and saved.runHistory[0].usage.output == 4
    assert not path.read_bytes().endswith(b"\n")


def test_run_json_prints_a_summary_with_the_new_messages(home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="42"))
    _write(home, "q.json", {"title": "q", "context": {"messages": [_user("answer?")]}})

    proc = _run(home, "q.json", "--json")

    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    assert summary["status"] == "completed" and summary["thread"] == "q.json"
    assert summary["messages"][0]["content"] == [{"type": "text", "text": "42"}]
    assert summary["runId"]
    assert summary["usage"]["totalTokens"] == 15 and summary["turns"] == 1


def test_a_failed_run_exits_non_zero_with_the_error_on_stderr_and_keeps_the_file(home, srv):
    configure_provider(home, srv)
    srv.push_raw(status=401, body=b'{"error": {"message": "bad key"}}')
    path = _write(home, "f.json", {"title": "f", "context": {"messages": [_user("hi")]}})
    before = path.read_bytes()

    proc = _run(home, "f.json")

    assert proc.returncode != 0
    assert "bad key" in proc.stderr
    assert "sk-loopback" not in proc.stderr + proc.stdout
    assert path.read_bytes() == before


def test_an_error_frame_in_the_stream_exits_1_with_the_servers_message_and_records_an_error_run(home, srv):
    configure_provider(home, srv)
    srv.push_raw(body=[b'event: error\ndata: {"message": "overloaded"}\n\n'], content_type="text/event-stream")
    path = _write(home, "e.json", {"title": "e", "context": {"messages": [_user("hi")]}})

    proc = _run(home, "e.json")

    assert proc.returncode == 1, proc.stderr
    assert "overloaded" in proc.stderr
    saved = json.loads(path.read_text("utf-8"))
    assert [m["role"] for m in saved["context"]["messages"]] == ["user"]
    assert saved["runHistory"][-1]["status"] == "error"


@pytest.mark.parametrize("finish", ["stop", "length"])
def test_an_empty_reply_exits_1_saves_no_empty_message_and_records_an_empty_run(home, srv, finish):
    configure_provider(home, srv)
    srv.push(Turn(text="", finish_reason=finish))
    path = _write(home, "x.json", {"title": "x", "model": {"provider": "loop", "id": "loopback-model", "params": {"maxTokens": 64}},
                                   "context": {"messages": [_user("hi")]}})

    proc = _run(home, "x.json")

    assert proc.returncode == 1, proc.stderr
    assert "loop returned an empty reply" in proc.stderr
    if finish == "length":
        assert "cut at maxTokens 64" in proc.stderr
    saved = json.loads(path.read_text("utf-8"))
    assert [m["role"] for m in saved["context"]["messages"]] == ["user"]
    assert saved["runHistory"][-1]["status"] == "empty"


def test_a_reply_cut_at_max_tokens_is_saved_with_a_warning_on_stderr(home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="Half a", finish_reason="length"))
    path = _write(home, "c.json", {"title": "c", "model": {"provider": "loop", "id": "loopback-model", "params": {"maxTokens": 64}},
                                   "context": {"messages": [_user("hi")]}})

    proc = _run(home, "c.json")

    assert proc.returncode == 0, proc.stderr
    assert "warning: loop: the reply was cut at maxTokens 64 (finish reason length)" in proc.stderr
    saved = json.loads(path.read_text("utf-8"))
    assert saved["context"]["messages"][-1]["content"][0]["text"] == "Half a"
    assert "status" not in saved["runHistory"][-1]


def test_an_ineligible_thread_is_refused_with_the_reference_message(home, srv):
    configure_provider(home, srv)
    _write(home, "done.json", {"title": "done", "context": {"messages": [
        _user("hi"), {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "hello"}]}]}})
    proc = _run(home, "done.json")
    assert proc.returncode == 1
    assert "The last message must be a user message or a tool call result." in proc.stderr


def test_a_paused_function_call_continues_with_tool_result(home, srv):
    configure_provider(home, srv)
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_9", name="lookup", arguments={"word": "yak"})]),
             Turn(text="A yak is a bovine."))
    path = _write(home, "yak.json", {"title": "yak", "context": {"tools": [LOOKUP], "messages": [_user("yak?")]}})

    first = _run(home, "yak.json", "--react")
    assert first.returncode == 0, first.stderr
    assert "[tool call] lookup(" in first.stdout and "call_9" in first.stdout
    assert "paused" in first.stderr and "call_9" in first.stderr

    second = _run(home, "yak.json", "--react", "--tool-result", "call_9=long-haired bovine")
    assert second.returncode == 0, second.stderr
    assert "A yak is a bovine." in second.stdout
    saved = parse_thread(path.read_bytes())
    assert saved.messages[1].toolCalls[0].output.text() == "long-haired bovine"
    assert saved.messages[-1].text() == "A yak is a bovine."
    assert len(saved.runHistory) == 2


def test_on_a_terminal_a_paused_function_call_is_asked_for(home, srv):
    configure_provider(home, srv)
    srv.push(Turn(tool_calls=[ToolCallSpec(id="call_t", name="lookup", arguments={"word": "emu"})]),
             Turn(text="An emu is a bird."))
    path = _write(home, "emu.json", {"title": "emu", "context": {"tools": [LOOKUP], "messages": [_user("emu?")]}})
    master, slave = pty.openpty()
    try:
        os.write(master, b"a flightless bird\n")
        proc = _run(home, "emu.json", "--react", stdin=slave)
    finally:
        os.close(slave)
        os.close(master)
    assert proc.returncode == 0, proc.stderr
    assert "An emu is a bird." in proc.stdout
    saved = parse_thread(path.read_bytes())
    assert saved.messages[1].toolCalls[0].output.text() == "a flightless bird"


def test_run_accepts_a_file_path_inside_the_workspace_and_a_path_without_suffix(home, srv):
    configure_provider(home, srv)
    path = _write(home, "sub/deep.json", {"title": "deep", "context": {"messages": [_user("hi")]}})
    first = _run(home, str(path))
    assert first.returncode == 0, first.stderr
    assert parse_thread(path.read_bytes()).messages[-1].text() == "ok"
    srv.push(Turn(text="again"))
    path.write_bytes(serialize_thread(thread_from_data({"title": "deep", "context": {"messages": [_user("hi")]}})))
    proc = _run(home, "sub/deep")
    assert proc.returncode == 0, proc.stderr
    assert "again" in proc.stdout


def test_a_path_outside_the_workspace_is_refused(home, tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}", encoding="utf-8")
    proc = _run(home, str(outside))
    assert proc.returncode == 1 and "not inside the workspace" in proc.stderr


def test_run_from_a_message_and_var_override_reach_the_model(home, srv):
    configure_provider(home, srv)
    srv.push(Turn(text="redo"))
    path = _write(home, "r.json", {"title": "r", "context": {"messages": [
        _user("Hello {{name}}", "u1"), {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "old"}]}]}})
    proc = _run(home, "r.json", "--from", "u1", "--var", "name=Ada")
    assert proc.returncode == 0, proc.stderr
    saved = parse_thread(path.read_bytes())
    assert saved.messages[0].id == "u1" and len(saved.messages) == 2
    assert saved.messages[1].text() == "redo"
    assert "Hello Ada" in json.dumps(srv.requests[-1].body_json)


def test_replay_runs_offline_from_the_recorded_run(home):
    recorded = [_user("q"), {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "recorded answer"}]}]
    path = _write(home, "rep.json", {"title": "rep", "context": {"messages": [_user("q")]},
                                     "runHistory": [{"id": "run-7", "timestamp": 5, "thread": {"title": "rep", "context": {"messages": recorded}}}]})
    proc = _run(home, "rep.json", "--replay-run", "run-7")
    assert proc.returncode == 0, proc.stderr
    assert "recorded answer" in proc.stdout
    saved = parse_thread(path.read_bytes())
    assert saved.messages[-1].text() == "recorded answer" and len(saved.runHistory) == 2


def test_ctrl_c_stops_the_run_keeps_the_partial_reply_and_records_the_run(home, srv):
    import signal

    configure_provider(home, srv)
    srv.push(Turn(text="word " * 2000, chunk_size=5, delay_per_chunk=0.05))
    path = _write(home, "long.json", {"title": "long", "context": {"messages": [_user("talk")]}})
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "llmspace", "run", "long.json"], cwd=ROOT, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        seen = b""
        while b"word" not in seen:
            chunk = os.read(proc.stdout.fileno(), 64)
            assert chunk, "the run ended before streaming any text"
            seen += chunk
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    saved = parse_thread(path.read_bytes())
    assert saved.messages[-1].role == "assistant" and saved.messages[-1].text().startswith("word")
    assert len(saved.runHistory) == 1


@pytest.mark.parametrize("api", ["openai-completions", "openai-responses", "anthropic-messages"])
def test_a_seeded_example_runs_against_the_loopback_server_in_each_api_mode(home, srv, api):
    from llmspace.core.workspace import Workspace

    created = Workspace(home / "workspace").seed_examples()
    rel = next(r for r in created if "prompt-with-variables" in r)
    configure_provider(home, srv, api=api)
    srv.push(Turn(text="Seeded reply.", usage=(30, 3)))

    proc = _run(home, rel)

    assert proc.returncode == 0, proc.stderr
    saved = parse_thread((home / "workspace" / rel).read_bytes())
    reply = saved.messages[-1]
    assert reply.role == "assistant" and reply.text() == "Seeded reply."
    assert reply.usage.totalTokens == 33 and reply.timing is not None
    assert len(saved.runHistory) == 1 and saved.runHistory[0].usage.totalTokens == 33
    assert "{{" not in json.dumps(srv.requests[-1].body_json)


def test_a_provider_error_echoing_a_custom_secret_header_is_redacted_in_the_message_and_trace(home, srv):
    path = configure_provider(home, srv, api_key=None)
    data = json.loads(path.read_text("utf-8"))
    data["providers"][0]["headers"] = {"X-Gateway-Auth": "gateway-auth-value-777", "Api-Secret": "literal-secret-888"}
    path.write_text(json.dumps(data), "utf-8")
    srv.push_raw(status=403, body=b'{"error":{"message":"denied for gateway-auth-value-777 / literal-secret-888"}}')
    _write(home, "t.json", {"title": "t", "context": {"messages": [_user("hi")]}})
    proc = _run(home, "t.json")
    assert proc.returncode == 1 and "HTTP 403" in proc.stderr
    assert srv.requests[-1].headers.get("Api-Secret") == "literal-secret-888"  # sent, but never shown
    shown = proc.stdout + proc.stderr + "".join(p.read_text("utf-8") for p in (home / "traces" / "calls").glob("*.json"))
    assert "gateway-auth-value-777" not in shown and "literal-secret-888" not in shown


def test_a_retry_is_announced_on_stderr_and_the_reply_still_streams(home, srv):
    configure_provider(home, srv)
    srv.push_raw(status=429, headers={"Retry-After": "0"}, body=b'{"error": {"message": "slow down"}}')
    srv.push(Turn(text="second try"))
    _write(home, "greet.json", {"title": "greet", "context": {"messages": [_user("hi")]}})
    proc = _run(home, "greet.json")
    assert proc.returncode == 0, proc.stderr
    assert "[retrying in 0.0 s, attempt 2]" in proc.stderr and "slow down" in proc.stderr
    assert "second try" in proc.stdout
