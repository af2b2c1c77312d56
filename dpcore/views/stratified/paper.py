"""The stratification paper's data: Figure 1's bounds, the New York RACE example, group-size presets (Table 3)
and the Gaussian mixture of Appendix B with Dirichlet(alpha) group sizes."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize, special

from ...stratified import (
    check_nk,
    readonly,
    sum_log_best_case,
    sum_log_expected_dirichlet,
    sum_log_lower_bound,
    sum_log_worst_case,
)
from ...validation import DPInputError, as_finite_array, as_generator, check_int, check_positive

# ---------------------------------------------------------------------------------------------
# Figure 1 and the paper's New York example
# ---------------------------------------------------------------------------------------------


def bound_curves(n: int, k: int, alphas: Any) -> dict[str, np.ndarray]:
    """Figure 1: worst case, Theorem 10 expectation and informal lower bound against alpha."""
    a = np.asarray(alphas, dtype=float)
    return {
        "alpha": a,
        "worst case k ln(n/k) (Prop. 9)": np.full(a.shape, sum_log_worst_case(n, k)),
        "expected, Dirichlet (Thm. 10)": np.asarray(sum_log_expected_dirichlet(n, k, a), dtype=float),
        "informal lower bound k + ln n": np.full(a.shape, sum_log_lower_bound(n, k)),
    }


def fit_symmetric_dirichlet(proportions: Any) -> float:
    """Maximum-likelihood alpha of a symmetric Dirichlet for one observed proportion vector.

    Solves ``k psi(k alpha) - k psi(alpha) + sum_i ln v_i = 0``. The paper's "iterative Monte
    Carlo approach" is unspecified; on the NY RACE vector this MLE gives ~0.26, not 0.13.
    """
    v = as_finite_array(proportions, "proportions", min_size=2)
    if (v <= 0).any():
        raise DPInputError("every proportion must be > 0 to fit a Dirichlet")
    v = v / v.sum()
    k = v.size
    s = float(np.log(v).sum())

    def score(log_a: float) -> float:
        a = math.exp(log_a)
        return k * special.digamma(k * a) - k * special.digamma(a) + s

    if abs(s - k * math.log(1.0 / k)) < 1e-12:
        raise DPInputError("equal proportions: the Dirichlet MLE is alpha = infinity")
    return float(math.exp(optimize.brentq(score, math.log(1e-6), math.log(1e6), xtol=1e-12)))


# Paper Table 3 (ACSEmployment, NY 2018, n = 196,967), digest §5.
#: RACE (RAC1P codes 1..9) counts.
NY_RACE_COUNTS: dict[str, int] = {
    "White": 138474,
    "Black": 24024,
    "American Indian": 508,
    "Alaska Native": 5,
    "AIAN tribes": 244,
    "Asian": 17030,
    "NHPI": 72,
    "Some other race": 10964,
    "Two or more": 5646,
}
#: SEX x RACE counts (k = 18).
NY_SEX_RACE_COUNTS: dict[str, int] = {
    "Female White": 70881,
    "Male White": 67593,
    "Female Black": 12947,
    "Male Black": 11077,
    "Female Asian": 8900,
    "Male Asian": 8130,
    "Female Some other race": 5668,
    "Male Some other race": 5296,
    "Female Two or more": 3026,
    "Male Two or more": 2620,
    "Male American Indian": 277,
    "Female American Indian": 231,
    "Male AIAN tribes": 125,
    "Female AIAN tribes": 119,
    "Male NHPI": 42,
    "Female NHPI": 30,
    "Female Alaska Native": 3,
    "Male Alaska Native": 2,
}
PRESETS: dict[str, dict[str, int]] = {
    "NY RACE (k=9, paper Table 3)": NY_RACE_COUNTS,
    "NY SEX x RACE (k=18, paper Table 3)": NY_SEX_RACE_COUNTS,
}


def preset_counts(name: str) -> dict[str, int]:
    """Group counts of a preset (paper Table 3); see :data:`PRESETS`."""
    if name not in PRESETS:
        raise DPInputError(f"unknown preset {name!r}; choose one of {list(PRESETS)}")
    return dict(PRESETS[name])


@dataclass(frozen=True)
class NYExample:
    """The paper's New York RACE example (§"Practical implications"), recomputed."""

    n: int
    k: int
    alpha: float
    proportions: np.ndarray
    worst: float
    expected: float
    best: float
    lower: float
    actual: float
    improvement: float  # (worst - expected) / (worst - best)
    improvement_actual: float  # (worst - actual) / (worst - best)
    alpha_mle: float
    paper_claim: str = "~80% better than the worst case, relative to the best case (alpha ~ 0.13)"


