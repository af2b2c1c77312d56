"""Tables that add up: every level of a hierarchy measured, then made consistent (post-processing only).

An agency publishes a hierarchy, not one table: PSEO earnings histograms by institution x degree x cohort, the
same rolled up by state, and for the nation. Released as separate statistics the levels disagree (a state's bin
is not the sum of its institutions') and small counts come out negative. This module holds the mathematics of
the remedy, as pure functions (no I/O, no ledger, no sampling of a real release):

* :class:`Hierarchy` (:func:`check_margins`, :func:`hierarchy_from_keys`): the tree of levels. Level 0 holds the
  cells (the statistic's ``by`` groups); each next level a coarser grouping (a margin), the last one possibly the
  whole table (``[]``). Every node of level l + 1 is the sum of its children at level l.
* :func:`least_squares`: the weighted (generalised) least-squares estimate of every node from the noisy
  measurements of every level, and the standard deviation of each estimate (Hay et al. 2010's two passes, with
  one noise variance per level).
* :func:`nonnegative_integer_counts`: non-negative integers that add up exactly from the cells to each margin
  to the total (the Census TopDown's two stages, level by level: a non-negative L2 projection, then a controlled
  rounding).
* :func:`make_consistent`: both steps on the measured histograms; :func:`percentile_intervals`: intervals of the
  percentiles read off every level; :func:`level_errors` and :func:`simulate`: what the margins cost and give.

Papers: Hay, Rastogi, Miklau & Suciu (2010), "Boosting the accuracy of differentially private histograms through
consistency", PVLDB 3(1) (the constrained inference of the hierarchical query: a tree of counts made consistent
in two passes, for one noise variance and a fan-out k); Cumings-Menon & Zhuravlev (2024), "Least squares
estimation for hierarchical data", arXiv:2404.13164 (the Census Bureau's generalised least-squares estimates of
the 2020 noisy measurements, their variances and confidence intervals: the "GLS" product published beside the
official counts); Abowd et al. (2022), "The 2020 Census Disclosure Avoidance System TopDown Algorithm", Harvard
Data Science Review, Special Issue 2 (its post-processing: per geographic level, top down, a non-negative
weighted L2 solve constrained to the parent's published counts, then an L1 "rounder" to integers that keep the
constraints); ektelo (Zhang et al. 2018, ``ektelo/client/inference.py``: ``LeastSquares`` scales every
measurement by 1/noise scale, i.e. the same weighted least squares, solved iteratively with LSMR;
``NonNegativeLeastSquares`` by L-BFGS-B, real-valued, no rounding).

Privacy. Level l's histograms are measured by the histogram mechanism (Foote et al. 2019, Section 4.1;
:class:`dpcore.percentiles.HistogramMechanism`) with its own share epsilon_l: every node x bin count plus
discrete Laplace noise of public scale s_l. A person is in one cell and hence in one node of every level, so the
levels compose sequentially: the hierarchy costs sum_l epsilon_l (the neighbouring relation and the scale per
level are the mechanism's: replace one record, scale 2m/epsilon_l). Everything in this module reads only the
noisy measurements and public parameters (the tree, the scales): it is post-processing and costs nothing. The
functions whose argument is named ``confidential_*`` (:func:`simulate`) are for planning and measurement only.

The least-squares estimate (proof)
----------------------------------
The problems of the bins are separate: a node's bin b is the sum of its children's bins b, the noise of every
(node, bin) is independent, and all nodes of one level share one variance, so one linear map, applied bin by
bin, is the estimate. For one bin: y_v = x_v + Z_v at every node v, Var Z_v = sigma_l^2 (the discrete Laplace's
variance 2r/(1-r)^2, r = e^(-1/s_l), :func:`discrete_laplace_variance`), and the unknowns are the cells' counts.
The generalised least-squares (GLS) estimate minimises sum_v (y_v - x_v)^2 / sigma_v^2 over consistent x; by
Gauss-Markov it is the minimum-variance linear unbiased estimate of every node (and of every sum of nodes).

On a tree it has a closed form in two passes (Hay et al.'s, generalised from one variance and one fan-out to a
variance per level and any fan-outs; the same estimate as Cumings-Menon & Zhuravlev's):

1. Up (leaves to root). z_v, V_v: the GLS estimate of x_v from the measurements in v's subtree alone, and its
   variance. A cell: z = y, V = sigma_0^2. A node with children c: the children's sum s = sum z_c has variance
   S = sum V_c and is independent of y_v, so the inverse-variance average is z_v = (y_v/sigma_v^2 + s/S) V_v,
   1/V_v = 1/sigma_v^2 + 1/S.
2. Down (root to leaves). The root's estimate is its z. Given the final estimate x̂_v of a parent, its children's
   are x̂_c = z_c + (V_c / S)(x̂_v - s): the parent's correction shared in proportion to the children's
   variances (Hay et al.'s 1/k when all V_c are equal). Variances: P_root = V_root and
   P_c = V_c - V_c^2/S + (V_c/S)^2 P_v.

Why it is the GLS: with a flat prior on the cells, the Gaussian model with the same covariances has posterior
mean and covariance equal to the GLS estimate and its covariance ((A' Sigma^-1 A)^-1); the subtree's
measurements are independent of the rest given x_v, so the up pass computes each subtree's likelihood of x_v
(N(z_v, V_v)), and the down pass conditions independent N(z_c, V_c) on their sum (mean z_c + V_c/S (x_v - s),
variance V_c - V_c^2/S), then averages over the parent's posterior. Both are linear and use second moments
only, so the same estimate and variances hold for the discrete Laplace noise (tests compare with a dense
weighted least-squares solve). The standard deviations sqrt(P) are what the Census GLS product publishes.

The non-negative integer counts (proof that they add up)
---------------------------------------------------------
Top down, as TopDown: (a) the root level's nodes get max(0, round(x̂)) in every bin; (b) given a parent's
integer count p >= 0 in a bin, its children's are the solution of

    minimise sum_c (x_c - x̂_c)^2 / V_c  subject to  sum_c x_c = p,  x_c >= 0,

which without the bound x >= 0 is exactly step 2's sharing rule (the parent moved from its GLS value to p, the
children absorb the move in proportion to V_c); with it the solution is x_c = max(0, x̂_c + V_c tau) with the one
tau that makes the sum p (a weighted projection onto a simplex, solved exactly from the sorted breakpoints
-x̂_c/V_c); (c) controlled rounding of the family: every child gets floor(x_c), then the p - sum floor(x_c)
children with the largest fractional parts get one more (largest remainders). Every child moves by less than 1,
the family still sums to p, the counts stay >= 0 (floors of non-negative numbers); among integer vectors with
sum p it is the nearest to x in L1 and L2 (a vector with sum p that rounds some child by 1 or more, or rounds a
smaller fraction up instead of a larger one, is farther; the usual exchange argument). By induction from the
root every level is non-negative integers and every node is the sum of its children, bin by bin: the sums are
exact at every level (tests check them in every draw).

When the integers cost something
--------------------------------
The GLS estimate of every node has at most the variance of the node's own measurement (that measurement is
one of the linear unbiased estimates the GLS minimises over), at any split of epsilon. The integers are within 1
of the projection, and the projection onto non-negative values helps where counts are small; measured over PSEO
tables (docs/benchmarks.md) the integers' RMSE is 0.45x to 0.94x that of each level's own measurement at noise
scales 1.5 to 32 per level, and within 1.05x down to a scale of 0.5 (epsilon_l <= 4 at one row per person,
replace-one). Below that the measured
counts are mostly exact and a single +-1 in a cell cannot be undone: its family must still add up to its parent,
and nothing in the data tells which of the k children moved (the k hypotheses "child i is one too high" are
equally likely), so an integer table that adds up moves a second cell about (k - 1)/k of the time. At scale 0.2
the cells' RMSE is then about 1.17x their own measurement's (0.14 against 0.12 of a count); the GLS estimates,
published beside, keep their <= 1x.

Epsilon across levels
---------------------
:func:`split_epsilon`: evenly by default, or in proportion to weights the plan gives; :func:`balanced_split`:
the minimax split (the worst level's error as small as it can be). No split makes every level as accurate as
releasing that level alone with the whole epsilon. For a cell c with k - 1 siblings, everything the rest of the
tree says about x_c passes through its parent, and the siblings' sum is known at best with variance
(k - 1) sigma_0^2, so P_c >= sigma_0^2 (1 - 1/k). For a root, each level l below it says about x_root at most
what the sum of its N_l nodes says (variance N_l sigma_l^2), so 1/P_root <= sum_l 1/(N_l sigma_l^2). With
sigma_l^2 ~ c/epsilon_l^2 (the discrete Laplace at scale 2m/epsilon_l) and sum_l epsilon_l = epsilon, two levels
and k = N_0 >= 2 already make it impossible for both levels to come within 1.05x (in RMSE) of the level alone at
epsilon: the cells need epsilon_0 >= epsilon sqrt((1 - 1/k)/1.1025), and then (epsilon - epsilon_0)^2 +
epsilon_0^2/k < epsilon^2/1.1025 (tests/test_consistency.py checks it on a grid of splits). With many members per
group, each level is about epsilon/epsilon_l times less accurate than alone, so with L levels the worst one loses
nearly L times and the even split is close to the minimax one: publishing L levels costs each level about what
releasing it at epsilon/L costs (PSEO's trees, docs/benchmarks.md: the worst level 3.0x even and 2.8x balanced
with three levels, 4.0x and 3.6x with four). :func:`level_errors` gives, for a plan, each level's error with and
without consistency (the planner's "what margins cost and give").

Intervals of the percentiles
----------------------------
:func:`percentile_intervals`. The percentile of a node is read off its consistent integer histogram
(:func:`dpcore.percentiles.percentiles_from_histogram`, eq. 4.2 of Foote et al.). Its interval inverts the
one-sided tests of :func:`dpcore.intervals.percentile_interval` (the true percentile's bin J* is fixed by the
data; a miss needs the estimate of the cumulative count at bin J* or J* - 1 to err by more than w on one side),
but on the GLS estimates, which are unbiased with known variances: the error of the estimated cumulative count
sum_{b<=j} x̂_b - lambda sum_b x̂_b is a sum of independent bin errors of variance P_v each, so its variance is
P_v (j (1 - lambda)^2 + (M - j) lambda^2), and w is its normal quantile (the error is a weighted sum of many
independent discrete Laplace terms, one per node and bin: for the cells, 21 terms of the own measurement and
smaller ones of every other level; each one-sided tail measured at 2.1-2.7% where the normal says 2.5%).
Coverage is measured, not exact: >= 98.8% for the median at every level of PSEO's trees (docs/benchmarks.md) and
about 97% in the least favourable tables of tests/test_consistency.py (every node's median at the top of its
bin, the bins on either side full; the test holds it within 93-98.5%). The interval is widened to hold the published percentile (only ever wider:
coverage kept), so that no published value lies outside its own interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import intervals as intervals_lib
from . import noise
from . import percentiles as percentiles_lib
from .lazy import LazyModule
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_int,
    check_positive,
    check_probability,
)

#: the normal quantile of the intervals (scipy.special loads only when an interval is computed)
special = LazyModule("scipy.special")

__all__ = [
    "Hierarchy",
    "check_margins",
    "hierarchy_from_keys",
    "discrete_laplace_variance",
    "split_epsilon",
    "balanced_split",
    "LeastSquares",
    "least_squares",
    "nonnegative_integer_counts",
    "ConsistentHistograms",
    "make_consistent",
    "percentile_intervals",
    "LevelErrors",
    "level_errors",
    "ConsistencySimulation",
    "simulate",
]

#: a family's projection and rounding treat values within this of an integer as that integer (float sums of
#: many terms are off by far less; a wrong floor would change the family's sum by one)
_INTEGER_TOLERANCE = 1e-9


# ---------------------------------------------------------------------------------------------
# The tree of levels
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Hierarchy:
    """The levels of a table: ``sizes[l]`` nodes at level l (level 0: the cells), and ``parents[l][i]`` the index
    at level l + 1 of the node that contains node i of level l (one array per level but the last).

    Every node above level 0 has at least one child (a margin is made of its cells). ``columns[l]`` names the
    grouping columns of level l and ``keys[l]`` its nodes' values of them (empty when the tree was given by its
    parent arrays)."""

    sizes: tuple[int, ...]
    parents: tuple[np.ndarray, ...]
    columns: tuple[tuple[str, ...], ...] = ()
    keys: tuple[tuple[tuple[Any, ...], ...], ...] = ()
    child_order: tuple[np.ndarray, ...] = field(init=False, repr=False)
    family_starts: tuple[np.ndarray, ...] = field(init=False, repr=False)
    fanouts: tuple[np.ndarray, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        sizes = tuple(check_int(s, "number of nodes of a level", minimum=1) for s in self.sizes)
        if not sizes:
            raise DPInputError("a hierarchy needs at least one level (the cells)")
        if len(self.parents) != len(sizes) - 1:
            raise DPInputError(f"{len(sizes)} levels need {len(sizes) - 1} parent arrays, got {len(self.parents)}")
        parents, orders, starts, fanouts = [], [], [], []
        for level, raw in enumerate(self.parents):
            p = np.asarray(raw)
            if p.shape != (sizes[level],) or not np.issubdtype(p.dtype, np.integer):
                raise DPInputError(f"parents of level {level} must be {sizes[level]} integer node indices")
            p = p.astype(np.int64)
            if p.size and (p.min() < 0 or p.max() >= sizes[level + 1]):
                raise DPInputError(f"parents of level {level} must lie in 0..{sizes[level + 1] - 1}")
            fanout = np.bincount(p, minlength=sizes[level + 1])
            if np.any(fanout == 0):
                raise DPInputError(f"node {int(np.argmin(fanout))} of level {level + 1} has no children")
            p.setflags(write=False)
            parents.append(p)
            orders.append(np.argsort(p, kind="stable"))
            starts.append(np.concatenate([[0], np.cumsum(fanout)[:-1]]).astype(np.int64))
            fanouts.append(fanout)
        object.__setattr__(self, "sizes", sizes)
        object.__setattr__(self, "parents", tuple(parents))
        object.__setattr__(self, "child_order", tuple(orders))
        object.__setattr__(self, "family_starts", tuple(starts))
        object.__setattr__(self, "fanouts", tuple(fanouts))

    @property
    def levels(self) -> int:
        return len(self.sizes)

    def fanout(self, level: int) -> np.ndarray:
        """Children per node of ``level`` (>= 1)."""
        return self.fanouts[level - 1]

    def sum_children(self, values: np.ndarray, level: int) -> np.ndarray:
        """Sum the nodes of ``level`` - 1 into their parents at ``level``, along axis -2 ((..., nodes, bins))
        or the only axis of a 1-D array."""
        axis = -2 if values.ndim >= 2 else 0
        ordered = np.take(values, self.child_order[level - 1], axis=axis)
        return np.add.reduceat(ordered, self.family_starts[level - 1], axis=axis)

    def aggregate(self, cells: Any) -> tuple[np.ndarray, ...]:
        """Every level's counts from the cells' ((..., cells, bins)): the true histograms of the margins."""
        out = [np.asarray(cells)]
        for level in range(1, self.levels):
            out.append(self.sum_children(out[-1], level))
        return tuple(out)


def _check_hierarchy(hierarchy: Any) -> Hierarchy:
    """``hierarchy`` itself when it is a :class:`Hierarchy` (built by :func:`hierarchy_from_keys`), else a
    TypeError that names what was passed: every function below reads its levels and sizes."""
    if not isinstance(hierarchy, Hierarchy):
        raise TypeError(f"hierarchy must be a dpcore.consistency.Hierarchy, got {type(hierarchy).__name__}")
    return hierarchy


def check_margins(by: Sequence[str], margins: Any) -> tuple[tuple[str, ...], ...]:
    """The plan's ``margins`` of a statistic grouped ``by`` these columns, finest first, each in ``by``'s order.

    A margin is a list of some of the ``by`` columns (``[]``: the whole table). The margins must be nested (each
    a proper subset of the previous, after sorting from the finest): then every level's node is a sum of nodes of
    the level below and the levels form a tree, which the two least-squares passes and the family-by-family
    rounding need. Crossed margins (``[["state"], ["degree"]]``) are refused: they make a lattice, not a tree,
    and integers that keep crossed sums are a harder problem (a two-way table with both margins has a controlled
    rounding, Cox 1987; a three-way table need not)."""
    by_cols = [str(c) for c in by]
    if isinstance(margins, (str, bytes)) or not isinstance(margins, Sequence):
        raise DPInputError("margins must be a list of lists of column names, e.g. [['state'], []]")
    if not margins:
        raise DPInputError("margins is empty: leave it out to release the cells alone")
    out: list[tuple[str, ...]] = []
    for margin in margins:
        if isinstance(margin, (str, bytes)) or not isinstance(margin, Sequence):
            raise DPInputError(f"each margin must be a list of column names (got {margin!r}); [] is the whole table")
        named = [str(c) for c in margin]
        unknown = [c for c in named if c not in by_cols]
        if unknown:
            raise DPInputError(f"margin {named} names {unknown}, not among the statistic's by columns {by_cols}")
        if len(set(named)) != len(named):
            raise DPInputError(f"margin {named} names a column twice")
        if len(named) == len(by_cols):
            raise DPInputError(f"margin {named} is the cells themselves (all of {by_cols}); a margin is coarser")
        ordered = tuple(c for c in by_cols if c in named)
        if ordered in out:
            raise DPInputError(f"margin {list(ordered)} is listed twice")
        out.append(ordered)
    out.sort(key=len, reverse=True)
    previous = tuple(by_cols)
    for cols in out:
        if not set(cols) < set(previous):
            raise DPInputError(
                f"margins must be nested (each coarser margin a subset of the finer one): {list(cols)} is not "
                f"within {list(previous)}; crossed margins cannot all add up exactly"
            )
        previous = cols
    return tuple(out)


def hierarchy_from_keys(cells: Mapping[str, Any], by: Sequence[str], margins: Any) -> Hierarchy:
    """The tree of a table whose cells have the values ``cells[col]`` (one sequence per ``by`` column) and the
    plan's ``margins`` (:func:`check_margins`). Nodes of a margin appear in the order of their first cell."""
    levels = (tuple(str(c) for c in by), *check_margins(by, margins))
    missing = [c for c in levels[0] if c not in cells]
    if missing:
        raise DPInputError(f"the cells lack the by columns {missing}")
    columns = {col: list(cells[col]) for col in levels[0]}
    n = {len(v) for v in columns.values()}
    if len(n) > 1:
        raise DPInputError("every by column must give one value per cell")
    n_cells = n.pop() if n else 0
    if n_cells == 0:
        raise DPInputError("the table has no cells")
    rows = list(zip(*(columns[c] for c in levels[0]), strict=True))
    if len(set(rows)) != len(rows):
        raise DPInputError("two cells have the same values of the by columns")
    keys: list[tuple[tuple[Any, ...], ...]] = [tuple(rows)]
    parents: list[np.ndarray] = []
    for cols in levels[1:]:
        pick = [levels[0].index(c) for c in cols]
        index: dict[tuple[Any, ...], int] = {}
        child_parent = []
        for row in rows:
            key = tuple(row[i] for i in pick)
            child_parent.append(index.setdefault(key, len(index)))
        # the parent of a node of the previous level: the node its first cell maps to (the levels are nested)
        first_cell = _first_cell_of_nodes(parents, len(keys[-1]))
        parents.append(np.asarray(child_parent, dtype=np.int64)[first_cell])
        keys.append(tuple(index))
    return Hierarchy(tuple(len(k) for k in keys), tuple(parents), levels, tuple(keys))


