"""A loopback server speaking the parts of GitHub that sharing uses, as GitHub documents them
(device flow: `POST /login/device/code`, `POST /login/oauth/access_token` with
`authorization_pending`, `slow_down` (+ `interval`), `expired_token`, `access_denied`; REST:
`GET /user`, `GET /user/emails`, `POST /gists` (201), `GET /gists/{id}` (files over
`truncate_at` bytes come with `truncated: true`, the first bytes as content and a `raw_url`),
`DELETE /gists/{id}` (204), 401 for a wrong token, a 403 rate limit with
`x-ratelimit-remaining: 0`, 404 for a missing gist). Raw files are served from `/raw/…`.

Script it with `token_answers` (what each poll answers, in order: an error code, or `TOKEN`),
`rate_limited`, `stall` (a gist read waits for `released`), and put hostile gists straight into `gists`. Every request is recorded in
`requests` as (method, path, headers, body bytes)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

TOKEN = "gho_loopbackTOKEN1234567890abcdefXYZ"
CLIENT_ID = "Iv1.loopbackclient"
USER = {"login": "octo", "name": "Octo Cat", "email": None, "avatar_url": "https://avatars.example/octo",
        "html_url": "https://github.com/octo"}
EMAILS = [{"email": "octo@users.noreply.github.com", "primary": False, "verified": True},
          {"email": "octo@example.com", "primary": True, "verified": True}]


class GitHubServer:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], bytes]] = []
        self.token_answers: list[dict[str, Any] | str] = ["authorization_pending", TOKEN]
        self.poll_times: list[float] = []
        self.interval = 0.05
        self.expires_in = 60
        self.rate_limited = False
        self.stall = False  # GET /gists/{id} answers only when `released` is set
        self.released = threading.Event()
        self.gists: dict[str, dict[str, Any]] = {}
        self.raw: dict[str, bytes] = {}
        self.truncate_at = 1024 * 1024
        self.next_id = 0xABC000
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    @property
    def api(self) -> str:
        return self.url + "/api/v3"

    def add_gist(self, files: dict[str, bytes], *, description: str = "", gist_id: str | None = None,
                 size: int | None = None) -> str:
        with self.lock:
            gist_id = gist_id or f"{self.next_id:x}"
            self.next_id += 1
        self.gists[gist_id] = {"description": description, "files": {}}
        for name, data in files.items():
            self.raw[f"/raw/{gist_id}/{name}"] = data
            self.gists[gist_id]["files"][name] = {"filename": name, "size": len(data) if size is None else size}
        return gist_id

    def _gist_json(self, gist_id: str) -> dict[str, Any]:
        gist = self.gists[gist_id]
        files = {}
        for name, meta in gist["files"].items():
            data = self.raw[f"/raw/{gist_id}/{name}"]
            truncated = len(data) > self.truncate_at
            files[name] = {**meta, "type": "application/json", "raw_url": f"{self.url}/raw/{gist_id}/{name}",
                           "truncated": truncated,
                           "content": data[: self.truncate_at].decode("utf-8", "replace")}
        return {"id": gist_id, "public": False, "description": gist["description"], "files": files,
                "html_url": f"https://gist.github.com/{gist_id}", "owner": {"login": USER["login"]}}

    def answer(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, Any, dict[str, str]]:
        auth = headers.get("authorization", "")
        if path == "/login/device/code" and method == "POST":
            sent = json.loads(body)
            if sent.get("client_id") != CLIENT_ID:
                return 200, {"error": "incorrect_client_credentials"}, {}
            return 200, {"device_code": "dev-code-0123456789abcdef", "user_code": "WDJB-MJHT",
                         "verification_uri": "https://github.com/login/device", "expires_in": self.expires_in,
                         "interval": self.interval}, {}
        if path == "/login/oauth/access_token" and method == "POST":
            self.poll_times.append(time.monotonic())
            step = self.token_answers.pop(0) if self.token_answers else "expired_token"
            if step == TOKEN:
                return 200, {"access_token": TOKEN, "token_type": "bearer", "scope": "gist,user:email"}, {}
            if isinstance(step, dict):
                return 200, step, {}
            return 200, {"error": step, "error_description": f"{step} (loopback)"}, {}
        if path.startswith("/raw/") and method == "GET":
            data = self.raw.get(path)
            return (200, data, {"Content-Type": "text/plain"}) if data is not None else (404, b"Not Found", {})
        if not path.startswith("/api/v3/"):
            return 404, {"message": "Not Found"}, {}
        api = path[len("/api/v3"):]
        if self.rate_limited:
            return 403, {"message": "API rate limit exceeded for 127.0.0.1."}, {
                "x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(time.time()) + 600)}
        if auth and auth != f"Bearer {TOKEN}":
            return 401, {"message": "Bad credentials"}, {}
        if api == "/user" and method == "GET":
            return (200, USER, {}) if auth else (401, {"message": "Requires authentication"}, {})
        if api == "/user/emails" and method == "GET":
            return (200, EMAILS, {}) if auth else (401, {"message": "Requires authentication"}, {})
        if api == "/gists" and method == "POST":
            if not auth:
                return 401, {"message": "Requires authentication"}, {}
            sent = json.loads(body)
            gist_id = self.add_gist({n: f["content"].encode() for n, f in sent["files"].items()},
                                    description=sent["description"])
            self.gists[gist_id]["public"] = sent["public"]
            return 201, self._gist_json(gist_id), {}
        if api.startswith("/gists/"):
            gist_id = api[len("/gists/"):]
            if gist_id not in self.gists:
                return 404, {"message": "Not Found"}, {}
            if method == "GET":
                if self.stall:
                    self.released.wait(60)
                return 200, self._gist_json(gist_id), {}
            if method == "DELETE":
                if not auth:
                    return 404, {"message": "Not Found"}, {}
                del self.gists[gist_id]
                return 204, b"", {}
        return 404, {"message": "Not Found"}, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                path = urlsplit(self.path).path
                headers = {k.lower(): v for k, v in self.headers.items()}
                server.requests.append((self.command, path, headers, body))
                status, value, extra = server.answer(self.command, path, headers, body)
                data = value if isinstance(value, bytes) else json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", extra.pop("Content-Type", "application/json; charset=utf-8"))
                for k, v in extra.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                try:
                    self.wfile.write(data)
                except OSError:  # the client refused a large body and hung up
                    pass

            do_GET = do_POST = do_DELETE = _serve

        return Handler

    @contextmanager
    def running(self) -> Iterator[GitHubServer]:
        thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.released.set()
            self.httpd.shutdown()
            self.httpd.server_close()
