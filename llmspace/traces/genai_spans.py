"""Our call traces -> OpenTelemetry GenAI span specs (names, kinds, times, attributes, events).

The inputs are the documents `providers/traces.py` writes under `traces/calls/` (one per model
call, `kind: "model"`, and per tool call, `kind: "tool"`), plus a run's start and end and an
evaluation's verdicts. The attribute names are those of `traces/genai_names.py`:

- a run -> `invoke_agent {title}` (INTERNAL) with `gen_ai.conversation.id` = the run id and the
  thread's path under `llmspace.thread.path`;
- a model call -> `chat {model}` (CLIENT): operation, provider, request model and parameters
  (read from the HTTP payload the trace keeps), response id/model/finish reasons, usage,
  `server.address`/`server.port` (host and port only), time to first chunk;
- a tool call -> `execute_tool {name}` (INTERNAL) with `gen_ai.tool.{name,call.id,type}`;
- an error -> `error.type` and an ERROR status with the (already redacted) message;
- an evaluation cell (a dict of `evals/traced.py`) -> `evaluate {case}` (INTERNAL) with each
  check as a `gen_ai.evaluation.result` event (a judge's verdict joins its cell's span).

With `capture` on, the content attributes are added (`gen_ai.system_instructions`,
`gen_ai.input.messages`, `gen_ai.output.messages` in the conventions' `parts` JSON,
`gen_ai.tool.definitions`, `gen_ai.tool.call.arguments`, `gen_ai.tool.call.result`); images are
left out and `llmspace.content.note` says how many. With it off none of them is set. The trace
files have already passed the redactor; content that did not come from them (a judge's
explanation) is redacted by the caller.

Pure: no I/O, no OpenTelemetry import.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import urlsplit

import orjson

from . import genai_names as N
from .messages import parse_messages
from .spans import Msg, Part

AttrValue = str | bool | int | float | list[str]


@dataclass
class SpanSpec:
    """One span to emit: times in nanoseconds since the epoch; `kind` "client" or "internal"."""

    name: str
    kind: str
    start_ns: int
    end_ns: int
    attributes: dict[str, AttrValue] = field(default_factory=dict)
    error: str | None = None
    events: list[tuple[str, dict[str, AttrValue]]] = field(default_factory=list)


_PARAMS = (
    (N.REQUEST_MAX_TOKENS, ("max_tokens", "max_completion_tokens", "max_output_tokens")),
    (N.REQUEST_TEMPERATURE, ("temperature",)), (N.REQUEST_TOP_P, ("top_p",)), (N.REQUEST_TOP_K, ("top_k",)),
    (N.REQUEST_SEED, ("seed",)), (N.REQUEST_FREQUENCY_PENALTY, ("frequency_penalty",)),
    (N.REQUEST_PRESENCE_PENALTY, ("presence_penalty",)), (N.REQUEST_STREAM, ("stream",)),
)


def _json(value: Any) -> str:
    return orjson.dumps(value).decode("utf-8")


def _ns(iso: Any) -> int | None:
    if not isinstance(iso, str):
        return None
    try:
        return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1_000_000_000)
    except ValueError:
        return None


def _duration_ns(doc: dict[str, Any]) -> int:
    timing = doc.get("timing") if isinstance(doc.get("timing"), dict) else {}
    ms = timing.get("durationMs") if isinstance(timing, dict) else None
    return int(float(ms) * 1_000_000) if isinstance(ms, (int, float)) else 0


def error_type(message: str) -> str:
    """A low-cardinality `error.type` for an error message: its leading name ("TimeoutError: …",
    "HTTP 429 …" -> "429"), else `_OTHER`."""
    head = message.strip().split(":", 1)[0].strip()
    words = head.split()
    if len(words) >= 2 and words[0].upper() == "HTTP" and words[1].isdigit():
        return words[1]
    if head and len(words) == 1 and head.replace("_", "").replace(".", "").isalnum():
        return head
    return "_OTHER"


def provider_name(provider_id: str) -> str:
    """The conventions' well-known provider name, else our provider id."""
    return N.PROVIDER_NAMES.get(provider_id, provider_id)


