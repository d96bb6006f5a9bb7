"""Prompt variables of a thread: the name rule, the defaults, the effective values, and edits.

What lives here:
- the name rule (`is_valid_name`, `{{ name }}` placeholders: `PLACEHOLDER_RE`) and the three
  default variables (`current_date`, `available_skills`, `current_working_directory`;
  `ensure_default_variables`, called by the editor presenter and used implicitly by
  rendering — never by plain load/save, so files round-trip byte for byte);
- the effective, normalised view of a thread's variables (`typed_variables`,
  `custom_values`, `all_names`, `validation_problems`);
- adding, changing, removing and renaming variables (`set_text_variable`,
  `set_typed_variable`, `delete_variable`, `rename_variable`), each dropping the frozen values
  it makes stale.

Frozen values and their invalidation are in `core/templating/frozen_values.py`; the text places
in `core/templating/places.py`; where each variable is used (editor hints, completions) in
`core/templating/references.py`. Pure: no network, no threads, no file access.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...errors import UserFacingError
from ..model import Thread, Variable, VariableVariants
from .frozen_values import apply_snapshot, on_variable_changed, snapshot_variables
from .places import rewrite_texts

NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# `{{ name }}` placeholders as the simple path sees them (no braces inside).
PLACEHOLDER_RE = re.compile(r"\{\{([^{}]*)\}\}")  # inner text is stripped by callers (linear matching)

DATE_NAME = "current_date"
SKILLS_NAME = "available_skills"
CWD_NAME = "current_working_directory"
DEFAULT_CWD = "~/Desktop/llm-space-project"
DEFAULT_BUCKET = "default"

DATE_FORMATS = ("readable-date", "iso-date", "local-date-time")
SKILLS_FORMATS = ("markdown-list", "xml")
# An unknown skills format falls back to xml, as the original app's normaliser does (files
# stay interchangeable), even though the default variable itself uses markdown-list.
DEFAULT_SKILLS_FORMAT = "xml"


def is_valid_name(name: object) -> bool:
    return isinstance(name, str) and bool(NAME_RE.match(name))


# ---------------------------------------------------------------------------------------
# Effective variables (normalised view; the thread is not changed)


@dataclass(frozen=True)
class TypedVar:
    """A normalised typed variable (what rendering uses)."""

    name: str
    type: str
    format: str = ""
    value: str = ""
    skill_names: tuple[str, ...] = ()
    include_all: bool = True
    indent: int = 0


def _default_variables() -> list[tuple[str, Variable]]:
    return [
        (DATE_NAME, Variable(type="currentDate", format="readable-date")),
        (SKILLS_NAME, Variable(type="skills", skillNames=[], format="markdown-list", indent=0)),
        (CWD_NAME, Variable(type="workingDirectory", value=DEFAULT_CWD)),
    ]


def _unique_name(base: str, used: set[str]) -> str:
    if base not in used:
        return base
    i = 2
    while f"{base}_{i}" in used:
        i += 1
    return f"{base}_{i}"


def _normalise(name: str, v: Variable) -> TypedVar:
    if v.type == "currentDate":
        fmt = v.format if v.format in DATE_FORMATS else "readable-date"
        return TypedVar(name, "currentDate", format=fmt)
    if v.type == "skills":
        names = tuple(n for n in (v.skillNames or []) if isinstance(n, str))
        include_all = v.includeAll if isinstance(v.includeAll, bool) else not names
        fmt = v.format if v.format in SKILLS_FORMATS else DEFAULT_SKILLS_FORMAT
        indent = v.indent if v.indent in (2, 4) else 0
        return TypedVar(name, "skills", format=fmt, skill_names=names, include_all=include_all, indent=int(indent))
    return TypedVar(name, v.type, value=v.value if isinstance(v.value, str) else "")


def typed_variables(thread: Thread) -> dict[str, TypedVar]:
    """Typed variables as rendering sees them: normalised, with the defaults added if missing."""
    ctx = thread.context
    out: dict[str, TypedVar] = {}
    for name, v in ((ctx.variables or {}) if ctx else {}).items():
        out[name] = _normalise(name, v)
    for name, v in _missing_defaults(thread, out):
        out[name] = _normalise(name, v)
    return out


def _missing_defaults(thread: Thread, existing: Mapping[str, Variable | TypedVar]) -> list[tuple[str, Variable]]:
    """The default variables of a type `existing` lacks, each named apart from `existing`'s
    and the custom variables' names."""
    present = {v.type for v in existing.values()}
    used = set(existing) | set(custom_values(thread))
    missing: list[tuple[str, Variable]] = []
    for name, v in _default_variables():
        if v.type not in present:
            unique = _unique_name(name, used)
            used.add(unique)
            missing.append((unique, v))
    return missing


def _bucket(vv: VariableVariants | None) -> dict[str, Any] | None:
    if vv is None:
        return None
    variants = vv.variants or {}
    if isinstance(variants.get(DEFAULT_BUCKET), dict):
        return variants[DEFAULT_BUCKET]
    if isinstance(vv.active, str) and isinstance(variants.get(vv.active), dict):
        return variants[vv.active]
    for value in variants.values():
        if isinstance(value, dict):
            return value
    return None


def custom_values(thread: Thread) -> dict[str, str]:
    """Custom text variables (name -> value) from `variableVariants`: the `default` bucket,
    else the active one, else the first; values that are not strings are left out."""
    ctx = thread.context
    bucket = _bucket(ctx.variableVariants if ctx else None) or {}
    return {k: v for k, v in bucket.items() if isinstance(v, str)}


def all_names(thread: Thread) -> set[str]:
    return set(typed_variables(thread)) | set(custom_values(thread))


