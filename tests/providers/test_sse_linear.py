"""The SSE reader is linear in the stream's size, keeps line ends split across chunks, and
caps one line/event at 32 MB with a clear error instead of eating memory."""

from __future__ import annotations

import json
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llmspace.providers.events import ErrorEvent, Finish
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.sse import MAX_EVENT_BYTES, SSEEventTooLarge, iter_sse
from tests.providers.helpers import collect, make_request, text_of

MB = 1024 * 1024


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


def test_a_20_mb_line_in_4_kb_chunks_is_parsed_in_linear_time():
    line = b"data: " + b"x" * (20 * MB) + b"\n\n"
    started = time.process_time()
    events = list(iter_sse(pieces(line, 4096)))
    cpu = time.process_time() - started
    assert events == [("", "x" * (20 * MB))]
    assert cpu < 2.0, f"{cpu:.2f} CPU-s (the quadratic reader took about 15 s)"


def test_a_20_mb_delta_streamed_in_4_kb_http_chunks_arrives_whole(srv):
    text = "y" * (20 * MB)
    body = f'data: {json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})}\n\ndata: [DONE]\n\n'.encode()
    srv.push_raw(body=pieces(body, 4096), content_type="text/event-stream")
    started = time.process_time()
    events = collect(OpenAICompletionsAdapter(), make_request(srv, "openai-completions"))
    cpu = time.process_time() - started  # the loopback server's threads included
    assert text_of(events) == text and events[-1] == Finish("stop")
    assert cpu < 6.0, f"{cpu:.2f} CPU-s"


CR_STREAM = b"data: a\rdata: b\r\rdata: c\r\n\r\ndata: d\n\r\nevent: e\ndata: f\r\r"
CR_EXPECTED = [("", "a\nb"), ("", "c"), ("", "d"), ("e", "f")]


def test_cr_lf_and_crlf_line_ends_are_the_same_even_when_a_crlf_is_split():
    assert list(iter_sse([CR_STREAM])) == CR_EXPECTED
    assert list(iter_sse([b"data: a\r", b"\n", b"\r", b"\ndata: b\r", b"\r"])) == [("", "a"), ("", "b")]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(CR_STREAM)), max_size=12))
def test_any_chunking_of_mixed_line_ends_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    parts, last = [], 0
    for p in [*points, len(CR_STREAM)]:
        parts.append(CR_STREAM[last:p])
        last = p
    assert list(iter_sse(parts)) == CR_EXPECTED


def test_a_leading_byte_order_mark_is_ignored():
    assert list(iter_sse([b"\xef\xbb\xbfdata: x\n\n"])) == [("", "x")]


def test_a_line_or_an_event_past_the_cap_raises_a_clear_error():
    with pytest.raises(SSEEventTooLarge, match="larger than"):
        list(iter_sse(pieces(b"data: " + b"z" * 5000, 100), max_event_bytes=4096))
    with pytest.raises(SSEEventTooLarge):
        list(iter_sse([b"data: " + b"z" * 1000 + b"\n"] * 10, max_event_bytes=4096))  # many data lines, one event
    assert len(list(iter_sse([b"data: " + b"z" * 1000 + b"\n\n"] * 10, max_event_bytes=4096))) == 10


def test_a_stream_with_a_line_past_32_mb_ends_with_an_error_not_an_empty_answer(srv):
    line = b"data: " + b"q" * (MAX_EVENT_BYTES + MB)
    srv.push_raw(body=[*pieces(line, 256 * 1024), b"\n\ndata: [DONE]\n\n"], content_type="text/event-stream")
    events = collect(OpenAICompletionsAdapter(), make_request(srv, "openai-completions"))
    [err] = events
    assert isinstance(err, ErrorEvent) and not err.retryable
    assert err.message == "loop: a single stream event is larger than 32 MB, so the stream was stopped."
