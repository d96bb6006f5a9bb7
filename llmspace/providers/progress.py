"""The progress deadline of a model call (`progressTimeout` per provider in `models.json`).

    for event in ProgressWatched(adapter).stream(request, cancel): ...

A server can keep a connection busy without ever answering: SSE comments (`: keep-alive`),
bare newlines, one `data:` line that never ends, empty deltas, or response headers sent a
byte at a time. The read timeout never fires for those, so each call gets a watchdog: when
`request.endpoint.progress_timeout` seconds pass without progress (`providers.events.
is_progress`: a content, reasoning or tool-call delta, usage or the finish), it cancels the
call's own `CancelToken` — a child of the run's, so Stop still reaches the call — which
shuts the call's sockets down (also while waiting for the response headers, see
`providers/http.py`). The adapter then ends as if stopped, and the stall is reported as
`<provider>: no output for N s (progressTimeout)`: before any output it is retryable
(`providers/retry.py` tries again within `retryDeadline`); after it, the partial reply is
kept and the run ends with that error (`ErrorEvent.in_stream`, so the run is recorded).

`stream_with_retries` watches every attempt, so each caller of it (the run loop, evals) is
covered; `agent/services.py` watches the APIs it does not retry. Works for every adapter
(built-in, plugin, replay) since it only needs the cancel token; adapters themselves start
no threads. One watchdog thread per call, waiting on an `Event`; progress only stores a
timestamp.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

from ..cancel import CancelToken
from .base import Adapter, Api, ModelRequest, seconds
from .events import ErrorEvent, Finish, StreamEvent, is_progress


def stall_message(provider_id: str, timeout: float) -> str:
    return f"{provider_id}: no output for {seconds(timeout)} s (progressTimeout)."


class _Watchdog:
    """Cancels `token` once `timeout` seconds pass without `progress()`; `close()` ends it."""

    def __init__(self, timeout: float, token: CancelToken) -> None:
        self.timeout = timeout
        self.token = token
        self.last = time.monotonic()
        self.fired = False
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="llmspace-progress", daemon=True)
        self._thread.start()

    def progress(self) -> None:
        self.last = time.monotonic()

    def _watch(self) -> None:
        while True:
            left = self.last + self.timeout - time.monotonic()
            if left <= 0:
                self.fired = True
                self.token.cancel()
                return
            if self._done.wait(left):
                return

    def close(self) -> None:
        self._done.set()


class ProgressWatched:
    """An adapter whose calls end when they make no progress for the endpoint's `progress_timeout`."""

    def __init__(self, adapter: Adapter) -> None:
        self.adapter = adapter
        self.api: Api = getattr(adapter, "api", "")

    def stream(self, request: ModelRequest, cancel: CancelToken) -> Iterator[StreamEvent]:
        ep = getattr(request, "endpoint", None)
        timeout = float(getattr(ep, "progress_timeout", 0) or 0)
        if ep is None or timeout <= 0:
            yield from self.adapter.stream(request, cancel)
            return
        call = CancelToken()
        cancel.on_cancel(call.cancel)
        watch = _Watchdog(timeout, call)
        events = self.adapter.stream(request, call)
        output = False  # any progress yet in this call
        try:
            for event in events:
                if watch.fired and not cancel.cancelled and isinstance(event, (Finish, ErrorEvent)):
                    break  # the end the watchdog caused ("aborted", or a broken read): reported below
                if is_progress(event):
                    watch.progress()
                    output = True
                yield event
            if watch.fired and not cancel.cancelled:
                yield ErrorEvent(message=stall_message(ep.provider_id, timeout), retryable=not output, in_stream=output)
        finally:
            watch.close()
            close = getattr(events, "close", None)
            if close is not None:
                close()
