"""Retries around an adapter stream, for the run loop (`agent/`) — adapters never retry.

    for event in stream_with_retries(adapter, request, cancel, max_attempts=3):
        ...

A call that fails with a retryable `ErrorEvent` (HTTP 408/409/425/429/5xx/529, a refused or
dropped connection) BEFORE its first token (text, thinking or tool call) is sent again,
after `Retry-After` when the provider gave one (capped at `max_delay`), else after an
exponential backoff (0.5 s, 1 s, 2 s… with jitter). Events of a failed attempt that came
before the error (e.g. usage) are discarded. Once a token has been yielded, errors pass
through unchanged. Waiting uses `cancel.wait`, so Stop ends the wait at once with
`Finish("aborted")`.
"""

from __future__ import annotations

import random
from typing import Callable, Iterator

from .base import Adapter, CancelToken, ModelRequest
from .events import ErrorEvent, Finish, StreamEvent, TextDelta, ThinkingDelta, ToolCallArgsDelta, ToolCallStart

_TOKENS = (TextDelta, ThinkingDelta, ToolCallStart, ToolCallArgsDelta)


def backoff_delay(attempt: int, error: ErrorEvent, base: float = 0.5, max_delay: float = 30.0) -> float:
    """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
    if error.retry_after is not None:
        return min(max(0.0, error.retry_after), max_delay)
    return min(base * (2 ** (attempt - 1)) * (1 + random.random() * 0.25), max_delay)


def stream_with_retries(adapter: Adapter, request: ModelRequest, cancel: CancelToken, max_attempts: int = 3,
                        base_delay: float = 0.5, max_delay: float = 30.0,
                        on_retry: Callable[[int, float, ErrorEvent], None] | None = None) -> Iterator[StreamEvent]:
    """`on_retry(next_attempt, delay_seconds, error)` is called before each wait, so a front
    end can say "retrying in 2 s: 429 …" instead of looking stuck."""
    attempt = 0
    while True:
        attempt += 1
        held: list[StreamEvent] = []
        started = False
        failure: ErrorEvent | None = None
        for event in adapter.stream(request, cancel):
            if started:
                yield event
                continue
            if isinstance(event, _TOKENS):
                started = True
                yield from held
                held.clear()
                yield event
            elif isinstance(event, ErrorEvent) and event.retryable and attempt < max_attempts and not cancel.cancelled:
                failure = event
                break
            else:
                held.append(event)
        if failure is None:
            yield from held
            return
        delay = backoff_delay(attempt, failure, base_delay, max_delay)
        if on_retry is not None:
            on_retry(attempt + 1, delay, failure)
        if cancel.wait(delay):
            yield Finish("aborted")
            return
