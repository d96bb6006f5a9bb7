"""Render a thread for a run: the text the model receives.

`render_thread(thread, env)` renders the system prompt, every text part of every message and
every tool-result text, each independently, on the simple path or the template path
(`core/templates.py`). It returns the rendered texts, the new frozen-value snapshot (to be
written back with `variables.apply_snapshot` after a recorded run) and warnings with their
places: template errors (the text is kept as written) and, in the system prompt and user
messages, names left as written (unknown, or a JSON/file variable without a value; in
`function` tool results they are not reported). An empty text variable, a
selected skill that cannot be found, or an invalid or clashing variable name raises
`UserFacingError("Unable to render prompt variables: <detail>")` naming the place; so does a
template that exceeds a work limit (time, output size, number size, loop count — see
`core/templates.py`).

Trust (README.md, "Security: what gets evaluated"): only text a person wrote is evaluated —
the system prompt, user messages and results of `function` tools (a person fills them in).
Text a model or an executed tool produced (assistant messages; results of built-in, MCP,
plugin and unknown tools, e.g. web pages) is sent literally: no variables, no templates, so
no `@include`/`exists()`/file variable can read or probe a local file on its behalf. This is
stricter than the original app, which renders every place.

The value formatters of the built-in variable types (`format_current_date`,
`format_skills`) live in `core/variable_formats.py`.

The stored thread is not changed (its texts stay templates); the default variables are used
even when the file does not list them. Frozen values: a simple-path value frozen for a place
wins over a fresh one, except skills variables and `--var` overrides; a frozen template output
(`"\\u0000rendered"`, or the legacy `" rendered"`) is reused unless the text uses a skills
variable or an overridden name, or uses `@include` without the current include version marker.

In trusted places, file variables, `@include` and `exists()` read any path (`~` expanded);
relative paths resolve against `RenderEnv.base_dir`, else the thread's working directory
variable, else the process cwd.

Callers: the run loop, `llmspace render`, presenters (preview). Reads files; no network, no
threads.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, open_regular_file
from ..paths import expand_home
from . import variables as V
from .model import LEGACY_RENDERED_KEY, RENDERED_KEY, TextContent, Thread, ToolCall
from .templates import (
    MAX_SECONDS,
    TemplateError,
    TemplateLimitError,
    TemplateRenderer,
    is_template,
    undeclared_names,
    uses_include,
    wrap_json,
)
from .variable_formats import format_current_date, format_skills

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
    # Wall-time bound of each template text (seconds); see core/templates.py for the other bounds.
    template_seconds: float = MAX_SECONDS
    # Frozen values to use instead of the thread's stored snapshot (e.g. the snapshot returned
    # by the previous render of the same run, so earlier places stay frozen in a ReAct loop).
    snapshot: dict[str, dict[str, str]] | None = None


@dataclass
class RenderWarning:
    """A problem that did not stop rendering (e.g. a template error), with its place."""

    place: str  # snapshot place key
    label: str  # readable place ("the system prompt", "message 2 (user, id …)")
    message: str
    kind: str = "template"  # "template" (a template error) or "unresolved" (a name left as written)

    def __str__(self) -> str:
        if self.kind == "unresolved":
            return self.message
        return f"Template error in {self.label}: {self.message}; the text was used as written."


@dataclass
class RenderedThread:
    system_prompt: str
    # message id -> rendered text of each text part, in order
    message_texts: dict[str, list[str]] = field(default_factory=dict)
    # (message id, tool call id) -> rendered tool-result text parts
    tool_result_texts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    snapshot: dict[str, dict[str, str]] | None = None
    warnings: list[str] = field(default_factory=list)
    problems: list[RenderWarning] = field(default_factory=list)  # the warnings, with places

    def apply(self, thread: Thread) -> Thread:
        """A deep copy of `thread` whose texts are the rendered ones (what the model gets)."""
        out = thread.model_copy(deep=True)
        ctx = out.context
        if ctx is not None and ctx.systemPrompt is not None:
            ctx.systemPrompt = self.system_prompt
        for msg in out.messages:
            texts = iter(self.message_texts.get(msg.id, []))
            for part in msg.content:
                if isinstance(part, TextContent):
                    part.text = next(texts, part.text)
            for call in getattr(msg, "toolCalls", None) or []:
                results = self.tool_result_texts.get((msg.id, call.id))
                if results is not None and call.output is not None:
                    for part, text in zip(call.output.text_parts(), results, strict=False):
                        part.text = text
        return out


def _js_number(text: str) -> float | int:
    """JSON numbers as JavaScript prints them: integral values without `.0` (1.0 → 1)."""
    value = float(text)
    return int(value) if value.is_integer() and abs(value) < 2**53 else value


def _parse_json(text: str) -> Any:
    return json.loads(text, parse_float=_js_number)


class _VariableError(Exception):
    pass


def _fail(detail: str) -> UserFacingError:
    return UserFacingError(f"Unable to render prompt variables: {detail}")


class _Files:
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


class _Values:
    """Variable values for one render (each computed at most once)."""

    def __init__(self, thread: Thread, env: RenderEnv, files: _Files) -> None:
        problems = V.validation_problems(thread)
        if problems:
            raise _fail(f"{problems[0]} (in the thread's variables)")
        self.typed = V.typed_variables(thread)
        self.custom = V.custom_values(thread)
        self.overridden: set[str] = set()
        for name, value in (env.overrides or {}).items():
            if not V.is_valid_name(name):
                raise _fail(f'--var {name}: "{name}" is not a valid variable name.')
            typed = self.typed.get(name)
            if typed is not None and typed.type in ("currentDate", "skills"):
                raise _fail(f'--var {name}: "{name}" is a built-in {typed.type} variable and cannot be set with --var.')
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
        """The text value of `name`, None when unknown/unresolved. Raises _VariableError."""
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
                raise _VariableError(f'Variable "{name}" is empty.')
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
                        raise _VariableError(f'Skill "{skill_name}" in variable "{name}" is not enabled or cannot be found.')
                    chosen.append(enabled[skill_name])
            return format_skills(chosen, v.format, v.indent)
        if v.type == "json":
            if not v.value.strip():
                return None
            try:
                return json.dumps(_parse_json(v.value), indent=2, ensure_ascii=False)
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
                return True, wrap_json(_parse_json(v.value))
            except ValueError:
                return True, None  # invalid JSON: known but empty (field access renders "")
        try:
            value = self.simple(name)
        except _VariableError:
            return False, None
        return value is not None, value


class _Renderer:
    def __init__(self, thread: Thread, env: RenderEnv) -> None:
        self.files = _Files(env.base_dir)
        self.values = _Values(thread, env, self.files)
        if env.base_dir is None:
            self.files.base = self.values.working_directory()
        frozen = env.snapshot if env.snapshot is not None else V.snapshot_variables(thread)
        self.frozen = {k: dict(v) for k, v in frozen.items() if isinstance(v, dict)}
        self.next: dict[str, dict[str, str]] = {}
        self.problems: list[RenderWarning] = []
        self._templates: TemplateRenderer | None = None

    def templates(self) -> TemplateRenderer:
        if self._templates is None:
            self._templates = TemplateRenderer(self.values.template_value, self.files.read, self.files.exists,
                                               time_limit=self.values.env.template_seconds)
        return self._templates

    def place(self, key: str, label: str, texts: list[str], *, report: bool = False) -> list[str]:
        return [self.text(key, label, i, t, report=report) for i, t in enumerate(texts)]

    def text(self, key: str, label: str, part: int, text: str, *, report: bool = False) -> str:
        """Render one text of a trusted place (callers pass only those, see `is_trusted_*`).
        `report` (system prompt, user messages): names left as written become warnings."""
        if "{{" not in text and "{%" not in text:
            return text
        try:
            if is_template(text):
                return self._template(key, label, part, text)
            return self._simple(key, label, text, report)
        except _VariableError as exc:
            raise _fail(f"{exc} (in {label})") from None

    def _unresolved(self, key: str, label: str, name: str, placeholder: str) -> None:
        if name in self.values.typed or name in self.values.custom:
            message = f'Variable "{name}" in {label} has no value; {placeholder} was sent as written.'
        else:
            message = f"Unknown variable {placeholder} in {label} was sent as written."
        if not any(p.place == key and p.message == message for p in self.problems):
            self.problems.append(RenderWarning(key, label, message, kind="unresolved"))

    def _simple(self, key: str, label: str, text: str, report: bool = False) -> str:
        frozen = self.frozen.get(key, {})
        out_values = self.next.setdefault(key, {})
        pieces: list[str] = []
        last = 0
        for m in V.PLACEHOLDER_RE.finditer(text):
            name = m.group(1).strip()
            if not V.is_valid_name(name):
                continue
            value = out_values.get(name)
            fresh = name in self.values.skill_names or name in self.values.overridden
            if value is None and not fresh:
                value = frozen.get(name)
            if value is None:
                value = self.values.simple(name)
                if value is None:  # unknown or unresolved: left exactly as written
                    if report:
                        self._unresolved(key, label, name, m.group(0))
                    continue
            out_values[name] = value
            pieces.append(text[last : m.start()])
            pieces.append(value)
            last = m.end()
        pieces.append(text[last:])
        return "".join(pieces)

    def _template(self, key: str, label: str, part: int, text: str) -> str:
        rkey = V.rendered_key(part)
        frozen = self.frozen.get(key, {})
        include = uses_include(text)
        cached = frozen.get(rkey)
        if cached is None:
            cached = frozen.get(LEGACY_RENDERED_KEY + rkey[len(RENDERED_KEY):])
        if cached is not None and (not include or frozen.get(V.INCLUDE_VERSION_KEY) == V.INCLUDE_VERSION):
            fresh = self.values.skill_names | self.values.overridden
            names = (undeclared_names(text) or set()) if any(n in text for n in fresh) else set()
            if not (names & fresh):
                self._store(key, rkey, cached, include)
                return cached
        try:
            output = self.templates().render(text)
        except TemplateLimitError as exc:
            raise _fail(f"the template in {label} {exc.reason}; simplify it") from None
        except TemplateError as exc:
            self.problems.append(RenderWarning(key, label, str(exc)))
            return text
        self._store(key, rkey, output, include)
        return output

    def _store(self, key: str, rkey: str, output: str, include: bool) -> None:
        values = self.next.setdefault(key, {})
        values[rkey] = output
        if include:
            values[V.INCLUDE_VERSION_KEY] = V.INCLUDE_VERSION


def is_trusted_message(msg: Any) -> bool:
    """Whether a message's text is evaluated: user messages only (a person wrote them)."""
    return getattr(msg, "role", None) == "user"


