"""Noise samplers, their calibration, and certified privacy-loss bounds.

Everything that draws takes ``rng``: a ``numpy.random.Generator``, an int seed, ``None`` (fresh
OS entropy), or a :class:`SecureRandom` (OS CSPRNG, for real releases). All samplers are vectorised.

Contents
--------
* Laplace: ``laplace_scale``, ``sample_laplace``.
* Two-sided geometric (discrete Laplace): P(k) ∝ exp(-epsilon |k|), ``sample_two_sided_geometric``.
* Gaussian with the analytic calibration of Balle & Wang (2018, Theorem 8 / Algorithm 1):
  ``analytic_gaussian_sigma`` (smallest sigma, by bisection), ``analytic_gaussian_delta``.
* Generalized Cauchy, density ∝ 1/(1+|z|^gamma), gamma > 1: :class:`GeneralizedCauchy` with exact
  CDF/quantile (regularised incomplete beta) and an exact sampler (|Z|^gamma is beta-prime).
* Smooth-sensitivity noise (Nissim, Raskhodnikova & Smith 2007): releasing
  ``f(X) + (S(X)/alpha) Z`` with ``S`` a beta-smooth upper bound on local sensitivity.
  ``smooth_noise_privacy_loss`` certifies the worst-case privacy loss; ``smooth_noise_calibration``
  returns (alpha, beta) for a target epsilon ("paper" or "tight").
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

import numpy as np
from scipy import special

from ..rng import SecureRandom
from ..validation import (
    DPInputError,
    as_generator,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
)

__all__ = [
    "laplace_scale",
    "sample_laplace",
    "sample_two_sided_geometric",
    "two_sided_geometric_pmf",
    "analytic_gaussian_delta",
    "analytic_gaussian_sigma",
    "sample_gaussian",
    "GeneralizedCauchy",
    "sample_generalized_cauchy",
    "smooth_noise_privacy_loss",
    "smooth_noise_calibration",
    "SmoothNoiseCalibration",
]


# ---------------------------------------------------------------------------------------------
# Randomness sources
# ---------------------------------------------------------------------------------------------


def _rng(rng):
    return rng if isinstance(rng, SecureRandom) else as_generator(rng)


def _size(size) -> int | tuple[int, ...]:
    if isinstance(size, tuple):
        return tuple(check_int(s, "size", minimum=0) for s in size)
    return check_int(size, "size", minimum=0)


# ---------------------------------------------------------------------------------------------
# Laplace and two-sided geometric
# ---------------------------------------------------------------------------------------------


def laplace_scale(epsilon: float, sensitivity: float = 1.0) -> float:
    """Scale b = sensitivity / epsilon of the Laplace mechanism (Dwork et al. 2006).

    The privacy loss of Lap(b) noise for outputs that differ by at most ``sensitivity`` is
    |x - x'| / b <= epsilon.
    """
    return check_positive(sensitivity, "sensitivity") / check_epsilon(epsilon)


def sample_laplace(scale: float, size, rng=None) -> np.ndarray:
    """Draws from Laplace(0, scale): density exp(-|z|/scale) / (2 scale)."""
    scale = check_positive(scale, "scale")
    return _rng(rng).laplace(0.0, scale, size=_size(size))


def two_sided_geometric_pmf(k, epsilon: float) -> np.ndarray:
    """P(K = k) = (1 - q)/(1 + q) q^|k| with q = exp(-epsilon) (the discrete Laplace)."""
    epsilon = check_epsilon(epsilon)
    q = math.exp(-epsilon)
    try:
        k = np.asarray(k, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError("k must contain integers") from None
    if not np.all(np.isfinite(k)) or np.any(k != np.round(k)):
        raise DPInputError("k must contain finite integers (the two-sided geometric lives on the integers)")
    return (1 - q) / (1 + q) * np.exp(-epsilon * np.abs(k))


def sample_two_sided_geometric(epsilon: float, size, rng=None) -> np.ndarray:
    """Integer noise with P(k) ∝ exp(-epsilon |k|) (Ghosh, Roughgarden & Sundararajan 2009).

    Drawn as the difference of two i.i.d. geometric counts of failures, each floor(E / epsilon)
    with E ~ Exp(1) (P(floor(E/eps) = k) = e^(-eps k)(1 - e^-eps)); the difference has exactly
    the two-sided geometric law. Added to a count of sensitivity 1 it gives epsilon-DP (log PMF
    ratio of a shift by one is at most epsilon).
    """
    epsilon = check_epsilon(epsilon)
    size = _size(size)
    gen = _rng(rng)
    left = np.floor(gen.standard_exponential(size=size) / epsilon)
    right = np.floor(gen.standard_exponential(size=size) / epsilon)
    return (left - right).astype(np.int64)


# ---------------------------------------------------------------------------------------------
# Gaussian, analytic calibration (Balle & Wang 2018)
# ---------------------------------------------------------------------------------------------


def analytic_gaussian_delta(sigma: float, epsilon: float, sensitivity: float = 1.0) -> float:
    """The exact delta of the Gaussian mechanism N(0, sigma^2) at a given epsilon.

    Balle & Wang (2018), Theorem 8: the mechanism is (epsilon, delta)-DP iff
    Phi(D/(2 sigma) - eps sigma / D) - e^eps Phi(-D/(2 sigma) - eps sigma / D) <= delta,
    with D the L2 sensitivity. The second term is evaluated in log space.
    """
    sigma = check_positive(sigma, "sigma")
    epsilon = check_positive(epsilon, "epsilon", allow_zero=True)
    d = check_positive(sensitivity, "sensitivity")
    a = d / (2 * sigma)
    b = epsilon * sigma / d
    first = special.ndtr(a - b)
    second = math.exp(epsilon + special.log_ndtr(-a - b))
    return max(first - second, 0.0)


def analytic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float = 1.0) -> float:
    """Smallest sigma for which N(0, sigma^2) noise is (epsilon, delta)-DP (Balle & Wang 2018).

    Bisection on the exact condition of :func:`analytic_gaussian_delta` (decreasing in sigma),
    to relative precision 1e-12; the returned sigma satisfies the condition (upper end of the
    bracket). Reference values: sigma(0.5, 5e-5) = 6.2500, sigma(1, 1e-4) = 3.1857.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    d = check_positive(sensitivity, "sensitivity")
    lo, hi = 1e-12 * d, d
    while analytic_gaussian_delta(hi, epsilon, d) > delta:
        lo, hi = hi, hi * 2
        if hi > 1e15 * d:
            raise DPInputError("delta is too small for a finite Gaussian noise scale")
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if analytic_gaussian_delta(mid, epsilon, d) > delta:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


