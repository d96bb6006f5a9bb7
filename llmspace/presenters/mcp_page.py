"""Settings › MCP screen logic (no Tk): server rows with readiness, adding a stdio or HTTP
server from form fields, enabling/disabling, removing, and "Connect & Test" (blocking:
the view calls it from a worker thread). Delegates to `app.mcp` (the MCP hub).
Callers: `ui/mcp_page.py`, tests.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError


@dataclass(frozen=True)
class ServerRow:
    id: str
    name: str
    transport: str
    target: str
    status: str


class McpPagePresenter:
    def __init__(self, hub: Any) -> None:
        self.hub = hub

    def rows(self) -> list[ServerRow]:
        out = []
        for s in self.hub.servers():
            target = s.url or " ".join([s.command or "", *(s.args or [])]).strip()
            r = s.readiness
            if not s.is_enabled:
                status = "disabled"
            elif r is not None and r.status == "ready" and r.toolCount is not None:
                status = f"ready · {r.toolCount} tools"
            elif r is not None and r.status == "error" and r.lastError:
                status = f"error: {r.lastError}"
            else:
                status = r.status if r is not None else "untested"
            out.append(ServerRow(s.id, s.name, s.transport, target, status))
        return out

    def add(self, name: str, transport: str, command_or_url: str) -> Any:
        """Add a server: for stdio the command line is split like a shell would."""
        name, target = name.strip(), command_or_url.strip()
        if not name:
            raise UserFacingError("Give the server a name.")
        if not target:
            raise UserFacingError("Give a command (stdio) or a URL (http, sse).")
        if transport == "stdio":
            try:
                parts = shlex.split(target)
            except ValueError as exc:
                raise UserFacingError(f"The command line cannot be split: {exc}.") from None
            return self.hub.add_server(name=name, transport="stdio", command=parts[0], args=parts[1:])
        return self.hub.add_server(name=name, transport=transport, url=target)

    def set_enabled(self, server_id: str, enabled: bool) -> None:
        self.hub.update_server(server_id, enabled=enabled)

    def remove(self, server_id: str) -> None:
        self.hub.remove_server(server_id)

    def test(self, server_id: str) -> Any:
        """Connect and list tools (blocking; run it in a worker thread)."""
        return self.hub.test(server_id)
