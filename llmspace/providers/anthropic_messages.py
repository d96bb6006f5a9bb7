"""Adapter for the Anthropic Messages API (`POST {baseUrl}/messages`, version 2023-06-01).

Request: `system` (the rendered system prompt); user content as `text` and base64 `image`
blocks; assistant content as signed `thinking` blocks (replayed only when the signature
is known — `NeutralMessage.extra["thinkingSignature"]`, plus `extra["redactedThinking"]`
data), `text`, `tool_use`; then one user message with a `tool_result` per call (its text;
`text` and base64 `image` blocks when the tool returned images) (merged
with a following user message, since roles must alternate); empty text blocks are left
out; tool ids are made to match `^[a-zA-Z0-9_-]+$`; tools as `{name, description,
input_schema}`; `max_tokens` (required: the param, else min(model max, 8192));
`temperature` (not sent with thinking, which requires the default); responseType
json_schema → `output_config.format {type:"json_schema", name:"response", schema}`
(json_object has no Anthropic form and is left out); `params.extra` merged last.
Headers: `x-api-key`, `anthropic-version`.

Reasoning level → `thinking: {"type":"enabled","budget_tokens": N}` (only for models
flagged `reasoning`; `off` sends nothing): minimal 1024, low 2048, medium 8192, high
16384, xhigh 16384 (clamped to high). `max_tokens` is raised above the budget when needed.

Stream: `message_start` (input/cache usage), `content_block_start/delta/stop` with
`text_delta`, `thinking_delta`, `signature_delta`, `input_json_delta`, `message_delta`
(stop reason, output usage), `message_stop`, and `error` events. The thinking signature
comes back in `Finish.raw["replay"]["thinkingSignature"]`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from ..cancel import CancelToken
from .base import Api, ModelRequest
from .events import ErrorEvent, Finish, StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, UsageEvent
from .http import api_url, deep_merge, http_events, json_or_none
from .sse import StreamCheck

VERSION = "2023-06-01"
BUDGET = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 16384, "xhigh": 16384}
STOP = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls",
        "refusal": "content_filter", "model_context_window_exceeded": "length"}
_BAD_ID = re.compile(r"[^a-zA-Z0-9_-]")


def tool_id(raw: str) -> str:
    return _BAD_ID.sub("_", raw)[:64] or "toolu_0"


def _image_block(mime: str, data: str) -> dict[str, Any]:
    return {"type": "image", "source": {"type": "base64", "media_type": mime, "data": data}}


def _tool_result(c: Any) -> dict[str, Any]:
    """A `tool_result` block: the text as a string, or text and image blocks when the tool returned images."""
    r: dict[str, Any] = {"type": "tool_result", "tool_use_id": tool_id(c.id)}
    if c.result_images:
        text = [{"type": "text", "text": c.result_text}] if c.result_text else []
        r["content"] = text + [_image_block(mime, data) for mime, data in c.result_images]
    elif c.result_text:
        r["content"] = c.result_text
    if c.result_is_error:
        r["is_error"] = True
    return r


def _blocks_for(m: Any) -> list[dict[str, Any]]:
    if m.role == "user":
        blocks: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text.strip() else []
        blocks += [_image_block(mime, data) for mime, data in m.images]
        return blocks
    blocks = []
    sig = m.extra.get("thinkingSignature")
    if m.thinking and isinstance(sig, str) and sig:
        blocks.append({"type": "thinking", "thinking": m.thinking, "signature": sig})
    for data in m.extra.get("redactedThinking") or ():
        blocks.append({"type": "redacted_thinking", "data": data})
    if m.text.strip():
        blocks.append({"type": "text", "text": m.text})
    for c in m.tool_calls:
        blocks.append({"type": "tool_use", "id": tool_id(c.id), "name": c.name, "input": c.arguments})
    return blocks


def build_messages(request: ModelRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for m in request.messages:
        add(m.role, _blocks_for(m))
        if m.role == "assistant" and m.tool_calls:
            add("user", [_tool_result(c) for c in m.tool_calls])
    return out


def build_payload(request: ModelRequest) -> dict[str, Any]:
    model, p = request.model, request.params
    max_tokens = p.maxTokens if p is not None and p.maxTokens is not None else min(model.max_tokens or 8192, 8192)
    payload: dict[str, Any] = {"model": model.id, "max_tokens": max_tokens}
    if request.system_prompt:
        payload["system"] = request.system_prompt
    payload["messages"] = build_messages(request)
    if request.tools:
        payload["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]
    thinking = p is not None and p.reasoning and p.reasoning != "off" and model.reasoning
    if thinking:
        assert p is not None
        budget = BUDGET.get(str(p.reasoning), 8192)
        if payload["max_tokens"] <= budget:
            limit = model.max_tokens or (budget + 4096)
            payload["max_tokens"] = min(budget + 4096, limit) if limit > budget else limit
            if payload["max_tokens"] <= budget:
                budget = max(1024, payload["max_tokens"] - 1024)
        payload["thinking"] = {"type": "enabled", "budget_tokens": budget}
    elif p is not None and p.temperature is not None:
        payload["temperature"] = p.temperature
    if p is not None:
        rt = p.responseType
        if getattr(rt, "type", None) == "json_schema":
            payload["output_config"] = {"format": {"type": "json_schema", "name": "response",
                                                   "schema": getattr(rt, "jsonSchema", None) or {}}}
    payload["stream"] = request.stream
    if p is not None:
        deep_merge(payload, p.extra)
    return payload


def _usage(u: dict[str, Any], prev: UsageEvent | None) -> UsageEvent:
    def num(key: str, old: int) -> int:
        v = u.get(key)
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else old

    base = prev or UsageEvent()
    i = num("input_tokens", base.input)
    o = num("output_tokens", base.output)
    cr = num("cache_read_input_tokens", base.cache_read)
    cw = num("cache_creation_input_tokens", base.cache_write)
    return UsageEvent(input=i, output=o, cache_read=cr, cache_write=cw, total=i + o + cr + cw)


def _error_message(err: Any) -> tuple[str, bool]:
    if isinstance(err, dict):
        kind = str(err.get("type") or "")
        return str(err.get("message") or kind or "unknown error"), kind in ("overloaded_error", "api_error", "rate_limit_error")
    return str(err), False


def parse_stream(events: Iterable[tuple[str, str]], cancel: CancelToken) -> Iterator[StreamEvent]:
    usage: UsageEvent | None = None
    stop: str | None = None
    calls: dict[int, int] = {}  # block index → call index
    signature = ""
    redacted: list[str] = []
    done = False
    check = StreamCheck()
    for name, data in events:
        ev = check.saw(data, json_or_none(data))
        if not isinstance(ev, dict):
            continue
        t = ev.get("type") or name
        if t == "content_block_delta":
            d = ev.get("delta") or {}
            dt = d.get("type")
            if dt == "text_delta" and d.get("text"):
                yield TextDelta(str(d["text"]))
            elif dt == "thinking_delta" and d.get("thinking"):
                yield ThinkingDelta(str(d["thinking"]))
            elif dt == "input_json_delta" and d.get("partial_json"):
                idx = calls.get(int(ev.get("index", -1)))
                if idx is not None:
                    yield ToolCallArgsDelta(index=idx, text=str(d["partial_json"]))
            elif dt == "signature_delta":
                signature += str(d.get("signature") or "")
        elif t == "content_block_start":
            block = ev.get("content_block") or {}
            bt = block.get("type")
            if bt == "tool_use":
                calls[int(ev.get("index", len(calls)))] = len(calls)
                yield ToolCallStart(index=len(calls) - 1, id=str(block.get("id") or f"toolu_{len(calls)}"), name=str(block.get("name") or ""))
                if block.get("input"):
                    yield ToolCallArgsDelta(index=len(calls) - 1, text=json.dumps(block["input"], ensure_ascii=False))
            elif bt == "text" and block.get("text"):
                yield TextDelta(str(block["text"]))
            elif bt == "thinking" and block.get("thinking"):
                yield ThinkingDelta(str(block["thinking"]))
            elif bt == "redacted_thinking" and block.get("data"):
                redacted.append(str(block["data"]))
        elif t == "content_block_stop":
            idx = calls.get(int(ev.get("index", -1)))
            if idx is not None:
                yield ToolCallEnd(index=idx)
        elif t == "message_start":
            msg = ev.get("message") or {}
            if isinstance(msg.get("usage"), dict):
                usage = _usage(msg["usage"], usage)
        elif t == "message_delta":
            stop = (ev.get("delta") or {}).get("stop_reason") or stop
            if isinstance(ev.get("usage"), dict):
                usage = _usage(ev["usage"], usage)
        elif t == "message_stop":
            done = True
            break
        elif t == "error":
            err = ev.get("error") if ev.get("error") is not None else ev  # `{"message": …}` without the wrapper too
            msg, retry = _error_message(err)
            kind = err.get("type") if isinstance(err, dict) else None
            yield ErrorEvent(message=f"Anthropic reported an error mid-stream: {msg}", status=529 if kind == "overloaded_error" else None,
                             retryable=retry, in_stream=True)
            return
    if cancel.cancelled:
        yield Finish("aborted")
        return
    if not done and stop is None:
        yield check.error() or ErrorEvent(message="The stream ended before the message was complete.", retryable=True)
        return
    if usage is not None:
        yield usage
    raw: dict[str, Any] = {}
    replay: dict[str, Any] = {}
    if signature:
        replay["thinkingSignature"] = signature
    if redacted:
        replay["redactedThinking"] = redacted
    if replay:
        raw["replay"] = replay
    yield Finish(STOP.get(str(stop), str(stop or "stop")), raw)


def parse_whole(value: dict[str, Any]) -> Iterator[StreamEvent]:
    if value.get("type") == "error":
        msg, retry = _error_message(value.get("error"))
        yield ErrorEvent(message=f"Anthropic returned an error: {msg}", retryable=retry)
        return
    n = 0
    replay: dict[str, Any] = {}
    for block in value.get("content") or ():
        if not isinstance(block, dict):
            continue
        bt = block.get("type")
        if bt == "thinking":
            if block.get("thinking"):
                yield ThinkingDelta(str(block["thinking"]))
            if block.get("signature"):
                replay["thinkingSignature"] = block["signature"]
        elif bt == "redacted_thinking":
            replay.setdefault("redactedThinking", []).append(block.get("data"))
        elif bt == "text" and block.get("text"):
            yield TextDelta(str(block["text"]))
        elif bt == "tool_use":
            yield ToolCallStart(index=n, id=str(block.get("id") or f"toolu_{n}"), name=str(block.get("name") or ""))
            yield ToolCallArgsDelta(index=n, text=json.dumps(block.get("input") or {}, ensure_ascii=False))
            yield ToolCallEnd(index=n)
            n += 1
    if isinstance(value.get("usage"), dict):
        yield _usage(value["usage"], None)
    yield Finish(STOP.get(str(value.get("stop_reason")), str(value.get("stop_reason") or "stop")), {"replay": replay} if replay else {})


class AnthropicMessagesAdapter:
    api: Api = "anthropic-messages"

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        ep = request.endpoint
        headers = {"anthropic-version": VERSION}
        if ep.api_key:
            headers["x-api-key"] = ep.api_key
        yield from http_events(request, cancel, api_url(ep.base_url, "/messages"), build_payload(request), headers,
                               parse_stream, parse_whole)
