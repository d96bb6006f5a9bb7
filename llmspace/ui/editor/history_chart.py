"""The run-history chart: scores, latency and cost per run, drawn on a Tk canvas as three
panels stacked over one run axis (oldest run left). Each panel has its title, a legend, a
value axis with grid lines and labels, a line and a point per value; hovering a point shows
its run and value. Fewer than two runs show a message instead. Everything drawn comes from
`presenters/history_chart.ChartData`; this module only places it, in the current theme's
colours. Canvas items carry tags tests can count: "point", "line", "legend", "axis", "empty".
"""

from __future__ import annotations

import tkinter as tk
import tkinter.font as tkfont
from typing import Any

import ttkbootstrap as tb

from ...presenters.history_chart import ChartData, ChartPanel

SMALL = "TkSmallCaptionFont"
TITLE = "TkDefaultFont"
POINT_R = 3.5
X_PAD = 10


class HistoryChartView(tb.Frame):
    """A canvas that draws one `ChartData`; redrawn on resize and on `show`."""

    def __init__(self, master: Any) -> None:
        super().__init__(master)
        self.canvas = tk.Canvas(self, width=320, height=300, highlightthickness=0, borderwidth=0)
        self.canvas.pack(fill="both", expand=True)
        self.data: ChartData | None = None
        self.point_texts: dict[int, str] = {}  # canvas item → what hovering it shows
        self.hover_text = ""
        self.canvas.bind("<Configure>", lambda e: self.redraw(), add=True)
        self.bind("<<ThemeChanged>>", lambda e: self.after_idle(self.redraw), add=True)  # new colours
        self.canvas.tag_bind("point", "<Enter>", self._on_enter)
        self.canvas.tag_bind("point", "<Leave>", lambda e: self.hide_hover())

    # -- public ---------------------------------------------------------------------------
    def show(self, data: ChartData) -> None:
        self.data = data
        self.redraw()

    def canvas_size(self) -> tuple[int, int]:
        c = self.canvas
        w = c.winfo_width() if c.winfo_width() > 1 else int(c.cget("width"))
        h = c.winfo_height() if c.winfo_height() > 1 else int(c.cget("height"))
        return w, h

    def redraw(self) -> None:
        if not self.winfo_exists():  # a redraw queued by a theme switch after the panel closed
            return
        c = self.canvas
        c.delete("all")
        self.point_texts = {}
        colors = tb.Style().colors
        c.configure(background=colors.bg)
        data = self.data
        if data is None:
            return
        w, h = self.canvas_size()
        if data.empty:
            c.create_text(w / 2, h / 2, text=data.empty, width=max(120, w - 40), justify="center",
                          fill=colors.secondary, font=TITLE, tags=("empty",))
            return
        self._draw(data, w, h, colors)

    def show_hover(self, item: int) -> None:
        """Show what point `item` stands for, next to it."""
        self.hide_hover()
        text = self.point_texts.get(item)
        if not text:
            return
        c = self.canvas
        colors = tb.Style().colors
        x0, y0, x1, y1 = c.coords(item)
        w, _h = self.canvas_size()
        font = tkfont.nametofont(SMALL)
        tw = font.measure(text) + 10
        x = min(max(4.0, (x0 + x1) / 2 - tw / 2), w - tw - 4)
        y = y0 - font.metrics("linespace") - 10
        if y < 2:
            y = y1 + 6
        c.create_rectangle(x, y, x + tw, y + font.metrics("linespace") + 6, fill=colors.light,
                           outline=colors.border, tags=("hover",))
        c.create_text(x + 5, y + 3, text=text, anchor="nw", font=SMALL, fill=colors.fg, tags=("hover",))
        self.hover_text = text

    def hide_hover(self) -> None:
        self.canvas.delete("hover")
        self.hover_text = ""

    # -- drawing --------------------------------------------------------------------------
    def _on_enter(self, _e: Any) -> None:
        current = self.canvas.find_withtag("current")
        if current:
            self.show_hover(current[0])

    def _draw(self, data: ChartData, w: int, h: int, colors: Any) -> None:
        small = tkfont.nametofont(SMALL)
        title_font = tkfont.nametofont(TITLE)
        line = small.metrics("linespace")
        tick_w = max((small.measure(t) for p in data.panels for t in p.axis.labels), default=20)
        left = tick_w + 10
        right = w - 10
        bottom = h - line - 8
        top = 4
        n = len(data.runs)
        step = (right - left - 2 * X_PAD) / max(1, n - 1)
        xs = [left + X_PAD + i * step for i in range(n)]
        panel_h = (bottom - top) / max(1, len(data.panels))
        for k, panel in enumerate(data.panels):
            y0 = top + k * panel_h
            self._draw_panel(panel, xs, left, right, y0, y0 + panel_h, colors, small, title_font)
        self._draw_run_axis(data, xs, bottom, colors, small)

    def _draw_panel(self, panel: ChartPanel, xs: list[float], left: float, right: float, y0: float, y1: float,
                    colors: Any, small: Any, title_font: Any) -> None:
        c = self.canvas
        title_h = title_font.metrics("linespace") + 4
        c.create_text(left, y0 + 2, text=panel.title, anchor="nw", font=TITLE, fill=colors.fg, tags=("title",))
        # legend, right-aligned on the title row
        x = right
        for series in reversed(panel.series):
            tw = small.measure(series.name)
            x -= tw
            c.create_text(x, y0 + 2 + title_h / 2, text=series.name, anchor="w", font=SMALL, fill=colors.fg,
                          tags=("legend",))
            x -= 12
            colour = colors.get(series.colour)
            c.create_oval(x, y0 + title_h / 2 - 2, x + 8, y0 + title_h / 2 + 6, fill=colour, outline=colour,
                          tags=("legend",))
            x -= 10
        plot_top, plot_bottom = y0 + title_h + 6, y1 - 8
        height = max(10.0, plot_bottom - plot_top)
        axis = panel.axis

        def ypos(value: float) -> float:
            return plot_top + height * (1 - axis.fraction(value))

        for tick, label in zip(axis.ticks, axis.labels, strict=True):
            y = ypos(tick)
            c.create_line(left, y, right, y, fill=colors.border, tags=("grid",))
            c.create_text(left - 4, y, text=label, anchor="e", font=SMALL, fill=colors.secondary, tags=("axis",))
        c.create_line(left, plot_top, left, plot_top + height, fill=colors.secondary, tags=("axis",))
        c.create_line(left, plot_top + height, right, plot_top + height, fill=colors.secondary, tags=("axis",))
        if panel.point_count == 0:
            c.create_text((left + right) / 2, plot_top + height / 2, text=panel.note, font=SMALL,
                          fill=colors.secondary, tags=("note",))
            return
        for series in panel.series:
            colour = colors.get(series.colour)
            coords = [(xs[p.index], ypos(p.value)) for p in series.points]
            if len(coords) > 1:
                c.create_line(*[v for xy in coords for v in xy], fill=colour, width=2, tags=("line",))
            for p, (px, py) in zip(series.points, coords, strict=True):
                item = c.create_oval(px - POINT_R, py - POINT_R, px + POINT_R, py + POINT_R, fill=colour,
                                     outline=colors.bg, tags=("point", f"run:{p.index}"))
                self.point_texts[item] = p.text

    def _draw_run_axis(self, data: ChartData, xs: list[float], bottom: float, colors: Any, small: Any) -> None:
        """Run labels under the last panel: the oldest and the newest always, others where
        they fit without overlapping."""
        c = self.canvas
        w, _h = self.canvas_size()
        last = len(xs) - 1
        placed: list[tuple[float, float]] = []
        for i in [0, last, *range(1, last)]:
            label = data.runs[i].label
            tw = small.measure(label)
            x = min(max(xs[i], tw / 2 + 2), w - tw / 2 - 2)
            box = (x - tw / 2 - 4, x + tw / 2 + 4)
            if any(box[0] < b and a < box[1] for a, b in placed):
                continue
            placed.append(box)
            c.create_text(x, bottom + 4, text=label, anchor="n", font=SMALL, fill=colors.secondary,
                          tags=("axis", "runlabel"))
