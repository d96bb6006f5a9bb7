"""The evaluation results grid without Tk: cases × models, filled live as records land.

    grid = EvalGrid.from_plan(plan, need=spec.pass_k or plan.repeat)
    grid.add_record(record)                 # a journal record (cell or judge) as it is written
    grid.filter_text, grid.status_filter    # then grid.refresh(): rows filtered and sorted
    grid.sort_by("case" | "failures" | COLUMN_LABEL)
    grid.window(first, count)               # the visible rows only (the view is virtualised)
    grid.chart()                            # per column: pass rate, cost, mean latency
    grid.cached_cells()                     # cells answered from the response cache ("· cached" in their label)

A grid cell is one case on one model/variant over its repeats, with the status folded as
the summary folds it (`evals/results.py`): an errored repeat makes an error, a repeat not
run yet pending, else it passes when `need` repeats passed. Its detail (`GridCell.rows`) is
the repeats' result rows in the shape of `results.jsonl` (output, checks with their reasons,
judges with their reasons), so a finished folder (`EvalGrid.from_rows`) and a live run read
alike. `open_as_thread` builds the thread of a case: a copy of the evaluated thread (no run
history, no evaluations) with the case's variables filled and the cell's output as the
assistant reply (a conversation cell: its whole conversation, `presenters/eval_conversation.py`,
whose transcript its detail shows too).
"""

from __future__ import annotations

import ast
import statistics
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, assert_never

from ..agent.matrix_spec import DEFAULT_VARIANT
from ..core.templating.references import references
from ..core.templating.variables import all_names, set_text_variable
from ..core.threadio import thread_from_data, thread_to_data
from ..evals.records import CellRecord, End, Header, JournalRecord, JudgeRecord, ResultRow, TurnRecord
from ..evals.results import CellView, cell_rows  # cell_rows: the rows of results.jsonl, one shape for live and finished
from .eval_conversation import conversation_messages, conversation_text

if TYPE_CHECKING:
    from ..core.model import Thread
    from ..evals.plan import Cell, Plan

STATUSES = ("pass", "fail", "error", "pending")
MARKS = {"pass": "✓ pass", "fail": "✗ fail", "error": "! error", "pending": "…"}
CACHED_NOTE = ("The answer came from the response cache: no model was called and it has no latency. "
               "Run again with Fresh answers to ask the model.")
Row = ResultRow


def shown_assertion(label: str) -> str:
    """An assertion as its evaluation file has it: results name one by its label, whose text
    value is a Python repr (`regex '\\\\d+'`, backslashes doubled); shown as `regex /\\d+/`
    and `contains "x"`. A label of any other shape is shown as it is."""
    name, sep, value = label.partition(" ")
    if not sep or len(value) < 2 or value[0] not in "'\"" or value[-1] != value[0]:
        return label
    try:
        text = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return label
    if not isinstance(text, str):
        return label
    text = text.replace("\n", "⏎")
    return f"{name} /{text}/" if name.removeprefix("not-") == "regex" else f'{name} "{text}"'


def column_label(model: str, variant: str) -> str:
    return model if variant == DEFAULT_VARIANT else f"{model} [{variant}]"


def fold_status(rows: list[Row], repeats: int, need: int) -> str:
    """A case's status over its repeats (`rows`: the ones with a result so far)."""
    statuses = [r.status for r in rows]
    if "error" in statuses:
        return "error"
    if len(rows) < repeats or "pending" in statuses:
        return "pending"
    return "pass" if statuses.count("pass") >= need else "fail"


