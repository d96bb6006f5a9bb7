"""The assertion types over a whole conversation (`mode: conversation`) and their values, read
with the other assertion types (`evals/assertions.py::parse_assertion` asks `claims` and
`parse_value`); they are checked over a cell's transcript by `evals/conversation_checks.py`.

- `tool-called` / `no-tool-called` anywhere in the conversation, the value a tool name or
  `{name, arguments?, times?, before?}`: an argument subset, exactly how many times, and
  `before: OTHER` (its first matching call comes before any call of OTHER);
- `turns`: at most N user turns;
- `llm-rubric` over the transcript (the judge sees the conversation and the scenario's goal),
  `goal-met` (did the user get what the goal says?) and `no-leak` (the agent stated no fact of
  the scenario's `unknown` as true), all three asked of the file's judge and scored 1–5 like
  `llm-rubric` (passing at the assertion's threshold, default 3);
- `template` with `conversation`, `toolCalls` and `finalReply` in scope (and `output`, the
  final reply);
- every other type is checked on the final reply and every tool call of the conversation.
"""

from __future__ import annotations

from typing import Any

from ..errors import UserFacingError

TYPES = ("turns", "goal-met", "no-leak")  # only in conversations
JUDGED_KINDS = ("llm-rubric", "goal-met", "no-leak")
_TOOL_KEYS = {"name", "arguments", "times", "before"}


def claims(kind: str, value: Any) -> bool:
    """Whether this module reads the assertion (a conversation type, or a tool value with times/before)."""
    if kind in TYPES:
        return True
    if kind == "no-tool-called":
        return isinstance(value, dict)
    return kind == "tool-called" and isinstance(value, dict) and bool(set(value) - {"name", "arguments"})


def parse_value(kind: str, value: Any, negate: bool, where: str) -> Any:
    """The value of a conversation assertion, checked (`evals/assertions.py::parse_assertion` asks)."""
    if kind == "turns":
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise UserFacingError(f"{where}: turns needs a whole number of user turns (at least 1), not {value!r}.")
        return value
    if kind in ("goal-met", "no-leak"):
        if negate:
            raise UserFacingError(f"{where}: {kind} has no not- form.")
        if value is not None and not isinstance(value, str):
            raise UserFacingError(f"{where}: the value of {kind} is extra guidance for the judge, as text.")
        return value
    return tool_value(value, where, kind)


def tool_value(value: Any, where: str, kind: str) -> dict[str, Any]:
    if isinstance(value, str) and value.strip():
        return {"name": value.strip()}
    if not (isinstance(value, dict) and isinstance(value.get("name"), str) and set(value) <= _TOOL_KEYS
            and isinstance(value.get("arguments", {}), dict)):
        raise UserFacingError(f"{where}: {kind} takes a tool name or {{name, arguments?, times?, before?}}, not {value!r}.")
    times = value.get("times")
    if times is not None and (isinstance(times, bool) or not isinstance(times, int) or times < 0):
        raise UserFacingError(f"{where}: `times` of {kind} must be a whole number, not {times!r}.")
    before = value.get("before")
    if before is not None and not isinstance(before, str):
        raise UserFacingError(f"{where}: `before` of {kind} names a tool, not {before!r}.")
    return {k: v for k, v in value.items() if v is not None}


