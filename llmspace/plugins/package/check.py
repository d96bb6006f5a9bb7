"""`check DIR`: the release checklist of a plugin (docs/plugins.md), for the items that need no code to run.

`check_plugin(folder)` returns one `CheckItem` (label, pass/fail, reason) per item:

    package.json    readable, a JSON object
    name            a valid package name that equals the folder (`@scope/name` → `@scope/name/`)
    version         SemVer
    engines         `engines["llm-space"]` is a valid range that includes this app
    icon            icon.png, when present, is a PNG of at most 2 MiB and 4096 px a side
    extensions      extension files are direct children of their folders, skills have SKILL.md
    links           no symbolic links or special files (data/ and .git/ are not shipped, not looked at)
    settings        config.schema.json, when present, is a supported schema whose defaults are valid
    models.json     providers use a supported API and have id, name, api, baseUrl and models;
                    each model has an id and a name (optional fields are type-checked)
    mcp.json        servers have id, name, a known transport and a command (stdio) or url
    secrets         no literal keys or tokens in mcp.json / models.json (use "$ENV" or ${settings.x})
    capabilities    `llmSpace.capabilities` is valid; WARN where it differs from what the code appears
                    to use (capabilities.py `infer`), or when it is missing

Secret values are never repeated in a reason, only where they are. `format_report` prints
one line per item.
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...errors import UserFacingError
from ...jsonio import SETTINGS_MAX_BYTES, read_json
from ..contract import APP_COMPAT_VERSION
from ..errors import PluginError
from ..settings_form import build_form
from .capabilities import declared, declared_problem, infer_by_file, ordered
from .extensions import MCP_TRANSPORTS, find_extensions
from .icon import icon_problem
from .manifest import ENGINE_KEY, engines_compatible, is_valid_version, name_problem, range_problem
from .pack import EXCLUDED_TOP

SUPPORTED_APIS = ("anthropic-messages", "openai-completions", "openai-responses")
MODEL_INPUTS = ("text", "image")
_SECRET_KEY = re.compile(r"(?i)(api[-_]?key|token|secret|password|passwd|authorization|credentials?|cookie|"
                         r"private[-_]?key|access[-_]?key)s?$")
_SECRET_SHAPES = tuple(re.compile(p) for p in (
    r"\bsk-[A-Za-z0-9_\-]{8,}", r"(?i)\bbearer\s+[^\s\"',$]{8,}", r"\bgh[pousr]_[A-Za-z0-9]{20,}",
    r"\bxox[abprs]-[A-Za-z0-9-]{10,}", r"\bAKIA[0-9A-Z]{16}\b", r"\bAIza[0-9A-Za-z_\-]{30,}",
))
_ENV_REF = re.compile(r"\$[A-Za-z_][A-Za-z0-9_]*")
_SETTING_REF = re.compile(r"\$\{settings\.[^{}]+\}")
_AUTH_WORDS = {"", "bearer", "basic", "token"}


@dataclass(frozen=True)
class CheckItem:
    label: str
    ok: bool
    reason: str
    warn: bool = False  # passed, with something to look at (printed WARN)


def check_plugin(folder: Path) -> list[CheckItem]:
    """Run every checklist item on the plugin folder `folder`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise PluginError(f"{folder} is not a folder.", hint="Give the plugin folder (the one holding package.json).")
    items: list[CheckItem] = []
    raw, problem = _json(folder, "package.json")
    items.append(CheckItem("package.json", isinstance(raw, dict), problem or ("a JSON object" if isinstance(raw, dict) else
                           ("missing" if raw is None else "must hold a JSON object"))))
    data: dict[str, Any] = raw if isinstance(raw, dict) else {}
    name = data.get("name")
    items += [_name(folder, name), _version(data.get("version")), _engines(data.get("engines")), _icon(folder),
              _extensions(folder, name if isinstance(name, str) else "plugin"), _links(folder), _settings(folder)]
    models, models_problem = _json(folder, "models.json")
    mcp, mcp_problem = _json(folder, "mcp.json")
    items.append(_listed("models.json", models, models_problem, "providers", _provider_problems))
    items.append(_listed("mcp.json", mcp, mcp_problem, "servers", _server_problems))
    items.append(_secrets({"mcp.json": mcp, "models.json": models}))
    items.append(_capabilities(folder, data))
    return items


