"""Intervals computed from the published record alone: every released number with a confidence interval.

Everything here is **post-processing** of published numbers (the released values, the public parameters of
their mechanisms, and, for the Gini, one extra DP quantity that the release publishes and charges): an analyst
holding only ``release_record.json`` and the tables can recompute every interval. Nothing here reads
confidential data, except the two functions whose argument is named ``confidential_*`` (the DP upper bound on
the Gini's smooth sensitivity, which is itself a DP release, and the known-scale oracle, which is labelled
as not publishable).

Neighbouring relation: as the statistic's mechanism (default: replace one record, n public); the intervals
add no privacy cost except the Gini bound, whose cost is stated on :class:`GiniIntervalPlan`.

Which law each interval inverts (``docs/secure_noise.md``, "How each published interval is made"):

* counts, sums, means: the exact quantiles of the noise law (discrete Laplace, Laplace, Gaussian) with the
  public scale; a mean over a noisy count is inverted as a pivot (:func:`mean_interval`);
* PSEO percentiles (Foote et al. 2019, Section 4.1): one-sided tests on the noisy cumulative counts at the
  fixed bin that holds the true percentile, mapped to bin edges (:func:`percentile_interval`): valid
  whatever the earnings inside a bin;
* relative risk: Shoham & Ligett's conservative interval (their Theorem 4.5, ``dpcore.ratio``) from the noisy
  counts (:func:`relative_risk_interval`);
* the Gini with smooth-sensitivity noise (Lan & Reiter 2025, eqs. (8)-(10)): a DP upper bound on S_beta(X),
  released and charged, turns the confidential noise scale into a public one (:func:`gini_bound_release`);
  the noise of value and bound together form a pivot of known law, inverted exactly
  (:func:`gini_interval_from_release`); :func:`optimise_gini_split` chooses the split of epsilon and beta;
  :func:`gini_posterior_interval` is the Bayesian variant;
* honest digits: :func:`honest_grid`, :func:`round_to_grid`, :func:`round_interval`.

Coverage is a frequentist statement over the noise: for fixed confidential data, the interval covers the
mechanism's target (the statistic of the data clipped to the public bounds) with probability >= ``level``
(exactly for the inversions, asymptotically for the relative risk). Clipping bias is not in any interval:
each result's ``caveat`` says so where it applies.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import numpy as np

from . import gini as gini_lib
from . import noise as noise_lib
from . import percentiles as percentiles_lib
from . import ratio as ratio_lib
from .lazy import LazyModule
from .noise import certificates as noise_certificates
from .noise import secure as secure_noise
from .noise import smooth as smooth_noise
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
    check_delta,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

#: scipy.special costs about 0.2 s to import (its array-API layer pulls numpy.f2py); a command-line release
#: of counts or means never calls it
special = LazyModule("scipy.special")

__all__ = [
    "DEFAULT_LEVEL",
    "NoiseInterval",
    "PercentileInterval",
    "GiniInterval",
    "GiniIntervalPlan",
    "GiniBoundRelease",
    "laplace_quantile",
    "discrete_laplace_quantile",
    "gaussian_quantile",
    "count_interval",
    "sum_interval",
    "mean_interval",
    "mean_interval_bounds",
    "percentile_interval",
    "percentile_interval_from_estimates",
    "relative_risk_interval",
    "gini_bound_release",
    "simulate_gini_bounds",
    "GINI_INTERVAL_METHODS",
    "gini_plan",
    "gini_plan_with_eta",
    "gini_interval_quantile",
    "pivot_quantile",
    "pivot_tail",
    "optimise_gini_split",
    "planning_smooth_sensitivity",
    "gini_interval_from_release",
    "gini_interval_bounds",
    "gini_oracle_interval",
    "gini_posterior_interval",
    "honest_grid",
    "round_to_grid",
    "round_interval",
]

#: the level every published interval uses unless the plan says otherwise
DEFAULT_LEVEL = 0.95

#: probability mass left out when a discrete Laplace law is truncated to a finite support (added back to
#: every tail it could belong to, so truncation only ever widens an interval)
_TRUNCATION_MASS = 1e-13

_CLIPPING_CAVEAT = (
    "covers the statistic of the values clipped to the public bounds [{lo:g}, {hi:g}]; the "
    "clipping bias (true value minus clipped value) is not included: it is 0 when no value lies "
    "outside the bounds"
)


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NoiseInterval:
    """An interval for one released value: ``value`` (the published number), ``lower``, ``upper``, ``level``,
    ``method`` (how it was made) and ``caveat`` (what it does not cover; empty when nothing)."""

    value: float
    lower: float
    upper: float
    level: float
    method: str
    caveat: str = ""

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def covers(self, truth: float) -> bool:
        return bool(self.lower <= truth <= self.upper)

    def to_dict(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "lower": self.lower,
            "upper": self.upper,
            "level": self.level,
            "method": self.method,
            "caveat": self.caveat,
        }


@dataclass(frozen=True)
class PercentileInterval:
    """Intervals for the true percentiles of one or several released histograms.

    ``lower`` and ``upper`` have shape (len(q),) for one histogram, (cells, len(q)) for several; ``q`` the
    percentile levels (0-100]; ``bin_lower`` / ``bin_upper`` the 1-based bins J_lo <= J_hi whose edges make the
    interval; ``n_public`` whether the cell size was public (else it was estimated from the noisy counts)."""

    lower: np.ndarray
    upper: np.ndarray
    q: np.ndarray
    level: float
    method: str
    caveat: str
    bin_lower: np.ndarray
    bin_upper: np.ndarray
    n_public: bool

    @property
    def width(self) -> np.ndarray:
        return self.upper - self.lower


@dataclass(frozen=True)
class GiniInterval:
    """An interval for a released Gini index and what it cost.

    ``s_upper``: the published DP upper bound on S_beta(X) it used (None for the oracle); ``eta`` the bound's
    stated failure probability; ``epsilon`` / ``delta``: the privacy cost of value and bound together (None
    where not given)."""

    value: float
    lower: float
    upper: float
    level: float
    method: str
    caveat: str
    s_upper: float | None = None
    eta: float | None = None
    epsilon: float | None = None
    delta: float | None = None

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def covers(self, truth: float) -> bool:
        return bool(self.lower <= truth <= self.upper)

    def to_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in ("value", "lower", "upper", "level", "method", "caveat", "s_upper", "eta", "epsilon", "delta")
        }


# ---------------------------------------------------------------------------------------------
# Checks and noise quantiles
# ---------------------------------------------------------------------------------------------


def _level(level: Any) -> float:
    return check_probability(level, "level")


def laplace_quantile(level: float, scale: float) -> float:
    """t with P(|Z| <= t) = level for Z ~ Laplace(0, scale): |Z| is exponential, so t = scale ln(1/(1-level))."""
    level = _level(level)
    return check_positive(scale, "scale") * -math.log1p(-level)


def discrete_laplace_quantile(level: float, scale: float) -> int:
    """Smallest integer t with P(|K| <= t) >= level, K discrete Laplace, P(K = k) ∝ exp(-|k| / scale).

    With q = e^{-1/scale}, P(|K| > t) = 2 q^{t+1} / (1 + q) (two geometric tails), so
    t = ceil(ln((1 - level)(1 + q)/2) / ln q) - 1, never below 0. This is OpenDP's ``make_laplace`` on
    integers (the law of every noisy count and histogram bin of a release)."""
    level = _level(level)
    scale = check_positive(scale, "scale")
    log_q = -1.0 / scale
    q = math.exp(log_q)
    t = math.ceil(math.log((1.0 - level) * (1.0 + q) / 2.0) / log_q - 1e-12) - 1
    return max(int(t), 0)


def gaussian_quantile(level: float, sigma: float) -> float:
    """t with P(|Z| <= t) = level for Z ~ N(0, sigma^2): sigma * Phi^{-1}((1 + level)/2)."""
    level = _level(level)
    return check_positive(sigma, "sigma") * float(special.ndtri(0.5 + 0.5 * level))


_CONTINUOUS = {"laplace": laplace_quantile, "gaussian": gaussian_quantile}


def _noise_half_width(noise: str, level: float, scale: float) -> float:
    if noise == "discrete_laplace":
        return float(discrete_laplace_quantile(level, scale))
    if noise not in _CONTINUOUS:
        raise DPInputError(f"noise must be 'discrete_laplace', 'laplace' or 'gaussian', got {noise!r}")
    return _CONTINUOUS[noise](level, scale)


# ---------------------------------------------------------------------------------------------
# Counts, sums, means
# ---------------------------------------------------------------------------------------------


def count_interval(
    value: float,
    *,
    scale: float,
    level: float = DEFAULT_LEVEL,
    noise: str = "discrete_laplace",
    nonnegative: bool = True,
) -> NoiseInterval:
    """Interval for a true count from its noisy release ``value`` = count + noise of public ``scale``.

    The noise is independent of the count, so {c : |value - c| <= t} with t the exact level-quantile of |noise|
    (:func:`discrete_laplace_quantile` for OpenDP's integer Laplace, the default; ``"laplace"`` or
    ``"gaussian"`` for a count released with real-valued noise, scale = sigma) covers the count with probability
    >= level. A count is >= 0, so the lower end is cut at 0 (``nonnegative``), which keeps the coverage."""
    v = check_finite(value, "value")
    half = _noise_half_width(noise, level, scale)
    lo = max(v - half, 0.0) if nonnegative else v - half
    return NoiseInterval(v, lo, v + half, float(level), f"exact {noise} quantile (public scale {scale!r})")


def sum_interval(
    value: float,
    *,
    scale: float,
    level: float = DEFAULT_LEVEL,
    noise: str = "laplace",
    lower: float | None = None,
    upper: float | None = None,
) -> NoiseInterval:
    """Interval for a clipped sum from its release ``value`` = sum + noise (OpenDP's float-safe Laplace, or
    ``"gaussian"`` with scale = sigma): value -+ the exact level-quantile of |noise|.

    OpenDP's float Laplace adds discrete Laplace noise on a grid 2^k (k about -52 at the scales used here,
    measured): the law differs from the continuous one by less than one grid step, far below any digit
    published. ``lower`` / ``upper``: the public clip bounds, named in the caveat (the interval covers the sum of
    the clipped values)."""
    v = check_finite(value, "value")
    half = _noise_half_width(noise, level, scale)
    caveat = ""
    if lower is not None and upper is not None:
        lo, hi = check_bounds(lower, upper)
        caveat = _CLIPPING_CAVEAT.format(lo=lo, hi=hi)
    return NoiseInterval(
        v, v - half, v + half, float(level), f"exact {noise} quantile (public scale {scale!r})", caveat
    )


def mean_interval(
    value: float,
    *,
    n: float,
    sum_scale: float,
    lower: float,
    upper: float,
    level: float = DEFAULT_LEVEL,
    noise: str = "laplace",
    n_scale: float | None = None,
) -> NoiseInterval:
    """Interval for a clipped mean released as noisy-sum / n.

    ``sum_scale``: the public scale of the sum's noise **in the units of the value** (a sum released in cents
    for a mean in dollars: the OpenDP scale / 100). ``lower``, ``upper``: the clip bounds (the clipped mean lies
    in [lower, upper], so the interval is cut there, which keeps its coverage).

    * Public n (``n_scale`` None; :class:`dpcore.stratified.MeanMechanism` with public cell sizes):
      value - mean = noise / n exactly, so value -+ q_level(|noise|) / n (exact coverage).
    * Noisy n (``n_scale`` the discrete-Laplace scale of the released count, cell sizes protected): ``n`` is the
      released noisy count ñ and value = S̃ / ñ. For a candidate mean mu, T(mu) = S̃ - mu ñ equals
      Z_s - mu Z_n at the true mean (S - mu n = 0), whose law is known (Laplace or Gaussian convolved with mu
      times a discrete Laplace). The interval is the hull of the mu in [lower, upper] whose two-sided p-value
      P(|Z_s - mu Z_n| >= |T(mu)|) is >= 1 - level (test inversion, a Fieller-type pivot; exact coverage
      >= level, no normal approximation). ñ <= 0 gives no information on the mean: [lower, upper].

    Caveat (in the result): the interval covers the mean of the clipped values; the clipping bias is not in it.
    """
    v = check_finite(value, "value")
    lo, hi = check_bounds(lower, upper)
    lev = _level(level)
    lows, ups = mean_interval_bounds(
        [v], [n], sum_scale=sum_scale, lower=lo, upper=hi, level=lev, noise=noise, n_scale=n_scale
    )
    method = (
        f"exact {noise} quantile / public n"
        if n_scale is None
        else f"pivot inversion over noisy n ({noise} sum, discrete Laplace count of scale {n_scale!r})"
    )
    caveat = _CLIPPING_CAVEAT.format(lo=lo, hi=hi)
    if n_scale is not None and float(n) <= 0:
        caveat += "; the noisy count is <= 0, so the interval is the whole clip range"
    return NoiseInterval(v, float(lows[0]), float(ups[0]), lev, method, caveat)


def mean_interval_bounds(
    values: Any,
    n: Any,
    *,
    sum_scale: float,
    lower: float,
    upper: float,
    level: float = DEFAULT_LEVEL,
    noise: str = "laplace",
    n_scale: float | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`mean_interval`: (lower ends, upper ends) for arrays of released means and their n."""
    vals = as_finite_array(values, "values")
    sizes = as_finite_array(n, "n")
    if sizes.shape != vals.shape:
        raise DPInputError("one n per released mean is needed")
    scale = check_positive(sum_scale, "sum_scale")
    lo, hi = check_bounds(lower, upper)
    lev = _level(level)
    if noise not in _CONTINUOUS:
        raise DPInputError(f"noise of a sum must be 'laplace' or 'gaussian', got {noise!r}")
    if n_scale is None:
        if np.any(sizes < 1) or np.any(sizes != np.round(sizes)):
            raise DPInputError("a public n must be a whole number >= 1")
        half = _CONTINUOUS[noise](lev, scale) / sizes
        return np.clip(vals - half, lo, hi), np.clip(vals + half, lo, hi)
    return _noisy_n_bounds(vals, sizes, scale, check_positive(n_scale, "n_scale"), lo, hi, lev, noise)


