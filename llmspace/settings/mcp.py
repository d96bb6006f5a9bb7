"""`settings/mcp.json`: the configured MCP servers and their last readiness test.

Shape: `{servers: [{id, name, serverName, transport: stdio|streamableHttp|sse,
command, args, cwd, env, url, headers, timeoutSeconds, enabled, createdAt, updatedAt,
readiness}]}`. Unknown keys are kept. An unreadable or invalid file is reported (`error`),
left untouched, treated as empty, and never overwritten.

Nothing here imports `mcp` or touches the network.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot

Transport = Literal["stdio", "streamableHttp", "sse"]
ReadinessStatus = Literal["untested", "ready", "error", "stale"]
TRANSPORTS: tuple[str, ...] = ("stdio", "streamableHttp", "sse")

_NON_WORD = re.compile(r"[^A-Za-z0-9_]+")
_UNDERSCORES = re.compile(r"_+")


def normalize_name(name: str) -> str:
    """Runs of characters outside `[A-Za-z0-9_]` become `_`, repeats collapse, ends are trimmed."""
    return _UNDERSCORES.sub("_", _NON_WORD.sub("_", name or "")).strip("_")


def now_iso() -> str:
    """UTC timestamp as JavaScript's `toISOString()` writes it."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


class McpToolSummary(_Model):
    """One tool as recorded in a readiness result (and shown by `mcp list`/settings)."""

    name: str
    directName: str | None = None
    description: str | None = None
    available: bool = True
    reason: str | None = None
    required: list[str] = Field(default_factory=list)
    properties: list[str] = Field(default_factory=list)


class Readiness(_Model):
    """Result of the last connect-and-list test of one server."""

    status: ReadinessStatus = "untested"
    testedAt: str | None = None
    toolCount: int | None = None
    lastError: str | None = None
    tools: list[McpToolSummary] = Field(default_factory=list)
    diagnostic: Any = None
    configHash: str | None = None  # ours: the configuration the test ran against


class McpServerConfig(_Model):
    """One configured MCP server."""

    id: str
    name: str
    serverName: str = ""
    transport: Transport = "stdio"
    command: str | None = None
    args: list[str] | None = None
    cwd: str | None = None
    env: dict[str, str] | None = None
    url: str | None = None
    headers: dict[str, str] | None = None
    timeoutSeconds: float | None = None
    enabled: bool | None = None
    createdAt: str | None = None
    updatedAt: str | None = None
    readiness: Readiness | None = None

    @property
    def is_enabled(self) -> bool:
        return self.enabled is not False

    def config_hash(self) -> str:
        """Fingerprint of everything that affects the connection (a change makes tools stale)."""
        keys = ("transport", "command", "args", "cwd", "env", "url", "headers")
        blob = json.dumps({k: getattr(self, k) for k in keys}, sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:16]

    def effective_readiness(self) -> Readiness:
        """The stored readiness, shown as `stale` when the configuration changed since the test."""
        r = self.readiness or Readiness()
        if r.status in ("ready", "error") and r.configHash and r.configHash != self.config_hash():
            return r.model_copy(update={"status": "stale"})
        return r

    def to_json(self) -> dict[str, Any]:
        data = self.model_dump(mode="json", exclude_none=True, by_alias=True)
        if self.transport == "stdio" and self.cwd is None:
            data["cwd"] = None
        if isinstance(data.get("readiness"), dict):
            data["readiness"].setdefault("toolCount", None)  # number | null in the original schema
        return data


def validate_draft(cfg: McpServerConfig, others: list[McpServerConfig]) -> McpServerConfig:
    """Check a server definition as the original's draft validation does; return it cleaned."""
    name = (cfg.name or "").strip()
    if not name:
        raise UserFacingError("An MCP server needs a name.")
    server_name = normalize_name(name)
    if not server_name:
        raise UserFacingError(f"MCP server name {name!r} has no letters, digits or underscores.",
                              hint="Choose a name such as 'files' or 'github'.")
    for other in others:
        if other.id != cfg.id and (other.serverName or normalize_name(other.name)) == server_name:
            raise UserFacingError(f"An MCP server named {other.name!r} already exists (both become {server_name!r}).",
                                  hint="Choose another name or remove the old server first.")
    update: dict[str, Any] = {"name": name, "serverName": server_name}
    if cfg.transport == "stdio":
        if not (cfg.command or "").strip():
            raise UserFacingError(f"MCP server {name!r} uses stdio but has no command.")
        update["command"] = cfg.command.strip() if cfg.command else cfg.command
        update["args"] = [a.strip() for a in (cfg.args or []) if a.strip()]
        update["cwd"] = cfg.cwd.strip() if cfg.cwd and cfg.cwd.strip() else None
    else:
        parsed = urlparse((cfg.url or "").strip())
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise UserFacingError(f"MCP server {name!r} needs a valid http(s) URL, got {cfg.url!r}.")
        update["url"] = (cfg.url or "").strip()
    if cfg.timeoutSeconds is not None and cfg.timeoutSeconds <= 0:
        raise UserFacingError(f"timeoutSeconds of MCP server {name!r} must be positive.")
    return cfg.model_copy(update=update)