@dataclass
class GridCell:
    case: str
    column: str
    repeats: int
    need: int
    rows: list[Row] = field(default_factory=list)  # the repeats with a record, in repeat order
    vars: dict[str, str] = field(default_factory=dict)  # the case's values (live runs)

    _status: str | None = field(default=None, repr=False, compare=False)  # cached; reset when rows change
    _text: str | None = field(default=None, repr=False, compare=False)

    @property
    def status(self) -> str:
        if self._status is None:
            self._status = fold_status(self.rows, self.repeats, self.need)
        return self._status

    @property
    def label(self) -> str:
        """The grid's text of this cell: a mark, and the mean latency once decided (cached)."""
        if self._text is None:
            status = self.status
            text = MARKS[status]
            latency = self.latency_ms
            if status in ("pass", "fail") and latency is not None:
                text += f"  {latency:.0f} ms"
            if self.cached:
                text += "  · cached"
            self._text = text
        return self._text

    def set_rows(self, rows: list[Row]) -> None:
        self.rows = rows
        self._status = self._text = None

    @property
    def cached(self) -> bool:
        """Every repeat's answer so far came from the response cache (no model was called)."""
        return bool(self.rows) and all(r.cached for r in self.rows)

    @property
    def shown(self) -> Row | None:
        """The repeat shown in the detail: the first that failed or errored, else the first."""
        for r in self.rows:
            if r.status in ("fail", "error"):
                return r
        return self.rows[0] if self.rows else None

    @property
    def score(self) -> float | None:
        scores = [r.score for r in self.rows if r.score is not None]
        return sum(scores) / len(scores) if scores else None

    @property
    def cost(self) -> float:
        return sum(r.cost for r in self.rows)

    @property
    def latency_ms(self) -> float | None:
        values = [r.latency_ms for r in self.rows if r.latency_ms is not None and not r.cached]
        return sum(values) / len(values) if values else None

    @property
    def repeat_numbers(self) -> list[int]:
        """The repeats with a result so far, in order (the cell window steps through them)."""
        return [r.repeat for r in self.rows]

    def only_repeat(self, repeat: int) -> GridCell:
        """This cell with the one repeat `repeat` (what "Open as thread" takes from the cell
        window's repeat); the cell itself when it has no such repeat."""
        rows = [r for r in self.rows if r.repeat == repeat]
        return GridCell(self.case, self.column, 1, 1, rows, dict(self.vars)) if rows else self

    def detail(self, repeat: int | None = None) -> CellDetail:
        """What the cell's window shows of one repeat (`repeat`, else `shown`'s): output, each
        assertion with its reason, the judges' reasons."""
        row = next((r for r in self.rows if r.repeat == repeat), None) if repeat is not None else self.shown
        if row is None:
            return CellDetail(self.case, self.column, self.status, "", [], [], None, 1, self.repeats, self.cost, self.latency_ms)
        checks = [(shown_assertion(c.assertion), c.passed, c.reason) for c in row.checks]
        judges: list[tuple[str, str, dict[str, Any]]] = [
            (j.judge_model, j.reason or j.error or "", dict(j.scores or {})) for j in row.judges]
        return CellDetail(self.case, self.column, self.status, row.output or "", checks, judges,
                          row.error, row.repeat, self.repeats, self.cost, self.latency_ms, bool(row.cached), row.conversation)


@dataclass(frozen=True)
class CellDetail:
    case: str
    column: str
    status: str
    output: str
    checks: list[tuple[str, bool, str]]  # assertion, passed, reason
    judges: list[tuple[str, str, dict[str, Any]]]  # judge model, reason, scores
    error: str | None
    repeat: int
    repeats: int
    cost: float
    latency_ms: float | None
    cached: bool = False  # the answer came from the response cache
    conversation: tuple[dict[str, Any], ...] | None = None  # mode: conversation: the whole transcript

    def text(self) -> str:
        """The detail as plain text (the window's body, and what Copy copies)."""
        lines = [f"{self.case} · {self.column} · {self.status}"
                 + (f" (repeat {self.repeat} of {self.repeats})" if self.repeats > 1 else "")]
        if self.cached:
            lines.append(CACHED_NOTE)
        if self.error:
            lines += ["", f"Error: {self.error}"]
        if self.conversation is not None:
            lines += ["", "Conversation:", "", conversation_text(self.conversation)]
        lines += ["", "Final reply:" if self.conversation is not None else "Output:", self.output or "(none)", "", "Assertions:"]
        lines += [f"  {'✓' if ok else '✗'} {name}" + (f" — {reason}" if reason else "") for name, ok, reason in self.checks] or ["  (none)"]
        if self.judges:
            lines += ["", "Judge:"]
            for model, reason, scores in self.judges:
                marks = ", ".join(f"{k} {v}" for k, v in scores.items())
                lines.append(f"  {model}: {reason}" + (f" ({marks})" if marks else ""))
        return "\n".join(lines)


@dataclass(frozen=True)
class ChartBar:
    column: str
    pass_rate: float | None
    cost: float
    latency_ms: float | None
    decided: int


