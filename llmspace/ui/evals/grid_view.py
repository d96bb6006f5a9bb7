"""The results grid (cases × models) drawn on one canvas, virtualised: only the rows that
fit are drawn, with a fixed pool of canvas items reused as it scrolls, so 10,000 cells
scroll as fast as 100 (bench/bench_ui.py measures the worst frame). A header row sorts by
its column (the case column: dataset order; again: reversed); a click or Return on a cell
opens it. Colours: pass green, fail red, error amber, pending plain, tinted for the theme.
Many models scroll sideways (the canvas's own x view). Canvas items carry tags tests read:
"header", "cell", "case".
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from ...presenters.eval_grid import EvalGrid, GridCell
from .. import theme

ROW_H = 24
HEAD_H = 28
CASE_W = 220
MIN_COL_W = 120
TINTS = {"light": {"pass": "#d1e7dd", "fail": "#f8d7da", "error": "#fff3cd", "pending": ""},
         "dark": {"pass": "#1f4a35", "fail": "#5a2229", "error": "#584613", "pending": ""}}


class ResultsGrid(tb.Frame):
    """Draws `grid.window(first, n)`; `redraw()` after the grid changed."""

    def __init__(self, master: Any, grid: EvalGrid, on_open: Callable[[GridCell], Any]) -> None:
        super().__init__(master)
        self.grid_model = grid
        self.on_open = on_open
        self.first = 0
        self.current: tuple[int, int] = (0, 0)  # the keyboard's cell (row index in grid.rows, column)
        self.canvas = tk.Canvas(self, highlightthickness=1, borderwidth=0, takefocus=True)
        self.vbar = tb.Scrollbar(self, orient="vertical", command=self.yview)
        self.hbar = tb.Scrollbar(self, orient="horizontal", command=self.canvas.xview)
        self.canvas.configure(xscrollcommand=self.hbar.set)
        self.vbar.pack(side="right", fill="y")
        self.hbar.pack(side="bottom", fill="x")
        self.canvas.pack(side="left", fill="both", expand=True)
        self._rows: list[tuple[int, int, list[tuple[int, int]]]] = []  # per visible row: case bg, case text, cells
        self._head: list[tuple[int, int]] = []
        self._col_w = MIN_COL_W
        self._size = (0, 0)
        self._colors_now: dict[str, str] = {}
        self._shown: dict[int, tuple[Any, ...]] = {}  # item -> the options last set (redraw skips unchanged ones)
        self._path = str(self.canvas)
        self.canvas.bind("<Configure>", self._on_configure, add=True)
        self.canvas.bind("<Button-1>", self._on_click, add=True)
        self.canvas.bind("<MouseWheel>", lambda e: self.scroll(-1 if e.delta > 0 else 1, "units"), add=True)
        self.canvas.bind("<Button-4>", lambda e: self.scroll(-1, "units"), add=True)
        self.canvas.bind("<Button-5>", lambda e: self.scroll(1, "units"), add=True)
        self.canvas.bind("<Up>", lambda e: self.move(-1, 0), add=True)
        self.canvas.bind("<Down>", lambda e: self.move(1, 0), add=True)
        self.canvas.bind("<Left>", lambda e: self.move(0, -1), add=True)
        self.canvas.bind("<Right>", lambda e: self.move(0, 1), add=True)
        self.canvas.bind("<Prior>", lambda e: self.scroll(-1, "pages"), add=True)
        self.canvas.bind("<Next>", lambda e: self.scroll(1, "pages"), add=True)
        self.canvas.bind("<Return>", lambda e: self.open_current(), add=True)
        self.bind("<<ThemeChanged>>", lambda e: self.after_idle(self.rebuild), add=True)

    # -- geometry ----------------------------------------------------------------------------
    @property
    def visible_rows(self) -> int:
        height = self._size[1] or int(self.canvas.winfo_height())
        return max(1, (height - HEAD_H) // ROW_H + 1)

    def _on_configure(self, event: Any) -> None:
        if (event.width, event.height) != self._size:
            self._size = (event.width, event.height)
            self.rebuild()

    def _colors(self) -> dict[str, str]:
        c = tb.Style().colors
        tints = TINTS["dark" if theme.is_dark(self.winfo_toplevel()) else "light"]
        return {"bg": c.bg, "fg": c.fg, "head": c.light if not theme.is_dark(self.winfo_toplevel()) else c.dark,
                "line": c.border, "current": c.primary, **{k: v or c.bg for k, v in tints.items()}}

    def rebuild(self) -> None:
        """Make the item pool for the current size and columns, then draw."""
        cv = self.canvas
        cv.delete("all")
        self._shown.clear()
        colors = self._colors()
        cv.configure(background=colors["bg"], highlightbackground=colors["line"], highlightcolor=colors["current"])
        columns = self.grid_model.columns
        width = self._size[0] or int(cv.winfo_width())
        self._col_w = max(MIN_COL_W, (width - CASE_W) // max(1, len(columns)))
        height = self._size[1] or int(cv.winfo_height())
        cv.configure(scrollregion=(0, 0, CASE_W + self._col_w * len(columns), height))  # many models scroll sideways
        self._head = []
        labels = ["case", *columns]
        for i, _label in enumerate(labels):
            x0 = 0 if i == 0 else CASE_W + (i - 1) * self._col_w
            x1 = CASE_W if i == 0 else x0 + self._col_w
            rect = cv.create_rectangle(x0, 0, x1, HEAD_H, fill=colors["head"], outline=colors["line"], tags=("header",))
            text = cv.create_text(x0 + 8, HEAD_H // 2, anchor="w", fill=colors["fg"], tags=("header",),
                                  font="TkHeadingFont", text="")
            self._head.append((rect, text))
        self._rows = []
        for r in range(self.visible_rows):
            y0 = HEAD_H + r * ROW_H
            case_bg = cv.create_rectangle(0, y0, CASE_W, y0 + ROW_H, fill=colors["bg"], outline=colors["line"], tags=("case",))
            case_text = cv.create_text(8, y0 + ROW_H // 2, anchor="w", fill=colors["fg"], tags=("case",), text="")
            cells = []
            for c in range(len(columns)):
                x0 = CASE_W + c * self._col_w
                rect = cv.create_rectangle(x0, y0, x0 + self._col_w, y0 + ROW_H, fill=colors["bg"], outline=colors["line"],
                                           tags=("cell",))
                text = cv.create_text(x0 + 8, y0 + ROW_H // 2, anchor="w", fill=colors["fg"], tags=("cell",), text="")
                cells.append((rect, text))
            self._rows.append((case_bg, case_text, cells))
        self._colors_now = colors
        self.redraw()

    # -- drawing -----------------------------------------------------------------------------
    def _set(self, item: int, *options: Any) -> None:
        """`itemconfigure` straight to Tcl, skipped when the item already shows these options."""
        if self._shown.get(item) != options:
            self._shown[item] = options
            self.canvas.tk.call(self._path, "itemconfigure", item, *options)

    def redraw(self) -> None:
        """Fill the item pool from the grid's visible window (nothing is created or deleted)."""
        grid = self.grid_model
        if not self._rows and not self._head:
            return
        colors, put = self._colors_now, self._set
        total = len(grid.rows)
        self.first = max(0, min(self.first, max(0, total - self.visible_rows + 1)))
        arrow = " ▼" if grid.descending else " ▲"
        for i, (_rect, text) in enumerate(self._head):
            key = label = "case" if i == 0 else grid.columns[i - 1]
            put(text, "-text", label + (arrow if grid.sort_key == key else ""))
        window = grid.window(self.first, len(self._rows))
        cur_row, cur_col = self.current
        line, current_line = colors["line"], colors["current"]
        for r, (case_bg, case_text, cells) in enumerate(self._rows):
            if r < len(window):
                case, row_cells = window[r]
                put(case_text, "-text", case, "-state", "normal")
                put(case_bg, "-state", "normal")
                on_row = self.first + r == cur_row
                for c, (rect, text) in enumerate(cells):
                    cell = row_cells[c]
                    current = on_row and c == cur_col
                    put(rect, "-fill", colors[cell.status], "-state", "normal",
                        "-outline", current_line if current else line, "-width", 2 if current else 1)
                    put(text, "-text", cell.label, "-state", "normal")
            else:
                for item in (case_bg, case_text, *(i for pair in cells for i in pair)):
                    put(item, "-state", "hidden")
        shown = max(1, len(self._rows) - 1)
        self.vbar.set(self.first / total if total else 0.0, min(1.0, (self.first + shown) / total) if total else 1.0)

    # -- scrolling and keys ------------------------------------------------------------------
    def scroll_to(self, first: int) -> None:
        self.first = max(0, first)
        self.redraw()

    def scroll(self, n: int, what: str = "units") -> None:
        step = n * (max(1, len(self._rows) - 2) if what == "pages" else 1)
        self.scroll_to(self.first + step)

    def yview(self, *args: Any) -> None:
        """The scrollbar's command: ("moveto", fraction) or ("scroll", n, "units"|"pages")."""
        if args and args[0] == "moveto":
            self.scroll_to(int(float(args[1]) * len(self.grid_model.rows)))
        elif args and args[0] == "scroll":
            self.scroll(int(args[1]), str(args[2]))

    def move(self, dr: int, dc: int) -> None:
        grid = self.grid_model
        row = max(0, min(self.current[0] + dr, len(grid.rows) - 1))
        col = max(0, min(self.current[1] + dc, len(grid.columns) - 1))
        self.current = (row, col)
        if row < self.first:
            self.first = row
        elif row >= self.first + len(self._rows) - 1:
            self.first = row - len(self._rows) + 2
        self.redraw()

    def open_current(self) -> None:
        cell = self.grid_model.cell_at(*self.current)
        if cell is not None:
            self.on_open(cell)

    # -- mouse -------------------------------------------------------------------------------
    def cell_xy(self, row: int, column: int) -> tuple[int, int]:
        """The canvas point in the middle of a visible cell (row: index into the visible window)."""
        return CASE_W + column * self._col_w + self._col_w // 2, HEAD_H + row * ROW_H + ROW_H // 2

    def header_xy(self, column: int | None) -> tuple[int, int]:
        """The middle of a header cell (None: the case column)."""
        if column is None:
            return CASE_W // 2, HEAD_H // 2
        return CASE_W + column * self._col_w + self._col_w // 2, HEAD_H // 2

    def _on_click(self, event: Any) -> None:
        self.canvas.focus_set()
        grid = self.grid_model
        x = int(self.canvas.canvasx(event.x))
        col = (x - CASE_W) // self._col_w if x >= CASE_W else None
        if event.y < HEAD_H:
            if col is None:
                grid.sort_by("case")
            elif col < len(grid.columns):
                grid.sort_by(grid.columns[col])
            self.redraw()
            return
        row = self.first + (event.y - HEAD_H) // ROW_H
        if col is None or row >= len(grid.rows) or col >= len(grid.columns):
            return
        self.current = (row, col)
        self.redraw()
        self.open_current()
