"""Streams recorded byte for byte from REAL local servers, replayed through the loopback server.

`llama-cpp-python-real-stream.sse` was recorded from `python -m llama_cpp.server` 0.3.36
(llama-cpp-python, the real llama.cpp engine) serving the tiny random model written by
`scripts/make_tiny_gguf.py` — see `scripts/check_real_local_server.sh`. Request: system +
user, `stream: true`, `stream_options.include_usage: true`, `max_tokens: 32`,
`temperature: 0.8`. The server accepted `stream_options` (HTTP 200) but sent no usage;
it sends many `{"content": ""}` deltas (tokens that detokenize to nothing), then an empty
delta with `finish_reason: "length"`, then `[DONE]`.

`llama-server-real-stream.sse` was recorded from llama.cpp's own `llama-server` (build
0c1e570, the copy vendored in llama-cpp-python 0.3.36, built with cmake) serving the same
model, same request plus `logit_bias: {"2": -100}` (no end-of-text). It sends only non-empty
deltas, `finish_reason: "length"`, then a chunk with `choices: []`, `usage` (with
`prompt_tokens_details.cached_tokens`) and llama.cpp's own `timings`, then `[DONE]`.
"""

from __future__ import annotations

from pathlib import Path

from llmspace.providers.events import ErrorEvent, Finish, TextDelta, ThinkingDelta, UsageEvent
from llmspace.providers.openai_completions import OpenAICompletionsAdapter
from tests.providers.helpers import collect, make_request, text_of

FIXTURES = Path(__file__).parent / "fixtures"
API = "openai-completions"
adapter = OpenAICompletionsAdapter()


def test_a_real_llama_cpp_python_stream_gives_its_text_and_finishes_for_length(srv):
    srv.push_sse_file(FIXTURES / "llama-cpp-python-real-stream.sse")
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == "1d=@*o+r~J:"
    assert all(e.text for e in events if isinstance(e, TextDelta))  # the empty deltas are dropped
    assert not any(isinstance(e, (ThinkingDelta, ErrorEvent, UsageEvent)) for e in events)
    assert events[-1] == Finish("length")


def test_the_request_to_a_real_server_asks_for_usage_and_the_answer_without_usage_is_accepted(srv):
    srv.push_sse_file(FIXTURES / "llama-cpp-python-real-stream.sse")
    collect(adapter, make_request(srv, API))
    body = srv.requests[-1].body_json
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    # a server that ignores stream_options is not treated as one that rejects it
    srv.push_sse_file(FIXTURES / "llama-cpp-python-real-stream.sse")
    collect(adapter, make_request(srv, API))
    assert "stream_options" in srv.requests[-1].body_json


def test_a_real_llama_server_stream_gives_text_usage_with_cached_tokens_and_length(srv):
    srv.push_sse_file(FIXTURES / "llama-server-real-stream.sse")
    events = collect(adapter, make_request(srv, API))
    assert text_of(events) == ":@ECa+@buX!"
    assert not any(isinstance(e, (ThinkingDelta, ErrorEvent)) for e in events)
    assert [e for e in events if isinstance(e, UsageEvent)] == [
        UsageEvent(input=1, output=32, cache_read=111, cache_write=0, total=144)]
    assert events[-1] == Finish("length")
