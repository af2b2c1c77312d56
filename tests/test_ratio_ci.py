"""Intervals for the relative risk (Katz, Theorem 4.2, conservative Theorem 4.5), their coverage by
vectorised simulation, and the odds ratio from a noisy 2x2 table.

Coverage tolerances: the Monte Carlo standard error sqrt(c(1-c)/n_sims) of each cell; "3 SE" below
means the claim is rejected only when the estimate is more than 3 standard errors on the wrong side.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpcore import ratio
from dpcore.validation import DPInputError

P_GRID = tuple(np.round(np.arange(0.1, 1.0, 0.1), 1))


# ------------------------------------------------------------------ the formulas


def test_worked_example_spec_section_9():
    k = ratio.katz_interval(60, 40, 100, 100)
    assert (k.lower, k.upper) == pytest.approx((1.12408, 2.00163), abs=1e-5)
    t42 = ratio.rr_confidence_interval(60, 40, 100, 100)
    assert (t42.lower, t42.upper) == pytest.approx((1.06725, 1.93275), abs=1e-5)
    assert t42.se == pytest.approx(0.220794, abs=1e-6) and t42.privacy_share == 0
    lap = ratio.rr_confidence_interval(60, 40, 100, 100, noise_variance=8.0)
    assert (lap.lower, lap.upper) == pytest.approx((1.00031, 1.99969), abs=1e-5)
    assert lap.se == pytest.approx(0.254951, abs=1e-6)
    gau = ratio.rr_confidence_interval(60, 40, 100, 100, noise_variance=6.25**2)
    assert (gau.lower, gau.upper) == pytest.approx((0.79852, 2.20148), abs=1e-5)


def test_theorem_42_equals_katz_se_on_linear_scale_and_45_adds_noise_term():
    """sigma~/RR~ = sqrt(1/X - 1/n_x + 1/Y - 1/n_y) (spec §4); Thm 4.5 adds RR^2 s^2 (1/X^2 + 1/Y^2)."""
    for x, y, nx, ny in [(10, 30, 50, 80), (45, 45, 90, 300), (7, 2, 7, 9)]:
        ci = ratio.rr_confidence_interval(x, y, nx, ny)
        rr = (x / nx) / (y / ny)
        assert ci.estimate == pytest.approx(rr)
        assert ci.se / rr == pytest.approx(math.sqrt(1 / x - 1 / nx + 1 / y - 1 / ny))
        assert ci.se / rr == pytest.approx(ratio.katz_interval(x, y, nx, ny).se)
        c2 = ratio.rr_confidence_interval(x, y, nx, ny, noise_variance=(3.0, 5.0))
        assert c2.se**2 == pytest.approx(ci.se**2 + rr**2 * (3 / x**2 + 5 / y**2))
        assert c2.privacy_share == pytest.approx(rr**2 * (3 / x**2 + 5 / y**2) / c2.se**2)
        assert ci.upper - ci.estimate == pytest.approx(1.959964 * ci.se, rel=1e-6)


def test_noisy_count_above_group_size_has_zero_sampling_term():
    """p~ > 1 -> p~(1 - p~) treated as 0 (spec §4), never a negative variance."""
    ci = ratio.rr_confidence_interval(105.0, 50.0, 100, 100)
    assert ci.se_sampling == pytest.approx(ci.estimate * math.sqrt(1 / 50 - 1 / 100))


def test_delta_method_variance_matches_monte_carlo():
    """Theorem 4.5's variance (with true p) against the simulated variance of RR~ for Laplace counts.
    Tolerance: 4 SE of a sample variance (var * sqrt(2/N)) plus the delta method's O(1/n) term,
    bounded by 3 (CV_x^2 + CV_y^2) relative (second-order expansion of 1/Y)."""
    rng = np.random.default_rng(5)
    n, px, py, eps = 2000, 0.3, 0.4, 0.5
    N = 400_000
    b = 2 / eps
    X = rng.binomial(n, px, N) + rng.laplace(0, b, N)
    Y = rng.binomial(n, py, N) + rng.laplace(0, b, N)
    rr = (X / n) / (Y / n)
    var_noise = 2 * b * b
    mx, my = n * px, n * py
    cv2 = (mx * (1 - px) + var_noise) / mx**2 + (my * (1 - py) + var_noise) / my**2
    theory = (px / py) ** 2 * cv2
    tol = 4 * theory * math.sqrt(2 / N) + 3 * cv2 * theory
    assert abs(rr.var() - theory) <= tol
    # the sampling-only variance (Thm 4.2) is visibly too small here: privacy adds ~ (s^2/X) relative
    samp_only = (px / py) ** 2 * ((1 - px) / mx + (1 - py) / my)
    assert rr.var() - samp_only > 3 * tol


# ------------------------------------------------------------------ coverage by simulation


@pytest.mark.slow
@pytest.mark.parametrize("mechanism,delta", [("laplace", None), ("gaussian", 1e-4)])
def test_conservative_intervals_cover_at_the_paper_design(mechanism, delta):
    """At 95% nominal, conservative coverage >= 93% wherever both expected counts >= 30,
    on the 9x9 grid of Appendix D.2 (n_x = n_y = 200, eps = 1, delta = 1e-4)."""
    g = ratio.coverage_grid(
        P_GRID,
        200,
        200,
        epsilon=1.0,
        mechanism=mechanism,
        conservative=True,
        delta=delta,
        n_sims=8000,
        rng=np.random.default_rng(200),
    )
    ps = np.array(P_GRID)
    ok = (200 * ps[:, None] >= 30) & (200 * ps[None, :] >= 30)
    assert ok.sum() == 64
    assert np.all(g.coverage[ok] >= 0.93 - 3 * g.se[ok]), g.coverage[ok].min()


@pytest.mark.slow
@pytest.mark.parametrize("mechanism,delta", [("laplace", None), ("gaussian", 1e-4)])
@pytest.mark.parametrize("n,eps", [(100, 2.0), (400, 0.5), (800, 0.25)])
def test_conservative_intervals_cover_other_designs(mechanism, delta, n, eps):
    """Other designs: the rule 'both expected counts >= 30' needs a second condition, counts >= 5 noise
    standard deviations. Without it the Gaussian interval at n = 400, eps = 0.5 (sigma = 11.7) covers
    only ~92.5% at p_x = 0.2, p_y = 0.1 (count 40): see the next test. This is our finding, not the paper's."""
    sd = math.sqrt(ratio.count_noise(eps, mechanism=mechanism, delta=delta).variance)
    g = ratio.coverage_grid(
        P_GRID,
        n,
        n,
        epsilon=eps,
        mechanism=mechanism,
        conservative=True,
        delta=delta,
        n_sims=5000,
        rng=np.random.default_rng(n + int(10 * eps)),
    )
    ps = np.array(P_GRID)
    cnt = n * ps
    good = (cnt >= 30) & (cnt >= 5 * sd)
    ok = good[:, None] & good[None, :]
    assert ok.sum() >= 36
    assert np.all(g.coverage[ok] >= 0.93 - 3 * g.se[ok]), g.coverage[ok].min()


