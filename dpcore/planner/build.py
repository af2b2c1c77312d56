"""Building planned statistics from a planning data set (the page and the generated scripts), and the kinds a
real release takes."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..kinds import PLANNER_KINDS
from ..validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_finite,
    check_int,
)
from .counts_means import ClippedMean, CountAbove, GroupMeans, RatioStatistic
from .gini_statistic import GiniStatistic
from .percentile_statistics import ExponentialPercentilesStatistic, PercentilesStatistic
from .statistics import PlannedStatistic, check_values

__all__ = ["RELEASABLE", "STAT_KINDS", "planning_groups", "make_statistic"]


#: the planned statistics a real release takes (:func:`dpcore.release.make_release`): each draws through its
#: registered mechanisms only (``mechanisms_at``); a subclass or another object is refused (it could draw
#: otherwise)
RELEASABLE = (
    CountAbove,
    ClippedMean,
    GroupMeans,
    GiniStatistic,
    PercentilesStatistic,
    ExponentialPercentilesStatistic,
    RatioStatistic,
)

#: kind -> plain-language name, in the order the page lists them.
STAT_KINDS = {kind.name: kind.label for kind in PLANNER_KINDS.values()}


def planning_groups(n: int, *, shares: Sequence[float] = (0.5, 0.3, 0.2), seed: int = 0) -> np.ndarray:
    """Group labels "group A", "group B", ... drawn at random with the given shares, for planning data
    that has no grouping column (synthetic incomes). Random groups have equal expected means; they
    show the effect of group size, which is what the privacy noise depends on."""
    n = check_int(n, "n", minimum=2)
    sh = as_finite_array(shares, "shares")
    if np.any(sh <= 0):
        raise DPInputError("group shares must be > 0")
    labels = np.array([f"group {chr(65 + i)}" for i in range(sh.size)])
    return labels[as_generator(seed).choice(sh.size, size=n, p=sh / sh.sum())]


def _percentiles_statistic(cells: tuple, labels: tuple, params: dict) -> PercentilesStatistic:
    """The percentiles statistic of ``make_statistic``: the noisy histogram, or the exponential mechanism."""
    method = params.get("method", "histogram")
    if method == "exponential":
        return ExponentialPercentilesStatistic(
            cells,
            edges=params.get("candidates"),
            q=tuple(params.get("q", (50,))),
            cell_labels=labels,
            n_sims=int(params.get("n_sims", 1000)),
            seed=int(params.get("seed", 0)),
        )
    if method != "histogram":
        raise DPInputError(f"percentiles method must be 'histogram' or 'exponential', got {method!r}")
    return PercentilesStatistic(
        cells,
        q=tuple(params.get("q", (25, 50, 75))),
        cell_labels=labels,
        n_sims=int(params.get("n_sims", 4000)),
        seed=int(params.get("seed", 0)),
        relation=params.get("relation", "replace"),
    )


def make_statistic(kind: str, values, groups=None, **params) -> PlannedStatistic:
    """Build a planned statistic of one of :data:`STAT_KINDS` from planning data.

    values: incomes; groups: one label per record (needed by "percentiles" (cells = groups),
    "group_means" and "ratio"). params per kind:
    gini: lower=0, upper, gamma=2, calibration="tight"; percentiles: q=(25, 50, 75), n_sims, seed,
    relation="replace" (negative incomes are set to 0: PSEO bins start at $10,000 anyway), method="histogram" or
    "exponential" (:class:`ExponentialPercentilesStatistic`: q=(50,), candidates=None for "pseo-fine");
    group_means / mean: lower, upper (clip range); count: threshold;
    ratio: threshold (low income = below it), group_x, group_y (default: the first two labels).
    """
    x = check_values(values)
    if kind not in STAT_KINDS:
        raise DPInputError(f"unknown statistic {kind!r}; choose one of {list(STAT_KINDS)}")
    if PLANNER_KINDS[kind].grouped:
        if groups is None:
            raise DPInputError(f"{STAT_KINDS[kind]} needs a group (cell) for every record")
        g = np.asarray(groups).astype(str)
        if g.shape[0] != x.size:
            raise DPInputError(f"values ({x.size}) and groups ({g.shape[0]}) must have the same length")
        labels = sorted(set(g.tolist()))
    if kind == "gini":
        return GiniStatistic(
            x,
            float(params.get("lower", 0.0)),
            float(params["upper"]),
            gamma=float(params.get("gamma", 2.0)),
            calibration=params.get("calibration", "tight"),
            noise=params.get("noise", "cauchy"),
            delta=params.get("delta"),
        )
    if kind == "mean":
        return ClippedMean(x, float(params.get("lower", 0.0)), float(params["upper"]))
    if kind == "count":
        return CountAbove(x, float(params["threshold"]))
    if kind == "group_means":
        return GroupMeans(x, g, float(params.get("lower", 0.0)), float(params["upper"]))
    if kind == "group_medians":  # the PSEO histogram machinery with q = 50
        cells = tuple(np.maximum(x[g == lab], 0.0) for lab in labels)
        return PercentilesStatistic(
            cells,
            q=(50.0,),
            cell_labels=tuple(labels),
            n_sims=int(params.get("n_sims", 4000)),
            seed=int(params.get("seed", 0)),
            relation=params.get("relation", "replace"),
            name="Median income by group (PSEO histogram)",
            kind="group_medians",
        )
    if kind == "percentiles":
        return _percentiles_statistic(tuple(np.maximum(x[g == lab], 0.0) for lab in labels), tuple(labels), params)
    # ratio
    if len(labels) < 2:
        raise DPInputError("a relative risk needs two groups; the data have one")
    gx = str(params.get("group_x", labels[0]))
    gy = str(params.get("group_y", labels[1]))
    if gx == gy:
        raise DPInputError("choose two different groups for the relative risk")
    for lab in (gx, gy):
        if lab not in labels:
            raise DPInputError(f"there is no group {lab!r}; groups are {labels[:10]}")
    thr = check_finite(params["threshold"], "low-income threshold")
    in_x, in_y = g == gx, g == gy
    stat = RatioStatistic(
        int(np.count_nonzero(x[in_x] < thr)), int(np.count_nonzero(x[in_y] < thr)), int(in_x.sum()), int(in_y.sum())
    )
    object.__setattr__(stat, "name", f"Relative risk of income < {thr:,.0f}: {gx} vs {gy}")
    return stat
