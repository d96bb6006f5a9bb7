"""The evaluation chart: pass rate, cost and latency per model/variant as three panels of
horizontal bars on one canvas, from `presenters/eval_grid.EvalGrid.chart()`. Canvas items
carry tags tests count: "bar", "label", "title", "empty".
"""

from __future__ import annotations

import tkinter as tk
from typing import Any

import ttkbootstrap as tb

from ...presenters.eval_grid import ChartBar

LABEL_W = 220
BAR_H = 16
GAP = 6
PANELS = (("Pass rate", "pass_rate", lambda v: f"{v:.0%}"), ("Cost", "cost", lambda v: f"${v:.4f}"),
          ("Mean latency", "latency_ms", lambda v: f"{v:.0f} ms"))


class EvalChart(tb.Frame):
    def __init__(self, master: Any) -> None:
        super().__init__(master)
        self.canvas = tk.Canvas(self, highlightthickness=0, borderwidth=0, height=320)
        self.canvas.pack(fill="both", expand=True)
        self.bars: list[ChartBar] = []
        self.canvas.bind("<Configure>", lambda e: self.redraw(), add=True)
        self.bind("<<ThemeChanged>>", lambda e: self.after_idle(self.redraw), add=True)

    def show(self, bars: list[ChartBar]) -> None:
        self.bars = bars
        self.redraw()

    def redraw(self) -> None:
        cv = self.canvas
        cv.delete("all")
        c = tb.Style().colors
        cv.configure(background=c.bg)
        width = max(300, cv.winfo_width())
        if not self.bars:
            cv.create_text(width // 2, 40, text="No results yet.", fill=c.secondary, tags=("empty",))
            return
        colours = [c.primary, c.info, c.success, c.warning, c.danger, c.secondary]
        y = 10
        for title, attr, fmt in PANELS:
            cv.create_text(8, y, anchor="nw", text=title, fill=c.fg, font="TkHeadingFont", tags=("title",))
            y += 22
            values = [getattr(b, attr) for b in self.bars]
            top = max([v for v in values if v is not None] or [0.0]) or 1.0
            if attr == "pass_rate":
                top = 1.0
            span = max(40, width - LABEL_W - 90)
            for i, (bar, value) in enumerate(zip(self.bars, values, strict=True)):
                cv.create_text(LABEL_W - 8, y + BAR_H // 2, anchor="e", text=bar.column, fill=c.fg, tags=("label",))
                length = 0 if value is None else max(1, int(span * value / top))
                cv.create_rectangle(LABEL_W, y, LABEL_W + length, y + BAR_H, fill=colours[i % len(colours)], outline="",
                                    tags=("bar", attr))
                cv.create_text(LABEL_W + length + 6, y + BAR_H // 2, anchor="w", fill=c.fg, tags=("label",),
                               text="–" if value is None else fmt(value))
                y += BAR_H + GAP
            y += 14
