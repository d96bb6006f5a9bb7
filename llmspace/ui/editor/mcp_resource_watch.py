"""Attached MCP resources that change: after a text resource is attached to a message, the
editor asks its server to say when it changes (`McpExtras.watch_resources`: `listen` in
2026-07-28, `resources/subscribe` before; a server that cannot is simply not watched). A
change shows a notification with Refresh, which reads the resource again and puts the new
text in place of the old (`McpContentPresenter.refresh`, one undo step). The watches end
with the editor.
"""

from __future__ import annotations

import tkinter as tk
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from ...errors import error_text
from ...presenters.mcp_content import McpContentPresenter

if TYPE_CHECKING:
    from ...mcp.hub import McpHub
    from ..services import UiServices


class ResourceWatcher:
    """The watches of one editor (`view`, whose destruction ends them), reported through `ui`."""

    def __init__(self, view: tk.Misc, ui: UiServices, hub: Callable[[], McpHub],
                 presenter: Callable[[], McpContentPresenter]) -> None:
        self.view, self.ui, self.hub, self.presenter = view, ui, hub, presenter
        self.stops: dict[tuple[str, str], Callable[[], None]] = {}  # (server id, uri) -> stop
        self.messages: dict[tuple[str, str], set[str]] = {}  # (server id, uri) -> message ids holding it
        self.notices: list[str] = []  # the changes shown (uri), for the status and tests
        self.watching: set[tuple[str, str]] = set()  # the watches the servers confirmed
        view.bind("<Destroy>", lambda e: self.close() if e.widget is view else None, add=True)

    def watch(self, server_id: str, uri: str, message_id: str) -> None:
        """Watch `uri` for this message (in a worker; a server that cannot watch is left alone)."""
        key = (server_id, uri)
        self.messages.setdefault(key, set()).add(message_id)
        if key in self.stops:
            return
        self.stops[key] = lambda: None  # claimed: one watch per resource
        hub, pump = self.hub(), self.ui.pump

        def changed(changed_uri: str) -> None:  # on the MCP loop thread
            pump.post(self._changed, server_id, changed_uri)

        def done(future: Future[Callable[[], None]]) -> None:
            try:
                stop = future.result()
            except Exception:  # the server offers no change notices: nothing to watch
                self.stops.pop(key, None)
                return
            if key in self.stops:
                self.stops[key] = stop
                self.watching.add(key)
            else:  # closed meanwhile
                stop()

        pump.run_in_worker(lambda: hub.extras.watch_resources(server_id, [uri], changed), done, name="mcp-watch")

    def _changed(self, server_id: str, uri: str) -> None:
        if not self.view.winfo_exists() or (server_id, uri) not in self.messages:
            return
        self.notices.append(uri)
        self.ui.toasts.show(f"The MCP resource {uri} changed on its server.", "info",
                            title="Attached resource changed", action=("Refresh", lambda: self.refresh(server_id, uri)))

    def refresh(self, server_id: str, uri: str) -> None:
        """Read the resource again (in a worker) and replace its text in the messages holding it."""
        presenter = self.presenter()

        def done(future: Future[list[dict[str, Any]]]) -> None:
            if not self.view.winfo_exists():
                return
            try:
                parts = future.result()
                for mid in sorted(self.messages.get((server_id, uri), set())):
                    presenter.refresh(mid, uri, parts)
            except Exception as exc:
                self.ui.status.error(error_text(exc))

        self.ui.pump.run_in_worker(lambda: presenter.read_parts(server_id, uri), done, name="mcp-refresh")

    def close(self) -> None:
        stops, self.stops = list(self.stops.values()), {}
        for stop in stops:
            stop()
