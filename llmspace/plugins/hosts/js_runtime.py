"""Which JavaScript runtime runs a plugin's `.ts/.js/.mjs` files, and how to start the
JavaScript host with it (docs/plugin-protocol.md; the host is `llmspace/plugin_host/js/host.mjs`).

    rt = find_runtime(settings_path)         # JsRuntime: kind, path, version, why it was chosen
    rt.refusal(Path("tools/a.ts"))           # None, or why this runtime cannot run that file
    argv = rt.argv(host_module, files)       # ["bun", ".../host.mjs"] or ["node", "--experimental-strip-types", …]

The choice, first that applies: the path saved with `llmspace plugins runtime PATH`
(`settings/js-runtime.json`, `{"path": "..."}`); `bun` on PATH; `node` on PATH. When both
are on PATH and Node is 22.13 or newer, a confined plugin without `processes` runs under
Node (`rt.for_plugin(capabilities, environ)`): Bun keeps the right to execute its own binary
inside the sandbox, Node's permission model refuses child processes. Bun runs
`.ts`, `.js` and `.mjs`; Node ≥ 18 runs `.js/.mjs` and Node ≥ 22.6 `.ts` too (22.6–22.17
and 23.0–23.5 with `--experimental-strip-types`). Without a suitable runtime each JS/TS
extension fails with one message naming what to install; the rest of the plugin works.
Versions are read once per path (`<runtime> --version`, bounded).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from ...errors import UserFacingError
from ...jsonio import SETTINGS_MAX_BYTES, read_json, write_json_atomic

SETTINGS_NAME = "js-runtime"
VERSION_WAIT = 10.0
INSTALL_HINT = ("Install Bun (https://bun.sh) or Node.js 22.6 or newer, or point LLM Space at one with "
                "`llmspace plugins runtime PATH`.")
_VERSION = re.compile(r"(\d+)\.(\d+)\.(\d+)")
_versions: dict[str, tuple[str, str] | None] = {}
_lock = threading.Lock()


def host_module() -> Path:
    """The JavaScript host shipped inside the package."""
    return Path(__file__).resolve().parents[2] / "plugin_host" / "js" / "host.mjs"  # llmspace/plugin_host/js/


@dataclass(frozen=True)
class JsRuntime:
    kind: str  # "bun" | "node" | "" (none found)
    path: str
    version: str
    why: str  # how it was found, or why none was
    # Node ≥ 22.13 found on PATH beside a Bun found there: it runs the confined plugins
    # without `processes` (`for_plugin`)
    without_processes: JsRuntime | None = None

    @property
    def found(self) -> bool:
        return bool(self.kind)

    def _node(self) -> tuple[int, int, int]:
        m = _VERSION.search(self.version)
        return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else (0, 0, 0)

    def strips_types(self) -> bool:
        return self.kind == "bun" or (self.kind == "node" and self._node() >= (22, 6, 0))

    def needs_strip_flag(self) -> bool:
        v = self._node()
        return self.kind == "node" and ((22, 6, 0) <= v < (22, 18, 0) or (23, 0, 0) <= v < (23, 6, 0))

    def permission_model(self) -> bool:
        """Node 22.13 or newer: `--permission` without the experimental flag."""
        return self.kind == "node" and self._node() >= (22, 13, 0)

    def for_plugin(self, capabilities: Sequence[str] | None, environ: Mapping[str, str]) -> JsRuntime:
        """The runtime of a plugin granted `capabilities`: Node ≥ 22.13 found beside Bun on
        PATH for a confined plugin without `processes` (Bun may execute its own binary again,
        which the launcher has to be allowed to start; Node's permission model refuses child
        processes), else this one."""
        alternative = self.without_processes
        if (alternative is None or capabilities is None or "processes" in capabilities
                or environ.get("LLM_SPACE_SANDBOX", "").strip().lower() in ("off", "0", "false", "no")):
            return self
        return alternative

    def refusal(self, path: Path) -> str | None:
        """Why this runtime cannot run `path` (None when it can)."""
        if not self.found:
            return f"No JavaScript runtime to run {path.name}: {self.why}. {INSTALL_HINT}"
        if self.kind == "node" and self._node() < (18, 0, 0):
            return f"Node {self.version} at {self.path} is too old for plugins (18 or newer). {INSTALL_HINT}"
        if path.suffix == ".ts" and not self.strips_types():
            return (f"{path.name} is TypeScript, which Node {self.version} cannot run (Node 22.6 or newer, or Bun, "
                    f"can). {INSTALL_HINT}")
        return None

    def argv(self, module: Path, files: Iterable[Path] = ()) -> list[str]:
        if self.kind == "bun":
            return [self.path, str(module)]
        flags = ["--experimental-strip-types"] if self.needs_strip_flag() and any(
            f.suffix == ".ts" for f in files) else []
        return [self.path, "--no-warnings", *flags, str(module)]

    def describe(self) -> str:
        if not self.found:
            return f"No JavaScript runtime: {self.why}. {INSTALL_HINT}"
        can = ".ts, .js and .mjs" if self.strips_types() else ".js and .mjs (not .ts)"
        text = f"{self.kind} {self.version} at {self.path} ({self.why}); runs {can} plugin files"
        alt = self.without_processes
        if alt is not None:
            text += (f"; plugins without `processes` run under {alt.kind} {alt.version} at {alt.path} "
                     "(its permission model refuses child processes)")
        return text


def _version(path: str) -> tuple[str, str] | None:
    """(kind, version) of the runtime at `path`, or None when it does not run."""
    with _lock:
        if path in _versions:
            return _versions[path]
    found: tuple[str, str] | None = None
    try:
        proc = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=VERSION_WAIT,
                              stdin=subprocess.DEVNULL)
        text = (proc.stdout or proc.stderr).strip()
        m = _VERSION.search(text)
        if proc.returncode == 0 and m:
            found = ("node" if text.startswith("v") else "bun", m.group(0))  # node prints v20.1.0, bun 1.1.0
    except (OSError, subprocess.SubprocessError):
        found = None
    with _lock:
        _versions[path] = found
    return found


def saved_path(settings_file: Path) -> str:
    """The saved runtime path ("" when none is saved). An unreadable file raises UserFacingError."""
    if not settings_file.exists():
        return ""
    data = read_json(settings_file, max_bytes=SETTINGS_MAX_BYTES)
    value = data.get("path") if isinstance(data, dict) else None
    return value if isinstance(value, str) else ""


def save_path(settings_file: Path, path: str | None) -> None:
    """Remember `path` (None forgets it). Refuses a path that does not run as Bun or Node."""
    if path:
        resolved = shutil.which(path) or path
        if _version(os.path.abspath(resolved)) is None:
            raise UserFacingError(f"{path} is not a working Bun or Node executable.",
                                  hint="Give the full path of the `bun` or `node` program.")
        path = os.path.abspath(resolved)
    write_json_atomic(settings_file, {"path": path} if path else {}, trailing_newline=True)


def find_runtime(settings_file: Path | None = None, environ: dict[str, str] | None = None) -> JsRuntime:
    """Choose the JavaScript runtime of JS/TS plugins: the one saved with `llmspace plugins
    runtime` (`settings/js-runtime.json`), else `bun`, else `node` on PATH; an empty
    `JsRuntime` says why none was found."""
    env = os.environ if environ is None else environ
    note = ""
    try:
        configured = saved_path(settings_file) if settings_file is not None else ""
    except UserFacingError as exc:  # left as it is; PATH decides meanwhile
        configured = ""
        note = f"; {exc.message} (set the runtime again, or `llmspace plugins runtime --clear`)"
    if configured:
        info = _version(configured)
        if info is not None:
            return JsRuntime(info[0], configured, info[1], "set with `llmspace plugins runtime`")
        return JsRuntime("", configured, "", f"the saved runtime {configured} does not run")
    search = env.get("PATH", os.defpath)
    found = [JsRuntime(info[0], path, info[1], f"`{name}` on PATH{note}") for name in ("bun", "node")
             if (path := shutil.which(name, path=search)) and (info := _version(path)) is not None]
    if not found:
        return JsRuntime("", "", "", f"neither `bun` nor `node` is on PATH{note}")
    first = found[0]
    node = next((r for r in found[1:] if r.kind == "node"), None)
    if first.kind == "bun" and node is not None and node.permission_model():
        why = f"`node` on PATH, for plugins without `processes`: its permission model refuses child processes{note}"
        return replace(first, without_processes=replace(node, why=why))
    return first
