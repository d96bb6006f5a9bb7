"""Frozen variable values: the snapshot a recorded run leaves in `context.snapshot.variables`
(place key → name → value, plus the frozen whole output of a template text), and the rules
that drop it when what it was computed from changes.

- Reading and writing it: `snapshot_variables` (a normalised copy), `apply_snapshot` (the run
  loop writes `RenderedThread.snapshot` back after a recorded run; empty → removed).
- Keys of frozen template outputs: `rendered_key`, `is_rendered_key`, and the `@include`
  version marker (`INCLUDE_VERSION_KEY`): a frozen output of a text that uses `@include` is
  reused only when it carries the current `INCLUDE_VERSION`.
- Invalidation: `on_system_prompt_edited`, `on_message_edited`, `on_tool_result_edited` drop a
  place's values; `on_variable_changed` drops a variable's values everywhere and every frozen
  template output; `drop_places`.

How rendering uses frozen values is in `core/templating/render.py`. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..model import LEGACY_RENDERED_KEY, RENDERED_KEY, PromptSnapshot, Thread
from .places import SYSTEM_PROMPT_PLACE, message_place, tool_result_place

# RENDERED_KEY ("\u0000rendered") and LEGACY_RENDERED_KEY (" rendered") live in `core/model.py`,
# which renames legacy keys on load.
INCLUDE_VERSION_KEY = "\u0000includeVersion"
INCLUDE_VERSION = "2"


def rendered_key(part: int) -> str:
    """Snapshot key of the frozen whole output of text part `part` of a template place."""
    return RENDERED_KEY if part == 0 else f"{RENDERED_KEY}:{part}"


def is_rendered_key(key: str) -> bool:
    """True for keys of frozen template outputs (`"\u0000rendered"`, `"\u0000rendered:1"`, the
    legacy `" rendered"` forms, include marker)."""
    return key == INCLUDE_VERSION_KEY or any(
        key == base or key.startswith(base + ":") for base in (RENDERED_KEY, LEGACY_RENDERED_KEY))


def _unset(node: Any, field: str) -> None:
    """Pydantic: assigning a field marks it set (dumped); this makes it disappear from the file."""
    setattr(node, field, None)
    node.__pydantic_fields_set__.discard(field)


def snapshot_variables(thread: Thread) -> dict[str, dict[str, str]]:
    """A normalised copy of `context.snapshot.variables` (string values only, no empty places)."""
    ctx = thread.context
    raw = ctx.snapshot.variables if ctx is not None and ctx.snapshot is not None else None
    out: dict[str, dict[str, str]] = {}
    for key, values in (raw or {}).items():
        if isinstance(values, dict):
            kept = {k: v for k, v in values.items() if isinstance(v, str)}
            if kept:
                out[key] = kept
    return out


def apply_snapshot(thread: Thread, variables: dict[str, dict[str, str]] | None) -> None:
    """Write frozen values back (`context.snapshot.variables`); empty -> removed entirely.

    The run loop calls this after a recorded run with `RenderedThread.snapshot`."""
    ctx = thread.ensure_context()
    variables = {k: dict(v) for k, v in (variables or {}).items() if v}
    snap = ctx.snapshot
    if variables:
        if snap is None:
            ctx.snapshot = PromptSnapshot(variables=variables)
        else:
            snap.variables = variables
        return
    if snap is None:
        return
    if snap.variables is not None or "variables" in snap.model_fields_set:
        _unset(snap, "variables")
    if not snap.model_fields_set and not snap.extras():
        _unset(ctx, "snapshot")


def _drop(thread: Thread, keep: Any) -> bool:
    before = snapshot_variables(thread)
    after: dict[str, dict[str, str]] = {}
    for place, values in before.items():
        kept = {k: v for k, v in values.items() if keep(place, k)}
        if kept:
            after[place] = kept
    ctx = thread.context
    raw = ctx.snapshot.variables if ctx is not None and ctx.snapshot is not None else None
    if after == before and raw == before:
        return False
    apply_snapshot(thread, after)
    return True


def drop_places(thread: Thread, places: Iterable[str]) -> bool:
    remove = set(places)
    return _drop(thread, lambda place, _k: place not in remove)


def on_system_prompt_edited(thread: Thread) -> bool:
    """The system prompt text changed: its frozen values no longer apply."""
    return drop_places(thread, [SYSTEM_PROMPT_PLACE])


def on_message_edited(thread: Thread, msg_id: str) -> bool:
    """A message's text changed: drop that message's frozen values."""
    return drop_places(thread, [message_place(msg_id)])


def on_tool_result_edited(thread: Thread, msg_id: str, call_id: str) -> bool:
    """A tool result's text changed: drop that result's frozen values."""
    return drop_places(thread, [tool_result_place(msg_id, call_id)])


def on_variable_changed(thread: Thread, name: str) -> bool:
    """A variable was changed, added or removed: drop its frozen values everywhere and every
    frozen template output (a template may use it in ways we cannot see)."""
    return _drop(thread, lambda _place, k: k != name and not is_rendered_key(k))
