"""Run history panel (toggled from the editor header). The "Runs" tab lists the runs: the
first line of each reply, time, model, tokens, cost, latency and score; a click on a column
heading sorts by it (again: reversed); the selected run's reply line and figures show below.
The "Chart" tab draws scores, latency and cost per run (`history_chart.py`). Inspect
(read-only view with Previous/Next and Fork from a message, `inspect.py`), Trace (T on the list: the run's model and tool
calls with timing, `trace_view.py`), Restore (one undo
step), Remove (with confirmation; its evaluations go too), Compare two selected runs
(`compare.py`; the earlier one is A), Fork the selected run at its last message (the runs
list takes the keys of every list, `ui/keyboard.list_keys`; T is Trace, Return Inspect, Esc
anywhere in the panel closes it); below, the
saved evaluations by run time and model, verdict, rubric, averages and B − A (Open, Remove).
The buttons wrap onto more rows in a narrow panel (`flow.FlowFrame`) and never give up their
room in a short one.
Built with `context.RunRecords` (the UI services, the editor presenter, traces, opening a
thread). Logic in `presenters/history.HistoryIntents` (`runs.intents`),
`presenters/history_rows.py`, `presenters/history_chart.py` and `core.history`.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters.history_rows import COLUMNS, NUMERIC, HistoryRow, HistorySort
from ..list_page import fit_columns
from .compare import CompareDialog
from .flow import FlowFrame
from .fork import fork_and_open
from .history_chart import HistoryChartView

if TYPE_CHECKING:
    from .context import RunRecords

SUMMARY_WIDTH = 240  # for the reply's first line; the other columns fit their longest text
SUMMARY_MIN = 120  # a narrow panel shrinks the summary down to this, so the run's time stays in view
EVAL_ROWS = 4
TALL_PANEL = 600  # px: a shorter panel shows 2 evaluation rows
BUTTON_PADDING = (8, 3)  # compact: the panel is narrow
EVAL_COLUMNS = (("verdict", "Verdict"), ("delta", "B − A"), ("runs", "Runs"), ("rubric", "Rubric"),
                ("score_a", "A"), ("score_b", "B"), ("note", "Note"))


class HistoryPanel(tb.Frame):
    """List of recorded runs of one thread."""

    def __init__(self, master: Any, runs: RunRecords, close: Callable[[], object] | None = None) -> None:
        """`close`: what Esc anywhere in the panel calls (the editor hides the panel)."""
        super().__init__(master, padding=4)
        self.runs = runs
        self.close = close
        self.ui = runs.ui
        self.sort = HistorySort()
        self.rows: dict[str, HistoryRow] = {}
        self.short = False  # the panel is less than TALL_PANEL high: one row of evaluations, no detail line
        tb.Label(self, text="Run history", font="TkHeadingFont").pack(anchor="w")
        self._build_evaluations()  # packed at the bottom before the tabs take the rest
        self.tabs = tb.Notebook(self)
        self.tabs.pack(fill="both", expand=True, pady=(2, 0))
        runs_tab = tb.Frame(self.tabs, padding=(0, 4, 0, 0))
        self.chart_tab = tb.Frame(self.tabs, padding=4)
        self.tabs.add(runs_tab, text="Runs")
        self.tabs.add(self.chart_tab, text="Chart")
        self._build_runs(runs_tab)
        self.chart = HistoryChartView(self.chart_tab)
        self.chart.pack(fill="both", expand=True)
        self.bind("<Configure>", self._on_resize, add=True)
        for w in self._descendants(self):  # Esc from wherever the focus is in the panel
            w.bind("<Escape>", self._on_escape, add=True)

    @classmethod
    def _descendants(cls, widget: Any) -> list[Any]:
        out = [widget]
        for child in widget.winfo_children():
            out.extend(cls._descendants(child))
        return out

    def has_focus(self) -> bool:
        """The keyboard focus is in the panel."""
        try:
            path = str(self.focus_get() or "")
        except (KeyError, tk.TclError):  # the focus is in a popup being destroyed
            return False
        return path == str(self) or path.startswith(str(self) + ".")

    def _on_escape(self, _e: Any = None) -> str | None:
        if self.close is None:
            return None
        self.close()
        return "break"

    def _build_runs(self, master: Any) -> None:
        columns = [c for c, _label in COLUMNS if c != "summary"]
        self.list = tb.Treeview(master, columns=columns, show="tree headings", height=9, selectmode="extended")
        # no column stretches: ttk would squeeze a stretching column down to its minimum in a
        # narrow panel; the summary takes the room the others leave (`_fit_summary`), or scrolls
        self.list.column("#0", width=SUMMARY_WIDTH, minwidth=SUMMARY_MIN, stretch=False)
        for col in columns:
            self.list.column(col, minwidth=40, stretch=False, anchor="e" if col in NUMERIC else "w")
        self._headings()
        self.list.bind("<Configure>", lambda e: self._fit_summary(), add=True)
        # the panel is narrow at 1280x800: scroll sideways to the columns that do not fit
        self.xscroll = tb.Scrollbar(master, orient="horizontal", command=self.list.xview)
        self.list.configure(xscrollcommand=self.xscroll.set)
        # the buttons and the detail are packed first (at the bottom): in a short panel the
        # list gives up its height, never the buttons; the buttons wrap in a narrow one
        self.bar = FlowFrame(master)
        self.bar.pack(side="bottom", fill="x", pady=(4, 0))
        for text, style, command in (("Inspect", "secondary-outline", self.inspect),
                                     ("Trace", "secondary-outline", self.trace),
                                     ("Restore", "primary-outline", self.restore),
                                     ("Remove", "danger-outline", self.remove),
                                     ("Compare two", "info-outline", self.compare),
                                     ("Fork", "secondary-outline", self.fork)):
            self.bar.add(tb.Button(self.bar, text=text, bootstyle=style, command=command, padding=BUTTON_PADDING))
        self.detail = tb.Label(master, text="", bootstyle="secondary", justify="left", wraplength=320)
        self.detail.pack(side="bottom", fill="x", pady=(4, 0))
        self.detail.bind("<Configure>", lambda e: self.detail.configure(wraplength=max(120, e.width - 4)), add=True)
        self.xscroll.pack(side="bottom", fill="x")
        self.list.pack(fill="both", expand=True)
        self.list.bind("<<TreeviewSelect>>", lambda e: self.show_detail(), add=True)
        self.list.bind("<Key-t>", lambda e: (self.trace(), "break")[1], add=True)  # the selected run's trace
        for seq in ("<Return>", "<KP_Enter>"):  # the selected run, read-only (the arrows select, `ui/keyboard.list_keys`)
            self.list.bind(seq, lambda e: (self.inspect(), "break")[1], add=True)
        self.list.bind("<Configure>", lambda e: self._fit_summary(), add=True)

    def _build_evaluations(self) -> None:
        box = tb.Frame(self)
        box.pack(side="bottom", fill="x")
        self.ebar = FlowFrame(box)
        self.ebar.add(tb.Button(self.ebar, text="Open", bootstyle="info-outline", command=self.open_evaluation,
                                padding=BUTTON_PADDING))
        self.ebar.add(tb.Button(self.ebar, text="Remove", bootstyle="danger-outline", command=self.remove_evaluation,
                                padding=BUTTON_PADDING))
        self.evals_title = tb.Label(box, text="Evaluations", font="TkHeadingFont")
        self.evals_title.pack(anchor="w", pady=(8, 0))
        self.evals_box = tb.Frame(box)  # shown while there are evaluations (`_show_evaluations`)
        self.evals = tb.Treeview(self.evals_box, columns=[c for c, _l in EVAL_COLUMNS], show="headings", height=EVAL_ROWS,
                                 selectmode="browse")
        for col, label in EVAL_COLUMNS:
            self.evals.heading(col, text=label)
            self.evals.column(col, minwidth=30, stretch=False,
                              anchor="e" if col in ("score_a", "score_b", "delta") else "w")
        self.evals_xscroll = tb.Scrollbar(self.evals_box, orient="horizontal", command=self.evals.xview)
        self.evals.configure(xscrollcommand=self.evals_xscroll.set)
        self.evals.pack(fill="x")
        self.evals_xscroll.pack(fill="x")
        self.evals.bind("<Double-1>", lambda e: self.open_evaluation())

    def _show_evaluations(self, any_saved: bool) -> None:
        """The evaluation table and its buttons while there are evaluations; else one line."""
        self.evals_title.configure(text="Evaluations" if any_saved else "Evaluations: none yet (Compare two saves one)")
        if any_saved and not self.ebar.winfo_manager():
            self.evals_box.pack(fill="x")
            self.ebar.pack(fill="x", pady=(4, 0))
        elif not any_saved and self.ebar.winfo_manager():
            self.evals_box.pack_forget()
            self.ebar.pack_forget()

    def _on_resize(self, e: Any) -> None:
        """A short panel (a window about 500 px high) lists one evaluation row at a time and
        leaves out the detail under the runs, so the runs list keeps some height; the buttons
        always show."""
        if e.widget is self:
            short = e.height < TALL_PANEL
            rows = 1 if short else EVAL_ROWS
            if int(self.evals.cget("height")) != rows:
                self.evals.configure(height=rows)
            if short != self.short:
                self.short = short
                self.show_detail()

    # -- refresh ---------------------------------------------------------------------------
    def _headings(self) -> None:
        for col, _label in COLUMNS:
            self.list.heading("#0" if col == "summary" else col, text=self.sort.heading(col),
                              command=partial(self.sort_by, col))

    def refresh(self) -> None:
        intents = self.runs.intents
        self._fill_runs()
        self.evals.delete(*self.evals.get_children(""))
        cells = []
        for row in intents.evaluation_rows():
            values = [str(getattr(row, col)) for col, _l in EVAL_COLUMNS]
            self.evals.insert("", "end", iid=row.id, values=values)
            cells.append(values)
        fit_columns(self.evals, [c for c, _l in EVAL_COLUMNS], cells, [label for _c, label in EVAL_COLUMNS])
        self._show_evaluations(bool(cells))
        self.chart.show(intents.chart())

    def _fill_runs(self) -> None:
        keep, focus_row = self.list.selection(), self.list.focus()
        self.list.delete(*self.list.get_children(""))
        rows = self.runs.intents.rows(self.sort)
        self.rows = {r.id: r for r in rows}
        columns = [c for c, _l in COLUMNS if c != "summary"]
        table = []
        for row in rows:
            cells = row.cells
            values = [cells[c] for c in columns]
            self.list.insert("", "end", iid=row.id, text=cells["summary"], values=values)
            table.append(values)
        fit_columns(self.list, columns, table, [self.sort.heading(c) for c in columns])
        self._fit_summary()
        kept = [i for i in keep if i in self.rows]
        if kept:
            self.list.selection_set(kept)
        if focus_row in self.rows:  # the row the arrow keys move from (deleting the rows dropped it)
            self.list.focus(focus_row)
        self.show_detail()

    def _fit_summary(self) -> None:
        """Give the summary column the width the other columns leave; in a narrow panel
        `SUMMARY_WIDTH`, or less (down to `SUMMARY_MIN`) where the run's time would otherwise be
        scrolled out of view — a run of another day shows its date ("Dec 1 23:55")."""
        avail = self.list.winfo_width() - 4
        if avail <= 0:  # not laid out yet: the list's <Configure> comes back here
            return
        others = sum(int(self.list.column(c, "width")) for c, _l in COLUMNS if c != "summary")
        when = int(self.list.column("when", "width"))
        width = max(avail - others, min(SUMMARY_WIDTH, avail - when), SUMMARY_MIN)
        if int(self.list.column("#0", "width")) != width:
            self.list.column("#0", width=width)

    def sort_by(self, column: str) -> None:
        """Sort the runs by a column (the heading's click); the same column again reverses."""
        self.sort.click(column)
        self._headings()
        self._fill_runs()

    def show_detail(self) -> None:
        """The selected run's reply line and figures under the list (or a hint). A short
        panel leaves them out while there are runs, so the list keeps its rows (the list's
        columns show the same figures)."""
        sel = [i for i in self.list.selection() if i in self.rows]
        if len(sel) == 1:
            text = self.rows[sel[0]].detail()
        elif len(sel) == 2:
            text = "Two runs selected: Compare two shows them side by side."
        elif self.rows:
            n = len(self.rows)
            text = f"{n} run{'s' if n != 1 else ''}. Click a column heading to sort; select a run to see its figures."
        else:
            text = "No runs yet. Each run of this thread is recorded here."
        self.detail.configure(text=text)
        shown = not (self.short and self.rows)
        if shown and not self.detail.winfo_manager():
            self.detail.pack(side="bottom", fill="x", pady=(4, 0), after=self.bar)
        elif not shown and self.detail.winfo_manager():
            self.detail.pack_forget()

    def selected(self) -> str | None:
        sel = self.list.selection()
        return sel[0] if sel else None

    def compare(self) -> Any:
        sel = self.list.selection()
        if len(sel) != 2:
            self.ui.status.set("Select two runs to compare.")
            return None
        try:
            a, b = self.runs.intents.ordered_pair(sel[0], sel[1])  # A is the earlier run
            return CompareDialog(self.ui, self.runs.presenter, a, b)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return None

    def inspect(self) -> Any:
        """Open the read-only view of the selected run (Previous/Next, Fork from a message)."""
        run_id = self.selected()
        if not run_id:
            self.ui.status.set("Select a run to inspect.")
            return None
        from .inspect import RunInspector

        try:
            return RunInspector(self.runs, run_id)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return None

    def trace(self) -> Any:
        """Open the trace view of the selected run (`trace_view.py`): its model and tool calls
        with timing, what was sent and answered."""
        run_id = self.selected()
        if not run_id:
            self.ui.status.set("Select a run to see its trace.")
            return None
        from .trace_view import TraceWindow

        try:
            run, title = self.runs.intents.trace_source(run_id)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return None
        return TraceWindow(self.ui, run, self.runs.load_trace, title)

    def fork(self) -> str | None:
        """Fork the selected run at its last message into a new thread (opened in a new tab);
        Inspect forks from any message."""
        run_id = self.selected()
        if not run_id:
            self.ui.status.set("Select a run to fork.")
            return None
        msgs = self.runs.intents.inspect(run_id).messages
        if not msgs:
            self.ui.errors.show("This run has no messages to fork from.")
            return None
        return fork_and_open(self.runs, run_id, msgs[-1].id)

    def restore(self) -> None:
        run_id = self.selected()
        if run_id:
            try:
                self.runs.intents.restore_run(run_id)
            except UserFacingError as exc:
                self.ui.errors.show(str(exc))

    def remove(self) -> None:
        run_id = self.selected()
        if not run_id:
            return
        if not self.ui.dialogs.confirm("Remove this run? Evaluations that use it are removed too.", "Remove run"):
            return
        try:
            self.runs.intents.remove_run(run_id)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))

    def open_evaluation(self) -> Any:
        """Open the compare dialog of the selected evaluation's pair (as it was saved: A, B)."""
        sel = self.evals.selection()
        if not sel:
            return None
        try:
            a, b = self.runs.intents.evaluation_pair(sel[0])
            return CompareDialog(self.ui, self.runs.presenter, a, b)
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return None

    def remove_evaluation(self) -> bool:
        sel = self.evals.selection()
        if not sel:
            return False
        if not self.ui.dialogs.confirm("Remove this evaluation?", "Remove evaluation"):
            return False
        try:
            self.runs.intents.remove_evaluation(sel[0])
        except UserFacingError as exc:
            self.ui.errors.show(str(exc))
            return False
        return True

