"""The histogram mechanism of PSEO (Foote et al. 2019, Section 4.1, Proposition 4.1), its eq. (4.2) read-off,
credible intervals for the percentiles of a released histogram, and vectorised helpers for many cells and draws."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import noise
from ..validation import DPInputError, check_epsilon, check_int, check_probability
from .common import PSEO_BIN_EDGES, check_earnings, check_edges, check_q, epsilon_per_bin


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
    x = check_earnings(values, min_size=min_size)
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
    qa = check_q(q)
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
    qa = check_q(q)
    h = noisy_histogram(values, edges, epsilon=epsilon, rng=rng, relation=relation)
    vals = percentiles_from_histogram(h.counts, h.edges, qa, postprocess=postprocess)
    c = np.maximum(h.counts, 0) if postprocess == "clip" else h.counts
    return PercentileRelease(
        vals, qa, h.counts, h.edges, h.epsilon, h.epsilon_per_bin, relation, postprocess, bool(c.sum() <= 0)
    )


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
    qa = check_q(q)
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
    qa = check_q(q)
    eps_bin = epsilon_per_bin(epsilon, relation)
    c = np.atleast_2d(np.asarray(counts))
    n_draws = check_int(n_draws, "n_draws", minimum=1)
    z = noise.sample_two_sided_geometric(eps_bin, (n_draws,) + c.shape, rng=rng)
    noisy = (c[None] + z).reshape(-1, c.shape[1])
    vals, _ = _rule(noisy, edges, qa, postprocess)
    return vals.reshape(n_draws, c.shape[0], qa.size)
