"""Usage accounting and labels."""

from __future__ import annotations

import math

from llmspace.core.model import AssistantMessage, RunSnapshot, UserMessage
from llmspace.core.usage import (
    add_usage,
    breakdown_rows,
    compact_label,
    empty_usage,
    format_compact,
    format_cost,
    format_int,
    is_valid_usage,
    make_usage,
    normalize_usage,
    run_usage,
    snapshot_usage,
    summary_line,
)


def _usage(**kw):
    base = {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 0,
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    base.update(kw)
    return base


def test_validation_accepts_finite_non_negative_numbers_only():
    assert is_valid_usage(_usage(input=3))
    assert not is_valid_usage(_usage(input=-1))
    assert not is_valid_usage(_usage(output=math.inf))
    assert not is_valid_usage({"input": 1})
    assert not is_valid_usage(None)


def test_normalize_turns_bad_numbers_into_zero_and_keeps_ints():
    u = normalize_usage(_usage(input=5, output=math.nan, cacheRead=-3))
    assert u is not None
    assert (u.input, u.output, u.cacheRead) == (5, 0, 0)
    assert isinstance(u.input, int)
    assert normalize_usage(None) is None


def test_addition_sums_components_and_falls_back_to_side_totals():
    a = normalize_usage(_usage(input=10, output=2))  # total 0 -> 12
    b = normalize_usage(_usage(input=7, output=5, totalTokens=12))
    s = add_usage(a, b)
    assert (s.input, s.output, s.totalTokens) == (17, 7, 24)
    assert s.reasoning is None


def test_addition_keeps_reasoning_when_either_side_has_it():
    a = make_usage(1, 1, reasoning=4)
    s = add_usage(a, make_usage(1, 1))
    assert s.reasoning == 4
    assert add_usage(make_usage(1, 1, cost={"total": 0.5}), make_usage(1, 1, cost={"total": 0.25})).cost.total == 0.75


def test_run_usage_sums_only_assistant_messages():
    msgs = [
        UserMessage(id="u", content=[]),
        AssistantMessage(id="a1", content=[], usage=make_usage(10, 5)),
        AssistantMessage(id="a2", content=[]),
        AssistantMessage(id="a3", content=[], usage=make_usage(1, 1, cost={"total": 0.01})),
    ]
    u = run_usage(msgs)
    assert (u.input, u.output, u.totalTokens, u.cost.total) == (11, 6, 17, 0.01)
    assert run_usage([]).model_dump(exclude_unset=True) == empty_usage().model_dump(exclude_unset=True)


def test_new_usage_nodes_write_every_field():
    dumped = make_usage(1, 2).model_dump(exclude_unset=True)
    assert list(dumped) == ["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost"]
    assert list(dumped["cost"]) == ["input", "output", "cacheRead", "cacheWrite", "total"]


def test_legacy_run_without_usage_key_sums_its_messages_and_zero_usage_shows_none():
    snap = {"thread": {"context": {"messages": [
        {"id": "a", "role": "assistant", "content": [], "usage": _usage(input=3, output=4, totalTokens=7)}]}}, "timestamp": 1}
    legacy = RunSnapshot.model_validate(snap)
    assert snapshot_usage(legacy).totalTokens == 7
    zero = RunSnapshot.model_validate({**snap, "usage": _usage()})
    assert snapshot_usage(zero) is None


def test_labels_follow_the_original_formats():
    assert format_int(1234567) == "1,234,567"
    assert format_compact(1234) == "1.2K" and format_compact(999) == "999" and format_compact(2_000_000) == "2M"
    assert format_cost(0) is None
    assert format_cost(1.234) == "$1.23"
    assert format_cost(0.0123) == "$0.0123"
    assert format_cost(0.000123) == "$0.000123"
    u = make_usage(1200, 300, 50, reasoning=20, cost={"total": 0.02})
    assert compact_label(u) == "1.2K in / 300 out / 50 cached / $0.0200"
    assert summary_line(u) == "1,550 tokens / 1,200 input / 300 output / 20 reasoning / 50 cached / $0.0200"
    assert [r[0] for r in breakdown_rows(u)] == ["Input", "Output", "Cache Read", "Reasoning", "Cost", "Total"]
    assert compact_label(None) == ""


def test_integral_costs_are_written_as_javascript_would_write_them() -> None:
    from llmspace.core.usage import js_number, make_usage
    from llmspace.providers.usage import cost_of
    from llmspace.settings.model_info import ModelInfo

    assert js_number(0.0) == 0 and isinstance(js_number(0.0), int)
    assert js_number(0.25) == 0.25
    free = cost_of(ModelInfo(id="local"), 10, 5)
    assert all(isinstance(v, int) and v == 0 for v in free.values())
    usage = make_usage(1, 2, cost={"input": 0.0, "output": 0.5})
    assert usage.model_dump()["cost"] == {"input": 0, "output": 0.5, "cacheRead": 0, "cacheWrite": 0, "total": 0.5}
