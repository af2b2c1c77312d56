"""dpcore.posterior: grid posteriors checked against closed forms, quadrature and coverage.

Coverage tolerances come from the binomial standard error of the Monte Carlo estimate:
with N draws, sd = sqrt(0.95 * 0.05 / N); we accept |coverage - 0.95| <= 4 sd, which at the N
used here is well inside the issue's 95% +- 2% band (and a wrong scale fails it, see the
negative control).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.noise import GeneralizedCauchy
from dpcore.posterior import (
    gini_posterior,
    gini_posterior_batch,
    grid_posterior,
    grid_posterior_batch,
)
from dpcore.validation import DPInputError


def _local_cell_width(post, x: float, span: int = 3) -> float:
    """Largest grid cell width within `span` cells of x (the discretisation error scale there)."""
    i = int(np.clip(np.searchsorted(post.edges, x), 1, post.edges.size - 1))
    lo, hi = max(i - span, 0), min(i + span, post.edges.size - 1)
    return float(np.max(np.diff(post.edges[lo : hi + 1])))


# ---------------------------------------------------------------------------------------------
# Exactness against closed forms and quadrature
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("released, scale", [(0.3, 0.05), (0.98, 0.1), (1.5, 0.3), (0.5, 1e-6), (0.001, 0.01)])
def test_gaussian_noise_uniform_prior_is_truncated_normal(released, scale):
    # Posterior of theta ~ U(0,1), released = theta + scale * N(0,1): N(released, scale^2) truncated to [0,1].
    post = grid_posterior(released, noise="gaussian", noise_scale=scale)
    exact = stats.truncnorm((0 - released) / scale, (1 - released) / scale, loc=released, scale=scale)
    tol = 1e-3 * scale  # the geometric grid resolves offsets down to 1e-3 scale
    lo, hi = post.interval(0.95)
    assert lo == pytest.approx(exact.ppf(0.025), abs=tol)
    assert hi == pytest.approx(exact.ppf(0.975), abs=tol)
    assert post.mean == pytest.approx(exact.mean(), abs=tol)
    assert post.sd == pytest.approx(exact.std(), rel=1e-3)
    assert float(np.sum(post.density * np.diff(post.edges))) == pytest.approx(1.0, abs=1e-12)
    assert post.cdf(exact.ppf(0.3)) == pytest.approx(0.3, abs=1e-3)


def test_hpd_matches_exact_truncated_normal():
    # interior: HPD = equal-tail = released -+ 1.96 scale
    post = grid_posterior(0.3, noise="gaussian", noise_scale=0.05)
    lo, hi = post.interval(0.95, kind="hpd")
    z = stats.norm.ppf(0.975) * 0.05
    assert lo == pytest.approx(0.3 - z, abs=_local_cell_width(post, 0.3 - z))
    assert hi == pytest.approx(0.3 + z, abs=_local_cell_width(post, 0.3 + z))
    # mode near the upper end: HPD = [F^-1(0.05), 1], strictly shorter than the equal-tail interval
    post = grid_posterior(0.98, noise="gaussian", noise_scale=0.1)
    exact = stats.truncnorm(-9.8, 0.2, loc=0.98, scale=0.1)
    lo, hi = post.interval(0.95, kind="hpd")
    assert hi == pytest.approx(1.0)
    assert lo == pytest.approx(exact.ppf(0.05), abs=_local_cell_width(post, exact.ppf(0.05)))
    et = post.interval(0.95)
    assert hi - lo < et[1] - et[0]


def test_beta_prior_laplace_noise_matches_quadrature():
    a, b, r, s = 2.0, 5.0, 0.45, 0.08
    unnorm = lambda g: stats.beta.pdf(g, a, b) * stats.laplace.pdf((r - g) / s)
    z = integrate.quad(unnorm, 0, 1, points=[r], limit=200)[0]
    mean = integrate.quad(lambda g: g * unnorm(g), 0, 1, points=[r], limit=200)[0] / z
    cdf_03 = integrate.quad(unnorm, 0, 0.3, limit=200)[0] / z
    post = grid_posterior(r, noise="laplace", noise_scale=s, prior=("beta", a, b))
    assert post.prior == "Beta(2, 5)"
    assert post.mean == pytest.approx(mean, abs=1e-4)
    assert post.cdf(0.3) == pytest.approx(cdf_03, abs=1e-4)


def test_singular_beta_prior_is_integrated_exactly():
    # Beta(0.5, 0.5) has infinite density at 0 and 1; the prior enters through its CDF.
    r, s = 0.02, 0.05
    unnorm = lambda g: stats.beta.pdf(g, 0.5, 0.5) * stats.norm.pdf((r - g) / s)
    z = integrate.quad(unnorm, 0, 1, limit=400)[0]
    mean = integrate.quad(lambda g: g * unnorm(g), 0, 1, limit=400)[0] / z
    post = grid_posterior(r, noise="gaussian", noise_scale=s, prior=("beta", 0.5, 0.5))
    assert np.isfinite(post.density).all()
    assert post.mean == pytest.approx(mean, abs=2e-4)


def test_scipy_prior_object_is_accepted_and_truncated():
    prior = stats.norm(0.4, 0.1)  # truncated to [0, 1]
    post = grid_posterior(0.6, noise="gaussian", noise_scale=0.1, prior=prior)
    # conjugate normal-normal (truncation negligible at 4+ sd): posterior N(0.5, 0.1^2/2)
    assert post.mean == pytest.approx(0.5, abs=1e-4)
    assert post.sd == pytest.approx(0.1 / math.sqrt(2), rel=1e-3)


def test_release_far_outside_support_gives_feasible_posterior():
    post = gini_posterior(3.0, noise_scale=0.1, gamma=2.0)
    lo, hi = post.interval(0.95)
    assert 0.0 <= lo < hi <= 1.0
    # heavy tails: the likelihood is ~ 1/(3-g)^2 on [0, 1], so the posterior mean is
    # int g/(3-g)^2 / int 1/(3-g)^2 = 6 (1/2 - ln 1.5) = 0.567 (an outlying release says little)
    assert post.mean == pytest.approx(6 * (0.5 - math.log(1.5)), abs=2e-3)
    # far in the tail (r = -40, gamma = 4) the likelihood is ~ (40 + g)^-4: almost the flat prior
    post = gini_posterior(-40.0, noise_scale=0.01, gamma=4.0)
    inv_cdf = lambda q: (40.0**-3 - q * (40.0**-3 - 41.0**-3)) ** (-1 / 3) - 40.0
    assert post.interval(0.9) == pytest.approx((inv_cdf(0.05), inv_cdf(0.95)), abs=1e-3)


def test_tiny_noise_interval_is_the_noise_quantile():
    # scale 1e-7 (a Gini on a large file): the posterior is the likelihood, i.e. r -+ scale * ppf(0.975)
    gc = GeneralizedCauchy(2.0)
    r, s = 0.42, 1e-7
    post = gini_posterior(r, noise_scale=s, gamma=2.0)
    lo, hi = post.interval(0.95)
    half = s * float(gc.ppf(0.975))
    assert lo == pytest.approx(r - half, abs=2e-3 * half)
    assert hi == pytest.approx(r + half, abs=2e-3 * half)
    # symmetric unimodal posterior: the HPD interval is the equal-tail one (to grid resolution)
    h_lo, h_hi = post.interval(0.95, kind="hpd")
    assert h_lo == pytest.approx(r - half, abs=_local_cell_width(post, r - half))
    assert h_hi == pytest.approx(r + half, abs=_local_cell_width(post, r + half))
    # the Cauchy tails (gamma = 2) shift the mean by int_0^1 (g - r) L(g) dg ~ (s/pi) ln((1-r)/r)
    assert post.mean == pytest.approx(r + s / math.pi * math.log((1 - r) / r), abs=1e-3 * half)


def test_batch_equals_single():
    rel = np.array([-0.2, 0.05, 0.5, 0.93, 1.4])
    for kind in ("equal_tail", "hpd"):
        batch = gini_posterior_batch(rel, noise_scale=0.07, gamma=3.0, level=0.9, kind=kind)
        for i, r in enumerate(rel):
            p = gini_posterior(r, noise_scale=0.07, gamma=3.0)
            assert (batch.lower[i], batch.upper[i]) == pytest.approx(p.interval(0.9, kind=kind), abs=1e-12)
            assert batch.mean[i] == pytest.approx(p.mean, abs=1e-12)


# ---------------------------------------------------------------------------------------------
# Calibration: when g is drawn from the prior, the 95% interval covers g 95% of the time
# ---------------------------------------------------------------------------------------------


def _coverage(prior, draw_g, scale, gamma, kind, n, seed, assumed_scale=None):
    rng = np.random.default_rng(seed)
    g = draw_g(rng, n)
    released = g + scale * GeneralizedCauchy(gamma).rvs(n, rng)
    # a coarser grid than the default keeps this fast; it is still far finer than the band tested
    batch = gini_posterior_batch(
        released,
        noise_scale=assumed_scale or scale,
        gamma=gamma,
        prior=prior,
        level=0.95,
        kind=kind,
        n_uniform=257,
        n_local=200,
    )
    return float(batch.covers(g).mean())


N_COVER = 5000
SD_COVER = math.sqrt(0.95 * 0.05 / N_COVER)  # 0.0031; 4 sd = 0.0123 < 0.02


@pytest.mark.parametrize(
    "scale, gamma, kind, seed",
    [
        (0.02, 2.0, "equal_tail", 1),
        (0.25, 2.0, "hpd", 2),
        (0.1, 4.0, "equal_tail", 3),
        (0.005, 4.0, "hpd", 4),
    ],
)
def test_coverage_uniform_prior(scale, gamma, kind, seed):
    cov = _coverage("uniform", lambda r, n: r.uniform(size=n), scale, gamma, kind, N_COVER, seed)
    assert abs(cov - 0.95) <= 4 * SD_COVER, cov


def test_coverage_beta_prior():
    cov = _coverage(("beta", 2, 5), lambda r, n: r.beta(2, 5, size=n), 0.08, 2.0, "equal_tail", N_COVER, 5)
    assert abs(cov - 0.95) <= 4 * SD_COVER, cov


def test_coverage_check_has_power_against_a_wrong_scale():
    # negative control: pretending the noise is half as large must be detected by the same check
    cov = _coverage("uniform", lambda r, n: r.uniform(size=n), 0.05, 4.0, "equal_tail", N_COVER, 6, assumed_scale=0.025)
    assert cov < 0.95 - 4 * SD_COVER, cov


# ---------------------------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(released=float("nan"), noise_scale=0.1, gamma=2.0), "released"),
        (dict(released=0.5, noise_scale=0.0, gamma=2.0), "noise_scale"),
        (dict(released=0.5, noise_scale=-1.0, gamma=2.0), "noise_scale"),
        (dict(released=0.5, noise_scale=float("inf"), gamma=2.0), "noise_scale"),
        (dict(released=0.5, noise_scale=0.1, gamma=1.0), "gamma"),
        (dict(released=0.5, noise_scale=0.1, gamma=2.0, prior="jeffreys"), "prior"),
        (dict(released=0.5, noise_scale=0.1, gamma=2.0, prior=("beta", 0.0, 1.0)), "Beta prior"),
        (dict(released=0.5, noise_scale=0.1, gamma=2.0, prior=("gamma", 1.0, 1.0)), "beta"),
    ],
)
def test_bad_input_raises_dpinputerror(kwargs, match):
    released = kwargs.pop("released")
    with pytest.raises(DPInputError, match=match):
        gini_posterior(released, **kwargs)


def test_bad_level_kind_and_support():
    post = gini_posterior(0.5, noise_scale=0.1, gamma=2.0)
    for level in (0.0, 1.0, 1.5, float("nan")):
        with pytest.raises(DPInputError, match="credible level"):
            post.interval(level)
    with pytest.raises(DPInputError, match="kind"):
        post.interval(0.95, kind="central")
    with pytest.raises(DPInputError, match="support"):
        grid_posterior(0.5, noise="gaussian", noise_scale=0.1, support=(1.0, 0.0))
    with pytest.raises(DPInputError, match="noise"):
        grid_posterior(0.5, noise="student", noise_scale=0.1)
    with pytest.raises(DPInputError, match="missing or infinite"):
        grid_posterior_batch([0.5, float("nan")], noise="gaussian", noise_scale=0.1)


def test_posterior_of_actual_gini_releases_covers_the_truth():
    # End to end with dpcore.gini: for one fixed data set, many releases of the real mechanism; with
    # noise far from the ends of [0, 1] a flat-prior posterior is a translation-family confidence
    # distribution, so its 95% interval also has ~95% frequentist coverage.
    from dpcore import gini as G

    x = np.random.default_rng(8).lognormal(10.5, 0.9, 2000)
    sim = G.simulate_gini_releases(
        x, epsilon=1.0, gamma=2.0, lower=0.0, upper=float(x.max() * 1.5), n_releases=N_COVER, rng=9
    )
    assert sim.noise_scale < 0.01  # so truncation at 0 and 1 is negligible for g near 0.47
    batch = gini_posterior_batch(
        sim.releases, noise_scale=sim.noise_scale, gamma=2.0, level=0.95, n_uniform=257, n_local=200
    )
    cov = float(batch.covers(sim.confidential_true_value).mean())
    assert abs(cov - 0.95) <= 4 * SD_COVER, cov
