"""Usage and cost: from a `UsageEvent` and the model's price table to a `Usage` node.

`usage_node(event, model)` is called by the run loop when it folds a turn's events into
the assistant message (`agent/fold.py`): totals fall back to the sum of the parts,
negative or non-finite counts become 0, and cost is tokens × price per million for input,
output, cache read and cache write. `cost_of(...)` is the same arithmetic alone.
"""

from __future__ import annotations

import math
from typing import Any

from ..core.model import Usage, UsageCost
from ..core.usage import js_number
from .base import ModelInfo
from .events import UsageEvent


def _n(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
        return 0
    return int(v)


def cost_of(model: ModelInfo, input: int, output: int, cache_read: int = 0, cache_write: int = 0) -> dict[str, float]:
    parts = {
        "input": input * model.cost_input / 1_000_000,
        "output": output * model.cost_output / 1_000_000,
        "cacheRead": cache_read * model.cost_cache_read / 1_000_000,
        "cacheWrite": cache_write * model.cost_cache_write / 1_000_000,
    }
    parts["total"] = sum(parts.values())
    return {k: js_number(v) for k, v in parts.items()}


def merge_usage(events: list[UsageEvent]) -> UsageEvent | None:
    """The last report wins per field that was reported non-zero (Anthropic splits usage)."""
    if not events:
        return None
    if len(events) == 1:
        return events[0]
    out = events[0]
    for e in events[1:]:
        out = UsageEvent(input=e.input or out.input, output=e.output or out.output,
                         cache_read=e.cache_read or out.cache_read, cache_write=e.cache_write or out.cache_write,
                         reasoning=e.reasoning if e.reasoning is not None else out.reasoning,
                         total=e.total if e.total is not None else out.total)
    return out


def usage_node(event: UsageEvent, model: ModelInfo) -> Usage:
    """A `Usage` node with cost; only the fields the original LLM Space app writes are set."""
    i, o, cr, cw = _n(event.input), _n(event.output), _n(event.cache_read), _n(event.cache_write)
    total = _n(event.total) if event.total else 0
    total = total or (i + o + cr + cw)
    c = cost_of(model, i, o, cr, cw)
    fields: dict[str, Any] = {"input": i, "output": o, "cacheRead": cr, "cacheWrite": cw}
    if event.reasoning is not None:
        fields["reasoning"] = _n(event.reasoning)
    fields["totalTokens"] = total
    fields["cost"] = UsageCost(input=c["input"], output=c["output"], cacheRead=c["cacheRead"],
                               cacheWrite=c["cacheWrite"], total=c["total"])
    return Usage(**fields)
