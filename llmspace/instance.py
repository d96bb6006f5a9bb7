"""One desktop window per data root: a second `llmspace llm-space://…` start hands its link
to the window that is already running instead of opening another one.

    server = InstanceServer(root, on_link=lambda url: …)   # the running app; `close()` at exit
    hand_off(root, url)                                   # a second start: True when delivered

The running app listens on a loopback TCP port (Windows has no Unix sockets) and writes
`<data root>/run/instance.json` (`{"port", "token", "pid"}`, owner-only permissions). A
client sends one JSON line `{"token", "open": url}` and reads `ok`; a wrong token, a stale
file (no one listening) or any error means "not delivered" and the caller opens the link
itself. Any local process can connect, so each connection is served on its own thread with
one deadline for the whole exchange (`EXCHANGE_WAIT`), a line longer than `MAX_LINE` is
refused unread, and every error ends that connection only: a hostile or slow client never
stops the server nor delays another hand-off. The file is created owner-only (0600, in a
0700 folder) and never exists with wider permissions. `on_link` runs on a connection's
thread: hand it to the UI through the pump. Imports only the foundation.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path

from .jsonio import write_bytes_atomic
from .paths import DataRoot

log = logging.getLogger("llmspace.instance")
CONNECT_WAIT = 1.0
REPLY_WAIT = 5.0
EXCHANGE_WAIT = 5.0  # the server's deadline for one connection, from accept to reply
MAX_LINE = 64 * 1024
MAX_CLIENTS = 32  # connections served at once; more are closed at once
LINK_PREFIXES = ("llm-space://", "llm-space-dev://")


def is_link(arg: str) -> bool:
    return arg.lower().startswith(LINK_PREFIXES)


def _file(root: DataRoot) -> Path:
    return root.root / "run" / "instance.json"


class InstanceServer:
    def __init__(self, root: DataRoot, on_link: Callable[[str], object]) -> None:
        self.root, self.on_link = root, on_link
        self.token = secrets.token_hex(16)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = int(self.sock.getsockname()[1])
        self._closed = threading.Event()
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)
        path = _file(root)
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:  # a folder made before it was created 0700
            os.chmod(path.parent, 0o700)
        except OSError:
            pass
        info = {"port": self.port, "token": self.token, "pid": os.getpid()}
        write_bytes_atomic(path, json.dumps(info).encode(), mode=0o600)
        threading.Thread(target=self._serve, name="instance-server", daemon=True).start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if not self._slots.acquire(blocking=False):
                conn.close()
                continue
            try:
                threading.Thread(target=self._exchange, args=(conn,), name="instance-client", daemon=True).start()
            except Exception:  # no thread to be had: this connection is not served
                self._slots.release()
                conn.close()

    def _exchange(self, conn: socket.socket) -> None:
        """One connection: read one line within the deadline, answer `ok` or `refused`."""
        deadline = time.monotonic() + EXCHANGE_WAIT
        try:
            with conn:
                line = _read_line(conn, deadline)
                reply = self._answer(line) if line is not None else b"refused\n"
                conn.settimeout(max(0.01, deadline - time.monotonic()))
                conn.sendall(reply)
        except Exception:  # whatever a client sends or does ends its own connection only
            log.debug("a hand-off connection failed", exc_info=True)
        finally:
            self._slots.release()

    def _answer(self, line: bytes) -> bytes:
        try:
            message = json.loads(line or b"{}")
        except (ValueError, RecursionError):
            return b"refused\n"
        if not isinstance(message, dict) or not secrets.compare_digest(str(message.get("token", "")), self.token):
            return b"refused\n"
        url = message.get("open")
        if not (isinstance(url, str) and is_link(url)):
            return b"refused\n"
        self.on_link(url)
        return b"ok\n"

    def close(self) -> None:
        self._closed.set()
        try:
            self.sock.close()
        except OSError:
            pass
        try:
            data = json.loads(_file(self.root).read_text(encoding="utf-8"))
            if data.get("token") == self.token:
                _file(self.root).unlink()
        except (OSError, ValueError, AttributeError):
            pass


def _read_line(conn: socket.socket, deadline: float) -> bytes | None:
    """The first line a client sends (without its newline; all it sent when it closed first),
    or None when it is longer than `MAX_LINE` or not complete by `deadline`."""
    data = b""
    while b"\n" not in data:
        left = deadline - time.monotonic()
        if left <= 0 or len(data) > MAX_LINE:
            return None
        conn.settimeout(left)
        chunk = conn.recv(4096)
        if not chunk:
            break
        data += chunk
    line = data.split(b"\n", 1)[0]
    return line if len(line) <= MAX_LINE else None


def hand_off(root: DataRoot, url: str) -> bool:
    """Give `url` to the running window of `root`; True when it took it."""
    try:
        info = json.loads(_file(root).read_text(encoding="utf-8"))
        port, token = int(info["port"]), str(info["token"])
    except (OSError, ValueError, KeyError, TypeError):
        return False
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=CONNECT_WAIT) as conn:
            conn.settimeout(REPLY_WAIT)
            conn.sendall(json.dumps({"token": token, "open": url}).encode() + b"\n")
            reply = conn.recv(64)
    except OSError:
        return False
    return reply.strip() == b"ok"
