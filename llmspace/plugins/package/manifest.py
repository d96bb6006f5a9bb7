"""Plugin metadata: `package.json` → `Manifest`, names, engines and folders.

`parse_manifest(data, where=…)` validates the required fields (`name`,
`version`, `engines["llm-space"]`) and keeps the recommended display fields (without
control characters, core/names.py `plain_text`: they are printed and shown); npm fields
such as `scripts`, `main` or `bin` stay in `raw` and are never acted upon.
`is_valid_package_name` applies npm's rules for new package names,
`llmSpace.capabilities` (llmspace/plugins/package/capabilities.py) is checked and kept;
`engines_compatible` checks a range against `APP_COMPAT_VERSION` (llmspace/plugins/contract.py;
npm range syntax, see llmspace/plugins/package/semrange.py), and `plugin_folder` maps a name to
its install folder.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import semver

from ...core.names import plain_text
from ...errors import MalformedJsonError
from ...jsonio import loads_located
from ..contract import APP_COMPAT_VERSION
from ..errors import PluginError
from .capabilities import declared, declared_problem
from .semrange import parse_range

ENGINE_KEY = "llm-space"
NAME_MAX = 214
_PART = r"[a-z0-9._-]+"
_NAME = re.compile(rf"(?:@(?P<scope>{_PART})/)?(?P<pkg>{_PART})")
_BLOCKED = frozenset({"node_modules", "favicon.ico"})


@dataclass(frozen=True)
class Manifest:
    """The metadata of one plugin. `raw` is the whole parsed `package.json`."""

    name: str
    version: str
    engines_range: str
    display_name: str = ""
    description: str = ""
    author: str = ""
    license: str = ""
    homepage: str = ""
    repository: str = ""
    keywords: tuple[str, ...] = ()
    capabilities: tuple[str, ...] | None = None  # llmSpace.capabilities; None: legacy (no key)
    raw: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)

    @property
    def title(self) -> str:
        """The name to show: `displayName`, else the package name."""
        return self.display_name or self.name


def name_problem(name: object) -> str | None:
    """Why `name` is not a valid npm package name for a new package, or None."""
    if not isinstance(name, str) or not name:
        return "the name must be a non-empty string"
    if len(name) > NAME_MAX:
        return f"the name is longer than {NAME_MAX} characters"
    if name != name.strip():
        return "the name may not start or end with spaces"
    if name.lower() != name:
        return "the name must be lowercase"
    if name[0] in "._":
        return "the name may not start with '.' or '_'"
    m = _NAME.fullmatch(name)
    if m is None:
        return "use lowercase letters, digits, '.', '_' and '-', optionally with a '@scope/' prefix"
    if m.group("pkg")[0] == "." or m.group("pkg") in _BLOCKED or (m.group("scope") or "") in (".", ".."):
        return f"'{m.group('pkg')}' is not allowed as a package name"
    return None


def is_valid_package_name(name: object) -> bool:
    """True when `name` follows npm's rules for new package names (lowercase, at most 214
    characters, URL-safe, optional `@scope/`)."""
    return name_problem(name) is None


def is_valid_version(version: object) -> bool:
    return isinstance(version, str) and semver.Version.is_valid(version)


def range_problem(range_text: object) -> str | None:
    """Why `range_text` is not an npm range, or None."""
    if not isinstance(range_text, str):
        return "the range must be a string"
    try:
        parse_range(range_text)
    except ValueError as exc:
        return str(exc)
    return None


def engines_compatible(range_text: str, app_version: str = APP_COMPAT_VERSION) -> bool:
    """True when the npm range `range_text` includes `app_version`; False when it does not
    or is not a valid range."""
    try:
        return parse_range(range_text).satisfies(app_version)
    except ValueError:
        return False


def plugin_folder(root_plugins_dir: Path, name: str) -> Path:
    """`plugins/<name>` or `plugins/@scope/<name>` for a valid name, else `PluginError`."""
    problem = name_problem(name)
    if problem is not None:
        raise PluginError(f"'{name}' is not a valid plugin name: {problem}.")
    return root_plugins_dir.joinpath(*name.split("/"))


def _text(data: dict[str, Any], key: str) -> str:
    value = data.get(key)
    if isinstance(value, str):
        return plain_text(value)
    if isinstance(value, dict):  # author {name, email, url}, repository {type, url}
        inner = value.get("name") if key == "author" else value.get("url")
        return plain_text(inner) if isinstance(inner, str) else ""
    return ""


def parse_manifest(data: bytes, *, where: str) -> Manifest:
    """The `Manifest` of the `package.json` bytes `data`; `where` names the file in
    messages. Raises `PluginError` naming the first problem."""
    try:
        raw = loads_located(data, where)
    except MalformedJsonError as exc:
        raise PluginError(exc.message, hint="Fix package.json; it was left unchanged.") from None
    if not isinstance(raw, dict):
        raise PluginError(f"{where}: package.json must hold a JSON object.")
    name = raw.get("name")
    problem = name_problem(name)
    if problem is not None:
        shown = f" '{name}'" if isinstance(name, str) else ""
        raise PluginError(f"{where}: invalid \"name\"{shown}: {problem}.")
    assert isinstance(name, str)
    version = raw.get("version")
    if not is_valid_version(version):
        raise PluginError(f"{where}: \"version\" must be a valid SemVer version such as 1.0.0 (found {version!r}).")
    engines = raw.get("engines")
    if not isinstance(engines, dict) or ENGINE_KEY not in engines:
        raise PluginError(f"{where}: \"engines\" must name the supported LLM Space versions, "
                          f"for example {{\"{ENGINE_KEY}\": \">={APP_COMPAT_VERSION}\"}}.")
    engines_range = engines[ENGINE_KEY]
    problem = range_problem(engines_range)
    if problem is not None:
        raise PluginError(f"{where}: engines[\"{ENGINE_KEY}\"] is not a SemVer range: {problem}.")
    assert isinstance(engines_range, str) and isinstance(version, str)
    problem = declared_problem(raw)
    if problem is not None:
        raise PluginError(f"{where}: {problem}.", hint="See docs/plugins.md, \"Capabilities\".")
    keywords = raw.get("keywords")
    return Manifest(
        name=name, version=version, engines_range=engines_range,
        display_name=_text(raw, "displayName"), description=_text(raw, "description"),
        author=_text(raw, "author"), license=_text(raw, "license"), homepage=_text(raw, "homepage"),
        repository=_text(raw, "repository"),
        keywords=tuple(k for k in keywords if isinstance(k, str)) if isinstance(keywords, list) else (),
        capabilities=declared(raw), raw=raw,
    )
