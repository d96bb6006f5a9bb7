"""Settings › Plugins screen logic (no Tk): the plugin list, one plugin's details
(metadata, extensions grouped by kind, diagnostics), its settings form with values and
per-field problems, and the actions (enable/disable, reload, refresh, install ZIPs,
remove). Actions that may start plugin hosts block: the view runs them in a worker.

    p = PluginsPagePresenter(app)
    p.rows()                       # PluginRow per installed plugin
    p.detail("atlas")              # PluginDetail: metadata, ExtensionGroup per kind, diagnostics
    p.form("atlas")                # FormView: fields in order, current values, problems by key
    p.save_setting("atlas", "greeting", "Hi")   # validated, saved, plugin reloaded; problems by key
    p.install([Path("atlas.zip")]) # InstallOutcome per ZIP (refusals keep their reason)

Delegates to `app.plugins` (llmspace/plugins/service.py) and `app.plugin_code`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from ..plugins.contract import APP_COMPAT_VERSION
from ..plugins.diagnostics import Diagnostic
from ..plugins.model import KINDS, PluginRecord, capability_summary
from ..plugins.package.extensions import Extension
from ..plugins.settings_form import FormField, SettingsForm, get_path
from ..redact import KNOWN

if TYPE_CHECKING:
    from ..app import App
    from ..plugins.service import Approver, PluginService

KIND_LABELS = {"skill": "Skills", "mcp": "MCP servers", "model-provider": "Model providers", "tool": "Tools",
               "command": "Commands", "thread-storage": "Thread storages", "settings": "Settings"}
# Symbols every common UI font has (emoji fonts are often missing on Linux).
KIND_ICONS = {"skill": "✎", "mcp": "⇄", "model-provider": "◉", "tool": "⚒", "command": "⌘",
              "thread-storage": "▤", "settings": "⚙"}


@dataclass(frozen=True)
class PluginRow:
    key: str
    name: str  # display name (or the ID)
    version: str
    status: str
    enabled: bool
    icon: Path | None
    dev: bool = False  # served in place by `llmspace plugins dev`

    @property
    def version_text(self) -> str:
        return f"{self.version or '-'}{' (dev)' if self.dev else ''}"


@dataclass(frozen=True)
class ExtensionGroup:
    kind: str
    label: str
    icon: str
    extensions: tuple[Extension, ...]

    @property
    def summary(self) -> str:
        failed = sum(1 for e in self.extensions if e.status == "failed")
        off = {e.status for e in self.extensions if e.status in ("disabled", "inactive")}
        notes = ([f"{failed} failed"] if failed else []) + sorted(off)
        return f"{self.icon} {self.label} ({len(self.extensions)}" + "".join(f", {n}" for n in notes) + ")"


@dataclass(frozen=True)
class PluginDetail:
    record: PluginRecord
    title: str
    description: str
    author: str
    homepage: str
    location: Path
    compatibility: str
    groups: tuple[ExtensionGroup, ...]
    diagnostics: tuple[Diagnostic, ...]
    has_form: bool
    capabilities: str = ""  # declared, granted, enforced (llmspace/plugins/hosts/sandbox.py)


@dataclass
class FormView:
    """The settings form of one plugin as the page shows it."""

    form: SettingsForm | None
    values: dict[str, Any]
    problems: dict[str, str] = field(default_factory=dict)  # field key ("" for the whole form) -> message
    error: str = ""  # why there is no form

    def fields(self) -> list[FormField]:
        return list(self.form.walk()) if self.form is not None else []

    def value(self, f: FormField) -> Any:
        return get_path(self.values, f.path)


@dataclass(frozen=True)
class InstallOutcome:
    zip_path: Path
    ok: bool
    message: str
    name: str = ""
    version: str = ""


def _by_key(problems: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in problems:
        key, _, message = line.partition(": ")
        out.setdefault("" if key == "(settings)" else key, message or line)
    return out


def _titled(form: SettingsForm | None, problems: dict[str, str]) -> dict[str, str]:
    """The problems as the form shows them: a field named by its title, not its key."""
    if form is None:
        return problems
    labels = {f.key: f.label for f in form.walk() if f.label != f.key}
    out = {}
    for key, message in problems.items():
        for k, label in labels.items():
            if message.startswith((f"{k} ", f"{k}:")):
                message = label + message[len(k):]
            message = message.replace(f"'{k}'", f"'{label}'")
        out[key] = message
    return out


class PluginsPagePresenter:
    def __init__(self, app: App) -> None:
        self.app = app

    @property
    def service(self) -> PluginService:
        return self.app.plugins

    def notices(self) -> list[str]:
        return list(self.service.notices())

    def rows(self) -> list[PluginRow]:
        out = []
        for r in self.service.records():
            m = r.manifest
            out.append(PluginRow(r.key, (m.display_name if m is not None and m.display_name else r.key), r.version,
                                 r.status, r.enabled, r.icon, r.dev))
        return out

    def _tested(self, extensions: tuple[Extension, ...]) -> tuple[Extension, ...]:
        """The extensions with an active MCP server whose last Connect & Test failed marked
        failed, with the error (the hub's readiness), instead of still reading active."""
        if not any(e.kind == "mcp" and e.status == "active" for e in extensions):
            return extensions
        try:
            readiness = {s.id: s.readiness for s in self.app.mcp.servers()}
        except Exception:  # MCP unavailable: the servers read as discovery found them
            return extensions
        out = []
        for e in extensions:
            r = readiness.get(e.canonical_id) if e.kind == "mcp" and e.status == "active" else None
            if r is not None and r.status == "error":
                e = replace(e, status="failed", reason=KNOWN.text(f"test failed: {r.lastError or 'not ready'}"))
            out.append(e)
        return tuple(out)

    def detail(self, name: str) -> PluginDetail:
        r = self.service.get(name)
        m = r.manifest
        extensions = self._tested(r.extensions)
        groups = []
        for kind in KINDS:
            exts = tuple(e for e in extensions if e.kind == kind)
            if exts:
                groups.append(ExtensionGroup(kind, KIND_LABELS.get(kind, kind), KIND_ICONS.get(kind, "•"), exts))
        if m is None:
            compat = "unknown (package.json could not be read)"
        else:
            verdict = "compatible" if r.compatible else "incompatible"
            compat = f"engines[\"llm-space\"] {m.engines_range!r}: {verdict} with LLM Space {APP_COMPAT_VERSION}"
        return PluginDetail(r, (m.display_name or r.key) if m else r.key, m.description if m else "",
                            m.author if m else "", m.homepage if m else "", r.folder, compat, tuple(groups),
                            r.diagnostics, r.has_settings_form, "\n".join(capability_summary(r)))

    # -- settings ------------------------------------------------------------------------
    def form(self, name: str) -> FormView:
        view = self.service.settings_view(name)
        if view.form is None:
            return FormView(None, view.values, error=view.form_error or "This plugin has no settings.")
        return FormView(view.form, copy.deepcopy(view.values), _titled(view.form, _by_key(view.problems)))

    def save_setting(self, name: str, key: str, value: Any) -> FormView:
        """Set one field (text from an entry is converted by the field's type; other values
        are used as they are), validate the whole form, and save and reload the plugin when
        it is valid. The returned view has the problems (nothing is saved when there are any)."""
        try:
            record, problems = self.service.apply_settings(name, [(key, value)])
        except UserFacingError as exc:  # the value does not convert to the field's type
            return self._with_problems(name, {key: exc.message})
        if record is None:
            return self._with_problems(name, _by_key(problems))
        self.app.plugin_code.ensure_loaded(name)
        return self.form(name)

    def _with_problems(self, name: str, problems: dict[str, str]) -> FormView:
        view = self.form(name)
        view.problems = _titled(view.form, problems)
        return view

    # -- actions (blocking: call from a worker) -------------------------------------------
    def set_enabled(self, name: str, enabled: bool) -> PluginRecord:
        (self.service.enable if enabled else self.service.disable)(name)
        self.app.plugin_code.ensure_loaded(name)
        return self.service.get(name)

    def reload(self, name: str) -> PluginRecord:
        self.service.reload(name)
        self.app.plugin_code.ensure_loaded(name)
        return self.service.get(name)

    def refresh(self) -> list[PluginRow]:
        self.service.refresh()
        self.app.plugin_code.load()
        return self.rows()

    def install(self, paths: Sequence[Path], approve: Approver | None = None) -> list[InstallOutcome]:
        """Install each ZIP; `approve(name, asked, legacy)` decides capabilities (without it,
        a plugin asking for any is installed "not approved")."""
        out = []
        for path in paths:
            try:
                result, record = self.service.install(path, approve)
                self.app.plugin_code.ensure_loaded(result.name)
                record = self.service.get(result.name)
            except UserFacingError as exc:
                out.append(InstallOutcome(Path(path), False, str(exc)))
                continue
            out.append(InstallOutcome(Path(path), True, f"{result.message} Status: {record.status}.",
                                      result.name, record.version))
        return out

    def remove(self, name: str) -> str:
        return str(self.service.remove(name))
