"""Presenter -> view updates: the closed sets of messages the editor and run presenters send
to their views, one small frozen dataclass each.

`EditorPresenter.notify(update)` sends an `EditorUpdate` (what part of the open thread
changed); `RunPresenter.notify(update)` a `RunUpdate` (the run's state). Listeners are
`Callable[[EditorUpdate], None]` and `Callable[[RunUpdate], None]`. The views handle every
member with `match` and `assert_never` (`ui/editor/view.EditorView._on_change`,
`ui/editor/run_controls.RunControls.on_run`), and `tests/ui/editor/test_view_updates.py` checks it,
as `agent/events.py` and its test do for run events. A misspelt update is a NameError, not
an update silently dropped.

Updates that are a `ThreadChanged` changed the thread's content: the editor view autosaves
after them (unless the thread is read-only while it runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

RunState = Literal["idle", "running", "paused", "error", "stopping"]


class ThreadChanged:
    """Marks the updates after which the thread's file may need saving."""


# -- the editor presenter's updates ---------------------------------------------------------

@dataclass(frozen=True)
class AllChanged(ThreadChanged):
    """The whole thread may differ (undo, redo, a finished run, a reload from disk)."""


@dataclass(frozen=True)
class HeaderChanged(ThreadChanged):
    """The thread's file was renamed or moved: its path and title."""

    rel: str


@dataclass(frozen=True)
class ModelChanged(ThreadChanged):
    """The model or its parameters."""


@dataclass(frozen=True)
class ToolsChanged(ThreadChanged):
    """The thread's tools."""


@dataclass(frozen=True)
class VariablesChanged(ThreadChanged):
    """The thread's variables."""


@dataclass(frozen=True)
class PromptChanged(ThreadChanged):
    """The system prompt."""


@dataclass(frozen=True)
class MessagesChanged(ThreadChanged):
    """The message list: an edit (or what is shown of it, e.g. a card collapsed), or during a
    run a message that started streaming, a tool call that grew or got its result, a turn
    that finished (those are rendered at most once per frame)."""

    cause: Literal["edit", "stream", "tool", "finished"] = "edit"


@dataclass(frozen=True)
class MessageChanged(ThreadChanged):
    """One message, edited in its own card (the card may already show it)."""

    index: int


@dataclass(frozen=True)
class ReadOnlyChanged:
    """The thread became read-only (a run started) or editable again."""

    read_only: bool


@dataclass(frozen=True)
class HistoryChanged:
    """The run history or evaluations (saved by the next autosave)."""


@dataclass(frozen=True)
class Saved:
    """A save ended: `error` is None when the file was written, else what went wrong."""

    error: str | None


@dataclass(frozen=True)
class TextStreamed:
    """Text streamed into a message of a running turn (the new fragment only)."""

    message_id: str
    text: str


@dataclass(frozen=True)
class ThinkingStreamed:
    """Thinking streamed into a message of a running turn (the new fragment only)."""

    message_id: str
    text: str


EditorUpdate = (AllChanged | HeaderChanged | ModelChanged | ToolsChanged | VariablesChanged | PromptChanged
                | MessagesChanged | MessageChanged | ReadOnlyChanged | HistoryChanged | Saved | TextStreamed
                | ThinkingStreamed)


# -- the run presenter's updates ------------------------------------------------------------

@dataclass(frozen=True)
class StatusChanged:
    """The run's state; "stopping" between Stop and the run's end."""

    status: RunState


@dataclass(frozen=True)
class RunningOn:
    """The run started on this model, "provider/model" (the saved one may have fallen back)."""

    model: str


@dataclass(frozen=True)
class ToolCallChanged:
    """A tool call started or finished (its status is `RunPresenter.tool_status`)."""

    call_id: str


@dataclass(frozen=True)
class RunPaused:
    """The run waits for a human: tool results to type, or risky calls to confirm."""

    reason: str
    risky: bool


@dataclass(frozen=True)
class RetryNote:
    """A model call failed before its first token and is about to be sent again."""

    note: str


@dataclass(frozen=True)
class RunError:
    """The run (or a tool call started by hand) failed; shown in the banner."""

    error: str


RunUpdate = StatusChanged | RunningOn | ToolCallChanged | RunPaused | RetryNote | RunError
