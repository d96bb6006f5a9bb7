"""Running one evaluation cell: the model call (or the tool loop), the assertions, the judges.

A `Cell` (`evals/plan.py`) carries its rendered request without credentials; `Target`s,
resolved once per model on the driver, add the endpoint. `run_cell(cell, ctx, prior, emit)`
is the unit of work an executor (`evals/pool.py`: threads here, or Ray tasks) runs: it calls the model unless `prior`
(the cell's journaled record) exists, checks the assertions, then runs each `llm-rubric`
judge whose record is not journaled yet, handing every record to `emit` as soon as it is
complete (`select-best` and `max-score` wait for the case's other cells: `evals/compare_outputs.py`).
A call stopped by Ctrl-C emits nothing (the cell is simply not done).

One-turn cells call the adapter directly (`providers/retry.py` retries before the first
token, after `Retry-After`), with no trace file and nothing saved to the thread; a 429 also
pauses every cell of that provider (`ProviderGate`; on Ray, one slots actor per provider does
this for the whole cluster, `evals/ray_pool.py`). A base URL may name `${env:VAR}` (a
node-local endpoint): `node_url` resolves it on the machine that makes the call. `--react` cells run the thread's tool
loop through `Runner.run` on a copy of the thread, as matrix runs do; the copy is dropped,
so the thread's run history is never touched. Responses are cached (`evals/cache.py`).
"""

from __future__ import annotations

import os
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..agent.fold import TurnBuilder
from ..agent.services import redactor_for
from ..agent.turn_stream import ENDED_EARLY, feed_turn
from ..cancel import CancelToken
from ..core.model import ModelParams
from ..core.model import Usage as TokenUsage
from ..core.tool_arguments import read_arguments
from ..core.usage import cost_of
from ..errors import UserFacingError
from ..providers.base import AdapterContext, Endpoint, ModelApi, ModelInfo, ModelRequest, NeutralMessage, NeutralToolCall, ToolSpec
from ..providers.events import ErrorEvent
from ..providers.retry import stream_with_retries
from ..providers.tolerant_calls import TolerantAdapter
from .assertions import CODE, COMPARE, JUDGED, SIMILAR, Assertion, Check, Observation, check
from .cache import ResponseCache, cache_key
from .judge import JUDGE_REPEAT, judge_key
from .records import CellRecord, JudgeRecord, Reply, Usage, parse_reply, reply_data
from .relevance_judge import run_answer_relevance

if TYPE_CHECKING:
    from ..agent.runner import Runner
    from ..core.model import Thread
    from .code_assertions import CodeAssertions
    from .conversation_setup import ConversationContext
    from .embeddings import Embedder
    from .judge import Judge
    from .plan import Cell

MAX_ATTEMPTS = 6


@dataclass(frozen=True)
class Target:
    provider: str
    model: str
    endpoint: Endpoint
    info: ModelInfo
    api: ModelApi

    @property
    def label(self) -> str:
        return f"{self.provider}/{self.model}"


class ProviderGate:
    """At most `limit` calls to one provider at once; a 429 (or Retry-After) pauses them all."""

    def __init__(self, limit: int) -> None:
        self._sem = threading.BoundedSemaphore(limit)
        self._lock = threading.Lock()
        self._pause_until = 0.0

    def acquire(self, cancel: CancelToken) -> bool:
        while not self._sem.acquire(timeout=0.1):
            if cancel.cancelled:
                return False
        while True:
            with self._lock:
                wait = self._pause_until - time.monotonic()
            if wait <= 0:
                return True
            if cancel.wait(min(wait, 0.25)):
                self._sem.release()
                return False

    def release(self) -> None:
        self._sem.release()

    def on_retry(self, _attempt: int, delay: float, error: ErrorEvent) -> None:
        if error.status == 429 or error.retry_after is not None:
            with self._lock:
                self._pause_until = max(self._pause_until, time.monotonic() + delay)