def sample_gaussian(sigma: float, size, rng=None) -> np.ndarray:
    """Draws from N(0, sigma^2)."""
    sigma = check_positive(sigma, "sigma")
    return _rng(rng).normal(0.0, sigma, size=_size(size))


# ---------------------------------------------------------------------------------------------
# Generalized Cauchy
# ---------------------------------------------------------------------------------------------


class GeneralizedCauchy:
    """The distribution with density h(z) = c / (1 + |z|^gamma), gamma > 1.

    Normalising constant: int_R dz / (1 + |z|^gamma) = 2 (pi/gamma) / sin(pi/gamma), so
    c = sin(pi/gamma) gamma / (2 pi). With T = |Z|^gamma, T has the beta-prime law with
    a = 1/gamma, b = 1 - 1/gamma (density ∝ t^(a-1) (1+t)^(-a-b)), i.e. T/(1+T) ~ Beta(a, b).
    Hence the exact CDF  F(z) = 1/2 + sign(z)/2 * I_{t/(1+t)}(a, b), computed for the tails as
    1/2 * I_{1/(1+t)}(b, a) to keep precision, and the exact sampler T = G_a / G_b with
    independent Gamma(a), Gamma(b) variables.

    Moments: E|Z|^s < inf iff s < gamma - 1; E|Z| = sin(pi/g)/sin(2 pi/g) (gamma > 2);
    Var Z = sin(pi/g)/sin(3 pi/g) (gamma > 3). The paper's gamma = 2 is the Cauchy-like case
    with no mean; gamma = 4 (PSEO) has a variance.
    """

    def __init__(self, gamma: float):
        gamma = check_finite(gamma, "gamma")
        if gamma <= 1:
            raise DPInputError(
                f"gamma must be > 1 (the density 1/(1+|z|^gamma) is not integrable otherwise), got {gamma:g}"
            )
        self.gamma = gamma
        self.a = 1.0 / gamma
        self.b = 1.0 - 1.0 / gamma
        self.log_c = math.log(math.sin(math.pi / gamma) * gamma / (2 * math.pi))

    def __repr__(self) -> str:
        return f"GeneralizedCauchy(gamma={self.gamma:g})"

    def _log1p_pow(self, z: np.ndarray) -> np.ndarray:
        """log(1 + |z|^gamma) without overflow."""
        az = np.abs(np.asarray(z, dtype=float))
        with np.errstate(divide="ignore"):
            return np.logaddexp(0.0, self.gamma * np.log(az))

    def logpdf(self, z) -> np.ndarray:
        return self.log_c - self._log1p_pow(z)

    def pdf(self, z) -> np.ndarray:
        return np.exp(self.logpdf(z))

    def sf(self, z) -> np.ndarray:
        """P(Z > z)."""
        z = np.asarray(z, dtype=float)
        inv = np.exp(-self._log1p_pow(z))  # 1/(1+|z|^gamma)
        tail = 0.5 * special.betainc(self.b, self.a, inv)  # P(Z > |z|)
        return np.where(z >= 0, tail, 1.0 - tail)

    def cdf(self, z) -> np.ndarray:
        """P(Z <= z) (symmetric: cdf(z) = sf(-z))."""
        return self.sf(-np.asarray(z, dtype=float))

    def ppf(self, p) -> np.ndarray:
        """Quantile function: the inverse of :meth:`cdf`, exact via the inverse incomplete beta."""
        p = np.asarray(p, dtype=float)
        if np.any((p < 0) | (p > 1)) or np.any(np.isnan(p)):
            raise DPInputError("probabilities for ppf must be in [0, 1]")
        q = np.minimum(p, 1.0 - p)
        y = special.betaincinv(self.b, self.a, 2.0 * q)  # y = 1/(1+T)
        with np.errstate(divide="ignore"):
            t = (1.0 - y) / y
        mag = t ** (1.0 / self.gamma)
        return np.where(p >= 0.5, mag, -mag)

    def _ppf_finite(self, u: np.ndarray | float) -> np.ndarray:
        """Quantile of u in (0, 1), with y = 1/(1+T) floored at the smallest normal double so that
        T = (1 - y)/y and |Z| = T^(1/gamma) stay finite (T <= 4.5e307)."""
        u = np.asarray(u, dtype=float)
        q = np.minimum(u, 1.0 - u)
        y = np.maximum(special.betaincinv(self.b, self.a, 2.0 * q), np.finfo(float).tiny)
        mag = ((1.0 - y) / y) ** (1.0 / self.gamma)
        return np.where(u >= 0.5, mag, -mag)

    def isf(self, p) -> np.ndarray:
        return -self.ppf(p)

    @property
    def mean_abs(self) -> float:
        """E|Z| (infinite for gamma <= 2)."""
        if self.gamma <= 2:
            return math.inf
        return math.sin(math.pi / self.gamma) / math.sin(2 * math.pi / self.gamma)

    @property
    def variance(self) -> float:
        """Var Z (infinite for gamma <= 3)."""
        if self.gamma <= 3:
            return math.inf
        return math.sin(math.pi / self.gamma) / math.sin(3 * math.pi / self.gamma)

    def rvs(self, size, rng=None) -> np.ndarray:
        """Exact draws: |Z| = (G_a / G_b)^(1/gamma), random sign."""
        size = _size(size)
        gen = _rng(rng)
        if isinstance(gen, SecureRandom):
            # inversion of one uniform in (0, 1): finite for every word (G_a / G_b can be 0/0 or
            # x/0 when a gamma variate of a tiny shape underflows)
            return self._ppf_finite(gen.random(size))
        if self.gamma == 2.0 and isinstance(gen, np.random.Generator):
            # h ∝ 1/(1+z^2) is exactly the standard Cauchy; numpy's sampler is ~5x faster
            return gen.standard_cauchy(size=size)
        ga = gen.standard_gamma(self.a, size=size)
        gb = gen.standard_gamma(self.b, size=size)
        sign = np.where(gen.random(size=size) < 0.5, -1.0, 1.0)
        with np.errstate(divide="ignore", over="ignore"):
            mag = (ga / gb) ** (1.0 / self.gamma)
        return sign * mag


