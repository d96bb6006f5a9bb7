"""`TkFrontend`: the desktop app's answers to a plugin's context calls
(llmspace/plugins/hosts/callbacks.py `Frontend`): notifications as toasts (`ui/toasts.py`; an
error stays until closed), links through the system browser, file pickers owned by the
main window, and the host commands `openSettings` and `refreshTree` (the callables it is given).

Context calls arrive on host callback threads; each is handed to the UI thread through the
UI services' pump, and `pick_file` waits there for the user's answer. Installed by
llmspace/ui/main_window.py as `app.plugin_code.frontend`.
"""

from __future__ import annotations

import threading
import webbrowser
from collections.abc import Callable
from tkinter import filedialog
from typing import TYPE_CHECKING, Any

from .theme import style_file_pickers

if TYPE_CHECKING:
    from .services import UiServices

PICK_WAIT = 3600.0  # a file dialog waits for the user, but not forever


class TkFrontend:
    def __init__(self, ui: UiServices, open_settings: Callable[[], Any], refresh_tree: Callable[[], Any]) -> None:
        self.ui, self.open_settings, self.refresh_tree = ui, open_settings, refresh_tree

    def notify(self, plugin: str, message: str, level: str) -> None:
        def show() -> None:
            self.ui.status.set(f"{plugin}: {message}")
            self.ui.toasts.show(message, level, title=plugin)

        self.ui.pump.post(show)

    def open_link(self, plugin: str, url: str) -> None:
        webbrowser.open(url)

    def pick_file(self, plugin: str, options: dict[str, Any]) -> str | None:
        done = threading.Event()
        box: dict[str, str | None] = {"path": None}

        def ask() -> None:
            try:
                types = [(str(f.get("name", "Files")), " ".join(f"*.{e}" for e in f.get("extensions", []) or ["*"]))
                         for f in options.get("filters", []) if isinstance(f, dict)]
                style_file_pickers(self.ui.root)
                path = filedialog.askopenfilename(parent=self.ui.root, title=str(options.get("title") or
                                                  f"{plugin}: choose a file"), filetypes=types or [("All files", "*")])
                box["path"] = path or None
            finally:
                done.set()

        self.ui.pump.post(ask)
        done.wait(PICK_WAIT)
        return box["path"]

    def host_command(self, plugin: str, command: str, args: Any) -> None:
        if command == "openSettings":
            self.ui.pump.post(self.open_settings)
        elif command == "refreshTree":
            self.ui.pump.post(self.refresh_tree)
