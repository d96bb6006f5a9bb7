"""The one thread boundary: a thread-safe queue drained on the Tk thread with `after()`.

Workers (run loop, MCP, probes) never touch widgets. They call `Pump.post(fn, *args)` to
have `fn(*args)` run on the Tk thread, or `Pump.post_text(key, text, sink)` for streamed
text: all text posted for one `key` between two ticks reaches `sink` as ONE string, so a
stream of 2,000 tokens/s costs one `Text.insert` per ~16 ms frame. Ordering is kept: text
queued before a callback is delivered before that callback runs.

Each tick works for at most `budget_ms`; what is left waits for the next tick, so a burst
never freezes the window. Called by `ui/main_window.py` and the editor's run controller.
"""

from __future__ import annotations

import logging
import queue
import time
from typing import Any, Callable

log = logging.getLogger("llmspace.ui.pump")

_TEXT = object()


class Pump:
    """Deliver work from any thread to the Tk thread, coalescing streamed text per tick."""

    def __init__(self, widget: Any, interval_ms: int = 16, budget_ms: float = 12.0) -> None:
        self._widget = widget
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