def sample_generalized_cauchy(gamma: float, size, rng=None) -> np.ndarray:
    """Draws with density ∝ 1/(1+|z|^gamma) (see :class:`GeneralizedCauchy`)."""
    return GeneralizedCauchy(gamma).rvs(size, rng)


# ---------------------------------------------------------------------------------------------
# Smooth-sensitivity noise: certified privacy loss and calibration
# ---------------------------------------------------------------------------------------------

MAX_BETA = 25.0  # the privacy loss is at least beta (e^25 ~ 7e10: no privacy left); certified up to here


def _phi(w: np.ndarray, gamma: float) -> np.ndarray:
    """phi(w) = log(1 + w^gamma) for w >= 0, i.e. -log h(w) up to a constant."""
    with np.errstate(divide="ignore"):
        return np.logaddexp(0.0, gamma * np.log(w))


def _loss_profiles(u: np.ndarray, gamma: float, alpha: float, beta: float) -> np.ndarray:
    """max(P(u), N(u)) for u >= 0: the worst privacy loss at scaled output u, over delta and lambda.

    The loss of releasing y = f(X) + (S(X)/alpha) Z against a neighbour X' (f shifted by at most
    S(X), S scaled by e^lambda, |lambda| <= beta), at u = alpha (y - f(X)) / S(X), is
        L = lambda - phi(|u|) + phi(e^-lambda |u - delta|),   |delta| <= alpha.
    Upper side P: phi is increasing, so delta = -alpha (|u - delta| = u + alpha); the function
    lambda + phi(e^-lambda w) is convex in lambda, so the maximum is at lambda = +-beta.
    Lower side N = -min L: |u - delta| = max(u - alpha, 0) =: v; -lambda - phi(e^-lambda v) is
    concave in lambda with stationary point lambda* = ln v + ln(gamma - 1)/gamma, clipped to
    [-beta, beta] (lambda = -beta when v = 0).
    """
    phi_u = _phi(u, gamma)
    w = u + alpha
    p_plus = beta - phi_u + _phi(np.exp(-beta) * w, gamma)
    p_minus = -beta - phi_u + _phi(np.exp(beta) * w, gamma)
    v = np.maximum(u - alpha, 0.0)
    with np.errstate(divide="ignore"):
        lam = np.log(v) + math.log(gamma - 1.0) / gamma
    lam = np.clip(lam, -beta, beta)
    n_side = -lam + phi_u - _phi(np.exp(-lam) * v, gamma)
    return np.maximum(np.maximum(p_plus, p_minus), n_side)


