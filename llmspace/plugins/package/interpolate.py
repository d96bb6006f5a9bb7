"""Interpolation of plugin `mcp.json` / `models.json` strings (docs/plugins.md, "Interpolation in mcp.json
and models.json").

    interpolate({"token": "$API_TOKEN", "url": "${settings.endpoint}/v1"}, settings, env)

- a string that is exactly `$ENV_NAME` becomes that environment variable (missing → "");
- `${settings.a.b}` anywhere in a string becomes the plugin setting at that path; strings
  are inserted as they are, other values JSON-serialised (`{"a":1}`, `true`, `3`), a
  missing setting becomes "";
- only values are rewritten (not keys); the result is a new object, nothing is written
  back, and inserted text is never interpolated again.

A pure function: the contribution loaders apply it after reading the file
(llmspace/plugins/contributions/config_files.py); discovery reads `env_references` to keep
the values of the variables a plugin names out of its logs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from typing import Any

_ENV = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
_SETTING = re.compile(r"\$\{settings\.([^{}]+)\}")
_MISSING = object()


def _lookup(settings: Mapping[str, Any], path: str) -> Any:
    value: Any = settings
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _text(value: Any) -> str:
    if value is _MISSING:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def interpolate_string(text: str, settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> str:
    whole = _ENV.fullmatch(text)
    if whole is not None:
        return (os.environ if env is None else env).get(whole.group(1), "")
    return _SETTING.sub(lambda m: _text(_lookup(settings, m.group(1))), text)


def interpolate(value: Any, settings: Mapping[str, Any], env: Mapping[str, str] | None = None) -> Any:
    """`value` (parsed JSON) with every string interpolated; `env` defaults to os.environ."""
    if isinstance(value, str):
        return interpolate_string(value, settings, env)
    if isinstance(value, dict):
        return {k: interpolate(v, settings, env) for k, v in value.items()}
    if isinstance(value, list):
        return [interpolate(v, settings, env) for v in value]
    return value


def env_references(value: Any) -> set[str]:
    """The names of the environment variables that `value`'s whole-string `$NAME`s read."""
    if isinstance(value, str):
        m = _ENV.fullmatch(value)
        return {m.group(1)} if m else set()
    if isinstance(value, dict):
        return set().union(*(env_references(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(env_references(v) for v in value)) if value else set()
    return set()
