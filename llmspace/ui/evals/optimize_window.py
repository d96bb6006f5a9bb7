"""Evaluations › Optimize Prompt…: the dialog (reflector model, rollouts, budget, max minutes) and the
live window of an optimization — the progress line (step, rollouts used, best validation score,
cost, time left), the validation score per step as a small chart, the candidates with each one's
diff against the original, the held-out verdict with the McNemar figures and "Open optimized
thread". Stop (or closing the window) ends it as Ctrl-C ends `llmspace optimize`: what finished
is kept and the same settings resume it. The logic is `presenters/optimize.py`'s; engine events
reach the window through the pump (`on_event`), the result through `finish`.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from itertools import pairwise
from typing import Any

import ttkbootstrap as tb

from ...presenters.optimize import PERCENT_AXIS, OptimizeForm, OptimizeState
from .. import tkvars
from ..editor.compare import _fill_diff

CHART_H = 170
PAD_L, PAD_R, PAD_T, PAD_B = 44, 14, 28, 22


class OptimizeDialog(tb.Toplevel):
    """The settings of one optimization; Start hands the form to `on_start` and closes."""

    def __init__(self, master: Any, title: str, form: OptimizeForm, on_start: Callable[[OptimizeForm], Any]) -> None:
        super().__init__(master=master, title=f"{title} — Optimize Prompt")
        self.on_start = on_start
        body = tb.Frame(self, padding=10)
        body.pack(fill="both", expand=True)
        body.columnconfigure(1, weight=1)
        rows = (("Reflector", "the model that proposes rewrites (provider/model)"),
                ("Rollouts", "cells the search may run"), ("Budget (USD)", "empty: no limit"),
                ("Max minutes", "empty: no limit; the held-out gate still runs"))
        self.reflector_var = tkvars.StringVar(self, form.reflector)
        self.rollouts_var = tkvars.StringVar(self, form.rollouts)
        self.budget_var = tkvars.StringVar(self, form.budget)
        self.minutes_var = tkvars.StringVar(self, form.max_minutes)
        self.reflector_box = tb.Combobox(body, textvariable=self.reflector_var, values=[form.reflector], width=40)
        widgets = (self.reflector_box, tb.Spinbox(body, from_=1, to=10000, textvariable=self.rollouts_var, width=8),
                   tb.Entry(body, textvariable=self.budget_var, width=10), tb.Entry(body, textvariable=self.minutes_var, width=10))
        for i, ((label, hint), widget) in enumerate(zip(rows, widgets, strict=True)):
            tb.Label(body, text=label).grid(row=i, column=0, sticky="w", padx=(0, 8), pady=4)
            widget.grid(row=i, column=1, sticky="ew" if i == 0 else "w", pady=4)
            tb.Label(body, text=hint, bootstyle="secondary").grid(row=i, column=2, sticky="w", padx=(8, 0))
        self.problems = tb.Label(body, text="", bootstyle="danger", justify="left")
        self.problems.grid(row=len(rows), column=0, columnspan=3, sticky="w", pady=(8, 0))
        bar = tb.Frame(self, padding=(10, 0, 10, 10))
        bar.pack(fill="x")
        self.btn_start = tb.Button(bar, text="Start", bootstyle="primary", command=self.start)
        self.btn_start.pack(side="right")
        tb.Button(bar, text="Cancel", bootstyle="secondary", command=self.destroy).pack(side="right", padx=6)
        for var in (self.reflector_var, self.rollouts_var, self.budget_var, self.minutes_var):
            var.trace_add("write", lambda *a: self.check())
        self.bind("<Escape>", lambda e: self.destroy())
        self.check()

    def offer_models(self, models: list[str]) -> None:
        """The configured models, for the reflector's list (read on the worker pool)."""
        if self.winfo_exists():
            current = self.reflector_var.get()
            self.reflector_box.configure(values=[current, *(m for m in models if m != current)])

    def form(self) -> OptimizeForm:
        return OptimizeForm(self.reflector_var.get().strip(), self.rollouts_var.get().strip(),
                            self.budget_var.get().strip(), self.minutes_var.get().strip())

    def check(self) -> list[str]:
        problems = self.form().problems()
        self.problems.configure(text="\n".join(problems))
        self.btn_start.configure(state="disabled" if problems else "normal")
        return problems

    def start(self) -> Any:
        if self.check():
            return None
        form = self.form()
        self.destroy()
        return self.on_start(form)


