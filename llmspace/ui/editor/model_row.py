"""The Model row of the editor's settings column: a button that shows the model a run will
call (and, when the thread's saved model cannot run, which one runs instead and why —
`presenters.catalog.run_model_label`) and opens the model menu; the ⚙ button for the
parameters; and the parameters on a line of their own below. Both texts wrap to the width
they get, so nothing is clipped however narrow the column is.

`ModelRow(master, view, app, presenter)` is a component of `ui/editor/view.EditorView`
(`view.model_row`); `view.pick_model` and `view.edit_params` are its commands.
"""

from __future__ import annotations

import tkinter.font as tkfont
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...presenters import catalog
from ...presenters.editor import EditorPresenter
from ..wrapped_label import WrappedLabel, wrap_to_width

if TYPE_CHECKING:
    from ...app import App

BUTTON_PADDING = 28  # px the button's border and padding take from its text width


class ModelRow:
    """Model button, parameters button and the parameters line."""

    def __init__(self, master: Any, view: Any, app: App, presenter: EditorPresenter) -> None:
        self.app = app
        self.p = presenter
        row = tb.Frame(master)
        row.pack(fill="x", pady=2)
        # label | button | ⚙, gridded by the view's `LabelStacker` (`cells`)
        self.label = tb.Label(row, text="Model", width=9)
        self.params_btn = tb.Button(row, text="⚙", width=3, bootstyle="secondary-link", command=view.edit_params)
        self.button = tb.Button(row, text="", bootstyle="secondary-outline", command=view.pick_model)
        self.cells = (self.label, self.button, self.params_btn)
        self.button.bind("<Configure>", lambda e: self._rewrap(), add=True)
        self.params_row = tb.Frame(master)
        self.indent = tb.Label(self.params_row, text="", width=9)
        self.indent.pack(side="left")
        self.params = WrappedLabel(self.params_row, bootstyle="secondary")
        self.params.pack(side="left", fill="x", expand=True)
        self._row = row
        self._text = ""

    def refresh(self) -> None:
        self._text = catalog.run_model_label(self.app, self.p.thread.model)
        self._rewrap()
        params = catalog.params_label(self.p.params())
        self.params.set_text(params)
        if params:
            self.params_row.pack(fill="x", after=self._row)
        else:
            self.params_row.pack_forget()

    def _rewrap(self) -> None:
        width = self.button.winfo_width() - BUTTON_PADDING
        if width < 40:  # not laid out yet: the <Configure> that follows wraps it
            text = self._text
        else:
            text = wrap_to_width(self._text, tkfont.nametofont("TkDefaultFont", root=self.button), width)
        if self.button.cget("text") != text:
            self.button.configure(text=text)
