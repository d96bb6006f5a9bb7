"""Structural diff of two runs: messages, tool calls, results, usage, latency and cost."""

from __future__ import annotations

import pytest

from llmspace.core.compare import arg_changes, compare_runs, render_text, text_diff
from llmspace.core.threadio import thread_from_data
from llmspace.errors import UserFacingError


def _usage(i: int, o: int, cost: float) -> dict:
    return {"input": i, "output": o, "cacheRead": 0, "cacheWrite": 0, "totalTokens": i + o,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": cost}}


def _snap(answer: str, path: str, result: str, *, aid: str, extra: bool = False, first: int = 500, dur: int = 1500) -> dict:
    msgs = [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "Read the file"}]},
        {"id": aid, "role": "assistant", "content": [{"type": "text", "text": answer}],
         "toolCalls": [{"id": "c1", "input": {"name": "read", "arguments": {"path": path, "opts": {"n": 1}}},
                        "output": {"content": [{"type": "text", "text": result}]}}],
         "timing": {"firstTokenMs": first, "durationMs": dur}},
    ]
    if extra:
        msgs.append({"id": aid + "x", "role": "assistant", "content": [{"type": "text", "text": "done"}],
                     "toolCalls": [{"id": "c2", "input": {"name": "write", "arguments": {}}}]})
    return {"title": "t", "model": {"provider": "openai", "id": "gpt-4.1"},
            "context": {"systemPrompt": "Be brief.", "messages": msgs}}


def _thread():
    b = _snap("Reading now.\nSecond line", "/y", "hello\nworld", aid="a2", extra=True, first=800, dur=2500)
    b["model"]["id"] = "gpt-5"
    b["context"]["systemPrompt"] = "Be very brief."
    return thread_from_data({
        "title": "t",
        "runHistory": [
            {"id": "A", "timestamp": 1, "thread": _snap("Reading.\nSecond line", "/x", "hello", aid="a1"), "usage": _usage(100, 20, 0.01)},
            {"id": "B", "timestamp": 2, "thread": b, "usage": _usage(150, 40, 0.03)},
        ],
    })


def test_messages_are_aligned_by_position_with_text_and_tool_differences():
    cmp = compare_runs(_thread(), "A", "B")
    assert [m.status for m in cmp.messages] == ["same", "changed", "only-b"]
    md = cmp.messages[1]
    assert "-Reading." in md.text_diff and "+Reading now." in md.text_diff
    call = md.tool_calls[0]
    assert call.arg_changes == [("path", "/x", "/y")]
    assert "+world" in call.result_diff
    assert cmp.a.tool_sequence == ["read"] and cmp.b.tool_sequence == ["read", "write"]
    assert cmp.system_prompt_diff


def test_usage_latency_and_cost_deltas_are_b_minus_a():
    d = compare_runs(_thread(), "A", "B").deltas()
    assert d["tokens"] == 70 and d["input"] == 50 and d["output"] == 20
    assert d["cost"] == pytest.approx(0.02)
    assert d["firstTokenMs"] == 300 and d["durationMs"] == 1000


def test_text_rendering_shows_the_structural_diff():
    out = render_text(compare_runs(_thread(), "A", "B"))
    assert "Model: openai/gpt-4.1 → openai/gpt-5" in out
    assert "… 1 identical message" in out
    assert "argument path: \"/x\" → \"/y\"" in out
    assert "only in B: assistant a2x" in out
    assert "A: read" in out and "B: read, write" in out
    assert "tokens  A 120 | B 190 (+70)" in out
    assert "cost    A $0.0100 | B $0.0300 (+$0.0200)" in out
    assert "first token A 500 ms | B 800 ms (+300 ms)" in out


def test_unknown_run_ids_are_refused():
    with pytest.raises(UserFacingError, match="No run 'C'"):
        compare_runs(_thread(), "A", "C")


def test_argument_and_text_helpers():
    assert arg_changes({"a": 1, "b": {"c": [1, 2]}}, {"a": 1, "b": {"c": [1, 3]}, "d": True}) == [
        ("b.c[1]", 2, 3), ("d", arg_changes.__globals__["_MISSING"], True)]
    assert text_diff("same", "same") == []
