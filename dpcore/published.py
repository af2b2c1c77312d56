"""The published form of a release table: every released value with its interval and honest digits.

One function, :func:`published_table`, turns a table of released numbers into what is published, and it reads
only published columns and the statistic's record (public parameters and DP outputs): the command line calls it
before writing, and :func:`dpcore.release.recompute_intervals` calls it again on the files alone, so anyone
holding ``release_record.json`` and the tables can check every interval. The intervals themselves are
:mod:`dpcore.intervals`' (each derived there); this module adds the rounding rule:

* a value is rounded to a public step (:func:`dpcore.intervals.honest_grid`, 1/50 to 1/20 of a width) computed
  from published numbers that do not depend on the value itself, so the step can be recomputed: the interval's
  width for percentiles and the relative risk; for a mean 2 x the Laplace quantile / n (its interval's width with
  a public n), for a Gini 2 q s_hat (the published bound), both at most the width of the statistic's range. The
  published interval can be narrower than that width (the pivot of a noisy n or of the Gini, the cut to the
  range), so the step is then a larger share of it (docs/release_cli.md gives the measured shares);
* its interval is the interval of the rounded value widened by half a step, then rounded outwards: the
  unrounded value lies within half a step of the rounded one, so rounding never costs coverage.

Per kind (``<v>_lower`` and ``<v>_upper`` next to each released column ``v``):

* mean: exact Laplace quantile of the sum's noise over the public n (noisy n: the pivot of
  :func:`dpcore.intervals.mean_interval_bounds`), cut to the clip range;
* percentiles: :func:`dpcore.intervals.percentile_interval` on the published noisy histogram (columns
  ``noisy_bin_01`` ...), bin edges, nothing to round (values rounded to the interval's step);
* relative risk: the noisy case counts are published as whole numbers (the noise scale 2m/epsilon is >= 2), the
  relative risk is recomputed from them, and Shoham & Ligett's interval (:func:`dpcore.intervals.
  relative_risk_interval`) is computed from them;
* gini: :func:`dpcore.intervals.gini_interval_from_release` from the published value and the published DP upper
  bound on the smooth sensitivity (``smooth_sensitivity_bound``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from . import intervals
from .validation import DPInputError

__all__ = [
    "published_table",
    "interval_columns",
    "NOISY_BIN_PREFIX",
    "CONSISTENT_BIN_PREFIX",
    "LEAST_SQUARES_BIN_PREFIX",
    "LEAST_SQUARES_SD",
]

#: prefix of the published noisy histogram's columns in a percentiles table (one per bin, 1-based, 2 digits)
NOISY_BIN_PREFIX = "noisy_bin_"
#: a level of a percentiles statistic with margins (:mod:`dpcore.consistency`): its consistent non-negative integer
#: counts (they add up across the levels), the unbiased least-squares estimates of the same bins, and the
#: standard deviation of each of those estimates (one per node: every bin of a node has the same)
CONSISTENT_BIN_PREFIX = "bin_"
LEAST_SQUARES_BIN_PREFIX = "ls_bin_"
LEAST_SQUARES_SD = "ls_sd"


def interval_columns(column: str) -> tuple[str, str]:
    """The two columns that carry the interval of a released column."""
    return f"{column}_lower", f"{column}_upper"


def _step(width: float) -> float:
    return intervals.honest_grid(0.0, width) if math.isfinite(width) and width > 0 else math.nan


def _steps(widths: np.ndarray) -> np.ndarray:
    """:func:`_step` of every width (NaN where there is none), vectorised: the same floats as the scalar
    function (``10.0 ** k`` and the 1-2-5 choice are the same operations; tests/test_published_intervals.py)."""
    w = np.asarray(widths, dtype=float)
    out = np.full(w.shape, math.nan)
    ok = np.isfinite(w) & (w > 0)
    target = w[ok] / 20.0
    if not target.size:
        return out
    exponents = np.floor(np.log10(target)).astype(np.int64)
    first = int(exponents.min())
    # 10^k as the scalar function computes it (Python's pow of one float; NumPy's vectorised power can be 1 ulp
    # off, e.g. 9.999999999999999e-06 for 1e-05), looked up per row
    power = np.array([10.0**k for k in range(first, int(exponents.max()) + 1)])[exponents - first]
    step = power.copy()
    for mult in (2.0, 5.0):  # the largest of 1, 2, 5 x 10^k that is <= target (intervals.honest_grid)
        step = np.where(mult * power <= target * (1 + 1e-12), mult * power, step)
    out[ok] = step
    return out


def _rounded(values: np.ndarray, steps: np.ndarray) -> np.ndarray:
    """Each value rounded to its row's step (:func:`dpcore.intervals.round_to_grid`, one call per distinct step:
    steps are 1, 2 or 5 x 10^k, so a table has few); rows without a finite step or value are left as they are."""
    out = np.array(values, dtype=float, copy=True)
    fine = np.isfinite(steps) & np.isfinite(out)
    for step in np.unique(steps[fine]):
        rows = fine & (steps == step)
        out[rows] = intervals.round_to_grid(out[rows], float(step))
    return out


def _publish(
    values: np.ndarray, lows: np.ndarray, highs: np.ndarray, steps: np.ndarray, widen: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Round every interval outwards to its row's step (widened first by half a step when it was computed from
    the rounded value); rows without an interval keep NaN ends."""
    out_lo, out_hi = np.full(values.shape, np.nan), np.full(values.shape, np.nan)
    for i, step in enumerate(steps):
        if not (math.isfinite(step) and math.isfinite(lows[i]) and math.isfinite(highs[i])):
            continue
        pad = step / 2.0 if widen else 0.0
        out_lo[i], out_hi[i] = intervals.round_interval(lows[i] - pad, highs[i] + pad, step)
    return values, out_lo, out_hi


