"""Langfuse observations -> spans, and the original app's per-row rules.

Shapes (`extract_rows`): a bare array of observations, `{"data": [...]}` (both as the
original reads them) and the web app's download `{"trace": {...}, "observations": [...]}`.
A file is Langfuse when at least one object row has a string `traceId` (or `trace_id`) and a
truthy `id`. The rules the original applies to rows — title, start and end, model, usage,
error — are here so `trace.json` matches it field for field; one exception (issue 40): a
`statusMessage` alone at the DEFAULT level is not an error.

Pure: no I/O.
"""

from __future__ import annotations

from typing import Any

from .messages import parse_messages
from .spans import Span, SpanUsage, as_record, decode_text, first_string, iso_ms, number

Row = dict[str, Any]

_KINDS = {"GENERATION": "generation", "TOOL": "tool", "AGENT": "agent", "SPAN": "span", "EVENT": "event",
          "CHAIN": "chain", "RETRIEVER": "retriever", "EMBEDDING": "embedding", "EVALUATOR": "evaluator",
          "GUARDRAIL": "guardrail"}


def is_observation(row: Any) -> bool:
    return isinstance(row, dict) and bool(first_string(row.get("traceId"), row.get("trace_id"))) and bool(row.get("id"))


def extract_rows(value: Any) -> tuple[list[Row], Row | None] | None:
    """(object rows, the download's `trace` object or None), or None when `value` is no Langfuse shape."""
    trace: Row | None = None
    if isinstance(value, list):
        rows = value
    elif isinstance(value, dict) and isinstance(value.get("data"), list):
        rows = value["data"]
    elif isinstance(value, dict) and isinstance(value.get("observations"), list):
        rows = value["observations"]
        trace = as_record(value.get("trace"))
    else:
        return None
    objects = [r for r in rows if isinstance(r, dict)]
    if not any(is_observation(r) for r in objects):
        return None
    return objects, trace


def trace_id_of(row: Row) -> str | None:
    return first_string(row.get("traceId"), row.get("trace_id"))


def group_rows(rows: list[Row]) -> dict[str, list[Row]]:
    """Rows by trace id, in file order (rows without a trace id are dropped, as the original does)."""
    groups: dict[str, list[Row]] = {}
    for row in rows:
        tid = trace_id_of(row)
        if tid:
            groups.setdefault(tid, []).append(row)
    return groups


def project_ids(rows: list[Row]) -> set[str]:
    return {p for r in rows if (p := first_string(r.get("projectId"), r.get("project_id")))}


def project_names(rows: list[Row]) -> set[str]:
    return {p for r in rows if (p := first_string(r.get("projectName"), r.get("project_name")))}


# -- the original's row rules ---------------------------------------------------------------


def row_start(row: Row) -> str | None:
    return first_string(row.get("startTime"), row.get("start_time"), row.get("timestamp"), row.get("createdAt"))


def row_end(row: Row) -> str | None:
    return first_string(row.get("endTime"), row.get("end_time"), row.get("updatedAt"))


def title_of(trace_id: str, rows: list[Row], trace: Row | None = None) -> str:
    found = first_string(*(r.get("traceName") for r in rows), *(r.get("trace_name") for r in rows),
                         *((as_record(r.get("trace")) or {}).get("name") for r in rows),
                         (trace or {}).get("name"), *(r.get("name") for r in rows))
    return found or f"Trace {trace_id[:8]}"


def model_of(rows: list[Row]) -> str | None:
    codex = codex_model(rows)
    if codex:
        return codex
    return first_string(*(r.get("model") for r in rows), *(r.get("providedModelName") for r in rows),
                        *(r.get("modelId") for r in rows))


def codex_model(rows: list[Row]) -> str | None:
    """`codex.model` in a row's decoded metadata, root rows first (the original's one mapped model)."""
    ordered = sorted(rows, key=lambda r: 0 if not first_string(r.get("parentObservationId"), r.get("parent_observation_id")) else 1)
    for row in ordered:
        meta = as_record(decode_text(row.get("metadata")))
        if meta is None:
            continue
        codex = as_record(meta.get("codex"))
        found = first_string((codex or {}).get("model"), meta.get("codex.model"))
        if found:
            return found
    return None


