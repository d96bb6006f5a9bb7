"""Variable help for one editor Text (the system prompt, a message's text, a tool result):
`{{var}}` and `{% tag %}` highlighted in the theme's readable colours (`theme.palette`),
the `{{` completion list (`completion.py`) and the value tooltip (`var_hover.py`).

    assist = TextAssist(text, view, where=lambda: ("systemPrompt", True))
    assist.highlight()  # after the text changed
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...presenters.variable_assist import highlight_spans
from .completion import Completion
from .var_hover import VariableHover

TAGS = ("var", "tag")


class TextAssist:
    """Components: `completion` (None for a read-only text) and `hover`."""

    def __init__(self, text: Any, view: Any, where: Callable[[], tuple[str | None, bool]], *,
                 complete: bool = True) -> None:
        self.text = text
        self.colour(view.text_colours())
        self.completion = Completion(text, view.p.completion_items, lambda: not view.p.read_only) if complete else None
        self.hover = VariableHover(text, view, where)
        self.highlight()

    def colour(self, colours: dict[str, str]) -> None:
        for tag in TAGS:
            self.text.tag_configure(tag, foreground=colours[tag])

    def highlight(self) -> None:
        """Tag every `{{ … }}` ("var") and `{% … %}` ("tag") of the text."""
        t = self.text
        for tag in TAGS:
            t.tag_remove(tag, "1.0", "end")
        for tag, start, end in highlight_spans(str(t.get("1.0", "end-1c"))):
            t.tag_add(tag, f"1.0+{start}c", f"1.0+{end}c")
