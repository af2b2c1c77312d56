"""dpcore.stratified: clipped Laplace means per group, stratified combination, parity error,
bounds (Prop. 9 / Lemma 12 / Theorem 10), the NY example, generators and bad input."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import special, stats

from dpcore.stratified import (
    DEFAULT_GAMMA,
    MAX_GROUPS,
    clip_thresholds,
    clipped_laplace_mean,
    global_noise_variance,
    group_index,
    parity_error,
    privacy_accounting,
    public_weights,
    relative_errors,
    split_public_private,
    stratified_mean,
    stratified_noise_variance,
    sum_log_best_case,
    sum_log_expected_dirichlet,
    sum_log_lower_bound,
    sum_log_worst_case,
)
from dpcore.validation import DPInputError
from dpcore.views.stratified import (
    NY_RACE_COUNTS,
    NY_SEX_RACE_COUNTS,
    bound_curves,
    dirichlet_group_sizes,
    fit_symmetric_dirichlet,
    gaussian_mixture,
    ny_race_example,
    preset_counts,
    simulate_laplace_releases,
    sizes_from_proportions,
)

# ---------------------------------------------------------------------------------------------
# Groups and clipping
# ---------------------------------------------------------------------------------------------


def test_group_index_sorts_labels_and_counts():
    gi = group_index(["b", "a", "b", "c", "a", "b"])
    assert gi.labels == ("a", "b", "c")
    assert gi.counts.tolist() == [2, 3, 1]
    assert gi.codes.tolist() == [1, 0, 1, 2, 0, 1]


def test_group_index_caps_levels_with_a_clear_message():
    labels = np.arange(MAX_GROUPS + 1)
    with pytest.raises(DPInputError, match=r"101 levels.*cap of 100"):
        group_index(labels)
    assert group_index(np.arange(MAX_GROUPS)).k == MAX_GROUPS


def test_group_index_rejects_missing_labels():
    with pytest.raises(DPInputError, match="missing labels"):
        group_index([1.0, np.nan, 2.0])
    with pytest.raises(DPInputError, match="missing labels"):
        group_index(np.array(["a", None], dtype=object))


def test_paper_clip_threshold_is_symmetric_and_uses_group_size():
    """Digest §2.2/2.4: [-T_i, T_i], T_i = R + sqrt(ln|G_i| / gamma) (not [R - ., R + .])."""
    lo, hi = clip_thresholds(2.0, [1, 10, 1000], gamma=0.1)
    expected = 2.0 + np.sqrt(np.log([1, 10, 1000]) / 0.1)
    np.testing.assert_allclose(hi, expected)
    np.testing.assert_allclose(lo, -expected)
    # the printed interval [R - s, R + s] would clip a value at -R - s/2 into range; ours keeps it
    x = -2.0 - 0.5 * math.sqrt(math.log(1000) / 0.1)
    assert np.clip(x, lo[2], hi[2]) == x


def test_public_interval_clip():
    lo, hi = clip_thresholds((0.0, 100.0), [3, 5])
    assert lo.tolist() == [0.0, 0.0] and hi.tolist() == [100.0, 100.0]
    with pytest.raises(DPInputError, match="low < high"):
        clip_thresholds((5.0, 5.0), [3])
    with pytest.raises(DPInputError):
        clip_thresholds(-1.0, [3])


# ---------------------------------------------------------------------------------------------
# Laplace scale, sensitivity (brute force) and privacy loss
# ---------------------------------------------------------------------------------------------


def test_laplace_scale_per_group_and_global():
    x = np.array([1.0, 2.0, 3.0, 50.0, 4.0, 6.0, 8.0])
    g = np.array([0, 0, 0, 0, 1, 1, 1])
    r = stratified_mean(x, g, epsilon=0.5, clip_range=(0.0, 10.0), rng=1)
    np.testing.assert_allclose(r.sensitivity, [10.0 / 4, 10.0 / 3])
    np.testing.assert_allclose(r.noise_scale, [10.0 / 4 / 0.5, 10.0 / 3 / 0.5])
    gl = clipped_laplace_mean(x, epsilon=0.5, clip_range=(0.0, 10.0), rng=1)
    assert gl.noise_scale == pytest.approx(10.0 / 7 / 0.5)
    # paper's R form: noise Lap((2R + 2 sqrt(ln g / gamma)) / (g eps)) (Eq. 3)
    r2 = stratified_mean(x, g, epsilon=0.5, clip_range=1.5, gamma=0.2, rng=1)
    b = (2 * 1.5 + 2 * np.sqrt(np.log([4, 3]) / 0.2)) / (np.array([4, 3]) * 0.5)
    np.testing.assert_allclose(r2.noise_scale, b)


def _clipped_means(x, g, k, lo, hi):
    return np.array([np.clip(x[g == j], lo[j], hi[j]).mean() for j in range(k)])


@pytest.mark.parametrize("clip", [(0.0, 4.0), 1.0])
def test_sensitivity_bound_brute_force(clip):
    """Replace any one value (keeping its group) by any value on a wide grid: only its group's
    clipped mean moves, by at most the stated sensitivity, and the bound is attained."""
    x = np.array([0.5, 3.0, 2.0, 1.0, 4.0, 0.0])
    g = np.array([0, 0, 0, 1, 1, 1])
    counts = np.bincount(g)
    lo, hi = clip_thresholds(clip, counts)
    r = stratified_mean(x, g, epsilon=1.0, clip_range=clip, rng=0)
    base = _clipped_means(x, g, 2, lo, hi)
    grid = np.linspace(-20, 20, 81)
    worst = np.zeros(2)
    for i, v in itertools.product(range(x.size), grid):
        y = x.copy()
        y[i] = v
        d = np.abs(_clipped_means(y, g, 2, lo, hi) - base)
        other = 1 - g[i]
        assert d[other] == 0.0  # disjoint groups: parallel composition applies
        assert d[g[i]] <= r.sensitivity[g[i]] + 1e-12
        worst[g[i]] = max(worst[g[i]], d[g[i]])
    # tight on the grid (the grid reaches beyond the clip interval, so the extremes are hit)
    c = np.clip(x, lo[g], hi[g])
    expected = [max(np.max(hi[j] - c[g == j]), np.max(c[g == j] - lo[j])) / counts[j] for j in range(2)]
    np.testing.assert_allclose(worst, expected, rtol=1e-12)
    if isinstance(clip, tuple):  # group 1 has members at both ends of [0, 4]: the bound is attained
        assert worst[1] == pytest.approx(r.sensitivity[1])


def test_privacy_loss_of_release_is_epsilon():
    """Compute the actual privacy loss sup_y |ln p(y|X) - ln p(y|X')| of the k-vector release for
    the worst neighbour found by brute force: it equals epsilon (never more)."""
    eps = 0.7
    x = np.array([0.5, 3.0, 2.0, 1.0, 4.0, 0.0, 2.5])
    g = np.array([0, 0, 0, 1, 1, 1, 1])
    clip = (0.0, 4.0)
    r = stratified_mean(x, g, epsilon=eps, clip_range=clip, rng=0)
    lo, hi = clip_thresholds(clip, np.bincount(g))
    base = _clipped_means(x, g, 2, lo, hi)
    ys = np.linspace(-30, 30, 6001)
    worst_loss = 0.0
    for i, v in itertools.product(range(x.size), np.linspace(-5, 9, 29)):
        xx = x.copy()
        xx[i] = v
        other = _clipped_means(xx, g, 2, lo, hi)
        # the output density is a product over groups; unchanged groups cancel in the ratio
        loss = 0.0
        for j in range(2):
            lp = stats.laplace.logpdf(ys, loc=base[j], scale=r.noise_scale[j])
            lq = stats.laplace.logpdf(ys, loc=other[j], scale=r.noise_scale[j])
            loss += np.max(np.abs(lp - lq))
        worst_loss = max(worst_loss, loss)
    assert worst_loss <= eps + 1e-9
    assert worst_loss >= eps - 1e-9  # calibration is tight: no budget wasted


def test_noise_is_laplace_with_stated_scale_ks():
    """KS test of (release - clipped mean) / scale against Laplace(0, 1), fixed seed, via the
    release function itself (not the simulator)."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=60)
    g = np.repeat([0, 1, 2], 20)
    clip = (-2.0, 2.0)
    lo, hi = clip_thresholds(clip, [20, 20, 20])
    means = _clipped_means(x, g, 3, lo, hi)
    draws = np.array([stratified_mean(x, g, epsilon=1.0, clip_range=clip, rng=rng).per_group for _ in range(600)])
    z = ((draws - means) / (4.0 / 20 / 1.0)).ravel()
    assert stats.kstest(z, stats.laplace.cdf).pvalue > 1e-3
    # a wrong scale is detected by the same test
    assert stats.kstest(z * 1.3, stats.laplace.cdf).pvalue < 1e-3


def test_simulator_matches_release_distribution():
    rng = np.random.default_rng(3)
    x = rng.normal(size=40)
    g = np.repeat([0, 1], 20)
    sim = simulate_laplace_releases(x, g, epsilon=0.5, clip_range=(-2, 2), n_sims=4000, rng=1)
    one = np.array([stratified_mean(x, g, epsilon=0.5, clip_range=(-2, 2), rng=rng).per_group[0] for _ in range(400)])
    assert stats.ks_2samp(sim.strat_groups[:, 0], one).pvalue > 1e-3
    assert sim.strat_overall == pytest.approx(sim.strat_groups @ sim.weights)


def test_stratified_variance_matches_formula_by_simulation():
    """Var(overall) = sum_i w_i^2 2 b_i^2; tolerance from the exact standard error of a sample
    variance (4th moment of a sum of independent Laplaces: mu4 = sum 24 c_i^4 + 6 sum_{i<j} v_i v_j)."""
    rng = np.random.default_rng(11)
    sizes = np.array([5, 40, 300, 1000])
    g = np.repeat(np.arange(4), sizes)
    x = rng.normal(size=g.size)
    eps = 0.3
    N = 40_000
    sim = simulate_laplace_releases(x, g, epsilon=eps, clip_range=1.0, n_sims=N, rng=5)
    lo, hi = clip_thresholds(1.0, sizes)
    var = stratified_noise_variance(sizes, sim.weights, eps, lo, hi)
    c = sim.weights * (hi - lo) / sizes / eps  # Laplace scale of each term
    v = 2 * c**2
    mu4 = np.sum(24 * c**4) + 6 * (np.sum(v) ** 2 - np.sum(v**2)) / 2
    se = math.sqrt((mu4 - var**2) / N)
    assert abs(np.var(sim.strat_overall) - var) < 4 * se
    # the global estimator's variance formula too
    glo, ghi = clip_thresholds(1.0, [x.size])
    gv = global_noise_variance(x.size, eps, glo[0], ghi[0])
    se_g = math.sqrt((24 * (gv / 2) ** 2 - gv**2) / N)
    assert abs(np.var(sim.global_overall) - gv) < 4 * se_g


def test_prop9_noise_comparison_uses_sum_of_log_group_sizes():
    """With w_i = |G_i|/n, the stratified noise variance over the global one is sum T_i^2 / T^2, and
    sum T_i^2 <= 2 k R^2 + 2 sum ln|G_i| / gamma <= 2 k R^2 + 2 k ln(n/k) / gamma (Lemma 12)."""
    rng = np.random.default_rng(2)
    R, gam, eps = 1.0, DEFAULT_GAMMA, 1.0
    for _ in range(200):
        k = int(rng.integers(2, 20))
        sizes = dirichlet_group_sizes(int(rng.integers(k + 2, 50_000)), k, float(rng.uniform(0.05, 3)), rng)
        n = int(sizes.sum())
        lo, hi = clip_thresholds(R, sizes, gamma=gam)
        T = hi
        glo, ghi = clip_thresholds(R, [n], gamma=gam)
        ratio = stratified_noise_variance(sizes, sizes / n, eps, lo, hi) / global_noise_variance(n, eps, glo[0], ghi[0])
        assert ratio == pytest.approx(np.sum(T**2) / ghi[0] ** 2)
        slog = np.sum(np.log(sizes))
        assert np.sum(T**2) <= 2 * k * R**2 + 2 * slog / gam + 1e-9
        assert slog <= sum_log_worst_case(n, k) + 1e-9


# ---------------------------------------------------------------------------------------------
# Weights: given, group sizes, PubStrat (never from the private data)
# ---------------------------------------------------------------------------------------------


def test_overall_is_weighted_combination_of_group_releases():
    x = np.arange(10.0)
    g = np.array([0] * 3 + [1] * 7)
    r = stratified_mean(x, g, epsilon=1.0, clip_range=(0, 9), rng=4)
    np.testing.assert_allclose(r.weights, [0.3, 0.7])
    assert r.overall == pytest.approx(0.3 * r.per_group[0] + 0.7 * r.per_group[1])
    r2 = stratified_mean(x, g, epsilon=1.0, clip_range=(0, 9), rng=4, weights={0: 0.5, 1: 0.5})
    assert r2.overall == pytest.approx(r2.per_group.mean())
    np.testing.assert_array_equal(r.per_group, r2.per_group)  # same seed, same noise


@pytest.mark.parametrize(
    "w, msg",
    [
        ([0.5, 0.6], "sum to 1"),
        ([1.2, -0.2], ">= 0"),
        ([1.0], "one entry per group"),
        ([np.nan, 1.0], "missing"),
        ({0: 1.0}, "missing for groups"),
        ({0: 0.5, 1: 0.25, 7: 0.25}, None),
    ],
)
def test_bad_weights_are_rejected(w, msg):
    x = np.arange(10.0)
    g = np.array([0] * 3 + [1] * 7)
    if msg is None:  # a weight for a label with no records: that group is empty, not an error
        r = stratified_mean(x, g, epsilon=1.0, clip_range=(0, 9), rng=1, weights=w)
        assert r.labels == (0, 1, 7) and r.empty.tolist() == [False, False, True]
        return
    with pytest.raises(DPInputError, match=msg):
        stratified_mean(x, g, epsilon=1.0, clip_range=(0, 9), weights=w)


def test_pubstrat_weights_come_only_from_the_public_sample():
    rng = np.random.default_rng(8)
    pop_groups = rng.choice(["A", "B", "C"], p=[0.6, 0.3, 0.1], size=4000)
    pop_values = rng.normal(size=4000)
    pv, pg, _, pubg = split_public_private(pop_values, pop_groups, public_fraction=0.3, rng=1)
    labels = group_index(pg).labels
    w = public_weights(pubg, labels)
    vals, cnt = np.unique(pubg, return_counts=True)
    np.testing.assert_allclose(w, cnt / cnt.sum())
    r = stratified_mean(pv, pg, epsilon=1.0, clip_range=(-3, 3), weights=w, rng=2)
    np.testing.assert_array_equal(r.weights, w)
    assert r.weights_source.startswith("given")
    # changing the private group composition does not change the weights used
    pg2 = pg.copy()
    pg2[: pg2.size // 2] = "C"
    r2 = stratified_mean(pv, pg2, epsilon=1.0, clip_range=(-3, 3), weights=w, rng=2)
    np.testing.assert_array_equal(r2.weights, w)
    # while the private proportions (the weights=None default) do change
    r3 = stratified_mean(pv, pg2, epsilon=1.0, clip_range=(-3, 3), rng=2)
    assert not np.allclose(r3.weights, w)
    # changing the public sample changes them
    pub2 = pubg.copy()
    pub2[:100] = "A"
    assert not np.allclose(public_weights(pub2, labels), w)


def test_public_private_split_is_disjoint():
    ids = np.arange(1000.0)
    groups = np.repeat(["x", "y"], 500)
    pv, pg, qv, qg = split_public_private(ids, groups, public_fraction=0.5, rng=3)
    assert pv.size + qv.size == 1000
    assert np.intersect1d(pv, qv).size == 0
    assert sorted(np.concatenate([pv, qv]).tolist()) == ids.tolist()


def test_public_weights_missing_group_gets_zero():
    w = public_weights(["a", "a", "b"], ["a", "b", "c"])
    np.testing.assert_allclose(w, [2 / 3, 1 / 3, 0.0])
    with pytest.raises(DPInputError, match="no group"):
        public_weights(["z"], ["a", "b"])


# ---------------------------------------------------------------------------------------------
# Small groups and bad input
# ---------------------------------------------------------------------------------------------


def test_group_of_one_and_empty_group_never_divide_by_zero():
    x = np.array([1.0, 2.0, 3.0, 7.0])
    g = np.array(["a", "a", "a", "b"])
    with np.errstate(all="raise"):
        r = stratified_mean(x, g, epsilon=1.0, clip_range=(0.0, 10.0), rng=1, levels=["a", "b", "c"])
    assert r.labels == ("a", "b", "c")
    assert r.counts.tolist() == [3, 1, 0]
    assert r.noise_scale[1] == pytest.approx(10.0)  # width / epsilon for one member
    assert r.per_group[2] == 5.0 and r.empty[2]  # midpoint, no data, no noise
    assert np.isfinite(r.per_group).all() and np.isfinite(r.overall)
    assert any("1 record" in n for n in r.notes) and any("no records" in n for n in r.notes)


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        (dict(values=["a", "b", "c"]), DPInputError, "only numbers"),
        (dict(values=[1.0, np.nan, 2.0]), DPInputError, "missing or infinite"),
        (dict(epsilon=0.0), DPInputError, "> 0"),
        (dict(epsilon=-1.0), DPInputError, "> 0"),
        (dict(epsilon=float("nan")), DPInputError, "NaN"),
        (dict(values=[1.0]), DPInputError, "at least 2"),
        (dict(groups=[0, 1]), DPInputError, "same length"),
        (dict(clip_range=(3.0, 1.0)), DPInputError, "low < high"),
        (dict(clip_range=(1.0, 2.0, 3.0)), DPInputError, "pair"),
        (dict(clip_range=("a", "b")), DPInputError, "two numbers"),
        (dict(clip_range=(0.0, float("inf"))), DPInputError, "finite"),
    ],
)
def test_bad_input_raises_precise_errors(kwargs, exc, msg):
    args = dict(values=[1.0, 2.0, 3.0], groups=[0, 0, 1], epsilon=1.0, clip_range=(0.0, 5.0))
    args.update(kwargs)
    with pytest.raises(exc, match=msg):
        stratified_mean(args.pop("values"), args.pop("groups"), **args)


