"""Shared behaviour of the settings pages that manage a list (Models, MCP servers): the
selected row, and running an intent with its message shown on the page.

`ListActions(rows, msg, refresh)` is a component of `ui/models_page.ModelsPage` and
`ui/mcp_page.McpPage` (`page.actions`): `rows` is the Treeview whose item ids are the row
ids, `msg` the Label for results, `refresh` redraws the page. Only `llmspace/ui` uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import UserFacingError


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