def _sum_noise_sf(x: np.ndarray, scale: float, noise: str) -> np.ndarray:
    """P(Z_s > x) for the sum's noise law."""
    if noise == "gaussian":
        return special.ndtr(-x / scale)
    return np.where(x >= 0, 0.5 * np.exp(-np.abs(x) / scale), 1.0 - 0.5 * np.exp(-np.abs(x) / scale))


@lru_cache(maxsize=256)
def _discrete_laplace_pmf(scale: float) -> tuple[np.ndarray, np.ndarray]:
    """Support and pmf of the discrete Laplace of ``scale``, truncated where both tails hold < _TRUNCATION_MASS."""
    q = math.exp(-1.0 / scale)
    if q < 1e-300:  # scale so small that the noise is 0 with probability 1 - 2e-300
        return np.zeros(1), np.ones(1)
    k_max = max(1, math.ceil(-scale * math.log(_TRUNCATION_MASS * (1.0 + q) / 2.0)))  # ln q = -1/scale
    k = np.arange(-k_max, k_max + 1)
    pmf = (1.0 - q) / (1.0 + q) * np.exp(-np.abs(k) / scale)
    return k.astype(float), pmf


def _pivot_pvalues(
    mu: np.ndarray, s_noisy: np.ndarray, n_noisy: np.ndarray, scale: float, n_scale: float, noise: str
) -> np.ndarray:
    """P(|Z_s - mu Z_n| >= |S̃ - mu ñ|) for mu of shape (R, G) and rows' S̃, ñ of shape (R, 1)."""
    if noise == "laplace":
        return _laplace_pivot_pvalues(np.abs(mu), np.abs(s_noisy - mu * n_noisy), scale, n_scale)
    return _summed_pivot_pvalues(mu, s_noisy, n_noisy, scale, n_scale, noise)


def _laplace_pivot_pvalues(c: np.ndarray, t: np.ndarray, b: float, s: float) -> np.ndarray:
    """P(|Z_s - c K| > t), Z_s ~ Laplace(b), K discrete Laplace of scale s, c >= 0, t >= 0: closed form.

    By the symmetry of K it is 2 sum_k p(k) P(Z_s > t + c k), p(k) = C r^|k|, C = (1-r)/(1+r), r = e^{-1/s}.
    With J = floor(t/c) (so t + c k >= 0 iff k >= -J) and a = e^{-c/b}, the sum splits into geometric series:
    k >= 0: (C/2) e^{-t/b} / (1 - r a); -J <= k < 0: (C/2) e^{-t/b} sum_{j=1..J} e^{j (c/b - 1/s)};
    k < -J: P(K <= -J-1) - (C/2) e^{(t - c (J+1))/b} r^{J+1} / (1 - r a), P(K <= -J-1) = r^{J+1}/(1+r).
    Checked against the direct sum over k in the tests."""
    r = math.exp(-1.0 / s)
    cc = (1.0 - r) / (1.0 + r)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        safe_c = np.where(c > 0, c, 1.0)
        j = np.where(c > 0, np.floor(t / safe_c), 0.0)
        a = np.exp(-safe_c / b)
        x = safe_c / b - 1.0 / s
        jx = j * x
        pos = x + jx + np.log1p(-np.exp(-np.abs(jx))) - np.log(np.abs(np.expm1(x)))
        middle = np.where(
            j == 0,
            0.0,
            np.where(
                np.abs(x) < 1e-12,
                j * np.exp(-t / b),
                np.exp(-t / b + np.where(x > 0, pos, x + np.log(-np.expm1(jx)) - np.log(-np.expm1(x)))),
            ),
        )
        upper = np.exp(-t / b) / (1.0 - r * a)
        below = np.exp((j + 1.0) * math.log(r)) * (
            1.0 / (1.0 + r) - 0.5 * cc * np.exp((t - safe_c * (j + 1.0)) / b) / (1.0 - r * a)
        )
        total = 2.0 * (0.5 * cc * (upper + middle) + below)
    return np.clip(np.where(c > 0, total, np.exp(-t / b)), 0.0, 1.0)


def _summed_pivot_pvalues(
    mu: np.ndarray, s_noisy: np.ndarray, n_noisy: np.ndarray, scale: float, n_scale: float, noise: str
) -> np.ndarray:
    """The p-value of :func:`_pivot_pvalues` by the direct sum over the (truncated) discrete Laplace support."""
    k, pmf = _discrete_laplace_pmf(n_scale)
    t = np.abs(s_noisy - mu * n_noisy)[..., None]
    shift = mu[..., None] * k
    tail = _sum_noise_sf(t + shift, scale, noise) + _sum_noise_sf(t - shift, scale, noise)
    return np.minimum(np.tensordot(tail, pmf, axes=([-1], [0])) + _TRUNCATION_MASS, 1.0)


#: points of the coarse scan over [lower, upper] that finds every accepted region before the ends are bisected
_PIVOT_GRID = 17


def _noisy_n_bounds(
    vals: np.ndarray, n_noisy: np.ndarray, scale: float, n_scale: float, lo: float, hi: float, level: float, noise: str
) -> tuple[np.ndarray, np.ndarray]:
    """Hull of the accepted means on a grid over [lo, hi] plus the released value, ends refined by bisection."""
    lows, ups = np.full(vals.shape, lo), np.full(vals.shape, hi)
    ok = n_noisy > 0
    if not np.any(ok):
        return lows, ups
    v, nn = vals[ok][:, None], n_noisy[ok][:, None]
    s_noisy = v * nn
    coarse = np.broadcast_to(np.linspace(lo, hi, _PIVOT_GRID), (v.shape[0], _PIVOT_GRID))
    grid = np.concatenate([coarse, np.clip(v, lo, hi)], axis=1)
    grid.sort(axis=1)
    accept = np.zeros(grid.shape, dtype=bool)
    for start in range(0, grid.shape[0], 256):
        sl = slice(start, start + 256)
        accept[sl] = _pivot_pvalues(grid[sl], s_noisy[sl], nn[sl], scale, n_scale, noise) >= 1.0 - level
    rows = np.arange(grid.shape[0])
    any_ok = accept.any(axis=1)
    first = np.where(any_ok, accept.argmax(axis=1), 0)
    last = np.where(any_ok, grid.shape[1] - 1 - accept[:, ::-1].argmax(axis=1), 0)
    inner_lo, inner_hi = grid[rows, first], grid[rows, last]
    outer_lo = np.where(first > 0, grid[rows, np.maximum(first - 1, 0)], inner_lo)
    outer_hi = np.where(last < grid.shape[1] - 1, grid[rows, np.minimum(last + 1, grid.shape[1] - 1)], inner_hi)
    args = (s_noisy[:, 0], nn[:, 0], scale, n_scale, noise, level)
    lo_end = _bisect_end(outer_lo, inner_lo, *args)
    hi_end = _bisect_end(outer_hi, inner_hi, *args)
    centre = np.clip(v[:, 0], lo, hi)  # no accepted point (a miss): publish the point itself, never an empty set
    lows[ok] = np.where(any_ok, lo_end, centre)
    ups[ok] = np.where(any_ok, hi_end, centre)
    return lows, ups


