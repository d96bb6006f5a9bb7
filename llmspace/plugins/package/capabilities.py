"""Plugin capabilities (docs/plugins.md, "Capabilities"): what a plugin's code may do beyond
its own folders, declared in `package.json` → `llmSpace.capabilities`, granted by the user.

    declared_problem(raw)            # why `llmSpace.capabilities` is not valid, or None
    declared(raw)                    # ("network",) … ; None: a legacy plugin (no key)
    infer(folder)                    # what the code uses, read from its source files
    requested(raw, folder)           # what an install asks for: declared, else inferred
    question(name, asked, legacy)    # the sentence the user is shown at install

The list is fixed (`CAPABILITIES`, llmspace/plugins/contract.py). Inference reads imports and calls in `.py`, `.js`,
`.mjs`, `.cjs`, `.ts`, `.mts`, `.cts` files under the guide's code folders: subprocess and
child_process → processes; socket, urllib, requests, httpx, aiohttp, fetch, net, http(s) →
network; AF_UNIX, a `socketPath`, a `path` to connect to, a `.sock` file, D-Bus or X11 →
unix-sockets; os.environ, os.getenv, process.env, Deno/Bun.env → environment; absolute paths,
`~`, `expanduser`, `os.homedir` → read-outside-workspace, and with a write call nearby
→ write-outside-workspace. It is a hint for the user and for `plugins check`, not a proof.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from ..contract import CAPABILITIES

KEY = "llmSpace"
FIELD = "capabilities"
CODE_DIRS = ("tools", "commands", "thread-storages", "lib", "src")
CODE_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
MAX_SOURCE_BYTES = 2 * 1024 * 1024

_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("processes", re.compile(r"\b(import|from)\s+[\w., ]*\bsubprocess\b|\bos\.(system|popen|exec\w*|spawn\w*)\s*\(|"
                             r"\bchild_process\b|\bBun\.spawn|\bDeno\.Command\b")),
    ("network", re.compile(r"\b(import|from)\s+[\w., ]*\b(socket|urllib(?!\.parse)|requests|httpx|aiohttp|http\.client)\b|"
                           r"\bfetch\s*\(|['\"](node:)?(net|http|https|tls|dgram|undici)['\"]|\bWebSocket\b")),
    ("unix-sockets", re.compile(r"\bAF_UNIX\b|\bsocketPath\b|\b(connect|createConnection)\(\s*\{\s*path\b|"
                                r"\.sock['\"]|\bDBUS_SESSION_BUS_ADDRESS\b|\bdbus\b|/tmp/\.X11-unix")),
    ("environment", re.compile(r"\bos\.environ\b|\bos\.getenv\s*\(|\bprocess\.env\b|\bBun\.env\b|\bDeno\.env\b")),
    ("read-outside-workspace", re.compile(r"expanduser\s*\(|['\"]~/|\bos\.homedir\s*\(|\bPath\.home\s*\(|"
                                          r"['\"]/(etc|home|Users|root|var|tmp)/")),
)
_WRITE = re.compile(r"\bwrite_(text|bytes)\s*\(|\.mkdir\s*\(|\bos\.(replace|rename|makedirs)\s*\(|\bmkdirSync\s*\(||\bopen\(.*['\"][wax]b?\+?['\"]|\bwriteFile(Sync)?\s*\(|"
                    r"\bappendFile(Sync)?\s*\(|\bBun\.write\s*\(")


def declared_problem(raw: dict[str, Any]) -> str | None:
    """Why `raw["llmSpace"]["capabilities"]` is not a list of known capabilities, or None."""
    section = raw.get(KEY)
    if section is None:
        return None
    if not isinstance(section, dict):
        return f"\"{KEY}\" must be an object"
    if FIELD not in section:
        return None
    value = section[FIELD]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f"\"{KEY}.{FIELD}\" must be a list of names from: {', '.join(CAPABILITIES)}"
    unknown = [v for v in value if v not in CAPABILITIES]
    if unknown:
        return (f"\"{KEY}.{FIELD}\" names unknown capabilities {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(CAPABILITIES)})")
    return None


def ordered(names: object) -> tuple[str, ...]:
    """The known names among `names`, in the fixed order of `CAPABILITIES`."""
    chosen = set(names) if isinstance(names, (list, tuple, set, frozenset)) else set()
    return tuple(c for c in CAPABILITIES if c in chosen)


def declared(raw: dict[str, Any]) -> tuple[str, ...] | None:
    """The declared capabilities (fixed order); None for a legacy plugin (no key)."""
    section = raw.get(KEY)
    if not isinstance(section, dict) or FIELD not in section:
        return None
    return ordered(section[FIELD])


def _sources(folder: Path) -> list[Path]:
    out: list[Path] = []
    for sub in CODE_DIRS:
        base = folder / sub
        if base.is_dir() and not base.is_symlink():
            out += sorted(p for p in base.rglob("*") if p.suffix in CODE_SUFFIXES and p.is_file()
                          and "node_modules" not in p.parts)
    return out


def infer_file(text: str) -> set[str]:
    """The capabilities one source text appears to use."""
    found = {cap for cap, rule in _RULES if rule.search(text)}
    if "read-outside-workspace" in found and _WRITE.search(text):
        found.add("write-outside-workspace")
    return found


def infer_by_file(folder: Path) -> dict[Path, tuple[str, ...]]:
    """Per code file of the plugin in `folder`: what it appears to use (files using nothing left out)."""
    out: dict[Path, tuple[str, ...]] = {}
    for path in _sources(folder):
        try:
            if path.stat().st_size > MAX_SOURCE_BYTES:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found = ordered(infer_file(text))
        if found:
            out[path] = found
    return out


def infer(folder: Path) -> tuple[str, ...]:
    """What the plugin's code in `folder` appears to use (fixed order)."""
    return ordered({c for caps in infer_by_file(folder).values() for c in caps})


def requested(raw: dict[str, Any], folder: Path) -> tuple[str, ...]:
    """What installing the plugin asks the user for: its declaration, else (legacy) the inference."""
    found = declared(raw)
    return found if found is not None else infer(folder)


def question(name: str, asked: tuple[str, ...], legacy: bool) -> str:
    """What the user is asked at install (the command line and the app say the same)."""
    if legacy:  # no declaration in package.json: say so, then what its code was seen to use
        return f"{name} does not declare the capabilities it needs; its code appears to use {', '.join(asked)}"
    return f"{name} asks for these capabilities: {', '.join(asked)}"
