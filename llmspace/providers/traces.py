"""Model-call traces under `traces/`: one JSON file per call, size-capped, pruned oldest first.

One trace per model call of a run:

    tracer = TraceWriter(root, apis=registries.apis)   # app.py builds the app's one
    path = tracer.record(request, events, {"firstTokenMs": 120.0, "durationMs": 900.0},
                         error=None)

or, while streaming:

    with tracer.call(request) as trace:      # timing is measured from entering the block
        for event in stream_with_retries(adapter, request, cancel):
            trace.add(event)                 # marks firstTokenMs at the first token
            ...
    trace.path                               # the file written on exit

A trace holds the provider/api/model, the HTTP payload the adapter sends (built by the
payload builder its API registered in the `apis` registry, base64 images shortened) with headers masked, the events
(consecutive text/thinking deltas merged), timing and any error. Every configured header
value is written as `***` whatever its length (only `Content-Type`, `Accept` and
`User-Agent` stay plain), so are `Authorization`/`x-api-key`; the base URL is masked
(`redact.mask_url`). Secrets are also removed by value from the whole file
(`llmspace/redact.py`): the API key, configured header values of 8+ characters, the URL's
secrets, plus every secret the process knows of. Each trace is capped at
`max_trace_bytes` (events beyond it are dropped and counted); when the folder passes
`max_total_bytes` the oldest traces are deleted. Written only through `jsonio`.
"""

from __future__ import annotations

import dataclasses
import os
import re
import threading
import time
import uuid
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from ..jsonio import write_bytes_atomic
from ..paths import DataRoot, safe_component
from ..redact import KNOWN, MASK, PLAIN_HEADERS, Redactor, mask_url
from .base import ModelApi, ModelRequest
from .events import StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallStart
from .http import secrets_of

if TYPE_CHECKING:
    from ..registry import Registry

_prune_lock = threading.Lock()
_B64 = re.compile(r"^[A-Za-z0-9+/=_-]+$")
_TOKENS = (TextDelta, ThinkingDelta, ToolCallStart, ToolCallArgsDelta)


def payload_for(request: ModelRequest, apis: Registry[ModelApi]) -> dict[str, Any] | None:
    """The JSON body the adapter of the request's API would send, from the payload builder
    its `ModelApi` declares in `apis` (None when it declares none)."""
    try:
        api = apis.get(request.endpoint.api)
        if api is None or api.build_payload is None:
            return None
        return api.build_payload(request)
    except Exception:  # a trace must never break a run
        return None


