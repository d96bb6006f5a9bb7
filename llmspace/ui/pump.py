"""The one thread boundary: a thread-safe queue drained on the Tk thread with `after()`.

Workers (run loop, MCP, probes) never touch widgets. They call `Pump.post(fn, *args)` to
have `fn(*args)` run on the Tk thread, or `Pump.post_text(key, text, sink)` for streamed
text: all text posted for one `key` between two ticks reaches `sink` as ONE string, so a
stream of 2,000 tokens/s costs one `Text.insert` per ~16 ms frame. Ordering is kept: text
queued before a callback is delivered before that callback runs.

Each tick works for at most `budget_ms`; what is left waits for the next tick, so a burst
never freezes the window.

`Pump.run_in_worker(fn, on_done)` is the one way UI code does work off the Tk thread: `fn()`
runs on the App's worker pool (`App.workers`, a `ThreadPoolExecutor` closed with the App)
and `on_done(future)` runs on the Tk thread once it finished; `future.result()` gives the
value or raises what `fn` raised. No other module under `ui/` creates threads.
"""

from __future__ import annotations

import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

log = logging.getLogger("llmspace.ui.pump")

_TEXT = object()
T = TypeVar("T")


class Pump:
    """Deliver work from any thread to the Tk thread, coalescing streamed text per tick."""

    def __init__(self, widget: Any, interval_ms: int = 16, budget_ms: float = 12.0, *,
                 executor: Executor | None = None) -> None:
        self._widget = widget
        self._executor = executor
        self._q: queue.SimpleQueue[tuple[Any, ...]] = queue.SimpleQueue()
        self.interval_ms = interval_ms
        self.budget_s = budget_ms / 1000.0
        self._job: str | None = None
        self._running = False
        self.ticks = 0
        self.text_flushes = 0

    # -- any thread ---------------------------------------------------------------------
    def post(self, fn: Callable[..., Any], *args: Any) -> None:
        """Run `fn(*args)` on the Tk thread at the next tick."""
        self._q.put((fn, args))

    def post_text(self, key: Any, text: str, sink: Callable[[str], Any]) -> None:
        """Append `text` for `key`; `sink(joined_text)` runs once per tick per key."""
        if text:
            self._q.put((_TEXT, key, text, sink))

    def run_in_worker(self, fn: Callable[[], T], on_done: Callable[[Future[T]], Any] | None = None,
                      *, name: str | None = None) -> Future[T]:
        """Run `fn()` on the worker pool; then `on_done(future)` on the Tk thread (through this
        pump), where `future.result()` returns `fn`'s value or raises its exception. `name`
        labels the worker thread while it runs `fn` (seen in logs and thread dumps)."""
        if self._executor is None:
            raise RuntimeError("this Pump has no worker pool (pass executor=App.workers)")

        def call() -> T:
            if name is None:
                return fn()
            me = threading.current_thread()
            before = me.name
            me.name = f"{before}:{name}"
            try:
                return fn()
            finally:
                me.name = before

        future = self._executor.submit(call)
        if on_done is not None:
            future.add_done_callback(lambda f: self.post(on_done, f))
        return future

    # -- Tk thread ----------------------------------------------------------------------
    def start(self) -> None:
        if not self._running:
            self._running = True
            self._job = self._widget.after(self.interval_ms, self._tick)

    def stop(self) -> None:
        self._running = False
        if self._job is not None:
            try:
                self._widget.after_cancel(self._job)
            except Exception:
                pass
            self._job = None

    def drain(self) -> int:
        """Process queued work for at most one budget; returns how many items ran."""
        deadline = time.perf_counter() + self.budget_s
        pending: dict[Any, tuple[Callable[[str], Any], list[str]]] = {}
        done = 0
        while True:
            try:
                item = self._q.get_nowait()
            except queue.Empty:
                break
            done += 1
            if item[0] is _TEXT:
                _, key, text, sink = item
                slot = pending.get(key)
                if slot is None:
                    pending[key] = (sink, [text])
                else:
                    slot[1].append(text)
                continue
            self._flush(pending)
            fn, args = item
            try:
                fn(*args)
            except Exception:
                log.exception("error in a UI callback")
            if time.perf_counter() > deadline:
                break
        self._flush(pending)
        return done

    def _flush(self, pending: dict[Any, tuple[Callable[[str], Any], list[str]]]) -> None:
        for sink, parts in pending.values():
            self.text_flushes += 1
            try:
                sink("".join(parts))
            except Exception:
                log.exception("error while showing streamed text")
        pending.clear()

    def _tick(self) -> None:
        self._job = None
        if not self._running:
            return
        self.ticks += 1
        try:
            self.drain()
        finally:
            if self._running:
                try:
                    self._job = self._widget.after(self.interval_ms, self._tick)
                except Exception:  # the window is gone
                    self._running = False
