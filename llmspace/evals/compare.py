"""Paired comparison of two evaluation results folders (`llmspace eval compare A B`).

    a = read_results(folder_a)                    # summary.json + results.jsonl -> ResultSet (read_summary, read_rows)
    comparison = compare(a, read_results(folder_b))
    comparison = compare_results(folder_a, folder_b)   # the same in one call
    comparison.worse, comparison.better           # flips: pass → fail, fail → pass (Pairs)
    comparison.score_changes                      # pairs whose score moved, largest drop first
    comparison.overall / comparison.groups        # Stats: McNemar and paired bootstrap
    comparison.exit_code                          # 1 when a case flipped to fail, else 0

A case's outcome per model/variant is computed from its cells in `results.jsonl` as the
summary does (`results.py`): an errored repeat makes it an error, one not run pending, else
it passes when at least `passK` repeats passed. Its score is the mean over its decided
repeats of the weighted assertion score (0–1, judges' checks included), and its judge score the
mean of its `llm-rubric` checks' scores (1–5), when it has any. Cases are paired by
(case id, model, variant); pairs where a side is an error or not run are listed as not
compared, and keys found on one side only as unpaired. The exact McNemar test takes the
decided pairs' discordant counts; the paired bootstrap the score differences (B − A) of the
pairs scored on both sides, and a second one the judge scores (10,000 resamples up to 500 pairs,
fewer beyond so that a test draws at most 5 million values, at least 500); "likely real" means
p < 0.05. Pure apart from reading the two
folders; no Tk (the app's comparison view builds on these types).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..agent.matrix_spec import DEFAULT_VARIANT
from ..errors import UserFacingError
from ..jsonio import UnreadableFileError, read_file_bytes, read_json
from .records import ResultRow, parse_row
from .stats import PAIRED_RESAMPLES, PairedBootstrap, mcnemar_exact, paired_bootstrap

ALPHA = 0.05
MAX_BOOTSTRAP_DRAWS = 5_000_000  # pairs × resamples per test (about 1 s): fewer resamples for large runs
MIN_RESAMPLES = 500  # the smallest p-value a bootstrap can give is 1 / (resamples + 1)

Key = tuple[str, str, str]  # case id, provider/model, variant


def group_label(model: str, variant: str) -> str:
    return model if variant == DEFAULT_VARIANT else f"{model} [{variant}]"


@dataclass(frozen=True)
class CaseResult:
    """One case on one model/variant, over its repeats."""

    case: str
    model: str
    variant: str
    status: str  # pass, fail, error, pending
    score: float | None  # mean weighted assertion score of the decided repeats (0–1)
    repeats: int
    passed_repeats: int
    judge_score: float | None = None  # mean of the judges' scores (1–5) over the decided repeats
    failed: tuple[str, ...] = ()  # "assertion: reason" of the checks that failed, first failing repeat
    output: str | None = None  # the first failing (else first decided) repeat's output
    error: str | None = None

    @property
    def key(self) -> Key:
        return (self.case, self.model, self.variant)

    @property
    def label(self) -> str:
        return group_label(self.model, self.variant)


@dataclass(frozen=True)
class ResultSet:
    """One results folder, read: its summary and its cases in dataset order."""

    folder: Path
    summary: dict[str, Any]
    cases: dict[Key, CaseResult]

    @property
    def name(self) -> str:
        return str(self.summary.get("name") or self.folder.parent.name)


@dataclass(frozen=True)
class Pair:
    a: CaseResult
    b: CaseResult

    @property
    def key(self) -> Key:
        return self.a.key

    @property
    def delta(self) -> float | None:
        if self.a.score is None or self.b.score is None:
            return None
        return self.b.score - self.a.score

    @property
    def judge_delta(self) -> float | None:
        if self.a.judge_score is None or self.b.judge_score is None:
            return None
        return self.b.judge_score - self.a.judge_score


@dataclass(frozen=True)
class Stats:
    """The tests over a set of pairs."""

    pairs: int  # decided on both sides
    both_pass: int
    both_fail: int
    worse: int  # pass → fail
    better: int  # fail → pass
    passed_a: int
    passed_b: int
    mcnemar_p: float
    bootstrap: PairedBootstrap | None  # of the score differences
    judge_bootstrap: PairedBootstrap | None = None  # of the judge score differences (pairs judged on both sides)

    @property
    def mcnemar_likely_real(self) -> bool:
        return self.mcnemar_p < ALPHA

    @property
    def bootstrap_likely_real(self) -> bool:
        return self.bootstrap is not None and self.bootstrap.p < ALPHA


@dataclass(frozen=True)
class Comparison:
    a: ResultSet
    b: ResultSet
    worse: list[Pair]  # pass → fail, in group then dataset order
    better: list[Pair]  # fail → pass
    score_changes: list[Pair]  # scored on both sides with a non-zero delta, largest drop first
    scored: int  # pairs scored on both sides
    not_compared: list[Pair]  # paired, but an error or not run on a side
    only_a: list[Key]
    only_b: list[Key]
    overall: Stats
    groups: dict[str, Stats] = field(default_factory=dict)  # per model/variant label, in A's order

    @property
    def paired(self) -> int:
        return self.overall.pairs + len(self.not_compared)

    @property
    def got_worse(self) -> bool:
        return bool(self.worse)

    @property
    def exit_code(self) -> int:
        return 1 if self.worse else 0


# -- reading -------------------------------------------------------------------------------


def read_rows(path: Path) -> list[ResultRow]:
    try:
        text = read_file_bytes(path).decode("utf-8")  # a named pipe or device is refused, never waited on
    except UnreadableFileError as exc:
        if exc.missing:
            raise UserFacingError(f"{path.parent} has no results.jsonl.",
                                  hint="Finish the run (`llmspace eval run FILE` resumes it), then compare.") from None
        raise
    except UnicodeDecodeError:
        raise UserFacingError(f"{path} is not UTF-8 text.", hint="Run `llmspace eval run FILE` again to rewrite it.") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except ValueError:
            raise UserFacingError(f"{path} line {n} is not JSON.", hint="Run `llmspace eval run FILE` again to rewrite it.") from None
        if isinstance(value, dict):
            rows.append(parse_row(value))
    return rows


def read_results(folder: Path) -> ResultSet:
    """A results folder's summary and case outcomes; a folder that is not one is a UserFacingError."""
    folder = Path(folder)
    if not folder.is_dir():
        raise UserFacingError(f"{folder} is not a folder.", hint="Pass two results folders (`llmspace eval list` shows them).")
    if not (folder / "summary.json").is_file():
        raise UserFacingError(f"{folder} is not an evaluation results folder (it has no summary.json).",
                              hint="Pass two results folders (`llmspace eval list` shows them).")
    summary = read_summary(folder)
    rows = read_rows(folder / "results.jsonl")
    return ResultSet(folder, summary, case_results(rows, int(summary.get("passK") or summary.get("repeat") or 1)))


