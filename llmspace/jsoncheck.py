"""What the app's JSON files may hold, and where a value breaks the rules.

Limits shared by the reader and the writer in `llmspace/jsonio.py`, so that whatever one
accepts the other handles: at most `MAX_JSON_DEPTH` nested arrays/objects (what orjson can
write), text that is valid Unicode (no lone surrogates such as `\\ud800`), integers of at
most 4,300 digits (Python's conversion limit).

`first_problem(value)` walks a parsed value and returns the JSON path and the reason of
the first value that breaks them; `deep_position(data)` finds where raw JSON bytes nest
too deeply (used when a parser gave up before building the value); `format_path` renders
a JSON path the way error messages show it (`context.messages[2].content[0].text`).

Pure functions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_JSON_DEPTH = 254  # orjson writes at most this many nested containers
MAX_INT_DIGITS = 4300  # Python's int <-> str conversion limit (sys.get_int_max_str_digits)

DEPTH_REASON = f"nested more than {MAX_JSON_DEPTH} levels deep, which is not supported"
BIG_INT_REASON = f"a number with more than {MAX_INT_DIGITS:,} digits, which is not supported"

_IDENT = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")
_SHOWN_SEGMENTS = 8


class BigInt:
    """Stands in for an integer literal too long to convert (see `parse_int`)."""

    def __init__(self, digits: str) -> None:
        self.digits = len(digits.lstrip("-"))


def parse_int(text: str) -> int | BigInt:
    """`parse_int` hook for `json.loads`: huge literals become `BigInt` instead of raising."""
    try:
        return int(text)
    except ValueError:
        return BigInt(text)


def printable(text: str) -> str:
    """`text` with lone surrogates and control characters escaped (safe to print anywhere)."""
    out = []
    for ch in text:
        code = ord(ch)
        out.append(f"\\u{code:04x}" if 0xD800 <= code <= 0xDFFF or code < 0x20 or code == 0x7F else ch)
    return "".join(out)


def format_path(segments: list[str | int]) -> str:
    """`a.b[2].c`; odd keys quoted; very long paths shortened to their ends ("(root)" when empty)."""
    if not segments:
        return "(root)"
    shown = list(segments)
    skipped = 0
    if len(shown) > _SHOWN_SEGMENTS:
        skipped = len(shown) - _SHOWN_SEGMENTS
        shown = shown[:4] + shown[-4:]
    out = ""
    for i, seg in enumerate(shown):
        if skipped and i == 4:
            out += f"…({skipped} more levels)…"
        if isinstance(seg, int):
            out += f"[{seg}]"
        elif _IDENT.match(seg):
            out += f".{seg}" if out and not out.endswith("…") else seg
        else:
            out += '["' + printable(seg).replace('"', '\\"') + '"]'
    return out


def _bad_text(text: str) -> str | None:
    """The reason `text` cannot be stored as UTF-8, or None."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        code = ord(text[exc.start])
        if 0xDC80 <= code <= 0xDCFF:  # how Python passes on bytes that are not UTF-8 (file names, arguments)
            return f"text that is not valid Unicode (\\u{code:04x}: a lone surrogate, or the byte \\x{code - 0xDC00:02x} that is not UTF-8)"
        return f"text that is not valid Unicode (a lone surrogate \\u{code:04x})"
    return None


def _int_problem(value: int) -> str | None:
    if value.bit_length() <= 14_000:  # at most 4,215 digits: always fine
        return None
    try:
        str(value)
    except ValueError:
        return BIG_INT_REASON
    return None


def first_problem(value: Any) -> tuple[str, str] | None:
    """(JSON path, reason) of the first value that breaks the limits, or None. Iterative."""
    stack: list[tuple[Iterator[tuple[str | int, Any]], int]] = []
    path: list[str | int] = []

    def check(v: Any, depth: int) -> str | None:
        if isinstance(v, str):
            return _bad_text(v)
        if isinstance(v, bool):
            return None
        if isinstance(v, int):
            return _int_problem(v)
        if isinstance(v, BigInt):
            return BIG_INT_REASON
        if isinstance(v, (dict, list)) and depth > MAX_JSON_DEPTH:
            return DEPTH_REASON
        return None

    problem = check(value, 1 if isinstance(value, (dict, list)) else 0)
    if problem:
        return format_path(path), problem
    if isinstance(value, dict):
        stack.append((iter(value.items()), 1))
    elif isinstance(value, list):
        stack.append((iter(enumerate(value)), 1))
    else:
        return None
    path.append(0)  # placeholder for the current child's segment
    while stack:
        items, depth = stack[-1]
        item = next(items, None)
        if item is None:
            stack.pop()
            path.pop()
            continue
        key, child = item
        path[-1] = key
        if isinstance(key, str):
            bad_key = _bad_text(key)
            if bad_key:
                return format_path(path[:-1]), f"a key with {bad_key}"
        problem = check(child, depth + 1)
        if problem:
            return format_path(path), problem
        if isinstance(child, dict) and child:
            stack.append((iter(child.items()), depth + 1))
            path.append(0)
        elif isinstance(child, list) and child:
            stack.append((iter(enumerate(child)), depth + 1))
            path.append(0)
    return None


_TOKEN = re.compile(rb'"(?:[^"\\]|\\.)*"|[\[\]{},:]', re.DOTALL)


def deep_position(data: bytes, limit: int = MAX_JSON_DEPTH) -> tuple[int, str] | None:
    """(byte offset, JSON path) where `data` first opens more than `limit` nested containers."""
    frames: list[list[Any]] = []  # [is_object, segment, expecting_key]
    for match in _TOKEN.finditer(data):
        tok = match.group()
        first = tok[:1]
        if first in (b"{", b"["):
            if len(frames) >= limit:
                segments = [f[1] for f in frames if f[1] is not None]
                return match.start(), format_path(segments)
            frames.append([first == b"{", None if first == b"{" else 0, first == b"{"])
        elif first in (b"}", b"]"):
            if frames:
                frames.pop()
        elif first == b",":
            if frames:
                top = frames[-1]
                if top[0]:
                    top[2] = True
                elif isinstance(top[1], int):
                    top[1] += 1
        elif first == b":":
            if frames:
                frames[-1][2] = False
        elif frames and frames[-1][0] and frames[-1][2]:  # a key
            try:
                frames[-1][1] = json.loads(tok.decode("utf-8", "replace"))
            except ValueError:
                frames[-1][1] = tok[1:-1].decode("utf-8", "replace")
    return None
