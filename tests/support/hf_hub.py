"""A loopback Hugging Face Hub for download tests: the Hub's `resolve` URL layout and a CDN.

`HEAD|GET /{org}/{repo}/resolve/{revision}/{file}` on the Hub server answers as the real Hub
does for an LFS file: a 302 to the CDN (another origin: another port) carrying
`X-Repo-Commit`, `X-Linked-Etag` (the SHA-256), `X-Linked-Size` and `ETag`. The CDN serves
the bytes with `Accept-Ranges` and honours `Range: bytes=N-` (206, `Content-Range`).
Every request is logged (server, method, path, headers). `stall_after` makes the CDN send that
many bytes, set `stalled` and hold the connection until `release` is set (a download to kill
mid-way); `require_token` answers 403 (gated) without `Authorization: Bearer TOKEN`.
A hostile mirror: `resolve_headers` replace the Hub's headers (an `X-Linked-Etag` or
`X-Repo-Commit` that is a path), `chunked` sends the CDN's body without a Content-Length.
Point `HF_ENDPOINT` at `hub.endpoint` before huggingface_hub is imported (a subprocess).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import threading
import urllib.parse
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

COMMIT = "0f3c6d1e2b4a59687766554433221100aabbccdd"


@dataclass
class HubFile:
    data: bytes
    etag: str  # X-Linked-Etag: the SHA-256 of the file for LFS files
    served: bytes  # what the CDN sends (differs from data to simulate a corrupt mirror)


@dataclass
class Logged:
    server: str  # "hub" or "cdn"
    method: str
    path: str
    headers: dict[str, str]  # names in lower case


@dataclass
class FakeHub:
    files: dict[tuple[str, str], HubFile] = field(default_factory=dict)
    log: list[Logged] = field(default_factory=list)
    stall_after: int | None = None
    stalled: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)
    require_token: str | None = None
    ranges: bool = True
    resolve_headers: dict[str, str] = field(default_factory=dict)
    chunked: bool = False

    def __post_init__(self) -> None:
        self._hub = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, "hub"))
        self._cdn = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, "cdn"))
        self._hub.daemon_threads = self._cdn.daemon_threads = True
        for server in (self._hub, self._cdn):
            threading.Thread(target=server.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self._hub.server_address[1]}"

    @property
    def cdn(self) -> str:
        return f"http://127.0.0.1:{self._cdn.server_address[1]}"

    def add(self, repo: str, name: str, data: bytes, *, etag: str | None = None, served: bytes | None = None) -> HubFile:
        entry = HubFile(data=data, etag=etag or hashlib.sha256(data).hexdigest(), served=data if served is None else served)
        self.files[(repo, name)] = entry
        return entry

    def gets(self, server: str = "cdn") -> list[Logged]:
        return [r for r in self.log if r.server == server and r.method == "GET"]

    def close(self) -> None:
        self.release.set()
        for server in (self._hub, self._cdn):
            server.shutdown()
            server.server_close()


_RESOLVE = re.compile(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$")


def _handler(hub: FakeHub, role: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_HEAD(self) -> None:
            self._serve(body=False)

        def do_GET(self) -> None:
            self._serve(body=True)

        def _serve(self, body: bool) -> None:
            hub.log.append(Logged(role, self.command, self.path, {k.lower(): v for k, v in self.headers.items()}))
            if role == "hub":
                self._resolve()
            else:
                self._blob(body)

        def _empty(self, status: int, headers: dict[str, str]) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _resolve(self) -> None:
            match = _RESOLVE.match(self.path)
            if hub.require_token and self.headers.get("Authorization") != f"Bearer {hub.require_token}":
                self._empty(403, {"X-Error-Code": "GatedRepo", "X-Error-Message": "Access to this model is restricted."})
                return
            entry = hub.files.get((match.group(1), match.group(3))) if match else None
            commits = (COMMIT, hub.resolve_headers.get("X-Repo-Commit"))  # a mirror serves the commit it names
            if match is None or entry is None or urllib.parse.unquote(match.group(2)) not in ("main", *commits):
                self._empty(404, {"X-Error-Code": "EntryNotFound", "X-Error-Message": "Entry not found"})
                return
            self._empty(302, {"Location": f"{hub.cdn}/blobs/{entry.etag}", "X-Repo-Commit": COMMIT,
                              "X-Linked-Etag": f'"{entry.etag}"', "X-Linked-Size": str(len(entry.data)),
                              "ETag": '"0123456789abcdef0123456789abcdef01234567"', **hub.resolve_headers})

        def _blob(self, body: bool) -> None:
            entry = next((f for f in hub.files.values() if self.path == f"/blobs/{f.etag}"), None)
            if entry is None:
                self._empty(404, {})
                return
            data = entry.served
            start = 0
            wanted = re.match(r"^bytes=(\d+)-$", self.headers.get("Range", ""))
            if wanted and hub.ranges:
                start = int(wanted.group(1))
                if start >= len(data):
                    self._empty(416, {"Content-Range": f"bytes */{len(data)}"})
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("Content-Type", "application/octet-stream")
            if hub.chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(len(data) - start))
            self.end_headers()
            if not body:
                return
            rest = data[start:]
            if hub.chunked:
                for offset in range(0, len(rest), 64 * 1024):
                    part = rest[offset:offset + 64 * 1024]
                    try:
                        self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
                    except OSError:
                        return
                with contextlib.suppress(OSError):
                    self.wfile.write(b"0\r\n\r\n")
                return
            if hub.stall_after is not None:
                self.wfile.write(rest[:hub.stall_after])
                self.wfile.flush()
                hub.stalled.set()
                hub.release.wait(120)
                self.close_connection = True
                return
            for offset in range(0, len(rest), 64 * 1024):
                try:
                    self.wfile.write(rest[offset:offset + 64 * 1024])
                except OSError:
                    return

    return Handler
