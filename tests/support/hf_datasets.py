"""A loopback Hugging Face datasets server: `GET /rows?dataset=OWNER/NAME&config=C&split=S&offset=O&length=L`
answered as https://datasets-server.huggingface.co/rows does — `{features, rows: [{row_idx, row,
truncated_cells}], num_rows_total, num_rows_per_page, partial}`, at most 100 rows a page (422 for a
larger `length`), 404 with `{error}` for an unknown split or config, and 401 (`X-Error-Code:
ExternalUnauthenticatedError`) for a gated dataset asked without `Authorization: Bearer TOKEN`.

    with DatasetsServer() as server:
        server.datasets[("cais/hle", "default", "test")] = [{"question": …, "answer": …}, …]
        server.require_token = "hf_…"          # the dataset is gated
        os.environ["HF_DATASETS_SERVER"] = server.url
        server.requests                        # every request's query, in order
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

MAX_LENGTH = 100
UNAUTHENTICATED = ("The dataset does not exist, or is not accessible without authentication (private or gated). "
                   "Please check the spelling of the dataset name or retry with authentication.")


class DatasetsServer:
    def __init__(self) -> None:
        self.datasets: dict[tuple[str, str, str], list[dict[str, Any]]] = {}
        self.require_token: str | None = None
        self.requests: list[dict[str, str]] = []
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> DatasetsServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self._thread.join(30)

    def answer(self, path: str, q: dict[str, str], auth: str) -> tuple[int, Any, dict[str, str]]:
        if path != "/rows":
            return 404, {"error": "Not Found"}, {}
        if self.require_token and auth != f"Bearer {self.require_token}":
            return 401, {"error": UNAUTHENTICATED}, {"X-Error-Code": "ExternalUnauthenticatedError"}
        key = (q.get("dataset", ""), q.get("config", ""), q.get("split", ""))
        if key not in self.datasets:
            return 404, {"error": "Not found."}, {"X-Error-Code": "ResponseNotFound"}
        offset, length = int(q.get("offset", "0")), int(q.get("length", str(MAX_LENGTH)))
        if length > MAX_LENGTH:
            return 422, {"error": f"Parameter 'length' must not be greater than {MAX_LENGTH}"}, {}
        rows = self.datasets[key]
        names = list(rows[0]) if rows else []
        return 200, {"features": [{"feature_idx": i, "name": n, "type": {"dtype": "string", "_type": "Value"}}
                                  for i, n in enumerate(names)],
                     "rows": [{"row_idx": offset + i, "row": row, "truncated_cells": []}
                              for i, row in enumerate(rows[offset:offset + length])],
                     "num_rows_total": len(rows), "num_rows_per_page": MAX_LENGTH, "partial": False}, {}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                query = dict(parse_qsl(parts.query))
                server.requests.append(query)
                status, body, headers = server.answer(parts.path, query, self.headers.get("Authorization", ""))
                data = json.dumps(body).encode()
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler
