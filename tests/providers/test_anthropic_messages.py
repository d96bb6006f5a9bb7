"""The Anthropic Messages adapter against a loopback server speaking the documented SSE events."""

from __future__ import annotations

import json

from llmspace.cancel import CancelToken
from llmspace.core.model import ModelParams
from llmspace.providers.anthropic_messages import AnthropicMessagesAdapter, build_payload
from llmspace.providers.base import NeutralMessage, NeutralToolCall
from llmspace.providers.events import ErrorEvent, Finish, ToolCallEnd, UsageEvent
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

API = "anthropic-messages"
adapter = AnthropicMessagesAdapter()


def test_streams_thinking_text_split_tool_input_usage_and_signature(srv):
    srv.push(Turn(text="Hello there", thinking="careful now", chunk_size=3, usage=(30, 11), cache_read=7, cache_write=2,
                  tool_calls=[ToolCallSpec(id="toolu_1", name="read", arguments={"path": "c"})], signature="sig-xyz"))
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "Hello there"
    assert thinking_of(events) == "careful now"
    assert tool_calls_of(events) == [("toolu_1", "read", '{"path":"c"}')]
    assert sum(1 for e in events if type(e).__name__ == "ToolCallArgsDelta") > 1
    assert ToolCallEnd(0) in events
    assert UsageEvent(input=30, output=11, cache_read=7, cache_write=2, total=50) in events
    assert events[-1] == Finish("tool_calls", {"replay": {"thinkingSignature": "sig-xyz"}})


def test_non_streaming_message_gives_the_same_content(srv):
    srv.push(Turn(text="Whole", thinking="t", tool_calls=[ToolCallSpec(id="toolu_2", name="read", arguments={"path": "x"})]))
    events = collect(adapter, make_request(srv, API, stream=False))
    assert srv.requests[-1].body_json["stream"] is False
    assert text_of(events) == "Whole" and thinking_of(events) == "t"
    [(cid, name, args)] = tool_calls_of(events)
    assert (cid, name, json.loads(args)) == ("toolu_2", "read", {"path": "x"})
    assert events[-1].reason == "tool_calls"


def test_request_body_matches_the_documented_shape_field_by_field(srv):
    msgs = list(conversation())
    msgs[1] = NeutralMessage(role="assistant", text="Reading.", thinking="I should read", extra={"thinkingSignature": "sig-1"},
                             tool_calls=msgs[1].tool_calls)
    params = ModelParams(maxTokens=1000, temperature=0.5, reasoning="medium",
                         responseType={"type": "json_schema", "jsonSchema": {"type": "object"}}, extra={"metadata": {"user_id": "u1"}})
    collect(adapter, make_request(srv, API, messages=tuple(msgs), params=params, tools=TOOLS))
    req = srv.requests[-1]
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == SECRET and req.headers["anthropic-version"] == "2023-06-01"
    assert "Authorization" not in req.headers
    body = req.body_json
    assert body["model"] == "loopback-model"
    assert body["system"] == "You are terse."
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Look at this"},
                                     {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}}]},
        {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "I should read", "signature": "sig-1"},
            {"type": "text", "text": "Reading."},
            {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}},
            {"type": "tool_use", "id": "call_2", "name": "read", "input": {"path": "b.txt"}}]},
        {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_1", "content": "A"},
            {"type": "tool_result", "tool_use_id": "call_2", "content": "no such file", "is_error": True},
            {"type": "text", "text": "Thanks"}]},
    ]
    assert body["tools"] == [{"name": "read", "description": "Read a file", "input_schema": TOOLS[0].parameters}]
    # medium = 8192 thinking tokens; max_tokens raised above the budget; no temperature with thinking
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 8192}
    assert body["max_tokens"] > 8192 and "temperature" not in body
    assert body["output_config"] == {"format": {"type": "json_schema", "name": "response", "schema": {"type": "object"}}}
    assert body["stream"] is True
    assert body["metadata"] == {"user_id": "u1"}


