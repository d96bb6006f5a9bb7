"""Run history of a thread (`runHistory`): snapshots, append, normalise, restore, inspect,
remove and fork (the new thread; `Workspace.fork_run` writes it).

- `snapshot_of(thread)` copies title/model/context only (never runHistory/evaluations).
- `append_run(thread, usage, …)` records a run (cap `MAX_RUNS`, oldest dropped) and prunes
  evaluations whose runs vanished.
- `normalize_history(thread)` applies the load rules: non-finite timestamps dropped, missing ids
  back-filled `run-<trunc(ts)>-<index>`, duplicate ids keep the last occurrence, invalid usage
  dropped, cap applied.
- `restore_run`, `inspect_run`, `remove_run`, `fork_thread` (a new thread from a run).
- Summaries used by the history list, the inspector and the compare view.

Everything mutates the given `Thread` in place or returns a new one; nothing is written here. New nodes carry only the fields that should be written.
"""

from __future__ import annotations

import gc
import math
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import orjson

from ..errors import UserFacingError
from .model import AssistantMessage, RunSnapshot, Thread, ThreadSnapshot, Usage, UserMessage
from .roundtrip import Node, apply_key_order, recording_key_orders
from .usage import compact_label, is_valid_usage, normalize_usage, snapshot_usage

MAX_RUNS = 20
_SNAPSHOT_FIELDS = ("title", "model", "context")


def now_ms() -> int:
    return int(time.time() * 1000)


def unset(node: Any, name: str) -> None:
    """Remove a field from a node so it is not written (pydantic has no public 'unset')."""
    if name in type(node).model_fields:
        node.__dict__[name] = None
        node.model_fields_set.discard(name)


# -- snapshots -----------------------------------------------------------------------------


def _partial_dump(node: Node, names: tuple[str, ...]) -> dict[str, Any]:
    """The JSON-ready dict of some fields of a node, with remembered key orders re-applied."""
    present = {n for n in names if n in node.model_fields_set and getattr(node, n) is not None}
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        data = node.model_dump(include=present, exclude_unset=True, by_alias=True)
    finally:
        if gc_was_on:
            gc.enable()
    if getattr(node, "_has_custom_order", False) or getattr(node, "_order_below", False):
        data = apply_key_order(node, data)
        data = {k: data[k] for k in data if k in present}
    return data


def _validate_snapshot(data: dict[str, Any]) -> tuple[ThreadSnapshot, bool]:
    """A fresh ThreadSnapshot from JSON-ready data (GC paused while building the objects)."""
    gc_was_on = gc.isenabled()
    gc.disable()
    try:
        with recording_key_orders() as reordered:
            snap = ThreadSnapshot.model_validate_json(orjson.dumps(data))
    finally:
        if gc_was_on:
            gc.enable()
    return snap, bool(reordered)


def snapshot_of(thread: Thread | ThreadSnapshot) -> ThreadSnapshot:
    """A deep, independent copy of title/model/context (history is never nested)."""
    snap, _ = _validate_snapshot(_partial_dump(thread, _SNAPSHOT_FIELDS))
    return snap


def _attach(thread: Thread, run: RunSnapshot, snap_has_order: bool) -> None:
    """Make saving re-apply key orders remembered inside a new run's snapshot."""
    if snap_has_order:
        run.thread._order_below = True
        run._order_below = True
        thread._has_custom_order = True


def find_run(thread: Thread, run_id: str) -> RunSnapshot:
    """The run with this id, or a clear error listing what exists."""
    for run in thread.runHistory or []:
        if run.id == run_id:
            return run
    known = [r.id for r in thread.runHistory or [] if r.id]
    listing = ", ".join(known[-5:]) if known else "none"
    raise UserFacingError(
        f"No run {run_id!r} in this thread's history (runs: {listing}).",
        hint="List the runs with `llmspace history THREAD`.",
    )


def run_ids(thread: Thread) -> set[str]:
    return {r.id for r in thread.runHistory or [] if r.id}


def append_run(
    thread: Thread,
    usage: Usage | None,
    timestamp_ms: int | None = None,
    run_id: str | None = None,
    snapshot: ThreadSnapshot | None = None,
    status: str | None = None,
    traces: list[str] | None = None,
) -> RunSnapshot:
    """Record the thread's current state (or `snapshot`) as a run; returns the new entry.
    `status` ("error", "empty") marks a failed run, "stopped" a run the user stopped; None
    for the others (not written).
    `traces` are the file names of the run's traces under `traces/calls/`
    (`providers/traces.py`), in step order; none or empty: not written.

    The `status` key is our addition, kept as an unknown key of the entry (like any other, so
    a value of any type in a file round-trips): written only for a run that failed after the
    model answered — "error" (the server reported an error in its stream, or stopped making
    progress) or "empty" (an empty reply) — and "stopped" for a run the user stopped (its
    reply is cut short and its provider usually never reported token counts). Completed and
    paused runs have none; the original app ignores it.
    The `traces` key is ours in the same way: a list of file names written last in the entry,
    kept as an unknown key (so it round-trips byte for byte), ignored by the original app
    (its schemas allow additional properties); an entry without it lists no traces.

    Keeps at most `MAX_RUNS` entries (oldest dropped) and removes evaluations that refer to
    runs no longer in the history."""
    if snapshot is None:
        data = _partial_dump(thread, _SNAPSHOT_FIELDS)
    else:
        data = _partial_dump(snapshot, _SNAPSHOT_FIELDS)
    snap, has_order = _validate_snapshot(data)
    fields: dict[str, Any] = {"id": run_id or str(uuid.uuid4()), "thread": snap}
    clean = normalize_usage(usage) if usage is not None else None
    if clean is not None:
        fields["usage"] = clean
    fields["timestamp"] = int(timestamp_ms) if timestamp_ms is not None else now_ms()
    if status is not None:
        fields["status"] = status
    if traces:
        fields["traces"] = list(traces)
    run = RunSnapshot(**fields)
    _attach(thread, run, has_order)
    history = [r for r in thread.runHistory or [] if r.id != run.id]
    history.append(run)
    thread.runHistory = history[-MAX_RUNS:]
    prune_evaluations(thread)
    return run


def run_status(run: RunSnapshot) -> str | None:
    """A recorded run's `status` ("error", "empty"), None for a run that did not fail."""
    value = (run.model_extra or {}).get("status")
    return value if isinstance(value, str) else None


def run_traces(run: RunSnapshot) -> list[str]:
    """The file names of a recorded run's traces (`traces/calls/`), in step order; [] for a
    run recorded without them (by the original app, or before traces named their run). A
    value that is not a list of plain file names is ignored."""
    value = (run.model_extra or {}).get("traces")
    if not isinstance(value, list):
        return []
    return [v for v in value if isinstance(v, str) and v and "/" not in v and "\\" not in v and v not in (".", "..")]


def prune_evaluations(thread: Thread) -> int:
    """Drop evaluations whose left or right run is gone; returns how many were dropped."""
    if not thread.evaluations:
        return 0
    ids = run_ids(thread)
    kept = [e for e in thread.evaluations if e.leftRunId in ids and e.rightRunId in ids]
    dropped = len(thread.evaluations) - len(kept)
    if dropped:
        thread.evaluations = kept
    return dropped


def normalize_history(thread: Thread) -> None:
    """Apply the load rules (see the module docstring) to `thread.runHistory` (in place)."""
    if thread.runHistory is None:
        return
    entries = []
    for index, run in enumerate(thread.runHistory):  # the index in the file, as the original numbers them
        if not (isinstance(run.timestamp, (int, float)) and math.isfinite(run.timestamp)):
            continue
        if not (run.id and run.id.strip()):
            run.id = f"run-{math.trunc(run.timestamp)}-{index}"
        entries.append(run)
    for run in entries:
        if "usage" in run.model_fields_set and run.usage is not None and not is_valid_usage(run.usage):
            unset(run, "usage")
    last: dict[str, int] = {run.id or "": i for i, run in enumerate(entries)}
    entries = [run for i, run in enumerate(entries) if last[run.id or ""] == i]
    new = entries[-MAX_RUNS:]
    if len(new) != len(thread.runHistory) or any(a is not b for a, b in zip(new, thread.runHistory, strict=True)):
        thread.runHistory = new


# -- restore / remove / fork ---------------------------------------------------------------


def restore_run(thread: Thread, run_id: str) -> None:
    """Replace title/model/context with the run's snapshot; history, evaluations and rubrics stay."""
    run = find_run(thread, run_id)
    copy, has_order = _validate_snapshot(_partial_dump(run.thread, _SNAPSHOT_FIELDS))
    if has_order:
        thread._has_custom_order = True
    for name in _SNAPSHOT_FIELDS:
        if name in copy.model_fields_set and getattr(copy, name) is not None:
            setattr(thread, name, getattr(copy, name))
        elif name != "title":
            unset(thread, name)


def remove_run(thread: Thread, run_id: str) -> int:
    """Remove a run and every evaluation that refers to it; returns evaluations removed."""
    find_run(thread, run_id)
    thread.runHistory = [r for r in thread.runHistory or [] if r.id != run_id]
    return prune_evaluations(thread)