def _mean(table: pd.DataFrame, stat: Mapping[str, Any], level: float) -> pd.DataFrame:
    scale = float(stat["noise_scale_cents"]) / 100.0
    lower, upper = float(stat["clip_lower"]), float(stat["clip_upper"])
    n = table["n"].to_numpy(dtype=float)
    mean = table["mean"].to_numpy(dtype=float)
    n_scale = stat.get("n_noise_scale")
    ok = np.isfinite(mean) & (n >= 1)
    half = intervals.laplace_quantile(level, scale) / np.maximum(n, 1.0)
    # the width the step is cut from: the interval's with a public n, at most the clip range's (a wider one would
    # round a small cell's mean to a multiple of more than the range, e.g. 0 for every mean of [0, 12,345])
    steps = np.where(ok, _steps(np.minimum(2.0 * half, upper - lower)), math.nan)
    rounded = np.where(ok, _rounded(mean, steps), mean)
    lows, highs = np.full(mean.shape, np.nan), np.full(mean.shape, np.nan)
    if ok.any():
        lo, hi = intervals.mean_interval_bounds(
            rounded[ok],
            n[ok],
            sum_scale=scale,
            lower=lower,
            upper=upper,
            level=level,
            n_scale=None if n_scale is None else float(n_scale),
        )
        lows[ok], highs[ok] = lo, hi
    value, lo, hi = _publish(rounded, lows, highs, steps, widen=True)
    out = table.copy()
    # a mean of clipped incomes lies in [lower, upper]: rounding to the step may not leave it (the mechanism clamps)
    out["mean"] = np.clip(value, lower, upper)
    out["mean_lower"], out["mean_upper"] = np.clip(lo, lower, upper), np.clip(hi, lower, upper)
    return out


def _percentiles(table: pd.DataFrame, stat: Mapping[str, Any], level: float) -> pd.DataFrame:
    edges = np.asarray(stat["bin_edges"], dtype=float)
    bins = [f"{NOISY_BIN_PREFIX}{j + 1:02d}" for j in range(edges.size - 1)]
    missing = [b for b in bins if b not in table.columns]
    if missing:
        raise DPInputError(f"a percentiles table needs its published noisy histogram (columns {bins[0]} ...)")
    out = table.copy()
    counts = table[bins].to_numpy(dtype=float)
    n = table["n"].to_numpy(dtype=float)
    noisy_n = stat.get("n_noise_scale") is not None  # cell sizes protected: the published n is a noisy count
    ok = np.ones(n.shape, dtype=bool) if noisy_n else n >= 2
    for q in stat["q"]:
        col = "p" + f"{float(q):g}".replace(".", "_")
        values = table[col].to_numpy(dtype=float)
        lows, highs = np.full(values.shape, np.nan), np.full(values.shape, np.nan)
        if ok.any():
            res = intervals.percentile_interval(
                counts[ok],
                edges,
                [float(q)],
                scale=float(stat["noise_scale"]),
                level=level,
                n=None if noisy_n else n[ok],
            )
            lows[ok], highs[ok] = np.asarray(res.lower)[:, 0], np.asarray(res.upper)[:, 0]
        widths = np.where(np.isfinite(highs), highs - lows, edges[-1] - lows)
        steps = np.where(np.isfinite(lows), _steps(widths), math.nan)
        out[col] = _rounded(values, steps)
        out[f"{col}_lower"], out[f"{col}_upper"] = lows, highs
    return out


