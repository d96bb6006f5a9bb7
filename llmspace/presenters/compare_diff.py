"""The compare dialog's Differences tab as styled lines, without Tk.

`diff_lines(text)` reads the plain text of `core.compare.render_text` and gives each line a
kind — "title" (the Run A/B lines), "heading" (a section: "Messages (…):", "Usage:"),
"meta" (the `--- A` / `+++ B` lines of a unified diff), "hunk" (`@@ … @@`), "removed",
"added", "context" or "plain" — its indentation (the view hangs wrapped continuation lines
under the text, not under the margin), and the character spans of the words that changed
between a removed line and the added line paired with it (the first removed line of a hunk
run with the first added one, and so on), so the change stands out inside a long line;
lines that are mostly different get no word marks (their colour says enough).

Pure.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

Span = tuple[int, int]
_TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
SIMILAR = 0.5  # token similarity below which a removed/added pair gets no word marks


@dataclass
class DiffLine:
    text: str
    kind: str
    indent: int  # characters before the line's text (after the +/-/space of a diff line)
    changed: list[Span] = field(default_factory=list)  # character ranges of changed words


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _classify(lines: list[str]) -> list[DiffLine]:
    out: list[DiffLine] = []
    block: int | None = None  # indentation of the unified diff being read
    i = 0
    while i < len(lines):
        text = lines[i]
        ind = _indent(text)
        body = text[ind:]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if body.startswith("--- ") and nxt[:ind] == " " * ind and nxt[ind:].startswith("+++ "):
            block = ind
            out.append(DiffLine(text, "meta", ind))
            out.append(DiffLine(nxt, "meta", ind))
            i += 2
            continue
        if block is not None and ind >= block and text[:block] == " " * block and text[block:block + 1] in "+- @" \
                and text[block:]:
            mark = text[block]
            kind = {"+": "added", "-": "removed", "@": "hunk"}.get(mark, "context")
            out.append(DiffLine(text, kind, block + (0 if kind == "hunk" else 1)))
            i += 1
            continue
        block = None
        if text.startswith(("Run A:", "Run B:")):
            kind = "title"
        elif ind == 0 and text.endswith(":"):
            kind = "heading"
        else:
            kind = "plain"
        out.append(DiffLine(text, kind, ind))
        i += 1
    return out


def _merge(spans: list[Span], text: str, offset: int) -> list[Span]:
    """Join spans separated only by whitespace, so a changed phrase reads as one mark."""
    out: list[Span] = []
    for start, end in spans:
        if out and not text[out[-1][1] - offset:start - offset].strip():
            out[-1] = (out[-1][0], end)
        else:
            out.append((start, end))
    return out


def _word_spans(a: str, b: str, offset_a: int, offset_b: int) -> tuple[list[Span], list[Span]]:
    """Character ranges of the tokens that differ between `a` and `b` (whitespace ignored);
    none when the lines have too little in common for word marks to help."""
    ta, tb = _TOKEN.findall(a), _TOKEN.findall(b)
    matcher = difflib.SequenceMatcher(None, ta, tb, autojunk=False)
    if matcher.ratio() < SIMILAR:
        return [], []
    starts_a = [0]
    for t in ta:
        starts_a.append(starts_a[-1] + len(t))
    starts_b = [0]
    for t in tb:
        starts_b.append(starts_b[-1] + len(t))
    spans_a: list[Span] = []
    spans_b: list[Span] = []
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "equal":
            continue
        if i2 > i1 and "".join(ta[i1:i2]).strip():
            spans_a.append((offset_a + starts_a[i1], offset_a + starts_a[i2]))
        if j2 > j1 and "".join(tb[j1:j2]).strip():
            spans_b.append((offset_b + starts_b[j1], offset_b + starts_b[j2]))
    return _merge(spans_a, a, offset_a), _merge(spans_b, b, offset_b)


def _mark_changes(lines: list[DiffLine]) -> None:
    i = 0
    while i < len(lines):
        if lines[i].kind != "removed":
            i += 1
            continue
        j = i
        while j < len(lines) and lines[j].kind == "removed":
            j += 1
        k = j
        while k < len(lines) and lines[k].kind == "added":
            k += 1
        for a, b in zip(lines[i:j], lines[j:k], strict=False):
            a.changed, b.changed = _word_spans(a.text[a.indent:], b.text[b.indent:], a.indent, b.indent)
        i = k if k > j else j


def diff_lines(text: str) -> list[DiffLine]:
    """The rendered comparison as styled lines (see the module docstring)."""
    lines = _classify(text.split("\n"))
    _mark_changes(lines)
    return lines
