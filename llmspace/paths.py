"""The data root and its layout.

`LLM_SPACE_HOME` (default `~/.llm-space`) holds `workspace/`, `settings/`, `skills/`,
`traces/` (ours in `traces/calls/`; the original app keeps `traces/projects/`), `plugins/`,
`data/plugins/`, `logs/`, `models/` and `run/` (records of running processes). Folders are
created when first needed, never on import. Everything that needs a location asks a
`DataRoot`.

`settings/` (API keys, plugin settings) and `run/` (engine keys, dev plugins) are
owner-only: `private_folder` makes them 0700 and the files in them 0600, tightening wider
modes left by earlier versions when the folder is first used in a process; the atomic
writer (llmspace/jsonio.py) keeps files it writes into such a folder owner-only.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
_MAX_COMPONENT = 120  # bytes; well under every file system's 255-byte name limit


def safe_component(name: str) -> str:
    """Encode any configured name (server name, provider ID, storage ID, plugin name, …) into
    one safe path component: `[A-Za-z0-9._-]` kept, every other byte of its UTF-8 form
    percent-encoded (`/` → `%2F`), so distinct names stay distinct and nothing can climb
    out with `..`, a separator or a drive letter. Empty, `.` and `..` are encoded too; a
    long name is cut and suffixed with a hash of the whole name."""
    raw = name.encode("utf-8", "surrogatepass")
    out = "".join(
        chr(b) if _UNSAFE.match(chr(b)) is None and b < 128 else f"%{b:02X}" for b in raw
    )
    if out in ("", ".", ".."):
        out = "".join(f"%{b:02X}" for b in raw) if raw else "%00"
    if len(out) > _MAX_COMPONENT:
        digest = hashlib.sha256(raw).hexdigest()[:16]
        head = out[: _MAX_COMPONENT - 17]
        cut = head.rfind("%", len(head) - 2)  # never end inside a %XX escape
        out = (head[:cut] if cut >= 0 else head) + "~" + digest
    return out


_TIGHTENED: set[str] = set()  # private folders whose files were checked in this process


def private_folder(path: Path, *, create: bool = True) -> Path:
    """`path` as a folder only its owner may enter: created 0700 (with `create`), a wider
    mode tightened to 0700, and — once per process and folder — every file in it that others
    may read or write tightened to owner-only (0600 for a 0644 file). A folder or file owned
    by another account is left as it is. Raises OSError when `path` cannot be made."""
    if create:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        if os.stat(path).st_mode & 0o077:
            os.chmod(path, 0o700)
    except OSError:
        return path
    key = os.fspath(path)
    if key not in _TIGHTENED:
        _TIGHTENED.add(key)
        try:
            with os.scandir(path) as entries:
                for entry in entries:
                    try:
                        mode = entry.stat(follow_symlinks=False).st_mode
                        if entry.is_file(follow_symlinks=False) and mode & 0o077:
                            os.chmod(entry.path, mode & 0o700)
                    except OSError:
                        continue
        except OSError:
            pass
    return path


def expand_home(path: str) -> Path:
    """Expand a leading `~` or `~/` only (`~user` is left alone), as the original app does."""
    if path == "~" or path.startswith(("~/", "~" + os.sep)):
        return Path.home() / path[2:] if len(path) > 1 else Path.home()
    return Path(path)


def default_home() -> Path:
    env = os.environ.get("LLM_SPACE_HOME", "").strip()
    return expand_home(env) if env else Path.home() / ".llm-space"


@dataclass(frozen=True)
class DataRoot:
    """Locations under one data root. Accessors create the folder on first use."""

    root: Path

    @classmethod
    def from_env(cls) -> DataRoot:
        return cls(default_home().absolute())

    def _dir(self, *parts: str, private: bool = False) -> Path:
        p = self.root.joinpath(*parts)
        try:
            if private:
                private_folder(p)
            else:
                p.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # e.g. LLM_SPACE_HOME (or a folder in it) is a file, or read-only
            from .errors import UserFacingError

            raise UserFacingError(f"Cannot use {p} as a folder: {exc.strerror or exc}.",
                                  hint=f"Check LLM_SPACE_HOME ({self.root}) and the permissions of that folder.") from None
        return p

    @property
    def workspace(self) -> Path:
        return self._dir("workspace")

    @property
    def settings(self) -> Path:
        """`settings/`, owner-only (`private_folder`); temp files a killed writer left in it
        are swept on use (at most every 30 s, `temp_files.sweep_now_and_then`), as workspace
        scans sweep the workspace."""
        from .temp_files import sweep_now_and_then

        path = self._dir("settings", private=True)
        sweep_now_and_then(path)
        return path

    @property
    def skills(self) -> Path:
        return self._dir("skills")

    @property
    def traces(self) -> Path:
        return self._dir("traces")

    @property
    def trace_calls(self) -> Path:
        """Our model-call and tool-call traces (`providers/traces.py`); the original app's
        trace projects are `traces/projects/`, left alone."""
        return self._dir("traces", "calls")

    @property
    def plugins(self) -> Path:
        return self._dir("plugins")

    @property
    def plugin_data(self) -> Path:
        return self._dir("data", "plugins")

    @property
    def cache(self) -> Path:
        """Derived data that can be rebuilt (plugin extension metadata, …)."""
        return self._dir("cache")

    @property
    def logs(self) -> Path:
        return self._dir("logs")

    @property
    def models(self) -> Path:
        """GGUF models of the built-in engine, in the Hugging Face cache layout (llmspace/local/)."""
        return self._dir("models")

    @property
    def run(self) -> Path:
        """`run/`, owner-only (`private_folder`): records and locks of running processes (the
        built-in engine's, the dev plugins', the GUI's instance server)."""
        return self._dir("run", private=True)

    @property
    def trash(self) -> Path:
        return self._dir(".trash")

    def settings_file(self, name: str) -> Path:
        """Path of `settings/<name>.json` (the folder is created, the file is not)."""
        return self.settings / f"{name}.json"
