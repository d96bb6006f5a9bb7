"""Shared behaviour of the settings pages that manage a list (Models, MCP servers).

`ListPage` expects the subclass to have `list` (a Treeview whose item ids are the row ids),
`msg` (a Label for results) and `refresh()`. Only `llmspace/ui` uses it.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserFacingError


class ListPage:
    """Mixin: the selected row and running an intent with its message shown on the page."""

    list: Any
    msg: Any

    def refresh(self) -> None:  # pragma: no cover - provided by the page
        raise NotImplementedError

    def _selected(self) -> str | None:
        sel = self.list.selection()
        return sel[0] if sel else None

    def _guard(self, fn: Any, *args: Any) -> bool:
        """Run `fn(*args)`; show its UserFacingError on the page, or "Saved." and refresh."""
        try:
            fn(*args)
        except UserFacingError as exc:
            self.msg.configure(text=str(exc), bootstyle="danger")
            return False
        self.msg.configure(text="Saved.", bootstyle="success")
        self.refresh()
        return True
