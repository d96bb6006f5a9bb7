"""How values look inside a template (the Jinja2 path of prompt rendering).

- `Sentinel`: stands in for a name no variable defines — prints itself as written (`{{name}}`,
  so unknown names stay as written) and is falsy in `{% if %}`; `.attr`/`[key]` on it give a
  sentinel for the longer expression.
- `JsonDict`, `JsonList`, `wrap_json`: a JSON variable's parsed value, printed as pretty JSON.
- `printable`: JSON booleans and null print as `true`/`false`/`` (the environment's finalize).

Pure.
"""

from __future__ import annotations

import json
from typing import Any


class Sentinel(str):
    """Stands in for an unknown name: prints `{{name}}`, is falsy; `.attr` / `[key]` on it give
    a sentinel for the longer expression, so unknown dotted names also stay as written."""

    def __bool__(self) -> bool:
        return False

    def child(self, key: Any, attribute: bool) -> Sentinel:
        inner = self[2:-2]
        if attribute:
            return Sentinel(f"{{{{{inner}.{key}}}}}")
        shown = json.dumps(key, ensure_ascii=False) if isinstance(key, str) else repr(key)
        return Sentinel(f"{{{{{inner}[{shown}]}}}}")


def _pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


class JsonDict(dict):  # type: ignore[type-arg]
    """A JSON object in a template: prints as pretty JSON; `.key` reads the key first."""

    def __str__(self) -> str:
        return _pretty(self)


class JsonList(list):  # type: ignore[type-arg]
    """A JSON array in a template: prints as pretty JSON."""

    def __str__(self) -> str:
        return _pretty(self)


def wrap_json(value: Any) -> Any:
    """Parsed JSON with objects/arrays wrapped so templates print them as pretty JSON."""
    if isinstance(value, dict):
        return JsonDict((k, wrap_json(v)) for k, v in value.items())
    if isinstance(value, list):
        return JsonList(wrap_json(v) for v in value)
    return value


def printable(value: Any) -> Any:
    """What a printed value shows: JSON's `true`/`false` and `` for null, the way the original's
    engine prints them (the environment's `finalize`)."""
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return ""
    return value
