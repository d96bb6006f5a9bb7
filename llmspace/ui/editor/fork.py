"""Fork a run into a new thread and open it: the one way the history panel and the run
inspector (`ui/editor/inspect.py`) make a thread from a run up to one of its messages."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import UserFacingError

if TYPE_CHECKING:
    from .context import RunRecords


def fork_and_open(runs: RunRecords, run_id: str, message_id: str) -> str | None:
    """Write a new thread from `run_id` up to `message_id`, show it in the tree and open it
    in a new tab (the history panel and the run inspector both fork this way)."""
    try:
        new_rel = runs.intents.fork_from(run_id, message_id)
    except UserFacingError as exc:
        runs.ui.errors.show(str(exc))
        return None
    runs.open_thread(new_rel)
    runs.ui.status.set(f"Forked into {new_rel}")
    return new_rel
