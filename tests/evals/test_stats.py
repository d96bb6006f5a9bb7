"""Evaluation statistics against known values: Wilson intervals, percentiles, the fixed-seed
bootstrap, pass^k, the exact McNemar test and the paired bootstrap (expected values worked
out by hand in the comments)."""

from __future__ import annotations

import pytest

from llmspace.evals.stats import bootstrap_ci, mcnemar_exact, paired_bootstrap, pass_hat_k, percentile, wilson


def test_wilson_matches_known_intervals():
    low, high = wilson(8, 10)
    assert (round(low, 4), round(high, 4)) == (0.4902, 0.9433)
    assert wilson(0, 10)[0] == 0.0 and round(wilson(0, 10)[1], 4) == 0.2775
    assert wilson(10, 10)[1] == 1.0 and round(wilson(10, 10)[0], 4) == 0.7225
    assert wilson(0, 0) == (0.0, 1.0)


def test_percentile_interpolates_between_ranks_like_numpy():
    values = [10.0, 20.0, 30.0, 40.0]
    assert percentile(values, 50) == 25.0
    assert percentile(values, 95) == pytest.approx(38.5)
    assert percentile([], 50) is None and percentile([7.0], 95) == 7.0


def test_the_bootstrap_interval_is_the_same_every_time_and_brackets_the_mean():
    scores = [1, 2, 3, 4, 5, 5, 4, 3, 4, 5]
    first = bootstrap_ci(scores)
    assert first == bootstrap_ci(list(scores))
    assert first is not None and first[0] < sum(scores) / len(scores) < first[1]
    assert 2.6 < first[0] < 3.0 and 4.2 < first[1] < 4.6  # mean 3.6, standard error about 0.4
    assert bootstrap_ci([4.0]) == (4.0, 4.0) and bootstrap_ci([]) is None


def test_pass_hat_k_counts_cases_that_passed_every_repeat():
    assert pass_hat_k([[True, True, True], [True, False, True], [True, True, True], [False, False, False]]) == 0.5
    assert pass_hat_k([]) is None


def test_the_exact_mcnemar_test_is_a_two_sided_binomial_test_of_the_discordant_pairs():
    # b = 1 worse, c = 5 better: n = 6, P(X <= 1) = (1 + 6) / 64, two-sided 14/64
    assert mcnemar_exact(1, 5) == pytest.approx(14 / 64)
    assert mcnemar_exact(5, 1) == pytest.approx(14 / 64)  # symmetric
    # 0 of 6 the other way: 2 * (1/64)
    assert mcnemar_exact(0, 6) == pytest.approx(2 / 64)
    # 0 of 5: 2/32 = 0.0625, not below 0.05; 0 of 6 is
    assert mcnemar_exact(0, 5) == pytest.approx(0.0625)
    # 3 and 12: n = 15, P(X <= 3) = (1 + 15 + 105 + 455) / 32768 = 576/32768, doubled
    assert mcnemar_exact(3, 12) == pytest.approx(1152 / 32768)
    # balanced: the doubled tail passes 1 and is capped at 1; no discordant pair at all: 1
    assert mcnemar_exact(2, 2) == 1.0
    assert mcnemar_exact(0, 0) == 1.0


def _exact_bootstrap_p(deltas: list[float]) -> float:
    """The paired bootstrap's p-value with every one of the n^n resamples (small n only)."""
    import itertools

    n = len(deltas)
    mean = sum(deltas) / n
    hits = sum(abs(sum(s) / n - mean) >= abs(mean) - 1e-12 for s in itertools.product(deltas, repeat=n))
    return float(hits / n**n)


def test_the_paired_bootstrap_matches_the_full_enumeration_of_a_small_case():
    # deltas [0, 0, 1]: the resampled mean is k/3 with k ~ Binomial(3, 1/3); the centred mean
    # is at least 1/3 away from 0 for k = 0, 2, 3: (8 + 6 + 1) / 27 = 15/27
    deltas = [0.0, 0.0, 1.0]
    assert _exact_bootstrap_p(deltas) == pytest.approx(15 / 27)
    result = paired_bootstrap(deltas)
    assert result is not None
    assert result.mean == pytest.approx(1 / 3)
    assert result.p == pytest.approx(15 / 27, abs=0.02)
    assert (result.n, result.resamples) == (3, 10_000)
    # its interval is the resampled means' 2.5th and 97.5th percentiles: 0 and 1 here
    assert (result.low, result.high) == (0.0, 1.0)
    assert paired_bootstrap(deltas) == result  # a fixed seed: the same every time
    four = [0.0, 0.5, 1.0, -0.25]
    other = paired_bootstrap(four)
    assert other is not None and other.p == pytest.approx(_exact_bootstrap_p(four), abs=0.02)


def test_the_paired_bootstrap_calls_no_change_chance_and_a_constant_change_real():
    same = paired_bootstrap([0.0] * 10)
    assert same is not None and same.p == 1.0 and same.mean == 0.0
    # every pair 0.5 better: no resample comes near 0, so p is the smallest it can be, 1/(R+1)
    up = paired_bootstrap([0.5] * 10, resamples=999)
    assert up is not None and up.p == pytest.approx(1 / 1000) and (up.low, up.high) == (0.5, 0.5)
    assert paired_bootstrap([]) is None
