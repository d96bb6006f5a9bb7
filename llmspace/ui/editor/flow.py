"""A frame that lays its children out left to right and wraps them onto new rows when the
width runs out, so that no button or picture is ever cut off in a narrow column (the
history panel's buttons, the images of a message card).

    bar = FlowFrame(parent)
    bar.pack(fill="x")
    bar.add(tb.Button(bar, text="Inspect", command=...))

Children must be made with the FlowFrame as their master; `arrange()` places them again
(after a child changed its size); `on_height_change()` is called when the rows' height changed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb


class FlowFrame(tb.Frame):
    """Children placed in rows (`place`), as many to a row as fit."""

    def __init__(self, master: Any, gap: int = 4, row_gap: int = 4,
                 on_height_change: Callable[[], None] | None = None, **kw: Any) -> None:
        super().__init__(master, height=1, width=1, **kw)
        self.gap, self.row_gap = gap, row_gap
        self.items: list[Any] = []
        self.on_height_change = on_height_change
        self._width = 0
        self._job: str | None = None
        self.bind("<Configure>", self._on_configure, add=True)
        self.bind("<Destroy>", self._on_destroy, add=True)

    def add(self, widget: Any) -> Any:
        """Lay out `widget` (a child of this frame) after the others; it is placed again
        whenever its size changes."""
        self.items.append(widget)
        widget.bind("<Configure>", lambda e: self.arrange_soon(), add=True)
        self.arrange()
        return widget

    def arrange_soon(self) -> None:
        """Arrange at the next idle moment (several size changes → one layout)."""
        if self._job is None:
            self._job = self.after_idle(self._arrange_now)

    def _on_destroy(self, e: Any) -> None:
        if e.widget is self and self._job is not None:
            try:
                self.after_cancel(self._job)
            except Exception:  # already run
                pass
            self._job = None

    def _arrange_now(self) -> None:
        self._job = None
        if self.winfo_exists():
            self.arrange()

    def _on_configure(self, e: Any) -> None:
        if e.width > 1 and e.width != self._width:
            self.arrange(e.width)

    def arrange(self, width: int | None = None) -> None:
        """Place the children for a frame `width` px wide (default: its current width, or
        all on one row before it has one)."""
        if width is None:
            width = self.winfo_width() if self.winfo_width() > 1 else self._width
        if width <= 1:
            width = sum(w.winfo_reqwidth() + self.gap for w in self.items) or 1
        self._width = width
        x = y = row_h = 0
        for w in self.items:
            bw, bh = w.winfo_reqwidth(), w.winfo_reqheight()
            if x > 0 and x + bw > width:
                x, y = 0, y + row_h + self.row_gap
                row_h = 0
            w.place(x=x, y=y)
            x += bw + self.gap
            row_h = max(row_h, bh)
        height = max(1, y + row_h)
        if int(self.cget("height")) != height:
            self.configure(height=height)
            if self.on_height_change is not None:
                self.on_height_change()

    def rows(self) -> int:
        """How many rows the children take now."""
        return len({int(w.place_info().get("y", 0)) for w in self.items if w.winfo_manager() == "place"})
