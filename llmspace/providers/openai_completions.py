"""Adapter for the OpenAI Chat Completions API (`POST {baseUrl}/chat/completions`) and the
many servers that copy it (Ollama, llama.cpp, LM Studio, vLLM, DeepSeek, OpenRouter…).

Request: the system prompt as a `system` message; user text and images (`image_url` data
URLs); assistant text and `tool_calls`, then one `tool` message per call (its result text,
or "" when unanswered) and, when tools returned images, one user message after them with
each such call's images under a line naming the call (tool messages are text only); tools
as `{"type":"function","function":{name,description,parameters}}`; `max_tokens`
(`max_completion_tokens` on api.openai.com); `temperature`; `response_format` from
responseType; `stream_options.include_usage` when streaming (dropped and re-sent once if
the server rejects it with 400); `params.extra` merged last.

Reasoning level → `reasoning_effort` (only for models flagged `reasoning`; `off` sends
nothing): minimal → "minimal", low → "low", medium → "medium", high → "high",
xhigh → "high".

Stream quirks handled (local servers): thinking under `reasoning_content`, `reasoning`
or `thinking`, or inline as `<think>…</think>` in the content; tool-call arguments split
over chunks; the tool name repeated in later chunks; a missing tool-call id (one is
generated); a missing `index`; unusual `finish_reason` values (passed through); error
objects sent as SSE data, and `event: error` frames (`data: {"message": …}`); no usage at
all; a JSON body where a stream was asked for.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator
from typing import Any
from urllib.parse import urlparse

from ..cancel import CancelToken
from .base import Api, ModelRequest, NeutralToolCall
from .events import ErrorEvent, Finish, StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, UsageEvent
from .http import api_url, as_object, deep_merge, http_events, json_or_none, provider_message
from .sse import StreamCheck
from .think import ThinkSplitter

EFFORT = {"minimal": "minimal", "low": "low", "medium": "medium", "high": "high", "xhigh": "high"}
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
FINISH = {"stop": "stop", "length": "length", "tool_calls": "tool_calls", "function_call": "tool_calls",
          "content_filter": "content_filter", "eos": "stop", "eos_token": "stop", "end_turn": "stop",
          "stop_sequence": "stop", "max_tokens": "length", "tool_use": "tool_calls"}

_no_stream_options: set[str] = set()  # base URLs that rejected stream_options


def _image_url(mime: str, data: str) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{mime};base64,{data}"}}


def _tool_text(c: NeutralToolCall) -> str:
    if c.result_text or not c.result_images:
        return c.result_text
    n = len(c.result_images)
    return f"The tool returned {n} image{'s' if n != 1 else ''}; {'they follow' if n != 1 else 'it follows'} in the next message."


def _tool_images(calls: tuple[NeutralToolCall, ...]) -> list[dict[str, Any]]:
    """The content of the one user message that carries the images of a turn's tool results
    (tool messages are text only): per call with images, a line naming it, then its images."""
    parts: list[dict[str, Any]] = []
    for c in calls:
        if c.result_images:
            parts.append({"type": "text", "text": f"Images returned by tool {c.name} (call {c.id}):"})
            parts += [_image_url(mime, data) for mime, data in c.result_images]
    return parts


def build_payload(request: ModelRequest) -> dict[str, Any]:
    model, params = request.model, request.params
    messages: list[dict[str, Any]] = []
    if request.system_prompt:
        messages.append({"role": "system", "content": request.system_prompt})
    for m in request.messages:
        if m.role == "user":
            if m.images:
                parts: list[dict[str, Any]] = [{"type": "text", "text": m.text}] if m.text else []
                parts += [_image_url(mime, data) for mime, data in m.images]
                messages.append({"role": "user", "content": parts})
            else:
                messages.append({"role": "user", "content": m.text})
            continue
        msg: dict[str, Any] = {"role": "assistant", "content": m.text if m.text or not m.tool_calls else None}
        if m.tool_calls:
            msg["tool_calls"] = [{"id": c.id, "type": "function",
                                  "function": {"name": c.name, "arguments": json.dumps(c.arguments, ensure_ascii=False)}}
                                 for c in m.tool_calls]
        messages.append(msg)
        for c in m.tool_calls:
            messages.append({"role": "tool", "tool_call_id": c.id, "content": _tool_text(c)})
        images = _tool_images(m.tool_calls)
        if images:
            messages.append({"role": "user", "content": images})
    payload: dict[str, Any] = {"model": model.id, "messages": messages, "stream": request.stream}
    if request.stream and request.endpoint.base_url not in _no_stream_options:
        payload["stream_options"] = {"include_usage": True}
    if request.tools:
        payload["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
                            for t in request.tools]
    if params is not None:
        if params.maxTokens is not None:
            host = urlparse(request.endpoint.base_url).hostname or ""
            payload["max_completion_tokens" if host == "api.openai.com" else "max_tokens"] = params.maxTokens
        if params.temperature is not None:
            payload["temperature"] = params.temperature
        if params.reasoning and params.reasoning != "off" and model.reasoning:
            payload["reasoning_effort"] = EFFORT.get(str(params.reasoning), "medium")
        rt = params.responseType
        if rt is not None:
            kind = getattr(rt, "type", None)
            if kind == "json_object":
                payload["response_format"] = {"type": "json_object"}
            elif kind == "json_schema":
                payload["response_format"] = {"type": "json_schema", "json_schema": {
                    "name": "response", "schema": getattr(rt, "jsonSchema", None) or {}, "strict": True}}
        deep_merge(payload, params.extra)
    return payload


def convert_usage(u: dict[str, Any]) -> UsageEvent:
    def num(v: Any) -> int:
        return int(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0 else 0

    prompt = num(u.get("prompt_tokens", u.get("input_tokens")))
    details = as_object(u.get("prompt_tokens_details"))
    cached = min(num(details.get("cached_tokens")) or num(u.get("prompt_cache_hit_tokens")), prompt)
    out = num(u.get("completion_tokens", u.get("output_tokens")))
    cdet = as_object(u.get("completion_tokens_details"))
    reasoning = cdet.get("reasoning_tokens")
    total = u.get("total_tokens")
    return UsageEvent(input=prompt - cached, output=out, cache_read=cached, cache_write=0,
                      reasoning=num(reasoning) if reasoning is not None else None,
                      total=num(total) if total is not None else prompt + out)


class _Calls:
    """Tool-call deltas → Start/ArgsDelta events with stable indices and ids."""

    def __init__(self) -> None:
        self.by_key: dict[tuple[str, object], int] = {}  # ("i", index) or ("id", call id)
        self.names: list[str] = []
        self.started: list[bool] = []
        self.pending: list[list[str]] = []
        self.ids: list[str] = []
        self.given: list[bool] = []  # the id came from the server
        self.last: tuple[str, object] | None = None

    def feed(self, deltas: Iterable[Any]) -> Iterator[StreamEvent]:
        for d in deltas:
            if not isinstance(d, dict):
                continue
            fn = as_object(d.get("function"))
            cid = d.get("id") if isinstance(d.get("id"), str) and d.get("id") else None
            if isinstance(d.get("index"), int):
                key: tuple[str, object] = ("i", d["index"])
                if cid is not None and ("id", cid) in self.by_key:
                    key = ("id", cid)
                elif cid is not None and key in self.by_key and self.given[self.by_key[key]] and self.ids[self.by_key[key]] != cid:
                    key = ("id", cid)  # every call sent with index 0 but its own id (Gemini-style)
            elif cid is not None and ("id", cid) not in self.by_key and (self.last is None or self.ids[self.by_key[self.last]] != cid):
                key = ("id", cid)
            else:
                key = self.last if self.last is not None else ("i", 0)
            if key not in self.by_key:
                self.by_key[key] = len(self.names)
                self.names.append("")
                self.started.append(False)
                self.pending.append([])
                self.ids.append(cid or f"call_{uuid.uuid4().hex[:24]}")
                self.given.append(cid is not None)
            i = self.by_key[key]
            self.last = key
            if cid is not None and not self.given[i] and not self.started[i]:
                self.ids[i] = cid
                self.given[i] = True
            name = fn.get("name")
            if isinstance(name, str) and name and not self.names[i]:
                self.names[i] = name  # a name repeated in later chunks is ignored
            args = fn.get("arguments")
            if isinstance(args, dict):
                args = json.dumps(args, ensure_ascii=False)
            if isinstance(args, str) and args:
                self.pending[i].append(args)
            if self.names[i] and not self.started[i]:
                self.started[i] = True
                yield ToolCallStart(index=i, id=self.ids[i], name=self.names[i])
            if self.started[i] and self.pending[i]:
                text, self.pending[i] = "".join(self.pending[i]), []
                yield ToolCallArgsDelta(index=i, text=text)

    def finish(self) -> Iterator[StreamEvent]:
        for i in range(len(self.names)):
            if not self.started[i]:
                self.started[i] = True
                yield ToolCallStart(index=i, id=self.ids[i], name=self.names[i])
                if self.pending[i]:
                    yield ToolCallArgsDelta(index=i, text="".join(self.pending[i]))
            yield ToolCallEnd(index=i)

    def __len__(self) -> int:
        return len(self.names)


def _finish_reason(raw: str | None, has_calls: bool) -> str:
    if raw is None:
        return "tool_calls" if has_calls else "stop"
    reason = FINISH.get(raw, raw)
    return "tool_calls" if has_calls and reason == "stop" else reason


def _content_events(splitter: ThinkSplitter, text: str) -> Iterator[StreamEvent]:
    for thinking, part in splitter.feed(text):
        if part:
            yield ThinkingDelta(part) if thinking else TextDelta(part)


def parse_stream(events: Iterable[tuple[str, str]], cancel: CancelToken) -> Iterator[StreamEvent]:
    calls, splitter, check = _Calls(), ThinkSplitter(), StreamCheck()
    finish: str | None = None
    usage: UsageEvent | None = None
    for name, data in events:
        if data == "[DONE]":
            break
        chunk = check.saw(data, json_or_none(data))
        if not isinstance(chunk, dict):
            if name == "error":  # `event: error` with a plain-text message
                yield ErrorEvent(message=f"The server reported an error mid-stream: {data.strip()[:600] or 'no details given'}",
                                 in_stream=True)
                return
            continue
        if chunk.get("error") is not None or name == "error":
            err = chunk.get("error") if chunk.get("error") is not None else chunk
            msg = provider_message(json.dumps({"error": err}).encode()) if not isinstance(err, str) else err
            status = err.get("code") if isinstance(err, dict) and isinstance(err.get("code"), int) else None
            yield ErrorEvent(message=f"The server reported an error mid-stream: {msg}", status=status, in_stream=True)
            return
        if isinstance(chunk.get("usage"), dict):
            usage = convert_usage(chunk["usage"])
        for choice in chunk.get("choices") or ():
            if not isinstance(choice, dict):
                continue
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                for key in REASONING_KEYS:
                    r = delta.get(key)
                    if isinstance(r, str) and r:
                        yield ThinkingDelta(r)
                        break
                content = delta.get("content")
                if isinstance(content, str) and content:
                    yield from _content_events(splitter, content)
                if delta.get("tool_calls"):
                    yield from calls.feed(delta["tool_calls"])
            if choice.get("finish_reason"):
                finish = str(choice["finish_reason"])
    if cancel.cancelled:
        yield from _flush(splitter)
        yield Finish("aborted")
        return
    unreadable = check.error()
    if unreadable is not None:
        yield unreadable
        return
    yield from _flush(splitter)
    yield from calls.finish()
    if usage is not None:
        yield usage
    yield Finish(_finish_reason(finish, len(calls) > 0))


def _flush(splitter: ThinkSplitter) -> Iterator[StreamEvent]:
    for thinking, part in splitter.flush():
        if part:
            yield ThinkingDelta(part) if thinking else TextDelta(part)


def parse_whole(value: dict[str, Any]) -> Iterator[StreamEvent]:
    choices = value.get("choices") or [{}]
    choice = choices[0] if isinstance(choices[0], dict) else {}
    msg = choice.get("message") or {}
    for key in REASONING_KEYS:
        if isinstance(msg.get(key), str) and msg[key]:
            yield ThinkingDelta(msg[key])
            break
    splitter = ThinkSplitter()
    if isinstance(msg.get("content"), str):
        yield from _content_events(splitter, msg["content"])
        yield from _flush(splitter)
    calls = _Calls()
    yield from calls.feed(msg.get("tool_calls") or [])
    yield from calls.finish()
    if isinstance(value.get("usage"), dict):
        yield convert_usage(value["usage"])
    yield Finish(_finish_reason(choice.get("finish_reason"), len(calls) > 0))


class OpenAICompletionsAdapter:
    api: Api = "openai-completions"

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        ep = request.endpoint
        payload = build_payload(request)
        headers = {"Authorization": f"Bearer {ep.api_key}"} if ep.api_key else {}

        def renegotiate(status: int, body: bytes) -> dict[str, Any] | None:
            if status in (400, 422) and "stream_options" in payload and b"stream_options" in body:
                _no_stream_options.add(ep.base_url)
                return {k: v for k, v in payload.items() if k != "stream_options"}
            return None

        yield from http_events(request, cancel, api_url(ep.base_url, "/chat/completions"), payload, headers,
                               parse_stream, parse_whole, renegotiate)