def failed(items: list[CheckItem]) -> list[CheckItem]:
    return [i for i in items if not i.ok]


def format_report(items: list[CheckItem]) -> str:
    """One line per item (`PASS  label  reason`) and a summary line."""
    width = max(len(i.label) for i in items)
    lines = [f"{('WARN' if i.warn else 'PASS') if i.ok else 'FAIL'}  {i.label:<{width}}  {i.reason}" for i in items]
    bad = len(failed(items))
    lines.append(f"{bad} of {len(items)} checks failed." if bad else f"All {len(items)} checks passed.")
    return "\n".join(lines)


def _capabilities(folder: Path, data: dict[str, Any]) -> CheckItem:
    problem = declared_problem(data)
    if problem is not None:
        return CheckItem("capabilities", False, problem)
    by_file = infer_by_file(folder)
    used = ordered({c for caps in by_file.values() for c in caps})
    where = "; ".join(f"{p.relative_to(folder).as_posix()}: {', '.join(c)}" for p, c in by_file.items())
    said = declared(data)
    if said is None:
        shown = json.dumps(list(used))
        return CheckItem("capabilities", True, f"not declared (a legacy plugin; users are asked at install); the code "
                         f"appears to use {', '.join(used) or 'none'}" + (f" ({where})" if where else "")
                         + f"; declare \"llmSpace\": {{\"capabilities\": {shown}}}", warn=True)
    missing = [c for c in used if c not in said]
    unused = [c for c in said if c not in used]
    notes = []
    if missing:
        notes.append(f"the code appears to use {', '.join(missing)}, not declared ({where}): it will be refused")
    if unused:
        notes.append(f"declared but not seen in the code: {', '.join(unused)} (users are asked for it)")
    if notes:
        return CheckItem("capabilities", True, "; ".join(notes), warn=True)
    return CheckItem("capabilities", True, f"declared {', '.join(said) or 'none'}, as the code uses")


def _json(folder: Path, filename: str) -> tuple[Any, str | None]:
    """The parsed file (None when missing) and a problem when it cannot be read."""
    path = folder / filename
    if not os.path.lexists(path):
        return None, None
    try:
        return read_json(path, max_bytes=SETTINGS_MAX_BYTES), None
    except UserFacingError as exc:
        return None, exc.message


def _name(folder: Path, name: object) -> CheckItem:
    problem = name_problem(name)
    if problem is not None:
        return CheckItem("name", False, f"\"name\": {problem}")
    assert isinstance(name, str)
    parts = name.split("/")
    here = "/".join([folder.absolute().parent.name, folder.name][-len(parts):])
    if here != name:
        want = f"{parts[0]}/{parts[1]}/" if len(parts) == 2 else f"{name}/"
        return CheckItem("name", False, f"\"name\" is {name!r} but the folder is {here + '/'!r}; install it as {want}")
    return CheckItem("name", True, f"{name!r} matches the folder")


def _version(version: object) -> CheckItem:
    if is_valid_version(version):
        return CheckItem("version", True, f"{version} is SemVer")
    return CheckItem("version", False, f"\"version\" must be a SemVer version such as 1.0.0 (found {version!r})")