def test_counts_of_30_are_not_enough_when_the_noise_is_large():
    """n = 400, eps = 0.5, Gaussian: denominator count 40 (>= 30) but sigma = 11.7 -> coverage clearly < 93%."""
    res = ratio.simulate_rr_coverage(
        0.2, 0.1, 400, 400, epsilon=0.5, mechanism="gaussian", delta=1e-4, conservative=True, n_sims=80_000, rng=11
    )
    assert res.coverage + 3 * res.se < 0.93


@pytest.mark.slow
def test_conservative_cover_unequal_group_sizes():
    g = ratio.coverage_grid(P_GRID, 150, 400, epsilon=1.0, mechanism="laplace", conservative=True, n_sims=6000, rng=3)
    ps = np.array(P_GRID)
    ok = (150 * ps[:, None] >= 30) & (400 * ps[None, :] >= 30)
    assert np.all(g.coverage[ok] >= 0.93 - 3 * g.se[ok])


def test_ignoring_gaussian_noise_undercovers_so_the_coverage_check_can_fail():
    """Section 4.1: Theorem 4.2 on Gaussian counts (sigma = 6.25) undercovers at n = 200; the same
    check as above must reject it, and Theorem 4.5 repairs it."""
    plain = ratio.simulate_rr_coverage(
        0.2, 0.2, 200, 200, epsilon=1.0, mechanism="gaussian", delta=1e-4, n_sims=10_000, rng=1
    )
    assert plain.coverage + 3 * plain.se < 0.93
    cons = ratio.simulate_rr_coverage(
        0.2, 0.2, 200, 200, epsilon=1.0, mechanism="gaussian", delta=1e-4, conservative=True, n_sims=10_000, rng=1
    )
    assert cons.coverage - 3 * cons.se >= 0.93
    assert cons.mean_width > plain.mean_width
    assert 0 < cons.mean_privacy_share < 1


