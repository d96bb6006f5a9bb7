"""One window per data root: a second start hands its link to the running app's server;
a wrong token or a stale file is not delivered (the caller opens the link itself)."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from pathlib import Path

import pytest

from llmspace import instance, jsonio
from llmspace.instance import InstanceServer, hand_off, is_link
from llmspace.paths import DataRoot


def test_a_link_reaches_the_running_server(home: Path) -> None:
    got: list[str] = []
    arrived = threading.Event()
    server = InstanceServer(DataRoot(home), lambda url: (got.append(url), arrived.set()))
    try:
        assert hand_off(DataRoot(home), "llm-space://threads/atlas/a?x=1") is True
        assert arrived.wait(10) and got == ["llm-space://threads/atlas/a?x=1"]
        assert (home / "run" / "instance.json").stat().st_mode & 0o077 == 0
    finally:
        server.close()
    assert not (home / "run" / "instance.json").exists()


def test_a_wrong_token_or_a_stale_file_is_not_delivered(home: Path) -> None:
    got: list[str] = []
    server = InstanceServer(DataRoot(home), got.append)
    try:
        path = home / "run" / "instance.json"
        info = json.loads(path.read_text())
        path.write_text(json.dumps({**info, "token": "guess"}))
        assert hand_off(DataRoot(home), "llm-space://threads/atlas/a") is False
        assert got == []
    finally:
        server.close()
    (home / "run" / "instance.json").write_text(json.dumps({"port": 9, "token": "x"}))
    assert hand_off(DataRoot(home), "llm-space://threads/atlas/a") is False
    assert hand_off(DataRoot(home / "nowhere"), "llm-space://threads/atlas/a") is False


def test_only_llm_space_links_are_links() -> None:
    assert is_link("LLM-SPACE://threads/x/y") and is_link("llm-space-dev://threads/x/y")
    assert not is_link("https://example.com") and not is_link("--gui")


# -- hostile local clients (issue 20, item 16) and the token file's mode (item 17) ---------

class _Trickler:
    """A client that sends one byte every `every` seconds until the server closes it."""

    def __init__(self, port: int, every: float) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.stop = threading.Event()
        self.closed = threading.Event()
        self.every = every
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self.sock.sendall(b"{")
                self.stop.wait(self.every)
        except OSError:  # the server closed it (EPIPE / ECONNRESET)
            self.closed.set()

    def end(self) -> None:
        self.stop.set()
        self.thread.join(10)
        self.sock.close()


def _linked(home: Path) -> tuple[InstanceServer, list[str], threading.Event]:
    got: list[str] = []
    arrived = threading.Event()
    return InstanceServer(DataRoot(home), lambda url: (got.append(url), arrived.set())), got, arrived


def _send_raw(port: int, data: bytes) -> bytes:
    """Send `data` as a local process would and read what comes back until the server closes."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
        try:
            conn.sendall(data)
            conn.shutdown(socket.SHUT_WR)
            reply = b""
            while chunk := conn.recv(4096):
                reply += chunk
        except OSError:  # reset after an oversized line: the server stopped reading
            return b""
    return reply


def test_hostile_lines_are_refused_and_the_next_hand_off_still_works(home: Path) -> None:
    server, got, arrived = _linked(home)
    try:
        hostile = [b"[" * 50000 + b"\n", b"{" * 50000 + b"\n", b"a" * 200_000, b"\xff\xfe\n", b"[]\n", b"null\n",
                   b'{"token": 1, "open": []}\n', b"\n", b""]
        for data in hostile:
            assert _send_raw(server.port, data) in (b"", b"refused\n"), data[:20]
        assert hand_off(DataRoot(home), "llm-space://threads/atlas/a") is True
        assert arrived.wait(10) and got == ["llm-space://threads/atlas/a"]
    finally:
        server.close()


def test_slow_clients_do_not_hold_up_a_hand_off(home: Path) -> None:
    server, got, arrived = _linked(home)
    slow = [_Trickler(server.port, every=3.0) for _ in range(3)]
    try:
        started = time.monotonic()
        assert hand_off(DataRoot(home), "llm-space://threads/atlas/a") is True
        took = time.monotonic() - started
        assert arrived.wait(10) and got == ["llm-space://threads/atlas/a"]
        assert took < 3.0, f"the hand-off took {took:.1f} s behind three slow clients"
    finally:
        for client in slow:
            client.end()
        server.close()


def test_a_client_that_keeps_trickling_is_cut_off_at_the_exchange_deadline(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(instance, "EXCHANGE_WAIT", 1.0, raising=False)
    server, _got, _arrived = _linked(home)
    client = _Trickler(server.port, every=0.2)
    try:
        assert client.closed.wait(15), "the server kept reading a client that never finished its line"
    finally:
        client.end()
        server.close()


def test_the_token_file_is_owner_only_from_the_start_and_its_folder_too(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    modes: list[int] = []
    real_replace = os.replace

    def watching_replace(src: str, dst: str) -> None:  # the mode the file has when it appears
        if str(dst).endswith("instance.json"):
            modes.append(os.stat(src).st_mode & 0o777)
        real_replace(src, dst)

    monkeypatch.setattr(jsonio.os, "replace", watching_replace)
    server, _got, _arrived = _linked(home)
    try:
        assert modes == [0o600]
        assert (home / "run").stat().st_mode & 0o777 == 0o700
        assert (home / "run" / "instance.json").stat().st_mode & 0o777 == 0o600
    finally:
        server.close()


def test_the_writer_creates_a_file_with_the_mode_asked_for(tmp_path: Path) -> None:
    path = tmp_path / "secret.json"
    jsonio.write_json_atomic(path, {"token": "x"}, mode=0o600)
    assert path.stat().st_mode & 0o777 == 0o600
    path.chmod(0o644)
    jsonio.write_json_atomic(path, {"token": "y"}, mode=0o600)  # an existing file is narrowed too
    assert path.stat().st_mode & 0o777 == 0o600