def server_attributes(base_url: Any) -> dict[str, AttrValue]:
    """`server.address` and `server.port` of a URL: host and port only (no userinfo, path or query)."""
    if not isinstance(base_url, str) or not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return {}
    if not host:
        return {}
    attrs: dict[str, AttrValue] = {N.SERVER_ADDRESS: host}
    port = port or {"https": 443, "http": 80}.get(parts.scheme)
    if port:
        attrs[N.SERVER_PORT] = port
    return attrs


# -- runs ----------------------------------------------------------------------------------


def run_attributes(run_id: str, provider: str, model: str, thread_path: str | None) -> dict[str, AttrValue]:
    attrs: dict[str, AttrValue] = {N.OPERATION_NAME: N.OP_INVOKE_AGENT, N.CONVERSATION_ID: run_id,
                                   N.PROVIDER_NAME: provider_name(provider), N.REQUEST_MODEL: model}
    if thread_path:
        attrs[N.THREAD_PATH] = thread_path
    return attrs


def run_name(title: str) -> str:
    return f"{N.OP_INVOKE_AGENT} {title}".strip()


# -- model calls ---------------------------------------------------------------------------


def _events(doc: dict[str, Any]) -> list[dict[str, Any]]:
    events = doc.get("events")
    return [e for e in events if isinstance(e, dict)] if isinstance(events, list) else []


