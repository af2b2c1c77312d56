"""Noise samplers and the calibration of the Laplace and Gaussian mechanisms.

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

The certified privacy loss of generalized-Cauchy smooth-sensitivity noise and its (alpha, beta)
calibration are in :mod:`dpcore.noise.certificates`.
"""

from __future__ import annotations

import math

import numpy as np

from ..errors import DPInputError
from ..lazy import special
from ..rng import SecureRandom
from ..validation import as_generator, check_delta, check_epsilon, check_finite, check_int, check_positive

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
