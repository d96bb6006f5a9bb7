"""Command palette (Ctrl+Shift+P): every menu command, filtered as you type (fuzzy:
the letters in order), Enter or double-click runs the selection. Caller: `ui/main_window.py`.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from typing import Any

import ttkbootstrap as tb

from . import tkvars
from .theme import style_listbox


def fuzzy_match(query: str, label: str) -> bool:
    """True when the letters of `query` appear in `label` in order (case-insensitive)."""
    it = iter(label.lower())
    return all(ch in it for ch in query.lower() if not ch.isspace())


class CommandPalette(tb.Toplevel):
    def __init__(self, window: Any, commands: list[tuple[str, Callable[[], Any]]]) -> None:
        super().__init__(title="Command Palette", master=window.root, size=(520, 360))
        self.commands = commands
        self.query = tkvars.StringVar(self, "")
        self.entry = tb.Entry(self, textvariable=self.query)
        self.entry.pack(fill="x", padx=8, pady=8)
        self.listbox = style_listbox(tk.Listbox(self, activestyle="none"))
        self.listbox.pack(fill="both", expand=True, padx=8, pady=(0, 8))
        self.shown: list[tuple[str, Callable[[], Any]]] = []
        self.query.trace_add("write", lambda *a: self.filter())
        self.entry.bind("<Return>", lambda e: self.run_selected())
        self.entry.bind("<Down>", lambda e: self._move(1))
        self.entry.bind("<Up>", lambda e: self._move(-1))
        self.entry.bind("<Escape>", lambda e: self.destroy())
        self.listbox.bind("<Double-Button-1>", lambda e: self.run_selected())
        self.filter()
        self.entry.focus_set()

    def filter(self) -> None:
        q = self.query.get()
        self.shown = [(label, fn) for label, fn in self.commands if fuzzy_match(q, label)]
        self.listbox.delete(0, "end")
        for label, _ in self.shown:
            self.listbox.insert("end", label)
        if self.shown:
            self.listbox.selection_set(0)

    def _move(self, delta: int) -> str:
        sel = self.listbox.curselection()
        idx = (sel[0] if sel else -1) + delta
        if 0 <= idx < len(self.shown):
            self.listbox.selection_clear(0, "end")
            self.listbox.selection_set(idx)
            self.listbox.see(idx)
        return "break"

    def run_selected(self) -> None:
        sel = self.listbox.curselection()
        if not sel:
            return
        _, fn = self.shown[sel[0]]
        self.destroy()
        fn()
