"""Text that wraps between words, never inside one: `wrap_to_width` puts the line breaks,
and `WrappedLabel` is a label that wraps its text again whenever its width changes.

Tk's own `wraplength` cuts a word that is wider than the line anywhere ("availab|le_skills");
the editor's Tools and Variables rows (`ui/editor/view.py`) and the model button
(`ui/editor/model_row.py`) show lists of names, which must stay whole; plugin diagnostics
(`ui/plugins_page.py`) wrap beside their buttons.
"""

from __future__ import annotations

import tkinter.font as tkfont
from typing import Any

import ttkbootstrap as tb


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


FIRST_WIDTH = 300  # px


class WrappedLabel(tb.Label):
    """A left-justified label whose text (`set_text`) is wrapped between words to the width
    the label gets; `full_text` is the text without the breaks."""

    def __init__(self, master: Any, text: str = "", first_width: int = FIRST_WIDTH, **kw: Any) -> None:
        super().__init__(master, text=text, justify="left", **kw)
        self.full_text = text
        self.first_width = first_width  # wrapped to this until laid out: it never asks for a line's full length
        self.bind("<Configure>", lambda e: self._rewrap(), add=True)
        self._rewrap()

    def set_text(self, text: str) -> None:
        self.full_text = text
        self._rewrap()

    def _rewrap(self) -> None:
        width = self.winfo_width() - 4
        if width < 20:  # not laid out yet (a tab not shown): the <Configure> that follows wraps it again
            width = self.first_width
        font = tkfont.nametofont(str(self.cget("font")) or "TkDefaultFont", root=self)
        text = "\n".join(wrap_to_width(line, font, width) for line in self.full_text.split("\n"))
        if str(self.cget("text")) != text:
            self.configure(text=text)
