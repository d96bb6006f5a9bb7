"""Help with prompt variables while typing, without Tk: the spans to highlight
(`{{ … }}` and `{% … %}`), the `{{` completion (the partial name before the cursor, the
filtered list, what to insert) and the value shown when hovering a reference (resolved as the
run would: frozen values of the place first, with the reason when it cannot be resolved).

    highlight_spans("Hi {{ name }}")        # [("var", 3, 13)]
    completion_prefix("Dear {{cu")          # "cu"
    query = hover_query(thread, "{{name}}", "systemPrompt", trusted=True)  # on the UI thread
    resolve_hover(query, RenderEnv(skills=app.skills))                     # on a worker

Resolution uses `core/templating/resolution.py` (the same `VariableValues` that rendering and
`resolve_variables` use).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ..core.model import PromptSnapshot, Thread, ThreadContext
from ..core.templating import variables as V
from ..core.templating.frozen_values import snapshot_variables
from ..core.templating.resolution import FileAccess, RenderEnv, VariableError, VariableValues, parse_json
from ..errors import UserFacingError

# `{{ … }}` / `{% … %}` that stop at the next opening marker: linear on text full of stray braces
VAR_SPAN = re.compile(r"\{\{(?:(?!\}\}|\{\{).)*\}\}", re.S)
TAG_SPAN = re.compile(r"\{%(?:(?!%\}|\{%).)*%\}", re.S)
_OPEN_NAME = re.compile(r"\{\{[ \t]*([A-Za-z0-9_]*)$")
_ROOT_NAME = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*[.\[|(]")
HOVER_CHARS = 400
HOVER_LINES = 10
COMPLETION_LIMIT = 50


def highlight_spans(text: str) -> list[tuple[str, int, int]]:
    """("var" | "tag", start, end) character spans of every `{{ … }}` and `{% … %}`."""
    if "{" not in text:
        return []
    spans = [("var", m.start(), m.end()) for m in VAR_SPAN.finditer(text)]
    if "{%" in text:
        spans += [("tag", m.start(), m.end()) for m in TAG_SPAN.finditer(text)]
    return spans


# -- completion ------------------------------------------------------------------------------
def completion_prefix(before: str) -> str | None:
    """The partial variable name typed after an unclosed `{{` that ends right at the cursor
    (`before` is the text before the cursor); None when the cursor is not in such a place."""
    m = _OPEN_NAME.search(before[-200:])
    return m.group(1) if m else None


def typed_open_braces(before: str, typed: int) -> bool:
    """Whether the just inserted text (its last `typed` characters end at the cursor; `before`
    is the text before the cursor) completed an unclosed `{{`: the completion list opens on
    what was inserted, whatever order the keys went up in, and not when the cursor merely
    stands after an older `{{`."""
    tail = before[-200:]
    m = _OPEN_NAME.search(tail)
    return m is not None and typed > 0 and len(tail) - (m.start() + 2) < typed


def filter_completions(items: list[tuple[str, str]], prefix: str, limit: int = COMPLETION_LIMIT) -> list[tuple[str, str]]:
    """Items whose name starts with `prefix` (case-insensitive), then those that contain it."""
    p = prefix.lower()
    starts = [it for it in items if it[0].lower().startswith(p)]
    inside = [it for it in items if p and p in it[0].lower() and not it[0].lower().startswith(p)]
    return (starts + inside)[:limit]


def completion_edit(prefix: str, name: str, after: str) -> tuple[int, str]:
    """(characters to delete before the cursor, text to insert) to complete `name`: the typed
    prefix is replaced by `name}}` (only `name` when `}}` already follows the cursor)."""
    return len(prefix), name if after.lstrip(" \t").startswith("}}") else name + "}}"


def completion_label(name: str, hint: str, width: int = 40) -> str:
    """`name — hint` for the list (the hint on one line, cut with "…")."""
    hint = " ".join(hint.split())
    if not hint:
        return name
    return f"{name} — {hint if len(hint) <= width else hint[: width - 1] + '…'}"


# -- hover -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class HoverQuery:
    """What a hover asks, snapshotted on the UI thread: the reference as written, the variable
    it reads, where it is, and a small copy of the thread's variables and frozen values."""

    written: str  # the `{{ … }}` text under the pointer
    name: str  # the variable it reads ("" for an include)
    kind: str  # "name" ({{ x }}), "expression" ({{ x.y }}, {{ x | f }}) or "include"
    place: str | None  # snapshot place key of the text (None: not a rendered place)
    trusted: bool  # the run renders this text (system prompt, user messages, function tool results)
    thread: Thread


