"""Adapter for the OpenAI Responses API (`POST {baseUrl}/responses`, `store: false`).

Request: the system prompt as `instructions`; `input` items — user messages with
`input_text` / `input_image` (data URL) parts, assistant text as an assistant message,
each tool call as a `function_call` item followed by its `function_call_output` (the
result text; a list of `input_text` and `input_image` items when the tool returned images);
tools as `{"type":"function", name, description, parameters, strict: false}`;
`max_output_tokens`; `temperature`; responseType → `text.format`
(`{"type":"json_object"}` or `{"type":"json_schema","name":"response","schema",strict:true}`);
`params.extra` merged last.

Reasoning level → `reasoning: {"effort", "summary": "auto"}` (only for models flagged
`reasoning`; `off` sends nothing): minimal → "minimal", low → "low", medium → "medium",
high → "high", xhigh → "high". With reasoning on, `include: ["reasoning.encrypted_content"]`
is asked for, and the encrypted reasoning items come back in `Finish.raw["replay"]
["reasoningItems"]`; handing them back in `NeutralMessage.extra["reasoningItems"]`
replays them before that assistant message (needed for reasoning across tool calls).

Stream: `response.output_text.delta` → text, `response.reasoning_summary_text.delta` and
`response.reasoning_text.delta` → thinking, `function_call` items and
`response.function_call_arguments.delta` → tool calls, `response.completed` /
`response.incomplete` → usage and finish, `response.failed` / `error` → `ErrorEvent`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from ..cancel import CancelToken
from .base import Api, ModelRequest
from .events import ErrorEvent, Finish, StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, UsageEvent
from .http import api_url, as_object, deep_merge, http_events, json_or_none
from .sse import StreamCheck

EFFORT = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}


def _reasoning_on(request: ModelRequest) -> bool:
    p = request.params
    return bool(p is not None and p.reasoning and p.reasoning != "off" and request.model.reasoning)


def _input_image(mime: str, data: str) -> dict[str, Any]:
    return {"type": "input_image", "image_url": f"data:{mime};base64,{data}", "detail": "auto"}


def _call_output(c: Any) -> str | list[dict[str, Any]]:
    """A `function_call_output`'s output: the text, or `input_text`/`input_image` items when the tool returned images."""
    if not c.result_images:
        return str(c.result_text)
    text = [{"type": "input_text", "text": c.result_text}] if c.result_text else []
    return text + [_input_image(mime, data) for mime, data in c.result_images]