def ny_race_example(alpha: float = 0.13) -> NYExample:
    """Recompute the NY RACE example: n = 196,967, k = 9, sizes from Table 3.

    We get (worst - expected)/(worst - best) ~ 0.72 at alpha = 0.13 (not the paper's ~0.80), and
    the symmetric-Dirichlet MLE of the real vector is alpha ~ 0.26 (digest §2.11).
    """
    alpha = check_positive(alpha, "alpha")
    counts = np.array(sorted(NY_RACE_COUNTS.values(), reverse=True), dtype=float)
    n, k = int(counts.sum()), counts.size
    worst = sum_log_worst_case(n, k)
    exp_ = float(sum_log_expected_dirichlet(n, k, alpha))
    best = sum_log_best_case(n, k)
    actual = float(np.log(counts).sum())
    return NYExample(
        n=n,
        k=k,
        alpha=alpha,
        proportions=readonly(counts / n),
        worst=worst,
        expected=exp_,
        best=best,
        lower=sum_log_lower_bound(n, k),
        actual=actual,
        improvement=(worst - exp_) / (worst - best),
        improvement_actual=(worst - actual) / (worst - best),
        alpha_mle=fit_symmetric_dirichlet(counts / n),
    )


# ---------------------------------------------------------------------------------------------
# Generators
# ---------------------------------------------------------------------------------------------


def sizes_from_proportions(proportions: Any, n: int) -> np.ndarray:
    """Integer group sizes ``round(n v_i)``, each >= 1, summing to n (digest §4.5, our rule).

    Rounding: sizes below 1 are raised to 1; the difference to n is taken from (or given to) the
    largest group.
    """
    v = as_finite_array(proportions, "proportions", min_size=1)
    if (v < 0).any() or v.sum() <= 0:
        raise DPInputError("proportions must be >= 0 and not all 0")
    v = v / v.sum()
    k = v.size
    n = check_int(n, "n", minimum=2)
    if n < k:
        raise DPInputError(f"n ({n}) must be at least the number of groups ({k})")
    sizes = np.maximum(np.rint(n * v).astype(np.int64), 1)
    diff = n - int(sizes.sum())
    # move the difference onto the largest groups (never below 1)
    while diff != 0:
        j = int(np.argmax(sizes))
        step = diff if diff > 0 else max(diff, 1 - int(sizes[j]))
        if step == 0:  # pragma: no cover - impossible when n >= k
            raise DPInputError("cannot make group sizes sum to n")
        sizes[j] += step
        diff -= step
    return sizes


def dirichlet_group_sizes(n: int, k: int, alpha: float, rng: Any = None) -> np.ndarray:
    """Group sizes from ``v ~ Dirichlet(alpha, k)`` then :func:`sizes_from_proportions` (digest §4.5)."""
    n, k = check_nk(n, k)
    alpha = check_positive(alpha, "alpha")
    g = as_generator(rng)
    v = g.dirichlet(np.full(k, alpha))
    if not np.isfinite(v).all() or v.sum() <= 0:  # tiny alpha can underflow to all zeros
        v = np.zeros(k)
        v[g.integers(k)] = 1.0
    return sizes_from_proportions(v + 0.0, n)


@dataclass(frozen=True)
class MixtureSample:
    """A simulated dataset: values, integer group codes 0..k-1, group sizes and the truth."""

    values: np.ndarray
    groups: np.ndarray
    sizes: np.ndarray
    mus: np.ndarray
    sigmas: np.ndarray

    @property
    def k(self) -> int:
        return int(self.sizes.size)


def gaussian_mixture(
    n: int,
    k: int,
    alpha: float,
    rng: Any = None,
    *,
    sizes: Any = None,
    sigma_range: tuple[float, float] = (0.1, 2.0),
    mu_sd: float = 1.0,
) -> MixtureSample:
    """The paper's synthetic model (Appendix B, digest §4.5).

    ``v ~ Dirichlet(alpha, k)``, ``|G_i| = round(n v_i)`` (>= 1, summing to n), ``sigma_i ~
    U(0.1, 2.0)``, ``mu_i ~ N(0, 1)``, group i draws ``N(mu_i, sigma_i)`` with sigma_i a standard
    deviation (our reading). ``sizes`` overrides the Dirichlet draw (e.g. a preset).
    """
    g = as_generator(rng)
    if sizes is None:
        sz = dirichlet_group_sizes(n, k, alpha, g)
    else:
        sz = np.asarray(sizes, dtype=np.int64)
        if sz.ndim != 1 or (sz < 0).any() or sz.sum() < 2:
            raise DPInputError("sizes must be non-negative integers with a total of at least 2")
        k = sz.size
    lo, hi = float(sigma_range[0]), float(sigma_range[1])
    if not 0 < lo <= hi:
        raise DPInputError("sigma_range must satisfy 0 < low <= high")
    mus = g.normal(0.0, check_positive(mu_sd, "mu_sd", allow_zero=True), size=k)
    sig = g.uniform(lo, hi, size=k)
    codes = np.repeat(np.arange(k), sz)
    vals = mus[codes] + sig[codes] * g.standard_normal(codes.size)
    return MixtureSample(
        values=readonly(vals), groups=readonly(codes), sizes=readonly(sz), mus=readonly(mus), sigmas=readonly(sig)
    )
