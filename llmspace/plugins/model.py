"""What discovery finds: `PluginRecord`, its `Extension`s and `Diagnostic`s.

Plain frozen values, built by llmspace/plugins/discovery.py and held by
llmspace/plugins/service.py (`app.plugins`); the CLI (llmspace/commands/plugins.py) and
later the GUI only read them.

Plugin status (docs/plugins.md, "Status, errors and logs"): `active` (enabled, every extension fine), `degraded`
(some extension failed), `error` (the plugin itself cannot load, or every extension failed),
`incompatible` (`engines["llm-space"]` excludes this app), `disabled` (by the user, by
`LLM_SPACE_DISABLE_PLUGINS=1`, or because `settings/plugins.json` is unreadable).
Extension status: `active`, `failed` (with a reason) or `inactive` (the plugin is not active).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .package.manifest import Manifest

Status = Literal["active", "degraded", "error", "incompatible", "disabled"]
# "disabled": its plugin is disabled (by the user or for the start); "inactive": its plugin is incompatible.
ExtensionStatus = Literal["active", "failed", "inactive", "disabled"]
Level = Literal["error", "warning"]

# Extension kinds, in display order, as they appear in canonical IDs.
KINDS = ("skill", "mcp", "model-provider", "tool", "command", "thread-storage", "settings")
# Kinds whose description the plugin's code reports when its host starts (not read from files).
CODE_KINDS = ("tool", "command", "thread-storage")
NOT_LOADED = "described by its code, which runs once the plugin is enabled"


@dataclass(frozen=True)
class Diagnostic:
    """One problem to show. Errors have an `error_id` and the `log_path` of the full report."""

    stage: str
    summary: str
    level: Level = "error"
    error_id: str = ""
    log_path: Path | None = None


@dataclass(frozen=True)
class Extension:
    """One contribution found at a guide path. `path` is the file or folder declaring it."""

    plugin: str
    kind: str
    id: str
    path: Path
    status: ExtensionStatus = "active"
    reason: str = ""
    description: str = ""
    error_id: str = ""
    log_path: Path | None = None

    @property
    def canonical_id(self) -> str:
        return f"plugin:{self.plugin}:{self.kind}:{self.id}"

    @property
    def shown_description(self) -> str:
        """The description; for a code extension of a plugin that is off and never reported
        one, why there is none (its code has not run)."""
        if self.description or self.kind not in CODE_KINDS or self.status not in ("disabled", "inactive"):
            return self.description
        return NOT_LOADED


@dataclass(frozen=True)
class PluginRecord:
    """One folder under `plugins/` and what became of it."""

    key: str  # the plugin ID; the folder path relative to plugins/ when there is no valid ID
    folder: Path
    manifest: Manifest | None
    status: Status
    enabled: bool = True
    disabled_reason: str = ""
    compatible: bool | None = None
    extensions: tuple[Extension, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = ()
    icon: Path | None = None  # None: the default plugin icon
    has_settings_form: bool = False
    granted: tuple[str, ...] | None = None  # settings/plugins.json; None: never asked
    pending: tuple[str, ...] | None = None  # asked for at install, not approved yet
    dev: bool = False  # served in place by `plugins dev` (llmspace/plugins/dev.py), not installed

    @property
    def capabilities(self) -> tuple[str, ...] | None:
        """What the plugin's code may do (llmspace/plugins/package/capabilities.py): the grant,
        else (a folder placed by hand) its declaration; None: a legacy plugin never asked,
        which runs unconfined as before."""
        if self.granted is not None:
            return self.granted
        return self.manifest.capabilities if self.manifest is not None else None

    @property
    def name(self) -> str:
        return self.manifest.name if self.manifest is not None else self.key

    @property
    def version(self) -> str:
        return self.manifest.version if self.manifest is not None else ""

    def counts(self) -> dict[str, int]:
        """Number of extensions per kind (kinds with none left out), in display order."""
        out: dict[str, int] = {}
        for kind in KINDS:
            n = sum(1 for e in self.extensions if e.kind == kind)
            if n:
                out[kind] = n
        return out

    def failed(self) -> list[Extension]:
        return [e for e in self.extensions if e.status == "failed"]
