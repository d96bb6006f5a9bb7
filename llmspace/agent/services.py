"""Thin adapters between the run loop and the services it uses: the model stream (with
retries before the first token and a trace per call under `traces/calls/`), the traces of a
run's tool calls (`RunTraces`), the tool context, run usage and the run-history entry. Keeping these calls here lets `agent/loop.py` stay about the loop.
Every provider error passes `redactor_for` on its way to the run (any adapter, also a plugin's):
the endpoint's API key and configured header values are removed by value.

Every function takes the typed `RunServices` (`agent/run_services.py`), never the App.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from ..cancel import CancelToken
from ..core.history import append_run
from ..core.model import ModelConfig, Thread, Tool, ToolCall, ToolCallOutput, Usage
from ..core.templating.resolution import RenderEnv, resolve_variables
from ..core.templating.variables import DEFAULT_CWD, typed_variables
from ..core.threadio import thread_to_data
from ..core.usage import add_usage, empty_usage
from ..errors import describe_exception
from ..providers.base import Adapter, Api, Endpoint, ModelApi, ModelRequest
from ..providers.events import ErrorEvent, StreamEvent
from ..providers.progress import ProgressWatched
from ..providers.retry import stream_with_retries
from ..providers.tolerant_calls import TolerantAdapter
from ..redact import KNOWN, Redactor, secret_values
from ..tools.base import McpToolCaller, ToolContext
from .run_services import RunServices

if TYPE_CHECKING:
    from ..providers.traces import TraceWriter

log = logging.getLogger("llmspace.agent")


@dataclass
class RunTraces:
    """The traces one run writes: the run's id (its run-history entry's), the last step
    index given out, and the file names written so far in step order (the entry lists them).
    Steps are numbered 1, 2, … over model calls and tool calls alike."""

    run_id: str
    step: int = 0
    names: list[str] = field(default_factory=list)

    def next_step(self) -> int:
        self.step += 1
        return self.step


def model_stream(services: RunServices, api: ModelApi, adapter: Adapter, request: ModelRequest, cancel: CancelToken,
                 on_retry: Callable[[int, float, ErrorEvent], None] | None = None,
                 run: RunTraces | None = None) -> Iterator[StreamEvent]:
    """The adapter's stream, ended when it makes no progress (`providers/progress.py`), with
    its error messages redacted, retried before the first token and traced under `traces/calls/` —
    as far as the API declares (`ModelApi.retried`, `.traced`; the offline replay API declares
    neither). `on_retry(attempt, delay, error)` hears about
    each retry. With `run`, the trace takes the run's id and next step and its name joins
    `run.names`. A provider with `compat.tolerantToolCalls` on gets its tool calls written as
    text made real (`providers/tolerant_calls.py`)."""
    redacting = _RedactingAdapter(TolerantAdapter(adapter), redactor_for(request.endpoint))
    stream: Iterator[StreamEvent]
    if api.retried:  # watched per attempt
        stream = stream_with_retries(redacting, request, cancel, max_attempts=3, on_retry=on_retry)
    else:
        stream = ProgressWatched(redacting).stream(request, cancel)
    return _traced(services.traces, request, stream, run) if api.traced else stream


def trace_tool_calls(services: RunServices, run: RunTraces, calls: list[ToolCall], outputs: list[ToolCallOutput],
                     timings: dict[int, tuple[float, float]], redactor: Redactor) -> None:
    """Write one trace per finished tool call of a run, in call order (each its own step);
    `timings[index]` is (started, epoch seconds; duration in ms) as the router measured it."""
    for index, (call, output) in enumerate(zip(calls, outputs, strict=True)):
        started, duration_ms = timings.get(index, (0.0, 0.0))
        step = run.next_step()
        try:
            path = services.traces.record_tool(
                name=call.input.name, call_id=call.id, arguments=call.input.arguments or call.input.partialArguments or {},
                result_text=output.text(), is_error=output.isError is True,
                started_at=datetime.fromtimestamp(started, UTC), duration_ms=duration_ms,
                run_id=run.run_id, step=step, redactor=redactor)
            run.names.append(path.name)
        except Exception:
            log.warning("could not write the trace of a tool call", exc_info=True)


def redactor_for(endpoint: Endpoint | None) -> Redactor:
    """Removes the endpoint's secrets (API key, configured header values) and every secret
    the process knows of; the endpoint's are remembered process-wide (for the log)."""
    values = secret_values(endpoint.api_key, endpoint.headers, endpoint.base_url) if endpoint is not None else secret_values(None, None)
    KNOWN.add(values)
    return KNOWN.redactor + Redactor(values)


class _RedactingAdapter:
    """An adapter whose `ErrorEvent` messages have the secrets removed (before retries report them)."""

    def __init__(self, adapter: Adapter, redactor: Redactor) -> None:
        self.adapter, self.redactor = adapter, redactor
        self.api: Api = adapter.api

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        events = self.adapter.stream(request, cancel)
        try:
            for event in events:
                if isinstance(event, ErrorEvent):
                    event = dataclasses.replace(event, message=self.redactor.text(event.message))
                yield event
        finally:
            close = getattr(events, "close", None)
            if close is not None:
                close()


