"""Tool naming for MCP tools: `mcp__<serverName>__<normalisedToolName>`, with collisions.

Tools whose names normalise to nothing, or that collide with another tool of the same
server after normalisation, are listed but unavailable with a reason.
The first of a colliding group is not preferred: all colliding tools are unavailable, so
the result never depends on the order the server lists its tools in. No `mcp` import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..settings.mcp import McpToolSummary, normalize_name


@dataclass(frozen=True)
class McpToolInfo:
    """A tool offered by one MCP server, as the app exposes it."""

    serverId: str
    serverName: str
    name: str  # raw MCP tool name
    normalizedName: str
    directName: str  # mcp__<serverName>__<normalizedName>
    description: str | None
    inputSchema: dict[str, Any]
    available: bool = True
    reason: str | None = None
    required: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)
    pin: str = "pinned"  # pins.PinStatus: "pinned", "new" or "changed" (blocked until trusted)

    def summary(self) -> McpToolSummary:
        return McpToolSummary(name=self.name, directName=self.directName, description=self.description,
                              available=self.available, reason=self.reason,
                              required=list(self.required), properties=list(self.properties))


def direct_name(server_name: str, tool_name: str) -> str:
    return f"mcp__{server_name}__{normalize_name(tool_name)}"


def build_tool_infos(server_id: str, server_name: str, tools: list[tuple[str, str | None, dict[str, Any]]]) -> list[McpToolInfo]:
    """Turn `(name, description, inputSchema)` triples into infos, marking empty/colliding names."""
    groups: dict[str, list[str]] = {}
    for name, _d, _s in tools:
        groups.setdefault(normalize_name(name), []).append(name)
    infos = []
    for name, description, schema in tools:
        norm = normalize_name(name)
        schema = schema if isinstance(schema, dict) else {"type": "object", "properties": {}}
        reason = None
        if not norm:
            reason = f"The tool name {name!r} has no letters, digits or underscores, so it cannot be offered to a model."
        elif len(groups[norm]) > 1:
            others = ", ".join(repr(n) for n in groups[norm] if n != name)
            reason = f"The tool name {name!r} becomes {norm!r}, the same as {others}; none of them can be offered to a model."
        props = schema.get("properties")
        req = schema.get("required")
        infos.append(McpToolInfo(
            serverId=server_id, serverName=server_name, name=name, normalizedName=norm,
            directName=f"mcp__{server_name}__{norm}", description=description, inputSchema=schema,
            available=reason is None, reason=reason,
            required=[r for r in req if isinstance(r, str)] if isinstance(req, list) else [],
            properties=list(props) if isinstance(props, dict) else [],
        ))
    return infos
