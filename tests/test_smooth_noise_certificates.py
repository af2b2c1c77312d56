"""Certificates of the light-tailed smooth noises: bound >= brute force, broken constants fail.

Laplace log-normal (Bun & Steinke 2019, Section 3.1): ``smooth_noise.lln_renyi_bound`` is a proof in
three steps (see its docstring). Each step is checked here against an independent computation that it
must dominate, with a witness showing its constant is (nearly) attained, so a weakened constant fails:

* step 1, log p is L-Lipschitz with L = e^{3 sigma^2/2}: finite differences of the numerical log density
  reach 0.9999 L near 0 and never exceed L;
* step 1, pure eps -> eps^2/2-zCDP: randomized response (the worst pure-eps pair) attains it as eps -> 0;
* step 2, a dilation is a Gaussian shift in log-scale: the Gaussian Renyi divergence a m^2/2, exactly;
* step 3, the zCDP chain rule (sqrt rho_1 + sqrt rho_2)^2: exact on a chain of three Gaussians;
* the whole bound: Renyi divergences of the LLN computed by quadrature (``lln_renyi_divergence``,
  converged on the grid used) on a grid of (shift, dilation, order) never exceed it;
* the calibration: the certified rho never exceeds the recorded rho, and s, t or sigma off by 3% do;
* (epsilon, delta): the hockey-stick divergence of the LLN at the extreme neighbours, computed directly,
  is below delta at the epsilon the CKS conversion of the certified rho claims.

Laplace (NRS): the same two sides for ``laplace_smooth_delta`` (tests/test_noise_smooth.py has the
brute-force grid); here the broken-by-a-few-percent constants.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dpcore import budget
from dpcore.noise import smooth
from dpcore.validation import DPInputError

SIGMAS = [0.15, 0.309, 0.6, 1.0]


# ------------------------------------------------------------------------------------ step 1: Lipschitz


@pytest.mark.parametrize("sigma", SIGMAS)
def test_log_density_lipschitz_constant_is_attained_and_never_exceeded(sigma):
    dist = smooth.LaplaceLogNormal(sigma)
    z = np.unique(
        np.concatenate([np.linspace(0.0, 3.0, 3001), np.geomspace(3.0, 1e5, 800), -np.geomspace(1e-4, 50.0, 400)])
    )
    log_p = dist.exact_logpdf(z)
    slopes = np.abs(np.diff(log_p) / np.diff(z))
    lipschitz = smooth.lln_log_density_lipschitz(sigma)
    assert lipschitz == pytest.approx(math.exp(1.5 * sigma**2))
    assert slopes.max() <= lipschitz * (1 + 1e-4)
    # attained near 0 (the tilted mean of W = e^{-sigma Y} is largest at z = 0): a constant lowered by
    # 0.05 % (e.g. e^{1.49 sigma^2} at sigma = 0.3) would be beaten here
    # slope at 0+ by Richardson extrapolation of the chords on [0, h] and [0, 2h] (error O(h^2))
    h = 1e-3
    log_0, log_h, log_2h = dist.exact_logpdf(np.array([0.0, h, 2 * h]))
    at_zero = abs(2 * (log_h - log_0) / h - (log_2h - log_0) / (2 * h))
    assert at_zero >= lipschitz * (1 - 2e-4)


def test_pure_to_zcdp_constant_is_attained_by_randomized_response():
    """D_a of randomized response with ratio e^eps (the worst pure-eps pair) over a eps^2/2 -> 1 as eps -> 0."""
    for eps in (1e-3, 0.05, 0.5):
        for a in (1.1, 2.0, 8.0):
            rr = math.log((math.exp(a * eps) + math.exp((1 - a) * eps)) / (1 + math.exp(eps))) / (a - 1)
            assert rr <= a * eps**2 / 2 * (1 + 1e-12)
            if eps == 1e-3:
                assert rr >= 0.99 * a * eps**2 / 2


@pytest.mark.parametrize("sigma", [0.309, 0.6])
def test_lln_shift_alone_below_step_1(sigma):
    """Brute force: D_a(Z + d || Z) <= a (L d)^2 / 2 and <= L d (pure) for the LLN."""
    lipschitz = smooth.lln_log_density_lipschitz(sigma)
    orders = np.array([1.1, 2.0, 8.0, 32.0, 128.0])
    for d in (0.05, 0.3, 1.0):
        numeric = smooth.lln_renyi_divergence(orders, sigma, d, 0.0, n_grid=6001)
        assert np.all(numeric <= orders * (lipschitz * d) ** 2 / 2)
        assert np.all(numeric <= lipschitz * d * (1 + 1e-6))


# ------------------------------------------------------------------------------------ step 2 and 3


@pytest.mark.parametrize("sigma", [0.309, 0.6])
def test_lln_dilation_alone_below_the_gaussian_shift(sigma):
    """D_a(Z || e^lam Z) <= a lam^2 / (2 sigma^2) (data processing of a Gaussian shift), approached at high order.

    The ratio tends to 1 as (a - 1) lam grows (the far right tail of ln|Z| is the Gaussian's): 0.95 at
    (a - 1) lam ~ 40, so a dilation term weakened by 3% (bound x 0.94) is beaten here."""
    orders = np.array([1.1, 2.0, 8.0, 32.0, 128.0, 512.0, 2048.0])
    best_ratio = 0.0
    for lam in (-0.2, -0.02, 0.02, 0.07):
        numeric = smooth.lln_renyi_divergence(orders, sigma, 0.0, lam, n_grid=6001)
        bound = smooth.lln_renyi_bound(orders, sigma, 0.0, lam)
        assert np.all(numeric <= bound)
        inside = (orders - 1) * abs(lam) <= 45  # the quadrature window reaches |z| = e^60
        best_ratio = max(best_ratio, float(np.max((numeric / bound)[inside])))
    assert best_ratio > 0.94


def _gaussian_renyi(order, mean_gap):
    """Exact D_a(N(0,1) || N(m,1)) by quadrature (independent of the closed form a m^2 / 2)."""
    x = np.linspace(-60, 60, 200_001)
    log_p = -0.5 * x**2
    log_q = -0.5 * (x - mean_gap) ** 2
    expo = order * log_p + (1 - order) * log_q - 0.5 * math.log(2 * math.pi)
    m = expo.max()
    return (m + math.log(np.exp(expo - m).sum() * (x[1] - x[0]))) / (order - 1)


def test_chain_rule_is_exact_on_gaussians():
    """N(0,1) -> N(m1,1) -> N(m1+m2,1): D_a = a (m1+m2)^2/2 = a (sqrt rho1 + sqrt rho2)^2, no slack to lose."""
    for m1, m2 in ((0.3, 0.5), (0.05, 1.2), (0.0, 0.7)):
        rho = smooth.zcdp_chain_rho(m1**2 / 2, m2**2 / 2)
        for a in (1.3, 4.0, 20.0):
            assert _gaussian_renyi(a, m1 + m2) == pytest.approx(a * rho, rel=1e-7)
    assert smooth.zcdp_chain_rho(0.02, 0.0) == 0.02
    with pytest.raises(DPInputError):
        smooth.zcdp_chain_rho(-0.1, 0.2)


# ------------------------------------------------------------------------------------ the whole bound

CALIBRATIONS = [dict(epsilon=1.0, delta=1e-6), dict(rho=0.5), dict(epsilon=0.25, delta=1e-6)]


@pytest.mark.parametrize("setting", CALIBRATIONS, ids=["eps1", "rho0.5", "eps0.25"])
def test_lln_brute_force_never_beats_the_certificate(setting):
    """Grid of shifts (to 3 s), dilations (to 3 t, both signs) and orders 1.1 .. 128; both directions."""
    cal = smooth.lln_calibration(**setting)
    orders = np.array([1.1, 1.5, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0])
    worst_ratio = 0.0
    for d in (-3.0, -1.0, 0.0, 0.5, 1.0, 3.0):
        for lam in (-3.0, -1.0, 0.0, 1.0, 3.0):
            if d == 0.0 and lam == 0.0:
                continue
            shift, dilation = d * cal.alpha, lam * cal.beta
            numeric = smooth.lln_renyi_divergence(orders, cal.sigma, shift, dilation, n_grid=4001)
            bound = smooth.lln_renyi_bound(orders, cal.sigma, shift, dilation)
            assert np.all(numeric <= bound), (d, lam, numeric / bound)
            worst_ratio = max(worst_ratio, float(np.max(numeric / bound)))
            if abs(d) <= 1 and abs(lam) <= 1:  # a neighbour of the calibration: within rho
                assert np.all(bound <= orders * cal.rho * (1 + 1e-12))
    assert worst_ratio > 0.3  # the brute force is not trivially small


def test_brute_force_is_converged_on_the_grid_used():
    """The quadrature used above agrees with a 4x finer one within 1% (so 'never beats' is not an artefact)."""
    cal = smooth.lln_calibration(1.0, 1e-6)
    orders = np.array([1.5, 4.0, 32.0, 128.0])
    for d, lam in ((cal.alpha, cal.beta), (-3 * cal.alpha, 3 * cal.beta), (0.0, -cal.beta)):
        coarse = smooth.lln_renyi_divergence(orders, cal.sigma, d, lam, n_grid=4001)
        fine = smooth.lln_renyi_divergence(orders, cal.sigma, d, lam, n_grid=16001)
        assert np.allclose(coarse, fine, rtol=0.01, atol=1e-6)


# ------------------------------------------------------------------------------------ the calibration


@pytest.mark.parametrize(
    "setting",
    [dict(epsilon=e, delta=d) for e in (0.1, 0.25, 1.0, 4.0) for d in (1e-6, 1e-3)]
    + [dict(rho=r, beta=b) for r in (0.01, 0.5, 3.0) for b in (0.01, 0.1)],
)
def test_lln_calibration_is_certified_and_tight(setting):
    cal = smooth.lln_calibration(**setting)
    certified = smooth.lln_certified_rho(cal.alpha, cal.beta, cal.sigma)
    assert certified <= cal.rho
    assert certified >= cal.rho * (1 - 1e-9)
    assert cal.cost == budget.zcdp(cal.rho)


@pytest.mark.parametrize("broken", ["s", "t", "sigma"])
def test_lln_constants_broken_by_three_percent_fail_the_certificate(broken):
    """s or t 3% larger, or sigma 3% smaller (with s, t kept): certified rho above the rho recorded."""
    for setting in CALIBRATIONS:
        cal = smooth.lln_calibration(**setting)
        s, t, sigma = cal.alpha, cal.beta, cal.sigma
        if broken == "s":
            s *= 1.03
        elif broken == "t":
            t *= 1.03
        else:
            sigma *= 0.97
        assert smooth.lln_certified_rho(s, t, sigma) > cal.rho * 1.005


# ------------------------------------------------------------------------------------ (epsilon, delta)


@functools.lru_cache(maxsize=8)
def _lln_grid(sigma: float, n_grid: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Quadrature nodes z, weights and the density p = LLN(sigma) on them: the same for every neighbour Q, so
    computed once per sigma (the y-quadrature of exact_logpdf is most of the cost)."""
    dist = smooth.LaplaceLogNormal(sigma)
    wmax = math.asinh(math.exp(min(60.0, 14.0 * sigma + 12.0)))
    w = np.linspace(-wmax, wmax, n_grid)
    z = np.sinh(w)
    jac = np.cosh(w) * (w[1] - w[0])
    return z, jac, np.exp(dist.exact_logpdf(z))


def _lln_hockey_stick(epsilon, sigma, shift, log_dilation, n_grid=20001):
    """max(E_eps(P||Q), E_eps(Q||P)) = integral of (p - e^eps q)_+ for P = LLN(sigma), Q = e^lam P + d."""
    dist = smooth.LaplaceLogNormal(sigma)
    z, jac, p = _lln_grid(sigma, n_grid)
    q = np.exp(dist.exact_logpdf((z - shift) * math.exp(-log_dilation)) - log_dilation)
    return max(
        float(np.sum(np.maximum(p - math.exp(epsilon) * q, 0) * jac)),
        float(np.sum(np.maximum(q - math.exp(epsilon) * p, 0) * jac)),
    )


@pytest.mark.parametrize("epsilon,delta", [(1.0, 1e-6), (0.25, 1e-6), (4.0, 1e-6), (1.0, 1e-3)])
def test_lln_claimed_epsilon_delta_holds_against_direct_computation(epsilon, delta):
    """The recorded zCDP cost converts (CKS) to (epsilon, delta); the certified rho gives the same delta at that
    epsilon, and the LLN's hockey-stick divergence at the extreme neighbours is below it."""
    cal = smooth.lln_calibration(epsilon, delta)
    certified = smooth.lln_certified_rho(cal.alpha, cal.beta, cal.sigma)
    assert budget.zcdp_to_approx_dp(certified, delta) <= epsilon * (1 + 1e-9)
    assert budget.zcdp_delta_for_epsilon(certified, epsilon) <= delta * (1 + 5e-3)  # grid-minimised inverse
    worst = max(
        _lln_hockey_stick(epsilon, cal.sigma, d * cal.alpha, lam * cal.beta) for d in (-1.0, 1.0) for lam in (-1.0, 1.0)
    )
    assert worst <= delta
    # the direct computation is sensitive: at a much smaller epsilon the same neighbours exceed delta
    assert max(_lln_hockey_stick(epsilon / 8, cal.sigma, d * cal.alpha, cal.beta) for d in (-1.0, 1.0)) > delta


# ------------------------------------------------------------------------------------ Laplace (NRS)


@pytest.mark.parametrize("epsilon,delta", [(0.25, 1e-6), (1.0, 1e-6), (4.0, 1e-6), (1.0, 1e-3)])
def test_laplace_tight_constants_broken_by_three_percent_fail(epsilon, delta):
    """The tight alpha is the largest certified one: alpha or beta 3% larger gives a certified delta above delta;
    the certificate and the brute force agree that the paper's beta with alpha doubled is not (eps, delta)."""
    cal = smooth.laplace_smooth_calibration(epsilon, delta, mode="tight")
    assert cal.certificate <= delta
    assert smooth.laplace_smooth_delta(epsilon, 1.03 * cal.alpha, cal.beta) > delta
    assert smooth.laplace_smooth_delta(epsilon, cal.alpha, 1.03 * cal.beta) > delta
    paper = smooth.laplace_smooth_calibration(epsilon, delta, mode="paper")
    assert paper.alpha == epsilon / 2 and paper.beta == pytest.approx(epsilon / (2 * math.log(2 / delta)))


def test_laplace_certificate_is_within_a_factor_of_the_brute_force():
    """The exact divergence maximised over the neighbours reaches half the certificate (the composition step
    through Z + d costs the rest): a certificate function weakened by a factor 2.2 would be beaten by
    laplace_smooth_hockey_stick; smaller errors in the constants are caught by the tight-calibration test above."""
    for epsilon, delta in ((1.0, 1e-6), (0.25, 1e-6), (4.0, 1e-3)):
        cal = smooth.laplace_smooth_calibration(epsilon, delta, mode="tight")
        exact = max(
            smooth.laplace_smooth_hockey_stick(epsilon, d, lam)
            for d in np.linspace(-cal.alpha, cal.alpha, 41)
            for lam in np.linspace(-cal.beta, cal.beta, 41)
        )
        assert exact <= cal.certificate
        assert exact >= 0.45 * cal.certificate


@pytest.mark.parametrize(
    "epsilon,alpha,beta", [(1.0, 0.5, 0.8), (0.5, 0.1, 0.6), (2.0, 1.0, 0.3), (1.0, 0.2, 0.05), (0.3, 0.05, 0.4)]
)
def test_laplace_certificate_dominates_brute_force_beyond_the_calibrations(epsilon, alpha, beta):
    """Large beta (beta > epsilon - alpha, where the 'centre' events are the worst ones) as well as small:
    the certificate is never beaten by the exact divergence over a grid of neighbours, and is not vacuous."""
    certificate = smooth.laplace_smooth_delta(epsilon, alpha, beta)
    assert certificate < 1.0
    exact = max(
        smooth.laplace_smooth_hockey_stick(epsilon, d, lam)
        for d in np.linspace(-alpha, alpha, 21)
        for lam in np.linspace(-beta, beta, 21)
    )
    assert exact <= certificate
    assert exact >= 0.2 * certificate


# ------------------------------------------------------------------------------------ Gaussian (library only)


def _normal_density(mean: float, sd: float):
    """The N(mean, sd^2) density at one point, in plain floats: scipy.stats' frozen ``pdf`` costs about 0.2 ms of
    argument handling per call, and quad calls the integrand ~10,000 times per case (most of this file's CPU)."""
    scale = 1.0 / (sd * math.sqrt(2.0 * math.pi))
    return lambda u: scale * math.exp(-0.5 * ((u - mean) / sd) ** 2)


def _gaussian_hockey_stick_by_quadrature(epsilon, d, lam):
    from scipy import integrate

    p = _normal_density(0.0, 1.0)
    q = _normal_density(d, math.exp(lam))
    out = []
    for f, g in ((p, q), (q, p)):
        total = 0.0
        edges = np.linspace(-40.0, 40.0, 81)
        for a, b in zip(edges[:-1], edges[1:], strict=True):
            total += integrate.quad(lambda u: max(f(u) - math.exp(epsilon) * g(u), 0.0), a, b, limit=200, epsabs=1e-15)[
                0
            ]
        out.append(total)
    return max(out)


@pytest.mark.parametrize(
    "d,lam,eps", [(0.9, -0.3, 0.5), (-0.4, 0.5, 0.2), (0.3, -0.8, 1.0), (0.0, 0.6, 0.3), (1.5, 0.0, 0.4)]
)
def test_gaussian_exact_hockey_stick_matches_quadrature(d, lam, eps):
    exact = smooth.gaussian_smooth_hockey_stick(eps, d, lam)
    assert exact > 1e-4
    assert exact == pytest.approx(_gaussian_hockey_stick_by_quadrature(eps, d, lam), rel=1e-6, abs=1e-10)


@pytest.mark.parametrize("epsilon,delta", [(0.25, 1e-6), (1.0, 1e-6), (4.0, 1e-6), (1.0, 1e-3)])
def test_gaussian_brute_force_never_beats_certificate_and_broken_constants_fail(epsilon, delta):
    cal = smooth.gaussian_smooth_calibration(epsilon, delta)
    assert cal.certificate <= delta and cal.cost == budget.approx(epsilon, delta)
    exact = max(
        smooth.gaussian_smooth_hockey_stick(epsilon, d, lam)
        for d in np.linspace(-cal.alpha, cal.alpha, 13)
        for lam in np.linspace(-cal.beta, cal.beta, 13)
    )
    assert exact <= cal.certificate
    assert exact >= 0.5 * cal.certificate  # within a factor 2 of the truth
    gen = np.random.default_rng(int(epsilon * 100))
    assert (
        max(
            smooth.gaussian_smooth_hockey_stick(epsilon, a, b)
            for a, b in zip(gen.uniform(-cal.alpha, cal.alpha, 200), gen.uniform(-cal.beta, cal.beta, 200), strict=True)
        )
        <= cal.certificate
    )
    # alpha or beta 3% larger: certified delta above delta; alpha or beta doubled: the exact divergence is too
    assert smooth.gaussian_smooth_delta(epsilon, 1.03 * cal.alpha, cal.beta) > delta
    assert smooth.gaussian_smooth_delta(epsilon, cal.alpha, 1.03 * cal.beta) > delta
    assert max(smooth.gaussian_smooth_hockey_stick(epsilon, s * 2 * cal.alpha, cal.beta) for s in (-1, 1)) > delta
    assert max(smooth.gaussian_smooth_hockey_stick(epsilon, cal.alpha, s * 2 * cal.beta) for s in (-1, 1)) > delta


@pytest.mark.parametrize("epsilon,alpha,beta", [(1.0, 0.5, 0.8), (0.5, 0.1, 0.6), (2.0, 1.0, 0.3), (0.3, 0.05, 0.4)])
def test_gaussian_certificate_dominates_brute_force_beyond_the_calibrations(epsilon, alpha, beta):
    certificate = smooth.gaussian_smooth_delta(epsilon, alpha, beta)
    assert certificate < 1.0
    exact = max(
        smooth.gaussian_smooth_hockey_stick(epsilon, d, lam)
        for d in np.linspace(-alpha, alpha, 21)
        for lam in np.linspace(-beta, beta, 21)
    )
    assert exact <= certificate


def test_gaussian_refuses_bad_input():
    with pytest.raises(DPInputError):
        smooth.gaussian_smooth_calibration(1.0, 0.0)
    with pytest.raises(DPInputError, match="too large"):
        smooth.gaussian_smooth_calibration(1.0, 1e-6, beta=5.0)
    with pytest.raises(DPInputError):
        smooth.gaussian_smooth_hockey_stick(1.0, 0.1, 30.0)


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        ((1.0, 0.5, 26.0), "beta must be <= 25"),
        ((701.0, 0.5, 1.0), "epsilon <= 700"),
        ((1.0, -0.5, 1.0), "alpha"),
    ],
)
def test_the_smooth_delta_certificates_refuse_alike(args, needle):
    """The Laplace and Gaussian certificates check their (epsilon, alpha, beta) by one rule, with one message."""
    messages = set()
    for certificate in (smooth.laplace_smooth_delta, smooth.gaussian_smooth_delta):
        with pytest.raises(DPInputError, match=needle) as caught:
            certificate(*args)
        messages.add(str(caught.value))
    assert len(messages) == 1


@pytest.mark.parametrize("args", [(701.0, 0.0, 0.0), (1.0, 0.0, 26.0), (1.0, 2e6, 0.0), (1.0, math.nan, 0.0)])
def test_the_hockey_stick_oracles_refuse_alike(args):
    """The two brute-force oracles check (epsilon, shift, log_dilation) by one rule, with one message."""
    messages = set()
    for oracle in (smooth.laplace_smooth_hockey_stick, smooth.gaussian_smooth_hockey_stick):
        with pytest.raises(DPInputError) as caught:
            oracle(*args)
        messages.add(str(caught.value))
    assert len(messages) == 1
