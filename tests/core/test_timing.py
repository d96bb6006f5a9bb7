"""Response performance helpers."""

from __future__ import annotations

from llmspace.core.model import AssistantMessage, Timing, UserMessage
from llmspace.core.timing import duration_label, run_latency_ms, tokens_per_second


def test_tokens_per_second_uses_the_generation_window():
    assert tokens_per_second(1133, 500, 2500) == 566.5


def test_tokens_per_second_is_none_without_first_token_window_or_output():
    assert tokens_per_second(100, None, 2000) is None
    assert tokens_per_second(100, 2000, 2000) is None
    assert tokens_per_second(0, 100, 2000) is None


def test_duration_labels():
    assert duration_label(850) == "850 ms"
    assert duration_label(1250) == "1.25 s"
    assert duration_label(12_500) == "12.5 s"
    assert duration_label(125_000) == "2m 5s"
    assert duration_label(None) == ""


def test_run_latency_takes_the_first_token_of_the_first_turn_and_sums_durations():
    msgs = [UserMessage(id="u"),
            AssistantMessage(id="a", timing=Timing(firstTokenMs=300, durationMs=1000)),
            AssistantMessage(id="b"),
            AssistantMessage(id="c", timing=Timing(firstTokenMs=50, durationMs=500))]
    assert run_latency_ms(msgs) == (300.0, 1500.0)
    assert run_latency_ms([]) == (None, None)
