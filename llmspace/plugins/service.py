"""`PluginService` (`app.plugins`): the installed plugins, their settings and status.

    plugins = PluginService(root)
    plugins.records()                  # scanned on first use; `refresh()` rescans plugins/
    plugins.get("@example/team-tools") # PluginError naming the installed ones when unknown
    plugins.reload(name)               # rediscover one plugin after its files changed
    plugins.enable(name) / plugins.disable(name)
    plugins.settings_view(name)        # form, current values (defaults + saved), problems
    plugins.update_settings(name, [("endpoint", "https://…"), ("net.timeout", "30")])
    plugins.install(zip, approve)      # approve(name, asked, legacy) decides the capabilities
    plugins.approve(name)              # grant what a "not approved" plugin asked for

Third-party plugins are off for this start when `LLM_SPACE_DISABLE_PLUGINS=1` or when
`settings/plugins.json` is corrupt (`notices()` says which; the file is kept as it is).
Settings live in llmspace/plugins/settings_store.py, loading in llmspace/plugins/discovery.py.
Listeners (`subscribe`) hear about every change of the records. The `annotators`
(llmspace/plugins/contributions/plugin_contributions.py, llmspace/plugins/code/plugin_code.py) add what activation found,
such as conflicts and code extensions that failed to load, to the records that `records()`,
`get()`, `reload()` and `refresh()` return; `loaded()` returns them as loaded.
"""

from __future__ import annotations

import copy
import json
import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json
from ..paths import DataRoot
from ..registry import Listeners
from .dev_entries import dev_candidates
from .diagnostics import DiagnosticLog
from .discovery import Candidate, LoadContext, load_plugin, scan, with_dev
from .errors import PluginError
from .model import PluginRecord
from .settings_form import SettingsForm, build_form, set_path
from .settings_store import PluginSettingsStore

if TYPE_CHECKING:
    from .package.install import InstallResult

ENV_DISABLE = "LLM_SPACE_DISABLE_PLUGINS"

Approver = Callable[[str, tuple[str, ...], bool], bool]
"""`approve(name, asked, legacy)`: True when the user grants `asked` to plugin `name`."""


@dataclass(frozen=True)
class SettingsView:
    """What a settings form shows: `form` (None without a usable schema), the current values
    (defaults merged with saved ones), what was saved, problems, and why there is no form."""

    record: PluginRecord
    form: SettingsForm | None
    values: dict[str, Any]
    saved: dict[str, Any]
    problems: tuple[str, ...] = ()
    form_error: str = ""


