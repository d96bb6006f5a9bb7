"""One MCP server's details for Settings › MCP, without Tk: the protocol revision it speaks
(2025-11-25 with initialize, or 2026-07-28, stateless), its name and capabilities, how many
tools, prompts and resources it offers, which tools are pinned, and which changed since the
user trusted them, each with the difference (`mcp/pins.py`) — such a tool is neither offered
nor callable until accepted here (`accept`) or with `llmspace mcp trust`.

`details` and `accept` connect to the server: call them from a worker thread. `changed_names`
reads `settings/mcp-pins.json` only (the names found changed at the last listing).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import UserFacingError, error_text
from ..mcp.pins import ToolDefinition
from ..redact import KNOWN


@dataclass(frozen=True)
class ChangedTool:
    name: str
    diff: str


@dataclass(frozen=True)
class ServerDetails:
    server_id: str
    name: str
    protocol: str = ""  # "2026-07-28 (stateless)" / "2025-11-25 (with initialize)"
    server: str = ""  # the server's own name and version
    features: tuple[str, ...] = ()
    tools: int | None = None  # None: not offered, or listing failed (see `problems`)
    prompts: int | None = None
    resources: int | None = None
    pinned: tuple[str, ...] = ()
    new: tuple[str, ...] = ()
    changed: tuple[ChangedTool, ...] = ()
    problems: tuple[str, ...] = field(default_factory=tuple)

    def lines(self) -> list[str]:
        """The details as the page shows them, one fact a line."""
        def count(n: int | None) -> str:
            return "—" if n is None else str(n)

        out = [f"Protocol: {self.protocol or 'unknown'}" + (f" · server {self.server}" if self.server else ""),
               f"Capabilities: {', '.join(self.features) or 'none declared'}",
               f"Tools: {count(self.tools)} · Prompts: {count(self.prompts)} · Resources: {count(self.resources)}",
               f"Pinned tools: {', '.join(self.pinned) or 'none'}"]
        if self.new:
            out.append(f"New tools (pinned now): {', '.join(self.new)}")
        if self.changed:
            out.append(f"Changed since trusted (blocked): {', '.join(c.name for c in self.changed)}")
        out += [f"Problem: {p}" for p in self.problems]
        return out


def protocol_label(version: str) -> str:
    if not version:
        return ""
    return f"{version} ({'stateless' if version >= '2026-07-28' else 'with initialize'})"


def _count(fetch: Any, offered: bool, what: str, problems: list[str]) -> int | None:
    if not offered:
        return None
    try:
        return len(fetch())
    except UserFacingError as exc:
        problems.append(f"{what}: {error_text(exc)}")
        return None


def details(hub: Any, server_id: str) -> ServerDetails:
    """Connect and gather the server's details (blocking). Raises UserFacingError when it cannot connect."""
    cfg = hub.directory.find(server_id)
    tools = hub.list_tools(server_id, refresh=True)
    info = hub.extras.features(server_id)
    offered = set(info.get("features") or [])
    problems: list[str] = []
    changed = []
    for tool in tools:
        if tool.pin == "changed":
            diff = hub.pins.diff(cfg.id, ToolDefinition(tool.name, tool.description, tool.inputSchema))
            changed.append(ChangedTool(tool.name, KNOWN.text(diff)))
    server = info.get("server") or {}
    named = " ".join(str(x) for x in (server.get("name"), server.get("version")) if x)
    return ServerDetails(
        server_id=server_id, name=cfg.name, protocol=protocol_label(str(info.get("protocolVersion") or "")),
        server=named, features=tuple(sorted(offered)), tools=len(tools),
        prompts=_count(lambda: hub.list_prompts(server_id), "prompts" in offered, "prompts", problems),
        resources=_count(lambda: hub.list_resources(server_id), "resources" in offered, "resources", problems),
        pinned=tuple(t.name for t in tools if t.pin == "pinned"), new=tuple(t.name for t in tools if t.pin == "new"),
        changed=tuple(changed), problems=tuple(problems))


def accept(hub: Any, server_id: str, tool: str) -> list[str]:
    """Trust the tool's current definition (blocking); returns the names trusted."""
    names: list[str] = hub.trust(server_id, tool)
    return names


def changed_names(hub: Any, server_id: str) -> list[str]:
    """The tools found changed at the server's last listing (no connection)."""
    names: list[str] = hub.pins.last_changed(server_id)
    return names
