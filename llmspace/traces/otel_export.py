"""The OpenTelemetry exporter: a trace observer (`providers/trace_observers.py`) that turns a run's
events into GenAI spans (`traces/genai_spans.py`) and sends them over OTLP/HTTP (protobuf).

    exporter = OtelExporter(target, report=print_to_stderr)   # target: otel_settings.export_target
    trace_writer.observers.add(exporter)
    ...
    exporter.close(timeout=5.0)                                 # flush, at most `timeout` seconds

Imported only when tracing is on (it imports `opentelemetry-sdk` and
`opentelemetry-exporter-otlp-proto-http`, the `otel` extra). One SDK `TracerProvider` per
exporter with a `BatchSpanProcessor` (its own thread; a bounded queue of `MAX_QUEUE` spans: when
full a span is dropped and counted in `dropped`, a run never waits). A process-wide switch
provider is installed once as OpenTelemetry's global one and forwards to the exporter now open,
so the spans the `mcp` package opens through `opentelemetry-api` land in the same traces.

A run's span is live from `run_started` to `run_ended`; a tool span is live while the tool runs
(`tool_call`, its context current on that thread, so an MCP call's span is its child) and gets
its attributes from the tool's trace document; a model call's span is made from its trace
document with the times it records. An evaluation is a span with a span per cell under it, each
check and judge verdict a `gen_ai.evaluation.result` event on its cell's span. At a run's end the queue is flushed on a background thread
(never blocking the run); `close` flushes for at most `timeout` seconds. An endpoint that fails
is reported once per process (`report(message)` and the `llmspace.traces` log), not per span.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from time import time_ns as trace_time_ns
from typing import Any

import requests
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode

from ..redact import KNOWN, mask_url
from . import genai_names as N
from .genai_spans import SpanSpec, call_span, cell_span, check_event, run_attributes, run_name, tool_start_attributes
from .otel_settings import ExportTarget

log = logging.getLogger("llmspace.traces")
MAX_QUEUE = 2048
EXPORT_TIMEOUT = 5.0  # seconds per export request (with its retries)
_reported: set[str] = set()  # endpoints already reported as failing in this process
_report_lock = threading.Lock()


class _Switch(trace.TracerProvider):
    """The global provider: hands out tracers that forward to the exporter open now (or no-op)."""

    current: TracerProvider | None = None

    def get_tracer(self, instrumenting_module_name: str, instrumenting_library_version: str | None = None,
                   schema_url: str | None = None, attributes: Any = None) -> trace.Tracer:
        return _SwitchTracer(instrumenting_module_name, instrumenting_library_version, schema_url)


class _SwitchTracer(trace.Tracer):
    def __init__(self, *args: Any) -> None:
        self._args = args

    def _real(self) -> trace.Tracer:
        provider = _Switch.current
        return provider.get_tracer(*self._args) if provider is not None else trace.NoOpTracer()

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return self._real().start_span(*args, **kwargs)

    @contextlib.contextmanager
    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Iterator[trace.Span]:  # type: ignore[override]
        with self._real().start_as_current_span(*args, **kwargs) as span:
            yield span


_installed: list[bool] = []


def _install_switch() -> None:
    if not _installed:
        _installed.append(True)
        trace.set_tracer_provider(_Switch())  # once per process; the SDK refuses a second one


class _RecordingSession(requests.Session):
    """The exporter's HTTP session, remembering why the last request failed (for the report)."""

    last_problem = ""

    def post(self, url: Any, *args: Any, **kwargs: Any) -> requests.Response:
        try:
            response = super().post(url, *args, **kwargs)
        except Exception as exc:
            self.last_problem = type(exc).__name__
            raise
        self.last_problem = "" if response.ok else f"HTTP {response.status_code}"
        return response


