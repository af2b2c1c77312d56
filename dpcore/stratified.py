"""Stratified differentially private means and the parity error across demographic groups.

Implements Rosenblatt, Stoyanovich & Musco, "A Simple and Practical Method for Reducing the
Disparate Impact of Differential Privacy" (AAAI 2024, arXiv:2312.11712), digest in
``../shared/papers/stratification_spec.md`` (cited below as "digest §x").

What is in here
---------------
* :func:`clipped_laplace_mean` / :func:`global_laplace_mean`: the clipped Laplace mean (digest
  §2.3, paper Eq. 2) on all records.
* :func:`stratified_mean`: one clipped Laplace mean per group with the group's own size (paper
  Eq. 3) and the stratified combination ``sum_i w_i p_i`` (paper Eq. 4/9) with **public** weights
  (the group proportions, given weights, or PubStrat weights from a public hold-out sample,
  :func:`public_weights`).
* :func:`parity_error` (Definition 11, literally) and :func:`relative_errors`.
* Bounds on ``sum_i log|G_i|`` (Proposition 9 / Lemma 12, Theorem 10, the informal lower bound),
  the paper's New York RACE example (:func:`ny_race_example`), a symmetric-Dirichlet fit.
* Generators: the paper's Gaussian mixture with Dirichlet(alpha) group sizes, and group-size
  presets from the paper's Table 3 (RACE k = 9, SEX x RACE k = 18).
* Privacy accounting (:func:`privacy_accounting`).
* Vectorised Monte Carlo of many releases on one dataset (:func:`simulate_laplace_releases`).

CoinPress (zCDP) and its stratified variants live in :mod:`dpcore.coinpress`.

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
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from scipy import optimize, special

from . import noise
from .validation import (
    check_bounds,
    DPInputError,
    as_finite_array,
    as_generator,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

__all__ = [
    "MAX_GROUPS",
    "DEFAULT_GAMMA",
    "GroupIndex",
    "group_index",
    "clip_thresholds",
    "LaplaceMeanRelease",
    "clipped_laplace_mean",
    "global_laplace_mean",
    "StratifiedMeanRelease",
    "stratified_mean",
    "public_weights",
    "split_public_private",
    "stratified_noise_variance",
    "global_noise_variance",
    "ParityError",
    "parity_error",
    "relative_errors",
    "PrivacyAccounting",
    "privacy_accounting",
    "sum_log_worst_case",
    "sum_log_expected_dirichlet",
    "sum_log_best_case",
    "sum_log_lower_bound",
    "bound_curves",
    "fit_symmetric_dirichlet",
    "NYExample",
    "ny_race_example",
    "NY_RACE_COUNTS",
    "NY_SEX_RACE_COUNTS",
    "PRESETS",
    "preset_counts",
    "sizes_from_proportions",
    "dirichlet_group_sizes",
    "MixtureSample",
    "gaussian_mixture",
    "LaplaceSimulation",
    "simulate_laplace_releases",
    "ChainSynthesis",
    "synthesize_chain",
    "stratified_synthesize",
    "synthetic_parity",
    "synthesizer_sweep",
]

#: Largest number of groups (levels) accepted: beyond this almost every group is tiny and the
#: per-group releases are noise; combine levels first.
MAX_GROUPS = 100
#: Failure-probability constant gamma of the paper's clip threshold (digest §2.1), gamma in (0, 1).
DEFAULT_GAMMA = 0.1
#: Relative tolerance for "weights sum to one".
WEIGHT_TOL = 1e-6


def _readonly(a: np.ndarray) -> np.ndarray:
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
        raise DPInputError(f"{name} must be one label per record (1-D), got shape {arr.shape}; "
                           "combine several grouping columns into one label first")
    if arr.dtype.kind == "f" and np.isnan(arr).any():
        raise DPInputError(f"{name} has {int(np.isnan(arr).sum())} missing labels; drop those records "
                           "or give them their own group")
    if arr.dtype.kind == "O":
        kinds = set(map(type, arr.tolist()))
        missing = 0
        if type(None) in kinds or float in kinds or np.float64 in kinds:
            missing = sum(1 for v in arr.tolist() if v is None or (isinstance(v, float) and math.isnan(v)))
        if missing:
            raise DPInputError(f"{name} has {missing} missing labels; drop those records or give them "
                               "their own group")
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
    return GroupIndex(labels=labels, codes=_readonly(codes.astype(np.int64)), counts=_readonly(counts))


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


def clipped_laplace_mean(values: Any, *, epsilon: float, clip_range: Any, gamma: float = DEFAULT_GAMMA,
                         rng: Any = None) -> LaplaceMeanRelease:
    """epsilon-DP clipped mean of all values: ``mean(clip(x)) + Lap((high - low)/(n epsilon))``.

    Paper Eq. 2 (digest §2.3). Neighbouring: replace one value, n public. ``clip_range`` is a
    public ``(low, high)`` or the paper's ``R`` (then ``[-T, T]``, ``T = R + sqrt(ln n / gamma)``).
    Values outside the interval are moved to its nearest end (so negative incomes are clipped up
    to ``low``). Needs at least 2 values.
    """
    x = as_finite_array(values, "values", min_size=2)
    epsilon = check_epsilon(epsilon)
    lo, hi = clip_thresholds(clip_range, np.array([x.size]), gamma=gamma)
    lo, hi = float(lo[0]), float(hi[0])
    sens = (hi - lo) / x.size
    b = noise.laplace_scale(epsilon, sens)
    true_clipped = float(np.clip(x, lo, hi).mean())
    value = true_clipped + float(noise.sample_laplace(b, 1, rng=as_generator(rng))[0])
    return LaplaceMeanRelease(value=value, n=int(x.size), epsilon=epsilon, clip_low=lo, clip_high=hi,
                              sensitivity=sens, noise_scale=b)


global_laplace_mean = clipped_laplace_mean


# ---------------------------------------------------------------------------------------------
# Stratified mean
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StratifiedMeanRelease:
    """Released group means and their public-weight combination.

    ``per_group[i]`` belongs to ``labels[i]`` (sorted). ``overall = sum_i weights[i] per_group[i]``
    (paper Eq. 4 with public weights; post-processing, no extra privacy cost). ``counts`` are the
    (public) group sizes; ``empty[i]`` marks a group with no records, whose released value is the
    data-independent midpoint of its clip interval. ``notes`` explains any such special case.
    """

    overall: float
    per_group: np.ndarray
    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    weights_source: str
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
        return math.sqrt(float(np.sum(self.weights ** 2 * 2.0 * np.where(self.empty, 0.0, self.noise_scale) ** 2)))

    def as_dict(self) -> dict[Any, float]:
        return dict(zip(self.labels, self.per_group.tolist()))


def _resolve_weights(weights: Any, labels: tuple, counts: np.ndarray) -> tuple[np.ndarray, str]:
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
            raise DPInputError(f"weights are missing for groups {missing[:5]}; give a weight (possibly 0) "
                               "for every group")
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
        raise DPInputError(f"weights must sum to 1 (they are population shares), they sum to {total:.6g}; "
                           "divide them by their sum")
    return w, "given (public)"


def stratified_mean(values: Any, groups: Any, *, epsilon: float, clip_range: Any, rng: Any = None,
                    weights: Any = None, gamma: float = DEFAULT_GAMMA, levels: Sequence | None = None,
                    max_groups: int = MAX_GROUPS) -> StratifiedMeanRelease:
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
    w, source = _resolve_weights(weights, gi.labels, counts)
    lo, hi = clip_thresholds(clip_range, counts, gamma=gamma)
    true_means, empty = _clipped_group_means(x, gi.codes, counts, lo, hi)
    sens = np.where(empty, 0.0, (hi - lo) / np.maximum(counts, 1))
    scales = sens / epsilon
    z = noise.sample_laplace(1.0, gi.k, rng=as_generator(rng))
    est = true_means + scales * z
    notes = []
    for i, lab in enumerate(gi.labels):
        if counts[i] == 0:
            notes.append(f"group {lab!r} has no records: its released value is the midpoint of the clip "
                         f"interval ({(lo[i] + hi[i]) / 2:g}), a constant that uses no data")
        elif counts[i] == 1:
            notes.append(f"group {lab!r} has 1 record: its release is that record's clipped value plus "
                         f"Laplace noise of scale {scales[i]:.4g} (= clip width / epsilon): mostly noise")
    overall = float(np.dot(w, est))
    return StratifiedMeanRelease(
        overall=overall, per_group=_readonly(est), labels=gi.labels, counts=_readonly(counts),
        weights=_readonly(w), weights_source=source, epsilon=epsilon, clip_low=_readonly(lo),
        clip_high=_readonly(hi), sensitivity=_readonly(sens), noise_scale=_readonly(scales),
        empty=_readonly(empty), notes=tuple(notes))


def _clipped_group_means(x: np.ndarray, codes: np.ndarray, counts: np.ndarray, lo: np.ndarray,
                         hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    lookup = {v.item() if isinstance(v, np.generic) else v: c for v, c in zip(vals, cnt)}
    w = np.array([float(lookup.get(lab, 0)) for lab in labels])
    if w.sum() <= 0:
        raise DPInputError("no group of the private data appears in the public hold-out sample")
    return w / w.sum()


def split_public_private(values: Any, groups: Any, *, public_fraction: float = 0.5,
                         rng: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
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
    return float(np.sum(w ** 2 * 2.0 * b ** 2))


def global_noise_variance(n: int, epsilon: float, clip_low: float, clip_high: float) -> float:
    """Variance ``2 ((high - low)/(n eps))^2`` of the global clipped Laplace mean's noise."""
    n = check_int(n, "n", minimum=1)
    epsilon = check_epsilon(epsilon)
    clip_low, clip_high = check_bounds(clip_low, clip_high, lower_name="clip_low", upper_name="clip_high")
    return 2.0 * ((clip_high - clip_low) / (n * epsilon)) ** 2


