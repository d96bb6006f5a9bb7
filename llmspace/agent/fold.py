"""The folds of a run: provider events into the turn's message, run events into a live thread.

`TurnBuilder` is fed provider events by the run loop (`agent/loop.py`) and turns them into
run events plus, at the end, an `AssistantMessage` with text, thinking, tool calls (arguments
read once at the end by `core/tool_arguments.read_arguments`, the raw text kept in
`partialArguments` when it is not complete JSON), usage with cost, timing measured with
`time.perf_counter`, and the provider's replay data (`Finish.raw["replay"]`) under the extra
key `providerData`. Text and thinking grow as lists of parts joined when read (appending to
a string was quadratic: 20 MB of small deltas took 77 s). A reply — text, thinking and tool
arguments together — holds at most `MAX_REPLY_CHARS` (32 MB of text, far past any model's
output limit); the delta that would pass it ends the turn with an in-stream error (`error`),
which the run loop and the evaluation cells report as they report a provider's.

`fold_run_event(thread, event)` folds those run events into another copy of the thread as
they arrive: the live view of a running tab (`presenters/run.RunPresenter`, on the UI thread)
shows the reply growing — text, thinking, tool calls with the arguments read so far, tool
results, a dropped empty turn. It handles every `RunEvent` with `match` and `assert_never`.
The run's own result (`RunFinished`) then replaces that copy.

Pure bookkeeping: no I/O, no threads.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass
from typing import Any, Literal, assert_never

from ..core.model import AssistantMessage, TextContent, Thread, ToolCall, ToolCallInput, ToolCallOutput, Usage
from ..core.tool_arguments import read_arguments
from ..core.usage import is_zero
from ..providers import events as pe
from ..providers.base import ModelInfo
from ..providers.usage import merge_usage, usage_node
from . import events as rev

# Unknown key on a stored assistant message: data the same provider needs to continue the
# conversation (Anthropic thinking signatures, OpenAI Responses reasoning items), tagged with
# the provider id and API it came from; sent back only to that provider and API.
PROVIDER_DATA = "providerData"
MAX_REPLY_CHARS = 32 * 1024 * 1024
TOO_LARGE = (f"The model's reply is larger than {MAX_REPLY_CHARS // (1024 * 1024)} MB of text, the most llmspace keeps "
             "of one reply; it was cut there. Ask the model for a shorter answer, or set maxTokens in the thread's "
             "model settings.")


class _Parts:
    """Text that grows by appending in linear time: its parts, joined once when read."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[str] = []

    def append(self, text: str) -> None:
        self._parts.append(text)

    def value(self) -> str:
        if len(self._parts) > 1:
            self._parts[:] = ["".join(self._parts)]
        return self._parts[0] if self._parts else ""

    def __bool__(self) -> bool:
        return bool(self._parts)


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
        self._text = _Parts()
        self._thinking = _Parts()
        self.size = 0  # characters of text, thinking and tool arguments so far
        self.calls: dict[int, _Call] = {}
        self.usage_events: list[pe.UsageEvent] = []
        self.finish_reason: str | None = None
        self.error: pe.ErrorEvent | None = None
        self.events_seen = 0

    @property
    def text(self) -> str:
        return self._text.value()

    @property
    def thinking(self) -> str:
        return self._thinking.value()

    # -- folding ------------------------------------------------------------------------
    def _token(self) -> None:
        if self.first_token is None:
            self.first_token = time.perf_counter()

    def _fits(self, text: str) -> bool:
        """Count `text` in; False (and the turn's error set) when it would pass the cap."""
        if self.error is not None:
            return False
        if self.size + len(text) > MAX_REPLY_CHARS:
            self.error = pe.ErrorEvent(message=TOO_LARGE, in_stream=True)
            return False
        self.size += len(text)
        return True

    def feed(self, ev: pe.StreamEvent) -> list[rev.RunEvent]:
        self.events_seen += 1
        mid = self.message_id
        if isinstance(ev, pe.TextDelta):
            if not ev.text or not self._fits(ev.text):
                return []
            self._token()
            self._text.append(ev.text)
            return [rev.TextDelta(mid, ev.text)]
        if isinstance(ev, pe.ThinkingDelta):
            if not ev.text or not self._fits(ev.text):
                return []
            self._token()
            self._thinking.append(ev.text)
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
            if ev.text and not self._fits(ev.text):
                return []
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
            if self.error is None:  # a reply cut at the cap keeps that reason
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
        return bool(self._text or self._thinking or self.calls)

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
                arguments, reading = read_arguments(c.args_text)
                call_input: dict[str, Any] = {"name": c.name, "arguments": arguments}
                if reading != "complete":
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


