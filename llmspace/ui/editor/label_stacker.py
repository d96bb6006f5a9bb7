"""Row labels that move above their values when the editor's settings column is narrow.

    LabelStacker(column, [model_label, tools_label, vars_label], [params_indent])

Side by side ("Tools  read, write  Edit") needs about 250 px; in a narrower column (a
small window with History open) each label goes on a line of its own above its value, so
the model button and the tool and variable lists keep the whole width instead of a sliver.
The indents that line values up with the labels are hidden meanwhile. A component of
`ui/editor/view.EditorView`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

NARROW_PX = 250


class LabelStacker:
    def __init__(self, column: Any, labels: Sequence[Any], indents: Sequence[Any] = ()) -> None:
        self.labels, self.indents = list(labels), list(indents)
        self.narrow = False
        column.bind("<Configure>", lambda e: self.fit(e.width) if e.widget is column else None, add=True)

    def fit(self, width: int) -> None:
        narrow = 1 < width < NARROW_PX
        if narrow == self.narrow:
            return
        self.narrow = narrow
        for label in self.labels:
            if narrow:
                label.pack_configure(side="top", anchor="w", pady=0)
            else:
                label.pack_configure(side="left", anchor="n" if label.cget("text") == "Model" else "center",
                                     pady=4 if label.cget("text") == "Model" else 0)
        for indent in self.indents:
            indent.configure(width=0 if narrow else 9)
