"""Folding one turn's provider events into the stored assistant message (`agent/fold.py`)."""

from __future__ import annotations

import time

import pytest

from llmspace.agent.fold import MAX_REPLY_CHARS, TurnBuilder
from llmspace.core.model import TextContent, ToolCallOutput
from llmspace.core.threadio import serialize_thread, thread_from_data
from llmspace.providers import events as pe
from llmspace.providers.base import ModelInfo

MODEL = ModelInfo(id="m", cost_input=3.0, cost_output=15.0)


def _fold(*events: pe.StreamEvent) -> TurnBuilder:
    b = TurnBuilder(MODEL, provider_id="p", api="anthropic-messages")
    for e in events:
        b.feed(e)
    return b


def test_arguments_split_across_fragments_are_joined_and_parsed():
    b = _fold(pe.ToolCallStart(0, "c1", "read"), pe.ToolCallArgsDelta(0, '{"pa'), pe.ToolCallArgsDelta(0, 'th": "/x"}'),
              pe.ToolCallEnd(0), pe.Finish("tool_calls"))
    call = b.build().toolCalls[0]
    assert call.input.arguments == {"path": "/x"} and call.input.partialArguments is None
    assert call.output is not None and [c.text for c in call.output.content] == [""]


def test_a_repeated_tool_start_keeps_the_first_id_and_name():
    b = _fold(pe.ToolCallStart(0, "c1", "read"), pe.ToolCallStart(0, "", "read"), pe.ToolCallArgsDelta(0, "{}"),
              pe.Finish("tool_calls"))
    calls = b.build().toolCalls
    assert len(calls) == 1 and calls[0].id == "c1" and calls[0].input.name == "read"


def test_a_call_without_an_id_gets_one():
    b = _fold(pe.ToolCallArgsDelta(0, '{"a": 1}'), pe.Finish("stop"))
    call = b.build().toolCalls[0]
    assert call.id.startswith("call_") and call.input.arguments == {"a": 1}


def test_partial_arguments_are_kept_when_the_json_never_completes():
    b = _fold(pe.ToolCallStart(0, "c1", "read"), pe.ToolCallArgsDelta(0, '{"a": [1, 2'),
              pe.ToolCallStart(1, "c2", "read"), pe.ToolCallArgsDelta(1, "[1]"), pe.ToolCallStart(2, "c3", "read"))
    first, second, third = b.build().toolCalls
    assert first.input.arguments == {"a": [1, 2]} and first.input.partialArguments == '{"a": [1, 2'
    assert second.input.arguments == {} and second.input.partialArguments == "[1]"
    assert third.input.arguments == {} and third.input.partialArguments is None


def test_usage_reports_are_merged_and_priced():
    b = _fold(pe.TextDelta("hi"), pe.UsageEvent(input=1000, cache_read=10), pe.UsageEvent(output=200), pe.Finish("stop"))
    usage = b.build().usage
    assert usage is not None
    assert (usage.input, usage.output, usage.cacheRead) == (1000, 200, 10)
    assert usage.cost.input == 1000 * 3.0 / 1e6 and usage.cost.output == 200 * 15.0 / 1e6


def test_all_zero_usage_is_dropped_and_an_empty_reply_gets_one_empty_text_part():
    msg = _fold(pe.UsageEvent(), pe.Finish("stop")).build()
    assert msg.usage is None
    assert [c.text for c in msg.content] == [""]
    assert msg.timing is not None and msg.timing.firstTokenMs is None


def test_the_built_message_writes_only_the_fields_the_original_writes():
    b = _fold(pe.ThinkingDelta("t"), pe.TextDelta("x"), pe.Finish("stop", {"replay": {"thinkingSignature": "s"}}))
    msg = b.build()
    thread = thread_from_data({"title": "t"})
    thread.ensure_messages().append(msg)
    text = serialize_thread(thread).decode()
    for key in ('"role": "assistant"', '"type": "text"', '"thinking": "t"', '"timing"', '"providerData"', '"thinkingSignature": "s"'):
        assert key in text
    assert '"toolCalls"' not in text and '"usage"' not in text and "null" not in text


