"""What a run is asked to do and what it answers: `RunOptions`, `RunResult`, `RunStatus`.

Plain data with no behaviour, so every part of a run can name them without importing the
part that starts runs: `agent/runner.py` (the worker pool) takes `RunOptions` and returns
`RunResult`; `agent/loop.py` (the session) builds the `RunResult`; `agent/events.py`
carries it in `RunFinished`; the GUI's run presenter, the CLI (`commands/run.py`), the
matrix and evaluations read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..core.model import Thread, Usage

RunStatus = Literal["completed", "stopped", "failed", "paused"]
DEFAULT_MAX_TURNS = 50


@dataclass
class RunOptions:
    provider: str | None = None  # override the thread's provider ("replay" replays a recorded run)
    model: str | None = None  # override the thread's model id
    variables: dict[str, str] = field(default_factory=dict)  # NAME -> VALUE overrides for rendering
    max_turns: int = DEFAULT_MAX_TURNS  # ReAct turn limit
    auto_tools: bool = False  # run the tools of a turn once, then stop
    react: bool = False  # run tools and call the model again, up to max_turns
    from_message_id: str | None = None  # cut the messages after this one first
    tool_results: dict[str, tuple[str, bool]] = field(default_factory=dict)  # call id -> (text, is_error)
    replay_run: str | None = None  # with provider "replay": the run to replay (default: latest)
    tool_timeout: float | None = None  # seconds per tool call (None: the tool's own limit)
    elicit: Any = None  # answers MCP servers' requests for input (`mcp.elicitation.Elicitor`); None declines
    thread_path: str | None = None  # the thread's workspace path, for trace observers (OpenTelemetry)


@dataclass
class RunResult:
    status: RunStatus
    error: str | None
    thread: Thread
    paused_calls: list[tuple[str, str]] = field(default_factory=list)  # (message id, call id) awaiting a human
    new_message_ids: list[str] = field(default_factory=list)  # assistant messages this run added
    run_id: str | None = None  # the run-history entry written (None when nothing was recorded)
    paused_reason: str | None = None
    turns: int = 0  # model turns taken
    usage: Usage | None = None  # summed over the assistant messages this run added
    warnings: list[str] = field(default_factory=list)  # render warnings of this run (template errors, unresolved names)
    reply_warnings: list[str] = field(default_factory=list)  # about the replies (cut at maxTokens): stderr / a toast