def validation_problems(thread: Thread) -> list[str]:
    """Why a run must be refused: invalid names, custom/typed name clashes."""
    problems: list[str] = []
    typed = typed_variables(thread)
    for name in typed:
        if not is_valid_name(name):
            problems.append(f'Variable name "{name}" is invalid.')
    for name in custom_values(thread):
        if not is_valid_name(name):
            problems.append(f'Custom variable name "{name}" is invalid.')
        elif name in typed:
            problems.append(f'Variable "{name}" is defined as both a built-in and a custom variable.')
    return problems


# ---------------------------------------------------------------------------------------
# Materialising defaults (editor) and editing variables


def ensure_default_variables(thread: Thread) -> bool:
    """Add the default variables (and the `default` custom bucket) if missing. Returns changed.

    Called by the editor when a thread is shown; not by load/save (files round-trip)."""
    ctx = thread.ensure_context()
    variables = dict(ctx.variables or {})
    missing = _missing_defaults(thread, variables)
    variables.update(missing)
    changed = bool(missing)
    if changed or ctx.variables is None:
        ctx.variables = variables
        changed = True
    vv = ctx.variableVariants
    if vv is None:
        ctx.variableVariants = VariableVariants(active=DEFAULT_BUCKET, variants={DEFAULT_BUCKET: {}})
        changed = True
    elif not isinstance((vv.variants or {}).get(DEFAULT_BUCKET), dict):
        bucket = {k: v for k, v in (_bucket(vv) or {}).items() if isinstance(v, str)}
        vv.variants = {DEFAULT_BUCKET: bucket}
        vv.active = DEFAULT_BUCKET
        changed = True
    return changed


def _custom_bucket(thread: Thread) -> dict[str, Any]:
    ctx = thread.ensure_context()
    if ctx.variableVariants is None:
        ctx.variableVariants = VariableVariants(active=DEFAULT_BUCKET, variants={DEFAULT_BUCKET: {}})
    vv = ctx.variableVariants
    assert vv is not None
    variants = vv.variants
    if not isinstance(variants.get(DEFAULT_BUCKET), dict):
        variants = {DEFAULT_BUCKET: dict(_bucket(vv) or {})}
        vv.variants = variants
    return variants[DEFAULT_BUCKET]


def check_new_name(thread: Thread, name: str, *, current: str | None = None) -> str:
    """Validate a name for a new or renamed variable; returns it. Raises UserFacingError."""
    if not is_valid_name(name):
        raise UserFacingError(
            f'"{name}" is not a valid variable name.',
            hint="Start with a letter or underscore; use only letters, digits and underscores.",
        )
    if name != current and name in all_names(thread):
        raise UserFacingError("Variable name already exists.", hint=f'Choose a name other than "{name}".')
    return name


def set_text_variable(thread: Thread, name: str, value: str) -> None:
    """Add or change a custom text variable (stored in `variableVariants.variants.default`)."""
    current = custom_values(thread)
    if name not in current:
        check_new_name(thread, name)
    elif current[name] == value:
        return  # unchanged: frozen values stay
    _custom_bucket(thread)[name] = value
    on_variable_changed(thread, name)


def set_typed_variable(thread: Thread, name: str, variable: Variable) -> None:
    """Add or replace a typed variable (date, skills, working directory, JSON, file)."""
    ctx = thread.ensure_context()
    variables = dict(ctx.variables or {})
    if name not in variables:
        check_new_name(thread, name)
    elif variables[name].model_dump(exclude_unset=True) == variable.model_dump(exclude_unset=True):
        return  # unchanged: frozen values stay
    variables[name] = variable
    ctx.variables = variables
    on_variable_changed(thread, name)


def delete_variable(thread: Thread, name: str) -> bool:
    """Remove a variable of either kind. Returns True when something was removed."""
    ctx = thread.context
    if ctx is None:
        return False
    removed = False
    if ctx.variables and name in ctx.variables:
        ctx.variables = {k: v for k, v in ctx.variables.items() if k != name}
        removed = True
    bucket = _bucket(ctx.variableVariants)
    if bucket is not None and name in bucket:
        del bucket[name]
        removed = True
    if removed:
        on_variable_changed(thread, name)
    return removed


# ---------------------------------------------------------------------------------------
# Renaming

def rename_variable(thread: Thread, old: str, new: str) -> bool:
    """Rename a variable of either kind, rewriting every reference and the snapshot keys.

    `{{ old }}` becomes `{{new}}`; in template texts, identifier uses of `old` (not inside
    quotes, not after a dot) are renamed too. Returns False when `old` does not exist."""
    if old == new:
        return False
    ctx = thread.context
    if ctx is None:
        return False
    bucket = _bucket(ctx.variableVariants)
    in_typed = bool(ctx.variables and old in ctx.variables)
    in_custom = bucket is not None and old in bucket
    if not (in_typed or in_custom):
        return False
    check_new_name(thread, new)
    if in_typed and ctx.variables is not None:
        ctx.variables = {(new if k == old else k): v for k, v in ctx.variables.items()}
    if in_custom and bucket is not None:
        items = list(bucket.items())
        bucket.clear()
        bucket.update((new if k == old else k, v) for k, v in items)

    from .templates import is_template, rename_in_template  # here: Jinja2 loads on first use

    simple = re.compile(r"\{\{\s*" + re.escape(old) + r"\s*\}\}")

    def rewrite(text: str) -> str:
        if old not in text:
            return text
        if is_template(text):
            return rename_in_template(text, old, new)
        return simple.sub("{{" + new + "}}", text)

    rewrite_texts(thread, rewrite)
    snap = snapshot_variables(thread)
    if any(old in place for place in snap.values()):
        for place in snap.values():
            if old in place:
                items = list(place.items())
                place.clear()
                place.update((new if k == old else k, v) for k, v in items)
        apply_snapshot(thread, snap)
    return True
