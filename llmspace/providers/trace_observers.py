"""Second consumers of the call-trace events: what a run, its model and tool calls, and an
evaluation tell an observer (the OpenTelemetry exporter, `traces/otel_export.py`, is one).

`TraceObservers` is the list the `TraceWriter` holds (`TraceWriter.observers`); it forwards each
event to every observer and swallows their failures (an observer never breaks a run):

    observers.run_started(run_id, title="…", provider="openai", model="gpt-4o", thread_path="a.json")
    with observers.tool_call(run_id, call_id, name):   # while the tool runs (its context is current)
        ...
    observers.call_recorded(doc)      # the trace document as written under traces/calls/ (redacted)
    observers.run_ended(run_id, status="completed", error=None)

Evaluations: `evaluation_started(eval_id, name)`, `cell_finished(eval_id, cell)` (a cell record:
its id, provider, model, start/end, pass/fail, verdicts), `evaluation_ended(eval_id)`.
An observer implements any subset of these methods (missing ones are skipped).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

log = logging.getLogger("llmspace.traces")


class TraceObservers:
    """The observers of one trace writer (empty: every call is a no-op)."""

    def __init__(self) -> None:
        self._observers: list[Any] = []

    def add(self, observer: Any) -> None:
        self._observers.append(observer)

    def remove(self, observer: Any) -> None:
        if observer in self._observers:
            self._observers.remove(observer)

    def __bool__(self) -> bool:
        return bool(self._observers)

    def _each(self, method: str, *args: Any, **kwargs: Any) -> None:
        for observer in list(self._observers):
            fn = getattr(observer, method, None)
            if fn is None:
                continue
            try:
                fn(*args, **kwargs)
            except Exception:
                log.warning("a trace observer failed on %s", method, exc_info=True)

    def run_started(self, run_id: str, *, title: str, provider: str, model: str, thread_path: str | None = None) -> None:
        self._each("run_started", run_id, title=title, provider=provider, model=model, thread_path=thread_path)

    def run_ended(self, run_id: str, *, status: str, error: str | None = None) -> None:
        self._each("run_ended", run_id, status=status, error=error)

    def call_recorded(self, doc: dict[str, Any]) -> None:
        self._each("call_recorded", doc)

    def evaluation_started(self, eval_id: str, name: str) -> None:
        self._each("evaluation_started", eval_id, name)

    def cell_finished(self, eval_id: str, cell: dict[str, Any]) -> None:
        self._each("cell_finished", eval_id, cell)

    def evaluation_ended(self, eval_id: str) -> None:
        self._each("evaluation_ended", eval_id)

    @contextlib.contextmanager
    def tool_call(self, run_id: str, call_id: str, name: str) -> Iterator[None]:
        """Around one running tool call: each observer's `tool_call` context (if any) is entered."""
        with contextlib.ExitStack() as stack:
            for observer in list(self._observers):
                fn = getattr(observer, "tool_call", None)
                if fn is None:
                    continue
                try:
                    stack.enter_context(fn(run_id, call_id, name))
                except Exception:
                    log.warning("a trace observer failed on tool_call", exc_info=True)
            yield
