"""A loopback HTTP server for the web-tool tests: replies from a route table and records
every request (method, path, query, headers, JSON body)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

Reply = tuple[int, Any] | tuple[int, Any, dict[str, str]]  # (status, JSON body or raw bytes[, headers])


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class WebServer:
    routes: dict[tuple[str, str], Callable[[Seen], Reply]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def __post_init__(self) -> None:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw
                req = Seen(self.command, parts.path, parse_qs(parts.query), {k.lower(): v for k, v in self.headers.items()}, body)
                server.seen.append(req)
                route = server.routes.get((self.command, parts.path))
                status, reply, *more = route(req) if route else (404, {"error": "no route"})
                data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
                self.send_response(status)
                for name, value in (more[0] if more else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = _serve
            do_POST = _serve

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def route(self, method: str, path: str, reply: Callable[[Seen], Reply] | Reply) -> None:
        self.routes[(method, path)] = reply if callable(reply) else (lambda req, r=reply: r)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
