"""dpcore.intervals: the exact laws behind each published interval, the proofs' key steps by brute force, and bad
input. Coverage by simulation is in tests/test_intervals_coverage.py."""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dpcore import gini as gini_lib
from dpcore import intervals, mechanisms
from dpcore import noise as noise_lib
from dpcore import posterior as posterior_lib
from dpcore import ratio as ratio_lib
from dpcore.errors import DPInputError
from dpcore.intervals import basic as intervals_basic
from dpcore.intervals import gini as intervals_gini
from dpcore.noise import smooth as smooth_noise
from dpcore.percentiles import PSEO_BIN_EDGES

ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------------------------------------
# Noise quantiles
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.999])
def test_continuous_quantiles_are_exact(level):
    t = intervals.laplace_quantile(level, 2.5)
    assert stats.laplace(scale=2.5).cdf(t) - stats.laplace(scale=2.5).cdf(-t) == pytest.approx(level, abs=1e-12)
    t = intervals.gaussian_quantile(level, 3.0)
    assert stats.norm(scale=3.0).cdf(t) - stats.norm(scale=3.0).cdf(-t) == pytest.approx(level, abs=1e-12)


@pytest.mark.parametrize("scale", [0.3, 1.0, 2.0, 20.0])
@pytest.mark.parametrize("level", [0.5, 0.9, 0.95, 0.99])
def test_discrete_laplace_quantile_is_the_smallest_integer(scale, level):
    t = intervals.discrete_laplace_quantile(level, scale)
    k = np.arange(-2000, 2001)
    pmf = noise_lib.two_sided_geometric_pmf(k, 1.0 / scale)
    inside = lambda m: pmf[np.abs(k) <= m].sum()
    assert inside(t) >= level
    assert t == 0 or inside(t - 1) < level


def test_count_and_sum_intervals():
    c = intervals.count_interval(3, scale=2.0)
    t = intervals.discrete_laplace_quantile(0.95, 2.0)
    assert (c.lower, c.upper) == (0.0, 3.0 + t)  # a count is >= 0
    s = intervals.sum_interval(1000.0, scale=50.0, level=0.9, lower=0, upper=100)
    assert s.upper - s.value == pytest.approx(intervals.laplace_quantile(0.9, 50.0))
    assert "clipped" in s.caveat
    g = intervals.count_interval(10.0, scale=1.5, noise="gaussian", nonnegative=False)
    assert g.upper - 10.0 == pytest.approx(1.5 * 1.959963984540054)


# ---------------------------------------------------------------------------------------------
# Means
# ---------------------------------------------------------------------------------------------


def test_mean_public_n_is_value_plus_minus_quantile_over_n_and_cut_to_the_bounds():
    r = intervals.mean_interval(50_000.0, n=400, sum_scale=250_000.0, lower=0, upper=250_000)
    half = intervals.laplace_quantile(0.95, 250_000.0) / 400
    assert (r.lower, r.upper) == pytest.approx((50_000 - half, 50_000 + half))
    near_top = intervals.mean_interval(249_900.0, n=400, sum_scale=250_000.0, lower=0, upper=250_000)
    assert near_top.upper == 250_000.0


def test_laplace_pivot_closed_form_equals_the_direct_sum():
    rng = np.random.default_rng(3)
    mu = rng.uniform(-1e5, 1e5, (40, 9))
    s_noisy = rng.normal(2.5e7, 3e5, (40, 1))
    n_noisy = rng.integers(100, 900, (40, 1)).astype(float)
    for b, s in ((5000.0, 20.0), (900.0, 0.4), (300.0, 4.0), (1e5, 200.0), (1.0, 1.0)):
        closed = intervals_basic._laplace_pivot_pvalues(np.abs(mu), np.abs(s_noisy - mu * n_noisy), b, s)
        direct = intervals_basic._summed_pivot_pvalues(mu, s_noisy, n_noisy, b, s, "laplace")
        assert np.max(np.abs(closed - direct)) < 2e-12


