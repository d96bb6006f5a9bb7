"""Fold one model turn's `StreamEvent`s into a stored assistant message.

`TurnBuilder` is fed provider events by the run loop (`agent/loop.py`) and turns them into
run events plus, at the end, an `AssistantMessage` with text, thinking, tool calls (arguments
parsed best-effort with partial-json-parser, the raw text kept in `partialArguments` when it
is not complete JSON; live views parse `ToolCallDelta.arguments_text` with `parse_arguments`), usage with cost, timing measured with `time.perf_counter`, and the provider's replay
data (`Finish.raw["replay"]`) under the extra key `providerData`.
Pure bookkeeping: no I/O, no threads.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from partial_json_parser import loads as partial_loads

from ..core.model import AssistantMessage, Usage
from ..core.usage import is_zero
from ..providers import events as pe
from ..providers.base import ModelInfo
from ..providers.usage import merge_usage, usage_node
from . import events as rev

# Unknown key on a stored assistant message: data the same provider needs to continue the
# conversation (Anthropic thinking signatures, OpenAI Responses reasoning items), tagged with
# the provider id and API it came from; sent back only to that provider and API.
PROVIDER_DATA = "providerData"


def parse_arguments(text: str) -> tuple[dict[str, Any], bool]:
    """(arguments, complete): the JSON object in `text`, or the best partial reading of it."""
    if not text.strip():
        return {}, True
    try:
        value = json.loads(text)
        if isinstance(value, dict):
            return value, True
        return {}, False
    except ValueError:
        pass
    try:
        value = partial_loads(text)
    except Exception:
        return {}, False
    return (value if isinstance(value, dict) else {}), False


@dataclass
class _Call:
    id: str
    name: str
    args_text: str = ""
    ended: bool = False


class TurnBuilder:
    """Accumulates one assistant turn. `feed(event)` returns the run events to report."""

    def __init__(self, model: ModelInfo, started: float | None = None, provider_id: str = "", api: str = "") -> None:
        self.model = model
        self.provider_id = provider_id
        self.api = api
        self.replay: dict[str, Any] = {}
        self.message_id = str(uuid.uuid4())
        self.started = time.perf_counter() if started is None else started
        self.first_token: float | None = None
        self.ended: float | None = None
        self.text = ""
        self.thinking = ""
        self.calls: dict[int, _Call] = {}
        self.usage_events: list[pe.UsageEvent] = []
        self.finish_reason: str | None = None
        self.error: pe.ErrorEvent | None = None
        self.events_seen = 0

    # -- folding ------------------------------------------------------------------------
    def _token(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter()

    def feed(self, ev: pe.StreamEvent) -> list[rev.RunEvent]:
        self.events_seen += 1
        mid = self.message_id
        if isinstance(ev, pe.TextDelta):
            if not ev.text:
                return []
            self._token()
            self.text += ev.text
            return [rev.TextDelta(mid, ev.text)]
        if isinstance(ev, pe.ThinkingDelta):
            if not ev.text:
                return []
            self._token()
            self.thinking += ev.text
            return [rev.ThinkingDelta(mid, ev.text)]
        if isinstance(ev, pe.ToolCallStart):
            self._token()
            call = self.calls.get(ev.index)
            if call is None:
                call = self.calls[ev.index] = _Call(ev.id or f"call_{uuid.uuid4().hex[:12]}", ev.name)
            else:  # a repeated start (some local servers repeat the name): keep the first values
                call.name = call.name or ev.name
            return [rev.ToolCallDelta(mid, ev.index, call.id, call.name, call.args_text)]
        if isinstance(ev, pe.ToolCallArgsDelta):
            call = self.calls.get(ev.index)
            if call is None:
                call = self.calls[ev.index] = _Call(f"call_{uuid.uuid4().hex[:12]}", "")
            if ev.text:
                self._token()
                call.args_text += ev.text  # parsed once at the end (re-parsing per fragment is quadratic)
            return [rev.ToolCallDelta(mid, ev.index, call.id, call.name, call.args_text)]
        if isinstance(ev, pe.ToolCallEnd):
            call = self.calls.get(ev.index)
            if call is not None:
                call.ended = True
            return []
        if isinstance(ev, pe.UsageEvent):
            self.usage_events.append(ev)
            return []
        if isinstance(ev, pe.Finish):
            self.finish_reason = ev.reason
            replay = ev.raw.get("replay") if isinstance(ev.raw, dict) else None
            if isinstance(replay, dict) and replay:
                self.replay = dict(replay)
            self.ended = time.perf_counter()
            return []
        if isinstance(ev, pe.ErrorEvent):
            self.error = ev
            return []
        return []

    # -- result -------------------------------------------------------------------------
    def usage(self) -> Usage | None:
        """The turn's usage with cost (reports merged; all-zero usage is dropped)."""
        merged = merge_usage(self.usage_events)
        if merged is None:
            return None
        usage = usage_node(merged, self.model)
        return None if is_zero(usage) else usage

    def has_content(self) -> bool:
        return bool(self.text or self.thinking or self.calls)

    def build(self) -> AssistantMessage:
        """The stored assistant message (call at the end of the turn, or on Stop/error)."""
        end = self.ended if self.ended is not None else time.perf_counter()
        data: dict[str, Any] = {"id": self.message_id, "role": "assistant",
                                "content": [{"type": "text", "text": self.text}]}
        if self.thinking:
            data["thinking"] = self.thinking
        if self.calls:
            calls = []
            for index in sorted(self.calls):
                c = self.calls[index]
                arguments, complete = parse_arguments(c.args_text)
                call_input: dict[str, Any] = {"name": c.name, "arguments": arguments}
                if not complete:
                    call_input["partialArguments"] = c.args_text
                entry: dict[str, Any] = {"id": c.id, "input": call_input}
                if c.ended or (self.finish_reason is not None and self.error is None):
                    entry["output"] = {"content": [{"type": "text", "text": ""}]}
                calls.append(entry)
            data["toolCalls"] = calls
        usage = self.usage()
        if usage is not None:
            data["usage"] = usage
        if self.replay:
            data[PROVIDER_DATA] = {"provider": self.provider_id, "api": self.api, **self.replay}
        timing: dict[str, Any] = {}
        if self.first_token is not None:
            timing["firstTokenMs"] = max(0, round((self.first_token - self.started) * 1000))
        timing["durationMs"] = max(0, round((end - self.started) * 1000))
        data["timing"] = timing
        return AssistantMessage.model_validate(data)
