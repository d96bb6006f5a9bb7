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

A call of a tool that was NOT offered (`{"name": "list_files", "arguments": …` when only `ls`
is) is asked again, constrained: as soon as the reply's start shows such a name, the reply is
dropped (its stream closed) and `retry(schema)` streams the same request whose answer must
match `call_schema(tools)` — one object `{"name": <an offered tool>, "arguments": <its
parameters>}` — which llama-server (and any server honouring `response_format` JSON Schema)
enforces with a grammar, so the name can only be an offered one. That reply streams as a tool
call: the name as soon as it is written, then the arguments as they come. The engine's own
lazy grammar cannot do this: llama.cpp (b11434, `--jinja`, Qwen2.5's template) triggers it only
on the template's `<tool_call>` tag, and `tool_choice: "required"` still lets the model write
any text before that tag, so a bare JSON reply is never constrained.

`TolerantAdapter` applies all this to a provider whose entry in models.json has
`"compat": {"tolerantToolCalls": true}` (`Endpoint.tolerant_tool_calls`; on by default for the
built-in `local` provider only); the constrained retry is made for Chat Completions APIs.
"""

from __future__ import annotations

import dataclasses
import json
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .base import ModelRequest, ToolSpec
from .events import ErrorEvent, Finish, StreamEvent, TextDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart

if TYPE_CHECKING:
    from ..cancel import CancelToken
    from .base import Adapter, Api

HOLD_LIMIT = 512
# APIs whose requests take `response_format` (the constrained retry)
CONSTRAINABLE_APIS = frozenset({"openai-completions", "local-engine"})
Retry = Callable[[dict[str, Any]], Iterator[StreamEvent]]
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


_KEY = r'"(?:' + "|".join(_NAME_KEYS) + r')"'
_ARG_KEY = r'"(?:' + "|".join(_ARG_KEYS) + r')"'
# the start of a call written as text: fence?, "[" ?, {"name": "X", "arguments":
_CALL_START = re.compile(r'\s*(?:```[\w-]*[ \t]*\n)?\s*\[?\s*\{\s*' + _KEY + r'\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*'
                         + _ARG_KEY + r'\s*:')
# the start of the constrained reply: {"name": "X", "arguments":
_CONSTRAINED_HEAD = re.compile(r'\s*\{\s*"name"\s*:\s*"((?:[^"\\]|\\.)*)"\s*,\s*"arguments"\s*:\s*')


def call_schema(tools: Sequence[ToolSpec]) -> dict[str, Any]:
    """JSON Schema of one call of one of `tools`: `{"name": <tool>, "arguments": <its parameters>}`."""
    return {"anyOf": [{"type": "object",
                       "properties": {"name": {"const": t.name},
                                      "arguments": t.parameters or {"type": "object"}},
                       "required": ["name", "arguments"], "additionalProperties": False} for t in tools]}


def constrained_request(request: ModelRequest, schema: dict[str, Any]) -> ModelRequest:
    """`request` whose answer must match `schema` (Chat Completions' `response_format`)."""
    from ..core.model import ModelParams

    params = request.params or ModelParams()
    extra = dict(params.extra or {})
    extra["response_format"] = {"type": "json_schema",
                                "json_schema": {"name": "tool_call", "schema": schema}}
    return dataclasses.replace(request, params=params.model_copy(update={"extra": extra, "responseType": None}))


def invented_name(text: str, offered: set[str]) -> str | None:
    """The tool name a held reply starts a call of, when that tool was not offered."""
    match = _CALL_START.match(text)
    if match is None:
        return None
    try:
        name = json.loads(f'"{match.group(1)}"')
    except ValueError:
        return None
    return name if isinstance(name, str) and name not in offered else None


def _constrained(events: Iterable[StreamEvent], offered: set[str], dropped: str) -> Iterator[StreamEvent]:
    """The constrained reply as a tool call, its arguments streamed as they come (all but the
    text from the last `}` on, which may be the object's own end)."""
    buf = ""
    name: str | None = None
    args_at = sent = 0
    made = False
    for event in events:
        if isinstance(event, TextDelta):
            buf += event.text
            if name is None:
                head = _CONSTRAINED_HEAD.match(buf)
                if head is None:
                    continue
                try:
                    found = json.loads(f'"{head.group(1)}"')
                except ValueError:
                    continue
                if found not in offered:
                    continue  # not what was asked for: read whole at the end
                name, args_at = found, head.end()
                made = True
                yield ToolCallStart(index=0, id=f"call_{uuid.uuid4().hex[:24]}", name=name)
            cut = buf.rfind("}")
            if cut > args_at + sent:
                yield ToolCallArgsDelta(index=0, text=buf[args_at + sent:cut])
                sent = cut - args_at
            continue
        if isinstance(event, (Finish, ErrorEvent)):
            if name is not None:
                rest = buf[args_at + sent:].rstrip()
                rest = rest[:-1] if rest.endswith("}") else rest  # the call object's own end
                if rest:
                    yield ToolCallArgsDelta(index=0, text=rest)
                yield ToolCallEnd(index=0)
            elif isinstance(event, Finish) and event.reason != "aborted":
                verdict = classify(buf, offered, final=True)
                if verdict:
                    made = True
                    for i, (called, args) in enumerate(verdict):
                        yield ToolCallStart(index=i, id=f"call_{uuid.uuid4().hex[:24]}", name=called)
                        yield ToolCallArgsDelta(index=i, text=json.dumps(args, ensure_ascii=False))
                        yield ToolCallEnd(index=i)
                elif buf or dropped:
                    yield TextDelta(buf or dropped)
            elif dropped or buf:  # the retry failed: what the model wrote first, then why
                yield TextDelta(buf or dropped)
            if isinstance(event, Finish) and made and event.reason == "stop":
                event = Finish("tool_calls", event.raw)
            yield event
            return
        yield event


def tolerant_tool_calls(events: Iterable[StreamEvent], tools: Sequence[ToolSpec],
                        retry: Retry | None = None) -> Iterator[StreamEvent]:
    """`events` with a tool call written as text turned into tool-call events, and a call of a
    tool not offered asked again through `retry` when given (see above)."""
    offered = {t.name for t in tools}
    if not offered:
        yield from events
        return
    source = iter(events)
    if retry is not None:
        dropped = ""
        for event in _tolerant(source, offered, retry is not None):
            if isinstance(event, _Invented):
                dropped = event.text
                break
            yield event
        else:
            return
        close = getattr(source, "close", None)
        if close is not None:
            close()  # the engine stops writing the dropped reply
        yield from _constrained(retry(call_schema(tools)), offered, dropped)
        return
    yield from _tolerant(source, offered, False)


@dataclasses.dataclass(frozen=True)
class _Invented:
    """Internal marker: the held reply `text` starts a call of a tool that was not offered."""

    text: str


def _tolerant(events: Iterator[StreamEvent], offered: set[str], catch_invented: bool) -> Iterator[Any]:
    held: list[str] = []
    holding = True  # until the reply's first visible character is seen
    made = 0  # tool calls made from text
    next_index = 0

    def settle(final: bool) -> Iterator[Any]:
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
        if catch_invented and start in "{[`" and invented_name(text, offered) is not None:
            holding = False
            yield _Invented(text)
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
                for out in settle(final=False):
                    yield out
                    if isinstance(out, _Invented):
                        return
                continue
            if made and not event.text.strip():
                continue
            yield event
            continue
        if isinstance(event, ToolCallStart):
            next_index = max(next_index, event.index + 1)
        if holding and isinstance(event, (Finish, ErrorEvent)):
            if isinstance(event, Finish) and event.reason != "aborted":
                for out in settle(final=True):
                    yield out
                    if isinstance(out, _Invented):
                        return
            elif held:  # a failed or stopped reply keeps what it said, as text
                holding = False
                yield TextDelta("".join(held))
                held.clear()
        if isinstance(event, Finish) and made and event.reason == "stop":
            event = Finish("tool_calls", event.raw)
        yield event
    if holding and held:
        yield from settle(final=True)


class TolerantAdapter:
    """`adapter` with tolerant tool calls for requests whose endpoint has the option on
    (`Endpoint.tolerant_tool_calls`); any other request goes to `adapter` unchanged."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.api: Api = adapter.api

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        if not (request.endpoint.tolerant_tool_calls and request.tools):
            return self.adapter.stream(request, cancel)
        retry: Retry | None = None
        if request.endpoint.api in CONSTRAINABLE_APIS:
            def retry(schema: dict[str, Any]) -> Iterator[StreamEvent]:
                return self.adapter.stream(constrained_request(request, schema), cancel)
        return tolerant_tool_calls(self.adapter.stream(request, cancel), request.tools, retry)
