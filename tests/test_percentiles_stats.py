"""dpcore.percentiles, Monte Carlo: samplers against their exact laws (chi-square / KS, fixed seeds),
credible-interval coverage, accuracy experiments. Tolerances come from the Monte Carlo standard error."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from dpcore import DPInputError, noise, percentiles
from dpcore.percentiles import rivals as percentile_rivals
from dpcore.views import percentiles as percentile_experiments

P_MIN = 1e-3  # reject at p < 0.001 (fixed seeds: deterministic)


def _chisq_geometric(draws, eps):
    """Chi-square p-value of integer draws against P(k) = (1-r)/(1+r) r^|k|, r = exp(-eps).
    Cells: (<= -K), -K+1 .. K-1, (>= K), with K chosen so the tail cells expect >= ~5 draws."""
    draws = np.asarray(draws)
    r = math.exp(-eps)
    tail = lambda k: r**k / (1 + r)
    k_max = 1
    while tail(k_max + 1) * draws.size >= 5 and k_max < 400:
        k_max += 1
    ks = np.arange(-k_max + 1, k_max)
    exp = np.concatenate([[tail(k_max)], noise.two_sided_geometric_pmf(ks, eps), [tail(k_max)]]) * draws.size
    obs = np.concatenate(
        [
            [np.sum(draws <= -k_max)],
            np.bincount(draws[np.abs(draws) < k_max] + k_max - 1, minlength=2 * k_max - 1),
            [np.sum(draws >= k_max)],
        ]
    )
    return stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue


@pytest.mark.parametrize("eps", [0.1, 0.5, 1.5])
def test_two_sided_geometric_sampler_matches_pmf_and_a_wrong_eps_is_caught(eps):
    draws = noise.sample_two_sided_geometric(eps, 200_000, rng=np.random.default_rng(1))
    assert _chisq_geometric(draws, eps) > P_MIN
    assert _chisq_geometric(draws, eps * 1.05) < P_MIN  # the test has power


def test_noise_added_by_noisy_histogram_has_the_per_bin_law():
    """noisy - true over 3,000 releases (63,000 bins): two-sided geometric with epsilon / 2 (replace)."""
    x = percentile_experiments.synthesize_cell_earnings(30_000, 41_000, 57_000, 150, rng=2)
    true = percentiles.histogram_counts(x).counts
    gen = np.random.default_rng(3)
    z = np.concatenate([percentiles.noisy_histogram(x, epsilon=1.2, rng=gen).counts - true for _ in range(3000)])
    assert _chisq_geometric(z, 0.6) > P_MIN
    assert _chisq_geometric(z, 1.2) < P_MIN  # had we forgotten the factor 2, this would be the law


def test_posterior_count_sampler_is_noisy_minus_geometric():
    y = np.array([3, -2, 0, 40])
    s = percentiles.posterior_count_samples(y, 0.4, size=100_000, rng=4)
    assert s.shape == (100_000, 4)
    for j in range(4):
        assert _chisq_geometric(y[j] - s[:, j], 0.4) > P_MIN


def _coverage(n, eps, level, scheme, target, reps=2000, seed=0):
    edges = percentiles.bin_edges(scheme, 20)
    x = percentile_experiments.synthesize_cell_earnings(30_000, 40_000, 55_000, n, rng=seed + 1)
    true_counts = percentiles.histogram_counts(x, edges).counts
    truth = (
        percentiles.percentiles_from_histogram(true_counts, edges)
        if target == "histogram"
        else percentiles.empirical_percentile(x)
    )
    gen = np.random.default_rng(seed)
    eps_bin = percentiles.epsilon_per_bin(eps)
    hits = np.zeros(3)
    for chunk in range(reps // 200):
        noisy = true_counts + noise.sample_two_sided_geometric(eps_bin, (200, true_counts.size), rng=gen)
        ci = percentiles.percentile_credible_intervals(
            noisy, edges, epsilon_bin=eps_bin, level=level, n_samples=500, target=target, rng=gen
        )
        hits += ((ci.lower <= truth) & (truth <= ci.upper)).sum(axis=0)
    return hits / reps


@pytest.mark.slow
@pytest.mark.parametrize("n, eps, scheme", [(500, 1.0, "pseo"), (60, 1.0, "pseo"), (200, 1.0, "even")])
def test_credible_interval_coverage_within_2pct(n, eps, scheme):
    """2,000 releases of one fixed cell (500 posterior draws each); the Monte Carlo SE of a 90%
    coverage is sqrt(.9*.1/2000) = 0.0067, so the +-2% band of the issue is 3 standard errors."""
    cov = _coverage(n, eps, 0.9, scheme, "histogram")
    se = math.sqrt(0.9 * 0.1 / 2000)
    assert 3 * se <= 0.021
    assert np.all(np.abs(cov - 0.9) <= 0.02), cov


@pytest.mark.slow
def test_data_target_intervals_are_conservative():
    cov = _coverage(200, 1.0, 0.9, "pseo", "data", reps=1000)
    assert np.all(cov >= 0.9 - 3 * math.sqrt(0.09 / 1000)), cov


def test_credible_intervals_shape_and_order():
    x = percentile_experiments.synthesize_cell_earnings(30_000, 40_000, 55_000, 300, rng=5)
    rel = percentiles.release_percentiles(x, epsilon=1.0, rng=6)
    ci = percentiles.percentile_credible_intervals(rel.noisy_counts, rel.edges, epsilon_bin=rel.epsilon_per_bin, rng=7)
    assert ci.lower.shape == (3,) and np.all(ci.lower <= ci.center) and np.all(ci.center <= ci.upper)
    wide = percentiles.percentile_credible_intervals(
        rel.noisy_counts, rel.edges, epsilon_bin=rel.epsilon_per_bin, rng=7, target="data"
    )
    assert np.all(wide.upper - wide.lower >= ci.upper - ci.lower - 1e-9)


def test_exponential_mechanism_sampler_matches_interval_probabilities():
    x = np.array([12_000, 25_000, 25_000, 31_000, 47_000, 90_000.0])
    eps, q = 0.8, 50
    draws = percentiles.sample_exponential_mechanism(
        x, epsilon=eps, q=q, size=200_000, rng=8, lower=10_000, upper=100_000
    )
    pts, lengths, logp = percentile_rivals._em_intervals(x, q, 10_000.0, 100_000.0, eps)
    keep = lengths > 0
    cuts = pts
    idx = np.clip(np.searchsorted(cuts, draws, side="right") - 1, 0, lengths.size - 1)
    obs = np.bincount(idx, minlength=lengths.size)[keep]
    exp = np.exp(logp)[keep] * draws.size
    assert stats.chisquare(obs, exp).pvalue > P_MIN
    # uniform inside an interval: KS within the most likely interval
    i = int(np.argmax(np.where(keep, logp, -np.inf)))
    inside = draws[idx == i]
    assert stats.kstest((inside - pts[i]) / lengths[i], "uniform").pvalue > P_MIN


def test_smooth_noise_of_release_is_generalized_cauchy_4():
    x = percentile_experiments.synthesize_cell_earnings(25_000, 38_000, 52_000, 80, rng=4)
    gen = np.random.default_rng(9)
    z = []
    truth = percentiles.empirical_percentile(x, [50])[0]
    for _ in range(1500):
        r = percentiles.release_percentiles_smooth(x, epsilon=1.0, q=[50], rng=gen, calibration="paper")
        z.append((r.values[0] - truth) / r.confidential_noise_scale[0])
    h = noise.GeneralizedCauchy(4.0)
    assert stats.kstest(z, h.cdf).pvalue > P_MIN
    assert stats.kstest(np.array(z) * 1.3, h.cdf).pvalue < P_MIN  # a wrong scale is caught


def test_simulate_accuracy_runs_and_histogram_beats_even_bins_at_moderate_epsilon():
    gen = np.random.default_rng(10)
    n = gen.integers(30, 400, 40)
    cell = np.repeat(np.arange(40), n)
    vals = percentile_experiments.synthesize_cell_earnings(30_000, 40_000, 55_000, int(n.sum()), rng=11)
    panel = percentile_experiments.make_cell_panel(vals, cell)
    seen = []
    df = percentile_experiments.simulate_accuracy(
        panel, epsilons=[0.5, 2.0], bin_counts=(10, 20), n_draws=20, rng=12, progress=lambda f, t: seen.append(f)
    )
    assert seen[-1] == 1.0 and all(0 <= f <= 1 for f in seen)
    assert set(df.method) == {"lognormal", "even", "smooth_paper", "smooth_tight", "em"}
    means = df.groupby(["method", "n_bins", "epsilon"], observed=True).rel_accuracy.mean()
    assert means[("lognormal", 20, 2.0)] > means[("even", 20, 2.0)]
    assert means[("lognormal", 20, 2.0)] > means[("lognormal", 20, 0.5)]
    assert means[("smooth_tight", 0, 2.0)] > means[("smooth_paper", 0, 2.0)] - 0.05
    assert len(df) == (2 * 2 + 3) * 2 * 40


def test_make_cell_panel_bad_input():
    with pytest.raises(DPInputError, match="at least 2"):
        percentile_experiments.make_cell_panel([1.0, 2.0, 3.0], [0, 0, 1])
    with pytest.raises(DPInputError, match="empty"):
        percentile_experiments.make_cell_panel([], [])
