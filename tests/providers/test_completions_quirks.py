"""Local-endpoint quirks, each replayed as a recorded stream from the loopback server."""

from __future__ import annotations

import json

from llmspace.providers.events import ErrorEvent, Finish, ThinkingDelta, UsageEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from tests.providers.helpers import collect, make_request, text_of, thinking_of, tool_calls_of

API = "openai-completions"
adapter = OpenAICompletionsAdapter()


def sse(*chunks: dict | str, done: bool = True, crlf: bool = False) -> list[bytes]:
    nl = "\r\n" if crlf else "\n"
    out = [f"data: {c if isinstance(c, str) else json.dumps(c)}{nl}{nl}".encode() for c in chunks]
    if done:
        out.append(f"data: [DONE]{nl}{nl}".encode())
    return out


def delta(d: dict, finish: str | None = None, **extra) -> dict:
    return {"id": "x", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": d, "finish_reason": finish}], **extra}


def run(srv, body) -> list:
    srv.push_raw(body=body, content_type="text/event-stream")
    return collect(adapter, make_request(srv, API))


def test_reasoning_under_reasoning_content_reasoning_or_thinking_is_thinking(srv):
    for key in ("reasoning_content", "reasoning", "thinking"):
        events = run(srv, sse(delta({key: "pondering "}), delta({key: "more"}), delta({"content": "answer"}, "stop")))
        assert thinking_of(events) == "pondering more", key
        assert text_of(events) == "answer"


def test_think_tags_split_across_chunks_become_thinking(srv):
    events = run(srv, sse(delta({"content": "<thi"}), delta({"content": "nk>step one"}), delta({"content": ", two</th"}),
                          delta({"content": "ink>\n\nThe answer"}), delta({"content": " is 4 < 5"}, "stop")))
    assert thinking_of(events) == "step one, two"
    assert text_of(events) == "The answer is 4 < 5"


def test_tool_arguments_split_with_the_name_repeated_and_no_id(srv):
    events = run(srv, sse(
        delta({"tool_calls": [{"index": 0, "type": "function", "function": {"name": "read", "arguments": '{"pa'}}]}),
        delta({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": 'th": "a'}}]}),
        delta({"tool_calls": [{"index": 0, "function": {"name": "read", "arguments": '.txt"}'}}]}),
        delta({}, "tool_calls")))
    [(cid, name, args)] = tool_calls_of(events)
    assert name == "read" and json.loads(args) == {"path": "a.txt"}
    assert cid.startswith("call_") and len(cid) > 8  # generated
    assert events[-1] == Finish("tool_calls")


def test_whole_tool_calls_without_index_are_told_apart_by_id(srv):
    events = run(srv, sse(
        delta({"tool_calls": [{"id": "a", "function": {"name": "read", "arguments": {"path": "1"}}}]}),
        delta({"tool_calls": [{"id": "b", "function": {"name": "read", "arguments": '{"path": "2"}'}}]}),
        delta({}, "stop")))
    calls = tool_calls_of(events)
    assert [(c[0], c[1], json.loads(c[2])) for c in calls] == [("a", "read", {"path": "1"}), ("b", "read", {"path": "2"})]
    assert events[-1] == Finish("tool_calls")  # "stop" with tool calls means tool calls


def test_unusual_finish_reasons_are_mapped_or_passed_through(srv):
    assert run(srv, sse(delta({"content": "x"}, "eos_token")))[-1] == Finish("stop")
    assert run(srv, sse(delta({"content": "x"}, "max_tokens")))[-1] == Finish("length")
    assert run(srv, sse(delta({"content": "x"}, "abort_by_moderation")))[-1] == Finish("abort_by_moderation")


def test_no_usage_at_all_is_fine(srv):
    events = run(srv, sse(delta({"content": "x"}, "stop")))
    assert not any(isinstance(e, UsageEvent) for e in events) and events[-1] == Finish("stop")


def test_usage_on_the_finish_chunk_is_read(srv):
    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    events = run(srv, sse(delta({"content": "x"}, "stop", usage=usage)))
    assert UsageEvent(input=3, output=2, total=5) in events


def test_a_stream_without_done_still_finishes(srv):
    events = run(srv, sse(delta({"content": "bye"}), delta({}, "stop"), done=False))
    assert text_of(events) == "bye" and events[-1] == Finish("stop")


def test_crlf_line_ends_and_comments_are_understood(srv):
    body = [b": keep-alive\r\n\r\n", *sse(delta({"content": "crlf"}, "stop"), crlf=True)]
    assert text_of(run(srv, body)) == "crlf"


def test_an_error_object_sent_as_stream_data_is_an_error(srv):
    events = run(srv, sse(delta({"content": "par"}), {"error": {"message": "model crashed", "code": 500}}))
    assert text_of(events) == "par"
    assert isinstance(events[-1], ErrorEvent) and "model crashed" in events[-1].message


def test_a_json_error_body_with_status_200_instead_of_a_stream_is_an_error(srv):
    srv.push_raw(status=200, body=b'{"error": "model \'llama\' not found, try pulling it first"}', content_type="application/json")
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and "not found, try pulling it first" in err.message


def test_a_plain_text_error_body_is_an_error(srv):
    srv.push_raw(status=500, body=b"Internal Server Error", content_type="text/plain")
    [err] = collect(adapter, make_request(srv, API))
    assert isinstance(err, ErrorEvent) and err.status == 500 and "Internal Server Error" in err.message


def test_a_whole_json_answer_where_a_stream_was_asked_for_is_used(srv):
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "<think>hm</think>whole"}, "finish_reason": "stop"}]}
    srv.push_raw(body=json.dumps(body).encode(), content_type="application/json")
    events = collect(adapter, make_request(srv, API))
    assert thinking_of(events) == "hm" and text_of(events) == "whole" and events[-1] == Finish("stop")


