"""Evaluation statistics against known values: Wilson intervals, percentiles, the fixed-seed
bootstrap and pass^k."""

from __future__ import annotations

import pytest

from llmspace.core.eval_stats import bootstrap_ci, pass_hat_k, percentile, wilson


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
