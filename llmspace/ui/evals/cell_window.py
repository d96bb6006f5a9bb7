"""A cell of the results grid in its own window: status, the output, every assertion with
its reason, the judges' reasons and scores (`presenters/eval_grid.CellDetail.text`) of one
repeat — Previous / Next repeat (Alt+Left / Alt+Right) step through the others —, and "Open
as thread", which makes a new thread of the case (the caller's `open_as_thread`). A results
window keeps one cell window and shows the next cell opened in it (`show`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from ...presenters.eval_grid import GridCell


class CellWindow(tb.Toplevel):
    def __init__(self, master: Any, cell: GridCell, open_as_thread: Callable[[GridCell], Any] | None) -> None:
        super().__init__(master=master, title=f"{cell.case} · {cell.column}")
        self.geometry("720x520")
        self.open_as_thread = open_as_thread
        nav = tb.Frame(self)
        nav.pack(fill="x", padx=8, pady=(8, 0))
        self.btn_prev = tb.Button(nav, text="◀ Previous repeat", bootstyle="secondary-outline",
                                  command=lambda: self.step(-1))
        self.btn_prev.pack(side="left")
        self.repeat_label = tb.Label(nav, text="")
        self.repeat_label.pack(side="left", padx=8)
        self.btn_next = tb.Button(nav, text="Next repeat ▶", bootstyle="secondary-outline", command=lambda: self.step(1))
        self.btn_next.pack(side="left")
        frame = tb.Frame(self)
        frame.pack(fill="both", expand=True, padx=8, pady=(8, 4))
        self.text = tb.Text(frame, wrap="word")
        bar_y = tb.Scrollbar(frame, orient="vertical", command=self.text.yview)
        self.text.configure(yscrollcommand=bar_y.set)
        bar_y.pack(side="right", fill="y")
        self.text.pack(side="left", fill="both", expand=True)
        bar = tb.Frame(self)
        bar.pack(fill="x", padx=8, pady=(0, 8))
        self.btn_thread = tb.Button(bar, text="Open as thread", bootstyle="primary", command=self._open)
        self.btn_thread.pack(side="left")
        tb.Button(bar, text="Copy", bootstyle="secondary", command=self.copy).pack(side="left", padx=6)
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        self.bind("<Escape>", lambda e: self.destroy())
        self.bind("<Alt-Left>", lambda e: self.step(-1))
        self.bind("<Alt-Right>", lambda e: self.step(1))
        self.show(cell)

    def show(self, cell: GridCell, repeat: int | None = None) -> None:
        """Show `cell` (its repeat `repeat`, else the one the grid shows: the first that failed)."""
        self.cell = cell
        self.detail = cell.detail(repeat)
        self.title(f"{cell.case} · {cell.column}")
        self.text.configure(state="normal")
        self.text.delete("1.0", "end")
        self.text.insert("end", self.detail.text())
        self.text.configure(state="disabled")
        numbers = cell.repeat_numbers
        at = numbers.index(self.detail.repeat) if self.detail.repeat in numbers else -1
        self.repeat_label.configure(text=f"Repeat {self.detail.repeat} of {self.detail.repeats}")
        self.btn_prev.configure(state="normal" if at > 0 else "disabled")
        self.btn_next.configure(state="normal" if 0 <= at < len(numbers) - 1 else "disabled")
        self.btn_thread.configure(state="disabled" if self.open_as_thread is None or not cell.rows else "normal")

    def step(self, by: int) -> None:
        """The previous (`by` -1) or next (+1) repeat that has a result."""
        numbers = self.cell.repeat_numbers
        if self.detail.repeat in numbers:
            at = numbers.index(self.detail.repeat) + by
            if 0 <= at < len(numbers):
                self.show(self.cell, numbers[at])

    def _open(self) -> None:
        if self.open_as_thread is not None:
            self.open_as_thread(self.cell.only_repeat(self.detail.repeat))  # the repeat shown
            self.destroy()

    def copy(self) -> None:
        self.clipboard_clear()
        self.clipboard_append(self.detail.text())
