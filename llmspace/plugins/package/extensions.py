"""Extension discovery inside one plugin folder (docs/plugins.md, "Layout"), without running anything.

`find_extensions(root, plugin)` looks only at these paths, and finds an `Extension` (with its
`canonical_id`, `plugin:<name>:<kind>:<id>`) at each:

    skills/<dir>/SKILL.md      skill            mcp.json      mcp (one per server id)
    tools/<file>               tool             models.json   model-provider (one per provider id)
    commands/<file>            command          config.schema.json  settings
    thread-storages/<file>     thread-storage

Code files are direct children with suffix .py, .ts, .js or .mjs (`*.d.ts` and names
starting with `_` or `.` are helpers); their ID is the file stem. Folders and files must
be real (symlinks are rejected) and stay inside the plugin root. Anything nested deeper
is ignored with a warning. Returns the extensions (active or failed with a reason) and the
warnings; mcp.json / models.json are parsed only to list their IDs (their contribution is
loaded elsewhere). Descriptions lose control characters (`plain_text`); an ID or skill folder
name with a control character is a failed entry (IDs are keys: refused, never renamed).
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from ...core.names import plain_text, shown_name
from ...errors import UserFacingError
from ...jsonio import SETTINGS_MAX_BYTES, read_file_bytes, read_json

# "disabled": its plugin is disabled (by the user or for the start); "inactive": its plugin is incompatible.
ExtensionStatus = Literal["active", "failed", "inactive", "disabled"]
# Kinds whose description the plugin's code reports when its host starts (not read from files).
CODE_KINDS = ("tool", "command", "thread-storage")
NOT_LOADED = "described by its code, which runs once the plugin is enabled"
CODE_FOLDERS = {"tools": "tool", "commands": "command", "thread-storages": "thread-storage"}
CODE_SUFFIXES = (".py", ".ts", ".js", ".mjs")
SKILL_FILE = "SKILL.md"
MCP_TRANSPORTS = ("stdio", "streamableHttp", "sse")
_DESCRIPTION = re.compile(r"^description:\s*(.+?)\s*$", re.M)


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


def real_kind(path: Path) -> str | None:
    """"file", "folder", "symlink", "other", or None when nothing is there (no symlink is followed)."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return None
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISREG(mode):
        return "file"
    return "folder" if stat.S_ISDIR(mode) else "other"


def inside(root: Path, path: Path) -> bool:
    real_root, real = os.path.realpath(root), os.path.realpath(path)
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def path_problem(root: Path, path: Path, want: str) -> str | None:
    """Why `path` is not a usable real `want` ("file"/"folder") inside `root`, or None."""
    kind = real_kind(path)
    rel = path.relative_to(root).as_posix()
    if kind == "symlink":
        return f"{rel} is a symbolic link; symlinks are rejected"
    if kind != want:
        return f"{rel} is not a {'regular file' if want == 'file' else 'folder'}"
    if not inside(root, path):
        return f"{rel} leads outside the plugin folder"
    return None


