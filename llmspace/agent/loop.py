"""One run of one thread: the turn loop (described in docs/architecture.md, "A run, end to end").

`RunSession(services, thread, opts, emit, cancel).execute()` (services: the typed
`RunServices` of `agent/run_services.py`) does, in order: resolve the model,
cut the messages after `from_message_id`, fill paused tool results, check run eligibility,
render, then per turn stream one model reply (folded by `agent/fold.py`), and by the run
settings stop (step by step), execute tools once (auto-run) or loop (ReAct, up to
`max_turns`), pausing for tools a human must answer. Completed, paused and stopped runs
append a run-history entry; failed runs keep what was generated and record nothing, except
when the model's server answered and the run failed on what it said: an error it reported in
its stream, or a stream that stopped making progress after output (`ErrorEvent.in_stream`),
is recorded with status "error"; an empty reply (no text, thinking or tool call) fails the
run, adds no message and is recorded with status "empty"; a run the user stopped is recorded
with status "stopped" (`core/history.py`, `run_status`).
A reply cut at maxTokens (finish reason `length`) is kept with a warning in
`RunResult.reply_warnings`; cut with nothing in it, it is an empty reply.
Refusals before the run starts leave the thread exactly as it was. The run's error text and
the error outputs of tools it runs have the endpoint's secrets removed (`services.redactor_for`);
text the user wrote (messages, results typed in) is never changed.

Each model call and tool call of a run writes a trace under `traces/calls/` with the run's id
(`RunTraces`, made when the session is) and its step, and the run-history entry lists them.
The trace writer's observers (`providers/trace_observers.py`) hear the run start and end and
each tool call while it runs (so an exporter's tool span is current for the MCP call).

Only `agent/runner.py` builds sessions; a session works on the Thread object it is given
(a clone owned by this run) and touches no other shared state.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from typing import Any, Literal

from ..cancel import CancelToken
from ..core.model import AssistantMessage, ModelConfig, Thread, ThreadContext, ToolCall, ToolCallOutput, UserMessage
from ..core.templating.frozen_values import apply_snapshot
from ..core.templating.render import RenderedThread, render_thread
from ..core.templating.resolution import RenderEnv
from ..errors import UserFacingError, describe_exception
from ..providers.base import Adapter, AdapterContext, Endpoint, ModelApi, ModelInfo, ModelRequest
from . import events as rev
from .convert import is_unanswered, neutral_messages, tool_specs
from .fold import TurnBuilder
from .run_services import RunServices
from .run_types import RunOptions, RunResult, RunStatus
from .services import RunTraces, append_history, model_stream, offered_tools, redactor_for, tool_context, trace_tool_calls, usage_sum
from .turn_stream import ENDED_EARLY, feed_turn

log = logging.getLogger("llmspace.agent")

NOT_ELIGIBLE = "The last message must be a user message or a tool call result."
RENDER_FAILED = "Unable to render prompt variables"


def output_of(text: str, is_error: bool) -> ToolCallOutput:
    return ToolCallOutput.model_validate({"content": [{"type": "text", "text": text}], "isError": bool(is_error)})


def _as_output(value: Any) -> ToolCallOutput:
    """Whatever the tool router returned, as a stored ToolCallOutput."""
    if isinstance(value, ToolCallOutput):
        return value
    if isinstance(value, dict):
        return ToolCallOutput.model_validate(value)
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return output_of(text, bool(getattr(value, "is_error", getattr(value, "isError", False))))
    return output_of(str(value), False)


def _max_tokens(api: ModelApi, request: ModelRequest) -> int | None:
    """The output limit the call asked for: the thread's maxTokens, else what the API sent."""
    params = request.params
    if params is not None and params.maxTokens is not None:
        return int(params.maxTokens)
    if api.build_payload is None:
        return None
    try:
        payload = api.build_payload(request)
    except Exception:
        return None
    for key in ("max_tokens", "max_completion_tokens", "max_output_tokens"):
        value = payload.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