class EvalGrid:
    """Rows = cases (dataset order), columns = model/variant; filter, sort and a visible window."""

    def __init__(self, case_ids: list[str], columns: list[str], repeats: int, need: int) -> None:
        self.case_ids = list(case_ids)
        self.columns = list(columns)
        self.repeats, self.need = repeats, need
        self.cells: dict[tuple[str, str], GridCell] = {
            (case, col): GridCell(case, col, repeats, need) for case in case_ids for col in columns}
        self._plan_cells: dict[str, Cell] = {}
        self._records: dict[str, CellRecord] = {}
        self._judges: dict[str, dict[int, JudgeRecord]] = defaultdict(dict)
        self.filter_text = ""
        self.status_filter = "all"  # all, or one of STATUSES
        self.sort_key = "case"
        self.descending = False
        self.rows: list[str] = list(case_ids)  # the case ids shown, filtered and sorted
        self.version = 0  # bumped by every change (views redraw when it moved)

    # -- building ------------------------------------------------------------------------
    @classmethod
    def from_plan(cls, plan: Plan, need: int | None = None) -> EvalGrid:
        grid = cls(plan.case_ids, [column_label(m, v) for m in plan.models for v in plan.variants], plan.repeat,
                   need or plan.repeat)
        for cell in plan.cells:
            grid._plan_cells[cell.key] = cell
            grid.cells[(cell.case_id, column_label(cell.model, cell.variant))].vars = dict(cell.vars)
        return grid

    @classmethod
    def from_rows(cls, rows: list[Row], repeats: int = 1, need: int | None = None,
                  case_values: dict[str, dict[str, str]] | None = None) -> EvalGrid:
        """A finished results folder's `results.jsonl` rows (`case_values`: each case's
        variables from its dataset, for "Open as thread")."""
        cases: dict[str, None] = {}
        columns: dict[str, None] = {}
        for r in rows:
            cases.setdefault(r.case, None)
            columns.setdefault(column_label(r.model, r.variant or DEFAULT_VARIANT), None)
        grid = cls(list(cases), list(columns), repeats, need or repeats)
        for r in rows:
            grid._put(r)
        for (case, _col), cell in grid.cells.items():
            cell.vars = dict((case_values or {}).get(case) or {})
        grid.refresh()
        return grid

    def add_record(self, record: JournalRecord) -> bool:
        """A journal record as it lands; True when a cell changed."""
        match record:
            case CellRecord():
                key = record.key
                self._records[key] = record
            case JudgeRecord():
                key = record.cell
                self._judges[key][record.assertion] = record
            case Header() | End() | TurnRecord():
                return False
            case _:
                assert_never(record)
        cell = self._plan_cells.get(key)
        if cell is None or key not in self._records:
            return False
        view = CellView(cell, self._records[key], self._judges.get(key, {}))
        self._put(cell_rows([view])[0])
        return True

    def add_records(self, records: list[JournalRecord]) -> None:
        changed = False
        for r in records:
            changed = self.add_record(r) or changed
        if changed:
            self.refresh()

    def _put(self, row: Row) -> None:
        col = column_label(row.model, row.variant or DEFAULT_VARIANT)
        cell = self.cells.get((row.case, col))
        if cell is None:
            return
        cell.set_rows(sorted([r for r in cell.rows if r.repeat != row.repeat] + [row], key=lambda r: r.repeat))
        self.version += 1

    # -- filter, sort, window -----------------------------------------------------------
    def _failures(self, case: str) -> int:
        return sum(self.cells[(case, c)].status in ("fail", "error") for c in self.columns)

    def _matches(self, case: str) -> bool:
        text = self.filter_text.strip().lower()
        if text and text not in case.lower():
            values = self.cells[(case, self.columns[0])].vars.values() if self.columns else ()
            if not any(text in str(v).lower() for v in values):
                return False
        if self.status_filter != "all":
            return any(self.cells[(case, c)].status == self.status_filter for c in self.columns)
        return True

    def refresh(self) -> None:
        """Filter and sort the rows again (after a change of records, filter or sort)."""
        rows = [c for c in self.case_ids if self._matches(c)]
        order = {c: i for i, c in enumerate(self.case_ids)}
        if self.sort_key == "failures":
            rows.sort(key=lambda c: (-self._failures(c), order[c]))
        elif self.sort_key in self.columns:
            rank = {"fail": 0, "error": 1, "pending": 2, "pass": 3}
            col = self.sort_key
            rows.sort(key=lambda c: (rank[self.cells[(c, col)].status], order[c]))
        else:
            rows.sort(key=lambda c: order[c])
        if self.descending:
            rows.reverse()
        self.rows = rows
        self.version += 1

    def set_filter(self, text: str | None = None, status: str | None = None) -> None:
        if text is not None:
            self.filter_text = text
        if status is not None:
            if status != "all" and status not in STATUSES:
                raise ValueError(f"unknown status {status!r}")
            self.status_filter = status
        self.refresh()

    def sort_by(self, key: str) -> None:
        """Sort by `case` (dataset order), `failures` (most first) or a column (fails first);
        the same key again reverses."""
        self.descending = not self.descending if key == self.sort_key else False
        self.sort_key = key
        self.refresh()

    def window(self, first: int, count: int) -> list[tuple[str, list[GridCell]]]:
        """The rows `first`…`first + count` with their cells (what the view draws)."""
        first = max(0, min(first, len(self.rows)))
        return [(case, [self.cells[(case, c)] for c in self.columns]) for case in self.rows[first:first + count]]

    def cell_at(self, row: int, column: int) -> GridCell | None:
        if 0 <= row < len(self.rows) and 0 <= column < len(self.columns):
            return self.cells[(self.rows[row], self.columns[column])]
        return None

    # -- totals ---------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        out = dict.fromkeys(STATUSES, 0)
        for cell in self.cells.values():
            out[cell.status] += 1
        return out

    def cached_cells(self) -> int:
        """How many cells have every answer from the response cache."""
        return sum(cell.cached for cell in self.cells.values())

    def progress_text(self, ending: str = "") -> str:
        """The results window's progress line. Its cells are the plan's — cases × models ×
        variants × repeats, as the status bar counts them —, so a case on a model with two
        repeats is two cells; pass, fail and error count cases on a model (repeats folded)."""
        counts = self.counts()
        total = len(self.case_ids) * len(self.columns) * self.repeats
        done = sum(r.status != "pending" for cell in self.cells.values() for r in cell.rows)
        decided = counts["pass"] + counts["fail"]
        rate = f"{counts['pass'] / decided:.0%}" if decided else "–"
        cached = self.cached_cells()
        return (f"{done}/{total} cells · pass {rate} · {counts['fail']} fail · {counts['error']} error"
                + (f" · {cached} from the cache" if cached else "") + (f" · {ending}" if ending else ""))

    def chart(self) -> list[ChartBar]:
        """Per column: pass rate over the decided cases, cost, mean latency of the calls."""
        bars = []
        for col in self.columns:
            cells = [self.cells[(case, col)] for case in self.case_ids]
            decided = [c for c in cells if c.status in ("pass", "fail")]
            latencies = [c.latency_ms for c in cells if c.latency_ms is not None]
            bars.append(ChartBar(col, sum(c.status == "pass" for c in decided) / len(decided) if decided else None,
                                 sum(c.cost for c in cells), statistics.fmean(latencies) if latencies else None, len(decided)))
        return bars


def open_as_thread(thread: Thread, cell: GridCell) -> Thread:
    """A new thread of this case: the evaluated thread without its run history and
    evaluations, the case's variables filled (those the thread uses), the cell's output as
    the assistant reply. The original is not changed."""
    data = thread_to_data(thread)
    for key in ("runHistory", "evaluations"):
        data.pop(key, None)
    row = cell.shown
    text = row.output or "" if row is not None else ""
    reply = {"id": str(uuid.uuid4()), "role": "assistant", "content": [{"type": "text", "text": text}]}
    context = data.setdefault("context", {})
    added = conversation_messages(row.conversation) if row is not None and row.conversation is not None else [reply]
    context["messages"] = [*(context.get("messages") or []), *added]
    base = (thread.title or "thread").strip() or "thread"
    data["title"] = f"{base} · {cell.case}"
    new = thread_from_data(data)
    used = all_names(new) | {r.name for r in references(new)}
    for name, value in cell.vars.items():
        if name in used:
            set_text_variable(new, name, value)
    return new
