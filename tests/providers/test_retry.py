"""stream_with_retries: retry before the first token, honour Retry-After, stop on Stop."""

from __future__ import annotations

from llmspace.cancel import CancelToken
from llmspace.providers.events import ErrorEvent, Finish, TextDelta, UsageEvent
from llmspace.providers.retry import backoff_delay, stream_with_retries


class Scripted:
    api = "scripted"

    def __init__(self, *attempts):
        self.attempts = list(attempts)
        self.calls = 0

    def stream(self, request, cancel):
        self.calls += 1
        yield from self.attempts.pop(0)


def test_retryable_errors_before_the_first_token_are_retried_and_their_events_dropped():
    a = Scripted([UsageEvent(input=1), ErrorEvent("busy", 503, True, 0.0)], [TextDelta("hi"), Finish("stop")])
    assert list(stream_with_retries(a, None, CancelToken())) == [TextDelta("hi"), Finish("stop")]
    assert a.calls == 2


def test_errors_after_the_first_token_pass_through_without_retry():
    a = Scripted([TextDelta("par"), ErrorEvent("dropped", None, True)], [TextDelta("never")])
    assert list(stream_with_retries(a, None, CancelToken())) == [TextDelta("par"), ErrorEvent("dropped", None, True)]
    assert a.calls == 1


def test_non_retryable_errors_and_the_last_attempt_are_reported():
    a = Scripted([ErrorEvent("bad key", 401, False)])
    assert list(stream_with_retries(a, None, CancelToken())) == [ErrorEvent("bad key", 401, False)]
    b = Scripted(*[[ErrorEvent("busy", 429, True, 0.0)]] * 2)
    assert list(stream_with_retries(b, None, CancelToken(), max_attempts=2)) == [ErrorEvent("busy", 429, True, 0.0)]
    assert b.calls == 2


def test_stop_during_the_backoff_wait_ends_with_aborted():
    cancel = CancelToken()
    cancel.cancel()
    a = Scripted([ErrorEvent("busy", 429, True, 30.0)], [TextDelta("never")])
    # a cancelled token makes the error final at once (no wait, no second call)
    assert list(stream_with_retries(a, None, cancel)) == [ErrorEvent("busy", 429, True, 30.0)]
    assert a.calls == 1


def test_backoff_uses_retry_after_capped_else_grows():
    assert backoff_delay(1, ErrorEvent("x", 429, True, 2.5)) == 2.5
    assert backoff_delay(1, ErrorEvent("x", 429, True, 999.0), max_delay=30) == 30
    first, third = backoff_delay(1, ErrorEvent("x")), backoff_delay(3, ErrorEvent("x"))
    assert 0.5 <= first < 0.7 and 2.0 <= third < 2.6


def test_stop_while_waiting_to_retry_ends_the_wait_with_aborted():
    import threading

    cancel = CancelToken()
    called = threading.Event()

    class Slow:
        api = "slow"

        def stream(self, request, cancel):
            called.set()
            yield ErrorEvent("busy", 429, True, 60.0)

    out: list = []
    t = threading.Thread(target=lambda: out.extend(stream_with_retries(Slow(), None, cancel, max_attempts=5, max_delay=60)))
    t.start()
    assert called.wait(5)
    cancel.cancel()
    t.join(5)
    assert not t.is_alive() and out == [Finish("aborted")]
