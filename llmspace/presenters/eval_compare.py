"""Evaluations › Compare Two Results… without Tk: the rows and headline of a paired
comparison (`evals/compare.py`), the flips first as `eval compare` prints them.

    view = comparison_view(compare_results(folder_a, folder_b))
    view.headline           # "3 flipped to fail, 1 to pass · McNemar p = 0.62 (not likely real) · …"
    view.rows               # CompareRow: worse (pass → fail), better (fail → pass), then score changes
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..evals.compare_format import p_text

if TYPE_CHECKING:
    from ..evals.compare import CaseResult, Comparison, Pair, Stats


@dataclass(frozen=True)
class CompareRow:
    kind: str  # worse, better, score
    case: str
    column: str
    change: str  # "pass → fail", or the score delta
    detail: str  # the first failed assertion of the failing side, else the output's start
    a_text: str = ""  # A's side in full (status, why it failed, its output), shown beside B's
    b_text: str = ""


@dataclass(frozen=True)
class ComparisonView:
    title: str
    headline: str
    rows: list[CompareRow]
    per_column: list[tuple[str, str]]  # label, its stats line


def stats_line(s: Stats) -> str:
    parts = [f"{s.passed_a}/{s.pairs} → {s.passed_b}/{s.pairs} pass",
             f"McNemar {p_text(s.mcnemar_p)} ({'likely real' if s.mcnemar_likely_real else 'not likely real'})"]
    if s.bootstrap is not None:
        b = s.bootstrap
        parts.append(f"score Δ {b.mean:+.3f} [{b.low:+.3f}, {b.high:+.3f}] {p_text(b.p)}"
                     + (" (likely real)" if s.bootstrap_likely_real else ""))
    return " · ".join(parts)


def _detail(pair: Pair, failing_side: str) -> str:
    side = pair.b if failing_side == "b" else pair.a
    if side.failed:
        return side.failed[0]
    text = " ".join((side.output or "").split())
    return text[:120]


def side_text(r: CaseResult) -> str:
    """One side of a pair in full: its status and score, why it failed, its output."""
    head = r.status + (f" · score {r.score:.3f}" if r.score is not None else "")
    if r.repeats > 1:
        head += f" · {r.passed_repeats}/{r.repeats} repeats passed"
    lines = [head]
    if r.error:
        lines += ["", f"Error: {r.error}"]
    if r.failed:
        lines += ["", "Failed:", *(f"  ✗ {reason}" for reason in r.failed)]
    lines += ["", "Output:", r.output if r.output is not None else "(none)"]
    return "\n".join(lines)


def _row(kind: str, p: Pair, change: str, failing_side: str) -> CompareRow:
    return CompareRow(kind, p.a.case, p.a.label, change, _detail(p, failing_side), side_text(p.a), side_text(p.b))


def comparison_view(c: Comparison) -> ComparisonView:
    rows = [_row("worse", p, "pass → fail", "b") for p in c.worse]
    rows += [_row("better", p, "fail → pass", "a") for p in c.better]
    flipped = {p.key for p in c.worse} | {p.key for p in c.better}
    rows += [_row("score", p, f"{p.delta:+.3f}", "b" if (p.delta or 0) < 0 else "a")
             for p in c.score_changes if p.key not in flipped and p.delta is not None]
    headline = (f"{len(c.worse)} flipped to fail, {len(c.better)} to pass of {c.paired} paired · " + stats_line(c.overall))
    extra = []
    if c.not_compared:
        extra.append(f"{len(c.not_compared)} not compared (an error or not run)")
    if c.only_a or c.only_b:
        extra.append(f"{len(c.only_a)} only in A, {len(c.only_b)} only in B")
    if extra:
        headline += " · " + ", ".join(extra)
    title = f"{c.a.name} {c.a.folder.name} → {c.b.name} {c.b.folder.name}"
    return ComparisonView(title, headline, rows, [(label, stats_line(s)) for label, s in c.groups.items()])
