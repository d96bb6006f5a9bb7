"""JSON in and out of plugin code: read-only views of what the app sends, strict checks of
what plugin code returns.

`freeze(value)` turns parsed JSON into `ReadOnlyDict` / `ReadOnlyList` (dict and list
subclasses whose changing methods raise `TypeError`, so `json.dumps`, `isinstance(x, dict)`
and iteration work as usual; `copy.deepcopy` gives plain, mutable dicts and lists).
`to_json(value)` turns a plugin's return value into plain JSON or raises `NotJSON` naming
the first thing JSON cannot carry (a set, bytes, an object, NaN, a cycle, …) and where.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, NoReturn

_READ_ONLY = "read-only: use copy.deepcopy(...) for a mutable copy"


def _refuse(*_args: object, **_kwargs: object) -> NoReturn:
    raise TypeError(_READ_ONLY)


class ReadOnlyDict(dict[str, Any]):
    """A dict of JSON that refuses changes."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[str, Any]:
        plain: dict[str, Any] = thaw(self)
        return plain

    def __reduce__(self) -> tuple[Any, ...]:
        return (dict, (thaw(self),))

    def __repr__(self) -> str:
        return f"ReadOnlyDict({dict.__repr__(self)})"


class ReadOnlyList(list[Any]):
    """A list of JSON that refuses changes."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse
    append = clear = extend = insert = pop = remove = reverse = sort = _refuse

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        plain: list[Any] = thaw(self)
        return plain

    def __reduce__(self) -> tuple[Any, ...]:
        return (list, (thaw(self),))

    def __repr__(self) -> str:
        return f"ReadOnlyList({list.__repr__(self)})"


def freeze(value: Any) -> Any:
    """Parsed JSON → the same JSON as read-only dicts and lists (strings and numbers as they are)."""
    if isinstance(value, dict):
        frozen = ReadOnlyDict()
        dict.update(frozen, ((k, freeze(v)) for k, v in value.items()))
        return frozen
    if isinstance(value, list):
        items = ReadOnlyList()
        list.extend(items, (freeze(v) for v in value))
        return items
    return value


def thaw(value: Any) -> Any:
    """Read-only (or plain) JSON → a plain, mutable deep copy."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value


class NotJSON(ValueError):
    """A value JSON cannot carry; `type` names it (`set`, `bytes`, `NaN`, `cycle`, a class name)."""

    def __init__(self, type_name: str, where: str) -> None:
        super().__init__(f"{_article(type_name)} at {where} is not JSON")
        self.type = type_name
        self.where = where


def _article(type_name: str) -> str:
    if type_name in ("NaN", "Infinity", "-Infinity"):
        return type_name
    if type_name == "cycle":
        return "a reference cycle"
    return f"{'an' if type_name[:1].lower() in 'aeiou' else 'a'} {type_name}"


def to_json(value: Any) -> Any:
    """A plugin's value → plain JSON (dicts, lists, str, int, float, bool, None).

    Mappings with string keys and lists/tuples are accepted; `bool`, `int`, `float` and `str`
    subclasses (enums) become the plain type. Raises `NotJSON` for anything else.
    """
    try:
        return _plain(value, "$", set())
    except RecursionError:
        raise NotJSON("structure nested too deeply", "$") from None


def _plain(value: Any, where: str, path: set[int]) -> Any:
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return value if type(value) is str else str.__str__(value)
    if isinstance(value, int):
        return value if type(value) is int else int(value)
    if isinstance(value, float):
        if math.isnan(value):
            raise NotJSON("NaN", where)
        if math.isinf(value):
            raise NotJSON("Infinity" if value > 0 else "-Infinity", where)
        return value if type(value) is float else float(value)
    if isinstance(value, Mapping | list | tuple):
        if id(value) in path:
            raise NotJSON("cycle", where)
        path.add(id(value))
        try:
            if isinstance(value, Mapping):
                out: dict[str, Any] = {}
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise NotJSON(f"{type(key).__name__} key", f"{where} (dict keys must be strings)")
                    out[str.__str__(key)] = _plain(item, f"{where}.{key}", path)
                return out
            return [_plain(item, f"{where}[{i}]", path) for i, item in enumerate(value)]
        finally:
            path.discard(id(value))
    raise NotJSON(_type_name(value), where)


def _type_name(value: Any) -> str:
    if callable(value) and hasattr(value, "__code__"):
        return "function"
    return type(value).__name__
