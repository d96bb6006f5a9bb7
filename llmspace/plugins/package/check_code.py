"""The checklist items of `plugins check DIR` that need the plugin's code to run: each
code extension is loaded in a real host (llmspace/plugins/hosts/host.py), as enabling it would.

    items = check_code(Path("plugins/atlas"), "atlas", "1.0.0")

    code          every tool, command and storage file imports, constructs and meets its contract
    tool names    model-facing names are snake_case (`^[a-z][a-z0-9_]*$`)
    tool schemas  each tool's parameters forbid unknown properties (`additionalProperties: false`)

Python files load in the Python host, `.ts/.js/.mjs` files in the JavaScript host when a
runtime for them is found (llmspace/plugins/hosts/js_runtime.py; otherwise the line says which
were not checked and why). The hosts run with a scratch data root and workspace (deleted
afterwards) and are shut down before returning.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Any

from ...errors import UserFacingError
from ..diagnostics import DiagnosticLog
from ..hosts.callbacks import ConsoleFrontend
from ..hosts.host import PluginHost, python_launch
from ..hosts.js_runtime import find_runtime, host_module
from ..hosts.spec import CodeFile, HostSpec, Launch, runtime_of
from .check import CheckItem
from .extensions import CODE_KINDS, find_extensions

_SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")


def _load(folder: Path, name: str, version: str, files: list[CodeFile], scratch: Path, runtime: str,
          launch: Launch) -> dict[str, Any]:
    spec = HostSpec(name, version, folder.absolute(), runtime, tuple(files), scratch / "workspace", scratch)
    (scratch / "workspace").mkdir(exist_ok=True)
    host = PluginHost(spec, launch=launch, frontend=ConsoleFrontend(), log=DiagnosticLog(scratch / "logs"))
    try:
        return host.initialize()
    finally:
        host.stop("checked")


def check_code(folder: Path, name: str, version: str) -> list[CheckItem]:
    extensions, _warnings = find_extensions(folder, name)
    files = [CodeFile(e.kind, e.id, e.path) for e in extensions if e.kind in CODE_KINDS and e.status == "active"]
    if not files:
        return [CheckItem("code", True, "no tools, commands or thread storages")]
    python = [f for f in files if runtime_of(f.path) == "python"]
    js = find_runtime()
    scripts = [f for f in files if runtime_of(f.path) == "js" and js.refusal(f.path) is None]
    skipped = len([f for f in files if runtime_of(f.path) == "js"]) - len(scripts)
    reported: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="llmspace-check-") as scratch:
        for runtime, group, launch in (("python", python, python_launch),
                                       ("js", scripts, lambda spec: js.argv(host_module(), [f.path for f in spec.files]))):
            if not group:
                continue
            try:
                reported += list(_load(folder, name, version, group, Path(scratch), runtime, launch).get("extensions", []))
            except UserFacingError as exc:
                return [CheckItem("code", False, f"the {runtime} plugin host could not load the code: {exc.message}")]
    broken = [f"{e.get('kind')} {e.get('id')}: {(e.get('error') or {}).get('message', 'failed')}"
              for e in reported if isinstance(e, dict) and e.get("status") != "active"]
    note = (f"; {skipped} JavaScript/TypeScript file(s) not checked: {js.describe()}" if skipped else "")
    items = [CheckItem("code", not broken, "; ".join(broken) if broken else
                       f"{len(python) + len(scripts)} extension(s) load and meet their contracts{note}")]
    tools = [e for e in reported if isinstance(e, dict) and e.get("kind") == "tool" and e.get("status") == "active"]
    names = [str((e.get("metadata") or {}).get("name", "")) for e in tools]
    bad_names = [n for n in names if not _SNAKE.match(n)]
    items.append(CheckItem("tool names", not bad_names, f"not snake_case: {', '.join(bad_names)}" if bad_names else
                           f"{len(names)} tool name(s) in snake_case"))
    loose = [f"{e.get('id')}" for e in tools
             if ((e.get("metadata") or {}).get("parameters") or {}).get("additionalProperties") is not False]
    items.append(CheckItem("tool schemas", not loose, f"allow any property (set additionalProperties: false): "
                           f"{', '.join(loose)}" if loose else "every tool schema forbids unknown properties"))
    return items
