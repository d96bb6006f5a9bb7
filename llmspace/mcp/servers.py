"""`ServerDirectory`: where `McpHub` finds its servers and keeps their readiness.

Two kinds of server, one `mcp_servers` registry (`llmspace/registries.py`):

- user servers of `settings/mcp.json` (`settings.mcp.McpSettings`), registered with source
  `user` each time they are read; their readiness is saved in that file;
- plugin servers, `plugin:<name>:mcp:<id>` with source `plugin:<name>`, registered by
  `llmspace/plugins/contributions/plugin_contributions.py` with every string already interpolated. They are
  read-only here: `refuse_change` says to use the plugin's settings instead. Their
  readiness and tool count live in memory only, stamped with the configuration hash, so a
  plugin settings change shows them `stale` until the next test or tool discovery.

A plugin server that is no longer registered (plugin disabled, removed, or in conflict)
cannot be found: `find` raises a `UserFacingError` saying why (`explain_missing`, set by
`app.py`). `watch(on_gone)` calls `on_gone(server_id)` when a plugin server disappears or
its configuration changes, so the hub closes that connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ..errors import UserFacingError
from ..registry import USER, Registry
from ..settings.mcp import McpServerConfig, McpSettings, Readiness, normalize_name

PLUGIN_PREFIX = "plugin:"


def is_plugin_server(cfg: McpServerConfig) -> bool:
    return cfg.id.startswith(PLUGIN_PREFIX)


def plugin_of(server_id: str) -> str:
    """The plugin name in `plugin:<name>:mcp:<id>` ("" for other IDs)."""
    if not server_id.startswith(PLUGIN_PREFIX):
        return ""
    return server_id[len(PLUGIN_PREFIX):].split(":mcp:", 1)[0]


class ServerDirectory:
    """User and plugin MCP servers by key; readiness of plugin servers. Thread-safe."""

    def __init__(self, settings: McpSettings, registry: Registry[McpServerConfig] | None = None) -> None:
        self.settings = settings
        self.registry: Registry[McpServerConfig] = registry if registry is not None else Registry("MCP server")
        self.explain_missing: Callable[[str], str | None] | None = None
        self._lock = threading.Lock()
        self._readiness: dict[str, Readiness] = {}
        self._known: dict[str, str] = {}  # plugin server id -> config hash, for `watch`

    # -- listing ---------------------------------------------------------------------------
    def user_servers(self) -> list[McpServerConfig]:
        servers = self.settings.servers()
        self.registry.replace_source(USER, {s.id: s for s in servers}, {s.id: (str(self.settings.path),) for s in servers})
        return servers

    def plugin_servers(self) -> list[McpServerConfig]:
        return [r.value for r in self.registry.active() if r.source.startswith(PLUGIN_PREFIX)]

    def servers(self) -> list[McpServerConfig]:
        """User servers (file order) then plugin servers, readiness shown `stale` when the
        configuration changed since the test."""
        return [s.model_copy(update={"readiness": self.readiness(s)}) for s in self.user_servers() + self.plugin_servers()]

    # -- lookup ----------------------------------------------------------------------------
    def find(self, key: str) -> McpServerConfig:
        """A server by id, name or serverName (user servers first), or by its canonical ID."""
        if key.startswith(PLUGIN_PREFIX):
            return self._plugin(key)
        try:
            return self.settings.find(key)
        except UserFacingError:
            norm = normalize_name(key)
            for cfg in self.plugin_servers():
                if key in (cfg.name, cfg.serverName) or (norm and cfg.serverName == norm):
                    return cfg
            raise

    def _plugin(self, server_id: str) -> McpServerConfig:
        reg = self.registry.registration(server_id)
        if reg is not None:
            return reg.value
        if any(c.canonical_id == server_id for c in self.registry.conflicts()):
            self.registry.require(server_id)  # raises, naming every party
        why = (self.explain_missing(server_id) if self.explain_missing else None) or "no active plugin provides it"
        raise UserFacingError(f"MCP server {server_id!r} is unavailable ({why}).",
                              hint="Enable the plugin (`llmspace plugins enable NAME`); see `llmspace mcp list`.")

    def refuse_change(self, key: str) -> None:
        """Raise when `key` names a plugin server: those are edited through their plugin."""
        if not key.startswith(PLUGIN_PREFIX):
            try:
                self.settings.find(key)
                return
            except UserFacingError:
                pass
        cfg = next((c for c in self.plugin_servers() if key in (c.id, c.name, c.serverName)), None)
        server_id = cfg.id if cfg is not None else key
        plugin = plugin_of(server_id)
        if not plugin:
            return
        raise UserFacingError(f"MCP server {server_id!r} comes from plugin {plugin}; plugin MCP servers cannot be "
                              "edited or removed here.",
                              hint=f"Change it with `llmspace plugins settings {plugin}` or in the plugin's mcp.json, "
                                   f"or turn it off with `llmspace plugins disable {plugin}`.")

    # -- readiness -------------------------------------------------------------------------
    def readiness(self, cfg: McpServerConfig) -> Readiness:
        if not is_plugin_server(cfg):
            return cfg.effective_readiness()
        with self._lock:
            stored = self._readiness.get(cfg.id)
        return cfg.model_copy(update={"readiness": stored}).effective_readiness()

    def set_readiness(self, cfg: McpServerConfig, readiness: Readiness) -> None:
        if not is_plugin_server(cfg):
            self.settings.set_readiness(cfg.id, readiness)
            return
        with self._lock:
            self._readiness[cfg.id] = readiness

    def readiness_of(self, cfg: McpServerConfig) -> Readiness:
        """The current readiness of `cfg` as stored now (after a test)."""
        return self.readiness(cfg if is_plugin_server(cfg) else self.settings.find(cfg.id))

    # -- changes ---------------------------------------------------------------------------
    def watch(self, on_gone: Callable[[str], None]) -> Callable[[], None]:
        """Call `on_gone(server_id)` for each plugin server withdrawn or reconfigured;
        returns the function that stops watching."""
        with self._lock:
            self._known = {c.id: c.config_hash() for c in self.plugin_servers()}

        def changed() -> None:
            now = {c.id: c.config_hash() for c in self.plugin_servers()}
            with self._lock:
                gone = [sid for sid, h in self._known.items() if now.get(sid) != h]
                self._known = now
            for sid in gone:
                on_gone(sid)

        return self.registry.subscribe(changed)