def test_noisy_n_interval_ends_are_the_test_boundary():
    value, n_noisy, scale, n_scale = 51_000.0, 480.0, 5000.0, 20.0
    r = intervals.mean_interval(value, n=n_noisy, sum_scale=scale, lower=0, upper=250_000, n_scale=n_scale)
    assert r.lower < value < r.upper
    pval = lambda m: intervals_basic._pivot_pvalues(
        np.array([[m]]),
        np.array([[value * n_noisy]]),
        np.array([[n_noisy]]),
        scale,
        n_scale,
        "laplace",
    )[0, 0]
    width = r.upper - r.lower
    for end, outward in ((r.lower, -1.0), (r.upper, 1.0)):
        assert pval(end) <= 0.05 + 1e-6  # the returned end is on the rejected side
        assert pval(end - outward * 1e-6 * width) >= 0.05 - 1e-6
    grid = np.linspace(0, 250_000, 2001)
    accepted = grid[[pval(m) >= 0.05 for m in grid]]
    assert accepted.min() >= r.lower and accepted.max() <= r.upper  # nothing accepted outside the hull


def test_noisy_n_with_a_non_positive_count_gives_the_whole_range():
    r = intervals.mean_interval(0.0, n=-3, sum_scale=5000.0, lower=0, upper=1000, n_scale=20.0)
    assert (r.lower, r.upper) == (0.0, 1000.0)
    assert "whole clip range" in r.caveat


def test_gaussian_noisy_n_interval_uses_the_direct_sum():
    r = intervals.mean_interval(100.0, n=500, sum_scale=2000.0, lower=0, upper=1000, n_scale=2.0, noise="gaussian")
    assert r.lower < 100.0 < r.upper
    exact_public = 2 * intervals.gaussian_quantile(0.95, 2000.0) / 500
    assert r.width == pytest.approx(exact_public, rel=0.05)  # a small count noise changes little


# ---------------------------------------------------------------------------------------------
# Percentiles
# ---------------------------------------------------------------------------------------------


def _brute_error_tail(w: float, scale: float, m: int, j: int, lam: float, width: int = 25) -> float:
    """P(W_j - lam W_m > w) by enumerating every noise vector in [-width, width]^m (independent of the code)."""
    k = np.arange(-width, width + 1)
    pmf = noise_lib.two_sided_geometric_pmf(k, 1.0 / scale)
    grids = np.meshgrid(*([k] * m), indexing="ij")
    probs = np.prod(np.meshgrid(*([pmf] * m), indexing="ij"), axis=0)
    e = sum(grids[:j]) - lam * sum(grids)
    return float(probs[e > w].sum())


@pytest.mark.parametrize("j,lam", [(1, 1 / 3), (2, 2 / 3), (1, 0.5), (2, 0.25), (3, 0.5)])
def test_error_quantile_matches_brute_force_enumeration(j, lam):
    scale, m, tail = 1.0, 3, 0.025
    w = intervals_basic._error_quantile(scale, j, m, lam, tail)
    assert _brute_error_tail(w, scale, m, j, lam) <= tail + 1e-9
    assert _brute_error_tail(w - 1e-6, scale, m, j, lam) > tail - 1e-9  # the smallest such w


def test_noiseless_histogram_gives_the_true_percentile_bin():
    rng = np.random.default_rng(5)
    x = rng.lognormal(10.8, 0.7, 500)
    counts = np.bincount(np.clip(np.searchsorted(PSEO_BIN_EDGES, x, side="right") - 1, 0, 20), minlength=21)
    truth = np.sort(x)[math.ceil(0.5 * 500) - 1]
    r = intervals.percentile_interval(counts, PSEO_BIN_EDGES, (50,), scale=1e-3, n=500)
    j = np.searchsorted(PSEO_BIN_EDGES, truth, side="right")  # 1-based bin of the truth
    assert (r.lower[0], r.upper[0]) == (PSEO_BIN_EDGES[j - 1], PSEO_BIN_EDGES[j])