def _engines(engines: object) -> CheckItem:
    rng = engines.get(ENGINE_KEY) if isinstance(engines, dict) else None
    if rng is None:
        return CheckItem("engines", False, f"engines[\"{ENGINE_KEY}\"] is missing; for example \">={APP_COMPAT_VERSION}\"")
    problem = range_problem(rng)
    if problem is not None:
        return CheckItem("engines", False, f"engines[\"{ENGINE_KEY}\"] {rng!r} is not a SemVer range: {problem}")
    assert isinstance(rng, str)
    if not engines_compatible(rng):
        return CheckItem("engines", False, f"{rng!r} does not include LLM Space {APP_COMPAT_VERSION}, so the plugin "
                                           f"would be incompatible; for example \">={APP_COMPAT_VERSION}\"")
    return CheckItem("engines", True, f"{rng!r} is a valid range; it includes LLM Space {APP_COMPAT_VERSION}")


def _icon(folder: Path) -> CheckItem:
    path = folder / "icon.png"
    if not os.path.lexists(path):
        return CheckItem("icon", True, "no icon.png (the default icon is shown)")
    problem = icon_problem(path)
    return CheckItem("icon", problem is None, problem or "icon.png is a PNG within the limits")


def _extensions(folder: Path, name: str) -> CheckItem:
    found, warnings = find_extensions(folder, name)
    problems = [f"{e.path.relative_to(folder).as_posix()}: {e.reason}" for e in found
                if e.status == "failed" and e.kind not in ("mcp", "model-provider", "settings")]
    problems += warnings
    if problems:
        return CheckItem("extensions", False, "; ".join(problems))
    kinds = Counter(e.kind for e in found if e.kind != "settings")
    listed = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    return CheckItem("extensions", True, f"files at the discovered paths ({listed or 'no extensions'})")


def _links(folder: Path) -> CheckItem:
    bad: list[str] = []
    for top, dirs, files in os.walk(folder):
        rel = Path(top).relative_to(folder).as_posix()
        if rel == ".":
            dirs[:] = [d for d in dirs if d not in EXCLUDED_TOP]
        for entry in sorted(dirs + files):
            mode = os.lstat(os.path.join(top, entry)).st_mode
            shown = entry if rel == "." else f"{rel}/{entry}"
            if stat.S_ISLNK(mode):
                bad.append(f"{shown} is a symbolic link")
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                bad.append(f"{shown} is a special file")
    if bad:
        more = f" (and {len(bad) - 5} more)" if len(bad) > 5 else ""
        return CheckItem("links", False, "; ".join(bad[:5]) + more)
    return CheckItem("links", True, "no symbolic links or special files")


def _settings(folder: Path) -> CheckItem:
    schema, problem = _json(folder, "config.schema.json")
    if problem:
        return CheckItem("settings", False, problem)
    if schema is None:
        return CheckItem("settings", True, "no config.schema.json (no settings)")
    try:
        form = build_form(schema)
    except UserFacingError as exc:
        return CheckItem("settings", False, exc.message)
    count = sum(1 for f in form.walk() if f.type != "object")
    return CheckItem("settings", True, f"config.schema.json: {count} fields, defaults valid")


def _listed(filename: str, data: Any, problem: str | None, key: str, each: Any) -> CheckItem:
    if problem:
        return CheckItem(filename, False, problem)
    if data is None:
        return CheckItem(filename, True, f"no {filename}")
    items = data.get(key) if isinstance(data, dict) else None
    if not isinstance(items, list):
        return CheckItem(filename, False, f"must hold an object with a {key!r} array")
    problems: list[str] = []
    for i, item in enumerate(items):
        problems += each(f"{key}[{i}]", item)
    if problems:
        return CheckItem(filename, False, "; ".join(problems))
    return CheckItem(filename, True, f"{key}: {len(items)}, required fields present")


def _missing(where: str, item: dict[str, Any], *keys: str) -> list[str]:
    return [f"{where} needs a non-empty string {k!r}" for k in keys if not (isinstance(item.get(k), str) and item[k].strip())]


