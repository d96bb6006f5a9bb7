"""Settings › MCP screen logic (no Tk): the user's servers with readiness, adding a stdio or
HTTP server from form fields, enabling/disabling, removing, and "Connect & Test"
(blocking: the view calls it from a worker thread); apart from them, the MCPs in plugins
(`plugin:<name>:mcp:<id>`), read-only, with the plugin's name, readiness and tool names —
Connect & Test works for them too. A server whose tools changed since trusted says so in its
status (the details and Accept are `presenters/mcp_details.py`). Delegates to `app.mcp` (the MCP hub); plugin values are
shown through the secret redactor.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import Any

from ..errors import UserFacingError
from ..mcp.servers import is_plugin_server, plugin_of
from ..redact import KNOWN, mask_url

TRANSPORTS = {"http": "streamableHttp", "streamableHttp": "streamableHttp", "sse": "sse"}  # form choice -> mcp.json


@dataclass(frozen=True)
class ServerRow:
    id: str
    name: str
    transport: str
    target: str
    status: str
    tools: tuple[str, ...] = ()
    plugin: str = ""  # the plugin that brings the server ("" for the user's own)


def _status(s: Any) -> str:
    r = s.readiness
    if not s.is_enabled:
        return "disabled"
    if r is not None and r.status == "ready" and r.toolCount is not None:
        return f"ready · {r.toolCount} tools"
    if r is not None and r.status == "error" and r.lastError:
        return f"error: {r.lastError}"
    return r.status if r is not None else "untested"


def _row(s: Any, changed: list[str] | None = None) -> ServerRow:
    target = mask_url(s.url) if s.url else " ".join([s.command or "", *(s.args or [])]).strip()
    plugin = plugin_of(s.id) if is_plugin_server(s) else ""
    status = _status(s)
    if changed:  # pinned definitions (mcp/pins.py): blocked until accepted under the server's details
        status += f" · ⚠ {len(changed)} changed tool{'s' if len(changed) > 1 else ''}: Connect & Test to review"
    if plugin:  # interpolated from the plugin's settings: may hold secrets
        target, status = KNOWN.text(target), KNOWN.text(status)
    tools = tuple(t.name for t in (s.readiness.tools if s.readiness is not None else []))
    return ServerRow(s.id, s.name, s.transport, target, status, tools, plugin)


class McpPagePresenter:
    def __init__(self, hub: Any) -> None:
        self.hub = hub

    def rows(self) -> list[ServerRow]:
        """The user's servers (settings/mcp.json), in file order."""
        return [_row(s, self.hub.pins.last_changed(s.id)) for s in self.hub.servers() if not is_plugin_server(s)]

    def plugin_rows(self) -> list[ServerRow]:
        """The MCPs in plugins: read-only here (their plugin's settings configure them)."""
        return [_row(s, self.hub.pins.last_changed(s.id)) for s in self.hub.servers() if is_plugin_server(s)]

    def plugin_conflicts(self) -> list[str]:
        """Plugin servers left inactive because two sources claim one ID."""
        return [c.message for c in self.hub.directory.registry.conflicts()
                if any(src.startswith("plugin:") for src in c.sources)]

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
        if transport not in TRANSPORTS:
            raise UserFacingError(f"Unknown transport {transport!r}: use stdio, http or sse.")
        return self.hub.add_server(name=name, transport=TRANSPORTS[transport], url=target)

    def set_enabled(self, server_id: str, enabled: bool) -> None:
        self.hub.update_server(server_id, enabled=enabled)

    def remove(self, server_id: str) -> None:
        self.hub.remove_server(server_id)

    def test(self, server_id: str) -> Any:
        """Connect and list tools (blocking; run it in a worker thread). Plugin servers too."""
        return self.hub.test(server_id)

    @staticmethod
    def describe_result(readiness: Any) -> tuple[str, bool]:
        """(message, ok) for the result of `test`."""
        if readiness.status == "ready":
            names = [t.name for t in readiness.tools]
            listed = f": {', '.join(names[:8])}{', …' if len(names) > 8 else ''}" if names else ""
            return f"Ready: {readiness.toolCount} tools{listed}.", True
        return KNOWN.text(readiness.lastError or f"Not ready ({readiness.status})."), False
