"""Lenient parsing of tool-call argument text, as the original app does it.

`parse_arguments(raw)` turns a JSON string (possibly truncated mid-stream) into an argument
object. Truncated JSON like `{"a": 1` yields `{"a": 1}`; text that yields no object gives
`{}` with the raw text kept for `partialArguments`. Empty or blank text gives `{}`.

Pure.
"""

from __future__ import annotations

from typing import Any

import orjson
import partial_json_parser


def parse_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments, partialArguments or None) for a raw `arguments` value of any type."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    if not isinstance(raw, str):
        try:
            return {}, orjson.dumps(raw).decode("utf-8")
        except TypeError:
            return {}, str(raw)
    if not raw.strip():
        return {}, None
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        try:
            value = partial_json_parser.loads(raw)
        except Exception:  # the parser raises several types (ValueError, IndexError, …) on garbage
            value = None
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return value, None
    return {}, raw
