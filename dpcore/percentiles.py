"""DP earnings percentiles from a noisy histogram: the Census PSEO system, and its rivals.

Paper: Foote, Machanavajjhala & McKinney, "Releasing earnings distributions using differential
privacy: disclosure avoidance system for Post-Secondary Employment Outcomes (PSEO)" (2019).

What is here
------------
* Bins (Section 4.1.1, Table 1, footnote 18): :data:`PSEO_BIN_EDGES`, :func:`lognormal_bin_edges`,
  :func:`even_bin_edges`, :func:`bin_edges`.
* The histogram mechanism (Section 4.1, Proposition 4.1): :func:`histogram_counts`,
  :func:`noisy_histogram` (two-sided geometric noise on every bin), :func:`percentiles_from_histogram`
  (eq. 4.2 + footnote 17), :func:`release_percentiles`.
* The smooth-sensitivity rival (Section 4.2, eq. 4.6): :func:`percentile_smooth_sensitivity`,
  :func:`release_percentiles_smooth`.
* The exponential-mechanism quantile (Smith 2011, Algorithm 2; the paper's footnote 6):
  :func:`exponential_mechanism_log_density`, :func:`release_percentiles_em`; on a public candidate grid from
  histogram counts (what plans release with ``method = "exponential"``): :class:`ExponentialQuantileMechanism`.
* Credible intervals for the percentiles of a released histogram: :func:`percentile_credible_intervals`.
* Accuracy (Section 5.2): :func:`relative_accuracy` (eq. 5.1), :func:`summed_l1_error`.
* Vectorised helpers for many cells and many draws: :func:`cell_bin_counts`,
  :func:`simulate_histogram_percentiles`, :func:`smooth_sensitivity_many_betas`.

The PSEO table loader, the planning-data synthesizer, the page's view functions and the paper's
accuracy experiments (Figures 1-3: ``load_pseo_cells``, ``synthesize_cell_earnings``, ``make_cell_panel``,
``simulate_accuracy``, ...) live in :mod:`dpcore.views.percentiles`.

Neighbouring relation and what is public
----------------------------------------
Project default (docs/CONVENTIONS.md): **replace one person's record inside a cell; the cell size n
is public** (PSEO publishes cell counts). Moving one person from bin a to bin b changes two bin
counts by 1 each: the histogram has L1 sensitivity 2, so each bin gets two-sided geometric noise
with parameter epsilon/2 and the whole histogram is epsilon-DP. The paper itself (Section 3.2)
protects the *addition or removal* of one person; then one count changes by 1 (L1 sensitivity 1)
and each bin gets the full epsilon. Pass ``relation="add_remove"`` to reproduce that calibration.
The smooth-sensitivity and exponential-mechanism rivals are defined for replacement only (their
target rank depends on n), so they always use ``relation="replace"``.

Public, not protected: the bin edges (chosen without looking at the data: Table 1 comes from ACS
public-use data), the earnings range [lower, upper] of the rivals, the percentile levels, the cell
definitions and the cell sizes. Cells of one aggregation level are disjoint, so releasing all of
them costs epsilon once (parallel composition, Theorem 2.2); the real PSEO table also has nested
aggregate cells (all programs, all cohorts), and releasing several levels costs epsilon per level.

Choices where the paper is inconsistent (each proved by a test in tests/test_percentiles*.py)
---------------------------------------------------------------------------------------------
1. Footnote 17 writes the interpolation fraction as (Y/100 * sum_{i<=J} q_i - sum_{i<J} q_i) / q_J.
   That is a typo: the words ("W of the way through bin J") and eq. (4.2) need the *total*
   sum_{i<=M} q_i in place of sum_{i<=J} q_i; the literal formula can put the percentile below b_J.
2. Table 1 / footnote 18: the inner edges are the 5th..95th percentiles of LN(11.003, 0.753^2),
   the 20th edge the 97.5th percentile, and the top bin is closed at the 99.9th (614,597) for
   interpolation only (values above it are counted in the top bin). Our generic log-normal scheme
   with M bins uses the j/M quantiles (j = 1..M-1), the $10,000 floor and the 99.9th-percentile
   top; PSEO's 21 bins are that 20-bin scheme with its top bin split at the 97.5th percentile.
3. Eq. (4.6) gives the smooth sensitivity of an order statistic x_(M) for *replacement*
   neighbours with data in a public range [L, U] (x_(i) = L for i < 1 and U for i > n). The paper
   sets M = (N+1)X/100, which is not an integer in general; we release the order statistic
   x_(M) with M = ceil(X N / 100) (the smallest value whose empirical CDF reaches X/100, the same
   reading as eq. 4.2). With this M, eq. (4.6) matches brute force exactly (test).
4. Section 4.2 writes the noise density as 1/|1+x|^4 (not integrable) and calls it Gamma(1/eps);
   we use h(z) ∝ 1/(1+|z|^4) (``GeneralizedCauchy(4)``), scale S_beta/alpha with (alpha, beta) from
   ``dpcore.noise.smooth_noise_calibration(epsilon_x, 4)``. "paper" mode is the NRS constants
   alpha = eps_x/16, beta = eps_x/4 (the text writes eps/16 but means the per-percentile eps_x).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np

from . import noise
from .lazy import LazyModule
from .validation import (
    DPInputError,
    as_finite_array,
    as_generator,
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
    "HistogramMechanism",
    "HistogramDraw",
    "ExponentialQuantileMechanism",
    "ExponentialQuantileDraw",
    "MAX_EXPONENTIAL_QUANTILES",
    "PSEO_FINE_EDGES",
    "CANDIDATE_SCHEMES",
    "fine_candidate_grid",
    "candidate_grid",
    "PSEO_BIN_EDGES",
    "PSEO_LOWER",
    "PSEO_TOP",
    "PSEO_LOG_MEAN",
    "PSEO_LOG_SD",
    "RELATIONS",
    "check_edges",
    "lognormal_bin_edges",
    "even_bin_edges",
    "bin_edges",
    "epsilon_per_bin",
    "BinnedData",
    "histogram_counts",
    "NoisyHistogram",
    "noisy_histogram",
    "percentiles_from_histogram",
    "PercentileRelease",
    "release_percentiles",
    "percentile_rank",
    "empirical_percentile",
    "local_sensitivity_profile",
    "PercentileSmoothSensitivity",
    "percentile_smooth_sensitivity",
    "SmoothPercentileRelease",
    "release_percentiles_smooth",
    "exponential_mechanism_log_density",
    "sample_exponential_mechanism",
    "EMPercentileRelease",
    "release_percentiles_em",
    "posterior_count_samples",
    "PercentileIntervals",
    "percentile_credible_intervals",
    "relative_accuracy",
    "summed_l1_error",
    "cell_bin_counts",
    "simulate_histogram_percentiles",
    "smooth_sensitivity_many_betas",
]

# ---------------------------------------------------------------------------------------------
# Bins
# ---------------------------------------------------------------------------------------------

PSEO_LOWER = 10_000.0
"""The bottom cutoff: about full-time work at the federal minimum wage (Section 4.1.1)."""
PSEO_TOP = 614_597.0
"""The 99.9th percentile of LN(11.003, 0.753^2), closing the top bin for interpolation (Table 1)."""
PSEO_LOG_MEAN = 11.003
PSEO_LOG_SD = 0.753

PSEO_BIN_EDGES = np.array(
    [
        10000,
        17403,
        22876,
        27512,
        31857,
        36128,
        40449,
        44914,
        49605,
        54609,
        60027,
        65982,
        72639,
        80226,
        89080,
        99735,
        113106,
        130970,
        157509,
        207050,
        262475,
        614597,
    ],
    dtype=float,
)
"""Table 1 of the paper: 21 bins, 22 edges (read-only)."""
PSEO_BIN_EDGES.setflags(write=False)

RELATIONS = ("replace", "add_remove")


def check_edges(edges: Any, name: str = "edges") -> np.ndarray:
    """Finite, strictly increasing bin edges with at least one bin (two edges)."""
    arr = as_finite_array(edges, name, min_size=2)
    steps = np.diff(arr)
    if np.any(steps <= 0):
        i = int(np.argmax(steps <= 0))
        raise DPInputError(
            f"{name} must be strictly increasing; edge {i + 1} ({arr[i]:g}) is followed by {arr[i + 1]:g}"
        )
    return arr


def lognormal_bin_edges(
    n_bins: int = 20,
    *,
    log_mean: float = PSEO_LOG_MEAN,
    log_sd: float = PSEO_LOG_SD,
    lower: float = PSEO_LOWER,
    top_quantile: float = 0.999,
) -> np.ndarray:
    """Edges at every 100/M-th percentile of LN(log_mean, log_sd^2) (Section 4.1.1, footnote 18).

    Edges: ``lower`` (the $10,000 floor), the j/M quantiles for j = 1..M-1, and the
    ``top_quantile`` quantile closing the top bin (99.9th as in Table 1). Each bin then holds
    about 1/M of a log-normal population. Public: depends only on the parameters.
    """
    n_bins = check_int(n_bins, "number of bins", minimum=1, maximum=1000)
    log_mean = check_finite(log_mean, "mean of log earnings")
    log_sd = check_positive(log_sd, "standard deviation of log earnings")
    lower = check_positive(lower, "lowest edge", allow_zero=True)
    top_quantile = check_probability(top_quantile, "top quantile")
    if top_quantile <= (n_bins - 1) / n_bins:
        raise DPInputError(f"top quantile {top_quantile:g} must exceed {(n_bins - 1) / n_bins:g} for {n_bins} bins")
    probs = np.append(np.arange(1, n_bins) / n_bins, top_quantile)
    with np.errstate(over="ignore"):
        inner = np.exp(log_mean + log_sd * special.ndtri(probs))
    if not np.all(np.isfinite(inner)):
        raise DPInputError(
            "these log-normal parameters give infinite bin edges; use a realistic mean/sd of log earnings"
        )
    edges = np.concatenate([[lower], inner])
    if np.any(np.diff(edges) <= 0):
        raise DPInputError(
            f"the lowest edge {lower:g} is above the first log-normal edge {inner[0]:,.0f}; "
            "use fewer bins or a lower floor"
        )
    return edges


def even_bin_edges(n_bins: int = 20, *, lower: float = PSEO_LOWER, upper: float = PSEO_TOP) -> np.ndarray:
    """M bins of equal width between ``lower`` and ``upper`` ("Even" in Section 5.3).

    The paper spaces the bins "evenly between the minimum and maximum values"; we use the same
    public range as the log-normal scheme ($10,000 to the 99.9th percentile, 614,597), so both
    schemes cover the same earnings and no edge is taken from the data.
    """
    n_bins = check_int(n_bins, "number of bins", minimum=1, maximum=1000)
    lower = check_finite(lower, "lowest edge")
    upper = check_finite(upper, "highest edge")
    if not lower < upper:
        raise DPInputError(f"the lowest edge must be below the highest, got {lower:g} and {upper:g}")
    return np.linspace(lower, upper, n_bins + 1)


def bin_edges(scheme: str = "pseo", n_bins: int = 21) -> np.ndarray:
    """Edges for a named scheme: "pseo" (Table 1; ``n_bins`` ignored), "lognormal" or "even"."""
    if scheme == "pseo":
        return PSEO_BIN_EDGES.copy()
    if scheme == "lognormal":
        return lognormal_bin_edges(n_bins)
    if scheme == "even":
        return even_bin_edges(n_bins)
    raise DPInputError(f"bin scheme must be 'pseo', 'lognormal' or 'even', got {scheme!r}")


# ---------------------------------------------------------------------------------------------
# The histogram mechanism
# ---------------------------------------------------------------------------------------------


def _check_relation(relation: str) -> str:
    if relation not in RELATIONS:
        raise DPInputError(f"relation must be 'replace' or 'add_remove', got {relation!r}")
    return relation


def epsilon_per_bin(epsilon: float, relation: str = "replace") -> float:
    """The geometric-noise parameter of each bin for a histogram that is epsilon-DP overall.

    replace (default): one person moves between two bins, L1 sensitivity 2 -> epsilon / 2.
    add_remove (the paper's Section 3.2): one count changes by 1, L1 sensitivity 1 -> epsilon.
    """
    epsilon = check_epsilon(epsilon)
    return epsilon / 2.0 if _check_relation(relation) == "replace" else epsilon


def _earnings(values: Any, name: str = "earnings", *, min_size: int = 2) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"{name} must contain only numbers ({exc})") from None
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.size == 0:
        raise DPInputError(f"the cell is empty: {name} has no values (a percentile needs at least {min_size})")
    if arr.size < min_size:
        raise DPInputError(
            f"the cell has only {arr.size} person(s); percentiles need at least {min_size} earnings values "
            "(publish small cells suppressed or merged)"
        )
    arr = as_finite_array(arr, name, min_size=min_size)
    neg = int(np.count_nonzero(arr < 0))
    if neg:
        raise DPInputError(f"{name} must be >= 0 (PSEO covers people with earnings); found {neg} negative value(s)")
    return arr


@dataclass(frozen=True)
class BinnedData:
    """True (confidential) bin counts of one cell. Not a release: for planning and display only.

    n_below / n_above: how many values fell below the lowest edge (counted in the first bin) or
    above the highest edge (counted in the last bin, as PSEO does above 262,475).
    """

    counts: np.ndarray
    edges: np.ndarray
    n_below: int
    n_above: int

    @property
    def n(self) -> int:
        return int(self.counts.sum())


def histogram_counts(values: Any, edges: Any = PSEO_BIN_EDGES, *, min_size: int = 2) -> BinnedData:
    """Count earnings into bins b_j <= e < b_{j+1} (Section 4.1); out-of-range values are clipped.

    Values below the lowest edge go to the first bin and values at or above the highest edge to the
    last bin (the paper counts everything above 262,475 in bin 21). Both numbers are reported.
    """
    edges = check_edges(edges)
    x = _earnings(values, min_size=min_size)
    m = edges.size - 1
    idx = np.searchsorted(edges, x, side="right") - 1
    n_below = int(np.count_nonzero(idx < 0))
    n_above = int(np.count_nonzero(idx >= m))
    idx = np.clip(idx, 0, m - 1)
    return BinnedData(np.bincount(idx, minlength=m).astype(np.int64), edges, n_below, n_above)


@dataclass(frozen=True)
class NoisyHistogram:
    """A released histogram: noisy counts (may be negative) and the parameters that produced them."""

    counts: np.ndarray
    edges: np.ndarray
    epsilon: float
    epsilon_per_bin: float
    relation: str

    # Array-like: np.asarray(h), len(h), h[j], iteration and arithmetic with arrays use the counts.
    def __array__(self, dtype=None, copy=None):
        return np.asarray(self.counts, dtype=dtype)

    def __len__(self) -> int:
        return int(self.counts.size)

    def __getitem__(self, item):
        return self.counts[item]

    def __iter__(self):
        return iter(self.counts)


def noisy_histogram(
    values: Any, edges: Any = PSEO_BIN_EDGES, *, epsilon: float, rng=None, relation: str = "replace"
) -> NoisyHistogram:
    """The PSEO histogram release (Section 4.1, Definition 2.5, Proposition 4.1).

    Every bin count gets independent two-sided geometric noise, P(k) ∝ exp(-eps_bin |k|), drawn by
    ``dpcore.noise.sample_two_sided_geometric``. Bins are disjoint, so by parallel composition the
    whole vector is epsilon-DP when eps_bin = epsilon / (L1 sensitivity): epsilon/2 for
    ``relation="replace"`` (default: replace one person, n public; a move changes two bins) and
    epsilon for ``relation="add_remove"`` (the paper's relation: one bin changes). Edges are public.
    """
    epsilon = check_epsilon(epsilon)
    eps_bin = epsilon_per_bin(epsilon, relation)
    binned = histogram_counts(values, edges)
    z = noise.sample_two_sided_geometric(eps_bin, binned.counts.size, rng=rng)
    return NoisyHistogram(binned.counts + z, binned.edges, epsilon, eps_bin, relation)


def _check_q(q: Any) -> np.ndarray:
    qa = as_finite_array(q, "percentiles", min_size=1)
    if np.any((qa <= 0) | (qa > 100)):
        raise DPInputError(f"percentiles must be in (0, 100], got {qa.tolist()}")
    return qa


def _rule(counts: np.ndarray, edges: np.ndarray, q: np.ndarray, postprocess: str) -> tuple[np.ndarray, np.ndarray]:
    """Vectorised eq. (4.2) rule. counts: (R, M). Returns values (R, Q) and the bin index J (R, Q)."""
    c = counts.astype(float)
    if postprocess == "clip":
        c = np.maximum(c, 0.0)
    total = c.sum(axis=1)
    bad = total <= 0
    if np.any(bad):
        # Raw rule undefined (division by a non-positive total): zero the negative counts; if
        # nothing is left, read from a flat histogram (a data-independent answer).
        fixed = np.maximum(c[bad], 0.0)
        empty = fixed.sum(axis=1) <= 0
        fixed[empty] = 1.0
        c[bad] = fixed
        total = c.sum(axis=1)
    cum = np.cumsum(c, axis=1)
    t = (total[:, None] * q[None, :]) / 100.0  # multiply first: exact for integer totals
    # first bin J with cum_J >= t (eq. 4.2); exists because cum_M = total >= t.
    reach = cum[:, None, :] >= t[:, :, None] - 1e-9 * np.maximum(1.0, np.abs(t[:, :, None]))
    j = reach.argmax(axis=2)
    rows = np.arange(c.shape[0])[:, None]
    cum_prev = np.where(j > 0, cum[rows, np.maximum(j - 1, 0)], 0.0)
    q_j = c[rows, j]
    with np.errstate(divide="ignore", invalid="ignore"):
        frac = np.where(q_j > 0, (t - cum_prev) / q_j, 1.0)
    frac = np.clip(frac, 0.0, 1.0)
    return edges[j] + frac * (edges[j + 1] - edges[j]), j


def percentiles_from_histogram(
    counts: Any, edges: Any = PSEO_BIN_EDGES, q: Any = (25, 50, 75), *, postprocess: str = "none"
) -> np.ndarray:
    """Percentiles read off a (noisy) histogram: eq. (4.2) with footnote 17 (typo corrected).

    For percentile Y, J is the first bin with sum_{i<=J} q_i >= (Y/100) * N, N = sum_i q_i, and
    the answer is b_J + (b_{J+1} - b_J) * (Y/100 * N - sum_{i<J} q_i) / q_J (uniform earnings inside
    bin J). Footnote 17 prints sum_{i<=J} where N is meant (see the module docstring, choice 1).

    Properties (tested): with true counts it is exactly the inverse of the piecewise-linear
    histogram CDF; the answers are ordered (Y1 < Y2 gives P1 <= P2) for every count vector,
    including negative noisy counts, because J is the *first* crossing (so q_J > 0 and the fraction
    is in (0, 1]) and J does not decrease with Y.

    Post-processing (free: it only uses released numbers):
    * ``postprocess="none"`` (default, as the paper): negative counts are used as they are (the
      noisy CDF may dip; footnote 16).
    * ``postprocess="clip"``: negative counts are set to 0 first.
    * Either way, if the total is <= 0 the negative counts are zeroed, and if nothing is left the
      percentiles are read from a flat histogram (every bin equally likely) instead of failing.

    ``counts`` may be 1-D (one histogram; returns shape (len(q),)) or 2-D (one histogram per row;
    returns (rows, len(q))).
    """
    edges = check_edges(edges)
    qa = _check_q(q)
    if postprocess not in ("none", "clip"):
        raise DPInputError(f"postprocess must be 'none' or 'clip', got {postprocess!r}")
    try:
        c = np.asarray(counts, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"counts must be numbers ({exc})") from None
    one = c.ndim == 1
    c2 = c.reshape(1, -1) if one else c
    if c2.ndim != 2 or c2.shape[1] != edges.size - 1:
        raise DPInputError(
            f"counts must have one entry per bin ({edges.size - 1} bins for {edges.size} edges), got shape {c.shape}"
        )
    if not np.all(np.isfinite(c2)):
        raise DPInputError("counts must be finite numbers")
    vals, _ = _rule(c2, edges, qa, postprocess)
    return vals[0] if one else vals


@dataclass(frozen=True)
class PercentileRelease:
    """Percentiles from a noisy histogram (post-processing: the histogram is the release)."""

    values: np.ndarray
    q: np.ndarray
    noisy_counts: np.ndarray
    edges: np.ndarray
    epsilon: float
    epsilon_per_bin: float
    relation: str
    postprocess: str
    fallback: bool  # True when the noisy total was <= 0 and the fallback rule was used


def release_percentiles(
    values: Any,
    *,
    epsilon: float,
    edges: Any = PSEO_BIN_EDGES,
    q: Any = (25, 50, 75),
    rng=None,
    relation: str = "replace",
    postprocess: str = "none",
) -> PercentileRelease:
    """The PSEO mechanism end to end: noisy histogram (epsilon-DP), then eq. (4.2) read-off.

    Neighbours: replace one person in the cell, n public (default; each bin gets epsilon/2) or
    add/remove one person (``relation="add_remove"``, the paper's; each bin gets epsilon). Public:
    the edges, the percentile levels. All percentiles together cost epsilon once.
    """
    qa = _check_q(q)
    h = noisy_histogram(values, edges, epsilon=epsilon, rng=rng, relation=relation)
    vals = percentiles_from_histogram(h.counts, h.edges, qa, postprocess=postprocess)
    c = np.maximum(h.counts, 0) if postprocess == "clip" else h.counts
    return PercentileRelease(
        vals, qa, h.counts, h.edges, h.epsilon, h.epsilon_per_bin, relation, postprocess, bool(c.sum() <= 0)
    )


# ---------------------------------------------------------------------------------------------
# The smooth-sensitivity rival (Section 4.2)
# ---------------------------------------------------------------------------------------------


def percentile_rank(n: int, q: float) -> int:
    """Rank M = ceil(q n / 100), clipped to [1, n]: the order statistic released for percentile q.

    x_(M) is the smallest data value whose empirical CDF reaches q/100 (the reading of eq. 4.2).
    For the median of an odd n it is (n+1)/2, as in eq. (4.4).
    """
    n = check_int(n, "n", minimum=1)
    q = float(_check_q([q])[0])
    m = math.ceil(round(q * n / 100.0, 9))
    return int(min(max(m, 1), n))


def empirical_percentile(values: Any, q: Any = (25, 50, 75)) -> np.ndarray:
    """The order statistics x_(M), M = ceil(q n / 100): the 'true' percentiles we measure error against."""
    x = np.sort(as_finite_array(values, "earnings", min_size=1))
    qa = _check_q(q)
    return np.array([x[percentile_rank(x.size, qi) - 1] for qi in qa])


def _clip_range(lower: float, upper: float) -> tuple[float, float]:
    lo = check_finite(lower, "lower")
    hi = check_finite(upper, "upper")
    if not lo < hi:
        raise DPInputError(f"lower must be below upper, got {lo:g} and {hi:g}")
    return lo, hi


def local_sensitivity_profile(x_sorted: np.ndarray, rank: int, lower: float, upper: float, k_max: int) -> np.ndarray:
    """A^(k) = max local sensitivity of x_(rank) over datasets at replacement distance <= k.

    Eq. (4.6): A^(k) = max_{t=0..k+1} (x_(M+t) - x_(M+t-k-1)) with x_(i) = lower for i < 1 and
    upper for i > n, for k = 0..k_max. ``x_sorted`` must be sorted and inside [lower, upper];
    ``rank`` in 1..n. For k >= n every dataset is reachable, so A^(k) = upper - lower there (only
    k <= n is computed). Vectorised in blocks.
    """
    x = as_finite_array(x_sorted, "x_sorted", min_size=1)
    lower, upper = _clip_range(lower, upper)
    n = x.size
    if np.any(np.diff(x) < 0):
        raise DPInputError("x_sorted must be sorted in increasing order")
    if x[0] < lower or x[-1] > upper:
        raise DPInputError(f"x_sorted must lie in [lower, upper] = [{lower:g}, {upper:g}]; clip it first")
    rank = check_int(rank, "rank", minimum=1, maximum=n)
    k_req = check_int(k_max, "k_max", minimum=0)
    k_max = min(k_req, n)
    ext_pad = k_max + 2
    ext = np.concatenate([np.full(ext_pad, lower), x, np.full(ext_pad, upper)])
    # position of x_(i) (1-based) in ext is i - 1 + ext_pad
    base = rank - 1 + ext_pad
    out = np.empty(k_max + 1)
    block = 64
    for k0 in range(0, k_max + 1, block):
        ks = np.arange(k0, min(k0 + block, k_max + 1))
        ts = np.arange(ks[-1] + 2)
        hi_idx = base + ts[None, :] + 0 * ks[:, None]
        lo_idx = hi_idx - ks[:, None] - 1
        diff = ext[hi_idx] - ext[lo_idx]
        diff[ts[None, :] > ks[:, None] + 1] = -np.inf
        out[ks] = diff.max(axis=1)
    if k_req > k_max:
        out = np.concatenate([out, np.full(k_req - k_max, upper - lower)])
    return out


@dataclass(frozen=True)
class PercentileSmoothSensitivity:
    """beta-smooth sensitivity of one percentile (eq. 4.6). Data-dependent: not itself private."""

    value: float
    k_star: int
    A: np.ndarray  # A^(k) for k = 0..len(A)-1 (enough k for the maximum)
    rank: int
    beta: float


def _smooth_from_profile(
    xs: np.ndarray, rank: int, lo: float, hi: float, betas: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """S_beta = max_k e^{-k beta} A^(k) for several betas, growing k until no larger k can win."""
    n = xs.size
    betas = np.asarray(betas, dtype=float)
    width = hi - lo
    k_done = -1
    prof = np.empty(0)
    step = 128
    while True:
        k_hi = min(n, k_done + step)
        prof = local_sensitivity_profile(xs, rank, lo, hi, k_hi)
        k_done = k_hi
        ks = np.arange(k_done + 1)
        vals = np.exp(-np.outer(betas, ks)) * prof[None, :]
        best = vals.max(axis=1)
        # A^(k) <= width for every k, so k > k_done cannot beat best once e^{-(k_done+1) beta} width <= best
        if k_done >= n or np.all(np.exp(-(k_done + 1) * betas) * width <= best):
            return best, vals.argmax(axis=1), prof
        step *= 2


def percentile_smooth_sensitivity(
    values: Any, q: float, *, beta: float, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> PercentileSmoothSensitivity:
    """beta-smooth sensitivity of the q-th percentile x_(M), M = ceil(q n / 100) (eq. 4.6).

    S*_beta(x) = max_{k=0..n} e^{-k beta} max_{t=0..k+1} (x_(M+t) - x_(M+t-k-1)),
    Nissim-Raskhodnikova-Smith (2007) for the median, generalised to any rank. Valid for
    replacement neighbours with n public and data clipped to the public range [lower, upper]
    (values outside are clipped here). Checked against brute force in the tests.
    """
    lo, hi = _clip_range(lower, upper)
    x = np.sort(np.clip(_earnings(values), lo, hi))
    beta = check_positive(beta, "beta")
    q = float(_check_q([q])[0])
    rank = percentile_rank(x.size, q)
    best, kstar, prof = _smooth_from_profile(x, rank, lo, hi, np.array([beta]))
    return PercentileSmoothSensitivity(float(best[0]), int(kstar[0]), prof, rank, beta)


def _split_epsilon(epsilon: float, n_q: int, weights: Any) -> np.ndarray:
    if weights is None:
        return np.full(n_q, epsilon / n_q)
    w = as_finite_array(weights, "epsilon weights", min_size=1)
    if w.size != n_q or np.any(w <= 0):
        raise DPInputError(f"epsilon weights must be {n_q} positive numbers, one per percentile")
    return epsilon * w / w.sum()


@dataclass(frozen=True)
class SmoothPercentileRelease:
    """Percentiles released with smooth-sensitivity noise (Section 4.2).

    ``confidential_smooth_sensitivity`` and ``confidential_noise_scale`` (S*_beta(X)/alpha) depend on
    the confidential data: kept for teaching and auditing, never published.
    """

    values: np.ndarray
    q: np.ndarray
    epsilon: float
    epsilon_per_percentile: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    gamma: float
    confidential_smooth_sensitivity: np.ndarray
    confidential_noise_scale: np.ndarray
    calibration: str
    lower: float
    upper: float
    noise: str = "cauchy"  # a dpcore.noise.smooth.SMOOTH_NOISES name
    delta: float = 0.0
    privacy_cost: Any = None  # dpcore.budget.PrivacyCost of the whole release


def release_percentiles_smooth(
    values: Any,
    *,
    epsilon: float,
    q: Any = (25, 50, 75),
    rng=None,
    lower: float = PSEO_LOWER,
    upper: float = PSEO_TOP,
    gamma: float = 4.0,
    calibration: str = "tight",
    epsilon_weights: Any = None,
    noise: str = "cauchy",
    delta: float | None = None,
) -> SmoothPercentileRelease:
    """The rival of Section 4.2: each percentile + (S*_beta / alpha) Z, Z ~ h(z) ∝ 1/(1+|z|^gamma).

    epsilon is split across the percentiles (sequential composition; equal split by default,
    footnote 19). For percentile x with eps_x: (alpha, beta) = smooth_noise_calibration(eps_x,
    gamma, calibration); "paper" gives alpha = eps_x/(4 gamma), beta = eps_x/gamma (eps_x/16 and
    eps_x/4 for gamma = 4, as in the paper); "tight" keeps beta and takes the largest alpha whose
    certified privacy loss is <= eps_x. Neighbours: replace one person, n public; values clipped
    to the public range [lower, upper]. The released values need not be ordered (the paper's
    point); we do not sort them.

    ``noise`` (:mod:`dpcore.noise.smooth`): "cauchy" (default, the above, pure epsilon),
    "laplace" (NRS, each percentile (eps_x, delta/k)-DP: (epsilon, delta) in total by basic
    composition) or "laplace_lognormal" (Bun & Steinke; rho implying (epsilon, delta) in total,
    split in proportion to eps_x: zCDP composition adds rho). ``delta`` defaults to 1e-6.
    """
    from . import budget
    from . import noise as noise_module  # the parameter `noise` shadows the module name here
    from .noise import smooth as smooth_noise

    epsilon = check_epsilon(epsilon)
    lo, hi = _clip_range(lower, upper)
    qa = _check_q(q)
    gamma = check_finite(gamma, "gamma")
    if gamma <= 3:
        raise DPInputError(f"gamma must be > 3 here (finite-variance noise, as the paper's gamma = 4), got {gamma:g}")
    noise_name = smooth_noise.check_noise(noise)
    if delta is not None:  # checked for every noise (ignored by the pure-DP Cauchy)
        from .validation import check_delta

        delta = check_delta(delta)
    x = np.sort(np.clip(_earnings(values), lo, hi))
    eps_q = _split_epsilon(epsilon, qa.size, epsilon_weights)
    # the Cauchy's noise.SmoothNoiseCalibration or the light tails' smooth_noise.SmoothCalibration (both give
    # alpha and beta; only the latter are passed to sample_smooth_noise)
    cals: list[Any]
    if noise_name == "cauchy":
        cals = [noise_module.smooth_noise_calibration(float(e), gamma, mode=calibration) for e in eps_q]
        delta_v, cost = 0.0, budget.pure(epsilon)
    elif noise_name == "laplace":
        delta_v = smooth_noise.DEFAULT_DELTA if delta is None else delta
        cals = [
            smooth_noise.smooth_calibration("laplace", float(e), delta=delta_v / qa.size, mode=calibration)
            for e in eps_q
        ]
        cost = budget.approx(epsilon, delta_v)
    else:
        delta_v = smooth_noise.DEFAULT_DELTA if delta is None else delta
        rho = smooth_noise.rho_for_approx_dp(epsilon, delta_v)
        cals = [smooth_noise.lln_calibration(rho=rho * float(e) / epsilon, delta=delta_v) for e in eps_q]
        cost = budget.zcdp(rho)
    alpha = np.array([c.alpha for c in cals])
    beta = np.array([c.beta for c in cals])
    s = np.empty(qa.size)
    true = np.empty(qa.size)
    for i, qi in enumerate(qa):
        rank = percentile_rank(x.size, qi)
        true[i] = x[rank - 1]
        s[i] = _smooth_from_profile(x, rank, lo, hi, beta[i : i + 1])[0][0]
    scale = s / alpha
    if noise_name == "cauchy":
        z = noise_module.GeneralizedCauchy(gamma).rvs(qa.size, rng=rng)
    else:
        gen = as_generator(rng)
        z = np.array([float(smooth_noise.sample_smooth_noise(c, 1, gen)[0]) for c in cals])
    return SmoothPercentileRelease(
        true + scale * z,
        qa,
        epsilon,
        eps_q,
        alpha,
        beta,
        gamma,
        s,
        scale,
        calibration,
        lo,
        hi,
        noise=noise_name,
        delta=delta_v,
        privacy_cost=cost,
    )


# ---------------------------------------------------------------------------------------------
# The exponential mechanism (Smith 2011, Algorithm 2)
# ---------------------------------------------------------------------------------------------


def _em_intervals(
    values: Any, q: float, lower: float, upper: float, epsilon: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = np.sort(np.clip(_earnings(values), lower, upper))
    n = x.size
    pts = np.concatenate([[lower], x, [upper]])
    lengths = np.diff(pts)  # interval i = [x_(i), x_(i+1)], i = 0..n, holds i data points below it
    utility = -np.abs(np.arange(n + 1) - q * n / 100.0)
    with np.errstate(divide="ignore"):
        logw = np.log(lengths) + 0.5 * epsilon * utility
    logz = special.logsumexp(logw)
    return pts, lengths, logw - logz


def exponential_mechanism_log_density(
    values: Any, y: Any, *, epsilon: float, q: float, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> np.ndarray:
    """Log output density of the exponential-mechanism quantile at points y in [lower, upper].

    Density ∝ exp(-(epsilon/2) |#{i: x_i < y} - q n / 100|) on [lower, upper] (Smith 2011,
    Algorithm 2). Replacing one person changes the count below y by at most 1 (utility
    sensitivity 1, n public), so the density ratio of neighbours is at most e^epsilon (tested by
    computing it).
    """
    epsilon = check_epsilon(epsilon)
    lo, hi = _clip_range(lower, upper)
    qv = float(_check_q([q])[0])
    pts, lengths, logp = _em_intervals(values, qv, lo, hi, epsilon)
    ya = np.asarray(y, dtype=float)
    if np.any((ya < lo) | (ya > hi)):
        raise DPInputError("y must lie in [lower, upper]")
    i = np.clip(np.searchsorted(pts, ya, side="right") - 1, 0, lengths.size - 1)
    # density inside interval i: P(i) / length_i  (skip zero-length intervals: measure zero)
    with np.errstate(divide="ignore"):
        return logp[i] - np.log(lengths[i])


def sample_exponential_mechanism(
    values: Any,
    *,
    epsilon: float,
    q: float,
    size: int = 1,
    rng=None,
    lower: float = PSEO_LOWER,
    upper: float = PSEO_TOP,
) -> np.ndarray:
    """``size`` independent draws of the exponential-mechanism q-th percentile (each costs epsilon)."""
    epsilon = check_epsilon(epsilon)
    lo, hi = _clip_range(lower, upper)
    qv = float(_check_q([q])[0])
    size = check_int(size, "size", minimum=1)
    gen = as_generator(rng)
    pts, lengths, logp = _em_intervals(values, qv, lo, hi, epsilon)
    cdf = np.cumsum(np.exp(logp))
    i = np.searchsorted(cdf, gen.random(size) * cdf[-1], side="right")
    i = np.minimum(i, lengths.size - 1)
    return pts[i] + gen.random(size) * lengths[i]


@dataclass(frozen=True)
class EMPercentileRelease:
    """Percentiles released by the exponential mechanism, epsilon split equally across them."""

    values: np.ndarray
    q: np.ndarray
    epsilon: float
    epsilon_per_percentile: np.ndarray
    lower: float
    upper: float


def release_percentiles_em(
    values: Any,
    *,
    epsilon: float,
    q: Any = (25, 50, 75),
    rng=None,
    lower: float = PSEO_LOWER,
    upper: float = PSEO_TOP,
    epsilon_weights: Any = None,
) -> EMPercentileRelease:
    """Each percentile by the exponential mechanism (Smith 2011, Algorithm 2), epsilon split across them.

    Neighbours: replace one person, n public; values clipped to the public range [lower, upper].
    """
    epsilon = check_epsilon(epsilon)
    lo, hi = _clip_range(lower, upper)
    qa = _check_q(q)
    x = _earnings(values)
    eps_q = _split_epsilon(epsilon, qa.size, epsilon_weights)
    gen = as_generator(rng)
    vals = np.array(
        [
            sample_exponential_mechanism(x, epsilon=float(e), q=float(qi), size=1, rng=gen, lower=lo, upper=hi)[0]
            for e, qi in zip(eps_q, qa, strict=True)
        ]
    )
    return EMPercentileRelease(vals, qa, epsilon, eps_q, lo, hi)


# ---------------------------------------------------------------------------------------------
# Credible intervals for the percentiles of a released histogram
# ---------------------------------------------------------------------------------------------


def posterior_count_samples(noisy_counts: Any, epsilon_bin: float, *, size: int, rng=None) -> np.ndarray:
    """Draws of the true bin counts given the noisy ones: shape (size, M), or (rows, size, M) for 2-D input.

    Model: noisy_j = c_j + Z_j with Z_j independent two-sided geometric (parameter epsilon_bin).
    Prior: flat on *all* integers c_j (negative values allowed), so the posterior is exactly
    c = noisy - Z': the confidence distribution of the count vector (a pivot: noisy - c has a known
    law). We do not truncate at c_j >= 0: with a flat prior on c_j >= 0 every empty bin gets
    spurious posterior mass (mean about 1/epsilon_bin) and intervals for small cells miss the truth
    (measured over 1,000 releases: nominal 90% intervals covered P50 53% and P75 17% of the time for
    n = 60 with 21 PSEO bins, and under 1% for n = 200 with 20 even bins, epsilon = 1); without
    truncation coverage is within 2% of nominal (tested).
    """
    eps = check_epsilon(epsilon_bin, "epsilon per bin")
    try:
        y = np.asarray(noisy_counts, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"noisy counts must be numbers ({exc})") from None
    if y.ndim not in (1, 2) or y.size == 0 or not np.all(np.isfinite(y)):
        raise DPInputError(
            "noisy counts must be a non-empty 1-D (or 2-D: one histogram per row) array of finite numbers"
        )
    size = check_int(size, "size", minimum=1)
    shape = (size, y.shape[0]) if y.ndim == 1 else (y.shape[0], size, y.shape[1])
    z = noise.sample_two_sided_geometric(eps, shape, rng=rng)
    yy = np.round(y).astype(np.int64)
    return (yy[None, :] if y.ndim == 1 else yy[:, None, :]) - z


@dataclass(frozen=True)
class PercentileIntervals:
    """Equal-tailed credible intervals for percentiles of a released histogram.

    target="histogram": the percentile eq. (4.2) would read off the *true* histogram (the
    mechanism's own target; within-bin interpolation error not included).
    target="data": the true order statistic x_(M) of the cell, M = ceil(q n / 100). It lies in the
    bin where the true cumulative count first reaches q n / 100, so the interval runs from a
    lower quantile of that bin's lower edge to an upper quantile of its upper edge: no assumption
    about earnings inside a bin, hence wider (conservative). Values outside the edges were
    counted in the end bins, so for a percentile that falls there the interval is for the
    clipped value.
    Arrays have shape (len(q),), or (rows, len(q)) when several histograms were given.
    """

    lower: np.ndarray
    upper: np.ndarray
    center: np.ndarray  # posterior median of the histogram percentile
    q: np.ndarray
    level: float
    target: str
    n_samples: int


def percentile_credible_intervals(
    noisy_counts: Any,
    edges: Any = PSEO_BIN_EDGES,
    *,
    epsilon_bin: float,
    q: Any = (25, 50, 75),
    level: float = 0.9,
    n_samples: int = 1000,
    target: str = "histogram",
    rng=None,
) -> PercentileIntervals:
    """Credible intervals: sample true counts (:func:`posterior_count_samples`), push every sample
    through the eq. (4.2) rule, take equal-tailed quantiles. Uses only the release and public
    parameters (edges, epsilon per bin): post-processing, no privacy cost.

    ``noisy_counts`` 1-D (one histogram) or 2-D (one per row, vectorised). Frequentist coverage
    for a fixed cell under repeated noise is checked by simulation in the tests (within 2% of
    nominal for target="histogram", at least nominal for target="data").
    """
    edges = check_edges(edges)
    qa = _check_q(q)
    level = check_probability(level, "level")
    if target not in ("histogram", "data"):
        raise DPInputError(f"target must be 'histogram' or 'data', got {target!r}")
    y = np.asarray(noisy_counts)
    if y.ndim not in (1, 2) or y.shape[-1] != edges.size - 1:
        raise DPInputError(f"noisy counts must have one entry per bin ({edges.size - 1})")
    n_samples = check_int(n_samples, "n_samples", minimum=100)
    samples = posterior_count_samples(y, epsilon_bin, size=n_samples, rng=rng)
    rows = 1 if y.ndim == 1 else y.shape[0]
    vals, j = _rule(samples.reshape(-1, edges.size - 1), edges, qa, "none")
    vals = vals.reshape(rows, n_samples, qa.size)
    j = j.reshape(rows, n_samples, qa.size)
    a = (1.0 - level) / 2.0
    if target == "histogram":
        lo = np.quantile(vals, a, axis=1, method="inverted_cdf")
        hi = np.quantile(vals, 1.0 - a, axis=1, method="inverted_cdf")
    else:
        lo = np.quantile(edges[j], a, axis=1, method="inverted_cdf")
        hi = np.quantile(edges[j + 1], 1.0 - a, axis=1, method="inverted_cdf")
    center = np.median(vals, axis=1)
    if y.ndim == 1:
        lo, hi, center = lo[0], hi[0], center[0]
    return PercentileIntervals(lo, hi, center, qa, level, target, n_samples)


# ---------------------------------------------------------------------------------------------
# Accuracy (Section 5.2)
# ---------------------------------------------------------------------------------------------


def relative_accuracy(protected: Any, true: Any) -> np.ndarray:
    """Eq. (5.1): 1 - |protected - true| / true (1 is perfect; 0 is as bad as always answering 0).

    ``true`` must be > 0 (PSEO earnings are above $10,000, Section 5.2). Broadcasts.
    """
    p = np.asarray(protected, dtype=float)
    t = np.asarray(true, dtype=float)
    if not np.all(np.isfinite(t)) or np.any(t <= 0):
        raise DPInputError("relative accuracy needs true values > 0 (eq. 5.1 divides by the true value)")
    if not np.all(np.isfinite(p)):
        raise DPInputError("protected values must be finite numbers")
    return 1.0 - np.abs(p - t) / t


def summed_l1_error(protected: Any, true: Any) -> np.ndarray:
    """Sum over percentiles (last axis) of |protected - true| (the paper's Figure 6 measure)."""
    p = np.asarray(protected, dtype=float)
    t = np.asarray(true, dtype=float)
    if not (np.all(np.isfinite(p)) and np.all(np.isfinite(t))):
        raise DPInputError("values must be finite numbers")
    return np.abs(p - t).sum(axis=-1)


# ---------------------------------------------------------------------------------------------
# Vectorised simulation helpers (Figures 1-3, accuracy curves)
# ---------------------------------------------------------------------------------------------


def cell_bin_counts(values: np.ndarray, cell: np.ndarray, n_cells: int, edges: np.ndarray) -> np.ndarray:
    """True bin counts of many cells at once, shape (n_cells, M) (out-of-range values clipped)."""
    edges = check_edges(edges)
    m = edges.size - 1
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, m - 1)
    return np.bincount(cell * m + idx, minlength=n_cells * m).reshape(n_cells, m)


def simulate_histogram_percentiles(
    counts: np.ndarray,
    edges: np.ndarray,
    *,
    epsilon: float,
    q: Any,
    n_draws: int,
    rng=None,
    relation: str = "replace",
    postprocess: str = "none",
) -> np.ndarray:
    """Percentiles of ``n_draws`` noisy releases of each histogram row: shape (n_draws, rows, Q)."""
    edges = check_edges(edges)
    qa = _check_q(q)
    eps_bin = epsilon_per_bin(epsilon, relation)
    c = np.atleast_2d(np.asarray(counts))
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    z = noise.sample_two_sided_geometric(eps_bin, (n_draws,) + c.shape, rng=rng)
    noisy = (c[None] + z).reshape(-1, c.shape[1])
    vals, _ = _rule(noisy, edges, qa, postprocess)
    return vals.reshape(n_draws, c.shape[0], qa.size)


def smooth_sensitivity_many_betas(
    values: Any, q: float, betas: Any, *, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> tuple[float, np.ndarray]:
    """(true percentile, S*_beta for every beta): the A^(k) profile is computed once for all betas."""
    lo, hi = _clip_range(lower, upper)
    x = np.sort(np.clip(_earnings(values), lo, hi))
    rank = percentile_rank(x.size, float(_check_q([q])[0]))
    b = np.asarray(betas, dtype=float)
    if np.any(~np.isfinite(b)) or np.any(b <= 0):
        raise DPInputError("betas must be positive numbers")
    best, _, _ = _smooth_from_profile(x, rank, lo, hi, b)
    return float(x[rank - 1]), best


# ---------------------------------------------------------------------------------------------
# The mechanism of every released PSEO histogram (planner, app release, command line)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HistogramDraw:
    """One draw of :class:`HistogramMechanism`: the noisy counts (cells x bins, int64), the percentiles read off
    them (cells x q, post-processing), and what drew the noise (public text)."""

    noisy_counts: np.ndarray
    percentiles: np.ndarray
    measurement: str
    privacy_map: str
    map_epsilon: float | None
    simulated: bool


@dataclass(frozen=True)
class HistogramMechanism:
    """The one mechanism of every released PSEO table (Foote et al. 2019, Section 4.1): every cell x bin count +
    discrete Laplace (the two-sided geometric law) of scale ``noise_scale``, then the eq. (4.2) read-off.

    Public parameters only: epsilon, the bin edges, the percentile levels, ``rows_per_person`` m and the
    neighbouring ``relation``. Replace-one (default): one person moves between two bins, changing two counts by
    1 each, and with m rows per person the whole table (all cells together) has L1 sensitivity 2m: scale 2m/epsilon
    is epsilon-DP (parallel composition over the disjoint cells is implied: one L1 ball for the whole table).
    ``relation="add_remove"`` (the paper's Section 3.2, the planner's option): scale 1/epsilon, which is epsilon-DP
    for adding or removing one person and 2 epsilon under replace-one: the cost charged is 2 epsilon.
    Real draws: OpenDP's exact discrete Laplace on every core (:func:`dpcore.noise.secure.release_integer_counts`,
    one measurement for the whole table); simulations: the same law with numpy, one seeded draw per cell row.
    """

    epsilon: float
    edges: Any = None
    q: Any = (25.0, 50.0, 75.0)
    rows_per_person: int = 1
    relation: str = "replace"

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        # a tuple, so that two mechanisms with the same public parameters compare equal
        object.__setattr__(
            self, "edges", tuple(float(v) for v in check_edges(PSEO_BIN_EDGES if self.edges is None else self.edges))
        )
        object.__setattr__(self, "q", tuple(float(v) for v in _check_q(self.q)))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))
        object.__setattr__(self, "relation", _check_relation(self.relation))
        if self.relation == "add_remove" and self.rows_per_person > 1:
            raise DPInputError("relation 'add_remove' is offered for one row per person only")

    @property
    def sensitivity(self) -> int:
        """L1 sensitivity of the whole table under replace-one: 2m."""
        return 2 * self.rows_per_person

    @property
    def noise_scale(self) -> float:
        """Scale of the discrete Laplace on every count: 2m/epsilon (replace), 1/epsilon (add_remove)."""
        return self.rows_per_person / epsilon_per_bin(self.epsilon, self.relation)

    def privacy_cost(self):
        """Replace-one cost: epsilon (relation "replace"), 2 epsilon (relation "add_remove")."""
        from . import budget

        return budget.pure(2.0 * self.epsilon if self.relation == "add_remove" else self.epsilon)

    def record(self) -> dict[str, Any]:
        """The public description every release record of this statistic carries."""
        return {
            "noise": (
                f"discrete Laplace, scale {'2m' if self.relation == 'replace' else 'm'}/epsilon = "
                f"{self.noise_scale!r} on every cell x bin count (L1 sensitivity of the whole table "
                f"{self.sensitivity})"
            ),
            "bin_edges": list(self.edges),
            "q": list(self.q),
            "relation": self.relation,
            "noise_scale": self.noise_scale,
            "read_off": "eq. (4.2) of Foote et al. on each noisy histogram (post-processing)",
        }

    def draw(self, counts: Any, rng: Any = None) -> HistogramDraw:
        """Noisy counts and percentiles for a (cells x bins) table of integer counts. ``rng`` None: the real
        sampler; a numpy Generator or seed: a simulation (one seeded draw per cell, NOT a release)."""
        from .noise import secure as secure_noise

        table = np.asarray(counts)
        if table.ndim != 2 or table.shape[1] != len(self.edges) - 1:
            raise DPInputError(f"counts must be a (cells x {len(self.edges) - 1}) table, got shape {table.shape}")
        table = table.astype(np.int64)
        if table.shape[0] == 0:
            return HistogramDraw(
                table,
                np.zeros((0, len(self.q))),
                "none: no cells",
                "no data-dependent output",
                None,
                secure_noise._simulated(rng),
            )
        if not secure_noise._simulated(rng):
            d = secure_noise.release_integer_counts(
                table.ravel(), scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity
            )
            noisy = np.asarray(d.values, dtype=np.int64).reshape(table.shape)
            measurement, privacy_map, map_eps, simulated = d.measurement, d.privacy_map, d.epsilon, False
        else:
            rows = [
                secure_noise.release_integer_counts(row, scale=self.noise_scale, rng=rng, sensitivity=self.sensitivity)
                for row in table
            ]
            noisy = np.vstack([np.asarray(d.values, dtype=np.int64) for d in rows])
            measurement, privacy_map, map_eps, simulated = (
                rows[0].measurement,
                rows[0].privacy_map,
                rows[0].epsilon,
                True,
            )
        values = np.atleast_2d(percentiles_from_histogram(noisy.astype(float), np.asarray(self.edges), list(self.q)))
        return HistogramDraw(
            noisy, values.reshape(table.shape[0], len(self.q)), measurement, privacy_map, map_eps, simulated
        )

    def simulate(self, counts: Any, n_draws: int, rng: Any = None) -> np.ndarray:
        """Percentiles of ``n_draws`` simulated releases of each row: (n_draws, cells, q) (numpy, vectorised)."""
        return simulate_histogram_percentiles(
            np.asarray(counts, dtype=float),
            np.asarray(self.edges),
            epsilon=self.epsilon,
            q=self.q,
            n_draws=n_draws,
            rng=rng,
            relation=self.relation,
        )


# ---------------------------------------------------------------------------------------------
# The exponential-mechanism quantile on a public candidate grid (plans' method = "exponential")
# ---------------------------------------------------------------------------------------------

#: the most quantiles one exponential-mechanism statistic releases per cell: epsilon is split across them
#: (sequential composition), so each added quantile makes every one noisier; beyond a few the histogram,
#: which gives every percentile (and the histogram itself) for one epsilon, is the better release
MAX_EXPONENTIAL_QUANTILES = 5
#: edges of the "pseo-fine" candidate grid
PSEO_FINE_EDGES = 1001
#: the named candidate grids of the exponential-mechanism quantile
CANDIDATE_SCHEMES = ("pseo-fine",)


def fine_candidate_grid(
    n_edges: int = PSEO_FINE_EDGES, *, lower: float = PSEO_LOWER, upper: float = PSEO_TOP
) -> np.ndarray:
    """The "pseo-fine" grid: ``n_edges`` geometrically spaced whole-dollar points from ``lower`` to ``upper``
    (PSEO's range, $10,000 to the 99.9th percentile 614,597 of Table 1).

    Geometric: earnings are close to log-normal (Section 4.1.1), so a constant relative step (0.41% with
    1,001 edges: about $250 at a $60,000 median) gives every cell the same relative resolution. Public: a
    function of the parameters only, chosen without looking at any data."""
    n_edges = check_int(n_edges, "number of candidates", minimum=2, maximum=100_000)
    lo, hi = _clip_range(lower, upper)
    if lo <= 0:
        raise DPInputError(f"a geometric candidate grid needs lower > 0, got {lo:g}")
    grid = np.unique(np.round(np.geomspace(lo, hi, n_edges)))
    return check_edges(grid, "candidate grid")


def candidate_grid(candidates: Any = "pseo-fine") -> np.ndarray:
    """The public candidates of the exponential-mechanism quantile: a named grid ("pseo-fine",
    :func:`fine_candidate_grid`) or a strictly increasing list of edges (at least two)."""
    if isinstance(candidates, str):
        if candidates not in CANDIDATE_SCHEMES:
            raise DPInputError(
                f"candidates must be one of {', '.join(CANDIDATE_SCHEMES)} or a list of public "
                f"edges, got {candidates!r}"
            )
        return fine_candidate_grid()
    return check_edges(candidates, "candidate grid")


def _check_open_q(q: Any) -> tuple[float, ...]:
    qa = as_finite_array(q, "quantile levels", min_size=1)
    if np.any((qa <= 0) | (qa >= 100)):
        raise DPInputError(
            f"the exponential mechanism's quantile levels must be in (0, 100), got {qa.tolist()} "
            "(the 100th percentile is the maximum: no rank to aim at)"
        )
    if qa.size > MAX_EXPONENTIAL_QUANTILES:
        raise DPInputError(
            f"the exponential mechanism releases at most {MAX_EXPONENTIAL_QUANTILES} quantiles per "
            f"cell (epsilon is split across them), got {qa.size}; use the noisy histogram "
            "(method 'histogram'), which gives every percentile for one epsilon"
        )
    if np.unique(qa).size != qa.size:
        raise DPInputError(f"a quantile level is listed twice: {qa.tolist()}")
    return tuple(float(v) for v in qa)


@dataclass(frozen=True)
class ExponentialQuantileDraw:
    """One draw of :class:`ExponentialQuantileMechanism`: per cell and quantile the index of the chosen candidate
    (cells x q, int) and its value (cells x q, ordered along q), and what drew it (public text)."""

    choices: np.ndarray
    percentiles: np.ndarray
    measurement: str
    privacy_map: str
    map_epsilon: float | None
    simulated: bool


@dataclass(frozen=True)
class ExponentialQuantileMechanism:
    """Each cell's quantiles chosen among public candidates by the exponential mechanism (McSherry & Talwar 2007;
    Smith 2011, Algorithm 2 on a grid; the paper's footnote 6) in its report-noisy-max form.

    Public parameters only: ``epsilon`` (the whole statistic: epsilon / len(q) per quantile, sequential
    composition), ``candidates`` (a strictly increasing tuple of edges c_0 < ... < c_K; default None: the
    "pseo-fine" grid of :func:`fine_candidate_grid`, 1,001 geometric points from $10,000 to $614,597), the levels
    ``q`` in (0, 100) (at most :data:`MAX_EXPONENTIAL_QUANTILES`), ``rows_per_person`` m and ``cells_move``.

    Input: the (cells x K) histogram of the rows on the candidate grid (the engines' histogram scan with the
    candidates as edges; values outside [c_0, c_K) counted in the end bins, as every histogram here), so
    #(x < c_j) = C_j is a cumulative count and nothing is done per value. Score of candidate c_j for level q:
    u_j = -|C_j - q n / 100|, n the cell's number of rows (C_K = n).

    Neighbours and sensitivity: replace one person; n is the public cell size of the project's replace-one
    relation (``cells_move=False``: a person's rows keep their cells, their values change). One changed row
    moves every C_j of its cell by at most 1 and n not at all, so one person (m rows, in any cells) moves the
    score vectors of the cells by at most m_k in L-infinity, sum_k m_k <= m: score sensitivity m. With
    ``cells_move=True`` (plans with ``cell_sizes = "noisy"``) a row may also leave one cell and enter another:
    adding or removing a row changes u_j by at most max(q, 100 - q)/100 <= 1 in each of the two cells (n moves
    too), so the sensitivity is 2m. Each cell's choice is an independent mechanism whose privacy loss is
    linear in its own score change, so the cells together cost what one vector with the summed change costs.

    The draw: OpenDP ``make_noisy_max`` (MaxDivergence) on the score vector with scale b = 2 sensitivity /
    (epsilon / len(q)); its privacy map at d_in = sensitivity is 2 d_in / b = epsilon / len(q) (checked on every
    draw; the scores, the sensitivity and the scale are multiplied by one whole factor when the levels allow, so
    that OpenDP's int64 sampler, twice as fast, draws the same law). OpenDP adds exponential noise of scale b to
    every score and reports the argmax: report-noisy-max with
    exponential noise, which is the permute-and-flip mechanism (McKenna & Sheldon 2020; Ding et al. 2021):
    P(c_r) = p_r * integral_0^1 prod_{j != r} (1 - p_j t) dt with p_j = exp((u_j - max u) / b). It has the
    exponential mechanism's epsilon at the same scale and is never less accurate in expectation (McKenna &
    Sheldon, Theorem 2). OpenDP 0.16 offers the Gumbel-max law exp(epsilon u / (2 sensitivity)) only under zCDP:
    its deprecated ``make_report_noisy_max_gumbel`` is this same exponential-noise measurement (measured).
    Simulations (``rng`` given): numpy exponential noise, the argmax of the same law.

    Output: the chosen candidate c_j itself, not a point inside an interval. The score is exact at the edges
    (the grid histogram gives #(x < c_j) exactly) and says nothing about where rows lie inside a bin, so a
    uniform point would add error and no information; the best-scoring edges bracket the cell's order statistic
    x_(M), M = ceil(q n / 100), within one grid step. Several quantiles of a cell are drawn independently and
    then sorted (post-processing; with an ordered truth, sorting never increases any |error|^p summed over q).
    """

    epsilon: float
    candidates: Any = None
    q: Any = (50.0,)
    rows_per_person: int = 1
    cells_move: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_epsilon(self.epsilon))
        grid = candidate_grid() if self.candidates is None else candidate_grid(self.candidates)
        # a tuple, so that two mechanisms with the same public parameters compare equal
        object.__setattr__(self, "candidates", tuple(float(v) for v in grid))
        object.__setattr__(self, "q", _check_open_q(self.q))
        object.__setattr__(self, "rows_per_person", check_int(self.rows_per_person, "rows per person", minimum=1))
        if not isinstance(self.cells_move, bool):
            raise TypeError(f"cells_move must be True or False, got {self.cells_move!r}")

    @property
    def sensitivity(self) -> int:
        """L-infinity change of all cells' score vectors that one person can cause: m (2m when rows move)."""
        return self.rows_per_person * (2 if self.cells_move else 1)

    @property
    def epsilon_per_quantile(self) -> float:
        return self.epsilon / len(self.q)

    @property
    def noise_scale(self) -> float:
        """Scale b of the exponential noise on every score: 2 sensitivity / (epsilon / len(q))."""
        return 2.0 * self.sensitivity / self.epsilon_per_quantile

    def privacy_cost(self):
        """epsilon (pure): epsilon / len(q) per quantile, composed sequentially over the quantiles."""
        from . import budget

        return budget.pure(self.epsilon)

    def record(self) -> dict[str, Any]:
        """The public description every release record of this statistic carries."""
        return {
            "method": "exponential",
            "mechanism": (
                "exponential-mechanism quantile on a public candidate grid, report-noisy-max form: "
                "OpenDP make_noisy_max (exponential noise = permute-and-flip) on the scores "
                "-|#(x < c) - q n / 100| of every candidate c, per cell and quantile"
            ),
            "noise": (
                f"exponential noise of scale 2 x sensitivity / (epsilon / {len(self.q)}) = "
                f"{self.noise_scale!r} on every score (score sensitivity {self.sensitivity}: "
                f"{'2m, rows may move between cells' if self.cells_move else 'm, cell sizes public'})"
            ),
            "epsilon_per_quantile": self.epsilon_per_quantile,
            "q": list(self.q),
            "candidates": list(self.candidates),
            "output": "the chosen candidate (an edge of the grid); several quantiles of a cell sorted",
        }

    def _table(self, counts: Any) -> np.ndarray:
        table = np.asarray(counts)
        k = len(self.candidates) - 1
        if table.ndim != 2 or table.shape[1] != k:
            raise DPInputError(f"counts must be a (cells x {k}) table on the candidate grid, got shape {table.shape}")
        if table.dtype.kind not in "iu":
            if not np.all(np.isfinite(table)) or np.any(table != np.round(table)):
                raise DPInputError("counts must be whole numbers of rows")
        table = table.astype(np.int64)
        if np.any(table < 0):
            raise DPInputError("counts must be >= 0 (rows per cell and candidate bin)")
        return table

    def scores(self, counts: Any) -> np.ndarray:
        """u = -|#(x < c_j) - q n / 100| for every cell, level and candidate: shape (cells, q, K + 1)."""
        table = self._table(counts)
        below = np.concatenate([np.zeros((table.shape[0], 1), dtype=np.int64), np.cumsum(table, axis=1)], axis=1)
        target = below[:, -1:].astype(float) * np.asarray(self.q)[None, :] / 100.0  # (cells, q)
        return -np.abs(below[:, None, :].astype(float) - target[:, :, None])

    def selection_probabilities(self, counts: Any) -> np.ndarray:
        """The exact law of the choice (permute-and-flip), shape (cells, q, K + 1): P(c_r) = p_r integral_0^1
        prod_{j != r} (1 - p_j t) dt, by Gauss-Legendre quadrature, exact for this polynomial of degree K."""
        u = self.scores(counts)
        p = np.exp((u - u.max(axis=2, keepdims=True)) / self.noise_scale)
        t, w = _gauss_legendre_unit(max(1, (p.shape[2] + 1) // 2))
        pt = p[..., None] * t  # (cells, q, K + 1, nodes); p t < 1 at every node (t < 1)
        log_one_minus = np.log1p(-pt)
        others = log_one_minus.sum(axis=2, keepdims=True) - log_one_minus
        prob = p * (np.exp(others) * w).sum(axis=3)
        return prob / prob.sum(axis=2, keepdims=True)

    def _ordered(self, choices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted along the levels: the k-th smallest level gets the k-th smallest choice (candidates increase)."""
        out = np.empty_like(choices)
        out[..., np.argsort(self.q, kind="stable")] = np.sort(choices, axis=-1)
        return out, np.asarray(self.candidates)[out]

    def draw(self, counts: Any, rng: Any = None) -> ExponentialQuantileDraw:
        """The chosen candidates of a (cells x K) table of counts on the grid. ``rng`` None: OpenDP (a real
        release); a numpy Generator or seed: a simulation of the same law (NOT a release)."""
        from .noise import secure as secure_noise

        u = self.scores(counts)
        if secure_noise._simulated(rng):
            return ExponentialQuantileDraw(
                *self._ordered(self._simulated_choices(u, as_generator(rng))),
                f"numpy simulation of report-noisy-max with exponential noise, scale {self.noise_scale!r}",
                "simulation: no privacy map",
                self.epsilon_per_quantile,
                True,
            )
        n_max = int(np.max(np.sum(self._table(counts), axis=1), initial=0))
        factor = self._score_factor(n_max)
        if factor is not None:  # the same scores times a whole factor: OpenDP's integer sampler is twice as fast
            u = np.rint(u * factor).astype(np.int64)
        measurement, map_eps = self._measurement(factor)
        choices = _noisy_max_on_cores(measurement, u.reshape(-1, u.shape[2])).reshape(u.shape[:2])
        atom = "f64" if factor is None else "i64"
        scale, d_in = (
            (self.noise_scale, self.sensitivity)
            if factor is None
            else (factor * self.noise_scale, factor * self.sensitivity)
        )
        text = (
            f"OpenDP make_noisy_max(vector_domain(atom_domain(T={atom})), linf_distance(T={atom}), "
            f"max_divergence(), scale={scale!r}) per cell and quantile"
            + ("" if factor is None else f", on the scores times {factor} (whole numbers)")
        )
        return ExponentialQuantileDraw(
            *self._ordered(choices),
            text,
            f"d_in -> 2 d_in / scale; at d_in = {d_in}: {map_eps!r} per quantile",
            map_eps,
            False,
        )

    def _score_factor(self, n_max: int) -> int | None:
        """D = 100 x 10^d (d <= 4 the decimals of the levels), so that D u = -|D #(x < c) - (10^d q) n| is a whole
        number; None (float scores) when the levels have more decimals or D n could leave int64. Multiplying the
        scores, their sensitivity and the noise scale by D changes neither the law of the choice nor the map."""
        for decimals in range(5):
            scaled = np.asarray(self.q) * 10**decimals
            if np.all(np.abs(scaled - np.round(scaled)) < 1e-9):
                factor = 100 * 10**decimals
                return factor if factor * max(n_max, 1) < 2**60 else None
        return None

    def _measurement(self, factor: int | None = None) -> tuple[Any, float]:
        """OpenDP's noisy max at this scale, on float scores (``factor`` None) or on the scores times ``factor``
        (int64), and its privacy map at the stated sensitivity (refused above epsilon / len(q))."""
        from .noise.guarantees import load_opendp

        dp = load_opendp()
        if factor is None:
            space = dp.vector_domain(dp.atom_domain(T=float, nan=False)), dp.linf_distance(T=float)
            meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=self.noise_scale)
            map_eps = float(meas.map(float(self.sensitivity)))
        else:
            space = dp.vector_domain(dp.atom_domain(T="i64")), dp.linf_distance(T="i64")
            meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=float(factor * self.noise_scale))
            map_eps = float(meas.map(int(factor * self.sensitivity)))
        if map_eps > self.epsilon_per_quantile * (1 + 1e-9):
            raise DPInputError(
                f"OpenDP's privacy map gives {map_eps!r} per quantile, above the charged "
                f"{self.epsilon_per_quantile!r}: refusing to draw"
            )
        return meas, map_eps

    def _simulated_choices(self, u: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        return np.argmax(u + gen.exponential(self.noise_scale, u.shape), axis=-1)

    def simulate(self, counts: Any, n_draws: int, rng: Any = None) -> np.ndarray:
        """Quantiles of ``n_draws`` simulated releases of each cell: (n_draws, cells, q) (numpy, chunked so that
        at most about 4 million noise values are held at once)."""
        n_draws = check_int(n_draws, "n_draws", minimum=1)
        gen = as_generator(rng)
        u = self.scores(counts)
        per_draw = max(u.size, 1)
        chunk = max(1, 4_000_000 // per_draw)
        out = np.empty((n_draws,) + u.shape[:2])
        for start in range(0, n_draws, chunk):
            stop = min(n_draws, start + chunk)
            choices = self._simulated_choices(np.broadcast_to(u, (stop - start,) + u.shape), gen)
            out[start:stop] = self._ordered(choices)[1]
        return out


@lru_cache(maxsize=8)
def _gauss_legendre_unit(n_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights on [0, 1] (cached: 0.3 s for the 501 nodes of the "pseo-fine" grid)."""
    nodes, weights = np.polynomial.legendre.leggauss(n_nodes)
    t, w = (nodes + 1.0) / 2.0, weights / 2.0
    t.setflags(write=False)
    w.setflags(write=False)
    return t, w


def _noisy_max_on_cores(measurement: Any, scores: np.ndarray) -> np.ndarray:
    """``measurement`` (OpenDP noisy max) on every row of ``scores``, rows split across a thread pool: each call
    is independent and OpenDP releases the GIL while it samples, so the law is that of one call per row."""
    from .defaults import available_cores

    rows = np.ascontiguousarray(scores)
    out = np.empty(rows.shape[0], dtype=np.int64)

    def run(lo: int, hi: int) -> None:
        for i in range(lo, hi):
            out[i] = int(measurement(rows[i]))

    workers = max(1, min(available_cores(), rows.shape[0] // 64))
    if workers == 1:
        run(0, rows.shape[0])
        return out
    from concurrent.futures import ThreadPoolExecutor

    cuts = np.linspace(0, rows.shape[0], workers + 1).round().astype(np.int64)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dpcore-noisy-max") as pool:
        for done in [pool.submit(run, int(cuts[i]), int(cuts[i + 1])) for i in range(workers)]:
            done.result()
    return out
