"""Retries around an adapter stream, for the run loop (`agent/`) — adapters never retry.

    for event in stream_with_retries(adapter, request, cancel, max_attempts=3):
        ...

A call that fails with a retryable `ErrorEvent` (HTTP 408/409/425/429/5xx/529, a refused or
dropped connection, a server that sent no data for the read timeout, a stream without model
output for the progress timeout) BEFORE its first token
(text, thinking or tool call) is sent again, after `Retry-After` when the provider gave one
(capped at `max_delay`), else after an exponential backoff (0.5 s, 1 s, 2 s… with jitter).
Events of a failed attempt that came before the error (e.g. usage) are discarded. Once a
token has been yielded, errors pass through unchanged. Waiting uses `cancel.wait`, so Stop
ends the wait at once with `Finish("aborted")`.

All attempts and waits together stay within the endpoint's `retry_deadline` (setting
`retryDeadline`, default 120 s) counted from the first attempt: a retry is made only when
its wait plus at least `MIN_ATTEMPT_SECONDS` still fit, and a retry's connect and read
timeouts (and progress timeout) are shortened to the time left. Giving up on the deadline reports the last error,
saying how many attempts were made.
"""

from __future__ import annotations

import dataclasses
import random
import time
from collections.abc import Callable, Iterator

from ..cancel import CancelToken
from .base import Adapter, ModelRequest, seconds
from .events import TOKENS, ErrorEvent, Finish, StreamEvent
from .progress import ProgressWatched

MIN_ATTEMPT_SECONDS = 1.0  # a retry needs at least this long (or the read timeout, if shorter)


def backoff_delay(attempt: int, error: ErrorEvent, base: float = 0.5, max_delay: float = 30.0) -> float:
    """Seconds to wait before attempt `attempt + 1` (attempt counts from 1)."""
    if error.retry_after is not None:
        return min(max(0.0, error.retry_after), max_delay)
    return min(base * (2.0 ** (attempt - 1)) * (1 + random.random() * 0.25), max_delay)


def _within(request: ModelRequest | None, left: float) -> ModelRequest | None:
    """`request` with its connect/read/progress timeouts shortened to the `left` seconds."""
    if request is None:
        return None
    ep = request.endpoint
    if ep.connect_timeout <= left and ep.read_timeout <= left and ep.progress_timeout <= left:
        return request
    ep = dataclasses.replace(ep, connect_timeout=min(ep.connect_timeout, left), read_timeout=min(ep.read_timeout, left),
                             progress_timeout=min(ep.progress_timeout, left))
    return dataclasses.replace(request, endpoint=ep)


def stream_with_retries(adapter: Adapter, request: ModelRequest, cancel: CancelToken, max_attempts: int = 3,
                        base_delay: float = 0.5, max_delay: float = 30.0,
                        on_retry: Callable[[int, float, ErrorEvent], None] | None = None,
                        deadline: float | None = None) -> Iterator[StreamEvent]:
    """`on_retry(next_attempt, delay_seconds, error)` is called before each wait, so a front
    end can say "retrying in 2 s: 429 …" instead of looking stuck. `deadline` (seconds)
    overrides the endpoint's `retry_deadline`."""
    endpoint = getattr(request, "endpoint", None)
    budget = deadline if deadline is not None else getattr(endpoint, "retry_deadline", 120.0)
    min_attempt = min(MIN_ATTEMPT_SECONDS, getattr(endpoint, "read_timeout", MIN_ATTEMPT_SECONDS))
    started_at = time.monotonic()
    attempt = 0
    this_request: ModelRequest | None = request
    watched = ProgressWatched(adapter)  # each attempt ends after progressTimeout without output
    while True:
        attempt += 1
        held: list[StreamEvent] = []
        started = False
        failure: ErrorEvent | None = None
        for event in watched.stream(this_request, cancel):  # type: ignore[arg-type]
            if started:
                yield event
                continue
            if isinstance(event, TOKENS):
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
        elapsed = time.monotonic() - started_at
        left = budget - elapsed - delay
        if left < min_attempt:
            yield from held
            tries = f"{attempt} attempts" if attempt > 1 else "1 attempt"
            sep = " " if failure.message.endswith(".") else ". "
            yield dataclasses.replace(failure, message=f"{failure.message}{sep}Gave up after {tries} in "
                                      f"{seconds(elapsed)} s (retryDeadline {seconds(budget)} s).")
            return
        if on_retry is not None:
            on_retry(attempt + 1, delay, failure)
        if cancel.wait(delay):
            yield Finish("aborted")
            return
        this_request = _within(request, budget - (time.monotonic() - started_at))