def is_trusted_tool_result(thread: Thread, call: ToolCall) -> bool:
    """Whether a tool result is evaluated: only results of the thread's `function` tools
    (a person fills them in). Built-in, MCP, plugin and unknown tools produced theirs."""
    tools = (thread.context.tools if thread.context is not None else None) or []
    return any(t.name == call.input.name and t.type == "function" for t in tools)


def render_thread(thread: Thread, env: RenderEnv | None = None) -> RenderedThread:
    """Render every text surface of `thread` (see the module docstring). The thread is not changed.

    Untrusted places (assistant messages, results of executed tools) are copied literally."""
    env = env or RenderEnv()
    r = _Renderer(thread, env)
    ctx = thread.context
    system = ""
    if ctx is not None and ctx.systemPrompt is not None:
        system = r.text(V.SYSTEM_PROMPT_PLACE, "the system prompt", 0, ctx.systemPrompt, report=True)
    out = RenderedThread(system_prompt=system)
    for i, msg in enumerate(thread.messages, start=1):
        texts = [c.text for c in msg.content if isinstance(c, TextContent)]
        label = f"message {i} ({msg.role}, id {msg.id})"
        if is_trusted_message(msg):
            texts = r.place(V.message_place(msg.id), label, texts, report=True)
        out.message_texts[msg.id] = texts
        for call in getattr(msg, "toolCalls", None) or []:
            if call.output is None:
                continue
            results = [c.text for c in call.output.text_parts()]
            if results and is_trusted_tool_result(thread, call):
                label = f"the result of tool call {call.id} in message {i} (id {msg.id})"
                results = r.place(V.tool_result_place(msg.id, call.id), label, results)
            out.tool_result_texts[(msg.id, call.id)] = results
    snapshot = {k: v for k, v in r.next.items() if v}
    out.snapshot = snapshot or None
    out.problems = r.problems
    out.warnings = [str(p) for p in r.problems]
    return out
