"""Shared behaviour of the settings pages that manage a list (Models, MCP servers): the
selected row, and running an intent with its message shown on the page.

`ListActions(rows, msg, refresh)` is a component of `ui/models_page.ModelsPage` and
`ui/mcp_page.McpPage` (`page.actions`): `rows` is the Treeview whose item ids are the row
ids, `msg` the Label for results, `refresh` redraws the page. `fit_headings(tree)` widens
the columns whose heading text would be clipped; `fit_columns` sizes columns to their cells
(run history, trace view); `widen_to_content` widens columns to the cells they hold. Only `llmspace/ui` uses it.
"""

from __future__ import annotations

import tkinter.font as tkfont
from collections.abc import Callable
from typing import Any

from ..errors import UserFacingError

HEADING_PAD = 20  # a heading's padding and sort-arrow room, in pixels
MAX_WIDTH = 260  # the widest a column grows to fit its cells (`fit_columns`), in pixels


def fit_headings(tree: Any) -> None:
    """Make every column of `tree` at least as wide as its heading text (never narrower)."""
    font = tkfont.nametofont("TkHeadingFont")
    for col in ("#0", *tree["columns"]):
        need = font.measure(str(tree.heading(col, "text"))) + HEADING_PAD
        if int(tree.column(col, "width")) < need:
            tree.column(col, width=need)
        tree.column(col, minwidth=need)


def fit_columns(tree: Any, columns: list[str], rows: list[list[str]], headings: list[str]) -> None:
    """Size each column to its heading and longest cell (at most `MAX_WIDTH` pixels)."""
    body, head = tkfont.nametofont("TkDefaultFont"), tkfont.nametofont("TkHeadingFont")
    for k, col in enumerate(columns):
        width = max([head.measure(headings[k]) + 24] + [body.measure(r[k]) + 16 for r in rows])
        tree.column(col, width=min(MAX_WIDTH, width))


def widen_to_content(tree: Any, columns: tuple[str, ...], limit: int = 480) -> None:
    """Widen `columns` of `tree` ("#0" the tree column) to their longest cell, at most
    `limit` pixels (never narrower), so that what they show is not cut."""
    body = tkfont.nametofont("TkDefaultFont")
    items: list[str] = []
    stack = list(tree.get_children(""))
    while stack:
        item = stack.pop()
        items.append(item)
        stack.extend(tree.get_children(item))
    for col in columns:
        texts = [str(tree.item(i, "text")) if col == "#0" else str(tree.set(i, col)) for i in items]
        indent = 28 if col == "#0" else 0  # the tree column's indicator and indent
        need = max((body.measure(t) + 16 + indent for t in texts), default=0)
        if need > int(tree.column(col, "width")):
            tree.column(col, width=min(limit, need))


class ListActions:
    """The selected row and guarded intents of one list page."""

    def __init__(self, rows: Any, msg: Any, refresh: Callable[[], None]) -> None:
        self.rows = rows
        self.msg = msg
        self.refresh = refresh

    def selected(self) -> str | None:
        sel = self.rows.selection()
        return sel[0] if sel else None

    def guard(self, fn: Callable[..., Any], *args: Any) -> bool:
        """Run `fn(*args)`; show its UserFacingError on the page, or "Saved." and refresh."""
        try:
            fn(*args)
        except UserFacingError as exc:
            self.msg.configure(text=str(exc), bootstyle="danger")
            return False
        self.msg.configure(text="Saved.", bootstyle="success")
        self.refresh()
        return True
