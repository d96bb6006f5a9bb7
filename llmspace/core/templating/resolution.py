"""Prompt variables resolved to values: what a `{{ name }}` stands for when a thread is rendered,
and the values plugin tools see.

- `RenderEnv`: what resolution and rendering may consult besides the thread (skills, the
  clock, `--var` overrides, the base folder of relative paths, the template time bound, the
  frozen values to use).
- `VariableValues`: each variable's value for one render, computed at most once — custom
  text, the working directory, `current_date` (`builtin_formats.py`), the skills list, a JSON
  variable (pretty text on the simple path, a wrapped value on the template path), a file
  variable's UTF-8 text. `VariableError` for a value that cannot be had (empty text, a skill
  that is not enabled); `render_error` the `UserFacingError` a render raises.
- `FileAccess`: how file variables, `@include` and `exists()` read: `~` expanded, relative to
  the base folder, a regular file only (a FIFO or device never blocks), at most 20 MiB.
- `resolve_variables(thread, env)`: a thread's variables as plugin tools see them in
  `context.variables` (plugin guide §9.1): custom, working-directory and current-date
  variables are strings, skills variables the formatted list, file variables the file's text,
  JSON variables the parsed value; empty or unresolvable ones are left out.

Which texts are evaluated at all is decided in `core/templating/render.py`. Reads files (file
variables); no network, no threads.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ...errors import UserFacingError
from ...jsonio import UnreadableFileError, open_regular_file
from ...paths import expand_home
from ..model import Thread
from . import variables as V
from .builtin_formats import format_current_date, format_skills
from .jinja_values import wrap_json
from .sandbox import MAX_SECONDS

_MAX_FILE_BYTES = 20 * 1024 * 1024


@dataclass
class RenderEnv:
    """What rendering may consult besides the thread (skills, files, the clock)."""

    skills: Any = None  # a SkillManager-like object with `enabled()`, or None (no skills)
    now: Any = None  # a datetime for current_date, or None for "now"
    # `--var NAME=VALUE`: text variables (added or replaced); working-directory, JSON and file
    # variables get that value (directory, JSON source, path); date and skills ones are refused.
    overrides: dict[str, str] = field(default_factory=dict)
    # Relative paths of file variables, `@include` and `exists()` resolve here; default: the
    # thread's working directory variable (current_working_directory), else the process cwd.
    base_dir: Path | None = None
    # Wall-time bound of each template text (seconds); see core/templating/sandbox.py for the other bounds.
    template_seconds: float = MAX_SECONDS
    # Frozen values to use instead of the thread's stored snapshot (e.g. the snapshot returned
    # by the previous render of the same run, so earlier places stay frozen in a ReAct loop).
    snapshot: dict[str, dict[str, str]] | None = None


def _js_number(text: str) -> float | int:
    """JSON numbers as JavaScript prints them: integral values without `.0` (1.0 → 1)."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def parse_json(text: str) -> Any:
    return json.loads(text, parse_float=_js_number)


class VariableError(Exception):
    pass


def render_error(detail: str) -> UserFacingError:
    return UserFacingError(f"Unable to render prompt variables: {detail}")


class FileAccess:
    """File access for file variables, `@include` and `exists()`."""

    def __init__(self, base_dir: Path | None) -> None:
        self.base = Path(base_dir) if base_dir is not None else None

    def path(self, raw: str) -> Path:
        p = expand_home(raw.strip())
        if not p.is_absolute():
            p = (self.base or Path(os.getcwd())) / p
        return p

    def read(self, raw: str) -> str | None:
        try:
            p = self.path(raw)
            if not p.is_file():
                return None
            # a regular file only: a FIFO or device named by a template never blocks
            with open_regular_file(p) as f:
                data = f.read(_MAX_FILE_BYTES)
            return data.decode("utf-8", errors="replace")
        except (OSError, ValueError, UnreadableFileError):
            return None

    def exists(self, raw: str) -> bool:
        try:
            p = self.path(raw)
            return p.is_file() and os.access(p, os.R_OK)
        except (OSError, ValueError):
            return False