class _Reporting(SpanExporter):
    """The OTLP exporter, reporting a failing endpoint once per process."""

    def __init__(self, inner: OTLPSpanExporter, session: _RecordingSession, url: str,
                 report: Callable[[str], None]) -> None:
        self.inner, self.session, self.url, self.report = inner, session, url, report
        self.failures = 0

    def export(self, spans: Any) -> SpanExportResult:
        try:
            result = self.inner.export(spans)
        except Exception as exc:  # an exporter must not raise into the SDK's thread
            self.session.last_problem = type(exc).__name__
            result = SpanExportResult.FAILURE
        if result is not SpanExportResult.SUCCESS:
            self.failures += 1
            self._report_once()
        return result

    def _report_once(self) -> None:
        shown = mask_url(self.url)
        with _report_lock:
            if shown in _reported:
                return
            _reported.add(shown)
        why = self.session.last_problem or "no answer"
        message = KNOWN.redactor.text(
            f"Tracing: could not send spans to {shown} ({why}); runs go on without it. "
            "Check the endpoint and headers in Settings › Tracing (settings/tracing.json). "
            "This is reported once per process.")
        log.warning("%s", message)
        try:
            self.report(message)
        except Exception:
            log.debug("the tracing report failed", exc_info=True)

    def shutdown(self) -> None:
        self.inner.shutdown()  # type: ignore[no-untyped-call]

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


class _Counting(SpanProcessor):
    """The batch processor, counting the spans it drops because its queue is full."""

    def __init__(self, inner: BatchSpanProcessor) -> None:
        self.inner = inner
        self.dropped = 0

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.inner.on_start(span, parent_context)

    def on_end(self, span: ReadableSpan) -> None:
        queue = getattr(getattr(self.inner, "_batch_processor", None), "_queue", None)  # the SDK's bounded deque
        if queue is not None and len(queue) >= MAX_QUEUE:
            self.dropped += 1
        self.inner.on_end(span)

    def shutdown(self) -> None:
        self.inner.shutdown()  # type: ignore[no-untyped-call]

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return self.inner.force_flush(timeout_millis)