# ---------------------------------------------------------------------------------------------
# Parity error (Definition 11)
# ---------------------------------------------------------------------------------------------


def test_parity_error_hand_computed():
    # omega = 1/2; overall term |10-11|/10 = 0.1; groups |4-5|/4 = 0.25, |20-18|/20 = 0.1
    phi = parity_error(10.0, 11.0, [4.0, 20.0], [5.0, 18.0])
    assert float(phi) == pytest.approx(0.5 * 0.1 + 0.25 + 0.1)
    assert phi == pytest.approx(0.4)
    assert phi.omega == 0.5 and phi.k == 2
    np.testing.assert_allclose(phi.per_group, [0.25, 0.1])
    assert parity_error(10.0, 11.0, [4.0, 20.0], [5.0, 18.0], omega=1.0) == pytest.approx(0.45)
    # negative truths use |f|
    assert parity_error(-2.0, -1.0, [-1.0], [1.0]) == pytest.approx(1 * 0.5 + 2.0)


def test_parity_error_is_a_sum_not_an_average():
    one = parity_error(1.0, 1.0, [1.0, 2.0], [1.1, 2.2])
    doubled = parity_error(1.0, 1.0, [1.0, 2.0] * 2, [1.1, 2.2] * 2)
    assert float(doubled) == pytest.approx(2 * float(one))