def _output_message(events: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    calls: dict[int, dict[str, Any]] = {}
    for e in events:
        kind = e.get("type")
        if kind == "ThinkingDelta" and e.get("text"):
            parts.append({"type": "reasoning", "content": e["text"]})
        elif kind == "TextDelta" and e.get("text"):
            parts.append({"type": "text", "content": e["text"]})
        elif kind == "ToolCallStart":
            call = {"type": "tool_call", "id": e.get("id", ""), "name": e.get("name", ""), "arguments": ""}
            calls[int(e.get("index", 0))] = call
            parts.append(call)
        elif kind == "ToolCallArgsDelta" and int(e.get("index", 0)) in calls:
            calls[int(e.get("index", 0))]["arguments"] += e.get("text", "")
    for call in calls.values():
        try:
            call["arguments"] = orjson.loads(call["arguments"]) if call["arguments"] else {}
        except orjson.JSONDecodeError:
            pass  # kept as the text the model sent
    return {"role": "assistant", "parts": parts, "finish_reason": finish or "stop"}


def _part_json(part: Part) -> dict[str, Any] | None:
    if part.kind == "text":
        return {"type": "text", "content": part.text}
    if part.kind == "reasoning":
        return {"type": "reasoning", "content": part.text}
    if part.kind == "tool_call":
        return {"type": "tool_call", "id": part.call_id, "name": part.name, "arguments": part.arguments}
    if part.kind == "tool_result":
        return {"type": "tool_call_response", "id": part.call_id, "response": part.text}
    return None  # images are left out


def messages_json(messages: list[Msg]) -> tuple[list[dict[str, Any]], int]:
    """Messages in the conventions' `parts` shape, and how many images were left out."""
    out, images = [], 0
    for m in messages:
        parts = []
        for p in m.parts:
            j = _part_json(p)
            if j is None:
                images += 1
            elif not (p.kind == "text" and p.text.startswith("[image")):
                parts.append(j)
            else:
                images += 1
        out.append({"role": m.role, "parts": parts})
    return out, images


def _system_texts(payload: dict[str, Any]) -> list[str]:
    system = payload.get("system", payload.get("instructions"))
    if isinstance(system, str):
        return [system] if system else []
    if isinstance(system, list):
        return [b["text"] for b in system if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return []


def _content(payload: dict[str, Any], events: list[dict[str, Any]], finish: str | None) -> dict[str, AttrValue]:
    attrs: dict[str, AttrValue] = {}
    messages = parse_messages({"messages": payload.get("messages", payload.get("input", []))}) or []
    system = _system_texts(payload) + [m.text() for m in messages if m.role in ("system", "developer")]
    messages = [m for m in messages if m.role not in ("system", "developer")]
    if system:
        attrs[N.SYSTEM_INSTRUCTIONS] = _json([{"type": "text", "content": t} for t in system])
    inputs, images = messages_json(messages)
    attrs[N.INPUT_MESSAGES] = _json(inputs)
    attrs[N.OUTPUT_MESSAGES] = _json([_output_message(events, finish)])
    if isinstance(payload.get("tools"), list) and payload["tools"]:
        attrs[N.TOOL_DEFINITIONS] = _json(payload["tools"])
    if images:
        attrs[N.CONTENT_NOTE] = f"{images} image(s) left out of the messages"
    return attrs


def model_call_span(doc: dict[str, Any], capture: bool) -> SpanSpec:
    """The `chat {model}` span of one model-call trace document."""
    model = str(doc.get("model") or "")
    end = _ns(doc.get("startedAt")) or 0  # a model trace is stamped when the call ended
    start = end - _duration_ns(doc)
    events = _events(doc)
    payload = doc.get("request") if isinstance(doc.get("request"), dict) else {}
    assert isinstance(payload, dict)
    attrs: dict[str, AttrValue] = {N.OPERATION_NAME: N.OP_CHAT, N.PROVIDER_NAME: provider_name(str(doc.get("provider") or "")),
                                   N.REQUEST_MODEL: model}
    for name, keys in _PARAMS:
        for key in keys:
            value = payload.get(key)
            if (isinstance(value, (int, float)) and not isinstance(value, bool)) or (name == N.REQUEST_STREAM and isinstance(value, bool)):
                attrs[name] = value
                break
    stop = payload.get("stop", payload.get("stop_sequences"))
    if isinstance(stop, str):
        stop = [stop]
    if isinstance(stop, list) and stop and all(isinstance(s, str) for s in stop):
        attrs[N.REQUEST_STOP_SEQUENCES] = list(stop)
    finish: str | None = None
    response_model = model
    for e in events:
        if e.get("type") == "Finish":
            finish = str(e.get("reason") or "")
            raw = e.get("raw") if isinstance(e.get("raw"), dict) else {}
            if isinstance(raw, dict):
                if isinstance(raw.get("id"), str):
                    attrs[N.RESPONSE_ID] = raw["id"]
                if isinstance(raw.get("model"), str):
                    response_model = raw["model"]
        elif e.get("type") == "UsageEvent":
            attrs[N.USAGE_INPUT_TOKENS] = int(e.get("input") or 0)
            attrs[N.USAGE_OUTPUT_TOKENS] = int(e.get("output") or 0)
            if e.get("cache_read"):
                attrs[N.USAGE_CACHE_READ_INPUT_TOKENS] = int(e["cache_read"])
            if e.get("cache_write"):
                attrs[N.USAGE_CACHE_CREATION_INPUT_TOKENS] = int(e["cache_write"])
            if e.get("reasoning"):
                attrs[N.USAGE_REASONING_OUTPUT_TOKENS] = int(e["reasoning"])
    attrs[N.RESPONSE_MODEL] = response_model
    if finish:
        attrs[N.RESPONSE_FINISH_REASONS] = [finish]
    timing = doc.get("timing") if isinstance(doc.get("timing"), dict) else {}
    if isinstance(timing, dict) and isinstance(timing.get("firstTokenMs"), (int, float)):
        attrs[N.RESPONSE_TIME_TO_FIRST_CHUNK] = float(timing["firstTokenMs"]) / 1000
    attrs.update(server_attributes(doc.get("baseUrl")))
    if isinstance(doc.get("step"), int):
        attrs[N.RUN_STEP] = doc["step"]
    if capture:
        attrs.update(_content(payload, events, finish))
    error = doc.get("error") if isinstance(doc.get("error"), str) and doc.get("error") else None
    if error:
        attrs[N.ERROR_TYPE] = error_type(error)
    return SpanSpec(f"{N.OP_CHAT} {model}".strip(), "client", start, max(start, end), attrs, error)


# -- tool calls ----------------------------------------------------------------------------


def tool_start_attributes(name: str, call_id: str) -> dict[str, AttrValue]:
    """What a tool span carries from its start (before its result is known)."""
    return {N.OPERATION_NAME: N.OP_EXECUTE_TOOL, N.TOOL_NAME: name, N.TOOL_CALL_ID: call_id, N.TOOL_TYPE: "function"}


def tool_call_span(doc: dict[str, Any], capture: bool) -> SpanSpec:
    """The `execute_tool {name}` span of one tool-call trace document."""
    name = str(doc.get("tool") or "")
    start = _ns(doc.get("startedAt")) or 0
    attrs = tool_start_attributes(name, str(doc.get("callId") or ""))
    if isinstance(doc.get("step"), int):
        attrs[N.RUN_STEP] = doc["step"]
    result = doc.get("result") if isinstance(doc.get("result"), dict) else {}
    assert isinstance(result, dict)
    if capture:
        args = doc.get("arguments")
        attrs[N.TOOL_CALL_ARGUMENTS] = args if isinstance(args, str) else _json(args)
        attrs[N.TOOL_CALL_RESULT] = str(result.get("text") or "")
    error: str | None = None
    if result.get("isError"):
        attrs[N.ERROR_TYPE] = "tool_error"
        error = "the tool returned an error" if not capture else str(result.get("text") or "tool error")[:500]
    return SpanSpec(f"{N.OP_EXECUTE_TOOL} {name}".strip(), "internal", start, start + _duration_ns(doc), attrs, error)


def call_span(doc: dict[str, Any], capture: bool) -> SpanSpec | None:
    """The span of a trace document of either kind (None for anything else)."""
    if doc.get("kind") == "model":
        return model_call_span(doc, capture)
    if doc.get("kind") == "tool":
        return tool_call_span(doc, capture)
    return None


# -- evaluations ---------------------------------------------------------------------------


def check_event(check: dict[str, Any], capture: bool, redact: Callable[[str], str]) -> tuple[str, dict[str, AttrValue]]:
    """The `gen_ai.evaluation.result` event of one check of an evaluation cell (or a judge's verdict):
    its score (a judge's mean criterion score, else 1 or 0), `pass`/`fail`, the reason with capture on."""
    passed = bool(check.get("pass"))
    score = check.get("score")
    value = float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else (1.0 if passed else 0.0)
    reason = check.get("reason")
    return evaluation_event(str(check.get("assertion") or "check"), value, "pass" if passed else "fail",
                            redact(reason) if isinstance(reason, str) and reason else None, capture)


def cell_span(data: dict[str, Any], capture: bool, redact: Callable[[str], str]) -> SpanSpec:
    """The span of an evaluation cell record (`evals/traced.py`), its checks as events."""
    end = int(float(data.get("finishedAt") or 0) * 1_000_000)
    latency = data.get("latencyMs")
    start = end - (int(float(latency) * 1_000_000) if isinstance(latency, (int, float)) else 0)
    attrs: dict[str, AttrValue] = {N.EVAL_CASE: str(data.get("case") or ""), N.EVAL_MODEL: str(data.get("model") or ""),
                                   N.EVAL_VARIANT: str(data.get("variant") or ""), N.EVAL_REPEAT: int(data.get("repeat") or 0)}
    checks = [c for c in data.get("checks") or [] if isinstance(c, dict)]
    attrs[N.EVAL_PASSED] = all(bool(c.get("pass")) for c in checks) and not data.get("error")
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else None
    if usage:
        attrs[N.USAGE_INPUT_TOKENS] = int(usage.get("input") or 0)
        attrs[N.USAGE_OUTPUT_TOKENS] = int(usage.get("output") or 0)
    error = data.get("error") if isinstance(data.get("error"), str) and data.get("error") else None
    if error:
        attrs[N.ERROR_TYPE] = error_type(error)
        error = redact(error) if capture else "the cell failed"
    return SpanSpec(f"evaluate {attrs[N.EVAL_CASE]}".strip(), "internal", start, max(start, end), attrs, error,
                    [check_event(c, capture, redact) for c in checks])


def evaluation_event(name: str, score: float | None, label: str | None, explanation: str | None,
                     capture: bool) -> tuple[str, dict[str, AttrValue]]:
    """A `gen_ai.evaluation.result` event; the explanation only with `capture` on."""
    attrs: dict[str, AttrValue] = {N.EVALUATION_NAME: name}
    if score is not None:
        attrs[N.EVALUATION_SCORE_VALUE] = float(score)
    if label:
        attrs[N.EVALUATION_SCORE_LABEL] = label
    if capture and explanation:
        attrs[N.EVALUATION_EXPLANATION] = explanation
    return N.EVALUATION_RESULT_EVENT, attrs
