"""dpcore.coinpress: UVM / UVMRec / StratCoinpress under zCDP, conversions, calibration, coverage."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.coinpress import (
    _clipped_sums,
    _prefix_sums,
    _prepare,
    _uvmrec_core,
    coinpress_mean,
    coinpress_schedule,
    pure_dp_to_zcdp,
    simulate_coinpress,
    stratified_coinpress,
    uvm_step,
    zcdp_to_dp,
)
from dpcore.stratified import group_index, public_weights
from dpcore.validation import DPInputError


def test_zcdp_conversion_is_bun_steinke_exact():
    assert zcdp_to_dp(0.5, 1e-6) == pytest.approx(0.5 + 2 * math.sqrt(0.5 * math.log(1e6)))
    # the paper's form eps sqrt(2 ln(1/delta)) with eps = sqrt(2 rho) drops the rho term
    assert zcdp_to_dp(0.5, 1e-6) - math.sqrt(2 * 0.5) * math.sqrt(2 * math.log(1e6)) == pytest.approx(0.5)
    assert pure_dp_to_zcdp(1.0) == 0.5
    try:
        from dpcore.budget import zcdp_to_approx_dp
    except ImportError:  # pragma: no cover - the ledger is another module
        return
    assert zcdp_to_dp(0.3, 1e-5) == pytest.approx(zcdp_to_approx_dp(0.3, 1e-5, method="bun-steinke"))


@pytest.mark.parametrize(
    "t, expected",
    [(1, [1.0]), (2, [0.25, 0.75]), (3, [0.125, 0.125, 0.75]), (4, [1 / 12] * 3 + [0.75]), (10, [1 / 36] * 9 + [0.75])],
)
def test_schedule_matches_reference_code(t, expected):
    s = coinpress_schedule(1.0, t)
    np.testing.assert_allclose(s, expected)
    assert s.sum() == pytest.approx(1.0)


def test_clipped_sums_fast_path_matches_brute_force():
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    g = rng.integers(0, 4, size=300)
    gi = group_index(g)
    xs, starts, _ = _prepare(x, gi.codes, gi.counts)
    cs = _prefix_sums(xs, starts, gi.counts)
    a = rng.normal(size=(7, 4))
    b = a + rng.uniform(0, 3, size=(7, 4))
    codes = np.repeat(np.arange(4), gi.counts)
    brute = np.array([[np.clip(xs[codes == j], a[s, j], b[s, j]).sum() for j in range(4)] for s in range(7)])
    np.testing.assert_allclose(_clipped_sums(xs, cs, starts, gi.counts, a, b), brute, rtol=1e-12, atol=1e-9)


def test_uvm_sensitivity_brute_force():
    """Replacing one value by anything moves the clamped mean by at most Delta = (r - l + 2w)/n,
    and the bound is attained."""
    x = np.array([0.1, -0.3, 0.7, 0.2, 1.5])
    step = uvm_step(x, -1.0, 1.0, sigma=0.5, rho=0.5, beta=0.1, rng=0)
    w = 0.5 * math.sqrt(2 * math.log(2 * 5 / 0.1))
    assert step.clamp_low == pytest.approx(-1 - w) and step.clamp_high == pytest.approx(1 + w)
    assert step.sensitivity == pytest.approx((2 + 2 * w) / 5)
    assert step.noise_sd == pytest.approx(step.sensitivity / math.sqrt(2 * 0.5))
    base = np.clip(x, step.clamp_low, step.clamp_high).mean()
    worst = 0.0
    for i, v in itertools.product(range(5), np.linspace(-10, 10, 201)):
        y = x.copy()
        y[i] = v
        d = abs(np.clip(y, step.clamp_low, step.clamp_high).mean() - base)
        assert d <= step.sensitivity + 1e-12
        worst = max(worst, d)
    # the worst replacement moves one value from one end to the other only if it sits at an end;
    # here the attained maximum is max_i max(hi - x_i, x_i - lo) / n
    c = np.clip(x, step.clamp_low, step.clamp_high)
    assert worst == pytest.approx(max(np.max(step.clamp_high - c), np.max(c - step.clamp_low)) / 5)


@pytest.mark.parametrize("order", [1.5, 2.0, 5.0, 20.0])
def test_gaussian_step_is_rho_zcdp_by_numerical_renyi_divergence(order):
    """D_alpha(N(0, s^2) || N(Delta, s^2)) computed by quadrature equals alpha * rho_step when
    s = Delta / sqrt(2 rho_step): the calibration is exactly rho-zCDP (Def. 2/6), not looser."""
    x = np.zeros(50)
    step = uvm_step(x, -2.0, 3.0, sigma=1.0, rho=0.3, beta=0.05, rng=1)
    s, d = step.noise_sd, step.sensitivity
    y = np.linspace(-60 * s - order * d, 60 * s + order * d, 400_001)
    log_int = order * stats.norm(0, s).logpdf(y) + (1 - order) * stats.norm(d, s).logpdf(y)
    m = log_int.max()
    renyi = (m + math.log(integrate.trapezoid(np.exp(log_int - m), y))) / (order - 1)
    assert renyi == pytest.approx(order * 0.3, rel=1e-6)


def test_uvm_noise_is_gaussian_with_stated_sd_ks():
    rng = np.random.default_rng(5)
    x = rng.normal(0.2, 1.0, size=200)
    steps = [uvm_step(x, -3.0, 3.0, sigma=1.0, rho=0.1, beta=0.05, rng=rng) for _ in range(3000)]
    clamped = np.clip(x, steps[0].clamp_low, steps[0].clamp_high).mean()
    z = np.array([(s.center - clamped) / s.noise_sd for s in steps])
    assert stats.kstest(z, "norm").pvalue > 1e-3
    assert stats.kstest(z / 1.3, "norm").pvalue < 1e-3  # the test notices a 30 % wrong sd


def test_uvmrec_final_noise_sd_is_deterministic_and_correct():
    """Step widths do not depend on the data, so the last step's noise sd is a known number:
    value - mean(x) ~ N(0, sd_t^2) exactly when no point is clamped (checked)."""
    rng = np.random.default_rng(9)
    n, sigma, rho, t, beta = 400, 1.0, 0.2, 3, 0.1
    x = rng.normal(0.5, sigma, size=n)
    sched = coinpress_schedule(rho, t)
    lo, hi = -4.0, 4.0
    for j in range(t):
        b_s = beta / (4 * (t - 1)) if j < t - 1 else beta / 4
        w = sigma * math.sqrt(2 * math.log(2 * n / b_s))
        sd = (hi - lo + 2 * w) / n / math.sqrt(2 * sched[j])
        half = math.sqrt(2 * (sigma**2 / n + sd**2) * math.log(2 / b_s))
        lo, hi = -half, half  # only the width matters for the next step
    z, flo, fhi = _uvmrec_core(
        np.sort(x),
        np.array([0]),
        np.array([n]),
        -4.0,
        4.0,
        np.array([sigma]),
        sched,
        np.array([beta]),
        np.random.default_rng(1),
        3000,
    )
    np.testing.assert_allclose(fhi - flo, 2 * half)
    # no point was clamped in any run: every window contains [min x, max x]
    assert x.min() > -4 - sigma * math.sqrt(2 * math.log(2 * n / (beta / 8)))
    r = (z[:, 0] - x.mean()) / sd
    assert stats.kstest(r, "norm").pvalue > 1e-3


def test_coinpress_covers_mu_with_stated_probability():
    """On N(mu, sigma^2) data the final interval (the stated error) contains mu with probability
    >= 1 - beta; 4000 datasets, tolerance 3 binomial standard errors."""
    rng = np.random.default_rng(21)
    n, mu, sigma, beta = 200, 1.7, 2.0, 0.2
    hits = 0
    N = 4000
    for _ in range(N // 200):
        x = rng.normal(mu, sigma, size=n)
        _, lo, hi = _uvmrec_core(
            np.sort(x),
            np.array([0]),
            np.array([n]),
            -10.0,
            10.0,
            np.array([sigma]),
            coinpress_schedule(0.5, 2),
            np.array([beta]),
            rng,
            200,
        )
        hits += int(np.sum((lo[:, 0] <= mu) & (mu <= hi[:, 0])))
    cover = hits / N
    assert cover >= 1 - beta - 3 * math.sqrt(beta * (1 - beta) / N)
    r = coinpress_mean(rng.normal(mu, sigma, size=n), rho=0.5, lower=-10, upper=10, sigma=sigma, beta=beta, rng=1)
    assert r.interval[0] < r.value < r.interval[1]
    assert r.stated_error == pytest.approx((r.interval[1] - r.interval[0]) / 2)
    assert r.epsilon(1e-6) == pytest.approx(zcdp_to_dp(0.5, 1e-6))


def test_stratified_coinpress_group_coverage_and_weights():
    """Each group's final interval contains its mu with probability >= 1 - beta/k (beta_i = beta/k),
    over fresh Gaussian data; 3000 group releases, tolerance 3 binomial standard errors."""
    rng = np.random.default_rng(4)
    sizes = np.array([300, 100, 50])
    mus = np.array([-1.0, 0.5, 2.0])
    g = np.repeat([0, 1, 2], sizes)
    beta, k = 0.6, 3
    gi = group_index(g)
    hits = np.zeros(3)
    N = 0
    for _ in range(150):
        x = rng.normal(np.repeat(mus, sizes), 1.0)
        xs, starts, _ = _prepare(x, gi.codes, gi.counts)
        _, lo, hi = _uvmrec_core(
            xs, starts, gi.counts, -5.0, 5.0, np.ones(3), coinpress_schedule(0.5, 2), np.full(3, beta / k), rng, 20
        )
        hits += np.sum((lo <= mus) & (mus <= hi), axis=0)
        N += 20
    p = 1 - beta / k
    assert np.all(hits / N >= p - 3 * math.sqrt(p * (1 - p) / N))
    sim = simulate_coinpress(
        x, g, rho=0.5, lower=-5, upper=5, sigma=1.0, beta=beta, n_sims=50, rng=rng, include_global=False
    )
    assert sim.global_overall is None  # not simulated: no NaN placeholder
    np.testing.assert_allclose(sim.strat_overall, sim.strat_groups @ (sizes / sizes.sum()))
    with pytest.raises(DPInputError, match="include_global"):
        simulate_coinpress(x, g, rho=0.5, lower=-5, upper=5, sigma=1.0, n_sims=5, rng=rng, include_global=[])
    # weights are normalised public weights; PubStrat weights are used verbatim
    w = public_weights([0, 0, 1, 2], [0, 1, 2])
    r = stratified_coinpress(x, g, rho=0.5, lower=-5, upper=5, sigma=1.0, weights=w, rng=1)
    np.testing.assert_allclose(r.weights, [0.5, 0.25, 0.25])
    assert r.overall == pytest.approx(r.weights @ r.per_group)
    assert r.rho == 0.5 and sum(r.schedule) == pytest.approx(0.5)  # full schedule in every group
    assert r.epsilon(1e-5) == pytest.approx(zcdp_to_dp(0.5, 1e-5))


def test_stratified_coinpress_empty_and_single_member_groups():
    x = np.array([0.1, 0.2, -0.1, 3.0])
    g = np.array(["a", "a", "a", "b"])
    with np.errstate(divide="raise", invalid="raise"):
        r = stratified_coinpress(x, g, rho=0.5, lower=-4, upper=6, sigma=1.0, rng=2, levels=["a", "b", "c"])
    assert r.counts.tolist() == [3, 1, 0]
    assert r.per_group[2] == 1.0 and r.empty[2]
    assert np.isfinite(r.per_group).all()
    assert r.notes and "no records" in r.notes[0]


@pytest.mark.parametrize(
    "kwargs, msg",
    [
        (dict(rho=0.0), "rho"),
        (dict(rho=-1.0), "rho"),
        (dict(t=0), ">= 1"),
        (dict(lower=2.0, upper=1.0), "smaller"),
        (dict(sigma=0.0), "sigma"),
        (dict(beta=1.5), "beta"),
        (dict(weights=[0.2, 0.2]), "sum to 1"),
        (dict(values=[1.0, float("nan"), 2.0, 3.0]), "missing"),
        (dict(values=["x", "y", "z", "w"]), "only numbers"),
    ],
)
def test_bad_input(kwargs, msg):
    args = dict(values=[1.0, 2.0, 3.0, 4.0], groups=[0, 0, 1, 1], rho=0.5, lower=-1.0, upper=5.0, sigma=1.0)
    args.update(kwargs)
    with pytest.raises(DPInputError, match=msg):
        stratified_coinpress(args.pop("values"), args.pop("groups"), **args)


def test_simulation_shapes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=20_000)
    g = rng.integers(0, 18, size=20_000)
    sim = simulate_coinpress(x, g, rho=0.5, lower=-3, upper=3, sigma=1.0, n_sims=200, rng=1)
    assert sim.strat_groups.shape == (200, 18) and sim.global_overall.shape == (200,)
    # global CoinPress uses the same budget on all the data: its spread is far smaller than a group's
    assert sim.global_overall.std() < sim.strat_groups.std(axis=0).min()


def test_changing_one_record_only_moves_its_own_stratum():
    """Parallel composition premise: with the same noise (same seed), replacing one value in group 0
    leaves every other group's release bit-for-bit unchanged (Laplace and CoinPress)."""
    from dpcore.stratified import stratified_mean

    rng = np.random.default_rng(10)
    x = rng.normal(size=300)
    g = np.repeat([0, 1, 2], 100)
    y = x.copy()
    y[5] = 40.0
    a = stratified_coinpress(x, g, rho=0.5, lower=-5, upper=5, sigma=1.0, rng=3)
    b = stratified_coinpress(y, g, rho=0.5, lower=-5, upper=5, sigma=1.0, rng=3)
    assert a.per_group[0] != b.per_group[0]
    np.testing.assert_array_equal(a.per_group[1:], b.per_group[1:])
    la = stratified_mean(x, g, epsilon=1.0, clip_range=(-3, 3), rng=3)
    lb = stratified_mean(y, g, epsilon=1.0, clip_range=(-3, 3), rng=3)
    assert la.per_group[0] != lb.per_group[0]
    np.testing.assert_array_equal(la.per_group[1:], lb.per_group[1:])
