"""Reading a host's output (llmspace/plugins/hosts/reader.py, through HostConnection): the
thread waiting for an answer reads it itself; concurrent waits each get their own answer in
any order; cancel and timeout end a wait that is reading; a host request arriving while no
call waits is answered; the end of the output fails what waits. A real child process speaks
JSON-RPC lines on its pipes."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from llmspace.cancel import CancelToken
from llmspace.plugins.hosts import reader
from llmspace.plugins.hosts.connection import HostConnection, HostGone

pytestmark = pytest.mark.skipif(not reader.CAN_LEAD, reason="callers read the pipe where select.poll exists")

# echo: answered at once; hold: answered (last first) when release comes; silent: never;
# quit: the host exits; ask: the host asks the app something and writes the answer to stderr
HOST = r"""
import json, sys
held = []
def send(message):
    sys.stdout.write(json.dumps(message) + "\n"); sys.stdout.flush()
for line in sys.stdin:
    message = json.loads(line)
    method, ident = message.get("method"), message.get("id")
    if method == "echo":
        send({"jsonrpc": "2.0", "id": ident, "result": message["params"]})
    elif method == "hold":
        held.append(message)
        sys.stderr.write(f"held {len(held)}\n"); sys.stderr.flush()
    elif method == "release":
        for m in reversed(held):
            send({"jsonrpc": "2.0", "id": m["id"], "result": m["params"]})
        held.clear()
        send({"jsonrpc": "2.0", "id": ident, "result": "released"})
    elif method == "ask":
        send({"jsonrpc": "2.0", "id": ident, "result": "asking"})
        send({"jsonrpc": "2.0", "id": "h1", "method": "notify", "params": {"text": "hello"}})
        answer = json.loads(sys.stdin.readline())
        sys.stderr.write("app answered " + json.dumps(answer.get("result")) + "\n"); sys.stderr.flush()
    elif method == "quit":
        sys.exit(3)
"""


class _Host:
    def __init__(self, tmp_path: Path) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.readers: list[str] = []
        self.output: list[str] = []
        self.changed = threading.Condition()
        self.conn = HostConnection([sys.executable, "-c", HOST], cwd=tmp_path, env={"PATH": "/usr/bin:/bin"},
                                   label="fake (python)", on_request=self._on_request, on_output=self._on_output)
        dispatch = self.conn._dispatch

        def recorded(line: bytes) -> str:
            self.readers.append(threading.current_thread().name)
            return dispatch(line)

        self.conn._dispatch = recorded  # type: ignore[method-assign]
        self.conn.start()

    def _on_request(self, method: str, params: dict[str, Any]) -> Any:
        self.requests.append((method, params))
        return {"seen": params["text"]}

    def _on_output(self, line: str) -> None:
        with self.changed:
            self.output.append(line)
            self.changed.notify_all()

    def call(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60.0) -> Any:
        pending = self.conn.send(method, params or {})
        assert self.conn.wait(pending, timeout) == ""
        return pending.value()


@pytest.fixture
def host(tmp_path: Path) -> Any:
    fake = _Host(tmp_path)
    yield fake
    fake.conn.kill()


def test_the_waiting_thread_reads_its_own_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reader, "IDLE_DELAY", 3600.0)  # a slow machine's pause between calls: still no background reading
    host = _Host(tmp_path)
    try:
        caller = threading.current_thread().name
        for n in range(20):
            assert host.call("echo", {"n": n}) == {"n": n}
        assert host.readers == [caller] * 20  # no hand-off from a reader thread
    finally:
        host.conn.kill()


def test_concurrent_waits_each_get_their_answer_whichever_thread_reads(host: _Host) -> None:
    results: dict[int, Any] = {}
    threads = [threading.Thread(target=lambda n=n: results.setdefault(n, host.call("hold", {"n": n})))
               for n in range(6)]
    for t in threads:
        t.start()
    with host.changed:  # the host holds all six (sent is not enough: release could overtake the last)
        assert host.changed.wait_for(lambda: any("held 6" in line for line in host.output), 60)
    assert host.call("release") == "released"
    for t in threads:
        t.join(60)
    assert results == {n: {"n": n} for n in range(6)}


def test_a_cancel_ends_a_wait_that_is_reading(host: _Host) -> None:
    cancel = CancelToken()
    pending = host.conn.send("silent", {})
    threading.Timer(0.3, cancel.cancel).start()
    started = time.monotonic()
    assert host.conn.wait(pending, 600, cancel) == "cancelled"
    assert time.monotonic() - started < 30
    assert host.call("echo", {"after": True}) == {"after": True}  # the reading goes on


def test_a_timeout_ends_a_wait_that_is_reading(host: _Host) -> None:
    pending = host.conn.send("silent", {})
    assert host.conn.wait(pending, 0.3) == "timeout"
    assert not pending.done
    assert host.call("echo", {"after": True}) == {"after": True}


def test_a_host_request_with_no_call_waiting_is_answered(host: _Host) -> None:
    assert host.call("ask") == "asking"  # the host's request comes after the answer, when no call waits
    with host.changed:
        assert host.changed.wait_for(lambda: any('app answered {"seen": "hello"}' in line for line in host.output),
                                     60)
    assert host.requests == [("notify", {"text": "hello"})]


def test_the_end_of_the_output_fails_what_waits(host: _Host) -> None:
    waiting = host.conn.send("silent", {})
    pending = host.conn.send("quit", {})
    assert host.conn.wait(pending, 60) == ""
    assert waiting.done
    with pytest.raises(HostGone, match="exit code 3"):
        waiting.value()
    assert not host.conn.alive
