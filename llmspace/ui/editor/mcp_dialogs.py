"""The editor's MCP dialogs: "Insert MCP prompt…" (beside + Message and in the palette) and
"Attach MCP resource…" (beside Image… on a user message), opened over the App's MCP hub
(`ui/mcp_prompt_dialog.py`, `ui/mcp_resource_dialog.py`, logic in
`presenters/mcp_content.py`). After an insert the list scrolls to its end, where the messages are;
an attached text resource is watched for changes (`mcp_resource_watch.py`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...presenters.mcp_content import McpContentPresenter
from ..mcp_prompt_dialog import McpPromptDialog
from ..mcp_resource_dialog import McpResourceDialog
from .mcp_resource_watch import ResourceWatcher

EditorView = Any  # `editor.view.EditorView` (its `run.app.mcp`, `p`, `ui`, `list`); not imported: it imports this


def _presenter(view: EditorView) -> McpContentPresenter:
    return McpContentPresenter(view.run.app.mcp, view.p)


def insert_prompt(view: EditorView) -> McpPromptDialog:
    """Open Insert MCP prompt for this editor's thread."""
    return McpPromptDialog(view.winfo_toplevel(), view.ui.pump, _presenter(view),
                           lambda ids: view.list.scroll_to_end())


def attach_resource(view: EditorView, message_id: str,
                    on_attached: Callable[[str, str, str], None] | None = None) -> McpResourceDialog:
    """Open Attach MCP resource for the user message `message_id`."""
    return McpResourceDialog(view.winfo_toplevel(), view.ui.pump, _presenter(view), message_id, on_attached)


class ResourceAction:
    """A user card's "MCP…" button: shown while an MCP server is enabled (so a card without
    MCP keeps its actions on one row in a small window); opens Attach MCP resource."""

    def __init__(self, view: EditorView) -> None:
        self.view = view
        self.watcher = ResourceWatcher(view, view.ui, lambda: view.run.app.mcp,  # attached text that changes
                                       lambda: _presenter(view))

    def available(self) -> bool:
        try:
            return any(s.is_enabled for s in self.view.run.app.mcp.servers())
        except Exception:  # settings/mcp.json unreadable: the MCP pages say why
            return False

    def __call__(self, message_id: str) -> McpResourceDialog:
        return attach_resource(self.view, message_id, self._attached)

    def _attached(self, message_id: str, server_id: str, uri: str) -> None:
        msg = self.view.p.thread.messages[self.view.p.index_of(message_id)]
        if any(getattr(p, "type", "") == "text" and str(getattr(p, "text", "")).startswith(f"[resource: {uri}]")
               for p in msg.content):
            self.watcher.watch(server_id, uri, message_id)