def _bisect_end(
    rejected: np.ndarray,
    accepted: np.ndarray,
    s_noisy: np.ndarray,
    n_noisy: np.ndarray,
    scale: float,
    n_scale: float,
    noise: str,
    level: float,
) -> np.ndarray:
    """The boundary between a rejected and an accepted mean, to 1e-9 of their distance; returns the rejected
    side's end of the final bracket (so the interval only ever grows)."""
    rej, acc = rejected.copy(), accepted.copy()
    for _ in range(32):
        mid = 0.5 * (rej + acc)
        ok = (
            _pivot_pvalues(mid[:, None], s_noisy[:, None], n_noisy[:, None], scale, n_scale, noise)[:, 0] >= 1.0 - level
        )
        acc = np.where(ok, mid, acc)
        rej = np.where(ok, rej, mid)
    return rej


# ---------------------------------------------------------------------------------------------
# PSEO percentiles
# ---------------------------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _partial_sum_pmf(scale: float, terms: int) -> tuple[np.ndarray, np.ndarray]:
    """Support (consecutive integers) and pmf of the sum of ``terms`` independent discrete Laplace(scale)."""
    if terms == 0:
        return np.zeros(1), np.ones(1)
    k, base = _discrete_laplace_pmf(scale)
    pmf = base
    for _ in range(terms - 1):
        pmf = np.convolve(pmf, base)
    half = (pmf.size - 1) // 2
    return np.arange(-half, half + 1, dtype=float), np.maximum(pmf, 0.0)


def _error_tail(
    w: float, lam: float, a_support: np.ndarray, a_sf: np.ndarray, b_support: np.ndarray, b_pmf: np.ndarray
) -> float:
    """P((1 - lam) A - lam B > w) for independent integer-valued A (its survival function) and B."""
    if lam >= 1.0:
        return float(np.sum(b_pmf[-b_support > w]))
    x = (w + lam * b_support) / (1.0 - lam)
    idx = np.searchsorted(a_support, np.floor(x + 1e-12), side="right")  # first support point > x
    sf = np.where(idx < a_support.size, a_sf[np.minimum(idx, a_support.size - 1)], 0.0)
    return float(np.sum(b_pmf * sf))


@lru_cache(maxsize=4096)
def _error_quantile(scale: float, j: int, m: int, lam: float, tail: float) -> float:
    """Smallest w (to 1e-9) with P(E > w) <= tail for E = W_j - lam W_m, W the partial sums of m independent
    discrete Laplace(scale) bin noises: E = (1 - lam) A - lam B, A the first j terms, B the other m - j."""
    a_support, a_pmf = _partial_sum_pmf(scale, j)
    b_support, b_pmf = _partial_sum_pmf(scale, m - j)
    a_sf = np.cumsum(a_pmf[::-1])[::-1]  # P(A >= support[i])
    target = tail - (m + 1) * _TRUNCATION_MASS
    lo, hi = 0.0, (1.0 - lam) * a_support[-1] + lam * b_support[-1] + 1.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if _error_tail(mid, lam, a_support, a_sf, b_support, b_pmf) <= target:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-9 * max(1.0, hi):
            break
    return hi


