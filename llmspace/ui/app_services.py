"""The App as the UI parts outside the composition root see it: small protocols, each the few
typed services one part uses. The App satisfies them (its services are read-only cached
properties, so a part still builds a service only when it first uses it); the root
(`ui/main_window.py`) passes it, and a part can reach nothing else. Where a presenter needs
the App itself (`presenters/catalog.py`, `PluginsPagePresenter`, `RunPresenter`), the root
binds it and hands the part a callable or the presenter (`ui/editor/context.py`).

tests/ui/test_composition_root.py checks that no part outside the root takes `App`. The
provider registry and the runner read as `Any` here: `providers/` and `agent/` are not on
the `ui` row of the layer table (docs/architecture.md), not even for type hints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..core.workspace import Workspace
    from ..mcp.hub import McpHub
    from ..paths import DataRoot
    from ..plugins.code.plugin_code import PluginCode
    from ..registries import Registries
    from ..secrets import SecretStore
    from ..settings.models import ModelSettings
    from ..skills.manager import SkillManager


class HasRoot(Protocol):
    @property
    def root(self) -> DataRoot: ...


class ModelServices(HasRoot, Protocol):
    """The data root, the model settings and the providers: the first-run sheet, the Local
    models page and the welcome view (which looks whether `models` is loaded yet)."""

    @property
    def models(self) -> ModelSettings: ...

    @property
    def providers(self) -> Any: ...  # providers/registry.ProviderRegistry


class ModelsPageServices(ModelServices, Protocol):
    """The Models page also follows the provider registry (plugin providers come and go)."""

    @property
    def registries(self) -> Registries: ...


class SettingsServices(ModelsPageServices, Protocol):
    """The settings dialog: its pages' services, the workspace (its folder) and the data root's
    settings files."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def mcp(self) -> McpHub: ...

    @property
    def skills(self) -> SkillManager: ...

    @property
    def secrets(self) -> SecretStore: ...  # the Tracing page's Authorization header


class StorageServices(Protocol):
    """Import from and save to plugin thread storages, `llm-space://` links."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def plugin_code(self) -> PluginCode: ...


class EvalServices(Protocol):
    """The Evaluations menu: the workspace's threads, the provider a thread runs on, the runner."""

    @property
    def workspace(self) -> Workspace: ...

    @property
    def providers(self) -> Any: ...  # providers/registry.ProviderRegistry

    @property
    def runner(self) -> Any: ...  # agent/runner.Runner
