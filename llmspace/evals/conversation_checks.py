"""The checks of the assertions over a conversation (`evals/conversation_assertions.py` reads
them): the ones without a judge over the transcript, the judges' requests and their answers.

    check = check_conversation(assertion, cell, conversation, final_reply, tool_calls)
    request = judge_request(assertion, scenario, conversation, thread)   # llm-rubric, goal-met, no-leak
    check = judge_check(assertion, answer, thread, scenario)             # ValueError: unreadable answer

Every type that is not a conversation's own is checked on the final reply and every tool call
of the conversation (`evals/assertions.py::check`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from .assertions import Assertion, Check, Observation, check
from .conversation_assertions import tool_value
from .conversation_setup import Scenario
from .judge import DEFAULT_THRESHOLD, SYSTEM, criteria_for, parse_answer

if TYPE_CHECKING:
    from ..core.model import Thread
    from .plan import Cell


def _subset(want: Any, got: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and _subset(v, got[k]) for k, v in want.items())
    return bool(want == got)


def _tool_check(value: dict[str, Any] | None, calls: tuple[tuple[str, dict[str, Any]], ...]) -> tuple[bool, str]:
    """tool-called: (passed, why not)."""
    if value is None:
        return bool(calls), "no tool was called"
    name = value["name"]
    found = [i for i, (n, args) in enumerate(calls) if n == name and _subset(value.get("arguments") or {}, args)]
    what = name + (f" with {json.dumps(value['arguments'], ensure_ascii=False, sort_keys=True)}" if value.get("arguments") else "")
    times = value.get("times")
    if times is not None and len(found) != times:
        return False, f"{what} was called {len(found)} time(s), not {times}"
    if times is None and not found:
        return False, f"{what} was never called"
    other = value.get("before")
    if other is not None and found:
        first_other = next((i for i, (n, _a) in enumerate(calls) if n == other), None)
        if first_other is not None and first_other < found[0]:
            return False, f"{other} was called before {what}"
    return True, ""


def check_conversation(a: Assertion, cell: Cell, conversation: list[dict[str, Any]], final: str,
                       calls: tuple[tuple[str, dict[str, Any]], ...]) -> Check:
    """An assertion that needs no judge, over the conversation."""
    if a.type in ("tool-called", "no-tool-called"):
        value = tool_value(a.value, "assertion", a.type) if a.value is not None else None
        passed, why = _tool_check(value, calls)
        if a.type == "no-tool-called":
            passed, why = not passed, ("a tool was called" if value is None else f"{value['name']} was called")
        if a.negate:
            passed, why = not passed, f"{a.label} held"
        return Check(a.label, passed, a.weight, "" if passed else why)
    if a.type == "turns":
        n = sum(1 for e in conversation if e["role"] == "user" and (e.get("text") or not e.get("stop")))
        passed = (n <= int(a.value)) != a.negate
        return Check(a.label, passed, a.weight, "" if passed else f"{n} user turns (at most {a.value})")
    if a.type == "template":
        passed, why = _template(a, cell, conversation, final, calls)
        passed = passed != a.negate
        return Check(a.label, passed, a.weight, "" if passed else why)
    obs = Observation(output=final, tool_calls=calls, expected=cell.expected, vars=dict(cell.vars), prompt=cell.task,
                      tools=tuple(cell.request.get("tools") or ()))
    return check(a, obs)


def _template(a: Assertion, cell: Cell, conversation: list[dict[str, Any]], final: str,
              calls: tuple[tuple[str, dict[str, Any]], ...]) -> tuple[bool, str]:
    from ..core.templating.jinja_values import wrap_json
    from .assertions import _template_expression

    env, template = _template_expression(str(a.value), "template")
    env.budget.reset()
    context = {"output": final, "finalReply": final, "expected": cell.expected, "vars": wrap_json(dict(cell.vars)),
               "conversation": wrap_json(conversation),
               "toolCalls": wrap_json([{"name": n, "arguments": args} for n, args in calls])}
    try:
        result = template.render(context)
    except Exception as exc:  # the sandbox refused or the expression failed: a failed check, with the reason
        return False, f"template error: {type(exc).__name__}: {exc}"
    return result == "1", f"{a.value} is false"


def transcript_text(conversation: list[dict[str, Any]]) -> str:
    lines = []
    for e in conversation:
        if e["role"] == "user" and e.get("text"):
            lines.append(f"User: {e['text']}")
        elif e["role"] == "assistant":
            if e.get("text"):
                lines.append(f"Assistant: {e['text']}")
            for c in e.get("toolCalls") or []:
                lines.append(f"Assistant called {c['name']}({json.dumps(c.get('arguments') or {}, ensure_ascii=False, sort_keys=True)})")
        elif e["role"] == "tool":
            lines.append(f"Tool {e.get('name')} returned: {e.get('result')}")
    return "\n".join(lines) or "(no messages)"


def _criteria(a: Assertion, scenario: Scenario, thread: Thread | None) -> tuple[tuple[str, str], ...]:
    extra = f" ({a.value})" if isinstance(a.value, str) and a.value and a.type != "llm-rubric" else ""
    if a.type == "goal-met":
        return (("goal met", "the user got what their goal asks for, as the conversation shows" + extra),)
    if a.type == "no-leak":
        facts = "; ".join(scenario.unknown) or "(none)"
        why = ("the assistant never stated any of these facts as true (nobody in the conversation could know them, so "
               f"stating one is an invention): {facts}{extra}")
        return (("no leak", why),)
    return criteria_for(str(a.value), thread).items


def judge_request(a: Assertion, scenario: Scenario, conversation: list[dict[str, Any]], thread: Thread | None) -> dict[str, Any]:
    """The judge's request for a judged assertion over the conversation."""
    items = _criteria(a, scenario, thread)
    parts = ["## The user's goal", scenario.goal or "(not given)", "## The conversation", transcript_text(conversation),
             "## Criteria"]
    parts += [f"- {name}" + (f": {desc}" if desc else "") for name, desc in items]
    keys = ", ".join(json.dumps(n, ensure_ascii=False) for n, _d in items)
    parts.append(f"Score every criterion ({keys}) from 1 to 5 and answer with the JSON object only.")
    return {"system": SYSTEM, "messages": [{"role": "user", "text": "\n\n".join(parts)}], "tools": [], "params": None}


def judge_check(a: Assertion, answer: str, thread: Thread | None, scenario: Scenario | None = None) -> Check:
    """The check of a judge's answer; raises ValueError when it cannot be read."""
    names = [n for n, _d in _criteria(a, scenario or Scenario(), thread)]
    scores, reason = parse_answer(answer, names)
    mean = sum(scores.values()) / len(scores) if scores else 0.0
    threshold = a.threshold if a.threshold is not None else DEFAULT_THRESHOLD
    passed = mean >= threshold - 1e-9
    return Check(a.label, passed, a.weight, reason if passed else f"score {mean:.2f} < {threshold:g}: {reason}", round(mean, 4))
