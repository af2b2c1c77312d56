"""Closed forms of the planner: accuracy targets, the smallest epsilon of the Laplace and two-sided geometric
noises for an error, and the Laplace CDF the exact solvers evaluate thousands of times per answer."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validation import (
    check_positive,
    check_probability,
)

__all__ = [
    "EPS_MIN",
    "EPS_MAX",
    "Z_ONE_SIDED_95",
    "GRID_POINTS",
    "EXACT_REL",
    "MC_REL",
    "AccuracyTarget",
    "laplace_epsilon_for_error",
    "geometric_prob_within",
    "geometric_epsilon_for_error",
    "laplace_cdf",
    "laplace_interval_prob",
]


EPS_MIN = 1e-4
EPS_MAX = 100.0
Z_ONE_SIDED_95 = 1.6448536269514722
GRID_POINTS = 33  # log grid of the monotone search (ratio about 1.4 between points over [1e-4, 100])
EXACT_REL = 1e-5  # relative precision of the exact bisection (the upper end is returned: it meets the target)
MC_REL = 5e-3  # bisection precision inside the MC search: well below the Monte Carlo uncertainty of epsilon (~2-3%)


@dataclass(frozen=True)
class AccuracyTarget:
    """``P(|released - truth| <= rel_error * |truth|) >= confidence`` (joint over a statistic's numbers)."""

    rel_error: float = 0.05
    confidence: float = 0.95

    def __post_init__(self) -> None:
        check_positive(self.rel_error, "relative error target")
        check_probability(self.confidence, "confidence level")

    def describe(self) -> str:
        return f"relative error at most {100 * self.rel_error:g}% with {100 * self.confidence:g}% probability"


# ---------------------------------------------------------------------------------------------
# Closed forms for the two basic noises
# ---------------------------------------------------------------------------------------------


def laplace_epsilon_for_error(abs_error: float, sensitivity: float, confidence: float) -> float:
    """Smallest epsilon with P(|Lap(s/eps)| <= t) >= confidence: eps = s ln(1/(1-confidence)) / t.

    From P(|L| > t) = exp(-t/b), b = s/eps (Dwork & Roth 2014, Fact 3.7).
    """
    t = check_positive(abs_error, "error tolerance")
    s = check_positive(sensitivity, "sensitivity")
    c = check_probability(confidence, "confidence")
    return s * math.log(1.0 / (1.0 - c)) / t


def geometric_prob_within(m: int, epsilon: float) -> float:
    """P(|K| <= m) for the two-sided geometric P(k) ∝ e^(-eps|k|): 1 - 2 q^(m+1) / (1 + q)."""
    q = math.exp(-epsilon)
    return 1.0 - 2.0 * q ** (m + 1) / (1.0 + q)


def geometric_epsilon_for_error(abs_error: float, confidence: float) -> float:
    """Smallest epsilon with P(|K| <= abs_error) >= confidence, K two-sided geometric (integer noise).

    With m = floor(abs_error) and q = e^-eps the condition 2 q^(m+1)/(1+q) <= 1 - confidence is
    monotone in q; solved by bisection on q to 1e-12.
    """
    t = check_positive(abs_error, "error tolerance", allow_zero=True)
    c = check_probability(confidence, "confidence")
    m = int(math.floor(t))
    lo, hi = 0.0, 1.0  # q range; feasible at q -> 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if 2.0 * mid ** (m + 1) / (1.0 + mid) <= 1.0 - c:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-15:
            break
    return -math.log(lo)


def laplace_cdf(x: np.ndarray) -> np.ndarray:
    """The standard Laplace CDF, F(x) = 1 - e^(-x)/2 (x > 0), e^x/2 (x <= 0): the formula of
    ``scipy.stats.laplace.cdf`` (its ``_cdf``; equal bit for bit, including at +-inf and NaN, a test checks
    it) without the distribution object's argument handling, which cost ~10 us per call and the planner
    calls it thousands of times per answer."""
    x = np.asarray(x, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(x > 0, 1.0 - 0.5 * np.exp(-x), 0.5 * np.exp(x))


def laplace_interval_prob(t: np.ndarray, c: np.ndarray, b: np.ndarray) -> np.ndarray:
    """P(|c + L| <= t) for L ~ Lap(b), elementwise (0 when t < |c| - ... handled by the CDF)."""
    upper = laplace_cdf((t - c) / b)
    lower = laplace_cdf((-t - c) / b)
    return np.clip(upper - lower, 0.0, 1.0)
