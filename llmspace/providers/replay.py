"""The offline `replay` provider: answers each model turn with an assistant message recorded
in one of the thread's runs, so an old run can be stepped through with no network and its
tool calls re-executed by today's tool code.

Matching is by position: a request with N messages is answered by message N of the run's
snapshot, which must be an assistant message (a ReAct run stores one assistant message per
turn, tool results on its calls, so positions line up). The recorded text, thinking, tool
calls and usage are streamed back as ordinary `StreamEvent`s; tool results are NOT replayed —
they come from executing the tools again (or from the user, for function tools).

`replay_endpoint(thread, run_id)` builds the (Endpoint, ModelInfo, adapter) triple the run
loop uses when the provider is `replay`. Callers: `agent/runner.py`, the provider registry.
"""

from __future__ import annotations

import json
from typing import Iterator

from ..core.model import AssistantMessage, RunSnapshot, Thread, UserMessage
from ..errors import UserFacingError
from .base import CancelToken, Endpoint, ModelInfo, ModelRequest
from .events import Finish, StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallEnd, ToolCallStart, UsageEvent

PROVIDER_ID = "replay"


def find_run(thread: Thread, run_id: str | None) -> RunSnapshot:
    """The run `run_id` of `thread`, or its latest run when `run_id` is None."""
    runs = thread.runHistory or []
    if not runs:
        raise UserFacingError(f"Thread {thread.title or ''!r} has no recorded runs to replay.",
                              hint="Run it once against a real model first.")
    if run_id is None:
        return max(runs, key=lambda r: r.timestamp)
    for run in runs:
        if run.id == run_id:
            return run
    known = ", ".join(r.id or "?" for r in runs[-5:])
    raise UserFacingError(f"No run {run_id!r} in this thread's run history.", hint=f"Known runs include: {known}.")


class ReplayAdapter:
    """Streams recorded assistant messages back, turn by turn.

    `sources` are (run label, snapshot messages), most preferred first; each turn is answered
    from the first source that has an assistant message at the request's position (so the
    default, "latest run", still works after a paused replay recorded a shorter run)."""

    api = "openai-completions"  # nominal; replay never touches the network

    def __init__(self, sources: list[tuple[str, list[UserMessage | AssistantMessage]]]) -> None:
        self.sources = [(label, list(msgs)) for label, msgs in sources]

    def pick(self, position: int) -> AssistantMessage:
        for _label, recorded in self.sources:
            if position < len(recorded) and isinstance(recorded[position], AssistantMessage):
                msg = recorded[position]
                assert isinstance(msg, AssistantMessage)
                return msg
        if len(self.sources) == 1:
            what = f"The recorded run {self.sources[0][0]} has no assistant message at position {position + 1}"
        else:
            what = f"None of this thread's recorded runs has an assistant message at position {position + 1}"
        raise UserFacingError(what + "; the thread has moved away from the recording.",
                              hint="Run from an earlier message, or choose another run with --replay-run.")

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        msg = self.pick(len(request.messages))
        if msg.thinking and not cancel.cancelled:
            yield ThinkingDelta(msg.thinking)
        text = msg.text()
        if text and not cancel.cancelled:
            yield TextDelta(text)
        for index, call in enumerate(msg.toolCalls or []):
            if cancel.cancelled:
                break
            yield ToolCallStart(index, call.id, call.input.name)
            args = call.input.partialArguments
            if args is None:
                args = json.dumps(call.input.arguments or {}, ensure_ascii=False)
            yield ToolCallArgsDelta(index, args)
            yield ToolCallEnd(index)
        if cancel.cancelled:
            yield Finish("aborted")
            return
        if msg.usage is not None:
            u = msg.usage
            yield UsageEvent(input=int(u.input), output=int(u.output), cache_read=int(u.cacheRead),
                             cache_write=int(u.cacheWrite),
                             reasoning=int(u.reasoning) if u.reasoning is not None else None,
                             total=int(u.totalTokens) or None)
        yield Finish("tool_calls" if msg.toolCalls else "stop")


class UnboundReplayAdapter:
    """What the provider registry holds under `replay`: it names the provider; the run loop
    replaces it with a `ReplayAdapter` bound to the thread being run."""

    api = PROVIDER_ID

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        raise UserFacingError("The replay provider needs the thread's run history; run the thread through the runner.")


def register(registry: object) -> None:
    """Make `replay` a known provider id of the registry (if it supports registration)."""
    add = getattr(registry, "register_adapter", None)
    if add is not None:
        add(PROVIDER_ID, UnboundReplayAdapter())


def _messages(run: RunSnapshot) -> list[UserMessage | AssistantMessage]:
    ctx = run.thread.context
    return list(ctx.messages or []) if ctx is not None else []


def replay_endpoint(thread: Thread, run_id: str | None) -> tuple[Endpoint, ModelInfo, ReplayAdapter]:
    """What a run with provider `replay` uses: run `run_id`, or by default the runs newest first."""
    run = find_run(thread, run_id)
    if run_id is None:
        runs = sorted(thread.runHistory or [], key=lambda r: r.timestamp, reverse=True)
    else:
        runs = [run]
    sources = [(r.id or f"at {int(r.timestamp)}", _messages(r)) for r in runs]
    model = run.thread.model
    info = ModelInfo(id=model.id if model else "replay", name=f"replay of {sources[0][0]}")
    endpoint = Endpoint(provider_id=PROVIDER_ID, api="openai-completions", base_url="replay:")
    return endpoint, info, ReplayAdapter(sources)