def test_percentile_end_bins_reach_the_support_and_shapes():
    counts = np.zeros(21)
    counts[0] = 300  # everything in the bottom bin
    r = intervals.percentile_interval(counts, PSEO_BIN_EDGES, (25, 50), scale=2.0, n=300)
    assert r.lower.shape == (2,) and np.all(r.lower == 0.0)
    counts = np.zeros((4, 21))
    counts[:, -1] = 200
    r = intervals.percentile_interval(counts, PSEO_BIN_EDGES, (50, 90), scale=2.0)
    assert r.upper.shape == (4, 2) and np.all(np.isinf(r.upper)) and not r.n_public


# ---------------------------------------------------------------------------------------------
# Relative risk
# ---------------------------------------------------------------------------------------------


def test_relative_risk_reuses_shoham_ligett_with_the_public_noise_variance():
    r = intervals.relative_risk_interval(60.0, 40.0, 100, 100, scale=2.0)
    ref = ratio_lib.rr_confidence_interval(60.0, 40.0, 100, 100, noise_variance=8.0)
    assert (r.lower, r.upper) == pytest.approx((ref.lower, ref.upper))
    assert r.caveat == ""
    small = intervals.relative_risk_interval(12.0, -1.0, 100, 100, scale=2.0)
    assert "30" in small.caveat and small.lower >= 0.0
    data = intervals.relative_risk_interval(60.0, 40.0, 100, 100, scale=2.0, target="data")
    assert data.width < r.width


# ---------------------------------------------------------------------------------------------
# The Gini bound: the proof's sensitivity step by brute force, the failure rate, the pivot
# ---------------------------------------------------------------------------------------------

DATA_SETS = (
    [0.0, 1.0, 2.0, 5.0, 9.0, 10.0],
    [3.0, 3.0, 3.0, 4.0, 4.0],
    [0.0, 0.0, 0.0, 0.0, 10.0, 1.0],
    [1.0, 2.0, 4.0, 8.0, 9.5, 10.0, 0.5],
)


@pytest.mark.parametrize("method", ["exact", "fast"])
@pytest.mark.parametrize("beta", [0.05, 0.3, 1.0])
def test_log_smooth_sensitivity_changes_by_at_most_beta_between_neighbours(method, beta):
    lower, upper = 0.0, 10.0
    replacements = np.unique(np.concatenate([np.linspace(lower, upper, 11), [0.5, 9.5]]))
    worst = 0.0
    for data in DATA_SETS:
        x = np.array(data)
        s0 = gini_lib.smooth_sensitivity(x, lower=lower, upper=upper, beta=beta, method=method).value
        for i, v in itertools.product(range(x.size), replacements):
            y = x.copy()
            y[i] = v
            if y.sum() <= 0:  # the all-zero data set has no Gini (refused by every release)
                continue
            s1 = gini_lib.smooth_sensitivity(y, lower=lower, upper=upper, beta=beta, method=method).value
            worst = max(worst, abs(math.log(s1) - math.log(s0)))
    assert worst <= beta * (1 + 1e-9)
    assert worst > 0.3 * beta  # the neighbours do move S: the check is not vacuous


def test_bound_failure_rate_is_eta():
    plan = intervals.gini_plan(0.8, 0.2, 0.03, noise="laplace", n=500, lower=0, upper=1e5, delta=1e-6, eta=0.05)
    s_hat = intervals.simulate_gini_bounds([0.004, 0.2], plan=plan, size=200_000, rng=11)
    fail = np.mean(s_hat < np.array([[0.004], [0.2]]), axis=1)
    se = math.sqrt(0.05 * 0.95 / 200_000)
    assert np.all(np.abs(fail - 0.05) < 4.5 * se)
    one = mechanisms.gini_bound_release(0.004, beta=plan.beta, epsilon_bound=0.2, eta=0.05, rng=3)
    assert one.simulated and one.s_upper == pytest.approx(math.exp(one.log_s_upper))
    assert one.scale == plan.bound_scale and one.margin == pytest.approx(plan.bound_margin)


def test_real_bound_release_uses_opendp():
    real = mechanisms.gini_bound_release(0.01, beta=0.03, epsilon_bound=0.5, eta=0.01)
    assert not real.simulated and "OpenDP" in real.measurement and math.isfinite(real.s_upper)
    assert repr(math.log(0.01)) not in real.measurement  # only the public scale is named, never ln S