def _percentile_inputs(
    noisy_counts: Any, edges: Any, q: Any, n: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    e = percentiles_lib.check_edges(edges)
    qa = as_finite_array(q, "percentiles")
    if np.any((qa <= 0) | (qa > 100)):
        raise DPInputError(f"percentiles must be in (0, 100], got {qa.tolist()}")
    try:
        c = np.asarray(noisy_counts, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"noisy counts must be numbers ({exc})") from None
    c2 = c.reshape(1, -1) if c.ndim == 1 else c
    if c2.ndim != 2 or c2.shape[1] != e.size - 1 or not np.all(np.isfinite(c2)):
        raise DPInputError(f"noisy counts must be finite, one per bin ({e.size - 1} bins), got shape {c.shape}")
    if n is None:
        return c2, e, qa, None
    sizes = np.broadcast_to(np.asarray(n, dtype=float), (c2.shape[0],)).copy()
    if not np.all(np.isfinite(sizes)) or np.any(sizes != np.round(sizes)) or np.any(sizes < 2):
        raise DPInputError("a public cell size n must be a whole number >= 2 (a percentile needs two records)")
    return c2, e, qa, sizes


def percentile_interval(
    noisy_counts: Any,
    edges: Any,
    q: Any = (50,),
    *,
    scale: float,
    level: float = DEFAULT_LEVEL,
    n: Any = None,
    support: Sequence[float] = (0.0, math.inf),
) -> PercentileInterval:
    """Interval for the true q-th percentile x_(r), r = ceil(q n / 100), from a noisy PSEO histogram.

    Mechanism (Foote et al. 2019, Section 4.1; :class:`dpcore.percentiles.HistogramMechanism`): bin counts c_j
    plus independent discrete Laplace noise of public ``scale`` (2m/epsilon). True cumulative counts
    C_j = c_1 + ... + c_j are non-decreasing; x_(r) lies in bin J* = the first j with C_j >= r (it is at least
    the bin's left edge and below its right edge), whatever the earnings inside a bin.

    Estimates. ``n`` public: Ĉ_j = C̃_j - (j/M)(C̃_M - n), whose error E_j = W_j - (j/M) W_M (W the partial sums
    of the noise: a bridge, half the variance of W_j in the middle bins), compared with r. ``n`` None (cell size
    not public): D̂_j = C̃_j - (q/100) C̃_M estimates D_j = C_j - q n/100, error W_j - (q/100) W_M, compared
    with 0 (C_j >= q n/100 iff C_j >= r, C_j being an integer). w_j: the exact upper (1 - level)/2 quantile of
    the error at bin j (:func:`_error_quantile`, the law convolved exactly; the errors are symmetric).

    Inversion. J_lo = the first j with estimate_j + w_j >= target (M if none); J_hi = 1 + the last j <= M-1
    with estimate_j - w_j < target (1 if none). The interval is [left edge of J_lo, right edge of J_hi].

    Proof of coverage. J* is fixed by the data. J_lo > J* needs estimate_{J*} + w < target <= true_{J*}: the
    error at the one bin J* is below -w, probability <= (1 - level)/2. J_hi < J* needs bin J* - 1 (where
    true < target) outside the set defining J_hi, i.e. estimate_{J*-1} - w >= target > true: the error at the one
    bin J* - 1 exceeds w, probability <= (1 - level)/2. No union bound over bins is needed, because each failure
    is an event at a bin that the data fix. Each percentile's interval has coverage >= level on its own (not
    simultaneously over several q).

    End bins: values below the lowest edge are counted in the first bin and values above the highest in the
    last, so there the interval extends to ``support`` (default [0, inf): PSEO earnings are >= 0).
    """
    scale = check_positive(scale, "scale")
    lev = _level(level)
    tail = (1.0 - lev) / 2.0

    def half_widths(lam: np.ndarray) -> np.ndarray:
        m = lam.size
        return np.array([[_error_quantile(scale, j, m, float(lam[j - 1]), tail) for j in range(1, m + 1)]])

    method = (
        "one-sided tests on the noisy cumulative counts at the true percentile's bin, exact discrete Laplace "
        f"law (public scale {scale!r}), mapped to bin edges"
    )
    return percentile_interval_from_estimates(
        noisy_counts, edges, q, half_widths, level=lev, n=n, support=support, method=method
    )


def percentile_interval_from_estimates(
    counts: Any,
    edges: Any,
    q: Any,
    half_widths: Callable[[np.ndarray], np.ndarray],
    *,
    level: float = DEFAULT_LEVEL,
    n: Any = None,
    support: Sequence[float] = (0.0, math.inf),
    method: str = "",
) -> PercentileInterval:
    """The inversion of :func:`percentile_interval` for any unbiased estimate of a histogram's counts.

    ``counts``: (rows, M) or (M,) estimated bin counts; ``half_widths(lam)`` (lam: the M weights lambda_j of the
    estimated cumulative counts C_j - lambda_j (C_M - n) or C_j - lambda_j C_M) returns w_j, the upper
    (1 - level)/2 quantile of the error of estimate j, as (1, M) or (rows, M). The proof of coverage is
    :func:`percentile_interval`'s: it needs only that each error exceeds w_j (or falls below -w_j) with
    probability <= (1 - level)/2. ``method`` is completed with how n was known."""
    counts_2d, e, qa, sizes = _percentile_inputs(counts, edges, q, n)
    lev = _level(level)
    lo_support, hi_support = (check_finite(support[0], "support lower end"), float(support[1]))
    if not hi_support > e[-1] or not lo_support <= e[0]:
        raise DPInputError("support must contain the bin edges")
    m = e.size - 1
    cum = np.cumsum(counts_2d, axis=1)
    shape = (counts_2d.shape[0], qa.size)
    j_lo, j_hi = np.empty(shape, dtype=int), np.empty(shape, dtype=int)
    for i, qi in enumerate(qa):
        j_lo[:, i], j_hi[:, i] = _percentile_bins(cum, sizes, float(qi), half_widths, m)
    lower = np.where(j_lo == 1, lo_support, e[j_lo - 1])
    upper = np.where(j_hi == m, hi_support, e[j_hi])
    one = np.asarray(counts).ndim == 1
    caveat = (
        "valid whatever the earnings inside a bin; each percentile's interval holds on its own (not jointly "
        "over several percentiles); in an end bin the interval reaches the support's end"
    )
    pick = (lambda a: a[0]) if one else (lambda a: a)
    return PercentileInterval(
        pick(lower),
        pick(upper),
        qa,
        lev,
        f"{method}; n {'public' if sizes is not None else 'noisy'}",
        caveat,
        pick(j_lo),
        pick(j_hi),
        sizes is not None,
    )


def _percentile_bins(
    cum: np.ndarray,
    sizes: np.ndarray | None,
    q: float,
    half_widths: Callable[[np.ndarray], np.ndarray],
    m: int,
) -> tuple[np.ndarray, np.ndarray]:
    """(J_lo, J_hi), 1-based, for every row of estimated cumulative counts (see :func:`percentile_interval`)."""
    j = np.arange(1, m + 1)
    if sizes is None:
        lam = np.full(m, q / 100.0)
        est = cum - lam[None, :] * cum[:, -1:]
        target = np.zeros((cum.shape[0], 1))
    else:
        lam = j / m
        est = cum - lam[None, :] * (cum[:, -1:] - sizes[:, None])
        target = np.ceil(np.round(q * sizes / 100.0, 9))[:, None]
    w = half_widths(lam)
    tol = 1e-9 * np.maximum(1.0, np.abs(target))
    reach = est + w >= target - tol
    j_lo = np.where(reach.any(axis=1), reach.argmax(axis=1) + 1, m)
    below = (est - w < target + tol)[:, : m - 1]
    last = np.where(below.any(axis=1), m - 1 - below[:, ::-1].argmax(axis=1), 0)  # 1-based last j, 0 if none
    j_hi = last + 1
    return np.minimum(j_lo, j_hi), np.maximum(j_lo, j_hi)


# ---------------------------------------------------------------------------------------------
# Relative risk
# ---------------------------------------------------------------------------------------------

#: Shoham & Ligett's rule of thumb: the normal approximation behind their interval needs counts >= 30
RR_MIN_COUNT = 30.0


def relative_risk_interval(
    cases_exposed: float,
    cases_reference: float,
    n_exposed: int,
    n_reference: int,
    *,
    scale: float,
    level: float = DEFAULT_LEVEL,
    target: str = "population",
) -> NoiseInterval:
    """Interval for the relative risk from the released noisy case counts and the public group sizes.

    Mechanism (:class:`dpcore.ratio.RelativeRiskMechanism`, Shoham & Ligett Claim 3.1): both counts + Laplace of
    public ``scale`` (2m/epsilon), variance 2 scale^2 each. ``target="population"`` (default): Shoham & Ligett's
    conservative interval for RR = p_x / p_y (their Theorem 4.5, :func:`dpcore.ratio.rr_confidence_interval`
    with ``noise_variance`` = 2 scale^2): sampling and noise, asymptotically normal. ``target="data"``: the
    relative risk of the confidential counts themselves (noise only): RR~ -+ z RR~ sqrt(v/x~^2 + v/y~^2), the
    delta method on the two independent noises. The published value is (x~/n_x)/(max(y~, 1)/n_y); the lower end
    is cut at 0 (a relative risk is >= 0; coverage is kept).

    Caveat (in the result): the normal approximation needs both counts >= 30 (Shoham & Ligett); below that, or
    with a noisy count <= 0 (then max(count, 1) is used, as the paper's convention), the interval is unreliable.
    """
    if target not in ("population", "data"):
        raise DPInputError(f"target must be 'population' or 'data', got {target!r}")
    xn, yn = check_finite(cases_exposed, "cases_exposed"), check_finite(cases_reference, "cases_reference")
    nx, ny = check_int(n_exposed, "n_exposed", minimum=1), check_int(n_reference, "n_reference", minimum=1)
    variance = 2.0 * check_positive(scale, "scale") ** 2
    lev = _level(level)
    value = (xn / nx) / (max(yn, 1.0) / ny)
    caveat = ""
    if min(xn, yn) < RR_MIN_COUNT:
        caveat = (
            f"a noisy count is below {RR_MIN_COUNT:g}: the normal approximation of Shoham & Ligett is "
            "unreliable there (their rule of thumb: counts >= 30)"
        )
    if target == "population":
        ci = ratio_lib.rr_confidence_interval(xn, yn, nx, ny, level=lev, noise_variance=variance, clip=True)
        lo, hi, method = ci.lower, ci.upper, "Shoham & Ligett Theorem 4.5 (conservative, noise variance 2 b^2)"
    else:
        x1, y1 = max(xn, 1.0), max(yn, 1.0)
        est = (x1 / nx) / (y1 / ny)
        half = float(special.ndtri(0.5 + 0.5 * lev)) * est * math.sqrt(variance / x1**2 + variance / y1**2)
        lo, hi, method = est - half, est + half, "delta method on the Laplace noise (data's relative risk)"
    return NoiseInterval(value, max(lo, 0.0), hi, lev, method, caveat)


# ---------------------------------------------------------------------------------------------
# The Gini: a DP upper bound on the smooth sensitivity
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GiniBoundRelease:
    """The released DP upper bound on S_beta(X): ``log_s_upper`` = ln S + Laplace(scale) + margin, ``s_upper``
    its exponential (both DP outputs). ``scale`` (OpenDP's for epsilon at L1 sensitivity beta) and ``margin`` =
    scale ln(1/(2 eta)) are public; S_hat >= S with probability 1 - eta. ``measurement`` names the sampler."""

    log_s_upper: float
    s_upper: float
    epsilon: float
    beta: float
    eta: float
    scale: float
    margin: float
    measurement: str
    simulated: bool


def _bound_scale(epsilon_bound: float, beta: float) -> float:
    """OpenDP's Laplace scale whose privacy map at L1 sensitivity beta is <= epsilon_bound (beta/epsilon_bound)."""
    return secure_noise.laplace_scale_for(epsilon_bound, beta)


def gini_bound_release(
    confidential_smooth_sensitivity: float, *, beta: float, epsilon_bound: float, eta: float, rng: Any = None
) -> GiniBoundRelease:
    """An epsilon_bound-DP upper bound on S_beta(X) that holds with probability >= 1 - eta.

    Sensitivity of ln S_beta. S_beta(X) = max_k e^{-k beta} A^(k)(X) (Lan & Reiter eq. (8)) with
    A^(k)(X') <= A^(k+1)(X) for neighbours X, X' (the smoothness of ``dpcore.gini``'s A^(k): the k-ball of X'
    lies in the (k+1)-ball of X, and A^(k) is monotone in the ball). Hence
    S_beta(X') = max_k e^{-k beta} A^(k)(X') <= max_k e^{-k beta} A^(k+1)(X) = e^beta max_k e^{-(k+1) beta}
    A^(k+1)(X) <= e^beta S_beta(X), and by symmetry |ln S_beta(X) - ln S_beta(X')| <= beta. S_beta > 0 always
    (A^(n) = GS > 0, so S_beta >= e^{-n beta} GS), so the logarithm is defined.

    Release. T = ln S + L + scale ln(1/(2 eta)), L ~ Laplace(scale), scale = beta/epsilon_bound (OpenDP's, with
    its rounding allowance): the Laplace mechanism on a beta-sensitive number, pure epsilon_bound-DP. The bound
    fails (e^T < S) iff L < -scale ln(1/(2 eta)), probability (1/2) e^{-ln(1/(2 eta))} = eta exactly.

    ``rng`` None (or a SecureRandom): OpenDP's floating-point-safe Laplace (a real release); a numpy Generator or
    seed: the same law with numpy (a simulation, NOT a release). ``beta`` must be the beta at which S_beta(X)
    was computed, i.e. the value's calibration beta (:class:`GiniIntervalPlan`).
    """
    s = check_positive(confidential_smooth_sensitivity, "confidential_smooth_sensitivity")
    beta = check_positive(beta, "beta")
    eps = check_epsilon(epsilon_bound, "epsilon_bound")
    eta = check_probability(eta, "eta")
    scale = _bound_scale(eps, beta)
    margin = scale * math.log(1.0 / (2.0 * eta))
    draw = secure_noise.release_real_values([math.log(s)], scale=scale, rng=rng, sensitivity=beta)
    log_upper = float(np.asarray(draw.values)[0]) + margin
    return GiniBoundRelease(
        log_upper, math.exp(log_upper), eps, beta, eta, scale, margin, draw.measurement, draw.simulated
    )


def simulate_gini_bounds(
    confidential_smooth_sensitivity: Any, *, plan: GiniIntervalPlan, size: int, rng: Any = None
) -> np.ndarray:
    """``size`` simulated bounds S_hat for each S given (shape (len(S), size)): numpy draws of the law of
    :func:`gini_bound_release` (exploration and coverage studies; nothing is released or charged)."""
    s = as_finite_array(confidential_smooth_sensitivity, "confidential_smooth_sensitivity")
    if np.any(s <= 0):
        raise DPInputError("smooth sensitivities must be > 0")
    plan = _check_plan(plan)
    size = check_int(size, "size", minimum=1)
    noise = as_generator(rng).laplace(0.0, plan.bound_scale, size=(s.size, size))
    return np.exp(np.log(s)[:, None] + noise + plan.bound_margin)


# ---------------------------------------------------------------------------------------------
# The Gini: plan (split of epsilon, beta) and the published interval
# ---------------------------------------------------------------------------------------------

#: the two ways of turning the published bound into an interval (see :func:`gini_interval_from_release`)
GINI_INTERVAL_METHODS = ("pivot", "union")


def _noise_law(noise: str, gamma: float, sigma: float | None) -> Any:
    noise = smooth_noise.check_noise(noise)
    if noise == "cauchy":
        return _Cauchy(gamma)
    if noise == "laplace":
        return smooth_noise.LaplaceNoise()
    if sigma is None:
        raise DPInputError("noise 'laplace_lognormal' needs its sigma (the calibration's)")
    return smooth_noise.LaplaceLogNormal(sigma)


class _Cauchy(noise_lib.GeneralizedCauchy):
    """The generalized Cauchy with ``abs_quantile`` / ``abs_sf`` (the interface of ``dpcore.noise.smooth``' laws)."""

    def abs_quantile(self, p: Any) -> np.ndarray:
        return self.ppf(0.5 + 0.5 * np.asarray(p, dtype=float))

    def abs_sf(self, r: Any) -> np.ndarray:
        return 2.0 * self.sf(np.abs(np.asarray(r, dtype=float)))


def _abs_sf(law: Any, r: np.ndarray) -> np.ndarray:
    """P(|Z| > r) for r >= 0 (the Laplace law has no ``abs_sf``: |Z| is exponential)."""
    if isinstance(law, smooth_noise.LaplaceNoise):
        return np.exp(-r)
    return np.asarray(law.abs_sf(r), dtype=float)


def _abs_quantile(noise: str, p: float, gamma: float, sigma: float | None) -> float:
    """The p-quantile of |Z| for the standardised smooth noise Z."""
    return float(_noise_law(noise, gamma, sigma).abs_quantile(p))


#: Gauss-Laguerre nodes per side of the Laplace law in :func:`pivot_quantile` (the integrand is smooth in l)
_LAGUERRE_NODES = 64


@lru_cache(maxsize=1)
def _laguerre() -> tuple[np.ndarray, np.ndarray]:
    nodes, weights = special.roots_laguerre(_LAGUERRE_NODES)
    return nodes, weights


def pivot_tail(noise: str, x: float, bound_scale: float, gamma: float = 2.0, sigma: float | None = None) -> float:
    """P(|Z| e^{-L} > x) = E_L P(|Z| > x e^L), L ~ Laplace(bound_scale): on each side of 0,
    (1/2) int_0^inf P(|Z| > x e^{+-b u}) e^{-u} du by Gauss-Laguerre quadrature (64 nodes; the integrand is
    smooth and bounded in u, and the tests compare with a fine trapezoidal rule and with Monte Carlo)."""
    b = check_positive(bound_scale, "bound_scale")
    law = _noise_law(noise, gamma, sigma)
    nodes, weights = _laguerre()
    r = check_positive(x, "x") * np.exp(np.concatenate([b * nodes, -b * nodes]))
    return float(0.5 * np.dot(np.concatenate([weights, weights]), _abs_sf(law, r)))


@lru_cache(maxsize=2048)
def pivot_quantile(
    noise: str, level: float, bound_scale: float, gamma: float = 2.0, sigma: float | None = None
) -> float:
    """The level-quantile of |Z| e^{-L}: Z the value's standardised noise, L ~ Laplace(bound_scale) independent
    (:func:`pivot_tail`), by bisection in ln x to a relative 1e-7; the upper end of the final bracket is
    returned (never below the quantile, up to the quadrature's error)."""
    lev = _level(level)
    b = check_positive(bound_scale, "bound_scale")
    law = _noise_law(noise, gamma, sigma)

    def tail(x: float) -> float:
        return pivot_tail(noise, x, b, gamma, sigma)

    lo = hi = float(law.abs_quantile(lev))
    while tail(lo) <= 1.0 - lev:
        lo /= 2.0
    while tail(hi) > 1.0 - lev:
        hi *= 2.0
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        if tail(mid) > 1.0 - lev:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-7 * hi:
            break
    return hi


@dataclass(frozen=True)
class GiniIntervalPlan:
    """Everything public about a Gini released with its interval: the split, beta, eta and what it costs.

    The value is released at (epsilon_value, delta) with the smooth-noise calibration ``calibration`` (alpha,
    beta); the bound on S_beta(X) at (epsilon_bound, 0) (:func:`gini_bound_release`, Laplace scale
    ``bound_scale``, margin ``bound_margin`` = bound_scale ln(1/(2 eta))). Basic composition: the pair costs
    (epsilon, delta) = (epsilon_value + epsilon_bound, delta) (for "laplace_lognormal", whose value is rho-zCDP,
    the (epsilon_value, delta) it implies). ``method``: "pivot" (default, exact) or "union" (eta in the level).
    ``release_alpha`` and ``min_scale`` / ``max_scale``: what a real draw divides S by and clamps to
    (``dpcore.gini.GiniMechanism``: the Cauchy's float slack and scale window). ``model_width`` /
    ``model_oracle_width``: the median-width model the split was chosen by (planning numbers, no data).
    """

    noise: str
    epsilon: float
    delta: float
    level: float
    epsilon_value: float
    epsilon_bound: float
    beta: float
    alpha: float
    eta: float
    gamma: float
    sigma: float | None
    bound_scale: float
    bound_margin: float
    release_alpha: float
    min_scale: float
    max_scale: float
    n: int
    lower: float
    upper: float
    method: str = "pivot"
    model_width: float = math.nan
    model_oracle_width: float = math.nan
    calibration: Any = field(default=None, repr=False, compare=False)

    def quantile(self) -> float:
        """The multiplier q of the published half-width q * scale_hat (:func:`gini_interval_quantile`)."""
        return gini_interval_quantile(
            self.noise,
            self.level,
            bound_scale=self.bound_scale,
            eta=self.eta,
            method=self.method,
            gamma=self.gamma,
            sigma=self.sigma,
            clamped=self.min_scale > 0,
        )

    def interval(self, value: float, s_upper: float) -> GiniInterval:
        """The published interval from the published value and bound (:func:`gini_interval_from_release`)."""
        return gini_interval_from_release(
            value, s_upper, **self.public_constants(), epsilon=self.epsilon, delta=self.delta
        )

    def public_constants(self) -> dict[str, Any]:
        """The keyword arguments of :func:`gini_interval_from_release` / :func:`gini_interval_bounds`."""
        return {
            "noise": self.noise,
            "alpha": self.release_alpha,
            "bound_scale": self.bound_scale,
            "eta": self.eta,
            "level": self.level,
            "method": self.method,
            "gamma": self.gamma,
            "sigma": self.sigma,
            "min_scale": self.min_scale,
            "max_scale": self.max_scale,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            k: getattr(self, k)
            for k in (
                "noise",
                "epsilon",
                "delta",
                "level",
                "epsilon_value",
                "epsilon_bound",
                "beta",
                "alpha",
                "eta",
                "gamma",
                "sigma",
                "bound_scale",
                "bound_margin",
                "release_alpha",
                "min_scale",
                "max_scale",
                "n",
                "lower",
                "upper",
                "method",
                "model_width",
                "model_oracle_width",
            )
        }


def _check_plan(plan: Any) -> GiniIntervalPlan:
    if not isinstance(plan, GiniIntervalPlan):
        raise TypeError(
            f"plan must be a dpcore.intervals.GiniIntervalPlan (gini_plan / optimise_gini_split), got "
            f"{type(plan).__name__}"
        )
    return plan


def gini_plan(
    epsilon_value: float,
    epsilon_bound: float,
    beta: float,
    *,
    noise: str,
    n: int,
    lower: float,
    upper: float,
    delta: float | None = None,
    level: float = DEFAULT_LEVEL,
    eta: float | None = None,
    method: str = "pivot",
    gamma: float = 2.0,
    calibration_mode: str = "tight",
) -> GiniIntervalPlan:
    """A :class:`GiniIntervalPlan` from explicit public choices (the optimiser calls this; so can a user).

    ``beta``: the calibration's smoothness (the value is calibrated at it and S_beta(X) computed at it).
    ``delta``: the value's (ignored for "cauchy", pure DP). ``eta``: the bound's stated failure probability
    (default (1 - level)/5); with ``method="union"`` it must be below 1 - level, since it is part of the miss
    probability there."""
    noise = smooth_noise.check_noise(noise)
    eps_v, eps_s = check_epsilon(epsilon_value, "epsilon_value"), check_epsilon(epsilon_bound, "epsilon_bound")
    lev = _level(level)
    eta = _check_eta(eta, lev, method)
    n = check_int(n, "n", minimum=2)
    lo, hi = check_bounds(lower, upper)
    d = None if noise == "cauchy" or delta is None else check_delta(delta)
    cal = smooth_noise.smooth_calibration(
        noise, eps_v, delta=d, gamma=gamma, mode=calibration_mode, beta=check_positive(beta, "beta")
    )
    return _assemble_plan(
        noise,
        eps_v,
        eps_s,
        lev,
        eta,
        n,
        lo,
        hi,
        method,
        float(gamma),
        cal.alpha,
        cal.beta,
        float(cal.delta),
        cal.sigma,
        cal,
    )


def _assemble_plan(
    noise: str,
    eps_v: float,
    eps_s: float,
    lev: float,
    eta: float,
    n: int,
    lo: float,
    hi: float,
    method: str,
    gamma: float,
    alpha: float,
    beta: float,
    delta: float,
    sigma: float | None,
    cal: Any,
) -> GiniIntervalPlan:
    """The plan of checked public choices and a calibration's (alpha, beta) (:func:`gini_plan`; the optimiser's
    screening also builds one from an upper bound on alpha, ``cal`` None, never returned)."""
    scale = _bound_scale(eps_s, beta)
    release_alpha = alpha * (1.0 - 2.0 * gini_lib.FLOAT_SLACK) if noise == "cauchy" else alpha
    min_scale, max_scale = (
        (gini_lib.GINI_MIN_SCALE, max(1.0 / release_alpha, gini_lib.GINI_MIN_SCALE))
        if noise == "cauchy"
        else (0.0, math.inf)
    )
    return GiniIntervalPlan(
        noise,
        eps_v + eps_s,
        delta,
        lev,
        eps_v,
        eps_s,
        beta,
        alpha,
        eta,
        gamma,
        sigma,
        scale,
        scale * math.log(1.0 / (2.0 * eta)),
        release_alpha,
        min_scale,
        max_scale,
        n,
        lo,
        hi,
        method,
        calibration=cal,
    )


def _check_eta(eta: Any, level: float, method: str) -> float:
    if method not in GINI_INTERVAL_METHODS:
        raise DPInputError(f"method must be one of {GINI_INTERVAL_METHODS}, got {method!r}")
    eta = (1.0 - level) / 5.0 if eta is None else check_probability(eta, "eta")
    if method == "union" and eta >= 1.0 - level:
        raise DPInputError(f"eta must be below 1 - level = {1.0 - level:g} (its failure counts against the level)")
    return eta


def gini_interval_quantile(
    noise: str,
    level: float,
    *,
    bound_scale: float,
    eta: float,
    method: str = "pivot",
    gamma: float = 2.0,
    sigma: float | None = None,
    clamped: bool = False,
) -> float:
    """The multiplier q of the published half-width q * scale_hat, scale_hat = clamp(S_hat e^{-margin} / alpha).

    "pivot": q = the level-quantile of |Z| e^{-L} (:func:`pivot_quantile`), and also >= the level-quantile of |Z|
    when the scale has a lower clamp (``clamped``, the Cauchy release's floor). "union": q = the
    (level + eta)-quantile of |Z| times e^{margin} (S_hat itself is used: an upper bound with probability
    1 - eta)."""
    lev = _level(level)
    eta = _check_eta(eta, lev, method)
    b = check_positive(bound_scale, "bound_scale")
    if method == "union":
        return _abs_quantile(noise, lev + eta, gamma, sigma) * math.exp(b * math.log(1.0 / (2.0 * eta)))
    q = pivot_quantile(noise, lev, b, float(gamma), sigma)
    return max(q, _abs_quantile(noise, lev, gamma, sigma)) if clamped else q


def gini_interval_bounds(
    values: Any,
    s_upper: Any,
    *,
    noise: str,
    alpha: float,
    bound_scale: float,
    eta: float,
    level: float = DEFAULT_LEVEL,
    method: str = "pivot",
    gamma: float = 2.0,
    sigma: float | None = None,
    min_scale: float = 0.0,
    max_scale: float = math.inf,
) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised :func:`gini_interval_from_release`: (lower ends, upper ends) for arrays of values and bounds."""
    vals = as_finite_array(values, "values")
    s_hat = as_finite_array(s_upper, "s_upper")
    if vals.shape != s_hat.shape or np.any(s_hat <= 0):
        raise DPInputError("one positive bound s_upper per released value is needed")
    alpha = check_positive(alpha, "alpha")
    min_scale = check_positive(min_scale, "min_scale", allow_zero=True)
    q = gini_interval_quantile(
        noise, level, bound_scale=bound_scale, eta=eta, method=method, gamma=gamma, sigma=sigma, clamped=min_scale > 0
    )
    margin = bound_scale * math.log(1.0 / (2.0 * eta))
    scale_hat = np.minimum(np.maximum(s_hat * math.exp(-margin) / alpha, min_scale), float(max_scale))
    half = q * scale_hat + 0.5 * secure_noise.GINI_GRID
    lo, hi = secure_noise.GINI_WINDOW
    return np.clip(vals - half, lo, hi), np.clip(vals + half, lo, hi)


def gini_interval_from_release(
    value: float,
    s_upper: float,
    *,
    noise: str,
    alpha: float,
    bound_scale: float,
    eta: float,
    level: float = DEFAULT_LEVEL,
    method: str = "pivot",
    gamma: float = 2.0,
    sigma: float | None = None,
    min_scale: float = 0.0,
    max_scale: float = math.inf,
    epsilon: float | None = None,
    delta: float | None = None,
) -> GiniInterval:
    """The published Gini interval value -+ q * scale_hat, from published numbers only.

    Inputs: the published value (``dpcore.noise.secure.publish_gini``: clamped to [0, 1] on the 1e-6 grid), the
    published bound S_hat = exp(T) (:func:`gini_bound_release`: T = ln S + L + margin, L ~ Laplace(bound_scale),
    margin = bound_scale ln(1/(2 eta))), and public constants: the noise law (``noise``, ``gamma``, ``sigma``),
    the ``alpha`` the draw divided by and its scale window (``min_scale``, ``max_scale``: the Cauchy release
    clamps S/alpha there). scale_hat = clamp(S_hat e^{-margin} / alpha) = clamp(S e^L / alpha).

    ``method="pivot"`` (default; exact). The noisy value is g + s Z, s = clamp(S/alpha), Z independent of L.
    Without a clamp, (noisy - g) / scale_hat = Z e^{-L}: a pivot whose law does not depend on the data, so with q
    its level-quantile (:func:`pivot_quantile`) P(|noisy - g| <= q scale_hat) = level exactly. With the Cauchy's
    floor s = max(S/alpha, m): S is fixed by the data, so either S/alpha >= m (then s = S/alpha and
    scale_hat >= S e^L/alpha: a miss needs |Z| e^{-L} > q) or S/alpha < m (then s = m <= scale_hat: a miss needs
    |Z| > q); q = the larger of the two quantiles covers both. (The ceiling 1/alpha is never reached: S <= GS < 1.)

    ``method="union"`` (the direct argument). On the event S_hat >= S (probability 1 - eta, the bound's margin)
    the scale from S_hat is >= s, so a miss needs S_hat < S or |Z| > q', q' the (level + eta)-quantile of |Z|:
    misses <= eta + (1 - level - eta). Same release, a wider interval (the benchmark compares them).

    Both: clamping to [0, 1] and rounding to the grid are monotone, so the interval of the published value,
    widened by half a grid step and cut to [0, 1] (where every Gini of non-negative incomes lies), still
    contains g whenever the noisy one did. Caveat (in the result): it covers the Gini of the incomes clipped to
    the public [lower, upper].
    """
    v = check_finite(value, "value")
    lows, ups = gini_interval_bounds(
        [v],
        [check_positive(s_upper, "s_upper")],
        noise=noise,
        alpha=alpha,
        bound_scale=bound_scale,
        eta=eta,
        level=level,
        method=method,
        gamma=gamma,
        sigma=sigma,
        min_scale=min_scale,
        max_scale=max_scale,
    )
    caveat = "covers the Gini of the incomes clipped to the public bounds"
    if method == "union":
        caveat += f"; the bound S_hat >= S_beta(X) fails with probability {eta:g}, counted in the level"
    return GiniInterval(
        v,
        float(lows[0]),
        float(ups[0]),
        float(level),
        f"published bound S_hat, {method} ({noise} noise)",
        caveat,
        float(s_upper),
        float(eta),
        epsilon,
        delta,
    )


def gini_oracle_interval(
    value: float,
    confidential_noise_scale: float,
    *,
    noise: str,
    level: float = DEFAULT_LEVEL,
    gamma: float = 2.0,
    sigma: float | None = None,
) -> GiniInterval:
    """NOT PUBLISHABLE: value -+ q_Z(level) S_beta(X)/alpha with the confidential scale known (what the Gini page
    showed before; the benchmark's yardstick). The scale depends on the data and is not a DP output."""
    v = check_finite(value, "value")
    half = _abs_quantile(noise, _level(level), gamma, sigma) * check_positive(
        confidential_noise_scale, "confidential_noise_scale"
    )
    return GiniInterval(
        v,
        max(v - half, 0.0),
        min(v + half, 1.0),
        float(level),
        "oracle: known S_beta(X)/alpha (confidential; not publishable)",
        "uses a data-dependent scale: not covered by the release's DP guarantee",
    )


# ---------------------------------------------------------------------------------------------
# The Gini: choosing the split of epsilon and beta
# ---------------------------------------------------------------------------------------------

#: the planning model's data: log-normal incomes with this Gini (a public, typical value)
PLANNING_GINI = 0.5
#: default planning mean as a share of the upper clip bound (bounds are usually set at several times the mean)
PLANNING_MEAN_SHARE = 0.2
#: the planning S_beta curve is read at beta / this factor: real cells' S_beta falls to its k = 0 value at a beta
#: up to ~8% above the planning sample's (measured on 24 ACS 2019 cells of 300-700 records, L = 0, U = 250,000)
PLANNING_BETA_SAFETY = 1.25
#: largest k the planning model evaluates exactly (above it the closed-form bound: cost O(k^2))
_PLANNING_K_EXACT = 3000
#: the bound's noise scale beta/epsilon_bound is kept <= this (E[S_hat] is finite only below 1)
MAX_BOUND_SCALE = 0.5
_SPLITS = (0.05, 0.08, 0.12, 0.16, 0.2, 0.25, 0.3, 0.4, 0.5)
_ETA_SHARES = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6)


def _planning_values(n: int, lower: float, upper: float, mean: float) -> np.ndarray:
    """n log-normal quantiles (Gini PLANNING_GINI before clipping) scaled to ``mean``, clipped to the bounds."""
    sigma = math.sqrt(2.0) * float(special.ndtri(0.5 + 0.5 * PLANNING_GINI))
    x = np.exp(sigma * special.ndtri((np.arange(n) + 0.5) / n))
    return np.sort(np.clip(x / x.mean() * mean, lower, upper))


@lru_cache(maxsize=64)
def _planning_profile(n: int, lower: float, upper: float, mean: float) -> gini_lib.ExactSensitivityProfile:
    return gini_lib.ExactSensitivityProfile(_planning_values(n, lower, upper, mean), lower, upper)


def planning_smooth_sensitivity(
    n: int, lower: float, upper: float, beta: float, *, planning_mean: float | None = None
) -> float:
    """A public typical S_beta for n records in [lower, upper]: the exact S_beta of a synthetic log-normal sample
    (Gini :data:`PLANNING_GINI`, mean ``planning_mean``, default :data:`PLANNING_MEAN_SHARE` * upper), read at
    beta / :data:`PLANNING_BETA_SAFETY`. No data enters. For beta so small that the exact profile would need
    more than 3,000 values of k, the closed-form ("fast") bound of the same sample (an over-estimate)."""
    n = check_int(n, "n", minimum=2)
    lo, hi = check_bounds(lower, upper)
    mean = PLANNING_MEAN_SHARE * hi if planning_mean is None else check_positive(planning_mean, "planning_mean")
    if not lo < mean < hi:
        raise DPInputError("planning_mean must lie strictly between lower and upper")
    b = check_positive(beta, "beta") / PLANNING_BETA_SAFETY
    profile = _planning_profile(n, lo, hi, float(mean))
    k_cap = math.log(profile.global_sensitivity / profile.a0) / b if profile.a0 > 0 else math.inf
    if n <= _PLANNING_K_EXACT or k_cap <= _PLANNING_K_EXACT:
        return profile.smooth_sensitivity_value(b)  # probes A^(k) at a few k (the profile's pruning)
    xs = _planning_values(n, lo, hi, float(mean))
    return float(gini_lib.smooth_sensitivity(xs, lower=lo, upper=hi, beta=b, method="fast").value)


def _beta_candidates(epsilon: float, noise: str, gamma: float) -> np.ndarray:
    top = epsilon / max(1.0, gamma - 1.0) if noise == "cauchy" else epsilon / 2.0
    return np.geomspace(epsilon * 2e-3, top * 0.95, 18)


def _try_plan(eps_v: float, eps_s: float, beta: float, common: dict) -> GiniIntervalPlan | None:
    try:
        return gini_plan(eps_v, eps_s, beta, **common)
    except DPInputError:  # beta infeasible for this noise at epsilon_value (the calibration says so)
        return None


def _model_widths(plan: GiniIntervalPlan, etas: np.ndarray, s_typ: float) -> np.ndarray:
    """Median width model for each eta: 2 q * median(scale_hat); median(S_hat e^{-margin}) = S (the bound's
    Laplace noise has median 0). "pivot" does not depend on eta; "union" in one vectorised quantile call."""
    if plan.method == "pivot":
        return np.full(etas.shape, 2.0 * plan.quantile() * s_typ / plan.release_alpha)
    law = _noise_law(plan.noise, plan.gamma, plan.sigma)
    q = np.asarray(law.abs_quantile(plan.level + etas), dtype=float)
    return 2.0 * q * s_typ * np.exp(plan.bound_scale * np.log(1.0 / (2.0 * etas))) / plan.release_alpha


def gini_plan_with_eta(plan: GiniIntervalPlan, eta: float) -> GiniIntervalPlan:
    """The same plan with another eta (the bound's margin changes, and for "union" the noise quantile's level)."""
    plan = _check_plan(plan)
    eta = _check_eta(eta, plan.level, plan.method)
    return replace(plan, eta=eta, bound_margin=plan.bound_scale * math.log(1 / (2 * eta)))


def optimise_gini_split(
    epsilon_total: float,
    delta: float | None,
    noise: str,
    n: int,
    lower: float,
    upper: float,
    level: float = DEFAULT_LEVEL,
    *,
    method: str = "pivot",
    gamma: float = 2.0,
    typical_smooth_sensitivity: Callable[[float], float] | None = None,
    planning_mean: float | None = None,
    calibration_mode: str = "tight",
) -> GiniIntervalPlan:
    """The split epsilon_total = epsilon_value + epsilon_bound and the calibration's beta (and, for "union", eta)
    that minimise the modelled median width of the published interval, at a fixed total (epsilon_total, delta).

    Width model (what is minimised): 2 q S_typ(beta) / alpha, where alpha = alpha(epsilon_value, beta, delta) is
    the certified calibration of ``noise``, q the interval's multiplier (:func:`gini_interval_quantile`: the
    pivot's quantile of |Z| e^{-L} with L ~ Laplace(beta/epsilon_bound); for "union", the (level + eta)-quantile
    of |Z| times the median of S_hat/S, (1/(2 eta))^(beta/epsilon_bound)), and S_typ(beta) a public typical smooth
    sensitivity: ``typical_smooth_sensitivity(beta)`` if given, else :func:`planning_smooth_sensitivity` (no data).
    beta sets two costs: a small beta makes S_beta(X) large (e^{-k beta} decays slowly, distant data sets count),
    a large beta makes the bound noisy (scale beta/epsilon_bound) and, for "laplace", shrinks alpha (NRS needs
    beta ~ epsilon/(2 ln(2/delta))). The search is a grid: 18 betas (log-spaced up to the noise's limit), 9
    splits (epsilon_bound = 5%..50% of the total), and for "union" 8 etas (5%..60% of 1 - level); the bound's
    scale is kept <= :data:`MAX_BOUND_SCALE`; a branch and bound (:class:`_SplitSearch`) returns the full grid's
    answer while certifying only the few candidates that can still win. ``n``: the smallest public cell size the
    plan serves (S_beta decays to its k = 0 value at a larger beta for small n, so planning at the smallest n is the
    safe side).
    ``model_oracle_width``: the same model for the oracle (value at the full epsilon with the default beta, scale
    known), for comparison.
    """
    eps = check_epsilon(epsilon_total, "epsilon_total")
    noise = smooth_noise.check_noise(noise)
    lev = _level(level)
    _check_eta(None, lev, method)
    n = check_int(n, "n", minimum=2)
    lo, hi = check_bounds(lower, upper)
    if lo < 0:
        raise DPInputError(f"lower must be >= 0 for the Gini index, got {lo:g}")
    d = None if noise == "cauchy" else check_delta(smooth_noise.DEFAULT_DELTA if delta is None else delta)
    if planning_mean is not None:
        planning_mean = check_positive(planning_mean, "planning_mean")
    if typical_smooth_sensitivity is None and planning_mean is None:
        shipped = _shipped_plan(eps, d, noise, n, lo, hi, lev, method, float(gamma), calibration_mode)
        if shipped is not None:
            return shipped
    return _optimise(
        eps, d, noise, n, lo, hi, lev, method, float(gamma), typical_smooth_sensitivity, planning_mean, calibration_mode
    )


def shipped_split_key(
    eps: float,
    d: float | None,
    noise: str,
    n: int,
    lo: float,
    hi: float,
    lev: float,
    method: str,
    gamma: float,
    calibration_mode: str,
) -> tuple:
    """The key of :data:`dpcore.gini_split_table.SPLITS` for checked inputs of :func:`optimise_gini_split`."""
    return (noise, eps, d, n, lo, hi, lev, method, gamma, calibration_mode)


def shipped_epsilons(
    noise: str,
    d: float | None,
    n: int,
    lo: float,
    hi: float,
    lev: float,
    method: str = "pivot",
    gamma: float = 2.0,
    calibration_mode: str = "tight",
) -> list[float]:
    """The epsilons whose split :func:`optimise_gini_split` reads from the shipped table for these public inputs
    (sorted; empty when the table has none): a search over epsilon can bracket its answer there first."""
    from .gini_split_table import SPLITS

    rest = (d, n, lo, hi, lev, method, gamma, calibration_mode)
    return sorted(key[1] for key in SPLITS if key[0] == noise and key[2:] == rest)


def _shipped_plan(
    eps: float,
    d: float | None,
    noise: str,
    n: int,
    lo: float,
    hi: float,
    lev: float,
    method: str,
    gamma: float,
    calibration_mode: str,
) -> GiniIntervalPlan | None:
    """The optimiser's answer read from the shipped table of the Gini page's epsilon grid at its default public
    inputs (:mod:`dpcore.gini_split_table`; a test compares entries with a fresh search), or None.

    The plan is rebuilt with :func:`gini_plan` (its calibration certified again) from the stored split, beta and eta,
    and kept only if the split adds up to epsilon (as the mechanisms' file cache requires): the table can change a
    width, never a privacy cost."""
    from .gini_split_table import SPLITS

    entry = SPLITS.get(shipped_split_key(eps, d, noise, n, lo, hi, lev, method, gamma, calibration_mode))
    if entry is None or not math.isclose(
        entry["epsilon_value"] + entry["epsilon_bound"], eps, rel_tol=1e-12, abs_tol=0.0
    ):
        return None
    plan = gini_plan(
        entry["epsilon_value"],
        entry["epsilon_bound"],
        entry["beta"],
        noise=noise,
        n=n,
        lower=lo,
        upper=hi,
        delta=d,
        level=lev,
        eta=entry["eta"],
        method=method,
        gamma=gamma,
        calibration_mode=calibration_mode,
    )
    return replace(plan, model_width=entry["model_width"], model_oracle_width=entry["model_oracle_width"])


@lru_cache(maxsize=128)
def _optimise(
    eps: float,
    d: float | None,
    noise: str,
    n: int,
    lo: float,
    hi: float,
    lev: float,
    method: str,
    gamma: float,
    typical_smooth_sensitivity: Callable[[float], float] | None,
    planning_mean: float | None,
    calibration_mode: str,
) -> GiniIntervalPlan:
    """The grid search of :func:`optimise_gini_split` (arguments checked; plans are frozen, so cached)."""
    s_model = typical_smooth_sensitivity or (
        lambda b: planning_smooth_sensitivity(n, lo, hi, b, planning_mean=planning_mean)
    )
    common = dict(
        noise=noise,
        n=n,
        lower=lo,
        upper=hi,
        delta=d,
        level=lev,
        method=method,
        gamma=gamma,
        calibration_mode=calibration_mode,
    )
    search = _SplitSearch(
        eps,
        [float(b) for b in _beta_candidates(eps, noise, gamma)],
        common,
        s_model,
        monotone=typical_smooth_sensitivity is None,
    )
    width, plan = search.run()
    if plan is None:
        raise DPInputError(f"no split of epsilon = {eps:g} gives a feasible calibration for noise {noise!r}")
    oracle_cal = smooth_noise.smooth_calibration(noise, eps, delta=d, gamma=gamma, mode=calibration_mode)
    oracle = (
        2.0 * _abs_quantile(noise, lev, gamma, oracle_cal.sigma) * float(s_model(oracle_cal.beta)) / oracle_cal.alpha
    )
    return replace(plan, model_width=width, model_oracle_width=oracle)


#: relative slack of the search's pruning test: a candidate whose lower bound is within it of the best width is
#: evaluated exactly (room for the rounding of the bounds' arithmetic; far below the grid's steps)
_PRUNE_SLACK = 1e-9
#: scaled outputs u on the linear part of the grid of :func:`_cauchy_alpha_upper`
_ALPHA_GRID_POINTS = 2001


@lru_cache(maxsize=4096)
def _cauchy_alpha_upper(epsilon_value: float, gamma: float, beta: float) -> float:
    """An upper bound on the alpha of the Cauchy's certified 'tight' calibration at (epsilon_value, gamma, beta)
    (``dpcore.noise.smooth_noise_calibration``), for ~2 ms instead of a certification; 0 when no alpha is certified.

    Why it is an upper bound: the privacy loss at one scaled output u (``dpcore.noise.certificates._loss_profiles``:
    the sup over the shift |delta| <= alpha and the dilation |lambda| <= beta, solved exactly) is non-decreasing in
    alpha (the shift's range grows), and its maximum over a FIXED grid of u is <= its supremum over u <= the
    certificate. So a certified alpha (certificate <= epsilon_value) has grid loss <= epsilon_value and lies below
    every alpha whose grid loss exceeds epsilon_value; the bisection keeps such an alpha as its upper end and returns
    it. A certified alpha is never below 1e-12 (the calibration refuses then), so an upper end below 1e-13 means none.
    Measured: 1.000-1.03 times the certified alpha (epsilon 0.05-9, gamma 1.5-4)."""
    ref = 2.0 * epsilon_value + 1.0
    u = np.concatenate(
        [
            np.linspace(0.0, 4.0 * ref + 4.0, _ALPHA_GRID_POINTS),
            np.geomspace(4.0 * ref + 4.0, 1e6 * (ref + 1.0), _ALPHA_GRID_POINTS // 5),
        ]
    )

    def exceeds(alpha: float) -> bool:
        return float(noise_certificates._loss_profiles(u, gamma, alpha, beta).max()) > epsilon_value

    low, high = 0.0, epsilon_value
    while not exceeds(high):
        low, high = high, 2.0 * high
    while high - low > 1e-4 * high:
        if high < 1e-13:
            return 0.0
        mid = 0.5 * (low + high)
        low, high = (low, mid) if exceeds(mid) else (mid, high)
    return high


class _SplitSearch:
    """The minimum of the width model over the grid of :func:`optimise_gini_split` (18 betas x 9 splits), found by
    branch and bound, with the full grid's answer: the first (beta, split) in grid order of least modelled width.

    A candidate's width is 2 q S_typ(beta) / alpha (:func:`_model_widths`). Lower bounds, cheap: alpha <= the
    upper bound of :func:`_cauchy_alpha_upper` (Cauchy; the other noises' calibrations are closed forms, computed
    exactly), and S_typ(beta) >= S_typ(beta') for beta' > beta (S_beta = max_k e^{-k beta} A^(k) decreases in beta,
    Lan & Reiter eq. (8); the planning model's exact and closed-form branches both keep it). The search evaluates
    the candidate of least lower bound: it computes S_typ one beta further down from the largest (a small beta is
    reached only if its bound can still win) or certifies its calibration (~50 ms), and stops when every bound left
    exceeds the best exact width. Each pruned candidate's width is at least its bound, so the answer is the full
    grid's (ties: grid order). ``monotone`` False (a caller's own S_typ): every S_typ is computed first, only the
    calibrations are pruned."""

    def __init__(
        self, eps: float, betas: list[float], common: dict, s_model: Callable[[float], float], monotone: bool
    ) -> None:
        self.eps, self.betas, self.common, self.s_model = eps, betas, common, s_model
        share = _ETA_SHARES if common["method"] == "union" else (0.2,)
        self.etas = (1.0 - common["level"]) * np.array(share)
        self.s_known: dict[int, float] = {}
        for i in range(len(betas)) if not monotone else (len(betas) - 1,):
            self.s_known[i] = float(s_model(betas[i]))
        self.unit: dict[tuple[int, int], float] = {}  # candidate -> its width bound per unit of S_typ
        self.exact: dict[tuple[int, int], GiniIntervalPlan] = {}  # candidates already calibrated exactly
        for i, beta in enumerate(betas):
            for j, f in enumerate(_SPLITS):
                self._screen(i, j, beta, f * eps)  # epsilon_bound = f eps, epsilon_value = eps - f eps

    def _screen(self, i: int, j: int, beta: float, eps_s: float) -> None:
        if beta / eps_s > MAX_BOUND_SCALE:
            return
        eps_v, common, eta = self.eps - eps_s, self.common, float(self.etas[0])
        if common["noise"] != "cauchy":  # closed-form calibrations: the exact plan is the screen
            plan = _try_plan(eps_v, eps_s, beta, {**common, "eta": eta})
            if plan is not None:
                self.exact[(i, j)] = plan
                self.unit[(i, j)] = float(np.min(_model_widths(plan, self.etas, 1.0)))
            return
        if max(1.0, common["gamma"] - 1.0) * beta >= eps_v:  # the calibration's own refusal (tail loss)
            return
        alpha = _cauchy_alpha_upper(eps_v, common["gamma"], beta)
        if alpha > 0:
            screen = _assemble_plan(
                "cauchy",
                eps_v,
                eps_s,
                common["level"],
                eta,
                common["n"],
                common["lower"],
                common["upper"],
                common["method"],
                common["gamma"],
                alpha,
                beta,
                0.0,
                None,
                None,
            )
            self.unit[(i, j)] = float(np.min(_model_widths(screen, self.etas, 1.0)))

    def _s_lower(self, i: int) -> float:
        if i in self.s_known:
            return self.s_known[i]
        return self.s_known[min(k for k in self.s_known if k > i)] * (1.0 - _PRUNE_SLACK)

    def run(self) -> tuple[float, GiniIntervalPlan | None]:
        best: tuple[float, int, int, GiniIntervalPlan | None] = (math.inf, 0, 0, None)
        while self.unit:
            key = min(self.unit, key=lambda c: (self.unit[c] * self._s_lower(c[0]), c))
            if self.unit[key] * self._s_lower(key[0]) > best[0] * (1.0 + _PRUNE_SLACK):
                break
            i, j = key
            if i not in self.s_known:  # one beta further down: tightens the bound of every smaller beta
                below = min(self.s_known) - 1
                self.s_known[below] = float(self.s_model(self.betas[below]))
                continue
            del self.unit[key]
            eps_s = _SPLITS[j] * self.eps  # the full grid's arithmetic, so the split adds up the same way
            base = self.exact.get(key) or _try_plan(
                self.eps - eps_s, eps_s, self.betas[i], {**self.common, "eta": float(self.etas[0])}
            )
            if base is None:
                continue
            widths = _model_widths(base, self.etas, self.s_known[i])
            k = int(np.argmin(widths))
            if (float(widths[k]), i, j) < best[:3]:
                best = (float(widths[k]), i, j, gini_plan_with_eta(base, float(self.etas[k])))
        return best[0], best[3]


# ---------------------------------------------------------------------------------------------
# The Gini: posterior over the value and the bound
# ---------------------------------------------------------------------------------------------


def _log_scale_grid(plan: GiniIntervalPlan, s_upper: float) -> tuple[np.ndarray, np.ndarray]:
    """Grid over ln S and the posterior weights of ln S given the bound alone (prior uniform on ln S over its
    public range [ln GS - n beta, ln GS]: S_beta >= e^{-n beta} A^(n) = e^{-n beta} GS and S_beta <= GS)."""
    gs = gini_lib.gini_global_sensitivity(plan.n, plan.lower, plan.upper)
    centre = math.log(s_upper) - plan.bound_margin
    lo = max(math.log(gs) - plan.n * plan.beta, centre - 30.0 * plan.bound_scale)
    hi = min(math.log(gs), centre + 30.0 * plan.bound_scale)
    if hi <= lo:  # the bound lies outside S's public range: the range's nearer end carries all the weight
        lo = hi = min(max(centre, math.log(gs) - plan.n * plan.beta), math.log(gs))
    u = np.linspace(lo, hi, 241)
    logw = -np.abs(centre - u) / plan.bound_scale
    w = np.exp(logw - logw.max())
    return u, w / w.sum()


def _value_loglik(value: float, g: np.ndarray, scales: np.ndarray, law: Any) -> np.ndarray:
    """log P(published value | g, scale) on the (scales x g) grid: a density inside (0, 1), a tail at a clamp."""
    z = (value - g[None, :]) / scales[:, None]
    with np.errstate(divide="ignore"):
        if value <= secure_noise.GINI_WINDOW[0]:
            return np.log(np.maximum(law.cdf(z), 1e-300))
        if value >= secure_noise.GINI_WINDOW[1]:
            return np.log(np.maximum(law.sf(z), 1e-300))
        return np.asarray(law.logpdf(z), dtype=float) - np.log(scales)[:, None]


def gini_posterior_interval(
    value: float, s_upper: float, *, plan: GiniIntervalPlan, level: float | None = None
) -> GiniInterval:
    """Credible interval for the Gini given the published value and bound, integrating over the unknown S.

    Model (Lan & Reiter's eq. (11) with the scale unknown): prior uniform on g in [0, 1] and on ln S over its
    public range; bound T = ln S + Laplace(scale) + margin; value = clamp(g + (S/alpha) Z). The posterior of g is
    the mixture over S of the known-scale posteriors, weighted by p(ln S | T) and the value's likelihood:
        p(g | value, T) ∝ sum_i p(ln S_i | T) f_Z((value - g) alpha/S_i) alpha/S_i
    (a clamped value contributes the tail probability instead of a density). Computed on a grid: 241 values of
    ln S (+-30 bound scales), g on a uniform grid plus a geometric one around the value; equal-tailed quantiles.
    A Bayesian interval: its frequentist coverage is measured (tests), not guaranteed.
    """
    plan = _check_plan(plan)
    v = check_finite(value, "value")
    s_hat = check_positive(s_upper, "s_upper")
    lev = plan.level if level is None else _level(level)
    u, w_s = _log_scale_grid(plan, s_hat)
    scales = np.clip(np.exp(u) / plan.release_alpha, plan.min_scale or 1e-12, plan.max_scale)
    keep = w_s > 1e-12
    scales, w_s = scales[keep], w_s[keep]
    smin = float(scales.min())
    offsets = smin * np.geomspace(1e-3, max(1.0 / smin, 1e-2), 300)
    edges = np.unique(np.clip(np.concatenate([np.linspace(0.0, 1.0, 1025), v - offsets, v + offsets]), 0.0, 1.0))
    mids = 0.5 * (edges[1:] + edges[:-1])
    law = _noise_law(plan.noise, plan.gamma, plan.sigma)
    loglik = _value_loglik(v, mids, scales, law) + np.log(w_s)[:, None]
    top = loglik.max()
    mass = np.exp(loglik - top).sum(axis=0) * np.diff(edges)
    cdf = np.concatenate([[0.0], np.cumsum(mass) / mass.sum()])
    lo_q, hi_q = np.interp([(1 - lev) / 2, (1 + lev) / 2], cdf, edges)
    return GiniInterval(
        v,
        float(lo_q),
        float(hi_q),
        lev,
        "posterior over g and S (uniform priors on g and ln S)",
        "a credible interval: its frequentist coverage is measured, not guaranteed",
        s_hat,
        plan.eta,
        plan.epsilon,
        plan.delta,
    )


# ---------------------------------------------------------------------------------------------
# Honest digits
# ---------------------------------------------------------------------------------------------


def honest_grid(lower: float, upper: float) -> float:
    """A public rounding step for a value whose interval is [lower, upper]: the largest 1, 2 or 5 x 10^k that is
    <= width/20, so between width/50 and width/20 (the noise makes finer digits meaningless; coarser would move
    the value by a visible share of its interval). Computed from the published interval: post-processing.

    Example:

    >>> honest_grid(54_200.0, 55_180.0)  # width 980: a step of 20 (980/20 = 49 -> 20)
    20.0
    """
    lo, hi = check_finite(lower, "lower"), check_finite(upper, "upper")
    if not hi > lo:
        raise DPInputError(f"an interval needs lower < upper to set a rounding step, got [{lo:g}, {hi:g}]")
    target = (hi - lo) / 20.0
    power = 10.0 ** math.floor(math.log10(target))
    for mult in (5.0, 2.0, 1.0):
        if mult * power <= target * (1 + 1e-12):
            return mult * power
    return power  # pragma: no cover - power <= target always


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-12))


def round_to_grid(value: Any, step: float) -> Any:
    """``value`` rounded to the nearest multiple of ``step`` (scalars stay floats; arrays stay arrays), written with
    no more decimals than the step has (so 54691.12429 with step 500 is 54500.0, not 54499.99999).

    Example:

    >>> round_to_grid(54691.12429423175, 20.0)
    54700.0
    """
    step = check_positive(step, "step")
    arr = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(arr)):
        raise DPInputError("values to round must be finite")
    out = np.round(np.round(arr / step) * step, _decimals(step))
    return float(out) if out.ndim == 0 else out


def round_interval(lower: float, upper: float, step: float) -> tuple[float, float]:
    """The interval's ends rounded outwards to the grid (lower down, upper up), so rounding never loses
    coverage."""
    step = check_positive(step, "step")
    lo, hi = check_finite(lower, "lower"), check_finite(upper, "upper")
    d = _decimals(step)
    return (
        float(np.round(math.floor(lo / step + 1e-9) * step, d)),
        float(np.round(math.ceil(hi / step - 1e-9) * step, d)),
    )
