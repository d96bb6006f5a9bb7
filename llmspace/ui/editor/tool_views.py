"""Tool calls as the original app shows them, built from `presenters/tool_results.py`:

    SearchResults(master, hits, open_link)   # web_search: titles (links), addresses, snippets
    Checklist(master, items)                 # todo_write: ☑ done, ◐ in progress, ☐ pending, ☒ cancelled
    FoldedJson(master, view, on_height_change)  # pretty JSON; past FOLD_LINES lines folded, "Show all" unfolds

Read-only views; the card offers "Edit" to change the raw result (`ui/editor/cards.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

import ttkbootstrap as tb

from ...presenters.tool_results import ResultView, SearchHit, TodoItem

SNIPPET_CHARS = 300


def _open(open_link: Callable[[str], Any], url: str, _event: Any = None) -> str:
    open_link(url)
    return "break"


def _wrap(label: tb.Label) -> None:
    """Wrap a label's text at its width, between words."""
    label.bind("<Configure>", lambda e: label.configure(wraplength=max(80, e.width - 4)), add=True)


class SearchResults(tb.Frame):
    def __init__(self, master: Any, hits: list[SearchHit], open_link: Callable[[str], Any]) -> None:
        super().__init__(master)
        self.titles: list[tb.Label] = []
        if not hits:
            tb.Label(self, text="No results.", bootstyle="secondary").pack(anchor="w")
        for n, hit in enumerate(hits, 1):
            title = tb.Label(self, text=f"{n}. {hit.title}", bootstyle="primary", cursor="hand2",
                             font="TkHeadingFont", justify="left")
            title.pack(anchor="w", fill="x", pady=(4 if n > 1 else 0, 0))
            title.bind("<Button-1>", partial(_open, open_link, hit.url))
            self.titles.append(title)
            tb.Label(self, text=hit.url, bootstyle="secondary", justify="left").pack(anchor="w", fill="x")
            if hit.snippet:
                snippet = hit.snippet if len(hit.snippet) <= SNIPPET_CHARS else hit.snippet[:SNIPPET_CHARS].rsplit(" ", 1)[0] + "…"
                lbl = tb.Label(self, text=snippet, justify="left")
                lbl.pack(anchor="w", fill="x")
                _wrap(lbl)


class Checklist(tb.Frame):
    def __init__(self, master: Any, items: list[TodoItem]) -> None:
        super().__init__(master)
        self.rows: list[tb.Label] = []
        for item in items:
            style = "secondary" if item.status in ("completed", "cancelled") else ("info" if item.status == "in_progress" else "default")
            row = tb.Label(self, text=f"{item.mark} {item.content}", bootstyle=style, justify="left")
            row.pack(anchor="w", fill="x")
            _wrap(row)
            self.rows.append(row)


class FoldedJson(tb.Frame):
    """Pretty JSON in a read-only box; a long one shows its first lines until unfolded."""

    def __init__(self, master: Any, view: ResultView, on_height_change: Callable[[], Any] | None = None) -> None:
        super().__init__(master)
        self.view = view
        self.on_height_change = on_height_change
        self.folded = view.folded is not None
        self.box = tb.Text(self, wrap="none", font="TkFixedFont", height=1)
        self.box.pack(fill="x")
        self.toggle: tb.Button | None = None
        if view.folded is not None:
            self.toggle = tb.Button(self, bootstyle="link", padding=(0, 0), command=self.flip)
            self.toggle.pack(anchor="w")
        self._draw()

    def shown(self) -> str:
        return self.view.folded if self.folded and self.view.folded is not None else self.view.text

    def _draw(self) -> None:
        text = self.shown()
        self.box.configure(state="normal")
        self.box.delete("1.0", "end")
        self.box.insert("1.0", text)
        self.box.configure(state="disabled", height=min(40, text.count("\n") + 1))
        if self.toggle is not None:
            n = self.view.hidden_lines
            self.toggle.configure(text=f"▸ Show all ({n} more line{'s' if n != 1 else ''})" if self.folded else "▾ Fold")

    def flip(self) -> None:
        self.folded = not self.folded
        self._draw()
        if self.on_height_change is not None:
            self.on_height_change()
