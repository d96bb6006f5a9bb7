"""One desktop window per data root: a second `llmspace llm-space://…` start hands its link
to the window that is already running instead of opening another one.

    server = InstanceServer(root, on_link=lambda url: …)   # the running app; `close()` at exit
    hand_off(root, url)                                   # a second start: True when delivered

The running app listens on a loopback TCP port (Windows has no Unix sockets) and writes
`<data root>/run/instance.json` (`{"port", "token", "pid"}`, owner-only permissions). A
client sends one JSON line `{"token", "open": url}` and reads `ok`; a wrong token, a stale
file (no one listening) or any error means "not delivered" and the caller opens the link
itself. `on_link` runs on the server's thread: hand it to the UI through the pump. Used by
llmspace/__main__.py and llmspace/ui/main.py; imports only the foundation.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import threading
from collections.abc import Callable
from pathlib import Path

from .jsonio import write_bytes_atomic
from .paths import DataRoot

log = logging.getLogger("llmspace.instance")
CONNECT_WAIT = 1.0
REPLY_WAIT = 5.0
MAX_LINE = 64 * 1024
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
        path = _file(root)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_bytes_atomic(path, json.dumps({"port": self.port, "token": self.token, "pid": os.getpid()}).encode())
        try:
            os.chmod(path, 0o600)
        except OSError:
            pass
        threading.Thread(target=self._serve, name="instance-server", daemon=True).start()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(REPLY_WAIT)
                    data = b""
                    while not data.endswith(b"\n") and len(data) < MAX_LINE:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    message = json.loads(data or b"{}")
                    url = message.get("open") if isinstance(message, dict) else None
                    if not isinstance(message, dict) or not secrets.compare_digest(str(message.get("token", "")), self.token):
                        conn.sendall(b"refused\n")
                        continue
                    if isinstance(url, str) and is_link(url):
                        self.on_link(url)
                        conn.sendall(b"ok\n")
                    else:
                        conn.sendall(b"refused\n")
                except (OSError, ValueError):
                    log.debug("a hand-off connection failed", exc_info=True)

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
