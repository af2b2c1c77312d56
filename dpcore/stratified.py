"""Stratified differentially private means and the parity error across demographic groups.

Implements Rosenblatt, Stoyanovich & Musco, "A Simple and Practical Method for Reducing the
Disparate Impact of Differential Privacy" (AAAI 2024, arXiv:2312.11712), digest in
``../shared/papers/stratification_spec.md`` (cited below as "digest §x").

What is in here
---------------
* :func:`clipped_laplace_mean`: the clipped Laplace mean (the global Laplace method; digest
  §2.3, paper Eq. 2) on all records.
* :func:`stratified_mean`: one clipped Laplace mean per group with the group's own size (paper
  Eq. 3) and the stratified combination ``sum_i w_i p_i`` (paper Eq. 4/9) with **public** weights
  (the group proportions, given weights, or PubStrat weights from a public hold-out sample,
  :func:`public_weights`).
* :func:`parity_error` (Definition 11, literally) and :func:`relative_errors`.
* Bounds on ``sum_i log|G_i|`` (Proposition 9 / Lemma 12, Theorem 10, the informal lower bound).
* Privacy accounting (:func:`privacy_accounting`).

CoinPress (zCDP) and its stratified variants live in :mod:`dpcore.coinpress`. The paper's
experiments -- Figure 1 curves, the New York RACE example and a symmetric-Dirichlet fit, the
Gaussian-mixture generator and Table 3 presets, vectorised Monte Carlo of many releases
(``simulate_laplace_releases``), the light synthesizer and the page's views -- live in
:mod:`dpcore.views.stratified`.

Neighbouring relation and what is public
----------------------------------------
*Replace one person's value, keeping their group* (bounded DP). Group labels and group sizes
``|G_i|`` are **public** (the paper's public-weights assumption, digest §1.1-1.2: every
sensitivity there is (range width)/|G_i| with |G_i| known). The clip range (or the bound R) and the
combination weights are public and chosen without looking at the private values. If a person's
*group* could also change, one replacement touches two groups and the same release is
``2 epsilon``-DP (parallel composition no longer covers it); :func:`privacy_accounting` says so.

Choices where the paper is inconsistent (each proved by a test in tests/test_stratified.py)
-----------------------------------------------------------------------------------------
1. Clip interval (digest §2.2, ERRATUM?): the printed ``[R - sqrt(log n/gamma), R + ...]`` is read
   as the symmetric ``[-T, T]`` with ``T = R + sqrt((ln n)/gamma)``, and inside group i
   ``T_i = R + sqrt((ln |G_i|)/gamma)`` (what the proof of Prop. 9 and the noise scale use).
   Noise: ``Lap(2 T_i / (|G_i| epsilon))``. A public interval ``(low, high)`` may be given instead
   (real incomes are not centred at 0); then the sensitivity is ``(high - low)/|G_i|``.
2. Theorem 10 maps ``|G_i| = g_i * n`` (appendix), not ``g_i / n`` (main text), and the bound is
   an *equality*: ``E[sum log|G_i|] = k (psi(alpha) - psi(k alpha) + ln n)``.
3. Definition 11 is a *sum* over strata (the prose says "average"): it grows with k.
4. The generator's ``|G_i| = n/k`` contradicts "using the weights of v": we use round(n v_i),
   every size >= 1, the rounding surplus/deficit taken from the largest group.
5. The NY example's "~80 %" does not reproduce: :func:`ny_race_example` computes ~72 % at
   alpha = 0.13 and a symmetric-Dirichlet MLE on the vector gives alpha ~ 0.26.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import noise
from .lazy import special
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
    check_bounds,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "clipped_cents",
    "mean_sum_sensitivity_cents",
    "MAX_GROUPS",
    "DEFAULT_GAMMA",
    "GroupIndex",
    "group_index",
    "clip_thresholds",
    "LaplaceMeanRelease",
    "clipped_laplace_mean",
    "StratifiedMeanRelease",
    "stratified_mean",
    "public_weights",
    "split_public_private",
    "stratified_noise_variance",
    "global_noise_variance",
    "ParityResult",
    "parity_error",
    "relative_errors",
    "PrivacyAccounting",
    "privacy_accounting",
    "sum_log_worst_case",
    "sum_log_expected_dirichlet",
    "sum_log_best_case",
    "sum_log_lower_bound",
]

#: Largest number of groups (levels) accepted: beyond this almost every group is tiny and the
#: per-group releases are noise; combine levels first.
MAX_GROUPS = 100
#: Failure-probability constant gamma of the paper's clip threshold (digest §2.1), gamma in (0, 1).
DEFAULT_GAMMA = 0.1
#: Relative tolerance for "weights sum to one".
WEIGHT_TOL = 1e-6


def readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


# ---------------------------------------------------------------------------------------------
# Groups
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GroupIndex:
    """Sorted group labels, the integer code of every record and the size of every group."""

    labels: tuple
    codes: np.ndarray
    counts: np.ndarray

    @property
    def k(self) -> int:
        return len(self.labels)


def _label_array(groups: Any, name: str = "groups") -> np.ndarray:
    arr = np.asarray(groups)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise DPInputError(
            f"{name} must be one label per record (1-D), got shape {arr.shape}; "
            "combine several grouping columns into one label first"
        )
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise DPInputError(
            f"{name} has {int(np.isnan(arr).sum())} missing labels; drop those records or give them their own group"
        )
    if arr.dtype.kind == "O":
        kinds = set(map(type, arr.tolist()))
        missing = 0
        if type(None) in kinds or float in kinds or np.float64 in kinds:
            missing = sum(1 for v in arr.tolist() if v is None or (isinstance(v, float) and math.isnan(v)))
        if missing:
            raise DPInputError(f"{name} has {missing} missing labels; drop those records or give them their own group")
        if kinds <= {str}:
            arr = arr.astype(str)  # fixed-width text sorts much faster than Python objects
        elif len(kinds) > 1 and not all(issubclass(t, (int, float, np.integer, np.floating)) for t in kinds):
            arr = arr.astype(str)
    return arr


def group_index(groups: Any, *, levels: Sequence | None = None, max_groups: int = MAX_GROUPS) -> GroupIndex:
    """Sort the labels, code every record, count each group.

    ``levels`` (public) lists every group that exists, so a group with no records is kept (it
    gets a data-independent fallback release, see :func:`stratified_mean`). More than
    ``max_groups`` groups raise :class:`DPInputError`.
    """
    arr = _label_array(groups)
    max_groups = check_int(max_groups, "max_groups", minimum=1)
    try:
        observed = np.unique(arr)
    except TypeError:
        raise DPInputError("group labels must all be of one kind (all numbers or all text)") from None
    if levels is not None:
        lev = _label_array(levels, "levels")
        numeric = set("biuf")
        if observed.size and (lev.dtype.kind in numeric) != (observed.dtype.kind in numeric):
            raise DPInputError("levels must be labels of the same kind as the groups (numbers or text)")
        try:
            labels_arr = np.unique(np.concatenate([lev, observed]))
        except (TypeError, ValueError):
            raise DPInputError("levels must be labels of the same kind as the groups") from None
    else:
        labels_arr = observed
    if labels_arr.size > max_groups:
        raise DPInputError(
            f"the grouping has {labels_arr.size} levels, more than the cap of {max_groups}: with that many "
            "groups most of them are tiny and their private means are mostly noise. Combine levels "
            "(e.g. age bands instead of single years) or choose fewer grouping columns."
        )
    if labels_arr.size == 0:
        raise DPInputError("there are no groups (no records and no levels given)")
    codes = np.searchsorted(labels_arr, arr)
    counts = np.bincount(codes, minlength=labels_arr.size).astype(np.int64)
    labels = tuple(v.item() if isinstance(v, np.generic) else v for v in labels_arr)
    return GroupIndex(labels=labels, codes=readonly(codes.astype(np.int64)), counts=readonly(counts))


# ---------------------------------------------------------------------------------------------
# Clipping
# ---------------------------------------------------------------------------------------------


def _check_gamma(gamma: Any) -> float:
    return check_probability(gamma, "gamma (the clip failure-probability constant)")


def clip_thresholds(clip_range: Any, sizes: Any, *, gamma: float = DEFAULT_GAMMA) -> tuple[np.ndarray, np.ndarray]:
    """Public clip interval ``[low_i, high_i]`` for groups of the given (public) sizes.

    * ``clip_range = (low, high)``: the same public interval for every group.
    * ``clip_range = R`` (a number > 0, the paper's bound ``|mu_i| <= R``): the symmetric interval
      ``[-T_i, T_i]`` with ``T_i = R + sqrt(ln(|G_i|) / gamma)`` (digest §2.2/§2.4, our reading of
      the printed ``[R - ., R + .]``; a group of size 0 or 1 gets ``T = R``).
    """
    sizes = np.asarray(sizes, dtype=float)
    if isinstance(clip_range, (tuple, list, np.ndarray)) and np.size(clip_range) == 2:
        try:
            pair = np.asarray(clip_range, dtype=float).ravel()
        except (TypeError, ValueError):
            raise DPInputError("clip_range must be two numbers (low, high)") from None
        lo = check_finite(pair[0], "clip_range low")
        hi = check_finite(pair[1], "clip_range high")
        if not lo < hi:
            raise DPInputError(f"the clip range must have low < high, got ({lo:g}, {hi:g})")
        return np.full(sizes.shape, lo), np.full(sizes.shape, hi)
    if isinstance(clip_range, (tuple, list, np.ndarray)):
        raise DPInputError("clip_range must be a pair (low, high) or one number R > 0 (the paper's |mu| <= R)")
    R = check_positive(clip_range, "clip_range R")
    gamma = _check_gamma(gamma)
    T = R + np.sqrt(np.log(np.maximum(sizes, 1.0)) / gamma)
    return -T, T


# ---------------------------------------------------------------------------------------------
# Global clipped Laplace mean
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LaplaceMeanRelease:
    """One released clipped Laplace mean (the value and everything that produced it)."""

    value: float
    n: int
    epsilon: float
    clip_low: float
    clip_high: float
    sensitivity: float  # (high - low) / n
    noise_scale: float  # Laplace b = sensitivity / epsilon (noise sd = sqrt(2) b)
    mechanism: str = "clipped Laplace mean (paper Eq. 2)"

    @property
    def noise_sd(self) -> float:
        return math.sqrt(2.0) * self.noise_scale


def clipped_laplace_mean(
    values: Any, *, epsilon: float, clip_range: Any, gamma: float = DEFAULT_GAMMA, rng: Any = None
) -> LaplaceMeanRelease:
    """epsilon-DP clipped mean of all values: ``mean(clip(x)) + Lap((high - low)/(n epsilon))``.

    Paper Eq. 2 (digest §2.3). Neighbouring: replace one value, n public. ``clip_range`` is a
    public ``(low, high)`` or the paper's ``R`` (then ``[-T, T]``, ``T = R + sqrt(ln n / gamma)``).
    Values outside the interval are moved to its nearest end (so negative incomes are clipped up
    to ``low``). Needs at least 2 values.
    """
    x = as_finite_array(values, "values", min_size=2)
    epsilon = check_epsilon(epsilon)
    lo_arr, hi_arr = clip_thresholds(clip_range, np.array([x.size]), gamma=gamma)
    lo, hi = float(lo_arr[0]), float(hi_arr[0])
    sens = (hi - lo) / x.size
    b = noise.laplace_scale(epsilon, sens)
    true_clipped = float(np.clip(x, lo, hi).mean())
    value = true_clipped + float(noise.sample_laplace(b, 1, rng=as_generator(rng))[0])
    return LaplaceMeanRelease(
        value=value, n=int(x.size), epsilon=epsilon, clip_low=lo, clip_high=hi, sensitivity=sens, noise_scale=b
    )


# ---------------------------------------------------------------------------------------------
# Stratified mean
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightedGroupMeans:
    """Released means of public groups and their public-weight combination, whatever mechanism drew them
    (:class:`StratifiedMeanRelease`, :class:`dpcore.coinpress.StratifiedCoinPressRelease`): ``per_group[i]``
    belongs to ``labels[i]`` (sorted), ``counts`` are the public group sizes, ``overall = sum_i weights[i]
    per_group[i]`` with the normalised public ``weights`` (post-processing, no extra privacy cost) and
    ``weights_source`` says where the weights come from."""

    overall: float
    per_group: np.ndarray
    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    weights_source: str


@dataclass(frozen=True)
class SimulatedGroupMeans:
    """Many simulated releases of a stratified mean on one data set, whatever mechanism drew them
    (:class:`dpcore.views.stratified.LaplaceSimulation`, :class:`dpcore.coinpress.CoinPressSimulation`), so that
    the page and the sweeps read every method the same way: ``strat_groups`` (n_sims x k, columns in the sorted
    ``labels``' order), ``strat_overall`` (n_sims) = ``strat_groups @ weights``; ``true_groups`` /
    ``true_overall``, the non-private (unclipped) means the errors are measured against (planning numbers)."""

    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    true_groups: np.ndarray
    true_overall: float
    strat_groups: np.ndarray
    strat_overall: np.ndarray

    @staticmethod
    def common_fields(gi: GroupIndex, weights: np.ndarray, values: np.ndarray, strat_groups: Any) -> dict[str, Any]:
        """The fields every simulation computes alike, from the group index of observed groups (counts >= 1),
        the normalised weights, the values and the simulated group releases (n_sims x k)."""
        strat = np.asarray(strat_groups, dtype=float)
        true_groups = np.bincount(gi.codes, weights=values, minlength=gi.k) / np.maximum(gi.counts, 1)
        return {
            "labels": gi.labels,
            "counts": gi.counts,
            "weights": readonly(weights),
            "true_groups": readonly(true_groups),
            "true_overall": float(values.mean()),
            "strat_groups": readonly(strat),
            "strat_overall": readonly(strat @ weights),
        }


@dataclass(frozen=True)
class StratifiedMeanRelease(WeightedGroupMeans):
    """Released group means and their public-weight combination.

    ``per_group[i]`` belongs to ``labels[i]`` (sorted). ``overall = sum_i weights[i] per_group[i]``
    (paper Eq. 4 with public weights; post-processing, no extra privacy cost). ``counts`` are the
    (public) group sizes; ``empty[i]`` marks a group with no records, whose released value is the
    data-independent midpoint of its clip interval. ``notes`` explains any such special case.
    """

    epsilon: float
    clip_low: np.ndarray
    clip_high: np.ndarray
    sensitivity: np.ndarray
    noise_scale: np.ndarray
    empty: np.ndarray
    notes: tuple[str, ...] = field(default_factory=tuple)
    mechanism: str = "stratified clipped Laplace mean (paper Eq. 3-4)"

    @property
    def k(self) -> int:
        return len(self.labels)

    @property
    def overall_noise_sd(self) -> float:
        """Standard deviation of the noise in ``overall`` (from the public parameters only)."""
        return math.sqrt(float(np.sum(self.weights**2 * 2.0 * np.where(self.empty, 0.0, self.noise_scale) ** 2)))

    def as_dict(self) -> dict[Any, float]:
        return dict(zip(self.labels, self.per_group.tolist(), strict=True))


def resolve_weights(weights: Any, labels: tuple, counts: np.ndarray) -> tuple[np.ndarray, str]:
    k = len(labels)
    if weights is None:
        w = counts / counts.sum()
        return w, "group sizes |G_i|/n (public by assumption)"
    if isinstance(weights, Mapping):
        unknown = [lab for lab in weights if lab not in set(labels)]
        if unknown:
            raise DPInputError(f"weights are given for labels that are not groups: {unknown[:5]}")
        missing = [lab for lab in labels if lab not in weights]
        if missing:
            raise DPInputError(
                f"weights are missing for groups {missing[:5]}; give a weight (possibly 0) for every group"
            )
        raw = [weights[lab] for lab in labels]
    else:
        raw = weights
    try:
        w = np.asarray(raw, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError("weights must be numbers") from None
    if w.ndim != 1 or w.size != k:
        raise DPInputError(f"weights must have one entry per group ({k}, in sorted label order), got {w.size}")
    if not np.isfinite(w).all():
        raise DPInputError("weights contain missing or infinite values")
    if (w < 0).any():
        raise DPInputError("weights must be >= 0 (they are population shares)")
    total = float(w.sum())
    if abs(total - 1.0) > WEIGHT_TOL:
        raise DPInputError(
            f"weights must sum to 1 (they are population shares), they sum to {total:.6g}; divide them by their sum"
        )
    return w, "given (public)"


def stratified_mean(
    values: Any,
    groups: Any,
    *,
    epsilon: float,
    clip_range: Any,
    rng: Any = None,
    weights: Any = None,
    gamma: float = DEFAULT_GAMMA,
    levels: Sequence | None = None,
    max_groups: int = MAX_GROUPS,
) -> StratifiedMeanRelease:
    """epsilon-DP mean of every group plus their public-weight combination (paper Eq. 3, 4, Prop. 8).

    Group i releases ``p_i = mean(clip_i(x in G_i)) + Lap((high_i - low_i) / (|G_i| epsilon))``;
    ``overall = sum_i w_i p_i``.

    Privacy: the groups are disjoint, so all k releases together are epsilon-DP (parallel
    composition); ``overall`` is post-processing with public weights and costs nothing more.
    Neighbouring: replace one person's value inside their group; group labels and sizes are
    public (if group membership can change too, the guarantee is 2 epsilon).

    Parameters
    ----------
    values: numbers (one per record; non-numeric or missing values are rejected).
    groups: one label per record (numbers or text). Labels are sorted; ``per_group`` follows them.
    epsilon: > 0, spent once (parallel composition over groups).
    clip_range: public ``(low, high)``, or the paper's ``R > 0`` (see :func:`clip_thresholds`).
    weights: None (the group proportions ``|G_i|/n``, public by assumption), a mapping
        label -> weight, or an array in sorted-label order; weights must be >= 0 and sum to 1.
        PubStrat: pass :func:`public_weights` computed on a public hold-out sample. Weights are
        never estimated from ``values``/``groups`` except in the ``None`` case, where the sizes are
        public by assumption.
    levels: optional public list of every group label (groups with no records are then kept).

    Special cases: a group with **1 member** releases its clipped value plus ``Lap(width/epsilon)``
    (private, but mostly noise); a group with **0 members** (only possible via ``levels`` or
    ``weights``) releases the midpoint of its clip interval, a constant that uses no data and no
    budget, and is flagged in ``empty`` and ``notes``. Nothing ever divides by zero.
    """
    x = as_finite_array(values, "values", min_size=2)
    epsilon = check_epsilon(epsilon)
    lev = levels
    if isinstance(weights, Mapping):
        lev = list(weights.keys()) + (list(levels) if levels is not None else [])
    gi = group_index(groups, levels=lev, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError(f"values ({x.size}) and groups ({gi.codes.size}) must have the same length")
    counts = gi.counts
    w, source = resolve_weights(weights, gi.labels, counts)
    lo, hi = clip_thresholds(clip_range, counts, gamma=gamma)
    true_means, empty = clipped_group_means(x, gi.codes, counts, lo, hi)
    sens = np.where(empty, 0.0, (hi - lo) / np.maximum(counts, 1))
    scales = sens / epsilon
    z = noise.sample_laplace(1.0, gi.k, rng=as_generator(rng))
    est = true_means + scales * z
    notes = []
    for i, lab in enumerate(gi.labels):
        if counts[i] == 0:
            notes.append(
                f"group {lab!r} has no records: its released value is the midpoint of the clip "
                f"interval ({(lo[i] + hi[i]) / 2:g}), a constant that uses no data"
            )
        elif counts[i] == 1:
            notes.append(
                f"group {lab!r} has 1 record: its release is that record's clipped value plus "
                f"Laplace noise of scale {scales[i]:.4g} (= clip width / epsilon): mostly noise"
            )
    overall = float(np.dot(w, est))
    return StratifiedMeanRelease(
        overall=overall,
        per_group=readonly(est),
        labels=gi.labels,
        counts=readonly(counts),
        weights=readonly(w),
        weights_source=source,
        epsilon=epsilon,
        clip_low=readonly(lo),
        clip_high=readonly(hi),
        sensitivity=readonly(sens),
        noise_scale=readonly(scales),
        empty=readonly(empty),
        notes=tuple(notes),
    )


def clipped_group_means(
    x: np.ndarray, codes: np.ndarray, counts: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Non-private clipped mean of every group (midpoint of the interval for an empty group)."""
    k = counts.size
    clipped = np.clip(x, lo[codes], hi[codes])
    sums = np.bincount(codes, weights=clipped, minlength=k)
    empty = counts == 0
    means = np.where(empty, (lo + hi) / 2.0, sums / np.maximum(counts, 1))
    return means, empty


def public_weights(public_groups: Any, labels: Sequence, *, max_groups: int = MAX_GROUPS) -> np.ndarray:
    """PubStrat weights: group shares in a **public** hold-out sample, in the order of ``labels``.

    Only ``public_groups`` is read (never the private data). A label absent from the public sample
    gets weight 0 (its private estimate then does not enter the overall mean); labels in the
    public sample that are not in ``labels`` are ignored (they have no private estimate) and the
    remaining shares are renormalised to sum to one.
    """
    arr = _label_array(public_groups, "public_groups")
    if arr.size == 0:
        raise DPInputError("the public hold-out sample is empty")
    labels = list(labels)
    if len(labels) > max_groups:
        raise DPInputError(f"{len(labels)} groups exceed the cap of {max_groups}")
    vals, cnt = np.unique(arr, return_counts=True)
    lookup = {v.item() if isinstance(v, np.generic) else v: c for v, c in zip(vals, cnt, strict=True)}
    w = np.array([float(lookup.get(lab, 0)) for lab in labels])
    if w.sum() <= 0:
        raise DPInputError("no group of the private data appears in the public hold-out sample")
    return w / w.sum()


def split_public_private(
    values: Any, groups: Any, *, public_fraction: float = 0.5, rng: Any = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Shuffle and split a simulated population into disjoint private and public parts.

    Returns ``(private_values, private_groups, public_values, public_groups)``. This mirrors the
    PubStrat experiment (digest §4.4: 50/50 split); in a real release the public sample is an
    outside source (e.g. published Census shares).
    """
    x = np.asarray(values)
    if x.ndim != 1:
        raise DPInputError("values must be a one-dimensional array")
    g = _label_array(groups)
    if x.shape[0] != g.shape[0]:
        raise DPInputError("values and groups must have the same length")
    f = check_probability(public_fraction, "public_fraction")
    perm = as_generator(rng).permutation(x.shape[0])
    m = int(round(f * x.shape[0]))
    pub, priv = perm[:m], perm[m:]
    if priv.size < 2 or pub.size < 1:
        raise DPInputError("the data are too small to split into a private and a public part")
    return x[priv], g[priv], x[pub], g[pub]


def stratified_noise_variance(counts: Any, weights: Any, epsilon: float, clip_low: Any, clip_high: Any) -> float:
    """Variance of the Laplace noise in ``overall``: ``sum_i w_i^2 * 2 ((high_i-low_i)/(|G_i| eps))^2``.

    Empty groups contribute 0 (their value is a constant). With ``w_i = |G_i|/n`` this is
    ``8 sum_i T_i^2 / (n eps)^2`` for the symmetric clip, versus ``8 T^2 / (n eps)^2`` for the
    global estimator: the comparison of Prop. 9 is ``sum_i T_i^2`` vs ``T^2``.
    """
    c = np.asarray(counts, dtype=float)
    w = np.asarray(weights, dtype=float)
    width = np.asarray(clip_high, dtype=float) - np.asarray(clip_low, dtype=float)
    epsilon = check_epsilon(epsilon)
    if not (np.all(np.isfinite(c)) and np.all(c >= 0)):
        raise DPInputError("counts must be finite and non-negative")
    if not np.all(np.isfinite(w)):
        raise DPInputError("weights must be finite")
    if not (np.all(np.isfinite(width)) and np.all(width > 0)):
        raise DPInputError("each clip range must be finite with clip_low < clip_high")
    b = np.where(c > 0, width / np.maximum(c, 1) / epsilon, 0.0)
    return float(np.sum(w**2 * 2.0 * b**2))


def global_noise_variance(n: int, epsilon: float, clip_low: float, clip_high: float) -> float:
    """Variance ``2 ((high - low)/(n eps))^2`` of the global clipped Laplace mean's noise."""
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    clip_low, clip_high = check_bounds(clip_low, clip_high, lower_name="clip_low", upper_name="clip_high")
    return 2.0 * ((clip_high - clip_low) / (n * epsilon)) ** 2


# ---------------------------------------------------------------------------------------------
# Parity error (Definition 11)
# ---------------------------------------------------------------------------------------------


class ParityResult(float):
    """The parity error of one release: Definition 11's phi (a float) with its parts: ``.omega``,
    ``.overall_term``, ``.per_group``
    (the k relative errors ``|f(G_i) - M(G_i)| / |f(G_i)|``), ``.k``, ``.skipped`` (indices of
    groups skipped because their true value is 0, only with ``on_zero="skip"``)."""

    omega: float
    overall_term: float
    per_group: np.ndarray
    k: int
    skipped: tuple[int, ...]

    def __new__(
        cls, value: float, *, omega: float, overall_term: float, per_group: np.ndarray, skipped: tuple[int, ...]
    ) -> ParityResult:
        obj = super().__new__(cls, value)
        obj.omega = omega
        obj.overall_term = overall_term
        obj.per_group = per_group
        obj.k = int(per_group.size)
        obj.skipped = skipped
        return obj

    def __repr__(self) -> str:
        return f"ParityResult({float(self):.6g}, omega={self.omega:.4g}, k={self.k})"


def relative_errors(true_values: Any, estimates: Any, *, on_zero: str = "raise") -> np.ndarray:
    """``|true_i - est_i| / |true_i|`` elementwise. A true value of 0 raises (``on_zero="raise"``)
    or gives NaN in that slot (``on_zero="nan"``), never a silent infinity."""
    t = as_finite_array(true_values, "true values")
    e = as_finite_array(estimates, "estimates")
    if t.shape != e.shape:
        raise DPInputError(f"true values ({t.size}) and estimates ({e.size}) must have the same length")
    zero = t == 0
    if zero.any() and on_zero == "raise":
        raise DPInputError(
            "a true value is 0, so its relative error is undefined; use on_zero='skip' to "
            "leave such groups out (and say so) or shift the variable"
        )
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(t - e) / np.abs(t)
    r[zero] = np.nan
    return r


def parity_error(
    true_overall: float,
    est_overall: float,
    true_groups: Any,
    est_groups: Any,
    omega: float | None = None,
    *,
    on_zero: str = "raise",
) -> ParityResult:
    """Definition 11 (paper §3), literally:

    ``phi = omega |(f(X) - M(X)) / f(X)| + sum_{i=1}^k |(f(G_i) - M(G_i)) / f(G_i)|``, ``omega = 1/k``.

    It is a **sum** over strata (the paper's prose says "average"; we follow the formula), so it
    grows with k; ``phi.per_group`` has the k relative errors. A true value of exactly 0 makes
    its term undefined: ``on_zero="raise"`` (default) raises :class:`DPInputError`;
    ``on_zero="skip"`` leaves the term out and lists it in ``phi.skipped``.
    """
    if on_zero not in ("raise", "skip"):
        raise DPInputError("on_zero must be 'raise' or 'skip'")
    t_all = check_finite(true_overall, "true_overall")
    e_all = check_finite(est_overall, "est_overall")
    t = as_finite_array(true_groups, "true_groups")
    e = as_finite_array(est_groups, "est_groups")
    if t.shape != e.shape:
        raise DPInputError(f"true_groups ({t.size}) and est_groups ({e.size}) must have the same length")
    k = t.size
    if omega is None:
        omega = 1.0 / k
    omega = check_positive(omega, "omega", allow_zero=True)
    rel = relative_errors(t, e, on_zero="raise" if on_zero == "raise" else "nan")
    skipped = tuple(int(i) for i in np.flatnonzero(np.isnan(rel)))
    if t_all == 0:
        if on_zero == "raise":
            raise DPInputError("the true overall value is 0, so its relative error is undefined")
        overall_term = 0.0
    else:
        overall_term = abs((t_all - e_all) / t_all)
    if len(skipped) == k and t_all == 0:
        raise DPInputError("every true value is 0: the parity error is undefined")
    value = omega * overall_term + float(np.nansum(rel))
    return ParityResult(value, omega=omega, overall_term=overall_term, per_group=readonly(rel), skipped=skipped)


# ---------------------------------------------------------------------------------------------
# Privacy accounting
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PrivacyAccounting:
    """What each release costs (epsilon for Laplace; for CoinPress read rho)."""

    per_group: float
    all_groups: float
    combined_overall: float
    fresh_global: float
    groups_plus_fresh_global: float
    if_group_can_change: float
    lines: tuple[str, ...]


def privacy_accounting(epsilon: float, k: int, *, unit: str = "epsilon") -> PrivacyAccounting:
    """The paper's accounting (Def. 7, Prop. 8, digest §1.9), in numbers and plain words."""
    epsilon = check_positive(epsilon, unit)
    k = check_int(k, "k", minimum=1)
    lines = (
        f"Each of the {k} group means uses {unit} = {epsilon:g}.",
        f"The groups are disjoint, so all {k} group means together cost {unit} = {epsilon:g} "
        "(parallel composition), not k times that.",
        "The overall mean recombined from the group means with public weights costs nothing more (post-processing).",
        f"A separate, fresh overall mean on top would cost another {epsilon:g}: {2 * epsilon:g} in total "
        "(sequential composition), and could disagree with the recombined one.",
        f"If a person's group could also change between neighbouring datasets, one change would touch two "
        f"groups and the group means would cost {2 * epsilon:g}.",
    )
    return PrivacyAccounting(
        per_group=epsilon,
        all_groups=epsilon,
        combined_overall=0.0,
        fresh_global=epsilon,
        groups_plus_fresh_global=2 * epsilon,
        if_group_can_change=2 * epsilon,
        lines=lines,
    )


# ---------------------------------------------------------------------------------------------
# Bounds on sum_i log|G_i| (Prop. 9, Lemma 12, Theorem 10, informal lower bound)
# ---------------------------------------------------------------------------------------------


def check_nk(n: Any, k: Any) -> tuple[int, int]:
    k = check_int(k, "k (number of groups)", minimum=1)
    n = check_int(n, "n", minimum=2)
    if n < k:
        raise DPInputError(f"n ({n}) must be at least k ({k}) so that every group can have a member")
    return n, k


def sum_log_worst_case(n: int, k: int) -> float:
    """Proposition 9 / Lemma 12: ``sum_i ln|G_i| <= k ln(n/k)`` (equal group sizes)."""
    n, k = check_nk(n, k)
    return k * math.log(n / k)


def sum_log_expected_dirichlet(n: int, k: int, alpha: Any) -> Any:
    """Theorem 10 (as an equality, sizes ``|G_i| = g_i n``, ``g ~ Dirichlet(alpha, k)``):

    ``E[sum_i ln|G_i|] = k (psi(alpha) - psi(k alpha) + ln n)`` (``g_i ~ Beta(alpha, (k-1) alpha)``,
    ``E ln g_i = psi(alpha) - psi(k alpha)``). Vectorised over ``alpha``.
    """
    n, k = check_nk(n, k)
    a = np.asarray(alpha, dtype=float)
    if not np.isfinite(a).all() or (a <= 0).any():
        raise DPInputError("the Dirichlet alpha must be > 0")
    out = k * (special.digamma(a) - special.digamma(k * a) + math.log(n))
    return float(out) if out.ndim == 0 else out


def sum_log_best_case(n: int, k: int) -> float:
    """The paper's best case (all groups but one of size 1): ``(k - 1) + ln(n - k)`` (as printed, §2.9)."""
    n, k = check_nk(n, k)
    return (k - 1) + math.log(max(n - k, 1))


def sum_log_lower_bound(n: int, k: int) -> float:
    """The informal lower bound ``k + ln n`` used in Figure 1."""
    n, k = check_nk(n, k)
    return k + math.log(n)


# ---------------------------------------------------------------------------------------------
# Moved: the paper's experiments, data and simulations live in dpcore.views.stratified
# ---------------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------------
# The mechanism of every released mean (planner, app release, command line)
# ---------------------------------------------------------------------------------------------


def clipped_cents(incomes: Any, lower: float, upper: float) -> np.ndarray:
    """Incomes clipped to [lower, upper] in integer cents, floor(100 x + 1/2): the fixed-point form every
    released sum uses (exact int64 sums, so the sensitivity holds bit for bit). A NaN is refused, never cast;
    no incomes give no cents.

    Example:

    >>> clipped_cents([12.345, -5.0, 1e9], 0.0, 1000.0).tolist()
    [1235, 0, 100000]
    """
    arr = np.asarray(incomes, dtype=float)
    if arr.ndim != 1:
        raise DPInputError(f"incomes to convert to cents must be a 1-D array, got shape {arr.shape}")
    if np.isnan(arr).any():
        raise DPInputError("incomes must not be missing (NaN) when converted to cents")
    return np.floor(np.clip(arr, lower, upper) * 100.0 + 0.5).astype(np.int64)


def bound_cents(value: float) -> int:
    """A public bound in cents, rounded as :func:`clipped_cents` rounds a value."""
    return int(math.floor(float(value) * 100 + 0.5))


def mean_sum_sensitivity_cents(c_lo: int, c_hi: int, m: int, cells_move: bool) -> float:
    """L1 sensitivity of a statistic's clipped sums (cents) when one person changes m rows: m (cU - cL) when
    cells are public (a row's value changes inside its cell); m max(cU - cL, 2 max(|cL|, |cU|)) when rows may
    move between cells (one cell loses a value in [cL, cU], another gains one)."""
    c_lo = check_int(c_lo, "c_lo")
    c_hi = check_int(c_hi, "c_hi")
    m = check_int(m, "m", minimum=1)
    if c_hi < c_lo:
        raise DPInputError(f"the clipping range in cents is empty: c_lo = {c_lo} > c_hi = {c_hi}")
    width = max(c_hi - c_lo, 1)
    if not cells_move:
        return float(m * width)
    return float(m * max(width, 2 * max(abs(c_lo), abs(c_hi))))