def _first_cell_of_nodes(parents: list[np.ndarray], n_nodes: int) -> np.ndarray:
    """For every node of the latest level, one of its cells (the first)."""
    if not parents:
        return np.arange(n_nodes)
    cell_node = np.arange(parents[0].size)
    for p in parents:
        cell_node = p[cell_node]
    first = np.full(n_nodes, -1, dtype=np.int64)
    rev = np.arange(cell_node.size)[::-1]
    first[cell_node[rev]] = rev
    return first


# ---------------------------------------------------------------------------------------------
# Noise variances and the split of epsilon
# ---------------------------------------------------------------------------------------------


def discrete_laplace_variance(scale: float) -> float:
    """Variance of the discrete Laplace P(k) ∝ exp(-|k|/scale): 2r/(1-r)^2, r = e^(-1/scale) (the difference of
    two independent geometric counts, each of variance r/(1-r)^2). Below 2 scale^2, the continuous Laplace's."""
    scale = check_positive(scale, "noise scale")
    r = math.exp(-1.0 / scale)
    return 2.0 * r / (-math.expm1(-1.0 / scale)) ** 2


def split_epsilon(epsilon: float, levels: int, weights: Any = None) -> np.ndarray:
    """The share of every level (cells first): epsilon / levels each, or epsilon w_l / sum(w) for the plan's
    weights. The shares add up to epsilon (sequential composition over the levels)."""
    epsilon = check_epsilon(epsilon)
    levels = check_int(levels, "number of levels", minimum=1)
    if weights is None:
        return np.full(levels, epsilon / levels)
    w = as_finite_array(weights, "epsilon weights of the levels")
    if w.size != levels or np.any(w <= 0):
        raise DPInputError(f"the epsilon weights must be {levels} positive numbers, one per level (cells first)")
    return epsilon * w / w.sum()