class VariableValues:
    """Variable values for one render (each computed at most once)."""

    def __init__(self, thread: Thread, env: RenderEnv, files: FileAccess) -> None:
        problems = V.validation_problems(thread)
        if problems:
            raise render_error(f"{problems[0]} (in the thread's variables)")
        self.typed = V.typed_variables(thread)
        self.custom = V.custom_values(thread)
        self.overridden: set[str] = set()
        for name, value in (env.overrides or {}).items():
            if not V.is_valid_name(name):
                raise render_error(f'--var {name}: "{name}" is not a valid variable name.')
            typed = self.typed.get(name)
            if typed is not None and typed.type in ("currentDate", "skills"):
                raise render_error(f'--var {name}: "{name}" is a built-in {typed.type} variable and cannot be set with --var.')
            if typed is not None:  # working directory, JSON source or file path
                self.typed[name] = replace(typed, value=value)
            else:
                self.custom[name] = value
            self.overridden.add(name)
        self.env = env
        self.files = files
        self._now: datetime | None = env.now
        self._skills: dict[str, Any] | None = None
        self._cache: dict[str, str | None] = {}
        self.skill_names = {n for n, v in self.typed.items() if v.type == "skills"}

    def working_directory(self) -> Path | None:
        """The thread's working directory (first such variable), where relative paths resolve."""
        for v in self.typed.values():
            if v.type == "workingDirectory" and v.value.strip():
                return expand_home(v.value.strip()).absolute()
        return None

    def now(self) -> datetime:
        if self._now is None:
            self._now = datetime.now().astimezone()
        return self._now

    def skills(self) -> dict[str, Any]:
        """Enabled skills by name (de-duplicated, first folder wins, sorted by name); fresh per render."""
        if self._skills is None:
            found: dict[str, Any] = {}
            source = self.env.skills
            items = source.enabled() if source is not None and hasattr(source, "enabled") else (source or [])
            for s in items:
                found.setdefault(s.name, s)
            self._skills = dict(sorted(found.items()))
        return self._skills

    def simple(self, name: str) -> str | None:
        """The text value of `name`, None when unknown/unresolved. Raises VariableError."""
        if name not in self._cache:
            self._cache[name] = self._compute(name)
        return self._cache[name]

    def _compute(self, name: str) -> str | None:
        v = self.typed.get(name)
        if v is None:
            if name not in self.custom:
                return None
            value = self.custom[name]
            if not value.strip():
                raise VariableError(f'Variable "{name}" is empty.')
            return value
        if v.type == "currentDate":
            return format_current_date(v.format, self.now())
        if v.type == "workingDirectory":
            return v.value
        if v.type == "skills":
            enabled = self.skills()
            if v.include_all:
                chosen = list(enabled.values())
            elif not v.skill_names:
                return ""  # includeAll false and nothing selected: nothing
            else:
                chosen = []
                for skill_name in v.skill_names:
                    if skill_name not in enabled:
                        raise VariableError(f'Skill "{skill_name}" in variable "{name}" is not enabled or cannot be found.')
                    chosen.append(enabled[skill_name])
            return format_skills(chosen, v.format, v.indent)
        if v.type == "json":
            if not v.value.strip():
                return None
            try:
                return json.dumps(parse_json(v.value), indent=2, ensure_ascii=False)
            except ValueError:
                return v.value
        if v.type == "file":
            if not v.value.strip():
                return None
            return self.files.read(v.value) or ""
        return None

    def template_value(self, name: str) -> tuple[bool, Any]:
        """(found, value) of `name` for the template path; variables that fail to resolve
        (empty text, missing skill, empty JSON or file path) are not found (→ sentinel)."""
        v = self.typed.get(name)
        if v is not None and v.type == "json":
            if not v.value.strip():
                return False, None
            try:
                return True, wrap_json(parse_json(v.value))
            except ValueError:
                return True, None  # invalid JSON: known but empty (field access renders "")
        try:
            value = self.simple(name)
        except VariableError:
            return False, None
        return value is not None, value


def resolve_variables(thread: Thread, env: RenderEnv | None = None) -> dict[str, Any]:
    """A thread's variables resolved to values, as plugin tools see them in `context.variables`
    (plugin guide §9.1): `{"current_working_directory": "/x", "cfg": {...}}`."""
    env = env or RenderEnv()
    files = FileAccess(env.base_dir)
    try:
        values = VariableValues(thread, env, files)
    except Exception:  # invalid variable definitions: nothing resolvable
        return {}
    if env.base_dir is None:
        files.base = values.working_directory()
    out: dict[str, Any] = {}
    for name in [*values.typed, *(n for n in values.custom if n not in values.typed)]:
        typed = values.typed.get(name)
        if typed is not None and typed.type == "json":
            if typed.value.strip():
                try:
                    out[name] = parse_json(typed.value)
                except ValueError:
                    pass
            continue
        try:
            value = values.simple(name)
        except VariableError:
            continue
        if value:
            out[name] = value
    return out