# ---------------------------------------------------------------------------------------------
# Parity error (Definition 11)
# ---------------------------------------------------------------------------------------------

class ParityError(float):
    """Definition 11's phi (a float) with its parts: ``.omega``, ``.overall_term``, ``.per_group``
    (the k relative errors ``|f(G_i) - M(G_i)| / |f(G_i)|``), ``.k``, ``.skipped`` (indices of
    groups skipped because their true value is 0, only with ``on_zero="skip"``)."""

    omega: float
    overall_term: float
    per_group: np.ndarray
    k: int
    skipped: tuple[int, ...]

    def __new__(cls, value: float, *, omega: float, overall_term: float, per_group: np.ndarray,
                skipped: tuple[int, ...]) -> "ParityError":
        obj = super().__new__(cls, value)
        obj.omega = omega
        obj.overall_term = overall_term
        obj.per_group = per_group
        obj.k = int(per_group.size)
        obj.skipped = skipped
        return obj

    def __repr__(self) -> str:
        return f"ParityError({float(self):.6g}, omega={self.omega:.4g}, k={self.k})"


def relative_errors(true_values: Any, estimates: Any, *, on_zero: str = "raise") -> np.ndarray:
    """``|true_i - est_i| / |true_i|`` elementwise. A true value of 0 raises (``on_zero="raise"``)
    or gives NaN in that slot (``on_zero="nan"``), never a silent infinity."""
    t = as_finite_array(true_values, "true values")
    e = as_finite_array(estimates, "estimates")
    if t.shape != e.shape:
        raise DPInputError(f"true values ({t.size}) and estimates ({e.size}) must have the same length")
    zero = t == 0
    if zero.any() and on_zero == "raise":
        raise DPInputError("a true value is 0, so its relative error is undefined; use on_zero='skip' to "
                           "leave such groups out (and say so) or shift the variable")
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.abs(t - e) / np.abs(t)
    r[zero] = np.nan
    return r


