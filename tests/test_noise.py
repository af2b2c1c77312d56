"""dpcore.noise: samplers against their exact laws, calibrations against computed privacy loss."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpcore.noise import (
    GeneralizedCauchy,
    analytic_gaussian_delta,
    analytic_gaussian_sigma,
    laplace_scale,
    sample_gaussian,
    sample_generalized_cauchy,
    sample_laplace,
    sample_two_sided_geometric,
    smooth_noise_calibration,
    smooth_noise_privacy_loss,
    two_sided_geometric_pmf,
)
from dpcore.rng import SecureRandom, secure_generator
from dpcore.validation import DPInputError

N_DRAWS = 40_000


# ------------------------------------------------------------------------------- Laplace
def test_laplace_scale_is_sensitivity_over_epsilon():
    assert laplace_scale(0.5, 2.0) == pytest.approx(4.0)
    assert laplace_scale(2.0) == pytest.approx(0.5)


def test_laplace_sampler_matches_its_law_and_would_catch_a_wrong_scale():
    z = sample_laplace(2.0, N_DRAWS, rng=1)
    assert stats.kstest(z, stats.laplace(scale=2.0).cdf).pvalue > 1e-3
    assert stats.kstest(z, stats.laplace(scale=2.2).cdf).pvalue < 1e-6


def test_laplace_privacy_loss_equals_epsilon():
    eps, sens = 0.7, 3.0
    b = laplace_scale(eps, sens)
    x = np.linspace(-50, 50, 10_001)
    loss = np.abs(stats.laplace(scale=b).logpdf(x) - stats.laplace(loc=sens, scale=b).logpdf(x))
    assert loss.max() == pytest.approx(eps, rel=1e-9)


# --------------------------------------------------------------------- two-sided geometric
def test_geometric_pmf_sums_to_one_and_has_ratio_e_eps():
    eps = 0.3
    k = np.arange(-400, 401)
    p = two_sided_geometric_pmf(k, eps)
    assert p.sum() == pytest.approx(1.0, abs=1e-12)
    ratio = np.log(p[:-1] / p[1:])
    assert np.abs(ratio).max() == pytest.approx(eps, rel=1e-12)  # privacy loss of a shift by one


@pytest.mark.parametrize("eps", [0.1, 1.0, 3.0])
def test_geometric_sampler_chi_square(eps):
    z = sample_two_sided_geometric(eps, N_DRAWS, rng=7)
    assert z.dtype == np.int64
    kmax = int(np.ceil(6 / eps))
    k = np.arange(-kmax, kmax + 1)
    expected = two_sided_geometric_pmf(k, eps) * N_DRAWS
    observed = np.array([(z == v).sum() for v in k], dtype=float)
    # lump the tails into the end cells
    expected[0] += (1 - two_sided_geometric_pmf(k, eps).sum()) / 2 * N_DRAWS
    expected[-1] += (1 - two_sided_geometric_pmf(k, eps).sum()) / 2 * N_DRAWS
    observed[0] += (z < -kmax).sum()
    observed[-1] += (z > kmax).sum()
    keep = expected > 5
    obs, exp = observed[keep], expected[keep]
    exp = exp * obs.sum() / exp.sum()
    assert stats.chisquare(obs, exp).pvalue > 1e-3
    # a sampler with epsilon off by 10% is rejected
    wrong = two_sided_geometric_pmf(k, eps * 1.1)[keep]
    wrong = wrong * obs.sum() / wrong.sum()
    assert stats.chisquare(obs, wrong).pvalue < 1e-4


# ------------------------------------------------------------------------- analytic Gaussian
@pytest.mark.parametrize("eps,delta,sigma", [(0.5, 5e-5, 6.2500), (1.0, 1e-4, 3.1857)])
def test_analytic_gaussian_reference_values(eps, delta, sigma):
    assert analytic_gaussian_sigma(eps, delta) == pytest.approx(sigma, abs=5e-4)


@pytest.mark.parametrize("eps,delta,sens", [(0.1, 1e-6, 1.0), (1.0, 1e-5, 2.5), (5.0, 1e-9, 1.0)])
def test_analytic_gaussian_is_smallest_valid_sigma(eps, delta, sens):
    sigma = analytic_gaussian_sigma(eps, delta, sens)
    assert analytic_gaussian_delta(sigma, eps, sens) <= delta
    assert analytic_gaussian_delta(sigma * 0.999, eps, sens) > delta
    # the exact privacy profile by numerical integration of the privacy-loss random variable:
    # delta(eps) = P[L > eps] - e^eps P[L' < -eps], L ~ N(mu, 2 mu), mu = D^2 / (2 sigma^2)
    mu = sens**2 / (2 * sigma**2)
    direct = stats.norm.sf(eps, mu, math.sqrt(2 * mu)) - math.exp(eps) * stats.norm.cdf(-eps, mu, math.sqrt(2 * mu))
    assert direct == pytest.approx(analytic_gaussian_delta(sigma, eps, sens), rel=1e-6, abs=1e-15)


def test_analytic_beats_classical_gaussian_bound():
    eps, delta = 0.5, 1e-5
    classical = math.sqrt(2 * math.log(1.25 / delta)) / eps
    assert analytic_gaussian_sigma(eps, delta) < classical


def test_gaussian_sampler():
    z = sample_gaussian(3.0, N_DRAWS, rng=3)
    assert stats.kstest(z, stats.norm(scale=3.0).cdf).pvalue > 1e-3


# ------------------------------------------------------------------------- generalized Cauchy
@pytest.mark.parametrize("gamma", [1.5, 2.0, 3.0, 4.0, 8.0])
def test_generalized_cauchy_density_is_normalised(gamma):
    gc = GeneralizedCauchy(gamma)
    total = 2 * integrate.quad(gc.pdf, 0, np.inf, limit=200)[0]
    assert total == pytest.approx(1.0, rel=1e-7)


@pytest.mark.parametrize("gamma", [1.5, 2.0, 4.0])
def test_generalized_cauchy_cdf_and_ppf_are_exact(gamma):
    gc = GeneralizedCauchy(gamma)
    for z in (-30.0, -2.0, -0.3, 0.0, 0.7, 5.0, 1e4):
        numeric = 0.5 + math.copysign(integrate.quad(gc.pdf, 0, abs(z), limit=200)[0], z)
        assert gc.cdf(z) == pytest.approx(numeric, rel=1e-7, abs=1e-12)
    p = np.array([1e-9, 1e-4, 0.01, 0.3, 0.5, 0.8, 0.999, 1 - 1e-9])
    assert gc.cdf(gc.ppf(p)) == pytest.approx(p, rel=1e-7)
    # symmetric; for gamma = 2 it is exact for the standard-Cauchy-like law 1/(pi/... ) checked by quad
    assert gc.ppf(0.25) == pytest.approx(-gc.ppf(0.75))


def test_gamma_two_tail_has_closed_form():
    # for gamma = 2 the density is 1/(pi (1+z^2)): the standard Cauchy
    gc = GeneralizedCauchy(2.0)
    z = np.array([-100.0, -1.0, 0.0, 2.0, 1e6])
    assert gc.cdf(z) == pytest.approx(stats.cauchy.cdf(z), rel=1e-10)


@pytest.mark.parametrize("gamma", [1.5, 2.0, 4.0])
def test_generalized_cauchy_sampler_ks(gamma):
    gc = GeneralizedCauchy(gamma)
    z = gc.rvs(N_DRAWS, rng=11)
    assert stats.kstest(z, gc.cdf).pvalue > 1e-3
    # the law of a neighbouring gamma is rejected: the test has power
    assert stats.kstest(z, GeneralizedCauchy(gamma * 1.15).cdf).pvalue < 1e-4


def test_sample_generalized_cauchy_function_and_secure_source():
    z = sample_generalized_cauchy(4.0, 20_000, rng=secure_generator())
    assert stats.kstest(z, GeneralizedCauchy(4.0).cdf).pvalue > 1e-4


@pytest.mark.parametrize("gamma", [4.0, 6.0])
def test_generalized_cauchy_moments(gamma):
    gc = GeneralizedCauchy(gamma)
    var = 2 * integrate.quad(lambda z: z * z * gc.pdf(z), 0, np.inf, limit=200)[0]
    mabs = 2 * integrate.quad(lambda z: z * gc.pdf(z), 0, np.inf, limit=200)[0]
    assert gc.variance == pytest.approx(var, rel=1e-6)
    assert gc.mean_abs == pytest.approx(mabs, rel=1e-6)
    assert GeneralizedCauchy(3.0).variance == math.inf
    assert GeneralizedCauchy(2.0).mean_abs == math.inf


# ------------------------------------------------------------- smooth-noise privacy certificate
def brute_force_loss(gamma, alpha, beta):
    """Dense evaluation of the raw formula over (delta, lambda, u), with no reduction used."""
    gc = GeneralizedCauchy(gamma)
    u = np.concatenate([np.linspace(-30, 30, 3001), np.geomspace(1e-3, 1e6, 700), -np.geomspace(1e-3, 1e6, 700)])
    lam = np.linspace(-beta, beta, 41)[:, None, None]
    d = np.linspace(-alpha, alpha, 11)[None, :, None]
    loss = lam + gc.logpdf(u[None, None, :]) - gc.logpdf(np.exp(-lam) * (u[None, None, :] - d))
    return float(np.abs(loss).max())


@pytest.mark.parametrize(
    "gamma,alpha,beta",
    [
        (2.0, 0.125, 0.5),
        (2.0, 0.7, 0.5),
        (4.0, 0.0625, 0.25),
        (1.5, 0.3, 0.2),
        (3.0, 0.05, 0.1),
        (10.0, 0.025, 0.1),
    ],
)
def test_certificate_is_never_below_brute_force_and_is_tight(gamma, alpha, beta):
    cert = smooth_noise_privacy_loss(gamma, alpha, beta)
    brute = brute_force_loss(gamma, alpha, beta)
    assert cert >= brute - 1e-12
    assert cert - brute < 2e-3 * max(brute, 0.1)  # and it is not loose


def test_paper_constants_use_about_half_the_budget_at_gamma_2():
    cal = smooth_noise_calibration(1.0, 2.0, mode="paper")
    assert (cal.alpha, cal.beta) == (pytest.approx(1 / 8), pytest.approx(1 / 2))
    assert 0.50 < cal.certified_loss < 0.55
    alpha, beta = cal[:2]
    assert alpha == cal.alpha and beta == cal.beta


@pytest.mark.parametrize("eps", [0.05, 0.25, 1.0, 3.0])
@pytest.mark.parametrize("gamma", [1.5, 2.0, 4.0])
def test_every_shipped_calibration_is_certified(eps, gamma):
    for mode in ("paper", "tight"):
        cal = smooth_noise_calibration(eps, gamma, mode=mode)
        assert cal.certified_loss <= eps
        # recompute the certificate independently of the cached value
        assert smooth_noise_privacy_loss(gamma, cal.alpha, cal.beta, tol=1e-7) <= eps * (1 + 1e-9)


def test_tight_calibration_is_tight_and_about_five_times_paper_at_gamma_2():
    eps, gamma = 1.0, 2.0
    tight = smooth_noise_calibration(eps, gamma)
    paper = smooth_noise_calibration(eps, gamma, mode="paper")
    assert tight.beta == pytest.approx(paper.beta)
    assert 4.5 < tight.alpha / paper.alpha < 7.0
    # 2% more alpha breaks epsilon-DP even by plain brute force: the calibration is not loose
    assert brute_force_loss(gamma, tight.alpha * 1.02, tight.beta) > eps


def test_paper_constants_fail_for_large_gamma_and_are_refused():
    # independent brute force shows the NRS-style constants exceed epsilon at gamma = 10 ...
    assert brute_force_loss(10.0, 1 / 40, 1 / 10) > 1.04
    # ... so the paper mode refuses, and the tight mode gives a smaller, certified alpha
    with pytest.raises(DPInputError, match="not epsilon-DP"):
        smooth_noise_calibration(1.0, 10.0, mode="paper")
    cal = smooth_noise_calibration(1.0, 10.0)
    assert cal.alpha < 1 / 40 and cal.certified_loss <= 1.0


def test_explicit_beta_and_its_limits():
    cal = smooth_noise_calibration(1.0, 2.0, beta=0.2)
    assert cal.beta == 0.2 and cal.certified_loss <= 1.0
    assert cal.alpha > smooth_noise_calibration(1.0, 2.0).alpha  # smaller beta leaves room for more alpha
    with pytest.raises(DPInputError, match="too large"):
        smooth_noise_calibration(1.0, 2.0, beta=1.0)


def test_smooth_noise_mechanism_end_to_end_loss():
    """Direct check on a release: two neighbouring (f, S) pairs and the output log-density ratio."""
    eps, gamma = 1.0, 2.0
    cal = smooth_noise_calibration(eps, gamma)
    gc = GeneralizedCauchy(gamma)
    f, s = 0.4, 0.01
    f2, s2 = f + s, s * math.exp(cal.beta)  # worst neighbour: shift by S(X), S grows by e^beta
    y = np.linspace(-5, 5, 200_001)
    log1 = np.log(cal.alpha / s) + gc.logpdf(cal.alpha * (y - f) / s)
    log2 = np.log(cal.alpha / s2) + gc.logpdf(cal.alpha * (y - f2) / s2)
    assert np.abs(log1 - log2).max() <= eps


# ------------------------------------------------------------------------- secure source
def test_secure_random_uniform_laplace_and_integers():
    sr = SecureRandom()
    u = sr.random(20_000)
    assert u.min() > 0 and u.max() < 1
    assert stats.kstest(u, "uniform").pvalue > 1e-4
    assert stats.kstest(sr.laplace(0, 2.0, 20_000), stats.laplace(scale=2.0).cdf).pvalue > 1e-4
    k = sr.integers(0, 7, size=21_000)
    assert stats.chisquare(np.bincount(k, minlength=7)).pvalue > 1e-4
    g = sample_two_sided_geometric(0.5, 20_000, rng=sr)
    assert abs(g.mean()) < 6 * g.std() / math.sqrt(g.size)


# ------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(
    "call",
    [
        lambda: laplace_scale(0.0),
        lambda: laplace_scale(-1.0),
        lambda: laplace_scale(float("nan")),
        lambda: laplace_scale(float("inf")),
        lambda: sample_two_sided_geometric(0.0, 10),
        lambda: analytic_gaussian_sigma(1.0, 1.0),
        lambda: analytic_gaussian_sigma(1.0, 0.0),
        lambda: GeneralizedCauchy(1.0),
        lambda: GeneralizedCauchy(float("nan")),
        lambda: smooth_noise_calibration(1.0, 0.9),
        lambda: smooth_noise_calibration(0.0, 2.0),
        lambda: smooth_noise_calibration(1.0, 2.0, mode="fast"),
        lambda: smooth_noise_privacy_loss(2.0, 0.0, 0.1),
        lambda: sample_laplace(1.0, -3),
        lambda: GeneralizedCauchy(2.0).ppf(1.5),
    ],
)
def test_bad_parameters_raise_value_error(call):
    with pytest.raises(ValueError) as info:
        call()
    assert str(info.value)


def test_seeded_draws_are_reproducible():
    a = sample_generalized_cauchy(2.0, 5, rng=42)
    b = sample_generalized_cauchy(2.0, 5, rng=np.random.default_rng(42))
    assert np.array_equal(a, b)


def test_secure_source_passes_validation_and_unsupported_methods_raise_type_error():
    from dpcore.validation import as_generator

    sr = secure_generator()
    assert as_generator(sr) is sr
    assert stats.kstest(sr.standard_cauchy(20_000), "cauchy").pvalue > 1e-4
    with pytest.raises(TypeError, match="rng"):
        sr.dirichlet([1.0, 1.0])


@pytest.mark.parametrize("eps,gamma", [(20.0, 2.0), (50.0, 4.0)])
def test_large_epsilon_calibration_is_certified_and_tight(eps, gamma):
    cal = smooth_noise_calibration(eps, gamma)
    assert cal.certified_loss <= eps
    assert brute_force_loss(gamma, cal.alpha, cal.beta) <= eps
    assert brute_force_loss(gamma, cal.alpha * 1.05, cal.beta) > eps


def test_absurd_privacy_parameters_are_refused_with_a_message():
    with pytest.raises(DPInputError, match="beta"):
        smooth_noise_privacy_loss(2.0, 0.1, 1.73e16)
    with pytest.raises(DPInputError, match="no privacy|too large"):
        smooth_noise_calibration(1.44e16, 2.0)
    with pytest.raises(DPInputError, match="too large"):
        smooth_noise_calibration(100.0, 2.0)  # beta = 50: no privacy left
    with pytest.raises(DPInputError, match="integers"):
        two_sided_geometric_pmf(float("nan"), 1.0)
    with pytest.raises(DPInputError, match="no privacy"):
        laplace_scale(1e7)


# ---------------------------------------------------------------------------------------------
# Uniforms strictly inside (0, 1), every sampler finite for the extreme words
# ---------------------------------------------------------------------------------------------


def test_uniform_from_words_extremes_are_strictly_inside():
    from dpcore.rng import uniform_from_words

    u = uniform_from_words(np.array([0, 2**64 - 1, 2**63, (2**53 - 1) << 11], dtype=np.uint64))
    assert np.all(u > 0.0) and np.all(u < 1.0)
    assert u[0] == 2.0**-53 and u[1] == 1.0 - 2.0**-53


@pytest.mark.parametrize("byte", [b"\x00", b"\xff"])
def test_every_secure_sampler_is_finite_for_extreme_words(monkeypatch, byte):
    import dpcore.rng as rng_module

    monkeypatch.setattr(rng_module.os, "urandom", lambda n: byte * n)
    g = secure_generator()
    u = g.random(4)
    assert np.all(u > 0) and np.all(u < 1)
    draws = {
        "laplace": g.laplace(0.0, 1.0, 4),
        "normal": g.normal(0.0, 1.0, 4),
        "cauchy": g.standard_cauchy(4),
        "exponential": g.exponential(1.0, 4),
        "gamma": g.gamma(0.5, 1.0, 4),
        "beta": g.beta(0.5, 0.5, 4),
        "geometric": g.geometric(0.3, 4),
        "sample_laplace": sample_laplace(2.0, 4, rng=g),
        "sample_gaussian": sample_gaussian(2.0, 4, rng=g),
        "two_sided_geometric": sample_two_sided_geometric(1.0, 4, rng=g),
    }
    for gamma in (1.01, 2.0, 4.0, 50.0):
        draws[f"gc{gamma}"] = sample_generalized_cauchy(gamma, 4, rng=g)
    for name, v in draws.items():
        assert np.all(np.isfinite(np.asarray(v, dtype=float))), name


def test_the_random_sources_live_in_dpcore_rng():
    import dpcore.noise as noise_module
    import dpcore.rng as rng_module
    import dpcore.validation as validation_module

    assert not hasattr(noise_module, "secure_generator")  # one home: dpcore.rng
    assert validation_module.as_generator is rng_module.as_generator
    assert validation_module.as_generator(rng_module.secure_generator()).__class__ is rng_module.SecureRandom


# ---------------------------------------------------------------------------------------------
# Mutation gaps: each piece of the certificate tested directly
# ---------------------------------------------------------------------------------------------


def test_certificate_includes_the_tail_term(monkeypatch):
    import dpcore.noise.certificates as noise_module

    noise_module._certified_loss.cache_clear()
    monkeypatch.setattr(noise_module, "_tail_bound", lambda u0, gamma, alpha, beta: 99.0)
    try:
        assert noise_module.smooth_noise_privacy_loss(2.0, 0.3, 0.5, tol=1e-4) == pytest.approx(99.0)
    finally:
        noise_module._certified_loss.cache_clear()


@pytest.mark.parametrize("gamma", [2.0, 4.0])
@pytest.mark.parametrize("beta", [1.0, 2.0, 3.0])
def test_local_lipschitz_bound_dominates_finite_difference_slopes(gamma, beta):
    import dpcore.noise.certificates as noise_module

    alpha = 0.4
    u = np.unique(np.concatenate([np.linspace(0.0, 12.0, 120_001), np.geomspace(12.0, 1e5, 20_001)]))
    f = noise_module.loss_profiles(u, gamma, alpha, beta)
    slopes = np.abs(np.diff(f)) / np.diff(u)
    # the bound on coarse intervals must cover every fine slope inside them
    coarse = np.unique(np.concatenate([np.linspace(0.0, 12.0, 241), np.geomspace(12.0, 1e5, 401)]))
    lip = noise_module._local_lipschitz(coarse[:-1], coarse[1:], gamma, alpha, beta)
    which = np.clip(np.searchsorted(coarse, u[:-1], side="right") - 1, 0, coarse.size - 2)
    assert np.all(slopes <= lip[which] * (1 + 1e-9) + 1e-9), float(np.max(slopes / lip[which]))
    # and the bound is not vacuous: somewhere the slope comes within a factor 3 of it
    assert np.max(slopes / lip[which]) > 1 / 3