def _tail_bound(u0: float, gamma: float, alpha: float, beta: float) -> float:
    """An upper bound of the loss for all u >= u0 (u0 > alpha), from (1+ax)/(1+x) <= max(1, a)."""
    up = math.log1p(alpha / u0) * gamma
    down = -math.log1p(-alpha / u0) * gamma
    candidates = []
    for lam in (-beta, beta):
        candidates.append(lam + max(0.0, -gamma * lam + up))  # P side
        candidates.append(-lam + max(0.0, gamma * lam + down))  # N side
    return max(candidates)


def _local_lipschitz(left: np.ndarray, right: np.ndarray, gamma: float, alpha: float, beta: float) -> np.ndarray:
    """Lipschitz constant of the loss profile max(P, N) on each interval [left, right] (u >= 0).

    Each profile is +-(lambda - phi(u) + phi(e^-lambda x)), with x = u + alpha (P) or
    x = max(u - alpha, 0) (N). Its u-derivative is a difference D of two non-negative terms,
    phi'(u) = (gamma/u)(1 - B) and e^-lambda phi'(e^-lambda x) = (gamma/x)(1 - A), with
    B = 1/(1+u^gamma), A = 1/(1+(e^-lambda x)^gamma), so |D| <= the larger term, and each term is
    bounded by max phi' = (gamma-1)^((gamma-1)/gamma) times its prefactor (1, resp. e^beta) and by
    gamma/u, resp. gamma/x. For large u the difference cancels:
        |D| <= gamma alpha/(u x) + gamma A/x + gamma B/u.
    On N for u <= alpha, x = 0 and N = beta + phi(u) (lambda = -beta). All bounds hold uniformly in
    |lambda| <= beta, and the supremum over lambda of L-Lipschitz functions is L-Lipschitz.
    """
    dmax = (gamma - 1.0) ** ((gamma - 1.0) / gamma)
    eb = math.exp(beta)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        first = np.minimum(dmax, gamma / left)  # phi'(u), u >= left
        # P side: x = u + alpha >= left + alpha
        xp = left + alpha
        second_p = np.minimum(eb * dmax, gamma / xp)
        far_p = (
            gamma * alpha / (left * xp)
            + gamma / (xp * (1.0 + (xp / eb) ** gamma))
            + gamma / (left * (1.0 + left**gamma))
        )
        lip_p = np.minimum(np.maximum(first, second_p), np.where(left > 0, far_p, np.inf))
        # N side: x = u - alpha
        xn = left - alpha
        second_n = np.minimum(eb * dmax, np.where(xn > 0, gamma / xn, np.inf))
        far_n = (
            gamma * alpha / (left * xn)
            + gamma / (xn * (1.0 + (xn / eb) ** gamma))
            + gamma / (left * (1.0 + left**gamma))
        )
        lip_n = np.where(xn > 0, np.minimum(np.maximum(first, second_n), far_n), eb * dmax)
        lip_n = np.where(right <= alpha, first, lip_n)  # N = beta + phi(u) there
    return np.maximum(lip_p, lip_n)


