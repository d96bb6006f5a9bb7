"""`CancelToken`: the Stop signal shared by every layer (providers, tools, agent, UI).

    cancel = CancelToken()
    cancel.on_cancel(sock.close)   # run at once if already cancelled
    cancel.cancel()                # Stop: sets the flag, runs the callbacks once
    cancel.cancelled; cancel.wait(0.5)

Low-level on purpose (only the standard library), so `tools/` and `providers/` both use it
without importing each other. Thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class CancelToken:
    """Set by Stop. Adapters check it between chunks and close the connection when set."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._callbacks: list[Callable[[], object]] = []
        self._lock = threading.Lock()

    def cancel(self) -> None:
        with self._lock:
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            try:
                cb()
            except Exception:
                pass

    @property
    def cancelled(self) -> bool:
        return self._event.is_set()

    def on_cancel(self, callback: Callable[[], object]) -> None:
        """Run `callback` when cancelled (at once if already cancelled), e.g. to close a socket."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback()

    def wait(self, timeout: float | None) -> bool:
        return self._event.wait(timeout)