@pytest.mark.parametrize("noise,sigma", [("laplace", None), ("cauchy", None), ("laplace_lognormal", 0.4)])
@pytest.mark.parametrize("bound_scale", [0.05, 0.4])
def test_pivot_quantile_against_monte_carlo(noise, sigma, bound_scale):
    q = intervals.pivot_quantile(noise, 0.95, bound_scale, 2.0, sigma)
    law = intervals_gini.noise_law(noise, 2.0, sigma)
    rng = np.random.default_rng(17)
    size = 400_000
    z = np.abs(law.rvs(size, rng)) * np.exp(-rng.laplace(0.0, bound_scale, size))
    se = math.sqrt(0.05 * 0.95 / size)
    assert abs(np.mean(z > q) - 0.05) < 4.5 * se
    assert q >= float(law.abs_quantile(0.95))  # an unknown scale never helps


def _plan(noise="laplace", method="pivot", **kw):
    return intervals.gini_plan(
        0.8,
        0.2,
        0.03,
        noise=noise,
        n=400,
        lower=0,
        upper=2e5,
        delta=None if noise == "cauchy" else 1e-6,
        method=method,
        **kw,
    )


def test_interval_from_release_matches_its_formula():
    plan = _plan()
    r = plan.interval(0.5, 0.01)
    q = intervals.pivot_quantile("laplace", 0.95, plan.bound_scale, 2.0, None)
    half = q * 0.01 * math.exp(-plan.bound_margin) / plan.release_alpha + 5e-7
    assert (r.lower, r.upper) == pytest.approx((0.5 - half, 0.5 + half))
    assert (r.epsilon, r.delta) == (pytest.approx(1.0), 1e-6)
    union = _plan(method="union", eta=0.01)
    u = union.interval(0.5, 0.01)
    q_union = float(smooth_noise.LaplaceNoise().abs_quantile(0.96))
    assert u.upper - 0.5 == pytest.approx(q_union * 0.01 / union.release_alpha + 5e-7)
    assert "probability 0.01" in u.caveat
    assert u.width > r.width


def test_clamped_values_and_the_cauchy_floor():
    plan = _plan("cauchy")
    assert plan.min_scale == gini_lib.GINI_MIN_SCALE and plan.delta == 0.0
    top = plan.interval(1.0, 0.05)
    assert top.upper == 1.0 and top.lower < 1.0
    bottom = plan.interval(0.0, 0.05)
    assert bottom.lower == 0.0
    tiny = plan.interval(0.4, 1e-12)  # a bound below the floor: the floor's scale and the plain |Z| quantile
    q = max(
        intervals.pivot_quantile("cauchy", 0.95, plan.bound_scale),
        intervals_gini.abs_quantile("cauchy", 0.95, 2.0, None),
    )
    assert tiny.upper - 0.4 == pytest.approx(q * gini_lib.GINI_MIN_SCALE + 5e-7)


def test_oracle_is_labelled_not_publishable():
    o = intervals.gini_oracle_interval(0.5, 0.01, noise="laplace")
    assert "not publishable" in o.method and o.width == pytest.approx(2 * 0.01 * -math.log(0.05))


def test_plan_costs_and_optimiser():
    plan = intervals.optimise_gini_split(1.0, 1e-6, "laplace", 400, 0.0, 2e5)
    assert plan.epsilon_value + plan.epsilon_bound == pytest.approx(1.0)
    assert (plan.epsilon, plan.delta) == (pytest.approx(1.0), 1e-6)
    assert plan.bound_scale <= intervals.MAX_BOUND_SCALE * (1 + 1e-5)
    assert 0 < plan.model_width < math.inf and plan.model_oracle_width > 0
    s_typ = intervals.planning_smooth_sensitivity(400, 0.0, 2e5, plan.beta)
    for eps_v, beta in ((0.8, 0.01), (0.6, 0.03), (0.9, 0.02)):
        other = intervals.gini_plan(eps_v, 1.0 - eps_v, beta, noise="laplace", n=400, lower=0, upper=2e5, delta=1e-6)
        s_other = intervals.planning_smooth_sensitivity(400, 0.0, 2e5, beta)
        # the grid's optimum is within its resolution (2%) of any other choice
        assert 2 * plan.quantile() * s_typ / plan.alpha <= 2 * other.quantile() * s_other / other.alpha * 1.02
    const = intervals.optimise_gini_split(
        1.0, 1e-6, "laplace", 400, 0.0, 2e5, typical_smooth_sensitivity=lambda b: 0.01
    )
    assert const.beta <= plan.beta  # a flat S: nothing gained from a large beta


