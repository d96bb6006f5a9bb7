"""Run-history intents of the editor presenter: rows, inspect, restore (one undo step),
remove (with the evaluations that use the run), fork from a message into a new thread file,
the structural comparison and verdict-only evaluations, a run's trace (`trace_source`), and what the panel shows: run rows in
the chosen sort order and evaluation rows (`presenters/history_rows.py`), and the chart
(`presenters/history_chart.py`). `HistoryIntents(doc)` is a
component of `presenters/editor.EditorPresenter` (`presenter.history_intents`); `doc` is the
presenter, seen through `HistoryDocument`. The compare dialog's draft lives in
`presenters/compare.py`. No Tk.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..core.model import RunSnapshot, Thread
from ..errors import UserFacingError
from .history_chart import ChartData, chart_data
from .history_rows import EvaluationRow, HistoryRow, HistorySort, evaluation_rows, run_rows
from .view_updates import AllChanged, EditorUpdate, HistoryChanged


class HistoryDocument(Protocol):
    """What `HistoryIntents` uses of its owner (`presenters/editor.EditorPresenter`)."""

    thread: Thread
    ws: Any  # core.workspace.Workspace
    rel: str
    dirty: bool
    read_only: bool

    @property
    def title(self) -> str: ...

    def checkpoint(self, key: Any = None) -> None: ...

    def edited(self, update: EditorUpdate) -> None: ...

    def notify(self, update: EditorUpdate) -> None: ...

    def save(self) -> bool: ...


class HistoryIntents:
    """Intents on `doc.thread.runHistory` / `evaluations`."""

    def __init__(self, doc: HistoryDocument) -> None:
        self.doc = doc

    def inspect(self, run_id: str) -> Any:
        """A read-only view of one run (`core.history.RunView`)."""
        from ..core.history import inspect_run

        return inspect_run(self.doc.thread, run_id)

    def trace_source(self, run_id: str) -> tuple[RunSnapshot, str]:
        """What the trace view of a run needs (`presenters/trace_view.py`): a copy of its
        entry (its traces are read on a worker) and its title, "<date time> · <provider/model>"."""
        from ..core.history import absolute_time, find_run
        from .history_rows import model_full

        run = find_run(self.doc.thread, run_id)
        return run.model_copy(deep=True), f"{absolute_time(run.timestamp or 0)} · {model_full(run.thread)}"

    def fork_from(self, run_id: str, message_id: str) -> str:
        """Write a new thread beside this one from a run, up to and including a message
        (`Workspace.fork_run`); unsaved edits are saved first. Returns the new path."""
        from ..core.history import find_run

        find_run(self.doc.thread, run_id)
        if self.doc.dirty and not self.doc.read_only:
            self.doc.save()
        elif self.doc.read_only:
            raise UserFacingError("Stop the run before forking.")
        new_rel: str = self.doc.ws.fork_run(self.doc.rel, run_id, message_id)
        return new_rel

    # -- run history ---------------------------------------------------------------------
    def history(self) -> list[Any]:
        """Run-history rows, newest first (`core.history.RunView`)."""
        from ..core.history import list_runs

        return list_runs(self.doc.thread)

    def rows(self, sort: HistorySort) -> list[HistoryRow]:
        """The panel's run rows in `sort`'s order."""
        return sort.apply(run_rows(self.doc.thread))

    def chart(self) -> ChartData:
        """Scores, latency and cost per run across the history."""
        return chart_data(self.doc.thread)

    def ordered_pair(self, run_x: str, run_y: str) -> tuple[str, str]:
        """The two runs as (A, B): A is the earlier one, whatever order the list shows."""
        from ..core.history import find_run

        if find_run(self.doc.thread, run_y).timestamp < find_run(self.doc.thread, run_x).timestamp:
            return run_y, run_x
        return run_x, run_y

    def restore_run(self, run_id: str) -> None:
        """Replace title/model/context with a run's snapshot — one undo step."""
        from ..core.history import restore_run

        self.doc.checkpoint(None)
        restore_run(self.doc.thread, run_id)
        self.doc.thread.title = self.doc.title
        self.doc.edited(AllChanged())

    def remove_run(self, run_id: str) -> None:
        """Remove a run (and evaluations that use it); not an undo step, as in the original."""
        from ..core.history import remove_run

        if self.doc.read_only:
            raise UserFacingError("Stop the run before changing the run history.")
        remove_run(self.doc.thread, run_id)
        self.doc.dirty = True
        self.doc.notify(HistoryChanged())

    def compare_text(self, run_a: str, run_b: str) -> str:
        """The structural comparison of two runs as text (`core.compare`)."""
        from ..core.compare import compare_runs, render_text

        return render_text(compare_runs(self.doc.thread, run_a, run_b))

    def evaluation_of(self, run_a: str, run_b: str) -> Any:
        from ..core.run_verdicts import find_pair

        return find_pair(self.doc.thread, run_a, run_b)

    def evaluate(self, run_a: str, run_b: str, verdict: str, note: str | None = None) -> Any:
        """Save the verdict for a pair of runs (one record per unordered pair)."""
        from ..core.run_verdicts import save_evaluation

        if self.doc.read_only:
            raise UserFacingError("Stop the run before evaluating runs.")
        ev = save_evaluation(self.doc.thread, run_a, run_b, verdict, (note or "").strip() or None)
        self.doc.dirty = True
        self.doc.notify(HistoryChanged())
        return ev

    def neighbours(self, run_id: str) -> tuple[str | None, str | None]:
        """The runs shown before and after `run_id` in the history list (newest first)."""
        ids = [r.id for r in self.history()]
        if run_id not in ids:
            return None, None
        i = ids.index(run_id)
        return (ids[i - 1] if i > 0 else None), (ids[i + 1] if i + 1 < len(ids) else None)

    def evaluation_rows(self) -> list[EvaluationRow]:
        """The evaluations under the run history, most recently updated first: runs by time
        and model, verdict, rubric, averages and the B − A delta."""
        return evaluation_rows(self.doc.thread)

    def evaluation_pair(self, evaluation_id: str) -> tuple[str, str]:
        for ev in self.doc.thread.evaluations or []:
            if ev.id == evaluation_id:
                return ev.leftRunId, ev.rightRunId
        raise UserFacingError(f"No evaluation {evaluation_id!r} in this thread.")

    def remove_evaluation(self, evaluation_id: str) -> None:
        """Remove one evaluation (not an undo step, like removing a run)."""
        from ..core.run_verdicts import remove_evaluation

        if self.doc.read_only:
            raise UserFacingError("Stop the run before changing evaluations.")
        remove_evaluation(self.doc.thread, evaluation_id)
        self.doc.dirty = True
        self.doc.notify(HistoryChanged())