def _percentiles_consistent(table: pd.DataFrame, stat: Mapping[str, Any], level: float) -> pd.DataFrame:
    """A level of a percentiles statistic with margins: each percentile read off the consistent counts (columns
    ``bin_01`` ...), its interval from the least-squares estimates and their standard deviation (columns
    ``ls_bin_01`` ..., ``ls_sd``; :func:`dpcore.consistency.percentile_intervals`), widened to the bin of the
    value. The value is recomputed from the published counts, so this is idempotent on its own output."""
    from . import consistency
    from .percentiles import percentiles_from_histogram

    edges = np.asarray(stat["bin_edges"], dtype=float)
    m = edges.size - 1
    bins = [f"{CONSISTENT_BIN_PREFIX}{j + 1:02d}" for j in range(m)]
    ls_bins = [f"{LEAST_SQUARES_BIN_PREFIX}{j + 1:02d}" for j in range(m)]
    missing = [c for c in (*bins, *ls_bins, LEAST_SQUARES_SD) if c not in table.columns]
    if missing:
        raise DPInputError(
            f"a level of a statistic with margins needs its consistent counts ({bins[0]} ...), the least-squares "
            f"estimates ({ls_bins[0]} ...) and {LEAST_SQUARES_SD}; missing {missing[0]}"
        )
    out = table.copy()
    counts = table[bins].to_numpy(dtype=float)
    estimates = table[ls_bins].to_numpy(dtype=float)
    sd = table[LEAST_SQUARES_SD].to_numpy(dtype=float)
    n = table["n"].to_numpy(dtype=float)
    noisy_n = stat.get("n_noise_scale") is not None
    ok = np.ones(n.shape, dtype=bool) if noisy_n else n >= 2
    qs = [float(q) for q in stat["q"]]
    values = np.full((len(table), len(qs)), np.nan)
    if len(table):
        values = np.atleast_2d(percentiles_from_histogram(counts, edges, qs)).reshape(len(table), len(qs))
    lows, highs = np.full(values.shape, np.nan), np.full(values.shape, np.nan)
    if ok.any():
        res = consistency.percentile_intervals(
            estimates[ok],
            sd[ok] ** 2,
            edges,
            qs,
            level=level,
            n=None if noisy_n else n[ok],
            values=values[ok],
        )
        lows[ok], highs[ok] = np.asarray(res.lower).reshape(-1, len(qs)), np.asarray(res.upper).reshape(-1, len(qs))
    for i, q in enumerate(qs):
        col = "p" + f"{q:g}".replace(".", "_")
        widths = np.where(np.isfinite(highs[:, i]), highs[:, i] - lows[:, i], edges[-1] - lows[:, i])
        steps = np.where(np.isfinite(lows[:, i]), _steps(widths), math.nan)
        rounded = _rounded(values[:, i], steps)
        out[col] = rounded
        # a wide interval has a coarse step, which can move the value past the interval's end bin edge: the
        # interval is widened to the bin edges around the rounded value (only wider: its coverage is kept)
        held = np.clip(np.searchsorted(edges, rounded, side="right"), 1, m)
        has = np.isfinite(lows[:, i]) & np.isfinite(rounded)
        below = has & (rounded < lows[:, i])
        above = has & (rounded > highs[:, i])
        lows[below, i] = np.where(held[below] == 1, np.minimum(rounded[below], edges[0]), edges[held[below] - 1])
        highs[above, i] = np.where(held[above] == m, np.maximum(rounded[above], edges[-1]), edges[held[above]])
        out[f"{col}_lower"], out[f"{col}_upper"] = lows[:, i], highs[:, i]
    return out


def _relative_risk(table: pd.DataFrame, stat: Mapping[str, Any], level: float) -> pd.DataFrame:
    out = table.copy()
    x = np.round(table["cases_exposed"].to_numpy(dtype=float))
    y = np.round(table["cases_reference"].to_numpy(dtype=float))
    nx = table["n_exposed"].to_numpy(dtype=float)
    ny = table["n_reference"].to_numpy(dtype=float)
    out["cases_exposed"], out["cases_reference"] = x, y
    rr = np.full(x.shape, np.nan)
    lows, highs = np.full(x.shape, np.nan), np.full(x.shape, np.nan)
    for i in range(x.size):
        if nx[i] < 1 or ny[i] < 1:
            continue
        ci = intervals.relative_risk_interval(
            x[i], y[i], int(nx[i]), int(ny[i]), scale=float(stat["noise_scale"]), level=level
        )
        step = _step(ci.upper - ci.lower)
        rr[i] = intervals.round_to_grid(ci.value, step) if math.isfinite(step) else ci.value
        if math.isfinite(step):
            lows[i], highs[i] = intervals.round_interval(ci.lower, ci.upper, step)
    out["relative_risk"] = rr
    out["relative_risk_lower"], out["relative_risk_upper"] = np.maximum(lows, 0.0), highs
    return out