@lru_cache(maxsize=4096)
def _certified_loss(gamma: float, alpha: float, beta: float, tol: float) -> float:
    u_split = 4.0 * alpha + 4.0
    u_max = max(1e6 * (alpha + 1.0), 1e3 * u_split)
    grid = np.unique(
        np.concatenate(
            [
                np.linspace(0.0, u_split, 4001),
                np.geomspace(u_split, u_max, 4001),
                [alpha, max(alpha * (gamma - 1.0) ** (-1.0 / gamma), 0.0)],
            ]
        )
    )
    tail = _tail_bound(u_max, gamma, alpha, beta)
    certificate = math.inf
    for _ in range(60):
        vals = _loss_profiles(grid, gamma, alpha, beta)
        left, right = grid[:-1], grid[1:]
        lip = _local_lipschitz(left, right, gamma, alpha, beta)
        # on [l, r] an L-Lipschitz f is at most (f(l) + f(r))/2 + L (r - l)/2
        interval_ub = 0.5 * (vals[:-1] + vals[1:]) + 0.5 * lip * (right - left)
        best = max(float(vals.max()), tail)
        certificate = max(float(interval_ub.max()), tail)
        if certificate - best <= tol or grid.size > 3_000_000:
            return certificate  # always a valid upper bound; only its slack depends on the grid
        refine = interval_ub > best + tol / 2
        lo, hi = left[refine], right[refine]
        new = (lo[:, None] + (hi - lo)[:, None] * np.linspace(0, 1, 9)[None, 1:-1]).ravel()
        grid = np.unique(np.concatenate([grid, new]))
    return certificate


