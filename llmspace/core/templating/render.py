"""Render a thread for a run: the text the model receives.

`render_thread(thread, env)` renders the system prompt, every text part of every message and
every tool-result text, each independently, on the simple path or the template path
(`core/templating/templates.py`). It returns the rendered texts, the new frozen-value snapshot
(to be written back with `frozen_values.apply_snapshot` after a recorded run) and warnings with their
places: template errors (the text is kept as written) and, in the system prompt and user
messages, names left as written (unknown, or a JSON/file variable without a value; in
`function` tool results they are not reported). An empty text variable, a
selected skill that cannot be found, or an invalid or clashing variable name raises
`UserFacingError("Unable to render prompt variables: <detail>")` naming the place; so does a
template that exceeds a work limit (time, output size, number size, loop count — see
`core/templating/sandbox.py`).

Trust — where an `@include` in a model reply is kept from reading a file (README.md,
"Security: what gets evaluated"; `is_trusted_message`, `is_trusted_tool_result`): only text a
person wrote is evaluated — the system prompt, user messages and results of `function` tools
(a person fills them in), except text marked `"literal": true` (user turns and tool results
imported from a production trace, `is_literal`). Text a model or an executed tool produced (a model reply, i.e. an
assistant message; results of built-in, MCP, plugin and unknown tools, e.g. web pages) is not
evaluated: it is sent literally — no variables, no templates — so no `@include`/`exists()`/
file variable in it can read or probe a local file on its behalf. This is stricter than the
original app, which renders every place.

Variable values (and `RenderEnv`) come from `core/templating/resolution.py`; the frozen-value
snapshot's keys and invalidation are in `core/templating/frozen_values.py`.

The stored thread is not changed (its texts stay templates); the default variables are used
even when the file does not list them. Frozen values: a simple-path value frozen for a place
wins over a fresh one, except skills variables and `--var` overrides; a frozen template output
(`"\\u0000rendered"`, or the legacy `" rendered"`) is reused unless the text uses a skills
variable or an overridden name, or uses `@include` without the current include version marker.

In trusted places, file variables, `@include` and `exists()` read any path (`~` expanded);
relative paths resolve against `RenderEnv.base_dir`, else the thread's working directory
variable, else the process cwd.

Reads files; no network, no
threads.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..model import LEGACY_RENDERED_KEY, RENDERED_KEY, TextContent, Thread, ToolCall
from .frozen_values import INCLUDE_VERSION, INCLUDE_VERSION_KEY, rendered_key, snapshot_variables
from .places import SYSTEM_PROMPT_PLACE, message_place, tool_result_place
from .resolution import FileAccess, RenderEnv, VariableError, VariableValues, render_error
from .templates import TemplateError, TemplateLimitError, TemplateRenderer, is_template, undeclared_names, uses_include
from .variables import PLACEHOLDER_RE, is_valid_name


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


class _Renderer:
    def __init__(self, thread: Thread, env: RenderEnv) -> None:
        self.files = FileAccess(env.base_dir)
        self.values = VariableValues(thread, env, self.files)
        if env.base_dir is None:
            self.files.base = self.values.working_directory()
        frozen = env.snapshot if env.snapshot is not None else snapshot_variables(thread)
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
        except VariableError as exc:
            raise render_error(f"{exc} (in {label})") from None

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
        for m in PLACEHOLDER_RE.finditer(text):
            name = m.group(1).strip()
            if not is_valid_name(name):
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
        rkey = rendered_key(part)
        frozen = self.frozen.get(key, {})
        include = uses_include(text)
        cached = frozen.get(rkey)
        if cached is None:
            cached = frozen.get(LEGACY_RENDERED_KEY + rkey[len(RENDERED_KEY):])
        if cached is not None and (not include or frozen.get(INCLUDE_VERSION_KEY) == INCLUDE_VERSION):
            fresh = self.values.skill_names | self.values.overridden
            names = (undeclared_names(text) or set()) if any(n in text for n in fresh) else set()
            if not (names & fresh):
                self._store(key, rkey, cached, include)
                return cached
        try:
            output = self.templates().render(text)
        except TemplateLimitError as exc:
            raise render_error(f"the template in {label} {exc.reason}; simplify it") from None
        except TemplateError as exc:
            self.problems.append(RenderWarning(key, label, str(exc)))
            return text
        self._store(key, rkey, output, include)
        return output

    def _store(self, key: str, rkey: str, output: str, include: bool) -> None:
        values = self.next.setdefault(key, {})
        values[rkey] = output
        if include:
            values[INCLUDE_VERSION_KEY] = INCLUDE_VERSION


def is_literal(node: Any) -> bool:
    """True for a message or tool result marked `"literal": true`: text imported from someone
    else's system (a production trace, `llmspace/traces/mapping.py`), sent as written."""
    extra = getattr(node, "__pydantic_extra__", None) or {}
    return extra.get("literal") is True


def is_trusted_message(msg: Any) -> bool:
    """Whether a message's text is evaluated: user messages only (a person wrote them), unless
    marked literal (imported from a trace)."""
    return getattr(msg, "role", None) == "user" and not is_literal(msg)


def is_trusted_tool_result(thread: Thread, call: ToolCall) -> bool:
    """Whether a tool result is evaluated: only results of the thread's `function` tools
    (a person fills them in), unless marked literal. Built-in, MCP, plugin and unknown tools
    produced theirs."""
    if call.output is not None and is_literal(call.output):
        return False
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
        system = r.text(SYSTEM_PROMPT_PLACE, "the system prompt", 0, ctx.systemPrompt, report=True)
    out = RenderedThread(system_prompt=system)
    for i, msg in enumerate(thread.messages, start=1):
        texts = [c.text for c in msg.content if isinstance(c, TextContent)]
        label = f"message {i} ({msg.role}, id {msg.id})"
        if is_trusted_message(msg):
            texts = r.place(message_place(msg.id), label, texts, report=True)
        out.message_texts[msg.id] = texts
        for call in getattr(msg, "toolCalls", None) or []:
            if call.output is None:
                continue
            results = [c.text for c in call.output.text_parts()]
            if results and is_trusted_tool_result(thread, call):
                label = f"the result of tool call {call.id} in message {i} (id {msg.id})"
                results = r.place(tool_result_place(msg.id, call.id), label, results)
            out.tool_result_texts[(msg.id, call.id)] = results
    snapshot = {k: v for k, v in r.next.items() if v}
    out.snapshot = snapshot or None
    out.problems = r.problems
    out.warnings = [str(p) for p in r.problems]
    return out
