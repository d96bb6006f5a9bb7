"""Run events: what a run reports while it works, in the order it happens.

`Runner.run(..., on_event=cb)` calls `cb(event)` on the worker thread that runs the loop;
the UI forwards them to its one thread-safe queue (workers never touch widgets), the CLI prints them. Every event is a
small frozen dataclass; none carries mutable state of the run. `RunEvent` is the closed set:
both consumers (`presenters/run.py`, `commands/run.py`'s `Printer`) handle every member with
`match` and `assert_never`, and `tests/agent/test_events_consumed.py` checks it.

Order for one turn: MessageStarted, then any of TextDelta / ThinkingDelta / ToolCallDelta,
then MessageFinished (Retrying may come before the first delta when a call is retried); then
ToolStarted/ToolFinished pairs when tools run; Paused when the loop waits for a human;
RunFinished last — exactly once per `Runner.run` call, also when the run is refused before
it starts (then it is the only event).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: importing the events stays cheap (the CLI imports them early)
    from ..core.model import ToolCallOutput
    from .run_types import RunResult


@dataclass(frozen=True)
class RunStarted:
    provider: str = ""
    model: str = ""


@dataclass(frozen=True)
class MessageStarted:
    message_id: str


@dataclass(frozen=True)
class TextDelta:
    message_id: str
    text: str  # the new fragment only


@dataclass(frozen=True)
class ThinkingDelta:
    message_id: str
    text: str  # the new fragment only


@dataclass(frozen=True)
class ToolCallDelta:
    message_id: str
    index: int
    call_id: str
    name: str
    arguments_text: str  # all argument text received so far for this call (not just the fragment)


@dataclass(frozen=True)
class MessageFinished:
    message_id: str
    kept: bool = True  # False when a stopped/failed turn produced nothing and the message was dropped


@dataclass(frozen=True)
class ToolStarted:
    message_id: str
    call_id: str
    name: str = ""


@dataclass(frozen=True)
class ToolFinished:
    message_id: str
    call_id: str
    output: ToolCallOutput


@dataclass(frozen=True)
class Paused:
    reason: str
    calls: tuple[tuple[str, str], ...]  # (message id, call id) waiting for a human
    risky: bool = False  # True: the calls can run once a human confirms them (`tools/router.ToolPause.risky`)


@dataclass(frozen=True)
class Retrying:
    """A model call failed before its first token and will be sent again after `delay` s."""

    attempt: int  # the attempt about to be made (2, 3, …)
    delay: float
    reason: str  # the provider's error, already redacted


@dataclass(frozen=True)
class RunFinished:
    result: RunResult


RunEvent = (RunStarted | MessageStarted | TextDelta | ThinkingDelta | ToolCallDelta | MessageFinished
            | ToolStarted | ToolFinished | Paused | Retrying | RunFinished)
