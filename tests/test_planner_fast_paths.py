"""The planner's fast paths compute the same numbers as the slow ones they replaced: the closed-form
Laplace CDF is scipy.stats.laplace.cdf bit for bit, and GroupMeans' kept true means and clipping bias are the
recomputed ones (and cannot be changed through what the properties return)."""

from __future__ import annotations

import numpy as np
from scipy import stats

from dpcore import planner as planner_lib
from dpcore.data import lognormal_incomes
from dpcore.planner import closed_forms


def test_laplace_cdf_is_scipys_bit_for_bit():
    rng = np.random.default_rng(7)
    x = np.concatenate(
        [
            rng.normal(0, 3, 5000),
            rng.standard_cauchy(2000),
            np.geomspace(1e-300, 1e300, 300),
            -np.geomspace(1e-300, 1e300, 300),
            [0.0, -0.0, 5e-324, -5e-324, 1e-17, -1e-17, 700.0, 746.0, -746.0, np.inf, -np.inf],
        ]
    )
    ours, theirs = closed_forms.laplace_cdf(x), stats.laplace.cdf(x)
    assert np.array_equal(ours, theirs)
    assert np.isnan(closed_forms.laplace_cdf(np.array([np.nan]))[0]) and np.isnan(stats.laplace.cdf(np.nan))
    t, c, b = np.abs(rng.normal(0, 2, 500)), rng.normal(0, 1, 500), rng.uniform(0.01, 5, 500)
    expected = np.clip(stats.laplace.cdf((t - c) / b) - stats.laplace.cdf((-t - c) / b), 0.0, 1.0)
    assert np.array_equal(closed_forms.laplace_interval_prob(t, c, b), expected)


def test_group_means_truth_and_bias_are_kept_and_equal_recomputation():
    values = lognormal_incomes(3000, sigma=1.0, rng=5)
    groups = np.random.default_rng(6).choice(list("abcde"), size=values.size, p=[0.5, 0.3, 0.15, 0.04, 0.01])
    stat = planner_lib.GroupMeans(values, groups, 0.0, 150_000.0)
    codes, k = stat._gi.codes, stat._gi.k
    counts = np.bincount(codes, minlength=k)
    truth = np.bincount(codes, weights=values, minlength=k) / counts
    bias = np.bincount(codes, weights=np.clip(values, 0.0, 150_000.0), minlength=k) / counts - truth
    assert np.array_equal(stat.truth, truth) and np.array_equal(stat.bias, bias)
    assert np.any(bias != 0)  # the clip bites, so a wrong bias would show
    stat.truth[:] = 0.0  # what the properties return is a copy: the statistic stays right
    stat.bias[:] = 0.0
    assert np.array_equal(stat.truth, truth) and np.array_equal(stat.bias, bias)
    p, _ = stat.prob_within(0.5, 0.05)
    t = np.abs(truth) * 0.05
    scale = 150_000.0 / (counts * 0.5)
    assert p == float(
        np.prod(np.clip(stats.laplace.cdf((t - bias) / scale) - stats.laplace.cdf((-t - bias) / scale), 0.0, 1.0))
    )
