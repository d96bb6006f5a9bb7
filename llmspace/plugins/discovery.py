"""Find plugin folders under `plugins/` and load one into a `PluginRecord`.

`scan(plugins_dir)` lists candidates: `plugins/<name>` and `plugins/@scope/<name>` (one and
two levels, never deeper; `node_modules` and hidden entries skipped). `load_plugin`
checks the folder (real folder, `package.json` a regular file, no hard link to a file outside
it: llmspace/plugins/package/hardlinks.py), the manifest
(llmspace/plugins/package/manifest.py), that the folder equals `package.json.name`, engines,
`icon.png`, the extensions (llmspace/plugins/package/extensions.py) and the settings form with
the saved values (llmspace/plugins/settings_form.py). The values of secret settings are added to
the process's known secrets (`redact.KNOWN`) at every load, so a plugin that prints, logs
or raises with one shows `***`. It never imports or runs plugin code.
Failures are written to diagnostic logs (llmspace/plugins/diagnostics.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_file_bytes, read_json
from ..redact import KNOWN, Redactor
from .contract import APP_COMPAT_VERSION
from .diagnostics import Diagnostic, DiagnosticLog, sanitizer
from .errors import PluginError
from .model import PluginRecord, Status
from .package.extensions import Extension, ExtensionStatus, find_extensions, path_problem, real_kind
from .package.hardlinks import HINT, hard_link_problem
from .package.icon import icon_problem
from .package.interpolate import env_references
from .package.manifest import Manifest, engines_compatible, is_valid_package_name, parse_manifest
from .settings_form import SettingsForm, build_form
from .settings_store import PluginEntry

MANIFEST_MAX_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Candidate:
    key: str  # the folder relative to plugins/: "weather-kit" or "@scope/team-tools"
    folder: Path
    dev: bool = False  # a folder served in place by `plugins dev` (key: its package.json name)


def _skip(name: str) -> bool:
    return name == "node_modules" or name.startswith(".")


def scan(plugins_dir: Path) -> list[Candidate]:
    """Plugin folder candidates, sorted by key. Plain files in plugins/ are not plugins."""
    out: list[Candidate] = []
    try:
        entries = sorted(os.scandir(plugins_dir), key=lambda e: e.name)
    except OSError:
        return out
    for entry in entries:
        if _skip(entry.name) or (entry.is_file(follow_symlinks=False)):
            continue
        path = Path(entry.path)
        if entry.name.startswith("@") and real_kind(path) == "folder":
            try:
                inner = sorted(os.scandir(path), key=lambda e: e.name)
            except OSError:
                inner = []
            out += [Candidate(f"{entry.name}/{e.name}", Path(e.path)) for e in inner
                    if not _skip(e.name) and not e.is_file(follow_symlinks=False)]
        else:
            out.append(Candidate(entry.name, path))
    return out


@dataclass
class LoadContext:
    """What loading needs from the service: the stored entry, a reason to keep third-party
    plugins off for this start, the log writer and the environment."""

    entry_of: Callable[[str], PluginEntry]
    log: DiagnosticLog
    disabled_reason: str = ""
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)


def _failed(cand: Candidate, ctx: LoadContext, summary: str, manifest: Manifest | None = None,
            exc: BaseException | None = None) -> PluginRecord:
    valid = is_valid_package_name(cand.key)
    diag = ctx.log.write(cand.key if valid else None, "discovery", summary, exc=exc,
                         where=f"plugins/{cand.key}", redactor=sanitizer(environ=ctx.environ))
    compatible = engines_compatible(manifest.engines_range) if manifest is not None else None
    return PluginRecord(cand.key, cand.folder, manifest, "error", compatible=compatible, diagnostics=(diag,))


def _read_manifest(cand: Candidate, ctx: LoadContext) -> Manifest | PluginRecord:
    root = cand.folder
    kind = real_kind(root)
    if kind == "symlink":
        return _failed(cand, ctx, f"plugins/{cand.key} is a symbolic link; plugin folders must be real folders.")
    if kind != "folder":
        return _failed(cand, ctx, f"plugins/{cand.key} is not a folder.")
    pkg = root / "package.json"
    if real_kind(pkg) is None:
        return _failed(cand, ctx, f"plugins/{cand.key} has no package.json.")
    problem = path_problem(root, pkg, "file")
    if problem:
        return _failed(cand, ctx, f"plugins/{cand.key}: {problem}.")
    where = f"plugins/{cand.key}/package.json"
    try:
        manifest = parse_manifest(read_file_bytes(pkg, max_bytes=MANIFEST_MAX_BYTES, shown=where), where=where)
    except UserFacingError as exc:
        return _failed(cand, ctx, exc.message, exc=exc)
    if manifest.name != cand.key:
        return _failed(cand, ctx, f"plugins/{cand.key}: the folder must match package.json name "
                                  f"{manifest.name!r} (expected plugins/{manifest.name}).", manifest)
    linked = hard_link_problem(root)
    if linked:
        return _failed(cand, ctx, f"plugins/{cand.key}: {linked}. {HINT}", manifest)
    return manifest


def _referenced_env(root: Path) -> set[str]:
    names: set[str] = set()
    for fname in ("mcp.json", "models.json"):
        path = root / fname
        if real_kind(path) == "file":
            try:
                names |= env_references(read_json(path, max_bytes=SETTINGS_MAX_BYTES))
            except UserFacingError:
                pass
    return names


def _form(ext: Extension, entry: PluginEntry) -> tuple[Extension, SettingsForm | None, list[str]]:
    """The settings extension checked: schema → form, saved values validated."""
    try:
        schema = read_json(ext.path, max_bytes=SETTINGS_MAX_BYTES)
        form = build_form(schema)
    except UserFacingError as exc:
        return replace(ext, status="failed", reason=f"settings form disabled: {exc.message}"), None, []
    secrets = form.secret_values(form.merge(entry.settings))
    problems = form.problems(form.merge(entry.settings))
    described = replace(ext, description=form.description)
    if problems:
        why = "saved settings do not match config.schema.json: " + "; ".join(problems[:3])
        return replace(described, status="failed", reason=why), form, secrets
    return described, form, secrets


def not_approved(name: str, pending: tuple[str, ...]) -> str:
    """The disabled reason of a plugin whose capabilities were not approved."""
    asked = ", ".join(pending) or "no capabilities"
    return f"not approved: it asks for {asked}; approve with: llmspace plugins approve {name}"


def _status(extensions: list[Extension], enabled: bool, compatible: bool) -> Status:
    if not enabled:
        return "disabled"
    if not compatible:
        return "incompatible"
    failed = sum(1 for e in extensions if e.status == "failed")
    if failed and failed == len(extensions):
        return "error"
    return "degraded" if failed else "active"


def _log_failures(name: str, extensions: list[Extension], ctx: LoadContext,
                  redactor: Redactor) -> tuple[list[Extension], list[Diagnostic]]:
    out, diags = [], []
    for ext in extensions:
        if ext.status == "failed":
            stage = "settings" if ext.kind == "settings" else "discovery"
            summary = f"{ext.kind} {ext.id}: {ext.reason}"
            diag = ctx.log.write(name, stage, summary, redactor=redactor,
                                 detail=f"extension: {ext.canonical_id}\nfile: {ext.path}")
            ext = replace(ext, reason=diag.summary.split(": ", 1)[-1], error_id=diag.error_id, log_path=diag.log_path)
            diags.append(diag)
        out.append(ext)
    return out, diags


def load_plugin(cand: Candidate, ctx: LoadContext) -> PluginRecord:
    """The record of one candidate folder. Never raises for a broken plugin."""
    record = _load_plugin(cand, ctx)
    return replace(record, dev=True) if cand.dev else record


def with_dev(installed: list[Candidate], dev: list[Candidate]) -> list[Candidate]:
    """The installed candidates with the dev ones added; a dev plugin shadows the installed
    plugin of its name."""
    names = {c.key for c in dev}
    return sorted([*(c for c in installed if c.key not in names), *dev], key=lambda c: c.key)


def _load_plugin(cand: Candidate, ctx: LoadContext) -> PluginRecord:
    got = _read_manifest(cand, ctx)
    if isinstance(got, PluginRecord):
        return got
    manifest, root = got, cand.folder
    entry: PluginEntry = ctx.entry_of(manifest.name)
    diagnostics: list[Diagnostic] = []
    icon: Path | None = None
    if real_kind(root / "icon.png") is not None:
        problem = icon_problem(root / "icon.png")
        if problem:
            diagnostics.append(Diagnostic("discovery", f"{problem}; the default icon is shown", "warning"))
        else:
            icon = root / "icon.png"
    try:
        extensions, warnings = find_extensions(root, manifest.name)
    except OSError as exc:  # a folder vanished or became unreadable while scanning
        raise PluginError(f"plugins/{cand.key} could not be read: {exc.strerror or exc}.") from exc
    diagnostics += [Diagnostic("discovery", w, "warning") for w in warnings]
    form: SettingsForm | None = None
    secrets: list[str] = []
    for i, ext in enumerate(extensions):
        if ext.kind == "settings" and ext.status == "active":
            extensions[i], form, secrets = _form(ext, entry)
    KNOWN.add(secrets)  # every log line, error and trace of the process masks them from now on
    redactor = sanitizer(secrets, _referenced_env(root), ctx.environ)
    extensions, errors = _log_failures(manifest.name, extensions, ctx, redactor)
    diagnostics = errors + diagnostics
    compatible = engines_compatible(manifest.engines_range)
    enabled = entry.enabled and not ctx.disabled_reason
    status = _status(extensions, enabled, compatible)
    if status in ("disabled", "incompatible"):
        off: ExtensionStatus = "disabled" if status == "disabled" else "inactive"
        extensions = [e if e.status == "failed" else replace(e, status=off) for e in extensions]
    if not compatible:
        diagnostics.insert(0, Diagnostic("discovery", f"engines[\"llm-space\"] {manifest.engines_range!r} does not "
                                                      f"include LLM Space {APP_COMPAT_VERSION}", "warning"))
    reason = ctx.disabled_reason or ("" if entry.enabled else not_approved(manifest.name, entry.pending)
                                     if entry.pending is not None else "disabled by the user")
    return PluginRecord(manifest.name, root, manifest, status, enabled=entry.enabled, disabled_reason=reason,
                        granted=entry.granted, pending=entry.pending,
                        compatible=compatible, extensions=tuple(extensions), diagnostics=tuple(diagnostics),
                        icon=icon, has_settings_form=form is not None)
