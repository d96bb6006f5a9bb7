"""Ctrl-C ends `llmspace run` promptly wherever it lands early in the process's life, also
when the process inherited SIGINT as ignored (background jobs of a non-interactive shell,
where Python installs no SIGINT handler of its own): just after start, while the request
waits for the response headers, and while the reply streams. Real subprocesses against a
real loopback server; no sleeps."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from llmspace.core.threadio import parse_thread, serialize_thread, thread_from_data
from tests.support.llm_server import LoopbackLLM, Turn, configure_provider

ROOT = Path(__file__).resolve().parents[2]
EXIT_BOUND_S = 5.0  # generous for a loaded 2-core machine; unloaded it takes about 0.1 s
LONG = Turn(text="word " * 2000, chunk_size=5, delay_per_chunk=0.05)  # ~100 s if never stopped
USER = {"id": "u1", "role": "user", "content": [{"type": "text", "text": "talk"}]}


@pytest.fixture
def srv():
    with LoopbackLLM() as server:
        yield server


@pytest.fixture
def thread_file(home: Path) -> Path:
    path = home / "workspace" / "long.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(serialize_thread(thread_from_data({"title": "long", "context": {"messages": [USER]}})))
    return path


@contextmanager
def _sigint_for_children(ignored: bool) -> Iterator[None]:
    """Children started inside get SIGINT ignored (SIG_IGN survives exec) or at its default
    (a Python handler does not survive exec), whatever this pytest process inherited."""
    old = signal.signal(signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _start(home: Path, ignored: bool) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LLM_SPACE_HOME": str(home), "PYTHONPATH": str(ROOT)}
    with _sigint_for_children(ignored):
        return subprocess.Popen([sys.executable, "-m", "llmspace", "run", "long.json"], cwd=ROOT, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _interrupt(proc: subprocess.Popen[bytes]) -> tuple[float, bytes, bytes]:
    """SIGINT now; (seconds until the process ended, stdout, stderr). Fails after EXIT_BOUND_S."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=EXIT_BOUND_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"llmspace run was still running {EXIT_BOUND_S} s after SIGINT; stderr: {err.decode(errors='replace')}")
    return time.monotonic() - sent, out, err


def _read_until(proc: subprocess.Popen[bytes], marker: bytes) -> None:
    assert proc.stdout is not None
    seen = b""
    while marker not in seen:
        chunk = os.read(proc.stdout.fileno(), 64)
        assert chunk, "the run ended before streaming any text"
        seen += chunk


def _assert_sane(path: Path) -> Any:
    """Either nothing was kept, or a partial reply and the run that produced it."""
    saved = parse_thread(path.read_bytes())
    if saved.runHistory:
        assert len(saved.runHistory) == 1
        last = saved.messages[-1]
        assert last.role != "assistant" or last.text().startswith("word")
    else:
        assert [m.id for m in saved.messages] == ["u1"]
    return saved


@pytest.mark.parametrize("ignored", [False, True], ids=["sigint-default", "sigint-inherited-ignored"])
def test_ctrl_c_while_the_reply_streams_stops_keeps_the_partial_reply_and_records_the_run(home, srv, thread_file, ignored):
    configure_provider(home, srv)
    srv.push(LONG)
    proc = _start(home, ignored)
    try:
        _read_until(proc, b"word")
        _elapsed, _out, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert b"stopped; the partial reply was kept." in err
    saved = _assert_sane(thread_file)
    assert saved.messages[-1].role == "assistant" and saved.messages[-1].text().startswith("word")
    assert len(saved.runHistory) == 1


@pytest.mark.parametrize("ignored", [False, True], ids=["sigint-default", "sigint-inherited-ignored"])
def test_ctrl_c_while_waiting_for_the_response_headers_ends_the_run_at_once(home, srv, thread_file, ignored):
    configure_provider(home, srv)
    srv.push_hang(silent=True)  # the request arrives; no status line ever comes back
    proc = _start(home, ignored)
    try:
        assert srv.request_seen.wait(60), "the run never sent its request"
        _elapsed, _out, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    saved = _assert_sane(thread_file)
    assert saved.messages[-1].id == "u1"  # nothing was streamed, so no reply is kept
    assert srv.disconnected.wait(EXIT_BOUND_S)  # the connection was closed, not left hanging


def test_ctrl_c_just_after_start_ends_the_process_promptly_and_leaves_a_sane_thread(home, srv, thread_file):
    configure_provider(home, srv)
    srv.push(LONG)
    before = thread_file.read_bytes()
    proc = _start(home, ignored=False)
    try:
        _elapsed, _out, err = _interrupt(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
    # Depending on where it lands: killed before Python's handler exists (-SIGINT), a
    # KeyboardInterrupt during start-up (-SIGINT or 130 "interrupted"), or a stopped run (130).
    assert proc.returncode in (130, -signal.SIGINT), err
    saved = _assert_sane(thread_file)
    if not saved.runHistory:
        assert thread_file.read_bytes() == before


def test_a_ctrl_c_while_a_run_goes_cancels_the_runs_token_from_the_signal_handler():
    """The request reaches the run through `CtrlC.stop.on_cancel`, inside the SIGINT handler:
    no loop on the main thread looks at a flag. A second Ctrl-C still raises."""
    from llmspace.cancel import CancelToken
    from llmspace.commands.run import CtrlC

    run_token = CancelToken()
    with CtrlC() as ctrl_c:
        ctrl_c.stop.on_cancel(run_token.cancel)
        ctrl_c.quiet = True
        signal.raise_signal(signal.SIGINT)  # the handler has run when this returns
        assert ctrl_c.requested and run_token.cancelled
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)


def test_a_run_that_does_not_stop_after_ctrl_c_ends_the_wait_with_a_hint(monkeypatch, tmp_path):
    """The main thread is woken only to check the stop bound: a run that ignores its token
    still ends the command once `STOP_WAIT_S` has passed since the request."""
    from concurrent.futures import Future
    from types import SimpleNamespace

    from llmspace.agent.run_types import RunOptions
    from llmspace.cancel import CancelToken
    from llmspace.commands import run as run_cmd
    from llmspace.core.threadio import thread_from_data
    from llmspace.errors import UserFacingError

    monkeypatch.setattr(run_cmd, "STOP_WAIT_S", 0.3)
    monkeypatch.setattr(run_cmd, "DEADLINE_CHECK_S", 0.05)
    never: Future[Any] = Future()  # a run that never ends

    def submit(*_args: Any, **_kwargs: Any) -> Future[Any]:
        signal.raise_signal(signal.SIGINT)  # Ctrl-C while the run goes
        return never

    app = SimpleNamespace(runner=SimpleNamespace(submit=submit))
    token = CancelToken()
    with run_cmd.CtrlC() as ctrl_c:
        ctrl_c.stop.on_cancel(token.cancel)
        ctrl_c.quiet = True
        started = time.monotonic()
        with pytest.raises(UserFacingError, match=r"did not stop within .* after Ctrl-C"):
            run_cmd._run_once(app, thread_from_data({"title": "t"}), RunOptions(), None, token, ctrl_c)
    assert token.cancelled and 0.3 <= time.monotonic() - started < 30
