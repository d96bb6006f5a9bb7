"""The held-out verdict: is the best candidate significantly better than the original?

    verdict = decide(comparison)       # comparison: evals/compare.py, original (A) vs candidate (B)

The candidate is promoted only when it passes more held-out cases than the original, the
exact McNemar test of the paired pass/fail outcomes gives p < `ALPHA`, and — when the cases
have judge scores — the paired bootstrap of those scores does not show a significant drop.
`promote(worse, better, passed_a, passed_b)` is the same rule on bare counts. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..evals.compare import ALPHA, Comparison
from ..evals.stats import PairedBootstrap, mcnemar_exact

FEW_CASES = 20


@dataclass(frozen=True)
class Verdict:
    promoted: bool
    pairs: int
    passed_original: int
    passed_candidate: int
    worse: int  # pass → fail
    better: int  # fail → pass
    p: float
    judge: PairedBootstrap | None
    reason: str
    warnings: tuple[str, ...] = ()

    def data(self) -> dict[str, Any]:
        judge = None if self.judge is None else {"mean": self.judge.mean, "low": self.judge.low, "high": self.judge.high,
                                                 "p": self.judge.p, "n": self.judge.n}
        return {"promoted": self.promoted, "pairs": self.pairs, "passedOriginal": self.passed_original,
                "passedCandidate": self.passed_candidate, "worse": self.worse, "better": self.better,
                "mcnemarP": self.p, "judgeBootstrap": judge, "reason": self.reason, "warnings": list(self.warnings)}


def promote(worse: int, better: int, passed_a: int, passed_b: int) -> bool:
    return passed_b > passed_a and mcnemar_exact(worse, better) < ALPHA


def decide(c: Comparison) -> Verdict:
    s = c.overall
    judge = s.judge_bootstrap
    warnings = []
    if s.pairs < FEW_CASES:
        warnings.append(f"The held-out part has {s.pairs} decided cases; so few cases rarely show a significant gain.")
    judge_drop = judge is not None and judge.p < ALPHA and judge.mean < 0
    if judge_drop:
        reason = "no significant improvement: the judge scores dropped significantly"
    elif not promote(s.worse, s.better, s.passed_a, s.passed_b):
        reason = "no significant improvement"
    else:
        reason = "significant improvement"
    return Verdict(reason == "significant improvement", s.pairs, s.passed_a, s.passed_b, s.worse, s.better, s.mcnemar_p,
                   judge, reason, tuple(warnings))