def test_posterior_with_a_sharp_bound_matches_the_known_scale_posterior():
    plan = intervals.gini_plan(0.8, 500.0, 0.03, noise="laplace", n=400, lower=0, upper=2e5, delta=1e-6)
    s = 0.01
    s_upper = s * math.exp(plan.bound_margin)  # the bound's noise is ~0 at epsilon_bound = 500
    mixed = intervals.gini_posterior_interval(0.45, s_upper, plan=plan)
    known = posterior_lib.gini_posterior(0.45, noise_scale=s / plan.release_alpha, noise="laplace").interval(0.95)
    assert (mixed.lower, mixed.upper) == pytest.approx(known, abs=2e-3)
    noisy = _plan()  # the same value calibration, a bound with noise (epsilon_bound 0.2)
    wide = intervals.gini_posterior_interval(0.45, s * math.exp(noisy.bound_margin), plan=noisy)
    assert wide.width > mixed.width  # an uncertain scale widens the interval


# ---------------------------------------------------------------------------------------------
# Honest digits
# ---------------------------------------------------------------------------------------------


def test_honest_grid_and_rounding():
    assert intervals.honest_grid(53_000, 56_000) == 100.0
    assert intervals.honest_grid(0.41, 0.53) == pytest.approx(0.005)
    assert intervals.round_to_grid(54_691.12429423175, 100.0) == 54_700.0
    assert intervals.round_to_grid(0.4712345, 0.005) == 0.47
    assert intervals.round_interval(53_012.3, 55_990.1, 100.0) == (53_000.0, 56_000.0)
    rng = np.random.default_rng(2)
    for lo, w in zip(rng.normal(0, 1e4, 200), 10 ** rng.uniform(-6, 6, 200), strict=True):
        step = intervals.honest_grid(lo, lo + w)
        assert w / 50 * (1 - 1e-9) <= step <= w / 20 * (1 + 1e-9)
        assert f"{step:.0e}"[0] in "125"
    arr = intervals.round_to_grid(np.array([1.04, 2.26]), 0.1)
    assert isinstance(arr, np.ndarray) and arr.tolist() == [1.0, 2.3]


