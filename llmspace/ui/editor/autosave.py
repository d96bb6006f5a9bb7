"""The thread file behind an editor: autosave 500 ms after the last edit (`schedule`), save
now (`flush`, on tab close and quit), and reload when another program changed the file while
there are no unsaved edits (`check_external_change`, from the tabs' polling).

`ThreadFile(widget, ui, workspace, presenter)` is a component of `ui/editor/view.EditorView`
(`view.file`); `widget` runs its timers.
"""

from __future__ import annotations

import os
import tkinter as tk
from typing import TYPE_CHECKING, Any

from ...errors import UserFacingError

if TYPE_CHECKING:
    from ...core.workspace import Workspace
    from ...presenters.editor import EditorPresenter
    from ..services import UiServices

AUTOSAVE_MS = 500


class ThreadFile:
    """Saving and reloading one editor's thread file."""

    def __init__(self, widget: Any, ui: UiServices, workspace: Workspace, presenter: EditorPresenter) -> None:
        self.widget, self.ui, self.workspace, self.p = widget, ui, workspace, presenter
        self._job: str | None = None
        self._mtime = self._disk_mtime()

    def schedule(self) -> None:
        """Save once the edits pause for `AUTOSAVE_MS`."""
        if self._job is not None:
            self.widget.after_cancel(self._job)
        self._job = self.widget.after(AUTOSAVE_MS, self._autosave)

    def _autosave(self) -> None:
        self._job = None
        try:
            self.flush()
        except UserFacingError:
            pass  # flush() showed it in the status bar; the edits stay in the editor

    def flush(self) -> bool:
        """Save now if there are unsaved edits (raises UserFacingError when it cannot)."""
        if self._job is not None:
            try:
                self.widget.after_cancel(self._job)
            except tk.TclError:
                pass
            self._job = None
        if self.p.read_only:
            return False
        try:
            return self.p.save()
        except UserFacingError as exc:
            self.ui.status.set(str(exc))
            raise

    def saved(self) -> None:
        """The presenter wrote the file: what is on disk now is ours."""
        self._mtime = self._disk_mtime()

    def moved(self, new_rel: str) -> None:
        self.p.moved(new_rel)
        self._mtime = self._disk_mtime()

    def _disk_mtime(self) -> int | None:
        try:
            return os.stat(self.workspace.resolve(self.p.rel)).st_mtime_ns
        except (OSError, UserFacingError):
            return None

    def check_external_change(self) -> None:
        """Reload when another program changed the file and we have no unsaved edits."""
        if self.p.read_only or self.p.dirty:
            return
        now = self._disk_mtime()
        if now is not None and self._mtime is not None and now != self._mtime:
            self._mtime = now
            try:
                self.p.reload_from_disk()
                self.ui.status.set(f"Reloaded {self.p.rel} (changed on disk)")
            except UserFacingError as exc:
                self.ui.status.set(str(exc))