def test_an_event_stream_with_the_wrong_content_type_is_still_parsed(srv):
    srv.push_raw(body=b"".join(sse(delta({"content": "mislabelled"}, "stop"))), content_type="application/json")
    assert text_of(collect(adapter, make_request(srv, API))) == "mislabelled"


def test_thinking_is_never_mixed_into_text(srv):
    events = run(srv, sse(delta({"reasoning_content": "a"}), delta({"content": "b"}, "stop")))
    assert [type(e).__name__ for e in events][:2] == ["ThinkingDelta", "TextDelta"]
    assert isinstance(events[0], ThinkingDelta)


def test_a_stream_without_chunked_framing_is_read_as_it_arrives(srv):
    import threading

    from llmspace.cancel import CancelToken

    srv.push_raw(body=sse(delta({"content": "first"}), done=False), content_type="text/event-stream", chunked=False, hang=True)
    cancel = CancelToken()
    got = threading.Event()
    events: list = []

    def run() -> None:
        for e in adapter.stream(make_request(srv, API), cancel):
            events.append(e)
            got.set()

    t = threading.Thread(target=run, daemon=True)
    t.start()
    assert got.wait(5)  # the first event came while the server still holds the connection open
    assert text_of(events) == "first"
    cancel.cancel()
    t.join(5)
    assert not t.is_alive() and events[-1] == Finish("aborted")


def test_an_http_1_0_style_stream_ended_by_closing_is_complete(srv):
    srv.push_raw(body=sse(delta({"content": "a"}), delta({"content": "b"}, "stop")), content_type="text/event-stream", chunked=False)
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "ab" and events[-1] == Finish("stop")


def test_calls_that_all_say_index_0_but_carry_their_own_ids_stay_apart(srv):
    events = run(srv, sse(
        delta({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "read", "arguments": '{"path": "1"}'}}]}),
        delta({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "grep", "arguments": '{"q": "x"}'}}]}),
        delta({}, "tool_calls")))
    assert [(c[0], c[1]) for c in tool_calls_of(events)] == [("a", "read"), ("b", "grep")]


FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures"


def test_recorded_ollama_stream_with_think_tags(srv):
    srv.push_sse_file(FIXTURES / "ollama-qwen3-think-tags.sse")
    events = collect(adapter, make_request(srv, API))
    assert thinking_of(events) == "\nUser wants ok.\n" and text_of(events) == "ok"
    assert UsageEvent(input=21, output=14, total=35) in events and events[-1] == Finish("stop")


def test_recorded_llama_cpp_stream_with_reasoning_and_a_split_tool_call(srv):
    srv.push_sse_file(FIXTURES / "llamacpp-tool-call.sse")
    events = collect(adapter, make_request(srv, API))
    assert thinking_of(events) == "Need the file." and text_of(events) == ""
    assert tool_calls_of(events) == [("Kq9cU2m1", "read", '{"path":"README.md"}')]
    assert UsageEvent(input=180, output=25, total=205) in events and events[-1] == Finish("tool_calls")
