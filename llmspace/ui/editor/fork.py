"""Fork a run into a new thread and open it: the one way the history panel and the run
inspector (`ui/editor/inspect.py`) make a thread from a run up to one of its messages."""

from __future__ import annotations

from typing import Any

from ...errors import UserFacingError


def fork_and_open(view: Any, run_id: str, message_id: str) -> str | None:
    """Write a new thread from `run_id` up to `message_id`, show it in the tree and open it
    in a new tab (the history panel and the run inspector both fork this way)."""
    ctx = view.ctx
    try:
        new_rel = view.p.history_intents.fork_from(run_id, message_id)
    except UserFacingError as exc:
        ctx.ui.errors.show(str(exc))
        return None
    ctx.tree.refresh()
    ctx.tabs.open_thread(new_rel)
    ctx.ui.status.set(f"Forked into {new_rel}")
    return new_rel
