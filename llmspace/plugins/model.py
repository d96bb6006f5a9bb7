"""What discovery finds: `PluginRecord`, its `Extension`s (llmspace/plugins/package/extensions.py)
and `Diagnostic`s (llmspace/plugins/diagnostics.py);
`capability_summary(record)`, the lines `plugins info` and the plugin page show of its capabilities.

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

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from .diagnostics import Diagnostic
from .hosts.sandbox import enforcement
from .package.extensions import Extension
from .package.manifest import Manifest

Status = Literal["active", "degraded", "error", "incompatible", "disabled"]

# Extension kinds, in display order, as they appear in canonical IDs.
KINDS = ("skill", "mcp", "model-provider", "tool", "command", "thread-storage", "settings")


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


def capability_summary(r: PluginRecord, environ: Mapping[str, str] | None = None) -> list[str]:
    """What `plugins info` and the plugin page show: declared, granted, enforced."""
    m = r.manifest
    if m is None:
        return []
    declared = "not declared (a legacy plugin)" if m.capabilities is None else ", ".join(m.capabilities) or "none"
    lines = [f"declared:    {declared}"]
    if r.pending is not None:
        lines.append(f"granted:     nothing yet; asks for {', '.join(r.pending) or 'none'} "
                     f"(llmspace plugins approve {r.key})")
    elif r.granted is not None:
        lines.append(f"granted:     {', '.join(r.granted) or 'none'}")
    else:
        lines.append("granted:     " + ("never asked: it runs unconfined as before (a folder placed by hand)"
                                      if r.capabilities is None else "its declaration (a folder placed by hand)"))
    return lines + enforcement(r.capabilities, environ)
