"""The title field in the editor's header: it shows the thread's title (its file name) and
renames the file only when the user means it — Enter, or leaving the field after typing in
it. Escape (or Ctrl+Z before the rename) puts the title back. A rename is one undo step of
the editor (`presenters/undo.RenameStep`): undo calls `rename_to`, which renames the file
back and makes the tab and the tree follow.

`TitleField(master, ui, presenter, rename_thread)` is a component of
`ui/editor/header.EditorHeader` (`header.title`); it gets the header frame, the UI services
(status, errors), the editor presenter and `rename_thread(path, title)` (renames the file;
the tab and the tree follow — `context.EditorContext.rename_thread`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...errors import UserFacingError
from ...presenters.editor import EditorPresenter
from .. import tkvars

if TYPE_CHECKING:
    from ..services import UiServices


class TitleField:
    """The title entry and its rename rules."""

    def __init__(self, master: Any, ui: UiServices, presenter: EditorPresenter,
                 rename_thread: Callable[[str, str], str]) -> None:
        self.ui, self.rename_thread = ui, rename_thread
        self.p = presenter
        self.var = tkvars.StringVar(master, presenter.title)
        # Narrow by default and allowed to shrink: the Run button beside it must stay visible.
        self.entry = tb.Entry(master, textvariable=self.var, font="TkHeadingFont", width=20)
        self._edited = False  # the user typed since the title was last shown
        self._showing = False
        self.var.trace_add("write", self._on_write)
        self.entry.bind("<Return>", lambda e: self.commit())
        self.entry.bind("<KP_Enter>", lambda e: self.commit())
        self.entry.bind("<Escape>", lambda e: self.revert())
        self.entry.bind("<FocusOut>", lambda e: self._left())
        presenter.renamer = self.rename_to

    @property
    def pending(self) -> bool:
        """The user typed a title that is not applied yet."""
        return self._edited

    def show(self, title: str) -> None:
        """Show `title` (the program's change: not a rename the user asked for)."""
        self._showing = True
        try:
            if self.var.get() != title:
                self.var.set(title)
        finally:
            self._showing = False
        self._edited = False

    def _on_write(self, *_: Any) -> None:
        if not self._showing:
            self._edited = True

    def _left(self) -> None:
        if self._edited:
            self.commit()
        else:
            self.show(self.p.title)

    def revert(self) -> str:
        self.show(self.p.title)
        return "break"

    def commit(self) -> None:
        """Rename the file to the typed title (one undo step); an error keeps the old name."""
        name = self.var.get().strip()
        self._edited = False
        before = self.p.title
        if not name or name == before or self.p.read_only:
            self.show(before)
            return
        try:
            self.rename_to(name)
        except UserFacingError as exc:
            self.show(self.p.title)
            self.ui.errors.show(str(exc))
            return
        self.p.renamed(before, self.p.title)

    def rename_to(self, title: str) -> str:
        """Rename the file to `title` (tabs and tree follow); returns the new path."""
        before = self.p.title
        new_rel = self.rename_thread(self.p.rel, title)
        self.show(self.p.title)
        self.ui.status.set(f"Renamed {before} → {self.p.title}")
        return new_rel
