"""`Registries`: every extension registry of one app, on one typed object (`app.registries`).

    registries = Registries.create()
    registries.apis.register("my-api", ModelApi(create=…), source=plugin_source("acme"))
    registries.conflicts()          # every collision, of every kind, for the Plugins page

Each field is a `Registry` of the one mechanism in `llmspace/registry.py` (canonical IDs,
sources `built-in` / `user` / `plugin:<name>`, collisions make every party inactive):

- `apis`           model API name -> `providers.base.ModelApi` (adapter factory + capabilities)
- `providers`      provider id -> `providers.registry.ProviderEntry`
- `tools`          tool canonical ID -> executor (`tools/router.py`; built-ins are
                   `builtin:tool:<name>`, plugins `plugin:<name>:tool:<stem>`)
- `skill_sources`  skill folder ID -> folder (`skills/manager.py`; plugins add folders)
- `mcp_servers`    MCP server id -> `settings.mcp.McpServerConfig` (user servers of mcp.json;
                   plugins add `plugin:<name>:mcp:<id>`)
- `commands`       palette command ID -> `PaletteCommand` (filled by plugins)
- `thread_storages` thread storage ID -> `ThreadStorage` (filled by plugins)

Built by `app.py` and handed to the services that fill them (`ProviderRegistry`, `ToolRouter`,
`SkillManager`); the plugin services register into the same objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from .registry import Conflict, Registry

if TYPE_CHECKING:
    from .providers.base import ModelApi
    from .providers.registry import ProviderEntry
    from .settings.mcp import McpServerConfig
    from .tools.router import Executor


class PaletteCommand(Protocol):
    """A command the palette lists and runs (built-in menu commands now; plugin commands,
    which also take the rest of the palette line as arguments, come with the plugin host)."""

    @property
    def display_name(self) -> str: ...

    def run(self) -> object: ...


@dataclass(frozen=True)
class BuiltinCommand:
    """A menu command of the desktop app, registered as `builtin:command:<menu>/<label>`."""

    display_name: str
    action: Callable[[], object]
    shortcut: str = ""

    def run(self) -> object:
        return self.action()


class ThreadStorage(Protocol):
    """A place threads can be imported from or saved to (the plugin issue defines its calls)."""

    @property
    def display_name(self) -> str: ...


@dataclass(frozen=True)
class Registries:
    apis: Registry[ModelApi]
    providers: Registry[ProviderEntry]
    tools: Registry[Executor]
    skill_sources: Registry[Path]
    mcp_servers: Registry[McpServerConfig]
    commands: Registry[PaletteCommand]
    thread_storages: Registry[ThreadStorage]

    @classmethod
    def create(cls) -> Registries:
        """Empty registries; the services that own each kind register the built-ins."""
        return cls(apis=Registry("model API"), providers=Registry("model provider"), tools=Registry("tool"),
                   skill_sources=Registry("skill source"), mcp_servers=Registry("MCP server"),
                   commands=Registry("command"), thread_storages=Registry("thread storage"))

    def conflicts(self) -> list[Conflict]:
        """Every collision in every registry."""
        out: list[Conflict] = []
        for f in fields(self):
            registry: Registry[object] = getattr(self, f.name)
            out.extend(registry.conflicts())
        return out

    def unregister_source(self, source: str) -> int:
        """Remove everything `source` (a disabled plugin) registered, in every registry."""
        removed = 0
        for f in fields(self):
            registry: Registry[object] = getattr(self, f.name)
            removed += registry.unregister_source(source)
        return removed
