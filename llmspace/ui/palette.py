"""Command palette (Ctrl+Shift+P): every command of the app's registry — menu commands with
their shortcuts, and plugin commands by display name or file-stem alias — filtered as you
type (fuzzy: the letters in order) on the display name or the alias, which the list shows
beside the name. Plugin commands take shell-style arguments typed after
the name (`sync-active-thread production "Release 4.9" --dry-run`, split by
llmspace/plugins/code/palette_args.py); a line that cannot be split (an unclosed quote, a
trailing backslash) shows why under the entry and Enter runs nothing. A line whose start
only fuzzily names a plugin command (`stamp Draft` for "Stamp thread title") lists that
command and runs it with the rest as arguments. An empty entry shows a placeholder; a query
that matches nothing shows "No commands found". Enter or double-click runs the selection.

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
from ..plugins.code.palette_args import CommandName, PaletteArgsError, parse_palette_line, split_arguments
from ..registries import PaletteCommand
from ..registry import Registry
from . import tkvars
from .theme import style_listbox

LINE_ERRORS = ("unclosed-single-quote", "unclosed-double-quote", "trailing-backslash")
PLACEHOLDER = "Type a command name or alias, then its arguments"
NO_MATCH = "No commands found"


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
    plugin: str = ""  # a plugin command's plugin, shown before its name ("Atlas: Hello")

    @property
    def title(self) -> str:
        """The name as listed: a plugin command's prefixed with its plugin (unless the name
        already starts with it: "Atlas hello")."""
        if not self.plugin or self.label.casefold().startswith(self.plugin.casefold()):
            return self.label
        return f"{self.plugin}: {self.label}"

    @property
    def shown(self) -> str:
        if self.shortcut:
            return f"{self.title}    ({self.shortcut})"
        return f"{self.title}    — {self.alias}" if self.alias and self.alias != self.label else self.title

    def named_by(self, query: str) -> bool:
        """The query fuzzily matches the display name (with its plugin) or the alias."""
        return (fuzzy_match(query, self.title) or fuzzy_match(query, self.label)
                or bool(self.alias and fuzzy_match(query, self.alias)))


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
                           key=plugin_command.canonical_id, alias=plugin_command.alias, takes_arguments=True,
                           plugin=plugin_command.plugin_title)
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
        self.placeholder = tb.Label(self.entry, text=PLACEHOLDER, bootstyle="secondary", cursor="xterm")
        self.placeholder.bind("<Button-1>", lambda e: self.entry.focus_set())
        self.hint = tb.Label(self, text="", bootstyle="secondary")
        self.hint.pack(fill="x", padx=8)
        self.listbox = style_listbox(tk.Listbox(self, activestyle="none"))
        self.listbox.pack(fill="both", expand=True, padx=8, pady=(2, 8))
        self.empty = tb.Label(self.listbox, text=NO_MATCH, bootstyle="secondary")
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

    def _by_start(self, q: str) -> list[tuple[str, PaletteItem]]:
        """Plugin commands the line's first words fuzzily name (the most words that name one),
        the rest of the line being their arguments (in `self.arguments`)."""
        words = q.split()
        for n in range(len(words) - 1, 0, -1):
            head = " ".join(words[:n])
            found = [(label, i) for label, i in self.commands if i.takes_arguments and i.named_by(head)]
            if found:
                rest = q.lstrip()[len(words[0]):]
                for word in words[1:n]:
                    rest = rest.lstrip()[len(word):]
                try:
                    self.arguments = split_arguments(rest)
                except PaletteArgsError as exc:
                    self.line_error = exc.message
                return found
        return []

    def filter(self) -> None:
        q = self.query.get()
        matched = self._invocation(q)
        if matched is not None:
            rest = [(label, i) for label, i in self.commands if i is not matched and i.named_by(q)]
            self.shown = [(matched.label, matched), *rest]
        else:
            self.shown = [(label, i) for label, i in self.commands if i.named_by(q)]
            if not self.shown and not self.line_error:
                self.shown = self._by_start(q)
                matched = self.shown[0][1] if self.shown else None
        if q:
            self.placeholder.place_forget()
        else:
            self.placeholder.place(x=6, rely=0.5, anchor="w")
        if self.shown:
            self.empty.place_forget()
        else:
            self.empty.place(relx=0.5, y=24, anchor="n")
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

    def _argument_items(self) -> list[PaletteItem]:
        """The shown commands the typed arguments apply to (all of them, when the line's start named them)."""
        return [i for _, i in self.shown if i.takes_arguments] if self.arguments else []

    def run_selected(self) -> None:
        if self.line_error:
            self.bell()
            return
        sel = self.listbox.curselection()
        if not sel:
            return
        _, item = self.shown[sel[0]]
        arguments = self.arguments if item.takes_arguments and (sel[0] == 0 or item in self._argument_items()) else ()
        self.destroy()
        item.run(arguments)