def read_summary(folder: Path) -> dict[str, Any]:
    summary = read_json(folder / "summary.json")
    if not isinstance(summary, dict):
        raise UserFacingError(f"{folder / 'summary.json'} is not a summary of an evaluation.")
    return summary


def case_results(rows: list[ResultRow], need: int) -> dict[Key, CaseResult]:
    """Per (case, model, variant), in the rows' order: their cells folded into one outcome."""
    cells: dict[Key, list[ResultRow]] = defaultdict(list)
    for r in rows:
        cells[(r.case, r.model, r.variant or DEFAULT_VARIANT)].append(r)
    return {key: _case(key, rs, need) for key, rs in cells.items()}


def _reasons(row: ResultRow) -> tuple[str, ...]:
    return tuple(f"{c.assertion}: {c.reason}" if c.reason else c.assertion for c in row.checks if not c.passed)


def _case(key: Key, rows: list[ResultRow], need: int) -> CaseResult:
    statuses = [r.status for r in rows]
    decided = [r for r in rows if r.status in ("pass", "fail")]
    passed = sum(s == "pass" for s in statuses)
    if "error" in statuses:
        status = "error"
    elif "pending" in statuses or not rows:
        status = "pending"
    else:
        status = "pass" if passed >= need else "fail"
    scores = [r.score for r in decided if r.score is not None]
    judged = [float(c.score) for r in decided for c in r.checks if isinstance(c.score, (int, float))]
    first_fail = next((r for r in rows if r.status == "fail"), None)
    shown = first_fail or (decided[0] if decided else None)
    error = next((str(r.error) for r in rows if r.status == "error"), None)
    return CaseResult(key[0], key[1], key[2], status, sum(scores) / len(scores) if scores else None, len(rows), passed,
                      sum(judged) / len(judged) if judged else None, _reasons(first_fail) if first_fail else (), None if shown is None else shown.output,
                      error)