def test_parity_error_zero_truth():
    with pytest.raises(DPInputError, match="undefined"):
        parity_error(1.0, 1.0, [0.0, 2.0], [0.1, 2.2])
    phi = parity_error(1.0, 1.0, [0.0, 2.0], [0.1, 2.2], on_zero="skip")
    assert phi.skipped == (0,)
    assert float(phi) == pytest.approx(0.1)
    with pytest.raises(DPInputError):
        relative_errors([0.0], [1.0])


# ---------------------------------------------------------------------------------------------
# Bounds, Theorem 10, the NY example
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("alpha, k", [(0.13, 9), (0.5, 18), (1.0, 3)])
def test_theorem10_matches_monte_carlo(alpha, k):
    """E[sum_i ln(n g_i)] over g ~ Dirichlet(alpha, k) equals k(psi(a) - psi(k a) + ln n) (Thm. 10
    with |G_i| = g_i n, as an equality); tolerance 4 Monte Carlo standard errors."""
    n = 196_967
    rng = np.random.default_rng(100 + k)
    # sample via Gammas in log space so that tiny alpha cannot underflow to log(0)
    N = 40_000
    # log Gamma(a) variate: log(U^(1/a) * Gamma(a+1)) (Marsaglia-Tsang boost)
    logg = np.log(rng.gamma(alpha + 1.0, size=(N, k))) + np.log(rng.uniform(size=(N, k))) / alpha
    logv = logg - special.logsumexp(logg, axis=1, keepdims=True)
    s = np.sum(logv + math.log(n), axis=1)
    se = s.std(ddof=1) / math.sqrt(N)
    assert abs(s.mean() - sum_log_expected_dirichlet(n, k, alpha)) < 4 * se
    # "main text" mapping |G_i| = g_i / n gives a totally different number (the erratum)
    wrong = k * (special.digamma(alpha) - special.digamma(k * alpha) - math.log(n))
    assert abs(s.mean() - wrong) > 100 * se