class OptimizeWindow(tb.Toplevel):
    """One optimization, live; see the module docstring."""

    def __init__(self, master: Any, title: str, state: OptimizeState, open_thread: Callable[[Any], Any]) -> None:
        super().__init__(master=master, title=title)
        self.geometry("980x680")
        self.state_model = state
        self.open_thread = open_thread
        self.stop_run: Callable[[], object] | None = None
        top = tb.Frame(self)
        top.pack(fill="x", padx=8, pady=(8, 2))
        self.phase = tb.Label(top, text=state.phase, anchor="w")
        self.phase.pack(side="left", fill="x", expand=True)
        self.btn_close = tb.Button(top, text="Close", bootstyle="secondary-outline", command=self.close)
        self.btn_close.pack(side="right")
        self.btn_stop = tb.Button(top, text="Stop", bootstyle="danger-outline", command=self.stop, state="disabled")
        self.btn_stop.pack(side="right", padx=(0, 6))
        self.btn_open = tb.Button(top, text="Open optimized thread", bootstyle="success", command=self.open_optimized,
                                  state="disabled")
        self.btn_open.pack(side="right", padx=(0, 6))
        self.progress = tb.Label(self, text=state.progress_line(), anchor="w")
        self.progress.pack(fill="x", padx=8)
        self.chart = tk.Canvas(self, height=CHART_H, highlightthickness=0, borderwidth=0)
        self.chart.pack(fill="x", padx=8, pady=4)
        self.chart.bind("<Configure>", lambda e: self.draw_chart(), add=True)
        self.verdict = tb.Label(self, text="", anchor="w", justify="left", font="TkHeadingFont")
        self.verdict.pack(fill="x", padx=8, pady=(0, 4))
        panes = tb.Panedwindow(self, orient="horizontal")
        panes.pack(fill="both", expand=True, padx=8, pady=(0, 8))
        left = tb.Frame(panes)
        self.list = tb.Treeview(left, columns=("step", "status", "validation"), show="tree headings", selectmode="browse")
        self.list.heading("#0", text="Candidate")
        self.list.column("#0", width=80, stretch=False)
        for col, text, width in (("step", "Step", 44), ("status", "Status", 170), ("validation", "Validation", 80)):
            self.list.heading(col, text=text)
            self.list.column(col, width=width, stretch=col == "status")
        self.list.pack(fill="both", expand=True)
        self.list.bind("<<TreeviewSelect>>", lambda e: self.show_selected(), add=True)
        panes.add(left, weight=2)
        self.diff = tb.Text(panes, wrap="word", height=12, width=60)
        panes.add(self.diff, weight=3)
        self.protocol("WM_DELETE_WINDOW", self.close)
        self.bind("<Escape>", lambda e: self.close())
        self.bind("<<ThemeChanged>>", lambda e: self.after_idle(self.draw_chart), add=True)
        self._pending = False

    # -- the run -------------------------------------------------------------------------
    def running(self, stop: Callable[[], object]) -> None:
        self.stop_run = stop
        self.btn_stop.configure(state="normal")

    def on_event(self, event: Any) -> None:
        """An engine event (through the pump): the state changes now, the widgets once per idle moment."""
        self.state_model.apply(event)
        if not self._pending and self.winfo_exists():
            self._pending = True
            self.after_idle(self.refresh)

    def finish(self, result: Any) -> None:
        self.state_model.finish(result)
        self.stop_run = None
        if self.winfo_exists():
            self.btn_stop.configure(state="disabled")
            self.refresh()

    def failed(self, message: str) -> None:
        self.state_model.finished = True
        self.state_model.phase = f"Stopped by an error: {message}"
        self.stop_run = None
        if self.winfo_exists():
            self.btn_stop.configure(state="disabled")
            self.refresh()

    def stop(self) -> None:
        if self.stop_run is not None:
            self.stop_run()
            self.btn_stop.configure(state="disabled")
            self.phase.configure(text="Stopping: the cells in flight finish, what finished is kept…")

    def close(self) -> None:
        self.stop()
        self.destroy()

    def open_optimized(self) -> Any:
        path = self.state_model.optimized
        return self.open_thread(path) if path is not None else None

    # -- drawing -------------------------------------------------------------------------
    def refresh(self) -> None:
        self._pending = False
        if not self.winfo_exists():
            return
        s = self.state_model
        self.phase.configure(text=s.phase)
        self.progress.configure(text=s.progress_line())
        self.verdict.configure(text="\n".join(s.verdict), bootstyle="success" if s.promoted else "default")
        self.btn_open.configure(state="normal" if s.optimized is not None else "disabled")
        shown = set(self.list.get_children())
        for row in s.candidates:
            values = (row.step, row.status_text, "" if row.validation is None else f"{row.validation:.0%}")
            if row.id in shown:
                self.list.item(row.id, values=values)
            else:
                self.list.insert("", "end", iid=row.id, text=row.id, values=values)
        if s.candidates and not self.list.selection():
            best = next((r for r in reversed(s.candidates) if r.status == "validated"), s.candidates[-1])
            self.list.selection_set(best.id)
        self.draw_chart()

    def show_selected(self) -> None:
        sel = self.list.selection()
        row = next((r for r in self.state_model.candidates if sel and r.id == sel[0]), None)
        self.diff.configure(state="normal")
        self.diff.delete("1.0", "end")
        if row is None:
            self.diff.configure(state="disabled")
            return
        if row.reason:
            self.diff.insert("end", f"{row.label}\n\n")
        _fill_diff(self.diff, self.state_model.diff(row.id))

    def draw_chart(self) -> None:
        cv = self.chart
        cv.delete("all")
        c = tb.Style().colors
        cv.configure(background=c.bg)
        width = max(300, cv.winfo_width())
        points, best = self.state_model.chart()
        x0, x1, y0, y1 = PAD_L, width - PAD_R, PAD_T, CHART_H - PAD_B
        last = max([1, self.state_model.step, *(p.step for p in points)])

        def xy(step: int, value: float) -> tuple[float, float]:
            return x0 + (x1 - x0) * step / last, y1 - (y1 - y0) * PERCENT_AXIS.fraction(value)

        cv.create_text(x0, 2, anchor="nw", text="Validation pass rate per step", fill=c.fg, tags=("title",))
        for tick, label in zip(PERCENT_AXIS.ticks, PERCENT_AXIS.labels, strict=True):
            _x, y = xy(0, tick)
            cv.create_line(x0, y, x1, y, fill=c.border, tags=("axis",))
            cv.create_text(x0 - 4, y, anchor="e", text=label, fill=c.secondary, tags=("axis",))
        cv.create_text(x1, CHART_H - 4, anchor="se", text=f"step {last}", fill=c.secondary, tags=("axis",))
        if len(best) > 1:
            coords: list[float] = []
            for a, b in pairwise(best):
                coords += [*xy(a.step, a.value), *xy(b.step, a.value)]
            coords += list(xy(best[-1].step, best[-1].value))
            cv.create_line(*coords, fill=c.success, width=2, tags=("best",))
        for p in points:
            x, y = xy(p.step, p.value)
            cv.create_oval(x - 4, y - 4, x + 4, y + 4, fill=c.primary, outline="", tags=("point",))
        if best:
            x, y = xy(best[0].step, best[0].value)
            cv.create_oval(x - 4, y - 4, x + 4, y + 4, fill=c.secondary, outline="", tags=("original",))