def build_payload(request: ModelRequest) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for m in request.messages:
        if m.role == "user":
            parts: list[dict[str, Any]] = [{"type": "input_text", "text": m.text}] if m.text or not m.images else []
            parts += [_input_image(mime, data) for mime, data in m.images]
            items.append({"role": "user", "content": parts})
            continue
        for r in m.extra.get("reasoningItems") or ():
            if isinstance(r, dict):
                items.append(r)
        if m.text:
            items.append({"role": "assistant", "content": m.text})
        for c in m.tool_calls:
            items.append({"type": "function_call", "call_id": c.id, "name": c.name,
                          "arguments": json.dumps(c.arguments, ensure_ascii=False)})
        for c in m.tool_calls:
            items.append({"type": "function_call_output", "call_id": c.id, "output": _call_output(c)})
    payload: dict[str, Any] = {"model": request.model.id}
    if request.system_prompt:
        payload["instructions"] = request.system_prompt
    payload["input"] = items
    payload["stream"] = request.stream
    payload["store"] = False
    if request.tools:
        payload["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                             "parameters": t.parameters, "strict": False} for t in request.tools]
    p = request.params
    if p is not None:
        if p.maxTokens is not None:
            payload["max_output_tokens"] = p.maxTokens
        if p.temperature is not None:
            payload["temperature"] = p.temperature
        if _reasoning_on(request):
            payload["reasoning"] = {"effort": EFFORT.get(str(p.reasoning), "medium"), "summary": "auto"}
            payload["include"] = ["reasoning.encrypted_content"]
        rt = p.responseType
        kind = getattr(rt, "type", None)
        if kind == "json_object":
            payload["text"] = {"format": {"type": "json_object"}}
        elif kind == "json_schema":
            payload["text"] = {"format": {"type": "json_schema", "name": "response",
                                          "schema": getattr(rt, "jsonSchema", None) or {}, "strict": True}}
        deep_merge(payload, p.extra)
    return payload


def convert_usage(u: dict[str, Any]) -> UsageEvent:
    def num(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else 0

    inp = num(u.get("input_tokens"))
    det = as_object(u.get("input_tokens_details"))
    cached = min(num(det.get("cached_tokens")), inp)
    odet = as_object(u.get("output_tokens_details"))
    out = num(u.get("output_tokens"))
    total = u.get("total_tokens")
    return UsageEvent(input=inp - cached, output=out, cache_read=cached, cache_write=0,
                      reasoning=num(odet["reasoning_tokens"]) if "reasoning_tokens" in odet else None,
                      total=num(total) if total is not None else inp + out)


def _finish(resp: dict[str, Any], has_calls: bool) -> str:
    status = resp.get("status")
    if status == "incomplete":
        reason = (resp.get("incomplete_details") or {}).get("reason")
        return {"max_output_tokens": "length", "content_filter": "content_filter"}.get(str(reason), str(reason or "length"))
    return "tool_calls" if has_calls else "stop"


def _error_text(obj: Any) -> str:
    if isinstance(obj, dict):
        return str(obj.get("message") or obj.get("code") or json.dumps(obj))
    return str(obj)


class _Fold:
    def __init__(self) -> None:
        self.calls: dict[str, int] = {}  # item id / output index → our index
        self.args_seen: set[int] = set()
        self.ended: set[int] = set()
        self.reasoning_items: list[dict[str, Any]] = []
        self.last_summary: tuple[str, int] | None = None

    def key(self, ev: dict[str, Any]) -> str:
        return str(ev.get("item_id") or ev.get("output_index"))

    def start_call(self, item: dict[str, Any], output_index: Any) -> Iterator[StreamEvent]:
        i = len(self.calls)
        self.calls[str(item.get("id") or output_index)] = i
        if item.get("id") and output_index is not None:
            self.calls.setdefault(str(output_index), i)
        yield ToolCallStart(index=i, id=str(item.get("call_id") or item.get("id") or f"call_{i}"), name=str(item.get("name") or ""))


def parse_stream(events: Iterable[tuple[str, str]], cancel: CancelToken) -> Iterator[StreamEvent]:
    f = _Fold()
    check = StreamCheck()
    final: dict[str, Any] | None = None
    for _name, data in events:
        ev = check.saw(data, json_or_none(data))
        if not isinstance(ev, dict):
            continue
        t = ev.get("type") or _name
        if t == "response.output_text.delta":
            if ev.get("delta"):
                yield TextDelta(str(ev["delta"]))
        elif t in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            where = (str(ev.get("item_id")), int(ev.get("summary_index") or 0))
            if f.last_summary is not None and f.last_summary != where:
                yield ThinkingDelta("\n\n")
            f.last_summary = where
            if ev.get("delta"):
                yield ThinkingDelta(str(ev["delta"]))
        elif t == "response.output_item.added":
            item = ev.get("item") or {}
            if item.get("type") == "function_call":
                yield from f.start_call(item, ev.get("output_index"))
                if item.get("arguments"):
                    i = f.calls[str(item.get("id") or ev.get("output_index"))]
                    f.args_seen.add(i)
                    yield ToolCallArgsDelta(index=i, text=str(item["arguments"]))
        elif t == "response.function_call_arguments.delta":
            found = f.calls.get(f.key(ev), f.calls.get(str(ev.get("output_index"))))
            if found is not None and ev.get("delta"):
                f.args_seen.add(found)
                yield ToolCallArgsDelta(index=found, text=str(ev["delta"]))
        elif t == "response.output_item.done":
            item = ev.get("item") or {}
            if item.get("type") == "function_call":
                key = str(item.get("id") or ev.get("output_index"))
                if key not in f.calls:
                    yield from f.start_call(item, ev.get("output_index"))
                i = f.calls[key]
                if i not in f.args_seen and item.get("arguments"):
                    f.args_seen.add(i)
                    yield ToolCallArgsDelta(index=i, text=str(item["arguments"]))
                if i not in f.ended:
                    f.ended.add(i)
                    yield ToolCallEnd(index=i)
            elif item.get("type") == "reasoning" and item.get("encrypted_content"):
                f.reasoning_items.append(item)
        elif t in ("response.completed", "response.incomplete"):
            final = ev.get("response") or {}
            break
        elif t == "response.failed":
            err = (ev.get("response") or {}).get("error")
            yield ErrorEvent(message=f"The model call failed: {_error_text(err)}", in_stream=True)
            return
        elif t == "error":
            status = ev.get("code") if isinstance(ev.get("code"), int) else None
            yield ErrorEvent(message=f"The server reported an error mid-stream: {_error_text(ev.get('error') or ev)}", status=status,
                             in_stream=True)
            return
    if cancel.cancelled:
        yield Finish("aborted")
        return
    for i in range(len(set(f.calls.values()))):
        if i not in f.ended:
            yield ToolCallEnd(index=i)
    if final is None:
        yield check.error() or ErrorEvent(message="The stream ended before the response was complete.", retryable=True)
        return
    if isinstance(final.get("usage"), dict):
        yield convert_usage(final["usage"])
    raw = {"replay": {"reasoningItems": f.reasoning_items}} if f.reasoning_items else {}
    yield Finish(_finish(final, bool(f.calls)), raw)


def parse_whole(value: dict[str, Any]) -> Iterator[StreamEvent]:
    if value.get("status") == "failed":
        yield ErrorEvent(message=f"The model call failed: {_error_text(value.get('error'))}")
        return
    calls = 0
    reasoning_items = []
    for item in value.get("output") or ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "reasoning":
            text = "\n\n".join(str(s.get("text", "")) for s in item.get("summary") or () if isinstance(s, dict))
            if text:
                yield ThinkingDelta(text)
            if item.get("encrypted_content"):
                reasoning_items.append(item)
        elif kind == "message":
            for part in item.get("content") or ():
                if isinstance(part, dict) and part.get("type") == "output_text" and part.get("text"):
                    yield TextDelta(str(part["text"]))
        elif kind == "function_call":
            yield ToolCallStart(index=calls, id=str(item.get("call_id") or item.get("id") or f"call_{calls}"), name=str(item.get("name") or ""))
            if item.get("arguments"):
                yield ToolCallArgsDelta(index=calls, text=str(item["arguments"]))
            yield ToolCallEnd(index=calls)
            calls += 1
    if isinstance(value.get("usage"), dict):
        yield convert_usage(value["usage"])
    raw = {"replay": {"reasoningItems": reasoning_items}} if reasoning_items else {}
    yield Finish(_finish(value, calls > 0), raw)


class OpenAIResponsesAdapter:
    api: Api = "openai-responses"

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        ep = request.endpoint
        headers = {"Authorization": f"Bearer {ep.api_key}"} if ep.api_key else {}
        yield from http_events(request, cancel, api_url(ep.base_url, "/responses"), build_payload(request), headers,
                               parse_stream, parse_whole)