# -- comparing -----------------------------------------------------------------------------


def compare_results(folder_a: Path, folder_b: Path) -> Comparison:
    return compare(read_results(folder_a), read_results(folder_b))


def _resamples(n: int) -> int:
    return max(MIN_RESAMPLES, min(PAIRED_RESAMPLES, MAX_BOOTSTRAP_DRAWS // max(1, n)))


def pair_stats(pairs: list[Pair]) -> Stats:
    decided = [p for p in pairs if p.a.status in ("pass", "fail") and p.b.status in ("pass", "fail")]
    worse = sum(p.a.status == "pass" and p.b.status == "fail" for p in decided)
    better = sum(p.a.status == "fail" and p.b.status == "pass" for p in decided)
    deltas = [d for p in decided if (d := p.delta) is not None]
    judge_deltas = [d for p in decided if (d := p.judge_delta) is not None]
    return Stats(len(decided), sum(p.a.status == p.b.status == "pass" for p in decided),
                 sum(p.a.status == p.b.status == "fail" for p in decided), worse, better,
                 sum(p.a.status == "pass" for p in decided), sum(p.b.status == "pass" for p in decided),
                 mcnemar_exact(worse, better), paired_bootstrap(deltas, resamples=_resamples(len(deltas))),
                 paired_bootstrap(judge_deltas, resamples=_resamples(len(judge_deltas))))


def compare(a: ResultSet, b: ResultSet) -> Comparison:
    """Pair A's and B's cases by (case id, model, variant) and test the differences."""
    pairs = [Pair(ca, b.cases[key]) for key, ca in a.cases.items() if key in b.cases]
    only_a = [k for k in a.cases if k not in b.cases]
    only_b = [k for k in b.cases if k not in a.cases]
    # group, then dataset order: A's groups first, each in its cases' order
    group_order = {g: i for i, g in enumerate(dict.fromkeys((p.a.model, p.a.variant) for p in pairs))}
    pairs.sort(key=lambda p: group_order[(p.a.model, p.a.variant)])
    decided = [p for p in pairs if p.a.status in ("pass", "fail") and p.b.status in ("pass", "fail")]
    worse = [p for p in decided if p.a.status == "pass" and p.b.status == "fail"]
    better = [p for p in decided if p.a.status == "fail" and p.b.status == "pass"]
    scored = [p for p in decided if p.delta is not None]
    changes = sorted((p for p in scored if abs(p.delta or 0.0) > 1e-12), key=lambda p: p.delta or 0.0)
    not_compared = [p for p in pairs if not (p.a.status in ("pass", "fail") and p.b.status in ("pass", "fail"))]
    by_group: dict[str, list[Pair]] = defaultdict(list)
    for p in pairs:
        by_group[p.a.label].append(p)
    groups = {label: pair_stats(ps) for label, ps in by_group.items()}
    return Comparison(a, b, worse, better, changes, len(scored), not_compared, only_a, only_b, pair_stats(pairs), groups)