def test_lemma12_and_curves_ordering():
    n, k = 196_967, 9
    assert sum_log_worst_case(n, k) == pytest.approx(k * math.log(n / k))
    sizes = sizes_from_proportions(np.ones(k), n)
    assert np.sum(np.log(sizes)) == pytest.approx(sum_log_worst_case(n, k), abs=1e-3)
    curves = bound_curves(n, k, np.linspace(0.2, 0.99, 20))
    exp_ = curves["expected, Dirichlet (Thm. 10)"]
    assert np.all(np.diff(exp_) > 0)  # interpolates upwards towards the worst case
    assert np.all(exp_ < curves["worst case k ln(n/k) (Prop. 9)"])
    assert np.all(exp_ > curves["informal lower bound k + ln n"])


def test_ny_example_recomputed_and_80_percent_not_reproduced():
    e = ny_race_example(0.13)
    assert e.n == 196_967 and e.k == 9
    assert e.worst == pytest.approx(89.94, abs=0.01)
    assert e.expected == pytest.approx(40.00, abs=0.01)
    assert e.best == pytest.approx(20.19, abs=0.01)
    assert e.lower == pytest.approx(21.19, abs=0.01)
    assert e.actual == pytest.approx(67.22, abs=0.01)
    assert e.improvement == pytest.approx(0.716, abs=0.001)
    assert abs(e.improvement - 0.80) > 0.05
    assert e.alpha_mle == pytest.approx(0.257, abs=0.005)
    np.testing.assert_allclose(
        np.sort(e.proportions)[::-1][:5], [0.70303, 0.12197, 0.08646, 0.05566, 0.02866], atol=1e-5
    )
    assert sum_log_best_case(e.n, e.k) == e.best and sum_log_lower_bound(e.n, e.k) == e.lower


