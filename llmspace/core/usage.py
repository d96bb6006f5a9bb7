"""Token usage and cost: normalising, adding, per-run totals and display labels.

- `normalize_usage(value)` turns a `Usage`, a dict or None into a clean `Usage` (non-finite or
  negative numbers become 0) or None when nothing usable is there.
- `add_usage(a, b)` sums component-wise; `totalTokens` is the sum of each side's total, where a
  side's total falls back to input+output+cacheRead+cacheWrite when it is 0; `reasoning` is kept
  only if either side has it.
- `run_usage(messages)` sums the usage of the assistant messages of one run (empty usage when none).
- `snapshot_usage(run)` is the usage shown for a run-history entry (legacy entries without a
  `usage` key fall back to summing their snapshot's messages; all-zero usage shows as none).
- Labels: `format_int`, `format_compact`, `format_cost`, `compact_label`, `summary_line`,
  `breakdown_rows`, `in_out_label` (input counted with the prompt-cache hits it includes:
  "29 in (28 cached) / 387 out", never "1 in / 387 out" for a cache hit).

Pure functions; new `Usage` nodes are built with every field set so they are written out in full.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from .model import AssistantMessage, RunSnapshot, Usage, UsageCost

_TOKEN_KEYS = ("input", "output", "cacheRead", "cacheWrite")
_COST_KEYS = ("input", "output", "cacheRead", "cacheWrite", "total")

Num = int | float


def js_number(value: float | int) -> Num:
    """A number as JavaScript would write it: integral floats become ints (0.0 -> 0), so
    files match the original app's JSON byte for byte."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _num(value: Any) -> Num:
    """A finite, non-negative number (integral floats become ints); anything else is 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return js_number(value) if value >= 0 else 0


def _get(value: Any, key: str) -> Any:
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def make_usage(
    input: Num = 0,
    output: Num = 0,
    cache_read: Num = 0,
    cache_write: Num = 0,
    *,
    reasoning: Num | None = None,
    total_tokens: Num | None = None,
    cost: Mapping[str, Num] | None = None,
) -> Usage:
    """A `Usage` node with every field set (so all of them appear in the file)."""
    costs = {k: _num((cost or {}).get(k, 0)) for k in _COST_KEYS}
    if cost is not None and "total" not in cost:
        costs["total"] = sum(costs[k] for k in _COST_KEYS[:4])
    tokens = [_num(input), _num(output), _num(cache_read), _num(cache_write)]
    total = _num(total_tokens) if total_tokens is not None else sum(tokens)
    fields: dict[str, Any] = dict(zip(_TOKEN_KEYS, tokens, strict=True))
    if reasoning is not None:
        fields["reasoning"] = _num(reasoning)
    fields["totalTokens"] = total
    fields["cost"] = UsageCost(**costs)
    return Usage(**fields)


def empty_usage() -> Usage:
    """All zeros, every field present."""
    return make_usage(cost={})


def normalize_usage(value: Usage | Mapping[str, Any] | None) -> Usage | None:
    """A clean copy of `value` (non-finite/negative → 0), or None when it is not a usage record."""
    if value is None or not (isinstance(value, (Usage, Mapping))):
        return None
    cost = _get(value, "cost")
    reasoning = _get(value, "reasoning")
    return make_usage(
        _get(value, "input"),
        _get(value, "output"),
        _get(value, "cacheRead"),
        _get(value, "cacheWrite"),
        reasoning=reasoning if reasoning is not None else None,
        total_tokens=_num(_get(value, "totalTokens")),
        cost={k: _get(cost, k) for k in _COST_KEYS} if cost is not None else {},
    )


def is_valid_usage(value: Any) -> bool:
    """True when every number of `value` is finite and ≥ 0 (the original's validator)."""
    if not isinstance(value, (Usage, Mapping)):
        return False
    for key in (*_TOKEN_KEYS, "totalTokens"):
        v = _get(value, key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            return False
    r = _get(value, "reasoning")
    if r is not None and (isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r < 0):
        return False
    cost = _get(value, "cost")
    if cost is None:
        return False
    for key in _COST_KEYS:
        v = _get(cost, key)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v < 0:
            return False
    return True


def side_total(usage: Usage) -> Num:
    """`totalTokens`, or input+output+cacheRead+cacheWrite when that is 0."""
    total = _num(usage.totalTokens)
    if total:
        return total
    return _num(usage.input) + _num(usage.output) + _num(usage.cacheRead) + _num(usage.cacheWrite)


def add_usage(a: Usage | None, b: Usage | None) -> Usage:
    """Component-wise sum; see the module docstring for totals and reasoning."""
    a = normalize_usage(a) or empty_usage()
    b = normalize_usage(b) or empty_usage()
    reasoning = None
    if a.reasoning is not None or b.reasoning is not None:
        reasoning = _num(a.reasoning) + _num(b.reasoning)
    return make_usage(
        a.input + b.input,
        a.output + b.output,
        a.cacheRead + b.cacheRead,
        a.cacheWrite + b.cacheWrite,
        reasoning=reasoning,
        total_tokens=side_total(a) + side_total(b),
        cost={k: _num(getattr(a.cost, k)) + _num(getattr(b.cost, k)) for k in _COST_KEYS},
    )


def run_usage(messages: Iterable[Any]) -> Usage:
    """Sum of the usage of the assistant messages given (empty usage when none has any).

    Same rules as `add_usage`, accumulated on plain numbers (one node built at the end)."""
    tokens: list[Num] = [0, 0, 0, 0]
    costs: list[Num] = [0, 0, 0, 0, 0]
    total: Num = 0
    reasoning: Num | None = None
    for msg in messages:
        u = msg.usage if isinstance(msg, AssistantMessage) else None
        if u is None:
            continue
        side = [_num(u.input), _num(u.output), _num(u.cacheRead), _num(u.cacheWrite)]
        for i in range(4):
            tokens[i] += side[i]
        total += _num(u.totalTokens) or sum(side)
        if u.reasoning is not None:
            reasoning = (reasoning or 0) + _num(u.reasoning)
        c = u.cost
        for i, key in enumerate(_COST_KEYS):
            costs[i] += _num(getattr(c, key, 0))
    return make_usage(*tokens, reasoning=reasoning, total_tokens=total, cost=dict(zip(_COST_KEYS, costs, strict=True)))


def is_zero(usage: Usage | None) -> bool:
    """True for None or a usage whose tokens and cost are all zero."""
    if usage is None:
        return True
    u = normalize_usage(usage)
    if u is None:
        return True
    return not any((u.input, u.output, u.cacheRead, u.cacheWrite, u.totalTokens, u.reasoning or 0, u.cost.total))


def snapshot_usage(run: RunSnapshot) -> Usage | None:
    """The usage to show for a run-history entry, or None when there is nothing to show."""
    if "usage" in run.model_fields_set:
        usage = run.usage
    else:  # legacy entry: sum the snapshot's messages
        ctx = run.thread.context
        usage = run_usage(ctx.messages or []) if ctx is not None else None
    return None if is_zero(usage) else normalize_usage(usage)


def cost_of(usage: Usage | None) -> float:
    """The total cost in USD (0 when unknown)."""
    return float(_num(usage.cost.total)) if usage is not None else 0.0


# -- formatting ----------------------------------------------------------------------------


def format_int(n: Num) -> str:
    """An integer with thousands separators: 12,345."""
    return f"{round(_num(n)):,}"


def format_compact(n: Num) -> str:
    """Compact counts for narrow rows: 950, 1.2K, 3.4M, 1.1B."""
    v = float(_num(n))
    for size, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if v >= size:
            text = f"{v / size:.1f}".rstrip("0").rstrip(".")
            return f"{text}{suffix}"
    return str(round(v))


def format_cost(cost: Num) -> str | None:
    """`$1.23` (≥ $1), `$0.0123` (≥ $0.01), `$0.000123`; None when ≤ 0."""
    c = float(_num(cost))
    if c <= 0:
        return None
    if c >= 1:
        return f"${c:.2f}"
    if c >= 0.01:
        return f"${c:.4f}"
    return f"${c:.6f}"


def compact_label(usage: Usage | None) -> str:
    """`<in> in / <out> out[ / <n> cached][ / <n> cache write][ / $cost]` ("" for none)."""
    if is_zero(usage):
        return ""
    u = normalize_usage(usage)
    assert u is not None
    parts = [f"{format_compact(u.input)} in", f"{format_compact(u.output)} out"]
    if u.cacheRead:
        parts.append(f"{format_compact(u.cacheRead)} cached")
    if u.cacheWrite:
        parts.append(f"{format_compact(u.cacheWrite)} cache write")
    cost = format_cost(u.cost.total)
    if cost:
        parts.append(cost)
    return " / ".join(parts)


def summary_line(usage: Usage | None) -> str:
    """`<total> tokens / <in> input / <out> output[ / <r> reasoning][ / cached][ / cache write][ / $cost]`."""
    if is_zero(usage):
        return ""
    u = normalize_usage(usage)
    assert u is not None
    parts = [f"{format_int(side_total(u))} tokens", f"{format_int(u.input)} input", f"{format_int(u.output)} output"]
    if u.reasoning:
        parts.append(f"{format_int(u.reasoning)} reasoning")
    if u.cacheRead:
        parts.append(f"{format_int(u.cacheRead)} cached")
    if u.cacheWrite:
        parts.append(f"{format_int(u.cacheWrite)} cache write")
    cost = format_cost(u.cost.total)
    if cost:
        parts.append(cost)
    return " / ".join(parts)


def breakdown_rows(usage: Usage | None) -> list[tuple[str, str]]:
    """Rows Input, Output, Cache Read (>0), Cache Write (>0), Reasoning (>0), Cost (>0), Total."""
    u = normalize_usage(usage) or empty_usage()
    rows = [("Input", format_int(u.input)), ("Output", format_int(u.output))]
    if u.cacheRead:
        rows.append(("Cache Read", format_int(u.cacheRead)))
    if u.cacheWrite:
        rows.append(("Cache Write", format_int(u.cacheWrite)))
    if u.reasoning:
        rows.append(("Reasoning", format_int(u.reasoning)))
    cost = format_cost(u.cost.total)
    if cost:
        rows.append(("Cost", cost))
    rows.append(("Total", format_int(side_total(u))))
    return rows


def in_out_label(usage: Usage | None) -> str:
    """`<in> in[ (<n> cached)] / <out> out`, the input counting every prompt token: those read
    from the provider's prompt cache (and written to it) are part of the input ("" for none)."""
    u = normalize_usage(usage)
    if u is None:
        return ""
    prompt = _num(u.input) + _num(u.cacheRead) + _num(u.cacheWrite)
    cached = f" ({format_int(u.cacheRead)} cached)" if u.cacheRead else ""
    return f"{format_int(prompt)} in{cached} / {format_int(u.output)} out"
