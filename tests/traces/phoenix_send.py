"""Sends spans to Phoenix with the OpenTelemetry SDK (OTLP over HTTP, protobuf), as an
instrumented agent would. Run with the Phoenix test venv's Python (it has opentelemetry-sdk and
opentelemetry-exporter-otlp-proto-http; the app's venv need not):

    python phoenix_send.py < spec.json

spec: {"endpoint": "http://127.0.0.1:P/v1/traces", "project": "p", "trace_id": "<32 hex>",
       "spans": [{"span_id": "<16 hex>", "parent": "<16 hex>|null", "name": "...", "start_ns": N,
                  "end_ns": N, "attributes": {...}, "error": "text|null"}]}   parents first.
Attribute values that are lists or objects are sent as JSON text, as the GenAI conventions do.
Standard library and OpenTelemetry only: this file never imports llmspace."""

from __future__ import annotations

import json
import sys

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.trace import Status, StatusCode


class FixedIds(IdGenerator):
    def __init__(self, trace_id: str, span_ids: list[str]) -> None:
        self.trace_id = int(trace_id, 16)
        self.span_ids = [int(s, 16) for s in span_ids]

    def generate_trace_id(self) -> int:
        return self.trace_id

    def generate_span_id(self) -> int:
        return self.span_ids.pop(0)


def main() -> None:
    spec = json.load(sys.stdin)
    provider = TracerProvider(resource=Resource.create({"service.name": "weather",
                                                        "openinference.project.name": spec["project"]}),
                              id_generator=FixedIds(spec["trace_id"], [s["span_id"] for s in spec["spans"]]))
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=spec["endpoint"], timeout=30)))
    tracer = provider.get_tracer("pydantic-ai")
    made: dict[str, trace.Span] = {}
    for s in spec["spans"]:
        parent = made.get(s["parent"]) if s.get("parent") else None
        ctx = trace.set_span_in_context(parent) if parent is not None else trace.set_span_in_context(trace.INVALID_SPAN)
        attrs = {k: (json.dumps(v) if isinstance(v, (list, dict)) else v) for k, v in s["attributes"].items()}
        span = tracer.start_span(s["name"], context=ctx, start_time=s["start_ns"], attributes=attrs)
        if s.get("error"):
            span.set_status(Status(StatusCode.ERROR, s["error"]))
        made[s["span_id"]] = span
    for s in reversed(spec["spans"]):  # children end before their parents
        made[s["span_id"]].end(end_time=s["end_ns"])
    if not provider.force_flush(60_000):
        sys.exit("the spans were not all exported within 60 s")
    provider.shutdown()


if __name__ == "__main__":
    main()
