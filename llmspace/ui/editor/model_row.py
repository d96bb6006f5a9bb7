"""The Model row of the editor's settings column: a button that shows the model a run will
call (and, when the thread's saved model cannot run, which one runs instead and why —
`presenters.catalog.run_model_label`) and opens the model menu; the ⚙ button for the
parameters; and the parameters on a line of their own below. Both texts wrap to the width
they get, so nothing is clipped however narrow the column is.

`ModelRow(master, presenter, model_label, pick_model, edit_params)` is a component of
`ui/editor/settings_column.SettingsColumn` (`settings.model_row`): `model_label` is the
catalog's (`context.Catalog`), the two commands open the model menu and the parameters.
"""

from __future__ import annotations

import tkinter.font as tkfont
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ttkbootstrap as tb

from ...presenters import catalog
from ...presenters.editor import EditorPresenter
from ..wrapped_label import WrappedLabel, wrap_to_width

if TYPE_CHECKING:
    from ...core.model import ModelConfig

BUTTON_PADDING = 28  # px the button's border and padding take from its text width


class ModelRow:
    """Model button, parameters button and the parameters line."""

    def __init__(self, master: Any, presenter: EditorPresenter, model_label: Callable[[ModelConfig | None], str],
                 pick_model: Callable[[], object], edit_params: Callable[[], object]) -> None:
        self.model_label = model_label
        self.p = presenter
        row = tb.Frame(master)
        row.pack(fill="x", pady=2)
        # label | button | ⚙, gridded by the view's `LabelStacker` (`cells`)
        self.label = tb.Label(row, text="Model", width=9)
        # the model name in the text colour (a secondary-outline button's grey read as disabled),
        # and made before ⚙ so that Tab reaches it first
        self.button = tb.Button(row, text="", bootstyle="outline", command=pick_model)
        self.params_btn = tb.Button(row, text="⚙", width=3, bootstyle="secondary-link", command=edit_params)
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
        self._text = self.model_label(self.p.thread.model)
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