def test_dirichlet_mle_solves_score_equation_and_recovers_alpha():
    v = np.array([0.5, 0.3, 0.2])
    a = fit_symmetric_dirichlet(v)
    k = 3
    assert k * special.digamma(k * a) - k * special.digamma(a) + np.log(v).sum() == pytest.approx(0, abs=1e-9)
    with pytest.raises(DPInputError):
        fit_symmetric_dirichlet([0.5, 0.5])
    with pytest.raises(DPInputError):
        fit_symmetric_dirichlet([1.0, 0.0])


# ---------------------------------------------------------------------------------------------
# Generators and presets
# ---------------------------------------------------------------------------------------------


def test_presets_match_paper_table3():
    assert sum(NY_RACE_COUNTS.values()) == 196_967 and len(NY_RACE_COUNTS) == 9
    assert sum(NY_SEX_RACE_COUNTS.values()) == 196_967 and len(NY_SEX_RACE_COUNTS) == 18
    c = preset_counts("NY RACE (k=9, paper Table 3)")
    sizes = sizes_from_proportions(np.array(list(c.values())) / 196_967, 196_967)
    assert sizes.tolist() == list(c.values())
    with pytest.raises(DPInputError):
        preset_counts("nope")


def test_sizes_from_proportions_rules():
    s = sizes_from_proportions([0.999, 0.0005, 0.0005], 100)
    assert s.sum() == 100 and s.min() >= 1 and s.tolist() == [98, 1, 1]
    with pytest.raises(DPInputError):
        sizes_from_proportions([0.5, 0.5], 1)


