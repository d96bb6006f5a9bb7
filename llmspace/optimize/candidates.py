"""The prompt a candidate rewrites and the checks that reject a candidate before it runs.

    text = field_text(thread, "system")            # or "message:<id>": one user message's text
    new_thread = with_field(thread, "system", text)  # a copy; the thread itself is never changed
    prompt = extract_prompt(answer)                # inside the first ``` fence, else the whole answer
    problem = check_candidate(original, prompt, cap=2.0)   # None, or why it is rejected

A candidate is someone else's text (a model wrote it) and runs with the user's variables and
files, so it may not drop, rename or add a `{{variable}}`, may not bring a template construct
the original lacks (`{{@include(…)}}`, `exists()`, `{% %}` tags, filters, attribute or call
expressions), must parse as the original does (`core/templating/templates.py`), and may not
grow past `cap` × the original's length. Pure.
"""

from __future__ import annotations

import re

from ..core.model import TextContent, Thread, UserMessage
from ..core.templating.templates import file_arguments, is_template, undeclared_names, uses_include
from ..core.templating.variables import PLACEHOLDER_RE, is_valid_name
from ..errors import UserFacingError

FENCE = re.compile(r"```[^\n`]*\n([\s\S]*?)```")
DEFAULT_CAP = 2.0


def _message(thread: Thread, msg_id: str) -> UserMessage:
    for m in thread.messages:
        if m.id == msg_id and isinstance(m, UserMessage):
            return m
    raise UserFacingError(f"--field message:{msg_id}: the thread has no user message with that id.",
                          hint="Use --field system, or the id of one of the thread's user messages.")


def field_text(thread: Thread, field: str) -> str:
    """The text `field` names: `system` (the system prompt) or `message:<id>`."""
    if field == "system":
        return (thread.context.systemPrompt if thread.context else None) or ""
    if field.startswith("message:"):
        msg = _message(thread, field.split(":", 1)[1])
        return "".join(p.text for p in msg.content or [] if isinstance(p, TextContent))
    raise UserFacingError(f"--field {field!r} must be `system` or `message:ID`.")


def with_field(thread: Thread, field: str, text: str) -> Thread:
    """A copy of `thread` whose `field` holds `text`."""
    copy = thread.model_copy(deep=True)
    if field == "system":
        copy.ensure_context().systemPrompt = text
        return copy
    msg = _message(copy, field.split(":", 1)[1])
    parts = [p for p in msg.content or [] if not isinstance(p, TextContent)]
    msg.content = [TextContent(type="text", text=text), *parts]
    return copy


def extract_prompt(answer: str) -> str:
    m = FENCE.search(answer)
    return (m.group(1) if m else answer).strip()


def _constructs(text: str) -> set[str] | None:
    """The template constructs `text` uses; None when it does not parse."""
    if not is_template(text):
        return set()
    args = file_arguments(text)
    if args is None or undeclared_names(text) is None:
        return None
    found = set()
    if uses_include(text):
        found.add("{{@include(…)}}")
    if args[1]:
        found.add("exists()")
    if "{%" in text:
        found.add("{% %} tags")
    if re.search(r"\{\{[^{}]*\|[^{}]*\}\}", text):
        found.add("filters")
    if re.search(r"\{\{[^{}@]*[.\[(][^{}]*\}\}", text):
        found.add("expressions")
    return found


def _names(text: str) -> set[str] | None:
    """The variables `text` uses; None when a `{{ }}` holds something that is not a name."""
    if is_template(text):
        return undeclared_names(text)
    names = set()
    for m in PLACEHOLDER_RE.finditer(text):
        inner = m.group(1).strip()
        if not is_valid_name(inner):
            return None
        names.add(inner)
    return names


def check_candidate(original: str, candidate: str, cap: float = DEFAULT_CAP) -> str | None:
    """Why `candidate` may not run in place of `original`, or None when it may."""
    if not candidate.strip():
        return "the answer holds no prompt"
    limit = max(int(len(original) * cap), 200)
    if len(candidate) > limit:
        return f"it is {len(candidate)} characters long, over the cap of {limit}"
    if candidate.count("{{") != candidate.count("}}") or candidate.count("{%") != candidate.count("%}"):
        return "its template syntax is broken (unbalanced braces)"
    new_constructs = _constructs(candidate)
    if new_constructs is None:
        return "its template syntax is broken"
    added = new_constructs - (_constructs(original) or set())
    if added:
        return "it adds template constructs the original lacks: " + ", ".join(sorted(added))
    before, after = _names(original) or set(), _names(candidate)
    if after is None:
        return "its template syntax is broken (a {{ }} that is not a variable name)"
    dropped, new = sorted(before - after), sorted(after - before)
    if dropped or new:
        what = []
        if dropped:
            what.append("drops " + ", ".join("{{" + n + "}}" for n in dropped))
        if new:
            what.append("adds " + ", ".join("{{" + n + "}}" for n in new))
        return "it " + " and ".join(what)
    return None