def parity_error(true_overall: float, est_overall: float, true_groups: Any, est_groups: Any,
                 omega: float | None = None, *, on_zero: str = "raise") -> ParityError:
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
    return ParityError(value, omega=omega, overall_term=overall_term, per_group=_readonly(rel),
                       skipped=skipped)


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
        "The overall mean recombined from the group means with public weights costs nothing more "
        "(post-processing).",
        f"A separate, fresh overall mean on top would cost another {epsilon:g}: {2 * epsilon:g} in total "
        "(sequential composition), and could disagree with the recombined one.",
        f"If a person's group could also change between neighbouring datasets, one change would touch two "
        f"groups and the group means would cost {2 * epsilon:g}.",
    )
    return PrivacyAccounting(per_group=epsilon, all_groups=epsilon, combined_overall=0.0,
                             fresh_global=epsilon, groups_plus_fresh_global=2 * epsilon,
                             if_group_can_change=2 * epsilon, lines=lines)


# ---------------------------------------------------------------------------------------------
# Bounds on sum_i log|G_i| (Prop. 9, Lemma 12, Theorem 10, informal lower bound)
# ---------------------------------------------------------------------------------------------

def _check_nk(n: Any, k: Any) -> tuple[int, int]:
    k = check_int(k, "k (number of groups)", minimum=1)
    n = check_int(n, "n", minimum=2)
    if n < k:
        raise DPInputError(f"n ({n}) must be at least k ({k}) so that every group can have a member")
    return n, k