def test_dirichlet_sizes_distribution():
    """Share of group 0 over many draws ~ Beta(alpha, (k-1) alpha): KS on the proportions."""
    rng = np.random.default_rng(4)
    n, k, a = 100_000, 5, 0.7
    shares = np.array([dirichlet_group_sizes(n, k, a, rng)[0] / n for _ in range(1500)])
    assert stats.kstest(shares, stats.beta(a, (k - 1) * a).cdf).pvalue > 1e-3
    s = dirichlet_group_sizes(50, 10, 0.01, rng)
    assert s.sum() == 50 and s.min() >= 1


def test_gaussian_mixture_follows_paper_model():
    m = gaussian_mixture(20_000, 6, 1.0, rng=3)
    assert m.values.size == 20_000 and m.sizes.sum() == 20_000 and m.k == 6
    assert np.all((m.sigmas >= 0.1) & (m.sigmas <= 2.0))
    z = (m.values - m.mus[m.groups]) / m.sigmas[m.groups]
    assert stats.kstest(z, "norm").pvalue > 1e-3
    m2 = gaussian_mixture(100, 0, 1.0, rng=3, sizes=[10, 0, 90])
    assert m2.k == 3 and m2.sizes.tolist() == [10, 0, 90]


def test_privacy_accounting_numbers():
    a = privacy_accounting(0.5, 18)
    assert a.all_groups == 0.5 and a.combined_overall == 0.0
    assert a.groups_plus_fresh_global == 1.0 and a.if_group_can_change == 1.0
    assert any("parallel" in line for line in a.lines) and any("sequential" in line for line in a.lines)


