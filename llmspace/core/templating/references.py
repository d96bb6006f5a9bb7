"""Where a thread uses its prompt variables, for the editor: every reference (`{{ name }}` or a
name a template uses) with its status — ok, empty, unknown, invalid — and span (`references`,
`value_status`, the underline and hover of the editor); whether a variable is still used
(`is_referenced`, the delete confirmation); and the completion list with a hint per variable
(`completions`, `variable_hint`).

Pure: no I/O.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from ..model import Thread
from .builtin_formats import format_current_date
from .places import iter_places
from .variables import PLACEHOLDER_RE, all_names, custom_values, is_valid_name, typed_variables

RefStatus = Literal["ok", "empty", "unknown", "invalid"]


@dataclass(frozen=True)
class VariableRef:
    """One variable reference in a text surface, for editor hints."""

    name: str
    place: str  # snapshot place key (systemPrompt, message:<id>:text, toolResult:<m>:<c>:text)
    status: RefStatus
    part: int = 0  # index of the text part within the place
    start: int = -1  # character span of the reference in that text (-1: not located)
    end: int = -1


def value_status(thread: Thread, name: str) -> RefStatus:
    """ok / empty / unknown / invalid for a variable name (the status shown when hovering a reference)."""
    if not is_valid_name(name):
        return "invalid"
    typed = typed_variables(thread)
    if name in typed:
        v = typed[name]
        if v.type in ("json", "file") and not v.value.strip():
            return "empty"
        return "ok"
    custom = custom_values(thread)
    if name in custom:
        return "ok" if custom[name].strip() else "empty"
    return "unknown"


def references(thread: Thread) -> list[VariableRef]:
    """Every variable reference in the thread's text surfaces, with its resolution status.

    Simple-path texts report `{{ name }}` placeholders (names that look like an attempt at a
    name but break the rule are `invalid`); template texts report identifiers used in
    `{{ }}` / `{% %}` that are not template keywords or locals."""
    from .templates import is_template, referenced_names

    out: list[VariableRef] = []
    statuses: dict[str, RefStatus] = {}

    def status(name: str) -> RefStatus:
        if name not in statuses:
            statuses[name] = value_status(thread, name)
        return statuses[name]

    for key, _label, texts in iter_places(thread):
        for part, text in enumerate(texts):
            if "{{" not in text and "{%" not in text:
                continue
            if is_template(text):
                for name, start, end in referenced_names(text):
                    out.append(VariableRef(name, key, status(name), part, start, end))
                continue
            for m in PLACEHOLDER_RE.finditer(text):
                inner = m.group(1).strip()
                if is_valid_name(inner):
                    out.append(VariableRef(inner, key, status(inner), part, m.start(), m.end()))
                elif re.fullmatch(r"[\w-]+", inner):
                    out.append(VariableRef(inner, key, "invalid", part, m.start(), m.end()))
    return out


def variable_hint(thread: Thread, name: str, now: datetime | None = None) -> str:
    """The completion-list hint for a variable."""
    typed = typed_variables(thread)
    if name in typed:
        v = typed[name]
        if v.type == "currentDate":
            return format_current_date(v.format, now)
        if v.type == "workingDirectory":
            return v.value or "(empty)"
        if v.type == "json":
            return " ".join(v.value.split()) or "(empty)"
        if v.type == "file":
            return v.value.strip() or "(no file)"
        if v.include_all:
            return "All enabled skills"
        if not v.skill_names:
            return "No skills selected"
        return f"{len(v.skill_names)} selected skill(s)"
    value = custom_values(thread).get(name)
    if value is None:
        return ""
    return value if value.strip() else "(empty)"


def completions(thread: Thread, now: datetime | None = None) -> list[tuple[str, str]]:
    """(name, hint) for every variable, sorted by name: the editor's completion list."""
    return [(name, variable_hint(thread, name, now)) for name in sorted(all_names(thread))]


def is_referenced(thread: Thread, name: str) -> bool:
    """Whether any text surface still uses `name` (the delete confirmation warns about it)."""
    return any(ref.name == name for ref in references(thread))
