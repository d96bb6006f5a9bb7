"""A call's cancellation signal, as plugin code sees it (`context.signal`).

`CallSignal.fire(reason)` runs when the app sends `cancel` (`calls.py`); plugin code
reads `aborted` and `reason`, blocks in `wait(timeout)`, or registers listeners. Listeners
run once, on a thread of their own, so a slow one holds up neither the connection nor the
call; one added after the signal fired runs at once on the caller's thread.
"""

from __future__ import annotations

import sys
import threading
import traceback
from collections.abc import Callable

from ..plugin_api import PluginCallError

Listener = Callable[[], object]


class CallSignal:
    """Thread-safe; fires at most once."""

    __slots__ = ("_event", "_listeners", "_lock", "_reason")

    def __init__(self) -> None:
        self._event: threading.Event | None = None  # made by the first `wait` (most calls never wait)
        self._lock = threading.Lock()
        self._reason: str | None = None  # set once, under the lock, when the signal fires
        self._listeners: list[Listener] = []

    @property
    def aborted(self) -> bool:
        return self._reason is not None

    @property
    def reason(self) -> str | None:
        return self._reason

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the signal fires (True) or `timeout` seconds pass (False)."""
        with self._lock:
            if self._event is None:
                self._event = threading.Event()
                if self._reason is not None:
                    self._event.set()
            event = self._event
        return event.wait(timeout)

    def add_listener(self, listener: Listener) -> None:
        if not callable(listener):
            raise TypeError("add_listener needs a callable")
        with self._lock:
            if self._reason is None:
                self._listeners.append(listener)
                return
        _run_listeners([listener])

    def remove_listener(self, listener: Listener) -> None:
        with self._lock:
            if listener in self._listeners:
                self._listeners.remove(listener)

    def raise_if_aborted(self) -> None:
        if self._reason is not None:
            raise PluginCallError(f"cancelled: {self._reason}")

    addListener = add_listener
    removeListener = remove_listener
    throwIfAborted = raise_if_aborted

    def fire(self, reason: str) -> None:
        """Abort with `reason` (the first reason wins) and run the listeners."""
        with self._lock:
            if self._reason is not None:
                return
            self._reason = reason
            if self._event is not None:
                self._event.set()
            listeners, self._listeners = self._listeners, []
        if listeners:
            threading.Thread(target=_run_listeners, args=(listeners,), name="plugin-signal-listeners", daemon=True).start()

    def __repr__(self) -> str:
        return f"<signal aborted={self.aborted} reason={self._reason!r}>"


def _run_listeners(listeners: list[Listener]) -> None:
    for listener in listeners:
        try:
            listener()
        except BaseException:
            print("A cancel listener failed:\n" + traceback.format_exc(), file=sys.stderr, flush=True)
