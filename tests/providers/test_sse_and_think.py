"""The incremental SSE parser and the <think> tag splitter, at every chunk boundary."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from llmspace.providers.sse import iter_sse
from llmspace.providers.think import ThinkSplitter

STREAM = (b": comment\n\nevent: message_start\ndata: {\"a\": 1}\n\n"
          b"data: line one\ndata: line two\n\n"
          b"id: 7\nretry: 100\ndata:no-space\r\n\r\n"
          b"data: \xc3\xa9t\xc3\xa9\n\n"
          b"data: [DONE]")
EXPECTED = [("message_start", '{"a": 1}'), ("", "line one\nline two"), ("", "no-space"), ("", "été"), ("", "[DONE]")]


def split(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    out, last = [], 0
    for p in [*points, len(data)]:
        out.append(data[last:p])
        last = p
    return out


def test_events_are_parsed_whole():
    assert list(iter_sse([STREAM])) == EXPECTED


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), max_size=12))
def test_any_chunking_gives_the_same_events(cuts):
    assert list(iter_sse(split(STREAM, cuts))) == EXPECTED


def test_events_are_yielded_as_soon_as_their_blank_line_arrives():
    got = []

    def chunks():
        yield b"data: first\n"
        yield b"\n"
        got.append("after-first")
        yield b"data: second\n\n"

    for event in iter_sse(chunks()):
        got.append(event[1])
    assert got == ["first", "after-first", "second"]


def fold(parts: list[tuple[bool, str]]) -> tuple[str, str]:
    return "".join(t for k, t in parts if k), "".join(t for k, t in parts if not k)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=200), max_size=10))
def test_think_tags_split_anywhere_give_the_same_thinking_and_text(cuts):
    text = "<think>plan: a < b</think>\n\nAnswer <b>bold</b> done"
    s = ThinkSplitter()
    parts = []
    for piece in split(text.encode(), cuts):
        parts += s.feed(piece.decode())
    parts += s.flush()
    assert fold(parts) == ("plan: a < b", "Answer <b>bold</b> done")


def test_text_without_tags_passes_through_and_an_unclosed_think_stays_thinking():
    s = ThinkSplitter()
    assert s.feed("plain <") == [(False, "plain ")]
    assert s.feed("3") == [(False, "<3")]
    s = ThinkSplitter()
    assert fold(s.feed("<think>never closed") + s.flush()) == ("never closed", "")
