"""A column that scrolls vertically when its content is taller than the room it gets, and
otherwise stretches its content to the full height (so a widget packed with `expand=True`,
such as the system prompt box, still fills the column of a tall window).

    column = ScrollColumn(parent, padding=(8, 4))
    column.pack(fill="both", expand=True)
    tb.Label(column.body, text="…").pack(anchor="w")     # children go in `body`
    column.see(widget)                                    # scroll a child into view

The column requests its content's width, and its full height or, with `height=`, at most
that many pixels: so a dialog built on one asks for a size at which nothing is cut off
sideways and scrolls what is taller than it opens at. The mouse wheel over any child
scrolls the column (a text box or list that can scroll itself keeps the wheel), and a child
that gets the keyboard focus is scrolled into view.

`fit_to_content(dialog)` opens a dialog at least as large as its content asks (within the
screen), for dialogs whose pages are built by others and may grow (Settings).
"""

from __future__ import annotations

import tkinter as tk
from typing import Any

import ttkbootstrap as tb

SELF_SCROLLING = ("Text", "Treeview", "Listbox", "Canvas")


class ScrollColumn(tb.Frame):
    """A canvas viewport with a vertical scrollbar (shown only when needed) over `body`."""

    scrolls_children = True  # tests and `see` callers find the scrolling ancestor by this

    def __init__(self, master: Any, padding: Any = 0, height: int | None = None, **kw: Any) -> None:
        super().__init__(master, **kw)
        self.max_request = height
        self.canvas = tb.Canvas(self, highlightthickness=0, borderwidth=0, width=1, height=1)
        self.bar = tb.Scrollbar(self, orient="vertical", command=self.canvas.yview)
        self.canvas.grid(row=0, column=0, sticky="nsew")
        self.bar.grid(row=0, column=1, sticky="ns")
        self.bar.grid_remove()
        self.rowconfigure(0, weight=1)
        self.columnconfigure(0, weight=1)
        # the scrollbar's lane is kept, so showing it never narrows (and re-wraps) the content
        self.columnconfigure(1, minsize=self.bar.winfo_reqwidth())
        self.body = tb.Frame(self.canvas, padding=padding)
        self._item = self.canvas.create_window(0, 0, anchor="nw", window=self.body)
        self.canvas.configure(yscrollcommand=self._on_view)
        self._tag = f"ScrollColumn{id(self)}"
        self._job: str | None = None
        self._size = (0, 0, 0)
        for seq in ("<MouseWheel>", "<Button-4>", "<Button-5>"):
            self.bind_class(self._tag, seq, self._on_wheel)
        self.bind_class(self._tag, "<Configure>", lambda e: self.fit_soon(), add=True)
        self.bind_class(self._tag, "<FocusIn>", lambda e: self.see(e.widget), add=True)
        self.canvas.bind("<Configure>", lambda e: self.fit(), add=True)
        self.body.bind("<Configure>", lambda e: self.fit_soon(), add=True)
        self.bind("<Enter>", lambda e: self._tag_children(), add=True)
        self.bind("<Destroy>", self._on_destroy, add=True)
        self.fit_soon()

    # -- size ------------------------------------------------------------------------------
    def fit_soon(self) -> None:
        """Fit at the next idle moment (many size changes → one fit)."""
        if self._job is None:
            self._job = self.after_idle(self._fit_now)

    def _fit_now(self) -> None:
        self._job = None
        if self.winfo_exists():
            self.fit()

    def fit(self) -> None:
        """Request the content's size; lay the content out at the viewport's width and at
        least its height; set the scroll region."""
        self._tag_children()
        req_w, req_h = self.body.winfo_reqwidth(), self.body.winfo_reqheight()
        ask_h = req_h if self.max_request is None else min(req_h, self.max_request)
        if (int(self.canvas.cget("width")), int(self.canvas.cget("height"))) != (req_w, ask_h):
            self.canvas.configure(width=req_w, height=ask_h)
        view_w, view_h = self.canvas.winfo_width(), self.canvas.winfo_height()
        if view_w <= 1:
            return
        height = max(view_h, req_h)
        if self._size != (view_w, height, req_h):
            self._size = (view_w, height, req_h)
            self.canvas.itemconfigure(self._item, width=view_w, height=height)
            self.canvas.configure(scrollregion=(0, 0, view_w, height))

    def overflows(self) -> bool:
        """True when the content is taller than the viewport (the column scrolls)."""
        first, last = self.yview()
        return first > 0.0 or last < 1.0

    def _on_view(self, first: str, last: str) -> None:
        self.bar.set(first, last)
        self.event_generate("<<ViewScrolled>>")  # the focus ring (`ui/focus_ring.py`) follows
        if float(first) <= 0.0 and float(last) >= 1.0:
            self.bar.grid_remove()
        else:
            self.bar.grid()

    def yview(self) -> tuple[float, float]:
        first, last = self.canvas.yview()
        return float(first), float(last)

    # -- scrolling -------------------------------------------------------------------------
    def see(self, widget: Any) -> None:
        """Scroll so that `widget` (a descendant of `body`) is in view: its top when it is
        taller than the viewport."""
        try:
            if not self.winfo_exists() or not str(widget).startswith(str(self.body)):
                return
            self.update_idletasks()
            total = max(1, int(self._size[1]) or self.body.winfo_height())
            top = widget.winfo_rooty() - self.body.winfo_rooty()
            bottom = top + widget.winfo_height()
        except tk.TclError:
            return
        view_top = int(self.canvas.canvasy(0))
        view_h = self.canvas.winfo_height()
        if top < view_top or bottom - top > view_h:
            self.canvas.yview_moveto(top / total)
        elif bottom > view_top + view_h:
            self.canvas.yview_moveto((bottom - view_h) / total)

    def _on_wheel(self, e: Any) -> str | None:
        up = getattr(e, "num", None) == 4 or getattr(e, "delta", 0) > 0
        w = e.widget
        if isinstance(w, tk.Misc) and w.winfo_class() in SELF_SCROLLING and w is not self.canvas:
            try:
                first, last = (float(x) for x in w.yview())  # type: ignore[attr-defined]
            except (tk.TclError, AttributeError, ValueError):
                first, last = 0.0, 1.0
            if (up and first > 0.0) or (not up and last < 1.0):
                return None  # it scrolls itself that way; at its end the column scrolls
        if not self.overflows():
            return None
        self.canvas.yview_scroll(-2 if up else 2, "units")
        return "break"

    def _tag_children(self) -> None:
        """Give every descendant of `body` the column's bindings (wheel, focus, size)."""
        stack: list[Any] = list(self.body.winfo_children())
        while stack:
            w = stack.pop()
            try:
                tags = w.bindtags()
                if self._tag not in tags:
                    w.bindtags((tags[0], self._tag, *tags[1:]))
                stack.extend(w.winfo_children())
            except tk.TclError:
                continue
        tags = self.canvas.bindtags()
        if self._tag not in tags:
            self.canvas.bindtags((tags[0], self._tag, *tags[1:]))

    def _on_destroy(self, e: Any) -> None:
        if e.widget is not self:
            return
        if self._job is not None:
            try:
                self.after_cancel(self._job)
            except tk.TclError:
                pass
            self._job = None
        for seq in ("<MouseWheel>", "<Button-4>", "<Button-5>", "<Configure>", "<FocusIn>"):
            try:
                self.unbind_class(self._tag, seq)
            except tk.TclError:
                pass


def fit_to_content(dialog: Any, margin: int = 40) -> None:
    """Grow `dialog` (a Toplevel already given its default size) to its requested size when
    that is larger, but not past the screen less `margin` pixels."""
    dialog.update_idletasks()
    width, height = dialog.winfo_width(), dialog.winfo_height()
    if width <= 1:  # not mapped yet: the size it was given
        width, height = (int(v) for v in dialog.geometry().split("+")[0].split("x"))
    want_w = min(max(width, dialog.winfo_reqwidth()), dialog.winfo_screenwidth() - margin)
    want_h = min(max(height, dialog.winfo_reqheight()), dialog.winfo_screenheight() - margin)
    if (want_w, want_h) != (width, height):
        dialog.geometry(f"{want_w}x{want_h}")