class _Finder:
    def __init__(self, root: Path, plugin: str) -> None:
        self.root, self.plugin = root, plugin
        self.found: list[Extension] = []
        self.warnings: list[str] = []

    def add(self, kind: str, ident: str, path: Path, problem: str | None = None, description: str = "") -> None:
        self.found.append(Extension(self.plugin, kind, ident, path, "failed" if problem else "active",
                                    problem or "", plain_text(description)))

    def rel(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def folder(self, name: str, kind: str) -> Path | None:
        """The extension folder `name` if it exists and is usable (else a failed entry)."""
        path = self.root / name
        if real_kind(path) is None:
            return None
        problem = path_problem(self.root, path, "folder")
        if problem:
            self.add(kind, name, path, problem)
            return None
        return path

    def code(self, name: str, kind: str) -> None:
        folder = self.folder(name, kind)
        if folder is None:
            return
        by_id: dict[str, list[Path]] = {}
        for entry in sorted(folder.iterdir()):
            fname = entry.name
            if fname.startswith(("_", ".")):
                continue
            if real_kind(entry) == "folder":
                self.warnings.append(f"{self.rel(entry)}/ was ignored: only direct children of {name}/ are discovered")
                continue
            if not fname.endswith(CODE_SUFFIXES) or fname.endswith(".d.ts"):
                continue
            by_id.setdefault(fname.rsplit(".", 1)[0], []).append(entry)
        for ident, paths in by_id.items():
            if len(paths) > 1:
                files = ", ".join(self.rel(p) for p in paths)
                for p in paths:
                    self.add(kind, ident, p, f"{files} define the same {kind} ID {ident!r}")
                continue
            self.add(kind, ident, paths[0], path_problem(self.root, paths[0], "file"))

    def skills(self) -> None:
        folder = self.folder("skills", "skill")
        if folder is None:
            return
        for entry in sorted(folder.iterdir()):
            if entry.name.startswith("."):
                continue
            kind = real_kind(entry)
            if kind == "file":
                continue
            if kind != "folder":
                self.add("skill", entry.name, entry, path_problem(self.root, entry, "folder"))
                continue
            if plain_text(entry.name) != entry.name:
                self.add("skill", shown_name(entry.name), entry,
                         f"skills/{shown_name(entry.name)} has a control character in its name; rename the folder")
                continue
            skill = entry / SKILL_FILE
            if real_kind(skill) is None:
                self.warnings.append(f"{self.rel(entry)}/ was ignored: it has no {SKILL_FILE}")
                continue
            problem = path_problem(self.root, skill, "file")
            self.add("skill", entry.name, skill, problem, "" if problem else _skill_description(skill))

    def listed(self, filename: str, kind: str, array_key: str) -> None:
        """mcp.json / models.json: one extension per declared `id` (or a failed file)."""
        path = self.root / filename
        if real_kind(path) is None:
            return
        problem = path_problem(self.root, path, "file")
        if problem:
            self.add(kind, filename, path, problem)
            return
        try:
            data = read_json(path, max_bytes=SETTINGS_MAX_BYTES)
        except UserFacingError as exc:
            self.add(kind, filename, path, exc.message)
            return
        items = data.get(array_key) if isinstance(data, dict) else None
        if not isinstance(items, list):
            self.add(kind, filename, path, f"{filename} must hold an object with a {array_key!r} array")
            return
        seen: set[str] = set()
        for i, item in enumerate(items):
            ident = item.get("id") if isinstance(item, dict) else None
            if not isinstance(ident, str) or not ident.strip():
                self.add(kind, f"{filename}#{i}", path, f"{array_key}[{i}] in {filename} has no string \"id\"")
                continue
            assert isinstance(item, dict)
            name = item.get("name")
            why = _item_problem(kind, item, filename, ident)
            if plain_text(ident) != ident:  # an ID is a key: refused, never silently renamed
                ident, why = shown_name(ident), (f"{array_key}[{i}] in {filename}: the id '{shown_name(ident)}' "
                                                 "has a control character; remove it from the id")
            if ident in seen:
                why = f"{filename} declares {ident!r} more than once"
            seen.add(ident)
            self.add(kind, ident, path, why, name if isinstance(name, str) else "")

    def settings(self) -> None:
        path = self.root / "config.schema.json"
        if real_kind(path) is not None:
            self.add("settings", "config", path, path_problem(self.root, path, "file"))


def _item_problem(kind: str, item: dict[str, Any], filename: str, ident: str) -> str | None:
    if kind == "mcp":
        if not isinstance(item.get("name"), str):
            return f"server {ident!r} in {filename} needs a \"name\""
        if item.get("transport") not in MCP_TRANSPORTS:
            return f"server {ident!r} in {filename}: \"transport\" must be one of {', '.join(MCP_TRANSPORTS)}"
    return None


def _skill_description(path: Path) -> str:
    try:
        head = read_file_bytes(path, max_bytes=1 << 20)[:16384].decode("utf-8", "replace")
    except UserFacingError:
        return ""
    if not head.startswith("---"):
        return ""
    front = head[3:].split("\n---", 1)[0]
    m = _DESCRIPTION.search(front)
    return m.group(1).strip("'\"") if m else ""


def find_extensions(root: Path, plugin: str) -> tuple[list[Extension], list[str]]:
    """Extensions at the documented paths under `root` and warnings about ignored entries."""
    finder = _Finder(root, plugin)
    finder.skills()
    finder.listed("mcp.json", "mcp", "servers")
    finder.listed("models.json", "model-provider", "providers")
    for name, kind in CODE_FOLDERS.items():
        finder.code(name, kind)
    finder.settings()
    return finder.found, finder.warnings
