"""A loopback server speaking Langfuse's public API as platform-notes.md "Trace back-ends" gives it
(Langfuse itself cannot run on this machine): `GET /api/public/projects`, `GET
/api/public/v2/observations` (fields, limit ≤ 1000, traceId, fromStartTime, toStartTime, userId,
environment, cursor; `{data, meta: {cursor?}}`, io as raw strings), the deprecated `GET
/api/public/traces` and `/api/public/traces/{id}`, Basic auth (401 for other keys).

Switches: `forbidden` (403 everywhere), `v2 = False` (v2 answers 404, as a Langfuse before v2
does), `stall` (no answer until the server stops), `redirect_to` (a 302 to that URL),
`page_size` (rows per page, at most the asked limit). Every request is recorded in `requests`
as (path, query dict)."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

PUBLIC_KEY = "pk-lf-0123456789abcdef"
SECRET_KEY = "sk-lf-fedcba9876543210secret"
PROJECT = {"id": "lf-proj-1", "name": "Weather production"}


def _ms(text: str | None) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000 if text else 0.0


class LangfuseServer:
    def __init__(self) -> None:
        self.rows: list[dict[str, Any]] = []  # every observation of every trace, newest trace first
        self.requests: list[tuple[str, dict[str, str]]] = []
        self.forbidden = False
        self.v2 = True
        self.stall = False
        self.redirect_to = ""
        self.page_size = 1000
        self.released = threading.Event()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = dict(parse_qsl(parts.query))
                server.requests.append((parts.path, query))
                status, body, headers = server.answer(parts.path, query, self.headers.get("Authorization", ""))
                if status == 0:  # stall: never answer
                    server.released.wait(120)
                    return
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def answer(self, path: str, q: dict[str, str], auth: str) -> tuple[int, Any, dict[str, str]]:
        if self.stall:
            return 0, None, {}
        if self.redirect_to:
            return 302, {}, {"Location": self.redirect_to + path}
        expected = "Basic " + base64.b64encode(f"{PUBLIC_KEY}:{SECRET_KEY}".encode()).decode()
        if auth != expected:
            return 401, {"message": "Invalid credentials. Confirm that you've configured the correct host."}, {}
        if self.forbidden:
            return 403, {"message": "Access denied"}, {}
        if path == "/api/public/projects":
            return 200, {"data": [{**PROJECT, "metadata": {}}]}, {}
        if path == "/api/public/v2/observations" and self.v2:
            return 200, self.observations(q), {}
        if path == "/api/public/traces" and q.get("limit"):
            return 200, self.traces(q), {}
        if path.startswith("/api/public/traces/"):
            tid = path.rsplit("/", 1)[1]
            rows = [r for r in self.rows if r["traceId"] == tid]
            if not rows:
                return 404, {"message": "Trace not found"}, {}
            return 200, {"id": tid, "name": rows[0].get("traceName"), "observations": rows}, {}
        return 404, {"message": "Not found"}, {}

    def observations(self, q: dict[str, str]) -> dict[str, Any]:
        rows = self.rows
        if "traceId" in q:
            rows = [r for r in rows if r["traceId"] == q["traceId"]]
        if "fromStartTime" in q:
            rows = [r for r in rows if _ms(r["startTime"]) >= _ms(q["fromStartTime"])]
        if "toStartTime" in q:
            rows = [r for r in rows if _ms(r["startTime"]) < _ms(q["toStartTime"])]
        for key in ("userId", "environment"):
            if key in q:
                rows = [r for r in rows if r.get(key) == q[key]]
        start = int(base64.b64decode(q["cursor"]).decode()) if q.get("cursor") else 0
        size = min(int(q.get("limit", "50")), 1000, self.page_size)
        page = rows[start:start + size]
        meta: dict[str, Any] = {}
        if start + size < len(rows):
            meta["cursor"] = base64.b64encode(str(start + size).encode()).decode()
        fields = set(q.get("fields", "core,basic").split(","))
        if "io" not in fields:
            page = [{k: v for k, v in r.items() if k not in ("input", "output")} for r in page]
        return {"data": page, "meta": meta}

    def traces(self, q: dict[str, str]) -> dict[str, Any]:
        by_trace: dict[str, list[dict[str, Any]]] = {}
        for row in self.rows:
            by_trace.setdefault(row["traceId"], []).append(row)
        out = []
        for tid, rows in by_trace.items():
            first = min(rows, key=lambda r: _ms(r["startTime"]))
            out.append({"id": tid, "name": first.get("traceName"), "timestamp": first["startTime"],
                        "userId": first.get("userId"), "sessionId": first.get("sessionId"),
                        "environment": first.get("environment"), "observations": [r["id"] for r in rows]})
        for key in ("userId", "sessionId", "name", "environment"):
            if key in q:
                out = [t for t in out if t.get(key) == q[key]]
        out.sort(key=lambda t: -_ms(t["timestamp"]))
        return {"data": out[: int(q["limit"])], "meta": {"page": 1, "limit": int(q["limit"]), "totalItems": len(out)}}


@contextmanager
def langfuse_server() -> Iterator[LangfuseServer]:
    server = LangfuseServer()
    thread = threading.Thread(target=server.httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.released.set()
        server.httpd.shutdown()
        server.httpd.server_close()
        thread.join(30)


class HeldLangfuse(LangfuseServer):
    """The Langfuse loopback server holding its answer for the trace id `held` (when set) until
    `gate` is set; `asked` says the held request arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.held = ""
        self.asked = threading.Event()
        self.gate = threading.Event()

    def answer(self, path: str, q: dict[str, str], auth: str) -> tuple[int, Any, dict[str, str]]:
        if self.held and q.get("traceId") == self.held:
            self.asked.set()
            self.gate.wait(120)
        return super().answer(path, q, auth)
