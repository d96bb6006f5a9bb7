"""The one mapping from spans (any source, normalised by `langfuse.py` / `otel.py`) to a thread.

- Generations (Langfuse GENERATION, OpenInference LLM, GenAI `chat` spans), in time order,
  give the assistant messages, with usage, timing and reasoning; when a trace has none, every
  row counts as one (the original's rule).
- Tool calls come from the model's output (its tool-call parts) and from TOOL / `execute_tool`
  rows wherever they hang: matched to their generation by tool-call id, else by parent, else
  by time order (the last generation that started before the tool); a row that is not a
  generation directly under one is a tool call too (the original's rule). Results missing
  from the rows are filled from later inputs' tool messages.
- System and developer texts make the system prompt, each text once. The first generation's
  input history is kept (user and assistant turns before the trace); later full-history
  inputs add only the user turns not seen before. `parts` messages keep text, tool calls, tool
  results and reasoning; inline images are image parts.
- Errors: a tool row that is an error gives an `isError` result; an error elsewhere is named
  in the notes (and makes the trace's status `error`, see `store.py`).
- Imported user turns and tool results carry `"literal": true`: the renderer sends them as
  written (`core/templating/render.py`, `is_trusted_message`).
- One run-history entry, as the original writes it. What could not be mapped is listed in the
  thread's `importNotes` (ours; the original ignores the key).

Pure: no I/O.
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..core.model import Thread
from ..core.threadio import thread_from_data
from ..core.tool_arguments import stored_arguments
from ..core.usage import add_usage, make_usage
from .messages import plain_text
from .spans import Msg, Part, Span, SpanUsage, json_text

ModelResolver = Callable[[str], dict[str, str] | None]

NO_MESSAGES = "Imported trace has no chat-shaped messages."
_STRUCTURE = ("generation", "tool", "agent", "span", "chain")


def short_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:10]


@dataclass
class _Call:
    id: str
    name: str
    arguments: Any = None
    result: Part | None = None
    has_arguments: bool = False


@dataclass
class Mapped:
    thread: Thread
    notes: list[str] = field(default_factory=list)


class _Builder:
    def __init__(self, trace_id: str) -> None:
        self.trace_id = trace_id
        self.messages: list[dict[str, Any]] = []
        self.system: list[str] = []
        self.notes: list[str] = []
        self.counter = 0
        self.results: dict[str, Part] = {}  # tool results seen in inputs, by call id
        self.calls: list[_Call] = []

    def new_id(self, kind: str) -> str:
        self.counter += 1
        return str(uuid.uuid5(uuid.NAMESPACE_URL, f"llmspace-trace:{self.trace_id}:{kind}:{self.counter}"))

    def add_system(self, text: str) -> None:
        text = text.strip()
        if text and text not in self.system:
            self.system.append(text)

    def add_user(self, parts: list[Part]) -> None:
        content: list[dict[str, Any]] = []
        for part in parts:
            if part.kind == "text" and part.text.strip():
                content.append({"type": "text", "text": part.text})
            elif part.kind == "image":
                content.append({"type": "image_data", "mimeType": part.mime, "data": part.data})
        if not content:
            return
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == "user" and last["content"] == content:
            return  # the original's rule: the same text as the message just before is not repeated
        self.messages.append({"id": self.new_id("user"), "role": "user", "content": content, "literal": True})

    def add_assistant(self, parts: list[Part], calls: list[_Call], usage: SpanUsage | None,
                      timing: dict[str, float] | None, *, always: bool = False) -> bool:
        text = "\n".join(p.text for p in parts if p.kind == "text" and p.text)
        thinking = "\n".join(p.text for p in parts if p.kind == "reasoning" and p.text)
        if not (text.strip() or calls or usage or always):
            return False
        message: dict[str, Any] = {"id": self.new_id("assistant"), "role": "assistant",
                                   "content": [{"type": "text", "text": text}]}
        if thinking:
            message["thinking"] = thinking
        if calls:
            message["toolCalls"] = calls  # turned into dicts in finish()
            self.calls.extend(calls)
        if usage is not None:
            message["usage"] = _usage(usage)
        if timing:
            message["timing"] = timing
        self.messages.append(message)
        return True


def _usage(u: SpanUsage) -> dict[str, Any]:
    usage = make_usage(u.input, u.output, u.cache_read, u.cache_write, total_tokens=u.total_tokens,
                       cost={"input": u.cost_input, "output": u.cost_output, "total": u.cost_total})
    return usage.model_dump(mode="json")


def _sorted(spans: list[Span]) -> list[Span]:
    return sorted(spans, key=lambda s: (s.start_ms or 0, s.order))


def _tool_parts(msgs: list[Msg] | None) -> list[Part]:
    return [p for m in msgs or [] for p in m.parts if p.kind == "tool_call"]


class _ToolIndex:
    """Tool rows and the generation each belongs to."""

    def __init__(self, ordered: list[Span], generations: list[Span]) -> None:
        self.by_id = {s.id: s for s in ordered}
        gen_ids = {g.id for g in generations}
        call_owner: dict[str, str] = {}
        for g in generations:
            for part in _tool_parts(g.outputs):
                if part.call_id:
                    call_owner.setdefault(part.call_id, g.id)
        self.owned: dict[str, list[Span]] = {g.id: [] for g in generations}
        self.by_time: list[str] = []
        for span in ordered:
            if span.id in gen_ids:
                continue
            parent_gen = span.parent_id if span.parent_id in gen_ids else None
            if span.kind != "tool" and not (parent_gen and span.kind not in ("agent",)):
                continue
            owner = (call_owner.get(span.tool_call_id or "") or parent_gen
                     or self._ancestor_generation(span, gen_ids) or self._before(span, generations))
            if owner is None:
                continue
            self.owned[owner].append(span)

    def _ancestor_generation(self, span: Span, gen_ids: set[str]) -> str | None:
        seen = set()
        parent = span.parent_id
        while parent and parent not in seen:
            seen.add(parent)
            if parent in gen_ids:
                return parent
            row = self.by_id.get(parent)
            parent = row.parent_id if row else None
        return None

    def _before(self, span: Span, generations: list[Span]) -> str | None:
        if not generations:
            return None
        start = span.start_ms or 0
        earlier = [g for g in generations if (g.start_ms or 0) <= start]
        self.by_time.append(span.id)
        return (earlier[-1] if earlier else generations[0]).id


def _calls_for(generation: Span, rows: list[Span], builder: _Builder) -> list[_Call]:
    calls: list[_Call] = []
    for part in _tool_parts(generation.outputs):
        calls.append(_Call(id=part.call_id or builder.new_id("call"), name=part.name, arguments=part.arguments,
                           has_arguments=part.arguments is not None))
    for row in rows:
        match = next((c for c in calls if row.tool_call_id and c.id == row.tool_call_id), None)
        if match is None:
            name = row.tool_name or row.name
            match = next((c for c in calls if c.result is None and c.name == name), None)
        if match is None:
            match = _Call(id=row.tool_call_id or row.id or builder.new_id("call"),
                          name=_tool_name(row.tool_name or row.name or row.kind))
            calls.append(match)
        if not match.has_arguments and row.input_value is not None:
            match.arguments = row.input_value
            match.has_arguments = True
        text = "" if row.output_value is None else plain_text(row.output_value)
        if row.is_error and not text:
            text = row.error_message
        match.result = Part("tool_result", text=text, call_id=match.id, is_error=row.is_error)
    return calls


def _tool_name(name: str) -> str:
    """The original's tool name for a row: its slug with `-` as `_` (a name a model accepts)."""
    slug = re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "span"
    return slug.replace("-", "_")


