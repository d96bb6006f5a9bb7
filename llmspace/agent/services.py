"""Thin adapters between the run loop and the services it uses: the model stream (with
retries before the first token and a trace per call under `traces/`), the tool context, run
usage and the run-history entry. Keeping these calls here lets `agent/loop.py` stay about the loop.
Every provider error passes `redactor_for` on its way to the run (any adapter, also a plugin's):
the endpoint's API key and configured header values are removed by value.

Callers: `agent/loop.py` only.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Iterator

from ..core.history import append_run
from ..core.model import ModelConfig, Thread, Usage
from ..core.usage import add_usage, empty_usage
from ..core.variables import DEFAULT_CWD, typed_variables
from ..errors import describe_exception
from ..providers.base import CancelToken, ModelRequest
from ..providers.events import ErrorEvent, StreamEvent
from ..providers.retry import stream_with_retries
from ..redact import KNOWN, Redactor, secret_values

log = logging.getLogger("llmspace.agent")


def model_stream(app: Any, adapter: Any, request: ModelRequest, cancel: CancelToken,
                 on_retry: Any = None) -> Iterator[StreamEvent]:
    """The adapter's stream, retried before the first token and traced under `traces/`
    (the offline replay provider is neither retried nor traced). `on_retry(attempt, delay,
    error)` hears about each retry."""
    from ..providers.replay import ReplayAdapter

    if isinstance(adapter, ReplayAdapter):
        return adapter.stream(request, cancel)
    redacting = _RedactingAdapter(adapter, redactor_for(request.endpoint))
    return _traced(app, request, stream_with_retries(redacting, request, cancel, max_attempts=3, on_retry=on_retry))


def redactor_for(endpoint: Any) -> Redactor:
    """Removes the endpoint's secrets (API key, configured header values) and every secret
    the process knows of; the endpoint's are remembered process-wide (for the log)."""
    values = secret_values(getattr(endpoint, "api_key", None), getattr(endpoint, "headers", None))
    KNOWN.add(values)
    return KNOWN.redactor + Redactor(values)


class _RedactingAdapter:
    """An adapter whose `ErrorEvent` messages have the secrets removed (before retries report them)."""

    def __init__(self, adapter: Any, redactor: Redactor) -> None:
        self.adapter, self.redactor = adapter, redactor
        self.api: Any = getattr(adapter, "api", None)

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


def _traced(app: Any, request: ModelRequest, stream: Iterator[StreamEvent]) -> Iterator[StreamEvent]:
    """Pass `stream` through, writing one trace file for the call when it ends (any way)."""
    from ..providers.traces import TraceCall, TraceWriter

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
            TraceWriter(app.root).record(request, trace.events, trace.timing(), error=trace.error)
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


def tool_context(app: Any, thread: Thread, overrides: dict[str, str] | None = None) -> Any:
    from ..tools.base import ToolContext

    try:
        skills = app.skills
    except Exception:
        skills = None
    try:
        mcp = app.mcp
    except Exception:
        mcp = None
    return ToolContext(working_directory=working_directory(thread, overrides), data_root=app.root, skills=skills,
                       workspace_root=app.root.workspace, mcp=mcp)


def usage_sum(usages: list[Usage]) -> Usage:
    """The run's usage: the sum over the assistant messages it produced (empty usage when
    none reported any, as the original writes it)."""
    total = empty_usage()
    for u in usages:
        total = add_usage(total, u)
    return total


def append_history(thread: Thread, usage: Usage | None, timestamp_ms: int,
                   model: ModelConfig | None = None) -> str | None:
    """Record the run. A thread that runs on the default model (no saved `model`) gets the
    model actually called written into its run snapshot, so history and compare can say
    which model produced each run; the working thread itself stays without a model."""
    run = append_run(thread, usage, timestamp_ms)
    if run.thread.model is None and model is not None:
        run.thread.model = model.model_copy(deep=True)
    return run.id
