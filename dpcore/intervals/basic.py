"""The interval of each released count, sum, mean, percentile and relative risk, from its noise law and the
published numbers only (the module docstring of :mod:`dpcore.intervals` says which law each inverts)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from .. import percentiles as percentiles_lib
from .. import ratio as ratio_lib
from ..lazy import LazyModule
from ..validation import (
    DPInputError,
    as_finite_array,
    check_bounds,
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
    "sum_interval",
    "RR_MIN_COUNT",
    "check_level",
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


class IntervalEnds:
    """The width of an interval with ends ``lower`` and ``upper``, and whether it covers a value: one definition
    for every interval type of this package (a mixin of the dataclasses that declare the two fields)."""

    lower: float
    upper: float

    @property
    def width(self) -> float:
        return self.upper - self.lower

    def covers(self, truth: float) -> bool:
        return bool(self.lower <= truth <= self.upper)


@dataclass(frozen=True)
class NoiseInterval(IntervalEnds):
    """An interval for one released value: ``value`` (the published number), ``lower``, ``upper``, ``level``,
    ``method`` (how it was made) and ``caveat`` (what it does not cover; empty when nothing)."""

    value: float
    lower: float
    upper: float
    level: float
    method: str
    caveat: str = ""

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


# ---------------------------------------------------------------------------------------------
# Checks and noise quantiles
# ---------------------------------------------------------------------------------------------


def check_level(level: Any) -> float:
    return check_probability(level, "level")


def laplace_quantile(level: float, scale: float) -> float:
    """t with P(|Z| <= t) = level for Z ~ Laplace(0, scale): |Z| is exponential, so t = scale ln(1/(1-level))."""
    level = check_level(level)
    return check_positive(scale, "scale") * -math.log1p(-level)


def discrete_laplace_quantile(level: float, scale: float) -> int:
    """Smallest integer t with P(|K| <= t) >= level, K discrete Laplace, P(K = k) ∝ exp(-|k| / scale).

    With q = e^{-1/scale}, P(|K| > t) = 2 q^{t+1} / (1 + q) (two geometric tails), so
    t = ceil(ln((1 - level)(1 + q)/2) / ln q) - 1, never below 0. This is OpenDP's ``make_laplace`` on
    integers (the law of every noisy count and histogram bin of a release)."""
    level = check_level(level)
    scale = check_positive(scale, "scale")
    log_q = -1.0 / scale
    q = math.exp(log_q)
    t = math.ceil(math.log((1.0 - level) * (1.0 + q) / 2.0) / log_q - 1e-12) - 1
    return max(int(t), 0)


def gaussian_quantile(level: float, sigma: float) -> float:
    """t with P(|Z| <= t) = level for Z ~ N(0, sigma^2): sigma * Phi^{-1}((1 + level)/2)."""
    level = check_level(level)
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

    * Public n (``n_scale`` None; :class:`dpcore.mechanisms.MeanMechanism` with public cell sizes):
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
    lev = check_level(level)
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
    lev = check_level(level)
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
    """Support (consecutive integers) and pmf of the sum of ``terms`` independent discrete Laplace(scale).

    The pmf of ``terms`` - 1 (cached) convolved once more: a percentile's half-widths need every j = 1..m bins at
    one scale, m convolutions instead of the m^2 / 2 of convolving each from the start (the same sums in the same
    order: a direct convolution of non-negative pmfs is never negative, so the clamp below changes nothing)."""
    if terms == 0:
        return np.zeros(1), np.ones(1)
    base = _discrete_laplace_pmf(scale)[1]
    if terms == 1:
        pmf = base
    else:
        for shallow in range(1, terms - 1, 256):  # fills the cache upwards: the recursion stays < 256 deep
            _partial_sum_pmf(scale, shallow)
        pmf = np.convolve(_partial_sum_pmf(scale, terms - 1)[1], base)
    half = (pmf.size - 1) // 2
    return np.arange(-half, half + 1, dtype=float), np.maximum(pmf, 0.0)


def _error_tail(
    w: float, lam: float, a_support: np.ndarray, a_sf: np.ndarray, b_support: np.ndarray, b_pmf: np.ndarray
) -> float:
    """P((1 - lam) A - lam B > w) for independent integer-valued A (its survival function; support consecutive
    integers) and B."""
    if lam >= 1.0:
        return float(np.sum(b_pmf[-b_support > w]))
    x = (w + lam * b_support) / (1.0 - lam)
    # first support point > x: the support is consecutive integers, so its index is arithmetic (a searchsorted
    # there was most of the planner's time on a percentile)
    idx = np.clip(np.floor(x + 1e-12) - a_support[0] + 1.0, 0.0, a_support.size).astype(np.intp)
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

    Mechanism (Foote et al. 2019, Section 4.1; :class:`dpcore.mechanisms.HistogramMechanism`): bin counts c_j
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
    lev = check_level(level)
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
    lev = check_level(level)
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

    Mechanism (:class:`dpcore.mechanisms.RelativeRiskMechanism`, Shoham & Ligett Claim 3.1): both counts + Laplace of
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
    lev = check_level(level)
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
