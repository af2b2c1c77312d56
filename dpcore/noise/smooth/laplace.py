"""NRS's Laplace variant: the certified hockey-stick divergence of Laplace smooth-sensitivity noise, its "tight"
and "paper" calibrations, and the standardised law Laplace(1)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ... import budget
from ...validation import DPInputError, as_generator, check_delta, check_epsilon, check_positive
from .common import (
    DEFAULT_DELTA,
    SmoothCalibration,
    check_certificate_args,
    check_hockey_stick_args,
    check_probabilities,
    check_size,
    largest_certified_alpha,
)


def _tail_part(lam: float, eps2: float) -> float:
    """sup_c P(|Z| > c) - e^eps2 P(|e^-lam Z| > c)... written for Q = e^{-|lam|} Z (narrower), Z ~ Lap(1).

    E = sup_c e^{-c} - e^{eps2} e^{-c k}, k = e^{|lam|} > 1; the maximiser is
    c* = (eps2 + |lam|)/(k - 1) and the value e^{-c*} (1 - 1/k).
    """
    a = abs(lam)
    if a == 0.0:
        return 0.0
    c = (eps2 + a) / math.expm1(a)
    return math.exp(-c) * (-math.expm1(-a))


def _centre_part(lam: float, eps2: float) -> float:
    """sup_c P(|Z| < c) - e^eps2 P(|Q| < c) for Q = e^{|lam|} Z (wider), Z ~ Lap(1).

    P(|Z| < c) = 1 - e^{-c}, P(|Q| < c) = 1 - e^{-c/k}; stationary point c* = (a - eps2)/(1 - 1/k)
    (a = |lam|, k = e^a); zero when a <= eps2.
    """
    a = abs(lam)
    if a <= eps2:
        return 0.0
    k = math.exp(a)
    c = (a - eps2) / (-math.expm1(-a))
    return max(0.0, -math.expm1(-c) - math.exp(eps2) * (-math.expm1(-c / k)))


def laplace_smooth_delta(epsilon: float, alpha: float, beta: float) -> float:
    """Certified delta of f(X) + (S(X)/alpha) Z, Z ~ Laplace(1), S beta-smooth, at a given epsilon.

    Upper bound on sup over neighbours of the hockey-stick divergence E_eps (both directions),
    i.e. the release is (epsilon, delta)-DP with delta = the returned value. Derivation (exact
    apart from one composition step): in units of X's scale, the neighbour's output is
    Q = e^lam Z + d with |d| <= alpha, |lam| <= beta. Go through R = Z + d:

    * P = Z vs R: a Laplace shift by |d| <= alpha, pure alpha-DP both ways.
    * R vs Q: equal to Z vs e^lam Z (translate by d). The likelihood ratio is monotone in |u|, so
      by Neyman-Pearson the worst sets are tails {|u| > c} or centres {|u| < c}; Q_lam of a tail set
      increases with lam and of a centre set decreases, so the worst lam over [-beta, beta] is
      -beta for tails and +beta for centres; both sups over c are in closed form
      (``_tail_part``, ``_centre_part``). The reverse direction is the same function (scale
      invariance maps e^lam Z vs Z to Z vs e^-lam Z).
    * Composition: P(S) <= e^alpha R(S) <= e^eps Q(S) + e^alpha delta_2 and
      Q(S) <= e^(eps-alpha) R(S) + delta_2 <= e^eps P(S) + delta_2, with
      delta_2 = max(tail(beta), centre(beta)) at eps_2 = eps - alpha.

    Returns 1.0 (no guarantee) when alpha >= epsilon. Brute-force check:
    :func:`laplace_smooth_hockey_stick` computes the exact joint divergence for given (d, lam)
    and the tests show it never exceeds this bound.
    """
    epsilon, alpha, beta = check_certificate_args(epsilon, alpha, beta)
    eps2 = epsilon - alpha
    if eps2 <= 0:
        return 1.0
    d2 = max(_tail_part(beta, eps2), _centre_part(beta, eps2))
    return min(1.0, math.exp(alpha) * d2)


def _laplace_interval_mass(a: float, b: float, loc: float, scale: float) -> float:
    """P(a < loc + scale W < b) for W ~ Laplace(1), computed without cancellation in the tails."""
    if b <= a:
        return 0.0
    za, zb = (a - loc) / scale, (b - loc) / scale

    def sf(z: float) -> float:  # P(W > z)
        return 0.5 * math.exp(-z) if z >= 0 else 1.0 - 0.5 * math.exp(z)

    def cdf(z: float) -> float:
        return 0.5 * math.exp(z) if z <= 0 else 1.0 - 0.5 * math.exp(-z)

    if za >= 0:
        return sf(za) - sf(zb) if math.isfinite(zb) else sf(za)
    return (cdf(zb) if math.isfinite(zb) else 1.0) - (cdf(za) if math.isfinite(za) else 0.0)


def laplace_smooth_hockey_stick(epsilon: float, shift: float, log_dilation: float) -> float:
    """Exact max(E_eps(P || Q), E_eps(Q || P)) for P = Laplace(1), Q = e^lam P + d (brute-force oracle).

    The log-likelihood ratio ln p(u) - ln q(u) = -|u| + lam + e^{-lam} |u - d| is piecewise linear
    with breakpoints 0 and d; on each piece the set where it exceeds eps is an interval found in
    closed form, and E = sum over those intervals of P(I) - e^eps Q(I) (Laplace CDFs). Exact up to
    rounding; no composition step, no worst case over (d, lam).
    """
    epsilon, d, lam = check_hockey_stick_args(epsilon, shift, log_dilation)
    k = math.exp(-lam)
    lo, hi = min(0.0, d), max(0.0, d)
    pieces = [(-math.inf, lo), (lo, hi), (hi, math.inf)]

    def divergence(sign: float) -> float:
        # sign=+1: E(P||Q), region sign*L(u) > eps; sign=-1: E(Q||P)
        total = 0.0
        for a, b in pieces:
            if b <= a:
                continue
            mid = 0.5 * (a + b) if math.isfinite(a) and math.isfinite(b) else (b - 1.0 if math.isfinite(b) else a + 1.0)
            s_u = 1.0 if mid >= 0 else -1.0
            s_ud = 1.0 if mid >= d else -1.0
            # L(u) = c0 + c1 u on this piece
            c1 = -s_u + k * s_ud
            c0 = lam - k * s_ud * d
            c0, c1 = sign * c0, sign * c1
            # {u in (a, b): c0 + c1 u > eps}
            if c1 == 0.0:
                if c0 <= epsilon:
                    continue
                ia, ib = a, b
            elif c1 > 0:
                ia, ib = max(a, (epsilon - c0) / c1), b
            else:
                ia, ib = a, min(b, (epsilon - c0) / c1)
            if ib <= ia:
                continue
            p_mass = _laplace_interval_mass(ia, ib, 0.0, 1.0)
            q_mass = _laplace_interval_mass(ia, ib, d, math.exp(lam))
            if sign > 0:
                total += p_mass - math.exp(epsilon) * q_mass
            else:
                total += q_mass - math.exp(epsilon) * p_mass
        return max(total, 0.0)

    return max(divergence(1.0), divergence(-1.0))


def laplace_smooth_calibration(
    epsilon: float, delta: float = DEFAULT_DELTA, mode: str = "tight", beta: float | None = None
) -> SmoothCalibration:
    """(alpha, beta) for Laplace smooth-sensitivity noise with a certified (epsilon, delta).

    mode="paper": NRS's alpha = eps/2, beta = eps/(2 ln(2/delta)); its certified delta
    (:func:`laplace_smooth_delta`) is checked and must be <= delta.
    mode="tight": the same beta (unless ``beta`` is given: choose it without the data) and the
    largest alpha whose certified delta is <= delta (bisection; the bound increases with alpha).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    if mode not in ("tight", "paper"):
        raise DPInputError(f"mode must be 'tight' or 'paper', got {mode!r}")
    paper_beta = epsilon / (2.0 * math.log(2.0 / delta))
    b = paper_beta if beta is None else check_positive(beta, "beta")
    if mode == "paper":
        if beta is not None and not math.isclose(b, paper_beta):
            raise DPInputError("mode='paper' fixes beta = epsilon / (2 ln(2/delta)); use mode='tight' for another beta")
        alpha = epsilon / 2.0
        cert = laplace_smooth_delta(epsilon, alpha, b)
        if cert > delta:  # pragma: no cover - the tests show this never happens
            raise DPInputError(f"NRS constants give certified delta {cert:.3g} > {delta:g}")
    else:
        alpha, cert = _laplace_tight(epsilon, delta, b)
    return SmoothCalibration("laplace", alpha, b, epsilon, delta, mode, budget.approx(epsilon, delta), cert)


