"""Compare two runs as a structural diff, aligned message by message.

`compare_runs(thread, run_a, run_b) -> RunComparison` holds, per message position: whether the
two messages are the same, unified-diff lines of their text and thinking, and per tool call the
name, argument differences (by JSON path) and result differences; plus the tool-call sequences,
the system prompt diff, the model of each run, and usage, latency and cost with B − A deltas.
`render_text(comparison)` is the plain-text view the CLI prints; with `show_ids=False` (the
GUI) runs are named by time and model and messages by position and role, without ids.

Latency counts the assistant messages a run produced: those whose id the other run lacks
(all assistant messages when the two runs share every id).

Pure; no I/O.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field
from typing import Any

from .history import find_run, model_label
from .model import AssistantMessage, RunSnapshot, Thread, ToolCall, Usage, UserMessage
from .timing import duration_label, run_latency_ms
from .usage import format_cost, format_int, side_total, snapshot_usage

Msg = UserMessage | AssistantMessage


@dataclass
class ToolCallDiff:
    index: int
    name_a: str | None
    name_b: str | None
    args_a: dict[str, Any] | None
    args_b: dict[str, Any] | None
    arg_changes: list[tuple[str, Any, Any]] = field(default_factory=list)  # (path, A value, B value); missing = ...
    result_diff: list[str] = field(default_factory=list)
    error_a: bool = False
    error_b: bool = False

    @property
    def same(self) -> bool:
        return (self.name_a == self.name_b and not self.arg_changes and not self.result_diff
                and self.error_a == self.error_b)


@dataclass
class MessageDiff:
    index: int
    a: Msg | None
    b: Msg | None
    text_diff: list[str] = field(default_factory=list)
    thinking_diff: list[str] = field(default_factory=list)
    tool_calls: list[ToolCallDiff] = field(default_factory=list)

    @property
    def status(self) -> str:
        if self.a is None:
            return "only-b"
        if self.b is None:
            return "only-a"
        if self.a.role != self.b.role:
            return "changed"
        if self.text_diff or self.thinking_diff or any(not t.same for t in self.tool_calls):
            return "changed"
        return "same"


@dataclass
class RunSide:
    run: RunSnapshot
    model: str
    usage: Usage | None
    first_token_ms: float | None
    duration_ms: float | None
    tool_sequence: list[str]

    @property
    def tokens(self) -> float:
        return side_total(self.usage) if self.usage is not None else 0

    @property
    def cost(self) -> float:
        return float(self.usage.cost.total) if self.usage is not None else 0.0


@dataclass
class RunComparison:
    a: RunSide
    b: RunSide
    system_prompt_diff: list[str]
    messages: list[MessageDiff]

    @property
    def changed(self) -> list[MessageDiff]:
        return [m for m in self.messages if m.status != "same"]

    def deltas(self) -> dict[str, float | None]:
        """B − A for tokens, input, output, cost, first token and duration (None when unknown)."""
        ua, ub = self.a.usage, self.b.usage

        def d(x: float | None, y: float | None) -> float | None:
            return None if x is None or y is None else y - x

        return {
            "tokens": self.b.tokens - self.a.tokens,
            "input": (ub.input if ub else 0) - (ua.input if ua else 0),
            "output": (ub.output if ub else 0) - (ua.output if ua else 0),
            "cost": self.b.cost - self.a.cost,
            "firstTokenMs": d(self.a.first_token_ms, self.b.first_token_ms),
            "durationMs": d(self.a.duration_ms, self.b.duration_ms),
        }


_MISSING = object()


def _flatten(value: Any, path: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flatten(v, f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_flatten(v, f"{path}[{i}]"))
        return out
    return {path or "(value)": value}


def arg_changes(a: dict[str, Any] | None, b: dict[str, Any] | None) -> list[tuple[str, Any, Any]]:
    """Leaf-level differences between two argument objects: (path, A value, B value)."""
    fa, fb = _flatten(a or {}), _flatten(b or {})
    out: list[tuple[str, Any, Any]] = []
    for key in list(fa) + [k for k in fb if k not in fa]:
        va, vb = fa.get(key, _MISSING), fb.get(key, _MISSING)
        if va is _MISSING or vb is _MISSING or va != vb or type(va) is not type(vb):
            out.append((key, va, vb))
    return out


def text_diff(a: str, b: str, label_a: str = "A", label_b: str = "B") -> list[str]:
    """Unified diff lines (no trailing newlines); empty when equal."""
    if a == b:
        return []
    return list(difflib.unified_diff(a.splitlines(), b.splitlines(), label_a, label_b, lineterm="", n=2))


def _tool_diff(i: int, a: ToolCall | None, b: ToolCall | None) -> ToolCallDiff:
    out_a = a.output.display_text() if a is not None and a.output is not None else ""
    out_b = b.output.display_text() if b is not None and b.output is not None else ""
    return ToolCallDiff(
        index=i,
        name_a=a.input.name if a else None,
        name_b=b.input.name if b else None,
        args_a=a.input.arguments if a else None,
        args_b=b.input.arguments if b else None,
        arg_changes=arg_changes(a.input.arguments if a else None, b.input.arguments if b else None),
        result_diff=text_diff(out_a, out_b, "A result", "B result"),
        error_a=bool(a and a.output and a.output.isError),
        error_b=bool(b and b.output and b.output.isError),
    )


def diff_messages(i: int, a: Msg | None, b: Msg | None) -> MessageDiff:
    md = MessageDiff(index=i, a=a, b=b)
    if a is None or b is None:
        return md
    md.text_diff = text_diff(a.text(), b.text())
    md.thinking_diff = text_diff(getattr(a, "thinking", None) or "", getattr(b, "thinking", None) or "",
                                 "A thinking", "B thinking")
    calls_a = getattr(a, "toolCalls", None) or []
    calls_b = getattr(b, "toolCalls", None) or []
    for j in range(max(len(calls_a), len(calls_b))):
        md.tool_calls.append(_tool_diff(j, calls_a[j] if j < len(calls_a) else None, calls_b[j] if j < len(calls_b) else None))
    return md


def _messages(run: RunSnapshot) -> list[Msg]:
    ctx = run.thread.context
    return list(ctx.messages or []) if ctx is not None else []


def _side(run: RunSnapshot, other_ids: set[str]) -> RunSide:
    msgs = _messages(run)
    own = [m for m in msgs if isinstance(m, AssistantMessage) and m.id not in other_ids]
    if not own:
        own = [m for m in msgs if isinstance(m, AssistantMessage)]
    first, duration = run_latency_ms(own)
    seq = [c.input.name for m in msgs if isinstance(m, AssistantMessage) for c in m.toolCalls or []]
    return RunSide(run=run, model=model_label(run.thread), usage=snapshot_usage(run),
                   first_token_ms=first, duration_ms=duration, tool_sequence=seq)


def compare_snapshots(run_a: RunSnapshot, run_b: RunSnapshot) -> RunComparison:
    ma, mb = _messages(run_a), _messages(run_b)
    side_a = _side(run_a, {m.id for m in mb})
    side_b = _side(run_b, {m.id for m in ma})
    pa = run_a.thread.context.systemPrompt if run_a.thread.context else None
    pb = run_b.thread.context.systemPrompt if run_b.thread.context else None
    diffs = [diff_messages(i, ma[i] if i < len(ma) else None, mb[i] if i < len(mb) else None)
             for i in range(max(len(ma), len(mb)))]
    return RunComparison(side_a, side_b, text_diff(pa or "", pb or "", "A system prompt", "B system prompt"), diffs)


def compare_runs(thread: Thread, run_a: str, run_b: str) -> RunComparison:
    """Compare two runs of `thread` by id (unknown ids raise a clear error)."""
    return compare_snapshots(find_run(thread, run_a), find_run(thread, run_b))


# -- text rendering ------------------------------------------------------------------------------


def _short(value: Any, limit: int = 80) -> str:
    if value is _MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _signed(n: float, fmt: str = "int") -> str:
    if fmt == "cost":
        text = format_cost(abs(n)) or "$0"
    elif fmt == "ms":
        text = duration_label(abs(n))
    else:
        text = format_int(abs(n))
    return ("+" if n > 0 else "−" if n < 0 else "±") + text


def _describe(m: Msg | None, show_ids: bool = True) -> str:
    if m is None:
        return "—"
    text = " ".join(m.text().split())
    calls = getattr(m, "toolCalls", None) or []
    extra = (" + " + ", ".join(f"{c.input.name}()" for c in calls)) if calls else ""
    who = f"{m.role} {m.id}" if show_ids else m.role
    return f"{who}: {text[:70] + ('…' if len(text) > 70 else '')}{extra}"


def render_text(cmp: RunComparison, *, show_same: bool = False, show_ids: bool = True) -> str:
    """The structural diff as plain text (identical messages collapsed unless `show_same`;
    run and message ids left out when not `show_ids`)."""
    from .history import absolute_time

    lines: list[str] = []
    for tag, side in (("A", cmp.a), ("B", cmp.b)):
        n = len(_messages(side.run))
        run_id = f"{side.run.id}  " if show_ids else ""
        lines.append(f"Run {tag}: {run_id}{absolute_time(side.run.timestamp)}  {side.model}  {n} message{'s' if n != 1 else ''}")
    lines.append("")
    if cmp.a.model != cmp.b.model:
        lines.append(f"Model: {cmp.a.model} → {cmp.b.model}")
    if cmp.system_prompt_diff:
        lines.append("System prompt differs:")
        lines.extend("    " + ln for ln in cmp.system_prompt_diff)
    else:
        lines.append("System prompt: same")
    lines.append("")
    lines.append(f"Messages ({len(cmp.messages)} positions, {len(cmp.changed)} differ):")
    same_run = 0
    for md in cmp.messages:
        if md.status == "same" and not show_same:
            same_run += 1
            continue
        if same_run:
            lines.append(f"  … {same_run} identical message{'s' if same_run != 1 else ''}")
            same_run = 0
        lines.extend(_render_message(md, show_ids))
    if same_run:
        lines.append(f"  … {same_run} identical message{'s' if same_run != 1 else ''}")
    lines.append("")
    lines.append("Tool-call sequence:")
    if cmp.a.tool_sequence == cmp.b.tool_sequence:
        lines.append(f"  same: {', '.join(cmp.a.tool_sequence) or '(no tool calls)'}")
    else:
        lines.append(f"  A: {', '.join(cmp.a.tool_sequence) or '(none)'}")
        lines.append(f"  B: {', '.join(cmp.b.tool_sequence) or '(none)'}")
    lines.append("")
    lines.extend(_render_numbers(cmp))
    return "\n".join(lines)


def _render_message(md: MessageDiff, show_ids: bool = True) -> list[str]:
    pos = f"#{md.index + 1}"
    if md.status == "only-a":
        return [f"  {pos} only in A: {_describe(md.a, show_ids)}"]
    if md.status == "only-b":
        return [f"  {pos} only in B: {_describe(md.b, show_ids)}"]
    assert md.a is not None and md.b is not None
    ids = md.a.id if md.a.id == md.b.id else f"{md.a.id} | {md.b.id}"
    ids = f" {ids}" if show_ids else ""
    if md.status == "same":
        return [f"  {pos} {md.a.role}{ids}: same"]
    out = [f"  {pos} {md.a.role if md.a.role == md.b.role else md.a.role + ' | ' + md.b.role}{ids}: differs"]
    if md.text_diff:
        out.append("    text:")
        out.extend("      " + ln for ln in md.text_diff)
    if md.thinking_diff:
        out.append("    thinking:")
        out.extend("      " + ln for ln in md.thinking_diff)
    for t in md.tool_calls:
        if t.same:
            continue
        if t.name_a is None:
            out.append(f"    tool call {t.index + 1}: only in B: {t.name_b}({_short(t.args_b)})")
            continue
        if t.name_b is None:
            out.append(f"    tool call {t.index + 1}: only in A: {t.name_a}({_short(t.args_a)})")
            continue
        name = t.name_a if t.name_a == t.name_b else f"{t.name_a} → {t.name_b}"
        out.append(f"    tool call {t.index + 1}: {name}")
        for path, va, vb in t.arg_changes:
            out.append(f"      argument {path}: {_short(va)} → {_short(vb)}")
        if t.error_a != t.error_b:
            out.append(f"      error: A {'yes' if t.error_a else 'no'}, B {'yes' if t.error_b else 'no'}")
        if t.result_diff:
            out.append("      result:")
            out.extend("        " + ln for ln in t.result_diff)
    return out


def _render_numbers(cmp: RunComparison) -> list[str]:
    a, b, d = cmp.a, cmp.b, cmp.deltas()
    ua, ub = a.usage, b.usage
    lines = ["Usage:"]
    lines.append(f"  tokens  A {format_int(a.tokens)} | B {format_int(b.tokens)} ({_signed(d['tokens'] or 0)})")
    lines.append(f"  input   A {format_int(ua.input if ua else 0)} | B {format_int(ub.input if ub else 0)} ({_signed(d['input'] or 0)})")
    lines.append(f"  output  A {format_int(ua.output if ua else 0)} | B {format_int(ub.output if ub else 0)} ({_signed(d['output'] or 0)})")
    lines.append(f"  cost    A {format_cost(a.cost) or '$0'} | B {format_cost(b.cost) or '$0'} ({_signed(d['cost'] or 0, 'cost')})")
    lines.append("Latency:")
    for key, label, va, vb in (("firstTokenMs", "first token", a.first_token_ms, b.first_token_ms),
                               ("durationMs", "duration", a.duration_ms, b.duration_ms)):
        delta = d[key]
        tail = f" ({_signed(delta, 'ms')})" if delta is not None else ""
        lines.append(f"  {label:<11} A {duration_label(va) or 'n/a'} | B {duration_label(vb) or 'n/a'}{tail}")
    return lines