@pytest.mark.slow
def test_acs_sex_by_race_group_means(acs_path):
    """Real data: group means of PINCP and AGEP by SEX x RAC1P on the ACS excerpt run end to end."""
    import pandas as pd

    df = pd.read_csv(acs_path, usecols=["PINCP", "AGEP", "SEX", "RAC1P"])
    df = df.dropna(subset=["PINCP"])
    labels = df["SEX"].astype(int).astype(str) + "x" + df["RAC1P"].astype(int).astype(str)
    r = stratified_mean(df["PINCP"].to_numpy(), labels.to_numpy(), epsilon=1.0, clip_range=(0, 250_000), rng=1)
    assert r.k == labels.nunique() and r.k <= 18
    assert r.counts.sum() == len(df)
    clipped = df["PINCP"].clip(0, 250_000).groupby(labels).mean().sort_index().to_numpy()
    # every release is within 8 noise standard deviations of its group's clipped mean
    assert np.all(np.abs(r.per_group - clipped) < 8 * np.sqrt(2) * r.noise_scale)
    assert np.all(r.noise_scale[r.counts > 1000] < 250)
    a = stratified_mean(df["AGEP"].to_numpy(), labels.to_numpy(), epsilon=1.0, clip_range=(0, 100), rng=1)
    assert np.isfinite(a.per_group).all()