def _live_thread():
    return thread_from_data({"title": "live", "context": {"messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "go"}]}]}})


def test_the_live_fold_grows_the_reply_as_run_events_arrive():
    from llmspace.agent import events as rev
    from llmspace.agent.fold import fold_run_event

    thread = _live_thread()
    assert fold_run_event(thread, rev.MessageStarted("m1")) == "added"
    assert fold_run_event(thread, rev.TextDelta("m1", "Hel")) == "changed"
    assert fold_run_event(thread, rev.TextDelta("m1", "lo")) == "changed"
    assert fold_run_event(thread, rev.ThinkingDelta("m1", "hm")) == "changed"
    assert fold_run_event(thread, rev.ToolCallDelta("m1", 0, "c1", "read", '{"path": "/x')) == "changed"
    reply = thread.messages[-1]
    assert reply.text() == "Hello" and reply.thinking == "hm"
    assert reply.toolCalls[0].input.arguments == {"path": "/x"}
    assert fold_run_event(thread, rev.ToolCallDelta("m1", 0, "c1", "", '{"path": "/x", ]')) == "changed"
    assert reply.toolCalls[0].input.arguments == {"path": "/x"}  # unreadable text keeps what was read
    out = ToolCallOutput(content=[TextContent(type="text", text="data")])
    assert fold_run_event(thread, rev.ToolFinished("m1", "c1", out)) == "changed"
    assert reply.toolCalls[0].output.text() == "data"
    assert fold_run_event(thread, rev.ToolFinished("m1", "gone", out)) == "unchanged"
    assert fold_run_event(thread, rev.MessageFinished("m1")) == "unchanged"


def test_the_live_fold_adds_a_message_for_a_first_delta_and_drops_a_turn_that_was_not_kept():
    from llmspace.agent import events as rev
    from llmspace.agent.fold import fold_run_event

    thread = _live_thread()
    assert fold_run_event(thread, rev.TextDelta("m2", "x")) == "added"
    assert fold_run_event(thread, rev.MessageFinished("m2", kept=False)) == "changed"
    assert [m.id for m in thread.messages] == ["u1"]
    assert fold_run_event(thread, rev.Retrying(2, 1.0, "busy")) == "unchanged"


def test_twenty_megabytes_of_text_and_thinking_in_small_deltas_fold_in_linear_time():
    b = TurnBuilder(MODEL, provider_id="p", api="anthropic-messages")
    chunk = "x" * 63 + "\n"
    n = 20 * 1024 * 1024 // len(chunk)
    started = time.monotonic()
    deadline = started + 30  # the quadratic fold needed 77 s for 20 MB; linear takes about 1 s here
    for i in range(n):
        b.feed(pe.TextDelta(chunk))
        b.feed(pe.ThinkingDelta("t"))
        if i % 4096 == 0 and time.monotonic() > deadline:
            pytest.fail(f"folded only {i * len(chunk) / 1e6:.1f} MB of 21 MB in 30 s")
    b.feed(pe.Finish("stop"))
    message = b.build()
    took = time.monotonic() - started
    assert len(b.text) == n * len(chunk) and len(b.thinking) == n and message.thinking == b.thinking
    assert message.content[0].text == b.text
    print(f"20 MB in {n} deltas: {took:.2f} s")
    assert took < 15


def test_a_reply_past_the_size_cap_ends_the_turn_with_a_clear_error_and_keeps_what_fit():
    b = TurnBuilder(MODEL, provider_id="p", api="anthropic-messages")
    mb = "y" * (1024 * 1024)
    for _ in range(MAX_REPLY_CHARS // len(mb)):
        b.feed(pe.TextDelta(mb))
    assert b.error is None
    events = b.feed(pe.ToolCallArgsDelta(0, "{}"))
    assert events == [] and b.error is not None
    assert b.error.message == ("The model's reply is larger than 32 MB of text, the most llmspace keeps of one reply; "
                               "it was cut there. Ask the model for a shorter answer, or set maxTokens in the thread's "
                               "model settings.")
    assert b.error.in_stream and len(b.text) == MAX_REPLY_CHARS
