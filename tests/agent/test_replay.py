"""The offline `replay` provider: a recorded run is stepped through again with no network,
and tool code runs again against the recorded model output."""

from __future__ import annotations

from llmspace.agent.run_types import RunOptions
from llmspace.core.model import AssistantMessage
from llmspace.tools.builtins import builtin_tool

from .conftest import assistant, make_thread, user

LOOKUP = {"type": "function", "name": "lookup", "parameters": {"type": "object", "properties": {"word": {"type": "string"}}}}


def _recorded(calls_tool: str, args: dict) -> list[dict]:
    return [
        user("question"),
        {**assistant("let me look", "a1", [{"id": "c1", "input": {"name": calls_tool, "arguments": args},
                                             "output": {"content": [{"type": "text", "text": "OLD RESULT"}], "isError": False}}]),
         "thinking": "I should call a tool.",
         "usage": {"input": 5, "output": 3, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 8,
                   "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}},
        assistant("final answer", "a2"),
    ]


def test_replay_reexecutes_tool_code_against_the_recorded_model_output(app, tmp_path):
    target = tmp_path / "data.txt"
    target.write_text("fresh content", encoding="utf-8")
    read = builtin_tool("read")
    assert read is not None
    recorded = _recorded("read", {"description": "d", "path": str(target)})
    thread = make_thread([recorded[0]], context={"tools": [read.model_dump(exclude_unset=True)]},
                         runHistory=[{"id": "run-1", "timestamp": 1000, "thread": {"title": "t", "context": {"messages": recorded}}}])

    result = app.runner.run(thread, RunOptions(provider="replay", replay_run="run-1", react=True))

    assert result.status == "completed", result.error
    first, last = thread.messages[1], thread.messages[2]
    assert isinstance(first, AssistantMessage) and first.thinking == "I should call a tool."
    assert first.text() == "let me look"
    assert first.toolCalls[0].output.text() == "1\tfresh content"
    assert first.usage is not None and first.usage.output == 3
    assert last.text() == "final answer"
    assert thread.runHistory[-1].id == result.run_id


def test_replay_by_default_uses_the_latest_run_and_pauses_at_function_tools(app):
    recorded = _recorded("lookup", {"word": "x"})
    thread = make_thread([recorded[0]], context={"tools": [LOOKUP]},
                         runHistory=[{"id": "run-1", "timestamp": 1000, "thread": {"title": "t", "context": {"messages": recorded}}}])

    paused = app.runner.run(thread, RunOptions(provider="replay", react=True))
    assert paused.status == "paused"
    assert paused.paused_calls == [(thread.messages[1].id, "c1")]

    done = app.runner.run(thread, RunOptions(provider="replay", react=True, tool_results={"c1": ("NEW", False)}))
    assert done.status == "completed", done.error
    assert thread.messages[-1].text() == "final answer"
    assert thread.messages[1].toolCalls[0].output.text() == "NEW"


def test_replay_of_an_unknown_run_fails_clearly_and_changes_nothing(app):
    thread = make_thread([user("q")], runHistory=[{"id": "run-1", "timestamp": 1, "thread": {"title": "t"}}])
    result = app.runner.run(thread, RunOptions(provider="replay", replay_run="nope"))
    assert result.status == "failed" and "nope" in (result.error or "")
    assert len(thread.messages) == 1 and len(thread.runHistory) == 1


def test_replay_without_runs_says_to_run_once_first(app):
    result = app.runner.run(make_thread([user("q")]), RunOptions(provider="replay"))
    assert result.status == "failed" and "no recorded runs" in (result.error or "")
