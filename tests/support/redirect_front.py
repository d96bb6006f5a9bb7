"""A loopback HTTP server that redirects and records: for tests of where credentials go.

    with RedirectFront() as other, RedirectFront() as front:   # two servers, two ports
        front.redirect("/v1/", other.url + "/v1/", status=307)  # /v1/x → http://127.0.0.1:<other>/v1/x
        ...
        other.requests   # [RecordedRequest(path, headers, body_json, method)]: what reached it

Any method on a path under a registered prefix is answered with `status` and a `Location`
built from the target prefix plus the rest of the path (query kept). Every other request is
recorded and answered `200 {"object": "list", "data": []}` (an empty model list), so a
front can redirect to itself (`front.redirect("/old/", "/new/")`) to test a same-origin
redirect. Real HTTP/1.1 on 127.0.0.1 through `http.server`.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.support.llm_server import RecordedRequest


class RedirectFront:
    def __init__(self) -> None:
        self.requests: list[RecordedRequest] = []
        self.redirected: list[RecordedRequest] = []  # requests answered with a redirect
        self._rules: list[tuple[str, str, int]] = []
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    def redirect(self, prefix: str, target: str, status: int = 307) -> None:
        with self._lock:
            self._rules.append((prefix, target, status))

    @property
    def port(self) -> int:
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> RedirectFront:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else None
                except ValueError:
                    body = raw.decode("utf-8", "replace")
                rec = RecordedRequest(self.path, dict(self.headers.items()), body, self.command)
                with owner._lock:
                    rule = next((r for r in owner._rules if self.path.startswith(r[0])), None)
                    (owner.redirected if rule else owner.requests).append(rec)
                if rule is not None:
                    prefix, target, status = rule
                    self.send_response(status)
                    self.send_header("Location", target + self.path[len(prefix):])
                    self.send_header("Content-Length", "0")
                    self.send_header("Connection", "close")
                    self.end_headers()
                else:
                    data = b'{"object": "list", "data": []}'
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(data)
                self.close_connection = True

            do_GET = do_POST = do_DELETE = _handle

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                         name="redirect-front", daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
