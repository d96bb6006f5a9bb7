"""Glob patterns as used by the `glob` and `grep` built-ins (fast-glob / ripgrep style).

`*` and `?` stay inside one path segment, `**` spans segments (also none), `[...]` is a
class, `{a,b}` alternatives; dot-files match like any other name. Pure functions.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

_MAGIC = re.compile(r"[*?\[\]{}]")


def expand_braces(pattern: str) -> list[str]:
    """`a{b,c{d,e}}f` -> [abf, acdf, acef] (unbalanced braces are kept literally)."""
    depth = 0
    start = -1
    for i, ch in enumerate(pattern):
        if ch == "\\":
            continue
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                inner = pattern[start + 1 : i]
                parts, level, cur = [], 0, ""
                for c in inner:
                    if c == "," and level == 0:
                        parts.append(cur)
                        cur = ""
                        continue
                    level += c == "{"
                    level -= c == "}"
                    cur += c
                parts.append(cur)
                if len(parts) < 2:
                    continue
                head, tail = pattern[:start], pattern[i + 1 :]
                return [x for p in parts for x in expand_braces(head + p + tail)]
    return [pattern]


def _segment_regex(segment: str) -> str:
    out, i = [], 0
    while i < len(segment):
        ch = segment[i]
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            j = segment.find("]", i + 2 if i + 1 < len(segment) and segment[i + 1] in "!^" else i + 1)
            if j == -1:
                out.append(re.escape(ch))
            else:
                body = segment[i + 1 : j]
                if body[:1] in ("!", "^"):
                    body = "^" + body[1:]
                out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
                i = j
        elif ch == "\\" and i + 1 < len(segment):
            i += 1
            out.append(re.escape(segment[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    return "".join(out)


def _translate(pattern: str) -> str:
    segments = [s for s in pattern.replace(os.sep, "/").split("/") if s not in ("", ".")]
    parts: list[str] = []
    for index, seg in enumerate(segments):
        last = index == len(segments) - 1
        if seg == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
        else:
            parts.append(_segment_regex(seg) + ("" if last else "/"))
    return "".join(parts)


def compile_glob(pattern: str) -> tuple[Callable[[str], bool], int | None]:
    """A matcher for relative posix paths, and the deepest segment count a match can have
    (None when `**` allows any depth)."""
    alternatives = expand_braces(pattern)
    regex = re.compile("^(?:" + "|".join(_translate(p) for p in alternatives) + ")$", re.DOTALL)
    depth: int | None = 0
    for p in alternatives:
        segs = [s for s in p.replace(os.sep, "/").split("/") if s not in ("", ".")]
        if "**" in segs or any("**" in s for s in segs):
            depth = None
            break
        depth = max(depth or 0, len(segs))
    return (lambda rel: regex.match(rel) is not None), depth


def literal_root(pattern: str) -> tuple[str, str]:
    """Split an absolute pattern into its literal leading folder and the rest."""
    segments = pattern.replace(os.sep, "/").split("/")
    root: list[str] = []
    for index, seg in enumerate(segments[:-1]):
        if _MAGIC.search(seg):
            return ("/".join(root) or "/"), "/".join(segments[index:])
        root.append(seg)
    return ("/".join(root) or "/"), segments[-1]
