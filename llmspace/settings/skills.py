"""`settings/skills.json`: where skills are discovered and which are hidden.

Shape: `{"discoveryPaths": [{"path": "~/.claude/skills", "hiddenSkills": ["name", …]}, …]}`.
Defaults (written when the file is missing): `~/.claude/skills`, `~/.codex/skills`,
`~/.agents/skills` and the managed `<LLM_SPACE_HOME>/skills` (absolute). Paths are kept as
typed (may start with `~`), trimmed and de-duplicated. Plugin skill folders keep their hidden
skills under `pluginSkills: {<origin>: {"hiddenSkills": [...]}}` (a key the original app
ignores). Unknown keys are kept. A malformed file is reported and never overwritten; the
defaults are used meanwhile and changes are refused until the file is fixed.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic
from ..paths import DataRoot, expand_home

DEFAULT_FOLDERS = ("~/.claude/skills", "~/.codex/skills", "~/.agents/skills")


@dataclass
class DiscoveryPath:
    """One discovery folder as configured (path as typed) and the skills hidden in it."""

    path: str
    hidden: list[str] = field(default_factory=list)

    def resolved(self) -> Path:
        return expand_home(self.path).absolute()


class SkillSettings:
    """Reads and writes `settings/skills.json`."""

    def __init__(self, root: DataRoot) -> None:
        self.root = root
        self.file = root.settings_file("skills")
        self.problem: str | None = None
        self._lock = threading.Lock()

    def managed_folder(self) -> Path:
        return (self.root.root / "skills").absolute()

    def default_data(self) -> dict[str, Any]:
        paths = [*DEFAULT_FOLDERS, str(self.managed_folder())]
        return {"discoveryPaths": [{"path": p, "hiddenSkills": []} for p in paths]}

    # -- reading --------------------------------------------------------------------------
    def _raw(self) -> dict[str, Any]:
        """The file's JSON (created with defaults when missing); defaults when unreadable."""
        self.problem = None
        if not self.file.exists():
            data = self.default_data()
            try:
                write_json_atomic(self.file, data, trailing_newline=True)
            except UserFacingError as exc:
                self.problem = str(exc)
            return data
        try:
            data = read_json(self.file, max_bytes=SETTINGS_MAX_BYTES)
        except UserFacingError as exc:
            self.problem = f"{exc} Using the default skill folders."
            return self.default_data()
        if not isinstance(data, dict):
            self.problem = f"{self.file}: expected a JSON object; using the default skill folders."
            return self.default_data()
        shape = _shape_problem(data)
        if shape:  # a change would rewrite the wrong part: report it and keep the file as it is
            self.problem = f"{self.file}: {shape}. Fix the file in a text editor; it was left unchanged. Using the default skill folders."
            return self.default_data()
        return data

    def folders(self) -> list[DiscoveryPath]:
        """Configured discovery folders, trimmed and de-duplicated, in order."""
        return _parse_paths(self._raw())

    def plugin_hidden(self, origin: str) -> set[str]:
        entry = (self._raw().get("pluginSkills") or {}).get(origin)
        hidden = entry.get("hiddenSkills") if isinstance(entry, dict) else None
        return {h for h in hidden or [] if isinstance(h, str)}

    # -- changing -------------------------------------------------------------------------
    def _update(self, change: Any) -> None:
        with self._lock:
            data = self._raw()
            if self.problem and self.file.exists():
                raise UserFacingError(self.problem.replace(" Using the default skill folders.", ""),
                                      hint="Fix or delete settings/skills.json, then try again.")
            change(data)
            write_json_atomic(self.file, data, trailing_newline=True)

    def _entries(self, data: dict[str, Any]) -> list[dict[str, Any]]:
        entries = data.get("discoveryPaths")
        if not isinstance(entries, list):
            entries = []
            data["discoveryPaths"] = entries
        return entries

    def add_folder(self, path: str) -> None:
        path = path.strip()
        if not path:
            raise UserFacingError("A skill folder path cannot be empty.")

        def change(data: dict[str, Any]) -> None:
            entries = self._entries(data)
            if any(isinstance(e, dict) and str(e.get("path", "")).strip() == path for e in entries):
                return
            entries.append({"path": path, "hiddenSkills": []})

        self._update(change)

    def remove_folder(self, path: str) -> None:
        """Forget a discovery folder (no files are deleted)."""
        path = path.strip()

        def change(data: dict[str, Any]) -> None:
            entries = self._entries(data)
            entries[:] = [e for e in entries if not (isinstance(e, dict) and str(e.get("path", "")).strip() == path)]

        self._update(change)

    def set_hidden(self, folder: Path, names: dict[str, bool]) -> None:
        """Hide (True) or show (False) skills by name in the folder resolving to `folder`."""

        def change(data: dict[str, Any]) -> None:
            for entry in self._entries(data):
                if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
                    continue
                if DiscoveryPath(entry["path"].strip()).resolved() != folder:
                    continue
                entry["hiddenSkills"] = _apply_hidden(entry.get("hiddenSkills"), names)

        self._update(change)

    def set_plugin_hidden(self, origin: str, names: dict[str, bool]) -> None:
        def change(data: dict[str, Any]) -> None:
            plugins = data.get("pluginSkills")
            if not isinstance(plugins, dict):
                plugins = data["pluginSkills"] = {}
            entry = plugins.get(origin)
            if not isinstance(entry, dict):
                entry = plugins[origin] = {}
            entry["hiddenSkills"] = _apply_hidden(entry.get("hiddenSkills"), names)

        self._update(change)


def _apply_hidden(current: Any, names: dict[str, bool]) -> list[str]:
    hidden = [h for h in current or [] if isinstance(h, str)] if isinstance(current, list) else []
    for name, hide in names.items():
        if hide and name not in hidden:
            hidden.append(name)
        elif not hide:
            hidden = [h for h in hidden if h != name]
    return hidden


def _shape_problem(data: dict[str, Any]) -> str | None:
    """Where the file departs from the expected shape (JSON path and what was expected), if it does."""
    entries = data.get("discoveryPaths", [])
    if not isinstance(entries, list):
        return "discoveryPaths must be a list of folders"
    for i, entry in enumerate(entries):
        if isinstance(entry, str):
            continue
        if not isinstance(entry, dict):
            return f"discoveryPaths[{i}] must be an object with a path"
        if not isinstance(entry.get("path"), str):
            return f"discoveryPaths[{i}].path must be text"
        if entry.get("hiddenSkills") is not None and not isinstance(entry["hiddenSkills"], list):
            return f"discoveryPaths[{i}].hiddenSkills must be a list of skill names"
    plugins = data.get("pluginSkills", {})
    if not isinstance(plugins, dict):
        return "pluginSkills must be an object"
    for origin, entry in plugins.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("hiddenSkills", []), list):
            return f"pluginSkills.{origin} must be an object with a hiddenSkills list"
    return None


def _parse_paths(data: dict[str, Any]) -> list[DiscoveryPath]:
    out: list[DiscoveryPath] = []
    seen: set[str] = set()
    entries = data.get("discoveryPaths")
    for entry in entries if isinstance(entries, list) else []:
        raw = entry.get("path") if isinstance(entry, dict) else entry
        if not isinstance(raw, str) or not raw.strip():
            continue
        path = raw.strip()
        if path in seen:
            continue
        seen.add(path)
        hidden = entry.get("hiddenSkills") if isinstance(entry, dict) else None
        out.append(DiscoveryPath(path, [h for h in hidden or [] if isinstance(h, str)] if isinstance(hidden, list) else []))
    return out
