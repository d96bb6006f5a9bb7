"""Tolerant tool calls (provider option `compat.tolerantToolCalls`): a tool call a small model
wrote as plain text becomes a real tool call.

    events = tolerant_tool_calls(adapter.stream(request, cancel), request.tools)

Small instruct models often answer a tool request with a bare JSON object — `{"name": "x",
"arguments": {…}}`, a list of them, or the same inside a code fence — instead of their
template's tool-call tags, so the server returns it as text. When tools were offered and the
reply's text starts (after white space) with `{`, `[` or a code fence, up to `HOLD_LIMIT`
characters are held back until they parse as a call of an offered tool (then the model's
turn is that tool call, with finish reason `tool_calls`) or do not (then the held text is
let through unchanged, as text). A reply starting any other way is never held.

Accepted shapes, per call: `{"name", "arguments"|"parameters"|"args"|"input"}`, the OpenAI
shape `{"type": "function", "function": {"name", "arguments"}}` and `{"tool_calls": […]}`;
arguments may be an object or a JSON string of one. The tool's name must be one offered.
On for the built-in engine's provider (`llmspace/local/provider.py`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal

from .base import ToolSpec
from .events import ErrorEvent, Finish, StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart

HOLD_LIMIT = 512
_FENCE = "```"
_NAME_KEYS = ("name", "tool", "tool_name", "function")
_ARG_KEYS = ("arguments", "parameters", "args", "input", "tool_input")


def _arguments(value: Any) -> dict[str, Any] | None:
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else {}
        except ValueError:
            return None
    return value if isinstance(value, dict) else None


def _one_call(value: Any, offered: set[str]) -> tuple[str, dict[str, Any]] | None:
    if not isinstance(value, dict):
        return None
    fn = value.get("function")
    if isinstance(fn, dict):  # {"type": "function", "function": {"name", "arguments"}}
        return _one_call(fn, offered)
    name = next((value[k] for k in _NAME_KEYS if isinstance(value.get(k), str)), None)
    if name not in offered:
        return None
    extra = [k for k in value if k not in _NAME_KEYS and k not in _ARG_KEYS and k not in ("type", "id")]
    if extra:
        return None  # more than a call: an answer that happens to have a "name"
    raw = next((value[k] for k in _ARG_KEYS if k in value), None)
    args = _arguments(raw)
    return (name, args) if args is not None else None


def parse_calls(value: Any, offered: set[str]) -> list[tuple[str, dict[str, Any]]] | None:
    """The tool calls `value` (parsed JSON) stands for, or None when it is not only calls of
    offered tools."""
    if isinstance(value, dict) and isinstance(value.get("tool_calls"), list) and len(value) == 1:
        value = value["tool_calls"]
    items = value if isinstance(value, list) else [value]
    if not items:
        return None
    calls = [_one_call(item, offered) for item in items]
    if any(c is None for c in calls):
        return None
    return [c for c in calls if c is not None]


def _json_part(text: str) -> tuple[str, bool] | None:
    """The JSON text inside the held reply and whether the reply is complete around it
    (a fence closed); None while a fence's first line is not complete."""
    body = text.lstrip()
    if not body.startswith(_FENCE):
        return body, True
    newline = body.find("\n")
    if newline < 0:
        return None
    inner = body[newline + 1:]
    end = inner.find(_FENCE)
    return (inner[:end], True) if end >= 0 else (inner, False)


def classify(text: str, offered: set[str], final: bool) -> list[tuple[str, dict[str, Any]]] | Literal[False] | None:
    """Calls when the held `text` is a tool call; False when it is text; None: not yet known."""
    part = _json_part(text)
    if part is None:
        return False if final else None
    body, closed = part
    body = body.strip()
    try:
        value, end = json.JSONDecoder().raw_decode(body)
    except ValueError:
        return False if final else None
    rest = body[end:].strip()
    if rest:
        return False  # JSON followed by prose
    if not closed and not final:
        return None  # wait for the closing fence
    calls = parse_calls(value, offered)
    if calls is None:
        return False
    after = text.lstrip()
    if after.startswith(_FENCE):
        tail = after[after.find("\n") + 1:]
        tail = tail[tail.find(_FENCE) + len(_FENCE):] if _FENCE in tail else ""
        if tail.strip():
            return False
    return calls


def tolerant_tool_calls(events: Iterable[StreamEvent], tools: Sequence[ToolSpec]) -> Iterator[StreamEvent]:
    """`events` with a tool call written as text turned into tool-call events (see above)."""
    offered = {t.name for t in tools}
    if not offered:
        yield from events
        return
    held: list[str] = []
    holding = True  # until the reply's first visible character is seen
    made = 0  # tool calls made from text
    next_index = 0

    def settle(final: bool) -> Iterator[StreamEvent]:
        nonlocal holding, made, next_index
        text = "".join(held)
        start = text.lstrip()[:1]
        if not start:
            if final:
                holding = False
                if text:
                    yield TextDelta(text)
                held.clear()
            return
        verdict = classify(text, offered, final) if start in "{[`" else False
        if verdict is None and len(text) > HOLD_LIMIT:
            verdict = False
        if verdict is None:
            return
        holding = False
        held.clear()
        if verdict is False:
            yield TextDelta(text)
            return
        for name, args in verdict:
            i = next_index
            next_index += 1
            made += 1
            yield ToolCallStart(index=i, id=f"call_{uuid.uuid4().hex[:24]}", name=name)
            yield ToolCallArgsDelta(index=i, text=json.dumps(args, ensure_ascii=False))
            yield ToolCallEnd(index=i)

    for event in events:
        if isinstance(event, TextDelta):
            if holding:
                held.append(event.text)
                yield from settle(final=False)
                continue
            if made and not event.text.strip():
                continue
            yield event
            continue
        if isinstance(event, ToolCallStart):
            next_index = max(next_index, event.index + 1)
        if holding and isinstance(event, (Finish, ErrorEvent)):
            if isinstance(event, Finish) and event.reason != "aborted":
                yield from settle(final=True)
            elif held:  # a failed or stopped reply keeps what it said, as text
                holding = False
                yield TextDelta("".join(held))
                held.clear()
        if isinstance(event, Finish) and made and event.reason == "stop":
            event = Finish("tool_calls", event.raw)
        yield event
    if holding and held:
        yield from settle(final=True)
