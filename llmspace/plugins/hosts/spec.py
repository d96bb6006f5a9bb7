"""What a host is started for: `HostSpec` (the plugin, its runtime and code files, the folders it
may use, its granted capabilities) and how a runtime is launched from one (`Launch`).

    spec = HostSpec(name, version, folder, runtime_of(path), files, workspace, data_home)

The floor under the rest of `hosts/` (docs/architecture.md, "Floors of `plugins/`"): the host
(host.py), the pool (pool.py), the sandbox plan (sandbox.py) and the release checks all read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..contract import APP_COMPAT_VERSION


@dataclass(frozen=True)
class CodeFile:
    kind: str  # tool | command | thread-storage
    id: str  # the file stem
    path: Path


@dataclass(frozen=True)
class HostSpec:
    """What a host is started for."""

    plugin: str
    version: str
    root: Path
    runtime: str  # "python" | "js"
    files: tuple[CodeFile, ...]
    workspace: Path
    data_home: Path
    app_version: str = APP_COMPAT_VERSION
    capabilities: tuple[str, ...] | None = None  # granted (llmspace/plugins/hosts/sandbox.py); None: unconfined

    @property
    def label(self) -> str:
        return f"{self.plugin} ({self.runtime})"


Launch = Callable[[HostSpec], list[str]]


def runtime_of(path: Path) -> str:
    """The runtime that runs a code file: "python" for `.py`, else "js" (`.ts/.js/.mjs`)."""
    return "python" if path.suffix == ".py" else "js"
