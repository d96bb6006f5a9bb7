"""Which trace file a file is, and its traces: rows grouped by trace id, or the reason it is refused.

Accepted: the three Langfuse shapes (`langfuse.py`), an OTLP JSON `ExportTraceServiceRequest`
(one document, or one per line as a collector's file exporter writes them) and a Phoenix span
listing (`otel.py`). Each file is read through `jsonio.read_file_bytes` (no named pipes or
devices) with a cap of `MAX_FILE_BYTES`, and holds at most `MAX_ROWS` rows; over either, the
file is refused with the limit in its reason. Nothing here writes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import MalformedJsonError
from ..jsonio import UnreadableFileError, loads_located, read_file_bytes
from . import langfuse, otel

MAX_FILE_BYTES = 100 * 1024 * 1024
MAX_ROWS = 100_000

SHAPES = ("a Langfuse export (an array of observations, {\"data\": [...]} or the web app's "
          "{\"trace\": ..., \"observations\": [...]}), an OTLP JSON ExportTraceServiceRequest (one per line for "
          "JSON Lines) or a Phoenix span listing ({\"data\": [spans], \"next_cursor\": ...})")

SOURCE_LABELS = {"langfuse": "Langfuse", "otlp": "OpenTelemetry", "phoenix": "Phoenix"}


@dataclass
class TraceRows:
    """The rows of one trace in one file, as received."""

    trace_id: str
    rows: list[dict[str, Any]]
    trace: dict[str, Any] | None = None  # the Langfuse download's `trace` object


@dataclass
class TraceFile:
    name: str
    source: str = ""  # langfuse | otlp | phoenix; "" when refused
    traces: list[TraceRows] = field(default_factory=list)
    refused: str = ""  # why nothing of it is imported
    project_ids: set[str] = field(default_factory=set)  # Langfuse project ids of its rows
    project_names: set[str] = field(default_factory=set)


def read_trace_file(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> TraceFile:
    """The traces of the file at `path`, or a `TraceFile` whose `refused` says why not."""
    name = path.name
    try:
        data = read_file_bytes(path, max_bytes=max_bytes, shown=name)
    except UnreadableFileError as exc:
        reason = exc.reason
        if "larger than" in reason:
            reason += "; export fewer traces per file"
        return TraceFile(name, refused=reason)
    return parse_trace_bytes(data, name)


def parse_trace_bytes(data: bytes, name: str) -> TraceFile:
    if not data.strip():
        return TraceFile(name, refused="the file is empty")
    try:
        value = loads_located(data, name)
    except MalformedJsonError as whole_error:
        lines = [line for line in data.splitlines() if line.strip()]
        if len(lines) < 2:
            return TraceFile(name, refused=_malformed(whole_error))
        return _json_lines(lines, name)
    return _from_value(value, name)


def _malformed(exc: MalformedJsonError) -> str:
    return f"malformed JSON at line {exc.line}, column {exc.column}: {exc.reason}"


def _json_lines(lines: list[bytes], name: str) -> TraceFile:
    rows: list[dict[str, Any]] = []
    for number, line in enumerate(lines, start=1):
        try:
            value = loads_located(line, f"{name} line {number}")
        except MalformedJsonError as exc:
            return TraceFile(name, refused=f"line {number} is not JSON: {exc.reason}")
        if not otel.is_otlp_document(value):
            return TraceFile(name, refused=f"line {number} is not an OTLP JSON document (JSON Lines trace files hold one "
                                           "ExportTraceServiceRequest per line)")
        rows.extend(otel.otlp_rows(value))
        if len(rows) > MAX_ROWS:
            return _too_many(name)
    return _otlp(rows, name)


def _too_many(name: str) -> TraceFile:
    return TraceFile(name, refused=f"it holds more than {MAX_ROWS:,} rows; export fewer traces per file")


def _otlp(rows: list[dict[str, Any]], name: str) -> TraceFile:
    if not rows:
        return TraceFile(name, refused="the OTLP document holds no spans")
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        tid = otel.otlp_trace_id(row)
        if tid:
            groups.setdefault(tid, []).append(row)
    if not groups:
        return TraceFile(name, refused="no span has a traceId")
    return TraceFile(name, "otlp", [TraceRows(t, r) for t, r in groups.items()])


def _from_value(value: Any, name: str) -> TraceFile:
    if otel.is_otlp_document(value):
        rows = otel.otlp_rows(value)
        return _too_many(name) if len(rows) > MAX_ROWS else _otlp(rows, name)
    phoenix = otel.phoenix_rows(value)
    if phoenix is not None:
        if len(phoenix) > MAX_ROWS:
            return _too_many(name)
        groups: dict[str, list[dict[str, Any]]] = {}
        for row in phoenix:
            tid = otel.phoenix_trace_id(row)
            if tid:
                groups.setdefault(tid, []).append(row)
        return TraceFile(name, "phoenix", [TraceRows(t, r) for t, r in groups.items()])
    found = langfuse.extract_rows(value)
    if found is None:
        rows_given = value if isinstance(value, list) else value.get("data") if isinstance(value, dict) else None
        if isinstance(rows_given, list) and rows_given:
            return TraceFile(name, refused="no traceId values found (each Langfuse observation needs a traceId and an id)")
        return TraceFile(name, refused=f"unsupported trace JSON shape; expected {SHAPES}")
    rows, trace = found
    if len(rows) > MAX_ROWS:
        return _too_many(name)
    grouped = langfuse.group_rows(rows)
    return TraceFile(name, "langfuse", [TraceRows(t, r, trace) for t, r in grouped.items()],
                     project_ids=langfuse.project_ids(rows), project_names=langfuse.project_names(rows))


def spans_of(source: str, rows: list[dict[str, Any]]) -> list[Any]:
    """The rows of one trace (as `raw.json` keeps them) as spans of `spans.py`."""
    if source == "otlp":
        return [otel.otlp_span(r, i) for i, r in enumerate(rows)]
    if source == "phoenix":
        return [otel.phoenix_span(r, i) for i, r in enumerate(rows)]
    return langfuse.to_spans(rows)
