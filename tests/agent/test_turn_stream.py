"""One turn's stream into its builder (`agent/turn_stream.py`): the loop the run loop and an
evaluation cell share — read to the end or to a stop, the stream closed every time, a raised
error returned as text."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from llmspace.agent.fold import TurnBuilder
from llmspace.agent.turn_stream import feed_turn
from llmspace.cancel import CancelToken
from llmspace.errors import UserFacingError, describe_exception
from llmspace.providers import events as pe
from llmspace.providers.base import ModelInfo

ROOT = Path(__file__).resolve().parents[2]
MODEL = ModelInfo(id="m")


class Stream:
    """A provider stream over given events (a generator, as adapters give), that records being closed."""

    def __init__(self, events: list[pe.StreamEvent], fail: BaseException | None = None) -> None:
        self.closed = False
        self.read = 0
        self._gen = self._events(events, fail)

    def _events(self, events: list[pe.StreamEvent], fail: BaseException | None) -> Iterator[pe.StreamEvent]:
        for ev in events:
            self.read += 1
            yield ev
        if fail is not None:
            raise fail

    def __iter__(self) -> Iterator[pe.StreamEvent]:
        return self._gen

    def close(self) -> None:
        self.closed = True
        self._gen.close()


def test_a_whole_reply_is_built_and_its_run_events_handed_on():
    stream = Stream([pe.TextDelta("4"), pe.Finish("stop")])
    builder, seen = TurnBuilder(MODEL), []
    assert feed_turn(iter(stream), builder, CancelToken(), seen.extend) is None
    assert builder.text == "4" and builder.finish_reason == "stop" and seen


def test_a_cancelled_turn_stops_reading_and_closes_the_stream():
    cancel = CancelToken()
    stream = Stream([pe.TextDelta("a"), pe.TextDelta("b"), pe.TextDelta("c")])
    builder = TurnBuilder(MODEL)

    def on_events(_events: list[object]) -> None:
        cancel.cancel()

    assert feed_turn(stream, builder, cancel, on_events) is None
    assert stream.read == 1 and stream.closed and builder.text == "a"


def test_an_error_the_stream_raises_is_returned_as_its_message_and_the_stream_is_closed():
    stream = Stream([pe.TextDelta("par")], fail=UserFacingError("The connection to p dropped."))
    assert feed_turn(stream, TurnBuilder(MODEL), CancelToken()) == "The connection to p dropped."
    assert stream.closed
    other = Stream([], fail=ValueError("bad frame"))
    assert feed_turn(other, TurnBuilder(MODEL), CancelToken()) == describe_exception(ValueError("bad frame"))


def test_the_run_loop_and_an_evaluation_cell_feed_a_turn_through_the_one_helper():
    for rel in ("llmspace/agent/loop.py", "llmspace/evals/cell.py"):
        tree = ast.parse((ROOT / rel).read_text("utf-8"))
        calls = {ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
        assert "feed_turn" in calls, f"{rel} does not call feed_turn"
        assert "builder.feed" not in calls, f"{rel} feeds the builder itself"
