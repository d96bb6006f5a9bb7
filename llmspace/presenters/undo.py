"""Undo and redo of one open thread: `UndoHistory`, the two stacks of steps.

A step is either the thread as it was (its serialised bytes, taken just before an edit) or a
`RenameStep` (the file was renamed from the title; undoing it renames the file back, so it
carries no snapshot). Consecutive edits of the same field (the same `key`) within
`COALESCE_S` share one step. The stacks keep `UNDO_STEPS` steps within `UNDO_BYTES` of
snapshots, dropping the oldest (as the original app). A new step clears the redo stack.

No Tk, no thread model: the editor presenter (`presenters/editor.py`) says when to take a
snapshot and restores the bytes a step gives back.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError

UNDO_STEPS = 100
UNDO_BYTES = 64 * 1024 * 1024
COALESCE_S = 1.0


@dataclass(frozen=True)
class RenameStep:
    """An undo step for a rename made from the title: the file's title before and after."""

    before: str
    after: str


Step = bytes | RenameStep


def _size(step: Step) -> int:
    return len(step) if isinstance(step, bytes) else 0


class UndoHistory:
    """The undo and redo stacks of one thread, newest step last."""

    def __init__(self) -> None:
        self.undo: list[Step] = []
        self.redo: list[Step] = []
        self._last_key: Any = None
        self._last_time = 0.0

    def record(self, key: Any, snapshot: Callable[[], bytes]) -> None:
        """Take `snapshot()` as a new step, unless the last step was for the same `key` less
        than `COALESCE_S` ago (then that step covers this edit too; None never merges)."""
        now = time.monotonic()
        if key is not None and key == self._last_key and now - self._last_time < COALESCE_S:
            self._last_time = now
            return
        self._last_key, self._last_time = key, now
        self.push(snapshot())

    def renamed(self, before: str, after: str) -> None:
        """The file was renamed from the title: one step that renames it back."""
        if before != after:
            self.push(RenameStep(before, after))
            self.break_run()

    def push(self, step: Step) -> None:
        self.undo.append(step)
        self.redo.clear()
        total = sum(_size(s) for s in self.undo)
        while len(self.undo) > UNDO_STEPS or (total > UNDO_BYTES and len(self.undo) > 1):
            total -= _size(self.undo.pop(0))

    def break_run(self) -> None:
        """The next edit starts a step of its own, whatever its key."""
        self._last_key = None

    def step(self, back: bool, current: Callable[[], bytes], rename: Callable[[str], object] | None) -> bytes | None:
        """Undo (`back`) or redo one step: the snapshot to restore, or None when the step was a
        rename, done through `rename(title)` (an error leaves both stacks as they were).
        `current()` is the thread now, kept on the other stack."""
        source, target = (self.undo, self.redo) if back else (self.redo, self.undo)
        step = source[-1]
        if isinstance(step, RenameStep):
            if rename is None:
                raise UserFacingError("This rename cannot be undone here.")
            rename(step.before if back else step.after)
            target.append(source.pop())
            self.break_run()
            return None
        target.append(current())
        source.pop()
        return step
