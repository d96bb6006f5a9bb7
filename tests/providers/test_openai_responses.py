"""The OpenAI Responses adapter against a loopback server speaking the documented event stream."""

from __future__ import annotations

import json

from llmspace.cancel import CancelToken
from llmspace.core.model import ModelParams
from llmspace.providers.base import NeutralMessage
from llmspace.providers.events import ErrorEvent, Finish, ToolCallEnd, UsageEvent
from llmspace.providers.openai_responses import OpenAIResponsesAdapter, build_payload
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

API = "openai-responses"
adapter = OpenAIResponsesAdapter()


def test_streams_reasoning_summary_text_split_tool_arguments_and_usage(srv):
    srv.push(Turn(text="Hello there", thinking="summary of thought", chunk_size=3, usage=(20, 9), cache_read=5,
                  reasoning_tokens=4, tool_calls=[ToolCallSpec(id="call_7", name="read", arguments={"path": "b"})]))
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "Hello there"
    assert thinking_of(events) == "summary of thought"
    assert tool_calls_of(events) == [("call_7", "read", '{"path":"b"}')]
    assert sum(1 for e in events if type(e).__name__ == "ToolCallArgsDelta") > 1
    assert ToolCallEnd(0) in events
    assert UsageEvent(input=15, output=9, cache_read=5, cache_write=0, reasoning=4, total=29) in events
    assert events[-1] == Finish("tool_calls")


def test_non_streaming_response_object_gives_the_same_content(srv):
    srv.push(Turn(text="Whole", thinking="brief", tool_calls=[ToolCallSpec(id="c1", name="read", arguments={"path": "x"})]))
    events = collect(adapter, make_request(srv, API, stream=False))
    assert srv.requests[-1].body_json["stream"] is False
    assert text_of(events) == "Whole" and thinking_of(events) == "brief"
    assert tool_calls_of(events) == [("c1", "read", '{"path":"x"}')]
    assert events[-1] == Finish("tool_calls")


def test_request_body_matches_the_documented_shape_field_by_field(srv):
    params = ModelParams(maxTokens=300, temperature=0.2, reasoning="low",
                         responseType={"type": "json_schema", "jsonSchema": {"type": "object"}}, extra={"store": True, "top_p": 0.1})
    collect(adapter, make_request(srv, API, messages=conversation(), params=params, tools=TOOLS))
    req = srv.requests[-1]
    assert req.path == "/v1/responses"
    assert req.headers["Authorization"] == f"Bearer {SECRET}"
    body = req.body_json
    assert body["model"] == "loopback-model"
    assert body["instructions"] == "You are terse."
    assert body["input"] == [
        {"role": "user", "content": [{"type": "input_text", "text": "Look at this"},
                                     {"type": "input_image", "image_url": "data:image/png;base64,iVBORw0KGgo=", "detail": "auto"}]},
        {"role": "assistant", "content": "Reading."},
        {"type": "function_call", "call_id": "call_1", "name": "read", "arguments": '{"path": "a.txt"}'},
        {"type": "function_call", "call_id": "call_2", "name": "read", "arguments": '{"path": "b.txt"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "A"},
        {"type": "function_call_output", "call_id": "call_2", "output": "no such file"},
        {"role": "user", "content": [{"type": "input_text", "text": "Thanks"}]},
    ]
    assert body["tools"] == [{"type": "function", "name": "read", "description": "Read a file",
                              "parameters": TOOLS[0].parameters, "strict": False}]
    assert body["max_output_tokens"] == 300 and body["temperature"] == 0.2
    assert body["reasoning"] == {"effort": "low", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["text"] == {"format": {"type": "json_schema", "name": "response", "schema": {"type": "object"}, "strict": True}}
    assert body["stream"] is True
    assert body["store"] is True and body["top_p"] == 0.1  # extra merged last


def test_reasoning_off_sends_no_reasoning_and_json_object_maps_to_text_format(srv):
    body = build_payload(make_request(srv, API, params=ModelParams(reasoning="off", responseType={"type": "json_object"})))
    assert "reasoning" not in body and "include" not in body
    assert body["text"] == {"format": {"type": "json_object"}}


def test_encrypted_reasoning_items_come_back_for_replay_and_are_sent_again(srv):
    item = {"id": "rs_1", "type": "reasoning", "summary": [], "encrypted_content": "gAAAA-opaque"}
    stream = [
        f"event: response.output_item.done\ndata: {json.dumps({'type': 'response.output_item.done', 'output_index': 0, 'item': item})}\n\n".encode(),
        f"event: response.completed\ndata: {json.dumps({'type': 'response.completed', 'response': {'status': 'completed', 'output': [item]}})}\n\n".encode(),
    ]
    srv.push_raw(body=stream, content_type="text/event-stream")
    events = collect(adapter, make_request(srv, API))
    assert events[-1] == Finish("stop", {"replay": {"reasoningItems": [item]}})
    follow_up = (NeutralMessage(role="user", text="q"), NeutralMessage(role="assistant", text="a", extra={"reasoningItems": [item]}),
                 NeutralMessage(role="user", text="next"))
    body = build_payload(make_request(srv, API, messages=follow_up))
    assert body["input"][1] == item and body["input"][2] == {"role": "assistant", "content": "a"}


def test_response_failed_and_error_events_are_errors(srv):
    failed = {"type": "response.failed", "response": {"status": "failed", "error": {"code": "server_error", "message": "The model broke"}}}
    srv.push_raw(body=[f"event: response.failed\ndata: {json.dumps(failed)}\n\n".encode()], content_type="text/event-stream")
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and "The model broke" in err.message
    srv.push_raw(body=[b'event: error\ndata: {"type":"error","code":"rate_limit_exceeded","message":"Too many"}\n\n'],
                 content_type="text/event-stream")
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and "Too many" in err.message


def test_incomplete_response_finishes_with_length(srv):
    srv.push(Turn(text="cut", finish_reason="length"))
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "cut" and events[-1] == Finish("length")


def test_http_error_has_status_and_message_without_the_key(srv):
    srv.push_raw(status=400, body=json.dumps({"error": {"message": f"Invalid value for key {SECRET}", "type": "invalid_request_error",
                                                        "param": "input", "code": None}}).encode())
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and err.status == 400 and "Invalid value" in err.message and SECRET not in err.message


def test_429_with_retry_after_then_success(srv):
    srv.push_raw(status=429, headers={"Retry-After": "0"}, body=b'{"error":{"message":"Rate limit reached"}}')
    srv.push(Turn(text="done"))
    events = list(stream_with_retries(adapter, make_request(srv, API), CancelToken()))
    assert text_of(events) == "done" and len(srv.requests) == 2


def test_a_connection_dropped_mid_stream_is_reported(srv):
    srv.push_drop(Turn(text="abcdefgh", chunk_size=2), after_chunks=6)
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "abcd"
    assert isinstance(events[-1], ErrorEvent) and events[-1].retryable


def test_stop_ends_the_stream(srv):
    ended, events = stop_while_streaming(adapter, srv, make_request(srv, API))
    assert ended and events[-1] == Finish("aborted")
    assert srv.disconnected.wait(5)


def test_stop_while_waiting_for_the_response_headers_ends_the_call(srv):
    ended, events = stop_while_streaming(adapter, srv, make_request(srv, API), silent=True)
    assert ended and events == [Finish("aborted")]
    assert srv.disconnected.wait(5)
