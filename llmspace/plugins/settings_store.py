"""`settings/plugins.json`: per plugin `enabled` and `settings` (docs/plugins.md, "Settings").

    {"schemaVersion": 1, "plugins": {"@example/team-tools": {"enabled": true, "settings": {…},
                                                             "capabilities": ["network"]}}}

`capabilities` holds what the user granted (docs/plugins.md, "Capabilities"); without it
nothing was asked (a folder placed by hand: its declaration counts). `pendingCapabilities`
holds what an install asked for and the user has not approved yet (the plugin is disabled
as "not approved" until `plugins approve NAME`).

A plugin without an entry is enabled with `{}`. Changes are written with
`jsonio.write_json_atomic`; unknown keys are kept; disabling or removing a plugin keeps its
settings. A file that cannot be read or has the wrong shape is *corrupt*: `error` says why,
third-party plugins are disabled for this start (llmspace/plugins/service.py), and the
file is never written (changes raise `PluginError`) so its bytes stay as they are.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from .errors import PluginError

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class PluginEntry:
    enabled: bool = True
    settings: dict[str, Any] = field(default_factory=dict)
    granted: tuple[str, ...] | None = None
    pending: tuple[str, ...] | None = None


def _shape_problem(data: Any) -> str | None:
    if not isinstance(data, dict):
        return "the file must hold a JSON object"
    if data.get("schemaVersion", SCHEMA_VERSION) != SCHEMA_VERSION:
        return f"schemaVersion {data.get('schemaVersion')!r} is not supported (expected {SCHEMA_VERSION})"
    plugins = data.get("plugins", {})
    if not isinstance(plugins, dict):
        return "\"plugins\" must be an object"
    for name, entry in plugins.items():
        if not isinstance(entry, dict):
            return f"the entry of {name!r} must be an object"
        if not isinstance(entry.get("enabled", True), bool):
            return f"\"enabled\" of {name!r} must be true or false"
        if not isinstance(entry.get("settings", {}), dict):
            return f"\"settings\" of {name!r} must be an object"
        for key in ("capabilities", "pendingCapabilities"):
            value = entry.get(key, [])
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                return f"\"{key}\" of {name!r} must be a list of names"
    return None


class PluginSettingsStore:
    """Reads `settings/plugins.json` once (`load`) and writes each change atomically."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._data: dict[str, Any] = {}
        self.error: str | None = None
        self._loaded = False

    def load(self) -> None:
        """(Re-)read the file; a corrupt file sets `error` and is left alone."""
        with self._lock:
            self._loaded = True
            self._data, self.error = {}, None
            if not self.path.exists() and not self.path.is_symlink():
                return
            try:
                data = read_json(self.path, max_bytes=SETTINGS_MAX_BYTES)
            except UserFacingError as exc:
                self.error = str(exc)
                return
            problem = _shape_problem(data)
            if problem is not None:
                self.error = f"{self.path}: {problem}."
                return
            self._data = data

    def _ensure(self) -> None:
        if not self._loaded:
            self.load()

    @property
    def corrupt(self) -> bool:
        with self._lock:
            self._ensure()
            return self.error is not None

    def entry(self, name: str) -> PluginEntry:
        """The stored entry of `name` (a copy), or the default one."""
        with self._lock:
            self._ensure()
            raw = self._data.get("plugins", {}).get(name)
            if not isinstance(raw, dict):
                return PluginEntry()
            granted, pending = raw.get("capabilities"), raw.get("pendingCapabilities")
            return PluginEntry(bool(raw.get("enabled", True)), copy.deepcopy(raw.get("settings", {})),
                               tuple(granted) if isinstance(granted, list) else None,
                               tuple(pending) if isinstance(pending, list) else None)

    def names(self) -> list[str]:
        with self._lock:
            self._ensure()
            return list(self._data.get("plugins", {}))

    def _update(self, name: str, key: str, value: Any) -> None:
        self._update_many(name, {key: value})

    def _update_many(self, name: str, changes: dict[str, Any]) -> None:
        """Set keys of `name`'s entry; a value of None removes the key."""
        with self._lock:
            self._ensure()
            if self.error is not None:
                raise PluginError(f"Plugin settings were not saved: {self.error}",
                                  hint=f"Fix or delete {self.path}; it was left unchanged.")
            data = copy.deepcopy(self._data) or {"schemaVersion": SCHEMA_VERSION, "plugins": {}}
            data.setdefault("schemaVersion", SCHEMA_VERSION)
            entry = data.setdefault("plugins", {}).setdefault(name, {})
            entry.setdefault("enabled", True)
            entry.setdefault("settings", {})
            for key, value in changes.items():
                if value is None:
                    entry.pop(key, None)
                else:
                    entry[key] = copy.deepcopy(value)
            write_json_atomic(self.path, data)
            self._data = data

    def set_enabled(self, name: str, enabled: bool) -> None:
        self._update(name, "enabled", enabled)

    def set_settings(self, name: str, settings: dict[str, Any]) -> None:
        self._update(name, "settings", settings)

    def set_grant(self, name: str, granted: tuple[str, ...], *, enabled: bool = True) -> None:
        """Record what the user granted (clears what was pending) and enable or keep disabled."""
        self._update_many(name, {"capabilities": list(granted), "pendingCapabilities": None, "enabled": enabled})

    def set_pending(self, name: str, requested: tuple[str, ...]) -> None:
        """The plugin asked for `requested` and was not approved: disable it until approved."""
        self._update_many(name, {"pendingCapabilities": list(requested), "enabled": False})
