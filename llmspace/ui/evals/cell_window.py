"""A cell of the results grid in its own window: status, the output, every assertion with
its reason, the judges' reasons and scores (`presenters/eval_grid.CellDetail.text`), and
"Open as thread", which makes a new thread of the case (the caller's `open_as_thread`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from ...presenters.eval_grid import GridCell


class CellWindow(tb.Toplevel):
    def __init__(self, master: Any, cell: GridCell, open_as_thread: Callable[[GridCell], Any] | None) -> None:
        super().__init__(master=master, title=f"{cell.case} · {cell.column}")
        self.geometry("720x520")
        self.cell = cell
        self.detail = cell.detail()
        frame = tb.Frame(self)
        frame.pack(fill="both", expand=True, padx=8, pady=(8, 4))
        self.text = tb.Text(frame, wrap="word")
        bar_y = tb.Scrollbar(frame, orient="vertical", command=self.text.yview)
        self.text.configure(yscrollcommand=bar_y.set)
        bar_y.pack(side="right", fill="y")
        self.text.pack(side="left", fill="both", expand=True)
        self.text.insert("end", self.detail.text())
        self.text.configure(state="disabled")
        bar = tb.Frame(self)
        bar.pack(fill="x", padx=8, pady=(0, 8))
        self.btn_thread = tb.Button(bar, text="Open as thread", bootstyle="primary",
                                    command=lambda: self._open(open_as_thread))
        if open_as_thread is None or not cell.rows:
            self.btn_thread.configure(state="disabled")
        self.btn_thread.pack(side="left")
        tb.Button(bar, text="Copy", bootstyle="secondary", command=self.copy).pack(side="left", padx=6)
        tb.Button(bar, text="Close", bootstyle="secondary", command=self.destroy).pack(side="right")
        self.bind("<Escape>", lambda e: self.destroy())

    def _open(self, open_as_thread: Callable[[GridCell], Any] | None) -> None:
        if open_as_thread is not None:
            open_as_thread(self.cell)
            self.destroy()

    def copy(self) -> None:
        self.clipboard_clear()
        self.clipboard_append(self.detail.text())