def _traced(traces: TraceWriter, request: ModelRequest, stream: Iterator[StreamEvent],
            run: RunTraces | None = None) -> Iterator[StreamEvent]:
    """Pass `stream` through, writing one trace file for the call when it ends (any way)."""
    from ..providers.traces import TraceCall

    trace = TraceCall()
    try:
        for event in stream:
            trace.add(event)
            if isinstance(event, ErrorEvent):
                trace.error = event.message
            yield event
    except GeneratorExit:
        if trace.error is None:
            trace.error = "stopped" if trace.events else None
        raise
    except Exception as exc:
        trace.error = describe_exception(exc)
        raise
    finally:
        try:
            if run is None:
                traces.record(request, trace.events, trace.timing(), error=trace.error)
            else:
                step = run.next_step()
                path = traces.record(request, trace.events, trace.timing(), error=trace.error, run_id=run.run_id, step=step)
                run.names.append(path.name)
        except Exception:
            log.warning("could not write the trace of a model call", exc_info=True)


def working_directory(thread: Thread, overrides: dict[str, str] | None = None) -> str:
    """The thread's working directory, as rendering sees it: its `workingDirectory` variable
    (a `--var` override of that name wins; the default variable when the file has none)."""
    for name, var in typed_variables(thread).items():
        if var.type == "workingDirectory":
            value = (overrides or {}).get(name, var.value or "")
            return value.strip() or DEFAULT_CWD
    return DEFAULT_CWD


def offered_tools(services: RunServices, tools: list[Tool] | None) -> tuple[list[Tool], list[str]]:
    """The tools offered to the model: the thread's, minus MCP tools whose definition changed
    since the user trusted it (`mcp/pins.py`), with a warning naming each and the command that trusts it."""
    tools = list(tools or [])
    if not any(t.type == "mcp" for t in tools):
        return tools, []
    try:
        blocked = getattr(services.mcp(), "blocked_tool", None)
    except Exception:  # MCP unavailable: its tools report it when called
        return tools, []
    if blocked is None:
        return tools, []
    offered, notes = [], []
    for t in tools:
        why = blocked(t.serverId, t.toolName) if t.type == "mcp" and t.serverId and t.toolName else None
        if why:
            notes.append(why)
        else:
            offered.append(t)
    return offered, notes


def tool_context(services: RunServices, thread: Thread, overrides: dict[str, str] | None = None,
                 elicit: Any = None) -> ToolContext:
    """Where `thread`'s tools run. The MCP hub is asked for only when the thread has MCP tools;
    `elicit` answers its servers' requests for input (None declines them)."""
    mcp: McpToolCaller | None = None
    tools = thread.context.tools if thread.context is not None else None
    if any(t.type == "mcp" for t in tools or []):
        try:
            mcp = services.mcp()
        except Exception:  # MCP unavailable: its tools report it as their result
            log.warning("the MCP hub is not available", exc_info=True)
    ctx = ToolContext(working_directory=working_directory(thread, overrides), data_root=services.root,
                      skills=services.skills, workspace_root=services.root.workspace, mcp=mcp, elicit=elicit)
    if any(t.type == "plugin" for t in tools or []):
        ctx.thread_data = _once(lambda: thread_to_data(thread))
        ctx.variables = _once(lambda: resolve_variables(thread, RenderEnv(skills=services.skills,
                                                                          overrides=dict(overrides or {}))))
    return ctx


def _once(compute: Callable[[], dict[str, Any]]) -> Callable[[], dict[str, Any]]:
    """`compute()` run at most once, however many threads ask (the calls of one batch share it)."""
    lock = threading.Lock()
    box: list[dict[str, Any]] = []

    def get() -> dict[str, Any]:
        with lock:
            if not box:
                box.append(compute())
            return box[0]

    return get


def usage_sum(usages: list[Usage]) -> Usage:
    """The run's usage: the sum over the assistant messages it produced (empty usage when
    none reported any, as the original LLM Space app writes it)."""
    total = empty_usage()
    for u in usages:
        total = add_usage(total, u)
    return total


def append_history(thread: Thread, usage: Usage | None, timestamp_ms: int,
                   model: ModelConfig | None = None, status: str | None = None,
                   run: RunTraces | None = None) -> str | None:
    """Record the run with the model actually called (`model`) in its snapshot, so history and
    compare say which model produced each run: a thread on the default model (no saved
    `model`) gets it written in, and a saved model that could not run (no API key, disabled)
    is replaced by the one the run fell back to, keeping the thread's parameters. The working
    thread itself keeps what the user chose. `status` marks a failed run ("error", "empty").
    With `run`, the entry takes the run's id and lists its traces."""
    entry = append_run(thread, usage, timestamp_ms, status=status, run_id=run.run_id if run else None,
                       traces=run.names if run else None)
    recorded = entry.thread.model
    if model is not None and recorded is None:
        entry.thread.model = model.model_copy(deep=True)
    elif model is not None and recorded is not None and (recorded.provider, recorded.id) != (model.provider, model.id):
        recorded.provider, recorded.id = model.provider, model.id
    return entry.id
