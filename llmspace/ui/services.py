"""The narrow services a UI part gets when it is built, instead of the main window.

    UiServices(root, pump, dialogs, status, errors, toasts)   # what nearly every part uses
    ErrorReporter(status, dialogs, log_file)    # the GUI's error boundary: .show(text), .guard(fn)
    RunSwitches(root, react, auto_run, on_change)  # Run › Enable ReAct loop / Auto run tools

`ui/main_window.py` is the composition root: it makes these once and hands each part only
what it uses (the App's typed services, such as `app.registries.commands` or `app.skills`,
are passed the same way, or the App seen through a small protocol of `ui/app_services.py`).
No UI part outside the root takes the window, an untyped App or view, or the App whole
(tests/ui/test_composition_root.py checks it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError, error_text
from . import tkvars

if TYPE_CHECKING:
    import ttkbootstrap as tb

    from .dialogs import Dialogs
    from .pump import Pump
    from .status_bar import StatusBar
    from .toasts import Toasts


class ErrorReporter:
    """Errors shown to the user, always through `errors.error_text` (as the CLI's boundary),
    so known secrets never show: the first line in the status bar, the whole text in a dialog."""

    def __init__(self, status: StatusBar, dialogs: Dialogs, log_file: Callable[[], Path | None]) -> None:
        self.status = status
        self.dialogs = dialogs
        self.log_file = log_file  # where "see the log" points (None: no log file)

    def show(self, message: str) -> None:
        """An error in the status bar (its first line) and a dialog."""
        message = error_text(message)
        self.status.error(message.splitlines()[0] if message else "Error")
        self.dialogs.error(message)

    def guard(self, fn: Callable[[], Any]) -> Any:
        """`fn()`; a user-facing or file-system error is shown instead (and None returned)."""
        try:
            return fn()
        except UserFacingError as exc:
            self.show(str(exc))
        except OSError as exc:
            self.show(f"The file system refused: {exc.strerror or exc}.")
        return None

    def callback_error(self, exc_type: Any, exc: BaseException, tb_: Any) -> None:
        """The one error boundary for Tk callbacks (`report_callback_exception`): user-facing
        errors as they are, anything else logged with a pointer to the log (never a raw
        traceback on screen), in the status bar only."""
        text = error_text(exc, None if isinstance(exc, UserFacingError) else self.log_file())
        self.status.error(text.splitlines()[0] if text else "Error")


@dataclass(frozen=True)
class UiServices:
    """The window-wide services of the UI thread."""

    root: tb.Window  # the parent of dialogs and toplevels
    pump: Pump  # the one thread boundary (ui/pump.py)
    dialogs: Dialogs  # modal questions and pickers (tests script them)
    status: StatusBar  # the status bar: .set(text), .error(text), .clear_error()
    errors: ErrorReporter
    toasts: Toasts  # notification cards


class RunSwitches:
    """The window-wide run switches (Run menu and every editor's ⚙ menu): ReAct implies
    auto-running tools; `on_change` is told of every switch (the window saves them)."""

    def __init__(self, root: Any, react: bool, auto_run: bool, on_change: Callable[[], None]) -> None:
        self.react = tkvars.BooleanVar(root, react)
        self.auto_run = tkvars.BooleanVar(root, auto_run or react)
        self._on_change = on_change

    def changed(self) -> None:
        if self.react.get():
            self.auto_run.set(True)
        self._on_change()