def _provider_problems(where: str, p: Any) -> list[str]:
    if not isinstance(p, dict):
        return [f"{where} must be an object"]
    where = f"{where} ({p['id']})" if isinstance(p.get("id"), str) else where
    out = _missing(where, p, "id", "name", "api", "baseUrl")
    if isinstance(p.get("api"), str) and p["api"] not in SUPPORTED_APIS:
        out.append(f"{where}: api {p['api']!r} is not supported (use {', '.join(SUPPORTED_APIS)})")
    models = p.get("models")
    if not isinstance(models, list) or not models:
        return [*out, f"{where} needs a non-empty \"models\" array"]
    for j, m in enumerate(models):
        out += _model_problems(f"{where}.models[{j}]", m)
    return out


def _model_problems(where: str, m: Any) -> list[str]:
    if not isinstance(m, dict):
        return [f"{where} must be an object"]
    out = _missing(where, m, "id", "name")
    if "api" in m and m["api"] not in SUPPORTED_APIS:
        out.append(f"{where}: api {m['api']!r} is not supported")
    for key in ("contextWindow", "maxTokens"):
        if key in m and not (isinstance(m[key], int) and not isinstance(m[key], bool) and m[key] > 0):
            out.append(f"{where}: {key!r} must be a positive integer")
    if "reasoning" in m and not isinstance(m["reasoning"], bool):
        out.append(f"{where}: 'reasoning' must be true or false")
    if "input" in m and not (isinstance(m["input"], list) and all(x in MODEL_INPUTS for x in m["input"])):
        out.append(f"{where}: 'input' must be a list of {', '.join(MODEL_INPUTS)}")
    cost = m.get("cost")
    if "cost" in m and not (isinstance(cost, dict) and all(isinstance(v, int | float) and not isinstance(v, bool)
                                                            for v in cost.values())):
        out.append(f"{where}: 'cost' must be an object of numbers")
    return out


def _server_problems(where: str, s: Any) -> list[str]:
    if not isinstance(s, dict):
        return [f"{where} must be an object"]
    where = f"{where} ({s['id']})" if isinstance(s.get("id"), str) else where
    out = _missing(where, s, "id", "name")
    transport = s.get("transport")
    if transport not in MCP_TRANSPORTS:
        return [*out, f"{where}: transport must be one of {', '.join(MCP_TRANSPORTS)}"]
    out += _missing(where, s, "command" if transport == "stdio" else "url")
    if "args" in s and not (isinstance(s["args"], list) and all(isinstance(a, str) for a in s["args"])):
        out.append(f"{where}: 'args' must be a list of strings")
    for key in ("env", "headers"):
        value = s.get(key)
        if key in s and not (isinstance(value, dict) and all(isinstance(v, str) for v in value.values())):
            out.append(f"{where}: {key!r} must map names to strings")
    return out


def _secrets(files: dict[str, Any]) -> CheckItem:
    found: list[str] = []
    for filename, data in files.items():
        if data is not None:
            _walk_secrets(data, filename, "", found)
    if found:
        more = f" (and {len(found) - 5} more)" if len(found) > 5 else ""
        return CheckItem("secrets", False, "; ".join(found[:5]) + more +
                         " — read secrets from the environment (\"$ENV_NAME\") or ${settings.key}")
    return CheckItem("secrets", True, "no literal keys or tokens in mcp.json / models.json")


def _walk_secrets(value: Any, where: str, key: str, out: list[str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _walk_secrets(v, f"{where}.{k}", str(k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _walk_secrets(v, f"{where}[{i}]", key, out)
    elif isinstance(value, str) and value and not _ENV_REF.fullmatch(value):
        rest = _SETTING_REF.sub("", value)
        if any(p.search(rest) for p in _SECRET_SHAPES):
            out.append(f"{where} looks like a key or token")
        elif _SECRET_KEY.search(key) and rest.strip().lower() not in _AUTH_WORDS and not rest.strip().isdigit():
            out.append(f"{where} holds a literal value")
