"""Response performance helpers: tokens per second and duration labels.

`tokens_per_second(output_tokens, first_token_ms, duration_ms)` is output tokens over the
generation window (duration − first token); None without a first token, a positive window or
output. `duration_label(ms)` gives `<n> ms`, `x.xx s`, `x.x s` or `Mm Ss`. `message_latency`
and `run_latency_ms` read `timing` from assistant messages.

Pure functions.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .model import AssistantMessage, Timing


def tokens_per_second(output_tokens: float | None, first_token_ms: float | None, duration_ms: float | None) -> float | None:
    """Output tokens per second of generation (566.5 for 1133 tokens between 500 and 2500 ms)."""
    if first_token_ms is None or duration_ms is None or not output_tokens or output_tokens <= 0:
        return None
    window = duration_ms - first_token_ms
    if not math.isfinite(window) or window <= 0:
        return None
    return output_tokens / (window / 1000)


def duration_label(ms: float | None) -> str:
    """`850 ms`, `1.25 s`, `12.5 s`, `2m 5s` ("" for None)."""
    if ms is None or not math.isfinite(ms):
        return ""
    ms = max(0.0, float(ms))
    if ms < 1000:
        return f"{round(ms)} ms"
    secs = ms / 1000
    if secs < 10:
        return f"{secs:.2f} s"
    if secs < 60:
        return f"{secs:.1f} s"
    minutes, rest = divmod(round(secs), 60)
    return f"{minutes}m {rest}s"


def message_timing(msg: Any) -> Timing | None:
    return msg.timing if isinstance(msg, AssistantMessage) else None


def run_latency_ms(messages: Iterable[Any]) -> tuple[float | None, float | None]:
    """(first-token ms of the first timed turn, summed durations of all timed turns)."""
    first: float | None = None
    total: float | None = None
    for msg in messages:
        timing = message_timing(msg)
        if timing is None:
            continue
        if first is None and timing.firstTokenMs is not None:
            first = float(timing.firstTokenMs)
        total = (total or 0.0) + float(timing.durationMs or 0)
    return first, total