def _shorten(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _shorten(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shorten(v) for v in value]
    if isinstance(value, str) and len(value) > 2048 and (value.startswith("data:") or _B64.match(value[:2048])):
        return f"<{len(value)} characters of base64 omitted>"
    return value


def _event_dicts(events: Iterable[StreamEvent]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for e in events:
        d = {"type": type(e).__name__, **dataclasses.asdict(e)}
        if (out and isinstance(e, (TextDelta, ThinkingDelta)) and out[-1]["type"] == d["type"]) or (out and isinstance(e, ToolCallArgsDelta) and out[-1]["type"] == d["type"] and out[-1]["index"] == e.index):
            out[-1]["text"] += d["text"]
        else:
            out.append(d)
    return out


class TraceCall:
    """Collects one call's events; written by `TraceWriter.call` on exit."""

    def __init__(self) -> None:
        self.events: list[StreamEvent] = []
        self.started = time.perf_counter()
        self.first_token_ms: float | None = None
        self.error: str | None = None
        self.path: Path | None = None

    def add(self, event: StreamEvent) -> None:
        if self.first_token_ms is None and isinstance(event, _TOKENS):
            self.first_token_ms = (time.perf_counter() - self.started) * 1000
        self.events.append(event)

    def timing(self) -> dict[str, float]:
        t: dict[str, float] = {}
        if self.first_token_ms is not None:
            t["firstTokenMs"] = round(self.first_token_ms, 1)
        t["durationMs"] = round((time.perf_counter() - self.started) * 1000, 1)
        return t


class _CallContext:
    def __init__(self, writer: TraceWriter, request: ModelRequest) -> None:
        self.writer, self.request, self.trace = writer, request, TraceCall()

    def __enter__(self) -> TraceCall:
        return self.trace

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        err = self.trace.error or (f"{exc_type.__name__}: {exc}" if exc_type is not None else None)
        try:
            self.trace.path = self.writer.record(self.request, self.trace.events, self.trace.timing(), error=err)
        except Exception:
            pass  # tracing failures never mask the run's own outcome


class TraceWriter:
    """Writes and prunes the traces of one data root. `apis` is the model-API registry that
    knows each API's payload builder (default: the built-in APIs only)."""

    def __init__(self, root: DataRoot, max_total_bytes: int = 50_000_000, max_trace_bytes: int = 2_000_000,
                 *, apis: Registry[ModelApi] | None = None) -> None:
        self.root = root
        if apis is None:
            from .registry import builtin_apis

            apis = builtin_apis()
        self.apis = apis
        self.max_total_bytes = max_total_bytes
        self.max_trace_bytes = max_trace_bytes

    @property
    def folder(self) -> Path:
        return self.root.traces

    def call(self, request: ModelRequest) -> _CallContext:
        return _CallContext(self, request)

    def record(self, request: ModelRequest, events: Iterable[StreamEvent], timing: dict[str, Any] | None = None,
               error: str | None = None) -> Path:
        ep = request.endpoint
        now = datetime.now(UTC)
        secrets = secrets_of(request)
        # every configured header value is a credential for all we know, whatever its length
        headers = {k: (v if k.strip().lower() in PLAIN_HEADERS else MASK) for k, v in ep.headers.items()}
        if ep.api_key:
            headers["Authorization" if ep.api != "anthropic-messages" else "x-api-key"] = MASK
        redactor = KNOWN.redactor + Redactor(secrets)
        doc: dict[str, Any] = {
            "version": 1, "startedAt": now.isoformat(timespec="milliseconds"), "provider": ep.provider_id,
            "api": ep.api, "model": request.model.id, "baseUrl": mask_url(ep.base_url), "headers": headers,
            "request": _shorten(payload_for(request, self.apis)), "timing": dict(timing or {}),
            "events": _event_dicts(events),
        }
        if error:
            doc["error"] = error
        data = self._encode(doc, redactor)
        dropped = 0
        while len(data) > self.max_trace_bytes and doc["events"]:
            cut = max(1, len(doc["events"]) // 4)
            doc["events"] = doc["events"][:-cut]
            dropped += cut
            doc["eventsDropped"] = dropped
            data = self._encode(doc, redactor)
        if len(data) > self.max_trace_bytes:
            doc["request"] = "<request omitted: larger than the trace size cap>"
            data = self._encode(doc, redactor)
        # Configured names become one path component the one way the app encodes them (paths.safe_component).
        safe_model = safe_component(request.model.id)[:40]
        safe_provider = safe_component(ep.provider_id)[:30]
        name = f"{now.strftime('%Y%m%d-%H%M%S-%f')}-{safe_provider}-{safe_model}-{uuid.uuid4().hex[:6]}.json"
        path = self.folder / name
        write_bytes_atomic(path, data)
        self.prune()
        return path

    @staticmethod
    def _encode(doc: dict[str, Any], redactor: Redactor) -> bytes:
        text = orjson.dumps(redactor.value(doc), option=orjson.OPT_INDENT_2).decode("utf-8")
        return (redactor.text(text) + "\n").encode("utf-8")  # also a secret split across values

    def prune(self) -> list[Path]:
        """Delete the oldest traces until the folder is within `max_total_bytes`."""
        removed: list[Path] = []
        with _prune_lock:
            files = []
            for p in self.folder.glob("*.json"):
                try:
                    files.append((p.name, p, p.stat().st_size))
                except FileNotFoundError:
                    continue
            files.sort()
            total = sum(size for _, _, size in files)
            for _, p, size in files:
                if total <= self.max_total_bytes:
                    break
                try:
                    os.unlink(p)
                    removed.append(p)
                except FileNotFoundError:
                    pass
                total -= size
        return removed