def test_non_private_theorem_42_is_asymptotically_exact():
    """With no noise and large counts, Theorem 4.2's coverage is the nominal level up to Monte Carlo error
    and an O(1/sqrt n) normal-approximation term (here bounded by 0.005)."""
    for px, py in [(0.3, 0.5), (0.5, 0.5)]:
        res = ratio.simulate_rr_coverage(px, py, 3000, 3000, epsilon=1.0, mechanism="none", n_sims=20_000, rng=2)
        assert abs(res.coverage - 0.95) <= 4 * res.se + 0.005
        katz = ratio.simulate_rr_coverage(
            px, py, 3000, 3000, epsilon=1.0, mechanism="none", n_sims=20_000, rng=2, interval="katz"
        )
        assert abs(katz.coverage - 0.95) <= 4 * katz.se + 0.005


def test_coverage_level_and_width_behave():
    lo = ratio.simulate_rr_coverage(0.4, 0.5, 300, 300, epsilon=1.0, level=0.8, n_sims=8000, rng=4, conservative=True)
    hi = ratio.simulate_rr_coverage(0.4, 0.5, 300, 300, epsilon=1.0, level=0.99, n_sims=8000, rng=4, conservative=True)
    assert abs(lo.coverage - 0.8) <= 4 * lo.se + 0.01
    assert hi.coverage > 0.985 - 4 * hi.se
    assert hi.mean_width > lo.mean_width
    # reproducible from the seed, and the grid agrees with the single-cell function in distribution
    a = ratio.simulate_rr_coverage(0.4, 0.5, 300, 300, epsilon=1.0, n_sims=2000, rng=9)
    b = ratio.simulate_rr_coverage(0.4, 0.5, 300, 300, epsilon=1.0, n_sims=2000, rng=9)
    assert a == b
    assert a.se == pytest.approx(math.sqrt(a.coverage * (1 - a.coverage) / 2000))


def test_privacy_share_shrinks_with_sample_size():
    """Section 4.2: the privacy part of the variance is second order; its share falls as n grows."""
    shares = [
        ratio.simulate_rr_coverage(
            0.3, 0.3, n, n, epsilon=1.0, conservative=True, n_sims=2000, rng=1
        ).mean_privacy_share
        for n in (100, 1000, 10_000)
    ]
    assert shares[0] > shares[1] > shares[2] and shares[2] < 0.01
    # closed form for one dataset: share = s^2 (1/X^2 + 1/Y^2) / (1/X - 1/n + 1/Y - 1/n + s^2 (...))
    ci = ratio.rr_confidence_interval(30, 30, 100, 100, noise_variance=8.0)
    priv = 8 * (2 / 900)
    assert ci.privacy_share == pytest.approx(priv / (2 * (1 / 30 - 1 / 100) + priv))


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("xn,yn", [(0.0, 5.0), (5.0, -2.0), (-1.0, -1.0)])
def test_zero_or_negative_noisy_counts_raise(xn, yn):
    with pytest.raises(DPInputError, match="<= 0"):
        ratio.rr_confidence_interval(xn, yn, 100, 100)
    ci = ratio.rr_confidence_interval(xn, yn, 100, 100, clip=True)  # the paper's convention, on request
    assert ci.estimate == pytest.approx(max(xn, 1) / max(yn, 1))


@pytest.mark.parametrize(
    "kw",
    [
        dict(level=1.0),
        dict(level=0.0),
        dict(level=float("nan")),
        dict(noise_variance=-1.0),
        dict(noise_variance=(1.0, 2.0, 3.0)),
    ],
)
def test_interval_bad_options(kw):
    with pytest.raises(DPInputError):
        ratio.rr_confidence_interval(10, 10, 100, 100, **kw)


@pytest.mark.parametrize("nx,ny", [(0, 10), (10, 0), (-5, 10)])
def test_interval_bad_group_sizes(nx, ny):
    with pytest.raises(DPInputError, match="n_"):
        ratio.rr_confidence_interval(10, 10, nx, ny)


@pytest.mark.parametrize(
    "kw",
    [
        dict(p_x=0.0),
        dict(p_x=1.0),
        dict(p_y=1.2),
        dict(p_y=float("nan")),
        dict(n_x=0),
        dict(delta=1.0, mechanism="gaussian"),
        dict(mechanism="gaussian"),
        dict(epsilon=0.0),
        dict(epsilon=-1.0),
        dict(interval="katz", conservative=True),
        dict(mechanism="exponential"),
    ],
)
def test_simulate_bad_input(kw):
    args = dict(p_x=0.3, p_y=0.4, n_x=100, n_y=100, epsilon=1.0)
    args.update(kw)
    with pytest.raises(DPInputError):
        ratio.simulate_rr_coverage(
            args.pop("p_x"), args.pop("p_y"), args.pop("n_x"), args.pop("n_y"), n_sims=100, **args
        )


