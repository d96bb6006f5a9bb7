"""Tolerant tool calls: a call a small model wrote as text becomes a real tool call."""

from __future__ import annotations

import json

from llmspace.providers.base import ToolSpec
from llmspace.providers.events import (
    ErrorEvent,
    Finish,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnd,
    ToolCallStart,
    UsageEvent,
)
from llmspace.providers.tolerant_calls import HOLD_LIMIT, tolerant_tool_calls

TOOLS = (ToolSpec("get_weather", "Weather for a city", {"type": "object", "properties": {"city": {"type": "string"}}}),
         ToolSpec("add", "Add numbers", {"type": "object"}))


def run(*chunks: str, finish: str = "stop", tools: tuple[ToolSpec, ...] = TOOLS) -> list[StreamEvent]:
    events: list[StreamEvent] = [TextDelta(c) for c in chunks]
    events += [UsageEvent(input=3, output=4), Finish(finish)]
    return list(tolerant_tool_calls(iter(events), tools))


def calls(events: list[StreamEvent]) -> list[tuple[str, dict[str, object]]]:
    names = {e.index: e.name for e in events if isinstance(e, ToolCallStart)}
    args = {e.index: json.loads(e.text) for e in events if isinstance(e, ToolCallArgsDelta)}
    return [(names[i], args[i]) for i in sorted(names)]


def text(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_a_bare_json_call_of_an_offered_tool_becomes_a_tool_call_with_finish_tool_calls() -> None:
    out = run('{"name": "get_', 'weather", "arguments": {"city": ', '"Paris"}}')
    assert calls(out) == [("get_weather", {"city": "Paris"})]
    assert text(out) == ""
    assert isinstance(out[-1], Finish) and out[-1].reason == "tool_calls"
    assert any(isinstance(e, ToolCallEnd) for e in out) and any(isinstance(e, UsageEvent) for e in out)


def test_a_fenced_call_a_list_of_calls_and_the_openai_shape_are_recognised() -> None:
    assert calls(run('```json\n{"name": "add", "parameters": {"a": 1, "b": 2}}\n```')) == [("add", {"a": 1, "b": 2})]
    listed = run('[{"name": "add", "arguments": {"a": 1}}, {"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}]')
    assert calls(listed) == [("add", {"a": 1}), ("get_weather", {"city": "Oslo"})]
    openai = run('{"type": "function", "function": {"name": "add", "arguments": {"a": 5}}}')
    assert calls(openai) == [("add", {"a": 5})]


def test_json_that_is_not_a_call_of_an_offered_tool_stays_text_unchanged() -> None:
    for reply in ('{"name": "delete_everything", "arguments": {}}', '{"city": "Paris", "temp": 21}',
                  '[1, 2, 3] are the numbers', '{"name": "add", "arguments": {}, "note": "an answer"}',
                  '```python\nprint("hi")\n```'):
        out = run(reply)
        assert text(out) == reply
        assert calls(out) == []
        assert isinstance(out[-1], Finish) and out[-1].reason == "stop"


def test_a_reply_that_starts_with_prose_is_never_held_back() -> None:
    events: list[StreamEvent] = [TextDelta("Hello"), TextDelta(' {"name": "add", "arguments": {}}'), Finish("stop")]
    seen: list[StreamEvent] = []
    stream = tolerant_tool_calls(iter(events), TOOLS)
    seen.append(next(stream))
    assert seen == [TextDelta("Hello")]  # yielded before the rest was read
    assert text(seen + list(stream)) == 'Hello {"name": "add", "arguments": {}}'


def test_held_text_is_let_through_once_it_passes_the_limit() -> None:
    long = '{"name": "add", "arguments": {"text": "' + "x" * HOLD_LIMIT
    events: list[StreamEvent] = [TextDelta(long[:10]), TextDelta(long[10:]), TextDelta("still going"), Finish("stop")]
    stream = tolerant_tool_calls(iter(events), TOOLS)
    first = next(stream)
    assert first == TextDelta(long)  # released as soon as it passed the limit, not at the end
    assert text([first, *stream]) == long + "still going"


def test_without_tools_offered_nothing_is_held_or_changed() -> None:
    out = run('{"name": "add", "arguments": {}}', tools=())
    assert text(out) == '{"name": "add", "arguments": {}}'
    assert calls(out) == []


def test_a_failed_or_stopped_reply_keeps_its_held_text_as_text() -> None:
    broken: list[StreamEvent] = [TextDelta('{"name": "add"'), ErrorEvent("boom")]
    failed = list(tolerant_tool_calls(iter(broken), TOOLS))
    assert failed == [TextDelta('{"name": "add"'), ErrorEvent("boom")]
    cut: list[StreamEvent] = [TextDelta('{"name": "add", "argu'), Finish("aborted")]
    stopped = list(tolerant_tool_calls(iter(cut), TOOLS))
    assert stopped == [TextDelta('{"name": "add", "argu'), Finish("aborted")]


def test_calls_made_from_text_are_numbered_after_the_servers_own_calls() -> None:
    events: list[StreamEvent] = [ToolCallStart(0, "c1", "add"), ToolCallArgsDelta(0, "{}"), ToolCallEnd(0),
                                 TextDelta('{"name": "get_weather", "arguments": {"city": "Rome"}}'), Finish("tool_calls")]
    out = list(tolerant_tool_calls(iter(events), TOOLS))
    assert [(e.index, e.name) for e in out if isinstance(e, ToolCallStart)] == [(0, "add"), (1, "get_weather")]



def test_doubled_braces_stay_text_even_around_a_call() -> None:
    # Qwen2.5-Coder-1.5B wraps calls in {{…}} for a request and for 4 of 6 greetings alike:
    # reading them as calls would turn those greetings into tool calls
    for reply in ('{{"name": "get_weather", "arguments": {"city": "Lima"}}}', '{{"name": "greet", "arguments": {}}}'):
        assert text(run(reply)) == reply
        assert calls(run(reply)) == []