def sum_log_worst_case(n: int, k: int) -> float:
    """Proposition 9 / Lemma 12: ``sum_i ln|G_i| <= k ln(n/k)`` (equal group sizes)."""
    n, k = _check_nk(n, k)
    return k * math.log(n / k)


def sum_log_expected_dirichlet(n: int, k: int, alpha: Any) -> Any:
    """Theorem 10 (as an equality, sizes ``|G_i| = g_i n``, ``g ~ Dirichlet(alpha, k)``):

    ``E[sum_i ln|G_i|] = k (psi(alpha) - psi(k alpha) + ln n)`` (``g_i ~ Beta(alpha, (k-1) alpha)``,
    ``E ln g_i = psi(alpha) - psi(k alpha)``). Vectorised over ``alpha``.
    """
    n, k = _check_nk(n, k)
    a = np.asarray(alpha, dtype=float)
    if not np.isfinite(a).all() or (a <= 0).any():
        raise DPInputError("the Dirichlet alpha must be > 0")
    out = k * (special.digamma(a) - special.digamma(k * a) + math.log(n))
    return float(out) if out.ndim == 0 else out


def sum_log_best_case(n: int, k: int) -> float:
    """The paper's best case (all groups but one of size 1): ``(k - 1) + ln(n - k)`` (as printed, §2.9)."""
    n, k = _check_nk(n, k)
    return (k - 1) + math.log(max(n - k, 1))