class McpSettings:
    """Reads and writes `settings/mcp.json`; reloads when the file changes on disk. Thread-safe."""

    def __init__(self, root: DataRoot) -> None:
        self.path: Path = root.settings_file("mcp")
        self._lock = threading.RLock()
        self._stamp: tuple[int, int] | None = None
        self._raw: dict[str, Any] = {}
        self._servers: list[McpServerConfig] = []
        self.error: UserFacingError | None = None

    # -- reading -------------------------------------------------------------------------
    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return None
        return (st.st_mtime_ns, st.st_size)

    def servers(self) -> list[McpServerConfig]:
        """The configured servers (empty when the file is missing or invalid; see `error`)."""
        with self._lock:
            stamp = self._file_stamp()
            if stamp != self._stamp or stamp is None:
                self._load(stamp)
            return list(self._servers)

    def _load(self, stamp: tuple[int, int] | None) -> None:
        self._stamp = stamp
        self._raw, self._servers, self.error = {}, [], None
        if stamp is None:
            return
        try:
            raw = read_json(self.path, max_bytes=SETTINGS_MAX_BYTES)
            if not isinstance(raw, dict):
                raise UserFacingError(f"{self.path}: expected an object with a 'servers' list.")
            items = raw.get("servers", [])
            if not isinstance(items, list):
                raise UserFacingError(f"{self.path}: 'servers' must be a list.")
            servers: list[McpServerConfig] = []
            for index, item in enumerate(items):
                try:
                    servers.append(McpServerConfig.model_validate(item))
                except ValidationError as exc:
                    first = exc.errors()[0]
                    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first.get("loc", ()))
                    where = f"servers[{index}]{where}"
                    self.error = UserFacingError(f"{self.path}: invalid MCP server entry at {where}: {first.get('msg')}.",
                                                 hint="Fix the file in a text editor; it was left unchanged and no MCP servers are loaded.")
                    return
        except UserFacingError as exc:
            self.error = UserFacingError(exc.message, hint="Fix the file in a text editor; it was left unchanged and no MCP servers are loaded.")
            return
        for i, s in enumerate(servers):
            if not s.serverName:
                servers[i] = s.model_copy(update={"serverName": normalize_name(s.name)})
        self._raw, self._servers = raw, servers

    # -- writing -------------------------------------------------------------------------
    def _save(self, servers: list[McpServerConfig]) -> None:
        if self.error is not None:
            raise UserFacingError(f"Not changing {self.path}: {self.error.message}", hint=self.error.hint)
        data = dict(self._raw)
        data["servers"] = [s.to_json() for s in servers]
        write_json_atomic(self.path, data, trailing_newline=True)
        self._raw, self._servers, self._stamp = data, list(servers), self._file_stamp()

    def find(self, key: str) -> McpServerConfig:
        """A server by id, name or serverName (in that order); a clear error otherwise."""
        servers = self.servers()
        for attr in ("id", "name", "serverName"):
            for s in servers:
                if getattr(s, attr) == key:
                    return s
        norm = normalize_name(key)
        for s in servers:
            if norm and s.serverName == norm:
                return s
        if self.error is not None:
            raise self.error
        known = ", ".join(s.name for s in servers) or "none configured"
        raise UserFacingError(f"No MCP server named {key!r} (known: {known}).",
                              hint="Add one with `llmspace mcp add NAME --stdio CMD …` or in Settings › MCP.")

    def add(self, cfg: McpServerConfig | dict[str, Any]) -> McpServerConfig:
        with self._lock:
            servers = self.servers()
            if isinstance(cfg, dict):
                cfg = McpServerConfig.model_validate({"id": str(uuid.uuid4()), **cfg})
            stamp = now_iso()
            cfg = validate_draft(cfg, servers).model_copy(
                update={"createdAt": cfg.createdAt or stamp, "updatedAt": stamp,
                        "readiness": cfg.readiness or Readiness(status="untested", toolCount=None)})
            self._save([*servers, cfg])
            return cfg

    def update(self, key: str, **changes: Any) -> McpServerConfig:
        """Change fields of one server; a connection-relevant change marks it stale."""
        with self._lock:
            old = self.find(key)
            servers = self.servers()
            new = validate_draft(old.model_copy(update=changes), servers)
            new = new.model_copy(update={"updatedAt": now_iso()})
            if new.config_hash() != old.config_hash() and old.readiness and old.readiness.status != "untested":
                new = new.model_copy(update={"readiness": old.readiness.model_copy(update={"status": "stale"})})
            self._save([new if s.id == old.id else s for s in servers])
            return new

    def remove(self, key: str) -> McpServerConfig:
        with self._lock:
            old = self.find(key)
            self._save([s for s in self.servers() if s.id != old.id])
            return old

    def set_readiness(self, server_id: str, readiness: Readiness) -> None:
        """Persist a test result (silently skipped when the file is invalid or the server is gone)."""
        with self._lock:
            servers = self.servers()
            if self.error is not None or not any(s.id == server_id for s in servers):
                return
            self._save([s.model_copy(update={"readiness": readiness}) if s.id == server_id else s for s in servers])
