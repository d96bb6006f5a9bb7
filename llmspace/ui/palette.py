"""Command palette (Ctrl+Shift+P): every command of the app's registry — menu commands with
their shortcuts, and plugin commands by display name or file-stem alias — filtered as you
type (fuzzy: the letters in order). Plugin commands take shell-style arguments typed after
the name (`sync-active-thread production "Release 4.9" --dry-run`, split by
llmspace/plugins/code/palette_args.py); a line that cannot be split (an unclosed quote, a
trailing backslash) shows why under the entry and Enter runs nothing. Enter or
double-click runs the selection.

    open_palette(root, app.registries.commands, run_plugin)   # File › View › Command Palette…

The list is built here from the commands registry (`palette_items`); a plugin command runs
through `run_plugin(command, arguments)` (`ui/plugin_commands.run_plugin_command`, bound by
`ui/main_window.py`).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ttkbootstrap as tb

from ..plugins.code.calls import PluginCommand
from ..plugins.code.palette_args import CommandName, PaletteArgsError, parse_palette_line
from ..registries import PaletteCommand
from ..registry import Registry
from . import tkvars
from .theme import style_listbox

LINE_ERRORS = ("unclosed-single-quote", "unclosed-double-quote", "trailing-backslash")


@dataclass(frozen=True)
class PaletteItem:
    """One palette entry. `run(arguments)`; `key`/`alias` identify a plugin command, which
    `takes_arguments`."""

    label: str
    run: Callable[[tuple[str, ...]], Any]
    shortcut: str = ""
    key: str = ""
    alias: str = ""
    takes_arguments: bool = False

    @property
    def shown(self) -> str:
        return f"{self.label}    ({self.shortcut})" if self.shortcut else self.label


def fuzzy_match(query: str, label: str) -> bool:
    """True when the letters of `query` appear in `label` in order (case-insensitive)."""
    it = iter(label.lower())
    return all(ch in it for ch in query.lower() if not ch.isspace())


def palette_item(command: PaletteCommand, run_plugin: Callable[[PluginCommand, Sequence[str]], Any]) -> PaletteItem:
    """The entry of one registered command: a plugin command takes arguments and runs through
    `run_plugin`; any other runs as it is (with its shortcut shown)."""
    if isinstance(command, PluginCommand):
        plugin_command = command
        return PaletteItem(plugin_command.display_name, lambda args: run_plugin(plugin_command, args),
                           key=plugin_command.canonical_id, alias=plugin_command.alias, takes_arguments=True)
    return PaletteItem(command.display_name, lambda args: command.run(), getattr(command, "shortcut", ""))


def palette_items(commands: Registry[PaletteCommand],
                  run_plugin: Callable[[PluginCommand, Sequence[str]], Any]) -> list[PaletteItem]:
    """Every active command of the registry (built-in menu commands, plugin commands), less
    the palette's own entry."""
    items = [palette_item(r.value, run_plugin) for r in commands.active()]
    return [i for i in items if not i.label.endswith("Command Palette…")]


def open_palette(master: Any, commands: Registry[PaletteCommand],
                 run_plugin: Callable[[PluginCommand, Sequence[str]], Any]) -> CommandPalette:
    return CommandPalette(master, palette_items(commands, run_plugin))


class CommandPalette(tb.Toplevel):
    def __init__(self, master: Any, items: Sequence[PaletteItem]) -> None:
        super().__init__(title="Command Palette", master=master, size=(560, 380))
        self.commands: list[tuple[str, PaletteItem]] = [(i.label, i) for i in items]
        self.query = tkvars.StringVar(self, "")
        self.entry = tb.Entry(self, textvariable=self.query)
        self.entry.pack(fill="x", padx=8, pady=(8, 2))
        self.hint = tb.Label(self, text="", bootstyle="secondary")
        self.hint.pack(fill="x", padx=8)
        self.listbox = style_listbox(tk.Listbox(self, activestyle="none"))
        self.listbox.pack(fill="both", expand=True, padx=8, pady=(2, 8))
        self.shown: list[tuple[str, PaletteItem]] = []
        self.arguments: tuple[str, ...] = ()
        self.line_error = ""
        self.query.trace_add("write", lambda *a: self.filter())
        self.entry.bind("<Return>", lambda e: self.run_selected())
        self.entry.bind("<Down>", lambda e: self._move(1))
        self.entry.bind("<Up>", lambda e: self._move(-1))
        self.entry.bind("<Escape>", lambda e: self.destroy())
        self.listbox.bind("<Double-Button-1>", lambda e: self.run_selected())
        self.filter()
        self.entry.focus_set()

    def _invocation(self, q: str) -> PaletteItem | None:
        """The plugin command the line names (its arguments in `self.arguments`), or None."""
        self.arguments, self.line_error = (), ""
        with_args = [i for _, i in self.commands if i.takes_arguments]
        if not with_args or not q.strip():
            return None
        try:
            inv = parse_palette_line(q, [CommandName(i.key, i.label, i.alias) for i in with_args])
        except PaletteArgsError as exc:
            if exc.reason in LINE_ERRORS:
                self.line_error = exc.message
            return None
        self.arguments = inv.arguments
        return next(i for i in with_args if i.key == inv.command.key)

    def filter(self) -> None:
        q = self.query.get()
        matched = self._invocation(q)
        if matched is not None:
            rest = [(label, i) for label, i in self.commands if i is not matched and fuzzy_match(q, label)]
            self.shown = [(matched.label, matched), *rest]
        else:
            self.shown = [(label, i) for label, i in self.commands
                          if fuzzy_match(q, label) or (i.alias and fuzzy_match(q, i.alias))]
        self.listbox.delete(0, "end")
        for _, item in self.shown:
            self.listbox.insert("end", item.shown)
        if self.shown:
            self.listbox.selection_set(0)
        if self.line_error:
            self.hint.configure(text=self.line_error, bootstyle="danger")
        elif matched is not None and self.arguments:
            self.hint.configure(text="Arguments: " + "  ".join(repr(a) for a in self.arguments), bootstyle="secondary")
        else:
            self.hint.configure(text="", bootstyle="secondary")

    def _move(self, delta: int) -> str:
        sel = self.listbox.curselection()
        idx = (sel[0] if sel else -1) + delta
        if 0 <= idx < len(self.shown):
            self.listbox.selection_clear(0, "end")
            self.listbox.selection_set(idx)
            self.listbox.see(idx)
        return "break"

    def run_selected(self) -> None:
        if self.line_error:
            self.bell()
            return
        sel = self.listbox.curselection()
        if not sel:
            return
        _, item = self.shown[sel[0]]
        arguments = self.arguments if sel[0] == 0 and item.takes_arguments else ()
        self.destroy()
        item.run(arguments)
