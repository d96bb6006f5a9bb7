"""The Chat Completions adapter against a loopback server speaking the documented wire format."""

from __future__ import annotations

import socket
from dataclasses import replace

from llmspace.cancel import CancelToken
from llmspace.core.model import ModelParams
from llmspace.providers.events import ErrorEvent, Finish, TextDelta, ToolCallEnd, ToolCallStart, UsageEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter, build_payload
from llmspace.providers.retry import stream_with_retries
from tests.providers.helpers import (
    SECRET,
    TOOLS,
    collect,
    conversation,
    make_request,
    stop_while_streaming,
    text_of,
    thinking_of,
    tool_calls_of,
)
from tests.support.llm_server import ToolCallSpec, Turn

API = "openai-completions"
adapter = OpenAICompletionsAdapter()


def test_streams_text_thinking_split_tool_arguments_usage_and_finish(srv):
    srv.push(Turn(text="Hello there", thinking="let me think", chunk_size=3, cache_read=4, reasoning_tokens=2,
                  tool_calls=[ToolCallSpec(id="call_9", name="read", arguments={"path": "notes/a.txt"})], usage=(12, 7)))
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "Hello there"
    assert thinking_of(events) == "let me think"
    assert tool_calls_of(events) == [("call_9", "read", '{"path":"notes/a.txt"}')]
    assert sum(1 for e in events if type(e).__name__ == "ToolCallArgsDelta") > 1  # arguments arrived split
    assert ToolCallEnd(0) in events
    usage = [e for e in events if isinstance(e, UsageEvent)]
    assert usage == [UsageEvent(input=8, output=7, cache_read=4, cache_write=0, reasoning=2, total=19)]
    assert events[-1] == Finish("tool_calls")


def test_non_streaming_answer_gives_the_same_events_in_one_piece(srv):
    srv.push(Turn(text="Whole", thinking="quietly", tool_calls=[ToolCallSpec(id="c1", name="read", arguments={"path": "x"})]))
    events = collect(adapter, make_request(srv, API, stream=False))
    assert srv.requests[-1].body_json["stream"] is False
    assert "stream_options" not in srv.requests[-1].body_json
    assert text_of(events) == "Whole" and thinking_of(events) == "quietly"
    assert tool_calls_of(events) == [("c1", "read", '{"path":"x"}')]
    assert any(isinstance(e, UsageEvent) and e.input == 10 and e.output == 5 for e in events)
    assert events[-1] == Finish("tool_calls")