@dataclass
class ExecContext:
    """What cells need, shared by every worker."""

    targets: dict[str, Target]  # "provider/model" -> target (the judge's too)
    gates: dict[str, ProviderGate]  # provider id -> gate
    cancel: CancelToken
    cache: ResponseCache | None = None
    judge: Judge | None = None
    react_thread: Thread | None = None  # --react: the thread whose tool loop runs
    runner: Runner | None = None
    max_turns: int = 50
    code: CodeAssertions | None = None  # runs javascript/python assertions (None: they fail, saying why)
    conversation: ConversationContext | None = None  # mode: conversation (evals/conversation.py)
    embedder: Embedder | None = None  # checks similar assertions (None: they fail, saying why)
    stats: dict[str, int] = field(default_factory=lambda: {"calls": 0, "cacheHits": 0})
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _live: set[CancelToken] = field(default_factory=set)
    _linked: bool = False

    def count(self, key: str) -> None:
        with self._lock:
            self.stats[key] += 1

    def call_token(self) -> CancelToken:
        """A token for one call, cancelled with the run's. Each call gets its own because the
        HTTP layer registers every socket it opens with the token until the token is
        cancelled: one token for a whole run would keep all its sockets alive."""
        token = CancelToken()
        with self._lock:
            if not self._linked:
                self._linked = True
                self.cancel.on_cancel(self._cancel_live)
            self._live.add(token)
        if self.cancel.cancelled:
            token.cancel()
        return token

    def done_token(self, token: CancelToken) -> None:
        with self._lock:
            self._live.discard(token)

    def _cancel_live(self) -> None:
        with self._lock:
            live = list(self._live)
        for token in live:
            token.cancel()


# -- requests (rendered by evals/plan.py::request_data) --------------------------------------