def _gini(table: pd.DataFrame, stat: Mapping[str, Any], level: float) -> pd.DataFrame:
    plan = stat["interval_plan"]
    constants = {
        k: plan[k] for k in ("noise", "bound_scale", "eta", "method", "gamma", "sigma", "min_scale", "max_scale")
    }
    alpha = float(plan["release_alpha"])
    quantile = intervals.gini_interval_quantile(
        plan["noise"],
        level,
        bound_scale=float(plan["bound_scale"]),
        eta=float(plan["eta"]),
        method=plan["method"],
        gamma=float(plan["gamma"]),
        sigma=plan["sigma"],
        clamped=float(plan["min_scale"]) > 0,
    )
    values = table["gini"].to_numpy(dtype=float)
    s_upper = table["smooth_sensitivity_bound"].to_numpy(dtype=float)
    ok = np.isfinite(s_upper) & (s_upper > 0)
    scale_hat = np.clip(s_upper / alpha, float(plan["min_scale"]), float(plan["max_scale"]))
    # the width the step is cut from: 2 q s_hat, at most 1 (the Gini's range: a wider one rounded a small cell's
    # Gini to a multiple of 5, i.e. to 0, beside the interval [0, 1])
    steps = np.array(
        [max(_step(min(2.0 * quantile * s, 1.0)), 1e-6) if k else math.nan for s, k in zip(scale_hat, ok, strict=True)]
    )
    rounded = values.copy()
    rounded[ok] = [
        min(max(intervals.round_to_grid(v, s), 0.0), 1.0) for v, s in zip(values[ok], steps[ok], strict=True)
    ]
    lows, highs = np.full(values.shape, np.nan), np.full(values.shape, np.nan)
    if ok.any():
        lo, hi = intervals.gini_interval_bounds(rounded[ok], s_upper[ok], alpha=alpha, level=level, **constants)
        lows[ok], highs[ok] = lo, hi
    value, lo, hi = _publish(rounded, lows, highs, steps, widen=True)
    out = table.copy()
    out["gini"] = value
    out["gini_lower"], out["gini_upper"] = np.clip(lo, 0.0, 1.0), np.clip(hi, 0.0, 1.0)
    return out


def _count(table: pd.DataFrame, stat: Mapping[str, Any], level: float) -> pd.DataFrame:
    """A noisy count (integer, discrete Laplace of public scale): value -+ the exact level-quantile of |noise|,
    cut at 0 (:func:`dpcore.intervals.count_interval`); the count is already a whole number, its honest digits."""
    scale = float(stat["noise_scale"])
    values = table["count"].to_numpy(dtype=float)
    half = float(intervals.discrete_laplace_quantile(level, scale))
    out = table.copy()
    out["count_lower"] = np.where(np.isfinite(values), np.maximum(values - half, 0.0), np.nan)
    out["count_upper"] = np.where(np.isfinite(values), values + half, np.nan)
    if "n" in table.columns:  # a count of rows is at most the public n
        out["count_upper"] = np.minimum(out["count_upper"], table["n"].to_numpy(dtype=float))
    return out


_KINDS = {
    "mean": _mean,
    "percentiles": _percentiles,
    "percentiles_consistent": _percentiles_consistent,
    "relative_risk": _relative_risk,
    "gini": _gini,
    "count": _count,
}


def published_table(kind: str, table: pd.DataFrame, statistic: Mapping[str, Any], level: float) -> pd.DataFrame:
    """``table`` with every released value rounded to its honest step and its interval at ``level`` in
    ``<v>_lower`` / ``<v>_upper`` columns, from the table's published columns and the statistic's record alone.
    Idempotent: applied to its own output it gives the same table (the recomputation of a published release)."""
    if kind not in _KINDS:
        raise DPInputError(f"no published intervals for statistic kind {kind!r}")
    level = float(level)
    if not 0.0 < level < 1.0:
        raise DPInputError(f"the interval level must be in (0, 1), got {level!r}")
    base = table.drop(columns=[c for c in table.columns if c.endswith(("_lower", "_upper"))])
    return _KINDS[kind](base, statistic, level)
