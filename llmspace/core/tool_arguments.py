"""Tool-call argument text -> an argument object: the one lenient (partial-JSON) parser.

`read_arguments(text)` reads a JSON object that may be cut off mid-stream: whole JSON with
the standard library (exact integers of any size, NaN as models sometimes write it), else
the best partial reading with partial-json-parser (`{"a": [1, 2` -> `{"a": [1, 2]}`). It
says how the text read: "complete" (a whole object, or blank text), "partial" (an object
read from cut-off text), "unreadable" (no object: garbage, an array, a string).

Each reader applies its own rule for keeping the raw text in `partialArguments`:
- the run's turn fold (`agent/fold.TurnBuilder`) keeps it whenever the text is not complete
  (a stream that was cut may be resumed by a human);
- the live view of a running turn (`agent/fold.fold_run_event`) shows what has been read so
  far and keeps the previous arguments while the text is unreadable;
- the importers (`stored_arguments`) take any raw value, and keep the raw text only when
  no object could be read.

Pure.
"""

from __future__ import annotations

import json
from typing import Any, Literal

import orjson
import partial_json_parser

Reading = Literal["complete", "partial", "unreadable"]


def read_arguments(text: str) -> tuple[dict[str, Any], Reading]:
    """(arguments, how the text read); arguments are `{}` unless an object was read."""
    if not text.strip():
        return {}, "complete"
    value: Any
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = partial_json_parser.loads(text)
        except Exception:  # the parser raises several types (ValueError, IndexError, …) on garbage
            return {}, "unreadable"
        return (value, "partial") if _is_object(value) else ({}, "unreadable")
    return (value, "complete") if _is_object(value) else ({}, "unreadable")


def stored_arguments(raw: Any) -> tuple[dict[str, Any], str | None]:
    """(arguments, partialArguments or None) for a raw `arguments` value of any type, as an
    imported file carries it: an object as it is, None as `{}`, other values as their text."""
    if isinstance(raw, dict):
        return raw, None
    if raw is None:
        return {}, None
    if not isinstance(raw, str):
        try:
            return {}, orjson.dumps(raw).decode("utf-8")
        except TypeError:
            return {}, str(raw)
    arguments, reading = read_arguments(raw)
    return arguments, (raw if reading == "unreadable" else None)


def _is_object(value: Any) -> bool:
    return isinstance(value, dict) and all(isinstance(k, str) for k in value)
