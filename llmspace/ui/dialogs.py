"""Modal questions the UI asks (confirm, error, text input, file and folder pickers) behind one small
facade, so tests can hand the main window scripted answers (`MainWindow(app, dialogs=...)`) and
never block; parts get it as `UiServices.dialogs` (`ui/services.py`).
File and folder pickers open in the folder last used, else in `start_dir()` (the main window
passes the workspace), never in the process's working folder.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .theme import style_file_pickers


class Dialogs:
    """The real dialogs (ttkbootstrap message boxes and Tk file pickers)."""

    def __init__(self, parent: Any, start_dir: Callable[[], str | Path] | None = None) -> None:
        self.parent = parent
        self.start_dir = start_dir
        self.last_dir: str | None = None

    def initial_dir(self) -> str | None:
        """Where a picker opens: the folder last used, else the start folder (the workspace)."""
        if self.last_dir and os.path.isdir(self.last_dir):
            return self.last_dir
        try:
            start = str(self.start_dir()) if self.start_dir is not None else None
        except Exception:  # a workspace that cannot be resolved: let Tk choose
            return None
        return start if start and os.path.isdir(start) else None

    def _used(self, path: str | None) -> None:
        if path:
            self.last_dir = os.path.dirname(os.path.abspath(path))

    def confirm(self, message: str, title: str = "Confirm") -> bool:
        from ttkbootstrap.dialogs import Messagebox

        return Messagebox.yesno(message, title, parent=self.parent) in ("Yes", "yes", "OK")

    def confirm_action(self, message: str, title: str, action: str, cancel: str = "Cancel") -> bool:
        """Ask with buttons that name what they do (`action` / `cancel`); Escape or the
        window's ✕ is `cancel`. True when `action` was pressed."""
        return ActionDialog(self.parent, message, title, action, cancel).ask()

    def error(self, message: str, title: str = "LLM Space") -> None:
        from ttkbootstrap.dialogs import Messagebox

        Messagebox.show_error(message, title, parent=self.parent)

    def info(self, message: str, title: str = "LLM Space") -> None:
        from ttkbootstrap.dialogs import Messagebox

        Messagebox.show_info(message, title, parent=self.parent)

    def ask_string(self, prompt: str, title: str = "LLM Space", initial: str = "") -> str | None:
        from ttkbootstrap.dialogs import Querybox

        return Querybox.get_string(prompt, title, initialvalue=initial, parent=self.parent)

    def open_files(self, title: str = "Import threads", types: tuple[tuple[str, str], ...] = (("JSON", "*.json"), ("All files", "*"))) -> list[str]:
        from tkinter import filedialog

        style_file_pickers(self.parent)
        names = filedialog.askopenfilenames(parent=self.parent, title=title, filetypes=types,
                                            initialdir=self.initial_dir())
        picked = list(names or [])
        self._used(picked[0] if picked else None)
        return picked

    def open_file(self, title: str, types: tuple[tuple[str, str], ...]) -> str | None:
        from tkinter import filedialog

        style_file_pickers(self.parent)
        name = filedialog.askopenfilename(parent=self.parent, title=title, filetypes=types,
                                          initialdir=self.initial_dir())
        self._used(name or None)
        return name or None

    def choose_folder(self, title: str = "Choose a folder", initial: str = "") -> str | None:
        from tkinter import filedialog

        style_file_pickers(self.parent)
        name = filedialog.askdirectory(parent=self.parent, title=title, initialdir=initial or self.initial_dir(),
                                       mustexist=True)
        if name:
            self.last_dir = name
        return name or None


class ActionDialog:
    """A modal question whose buttons say what they do ("Stop and close" / "Cancel") instead
    of Yes / No. Return presses the focused button (the action at first); Escape, the
    window's ✕ and the cancel button answer no."""

    def __init__(self, parent: Any, message: str, title: str, action: str, cancel: str = "Cancel") -> None:
        import ttkbootstrap as tb

        self.answer = False
        self.top = top = tb.Toplevel(master=parent, title=title)
        top.resizable(False, False)
        body = tb.Frame(top, padding=16)
        body.pack(fill="both", expand=True)
        tb.Label(body, text=message, justify="left", wraplength=420).pack(anchor="w", pady=(0, 14))
        bar = tb.Frame(body)
        bar.pack(fill="x")
        self.btn_cancel = tb.Button(bar, text=cancel, bootstyle="secondary", command=self.close)
        self.btn_cancel.pack(side="right")
        self.btn_action = tb.Button(bar, text=action, bootstyle="danger", command=self.choose)
        self.btn_action.pack(side="right", padx=(0, 6))
        for btn in (self.btn_action, self.btn_cancel):
            btn.bind("<Return>", lambda e: e.widget.invoke(), add=True)
        top.bind("<Escape>", lambda e: self.close())
        top.protocol("WM_DELETE_WINDOW", self.close)
        if parent is not None and str(parent.winfo_viewable()) == "1":
            top.transient(parent)

    def choose(self) -> None:
        self.answer = True
        self.top.destroy()

    def close(self) -> None:
        self.top.destroy()

    def ask(self) -> bool:
        """Show the dialog and wait (modally) for the answer."""
        top = self.top
        top.update_idletasks()
        top.deiconify()
        try:
            top.wait_visibility()
            top.grab_set()
        except Exception:
            pass
        self.btn_action.focus_force()
        top.wait_window()
        return self.answer
