"""Statistics of evaluation summaries (`llmspace eval`): intervals and percentiles.

- `wilson(successes, n)` — the Wilson score 95 % interval of a pass rate (0 cases: (0, 1)).
- `bootstrap_ci(values)` — a percentile bootstrap 95 % interval of the mean: 2,000 resamples
  with a fixed seed, so the same scores always give the same interval.
- `percentile(values, q)` — linear interpolation between closest ranks (as numpy's default).
- `pass_hat_k(outcomes)` — pass^k: the share of cases that passed in every one of their repeats.
- `mcnemar_exact(worse, better)` — the exact McNemar test of paired pass/fail outcomes: a
  two-sided binomial test (p = 1/2) of the discordant pairs (pass → fail, fail → pass).
- `paired_bootstrap(deltas)` — the paired bootstrap of per-case score differences: the mean
  difference, its 95 % percentile interval and a two-sided p-value (resampled means centred on
  the observed mean, counted when at least as far from it as the observed mean is from 0),
  10,000 resamples with a fixed seed.

Pure functions, standard library only.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

Z95 = 1.959963984540054
RESAMPLES = 2000
SEED = 20240607
PAIRED_RESAMPLES = 10_000


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if successes <= 0 else max(0.0, centre - half)
    high = 1.0 if successes >= n else min(1.0, centre + half)
    return low, high


def percentile(values: Sequence[float], q: float) -> float | None:
    """The q-th percentile (0–100) of `values`; None when there are none."""
    if not values:
        return None
    data = sorted(values)
    pos = (len(data) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    if lo == hi:
        return float(data[lo])
    return float(data[lo] + (data[hi] - data[lo]) * (pos - lo))


def bootstrap_ci(values: Sequence[float], resamples: int = RESAMPLES, seed: int = SEED,
                 level: float = 0.95) -> tuple[float, float] | None:
    """Percentile bootstrap interval of the mean; None without values."""
    if not values:
        return None
    n = len(values)
    if n == 1:
        return float(values[0]), float(values[0])
    rng = random.Random(seed)
    data = list(values)
    means = sorted(math.fsum(rng.choices(data, k=n)) / n for _ in range(resamples))
    tail = (1 - level) / 2 * 100
    low, high = percentile(means, tail), percentile(means, 100 - tail)
    assert low is not None and high is not None
    return low, high


def pass_hat_k(outcomes: Sequence[Sequence[bool]]) -> float | None:
    """Share of cases whose every repeat passed (`outcomes`: per case, the repeats' results)."""
    cases = [o for o in outcomes if o]
    if not cases:
        return None
    return sum(all(o) for o in cases) / len(cases)


def mcnemar_exact(worse: int, better: int) -> float:
    """Two-sided exact McNemar p-value for `worse` (pass → fail) and `better` (fail → pass) pairs."""
    n = worse + better
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(worse, better) + 1))
    return min(1.0, 2 * tail / (1 << n))


@dataclass(frozen=True)
class PairedBootstrap:
    mean: float  # the observed mean difference
    low: float  # its 95 % percentile interval
    high: float
    p: float  # two-sided, against "no difference"
    n: int  # pairs
    resamples: int


def paired_bootstrap(deltas: Sequence[float], resamples: int = PAIRED_RESAMPLES, seed: int = SEED) -> PairedBootstrap | None:
    """The paired bootstrap of `deltas` (B − A per pair); None without pairs."""
    n = len(deltas)
    if n == 0:
        return None
    data = [float(d) for d in deltas]
    mean = math.fsum(data) / n
    rng = random.Random(seed)
    means = [math.fsum(rng.choices(data, k=n)) / n for _ in range(resamples)]
    far = abs(mean) - 1e-12
    extreme = sum(1 for m in means if abs(m - mean) >= far)
    means.sort()
    low, high = percentile(means, 2.5), percentile(means, 97.5)
    assert low is not None and high is not None
    return PairedBootstrap(mean, low, high, (extreme + 1) / (resamples + 1), n, resamples)
