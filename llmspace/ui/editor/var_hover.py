"""The tooltip over a `{{ variable }}` in an editor Text: after the pointer rests on a
highlighted reference, the value the run would put there (resolved on a worker, cut with
"…" when long), or why it cannot be resolved. Moving off, typing or leaving hides it.
Logic in `presenters/variable_assist.py` (`hover_query` on the UI thread, `resolve_hover`
on a worker through the window's pump).

`VariableHover(text, services, where)` (`context.TextServices`) is a component of `ui/editor/text_assist.TextAssist`;
`where()` returns (snapshot place key, whether the run renders this text).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...core.templating.resolution import RenderEnv
from ...presenters.variable_assist import hover_query, resolve_hover

if TYPE_CHECKING:
    from .context import TextServices

DELAY_MS = 350
WRAP_PX = 440


class VariableHover:
    """`tip` is the shown tooltip (None when hidden); `tip_text()` its text."""

    def __init__(self, text: Any, services: TextServices, where: Callable[[], tuple[str | None, bool]]) -> None:
        self.text = text
        self.services = services
        self.where = where
        self.span: tuple[str, str] | None = None
        self.tip: tk.Toplevel | None = None
        self.label: Any = None
        self._job: str | None = None
        self._asked = 0
        text.bind("<Motion>", self._on_motion, add=True)
        text.bind("<Leave>", self._on_leave, add=True)
        text.bind("<KeyPress>", lambda e: self.hide(), add=True)
        text.bind("<ButtonPress>", lambda e: self.hide(), add=True)
        text.bind("<Destroy>", lambda e: self.hide() if e.widget is text else None, add=True)

    def tip_text(self) -> str:
        return str(self.label.cget("text")) if self.label is not None else ""

    def span_at(self, x: int, y: int) -> tuple[str, str] | None:
        """The highlighted `{{ … }}` under the pixel (x, y) of the Text, as index strings."""
        t = self.text
        idx = t.index(f"@{x},{y}")
        if "var" not in t.tag_names(idx):
            return None
        box = t.bbox(idx)
        if box is None or not (box[0] <= x < box[0] + max(box[2], 1) and box[1] <= y < box[1] + box[3]):
            return None  # beside the text, right of a line's end
        r = t.tag_prevrange("var", f"{idx}+1c")
        return (str(r[0]), str(r[1])) if r else None

    def _on_motion(self, e: Any) -> None:
        span = self.span_at(e.x, e.y)
        if span == self.span:
            return
        self.hide()
        self.span = span
        if span is not None:
            self._job = self.text.after(DELAY_MS, self.ask)

    def _on_leave(self, e: Any) -> None:
        """Hide, unless the pointer went onto the tooltip itself (it may show up under it)."""
        try:
            over = self.text.winfo_containing(e.x_root, e.y_root)
        except (tk.TclError, KeyError):
            over = None
        if over is not None and self.tip is not None and str(over).startswith(str(self.tip)):
            return
        self.hide()

    def ask(self) -> None:
        """Resolve the reference under the pointer on a worker, then show the tooltip."""
        self._job = None
        span = self.span
        if span is None:
            return
        place, trusted = self.where()
        query = hover_query(self.services.presenter.thread, str(self.text.get(*span)), place, trusted)
        if query is None:
            return
        self._asked += 1
        asked = self._asked
        try:
            skills = self.services.skills()
        except Exception:  # skills that cannot be listed: the value says the skill is missing
            skills = None

        def done(future: Future[str]) -> None:
            if asked != self._asked or span != self.span or not self.text.winfo_exists():
                return  # the pointer moved on
            try:
                text = future.result()
            except Exception as exc:
                text = f"Cannot resolve {query.written}: {exc}"
            self.show(text)

        self.services.pump.run_in_worker(lambda: resolve_hover(query, RenderEnv(skills=skills)), done,
                                        name="variable-hover")

    def show(self, message: str) -> None:
        span = self.span
        if span is None:
            return
        if self.tip is None:
            tip = tk.Toplevel(self.text)
            tip.withdraw()
            tip.overrideredirect(True)
            try:
                tip.configure(background=tb.Style().colors.border)
            except Exception:
                pass
            self.label = tb.Label(tip, text="", justify="left", wraplength=WRAP_PX, padding=(8, 6))
            self.label.pack(padx=1, pady=1)
            self.tip = tip
        self.label.configure(text=message)
        box = self.text.bbox(span[0]) or (0, 0, 0, 16)
        x = self.text.winfo_rootx() + box[0]
        y = self.text.winfo_rooty() + box[1] + box[3] + 4
        self.tip.geometry(f"+{x}+{y}")
        self.tip.deiconify()
        self.tip.lift()

    def hide(self) -> None:
        if self._job is not None:
            try:
                self.text.after_cancel(self._job)
            except tk.TclError:
                pass
            self._job = None
        self._asked += 1  # an answer still on its way is dropped
        self.span = None
        if self.tip is not None:
            try:
                self.tip.destroy()
            except tk.TclError:
                pass
        self.tip = self.label = None
