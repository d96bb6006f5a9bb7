"""A raw-socket HTTP server that keeps a model call busy without answering, for the
progress-timeout tests (`progressTimeout` in models.json, `llmspace/providers/progress.py`).

    with Trickle() as t:
        t.base_url("keepalive")   # http://127.0.0.1:<port>/keepalive/v1

The first path segment picks what every request under it gets, one piece per `every`
seconds until the client goes away:

- `keepalive`: SSE headers, then `: keep-alive` comment lines;
- `newlines`: SSE headers, then bare newlines;
- `growing`: SSE headers, then one `data:` line that grows a byte at a time and never ends;
- `empty-deltas`: SSE headers, then Chat Completions chunks whose content delta is "";
- `slow-headers`: the status line and headers themselves, a byte at a time;
- `text-then-keepalive`: one Chat Completions text delta ("Partial"), then keep-alive comments.

Bodies are written without chunked framing (`Connection: close`), as plain HTTP/1.0-style
servers do. `requests` counts requests per mode.
"""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections import Counter
from typing import Any

SSE_HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n"


def _delta(content: str) -> bytes:
    return b"data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": content}}]}).encode() + b"\n\n"


class Trickle:
    def __init__(self, every: float = 1.0) -> None:
        self.every = every
        self.requests: Counter[str] = Counter()
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> Trickle:
        t = threading.Thread(target=self._accept, daemon=True)
        t.start()
        self._threads.append(t)
        return self

    def __exit__(self, *exc: Any) -> None:
        # Wake the accepting thread (shutdown makes a blocked accept fail) and wait for it
        # before closing: a thread still calling accept() on the closed descriptor number would
        # accept on whatever socket reuses that number later in the run — once another test's
        # loopback service (a Bun fetch of /threads/… reached this server: KeyError 'threads').
        self._stop.set()
        with contextlib.suppress(OSError):
            self._sock.shutdown(socket.SHUT_RDWR)
        for t in self._threads:
            t.join(10)
        self._sock.close()

    def base_url(self, mode: str) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/{mode}/v1"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            t = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            t.start()

    def _read_request(self, conn: socket.socket) -> str:
        data = b""
        while b"\r\n\r\n" not in data:
            piece = conn.recv(65536)
            if not piece:
                return ""
            data += piece
        head, _, body = data.partition(b"\r\n\r\n")
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip())
        while len(body) < length:
            piece = conn.recv(65536)
            if not piece:
                break
            body += piece
        path = head.split(b" ")[1].decode()
        return path.strip("/").split("/")[0]

    def _pieces(self, mode: str) -> Any:
        if mode == "slow-headers":
            for i in range(len(SSE_HEAD)):
                yield SSE_HEAD[i:i + 1]
            while True:
                yield b": keep-alive\n\n"
        yield SSE_HEAD
        if mode == "text-then-keepalive":
            yield _delta("Partial")
            mode = "keepalive"
        if mode == "growing":
            yield b"data: "
        while True:
            yield {"keepalive": b": keep-alive\n", "newlines": b"\n", "growing": b"x",
                   "empty-deltas": _delta("")}[mode]

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                mode = self._read_request(conn)
                with self._lock:
                    self.requests[mode] += 1
                first = True
                for piece in self._pieces(mode):
                    if not first and self._stop.wait(self.every):
                        return
                    first = piece == SSE_HEAD and first  # the SSE head and what follows it go at once
                    conn.sendall(piece)
            except OSError:
                return  # the client went away