def test_katz_bad_input():
    with pytest.raises(DPInputError, match=">= 1"):
        ratio.katz_interval(0, 10, 100, 100)
    with pytest.raises(DPInputError, match="exceed"):
        ratio.katz_interval(120, 10, 100, 100)


# ------------------------------------------------------------------ odds ratio from a noisy 2x2 table


def test_or_woolf_formula_without_noise():
    ci = ratio.or_confidence_interval(20, 80, 10, 90)
    est = 20 * 90 / (80 * 10)
    se = math.sqrt(1 / 20 + 1 / 80 + 1 / 10 + 1 / 90)
    assert ci.estimate == pytest.approx(est)
    assert (ci.lower, ci.upper) == pytest.approx(
        (est * math.exp(-1.959964 * se), est * math.exp(1.959964 * se)), rel=1e-6
    )
    assert ci.privacy_share == 0
    noisy = ratio.or_confidence_interval(20, 80, 10, 90, noise_variance=8.0)
    assert noisy.se_log**2 == pytest.approx(se**2 + 8 * (1 / 400 + 1 / 6400 + 1 / 100 + 1 / 8100))


def test_noisy_table_sensitivity_and_scale():
    """Replacing one record moves it between two cells: L1 distance 2, L2 sqrt 2 (brute force over all moves)."""
    base = np.array([5, 7, 3, 9])
    dists = []
    for src in range(4):
        for dst in range(4):
            other = base.copy()
            other[src] -= 1
            other[dst] += 1
            dists.append((np.abs(other - base).sum(), np.sqrt(((other - base) ** 2).sum())))
    l1, l2 = max(d[0] for d in dists), max(d[1] for d in dists)
    t = ratio.noisy_two_by_two(5, 7, 3, 9, epsilon=0.5, rng=1)
    assert t.noise_scale == pytest.approx(l1 / 0.5)
    g = ratio.noisy_two_by_two(5, 7, 3, 9, epsilon=0.5, mechanism="gaussian", delta=1e-5, rng=1)
    from dpcore import noise

    assert g.noise_scale == pytest.approx(noise.analytic_gaussian_sigma(0.5, 1e-5, l2))


def test_or_log_variance_matches_monte_carlo():
    rng = np.random.default_rng(12)
    nx = ny = 3000
    px, py, eps = 0.3, 0.2, 0.5
    N = 300_000
    b = 2 / eps
    X = rng.binomial(nx, px, N)
    Y = rng.binomial(ny, py, N)
    cells = np.stack([X, nx - X, Y, ny - Y]) + rng.laplace(0, b, (4, N))
    log_or = np.log(cells[0]) + np.log(cells[3]) - np.log(cells[1]) - np.log(cells[2])
    m = np.array([nx * px, nx * (1 - px), ny * py, ny * (1 - py)])
    # exact binomial variance of the logit plus the noise term of the delta method
    theory = 1 / (nx * px * (1 - px)) + 1 / (ny * py * (1 - py)) + np.sum(2 * b * b / m**2)
    assert abs(log_or.var() - theory) <= 4 * theory * math.sqrt(2 / N) + 0.02 * theory


def test_or_coverage_with_noise():
    cons = ratio.simulate_or_coverage(0.3, 0.2, 200, 200, epsilon=1.0, n_sims=10_000, rng=3)
    assert cons.coverage - 3 * cons.se >= 0.93
    g = ratio.simulate_or_coverage(
        0.3, 0.2, 200, 200, epsilon=1.0, mechanism="gaussian", delta=1e-4, conservative=False, n_sims=10_000, rng=3
    )
    assert g.coverage + 3 * g.se < 0.93  # ignoring the noise fails the check, so it can fail


def test_or_bad_input():
    with pytest.raises(DPInputError, match="<= 0"):
        ratio.or_confidence_interval(0, 5, 5, 5)
    with pytest.raises(DPInputError):
        ratio.noisy_two_by_two(1, 2, 3, 4, epsilon=1.0, mechanism="gaussian")
    with pytest.raises(DPInputError):
        ratio.noisy_two_by_two(1, -2, 3, 4, epsilon=1.0)


def test_results_unpack():
    lo, hi = ratio.rr_confidence_interval(60, 40, 100, 100)
    assert (lo, hi) == pytest.approx((1.06725, 1.93275), abs=1e-5)
    xn, yn = ratio.laplace_noised_counts(60, 40, epsilon=1.0, rng=3)
    c = ratio.laplace_noised_counts(60, 40, epsilon=1.0, rng=3)
    assert (xn, yn) == (c.x_noisy, c.y_noisy)