def usage_of(row: Row) -> SpanUsage | None:
    usage = as_record(row.get("usageDetails")) or as_record(row.get("usage")) or row
    cost = as_record(row.get("costDetails")) or as_record(row.get("cost")) or row

    def pick(record: Row, *keys: str) -> float:
        for key in keys:
            n = number(record.get(key))
            if n > 0:
                return n
        return 0

    u = SpanUsage(
        input=pick(usage, "input", "inputTokens", "promptTokens", "inputUsage"),
        output=pick(usage, "output", "outputTokens", "completionTokens", "outputUsage"),
        cache_read=pick(usage, "cacheRead", "cache_read", "input_cache_read", "cache_read_input_tokens"),
        cache_write=pick(usage, "cacheWrite", "cache_write", "input_cache_creation", "cache_creation_input_tokens"),
        cost_input=pick(cost, "input", "inputCost"),
        cost_output=pick(cost, "output", "outputCost"),
    )
    u.total_tokens = pick(usage, "total", "totalTokens", "total_tokens", "totalUsage") or (
        u.input + u.output + u.cache_read + u.cache_write)
    u.cost_total = pick(cost, "total", "totalCost", "total_cost") or number(row.get("totalCost"))
    return None if u.empty() else u


def row_error(row: Row) -> tuple[bool, str]:
    """(is it an error, its message) by the original's rule, except that a `statusMessage` at
    the DEFAULT level (or no level) alone is not an error."""
    level_value = first_string(row.get("level")) or ""
    level = (first_string(row.get("level"), row.get("statusMessage"), row.get("status")) or "").lower()
    message = first_string(row.get("statusMessage"), row.get("errorMessage"),
                           row.get("error") if isinstance(row.get("error"), str) else None) or ""
    if "error" in level or bool(row.get("error")) or bool(row.get("errorMessage")):
        return True, message
    status_message = row.get("statusMessage")
    if status_message and level_value.lower() not in ("success", "default", ""):
        return True, message
    return False, ""


# -- rows -> spans --------------------------------------------------------------------------


def _tool_call_id(row: Row) -> str | None:
    meta = as_record(decode_text(row.get("metadata")))
    if meta is None:
        return None
    flat: list[tuple[str, Any]] = list(meta.items())
    attrs = as_record(meta.get("attributes"))
    if attrs:
        flat.extend(attrs.items())
    for key, value in flat:
        if key.endswith(("tool.call.id", "tool_call_id", "toolCallId", "tool_call.id")) and isinstance(value, str):
            return value
    return None


def to_spans(rows: list[Row]) -> list[Span]:
    spans = []
    for order, row in enumerate(rows):
        kind_text = str(row.get("type") or "SPAN").upper()
        kind = _KINDS.get(kind_text, kind_text.lower())
        error, message = row_error(row)
        usage = usage_of(row)
        span = Span(
            id=str(row.get("id") or f"row-{order}"),
            trace_id=trace_id_of(row) or "",
            parent_id=first_string(row.get("parentObservationId"), row.get("parent_observation_id")),
            kind=kind,
            name=first_string(row.get("name")) or "",
            start_ms=iso_ms(row_start(row)),
            end_ms=iso_ms(first_string(row.get("endTime"), row.get("end_time"))),
            first_token_ms=iso_ms(row.get("completionStartTime")),
            model=first_string(row.get("model"), row.get("providedModelName"), row.get("modelId")),
            input_value=decode_text(row.get("input")),
            output_value=decode_text(row.get("output")),
            usage=usage,
            is_error=error,
            error_message=message,
            metadata=row.get("metadata"),
            order=order,
        )
        if kind == "generation" or kind not in ("tool",):
            span.inputs = parse_messages(span.input_value)
            span.outputs = parse_messages(span.output_value)
        if kind == "tool":
            span.tool_name = span.name
            span.tool_call_id = _tool_call_id(row)
        spans.append(span)
    return spans
