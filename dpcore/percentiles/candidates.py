"""The public candidate grids of the exponential-mechanism quantile (plans' ``method = "exponential"``) and the
most quantiles one such statistic releases per cell. The mechanisms of every released percentile (the PSEO
histogram and the exponential-mechanism quantile: their costs and draws) are
:class:`dpcore.mechanisms.HistogramMechanism` and :class:`dpcore.mechanisms.ExponentialQuantileMechanism`."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..validation import DPInputError, check_int
from .common import PSEO_LOWER, PSEO_TOP, check_clip_range, check_edges

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
    lo, hi = check_clip_range(lower, upper)
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
