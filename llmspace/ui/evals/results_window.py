"""An evaluation's results window: a progress line, filter (text and status) and sort
controls, the virtualised grid (`grid_view.ResultsGrid`) and the chart (`chart_view.EvalChart`).
Records reach it through the pump as they are journaled (`add_record`); redraws are
coalesced to one per idle moment, so a burst of cells costs one draw. Stop, or closing the
window (Close, Esc or its ✕), ends a live run as Ctrl-C ends `eval run` (what finished is kept; it resumes).
"Run again", once the run has ended, opens its evaluation file in the New Evaluation dialog;
"Optimize Prompt…" optimizes that file's prompt with these results as the baseline.

Opening the window runs one full garbage collection: a grid of 10,000 cells brings some
100,000 new objects (the rows and their checks), and otherwise the first full collection
would fall during scrolling, as a 40-50 ms frame on a busy machine; here it is part of the
opening, which is a wait the user expects (bench/bench_eval_grid.py measures both).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...presenters.eval_grid import STATUSES, EvalGrid, GridCell
from .. import tkvars
from .cell_window import CellWindow
from .chart_view import EvalChart
from .grid_view import ResultsGrid

if TYPE_CHECKING:
    from ...presenters.evaluations import Record

SORTS = {"Dataset order": "case", "Most failures first": "failures"}


class ResultsWindow(tb.Toplevel):
    def __init__(self, master: Any, title: str, grid: EvalGrid,
                 open_as_thread: Callable[[GridCell], Any] | None = None) -> None:
        super().__init__(master=master, title=title)
        self.geometry("1100x640")
        self.grid_model = grid
        self.open_as_thread = open_as_thread
        self.cell_windows: list[CellWindow] = []
        self.finished = False
        self.ending = ""  # how the run ended (shown after the counts)
        self._pending_draw = False
        top = tb.Frame(self)
        top.pack(fill="x", padx=8, pady=(8, 2))
        tb.Label(top, text="Filter").pack(side="left", padx=(0, 4))
        self.filter_var = tkvars.StringVar(self, "")
        self.filter_entry = tb.Entry(top, textvariable=self.filter_var, width=24)
        self.filter_entry.pack(side="left")
        self.filter_var.trace_add("write", lambda *a: self.apply_filter())
        tb.Label(top, text="Status").pack(side="left", padx=(12, 4))
        self.status_var = tkvars.StringVar(self, "all")
        self.status_box = tb.Combobox(top, textvariable=self.status_var, values=["all", *STATUSES], state="readonly", width=9)
        self.status_box.pack(side="left")
        self.status_box.bind("<<ComboboxSelected>>", lambda e: self.apply_filter(), add=True)
        tb.Label(top, text="Sort").pack(side="left", padx=(12, 4))
        self.sort_var = tkvars.StringVar(self, "Dataset order")
        sorts = list(SORTS) + [f"Fails first: {c}" for c in grid.columns]
        self.sort_box = tb.Combobox(top, textvariable=self.sort_var, values=sorts, state="readonly", width=28)
        self.sort_box.pack(side="left")
        self.sort_box.bind("<<ComboboxSelected>>", lambda e: self.apply_sort(), add=True)
        self.stop_run: Callable[[], object] | None = None  # called by Stop (and by closing the window) while a run goes on
        self.btn_close = tb.Button(top, text="Close", bootstyle="secondary-outline", command=self.close)
        self.btn_close.pack(side="right")
        self.btn_stop = tb.Button(top, text="Stop", bootstyle="danger-outline", command=self.stop, state="disabled")
        self.btn_stop.pack(side="right", padx=(0, 6))
        self.resume_run: Callable[[], object] | None = None  # an interrupted folder: Resume continues it
        self.btn_resume = tb.Button(top, text="Resume", bootstyle="primary", command=self.resume)
        self.run_again: Callable[[], object] | None = None  # "Run again": the evaluation file in the dialog
        self.btn_again = tb.Button(top, text="Run again", bootstyle="secondary", command=self.again, state="disabled")
        self.optimize_run: Callable[[], object] | None = None  # "Optimize Prompt…" with these results as the baseline
        line = tb.Frame(self)  # the progress line, and "Optimize Prompt…" at its end (the top row is full)
        line.pack(fill="x", padx=8, pady=(2, 4))
        self.btn_optimize = tb.Button(line, text="Optimize Prompt…", bootstyle="secondary-link", command=self.optimize,
                                      state="disabled")
        self.progress = tb.Label(line, text="", anchor="w")
        self.progress.pack(side="left", fill="x", expand=True)
        self.protocol("WM_DELETE_WINDOW", self.close)
        self.bind("<Escape>", lambda e: self.close())  # as Close and the window's ✕
        self.tabs = tb.Notebook(self)
        self.tabs.pack(fill="both", expand=True, padx=8, pady=(0, 8))
        self.grid_view = ResultsGrid(self.tabs, grid, self.open_cell)
        self.chart = EvalChart(self.tabs)
        self.tabs.add(self.grid_view, text="Grid")
        self.tabs.add(self.chart, text="Chart")
        self.tabs.bind("<<NotebookTabChanged>>", lambda e: self._draw_chart(), add=True)
        self.update_progress()
        gc.collect()  # the grid's new objects become old now, not in a scroll frame (see above)

    # -- live records --------------------------------------------------------------------
    def add_record(self, record: Record) -> None:
        """A journal record (on the Tk thread, from the pump); the grid redraws once per idle."""
        if self.grid_model.add_record(record) and not self._pending_draw:
            self._pending_draw = True
            self.after_idle(self._draw)

    def _draw(self) -> None:
        self._pending_draw = False
        if not self.winfo_exists():
            return
        self.grid_model.refresh()
        self.grid_view.redraw()
        self.update_progress()
        self._draw_chart()

    def running(self, stop: Callable[[], object]) -> None:
        """A run fills this window; Stop (or closing the window) calls `stop`
        (`EvaluationSession.stop`)."""
        self.stop_run = stop
        self.btn_stop.configure(state="normal")

    def offer_resume(self, resume: Callable[[], object]) -> None:
        """An interrupted results folder: show Resume, which calls `resume` (`EvalActions.resume`)."""
        self.resume_run = resume
        self.btn_resume.configure(state="normal")
        self.btn_resume.pack(side="right", padx=(0, 6), before=self.btn_stop)

    def offer_run_again(self, run_again: Callable[[], object]) -> None:
        """Show "Run again" (enabled once the run has ended), which calls `run_again`
        (`EvalActions.run_again`: the dialog filled with the evaluation file)."""
        self.run_again = run_again
        self.btn_again.configure(state="normal" if self.finished else "disabled")
        self.btn_again.pack(side="right", padx=(0, 6), before=self.btn_stop)

    def offer_optimize(self, optimize: Callable[[], object]) -> None:
        """Show "Optimize Prompt…" (enabled once the run has ended), which calls `optimize`
        (`EvalActions.optimize_prompt` on this results folder)."""
        self.optimize_run = optimize
        self.btn_optimize.configure(state="normal" if self.finished else "disabled")
        self.btn_optimize.pack(side="right", before=self.progress)

    def optimize(self) -> None:
        if self.optimize_run is not None and self.finished:
            self.optimize_run()

    def again(self) -> None:
        if self.run_again is not None and self.finished:
            self.run_again()

    def resume(self) -> None:
        if self.resume_run is not None:
            self.btn_resume.configure(state="disabled")
            self.progress.configure(text=self.progress.cget("text") + " · resuming…")
            self.resume_run()

    def stop(self) -> None:
        if self.stop_run is not None:
            self.stop_run()
            self.btn_stop.configure(state="disabled")
            self.progress.configure(text=self.progress.cget("text") + " · stopping…")

    def close(self) -> None:
        """Closing the window stops its run (what finished is kept; `eval run FILE` resumes)."""
        if not self.finished:
            self.stop()
        self.destroy()

    def done(self, text: str) -> None:
        """The run ended (`text`: how, and where the results are)."""
        self.finished = True
        self.ending = text
        self.btn_stop.configure(state="disabled")
        self.btn_again.configure(state="normal")
        self.btn_optimize.configure(state="normal")
        self._draw()

    def update_progress(self) -> None:
        self.progress.configure(text=self.grid_model.progress_text(self.ending))

    def _draw_chart(self) -> None:
        try:
            if self.tabs.select() == str(self.chart):
                self.chart.show(self.grid_model.chart())
        except Exception:  # the window is closing
            pass

    # -- filter, sort, cells -------------------------------------------------------------
    def apply_filter(self) -> None:
        self.grid_model.set_filter(text=self.filter_var.get(), status=self.status_var.get())
        self.grid_view.first = 0
        self.grid_view.redraw()

    def apply_sort(self) -> None:
        choice = self.sort_var.get()
        key = SORTS.get(choice) or choice.removeprefix("Fails first: ")
        self.grid_model.descending = False
        self.grid_model.sort_key = key
        self.grid_model.refresh()
        self.grid_view.redraw()

    def open_cell(self, cell: GridCell) -> CellWindow:
        """The cell in the cell window: the one already open shows it (one detail window per
        results window), else a new one."""
        open_windows = [w for w in self.cell_windows if w.winfo_exists()]
        if open_windows:
            window = open_windows[-1]
            window.show(cell)
            window.lift()
            window.focus_set()
        else:
            window = CellWindow(self, cell, self.open_as_thread)
        self.cell_windows = [window]
        return window
