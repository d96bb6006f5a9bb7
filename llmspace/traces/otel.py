"""OpenTelemetry spans -> spans: OTLP JSON (`ExportTraceServiceRequest`) and Phoenix's span listing.

Both carry flat attributes; the GenAI ones are read in either convention:
- OpenTelemetry GenAI (`gen_ai.*`): `gen_ai.operation.name` (`chat`, `text_completion`,
  `generate_content` -> generation; `execute_tool` -> tool; `invoke_agent`/`create_agent` ->
  agent), `gen_ai.input.messages` / `gen_ai.output.messages` (messages as `parts`),
  `gen_ai.system_instructions`, the older `gen_ai.prompt` / `gen_ai.completion` (JSON or
  flat `gen_ai.prompt.N.role`), `gen_ai.usage.*`, `gen_ai.request.model` /
  `gen_ai.response.model`, `gen_ai.tool.name` / `.call.id` / `.call.arguments` / `.call.result`;
- OpenInference: `openinference.span.kind` (LLM, TOOL, AGENT, CHAIN, …),
  `llm.input_messages.N.message.*`, `llm.output_messages…`, `llm.token_count.*`,
  `llm.model_name`, `tool.name`, `tool_call.*`, `input.value` / `output.value`.

An OTLP document's `resourceSpans[].scopeSpans[].spans[]` are the rows; a JSON Lines file
holds one document per line (a collector's file exporter). A Phoenix listing is
`{data: [{name, context: {trace_id, span_id}, span_kind, parent_id, start_time, …}], next_cursor}`.

Pure: no I/O.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any

from .messages import parse_messages, unflatten
from .spans import Msg, Span, SpanUsage, as_record, decode_text, first_string, iso_ms, number

Row = dict[str, Any]

_GENERATION_OPS = {"chat", "text_completion", "generate_content", "completion", "responses"}
_AGENT_OPS = {"invoke_agent", "create_agent"}
_OI_KINDS = {"LLM": "generation", "TOOL": "tool", "AGENT": "agent", "CHAIN": "chain"}


# -- OTLP documents -------------------------------------------------------------------------


def is_otlp_document(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("resourceSpans"), list)


def otlp_rows(document: Row) -> list[Row]:
    """Every span of one `ExportTraceServiceRequest`, each with its resource's attributes under
    `resource` (kept so `raw.json` holds what is needed to read the span again)."""
    rows: list[Row] = []
    for resource_spans in document.get("resourceSpans") or []:
        if not isinstance(resource_spans, dict):
            continue
        resource = as_record(resource_spans.get("resource")) or {}
        for scope_spans in resource_spans.get("scopeSpans") or resource_spans.get("instrumentationLibrarySpans") or []:
            if not isinstance(scope_spans, dict):
                continue
            for span in scope_spans.get("spans") or []:
                if isinstance(span, dict):
                    rows.append({**span, "resource": resource} if resource else span)
    return rows


def any_value(value: Any) -> Any:
    """An OTLP `AnyValue` (`{stringValue: …}`, `{intValue: "3"}`, arrays, key-value lists) as plain JSON."""
    record = as_record(value)
    if record is None:
        return value
    if "stringValue" in record:
        return record["stringValue"]
    if "intValue" in record:
        try:
            return int(record["intValue"])
        except (TypeError, ValueError):
            return record["intValue"]
    if "doubleValue" in record:
        return record["doubleValue"]
    if "boolValue" in record:
        return record["boolValue"]
    if "arrayValue" in record:
        return [any_value(v) for v in (as_record(record["arrayValue"]) or {}).get("values") or []]
    if "kvlistValue" in record:
        return {kv.get("key"): any_value(kv.get("value")) for kv in (as_record(record["kvlistValue"]) or {}).get("values") or []
                if isinstance(kv, dict)}
    if "bytesValue" in record:
        return record["bytesValue"]
    return None


def otlp_attributes(items: Any) -> dict[str, Any]:
    if isinstance(items, dict):  # already a map (some exporters)
        return flatten(items)
    out: dict[str, Any] = {}
    for item in items or []:
        if isinstance(item, dict) and isinstance(item.get("key"), str):
            out[item["key"]] = any_value(item.get("value"))
    return out


def flatten(value: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested attribute maps as flat dotted keys (lists of scalars stay lists)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, dict):
            out.update(flatten(item, name + "."))
        else:
            out[name] = item
    return out


def hex_id(value: Any) -> str:
    """A trace or span id as lowercase hex (OTLP JSON writes hex; some exporters write base64)."""
    if not isinstance(value, str) or not value:
        return ""
    text = value.strip()
    if all(c in "0123456789abcdefABCDEF" for c in text) and len(text) in (16, 32):
        return text.lower()
    if len(text) in (12, 24):
        try:
            return base64.b64decode(text, validate=True).hex()
        except (binascii.Error, ValueError):
            pass
    return text


def otlp_trace_id(row: Row) -> str:
    return hex_id(row.get("traceId") or row.get("trace_id"))


def _status(row: Row) -> tuple[bool, str]:
    status = as_record(row.get("status")) or {}
    code = status.get("code")
    error = code in (2, "2", "STATUS_CODE_ERROR", "ERROR")
    return error, str(status.get("message") or "")


def otlp_span(row: Row, order: int) -> Span:
    attrs = otlp_attributes(row.get("attributes"))
    error, message = _status(row)
    span = Span(
        id=hex_id(row.get("spanId") or row.get("span_id")) or f"span-{order}",
        trace_id=otlp_trace_id(row),
        parent_id=hex_id(row.get("parentSpanId") or row.get("parent_span_id")) or None,
        name=str(row.get("name") or ""),
        start_ms=_nanos_ms(row.get("startTimeUnixNano")),
        end_ms=_nanos_ms(row.get("endTimeUnixNano")),
        is_error=error,
        error_message=message,
        order=order,
    )
    _events_to_attributes(row.get("events"), attrs)
    _read_attributes(span, attrs)
    return span


def _nanos_ms(value: Any) -> float | None:
    n = number(value)
    return n / 1e6 if n else None


def _events_to_attributes(events: Any, attrs: dict[str, Any]) -> None:
    """Exception events become the error message; nothing else is read from events."""
    for event in events or []:
        if isinstance(event, dict) and event.get("name") == "exception":
            values = otlp_attributes(event.get("attributes"))
            attrs.setdefault("exception.message", values.get("exception.message"))


# -- Phoenix --------------------------------------------------------------------------------


def is_phoenix_span(row: Any) -> bool:
    return isinstance(row, dict) and isinstance(row.get("context"), dict) and "span_id" in row["context"]


def phoenix_rows(value: Any) -> list[Row] | None:
    """The spans of a Phoenix listing (`{data: [...], next_cursor}` or a bare list), or None."""
    rows = value.get("data") if isinstance(value, dict) else value
    if not isinstance(rows, list):
        return None
    objects = [r for r in rows if isinstance(r, dict)]
    return objects if any(is_phoenix_span(r) for r in objects) else None


def phoenix_trace_id(row: Row) -> str:
    return str((as_record(row.get("context")) or {}).get("trace_id") or "")


def phoenix_span(row: Row, order: int) -> Span:
    context = as_record(row.get("context")) or {}
    attrs = row.get("attributes")
    flat = flatten(attrs) if isinstance(attrs, dict) else {}
    status = str(row.get("status_code") or "").upper()
    span = Span(
        id=str(context.get("span_id") or f"span-{order}"),
        trace_id=str(context.get("trace_id") or ""),
        parent_id=first_string(row.get("parent_id")),
        name=str(row.get("name") or ""),
        start_ms=iso_ms(row.get("start_time")),
        end_ms=iso_ms(row.get("end_time")),
        is_error=status == "ERROR",
        error_message=str(row.get("status_message") or ""),
        order=order,
    )
    kind = str(row.get("span_kind") or "").upper()
    if kind and "openinference.span.kind" not in flat:
        flat["openinference.span.kind"] = kind
    _read_attributes(span, flat)
    return span


# -- attributes -> span fields --------------------------------------------------------------


def _kind(attrs: dict[str, Any], name: str) -> str:
    op = str(attrs.get("gen_ai.operation.name") or "").lower()
    oi = str(attrs.get("openinference.span.kind") or "").upper()
    if op in _GENERATION_OPS:
        return "generation"
    if op == "execute_tool":
        return "tool"
    if op in _AGENT_OPS:
        return "agent"
    if oi in _OI_KINDS:
        return _OI_KINDS[oi]
    if oi:
        return oi.lower()
    first = name.split(" ", 1)[0].lower()
    if first in _GENERATION_OPS:
        return "generation"
    if first == "execute_tool":
        return "tool"
    if first in _AGENT_OPS:
        return "agent"
    return "span"


def _messages(attrs: dict[str, Any], *keys: str) -> list[Msg] | None:
    for key in keys:
        if key in attrs:
            found = parse_messages(attrs[key])
            if found:
                return found
        flat = unflatten(attrs, key)
        if flat:
            found = parse_messages(flat)
            if found:
                return found
    return None


def _usage(attrs: dict[str, Any]) -> SpanUsage | None:
    def pick(*keys: str) -> float:
        for key in keys:
            n = number(attrs.get(key))
            if n:
                return n
        return 0

    u = SpanUsage(
        input=pick("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
        output=pick("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens", "llm.token_count.completion"),
        cache_read=pick("gen_ai.usage.cache_read.input_tokens", "gen_ai.usage.cache_read_input_tokens",
                        "llm.token_count.prompt_details.cache_read"),
        cache_write=pick("gen_ai.usage.cache_creation.input_tokens", "gen_ai.usage.cache_creation_input_tokens",
                         "llm.token_count.prompt_details.cache_write"),
        cost_total=pick("llm.cost.total", "gen_ai.usage.cost"),
    )
    u.total_tokens = pick("llm.token_count.total", "gen_ai.usage.total_tokens") or (u.input + u.output)
    return None if u.empty() else u


def _system_texts(value: Any) -> list[str]:
    value = decode_text(value)
    if isinstance(value, str):
        return [value] if value.strip() else []
    items = value if isinstance(value, list) else [value]
    texts = []
    for item in items:
        record = as_record(item)
        text = first_string(item if isinstance(item, str) else None, (record or {}).get("content"), (record or {}).get("text"))
        if text:
            texts.append(text)
    return texts


def _read_attributes(span: Span, attrs: dict[str, Any]) -> None:
    span.kind = _kind(attrs, span.name)
    span.model = first_string(attrs.get("gen_ai.response.model"), attrs.get("gen_ai.request.model"), attrs.get("llm.model_name"))
    span.provider = first_string(attrs.get("gen_ai.provider.name"), attrs.get("gen_ai.system"), attrs.get("llm.provider"),
                                 attrs.get("llm.system"))
    span.usage = _usage(attrs)
    span.input_value = decode_text(attrs.get("input.value"))
    span.output_value = decode_text(attrs.get("output.value"))
    span.system = _system_texts(attrs["gen_ai.system_instructions"]) if "gen_ai.system_instructions" in attrs else []
    span.inputs = _messages(attrs, "gen_ai.input.messages", "llm.input_messages", "gen_ai.prompt")
    span.outputs = _messages(attrs, "gen_ai.output.messages", "llm.output_messages", "gen_ai.completion")
    if span.kind == "generation":
        if span.inputs is None and span.input_value is not None:
            span.inputs = parse_messages(span.input_value)
        if span.outputs is None and span.output_value is not None:
            span.outputs = parse_messages(span.output_value)
    if span.kind == "tool":
        span.tool_name = first_string(attrs.get("gen_ai.tool.name"), attrs.get("tool.name"), attrs.get("tool_call.function.name"),
                                      span.name.removeprefix("execute_tool").strip() or None)
        span.tool_call_id = first_string(attrs.get("gen_ai.tool.call.id"), attrs.get("tool_call.id"))
        arguments = next((attrs[k] for k in ("gen_ai.tool.call.arguments", "tool_call.function.arguments", "input.value")
                          if attrs.get(k) is not None), None)
        span.input_value = decode_text(arguments)
        result = next((attrs[k] for k in ("gen_ai.tool.call.result", "output.value") if attrs.get(k) is not None), None)
        span.output_value = decode_text(result)
    if not span.error_message:
        span.error_message = first_string(attrs.get("exception.message"), attrs.get("error.message")) or ""
    if attrs.get("error.type") and not span.is_error:
        span.is_error = True
        span.error_message = span.error_message or str(attrs["error.type"])
    span.metadata = {k: v for k, v in attrs.items() if not k.startswith(("llm.input_messages", "llm.output_messages"))
                     and k not in ("gen_ai.input.messages", "gen_ai.output.messages", "input.value", "output.value")}