@lru_cache(maxsize=512)
def _laplace_tight(epsilon: float, delta: float, beta: float) -> tuple[float, float]:
    return largest_certified_alpha(
        laplace_smooth_delta,
        epsilon,
        delta,
        beta,
        upper=epsilon,
        smallest=epsilon * 1e-9,
        iterations=100,
        absolute_tolerance=1e-10 * epsilon,
    )


class LaplaceNoise:
    """Laplace(1): density e^{-|z|}/2 (the standardised noise Z of the "laplace" choice)."""

    name = "laplace"
    variance = 2.0

    def __repr__(self) -> str:
        return "LaplaceNoise()"

    def logpdf(self, z) -> np.ndarray:
        return -np.abs(np.asarray(z, dtype=float)) - math.log(2.0)

    def pdf(self, z) -> np.ndarray:
        return np.exp(self.logpdf(z))

    def sf(self, z) -> np.ndarray:
        z = np.asarray(z, dtype=float)
        return np.where(z >= 0, 0.5 * np.exp(-np.abs(z)), 1.0 - 0.5 * np.exp(-np.abs(z)))

    def cdf(self, z) -> np.ndarray:
        return self.sf(-np.asarray(z, dtype=float))

    def abs_quantile(self, p) -> np.ndarray:
        """The p-quantile of |Z| (|Z| ~ Exp(1))."""
        p = check_probabilities(p)
        return -np.log1p(-p)

    def ppf(self, p) -> np.ndarray:
        p = check_probabilities(p)
        q = np.minimum(p, 1.0 - p)
        mag = -np.log(2.0 * q)
        return np.where(p >= 0.5, mag, -mag)

    def rvs(self, size, rng=None) -> np.ndarray:
        return as_generator(rng).laplace(0.0, 1.0, size=check_size(size))
