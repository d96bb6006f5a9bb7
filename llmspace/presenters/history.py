"""Run-history intents of the editor presenter: rows, inspect, restore (one undo step),
remove (with the evaluations that use the run), fork from a message into a new thread file,
the structural comparison and verdict-only evaluations. Mixed into
`presenters/editor.EditorPresenter`; the compare dialog's draft lives in `presenters/compare.py`.
No Tk. Callers: `ui/editor/history.py`, tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError


class HistoryIntents:
    """Intents on `self.thread.runHistory` / `evaluations`; expects EditorPresenter's attributes."""

    thread: Any
    ws: Any
    rel: str
    dirty: bool
    read_only: bool

    if TYPE_CHECKING:  # provided by EditorPresenter
        def checkpoint(self, key: Any = None) -> None: ...
        def _edited(self, kind: str, detail: Any = None) -> None: ...
        def notify(self, kind: str, detail: Any = None) -> None: ...
        def save(self) -> bool: ...

        @property
        def title(self) -> str: ...

    def inspect(self, run_id: str) -> Any:
        """A read-only view of one run (`core.history.RunView`)."""
        from ..core.history import inspect_run

        return inspect_run(self.thread, run_id)

    def fork_from(self, run_id: str, message_id: str) -> str:
        """Write a new thread beside this one from a run, up to and including a message
        (`core.history.fork`); unsaved edits are saved first. Returns the new path."""
        from ..core.history import fork, find_run

        find_run(self.thread, run_id)
        if self.dirty and not self.read_only:
            self.save()
        elif self.read_only:
            raise UserFacingError("Stop the run before forking.")
        return fork(self.ws, self.rel, run_id, message_id)

    # -- run history ---------------------------------------------------------------------
    def history(self) -> list[Any]:
        """Run-history rows, newest first (`core.history.RunView`)."""
        from ..core.history import list_runs

        return list_runs(self.thread)

    def restore_run(self, run_id: str) -> None:
        """Replace title/model/context with a run's snapshot — one undo step."""
        from ..core.history import restore_run

        self.checkpoint(None)
        restore_run(self.thread, run_id)
        self.thread.title = self.title
        self._edited("all")

    def remove_run(self, run_id: str) -> None:
        """Remove a run (and evaluations that use it); not an undo step, as in the original."""
        from ..core.history import remove_run

        if self.read_only:
            raise UserFacingError("Stop the run before changing the run history.")
        remove_run(self.thread, run_id)
        self.dirty = True
        self.notify("history")

    def compare_text(self, run_a: str, run_b: str) -> str:
        """The structural comparison of two runs as text (`core.compare`)."""
        from ..core.compare import compare_runs, render_text

        return render_text(compare_runs(self.thread, run_a, run_b))

    def evaluation_of(self, run_a: str, run_b: str) -> Any:
        from ..core.evaluation import find_pair

        return find_pair(self.thread, run_a, run_b)

    def evaluate(self, run_a: str, run_b: str, verdict: str, note: str | None = None) -> Any:
        """Save the verdict for a pair of runs (one record per unordered pair)."""
        from ..core.evaluation import save_evaluation

        if self.read_only:
            raise UserFacingError("Stop the run before evaluating runs.")
        ev = save_evaluation(self.thread, run_a, run_b, verdict, (note or "").strip() or None)
        self.dirty = True
        self.notify("history")
        return ev

    def neighbours(self, run_id: str) -> tuple[str | None, str | None]:
        """The runs shown before and after `run_id` in the history list (newest first)."""
        ids = [r.id for r in self.history()]
        if run_id not in ids:
            return None, None
        i = ids.index(run_id)
        return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

    def evaluation_rows(self) -> list[tuple[str, str]]:
        """(evaluation id, one line) for the evaluations under the run history, newest first."""
        from ..core.evaluation import averages

        labels = {"leftBetter": "A better", "rightBetter": "B better", "tie": "Tie", "pass": "Pass", "fail": "Fail"}
        rows = []
        for ev in sorted(self.thread.evaluations or [], key=lambda e: e.updatedAt, reverse=True):
            text = f"{ev.leftRunId} vs {ev.rightRunId} · {labels.get(ev.verdict, ev.verdict)}"
            avg = averages(ev)
            if avg is not None and ev.rubric is not None:
                text += f" · {ev.rubric.name} {avg.left:.2f}/{avg.right:.2f} ({avg.delta:+.2f})"
            if ev.note:
                text += f" · {ev.note[:60]}"
            rows.append((ev.id, text))
        return rows

    def evaluation_pair(self, evaluation_id: str) -> tuple[str, str]:
        for ev in self.thread.evaluations or []:
            if ev.id == evaluation_id:
                return ev.leftRunId, ev.rightRunId
        raise UserFacingError(f"No evaluation {evaluation_id!r} in this thread.")

    def remove_evaluation(self, evaluation_id: str) -> None:
        """Remove one evaluation (not an undo step, like removing a run)."""
        from ..core.evaluation import remove_evaluation

        if self.read_only:
            raise UserFacingError("Stop the run before changing evaluations.")
        remove_evaluation(self.thread, evaluation_id)
        self.dirty = True
        self.notify("history")
