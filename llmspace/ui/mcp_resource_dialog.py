"""Attach MCP resource…: pick a server and one of its resources or resource templates (a
template's variables are filled with the server's completions as you type,
`ui/mcp_completion.py`), and Attach: the resource is read and added to the user message —
text (and `text/*` data) as text naming the URI, images as images, literally (never
rendered as a template). What cannot be attached (another binary type, over 10 MB) is
refused in the dialog with the reason. Listing, completing and reading run on workers
(results via the pump); logic in `presenters/mcp_content.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import error_text
from ..presenters.mcp_content import McpContentPresenter, ResourceItem
from .mcp_pick_dialog import McpPickDialog

if TYPE_CHECKING:
    from .pump import Pump


class McpResourceDialog(McpPickDialog[ResourceItem]):
    kind = "resource"

    def __init__(self, master: Any, pump: Pump, presenter: McpContentPresenter, message_id: str,
                 on_attached: Callable[[str, str, str], None] | None = None) -> None:
        self.message_id, self.on_attached = message_id, on_attached
        self.attached = False
        super().__init__(master, pump, presenter, title="Attach MCP resource", heading="Resource", action="Attach",
                         act=self.attach, height=8)

    def _list(self, server_id: str) -> list[ResourceItem]:
        return self.p.resources(server_id)

    def _fill(self, item: ResourceItem) -> None:
        if item.template:
            for name in item.variables():
                self.add_field(item, name, f"{name} *")

    def _complete(self, server_id: str, item: ResourceItem, name: str, prefix: str,
                  others: dict[str, str]) -> list[str]:
        return self.p.complete_template(server_id, item, name, prefix, others)

    def attach(self) -> None:
        """Read the resource (in a worker) and attach it to the message; a refusal is shown here."""
        item, server_id = self.chosen(), self.server_id
        if item is None or server_id is None:
            return
        try:
            uri = item.expand(self.values())
        except Exception as exc:
            self._say(error_text(exc), "danger")
            return
        presenter, mid = self.p, self.message_id
        self._say(f"Reading {uri}…")

        def take(parts: list[dict[str, Any]]) -> None:
            presenter.attach(mid, parts, server_id)

        def then() -> None:
            self.attached = True
            if self.on_attached is not None:  # (message id, server id, uri)
                self.on_attached(mid, server_id, uri)

        self.run_action(lambda: presenter.read_parts(server_id, uri), take, then, "mcp-read")
