"""Tests of dpcore.planner: every solved epsilon meets its target under an independent simulation
(using the method modules' own samplers), and an epsilon 10% smaller does not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import noise
from dpcore import planner as P
from dpcore.planner import closed_forms
from dpcore.validation import DPInputError
from dpcore.views import stratified as strat_experiments

TARGET = P.AccuracyTarget(rel_error=0.05, confidence=0.95)


@pytest.fixture(scope="module")
def incomes():
    return np.random.default_rng(11).lognormal(10.5, 0.9, 8000)


@pytest.fixture(scope="module")
def groups(incomes):
    return np.random.default_rng(12).choice(np.array(["a", "b", "c"]), incomes.size, p=[0.5, 0.3, 0.2])


def _check_meets_and_not_below(success: np.ndarray, success_smaller: np.ndarray, conf: float) -> None:
    """success arrays of booleans from independent simulations at eps* and 0.9 eps*.
    At eps* the success rate must be >= conf up to 4 standard errors (the closed forms put it exactly at
    conf); at 0.9 eps* it must be below conf by more than 4 standard errors."""
    n = success.size
    se = math.sqrt(conf * (1 - conf) / n)
    p, p_small = success.mean(), success_smaller.mean()
    assert p >= conf - 4 * se, (p, conf, se)
    assert p_small < conf - 4 * se, (p_small, conf, se)


# ---------------------------------------------------------------------------------------------
# closed forms
# ---------------------------------------------------------------------------------------------


def test_laplace_closed_form_hand_value():
    # t = 1, s = 1, 95%: eps = ln 20
    assert P.laplace_epsilon_for_error(1.0, 1.0, 0.95) == pytest.approx(math.log(20))
    # geometric: m = 0 -> P(K = 0) = (1 - q)/(1 + q) >= 0.95 -> q = 0.05/1.95, eps = ln 39
    assert P.geometric_epsilon_for_error(0.5, 0.95) == pytest.approx(math.log(39), rel=1e-9)


def test_geometric_closed_form_against_pmf():
    for m, eps in [(0, 0.3), (3, 0.5), (20, 0.05)]:
        k = np.arange(-m, m + 1)
        assert closed_forms.geometric_prob_within(m, eps) == pytest.approx(
            noise.two_sided_geometric_pmf(k, eps).sum(), rel=1e-12
        )


def test_count_solution_independent_simulation(incomes):
    stat = P.CountAbove(incomes, 60_000)
    sol = P.solve_epsilon(stat, TARGET)
    assert sol.achieved >= TARGET.confidence and sol.mc_se == 0
    rng = np.random.default_rng(5)
    tol = TARGET.rel_error * stat.count
    n = 200_000
    ok = np.abs(noise.sample_two_sided_geometric(sol.epsilon, n, rng=rng)) <= tol
    ok_small = np.abs(noise.sample_two_sided_geometric(0.9 * sol.epsilon, n, rng=rng)) <= tol
    _check_meets_and_not_below(ok, ok_small, TARGET.confidence)


def test_clipped_mean_solution_independent_simulation(incomes):

    stat = P.ClippedMean(incomes, 0.0, 400_000)
    sol = P.solve_epsilon(stat, TARGET)
    truth = incomes.mean()
    one = np.zeros(incomes.size, dtype=int)

    def sim(eps, seed):
        r = strat_experiments.simulate_laplace_releases(
            incomes, one, epsilon=eps, clip_range=(0.0, 400_000), n_sims=200_000, rng=seed
        )
        return np.abs(np.asarray(r.global_overall) - truth) <= TARGET.rel_error * truth

    _check_meets_and_not_below(sim(sol.epsilon, 1), sim(0.9 * sol.epsilon, 2), TARGET.confidence)


def test_group_means_solution_independent_simulation(incomes, groups):

    stat = P.GroupMeans(incomes, groups, 0.0, 400_000)
    sol = P.solve_epsilon(stat, TARGET)
    truth = stat.truth

    def sim(eps, seed):
        r = strat_experiments.simulate_laplace_releases(
            incomes, groups, epsilon=eps, clip_range=(0.0, 400_000), n_sims=100_000, rng=seed
        )
        return np.all(np.abs(np.asarray(r.strat_groups) - truth) <= TARGET.rel_error * truth, axis=1)

    _check_meets_and_not_below(sim(sol.epsilon, 3), sim(0.9 * sol.epsilon, 4), TARGET.confidence)
    assert "parallel" in sol.parallel_note


def test_clipping_bias_makes_target_unreachable(incomes):
    stat = P.ClippedMean(incomes, 0.0, 60_000)  # heavy clipping: bias far above 5%
    with pytest.raises(DPInputError, match="clip"):
        P.solve_epsilon(stat, TARGET)


def test_error_quantile_inverts_prob_within(incomes):
    stat = P.ClippedMean(incomes, 0.0, 400_000)
    r, _ = stat.error_quantile(0.05, 0.9)
    assert stat.prob_within(0.05, r)[0] == pytest.approx(0.9, abs=1e-4)
    # pure Laplace without bias: quantile = b ln(1/(1-conf)) / truth up to the bias shift
    assert r > 0


def test_simulate_shapes_and_centre(incomes, groups):
    stat = P.GroupMeans(incomes, groups, 0.0, 400_000)
    sims = stat.simulate(1.0, 5000, rng=1)
    assert sims.shape == (5000, 3)
    se = sims.std(axis=0) / math.sqrt(5000)
    assert np.all(np.abs(sims.mean(axis=0) - (stat.truth + stat.bias)) < 5 * se)


def test_plan_total_sequential():
    tot = P.plan_total([("a", 0.2), ("b", 0.3)])
    assert tot.epsilon == pytest.approx(0.5)
    with pytest.raises(DPInputError):
        P.plan_total([])


# ---------------------------------------------------------------------------------------------
# budget first
# ---------------------------------------------------------------------------------------------


def test_split_budget_weights_and_locks():
    np.testing.assert_allclose(P.split_budget(1.0, [1, 1, 2]), [0.25, 0.25, 0.5])
    np.testing.assert_allclose(P.split_budget(1.0, [1, 2, 1], {0: 0.1}), [0.1, 0.6, 0.3])
    with pytest.raises(DPInputError, match="more than the total"):
        P.split_budget(1.0, [1, 1], {0: 2.0})
    with pytest.raises(DPInputError, match="whole budget"):
        P.split_budget(1.0, [1, 1], {0: 1.0})
    with pytest.raises(DPInputError):
        P.split_budget(0.0, [1, 1])


def test_rebalance_keeps_total_and_locks():
    out = P.rebalance([0.2, 0.3, 0.5], 0, 0.4, locked=[2])
    np.testing.assert_allclose(out, [0.4, 0.1, 0.5])
    assert out.sum() == pytest.approx(1.0)
    out = P.rebalance([0.2, 0.3, 0.5], 1, 0.5)
    assert out.sum() == pytest.approx(1.0) and out[1] == pytest.approx(0.5)
    assert out[0] / out[2] == pytest.approx(0.2 / 0.5)
    out = P.rebalance([0.2, 0.3, 0.5], 1, 5.0)  # capped: others keep a positive share
    assert np.all(out > 0) and out.sum() == pytest.approx(1.0)


def test_bad_inputs(incomes):
    with pytest.raises(DPInputError):
        P.AccuracyTarget(rel_error=0)
    with pytest.raises(DPInputError):
        P.AccuracyTarget(confidence=1.0)
    with pytest.raises(DPInputError):
        P.ClippedMean(incomes, 10, 5)
    with pytest.raises(DPInputError):
        P.ClippedMean([1.0, float("nan")], 0, 5)
    with pytest.raises(DPInputError):
        P.ClippedMean([1.0], 0, 5)
    with pytest.raises(DPInputError):
        P.GroupMeans(incomes, np.array(["a"] * 3), 0, 1)
    with pytest.raises(DPInputError, match="0"):
        P.CountAbove(incomes, 1e12).prob_within(1.0, 0.05)
    with pytest.raises(DPInputError):
        P.CountAbove(incomes, 1.0).prob_within(-1.0, 0.05)
    with pytest.raises(TypeError):
        P.solve_epsilon(P.CountAbove(incomes, 1.0), 0.05)


# ---------------------------------------------------------------------------------------------
# Gini, percentiles, ratio: independent simulations with the method modules' own code
# ---------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_gini_solution_independent_simulation():
    from dpcore import gini

    x = np.random.default_rng(21).lognormal(10.5, 0.9, 3000)
    target = P.AccuracyTarget(rel_error=0.10, confidence=0.90)
    truth = gini.gini(x)
    for calibration in ("tight", "paper"):
        stat = P.GiniStatistic(x, 0.0, 1_000_000, gamma=2.0, calibration=calibration)
        sol = P.solve_epsilon(stat, target)

        def sim(eps, seed):
            r = gini.simulate_gini_releases(
                x,
                epsilon=eps,
                gamma=2.0,
                lower=0.0,
                upper=1_000_000,
                n_releases=200_000,
                calibration=calibration,
                rng=seed,
            )
            return np.abs(r.releases - truth) <= target.rel_error * truth

        _check_meets_and_not_below(sim(sol.epsilon, 1), sim(0.9 * sol.epsilon, 2), target.confidence)


def test_gini_scale_matches_release_module():
    from dpcore import gini

    x = np.random.default_rng(22).lognormal(10.5, 0.9, 2000)
    stat = P.GiniStatistic(x, 0.0, 1_000_000, calibration="paper")
    r = gini.simulate_gini_releases(
        x, epsilon=1.0, gamma=2.0, lower=0.0, upper=1_000_000, n_releases=10, calibration="paper", rng=0
    )
    assert stat.scale(1.0) == pytest.approx(r.noise_scale, rel=1e-9)
    tight = P.GiniStatistic(x, 0.0, 1_000_000)
    assert tight.calibration == "tight"
    r = gini.simulate_gini_releases(
        x, epsilon=1.0, gamma=2.0, lower=0.0, upper=1_000_000, n_releases=10, calibration="tight", rng=0
    )
    assert tight.scale(1.0) == pytest.approx(r.noise_scale, rel=1e-9)
    assert tight.scale(1.0) < stat.scale(1.0) / 4  # the certified tight alpha: several times less noise


def test_percentiles_solution_independent_simulation():
    from dpcore import percentiles

    rng = np.random.default_rng(31)
    cells = [rng.lognormal(10.7, 0.6, 2000), rng.lognormal(10.9, 0.5, 900)]
    target = P.AccuracyTarget(rel_error=0.10, confidence=0.90)
    stat = P.PercentilesStatistic(cells, seed=4, n_sims=4000)
    sol = P.solve_epsilon(stat, target)
    lo, hi = sol.epsilon_interval
    assert lo <= hi == sol.epsilon and sol.mc_se > 0
    truth = np.vstack([percentiles.empirical_percentile(c) for c in cells])
    counts = np.vstack([percentiles.histogram_counts(c).counts for c in cells])

    def sim(eps, seed):
        v = percentiles.simulate_histogram_percentiles(
            counts, percentiles.PSEO_BIN_EDGES, epsilon=eps, q=(25, 50, 75), n_draws=50_000, rng=seed
        )
        ok = np.all(np.abs(v - truth[None]) <= target.rel_error * truth[None], axis=2)  # (draws, cells)
        worst = int(np.argmin(ok.mean(axis=0)))
        return ok[:, worst]

    _check_meets_and_not_below(sim(sol.epsilon, 5), sim(0.9 * sol.epsilon, 6), target.confidence)


def test_percentiles_crn_noise_is_two_sided_geometric():
    """floor(E1/e) - floor(E2/e) has the two-sided geometric law (chi-square against the exact PMF)."""
    from scipy import stats

    e = 0.4
    gen = np.random.default_rng(8)
    k = (np.floor(gen.standard_exponential(200_000) / e) - np.floor(gen.standard_exponential(200_000) / e)).astype(int)
    support = np.arange(-10, 11)
    obs = np.array([np.count_nonzero(k == v) for v in support] + [np.count_nonzero(np.abs(k) > 10)])
    pmf = noise.two_sided_geometric_pmf(support, e)
    exp = np.append(pmf, 1 - pmf.sum()) * k.size
    assert stats.chisquare(obs, exp).pvalue > 1e-3


def test_percentiles_binning_error_refused():
    rng = np.random.default_rng(3)
    stat = P.PercentilesStatistic([rng.lognormal(10.7, 0.6, 3000)], seed=1, n_sims=500)
    with pytest.raises(DPInputError, match="does not reach"):
        P.solve_epsilon(stat, P.AccuracyTarget(rel_error=0.001, confidence=0.9))


def test_ratio_solution_independent_simulation():
    stat = P.RatioStatistic(300, 200, 5000, 5000)
    target = P.AccuracyTarget(rel_error=0.10, confidence=0.95)
    sol = P.solve_epsilon(stat, target)
    r = 300 / 200
    rng = np.random.default_rng(9)

    def sim(eps):
        b = 2.0 / eps
        xs = 300 + rng.laplace(0, b, 400_000)
        ys = 200 + rng.laplace(0, b, 400_000)
        return np.abs(xs / ys - r) < target.rel_error * r

    _check_meets_and_not_below(sim(sol.epsilon), sim(0.9 * sol.epsilon), target.confidence)


def test_ratio_reference_value_from_spec():
    # spec table: x=50, y=100, eps=0.5, alpha=0.1 -> beta = 0.10844 (alpha = 0.2 relative error of r=0.5)
    stat = P.RatioStatistic(50, 100, 1000, 1000)
    p, _ = stat.prob_within(0.5, 0.2)
    assert 1 - p == pytest.approx(0.10844, abs=1e-5)


def test_releases_use_method_modules(incomes, groups):
    """simulate_draw() calls the method modules and returns one number per label."""
    stats_ = [
        P.CountAbove(incomes, 60_000),
        P.ClippedMean(incomes, 0, 400_000),
        P.GroupMeans(incomes, groups, 0, 400_000),
        P.RatioStatistic(30, 20, 100, 100),
        P.PercentilesStatistic([incomes[:500], incomes[500:900]], n_sims=200),
    ]
    for s in stats_:
        v = s.simulate_draw(1.0, rng=np.random.default_rng(0))
        assert v.shape == (len(s.labels),) and np.all(np.isfinite(v))
        sims = s.simulate(1.0, 50, rng=1)
        assert sims.shape == (50, len(s.labels))


def test_plan_total_type_checks():
    with pytest.raises(TypeError):
        P.plan_total(np.array([float("nan"), 1.0]))
    with pytest.raises(DPInputError):
        P.plan_total([("a", float("nan"))])


def test_gini_small_epsilon_uses_conservative_fast_bound():
    from dpcore import gini

    x = np.random.default_rng(23).lognormal(10.5, 0.9, 2000)
    stat = P.GiniStatistic(x, 0.0, 1_000_000, calibration="paper")
    xs, _, _ = gini.clip_incomes(x, lower=0.0, upper=1_000_000)
    eps = 0.03
    exact = gini.smooth_sensitivity(xs, lower=0.0, upper=1_000_000, beta=eps / 2, method="exact").value
    assert stat.scale(eps) >= exact / (eps / 8) * (1 - 1e-12)  # never less noise than the release will have
    grid = [0.01, 0.03, 0.049, 0.05, 0.07, 0.2]
    scales = [stat.scale(e) for e in grid]
    assert all(a >= b for a, b in zip(scales[:-1], scales[1:], strict=True))  # monotone across the switch at 0.05


def test_rebalance_floor_keeps_every_statistic_above_the_slider_minimum():
    out = P.rebalance([0.0125] * 4, 0, 0.05, total=0.05, floor=0.001)
    assert out.sum() == pytest.approx(0.05) and np.all(out[1:] >= 0.001 - 1e-15)
    with pytest.raises(DPInputError):
        P.rebalance([0.5, 0.5], 0, 0.3, locked=[1], total=0.5005, floor=0.001)


def test_split_budget_all_locked_refuses_a_new_total():
    with pytest.raises(DPInputError, match="locked"):
        P.split_budget(2.0, [1, 1], {0: 0.5, 1: 0.5})
    np.testing.assert_allclose(P.split_budget(1.0, [1, 1], {0: 0.5, 1: 0.5}), [0.5, 0.5])


# ---------------------------------------------------------------------------------------------
# Real releases draw from dpcore.noise.secure (OpenDP / certified sampler)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kind, kw, needle",
    [
        ("count", dict(threshold=30_000), "make_laplace(vector_domain(atom_domain(T=i64))"),
        ("mean", dict(upper=2e5), "make_laplace(vector_domain(atom_domain(T=f64"),
        ("group_means", dict(upper=2e5), "make_laplace(vector_domain(atom_domain(T=f64"),
        ("percentiles", dict(n_sims=100), "make_laplace(vector_domain(atom_domain(T=i64))"),
        ("ratio", dict(threshold=30_000), "make_laplace(vector_domain(atom_domain(T=f64"),
        ("gini", dict(upper=2e5), "certified generalized-Cauchy sampler"),
    ],
)
def test_real_release_draw_names_its_measurement_and_certifies_epsilon(kind, kw, needle):
    rng = np.random.default_rng(3)
    x = rng.lognormal(10.3, 0.7, 400)
    groups = np.where(np.arange(400) % 2 == 0, "a", "b")
    stat = P.make_statistic(kind, x, groups, **kw)
    draw = stat._draw(0.8)  # the real draw (no seed)
    assert needle in draw.measurement and not draw.simulated
    assert draw.epsilon <= 0.8 * (1 + 1e-9) + 1e-12 and draw.delta == 0.0
    assert stat.privacy_cost(0.8).kind == "pure" and stat.privacy_cost(0.8).epsilon == pytest.approx(0.8)
    assert np.all(np.isfinite(draw.values))
    sim = stat._draw(0.8, rng=5)
    assert sim.simulated and np.array_equal(sim.values, stat._draw(0.8, rng=5).values)
