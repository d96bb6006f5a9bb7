"""The main window's status bar: a message on the left, the thread count and workspace on
the right, and between them the focused box's mode (`show_mode`: "Tab inserts a tab",
`ui/keyboard.py`). An error shown there does not linger once it no longer holds: it is cleared by
the next message, when the user switches tabs or undoes (`clear_error`), and after
`error_ms` on its own. Every text shown has the secrets the process knows of removed
(`redact.redact_known`, as `errors.error_text` does for the error boundaries). Built by
`ui/main_window.py`; parts get it as `UiServices.status` (`ui/services.py`).
"""

from __future__ import annotations

from typing import Any

import ttkbootstrap as tb

from ..redact import redact_known

READY = "Ready"
ERROR_MS = 15_000  # how long an error stays when nothing else happens


class StatusBar(tb.Frame):
    """Status message (with errors that fade) and the workspace summary."""

    def __init__(self, master: Any) -> None:
        super().__init__(master, padding=(8, 2))
        self.msg = tb.Label(self, text=READY)
        self.msg.pack(side="left")
        self.right = tb.Label(self, text="", bootstyle="secondary")
        self.right.pack(side="right")
        self.mode = tb.Label(self, text="", bootstyle="info")  # a mode of the focused box (Ctrl+M)
        self.mode.pack(side="right", padx=8)
        self.error_ms = ERROR_MS
        self.showing_error = False
        self._job: str | None = None

    def set(self, text: str) -> None:
        """Show `text` (any earlier error goes)."""
        self._cancel()
        self.showing_error = False
        self.msg.configure(text=redact_known(text))

    def show_mode(self, text: str) -> None:
        """The focused box's mode, such as "Tab inserts a tab" ("" when it has none)."""
        self.mode.configure(text=text)

    def show_counts(self, threads: int, workspace: object) -> None:
        """The right side: how many threads the workspace (named) holds."""
        self.right.configure(text=f"{threads} thread{'s' if threads != 1 else ''} · {workspace}")

    def error(self, text: str) -> None:
        """Show an error; it fades after `error_ms` unless something else is said first."""
        self.set(text)
        self.showing_error = True
        self._job = self.after(self.error_ms, self.clear_error)

    def clear_error(self) -> None:
        """The user moved on: an error still shown is no longer news."""
        self._job = None
        if self.showing_error:
            self.set(READY)

    def _cancel(self) -> None:
        if self._job is not None:
            try:
                self.after_cancel(self._job)
            except Exception:  # the window is closing
                pass
            self._job = None
