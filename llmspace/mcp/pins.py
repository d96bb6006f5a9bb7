"""Pinned MCP tool definitions: `settings/mcp-pins.json`, our own file (the original app's
`settings/mcp.json` keeps only its keys).

A server that changes a tool after the user trusted it is the best known MCP attack, so the
first time a server's tools are listed each tool's definition (name, description, input
schema) is saved here with its SHA-256, keyed by server id (user servers, and
`plugin:<name>:mcp:<id>` for a plugin's). At every later listing:

- same digest: `pinned`, offered;
- a tool not seen before: `new`, pinned at once and offered (a new tool is not an attack on
  a trust already given; a later change of it is caught like any other);
- another digest: `changed`, neither offered to a model nor callable until the user has seen
  the difference and accepted it (`trust`; `llmspace mcp trust SERVER [--tool NAME]`).

The names found changed at the last listing are kept too (`lastChanged`), so `mcp list` can
show "changed" without connecting. Written through `jsonio.write_json_atomic` (settings/ is
owner-only). No `mcp` import.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import threading
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot
from ..settings.mcp import now_iso

PinStatus = Literal["pinned", "new", "changed"]
VERSION = 1


def tool_digest(name: str, description: str | None, schema: dict[str, Any] | None) -> str:
    """SHA-256 of a tool's name, description and input schema (canonical JSON)."""
    blob = json.dumps([name, description or "", schema or {}], sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class ToolDefinition:
    name: str
    description: str | None
    inputSchema: dict[str, Any]

    @property
    def digest(self) -> str:
        return tool_digest(self.name, self.description, self.inputSchema)

    def to_json(self) -> dict[str, Any]:
        return {"sha256": self.digest, "description": self.description, "inputSchema": self.inputSchema,
                "pinnedAt": now_iso()}


def _shown(description: str | None, schema: dict[str, Any] | None) -> list[str]:
    text = f"description:\n{description or ''}\ninputSchema:\n{json.dumps(schema or {}, indent=2, sort_keys=True)}\n"
    return text.splitlines(keepends=True)


class PinStore:
    """`settings/mcp-pins.json` of one data root. Thread-safe."""

    def __init__(self, root: DataRoot) -> None:
        self.path = root.settings_file("mcp-pins")
        self._lock = threading.Lock()

    def _read(self) -> dict[str, Any]:
        if not self.path.exists():
            return {"version": VERSION, "servers": {}}
        data = read_json(self.path, max_bytes=SETTINGS_MAX_BYTES)
        if not isinstance(data, dict) or not isinstance(data.get("servers"), dict):
            raise UserFacingError(f"{self.path}: expected an object with a 'servers' object.",
                                  hint="Delete the file to pin every MCP tool again at its next listing.")
        return data

    def _server(self, data: dict[str, Any], server_id: str) -> dict[str, Any] | None:
        entry = data["servers"].get(server_id)
        return entry if isinstance(entry, dict) and isinstance(entry.get("tools"), dict) else None

    def check(self, server_id: str, tools: list[ToolDefinition]) -> dict[str, PinStatus]:
        """Compare a listing with the pins, pin what is new, and return each tool's status."""
        with self._lock:
            data = self._read()
            entry = self._server(data, server_id)
            first = entry is None
            if entry is None:
                entry = {"tools": {}}
            pins: dict[str, Any] = entry["tools"]
            out: dict[str, PinStatus] = {}
            dirty = first
            for tool in tools:
                pin = pins.get(tool.name)
                if not isinstance(pin, dict):
                    pins[tool.name] = tool.to_json()
                    out[tool.name] = "pinned" if first else "new"
                    dirty = True
                else:
                    out[tool.name] = "pinned" if pin.get("sha256") == tool.digest else "changed"
            changed = sorted(n for n, s in out.items() if s == "changed")
            if entry.get("lastChanged", []) != changed:
                entry["lastChanged"] = changed
                dirty = True
            if dirty:
                data["servers"][server_id] = entry
                write_json_atomic(self.path, data, trailing_newline=True)
            return out

    def last_changed(self, server_id: str) -> list[str]:
        """The tools found changed at the server's last listing (no connection)."""
        try:
            with self._lock:
                entry = self._server(self._read(), server_id)
        except UserFacingError:
            return []
        names = (entry or {}).get("lastChanged") or []
        return [n for n in names if isinstance(n, str)]

    def diff(self, server_id: str, tool: ToolDefinition) -> str:
        """A unified diff from the pinned definition to `tool` ("" when they are the same)."""
        with self._lock:
            entry = self._server(self._read(), server_id)
        pin = (entry or {"tools": {}})["tools"].get(tool.name)
        if not isinstance(pin, dict) or pin.get("sha256") == tool.digest:
            return ""
        return "".join(difflib.unified_diff(_shown(pin.get("description"), pin.get("inputSchema")),
                                            _shown(tool.description, tool.inputSchema),
                                            fromfile=f"{tool.name} (trusted)", tofile=f"{tool.name} (now)"))

    def trust(self, server_id: str, tools: list[ToolDefinition]) -> None:
        """Pin these definitions as they are now (the user accepted them)."""
        with self._lock:
            data = self._read()
            entry = self._server(data, server_id) or {"tools": {}}
            for tool in tools:
                entry["tools"][tool.name] = tool.to_json()
            names = {t.name for t in tools}
            entry["lastChanged"] = [n for n in entry.get("lastChanged", []) if n not in names]
            data["servers"][server_id] = entry
            write_json_atomic(self.path, data, trailing_newline=True)
