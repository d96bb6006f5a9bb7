"""Rows of the editor's settings column (label, value, button) that put the label above the
value when the column is narrow.

    LabelStacker(column, [(model_label, model_button, params_button), …], [params_indent])

Side by side ("Tools  read, write  Edit") needs about 320 px; in a narrower column (the
minimum window, or a small one with History open) the label and the button share the first
line and the value gets the whole width on the line below, so the model button and the tool
and variable lists keep the width instead of a sliver (and a long name is not cut). The
indents that line values up with the labels are hidden meanwhile. The rows are gridded here;
their widgets must be children of one frame per row. A component of `ui/editor/view.EditorView`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NARROW_PX = 320


class LabelStacker:
    def __init__(self, column: Any, rows: Sequence[tuple[Any, Any, Any]], indents: Sequence[Any] = ()) -> None:
        self.rows, self.indents = list(rows), list(indents)
        self.narrow = False
        for label, value, button in self.rows:
            label.master.columnconfigure(1, weight=1)
            self._lay(label, value, button)
        column.bind("<Configure>", lambda e: self.fit(e.width) if e.widget is column else None, add=True)

    def _lay(self, label: Any, value: Any, button: Any) -> None:
        if self.narrow:
            label.grid(row=0, column=0, sticky="w", pady=0)
            button.grid(row=0, column=2, sticky="e")
            value.grid(row=1, column=0, columnspan=3, sticky="ew")
        else:
            label.grid(row=0, column=0, sticky="nw", pady=(4, 0))
            value.grid(row=0, column=1, columnspan=1, sticky="ew")
            button.grid(row=0, column=2, sticky="ne")

    def fit(self, width: int) -> None:
        narrow = 1 < width < NARROW_PX
        if narrow == self.narrow:
            return
        self.narrow = narrow
        for row in self.rows:
            self._lay(*row)
        for indent in self.indents:
            indent.configure(width=0 if narrow else 9)