# -- the live fold of run events ------------------------------------------------------------

Folded = Literal["added", "changed", "unchanged"]
"""What `fold_run_event` did: appended a new assistant message (and maybe filled it), changed
the thread otherwise, or left it as it was."""


def fold_run_event(thread: Thread, ev: rev.RunEvent) -> Folded:
    """Fold one run event into `thread` (a live copy of the running thread)."""
    match ev:
        case rev.MessageStarted():
            _message, added = live_message(thread, ev.message_id)
            return "added" if added else "unchanged"
        case rev.TextDelta():
            msg, added = live_message(thread, ev.message_id)
            parts = [c for c in msg.content if isinstance(c, TextContent)]
            if parts:
                parts[-1].text += ev.text
            else:
                msg.content = [*msg.content, TextContent(type="text", text=ev.text)]
            return "added" if added else "changed"
        case rev.ThinkingDelta():
            msg, added = live_message(thread, ev.message_id)
            msg.thinking = (msg.thinking or "") + ev.text
            return "added" if added else "changed"
        case rev.ToolCallDelta():
            msg, added = live_message(thread, ev.message_id)
            calls = list(msg.toolCalls or [])
            call = next((c for c in calls if c.id == ev.call_id), None)
            if call is None:
                call = ToolCall(id=ev.call_id, input=ToolCallInput(name=ev.name, arguments={}))
                calls.append(call)
                msg.toolCalls = calls
            if ev.name:
                call.input.name = ev.name
            if ev.arguments_text:
                arguments, reading = read_arguments(ev.arguments_text)
                if reading != "unreadable":  # not yet readable: keep the arguments shown so far
                    call.input.arguments = arguments
            return "added" if added else "changed"
        case rev.MessageFinished():
            if ev.kept:
                return "unchanged"
            messages = thread.ensure_messages()
            before = len(messages)
            messages[:] = [m for m in messages if m.id != ev.message_id]
            return "changed" if len(messages) != before else "unchanged"
        case rev.ToolFinished():
            return "changed" if set_tool_output(thread, ev.call_id, ev.output) else "unchanged"
        case rev.RunStarted() | rev.ToolStarted() | rev.Paused() | rev.Retrying() | rev.RunFinished():
            return "unchanged"  # about the run, not the thread (RunFinished's thread replaces the copy)
        case _:
            assert_never(ev)


def live_message(thread: Thread, message_id: str) -> tuple[AssistantMessage, bool]:
    """(the assistant message `message_id`, True when it was just appended, empty)."""
    found = next((m for m in reversed(thread.messages) if m.id == message_id), None)
    if isinstance(found, AssistantMessage):
        return found, False
    msg = AssistantMessage(id=message_id, role="assistant", content=[TextContent(type="text", text="")])
    thread.ensure_messages().append(msg)
    return msg, True


def set_tool_output(thread: Thread, call_id: str, output: ToolCallOutput) -> bool:
    """Put `output` on the tool call `call_id` (the latest one); False when there is none."""
    for m in reversed(thread.messages):
        for c in getattr(m, "toolCalls", None) or []:
            if c.id == call_id:
                c.output = output
                return True
    return False