class RunSession:
    def __init__(self, services: RunServices, thread: Thread, opts: RunOptions, emit: Callable[[rev.RunEvent], None],
                 cancel: CancelToken) -> None:
        self.services = services
        self.thread = thread
        self.opts = opts
        self.emit = emit
        self.cancel = cancel
        self.new_ids: list[str] = []
        self.paused: list[tuple[str, str]] = []
        self.paused_reason: str | None = None
        self.saw_events = False
        self.turns = 0
        self.model_label = ""
        self._snapshot: dict[str, dict[str, str]] | None = None  # frozen values of this run so far
        self._materialise: ModelConfig | None = None
        self._resolved: ModelConfig | None = None  # the model actually called (for run history)
        self.warnings: list[str] = []  # render warnings of every turn, each once
        self.reply_warnings: list[str] = []  # about the replies themselves (cut at maxTokens)
        self.record_as: str | None = None  # a failed run that is still recorded: "error" or "empty"
        self._redactor = redactor_for(None)  # the endpoint's secrets are added once it is resolved
        self.traces = RunTraces(str(uuid.uuid4()))  # the id the run-history entry will have
        self._observers = services.traces.observers  # second consumers of the trace events (OpenTelemetry)
        self._observed = False  # run_started was told

    # -- entry --------------------------------------------------------------------------
    def execute(self) -> RunResult:
        try:
            endpoint, info, api, adapter = self._resolve()
            self._redactor = redactor_for(endpoint)
            self._prepare()
            if self._materialise is not None:  # an explicit --provider/--model becomes the thread's model
                self.thread.model = self._materialise
        except UserFacingError as exc:
            return self._result("failed", str(exc), record=False)
        except Exception as exc:
            return self._result("failed", describe_exception(exc), record=False)
        self.emit(rev.RunStarted(endpoint.provider_id, info.id))
        self._observers.run_started(self.traces.run_id, title=self.thread.title or "", provider=endpoint.provider_id,
                                    model=info.id, thread_path=self.opts.thread_path)
        self._observed = True
        try:
            status, error = self._loop(endpoint, info, api, adapter)
        except UserFacingError as exc:
            status, error = "failed", str(exc)
        except Exception as exc:
            status, error = "failed", describe_exception(exc)
        if status != "failed" and self.cancel.cancelled:
            status = "stopped"
        if status == "failed":
            return self._result(status, error, record=self.record_as is not None)
        return self._result(status, error, record=self.saw_events or status == "paused")

    # -- before the run -----------------------------------------------------------------
    def _resolve(self) -> tuple[Endpoint, ModelInfo, ModelApi, Adapter]:
        opts = self.opts
        registry = self.services.providers
        endpoint, info = registry.resolve(self.thread.model, opts.provider, opts.model)
        api = registry.model_api(endpoint.api)
        adapter = api.create(AdapterContext(thread=self.thread, run_id=opts.replay_run))
        self.model_label = f"{endpoint.provider_id}/{info.id}"
        if not api.sets_thread_model:
            return endpoint, info, api, adapter
        explicit = opts.provider is not None or opts.model is not None
        current = self.thread.model
        if explicit and (current is None or (current.provider, current.id) != (endpoint.provider_id, info.id)):
            data: dict[str, Any] = {"provider": endpoint.provider_id, "id": info.id}
            if current is not None and current.params is not None:
                data["params"] = current.params.model_dump(exclude_unset=True, by_alias=True)
            self._materialise = ModelConfig.model_validate(data)
        self._resolved = self._materialise or ModelConfig(provider=endpoint.provider_id, id=info.id)
        return endpoint, info, api, adapter

    def _prepare(self) -> None:
        """Cut, fill tool results, check eligibility, render — all or nothing."""
        thread, opts = self.thread, self.opts
        messages = list(thread.messages)
        if opts.from_message_id is not None:
            index = next((i for i, m in enumerate(messages) if m.id == opts.from_message_id), None)
            if index is None:
                raise UserFacingError(f"No message {opts.from_message_id!r} in this thread.",
                                      hint="Check the message id; the thread may have changed.")
            messages = messages[: index + 1]
        if opts.tool_results:
            last = messages[-1] if messages else None
            if not isinstance(last, AssistantMessage) or not last.toolCalls:
                raise UserFacingError("Tool results were given, but the last message has no tool calls.")
            last = last.model_copy(deep=True)
            known = {c.id: c for c in last.toolCalls or []}
            unknown = [cid for cid in opts.tool_results if cid not in known]
            if unknown:
                raise UserFacingError(f"No tool call {unknown[0]!r} in the last message.",
                                      hint="Known call ids: " + ", ".join(known) + ".")
            for cid, (text, is_error) in opts.tool_results.items():
                known[cid].output = output_of(text, is_error)
            messages[-1] = last
        if messages:
            last_msg = messages[-1]
            if not (isinstance(last_msg, UserMessage) or (isinstance(last_msg, AssistantMessage) and last_msg.toolCalls)):
                raise UserFacingError(NOT_ELIGIBLE)
        current = thread.messages
        changed = len(messages) != len(current) or any(a is not b for a, b in zip(messages, current, strict=False))
        if not changed:
            self._render(thread)
            return
        # Render a shallow view with the new message list first, so a failure changes nothing.
        ctx = thread.context if thread.context is not None else ThreadContext()
        self._render(thread.model_copy(update={"context": ctx.model_copy(update={"messages": messages})}))
        thread.ensure_context().messages = messages

    def _render(self, view: Thread | None = None) -> RenderedThread:
        """Render for the next turn; frozen values carry over from the previous render of
        this run (written to the thread only when the run is recorded)."""
        env = RenderEnv(skills=self.services.skills, overrides=dict(self.opts.variables), snapshot=self._snapshot)
        try:
            rendered = render_thread(view if view is not None else self.thread, env)
        except UserFacingError as exc:
            if exc.message.startswith(RENDER_FAILED):
                raise
            raise UserFacingError(f"{RENDER_FAILED}: {exc}") from None
        self._snapshot = dict(rendered.snapshot or {})
        self._rendered = rendered
        for w in rendered.warnings:
            if w not in self.warnings:
                self.warnings.append(w)
        return rendered

    # -- the turn loop ------------------------------------------------------------------
    def _loop(self, endpoint: Endpoint, info: ModelInfo, api: ModelApi, adapter: Adapter) -> tuple[RunStatus, str | None]:
        opts = self.opts
        rendered = self._rendered
        auto = opts.auto_tools or opts.react
        # A continued run: first run what is still unanswered on the last assistant message.
        last = self.thread.messages[-1] if self.thread.messages else None
        if auto and isinstance(last, AssistantMessage) and last.toolCalls:
            pending = [c for c in last.toolCalls if is_unanswered(c)]
            if pending:
                state = self._run_tools(last, pending)
                if state is not None:
                    return state
                rendered = self._render()
        max_turns = max(1, int(opts.max_turns))
        while True:
            if self.cancel.cancelled:
                return "stopped", None
            self.turns += 1
            message, status, error = self._turn(endpoint, info, api, adapter, rendered)
            if status == "failed" or status == "stopped":
                return status, error
            assert message is not None
            if not message.toolCalls or not auto:
                return "completed", None
            state = self._run_tools(message, list(message.toolCalls))
            if state is not None:
                return state
            if not opts.react:
                return "completed", None
            if self.turns >= max_turns:
                return "completed", None
            rendered = self._render()

    def _turn(self, endpoint: Endpoint, info: ModelInfo, api: ModelApi, adapter: Adapter,
              rendered: RenderedThread) -> tuple[AssistantMessage | None, RunStatus | Literal["ok"], str | None]:
        thread = self.thread
        params = thread.model.params if thread.model is not None else None
        offered, left_out = offered_tools(self.services, thread.context.tools if thread.context else None)
        self.reply_warnings.extend(w for w in left_out if w not in self.reply_warnings)  # MCP tools changed since trusted
        request = ModelRequest(endpoint=endpoint, model=info, system_prompt=rendered.system_prompt,
                               messages=neutral_messages(thread, rendered, endpoint),
                               tools=tool_specs(offered), params=params)
        builder = TurnBuilder(info, started=time.perf_counter(), provider_id=endpoint.provider_id, api=endpoint.api)
        self.emit(rev.MessageStarted(builder.message_id))
        stream = model_stream(self.services, api, adapter, request, self.cancel,
                              on_retry=lambda attempt, delay, err: self.emit(rev.Retrying(attempt, delay, err.message)),
                              run=self.traces)

        def on_events(events: list[rev.RunEvent]) -> None:
            self.saw_events = True
            for run_event in events:
                self.emit(run_event)

        error = feed_turn(stream, builder, self.cancel, on_events)
        if error is None and builder.error is not None and not self.cancel.cancelled:
            error = builder.error.message
            if builder.error.in_stream:
                self.record_as = "error"
        stopped = self.cancel.cancelled or (error is None and builder.finish_reason == "aborted")
        if error is None and not stopped and builder.finish_reason is None:
            error = ENDED_EARLY
        if error is None and not stopped:
            error = self._check_reply(builder, api, request)
        keep = builder.has_content() if (stopped or error) else True
        message = builder.build() if keep else None
        if message is not None:
            thread.ensure_messages().append(message)
            self.new_ids.append(message.id)
        self.emit(rev.MessageFinished(builder.message_id, kept=message is not None))
        if error is not None:
            return message, "failed", error
        if stopped:
            return message, "stopped", None
        return message, "ok", None

    def _check_reply(self, builder: TurnBuilder, api: ModelApi, request: ModelRequest) -> str | None:
        """The error of a finished reply with nothing in it (recorded as "empty"); a reply cut
        at maxTokens with something in it adds a warning instead."""
        provider, reason = request.endpoint.provider_id, builder.finish_reason
        if reason == "length":
            limit = _max_tokens(api, request)
            cut = f"cut at maxTokens {limit}" if limit is not None else "cut at the model's output limit"
            if builder.has_content():
                self.reply_warnings.append(f"{provider}: the reply was {cut} (finish reason length); "
                                           "raise maxTokens in the thread's model settings for the rest.")
                return None
            self.record_as = "empty"
            return f"{provider} returned an empty reply: it was {cut}. Raise maxTokens in the thread's model settings."
        if builder.has_content():
            return None
        self.record_as = "empty"
        return f"{provider} returned an empty reply (finish reason {reason})."

    def _run_tools(self, message: AssistantMessage, calls: list[ToolCall]) -> tuple[RunStatus, str | None] | None:
        """Execute `calls` (or pause); None to go on, else the run's (status, error)."""
        router = self.services.tools
        tools = list(self.thread.context.tools or []) if self.thread.context else []
        # The router skips calls that already have an output; ours carry the empty output set
        # at the end of the turn, so ask about copies without it.
        pause = router.pause_for(tools, [c.model_copy(update={"output": None}) for c in calls])
        if pause is not None:
            self.paused = [(message.id, c.id) for c in calls]
            self.paused_reason = pause.reason
            self.emit(rev.Paused(pause.reason, tuple(self.paused), pause.risky))
            return "paused", None
        for call in calls:
            self.emit(rev.ToolStarted(message.id, call.id, call.input.name))
        timings: dict[int, tuple[float, float]] = {}
        outputs = router.execute_calls(tools, calls, tool_context(self.services, self.thread, self.opts.variables, self.opts.elicit), self.cancel,
                                       self.opts.tool_timeout,
                                       on_timed=lambda i, started, ms: timings.__setitem__(i, (started, ms)),
                                       around=lambda i: self._observers.tool_call(self.traces.run_id, calls[i].id,
                                                                                  calls[i].input.name))
        for call, out in zip(calls, outputs, strict=True):
            call.output = self._redacted_error(_as_output(out))
            self.emit(rev.ToolFinished(message.id, call.id, call.output))
        trace_tool_calls(self.services, self.traces, calls, [c.output for c in calls if c.output is not None],
                         timings, self._redactor)
        if self.cancel.cancelled:
            return "stopped", None
        return None

    def _redacted_error(self, output: ToolCallOutput) -> ToolCallOutput:
        """A tool's error output without secrets (a successful output is the tool's data, kept as is)."""
        if output.isError is not True:
            return output
        return output.with_texts(self._redactor.text)

    # -- the end ------------------------------------------------------------------------
    def _result(self, status: RunStatus, error: str | None, record: bool) -> RunResult:
        if error is not None:
            error = self._redactor.text(error)
        run_id: str | None = None
        ids = set(self.new_ids)
        new = [m for m in self.thread.messages if m.id in ids and isinstance(m, AssistantMessage)]
        usage = usage_sum([m.usage for m in new if m.usage is not None])
        if record:
            if self._snapshot is not None:
                apply_snapshot(self.thread, self._snapshot)
            run_id = append_history(self.thread, usage, int(self.services.clock() * 1000), self._resolved,
                                    status=self.record_as if status == "failed" else ("stopped" if status == "stopped" else None),
                                    run=self.traces)
        if self._observed:
            self._observers.run_ended(self.traces.run_id, status=self.record_as or status, error=error)
        return RunResult(status=status, error=error, thread=self.thread, paused_calls=list(self.paused),
                         new_message_ids=list(self.new_ids), run_id=run_id, paused_reason=self.paused_reason,
                         turns=self.turns, usage=usage, warnings=list(self.warnings),
                         reply_warnings=list(self.reply_warnings))