def _quiet_sdk_loggers() -> None:
    """The SDK logs every failed batch; we report once ourselves."""
    for name in ("opentelemetry.exporter.otlp.proto.http", "opentelemetry.exporter.otlp.proto.http.trace_exporter",
                 "opentelemetry.sdk._shared_internal", "opentelemetry.sdk.trace.export"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


class OtelExporter:
    """See the module docstring. `report(message)` hears a failing endpoint (once per process)."""

    def __init__(self, target: ExportTarget, report: Callable[[str], None] | None = None,
                 *, schedule_delay_ms: int = 500, global_provider: bool = True) -> None:
        _quiet_sdk_loggers()
        _install_switch()
        self.target = target
        self.capture = target.capture
        self.session = _RecordingSession()
        inner = OTLPSpanExporter(endpoint=target.url, headers=dict(target.headers), timeout=EXPORT_TIMEOUT,
                                 session=self.session)
        self._exporter = _Reporting(inner, self.session, target.url, report or (lambda _m: None))
        self._processor = _Counting(BatchSpanProcessor(self._exporter, max_queue_size=MAX_QUEUE,
                                                       schedule_delay_millis=schedule_delay_ms,
                                                       max_export_batch_size=512))
        resource = Resource.create({N.SERVICE_NAME: target.service_name, N.PHOENIX_PROJECT: target.project})
        self.provider = TracerProvider(resource=resource)
        self.provider.add_span_processor(self._processor)
        self.tracer = self.provider.get_tracer("llmspace", schema_url=N.SCHEMA_URL)
        self._lock = threading.Lock()
        self._runs: dict[str, trace.Span] = {}
        self._tools: dict[tuple[str, str], trace.Span] = {}  # live tool spans; an evaluation's cell spans
        self._cell_ends: dict[trace.Span, int] = {}
        self._flushing = threading.Event()
        self._closed = False
        if global_provider:  # the `mcp` package's spans go to this exporter (not for a one-off test span)
            _Switch.current = self.provider

    @property
    def shown_url(self) -> str:
        """The endpoint as messages show it (secrets in the URL masked)."""
        return mask_url(self.target.url)

    @property
    def dropped(self) -> int:
        return self._processor.dropped

    @property
    def failures(self) -> int:
        return self._exporter.failures

    # -- observer ------------------------------------------------------------------------
    def run_started(self, run_id: str, *, title: str, provider: str, model: str, thread_path: str | None = None) -> None:
        span = self.tracer.start_span(run_name(title or "run"), kind=SpanKind.INTERNAL,
                                      attributes=run_attributes(run_id, provider, model, thread_path))
        with self._lock:
            self._runs[run_id] = span

    def run_ended(self, run_id: str, *, status: str, error: str | None = None) -> None:
        with self._lock:
            span = self._runs.pop(run_id, None)
            pending = [k for k in self._tools if k[0] == run_id]
            tools = [self._tools.pop(k) for k in pending]
        for tool in tools:
            tool.end()
        if span is not None:
            span.set_attribute(N.RUN_STATUS, status)
            if error:
                span.set_attribute(N.ERROR_TYPE, "run_failed" if status == "failed" else status)
                span.set_status(Status(StatusCode.ERROR, error[:500]))
            span.end()
        self.flush_soon()

    @contextlib.contextmanager
    def tool_call(self, run_id: str, call_id: str, name: str) -> Iterator[None]:
        span = self.tracer.start_span(f"{N.OP_EXECUTE_TOOL} {name}", context=self._parent(run_id),
                                      kind=SpanKind.INTERNAL, attributes=tool_start_attributes(name, call_id))
        with self._lock:
            self._tools[(run_id, call_id)] = span
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            yield
        finally:
            otel_context.detach(token)

    def call_recorded(self, doc: dict[str, Any]) -> None:
        spec = call_span(doc, self.capture)
        if spec is None:
            return
        run_id = str(doc.get("runId") or "")
        live = None
        if doc.get("kind") == "tool":
            with self._lock:
                live = self._tools.pop((run_id, str(doc.get("callId") or "")), None)
        if live is not None:
            live.set_attributes(spec.attributes)
            _finish(live, spec)
            return
        self.emit(spec, self._parent(run_id) if run_id else None)

    # -- evaluations ---------------------------------------------------------------------
    def evaluation_started(self, eval_id: str, name: str) -> None:
        span = self.tracer.start_span(f"evaluation {name}", kind=SpanKind.INTERNAL, attributes={N.EVAL_NAME: name})
        with self._lock:
            self._runs[eval_id] = span

    def cell_finished(self, eval_id: str, data: dict[str, Any]) -> None:
        """A cell's span (ended with the evaluation, so its judges' verdicts can join it as events)."""
        redact = KNOWN.redactor.text
        if data.get("kind") == "judge":
            check = data.get("check")
            with self._lock:
                span = self._tools.get((eval_id, str(data.get("cell") or "")))
            if span is not None and isinstance(check, dict):
                name, attrs = check_event(check, self.capture, redact)
                span.add_event(name, attributes=attrs)
            return
        spec = cell_span(data, self.capture, redact)
        span = self.tracer.start_span(spec.name, context=self._parent(eval_id), start_time=spec.start_ns,
                                      kind=SpanKind.INTERNAL, attributes=spec.attributes)
        for name, attrs in spec.events:
            span.add_event(name, attributes=attrs)
        if spec.error:
            span.set_status(Status(StatusCode.ERROR, spec.error[:500]))
        with self._lock:
            self._tools[(eval_id, str(data.get("key") or ""))] = span
            self._cell_ends[span] = spec.end_ns

    def evaluation_ended(self, eval_id: str) -> None:
        with self._lock:
            cells = [(self._tools.pop(k), k) for k in [k for k in self._tools if k[0] == eval_id]]
            ends = {id(s): self._cell_ends.pop(s, None) for s, _k in cells}
            span = self._runs.pop(eval_id, None)
        for cell, _key in cells:
            cell.end(end_time=ends.get(id(cell)))
        if span is not None:
            span.end()
        self.flush_soon()

    # -- spans made after the fact -------------------------------------------------------
    def emit(self, spec: SpanSpec, parent: otel_context.Context | None = None) -> trace.Span:
        """Make and end the span `spec` describes, under `parent` (default: the current context)."""
        span = self.tracer.start_span(spec.name, context=parent, start_time=spec.start_ns,
                                      kind=SpanKind.CLIENT if spec.kind == "client" else SpanKind.INTERNAL,
                                      attributes=spec.attributes)
        _finish(span, spec)
        return span

    def emit_recorded_run(self, run_id: str, *, title: str, provider: str, model: str, thread_path: str | None,
                          docs: list[dict[str, Any]], status: str) -> int:
        """A run recorded earlier, from its trace documents: its `invoke_agent` span spanning them and
        their spans under it (as a live run would have sent them). Returns how many spans."""
        specs = [s for s in (call_span(d, self.capture) for d in docs) if s is not None]
        if not specs:
            return 0
        attrs = {**run_attributes(run_id, provider, model, thread_path), N.RUN_STATUS: status}
        run = self.emit(SpanSpec(run_name(title or "run"), "internal", min(s.start_ns for s in specs),
                                 max(s.end_ns for s in specs), attrs))
        parent = trace.set_span_in_context(run)
        for spec in specs:
            self.emit(spec, parent)
        return len(specs) + 1

    def _parent(self, run_id: str) -> otel_context.Context | None:
        with self._lock:
            run = self._runs.get(run_id)
        return trace.set_span_in_context(run) if run is not None else None

    def send_test_span(self, timeout: float = 5.0) -> str | None:
        """Send one `llmspace test span` and wait for it (at most `timeout` s): None when the
        collector took it, else what went wrong (each time: not the once-per-process report)."""
        now = trace_time_ns()
        self.emit(SpanSpec("llmspace test span", "internal", now, now, {N.OPERATION_NAME: "test"}))
        before = self._exporter.failures
        if self.flush(timeout) and self._exporter.failures == before:
            return None
        why = self.session.last_problem or f"no answer within {timeout:g} s"
        return KNOWN.redactor.text(f"The collector at {self.shown_url} did not take the test span ({why}).")

    # -- flushing ------------------------------------------------------------------------
    def flush_soon(self) -> None:
        """Send what is queued, on a background thread (one at a time); never waits."""
        if self._closed or self._flushing.is_set():
            return
        self._flushing.set()

        def go() -> None:
            try:
                self._processor.force_flush()
            finally:
                self._flushing.clear()

        threading.Thread(target=go, name="otel-flush", daemon=True).start()

    def flush(self, timeout: float = 5.0) -> bool:
        """Send what is queued, waiting at most `timeout` seconds; True when it all went."""
        done = threading.Event()

        def go() -> None:
            try:
                self._processor.force_flush()
            finally:
                done.set()

        threading.Thread(target=go, name="otel-flush", daemon=True).start()
        return done.wait(timeout) and self._exporter.failures == 0

    def close(self, timeout: float = 5.0) -> None:
        """End open spans, flush for at most `timeout` seconds, stop the export thread."""
        if self._closed:
            return
        with self._lock:
            open_spans = list(self._tools.values()) + list(self._runs.values())
            self._tools.clear()
            self._runs.clear()
        for span in open_spans:
            span.end()
        self.flush(timeout)
        self._closed = True
        if _Switch.current is self.provider:
            _Switch.current = None
        threading.Thread(target=self.provider.shutdown, name="otel-shutdown", daemon=True).start()


def _finish(span: trace.Span, spec: SpanSpec) -> None:
    for name, attrs in spec.events:
        span.add_event(name, attributes=attrs)
    if spec.error:
        span.set_status(Status(StatusCode.ERROR, spec.error[:500]))
    span.end(end_time=spec.end_ns)