def fork_thread(thread: Thread, run_id: str, message_id: str) -> Thread:
    """A new thread from a run's snapshot, with messages up to and including `message_id`."""
    run = find_run(thread, run_id)
    copy = snapshot_of(run.thread)
    messages = copy.context.messages if copy.context and copy.context.messages else []
    ids = [m.id for m in messages]
    if message_id not in ids:
        shown = ", ".join(ids[:8]) + (" …" if len(ids) > 8 else "")
        raise UserFacingError(
            f"Run {run_id!r} has no message {message_id!r} (messages: {shown or 'none'}).",
            hint=f"Inspect the run with `llmspace history THREAD --inspect {run_id}`.",
        )
    assert copy.context is not None
    copy.context.messages = messages[: ids.index(message_id) + 1]
    data = _partial_dump(copy, _SNAPSHOT_FIELDS)
    from .threadio import thread_from_data

    return thread_from_data(data)


# -- summaries ------------------------------------------------------------------------------


def model_label(snapshot: ThreadSnapshot | Thread) -> str:
    m = snapshot.model
    return f"{m.provider}/{m.id}" if m is not None else "No model"


def _messages(snapshot: ThreadSnapshot | Thread) -> list[UserMessage | AssistantMessage]:
    ctx = snapshot.context
    return list(ctx.messages or []) if ctx is not None else []


def _image_count(msg: UserMessage | AssistantMessage) -> int:
    return sum(1 for c in msg.content if getattr(c, "type", None) == "image_data")


def run_summary(snapshot: ThreadSnapshot | Thread) -> str:
    """One line for a history row: the last message's tool calls, images or text."""
    msgs = _messages(snapshot)
    if not msgs:
        prompt = snapshot.context.systemPrompt if snapshot.context else None
        return _one_line(prompt) if prompt and prompt.strip() else "Empty thread"
    last = msgs[-1]
    calls = getattr(last, "toolCalls", None) or []
    if calls:
        return ", ".join(f"{c.input.name}()" for c in calls)
    text = last.text()
    if text.strip():
        return _one_line(text)
    images = _image_count(last)
    if images:
        return f"[{images} image{'s' if images != 1 else ''}]"
    return "Empty message"


def _one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def last_user_excerpt(snapshot: ThreadSnapshot | Thread) -> str:
    """The last user input for the compare view."""
    users = [m for m in _messages(snapshot) if isinstance(m, UserMessage)]
    if not users:
        return "No user message"
    last = users[-1]
    text = last.text().strip()
    images = _image_count(last)
    if images:
        text = (text + "\n" if text else "") + f"[{images} image{'s' if images != 1 else ''}]"
    return text or "Empty user message"


def result_excerpt(snapshot: ThreadSnapshot | Thread) -> str:
    """The last assistant result: its text plus each tool call `name(<JSON args>)` and output."""
    assistants = [m for m in _messages(snapshot) if isinstance(m, AssistantMessage)]
    if not assistants:
        return "No assistant result"
    last = assistants[-1]
    parts = [last.text().strip()] if last.text().strip() else []
    for call in last.toolCalls or []:
        args = orjson.dumps(call.input.arguments).decode()
        parts.append(f"{call.input.name}({args})")
        if call.output is not None:
            parts.append(call.output.display_text())
    text = "\n".join(p for p in parts if p)
    return text or "Empty result"


def relative_time(timestamp_ms: float, now: float | None = None) -> str:
    """"just now", "5 min ago", "3 h ago", "2 d ago"."""
    now = now_ms() if now is None else now
    secs = max(0.0, (now - timestamp_ms) / 1000)
    if secs < 45:
        return "just now"
    if secs < 3600:
        return f"{max(1, round(secs / 60))} min ago"
    if secs < 86400:
        return f"{round(secs / 3600)} h ago"
    return f"{round(secs / 86400)} d ago"


def absolute_time(timestamp_ms: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(timestamp_ms / 1000))


@dataclass
class RunView:
    """A read-only summary of one run (history rows and the inspector)."""

    id: str
    timestamp: float
    model: str
    message_count: int
    summary: str
    usage_label: str
    usage: Usage | None
    messages: list[UserMessage | AssistantMessage] = field(default_factory=list)
    system_prompt: str = ""

    @property
    def messages_label(self) -> str:
        return f"{self.message_count} message{'s' if self.message_count != 1 else ''}"


def view_of(run: RunSnapshot) -> RunView:
    usage = snapshot_usage(run)
    msgs = _messages(run.thread)
    ctx = run.thread.context
    return RunView(
        id=run.id or "",
        timestamp=run.timestamp,
        model=model_label(run.thread),
        message_count=len(msgs),
        summary=run_summary(run.thread),
        usage_label=compact_label(usage),
        usage=usage,
        messages=msgs,
        system_prompt=(ctx.systemPrompt or "") if ctx else "",
    )


def list_runs(thread: Thread) -> list[RunView]:
    """History rows, newest first."""
    return [view_of(r) for r in reversed(thread.runHistory or [])]


def inspect_run(thread: Thread, run_id: str) -> RunView:
    """The read-only view of one run (its messages are the snapshot's; do not edit them)."""
    return view_of(find_run(thread, run_id))
