"""promptfoo's `rubricPrompt` (a custom judge prompt) and an assertion's own judge `provider`.

    messages = read_rubric_prompt(value, base, where)   # ((role, template), …): a text, a chat list, file://
    render(messages, {"output": …, "rubric": …, **case_vars})   # one pass: values are never rendered again
    judge_model(provider_value, where)                   # "openai:chat:gpt-4o" -> ("openai", "gpt-4o")
    grade_rubric(answer, threshold)                      # promptfoo's {"pass", "score", "reason"} answer

A rubric prompt's `{{name}}` / `{{name.key}}` placeholders take the judge-time values
(`output`, `rubric`; for the factuality and closed-QA types `input`, `ideal`, `criteria`,
`completion`) and the case's variables; a value is inserted as text and never read as a
template, a file or an include. Template tags, filters and `{{@…}}` are refused when the file
is read.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from ..errors import UserFacingError
from .case import confined, read_document, read_text, value_text

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)((?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*\}\}")
ROLES = ("system", "user", "assistant")
KINDS = ("llm-rubric", "factuality", "model-graded-factuality", "model-graded-closedqa")
# promptfoo's provider ids: PROVIDER:MODEL, or PROVIDER:chat|completion|messages|…:MODEL
_API_PARTS = {"chat", "completion", "messages", "responses", "generate", "embedding", "embeddings"}
_ID = re.compile(r"^([A-Za-z][A-Za-z0-9_.-]*):(.+)$")
Messages = tuple[tuple[str, str], ...]


def _check_template(text: str, where: str) -> str:
    rest = PLACEHOLDER.sub("", text)
    if "{%" in rest or "{{" in rest:
        raise UserFacingError(f"{where}: the rubricPrompt has a template tag, filter or include that is not a plain "
                              "{{variable}}; nothing was run.", hint="Use {{output}}, {{rubric}} and the test's {{vars}} only.")
    return text


def read_rubric_prompt(value: Any, base: Path, where: str) -> Messages:
    """The chat messages of a rubricPrompt: a text (one user message), a JSON text or list of
    {role, content}, or a file:// path (inside the test file's folder) holding one of those."""
    if isinstance(value, str) and value.startswith("file://"):
        target = confined(base, value[len("file://"):], where)
        value = read_document(target, where) if target.suffix.lower() in (".json", ".yaml", ".yml") \
            else read_text(target, where, value)
    if isinstance(value, str) and value.lstrip().startswith("["):
        try:
            value = json.loads(value)
        except ValueError:
            pass  # a text that starts with "[" is a text
    if isinstance(value, str):
        return (("user", _check_template(value, where)),)
    if isinstance(value, list) and value and all(isinstance(m, dict) for m in value):
        out = []
        for m in value:
            role, content = m.get("role"), m.get("content")
            if role not in ROLES or not isinstance(content, str):
                raise UserFacingError(f"{where}: a rubricPrompt message must be {{role: system|user|assistant, content: "
                                      f"text}}, not {m!r:.80}; nothing was run.")
            out.append((str(role), _check_template(content, where)))
        if not any(role == "user" for role, _ in out):
            raise UserFacingError(f"{where}: the rubricPrompt has no user message; nothing was run.")
        return tuple(out)
    raise UserFacingError(f"{where}: the rubricPrompt must be a text, a list of chat messages or a file:// path, "
                          f"not {value!r:.80}; nothing was run.")


def render(messages: Messages, values: dict[str, Any]) -> list[tuple[str, str]]:
    """Each template with its placeholders replaced by `values` (undefined: the empty string)."""

    def sub(m: re.Match[str]) -> str:
        value = values.get(m.group(1), "")
        for key in m.group(2).split(".")[1:]:
            if isinstance(value, str):
                try:
                    value = json.loads(value)
                except ValueError:
                    return ""
            value = value.get(key, "") if isinstance(value, dict) else ""
        return value_text(value)

    return [(role, PLACEHOLDER.sub(sub, text)) for role, text in messages]


def judge_model(value: Any, where: str) -> str:
    """An assertion's `provider` as llmspace's "provider/model"; refused (naming it) when it is
    not a promptfoo model id (code providers, exec:, file://, an object without an id)."""
    ident = value.get("id") if isinstance(value, dict) else value
    if not isinstance(ident, str) or not ident.strip():
        raise UserFacingError(f"{where}: the judge `provider` {value!r:.80} has no id; nothing was run.",
                              hint="Name the judge as PROVIDER:MODEL (openai:gpt-4.1-mini) or PROVIDER/MODEL.")
    ident = ident.strip()
    if "/" in ident and ":" not in ident:
        return ident
    m = _ID.match(ident)
    if m is None or m.group(1) in ("file", "exec", "python", "golang", "http", "https", "ws", "wss"):
        raise UserFacingError(f"{where}: the judge `provider` {ident!r} is not a model llmspace can call; nothing was run.",
                              hint="Name a configured provider's model as PROVIDER:MODEL or PROVIDER/MODEL.")
    provider, rest = m.group(1), m.group(2)
    head, _, tail = rest.partition(":")
    model = tail if head in _API_PARTS and tail else rest
    return f"{provider}/{model}"


def grade_rubric(answer: str, threshold: float | None) -> tuple[bool, float, str]:
    """promptfoo's llm-rubric answer {"reason", "pass", "score"}: passes when `pass` (default
    true) and the score (default 1 or 0 by `pass`) reaches the threshold when one is given."""
    start, end = answer.find("{"), answer.rfind("}")
    try:
        data = json.loads(answer[start:end + 1]) if 0 <= start < end else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not ({"pass", "score"} & set(data)):
        raise ValueError('the answer is not a JSON object with "pass" or "score"')
    passed = data.get("pass", True)
    if not isinstance(passed, bool):
        raise ValueError(f'"pass" is {passed!r}, not true or false')
    score = data.get("score", 1.0 if passed else 0.0)
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ValueError(f'"score" is {score!r}, not a number')
    ok = passed and (threshold is None or score >= threshold - 1e-9)
    return ok, float(score), str(data.get("reason") or "")