def _call_dict(call: _Call) -> dict[str, Any]:
    raw = call.arguments
    if isinstance(raw, dict):
        arguments, partial = raw, None
    elif raw is None:
        arguments, partial = {}, None
    elif isinstance(raw, str):
        arguments, partial = stored_arguments(raw)
        if partial is not None or (not arguments and raw.strip() not in ("{}", "")):
            arguments, partial = {"value": raw}, None
    else:
        arguments, partial = {"value": raw}, None
    data: dict[str, Any] = {"id": call.id, "input": {"name": call.name, "arguments": arguments}}
    if partial is not None:
        data["input"]["partialArguments"] = partial
    if call.result is not None:
        output: dict[str, Any] = {"content": [{"type": "text", "text": call.result.text}], "literal": True}
        if call.result.is_error:
            output["isError"] = True
        data["output"] = output
    return data


def _history(builder: _Builder, convo: list[Msg]) -> None:
    """A first generation's conversation before the trace: user and assistant turns as written."""
    for msg in convo:
        if msg.role == "user":
            builder.add_user(msg.parts)
        elif msg.role == "assistant":
            calls = [_Call(id=p.call_id or builder.new_id("call"), name=p.name, arguments=p.arguments,
                           has_arguments=p.arguments is not None) for p in msg.parts if p.kind == "tool_call"]
            builder.add_assistant(msg.parts, calls, None, None)