def parse_reference(written: str) -> tuple[str, str] | None:
    """(kind, name) of a `{{ … }}` text: a plain name, an expression on a variable, or an include."""
    if not (written.startswith("{{") and written.endswith("}}")):
        return None
    inner = written[2:-2].strip()
    if inner.startswith("@"):
        return "include", ""
    if V.is_valid_name(inner):
        return "name", inner
    m = _ROOT_NAME.match(inner)
    if m:
        return "expression", m.group(1)
    return None


def hover_query(thread: Thread, written: str, place: str | None, trusted: bool) -> HoverQuery | None:
    """Snapshot what `resolve_hover` needs (UI thread); None when `written` is no reference."""
    parsed = parse_reference(written)
    if parsed is None:
        return None
    kind, name = parsed
    ctx = thread.context
    small = Thread()
    if ctx is not None:
        frozen = snapshot_variables(thread).get(place or "", {})
        small.context = ThreadContext(
            variables={k: v.model_copy(deep=True) for k, v in (ctx.variables or {}).items()} or None,
            variableVariants=ctx.variableVariants.model_copy(deep=True) if ctx.variableVariants is not None else None,
            snapshot=PromptSnapshot(variables={place: dict(frozen)}) if place and frozen else None,
        )
    return HoverQuery(written, name, kind, place, trusted, small)


def cut(value: str, chars: int = HOVER_CHARS, lines: int = HOVER_LINES) -> str:
    """`value` shortened to `lines` lines and `chars` characters, ending in "…" when cut."""
    out = value
    rows = out.split("\n")
    if len(rows) > lines:
        out = "\n".join(rows[:lines])
    if len(out) > chars:
        out = out[:chars]
    return out + "…" if out != value else out


def resolve_hover(q: HoverQuery, env: RenderEnv | None = None) -> str:
    """The tooltip text: what the run puts in place of the reference, or why it cannot.
    May read files and list skills: call it off the UI thread."""
    if not q.trusted:
        return (f"{q.written} is sent as written: variables are replaced only in the system prompt, "
                "user messages and results of function tools.")
    if q.kind == "include":
        return f"{q.written}: the file's contents are included when the thread runs."
    env = env or RenderEnv()
    files = FileAccess(env.base_dir)
    try:
        values = VariableValues(q.thread, env, files)
    except UserFacingError as exc:
        return f"Cannot resolve {q.written}: {exc}"
    if env.base_dir is None:
        files.base = values.working_directory()
    head = f"{q.name} · {_kind_label(values, q.name)}"
    if q.kind == "expression":
        head += f" (used in {q.written})"
    frozen = snapshot_variables(q.thread).get(q.place or "", {}).get(q.name)
    if frozen is not None and q.kind == "name" and q.name not in values.skill_names:
        return f"{head}\n{cut(frozen)}\n(the value frozen at the last run; editing this text renews it)"
    return f"{head}\n{_fresh_value(values, files, q)}"


_KIND_LABELS = {"currentDate": "date", "workingDirectory": "working directory", "skills": "skills",
                "json": "JSON", "file": "file"}


def _kind_label(values: Any, name: str) -> str:
    typed = values.typed.get(name)
    if typed is not None:
        return _KIND_LABELS.get(str(typed.type), str(typed.type))
    return "text" if name in values.custom else "unknown"


def _fresh_value(values: Any, files: Any, q: HoverQuery) -> str:
    name, written = q.name, q.written
    typed = values.typed.get(name)
    if typed is None and name not in values.custom:
        return f"Unknown variable: there is no variable named {name}, so {written} is sent as written."
    if typed is not None and typed.type == "json":
        if not typed.value.strip():
            return f"The JSON variable is empty, so {written} is sent as written."
        try:
            parse_json(typed.value)
        except ValueError as exc:
            return f"Not valid JSON ({exc}); the text is sent as written:\n{cut(typed.value)}"
    if typed is not None and typed.type == "file":
        if not typed.value.strip():
            return f"No file chosen, so {written} is sent as written."
        path = files.path(typed.value)
        if not files.exists(typed.value):
            return f"File not found or unreadable: {path}. The run inserts nothing."
    try:
        value = values.simple(name)
    except VariableError as exc:
        return f"{exc} The run is refused until it has a value."
    if value is None:
        return f"No value, so {written} is sent as written."
    if not value:
        return "(empty: the run inserts nothing)"
    return cut(value)
