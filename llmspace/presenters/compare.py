"""The compare dialog of two recorded runs, without Tk: the runs named by time and model
(never by id), the structural diff as styled lines (`presenters/compare_diff.py`), the two
run summaries with their figures, and the evaluation being drafted — rubric choice, 1–5 score grid, live averages
and B − A delta, note, verdict — plus rubric create/edit/delete.

All rules come from `core/run_verdicts.py` (`preferred_rubric`, `switch_rubric`,
`draft_averages`, `removal_needs_confirmation`, `save_evaluation`) and `core/compare.py`.
Changes go to the editor's working thread (`EditorPresenter`), marked dirty and announced as
"history", so autosave writes them; like removing a run, they are not undo steps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core import run_verdicts as E
from ..core.model import Evaluation, RubricSnapshot
from ..errors import UserFacingError
from .view_updates import HistoryChanged

VERDICT_LABELS = (("Run A Better", "leftBetter"), ("Run B Better", "rightBetter"), ("Tie", "tie"),
                  ("Pass", "pass"), ("Fail", "fail"))
NO_RUBRIC = "No rubric"
Confirm = Callable[[str, str], bool]


@dataclass
class RubricChoice:
    """One entry of the rubric picker (a thread rubric, or the saved snapshot of a deleted one)."""

    label: str
    rubric: RubricSnapshot | None


@dataclass
class SideInfo:
    """What the dialog shows about one run."""

    run_id: str
    model: str
    messages: str
    captured: str
    system_prompt: str
    last_user: str
    result: str
    name: str = ""  # "<time> · <model>", as the history list names the run
    figures: str = ""  # "380 tokens · $0.0123 · 1.80 s"


def _fmt(n: float) -> str:
    return f"{n:.2f}"


class ComparePresenter:
    """Draft evaluation of the pair (run A, run B) of one editor's thread."""

    def __init__(self, editor: Any, run_a: str, run_b: str) -> None:
        from ..core.history import find_run

        self.editor = editor
        find_run(editor.thread, run_a)
        find_run(editor.thread, run_b)
        if run_a == run_b:
            raise UserFacingError("Select two different runs to compare.")
        self.run_a, self.run_b = run_a, run_b
        self.saved: Evaluation | None = E.find_pair(editor.thread, run_a, run_b)
        self.note = self.saved.note or "" if self.saved is not None else ""
        self.verdict: str | None = E.displayed_verdict(self.saved, run_a) if self.saved is not None else None
        self.rubric: RubricSnapshot | None = None
        self.grid: E.Grid = {}
        self.changed_note = ""  # e.g. "the rubric changed since this evaluation"
        self._preselect()

    @property
    def thread(self) -> Any:
        return self.editor.thread

    # -- preselection ----------------------------------------------------------------------
    def _preselect(self) -> None:
        """Saved scored evaluation → its rubric (current revision, scores reconciled by criterion
        id; the snapshot itself when the rubric was deleted); legacy → none; new pair → the
        preferred rubric (`core.run_verdicts.preferred_rubric`)."""
        saved = self.saved
        if saved is None:
            self.rubric = E.preferred_rubric(self.thread)
            return
        if saved.rubric is None:
            return
        current = next((r for r in self.thread.evaluationRubrics or [] if r.id == saved.rubric.id), None)
        if current is None:
            self.rubric = saved.rubric
            self.grid = E.saved_grid(saved)
            return
        self.rubric = current
        self.grid = E.switch_rubric(current, saved.rubric, E.saved_grid(saved), saved)
        if current.revision != saved.rubric.revision:
            self.changed_note = (f"Rubric {current.name!r} changed since this evaluation (revision "
                                 f"{saved.rubric.revision} → {current.revision}); scores kept by criterion.")

    # -- run names, summaries and the diff -----------------------------------------------------
    def _rows(self) -> dict[str, Any]:
        from .history_rows import run_rows

        return {r.id: r for r in run_rows(self.thread)}

    def names(self) -> tuple[str, str]:
        """("<time> · <model>" of run A, of run B), told apart as in the history list."""
        rows = self._rows()
        return rows[self.run_a].name, rows[self.run_b].name

    def title(self) -> str:
        a, b = self.names()
        return f"Compare runs — A: {a}  vs  B: {b}"

    def side(self, run_id: str) -> SideInfo:
        from ..core.history import absolute_time, find_run, last_user_excerpt, model_label, result_excerpt, view_of
        from .history_rows import cost_text

        run = find_run(self.thread, run_id)
        view = view_of(run)
        ctx = run.thread.context
        row = self._rows()[run_id]
        figures = [f"{row.cells['tokens']} tokens" if row.tokens is not None else "", cost_text(row.cost),
                   row.cells["latency"]]
        return SideInfo(run_id=run_id, model=model_label(run.thread), messages=view.messages_label,
                        captured=absolute_time(run.timestamp), system_prompt=(ctx.systemPrompt or "") if ctx else "",
                        last_user=last_user_excerpt(run.thread), result=result_excerpt(run.thread),
                        name=row.name, figures=" · ".join(f for f in figures if f))

    def diff_text(self) -> str:
        """The structural diff as text, runs named by time and model (no ids)."""
        from ..core.compare import compare_runs, render_text

        return render_text(compare_runs(self.thread, self.run_a, self.run_b), show_ids=False)

    def diff_lines(self) -> list[Any]:
        """The diff as styled lines (`presenters/compare_diff.DiffLine`)."""
        from .compare_diff import diff_lines

        return diff_lines(self.diff_text())

    # -- rubric choice -----------------------------------------------------------------------
    def choices(self) -> list[RubricChoice]:
        out = [RubricChoice(NO_RUBRIC, None)]
        for r in self.thread.evaluationRubrics or []:
            out.append(RubricChoice(f"{r.name} (rev {r.revision})", r))
        cur = self.rubric
        if cur is not None and not any(c.rubric is not None and c.rubric.id == cur.id for c in out):
            out.append(RubricChoice(f"{cur.name} (saved; rubric deleted)", cur))
        return out

    def selected_label(self) -> str:
        for c in self.choices():
            if c.rubric is self.rubric or (c.rubric is not None and self.rubric is not None
                                             and (c.rubric.id, c.rubric.revision) == (self.rubric.id, self.rubric.revision)):
                return c.label
        return NO_RUBRIC

    def choose(self, rubric: RubricSnapshot | None) -> None:
        """Pick a rubric (None = no rubric); the draft scores follow `switch_rubric`."""
        self.grid = E.switch_rubric(rubric, self.rubric, self.grid, self.saved)
        self.rubric = rubric
        self.changed_note = ""

    def choose_label(self, label: str) -> None:
        for c in self.choices():
            if c.label == label:
                self.choose(c.rubric)
                return
        raise UserFacingError(f"No rubric {label!r}.")

    # -- scores --------------------------------------------------------------------------------
    def score(self, run_id: str, criterion_id: str) -> int | None:
        return (self.grid.get(run_id) or {}).get(criterion_id)

    def set_score(self, run_id: str, criterion_id: str, value: int | None) -> None:
        if self.rubric is None:
            raise UserFacingError("Choose a rubric before scoring.")
        if criterion_id not in {c.id for c in self.rubric.criteria} or run_id not in (self.run_a, self.run_b):
            raise UserFacingError("That score does not belong to this comparison.")
        row = self.grid.setdefault(run_id, {})
        if value is None:
            row.pop(criterion_id, None)
        elif isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 5:
            raise UserFacingError(f"Scores are whole numbers from 1 to 5; got {value!r}.")
        else:
            row[criterion_id] = value

    def averages(self) -> E.Averages | None:
        if self.rubric is None:
            return None
        return E.draft_averages(self.rubric, self.run_a, self.run_b, self.grid)

    def averages_text(self) -> str:
        """"A 3.50 · B 4.00 · B − A +0.50", or how many scores are still missing."""
        if self.rubric is None:
            return ""
        avg = self.averages()
        if avg is None:
            need = 2 * len(self.rubric.criteria)
            have = sum(1 for run in (self.run_a, self.run_b) for c in self.rubric.criteria
                       if self.score(run, c.id) is not None)
            return f"Scores: {have} of {need} given"
        return f"Average A {_fmt(avg.left)} · B {_fmt(avg.right)} · B − A {avg.delta:+.2f}"

    # -- saving ----------------------------------------------------------------------------------
    def save(self, verdict: str, note: str | None = None, confirm: Confirm | None = None) -> Evaluation | None:
        """Save through `core.run_verdicts.save_evaluation`; None when the user declined to drop
        the scores of a scored evaluation. An incomplete grid raises UserFacingError."""
        if self.editor.read_only:
            raise UserFacingError("Stop the run before evaluating runs.")
        if note is not None:
            self.note = note
        if E.removal_needs_confirmation(self.saved, self.rubric):
            if confirm is None or not confirm("This evaluation has rubric scores. Save without a rubric and "
                                              "remove its scores?", "Remove scores and save"):
                return None
        if self.rubric is not None and E.draft_averages(self.rubric, self.run_a, self.run_b, self.grid) is None:
            missing = [f"{side}:{c.name}" for side, run in (("A", self.run_a), ("B", self.run_b))
                       for c in self.rubric.criteria if self.score(run, c.id) is None]
            raise UserFacingError(f"Score every criterion for both runs before saving; missing {', '.join(missing)}.",
                                  hint="Give each a score from 1 to 5, or choose No rubric.")
        ev = E.save_evaluation(self.thread, self.run_a, self.run_b, verdict, self.note,
                               rubric_id=self.rubric.id if self.rubric is not None else None,
                               scores=self.grid if self.rubric is not None else None)
        self.saved, self.verdict = ev, verdict
        if ev.rubric is not None:
            self.rubric = ev.rubric if not any(r.id == ev.rubric.id for r in self.thread.evaluationRubrics or []) \
                else next(r for r in self.thread.evaluationRubrics or [] if r.id == ev.rubric.id)
        self._changed()
        return ev

    # -- rubric definitions ------------------------------------------------------------------------
    def _changed(self) -> None:
        self.editor.dirty = True
        self.editor.notify(HistoryChanged())

    def _check_editable(self) -> None:
        if self.editor.read_only:
            raise UserFacingError("Stop the run before changing rubrics.")

    def create_rubric(self, name: str, criteria: Sequence[E.CriterionInput | Mapping[str, Any]]) -> RubricSnapshot:
        """Add a rubric (2–6 criteria) and select it."""
        self._check_editable()
        rubric = E.create_rubric(self.thread, name, criteria)
        self._changed()
        self.choose(rubric)
        return rubric

    def update_rubric(self, rubric_id: str, name: str,
                      criteria: Sequence[E.CriterionInput | Mapping[str, Any]]) -> RubricSnapshot:
        """Edit a rubric; when it is the selected one, scores are reconciled by criterion id."""
        self._check_editable()
        before = self.rubric
        rubric = E.update_rubric(self.thread, rubric_id, name, criteria)
        self._changed()
        if before is not None and before.id == rubric.id:
            # `before` may be the very object just edited: reconcile against the draft's criteria
            ids = {c.id for c in rubric.criteria}
            self.grid = {run: {cid: s for cid, s in row.items() if cid in ids} for run, row in self.grid.items()}
            self.rubric = rubric
        return rubric

    def delete_rubric(self, rubric_id: str) -> None:
        """Delete a rubric definition (saved evaluations keep their snapshots)."""
        self._check_editable()
        rubric = E.delete_rubric(self.thread, rubric_id)
        self._changed()
        if self.rubric is not None and self.rubric.id == rubric.id:
            keep = self.saved is not None and self.saved.rubric is not None and self.saved.rubric.id == rubric.id
            if keep:  # the saved evaluation's snapshot stays selectable
                self.rubric = self.saved.rubric  # type: ignore[union-attr]
                self.grid = E.switch_rubric(self.rubric, None, {}, self.saved)
            else:
                self.choose(None)

    def find(self, key: str) -> RubricSnapshot:
        return E.find_rubric(self.thread, key)
