"""Tests of dpcore.planner: every solved epsilon meets its target under an independent simulation
(using the method modules' own samplers), and an epsilon 10% smaller does not."""
from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import noise, planner as P
from dpcore.validation import DPInputError

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
        assert P._geometric_prob_within(m, eps) == pytest.approx(noise.two_sided_geometric_pmf(k, eps).sum(), rel=1e-12)


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
    from dpcore import stratified

    stat = P.ClippedMean(incomes, 0.0, 400_000)
    sol = P.solve_epsilon(stat, TARGET)
    truth = incomes.mean()
    one = np.zeros(incomes.size, dtype=int)

    def sim(eps, seed):
        r = stratified.simulate_laplace_releases(incomes, one, epsilon=eps, clip_range=(0.0, 400_000),
                                                 n_sims=200_000, rng=seed)
        return np.abs(np.asarray(r.global_overall) - truth) <= TARGET.rel_error * truth

    _check_meets_and_not_below(sim(sol.epsilon, 1), sim(0.9 * sol.epsilon, 2), TARGET.confidence)


def test_group_means_solution_independent_simulation(incomes, groups):
    from dpcore import stratified

    stat = P.GroupMeans(incomes, groups, 0.0, 400_000)
    sol = P.solve_epsilon(stat, TARGET)
    truth = stat.truth

    def sim(eps, seed):
        r = stratified.simulate_laplace_releases(incomes, groups, epsilon=eps, clip_range=(0.0, 400_000),
                                                 n_sims=100_000, rng=seed)
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
