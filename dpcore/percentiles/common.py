"""PSEO's bins, the checks of the public inputs every percentile method shares, and the paper's accuracy measures.

Bins: Section 4.1.1, Table 1 and footnote 18 of Foote, Machanavajjhala & McKinney (2019) (see
:mod:`dpcore.percentiles` for the choices where the paper is inconsistent). Public: the edges, the levels, the
relation, the earnings range; a cell's earnings are confidential (only checked here).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..lazy import special
from ..validation import (
    DPInputError,
    as_finite_array,
    check_epsilon,
    check_finite,
    check_int,
    check_positive,
    check_probability,
)

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


def check_relation(relation: str) -> str:
    if relation not in RELATIONS:
        raise DPInputError(f"relation must be 'replace' or 'add_remove', got {relation!r}")
    return relation


def epsilon_per_bin(epsilon: float, relation: str = "replace") -> float:
    """The geometric-noise parameter of each bin for a histogram that is epsilon-DP overall.

    replace (default): one person moves between two bins, L1 sensitivity 2 -> epsilon / 2.
    add_remove (the paper's Section 3.2): one count changes by 1, L1 sensitivity 1 -> epsilon.
    """
    epsilon = check_epsilon(epsilon)
    return epsilon / 2.0 if check_relation(relation) == "replace" else epsilon


def check_earnings(values: Any, name: str = "earnings", *, min_size: int = 2) -> np.ndarray:
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


def check_q(q: Any) -> np.ndarray:
    qa = as_finite_array(q, "percentiles", min_size=1)
    if np.any((qa <= 0) | (qa > 100)):
        raise DPInputError(f"percentiles must be in (0, 100], got {qa.tolist()}")
    return qa


def check_clip_range(lower: float, upper: float) -> tuple[float, float]:
    lo = check_finite(lower, "lower")
    hi = check_finite(upper, "upper")
    if not lo < hi:
        raise DPInputError(f"lower must be below upper, got {lo:g} and {hi:g}")
    return lo, hi


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