def map_spans(spans: list[Span], *, title: str, trace_id: str, timestamp: float,
              model: dict[str, str] | None = None, resolve_model: ModelResolver | None = None,
              source: str = "trace") -> Mapped:
    """The workbench thread of a trace (see the module docstring). `timestamp` (epoch ms) dates
    the run-history entry; `model` is the thread's model when the source names one (the
    original's Codex rule), else the first generation model is looked up with `resolve_model`."""
    builder = _Builder(trace_id)
    ordered = _sorted(spans)
    generations = [s for s in ordered if s.kind == "generation"]
    if not generations and ordered:
        generations = [s for s in ordered if s.kind != "tool"] or ordered
        builder.notes.append(f"The {source} has no generation or LLM spans; each of its {len(generations)} row(s) was read as one.")
    index = _ToolIndex(ordered, generations)
    used_tool_rows = {r.id for rows in index.owned.values() for r in rows}
    seen_users: list[tuple[str, ...]] = []
    assistant_done = False
    for gen in generations:
        for text in gen.system:
            builder.add_system(text)
        inputs = gen.inputs
        if inputs is None:
            if gen.input_value is not None:
                builder.add_user([Part("text", text=plain_text(gen.input_value).strip())])
        else:
            for msg in inputs:
                if msg.role in ("system", "developer"):
                    builder.add_system(msg.text())
                for part in msg.parts:
                    if part.kind == "tool_result" and part.call_id:
                        builder.results.setdefault(part.call_id, part)
            convo = [m for m in inputs if m.role in ("user", "assistant", "tool")]
            odd = sorted({m.role for m in inputs if m.role not in ("user", "assistant", "tool", "system", "developer")})
            if odd:
                builder.notes.append(f"Messages with role {', '.join(odd)} in {gen.name or 'a generation'} were not mapped.")
            users = [m for m in convo if m.role == "user"]
            keys = [u.key() for u in users]
            if not assistant_done:
                _history(builder, convo)
                seen_users = keys
            else:
                if keys[:len(seen_users)] == seen_users:
                    new = users[len(seen_users):]
                else:
                    new = users[1:] if users and seen_users and keys[0] == seen_users[-1] else users
                for user in new:
                    builder.add_user(user.parts)
                    seen_users.append(user.key())
        outputs = gen.outputs
        if outputs is not None:
            out_parts = [p for m in outputs if m.role in ("assistant", "user", "tool") or len(outputs) == 1 for p in m.parts]
        elif gen.output_value is not None:
            out_parts = [Part("text", text=plain_text(gen.output_value))]
        else:
            out_parts = []
        calls = _calls_for(gen, index.owned.get(gen.id, []), builder)
        timing: dict[str, float] | None = None
        if gen.start_ms is not None and gen.end_ms is not None and gen.end_ms >= gen.start_ms:
            timing = {"durationMs": round(gen.end_ms - gen.start_ms)}
            if gen.first_token_ms is not None and gen.first_token_ms >= gen.start_ms:
                timing["firstTokenMs"] = round(gen.first_token_ms - gen.start_ms)
        if gen.is_error:
            builder.notes.append(f"{gen.name or 'A generation'} ended with an error"
                                 + (f": {gen.error_message}" if gen.error_message else "."))
        if builder.add_assistant(out_parts, calls, gen.usage, timing):
            assistant_done = True
    for span in ordered:
        if span.is_error and span.kind not in ("generation", "tool") and span.id not in used_tool_rows:
            builder.notes.append(f"{span.name or span.kind} ({span.kind}) ended with an error"
                                 + (f": {span.error_message}" if span.error_message else "."))
    skipped_kinds: dict[str, int] = {}
    gen_ids = {g.id for g in generations}
    for span in ordered:
        if span.kind not in _STRUCTURE and span.kind != "event" and span.id not in used_tool_rows and span.id not in gen_ids:
            skipped_kinds[span.kind] = skipped_kinds.get(span.kind, 0) + 1
    for kind, count in sorted(skipped_kinds.items()):
        builder.notes.append(f"{count} {kind} row(s) were not mapped (only generations and tool calls become messages).")
    if index.by_time:
        builder.notes.append(f"{len(index.by_time)} tool row(s) hang under no generation and were matched to the generation before them by time.")
    for call in builder.calls:
        if call.result is None and call.id in builder.results:
            found = builder.results[call.id]
            call.result = Part("tool_result", text=found.text, call_id=call.id, is_error=found.is_error)
    for message in builder.messages:
        if "toolCalls" in message:
            message["toolCalls"] = [_call_dict(c) for c in message["toolCalls"]]
    if not builder.messages:
        builder.messages.append({"id": builder.new_id("user"), "role": "user",
                                 "content": [{"type": "text", "text": NO_MESSAGES}], "literal": True})
        builder.notes.append(NO_MESSAGES)
    if model is None and resolve_model is not None:
        name = next((g.model for g in generations if g.model), None)
        if name:
            model = resolve_model(name)
            if model is None:
                provider = next((g.provider for g in generations if g.provider), None)
                builder.notes.append(f"The trace's model {name}" + (f" ({provider})" if provider else "")
                                     + " is not one of your configured models; a run uses the default model.")
    context: dict[str, Any] = {"systemPrompt": "\n\n".join(builder.system), "messages": builder.messages}
    data: dict[str, Any] = {"title": title}
    if model is not None:
        data["model"] = model
    data["context"] = context
    usage = None
    for message in builder.messages:
        if message.get("usage"):
            usage = add_usage(usage, make_usage(**_usage_args(message["usage"])))
    run: dict[str, Any] = {"id": f"imported-{short_hash(trace_id)}",
                           "thread": {"title": title, **({"model": model} if model else {}), "context": context},
                           "timestamp": int(timestamp)}
    if usage is not None:
        run["usage"] = usage.model_dump(mode="json")
    data["runHistory"] = [run]
    if builder.notes:
        data["importNotes"] = builder.notes
    return Mapped(thread=thread_from_data(data, "the trace"), notes=builder.notes)


def _usage_args(usage: dict[str, Any]) -> dict[str, Any]:
    return {"input": usage.get("input", 0), "output": usage.get("output", 0), "cache_read": usage.get("cacheRead", 0),
            "cache_write": usage.get("cacheWrite", 0), "total_tokens": usage.get("totalTokens"),
            "cost": usage.get("cost") or {}}


__all__ = ["NO_MESSAGES", "Mapped", "ModelResolver", "json_text", "map_spans", "short_hash"]
