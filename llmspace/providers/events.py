"""The closed set of events an adapter yields while streaming one model turn.

`stream(request, cancel) -> Iterator[StreamEvent]` (see `providers/base.py`). The run loop
(`agent/`) folds these into an assistant message; the UI only sees them through the pump.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    index: int  # position of the call within this turn
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ToolCallArgsDelta:
    index: int
    text: str  # a fragment of the JSON arguments


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    index: int


@dataclass(frozen=True, slots=True)
class UsageEvent:
    """Token counts as the provider reported them (any may be missing)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    reasoning: int | None = None
    total: int | None = None


@dataclass(frozen=True, slots=True)
class Finish:
    """The last event of a turn that did not fail (a failure ends with `ErrorEvent` instead).
    `raw["replay"]`, when present, is provider data to hand back on the next request in
    `NeutralMessage.extra` (Anthropic `thinkingSignature` / `redactedThinking`, OpenAI
    Responses `reasoningItems`)."""

    reason: str  # stop | length | tool_calls | content_filter | error | aborted | <provider's own>
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ErrorEvent:
    """A failed turn (the last event). `in_stream`: the model's server answered and then
    reported the failure inside its stream (an error frame or event), or its stream stopped
    making progress after output began — the run is recorded (as an error), unlike a
    failure to get an answer at all (an HTTP error status, a refused or dropped connection)."""

    message: str  # already redacted, fit to show the user
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None  # seconds, from the provider's Retry-After header
    in_stream: bool = False


StreamEvent: TypeAlias = TextDelta | ThinkingDelta | ToolCallStart | ToolCallArgsDelta | ToolCallEnd | UsageEvent | Finish | ErrorEvent

# The first token of a reply: before one, a failed call may be retried (`providers/retry.py`).
TOKENS = (TextDelta, ThinkingDelta, ToolCallStart, ToolCallArgsDelta)


def is_progress(event: StreamEvent) -> bool:
    """Whether `event` is model output: a non-empty text or thinking delta, a tool-call
    start, arguments or end, usage, or the finish. Keep-alives, empty deltas and errors are
    not; `progressTimeout` is the longest time allowed without progress (`providers/progress.py`)."""
    if isinstance(event, (TextDelta, ThinkingDelta, ToolCallArgsDelta)):
        return bool(event.text)
    return not isinstance(event, ErrorEvent)
