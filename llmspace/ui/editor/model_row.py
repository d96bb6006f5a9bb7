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

if TYPE_CHECKING:
    from ...app import App

BUTTON_PADDING = 28  # px the button's border and padding take from its text width


def _pieces(word: str, font: Any, width: int) -> list[str]:
    """A word too wide for `width`, cut after "/" or "-" where possible, else anywhere."""
    out: list[str] = []
    rest = word
    while rest and font.measure(rest) > width:
        fit = max(1, next((n for n in range(len(rest) - 1, 0, -1) if font.measure(rest[:n]) <= width), 1))
        cut = max((rest.rfind(c, 0, fit) + 1 for c in "/-"), default=0)
        n = cut if cut > 0 else fit
        out.append(rest[:n])
        rest = rest[n:]
    return out + ([rest] if rest else [])


def wrap_to_width(text: str, font: Any, width: int) -> str:
    """`text` with line breaks between words so that no line is wider than `width` pixels
    (a word wider than that is cut after a "/" or "-", else where it must)."""
    lines: list[str] = []
    line = ""
    words = [piece for word in text.split() for piece in _pieces(word, font, width)]
    for word in words:
        candidate = f"{line} {word}" if line else word
        if line and font.measure(candidate) > width:
            lines.append(line)
            line = word
        else:
            line = candidate
    if line:
        lines.append(line)
    return "\n".join(lines)


class ModelRow:
    """Model button, parameters button and the parameters line."""

    def __init__(self, master: Any, view: Any, app: App, presenter: EditorPresenter) -> None:
        self.app = app
        self.p = presenter
        row = tb.Frame(master)
        row.pack(fill="x", pady=2)
        self.label = tb.Label(row, text="Model", width=9)
        self.label.pack(side="left", anchor="n", pady=4)
        self.params_btn = tb.Button(row, text="⚙", width=3, bootstyle="secondary-link", command=view.edit_params)
        self.params_btn.pack(side="right", anchor="n")  # packed first: a long model label cannot push it out
        self.button = tb.Button(row, text="", bootstyle="secondary-outline", command=view.pick_model)
        self.button.pack(side="left", fill="x", expand=True)
        self.button.bind("<Configure>", lambda e: self._rewrap(), add=True)
        self.params_row = tb.Frame(master)
        self.indent = tb.Label(self.params_row, text="", width=9)
        self.indent.pack(side="left")
        self.params = tb.Label(self.params_row, text="", bootstyle="secondary", justify="left")
        self.params.pack(side="left", fill="x", expand=True)
        self.params.bind("<Configure>", lambda e: self.params.configure(wraplength=max(80, e.width - 4)), add=True)
        self._row = row
        self._text = ""

    def refresh(self) -> None:
        self._text = catalog.run_model_label(self.app, self.p.thread.model)
        self._rewrap()
        params = catalog.params_label(self.p.params())
        self.params.configure(text=params)
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