def test_without_thinking_temperature_and_max_tokens_are_sent_and_unsigned_thinking_is_dropped(srv):
    msgs = (NeutralMessage(role="user", text="q"), NeutralMessage(role="assistant", text="a", thinking="unsigned"),
            NeutralMessage(role="user", text="   "), NeutralMessage(role="user", text="next"))
    body = build_payload(make_request(srv, API, messages=msgs, params=ModelParams(temperature=0.7, maxTokens=50, reasoning="off")))
    assert body["temperature"] == 0.7 and body["max_tokens"] == 50 and "thinking" not in body
    assert body["messages"] == [{"role": "user", "content": [{"type": "text", "text": "q"}]},
                                {"role": "assistant", "content": [{"type": "text", "text": "a"}]},
                                {"role": "user", "content": [{"type": "text", "text": "next"}]}]


def test_unanswered_tool_calls_still_get_a_result_and_foreign_ids_are_made_valid(srv):
    msgs = (NeutralMessage(role="user", text="q"),
            NeutralMessage(role="assistant", tool_calls=(NeutralToolCall(id="call|fc.1", name="read", arguments={}),)))
    body = build_payload(make_request(srv, API, messages=msgs))
    assert body["messages"][1]["content"] == [{"type": "tool_use", "id": "call_fc_1", "name": "read", "input": {}}]
    assert body["messages"][2] == {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "call_fc_1"}]}
    assert body["max_tokens"] == 8192


def test_an_overloaded_error_event_mid_stream_is_a_retryable_error(srv):
    body = [b'event: message_start\ndata: {"type":"message_start","message":{"usage":{"input_tokens":3,"output_tokens":1}}}\n\n',
            b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n']
    srv.push_raw(body=body, content_type="text/event-stream")
    events = collect(adapter, make_request(srv, API))
    assert isinstance(events[-1], ErrorEvent) and "Overloaded" in events[-1].message and events[-1].retryable


def test_http_error_body_in_anthropic_shape_has_status_and_message_without_the_key(srv):
    srv.push_raw(status=401, body=json.dumps({"type": "error", "error": {"type": "authentication_error",
                                                                          "message": f"invalid x-api-key {SECRET}"}}).encode())
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and err.status == 401 and "invalid x-api-key" in err.message
    assert SECRET not in err.message


def test_529_with_retry_after_is_retried_then_succeeds(srv):
    srv.push_raw(status=529, headers={"Retry-After": "0"}, body=b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}')
    srv.push_raw(status=429, headers={"retry-after": "0"}, body=b'{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}')
    srv.push(Turn(text="third"))
    events = list(stream_with_retries(adapter, make_request(srv, API), CancelToken(), max_attempts=3))
    assert text_of(events) == "third" and len(srv.requests) == 3


def test_a_connection_dropped_mid_stream_is_reported_and_keeps_partial_text(srv):
    srv.push_drop(Turn(text="abcdefgh", chunk_size=2), after_chunks=5)
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "abcd"
    assert isinstance(events[-1], ErrorEvent)


def test_stop_ends_the_stream(srv):
    ended, events = stop_while_streaming(adapter, srv, make_request(srv, API))
    assert ended and events[-1] == Finish("aborted")
    assert srv.disconnected.wait(5)


def test_stop_reasons_are_mapped(srv):
    srv.push(Turn(text="x", finish_reason="length"))
    assert collect(adapter, make_request(srv, API))[-1].reason == "length"
    srv.push(Turn(text="x", finish_reason="refusal"))
    assert collect(adapter, make_request(srv, API))[-1].reason == "content_filter"


def test_stop_while_waiting_for_the_response_headers_ends_the_call(srv):
    ended, events = stop_while_streaming(adapter, srv, make_request(srv, API), silent=True)
    assert ended and events == [Finish("aborted")]
    assert srv.disconnected.wait(5)