def test_request_body_matches_the_documented_shape_field_by_field(srv):
    params = ModelParams(maxTokens=256, temperature=0.3, reasoning="xhigh",
                         responseType={"type": "json_schema", "jsonSchema": {"type": "object"}},
                         extra={"top_p": 0.5, "temperature": 0.9})
    collect(adapter, make_request(srv, API, messages=conversation(), params=params, tools=TOOLS))
    req = srv.requests[-1]
    assert req.path == "/v1/chat/completions"
    assert req.headers["Authorization"] == f"Bearer {SECRET}"
    body = req.body_json
    assert body["model"] == "loopback-model"
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert body["messages"] == [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": [{"type": "text", "text": "Look at this"},
                                     {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]},
        {"role": "assistant", "content": "Reading.", "tool_calls": [
            {"id": "call_1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a.txt"}'}},
            {"id": "call_2", "type": "function", "function": {"name": "read", "arguments": '{"path": "b.txt"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "A"},
        {"role": "tool", "tool_call_id": "call_2", "content": "no such file"},
        {"role": "user", "content": "Thanks"},
    ]
    assert body["tools"] == [{"type": "function", "function": {"name": "read", "description": "Read a file",
                                                               "parameters": TOOLS[0].parameters}}]
    assert body["max_tokens"] == 256
    assert body["reasoning_effort"] == "high"  # xhigh is clamped
    assert body["response_format"] == {"type": "json_schema", "json_schema": {"name": "response", "schema": {"type": "object"}, "strict": True}}
    assert body["top_p"] == 0.5 and body["temperature"] == 0.9  # extra merged last


def test_reasoning_off_or_a_non_reasoning_model_sends_no_reasoning_effort(srv):
    off = build_payload(make_request(srv, API, params=ModelParams(reasoning="off")))
    plain = build_payload(make_request(srv, API, params=ModelParams(reasoning="high"), reasoning=False))
    assert "reasoning_effort" not in off and "reasoning_effort" not in plain


def test_json_object_response_type_and_openai_max_completion_tokens(srv):
    req = make_request(srv, API, params=ModelParams(maxTokens=9, responseType={"type": "json_object"}))
    req = replace(req, endpoint=replace(req.endpoint, base_url="https://api.openai.com/v1"))
    body = build_payload(req)
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_completion_tokens"] == 9 and "max_tokens" not in body


def test_a_server_that_rejects_stream_options_is_asked_again_without_them(srv):
    srv.reject_stream_options = True
    srv.push(Turn(text="fine"))
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "fine"
    assert "stream_options" in srv.requests[0].body_json and "stream_options" not in srv.requests[1].body_json
    assert not any(isinstance(e, ErrorEvent) for e in events)


def test_http_error_carries_status_and_the_providers_own_message_without_the_key(srv):
    srv.push_raw(status=401, body=b'{"error":{"message":"Incorrect API key provided: ' + SECRET.encode() + b'","type":"invalid_request_error"}}')
    events = collect(adapter, make_request(srv, API))
    assert len(events) == 1 and isinstance(events[0], ErrorEvent)
    err = events[0]
    assert err.status == 401 and "Incorrect API key provided" in err.message
    assert SECRET not in err.message and not err.retryable


def test_plain_text_error_body_is_shown_as_it_is(srv):
    srv.push_raw(status=503, body=b"upstream model is loading", content_type="text/plain")
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and err.status == 503 and "upstream model is loading" in err.message and err.retryable


def test_429_with_retry_after_is_retried_before_the_first_token_then_succeeds(srv):
    srv.push_raw(status=429, headers={"Retry-After": "0"}, body=b'{"error":{"message":"slow down"}}')
    srv.push(Turn(text="second time lucky"))
    events = list(stream_with_retries(adapter, make_request(srv, API), CancelToken(), max_attempts=3))
    assert text_of(events) == "second time lucky"
    assert not any(isinstance(e, ErrorEvent) for e in events)
    assert len(srv.requests) == 2


def test_a_connection_dropped_mid_stream_keeps_the_partial_text_and_reports_an_error(srv):
    srv.push_drop(Turn(text="abcdefgh", chunk_size=2), after_chunks=3)
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "abcd"
    assert isinstance(events[-1], ErrorEvent) and "dropped" in events[-1].message


def test_a_refused_connection_is_a_retryable_error_naming_the_address(srv):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    req = make_request(srv, API)
    req = replace(req, endpoint=replace(req.endpoint, base_url=f"http://127.0.0.1:{port}/v1"))
    [err] = collect(adapter, req)
    assert isinstance(err, ErrorEvent) and err.retryable and f"127.0.0.1:{port}" in err.message


def test_stop_ends_the_stream_and_closes_the_connection(srv):
    ended, events = stop_while_streaming(adapter, srv, make_request(srv, API))
    assert ended
    assert events[-1] == Finish("aborted")
    assert srv.disconnected.wait(5)


def test_several_streams_at_once_do_not_mix(srv):
    import threading

    for _i in range(4):
        srv.push(Turn(text="same text for all", chunk_size=1))
    results: list[str] = []
    lock = threading.Lock()

    def run() -> None:
        t = text_of(collect(adapter, make_request(srv, API)))
        with lock:
            results.append(t)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == ["same text for all"] * 4


def test_tool_call_without_arguments_still_starts_and_ends():
    from llmspace.providers.openai_completions import parse_stream

    chunks = [("", '{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"now"}}]}}]}'),
              ("", '{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}'), ("", "[DONE]")]
    events = list(parse_stream(chunks, CancelToken()))
    assert events == [ToolCallStart(0, "x", "now"), ToolCallEnd(0), Finish("tool_calls")]
    assert not any(isinstance(e, TextDelta) for e in events)


def test_stop_while_waiting_for_the_response_headers_ends_the_call(srv):
    ended, events = stop_while_streaming(adapter, srv, make_request(srv, API), silent=True)
    assert ended and events == [Finish("aborted")]
    assert srv.disconnected.wait(5)
