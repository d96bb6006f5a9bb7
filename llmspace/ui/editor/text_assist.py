"""Variable help for one editor Text (the system prompt, a message's text, a tool result):
`{{var}}` and `{% tag %}` highlighted in the theme's readable colours (`theme.palette`),
the `{{` completion list (`completion.py`) and the value tooltip (`var_hover.py`).

    assist = TextAssist(text, services, where=lambda: ("systemPrompt", True))  # services: context.TextServices
    assist.highlight()  # after the text changed
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...presenters.variable_assist import highlight_spans
from .completion import Completion
from .var_hover import VariableHover

if TYPE_CHECKING:
    from .context import TextServices

TAGS = ("var", "tag")


class TextAssist:
    """Components: `completion` (None for a read-only text) and `hover`."""

    def __init__(self, text: Any, services: TextServices, where: Callable[[], tuple[str | None, bool]], *,
                 complete: bool = True) -> None:
        self.text = text
        self.colour(services.colours())
        p = services.presenter
        self.completion = Completion(text, p.completion_items, lambda: not p.read_only) if complete else None
        self.hover = VariableHover(text, services, where)
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