def sum_log_lower_bound(n: int, k: int) -> float:
    """The informal lower bound ``k + ln n`` used in Figure 1."""
    n, k = _check_nk(n, k)
    return k + math.log(n)


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
    "White": 138474, "Black": 24024, "American Indian": 508, "Alaska Native": 5,
    "AIAN tribes": 244, "Asian": 17030, "NHPI": 72, "Some other race": 10964, "Two or more": 5646,
}
#: SEX x RACE counts (k = 18).
NY_SEX_RACE_COUNTS: dict[str, int] = {
    "Female White": 70881, "Male White": 67593, "Female Black": 12947, "Male Black": 11077,
    "Female Asian": 8900, "Male Asian": 8130, "Female Some other race": 5668,
    "Male Some other race": 5296, "Female Two or more": 3026, "Male Two or more": 2620,
    "Male American Indian": 277, "Female American Indian": 231, "Male AIAN tribes": 125,
    "Female AIAN tribes": 119, "Male NHPI": 42, "Female NHPI": 30, "Female Alaska Native": 3,
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
    return NYExample(n=n, k=k, alpha=alpha, proportions=_readonly(counts / n), worst=worst, expected=exp_,
                     best=best, lower=sum_log_lower_bound(n, k), actual=actual,
                     improvement=(worst - exp_) / (worst - best),
                     improvement_actual=(worst - actual) / (worst - best),
                     alpha_mle=fit_symmetric_dirichlet(counts / n))


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
    n, k = _check_nk(n, k)
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


def gaussian_mixture(n: int, k: int, alpha: float, rng: Any = None, *, sizes: Any = None,
                     sigma_range: tuple[float, float] = (0.1, 2.0), mu_sd: float = 1.0) -> MixtureSample:
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
    return MixtureSample(values=_readonly(vals), groups=_readonly(codes), sizes=_readonly(sz),
                         mus=_readonly(mus), sigmas=_readonly(sig))


# ---------------------------------------------------------------------------------------------
# Vectorised Monte Carlo on one dataset (for the page's error bars)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class LaplaceSimulation:
    """``n_sims`` simulated releases on one dataset.

    ``strat_groups`` (n_sims x k), ``strat_overall`` (n_sims): stratified Laplace.
    ``global_overall`` (n_sims): global Laplace (its per-group "estimate" is the same number).
    ``true_groups`` / ``true_overall``: the non-private (unclipped) means.
    """

    labels: tuple
    counts: np.ndarray
    weights: np.ndarray
    true_groups: np.ndarray
    true_overall: float
    strat_groups: np.ndarray
    strat_overall: np.ndarray
    global_overall: np.ndarray
    epsilon: float


def simulate_laplace_releases(values: Any, groups: Any, *, epsilon: float, clip_range: Any,
                              n_sims: int = 200, weights: Any = None, gamma: float = DEFAULT_GAMMA,
                              rng: Any = None, max_groups: int = MAX_GROUPS) -> LaplaceSimulation:
    """Simulate ``n_sims`` stratified and global Laplace releases (same parameters as
    :func:`stratified_mean` / :func:`clipped_laplace_mean`), vectorised."""
    x = as_finite_array(values, "values", min_size=2)
    epsilon = check_epsilon(epsilon)
    n_sims = check_int(n_sims, "n_sims", minimum=1, maximum=1_000_000)
    gi = group_index(groups, max_groups=max_groups)
    if gi.codes.size != x.size:
        raise DPInputError("values and groups must have the same length")
    w, _ = _resolve_weights(weights, gi.labels, gi.counts)
    lo, hi = clip_thresholds(clip_range, gi.counts, gamma=gamma)
    means, empty = _clipped_group_means(x, gi.codes, gi.counts, lo, hi)
    scales = np.where(empty, 0.0, (hi - lo) / np.maximum(gi.counts, 1) / epsilon)
    gen = as_generator(rng)
    z = noise.sample_laplace(1.0, n_sims * gi.k, rng=gen).reshape(n_sims, gi.k)
    strat = means[None, :] + scales[None, :] * z
    glo, ghi = clip_thresholds(clip_range, np.array([x.size]), gamma=gamma)
    gmean = float(np.clip(x, glo[0], ghi[0]).mean())
    gb = (ghi[0] - glo[0]) / x.size / epsilon
    glob = gmean + gb * noise.sample_laplace(1.0, n_sims, rng=gen)
    true_groups = np.bincount(gi.codes, weights=x, minlength=gi.k) / np.maximum(gi.counts, 1)
    return LaplaceSimulation(labels=gi.labels, counts=gi.counts, weights=_readonly(w),
                             true_groups=_readonly(true_groups), true_overall=float(x.mean()),
                             strat_groups=_readonly(strat), strat_overall=_readonly(strat @ w),
                             global_overall=_readonly(glob), epsilon=epsilon)


# ---------------------------------------------------------------------------------------------
# Stretch: a light stratified synthesizer (digest §6.6; an illustration, not MST/GEM/AIM)
# ---------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class ChainSynthesis:
    """Synthetic records from noisy 2-way marginals along a chain of columns.

    ``codes`` (n_out x d) integer codes, ``strata`` (n_out) the stratum code of each row,
    ``noise_scale`` the Laplace scale per marginal cell (``2 m / epsilon`` for m marginals),
    ``epsilon`` the total budget (parallel over strata when stratified).
    """

    codes: np.ndarray
    strata: np.ndarray
    epsilon: float
    noise_scale: float
    method: str
    notes: tuple[str, ...] = ()


def _int_array(x: Any, name: str, *, maximum: float = 2**31) -> np.ndarray:
    """Integer codes/sizes given as ints or integral floats; finite and below ``maximum`` in size."""
    try:
        f = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError(f"{name} must contain integers") from None
    if not np.all(np.isfinite(f)) or np.any(f != np.round(f)) or np.any(np.abs(f) > maximum):
        raise DPInputError(f"{name} must contain finite integers (at most {maximum:g} in size)")
    return f.astype(np.int64)


def _check_codes(codes: Any, sizes: Any) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(codes)
    s = _int_array(sizes, "sizes", maximum=MAX_GROUPS * 100)
    if c.ndim != 2 or c.shape[1] != s.size or c.shape[1] < 2:
        raise DPInputError("codes must be an (n x d) integer table with d >= 2 columns and one size per column")
    if not np.issubdtype(c.dtype, np.integer):
        raise DPInputError("codes must be integer category codes (0 .. size-1)")
    if (s < 1).any() or (c < 0).any() or (c >= s[None, :]).any():
        raise DPInputError("every code must lie in 0 .. size-1 of its column (public domain sizes)")
    return c.astype(np.int64), s


def _noisy_chain(c: np.ndarray, s: np.ndarray, scale: float, gen: Any) -> list[np.ndarray]:
    tables = []
    for j in range(s.size - 1):
        a, b = int(s[j]), int(s[j + 1])
        t = np.bincount(c[:, j] * b + c[:, j + 1], minlength=a * b).reshape(a, b).astype(float)
        t += noise.sample_laplace(scale, a * b, rng=gen).reshape(a, b)
        tables.append(np.maximum(t, 0.0))  # post-processing: counts cannot be negative
    return tables


def _sample_rows(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse-CDF sampling, one categorical row distribution per draw (rows of ``p`` sum to 1)."""
    cum = np.cumsum(p, axis=1)
    return np.minimum((u[:, None] > cum).sum(axis=1), p.shape[1] - 1)


def _sample_chain(tables: list[np.ndarray], n_out: int, gen: Any) -> np.ndarray:
    first = tables[0].sum(axis=1)
    k0 = first.size
    p0 = first / first.sum() if first.sum() > 0 else np.full(k0, 1.0 / k0)
    out = np.empty((n_out, len(tables) + 1), dtype=np.int64)
    out[:, 0] = _sample_rows(np.broadcast_to(p0, (n_out, k0)), gen.random(n_out))
    for j, t in enumerate(tables):
        rows = t[out[:, j]]
        tot = rows.sum(axis=1, keepdims=True)
        cond = np.where(tot > 0, rows / np.where(tot > 0, tot, 1.0), 1.0 / t.shape[1])
        out[:, j + 1] = _sample_rows(cond, gen.random(n_out))
    return out


def synthesize_chain(codes: Any, sizes: Any, *, epsilon: float, n_out: int, rng: Any = None) -> ChainSynthesis:
    """Non-stratified ("vanilla") light synthesizer: noisy 2-way marginals of consecutive columns
    (a chain), then sampling column by column. Column 0 is the stratum (so groups exist in the
    output); it is modelled like any other column.

    Privacy: replacing one record changes each of the m = d - 1 marginals in at most 2 cells by 1,
    so the L1 sensitivity of all marginals together is 2m and ``Lap(2m / epsilon)`` per cell is
    epsilon-DP. Domain sizes are public.
    """
    c, s = _check_codes(codes, sizes)
    epsilon = check_epsilon(epsilon)
    n_out = check_int(n_out, "n_out", minimum=1, maximum=5_000_000)
    gen = as_generator(rng)
    scale = 2.0 * (s.size - 1) / epsilon
    out = _sample_chain(_noisy_chain(c, s, scale, gen), n_out, gen)
    return ChainSynthesis(codes=_readonly(out[:, 1:]), strata=_readonly(out[:, 0]), epsilon=epsilon,
                          noise_scale=scale, method="vanilla chain")


def stratified_synthesize(codes: Any, sizes: Any, strata: Any, k: int, *, epsilon: float, weights: Any,
                          n_out: int, rng: Any = None) -> ChainSynthesis:
    """Stratified light synthesizer (paper §6 method, digest §6.6): an independent noisy-chain model
    per stratum with the **full** epsilon (strata are disjoint: parallel composition), sampled in
    proportion to **public** stratum weights: stratum s gets ``max(1, round(n_out w_s))`` rows when
    ``w_s > 0``. A stratum with public weight but no private records is sampled from the uniform
    distribution (no data, no budget) and noted.
    """
    c, s = _check_codes(codes, sizes)
    st_codes = _int_array(strata, "strata")
    k = check_int(k, "k", minimum=1, maximum=MAX_GROUPS)
    if st_codes.shape != (c.shape[0],) or (st_codes < 0).any() or (st_codes >= k).any():
        raise DPInputError("strata must be one code 0 .. k-1 per record")
    w, _ = _resolve_weights(weights, tuple(range(k)), np.bincount(st_codes, minlength=k))
    epsilon = check_epsilon(epsilon)
    n_out = check_int(n_out, "n_out", minimum=1, maximum=5_000_000)
    gen = as_generator(rng)
    scale = 2.0 * (s.size - 1) / epsilon
    parts, labels, notes = [], [], []
    order = np.argsort(st_codes, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(st_codes, minlength=k))])
    for g in range(k):
        if w[g] <= 0:
            continue
        m = max(1, int(round(n_out * w[g])))
        rows = c[order[bounds[g]:bounds[g + 1]]]
        if rows.shape[0] == 0:
            notes.append(f"stratum {g} has public weight but no records: sampled uniformly (uses no data)")
            tables = [np.ones((int(s[j]), int(s[j + 1]))) for j in range(s.size - 1)]
        else:
            tables = _noisy_chain(rows, s, scale, gen)
        parts.append(_sample_chain(tables, m, gen))
        labels.append(np.full(m, g, dtype=np.int64))
    return ChainSynthesis(codes=_readonly(np.concatenate(parts)), strata=_readonly(np.concatenate(labels)),
                          epsilon=epsilon, noise_scale=scale, method="stratified chain", notes=tuple(notes))


def synthetic_parity(real_codes: Any, real_strata: Any, syn_codes: Any, syn_strata: Any, k: int) -> dict:
    """Parity error (Def. 11, omega = 1/k) of the **means of every variable** between real and
    synthetic data, per variable and averaged over variables (our choice for the paper's
    "aggregate normalized difference of means across all variables"). Codes are shifted by +1 so
    that no mean is 0. A stratum with no synthetic rows is given the overall synthetic mean
    (stated). Also returns the max disparity ``max |real - syn| / |real|`` over strata and variables.
    """
    rc = _int_array(real_codes, "real_codes").astype(float) + 1.0
    sc = _int_array(syn_codes, "syn_codes").astype(float) + 1.0
    rs = _int_array(real_strata, "real_strata")
    ss = _int_array(syn_strata, "syn_strata")
    k = check_int(k, "k", minimum=1, maximum=MAX_GROUPS)
    if rc.ndim != 2 or sc.ndim != 2 or rc.shape[1] != sc.shape[1] or rs.shape != (rc.shape[0],) \
            or ss.shape != (sc.shape[0],) or sc.shape[0] == 0:
        raise DPInputError("real and synthetic tables need the same columns and one stratum code per row")
    if (rs < 0).any() or (rs >= k).any() or (ss < 0).any() or (ss >= k).any():
        raise DPInputError("stratum codes must lie in 0 .. k-1")
    phis, maxdisp, empty = [], 0.0, 0
    rcount = np.bincount(rs, minlength=k)
    scount = np.bincount(ss, minlength=k)
    keep = rcount > 0
    for j in range(rc.shape[1]):
        rmean = np.bincount(rs, weights=rc[:, j], minlength=k)[keep] / rcount[keep]
        soverall = float(sc[:, j].mean())
        smean_all = np.where(scount > 0, np.bincount(ss, weights=sc[:, j], minlength=k) / np.maximum(scount, 1),
                             soverall)
        smean = smean_all[keep]
        phi = parity_error(float(rc[:, j].mean()), soverall, rmean, smean, omega=1.0 / int(keep.sum()))
        phis.append(float(phi))
        maxdisp = max(maxdisp, float(np.max(phi.per_group)))
    empty = int(np.sum(keep & (scount == 0)))
    return {"parity per variable": phis, "parity (mean over variables)": float(np.mean(phis)),
            "max disparity": maxdisp, "strata without synthetic rows": empty}


def synthesizer_sweep(codes: Any, sizes: Any, strata: Any, k: int, *, public_w: Any, epsilons: Sequence[float],
                      runs: int = 3, n_out: int | None = None, rng: Any = None, progress: Any = None) -> list[dict]:
    """Paper Fig. 5 / 7a shape with the light synthesizer: parity error of means and max disparity
    against epsilon, vanilla chain vs stratified chain. ``public_w`` are the public stratum
    weights used to size the stratified output."""
    c, s = _check_codes(codes, sizes)
    st_codes = _int_array(strata, "strata")
    runs = check_int(runs, "runs", minimum=1, maximum=100)
    n_out = c.shape[0] if n_out is None else check_int(n_out, "n_out", minimum=1)
    gen = as_generator(rng)
    rows: list[dict] = []
    eps_list = list(epsilons)
    for i, eps in enumerate(eps_list):
        for run in range(runs):
            v = synthesize_chain(np.column_stack([st_codes, c]), np.concatenate([[k], s]), epsilon=eps,
                                 n_out=n_out, rng=gen)
            sy = stratified_synthesize(c, s, st_codes, k, epsilon=eps, weights=public_w, n_out=n_out, rng=gen)
            for name, syn in (("vanilla (one model)", v), ("stratified (one model per group)", sy)):
                res = synthetic_parity(c, st_codes, syn.codes, syn.strata, k)
                rows.append({"epsilon": float(eps), "run": run, "method": name,
                             "parity error": res["parity (mean over variables)"],
                             "max disparity": res["max disparity"]})
        if progress is not None:
            progress((i + 1) / len(eps_list), f"epsilon = {eps:g} done")
    return rows
