"""OpenTelemetry export cost per model call (issue 46): what the exporter adds to writing a model
call's trace (decoding the written document, mapping it to a `chat` span, queueing the span), with
a loopback OTLP receiver and with one that never answers, against tracing off. Budget: 2 ms per call
(median and p95)."""

from __future__ import annotations

import statistics
import time
import uuid
from typing import Any

import orjson

from llmspace.traces.otel_export import OtelExporter
from llmspace.traces.otel_settings import ExportTarget
from tests.traces.otlp_receiver import OtlpReceiver

CALLS = 400


def _doc(i: int) -> dict[str, Any]:
    messages = [{"role": "user" if k % 2 == 0 else "assistant", "content": f"message {k} " + "text " * 40} for k in range(12)]
    return {"version": 1, "kind": "model", "runId": "bench-run", "step": i, "startedAt": "2026-12-07T10:00:01.000+00:00",
            "provider": "openai", "api": "openai-completions", "model": "gpt-4o", "baseUrl": "https://api.openai.com/v1",
            "headers": {"Authorization": "***"}, "timing": {"firstTokenMs": 120.0, "durationMs": 900.0},
            "request": {"model": "gpt-4o", "stream": True, "temperature": 0.3, "messages": messages,
                        "tools": [{"type": "function", "function": {"name": f"t{k}", "parameters": {"type": "object"}}} for k in range(8)]},
            "events": [{"type": "TextDelta", "text": "answer " * 200}, {"type": "UsageEvent", "input": 900, "output": 200},
                       {"type": "Finish", "reason": "stop", "raw": {}}]}


def _per_call(exporter: OtelExporter | None, capture: bool) -> list[float]:
    data = [orjson.dumps(_doc(i)) for i in range(CALLS)]
    times = []
    if exporter is not None:
        exporter.capture = capture
        exporter.run_started("bench-run", title="bench", provider="openai", model="gpt-4o")
    for blob in data:
        t0 = time.perf_counter()
        if exporter is not None:  # what TraceWriter._write adds when an observer is attached
            exporter.call_recorded(orjson.loads(blob))
        times.append((time.perf_counter() - t0) * 1000)
    if exporter is not None:
        exporter.run_ended("bench-run", status="completed")
    return times


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1]


def run() -> list[tuple[str, float, str, float | None]]:
    rows: list[tuple[str, float, str, float | None]] = []
    for label, hang in (("loopback receiver", False), ("receiver that never answers", True)):
        with OtlpReceiver(hang=hang) as rx:
            exporter = OtelExporter(ExportTarget(rx.url + "/v1/traces", {}, "bench", f"bench-{uuid.uuid4().hex[:6]}", True))
            try:
                for capture in (False, True):
                    times = _per_call(exporter, capture)
                    name = f"otel: model call, {label}, capture {'on' if capture else 'off'}"
                    rows.append((f"{name} (median)", statistics.median(times), "ms", 2.0))
                    rows.append((f"{name} (p95)", _p95(times), "ms", 2.0))
                if hang:
                    t0 = time.perf_counter()
                    exporter.close(5.0)
                    rows.append(("otel: close with a receiver that never answers", time.perf_counter() - t0, "s", 5.5))
            finally:
                exporter.close(0.5)
    return rows
