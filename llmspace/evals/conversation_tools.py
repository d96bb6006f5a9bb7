"""The results of the tools an agent calls during a conversation evaluation.

    result = tool_result(call, tools, ctx, settings, scenario, repeat)   # -> ToolResult | None

In order: a tool named in `simulatedTools` answers with its fixed `result`, or the result of
the first row of its `results` table whose `arguments` are a subset of the call's (no row: the
`toolSimulator` answers, else an error result saying so); a function tool (no implementation) is answered by the
`toolSimulator` model from the tool's description and the scenario's facts; any other tool
(built-in, MCP, plugin) runs for real, as in the thread's tool loop (`agent/tool_calls.py`).
Simulated results are marked with how (`fixed`, `table`, `model`). A simulated result is
text sent as it is: it is never rendered as a template.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError

if TYPE_CHECKING:
    from .cell import ExecContext
    from .conversation_setup import ConversationSettings, Scenario
    from .records import Reply

SIMULATOR_SYSTEM = ("You simulate a software tool for a test. Answer the call with the tool's result only: what the real "
                    "tool would return (JSON when it would return data), no explanation. Stay consistent with the facts "
                    "given; when they say nothing, answer with a plausible, ordinary result.")


@dataclass(frozen=True)
class ToolResult:
    text: str
    is_error: bool = False
    simulated: str | None = None  # fixed, table, model (None: the tool ran)
    reply: Reply | None = None  # the simulator model's call


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _subset(want: Any, got: Any) -> bool:
    if isinstance(want, dict):
        return isinstance(got, dict) and all(k in got and _subset(v, got[k]) for k, v in want.items())
    return bool(want == got)


def check_tools(tools: list[dict[str, Any]], kinds: dict[str, str], settings: ConversationSettings) -> None:
    """Refuse, before anything runs, a function tool nothing can answer."""
    for t in tools:
        name = str(t.get("name"))
        if kinds.get(name, "function") == "function" and name not in settings.simulated_tools and settings.tool_simulator is None:
            raise UserFacingError(f"The function tool {name!r} has no implementation, and nothing simulates it.",
                                  hint=f"Add `toolSimulator: PROVIDER/MODEL`, or `simulatedTools: {{{name}: {{result: …}}}}`, "
                                       "to the evaluation file.")


def fixed_result(name: str, arguments: dict[str, Any], settings: ConversationSettings) -> ToolResult | None:
    spec = settings.simulated_tools.get(name)
    if spec is None:
        return None
    if "result" in spec:
        return ToolResult(_text(spec["result"]), simulated="fixed")
    for row in spec["results"]:
        if _subset(row["arguments"], arguments):
            return ToolResult(_text(row["result"]), simulated="table")
    if settings.tool_simulator is not None:
        return None  # no row matches: the simulator model answers
    return ToolResult(f"No simulated result of {name} for the arguments {_text(arguments)}.", True, "table")


def simulator_request(tool: dict[str, Any], arguments: dict[str, Any], scenario: Scenario) -> dict[str, Any]:
    facts = "\n".join(f"- {k}" for k in scenario.known) or "(none)"
    prompt = "\n".join([
        f"## The tool: {tool.get('name')}", str(tool.get("description") or "(no description)"),
        "## Its parameters (JSON Schema)", json.dumps(tool.get("parameters") or {}, ensure_ascii=False, sort_keys=True),
        "## Facts of this test", facts,
        "## The call's arguments", json.dumps(arguments, ensure_ascii=False, sort_keys=True),
        "Answer with the tool's result only."])
    return {"system": SIMULATOR_SYSTEM, "messages": [{"role": "user", "text": prompt}], "tools": [], "params": None}


def tool_result(name: str, arguments: dict[str, Any], call_id: str, tools: dict[str, dict[str, Any]], kinds: dict[str, str],
                ctx: ExecContext, settings: ConversationSettings, scenario: Scenario, repeat: int,
                variables: dict[str, str]) -> ToolResult | None:
    """The result of one call; None when the run was stopped."""
    fixed = fixed_result(name, arguments, settings)
    if fixed is not None:
        return fixed
    tool = tools.get(name)
    if tool is None:
        return ToolResult(f"There is no tool named {name}.", True)
    if kinds.get(name, "function") == "function" or name in settings.simulated_tools:
        from .cell import call_model

        assert settings.tool_simulator is not None  # check_tools refused this before the run, fixed_result answered
        model = "/".join(settings.tool_simulator)
        reply = call_model(ctx.targets[model], simulator_request(tool, arguments, scenario), repeat, ctx)
        if reply is None:
            return None
        if reply.error is not None:
            return ToolResult(f"The tool simulator failed: {reply.error}", True, "model", reply)
        return ToolResult(reply.output, False, "model", reply)
    return _run_real(name, arguments, call_id, ctx, variables)


def _run_real(name: str, arguments: dict[str, Any], call_id: str, ctx: ExecContext, variables: dict[str, str]) -> ToolResult | None:
    from ..agent.tool_calls import run_calls
    from ..core.model import ToolCall, ToolCallInput

    assert ctx.runner is not None and ctx.conversation is not None
    token = ctx.call_token()
    try:
        outputs = run_calls(ctx.runner.services, ctx.conversation.thread, [ToolCall(id=call_id, input=ToolCallInput(
            name=name, arguments=arguments))], token, variables)
    finally:
        ctx.done_token(token)
    if ctx.cancel.cancelled:
        return None
    out = outputs[call_id]
    return ToolResult(out.display_text(), bool(out.isError))
