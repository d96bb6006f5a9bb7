"""The `{{` completion popup of one editor Text: after `{{` is typed it lists the thread's
variables (name — hint), filtered as the name is typed. It follows the inserted text, not
the key events: typed `{` (Shift+[) opens it whether Shift or `[` is released first; Up/Down choose, Enter, Tab or a
click insert `name}}`, Escape (or typing something that is no name) closes it. The keyboard
focus stays in the Text. Logic in `presenters/variable_assist.py`.

`Completion(text, items)` is a component of `ui/editor/text_assist.TextAssist`; `items()`
returns (name, hint) pairs (`EditorPresenter.completion_items`).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import Any

from ...presenters.variable_assist import (
    completion_edit,
    completion_label,
    completion_prefix,
    filter_completions,
    typed_open_braces,
)
from ..theme import style_listbox

VISIBLE_ROWS = 8
FOCUS_GRACE_MS = 120  # the list mapping may bounce the focus away and back (no window manager)


class Completion:
    """Binds the Text's keys; `popup` is the open list's Toplevel (None when closed)."""

    def __init__(self, text: Any, items: Callable[[], list[tuple[str, str]]],
                 editable: Callable[[], bool] = lambda: True) -> None:
        self.text = text
        self._items = items
        self._editable = editable
        self.popup: tk.Toplevel | None = None
        self.listbox: tk.Listbox | None = None
        self.all: list[tuple[str, str]] = []
        self.shown: list[tuple[str, str]] = []
        self.prefix = ""
        text.bind("<KeyRelease>", self._on_key_release, add=True)
        text.bind("<KeyPress>", self._on_key_press, add=True)
        self._insert_job: str | None = None  # the check after a typed character is inserted
        self._typed_from = "insert"  # where the typing that job checks began
        for key, fn in (("<Down>", lambda: self.move(1)), ("<Up>", lambda: self.move(-1)),
                        ("<Return>", self.accept), ("<KP_Enter>", self.accept), ("<Tab>", self.accept),
                        ("<Escape>", self.close)):
            text.bind(key, lambda e, fn=fn: "break" if self.popup is not None and fn() is not False else None, add=True)
        text.bind("<FocusOut>", self._on_focus_out, add=True)
        text.bind("<Button-1>", lambda e: self.close(), add=True)
        text.bind("<Destroy>", lambda e: self._cancel_jobs() if e.widget is text else None, add=True)
        self._check_job: str | None = None

    @property
    def is_open(self) -> bool:
        return self.popup is not None

    def names(self) -> list[str]:
        """The names the list shows, in order."""
        return [name for name, _hint in self.shown]

    def _before(self) -> str:
        return str(self.text.get("insert linestart", "insert"))

    def _on_focus_out(self, _e: Any) -> None:
        self._cancel_check()
        if self.popup is not None:
            self._check_job = self.text.after(FOCUS_GRACE_MS, self._focus_check)

    def _cancel_jobs(self) -> None:
        self._cancel_check()
        if self._insert_job is not None:
            try:
                self.text.after_cancel(self._insert_job)
            except tk.TclError:
                pass
            self._insert_job = None

    def _cancel_check(self) -> None:
        if self._check_job is not None:
            try:
                self.text.after_cancel(self._check_job)
            except tk.TclError:
                pass
            self._check_job = None

    def _focus_check(self) -> None:
        """After the Text lost the focus: close unless it came back."""
        self._check_job = None
        try:
            if self.text.focus_get() is not self.text:
                self.close()
        except (tk.TclError, KeyError):  # the focus is in a window being destroyed
            self.close()

    def _on_key_release(self, e: Any) -> None:
        if getattr(e, "keysym", "") in ("Up", "Down", "Return", "KP_Enter", "Tab", "Escape"):
            return
        if self.popup is not None:
            self.update()

    def _on_key_press(self, e: Any) -> None:
        """A typed character: once the Text has inserted it, open the list when the text before
        the cursor now ends with `{{` (the release's keysym depends on the order keys go up)."""
        if not getattr(e, "char", "") or self.popup is not None or self._insert_job is not None:
            return
        self._typed_from = str(self.text.index("insert"))
        self._insert_job = self.text.after_idle(self._after_insert)

    def _after_insert(self) -> None:
        self._insert_job = None
        try:
            typed = len(self.text.get(self._typed_from, "insert"))
            if self.popup is None and typed_open_braces(self._before(), typed):
                self.open()
        except tk.TclError:  # the Text is gone
            pass

    def open(self) -> bool:
        """Show the list when the cursor follows an unclosed `{{` (True when it is shown)."""
        if not self._editable() or str(self.text.cget("state")) == "disabled":
            return False
        if completion_prefix(self._before()) is None:
            return False
        self.all = self._items()
        return self.update()

    def update(self) -> bool:
        """Filter by the name typed so far; close when the cursor left the `{{`."""
        prefix = completion_prefix(self._before())
        shown = filter_completions(self.all, prefix) if prefix is not None else []
        if not shown:
            self.close()
            return False
        self.prefix, self.shown = prefix or "", shown
        if self.popup is None:
            self._build()
        lb = self.listbox
        assert lb is not None
        lb.delete(0, "end")
        for name, hint in shown:
            lb.insert("end", completion_label(name, hint))
        lb.configure(height=min(VISIBLE_ROWS, len(shown)))
        lb.selection_set(0)
        lb.activate(0)
        self._place()
        return True

    def _build(self) -> None:
        popup = tk.Toplevel(self.text)
        popup.withdraw()
        popup.overrideredirect(True)
        lb = style_listbox(tk.Listbox(popup, activestyle="none", exportselection=False, width=48, takefocus=0))
        lb.pack(fill="both", expand=True)
        lb.bind("<ButtonPress-1>", self._on_click)
        lb.bind("<Motion>", lambda e: (lb.selection_clear(0, "end"), lb.selection_set(lb.nearest(e.y))))
        self.popup, self.listbox = popup, lb

    def _place(self) -> None:
        popup = self.popup
        assert popup is not None
        bbox = self.text.bbox("insert") or (0, 0, 0, 16)
        x = self.text.winfo_rootx() + bbox[0]
        y = self.text.winfo_rooty() + bbox[1] + bbox[3] + 2
        popup.geometry(f"+{x}+{y}")
        popup.deiconify()
        popup.lift()

    def move(self, delta: int) -> bool:
        lb = self.listbox
        if lb is None or not self.shown:
            return False
        sel = lb.curselection()
        i = max(0, min(len(self.shown) - 1, (sel[0] if sel else 0) + delta))
        lb.selection_clear(0, "end")
        lb.selection_set(i)
        lb.activate(i)
        lb.see(i)
        return True

    def _on_click(self, e: Any) -> str:
        lb = self.listbox
        if lb is not None and self.shown:
            self.accept(lb.nearest(e.y))
        return "break"

    def accept(self, index: int | None = None) -> bool:
        """Insert the chosen name (the selected one unless `index` is given) and close."""
        lb = self.listbox
        if lb is None or not self.shown:
            return False
        if index is None:
            sel = lb.curselection()
            index = sel[0] if sel else 0
        name = self.shown[max(0, min(len(self.shown) - 1, index))][0]
        prefix = completion_prefix(self._before())
        drop, insert = completion_edit(self.prefix if prefix is None else prefix, name, str(self.text.get("insert", "insert lineend")))
        if drop:
            self.text.delete(f"insert-{drop}c", "insert")
        self.text.insert("insert", insert)
        self.close()
        self.text.focus_set()
        return True

    def close(self) -> bool:
        if self.popup is not None:
            try:
                self.popup.destroy()
            except tk.TclError:
                pass
        self.popup = self.listbox = None
        self.shown = []
        return True
