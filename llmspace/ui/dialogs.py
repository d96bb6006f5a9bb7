"""Modal questions the UI asks (confirm, error, text input, file and folder pickers) behind one small
facade, so tests can replace `window.dialogs` with scripted answers and never block.

Callers: every view in `llmspace.ui`.
"""

from __future__ import annotations

from typing import Any


class Dialogs:
    """The real dialogs (ttkbootstrap message boxes and Tk file pickers)."""

    def __init__(self, parent: Any) -> None:
        self.parent = parent

    def confirm(self, message: str, title: str = "Confirm") -> bool:
        from ttkbootstrap.dialogs import Messagebox

        return Messagebox.yesno(message, title, parent=self.parent) in ("Yes", "yes", "OK")

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

        names = filedialog.askopenfilenames(parent=self.parent, title=title, filetypes=types)
        return list(names or [])

    def open_file(self, title: str, types: tuple[tuple[str, str], ...]) -> str | None:
        from tkinter import filedialog

        name = filedialog.askopenfilename(parent=self.parent, title=title, filetypes=types)
        return name or None

    def choose_folder(self, title: str = "Choose a folder", initial: str = "") -> str | None:
        from tkinter import filedialog

        name = filedialog.askdirectory(parent=self.parent, title=title, initialdir=initial or None, mustexist=True)
        return name or None
