"""NRS's Gaussian variant: the certified hockey-stick divergence of Gaussian smooth-sensitivity noise and its
calibration. Library only: not in ``SMOOTH_NOISES`` yet (the pages' noise dictionaries would need an entry first)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ... import budget
from ...validation import check_delta, check_epsilon, check_positive
from .common import (
    DEFAULT_DELTA,
    SmoothCalibration,
    check_certificate_args,
    check_hockey_stick_args,
    largest_certified_alpha,
)


def _gaussian_dilation_delta(beta: float, eps2: float) -> float:
    """sup over |lam| <= beta and events of P(A) - e^eps2 Q(A), P = N(0,1), Q = N(0, e^{2 lam}) (either order).

    The likelihood ratio p/q(u) = e^lam exp(-u^2 (1 - e^{-2 lam}) / 2) is monotone in |u|, so by
    Neyman-Pearson the worst events are centres {|u| < c} (lam > 0) or tails {|u| > c} (lam < 0). Q of a
    centre decreases with lam and Q of a tail increases, so the worst lam is +beta for centres and -beta
    for tails; the sups over c are at the stationary points (closed form):
    centre: c^2 = 2 (beta - eps2) / (1 - e^{-2 beta}) (zero when beta <= eps2: then p/q <= e^beta <= e^eps2);
    tail:   c^2 = 2 (eps2 + beta) / (e^{2 beta} - 1).
    The reverse order (Q vs P) is the same function: e^lam Z vs Z is Z vs e^-lam Z after scaling.
    """
    from scipy import special

    if beta == 0.0:
        return 0.0
    c = math.sqrt(2.0 * (eps2 + beta) / math.expm1(2.0 * beta))
    tail = 2.0 * (special.ndtr(-c) - math.exp(eps2) * special.ndtr(-c * math.exp(beta)))
    centre = 0.0
    if beta > eps2:
        c = math.sqrt(2.0 * (beta - eps2) / -math.expm1(-2.0 * beta))
        centre = (2.0 * special.ndtr(c) - 1.0) - math.exp(eps2) * (2.0 * special.ndtr(c * math.exp(-beta)) - 1.0)
    return max(0.0, float(tail), float(centre))


def gaussian_smooth_delta(epsilon: float, alpha: float, beta: float) -> float:
    """Certified delta of f(X) + (S(X)/alpha) Z, Z ~ N(0, 1), S beta-smooth, at a given epsilon (both directions).

    In units of X's scale the neighbour's output is Q = e^lam Z + d, |d| <= alpha, |lam| <= beta
    (NRS 2007, Definition 2.1; replace one record). Chain P = Z -> R = Z + d -> Q, split epsilon = e1 + e2:

    * P vs R: a Gaussian shift by |d| <= alpha, exactly (e1, delta_A) with the Balle & Wang (2018,
      Theorem 8) delta_A = Phi(alpha/2 - e1/alpha) - e^e1 Phi(-alpha/2 - e1/alpha) (largest at |d| = alpha;
      :func:`dpcore.noise.analytic_gaussian_delta`), the same in both directions.
    * R vs Q: Z vs e^lam Z, exactly (e2, delta_B) with delta_B = ``_gaussian_dilation_delta(beta, e2)``.
    * Chain: P(S) <= e^e1 R(S) + delta_A <= e^eps Q(S) + delta_A + e^e1 delta_B, and
      Q(S) <= e^eps P(S) + delta_B + e^e2 delta_A.

    Returns the minimum over a grid of splits of the larger of the two (every split is valid), or 1.0.
    Brute force: :func:`gaussian_smooth_hockey_stick` (exact divergence for given (d, lam)).
    """
    from ..samplers import analytic_gaussian_delta

    epsilon, alpha, beta = check_certificate_args(epsilon, alpha, beta)
    best = 1.0
    for frac in np.linspace(0.02, 0.98, 97):
        e1, e2 = frac * epsilon, (1.0 - frac) * epsilon
        delta_a = analytic_gaussian_delta(1.0, e1, alpha)
        delta_b = _gaussian_dilation_delta(beta, e2)
        best = min(best, max(delta_a + math.exp(e1) * delta_b, delta_b + math.exp(e2) * delta_a))
    return min(1.0, best)


def gaussian_smooth_hockey_stick(epsilon: float, shift: float, log_dilation: float) -> float:
    """Exact max(E_eps(P || Q), E_eps(Q || P)) for P = N(0, 1), Q = N(d, e^{2 lam}) (brute-force oracle).

    ln p(u) - ln q(u) = lam - u^2/2 + (u - d)^2 e^{-2 lam} / 2 is quadratic in u; the set where it exceeds
    eps (or falls below -eps) is an interval or the complement of one, found from the roots, and E is its
    P-mass minus e^eps times its Q-mass (normal CDFs). No composition step, no worst case over (d, lam).
    """
    from scipy import special

    epsilon, d, lam = check_hockey_stick_args(epsilon, shift, log_dilation)
    k = math.exp(-2.0 * lam)
    sd_q = math.exp(lam)

    def mass(lo: float, hi: float, loc: float, scale: float) -> float:
        if hi <= lo:
            return 0.0
        a, b = (lo - loc) / scale, (hi - loc) / scale
        if a > 0:  # upper tail: difference of survival functions keeps precision
            return float(special.ndtr(-a) - special.ndtr(-b))
        return float(special.ndtr(b) - special.ndtr(a))

    def region(sign: float) -> list[tuple[float, float]]:
        # sign * (A u^2 + B u + C) > eps with A = (k - 1)/2, B = -k d, C = lam + k d^2 / 2
        a2, b1, c0 = sign * (k - 1.0) / 2.0, sign * (-k * d), sign * (lam + k * d * d / 2.0) - epsilon
        if abs(a2) < 1e-15:
            if b1 == 0.0:
                return [(-math.inf, math.inf)] if c0 > 0 else []
            root = -c0 / b1
            return [(root, math.inf)] if b1 > 0 else [(-math.inf, root)]
        disc = b1 * b1 - 4.0 * a2 * c0
        if disc <= 0:
            return [(-math.inf, math.inf)] if a2 > 0 else []
        r1, r2 = sorted(((-b1 - math.sqrt(disc)) / (2 * a2), (-b1 + math.sqrt(disc)) / (2 * a2)))
        return [(-math.inf, r1), (r2, math.inf)] if a2 > 0 else [(r1, r2)]

    forward = sum(mass(lo, hi, 0.0, 1.0) - math.exp(epsilon) * mass(lo, hi, d, sd_q) for lo, hi in region(1.0))
    backward = sum(mass(lo, hi, d, sd_q) - math.exp(epsilon) * mass(lo, hi, 0.0, 1.0) for lo, hi in region(-1.0))
    return max(0.0, forward, backward)


def gaussian_smooth_calibration(
    epsilon: float, delta: float = DEFAULT_DELTA, *, beta: float | None = None
) -> SmoothCalibration:
    """(alpha, beta) for Gaussian smooth-sensitivity noise with a certified (epsilon, delta) ("tight" only).

    beta: given (choose it without the data), or the public default epsilon / (4 (1 + ln(2/delta))).
    alpha: the largest with :func:`gaussian_smooth_delta` <= delta (bisection; the bound increases with
    alpha). Not in :data:`SMOOTH_NOISES` (the pages do not offer it yet); Z ~ N(0, 1).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    b = epsilon / (4.0 * (1.0 + math.log(2.0 / delta))) if beta is None else check_positive(beta, "beta")
    alpha, cert = _gaussian_tight(epsilon, delta, b)
    return SmoothCalibration("gaussian", alpha, b, epsilon, delta, "tight", budget.approx(epsilon, delta), cert)


@lru_cache(maxsize=256)
def _gaussian_tight(epsilon: float, delta: float, beta: float) -> tuple[float, float]:
    return largest_certified_alpha(
        gaussian_smooth_delta,
        epsilon,
        delta,
        beta,
        upper=4.0 * epsilon + 4.0,
        smallest=epsilon * 1e-6,
        iterations=60,
        relative_tolerance=1e-9,
    )
