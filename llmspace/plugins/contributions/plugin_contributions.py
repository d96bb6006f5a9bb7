"""`PluginContributions`: what active plugins add to the app's registries, kept in step
with `PluginService` (docs/plugins.md, "Contributions").

    contributions = PluginContributions(app.plugins, app.registries, skills=lambda: app.skills)
    contributions.attach()     # first sync, then follow every change of the plugin records

For each active (or degraded) plugin, with source `plugin:<name>`:

- `skills/` → one folder of the `skill_sources` registry (`plugin:<name>:skills:<folder>`);
  `skills/manager.py` scans it, applies the per-skill choices kept in `skills.json` and
  makes name clashes with other sources inactive;
- `mcp.json` servers → `mcp_servers` (`plugin:<name>:mcp:<id>`, llmspace/plugins/contributions/config_files.py);
- `models.json` providers → `providers` (`plugin:<name>:model-provider:<id>`).

A plugin whose record was reloaded (enable, disable, settings change, reload, refresh) has
its contributions withdrawn first, so the MCP hub closes its connections, and registered
again from its files and current settings if it is still active. A plugin that is
disabled or gone contributes nothing. Only these three registries are touched; code
extensions (tools, commands, thread storages) are registered elsewhere.

`annotate(record)` (one of `PluginService.annotators`) marks contributions that are
inactive because of a conflict (registry collision, skill name clash) or an unusable entry
as failed extensions, naming the files, with a diagnostic log; `explain_missing(id)` says
why a plugin MCP server or provider ID names nothing ("plugin x is disabled").
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...registry import Registry, plugin_source
from ..diagnostics import Diagnostic
from ..errors import PluginError
from ..model import PluginRecord, Status
from .config_files import files_of, mcp_servers, model_providers

if TYPE_CHECKING:
    from ...registries import Registries
    from ...skills.manager import SkillManager
    from ..service import PluginService

USABLE = ("active", "degraded")


class PluginContributions:
    def __init__(self, service: PluginService, registries: Registries, *,
                 skills: Callable[[], SkillManager] | None = None) -> None:
        self.service = service
        self.registries = registries
        self.skills = skills
        self._lock = threading.RLock()
        self._seen: dict[str, PluginRecord] = {}
        self._problems: dict[str, dict[str, str]] = {}  # plugin -> canonical ID -> why it is not registered
        self._unsubscribe: Callable[[], None] | None = None

    def _registries(self) -> tuple[Registry[Any], ...]:
        r = self.registries
        return (r.skill_sources, r.mcp_servers, r.providers)

    # -- lifecycle -------------------------------------------------------------------------
    def attach(self) -> None:
        """Register what the plugins contribute now and follow every later change. (The
        first sync runs before `annotate` is installed: annotating scans skills, which may
        be what is being built.)"""
        self._unsubscribe = self.service.subscribe(self.sync)
        self.sync()
        self.service.annotators.append(self.annotate)

    def detach(self) -> None:
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None

    def sync(self) -> None:
        """Withdraw and re-register the plugins whose records changed; withdraw the gone ones."""
        with self._lock:
            records = {r.key: r for r in self.service.loaded() if r.manifest is not None}
            for name in [n for n in self._seen if n not in records]:
                self._withdraw(name)
                del self._seen[name]
            for name, record in records.items():
                if self._seen.get(name) is record:
                    continue
                self._seen[name] = record
                self._withdraw(name)
                if record.status in USABLE:
                    self._activate(record)

    def _withdraw(self, name: str) -> None:
        source = plugin_source(name)
        for registry in self._registries():
            registry.unregister_source(source)
        self._problems.pop(name, None)

    def _settings(self, record: PluginRecord) -> dict[str, Any]:
        try:
            return self.service.settings_view(record.key).values
        except PluginError:
            return self.service.store.entry(record.key).settings

    def _activate(self, record: PluginRecord) -> None:
        source = plugin_source(record.key)
        if any(e.kind == "skill" and e.status == "active" for e in record.extensions):
            folder = (record.folder / "skills").absolute()
            self.registries.skill_sources.register(f"{source}:skills:{folder}", folder, source=source,
                                                   files=(str(folder),))
        settings = self._settings(record)
        environ = self.service.environ
        servers, problems = mcp_servers(record, settings, environ)
        providers, more = model_providers(record, settings, environ)
        mcp_files, model_files = files_of(record, "mcp.json"), files_of(record, "models.json")
        self.registries.mcp_servers.replace_source(source, servers, dict.fromkeys(servers, mcp_files))
        self.registries.providers.replace_source(source, providers, dict.fromkeys(providers, model_files))
        self._problems[record.key] = {**problems, **more}

    # -- questions -------------------------------------------------------------------------
    def explain_missing(self, canonical_id: str) -> str | None:
        """Why `plugin:<name>:<kind>:<id>` is not registered, or None when it is not a plugin ID."""
        if not canonical_id.startswith("plugin:"):
            return None
        name = canonical_id[len("plugin:"):].split(":", 1)[0]
        record = next((r for r in self.service.loaded() if r.key == name), None)
        if record is None:
            return f"plugin {name} is not installed"
        if record.status == "disabled":
            return f"plugin {name} is disabled" + (f": {record.disabled_reason}" if record.disabled_reason
                                                   and record.disabled_reason != "disabled by the user" else "")
        if record.status not in USABLE:
            return f"plugin {name} is {record.status}; see `llmspace plugins info {name}`"
        why = self._problems.get(name, {}).get(canonical_id)
        if why:
            return why
        ext = next((e for e in record.extensions if e.canonical_id == canonical_id), None)
        if ext is None:
            return f"plugin {name} does not declare it"
        return ext.reason or f"see `llmspace plugins info {name}`"

    def _reasons(self, record: PluginRecord) -> dict[str, str]:
        source = plugin_source(record.key)
        reasons = dict(self._problems.get(record.key, {}))
        for registry in self._registries():
            for conflict in registry.conflicts():
                if source in conflict.sources:
                    reasons[conflict.canonical_id] = conflict.message
        if self.skills is not None and any(e.kind == "skill" for e in record.extensions):
            by_file = {Path(e.path).absolute(): e.canonical_id for e in record.extensions if e.kind == "skill"}
            for skill in self.skills().list():
                cid = by_file.get(skill.file.absolute())
                if skill.origin == source and skill.conflict and cid:
                    reasons[cid] = skill.conflict
        return reasons

    def annotate(self, record: PluginRecord) -> PluginRecord:
        """`record` with its inactive contributions marked failed (reason, error-id, log)."""
        if record.status not in USABLE or record.manifest is None:
            return record
        with self._lock:
            reasons = self._reasons(record)
        if not reasons:
            return record
        extensions, diagnostics = [], []
        for ext in record.extensions:
            why = reasons.get(ext.canonical_id)
            if why and ext.status == "active":
                diag: Diagnostic = self.service.log.write(record.key, "activation", f"{ext.kind} {ext.id}: {why}",
                                                          detail=f"extension: {ext.canonical_id}\nfile: {ext.path}")
                ext = replace(ext, status="failed", reason=why, error_id=diag.error_id, log_path=diag.log_path)
                diagnostics.append(diag)
            extensions.append(ext)
        failed = sum(1 for e in extensions if e.status == "failed")
        status: Status = "error" if failed == len(extensions) else "degraded"
        return replace(record, status=status, extensions=tuple(extensions),
                       diagnostics=tuple(diagnostics) + record.diagnostics)