def smooth_noise_privacy_loss(gamma: float, alpha: float, beta: float, *, tol: float = 1e-6) -> float:
    """Certified upper bound on the worst-case privacy loss of generalized-Cauchy smooth noise.

    Mechanism: release f(X) + (S(X)/alpha) Z, Z with density h ∝ 1/(1+|z|^gamma), where S is an
    upper bound on the local sensitivity of f with S(X') <= e^beta S(X) for neighbours
    (Nissim, Raskhodnikova & Smith 2007, Definition 2.1 / Lemma 2.6). For neighbours the
    scaled output density shifts by at most alpha and dilates by at most e^beta; the loss is

        sup_{|delta| <= alpha, |lambda| <= beta, u}  | lambda + ln h(u) - ln h(e^-lambda (u - delta)) |

    (design.md section 4). The sups over delta and lambda are solved exactly (see
    ``_loss_profiles``); the sup over u uses a grid refined adaptively with a certified local
    Lipschitz bound between grid points, plus an analytic bound for the tail beyond the grid.
    The returned value is >= the true supremum and exceeds it by at most ``tol``.
    """
    gamma = check_finite(gamma, "gamma")
    if gamma <= 1:
        raise DPInputError(f"gamma must be > 1, got {gamma:g}")
    alpha = check_positive(alpha, "alpha")
    beta = check_positive(beta, "beta", allow_zero=True)
    if beta > MAX_BETA:
        raise DPInputError(f"beta must be <= {MAX_BETA:g} (the privacy loss is at least beta), got {beta:g}")
    tol = check_positive(tol, "tol")
    return _certified_loss(float(gamma), float(alpha), float(beta), float(tol))


class SmoothNoiseCalibration(NamedTuple):
    """(alpha, beta) for smooth-sensitivity noise, with the certificate that justifies them."""

    alpha: float
    beta: float
    epsilon: float
    gamma: float
    mode: str
    certified_loss: float