_ENV_REF = re.compile(r"\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def node_url(url: str) -> str:
    """`url` with each `${env:VAR}` replaced by VAR of this machine's environment (a node-local
    endpoint: on a Ray cluster, the node the cell runs on)."""

    def value(m: re.Match[str]) -> str:
        found = os.environ.get(m.group(1), "").strip()
        if not found:
            raise UserFacingError(f"{m.group(1)} is not set on {socket.gethostname()}, and the base URL {url} needs it.",
                                  hint=f"Set {m.group(1)} in the environment of every machine that runs these cells.")
        return found

    return _ENV_REF.sub(value, url)


def model_request(target: Target, data: dict[str, Any]) -> ModelRequest:
    messages = tuple(NeutralMessage(
        role=m["role"], text=m.get("text", ""), images=tuple((str(i[0]), str(i[1])) for i in m.get("images", [])),
        thinking=m.get("thinking"),
        tool_calls=tuple(NeutralToolCall(id=c["id"], name=c["name"], arguments=c.get("arguments") or {},
                                         result_text=c.get("result", ""), result_is_error=bool(c.get("isError")))
                         for c in m.get("toolCalls", []))) for m in data["messages"])
    tools = tuple(ToolSpec(t["name"], t.get("description", ""), t.get("parameters") or {}) for t in data.get("tools", []))
    params = ModelParams.model_validate(data["params"]) if data.get("params") else None
    endpoint = target.endpoint
    if "${env:" in endpoint.base_url:
        endpoint = replace(endpoint, base_url=node_url(endpoint.base_url))
    return ModelRequest(endpoint=endpoint, model=target.info, system_prompt=data.get("system", ""),
                        messages=messages, tools=tools, params=params)


# -- one model call ------------------------------------------------------------------------


def call_model(target: Target, data: dict[str, Any], repeat: int, ctx: ExecContext) -> Reply | None:
    """The reply of one call (from the cache when there); None when Ctrl-C stopped it."""
    key = cache_key(target.provider, target.model, target.endpoint.base_url, data, repeat)
    if ctx.cache is not None:
        hit = ctx.cache.get(key)
        if hit is not None:
            ctx.count("cacheHits")
            return replace(parse_reply(hit), cached=True)
    gate = ctx.gates[target.provider]
    if not gate.acquire(ctx.cancel):
        return None
    token = ctx.call_token()
    try:
        ctx.count("calls")
        outcome = _stream_once(target, data, token, gate)
    finally:
        gate.release()
        ctx.done_token(token)
    if outcome is None:
        return None
    if ctx.cache is not None and outcome.error is None:
        ctx.cache.put(key, reply_data(outcome))
    return outcome


def _stream_once(target: Target, data: dict[str, Any], cancel: CancelToken, gate: ProviderGate) -> Reply | None:
    try:
        request = model_request(target, data)
    except UserFacingError as exc:  # a node-local base URL whose variable is not set here
        return Reply(latency_ms=0.0, error=str(exc))
    adapter = TolerantAdapter(target.api.create(AdapterContext()))  # compat.tolerantToolCalls
    builder = TurnBuilder(target.info, provider_id=target.provider, api=target.endpoint.api)
    started = time.perf_counter()
    stream = stream_with_retries(adapter, request, cancel, max_attempts=MAX_ATTEMPTS, on_retry=gate.on_retry)
    error = feed_turn(stream, builder, cancel)
    if cancel.cancelled:
        return None
    if error is None and builder.error is not None:
        error = builder.error.message
    if error is None and builder.finish_reason is None:
        error = ENDED_EARLY
    elapsed = (time.perf_counter() - started) * 1000
    usage = builder.usage()
    calls = tuple((c.name, read_arguments(c.args_text)[0]) for _, c in sorted(builder.calls.items()))
    first = (builder.first_token - started) * 1000 if builder.first_token is not None else None
    return Reply(builder.text, calls, _usage(usage), cost_of(usage), round(elapsed, 1),
                 round(first, 1) if first is not None else None, builder.finish_reason,
                 redactor_for(target.endpoint).text(error) if error else None)


def _usage(usage: TokenUsage | None) -> Usage | None:
    if usage is None:
        return None
    data = usage.model_dump(exclude_none=True)
    return Usage(int(usage.input), int(usage.output), int(usage.totalTokens), data)


def _react_call(cell: Cell, target: Target, ctx: ExecContext) -> Reply | None:
    """The tool loop on a copy of the thread (nothing is saved)."""
    from ..agent.matrix import _cell_thread, _message_text
    from ..agent.run_types import RunOptions
    from ..core.model import AssistantMessage
    from ..core.timing import run_latency_ms
    from ..core.usage import run_usage

    assert ctx.runner is not None and ctx.react_thread is not None
    gate = ctx.gates[target.provider]
    if not gate.acquire(ctx.cancel):
        return None
    token = ctx.call_token()
    try:
        ctx.count("calls")
        opts = RunOptions(provider=target.provider, model=target.model, variables=dict(cell.vars), react=True,
                          max_turns=ctx.max_turns)
        started = time.perf_counter()
        result = ctx.runner.run(_cell_thread(ctx.react_thread), opts, None, token)
    finally:
        gate.release()
        ctx.done_token(token)
    if ctx.cancel.cancelled:
        return None
    ids = set(result.new_message_ids)
    new = [m for m in result.thread.messages if m.id in ids and isinstance(m, AssistantMessage)]
    usage = run_usage(new)
    first, _duration = run_latency_ms(new)
    calls = tuple((c.input.name, dict(c.input.arguments or {})) for m in new for c in m.toolCalls or [])
    return Reply("\n\n".join(t for t in (m.text().strip() for m in new) if t), calls, _usage(usage), cost_of(usage),
                 round((time.perf_counter() - started) * 1000, 1), first, result.status,
                 result.error if result.status == "failed" else None, False, result.turns,
                 tuple(_message_text(m) for m in new))


# -- the cell ------------------------------------------------------------------------------


def observation(cell: Cell, reply: Reply) -> Observation:
    return Observation(output=reply.output, tool_calls=reply.tool_calls, latency_ms=reply.latency_ms, cost=reply.cost,
                       output_tokens=reply.usage.output if reply.usage is not None else None,
                       expected=cell.expected, vars=dict(cell.vars), prompt=cell.task, finish_reason=reply.finish,
                       tools=tuple(cell.request.get("tools") or ()))


def _check(a: Assertion, obs: Observation, ctx: ExecContext) -> Check:
    if a.transforms:
        if ctx.code is None:
            return Check(a.label, False, a.weight, "transforms run on this machine's executor only (not on Ray workers)")
        changed, why = ctx.code.transformed(a, obs)
        if changed is None:
            return Check(a.label, False, a.weight, why)
        obs = changed
    if a.type in CODE and ctx.code is not None:
        return ctx.code.check(a, obs)
    if a.type == SIMILAR and ctx.embedder is not None:
        return ctx.embedder.check(a, obs)
    return check(a, obs)


def run_cell(cell: Cell, ctx: ExecContext, prior: CellRecord | None, judged: set[str],
             emit: Callable[[CellRecord | JudgeRecord], None]) -> None:
    """Run what is missing of `cell` (its call unless `prior`, then its judges not in `judged`)."""
    record = prior
    if record is None:
        target = ctx.targets[cell.model]
        reply = _react_call(cell, target, ctx) if ctx.react_thread is not None else call_model(target, cell.request, cell.repeat, ctx)
        if reply is None:
            return
        checks: list[Check] = []
        if reply.error is None:
            obs = observation(cell, reply)
            checks = [_check(a, obs, ctx) for a in cell.assertions if a.type != JUDGED and a.type not in COMPARE]
        record = CellRecord(cell.key, cell.case_id, cell.model, cell.variant, cell.repeat, reply, tuple(checks),
                            int(time.time() * 1000))
        emit(record)
    if record.error is not None or ctx.judge is None:
        return

    def ask(model: str, data: dict[str, Any], repeat: int) -> Reply | None:
        return call_model(ctx.targets[model], data, repeat, ctx)

    for index, assertion in enumerate(cell.assertions):
        if assertion.type != JUDGED or ctx.cancel.cancelled:
            continue
        judged_record = record
        if assertion.transforms:  # the judge grades the output the transforms give
            changed, why = ctx.code.transformed(assertion, observation(cell, record.reply)) if ctx.code is not None \
                else (None, "transforms run on this machine's executor only (not on Ray workers)")
            if changed is None:
                key = judge_key(cell.key, ctx.judge.model, "transform")
                if key not in judged:
                    emit(JudgeRecord(key, cell.key, index, ctx.judge.model, "transform", JUDGE_REPEAT, "", "", None, 0.0,
                                     False, None, int(time.time() * 1000), error=why))
                continue
            judged_record = replace(record, reply=replace(record.reply, output=changed.output))
        judged_cell = cell
        if assertion.context_transform is not None:  # promptfoo's contextTransform: the context the judge is shown
            context, why = ctx.code.context(assertion, observation(cell, record.reply)) if ctx.code is not None \
                else (None, "contextTransform runs on this machine's executor only (not on Ray workers)")
            if context is None:
                model, phash = ctx.judge.model_for(assertion), f"contextTransform:{index}"
                if judge_key(cell.key, model, phash) not in judged:
                    emit(JudgeRecord(judge_key(cell.key, model, phash), cell.key, index, model, phash, JUDGE_REPEAT, "", "", None,
                                     0.0, False, None, int(time.time() * 1000), error=why))
                continue
            judged_cell = replace(cell, vars={**cell.vars, "context": context})
        judge_record = run_answer_relevance(ctx.judge, ctx.embedder, cell, index, assertion, judged_record, judged, ask) \
            if assertion.grader == "answer-relevance" else ctx.judge.run(judged_cell, index, assertion, judged_record, judged, ask)
        if judge_record is not None:
            emit(judge_record)
