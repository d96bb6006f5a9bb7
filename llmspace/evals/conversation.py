"""Running one conversation cell (`mode: conversation`): a simulated user talks to the thread's
agent until the user writes the stop marker or `maxUserTurns` is reached; then the assertions.

    run_conversation(cell, ctx, prior, emit)     # ctx.conversation: a ConversationContext

A conversation is a list of transcript entries, each one finished turn:
`{"role": "user", "text", "by": "opening"|"simulator", "stop"?: true}`,
`{"role": "assistant", "text", "toolCalls"?: [{"id", "name", "arguments"}]}` (one model call of the
agent), `{"role": "tool", "id", "name", "arguments", "result", "isError"?, "simulated"?}`, and
(not part of the transcript) `{"role": "judge", "assertion", "answer"}`. Each is journaled as a
`TurnRecord` as soon as it is finished, and what comes next is decided from the entries alone
(`next_step`), so a run killed mid-conversation resumes at its last finished turn and never
requests a journaled turn again; every call goes through the response cache (`evals/cell.py`),
whose key is the whole request, so the cache is keyed per turn.

The agent's request is the thread's rendered request (system prompt, messages, tools) followed
by the conversation; up to `maxTurns` model calls answer one user message (the tool loop).
Simulator turns and tool results are added to the request as data after rendering: they are
never rendered as templates. The simulator sees the conversation with the roles swapped.

Replay (`--replay RESULT`): the recorded user turns and tool results are fed back and only the
agent is called; an agent whose tool calls differ from the recorded ones has left the recorded
path, and the cell ends with an error saying where. With `--agent-too` nothing is called but
the judges: the recorded transcript is the cell's, byte for byte.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import UserFacingError
from .cell import Target, call_model
from .conversation_assertions import JUDGED_KINDS, TYPES
from .conversation_checks import check_conversation, judge_check, judge_request
from .conversation_setup import STOP, ConversationContext, ConversationSettings, Scenario, scenario_of, user_system_prompt
from .conversation_tools import check_tools, tool_result
from .records import CellRecord, JudgeRecord, Reply, TurnRecord

if TYPE_CHECKING:
    from ..core.model import Thread
    from .assertions import Check
    from .cell import ExecContext
    from .dataset import Case, DatasetScan
    from .plan import Cell
    from .prepared import Prepared
    from .records import JournalRecord
    from .spec import EvalSpec

KICKOFF = "(You are now talking to the assistant. Write your first message to it.)"
Emit = Callable[[CellRecord | JudgeRecord | TurnRecord], None]


def transcript(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in entries if e.get("role") in ("user", "assistant", "tool")]


def user_turns(entries: list[dict[str, Any]]) -> int:
    return sum(1 for e in entries if e.get("role") == "user" and (e.get("text") or not e.get("stop")))


def next_step(entries: list[dict[str, Any]], max_user_turns: int, max_turns: int) -> str:
    """What comes next: user, agent, tool or end."""
    conv = transcript(entries)
    if not conv:
        return "user"
    last = conv[-1]
    if last["role"] == "user":
        return "end" if last.get("stop") else "agent"
    start = max(i for i, e in enumerate(conv) if e["role"] == "assistant")
    calls = conv[start].get("toolCalls") or []
    if len(conv) - 1 - start < len(calls):
        return "tool"
    since_user = next((i for i in range(len(conv) - 1, -1, -1) if conv[i]["role"] == "user"), -1)
    agent_calls = sum(1 for e in conv[since_user + 1:] if e["role"] == "assistant")
    if calls and agent_calls < max_turns:
        return "agent"
    return "user" if user_turns(conv) < max_user_turns else "end"


def agent_request(base: dict[str, Any], entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The thread's request followed by the conversation (tool results folded into their calls)."""
    messages = list(base["messages"])
    results = {e["id"]: e for e in entries if e.get("role") == "tool"}
    for e in transcript(entries):
        if e["role"] == "user" and e.get("text"):
            messages.append({"role": "user", "text": e["text"]})
        elif e["role"] == "assistant":
            item: dict[str, Any] = {"role": "assistant", "text": e.get("text", "")}
            if e.get("toolCalls"):
                item["toolCalls"] = [{"id": c["id"], "name": c["name"], "arguments": c.get("arguments") or {},
                                      "result": results[c["id"]]["result"] if c["id"] in results else "",
                                      "isError": bool(results.get(c["id"], {}).get("isError"))} for c in e["toolCalls"]]
            messages.append(item)
    return {**base, "messages": messages}


