"""A stream in which nothing can be read is an error, never an empty successful answer; a lone
surrogate in a delta becomes U+FFFD instead of losing the whole delta."""

from __future__ import annotations

import gzip
import json

import pytest

from llmspace.providers.anthropic_messages import AnthropicMessagesAdapter
from llmspace.providers.events import ErrorEvent, Finish, TextDelta
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from llmspace.providers.openai_responses import OpenAIResponsesAdapter
from tests.providers.helpers import collect, make_request, text_of

ADAPTERS = {"openai-completions": OpenAICompletionsAdapter(), "openai-responses": OpenAIResponsesAdapter(),
            "anthropic-messages": AnthropicMessagesAdapter()}
CC = "openai-completions"


def cc_delta(text: str) -> bytes:
    return f'data: {json.dumps({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": None}]})}\n\n'.encode()


@pytest.mark.parametrize("api", list(ADAPTERS))
def test_broken_json_in_every_data_line_is_an_error(srv, api):
    srv.push_raw(body=[b'data: {"choices": [{"delta": {"content": "hi"\n\n', b"data: {oops}\n\n", b"data: [DONE]\n\n"],
                 content_type="text/event-stream")
    [err] = collect(ADAPTERS[api], make_request(srv, api))
    assert isinstance(err, ErrorEvent) and not err.retryable
    assert err.message.startswith("The stream could not be read: none of its ")
    assert "a JSON object (the first began '{\"choices\": [{\"delta\": {\"content\": \"hi\"')" in err.message


def test_an_event_stream_with_no_events_at_all_is_an_error(srv):
    srv.push_raw(body=[b": keep-alive\n\n", b"data: [DONE]\n\n"], content_type="text/event-stream")
    [err] = collect(OpenAICompletionsAdapter(), make_request(srv, CC))
    assert isinstance(err, ErrorEvent) and err.retryable
    assert err.message == "The server ended the stream without sending any model output."


def test_a_gzip_body_not_declared_as_such_is_an_error(srv):
    body = gzip.compress(cc_delta("hello") + b"data: [DONE]\n\n")
    srv.push_raw(body=[body], content_type="text/event-stream")
    [err] = collect(OpenAICompletionsAdapter(), make_request(srv, CC))
    assert isinstance(err, ErrorEvent)
    assert err.message == ("loop: the body is gzip-compressed data without a Content-Encoding: gzip header, "
                           "not an event stream.")


def test_a_gzip_body_declared_with_content_encoding_is_read(srv):
    body = gzip.compress(cc_delta("hello") + b"data: [DONE]\n\n")
    srv.push_raw(body=[body], headers={"Content-Encoding": "gzip"}, content_type="text/event-stream")
    events = collect(OpenAICompletionsAdapter(), make_request(srv, CC))
    assert text_of(events) == "hello" and events[-1] == Finish("stop")


def test_some_unreadable_events_among_readable_ones_are_skipped(srv):
    srv.push_raw(body=[b"data: {oops}\n\n", cc_delta("fine"), b"data: [DONE]\n\n"], content_type="text/event-stream")
    events = collect(OpenAICompletionsAdapter(), make_request(srv, CC))
    assert text_of(events) == "fine" and events[-1] == Finish("stop")


def test_a_lone_surrogate_in_a_completions_delta_is_kept_as_a_replacement_character(srv):
    # json.dumps writes "\ud800" as the escape a server sends when a token splits a UTF-16 pair
    srv.push_raw(body=[cc_delta("a\ud800b"), cc_delta(" and \U0001f600"), b"data: [DONE]\n\n"], content_type="text/event-stream")
    events = collect(OpenAICompletionsAdapter(), make_request(srv, CC))
    assert text_of(events) == "a\ufffdb and \U0001f600"


def test_a_lone_surrogate_in_an_anthropic_text_delta_is_kept_as_a_replacement_character(srv):
    def ev(kind: str, **data) -> bytes:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n".encode()

    srv.push_raw(body=[ev("message_start", message={"usage": {"input_tokens": 1, "output_tokens": 1}}),
                       ev("content_block_start", index=0, content_block={"type": "text", "text": ""}),
                       ev("content_block_delta", index=0, delta={"type": "text_delta", "text": "x\udc00y"}),
                       ev("content_block_stop", index=0),
                       ev("message_delta", delta={"stop_reason": "end_turn"}, usage={"output_tokens": 2}),
                       ev("message_stop")], content_type="text/event-stream")
    events = collect(AnthropicMessagesAdapter(), make_request(srv, "anthropic-messages"))
    assert [e for e in events if isinstance(e, TextDelta)] == [TextDelta("x\ufffdy")]
    assert events[-1] == Finish("stop")
