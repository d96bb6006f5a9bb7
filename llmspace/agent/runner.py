"""The run service: `Runner.run` (blocking) and `Runner.submit` (on a bounded worker pool).

    result = app.runner.run(thread, RunOptions(react=True), on_event=cb, cancel=token)
    future = app.runner.submit(thread, opts, on_event=cb, cancel=token)
    outputs = app.runner.call_tools(thread, [call_id]).result()   # tool calls outside a run

A run works on the Thread object it is given and changes it in place (messages, tool
results, prompt snapshot, run history); callers pass a clone when the original is shared
(inputs are snapshot on the UI thread before a run is submitted) and save the result themselves. Runs of different threads run at once on the
pool; they share no mutable state. `on_event` is called on the worker thread (the UI posts
the events to its queue). Stop = `cancel.cancel()`; the run ends within about a second and
keeps the partial message. The loop itself is in `agent/loop.py`.

Built by `app.py` (`app.runner`, from the typed `app.run_services`, never the App). What a run is asked and answers
(`RunOptions`, `RunResult`) is `agent/run_types.py`.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..cancel import CancelToken
from ..core.model import Thread
from ..errors import describe_exception
from . import events as rev
from .run_services import RunServices
from .run_types import RunOptions, RunResult

if TYPE_CHECKING:
    from .tool_calls import ToolCallsFuture

log = logging.getLogger("llmspace.agent")


class Runner:
    """Runs threads; one per app."""

    def __init__(self, services: RunServices, max_workers: int | None = None) -> None:
        self.services = services
        workers = max_workers or max(2, min(8, (os.cpu_count() or 2) * 2))
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="llmspace-run")
        self._lock = threading.Lock()
        self._active: set[CancelToken] = set()
        self._closed = False

    def run(self, thread: Thread, opts: RunOptions | None = None,
            on_event: Callable[[rev.RunEvent], None] | None = None,
            cancel: CancelToken | None = None) -> RunResult:
        """Run `thread` to the end (blocking). Never raises for run failures: see `result.status`."""
        from .loop import RunSession

        opts = opts or RunOptions()
        cancel = cancel or CancelToken()

        def emit(event: rev.RunEvent) -> None:
            if on_event is None:
                return
            try:
                on_event(event)
            except Exception:  # a broken listener must not break the run
                log.exception("run event listener failed on %s", type(event).__name__)

        with self._lock:
            self._active.add(cancel)
        try:
            try:
                result = RunSession(self.services, thread, opts, emit, cancel).execute()
            except Exception as exc:  # the session reports its own failures; this is a bug guard
                result = RunResult(status="failed", error=describe_exception(exc), thread=thread)
            emit(rev.RunFinished(result))
            return result
        finally:
            with self._lock:
                self._active.discard(cancel)

    def submit(self, thread: Thread, opts: RunOptions | None = None,
               on_event: Callable[[rev.RunEvent], None] | None = None,
               cancel: CancelToken | None = None) -> Future[RunResult]:
        """Run on the worker pool; the future's result is the `RunResult`."""
        if self._closed:
            raise RuntimeError("the runner is closed")
        return self._pool.submit(self.run, thread, opts, on_event, cancel)

    def call_tools(self, thread: Thread, call_ids: Sequence[str], *, variables: dict[str, str] | None = None,
                   timeout: float | None = None, elicit: Any = None) -> ToolCallsFuture:
        """Run these tool calls of `thread` (a snapshot the caller owns) on the pool, outside a
        run ("Call this tool", "Run the tools anyway"); see `agent/tool_calls.py`. Raises
        UserFacingError at once for an unknown call id; `future.cancel()` stops the calls.
        `elicit` answers MCP servers' requests for input (None declines them)."""
        from .tool_calls import ToolCallsFuture, find_calls, run_calls

        if self._closed:
            raise RuntimeError("the runner is closed")
        calls = find_calls(thread, call_ids)
        future = ToolCallsFuture()

        def work() -> None:
            if not future.set_running_or_notify_cancel():
                return
            with self._lock:
                self._active.add(future.token)
            try:
                future.set_result(run_calls(self.services, thread, calls, future.token, variables, timeout, elicit))
            except BaseException as exc:  # the router turns tool failures into outputs; this is a bug guard
                future.set_exception(exc)
            finally:
                with self._lock:
                    self._active.discard(future.token)

        self._pool.submit(work)
        return future

    def close(self) -> None:
        """Stop every active run and end the pool (waiting for workers is not needed)."""
        self._closed = True
        with self._lock:
            active = list(self._active)
        for token in active:
            token.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)