def balanced_split(hierarchy: Hierarchy, epsilon: float, *, sensitivity: float) -> np.ndarray:
    """The split of epsilon over the levels (cells first) that makes the worst level's least-squares error as
    small as it can be (minimax), each level's noise scale being ``sensitivity`` / its share (the histogram
    mechanism: 2m under replace-one). Errors: :func:`level_errors`' root mean square over each level's nodes.

    Solved as: minimise t subject to every level's error <= t and the shares adding up to epsilon (SLSQP; the
    exact errors are smooth in the shares), shares kept >= epsilon/10^4. The worst error need not be convex in
    the shares (two cells under a total: the even split is a local minimum, the global one measures the total
    with almost nothing and reads it off the cells' sum), so the search starts from the even split and from each
    level starved in turn, and keeps the best. When each level's error falls mainly with its own share (groups
    with many members, as PSEO's trees) the optimum equalises the levels' errors and is close to the even split
    (docs/benchmarks.md)."""
    hierarchy = _check_hierarchy(hierarchy)
    from scipy import optimize

    epsilon = check_epsilon(epsilon)
    sensitivity = check_positive(sensitivity, "sensitivity")
    levels = hierarchy.levels
    floor = 1e-4 * epsilon

    def errors(shares: np.ndarray) -> np.ndarray:
        return np.array(level_errors(hierarchy, list(sensitivity / np.maximum(shares, floor))).least_squares)

    starts = [np.full(levels, epsilon / levels)]
    for starved in range(levels if levels > 1 else 0):
        start = np.full(levels, (epsilon - 0.01 * epsilon) / (levels - 1))
        start[starved] = 0.01 * epsilon
        starts.append(start)
    best, best_worst = starts[0], errors(starts[0]).max()
    for start in starts:
        found = optimize.minimize(
            lambda v: v[-1],
            np.append(start, errors(start).max()),
            method="SLSQP",
            constraints=[
                {"type": "eq", "fun": lambda v: v[:-1].sum() - epsilon},
                {"type": "ineq", "fun": lambda v: v[-1] - errors(v[:-1])},
            ],
            bounds=[(floor, epsilon)] * levels + [(0.0, None)],
            options={"ftol": 1e-12, "maxiter": 500},
        )
        shares = np.clip(found.x[:-1], floor, epsilon)
        shares = epsilon * shares / shares.sum()
        worst = errors(shares).max()
        if worst < best_worst:
            best, best_worst = shares, worst
    return best