def simulator_request(scenario: Scenario, entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The simulated user's request: its instructions, then the conversation with the roles swapped."""
    messages: list[dict[str, Any]] = [{"role": "user", "text": KICKOFF}]
    for e in transcript(entries):
        role = {"user": "assistant", "assistant": "user"}.get(e["role"])
        text = str(e.get("text") or "").strip()
        if role is None or not text:
            continue
        if messages[-1]["role"] == role:
            messages[-1] = {"role": role, "text": messages[-1]["text"] + "\n\n" + text}
        else:
            messages.append({"role": role, "text": text})
    return {"system": user_system_prompt(scenario), "messages": messages, "tools": [], "params": None}


def user_entry(text: str) -> dict[str, Any]:
    """A simulator turn: the stop marker ends the conversation (text before it is kept)."""
    if STOP in text:
        return {"role": "user", "text": text.split(STOP, 1)[0].strip(), "by": "simulator", "stop": True}
    return {"role": "user", "text": text.strip(), "by": "simulator"}


class _Cell:
    """One conversation in progress: its entries and how each new one is journaled."""

    def __init__(self, cell: Cell, ctx: ExecContext, emit: Emit) -> None:
        assert ctx.conversation is not None
        self.cell, self.ctx, self.emit, self.conv = cell, ctx, emit, ctx.conversation
        prior = sorted(self.conv.prior.get(cell.key, []), key=lambda t: t.index)
        self.entries = [t.entry for t in prior]
        self.cost = sum(t.cost for t in prior)
        self.cached = all(t.cached for t in prior)
        self.scenario = scenario_of(cell.vars, self.conv.settings.max_user_turns, f"case {cell.case_id}")
        replay = self.conv.settings.replay
        self.recorded = list(replay.transcripts.get(cell.key, ())) if replay is not None else None

    def add(self, entry: dict[str, Any], reply: Reply | None = None) -> None:
        cost = reply.cost if reply is not None else 0.0
        cached = reply.cached if reply is not None else True
        self.emit(TurnRecord(self.cell.key, len(self.entries), entry, cost, cached, int(time.time() * 1000)))
        self.entries.append(entry)
        self.cost += cost
        self.cached = self.cached and cached

    def recorded_nth(self, role: str, n: int) -> dict[str, Any] | None:
        found = [e for e in self.recorded or [] if e.get("role") == role]
        return found[n] if n < len(found) else None

    def count(self, role: str) -> int:
        return sum(1 for e in self.entries if e.get("role") == role)


def run_conversation(cell: Cell, ctx: ExecContext, prior: CellRecord | None, emit: Emit) -> None:
    """Run what is missing of a conversation cell, then check its assertions."""
    if prior is not None:
        return
    c = _Cell(cell, ctx, emit)
    settings = c.conv.settings
    if settings.replay is not None and c.recorded is None:
        c.recorded = []
    error: str | None = None
    finish = "stop"
    agent_too = settings.replay is not None and settings.replay.agent_too
    if agent_too:
        if not c.recorded:
            error = f"{settings.replay.folder if settings.replay else ''} has no recorded conversation for {cell.key}."
        for entry in (c.recorded or [])[len(transcript(c.entries)):]:
            c.add(entry)
    tools = {str(t["name"]): t for t in cell.request.get("tools") or []}
    while error is None and not agent_too:
        step = next_step(c.entries, c.scenario.max_user_turns, ctx.max_turns)
        if step == "end":
            finish = "stop" if (transcript(c.entries) and transcript(c.entries)[-1].get("stop")) else "maxUserTurns"
            break
        if step == "user":
            if c.recorded is not None:
                recorded_user = c.recorded_nth("user", c.count("user"))
                if recorded_user is None:
                    finish = "recorded end"
                    break
                c.add(recorded_user)
            elif c.scenario.opening is not None and not c.count("user"):
                c.add({"role": "user", "text": c.scenario.opening, "by": "opening"})
            else:
                assert settings.user_model is not None
                reply = call_model(ctx.targets["/".join(settings.user_model)], simulator_request(c.scenario, c.entries),
                                   cell.repeat, ctx)
                if reply is None:
                    return
                if reply.error is not None:
                    error = f"the simulated user's call failed: {reply.error}"
                    break
                c.add(user_entry(reply.output), reply)
        elif step == "agent":
            reply = call_model(ctx.targets[cell.model], agent_request(cell.request, c.entries), cell.repeat, ctx)
            if reply is None:
                return
            if reply.error is not None:
                error = reply.error
                break
            n = len(c.entries)
            said: dict[str, Any] = {"role": "assistant", "text": reply.output}
            if reply.tool_calls:
                said["toolCalls"] = [{"id": f"call_{n}_{i}", "name": name, "arguments": args}
                                      for i, (name, args) in enumerate(reply.tool_calls)]
            if c.recorded is not None:
                error = _off_path(c.recorded_nth("assistant", c.count("assistant")), said, c.count("assistant") + 1)
            c.add(said, reply)
        else:
            start = max(i for i, e in enumerate(c.entries) if e.get("role") == "assistant")
            done = sum(1 for e in c.entries[start + 1:] if e.get("role") == "tool")
            call = c.entries[start]["toolCalls"][done]
            if c.recorded is not None:
                recorded = c.recorded_nth("tool", c.count("tool"))
                if recorded is None:
                    error = "the agent left the recorded path: the recording has no result for its call of " + call["name"]
                    break
                c.add({**recorded, "id": call["id"]})
                continue
            result = tool_result(call["name"], dict(call.get("arguments") or {}), call["id"], tools, c.conv.tool_kinds,
                                 ctx, settings, c.scenario, cell.repeat, dict(cell.vars))
            if result is None:
                return
            tool_entry: dict[str, Any] = {"role": "tool", "id": call["id"], "name": call["name"],
                                          "arguments": call.get("arguments") or {}, "result": result.text}
            if result.is_error:
                tool_entry["isError"] = True
            if result.simulated:
                tool_entry["simulated"] = result.simulated
            c.add(tool_entry, result.reply)
    _finish(c, error, finish)


def _off_path(recorded: dict[str, Any] | None, entry: dict[str, Any], n: int) -> str | None:
    """Why the agent's reply `entry` left the recorded path (None when it did not)."""
    def calls(e: dict[str, Any] | None) -> list[tuple[str, Any]]:
        return [(c["name"], c.get("arguments") or {}) for c in (e or {}).get("toolCalls") or []]

    if recorded is None:
        return f"the agent left the recorded path at its reply {n}: the recording ends before it"
    if calls(recorded) != calls(entry):
        want = ", ".join(f"{name}({args})" for name, args in calls(recorded)) or "no tool"
        got = ", ".join(f"{name}({args})" for name, args in calls(entry)) or "no tool"
        return f"the agent left the recorded path at its reply {n}: it called {got}, the recording {want}"
    return None


def _finish(c: _Cell, error: str | None, finish: str) -> None:
    conv = transcript(c.entries)
    final = next((e["text"] for e in reversed(conv) if e["role"] == "assistant" and e.get("text")), "")
    calls = tuple((k["name"], dict(k.get("arguments") or {})) for e in conv if e["role"] == "assistant"
                  for k in e.get("toolCalls") or [])
    checks: list[Check] = []
    if error is None:
        for index, a in enumerate(c.cell.assertions):
            if a.type not in JUDGED_KINDS:
                checks.append(check_conversation(a, c.cell, conv, final, calls))
                continue
            answer = next((e for e in c.entries if e.get("role") == "judge" and e.get("assertion") == index), None)
            if answer is None:
                if c.conv.judge is None:
                    error = f"{a.type} needs a judge model (judge: PROVIDER/MODEL)"
                    break
                reply = call_model(c.ctx.targets[c.conv.judge], judge_request(a, c.scenario, conv, c.conv.thread), 1, c.ctx)
                if reply is None:
                    return
                answer = {"role": "judge", "assertion": index, "answer": reply.output}
                if reply.error is not None:
                    answer["error"] = reply.error
                c.add(answer, reply)
            if answer.get("error"):
                error = f"the judge's call failed: {answer['error']}"
                break
            try:
                checks.append(judge_check(a, str(answer.get("answer") or ""), c.conv.thread, c.scenario))
            except ValueError as exc:
                error = f"the judge's answer could not be read ({exc})"
                break
    reply = Reply(final, calls, cost=round(c.cost, 10), finish=finish, error=error, cached=c.cached, turns=user_turns(conv),
                  conversation=tuple(conv))
    c.emit(CellRecord(c.cell.key, c.cell.case_id, c.cell.model, c.cell.variant, c.cell.repeat, reply,
                      tuple(checks) if error is None else (), int(time.time() * 1000)))


def attach_conversation(ctx: ExecContext, p: Prepared, records: list[JournalRecord]) -> None:
    """With `mode: conversation`, give `ctx` the conversations' context (the turns already journaled
    per cell); their judges run inside the cell, not as judge records."""
    if p.spec.conversation is not None:
        ctx.judge, ctx.conversation = None, conversation_context(p, records)


def conversation_context(p: Prepared, records: list[JournalRecord]) -> ConversationContext:
    """The context of a conversation run, with the turns already journaled per cell."""
    assert p.spec.conversation is not None
    tools = list(p.thread.context.tools or []) if p.thread.context is not None else []
    prior: dict[str, list[TurnRecord]] = {}
    for r in records:
        if isinstance(r, TurnRecord):
            prior.setdefault(r.key, []).append(r)
    return ConversationContext(p.spec.conversation, p.thread, {t.name: t.type for t in tools},
                               "/".join(p.spec.judge) if p.spec.judge else None, prior)


def check_conversation_run(spec: EvalSpec, thread: Thread, dataset: DatasetScan, targets: dict[str, Target],
                           registry: Any) -> None:
    """Everything a conversation run needs, checked before any call (`evals/run.py::prepare`):
    every scenario reads, a simulated user (unless replayed), something to answer every function
    tool, a judge for the judged assertions; the simulator and judge models resolved into
    `targets` (through the provider `registry`). Without `mode: conversation`, the
    conversation-only assertion types and promptfoo's simulated-user tests are refused."""
    settings: ConversationSettings | None = spec.conversation
    cases: Callable[[], Iterable[Case]] = dataset.cases
    if settings is None and dataset.conversation:
        raise UserFacingError(f"{dataset.path.name} holds promptfoo:simulated-user tests, which run as conversations; "
                              "nothing was run.", hint="Add `mode: conversation` and `userModel: PROVIDER/MODEL` (the model "
                              "that plays the user) to the evaluation file, or write it again with `llmspace eval new "
                              "--user-model P/M`.")
    if settings is None:
        for case in cases():
            for a in (*spec.assertions, *case.assertions):
                if a.type in TYPES or (isinstance(a.value, dict) and {"times", "before"} & set(a.value)):
                    raise UserFacingError(f"The assertion {a.label} applies to conversations only.",
                                          hint="Add `mode: conversation` to the evaluation file, or remove it.")
        return
    if spec.executor == "ray":
        raise UserFacingError("Conversations run on this machine only, not on a Ray cluster.", hint="Leave out executor: ray.")
    judged = False
    for case in cases():
        values = {k: v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for k, v in case.values.items()}
        scenario_of(values, settings.max_user_turns, f"case {case.id} (row {case.row})")
        judged = judged or any(a.type in JUDGED_KINDS for a in (*spec.assertions, *case.assertions))
    if settings.replay is None and settings.user_model is None:
        raise UserFacingError("A conversation needs a model to play the user" + (
            " (promptfoo's simulated user is its own hosted service, which llmspace does not call)" if dataset.conversation
            else "") + "; nothing was run.",
                              hint="Add `userModel: PROVIDER/MODEL` to the evaluation file or pass --user-model P/M.")
    tools = list(thread.context.tools or []) if thread.context is not None else []
    if settings.replay is None:  # a replay's tool results are the recorded ones
        check_tools([{"name": t.name} for t in tools], {t.name: t.type for t in tools}, settings)
    if judged and spec.judge is None:
        raise UserFacingError("goal-met, no-leak and llm-rubric assertions need a judge model.",
                              hint="Add `judge: PROVIDER/MODEL` to the file or pass --judge.")
    for provider, model in [*settings.models(), *([spec.judge] if judged and spec.judge is not None else [])]:
        if f"{provider}/{model}" not in targets:
            endpoint, info = registry.resolve(None, provider, model)  # refuses unknown models and missing keys now
            targets[f"{provider}/{model}"] = Target(endpoint.provider_id, info.id, endpoint, info, registry.model_api(endpoint.api))

