"""A loopback OTLP/HTTP trace receiver for tests: `POST /v1/traces` (or any path ending in it) with a
protobuf `ExportTraceServiceRequest`, decoded with the `opentelemetry-proto` classes.

    with OtlpReceiver() as rx:               # rx.url == "http://127.0.0.1:<port>"
        ...export to rx.url...
        spans = rx.wait_for(lambda spans: len(spans) >= 3)
        spans[0].name, .parent_id, .kind, .attributes (plain values), .events, .status_code, .resource
        rx.requests                          # [(path, headers)] of every POST
    OtlpReceiver(hang=True)                  # reads the request, then never answers
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest, ExportTraceServiceResponse
from opentelemetry.proto.common.v1.common_pb2 import AnyValue

KINDS = {0: "UNSPECIFIED", 1: "INTERNAL", 2: "SERVER", 3: "CLIENT", 4: "PRODUCER", 5: "CONSUMER"}


def plain(value: AnyValue) -> Any:
    which = value.WhichOneof("value")
    if which == "array_value":
        return [plain(v) for v in value.array_value.values]
    if which == "kvlist_value":
        return {kv.key: plain(kv.value) for kv in value.kvlist_value.values}
    return getattr(value, which) if which else None


@dataclass
class RxSpan:
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: str
    attributes: dict[str, Any]
    events: list[tuple[str, dict[str, Any]]]
    status_code: int
    status_message: str
    resource: dict[str, Any]
    scope: str
    start_ns: int = 0
    end_ns: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


class OtlpReceiver:
    def __init__(self, *, hang: bool = False) -> None:
        self.hang = hang
        self.spans: list[RxSpan] = []
        self.requests: list[tuple[str, dict[str, str]]] = []
        self._cond = threading.Condition()
        self._stop = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with receiver._cond:
                    receiver.requests.append((self.path, dict(self.headers.items())))
                    receiver._cond.notify_all()
                if receiver.hang:
                    receiver._stop.wait(600)
                    return
                if not self.path.endswith("/v1/traces"):
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver._take(body)
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def _take(self, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        got: list[RxSpan] = []
        for rs in request.resource_spans:
            resource = {kv.key: plain(kv.value) for kv in rs.resource.attributes}
            for ss in rs.scope_spans:
                for s in ss.spans:
                    got.append(RxSpan(
                        name=s.name, trace_id=s.trace_id.hex(), span_id=s.span_id.hex(), parent_id=s.parent_span_id.hex(),
                        kind=KINDS.get(s.kind, str(s.kind)), attributes={kv.key: plain(kv.value) for kv in s.attributes},
                        events=[(e.name, {kv.key: plain(kv.value) for kv in e.attributes}) for e in s.events],
                        status_code=s.status.code, status_message=s.status.message, resource=resource,
                        scope=ss.scope.name, start_ns=s.start_time_unix_nano, end_ns=s.end_time_unix_nano))
        with self._cond:
            self.spans.extend(got)
            self._cond.notify_all()

    def wait_for(self, ready: Callable[[list[RxSpan]], bool], timeout: float = 90.0) -> list[RxSpan]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not ready(self.spans):
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"the receiver did not get the spans in {timeout} s: {[s.name for s in self.spans]}")
                self._cond.wait(left)
            return list(self.spans)

    def wait_for_requests(self, count: int, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"fewer than {count} requests in {timeout} s")
                self._cond.wait(left)

    def __enter__(self) -> OtlpReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self.server.shutdown()
        self.server.server_close()