# ---------------------------------------------------------------------------------------------
# Bad input and layering
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: intervals.laplace_quantile(0.0, 1.0),
        lambda: intervals.laplace_quantile(1.0, 1.0),
        lambda: intervals.laplace_quantile(float("nan"), 1.0),
        lambda: intervals.discrete_laplace_quantile(1.2, 1.0),
        lambda: intervals.count_interval(5, scale=-1.0),
        lambda: intervals.count_interval(5, scale=1.0, noise="cauchy"),
        lambda: intervals.sum_interval(float("inf"), scale=1.0),
        lambda: intervals.mean_interval(5.0, n=0, sum_scale=1.0, lower=0, upper=10),
        lambda: intervals.mean_interval(5.0, n=10, sum_scale=1.0, lower=10, upper=0),
        lambda: intervals.mean_interval(5.0, n=10, sum_scale=1.0, lower=0, upper=10, n_scale=0.0),
        lambda: intervals.percentile_interval(np.ones(21), PSEO_BIN_EDGES, (50,), scale=2.0, n=1),
        lambda: intervals.percentile_interval(np.ones(20), PSEO_BIN_EDGES, (50,), scale=2.0),
        lambda: intervals.percentile_interval(np.ones(21), PSEO_BIN_EDGES, (0,), scale=2.0),
        lambda: intervals.percentile_interval(np.ones(21), PSEO_BIN_EDGES, (50,), scale=-2.0),
        lambda: intervals.relative_risk_interval(5, 5, 0, 10, scale=2.0),
        lambda: intervals.relative_risk_interval(5, 5, 10, 10, scale=2.0, target="other"),
        lambda: mechanisms.gini_bound_release(-0.1, beta=0.1, epsilon_bound=0.1, eta=0.01, rng=1),
        lambda: mechanisms.gini_bound_release(0.1, beta=0.1, epsilon_bound=0.1, eta=1.0, rng=1),
        lambda: intervals.gini_plan(0.8, 0.2, 0.03, noise="laplace", n=1, lower=0, upper=1),
        lambda: intervals.gini_plan(0.8, 0.2, 0.03, noise="gauss", n=10, lower=0, upper=1),
        lambda: intervals.gini_plan(0.8, 0.2, 0.03, noise="laplace", n=10, lower=0, upper=1, method="union", eta=0.06),
        lambda: intervals.gini_plan(0.8, 0.2, 0.03, noise="laplace", n=10, lower=0, upper=1, method="other"),
        lambda: intervals.optimise_gini_split(1.0, 1e-6, "laplace", 100, -1.0, 10.0),
        lambda: intervals.optimise_gini_split(0.0, 1e-6, "laplace", 100, 0.0, 10.0),
        lambda: intervals.gini_interval_from_release(0.5, 0.0, noise="laplace", alpha=0.5, bound_scale=0.1, eta=0.01),
        lambda: intervals.honest_grid(2.0, 2.0),
        lambda: intervals.round_to_grid(1.0, 0.0),
    ],
)
def test_bad_input_raises_dpinputerror(call):
    with pytest.raises(DPInputError):
        call()


def test_intervals_imports_only_lower_layers():
    names = set()
    for node in (
        n for path in (ROOT / "dpcore" / "intervals").glob("*.py") for n in ast.walk(ast.parse(path.read_text()))
    ):
        if isinstance(node, ast.ImportFrom):
            names.update(f"{node.module or ''}.{a.name}".strip(".") for a in node.names)
        elif isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
    forbidden = {"planner", "plan", "release", "engines", "budget", "ledger", "views", "streamlit", "stratified"}
    assert not {part for name in names for part in name.split(".")} & forbidden


def test_every_interval_type_has_one_width_and_covers():
    """NoiseInterval and GiniInterval take their width and coverage check from one definition."""
    ends = intervals_basic.IntervalEnds
    for cls in (intervals_basic.NoiseInterval, intervals_gini.GiniInterval):
        assert issubclass(cls, ends)
        assert "width" not in vars(cls) and "covers" not in vars(cls)
    noise_ci = intervals_basic.NoiseInterval(0.5, 0.25, 1.0, 0.95, "m")
    gini_ci = intervals_gini.GiniInterval(0.5, 0.25, 1.0, 0.95, "m", "")
    for ci in (noise_ci, gini_ci):
        assert ci.width == 0.75
        assert ci.covers(0.25) and ci.covers(1.0) and not ci.covers(1.0 + 1e-12)


def test_partial_sums_built_on_each_other_are_the_direct_convolutions():
    """Each partial sum's pmf is the previous one (cached) convolved once more: the same numbers as convolving from
    the start, and a long chain (more terms than the recursion limit allows frames) is built without overflow."""
    from dpcore.intervals import basic

    scale = 0.4
    base = basic._discrete_laplace_pmf(scale)[1]
    direct = base
    for terms in range(1, 8):
        support, pmf = basic._partial_sum_pmf(scale, terms)
        assert np.array_equal(pmf, np.maximum(direct, 0.0)) and support.size == pmf.size
        direct = np.convolve(direct, base)
    support, pmf = basic._partial_sum_pmf(0.05, 1500)
    assert pmf.sum() == pytest.approx(1.0) and support[0] == -support[-1]
