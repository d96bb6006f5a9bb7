"""The keyboard focus, visible in both themes: a solid ring `WIDTH` px wide in the theme's
primary colour around whatever has the focus (a button, an entry, a text box, a list), and
around the focused row when it is a tree or table. The theme's own focus marks (thin dotted
lines) vanish in the dark theme; this one does not.

    ring = FocusRing.install(root)   # by the main window; one per Tk root, follows every <FocusIn>

The ring is four bars (`tk.Frame`s of the focused widget's toplevel) placed against the
widget's outer edge with `place(in_=…)`, so they follow it as it moves or resizes. Their
colour is the primary colour, made lighter or darker until it reaches `MIN_CONTRAST` on the
theme's background (`colour_for`).
"""

from __future__ import annotations

import tkinter as tk
from typing import Any

from .theme import contrast_ratio

WIDTH = 2
MIN_CONTRAST = 3.0
SKIP = {"Menu", "Toplevel", "Tk", "Listbox"}  # menus and popup lists show their own selection


class FocusRing:
    """`widget`: what the ring is around now (None: hidden)."""

    @classmethod
    def install(cls, root: Any) -> FocusRing:
        """The root's ring, made on first use (a second window on the same root, as in the
        tests, reuses it rather than adding bindings)."""
        ring = getattr(root, "_llmspace_focus_ring", None)
        if not isinstance(ring, cls):
            ring = cls(root)
            root._llmspace_focus_ring = ring
        return ring

    def __init__(self, root: Any) -> None:
        self.root = root
        self.widget: Any = None
        self.bars: dict[str, list[tk.Frame]] = {}  # toplevel path → its four bars
        self._job: str | None = None
        root.bind_all("<FocusIn>", lambda e: self.request())  # Tk binds neither on "all"
        root.bind_all("<FocusOut>", lambda e: self.request())
        root.bind_all("<<ViewScrolled>>", lambda e: self.request())  # a scrolling column moved (ui/scroll_column.py)
        self._watched: set[str] = set()
        for seq in ("<<TreeviewSelect>>", "<KeyRelease>", "<ButtonRelease-1>", "<Configure>", "<MouseWheel>",
                    "<Button-4>", "<Button-5>"):
            root.bind_class("Treeview", seq, lambda e: self.request(), add="+")

    def request(self) -> None:
        """Redraw once the events now queued are handled (the focus settles first)."""
        if self._job is None:
            try:
                self._job = self.root.after_idle(self.update)
            except tk.TclError:  # the window is closing
                pass

    def colour(self) -> str:
        colors = self.root.style.colors
        return colour_for(self.root, colors.primary, colors.bg)

    def update(self) -> None:
        self._job = None
        try:
            focus = self.root.focus_get()
        except (KeyError, tk.TclError):  # the focus is in a window being destroyed
            focus = None
        if focus is None or focus.winfo_class() in SKIP or not focus.winfo_viewable():
            self.hide()
            return
        self.widget = focus
        if str(focus) not in self._watched:  # the ring follows the widget's size (a resized window)
            self._watched.add(str(focus))
            focus.bind("<Configure>", lambda e: self.request(), add="+")
        top = focus.winfo_toplevel()
        bars = self._bars(top)
        for other in self.bars.values():
            if other is not bars:
                for bar in other:
                    bar.place_forget()
        colour = self.colour()
        x, y, w, h = self._clip(focus, *self._box(focus))
        if w <= 0 or h <= 0:  # scrolled out of its column
            self.hide()
            return
        d = WIDTH
        edges = ((x - d, y - d, w + 2 * d, d), (x - d, y + h, w + 2 * d, d),
                 (x - d, y, d, h), (x + w, y, d, h))
        for bar, (bx, by, bw, bh) in zip(bars, edges, strict=True):
            bar.configure(background=colour)
            bar.place(in_=focus, x=bx, y=by, width=bw, height=bh, bordermode="outside")
            bar.lift()

    @staticmethod
    def _box(widget: Any) -> tuple[int, int, int, int]:
        """The ring's inner rectangle in the widget's coordinates: the focused row of a tree
        (when it is shown), else the whole widget."""
        if widget.winfo_class() == "Treeview":
            row = widget.focus() or next(iter(widget.selection()), "")
            box = widget.bbox(row) if row else ""
            if box:
                bx, by, bw, bh = (int(v) for v in box)
                return bx + WIDTH, by + WIDTH, max(1, bw - 2 * WIDTH), max(1, bh - 2 * WIDTH)
        return 0, 0, widget.winfo_width(), widget.winfo_height()

    @staticmethod
    def _clip(widget: Any, x: int, y: int, w: int, h: int) -> tuple[int, int, int, int]:
        """The box cut to the viewport of each scrolling column around the widget, which
        hides what is scrolled out of it (`ui/scroll_column.ScrollColumn`)."""
        wx, wy = widget.winfo_rootx(), widget.winfo_rooty()
        parent = widget.master
        while parent is not None:
            canvas = getattr(parent, "canvas", None) if getattr(parent, "scrolls_children", False) else None
            if canvas is not None:
                cx, cy = canvas.winfo_rootx() - wx, canvas.winfo_rooty() - wy
                left, top = max(x, cx), max(y, cy)
                right, bottom = min(x + w, cx + canvas.winfo_width()), min(y + h, cy + canvas.winfo_height())
                x, y, w, h = left, top, right - left, bottom - top
            parent = parent.master
        return x, y, w, h

    def _bars(self, top: Any) -> list[tk.Frame]:
        key = str(top)
        bars = self.bars.get(key)
        if bars is None or not bars[0].winfo_exists():
            bars = [tk.Frame(top, borderwidth=0, highlightthickness=0, takefocus=0) for _ in range(4)]
            self.bars[key] = bars
            bars[0].bind("<Destroy>", lambda _e: self._forget(key))
        return bars

    def _forget(self, key: str) -> None:
        self.bars.pop(key, None)

    def hide(self) -> None:
        self.widget = None
        for bars in list(self.bars.values()):
            for bar in bars:
                try:
                    bar.place_forget()
                except tk.TclError:
                    pass


def colour_for(widget: Any, primary: str, background: str) -> str:
    """`primary`, or the nearest shade of it (towards white or black, whichever contrasts
    with `background`) that reaches `MIN_CONTRAST` on `background`."""
    if contrast_ratio(widget, primary, background) >= MIN_CONTRAST:
        return primary
    r, g, b = (v // 257 for v in widget.winfo_rgb(primary))
    light = contrast_ratio(widget, "#ffffff", background) > contrast_ratio(widget, "#000000", background)
    target = 255 if light else 0
    for step in range(1, 21):
        t = step / 20
        c = "#" + "".join(f"{round(v + (target - v) * t):02x}" for v in (r, g, b))
        if contrast_ratio(widget, c, background) >= MIN_CONTRAST:
            return c
    return "#ffffff" if light else "#000000"
