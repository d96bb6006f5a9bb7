"""The offline `replay` provider: answers each model turn with an assistant message recorded
in one of the thread's runs, so an old run can be stepped through with no network and its
tool calls re-executed by today's tool code.

Matching is by position: a request with N messages is answered by message N of the run's
snapshot, which must be an assistant message (a ReAct run stores one assistant message per
turn, tool results on its calls, so positions line up). The recorded text, thinking, tool
calls and usage are streamed back as ordinary `StreamEvent`s; tool results are NOT replayed —
they come from executing the tools again (or from the user, for function tools).

Replay is a registered provider like any other: `providers/registry.register_builtins`
registers `REPLAY_API` under the API name `replay` — a `ModelApi` whose factory binds a
`ReplayAdapter` to the run's thread (`AdapterContext.thread`, `.run_id`) and which declares
itself not retried, not traced and not becoming the thread's model — and the offline
provider `replay` (source built-in). This module does not import the registry.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from ..cancel import CancelToken
from ..core.model import AssistantMessage, RunSnapshot, Thread, UserMessage
from ..errors import UserFacingError
from .base import AdapterContext, ModelApi, ModelRequest
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

    api = PROVIDER_ID  # replay never touches the network

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


def replay_adapter(context: AdapterContext) -> ReplayAdapter:
    """The `replay` API's adapter factory: bound to the run's thread, answering from run
    `context.run_id`, or by default from the runs newest first."""
    thread = context.thread
    if thread is None:
        raise UserFacingError("The replay provider needs the thread's run history; run the thread through the runner.")
    run = find_run(thread, context.run_id)
    if context.run_id is None:
        runs = sorted(thread.runHistory or [], key=lambda r: r.timestamp, reverse=True)
    else:
        runs = [run]
    return ReplayAdapter([(r.id or f"at {int(r.timestamp)}", _messages(r)) for r in runs])


# Offline: never retried, never traced, and a run through it does not become the thread's model.
REPLAY_API = ModelApi(create=replay_adapter, retried=False, traced=False, sets_thread_model=False)


def _messages(run: RunSnapshot) -> list[UserMessage | AssistantMessage]:
    ctx = run.thread.context
    return list(ctx.messages or []) if ctx is not None else []
