"""The data root and its layout.

`LLM_SPACE_HOME` (default `~/.llm-space`) holds `workspace/`, `settings/`, `skills/`,
`traces/` (ours in `traces/calls/`; the original app keeps `traces/projects/`), `plugins/`,
`data/plugins/`, `logs/` and `models/`. Folders are created when first needed,
never on import. Everything that needs a location asks a `DataRoot`.
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

    def _dir(self, *parts: str) -> Path:
        p = self.root.joinpath(*parts)
        try:
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
        """`settings/`; temp files a killed writer left in it are swept on use (at most every
        30 s, `temp_files.sweep_now_and_then`), as workspace scans sweep the workspace."""
        from .temp_files import sweep_now_and_then

        path = self._dir("settings")
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
    def trash(self) -> Path:
        return self._dir(".trash")

    def settings_file(self, name: str) -> Path:
        """Path of `settings/<name>.json` (the folder is created, the file is not)."""
        return self.settings / f"{name}.json"
