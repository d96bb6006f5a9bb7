"""The Variables dialog's logic, without Tk: checking JSON as it is typed, file paths made
relative to the thread's working directory where possible, and saving the dialog — typed
variables added, changed or removed and the custom text variables replaced — as one undo
step, in the thread's format (`json` and `file` variables in `context.variables`, text ones
in `context.variableVariants`, as the original app stores them).

    json_problem('{"a": 1')      # "Line 1, column 8: Expecting ',' delimiter"
    relative_path("/work/p/data.txt", "/work/p")  # "data.txt"
    save_variables(presenter, {"cfg": {"type": "json", "value": "{}"}}, set(), {"x": "1"})
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Protocol

from ..core.model import Thread, Variable
from ..core.templating import variables as V
from ..errors import UserFacingError
from ..paths import expand_home
from .view_updates import EditorUpdate, VariablesChanged

TYPED_KINDS = ("currentDate", "workingDirectory", "skills", "json", "file")
NEW_KINDS = {"json": "JSON", "file": "File content"}


def json_problem(text: str) -> str | None:
    """None for valid JSON (or an empty text: the variable has no value yet), else what is
    wrong and where ("Line 2, column 5: Expecting ',' delimiter")."""
    if not text.strip():
        return None
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"Line {exc.lineno}, column {exc.colno}: {exc.msg}"
    except ValueError as exc:
        return str(exc)
    return None


def json_status(text: str) -> tuple[bool, str]:
    """(ok, message) shown under a JSON field while typing."""
    if not text.strip():
        return True, "Empty: {{name}} stays as written until it has a value."
    problem = json_problem(text)
    return (False, problem) if problem else (True, "Valid JSON")


def working_directory(thread: Thread) -> Path | None:
    """The thread's working directory (its first working-directory variable), `~` expanded."""
    for v in V.typed_variables(thread).values():
        if v.type == "workingDirectory" and v.value.strip():
            return expand_home(v.value.strip()).absolute()
    return None


def relative_path(path: str, workdir: Path | str | None) -> str:
    """`path` relative to `workdir` when it lies inside it (as forward-slash text), else the
    path as given."""
    if not path or workdir is None:
        return path
    try:
        target = Path(os.path.abspath(path))
        base = Path(os.path.abspath(expand_home(str(workdir))))
        rel = target.relative_to(base)
    except (ValueError, OSError):
        return path
    return rel.as_posix() if str(rel) != "." else path


def variable_data(kind: str, value: str) -> dict[str, Any]:
    """A new typed variable as stored in the thread (`{"type": "json", "value": "…"}`)."""
    if kind not in NEW_KINDS:
        raise UserFacingError(f"Variables of kind {kind!r} cannot be added here.",
                              hint="Add a text, JSON or file variable.")
    return {"type": kind, "value": value}


class VariableDocument(Protocol):
    """What `save_variables` uses of the editor presenter."""

    thread: Thread

    def checkpoint(self, key: Any = None) -> None: ...

    def edited(self, update: EditorUpdate) -> None: ...

    def custom_variables(self) -> dict[str, str]: ...

    def typed_variables(self) -> dict[str, Any]: ...


def _check_name(name: str, taken: set[str]) -> None:
    if not V.is_valid_name(name):
        raise UserFacingError(f'"{name}" is not a valid variable name.',
                              hint="Start with a letter or underscore; use only letters, digits and underscores.")
    if name in taken:
        raise UserFacingError("Variable name already exists.", hint=f'Choose a name other than "{name}".')


def _validated(name: str, data: dict[str, Any]) -> Variable:
    if data.get("type") not in TYPED_KINDS:  # files may carry newer kinds; the editor creates known ones
        raise UserFacingError(f"The variable {name!r} has an unknown kind {data.get('type')!r}.",
                              hint=f"Use one of: {', '.join(TYPED_KINDS)}.")
    try:
        return Variable.model_validate(data)
    except Exception as exc:
        raise UserFacingError(f"The variable {name!r} is not valid: {exc}.") from None


def save_variables(doc: VariableDocument, typed: dict[str, dict[str, Any]], removed: set[str],
                   custom: dict[str, str]) -> bool:
    """Apply the dialog in one undo step: `typed` variables added or changed (by name, as
    stored), `removed` typed variables deleted, and the custom text variables replaced by
    `custom`. Everything is checked first; a refused name or JSON changes nothing (raises
    UserFacingError). Returns False when nothing changed."""
    current_typed = doc.typed_variables()
    current_custom = doc.custom_variables()
    changes: dict[str, Variable] = {}
    for name, data in typed.items():
        variable = _validated(name, data)
        old = current_typed.get(name)
        if old is not None and old.model_dump(exclude_unset=True) == variable.model_dump(exclude_unset=True):
            continue
        if variable.type == "json" and (problem := json_problem(variable.value or "")):
            raise UserFacingError(f'The JSON variable "{name}" is not valid JSON: {problem}.')
        changes[name] = variable
    gone = {n for n in removed if n in current_typed}
    kept_typed = (set(current_typed) - gone) | set(changes)
    for name in changes:
        if name not in current_typed:
            _check_name(name, (kept_typed - {name}) | set(custom))
    for name in custom:
        if name not in current_custom:
            _check_name(name, kept_typed | (set(custom) - {name}))
    if not changes and not gone and custom == current_custom:
        return False
    doc.checkpoint(None)
    thread = doc.thread
    for name in gone:
        V.delete_variable(thread, name)
    for name in current_custom:
        if name not in custom:
            V.delete_variable(thread, name)
    for name, variable in changes.items():
        V.set_typed_variable(thread, name, variable)
    for name, value in custom.items():
        V.set_text_variable(thread, name, value)
    doc.edited(VariablesChanged())
    return True