def _level_variances(variances: Any, levels: int) -> np.ndarray:
    v = as_finite_array(variances, "noise variances of the levels")
    if v.size != levels or np.any(v <= 0):
        raise DPInputError(f"need {levels} positive noise variances, one per level (cells first)")
    return v


# ---------------------------------------------------------------------------------------------
# Weighted least squares over the tree
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class LeastSquares:
    """The GLS estimates of every level (``estimates[l]``: (..., nodes, bins), real, unbiased, consistent: a
    node is the sum of its children) and, per node, the variance of each bin's estimate (``variance[l]``:
    (nodes,), the same for every bin) and of its subtree's estimate (``subtree_variance[l]``: V of the up pass,
    the weights of the non-negative projection)."""

    estimates: tuple[np.ndarray, ...]
    variance: tuple[np.ndarray, ...]
    subtree_variance: tuple[np.ndarray, ...]

    @property
    def sd(self) -> tuple[np.ndarray, ...]:
        """Standard deviation of each node's bin estimates (what the Census GLS product publishes)."""
        return tuple(np.sqrt(v) for v in self.variance)


def _measurements(hierarchy: Hierarchy, noisy: Sequence[Any]) -> list[np.ndarray]:
    if len(noisy) != hierarchy.levels:
        raise DPInputError(f"need the noisy counts of {hierarchy.levels} levels, got {len(noisy)}")
    out = []
    for level, y in enumerate(noisy):
        arr = np.asarray(y, dtype=float)
        if arr.ndim < 2 or arr.shape[-2] != hierarchy.sizes[level]:
            raise DPInputError(
                f"level {level}'s counts must have shape (..., {hierarchy.sizes[level]} nodes, bins), got {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            raise DPInputError(f"level {level}'s counts must be finite numbers")
        out.append(arr)
    shape = out[0].shape[:-2] + out[0].shape[-1:]
    if any(a.shape[:-2] + a.shape[-1:] != shape for a in out):
        raise DPInputError("every level needs the same bins (and the same leading draws)")
    return out


def _variances_up(hierarchy: Hierarchy, sigma2: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """V (subtree variance) per level and S (sum of the children's V) per level above the cells."""
    v_up = [np.full(hierarchy.sizes[0], sigma2[0])]
    s_children = [np.empty(0)]
    for level in range(1, hierarchy.levels):
        s = hierarchy.sum_children(v_up[-1], level)
        s_children.append(s)
        v_up.append(1.0 / (1.0 / sigma2[level] + 1.0 / s))
    return v_up, s_children


def _variances_down(hierarchy: Hierarchy, v_up: list[np.ndarray], s_children: list[np.ndarray]) -> list[np.ndarray]:
    p = [np.empty(0)] * hierarchy.levels
    p[-1] = v_up[-1]
    for level in range(hierarchy.levels - 2, -1, -1):
        parent = hierarchy.parents[level]
        share = v_up[level] / s_children[level + 1][parent]
        p[level] = v_up[level] - v_up[level] * share + share**2 * p[level + 1][parent]
    return p


def least_squares(hierarchy: Hierarchy, noisy: Sequence[Any], variances: Any) -> LeastSquares:
    """The GLS estimate of every node and bin from every level's noisy histograms (module docstring: the two
    passes and their proof).

    ``noisy[l]``: level l's measured counts, (..., nodes, bins) (leading axes: independent draws, for
    simulation); ``variances[l]``: the variance of level l's noise on one count (public: from the scale,
    :func:`discrete_laplace_variance`). Post-processing of published numbers."""
    hierarchy = _check_hierarchy(hierarchy)
    y = _measurements(hierarchy, noisy)
    sigma2 = _level_variances(variances, hierarchy.levels)
    v_up, s_children = _variances_up(hierarchy, sigma2)
    z = [y[0]]
    sums = [np.empty(0)]
    for level in range(1, hierarchy.levels):
        s = hierarchy.sum_children(z[-1], level)
        sums.append(s)
        w_own = v_up[level] / sigma2[level]
        w_kids = v_up[level] / s_children[level]
        z.append(w_own[:, None] * y[level] + w_kids[:, None] * s)
    x = [np.empty(0)] * hierarchy.levels
    x[-1] = z[-1]
    for level in range(hierarchy.levels - 2, -1, -1):
        parent = hierarchy.parents[level]
        share = (v_up[level] / s_children[level + 1][parent])[:, None]
        gap = x[level + 1] - sums[level + 1]
        x[level] = z[level] + share * np.take(gap, parent, axis=-2)
    p = _variances_down(hierarchy, v_up, s_children)
    return LeastSquares(tuple(x), tuple(p), tuple(v_up))


# ---------------------------------------------------------------------------------------------
# Non-negative integers that add up
# ---------------------------------------------------------------------------------------------


def _within_family(hierarchy: Hierarchy, level: int, key: np.ndarray) -> np.ndarray:
    """Order of the children of ``level`` + 1's nodes along the last axis: by family (parent), then by ``key``
    ascending within a family; families occupy the positions of ``family_starts``."""
    family = np.broadcast_to(hierarchy.parents[level], key.shape)
    return np.lexsort((key, family), axis=-1)


def _family_offsets(hierarchy: Hierarchy, level: int, cum: np.ndarray) -> np.ndarray:
    """Per position along the last axis (children sorted by family), the inclusive cumulative sum of ``cum``'s
    source up to the end of the previous family: subtracting it restarts the sum at every family."""
    starts = hierarchy.family_starts[level]
    before = np.where(starts > 0, np.take(cum, np.maximum(starts - 1, 0), axis=-1), 0.0)
    return np.repeat(before, hierarchy.fanouts[level], axis=-1)


def _project_families(hierarchy: Hierarchy, level: int, x: np.ndarray, weight: np.ndarray, total: np.ndarray):
    """Children of ``level`` + 1's nodes: argmin sum (c - x)^2 / weight with c >= 0 and family sums ``total``.

    ``x``: (..., children) with children along the last axis; ``total``: (..., parents), >= 0. Returns
    max(0, x + weight tau), tau per family: f(tau) = sum max(0, x + weight tau) increases piecewise linearly
    through the breakpoints b = -x/weight; sorted ascending within a family, the children positive at the
    solution are the first k, k = #{breakpoints with f(b) < total}, and tau = (total - sum_k x)/sum_k weight."""
    breaks = -x / weight
    order = _within_family(hierarchy, level, breaks)
    b = np.take_along_axis(breaks, order, axis=-1)
    a = np.take_along_axis(x, order, axis=-1)
    w = weight[order]
    cum_a, cum_w = np.cumsum(a, axis=-1), np.cumsum(w, axis=-1)
    inc_a = cum_a - _family_offsets(hierarchy, level, cum_a)
    inc_w = cum_w - _family_offsets(hierarchy, level, cum_w)
    # f(b_k) = sum over the children before k (those already positive at tau = b_k) of a + w b_k
    f_at_break = (inc_a - a) + (inc_w - w) * b
    p = np.repeat(total, hierarchy.fanouts[level], axis=-1)
    below = (f_at_break < p).astype(np.int64)
    active = np.add.reduceat(below, hierarchy.family_starts[level], axis=-1)  # children positive at the solution
    last = hierarchy.family_starts[level] + np.maximum(active, 1) - 1
    a_sum = np.take_along_axis(inc_a, last, axis=-1)
    w_sum = np.take_along_axis(inc_w, last, axis=-1)
    tau = np.where(active > 0, (total - a_sum) / w_sum, 0.0)
    positive = np.take(active > 0, hierarchy.parents[level], axis=-1)  # a family whose total is 0 stays 0
    return np.where(positive, np.maximum(0.0, x + weight * np.take(tau, hierarchy.parents[level], axis=-1)), 0.0)


def _round_families(hierarchy: Hierarchy, level: int, x: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Controlled rounding of each family to integers with the family sums ``total`` (largest remainders)."""
    fam = hierarchy.parents[level]
    base = np.floor(x + _INTEGER_TOLERANCE)
    frac = x - base
    short = total - np.add.reduceat(
        np.take(base, hierarchy.child_order[level], axis=-1), hierarchy.family_starts[level], axis=-1
    )
    short_child = np.take(short, fam, axis=-1)
    # rank of each child in its family by fraction, largest first (ties: lower index first)
    order = _within_family(hierarchy, level, -frac)
    rank = np.empty_like(order)
    positions = np.arange(order.shape[-1]) - np.repeat(hierarchy.family_starts[level], hierarchy.fanouts[level])
    np.put_along_axis(rank, order, np.broadcast_to(positions, order.shape), axis=-1)
    up = rank < short_child
    # a float sum a hair above the total gives short = -1: take one from the smallest fractions among counts >= 1
    rank_down = np.empty_like(order)
    order_down = _within_family(hierarchy, level, np.where(base >= 1, frac, np.inf))
    np.put_along_axis(rank_down, order_down, np.broadcast_to(positions, order.shape), axis=-1)
    down = rank_down < -short_child
    return (base + up - down).astype(np.int64)


def nonnegative_integer_counts(hierarchy: Hierarchy, estimates: Sequence[Any], subtree_variance: Any) -> tuple:
    """Non-negative integer counts, every node the exact sum of its children in every bin (module docstring:
    the TopDown steps and why they add up).

    ``estimates``: :attr:`LeastSquares.estimates` ((..., nodes, bins) per level); ``subtree_variance``:
    :attr:`LeastSquares.subtree_variance` (the weights of each family's projection). Returns one int64 array
    per level, cells first, of the estimates' shapes."""
    hierarchy = _check_hierarchy(hierarchy)
    x = _measurements(hierarchy, estimates)
    weights = [np.asarray(v, dtype=float) for v in subtree_variance]
    if len(weights) != hierarchy.levels or any(
        w.shape != (n,) or np.any(w <= 0) for w, n in zip(weights, hierarchy.sizes, strict=True)
    ):
        raise DPInputError("subtree variances must be one positive number per node of every level")
    out: list[np.ndarray] = [np.empty(0, dtype=np.int64)] * hierarchy.levels
    out[-1] = np.rint(np.maximum(x[-1], 0.0)).astype(np.int64)
    for level in range(hierarchy.levels - 2, -1, -1):
        children = np.moveaxis(x[level], -2, -1)  # (..., bins, children)
        total = np.moveaxis(out[level + 1], -2, -1).astype(float)
        projected = _project_families(hierarchy, level, children, weights[level], total)
        out[level] = np.moveaxis(_round_families(hierarchy, level, projected, total), -1, -2)
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Both steps, the percentiles' intervals
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class ConsistentHistograms:
    """A hierarchy's histograms after consistency: ``counts[l]`` the published non-negative integers (they add
    up), ``estimates[l]`` the unbiased GLS estimates and ``sd[l]`` (per node) the standard deviation of each of
    its bins' estimates, ``scales[l]`` the measured noise scales (public)."""

    hierarchy: Hierarchy
    counts: tuple[np.ndarray, ...]
    estimates: tuple[np.ndarray, ...]
    sd: tuple[np.ndarray, ...]
    scales: tuple[float, ...]

    @property
    def variance(self) -> tuple[np.ndarray, ...]:
        return tuple(s**2 for s in self.sd)


def make_consistent(hierarchy: Hierarchy, noisy: Sequence[Any], scales: Sequence[float]) -> ConsistentHistograms:
    """Post-process every level's noisy histograms (``noisy[l]``, (..., nodes, bins), discrete Laplace of
    ``scales[l]`` on every count) into consistent non-negative integers, with the GLS estimates beside them."""
    hierarchy = _check_hierarchy(hierarchy)
    if len(scales) != hierarchy.levels:
        raise DPInputError(f"need one noise scale per level ({hierarchy.levels}), got {len(scales)}")
    sc = tuple(check_positive(s, "noise scale") for s in scales)
    fit = least_squares(hierarchy, noisy, [discrete_laplace_variance(s) for s in sc])
    counts = nonnegative_integer_counts(hierarchy, fit.estimates, fit.subtree_variance)
    return ConsistentHistograms(hierarchy, counts, fit.estimates, fit.sd, sc)


def percentile_intervals(
    estimates: Any,
    variance: Any,
    edges: Any,
    q: Any = (50,),
    *,
    level: float = intervals_lib.DEFAULT_LEVEL,
    n: Any = None,
    support: Sequence[float] = (0.0, math.inf),
    values: Any = None,
) -> intervals_lib.PercentileInterval:
    """Intervals for the true percentiles of nodes from their GLS histograms (module docstring: the tests, their
    variances, the normal quantile; measured coverage in docs/benchmarks.md).

    ``estimates``: (nodes, bins) GLS estimates of one level; ``variance``: (nodes,) each bin estimate's variance
    (:attr:`LeastSquares.variance`); ``n``: the nodes' sizes when public (else estimated, as in
    :func:`dpcore.intervals.percentile_interval`); ``values``: the published percentiles (nodes, len(q)), read
    off the consistent counts: each interval is widened to the bin that holds its value."""
    try:
        est = np.asarray(estimates, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"estimates must be numbers, one histogram per node: {exc}") from None
    if est.ndim not in (1, 2) or est.shape[-1] < 1:
        raise DPInputError(
            f"estimates must be one histogram (bins) or one per node (nodes, bins), got shape {est.shape}"
        )
    rows = 1 if est.ndim == 1 else est.shape[0]
    var = np.atleast_1d(np.asarray(variance, dtype=float))
    if var.shape != (rows,) or not np.all(np.isfinite(var)) or np.any(var < 0):
        raise DPInputError(f"variance must be one non-negative number per node ({rows})")
    lev = check_probability(level, "level")
    z = float(special.ndtri(0.5 + 0.5 * lev))

    def half_widths(lam: np.ndarray) -> np.ndarray:
        m = lam.size
        j = np.arange(1, m + 1)
        return z * np.sqrt(var[:, None] * (j * (1.0 - lam) ** 2 + (m - j) * lam**2)[None, :])

    res = intervals_lib.percentile_interval_from_estimates(
        est,
        edges,
        q,
        half_widths,
        level=lev,
        n=n,
        support=support,
        method=(
            "one-sided tests on the least-squares estimates of the cumulative counts, normal quantile of their "
            "variance, mapped to bin edges"
        ),
    )
    return res if values is None else widen_to_values(res, edges, values)


def widen_to_values(
    interval: intervals_lib.PercentileInterval, edges: Any, values: Any
) -> intervals_lib.PercentileInterval:
    """``interval`` widened to the bin that holds each published value (values: the interval's shape): only
    ever wider, so its coverage is kept, and no published percentile lies outside its own interval."""
    e = percentiles_lib.check_edges(edges)
    m = e.size - 1
    try:
        vals = np.asarray(values, dtype=float).reshape(np.shape(interval.lower))
    except ValueError:
        raise DPInputError(
            f"values must be one published percentile per node and level {np.shape(interval.lower)}"
        ) from None
    held = np.clip(np.searchsorted(e, vals, side="right"), 1, m)  # the 1-based bin that holds each value
    j_lo, j_hi = np.minimum(interval.bin_lower, held), np.maximum(interval.bin_upper, held)
    return intervals_lib.PercentileInterval(
        np.where(j_lo == 1, np.minimum(interval.lower, e[0]), e[j_lo - 1]),
        np.where(j_hi == m, np.maximum(interval.upper, e[-1]), e[np.minimum(j_hi, m)]),
        interval.q,
        interval.level,
        interval.method + "; widened to the bin of the published value",
        interval.caveat,
        j_lo,
        j_hi,
        interval.n_public,
    )


# ---------------------------------------------------------------------------------------------
# What margins cost and give
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LevelErrors:
    """Per level (cells first), the root mean square error of one bin count: ``measured`` (the level's own
    noisy counts, as if released on their own at the level's share of epsilon) and ``least_squares`` (the GLS
    estimate after consistency; the integer counts are within 1.05x of it, measured in docs/benchmarks.md)."""

    measured: tuple[float, ...]
    least_squares: tuple[float, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"measured": list(self.measured), "least_squares": list(self.least_squares)}


def level_errors(hierarchy: Hierarchy, scales: Sequence[float]) -> LevelErrors:
    """The error of every level's bins with and without consistency, exactly (no simulation): sigma_l and the
    root mean square over the level's nodes of sqrt(P_v) (module docstring)."""
    hierarchy = _check_hierarchy(hierarchy)
    if len(scales) != hierarchy.levels:
        raise DPInputError(f"need one noise scale per level ({hierarchy.levels}), got {len(scales)}")
    sigma2 = np.array([discrete_laplace_variance(s) for s in scales])
    v_up, s_children = _variances_up(hierarchy, sigma2)
    p = _variances_down(hierarchy, v_up, s_children)
    return LevelErrors(tuple(float(math.sqrt(v)) for v in sigma2), tuple(float(math.sqrt(np.mean(pl))) for pl in p))


@dataclass(frozen=True)
class ConsistencySimulation:
    """Repeated simulated releases of one hierarchy (planning and measurement, never a release).

    Per level (cells first): ``rmse_measured``, ``rmse_least_squares``, ``rmse_consistent`` (the published
    integers) over every node, bin and draw; ``negative_measured``: the share of measured bins below 0;
    ``sum_violations`` and ``negative_consistent``: (node, bin, draw) triples where a consistent count is not the
    sum of its children or is negative (0 by construction). Per percentile q and level, over every (node, draw):
    ``coverage[q]``, the share of published intervals (widened to the published value) that hold the true
    percentile, ``coverage_least_squares[q]`` the same for the intervals computed from the GLS estimates alone,
    ``widened[q]`` the share that the published value widened; ``abs_error_measured[q]`` /
    ``abs_error_consistent[q]``: the mean absolute error of the percentile read off the measured / the consistent
    histogram (against the percentile read off the true histogram)."""

    draws: int
    scales: tuple[float, ...]
    q: tuple[float, ...]
    rmse_measured: tuple[float, ...]
    rmse_least_squares: tuple[float, ...]
    rmse_consistent: tuple[float, ...]
    negative_measured: tuple[float, ...]
    negative_consistent: int
    sum_violations: int
    coverage: dict[float, tuple[float, ...]]
    coverage_least_squares: dict[float, tuple[float, ...]]
    widened: dict[float, tuple[float, ...]]
    abs_error_measured: dict[float, tuple[float, ...]]
    abs_error_consistent: dict[float, tuple[float, ...]]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for k in self.__dataclass_fields__:
            v = getattr(self, k)
            out[k] = {str(q): list(t) for q, t in v.items()} if isinstance(v, dict) else v
            out[k] = list(v) if isinstance(v, tuple) else out[k]
        return out


def _true_bins(counts: np.ndarray, q: float, n: np.ndarray) -> np.ndarray:
    """The 1-based bin J* of the true q-th percentile x_(r), r = ceil(q n / 100): the first j with C_j >= r.
    An interval holds x_(r), wherever it lies in its bin, exactly when J_lo <= J* <= J_hi."""
    r = np.maximum(np.ceil(np.round(q * n / 100.0, 9)), 1.0)
    return (np.cumsum(counts, axis=-1) >= r[..., None]).argmax(axis=-1) + 1


class _Tally:
    """Running sums of :func:`simulate` (per level; per percentile and level)."""

    def __init__(self, levels: int, qa: tuple[float, ...]) -> None:
        self.sq = np.zeros((3, levels))
        self.negative_measured = np.zeros(levels)
        self.negative, self.violations = 0, 0
        self.per_q = {
            name: {qi: np.zeros(levels) for qi in qa}
            for name in ("coverage", "coverage_least_squares", "widened", "abs_error_measured", "abs_error_consistent")
        }


def _tally_level(
    tally: _Tally,
    lev: int,
    truth: np.ndarray,
    noisy: np.ndarray,
    result: ConsistentHistograms,
    targets: dict[str, Any],
) -> None:
    """Add one chunk of draws of level ``lev`` to ``tally``."""
    e, qa, r = targets["edges"], targets["q"], noisy.shape[0]
    tally.sq[:, lev] += [
        np.sum((noisy - truth) ** 2),
        np.sum((result.estimates[lev] - truth) ** 2),
        np.sum((result.counts[lev] - truth) ** 2),
    ]
    tally.negative_measured[lev] += np.count_nonzero(noisy < 0)
    tally.negative += int(np.count_nonzero(result.counts[lev] < 0))
    if lev > 0:
        children = result.hierarchy.sum_children(result.counts[lev - 1], lev)
        tally.violations += int(np.count_nonzero(children != result.counts[lev]))
    rows = r * truth.shape[0]
    values = percentiles_lib.percentiles_from_histogram(result.counts[lev].reshape(rows, -1).astype(float), e, qa)
    raw_values = percentiles_lib.percentiles_from_histogram(noisy.reshape(rows, -1), e, qa)
    own = percentile_intervals(
        result.estimates[lev].reshape(rows, -1),
        np.tile(result.variance[lev], r),
        e,
        qa,
        level=targets["level"],
        n=None if targets["sizes"] is None else np.tile(targets["sizes"][lev], r),
    )
    published = widen_to_values(own, e, values)
    for i, qi in enumerate(qa):
        star = np.tile(targets["bins"][qi][lev], r)
        per_q, true_p = tally.per_q, np.tile(targets["values"][qi][lev], r)
        per_q["coverage"][qi][lev] += np.count_nonzero(
            (published.bin_lower[:, i] <= star) & (star <= published.bin_upper[:, i])
        )
        per_q["coverage_least_squares"][qi][lev] += np.count_nonzero(
            (own.bin_lower[:, i] <= star) & (star <= own.bin_upper[:, i])
        )
        per_q["widened"][qi][lev] += np.count_nonzero(
            (published.bin_lower[:, i] != own.bin_lower[:, i]) | (published.bin_upper[:, i] != own.bin_upper[:, i])
        )
        per_q["abs_error_measured"][qi][lev] += np.sum(np.abs(raw_values[:, i] - true_p))
        per_q["abs_error_consistent"][qi][lev] += np.sum(np.abs(values[:, i] - true_p))


def simulate(
    hierarchy: Hierarchy,
    confidential_cells: Any,
    scales: Sequence[float],
    *,
    n_draws: int,
    rng: Any = None,
    edges: Any = None,
    q: Any = (50,),
    level: float = intervals_lib.DEFAULT_LEVEL,
    n_public: bool = False,
    chunk_counts: int = 2_000_000,
) -> ConsistencySimulation:
    """``n_draws`` simulated releases of every level of the true cell histograms ``confidential_cells`` ((cells,
    bins) counts): measured with discrete Laplace noise of ``scales[l]``, made consistent, percentiles read off
    (``edges``: default PSEO's) with their intervals (``n_public``: the nodes' sizes known). Numpy, vectorised
    over draws in chunks of about ``chunk_counts`` noisy counts."""
    hierarchy = _check_hierarchy(hierarchy)
    cells = np.asarray(confidential_cells)
    if cells.ndim != 2 or cells.shape[0] != hierarchy.sizes[0] or np.any(cells < 0) or np.any(cells != np.round(cells)):
        raise DPInputError(f"the true cell counts must be non-negative integers, ({hierarchy.sizes[0]} cells, bins)")
    if len(scales) != hierarchy.levels:
        raise DPInputError(f"need one noise scale per level ({hierarchy.levels}), got {len(scales)}")
    sc = [check_positive(s, "noise scale") for s in scales]
    n_draws = check_int(n_draws, "number of draws", minimum=1)
    e = percentiles_lib.check_edges(percentiles_lib.PSEO_BIN_EDGES if edges is None else edges)
    if e.size - 1 != cells.shape[1]:
        raise DPInputError(f"{cells.shape[1]} bins need {cells.shape[1] + 1} edges, got {e.size}")
    qa = tuple(float(v) for v in as_finite_array(q, "percentiles"))
    gen = as_generator(rng)
    truth = hierarchy.aggregate(cells.astype(float))
    sizes = [t.sum(axis=-1) for t in truth]
    targets = {
        "edges": e,
        "q": qa,
        "level": level,
        "sizes": sizes if n_public else None,
        "bins": {qi: [_true_bins(t, qi, n) for t, n in zip(truth, sizes, strict=True)] for qi in qa},
        "values": {qi: [percentiles_lib.percentiles_from_histogram(t, e, [qi])[:, 0] for t in truth] for qi in qa},
    }
    tally = _Tally(hierarchy.levels, qa)
    step = max(1, min(n_draws, chunk_counts // (sum(hierarchy.sizes) * cells.shape[1])))
    done = 0
    while done < n_draws:
        r = min(step, n_draws - done)
        noisy = [
            t[None] + noise.sample_two_sided_geometric(1.0 / s, (r, *t.shape), rng=gen)
            for t, s in zip(truth, sc, strict=True)
        ]
        result = make_consistent(hierarchy, noisy, sc)
        for lev in range(hierarchy.levels):
            _tally_level(tally, lev, truth[lev], noisy[lev], result, targets)
        done += r
    bins_total = np.array([n * cells.shape[1] * n_draws for n in hierarchy.sizes], dtype=float)
    nodes_total = np.array([n * n_draws for n in hierarchy.sizes], dtype=float)
    rmse = np.sqrt(tally.sq / bins_total[None, :])
    shares = {
        name: {qi: tuple((v / nodes_total).tolist()) for qi, v in per.items()} for name, per in tally.per_q.items()
    }
    return ConsistencySimulation(
        n_draws,
        tuple(sc),
        qa,
        tuple(rmse[0].tolist()),
        tuple(rmse[1].tolist()),
        tuple(rmse[2].tolist()),
        tuple((tally.negative_measured / bins_total).tolist()),
        tally.negative,
        tally.violations,
        **shares,
    )
