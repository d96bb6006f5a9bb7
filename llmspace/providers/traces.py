"""Traces under `traces/calls/`: one JSON file per model call and per tool call of a run,
size-capped, pruned oldest first. (The original app keeps `traces/projects/` for its Langfuse
projects; pruning never looks there.)

One trace per model call of a run:

    tracer = TraceWriter(root, apis=registries.apis)   # app.py builds the app's one
    path = tracer.record(request, events, {"firstTokenMs": 120.0, "durationMs": 900.0},
                         error=None, run_id="…", step=1)

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

Every trace has `kind` ("model" or "tool"), and within a run `runId` and `step` (1, 2, … in
the order the run made its calls; the run-history entry lists the file names, see
`core/history.run_traces`). A tool call's trace (`record_tool`) holds the tool's name, call id,
arguments and result (text and isError), its start time and `timing.durationMs`: the whole
file passes the same redactor, and the result text is cut at `MAX_TOOL_RESULT_CHARS` (the
trace says how long it was: `result.chars`, `result.truncated`), as is every argument string.
`load(name)` reads one back (None once pruned). Every document written is also handed, as
written, to the writer's `observers` (`providers/trace_observers.py`: the OpenTelemetry exporter).
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

from ..jsonio import read_json, write_bytes_atomic
from ..paths import DataRoot, safe_component
from ..redact import KNOWN, MASK, PLAIN_HEADERS, Redactor, mask_url
from .base import ModelApi, ModelRequest
from .events import StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallStart
from .http import secrets_of
from .trace_observers import TraceObservers

if TYPE_CHECKING:
    from ..registry import Registry

_prune_lock = threading.Lock()
_B64 = re.compile(r"^[A-Za-z0-9+/=_-]+$")
_TOKENS = (TextDelta, ThinkingDelta, ToolCallStart, ToolCallArgsDelta)
MAX_TOOL_RESULT_CHARS = 20_000  # of a tool call's result text (and of each argument string) kept in its trace


def _cap(value: Any) -> Any:
    """`value` with every string cut at `MAX_TOOL_RESULT_CHARS` (saying how long it was)."""
    if isinstance(value, dict):
        return {k: _cap(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_cap(v) for v in value]
    if isinstance(value, str) and len(value) > MAX_TOOL_RESULT_CHARS:
        return value[:MAX_TOOL_RESULT_CHARS] + f"… <{len(value) - MAX_TOOL_RESULT_CHARS} more characters not kept>"
    return value


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


def _run_keys(run_id: str | None, step: int | None) -> dict[str, Any]:
    keys: dict[str, Any] = {}
    if run_id is not None:
        keys["runId"] = run_id
    if step is not None:
        keys["step"] = step
    return keys


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
    def __init__(self, writer: TraceWriter, request: ModelRequest, run_id: str | None, step: int | None) -> None:
        self.writer, self.request, self.trace = writer, request, TraceCall()
        self.run_id, self.step = run_id, step

    def __enter__(self) -> TraceCall:
        return self.trace

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        err = self.trace.error or (f"{exc_type.__name__}: {exc}" if exc_type is not None else None)
        try:
            self.trace.path = self.writer.record(self.request, self.trace.events, self.trace.timing(), error=err,
                                                 run_id=self.run_id, step=self.step)
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
        self.observers = TraceObservers()

    @property
    def folder(self) -> Path:
        return self.root.trace_calls

    def call(self, request: ModelRequest, *, run_id: str | None = None, step: int | None = None) -> _CallContext:
        return _CallContext(self, request, run_id, step)

    def record(self, request: ModelRequest, events: Iterable[StreamEvent], timing: dict[str, Any] | None = None,
               error: str | None = None, *, run_id: str | None = None, step: int | None = None) -> Path:
        ep = request.endpoint
        now = datetime.now(UTC)
        secrets = secrets_of(request)
        # every configured header value is a credential for all we know, whatever its length
        headers = {k: (v if k.strip().lower() in PLAIN_HEADERS else MASK) for k, v in ep.headers.items()}
        if ep.api_key:
            headers["Authorization" if ep.api != "anthropic-messages" else "x-api-key"] = MASK
        redactor = KNOWN.redactor + Redactor(secrets)
        doc: dict[str, Any] = {
            "version": 1, "kind": "model", **_run_keys(run_id, step),
            "startedAt": now.isoformat(timespec="milliseconds"), "provider": ep.provider_id,
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
        return self._write(now, f"{safe_provider}-{safe_model}", data)

    def record_tool(self, *, name: str, call_id: str, arguments: Any, result_text: str, is_error: bool,
                    started_at: datetime, duration_ms: float, run_id: str | None = None, step: int | None = None,
                    redactor: Redactor | None = None) -> Path:
        """Write the trace of one tool call (see the module docstring); `redactor` removes
        the run's endpoint secrets on top of every secret the process knows of."""
        redactor = KNOWN.redactor + (redactor or Redactor())
        doc: dict[str, Any] = {
            "version": 1, "kind": "tool", **_run_keys(run_id, step),
            "startedAt": started_at.astimezone(UTC).isoformat(timespec="milliseconds"),
            "tool": name, "callId": call_id, "arguments": _cap(arguments),
            "result": {"text": _cap(result_text), "isError": bool(is_error), "chars": len(result_text),
                       "truncated": len(result_text) > MAX_TOOL_RESULT_CHARS},
            "timing": {"durationMs": round(duration_ms, 1)},
        }
        data = self._encode(doc, redactor)
        if len(data) > self.max_trace_bytes:
            doc["arguments"] = "<arguments omitted: larger than the trace size cap>"
            doc["result"]["text"] = "<result omitted: larger than the trace size cap>"
            data = self._encode(doc, redactor)
        return self._write(started_at, f"tool-{safe_component(name)[:40]}", data)

    def _write(self, when: datetime, label: str, data: bytes) -> Path:
        # Configured names become one path component the one way the app encodes them (paths.safe_component).
        path = self.folder / f"{when.astimezone(UTC).strftime('%Y%m%d-%H%M%S-%f')}-{label}-{uuid.uuid4().hex[:6]}.json"
        write_bytes_atomic(path, data)
        self.prune()
        if self.observers:
            self.observers.call_recorded(orjson.loads(data))  # exactly what the file holds
        return path

    def load(self, name: str) -> dict[str, Any] | None:
        """The trace file `name` (a bare file name, as a run entry lists it) as written; None
        when it is gone (pruned or deleted) or is not a trace file of ours."""
        if not name or name != Path(name).name or not name.endswith(".json"):
            return None
        try:
            value = read_json(self.folder / name, max_bytes=self.max_trace_bytes + 1_000_000)
        except Exception:  # missing, or unreadable: shown as gone rather than breaking the view
            return None
        return value if isinstance(value, dict) else None

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
