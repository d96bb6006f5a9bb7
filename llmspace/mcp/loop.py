"""One asyncio event loop in a daemon thread, behind a synchronous facade.

`LoopThread.submit(coro)` returns a `concurrent.futures.Future` usable from any thread
(Tk, workers, CLI). `stop()` runs a final coroutine (closing connections), then ends the
loop and joins the thread. Used only by `llmspace.mcp.hub`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """A running asyncio loop owned by one thread named `mcp-loop`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, name="mcp-loop", daemon=True)
        self._thread.start()
        self._started.wait(5)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._started.set)
        try:
            self.loop.run_forever()
        finally:
            try:
                pending = [t for t in asyncio.all_tasks(self.loop) if not t.done()]
                for t in pending:
                    t.cancel()
                if pending:
                    self.loop.run_until_complete(asyncio.wait(pending, timeout=5))
                self.loop.run_until_complete(self.loop.shutdown_asyncgens())
            finally:
                self.loop.close()

    @property
    def alive(self) -> bool:
        return self._thread.is_alive() and not self.loop.is_closed()

    def in_loop_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        # The task runs in a copy of the caller's contextvars (asyncio's call_soon_threadsafe copies
        # them), so a run's tool span is current in it and the `mcp` package's spans nest under it.
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def stop(self, final: Coroutine[Any, Any, Any] | None = None, timeout: float = 15.0) -> None:
        """Run `final` (bounded by `timeout`), stop the loop and join the thread."""
        if not self.alive:
            if final is not None:
                final.close()
            return
        if final is not None:
            try:
                self.submit(final).result(timeout)
            except (concurrent.futures.TimeoutError, Exception):
                pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