def smooth_noise_calibration(
    epsilon: float, gamma: float, mode: str = "tight", beta: float | None = None
) -> SmoothNoiseCalibration:
    """Constants (alpha, beta) such that f(X) + (S_beta(X)/alpha) Z is epsilon-DP.

    mode="paper": alpha = epsilon / (4 gamma), beta = epsilon / gamma, the constants the Gini
    (Lan & Reiter) and PSEO papers use. At the papers' gamma = 2 and 4 they are valid but loose
    (certified loss about 0.52 epsilon and 0.83 epsilon), but they are NOT epsilon-DP for every
    gamma > 1: the certified loss exceeds epsilon below gamma ~ 1.2 and above gamma ~ 6.5 (e.g.
    1.054 epsilon at gamma = 10, confirmed by brute force in the tests). This mode therefore
    checks its own certificate and raises DPInputError where the constants fail.

    mode="tight": beta as in the paper (epsilon / gamma) unless given, and the largest alpha
    whose certified loss (:func:`smooth_noise_privacy_loss`) is <= epsilon, found by bisection
    (the loss increases with alpha). For gamma = 2 this alpha is about 5.6x the paper's, i.e.
    5.6x less noise for the same S(X).

    Why beta is not optimised: the noise scale S_beta(X)/alpha depends on the confidential data
    through S_beta, so choosing beta from the data would leak. Pass ``beta`` explicitly to use a
    value chosen on public planning data. The tail of the loss tends to max(1, gamma-1) * beta,
    so beta must satisfy max(1, gamma - 1) * beta < epsilon.
    """
    epsilon = check_epsilon(epsilon)
    gamma = check_finite(gamma, "gamma")
    if gamma <= 1:
        raise DPInputError(f"gamma must be > 1, got {gamma:g}")
    if mode not in ("tight", "paper"):
        raise DPInputError(f"mode must be 'tight' or 'paper', got {mode!r}")
    beta_v = epsilon / gamma if beta is None else check_positive(beta, "beta")
    if beta_v > MAX_BETA:
        raise DPInputError(
            f"epsilon = {epsilon:g} is too large for smooth-sensitivity noise (beta = {beta_v:g} "
            f"> {MAX_BETA:g}); such an epsilon gives no meaningful privacy"
        )
    if mode == "paper":
        if beta is not None and not math.isclose(beta_v, epsilon / gamma):
            raise DPInputError("mode='paper' fixes beta = epsilon/gamma; use mode='tight' for another beta")
        alpha = epsilon / (4.0 * gamma)
        loss = smooth_noise_privacy_loss(gamma, alpha, beta_v, tol=1e-4 * epsilon)
        if loss > epsilon:
            raise DPInputError(
                f"the paper's constants (alpha = eps/(4 gamma), beta = eps/gamma) are not epsilon-DP for "
                f"gamma = {gamma:g}: their certified privacy loss is {loss / epsilon:.3f} x epsilon. They are "
                f"valid only for about 1.2 <= gamma <= 6.5; use calibration 'tight'"
            )
        return SmoothNoiseCalibration(alpha, beta_v, epsilon, gamma, "paper", loss)
    return _tight(epsilon, gamma, beta_v)


@lru_cache(maxsize=1024)
def _tight(epsilon: float, gamma: float, beta: float) -> SmoothNoiseCalibration:
    """Largest alpha with certified loss <= epsilon (loss is increasing in alpha).

    Brent's method on  alpha -> certificate(alpha) - epsilon  (certificate slack 1e-3 epsilon),
    to relative precision 1e-3 in alpha (so alpha is within about 0.2% of the largest valid one);
    the final alpha is then checked again and shrunk until its certificate is <= epsilon, so the
    returned pair is always certified.
    """
    tail = max(1.0, gamma - 1.0) * beta
    if tail >= epsilon:
        raise DPInputError(
            f"beta = {beta:g} is too large for epsilon = {epsilon:g} and gamma = {gamma:g}: the privacy "
            f"loss in the tails alone is max(1, gamma-1) * beta = {tail:g}"
        )
    tol = 1e-3 * epsilon

    def excess(alpha: float) -> float:
        return smooth_noise_privacy_loss(gamma, alpha, beta, tol=tol) - epsilon

    lo = epsilon / (4.0 * gamma)
    while excess(lo) > 0:
        lo /= 4.0
        if lo < 1e-12:
            raise DPInputError("no alpha meets this epsilon; reduce beta")
    hi = 2.0 * lo
    while excess(hi) <= 0:
        lo, hi = hi, 2.0 * hi
    from scipy import optimize  # imported here: keeps app start-up light

    alpha = optimize.brentq(excess, lo, hi, xtol=1e-6 * lo, rtol=1e-3)
    alpha = max(lo, alpha * (1.0 - 1e-3))
    while excess(alpha) > 0:
        alpha = max(lo, alpha * (1.0 - 1e-3))
    return SmoothNoiseCalibration(
        alpha, beta, epsilon, gamma, "tight", smooth_noise_privacy_loss(gamma, alpha, beta, tol=tol)
    )
