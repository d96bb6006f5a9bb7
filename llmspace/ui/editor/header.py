"""The editor's header row: the title (`title_field.TitleField`, renames the file), undo and
redo, the run status ("Running…", "Stopped"), the ⚙ menu of the window's run switches,
Share (File › Share… of this thread), History and Run/Stop. A grid, so that on a narrow window the title shrinks and Run, History
and ⚙ stay whole.

`EditorHeader(master, ui, presenter, switches, rename_thread, commands)` is a component of
`ui/editor/view.EditorView` (`view.header`); `commands` are the editor's undo, redo,
toggle_history, run_or_stop and share. The view tells it what to show (`show_controls`,
`show_history`, `show_status`, `show_title`).
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from .. import theme as themes
from ..check_marks import add_check
from .title_field import TitleField

if TYPE_CHECKING:
    from ...presenters.editor import EditorPresenter
    from ..services import RunSwitches, UiServices

STATUS_CHARS = 11  # the run status beside the title: Running…, Stopping…, Retrying…, Stopped


@dataclass(frozen=True)
class HeaderCommands:
    undo: Callable[[], object]
    redo: Callable[[], object]
    toggle_history: Callable[[], object]
    run_or_stop: Callable[[], object]
    share: Callable[[], object] | None = None  # Share… (a secret gist); no button when None


class EditorHeader(tb.Frame):
    """Title, undo/redo, run status, ⚙, History and Run."""

    def __init__(self, master: Any, ui: UiServices, presenter: EditorPresenter, switches: RunSwitches,
                 rename_thread: Callable[[str, str], str], commands: HeaderCommands) -> None:
        super().__init__(master, padding=(8, 6))
        self.title = TitleField(self, ui, presenter, rename_thread)
        self.title_var, self.title_entry = self.title.var, self.title.entry
        self.undo_btn = tb.Button(self, text="↶", width=3, bootstyle="secondary-outline", command=commands.undo)
        self.redo_btn = tb.Button(self, text="↷", width=3, bootstyle="secondary-outline", command=commands.redo)
        # as wide as its longest text ("Stopping…"), so the title keeps its width while a run goes
        self.status = tb.Label(self, text="", bootstyle="secondary", width=STATUS_CHARS, anchor="w")
        settings = tb.Menubutton(self, text="⚙", bootstyle="secondary-outline")
        menu = tk.Menu(settings, tearoff=False)
        add_check(menu, "Enable ReAct loop", switches.react, switches.changed)  # a box that shows on and off
        add_check(menu, "Auto run tools", switches.auto_run, switches.changed)
        settings.configure(menu=themes.style_menu(self, menu))
        self.settings_menu = menu
        self.history_btn = tb.Button(self, text="History", bootstyle="secondary-outline", command=commands.toggle_history)
        self.run_btn = tb.Button(self, text="▶ Run", bootstyle="success", width=9, command=commands.run_or_stop)
        self.share_btn = tb.Button(self, text="Share", bootstyle="secondary-outline", command=commands.share) \
            if commands.share is not None else None
        cells: tuple[tuple[Any, int | tuple[int, int]], ...] = (
            (self.title_entry, 0), (self.undo_btn, (8, 2)), (self.redo_btn, 0), (self.status, 8),
            (settings, 4), *(((self.share_btn, 4),) if self.share_btn is not None else ()), (self.history_btn, 4),
            (self.run_btn, 0))
        for col, (w, padx) in enumerate(cells):
            w.grid(row=0, column=col, padx=padx, sticky="ew" if col == 0 else "")
        self.columnconfigure(0, weight=1)
        self.columnconfigure(3, weight=1)
        self.source_row: Any = None

    def show_title(self, title: str) -> None:
        self.title.show(title)

    def show_source_row(self, row: Any) -> None:
        """A row under the title saying where the thread came from (a trace workbench's source,
        `ui/traces_panel.TraceSourceRow`, a child of this header)."""
        self.source_row = row
        row.grid(row=1, column=0, columnspan=8, sticky="w", pady=(4, 0))

    def show_status(self, text: str) -> None:
        self.status.configure(text=text)

    def show_controls(self, running: bool, read_only: bool, can_undo: bool, can_redo: bool) -> None:
        self.run_btn.configure(text="■ Stop" if running else "▶ Run", bootstyle="danger" if running else "success")
        self.title_entry.configure(state="disabled" if read_only else "normal")
        self.undo_btn.configure(state="normal" if can_undo else "disabled")
        self.redo_btn.configure(state="normal" if can_redo else "disabled")

    def show_history(self, shown: bool) -> None:
        """History filled while the panel is open, an outline when it is closed."""
        self.history_btn.configure(bootstyle="secondary" if shown else "secondary-outline")