class PluginService:
    def __init__(self, root: DataRoot, *, environ: Mapping[str, str] | None = None) -> None:
        self.root = root
        self.environ: Mapping[str, str] = os.environ if environ is None else environ
        self.store = PluginSettingsStore(root.settings_file("plugins"))
        self.log = DiagnosticLog(root.root / "logs" / "plugins")
        self.disabled_by_env = self.environ.get(ENV_DISABLE, "").strip().lower() not in ("", "0", "false", "no")
        self._lock = threading.RLock()
        self._records: dict[str, PluginRecord] | None = None
        self._listeners = Listeners()
        self._recovery_error = ""
        # Each adds what activation found (conflicts, code extensions that failed to load).
        self.annotators: list[Callable[[PluginRecord], PluginRecord]] = []

    # -- state ---------------------------------------------------------------------------
    def disabled_reason(self) -> str:
        """Why third-party plugins are off for this start ("" when they are not)."""
        if self.disabled_by_env:
            return f"{ENV_DISABLE}=1: third-party plugins are skipped for this start"
        if self.store.corrupt:
            return "settings/plugins.json is corrupt: third-party plugins are disabled for this start"
        return ""

    def notices(self) -> list[str]:
        """Messages for the top of a plugin list: skipped plugins, a corrupt settings file."""
        out = []
        if self.disabled_by_env:
            out.append(f"{ENV_DISABLE}=1 is set: third-party plugins are skipped for this start.")
        if self._recovery_error:
            out.append(f"An interrupted plugin install could not be checked: {self._recovery_error}")
        if self.store.error:
            out.append(f"Plugin settings could not be read, so third-party plugins are disabled for this start "
                       f"and the file is left unchanged: {self.store.error}")
        return out

    def _context(self) -> LoadContext:
        return LoadContext(self.store.entry, self.log, self.disabled_reason(), self.environ)

    def _recover(self) -> None:
        """Finish or undo an install that a crash interrupted (llmspace/plugins/package/install.py)."""
        from .package.install import recover_interrupted

        try:
            recover_interrupted(self.root.plugins)
        except (OSError, PluginError) as exc:  # scan what is there; say so in notices()
            self._recovery_error = exc.message if isinstance(exc, PluginError) else str(exc)

    def refresh(self) -> list[PluginRecord]:
        """Rescan `plugins/` (additions, removals, renames) and reread plugins.json."""
        with self._lock:
            self.store.load()
            self._recover()
            ctx = self._context()
            candidates = with_dev(scan(self.root.plugins), dev_candidates(self.root))
            self._records = {c.key: load_plugin(c, ctx) for c in candidates}
            records = list(self._records.values())
        self._changed()
        return [self._shown(r) for r in records]

    def _shown(self, record: PluginRecord) -> PluginRecord:
        for annotate in self.annotators:
            record = annotate(record)
        return record

    def loaded(self) -> list[PluginRecord]:
        """The records as loaded, without `annotate` (scanned on first use)."""
        with self._lock:
            if self._records is None:
                self.refresh()
            assert self._records is not None
            return list(self._records.values())

    def records(self) -> list[PluginRecord]:
        return [self._shown(r) for r in self.loaded()]

    def get(self, name: str) -> PluginRecord:
        with self._lock:
            self.loaded()
            assert self._records is not None
            found = self._records.get(name)
        if found is None:
            known = ", ".join(sorted(self._records)) or "none"
            raise PluginError(f"No plugin {name!r} is installed.", hint=f"Installed plugins: {known}. "
                              "After copying a plugin folder, run `llmspace plugins refresh`.")
        return self._shown(found)

    def load_candidate(self, cand: Candidate) -> PluginRecord:
        """Load one folder as a scan would, without keeping it (dev mode's trial of a change)."""
        return load_plugin(cand, self._context())

    def reload(self, name: str) -> PluginRecord:
        """Rediscover one plugin (after its files, metadata or settings changed)."""
        record = self.get(name)
        with self._lock:
            assert self._records is not None
            if not record.folder.exists() and not record.folder.is_symlink():
                del self._records[name]
                self._changed()
                raise PluginError(f"Plugin {name!r} is no longer installed (plugins/{name} is gone).")
            fresh = load_plugin(Candidate(record.key, record.folder, dev=record.dev), self._context())
            self._records[name] = fresh
        self._changed()
        return self._shown(fresh)

    # -- changes -------------------------------------------------------------------------
    def _require_valid(self, name: str) -> PluginRecord:
        record = self.get(name)
        if record.manifest is None or record.manifest.name != record.key:
            raise PluginError(f"Plugin {name!r} could not be loaded; fix it first.",
                              hint=f"See `llmspace plugins info {name}`.")
        return record

    def enable(self, name: str) -> PluginRecord:
        """Enable `name`; one installed "not approved" is approved by it (its reason, shown
        where it is enabled, names what it asks for), so it never runs ungranted."""
        self._require_valid(name)
        if self.store.entry(name).pending is not None:
            return self.approve(name)
        self.store.set_enabled(name, True)
        return self.reload(name)

    def disable(self, name: str) -> PluginRecord:
        """Disable `name`; its settings are kept."""
        self._require_valid(name)
        self.store.set_enabled(name, False)
        return self.reload(name)

    def settings_view(self, name: str) -> SettingsView:
        record = self._require_valid(name)
        saved = self.store.entry(name).settings
        ext = next((e for e in record.extensions if e.kind == "settings"), None)
        if ext is None:
            return SettingsView(record, None, saved, saved)
        try:
            form = build_form(read_json(ext.path, max_bytes=SETTINGS_MAX_BYTES))
        except UserFacingError as exc:
            return SettingsView(record, None, saved, saved, form_error=exc.message)
        values = form.merge(saved)
        return SettingsView(record, form, values, saved, tuple(form.problems(values)))

    def update_settings(self, name: str, assignments: list[tuple[str, str]]) -> PluginRecord:
        """Set `key=value` pairs (dotted keys for nested fields), each converted by its field
        type (without a schema: JSON when it parses, else text); validate, save, reload."""
        record, problems = self.apply_settings(name, list(assignments))
        if record is None:
            raise PluginError(f"Settings of {name!r} were not saved: " + "; ".join(problems[:5]) + ".")
        return record

    def apply_settings(self, name: str, changes: list[tuple[str, Any]]) -> tuple[PluginRecord | None, list[str]]:
        """Set fields (dotted keys): text is converted by the field's type (without a schema:
        JSON when it parses, else text), other values are used as they are. The whole form is
        validated; only a valid result is saved and the plugin reloaded. Returns the reloaded
        record and no problems, or None and the problems ("key: message"; nothing saved).
        Raises PluginError for a disabled form, an unknown key or a value that does not convert."""
        view = self.settings_view(name)
        if view.form_error:
            raise PluginError(f"The settings form of {name!r} is disabled: {view.form_error}",
                              hint="Fix config.schema.json and reload the plugin; saved settings were not changed.")
        saved = copy.deepcopy(view.saved)
        for key, value in changes:
            path = tuple(key.split("."))
            if not key or any(not p for p in path):
                raise PluginError(f"{key!r} is not a setting name.")
            if isinstance(value, str):
                value = view.form.convert(key, value) if view.form is not None else _guess(value)
            set_path(saved, path, value)
        if view.form is not None:
            problems = view.form.problems(view.form.merge(saved))
            if problems:
                return None, problems
        self.store.set_settings(name, saved)
        return self.reload(name), []

    # -- packages (llmspace/plugins/package/install.py) -----------------------------------------------
    def install(self, zip_path: str | Path, approve: Approver | None = None) -> tuple[InstallResult, PluginRecord]:
        """Install or update the plugin in a ZIP, settle its capabilities, then rescan; returns
        the result and record. What it asks for (its declaration, else what its code appears to
        use) is granted without asking when it is nothing or no more than an earlier grant;
        otherwise `approve(name, asked, legacy)` decides, and a plugin not approved (or
        without `approve`) is installed disabled as "not approved"."""
        from .package.install import install_zip

        result = install_zip(zip_path, self.root.plugins)
        if not self.store.corrupt:
            self._settle_grant(result.name, result.path, approve)
        self.refresh()
        return result, self.get(result.name)

    def asked(self, name: str, folder: Path) -> tuple[tuple[str, ...], bool]:
        """What the plugin in `folder` asks for, and whether it is a legacy plugin (no declaration)."""
        from .package.capabilities import requested
        from .package.manifest import parse_manifest

        manifest = parse_manifest((folder / "package.json").read_bytes(), where=f"plugins/{name}/package.json")
        return requested(manifest.raw, folder), manifest.capabilities is None

    def _settle_grant(self, name: str, folder: Path, approve: Approver | None) -> None:
        asked, legacy = self.asked(name, folder)
        entry = self.store.entry(name)
        if entry.granted is not None and set(asked) <= set(entry.granted) and entry.pending is None:
            return  # an update asking for no more than was granted
        if not asked or (approve is not None and approve(name, asked, legacy)):
            self.store.set_grant(name, asked, enabled=entry.enabled or entry.pending is not None)
        else:
            self.store.set_pending(name, asked)

    def approve(self, name: str) -> PluginRecord:
        """Grant what `name` asked for (pending, else its declaration or inferred use) and enable it."""
        record = self._require_valid(name)
        entry = self.store.entry(name)
        asked = entry.pending if entry.pending is not None else self.asked(name, record.folder)[0]
        self.store.set_grant(name, asked, enabled=True)
        return self.reload(name)

    def remove(self, name: str) -> str:
        """Move plugin `name` to the trash (its settings and data stay); returns where it went."""
        from .package.install import remove_plugin

        where = remove_plugin(self.root.plugins, name, trash_dir=self.root.trash)
        self.refresh()
        return where

    # -- listeners -----------------------------------------------------------------------
    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call `listener()` after every change; returns the function that unsubscribes."""
        return self._listeners.add(listener)

    def _changed(self) -> None:
        self._listeners.notify()

    def notify_changed(self) -> None:
        """Tell the listeners that what `records()` shows changed (e.g. code extensions loaded)."""
        self._changed()


def _guess(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text
