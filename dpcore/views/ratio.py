"""The ratio page's views (Shoham & Ligett 2025, *Differentially private ratio statistics*).

One function per view of ``app_pages/ratios.py``: settings (+ data) -> a frozen result with
``.to_dict()``. The page renders the result; its generated script is the same call followed by
``print(result.to_dict())``; tests call these functions directly. Mechanisms, intervals and
simulators live in :mod:`dpcore.ratio`; the ACS poverty counts in :mod:`dpcore.data`.

* :func:`sampling_view` - sampling distribution of the private vs non-private RR.
* :func:`intervals_view` - Katz / Theorem 4.2 / Theorem 4.5 intervals on one simulated study or on
  the user's released counts, and their coverage.
* :func:`coverage_heatmap_view` - coverage and width ratio over the (p_x, p_y) grid (Appendix D.2).
* :func:`accuracy_view` - sample accuracy of every algorithm against epsilon (Figure 1).
* :func:`bias_view` - bias of the ratio of noisy counts against n (Figure 2, Claim 3.4).
* :func:`odds_ratio_view` - odds ratio from a noisy 2x2 table, intervals and coverage.
* :func:`poverty_view` - the ACS example: poverty (POVPIP < 100) between two groups.

Randomness: every view draws from ``seed + offset`` with the page's fixed offsets (intervals 61,
odds ratio 71, poverty 81; coverage runs ``seed + i``), so the page, the script and the tests
see the same numbers.

Neighbouring relation: replace one person's record; n_x and n_y are public. Each count gets
noise for epsilon/2 (and delta/2 for Gaussian noise), so the pair is (epsilon, delta)-DP even if
one record changes both counts; intervals and ratios are post-processing. These are planning
simulations on public or synthetic settings; :func:`poverty_view` shows confidential counts of a
public-domain file only to teach what the noise does.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import ratio
from ..validation import DPInputError, check_int, check_positive, check_probability
from .plain import to_plain

__all__ = [
    "P_GRID",
    "N_SAMPLING",
    "N_COVER",
    "ACC_EPS",
    "BIAS_N",
    "COVER_SPECS",
    "HEATMAP_METHODS",
    "noised_counts",
    "SamplingView",
    "sampling_view",
    "IntervalsView",
    "intervals_view",
    "coverage_rows",
    "CoverageHeatmapView",
    "coverage_heatmap_view",
    "AccuracyView",
    "accuracy_view",
    "accuracy_curves",
    "BiasView",
    "bias_view",
    "bias_curve",
    "OddsRatioView",
    "odds_ratio_view",
    "PovertyView",
    "poverty_view",
]

#: The (p_x, p_y) grid of the coverage heatmaps (rows p_x, columns p_y).
P_GRID = tuple(round(0.1 * i, 1) for i in range(1, 10))
#: Simulated studies of the sampling view and of every coverage estimate.
N_SAMPLING = 20_000
N_COVER = 4_000
#: Epsilons of the accuracy curves and group sizes of the bias curve.
ACC_EPS = (0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0)
BIAS_N = (10, 20, 30, 50, 75, 100, 150, 200, 300, 500, 750, 1000, 2000)
#: Intervals whose coverage the intervals view simulates: (name, mechanism or None for the page's,
#: conservative, interval kind).
COVER_SPECS = (
    ("Katz (classic, no privacy)", "none", False, "katz"),
    ("Theorem 4.2, no privacy", "none", False, "normal"),
    ("Theorem 4.2 on noisy counts", None, False, "normal"),
    ("Theorem 4.5 conservative (adds noise variance)", None, True, "normal"),
)
#: Interval methods of the heatmaps: name -> (interval kind, conservative, private).
HEATMAP_METHODS = {
    "Theorem 4.5 conservative": ("normal", True, True),
    "Theorem 4.2 on noisy counts": ("normal", False, True),
    "Katz on noisy counts": ("katz", False, True),
    "Theorem 4.2, no privacy": ("normal", False, False),
    "Katz (classic, no privacy)": ("katz", False, False),
}


def _seed(seed: Any) -> int:
    return check_int(seed, "seed", minimum=0)


def _group_sizes(n_x: Any, n_y: Any) -> tuple[int, int]:
    """The public group sizes: integers >= 1 (2.5 refused, never truncated; a negative size named here,
    not numpy's bare 'n < 0' from the binomial draw)."""
    return check_int(n_x, "group size n_x", minimum=1), check_int(n_y, "group size n_y", minimum=1)


def noised_counts(
    x: Any, y: Any, *, epsilon: float, mechanism: str, delta: float | None, rng: np.random.Generator
) -> ratio.NoisedCounts:
    """The two released counts, each with noise for epsilon/2 (and delta/2): Laplace or analytic Gaussian."""
    if mechanism == "laplace":
        return ratio.laplace_noised_counts(x, y, epsilon=epsilon, rng=rng)
    if mechanism == "gaussian":
        if delta is None:  # ratio.count_noise's refusal, before the call that needs a number
            raise DPInputError("the Gaussian mechanism needs delta in (0, 1), e.g. 1e-5; got none")
        return ratio.gaussian_noised_counts(x, y, epsilon=epsilon, delta=delta, rng=rng)
    raise DPInputError(f"unknown mechanism {mechanism!r}; choose 'laplace' or 'gaussian'")


def _rr_row(name: str, ci: ratio.RRInterval) -> dict:
    return {"method": name, "estimate": ci.estimate, "lower": ci.lower, "upper": ci.upper, "width": ci.width}


# ---------------------------------------------------------------------------------------------
# Sampling distribution
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SamplingView:
    """Histograms (densities on 60 shared bins between the 0.5% and 99.5% quantiles) and summaries
    of ``N_SAMPLING`` simulated RR estimates without and with privacy noise."""

    bin_mid: np.ndarray
    density_nonprivate: np.ndarray
    density_private: np.ndarray
    sd_nonprivate: float
    sd_private: float
    median_nonprivate: float
    median_private: float
    mean_nonprivate: float
    mean_private: float
    true_rr: float

    @property
    def privacy_variance_share(self) -> float | None:
        """Share of the private estimate's variance due to the privacy noise (None when it is 0)."""
        return max(0.0, 1 - self.sd_nonprivate**2 / self.sd_private**2) if self.sd_private > 0 else None

    def to_dict(self) -> dict:
        return to_plain(
            {
                "sd_nonprivate": self.sd_nonprivate,
                "sd_private": self.sd_private,
                "median_nonprivate": self.median_nonprivate,
                "median_private": self.median_private,
                "mean_nonprivate": self.mean_nonprivate,
                "mean_private": self.mean_private,
                "share_of_variance_from_privacy": self.privacy_variance_share,
                "true_rr": self.true_rr,
                "histogram": {
                    "bin_mid": self.bin_mid,
                    "non-private": self.density_nonprivate,
                    "private": self.density_private,
                },
            }
        )


def sampling_view(
    p_x: float,
    p_y: float,
    n_x: int,
    n_y: int,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    seed: int,
) -> SamplingView:
    """:func:`dpcore.ratio.simulate_rr_sampling` (``N_SAMPLING`` studies, rng ``seed``) summarised."""
    s = ratio.simulate_rr_sampling(
        p_x, p_y, n_x, n_y, epsilon=epsilon, mechanism=mechanism, delta=delta, n_sims=N_SAMPLING, rng=_seed(seed)
    )
    lo, hi = np.quantile(np.concatenate([s.nonprivate, s.private]), [0.005, 0.995])
    edges = np.linspace(lo, hi, 61)
    h0, _ = np.histogram(s.nonprivate, edges, density=True)
    h1, _ = np.histogram(s.private, edges, density=True)
    return SamplingView(
        bin_mid=0.5 * (edges[:-1] + edges[1:]),
        density_nonprivate=h0,
        density_private=h1,
        sd_nonprivate=float(s.nonprivate.std()),
        sd_private=float(s.private.std()),
        median_nonprivate=float(np.median(s.nonprivate)),
        median_private=float(np.median(s.private)),
        mean_nonprivate=float(s.nonprivate.mean()),
        mean_private=float(s.private.mean()),
        true_rr=float(s.true_rr),
    )


# ---------------------------------------------------------------------------------------------
# Intervals
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class IntervalsView:
    """Relative-risk intervals on one study: simulated from (p_x, p_y) (``true_counts`` known, the
    noisy counts clipped at 1) or the user's released counts (``true_counts`` None). ``coverage``:
    one row per :data:`COVER_SPECS` entry (simulated studies only)."""

    true_counts: tuple[int, int] | None
    noisy_counts: tuple[float, float]
    intervals: tuple[dict, ...]
    privacy_share: float
    width_ratio: float
    noise_variance: float
    true_rr: float | None
    coverage: tuple[dict, ...] | None

    def to_dict(self) -> dict:
        out = {
            "true_counts": self.true_counts,
            "noisy_counts": self.noisy_counts,
            "intervals": self.intervals,
            "privacy_share_conservative": self.privacy_share,
            "conservative_width_over_theorem_4_2": self.width_ratio,
            "noise_variance_per_count": self.noise_variance,
            "true_rr": self.true_rr,
        }
        if self.coverage is not None:
            out["coverage"] = self.coverage
        return to_plain(out)


def coverage_rows(
    p_x: float,
    p_y: float,
    n_x: int,
    n_y: int,
    *,
    epsilon: float,
    mechanism: str,
    delta: float | None,
    level: float,
    seed: int,
) -> tuple[dict, ...]:
    """Coverage, its Monte Carlo s.e. and mean width of every :data:`COVER_SPECS` interval
    (``N_COVER`` studies each, rng ``seed + i``), and the width relative to the non-private Theorem 4.2."""
    rows: list[dict[str, Any]] = []
    base: float | None = None
    for i, (name, m, cons, kind) in enumerate(COVER_SPECS):
        res = ratio.simulate_rr_coverage(
            p_x,
            p_y,
            n_x,
            n_y,
            epsilon=epsilon,
            mechanism=m or mechanism,
            conservative=cons,
            delta=delta,
            n_sims=N_COVER,
            level=level,
            rng=_seed(seed) + i,
            interval=kind,
        )
        if name == "Theorem 4.2, no privacy":
            base = res.mean_width
        rows.append({"method": name, "coverage": res.coverage, "± (MC s.e.)": res.se, "mean width": res.mean_width})
    assert base is not None  # COVER_SPECS includes the non-private Theorem 4.2
    for r in rows:
        r["width / non-private width"] = r["mean width"] / base
    return tuple(rows)


def intervals_view(
    n_x: int,
    n_y: int,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    level: float = 0.95,
    seed: int,
    p_x: float | None = None,
    p_y: float | None = None,
    x_obs: float | None = None,
    y_obs: float | None = None,
) -> IntervalsView:
    """Give (p_x, p_y) to simulate one study (X ~ Bin(n_x, p_x), Y ~ Bin(n_y, p_y) and their noisy
    counts, rng ``seed + 61``), or (x_obs, y_obs) for released noisy counts. Intervals: Katz and
    Theorem 4.2 on the true counts (simulated study, both counts >= 1), Theorem 4.2 on the noisy
    counts, Theorem 4.5 (adds the known noise variance)."""
    n_x, n_y = _group_sizes(n_x, n_y)
    cn = ratio.count_noise(epsilon, mechanism=mechanism, delta=delta)
    simulated = x_obs is None
    X: int | None
    Y: int | None
    if simulated:
        if p_x is None or p_y is None or y_obs is not None:
            raise DPInputError("give either (p_x, p_y) for a simulated study or (x_obs, y_obs) released counts")
        p_x, p_y = check_probability(p_x, "p_x"), check_probability(p_y, "p_y")
        gen = np.random.default_rng(_seed(seed) + 61)
        X = int(gen.binomial(n_x, p_x))
        Y = int(gen.binomial(n_y, p_y))
        released = noised_counts(X, Y, epsilon=epsilon, mechanism=mechanism, delta=delta, rng=gen)
        xn, yn = released.x_noisy, released.y_noisy
    else:
        if x_obs is None or y_obs is None:  # x_obs is given here (not simulated)
            raise DPInputError("give both released noisy counts x_obs and y_obs")
        X = Y = None
        xn, yn = float(x_obs), float(y_obs)
    rows = []
    if X is not None and Y is not None and X >= 1 and Y >= 1:
        rows.append(_rr_row("Katz on true counts (no privacy)", ratio.katz_interval(X, Y, n_x, n_y, level=level)))
        rows.append(
            _rr_row(
                "Theorem 4.2 on true counts (no privacy)", ratio.rr_confidence_interval(X, Y, n_x, n_y, level=level)
            )
        )
    t42 = ratio.rr_confidence_interval(xn, yn, n_x, n_y, level=level, clip=simulated)
    rows.append(_rr_row("Theorem 4.2 on noisy counts", t42))
    cons = ratio.rr_confidence_interval(xn, yn, n_x, n_y, level=level, noise_variance=cn.variance, clip=simulated)
    rows.append(_rr_row("Theorem 4.5 conservative", cons))
    cov, true_rr = None, None
    if simulated:
        assert p_x is not None and p_y is not None  # checked above for a simulated study
        cov = coverage_rows(
            p_x, p_y, n_x, n_y, epsilon=epsilon, mechanism=mechanism, delta=delta, level=level, seed=seed
        )
        true_rr = p_x / p_y
    return IntervalsView(
        true_counts=None if X is None or Y is None else (X, Y),
        noisy_counts=(float(xn), float(yn)),
        intervals=tuple(rows),
        privacy_share=float(cons.privacy_share),
        width_ratio=float(cons.width / t42.width),
        noise_variance=float(cn.variance),
        true_rr=true_rr,
        coverage=cov,
    )


# ---------------------------------------------------------------------------------------------
# Coverage heatmaps
# ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _reference_width(n_x: int, n_y: int, level: float, n_sims: int, seed: int) -> np.ndarray:
    """Mean width of the non-private Theorem 4.2 interval on the grid (rng seed + 1; independent of epsilon)."""
    w = ratio.coverage_grid(
        P_GRID, n_x, n_y, epsilon=1.0, mechanism="none", n_sims=n_sims, level=level, rng=seed + 1
    ).mean_width
    w.setflags(write=False)
    return w


@dataclass(frozen=True)
class CoverageHeatmapView:
    """Coverage and mean width / width of the non-private Theorem 4.2 interval of one interval
    method on the :data:`P_GRID` x :data:`P_GRID` grid (rows p_x, columns p_y)."""

    method: str
    p_values: tuple[float, ...]
    coverage: np.ndarray
    width_ratio: np.ndarray
    n_sims: int
    level: float
    n_x: int
    n_y: int

    @property
    def small_counts(self) -> np.ndarray:
        """Cells with an expected count below 30 (the paper's rule of thumb)."""
        ps = np.array(self.p_values)
        return (self.n_x * ps[:, None] < 30) | (self.n_y * ps[None, :] < 30)

    def rows(self) -> list[dict]:
        return [
            {"p_x": a, "p_y": b, "coverage": float(self.coverage[i, j]), "width_ratio": float(self.width_ratio[i, j])}
            for i, a in enumerate(self.p_values)
            for j, b in enumerate(self.p_values)
        ]

    def to_dict(self) -> dict:
        return to_plain(
            {
                "method": self.method,
                "p_values": self.p_values,
                "coverage": self.coverage,
                "width_ratio": self.width_ratio,
                "n_sims": self.n_sims,
                "level": self.level,
            }
        )


def coverage_heatmap_view(
    n_x: int,
    n_y: int,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    level: float = 0.95,
    n_sims: int = 1000,
    method: str = "Theorem 4.5 conservative",
    seed: int,
) -> CoverageHeatmapView:
    """:func:`dpcore.ratio.coverage_grid` of ``method`` (:data:`HEATMAP_METHODS`, rng ``seed``); a
    non-private method ignores epsilon (same numbers for every epsilon)."""
    if method not in HEATMAP_METHODS:
        raise DPInputError(f"unknown interval method {method!r}; choose one of {list(HEATMAP_METHODS)}")
    kind, cons, private = HEATMAP_METHODS[method]
    seed = _seed(seed)
    n_x, n_y, n_sims = (check_int(v, name, minimum=1) for v, name in ((n_x, "n_x"), (n_y, "n_y"), (n_sims, "n_sims")))
    level = float(level)
    if private:
        g = ratio.coverage_grid(
            P_GRID,
            n_x,
            n_y,
            epsilon=epsilon,
            mechanism=mechanism,
            conservative=cons,
            delta=delta,
            n_sims=n_sims,
            level=level,
            rng=seed,
            interval=kind,
        )
    else:
        g = ratio.coverage_grid(
            P_GRID, n_x, n_y, epsilon=1.0, mechanism="none", n_sims=n_sims, level=level, rng=seed, interval=kind
        )
    return CoverageHeatmapView(
        method=method,
        p_values=P_GRID,
        coverage=g.coverage,
        width_ratio=g.mean_width / _reference_width(n_x, n_y, level, n_sims, seed),
        n_sims=n_sims,
        level=level,
        n_x=n_x,
        n_y=n_y,
    )


# ---------------------------------------------------------------------------------------------
# Accuracy and bias curves
# ---------------------------------------------------------------------------------------------


def accuracy_curves(x: int, y: int, n: int, alpha: float, epsilons: Sequence[float] = ACC_EPS) -> tuple[dict, ...]:
    """Sample accuracy 1 - beta of every algorithm (:func:`dpcore.ratio.sample_accuracy_all`) per epsilon."""
    return tuple(
        {"epsilon": e, "algorithm": name, "accuracy": 1.0 - float(beta)}
        for e in epsilons
        for name, beta in ratio.sample_accuracy_all(x, y, epsilon=e, alpha=alpha, n=n).items()
    )


@dataclass(frozen=True)
class AccuracyView:
    """Figure 1: for the counts x = round(p_x n_x), y = round(p_y n_y) and n = max(n_x, n_y), the
    probability that each algorithm lands within ``alpha`` of x/y, per epsilon."""

    x: int
    y: int
    n: int
    alpha: float
    rows: tuple[dict, ...]

    def to_dict(self) -> dict:
        return to_plain({"counts": [self.x, self.y], "n": self.n, "alpha": self.alpha, "accuracy": self.rows})


def accuracy_view(p_x: float, p_y: float, n_x: int, n_y: int, *, alpha: float = 0.1) -> AccuracyView:
    """The accuracy view (no randomness: every accuracy is exact). ``alpha`` is the accuracy target of
    Definition 2.2 ((alpha, beta)-sample accuracy): an absolute error in the ratio x/y, any number > 0
    (alpha >= x/y is valid: spec section 3.1 uses the general CDF there), not a probability."""
    n_x, n_y = _group_sizes(n_x, n_y)
    p_x, p_y = check_probability(p_x, "p_x"), check_probability(p_y, "p_y")
    alpha = check_positive(alpha, "accuracy target alpha")
    x, y = int(round(p_x * n_x)), int(round(p_y * n_y))
    n = max(n_x, n_y)
    return AccuracyView(x=x, y=y, n=n, alpha=alpha, rows=accuracy_curves(x, y, n, alpha))


def bias_curve(p_x: float, p_y: float, epsilon: float, ns: Sequence[int] = BIAS_N) -> tuple[dict, ...]:
    """Claim 3.4 averaged over binomial samples of n people per group: expected non-private and
    private ratio, and their relative biases, per n."""
    rows = []
    for n in ns:
        b = ratio.binomial_ratio_bias(n, p_x, p_y, epsilon=epsilon)
        rows.append(
            {
                "n": n,
                "true ratio": b.true_ratio,
                "E non-private": b.expected_nonprivate,
                "E private": b.expected_private,
                "non-private": b.bias_nonprivate / b.true_ratio,
                "private": b.bias_private / b.true_ratio,
            }
        )
    return tuple(rows)


@dataclass(frozen=True)
class BiasView:
    """Figure 2: relative bias of the ratio of (noisy) counts against the group size n."""

    p_x: float
    p_y: float
    epsilon: float
    rows: tuple[dict, ...]

    def to_dict(self) -> dict:
        return to_plain({"p_x": self.p_x, "p_y": self.p_y, "epsilon": self.epsilon, "bias": self.rows})


def bias_view(p_x: float, p_y: float, *, epsilon: float) -> BiasView:
    """The bias view (exact, no randomness)."""
    return BiasView(p_x=float(p_x), p_y=float(p_y), epsilon=float(epsilon), rows=bias_curve(p_x, p_y, epsilon))


# ---------------------------------------------------------------------------------------------
# Odds ratio
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OddsRatioView:
    """One simulated study's 2x2 table (true and noisy cells a, b, c, d), Woolf intervals for the
    odds ratio (on the true cells, on the noisy cells, and with the noise variance added) and the
    coverage of each over ``N_COVER`` studies."""

    true_cells: tuple[int, int, int, int]
    noisy_cells: tuple[float, float, float, float]
    intervals: tuple[dict, ...]
    true_or: float
    coverage: Mapping[str, tuple[float, float, float]]  # name -> (coverage, s.e., mean width)

    def to_dict(self) -> dict:
        return to_plain(
            {
                "true_cells": self.true_cells,
                "noisy_cells": self.noisy_cells,
                "odds_ratio_intervals": self.intervals,
                "true_odds_ratio": self.true_or,
                "coverage": {k: v[0] for k, v in self.coverage.items()},
                "coverage_se": {k: v[1] for k, v in self.coverage.items()},
            }
        )


def odds_ratio_view(
    p_x: float,
    p_y: float,
    n_x: int,
    n_y: int,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    level: float = 0.95,
    seed: int,
) -> OddsRatioView:
    """The odds-ratio view: X, Y and the noisy 2x2 table from rng ``seed + 71`` (each cell
    Laplace(2/epsilon) or the Gaussian equivalent, L1 sensitivity 2), coverage runs ``seed + 0/1/2``."""
    seed = _seed(seed)
    n_x, n_y = _group_sizes(n_x, n_y)
    p_x, p_y = check_probability(p_x, "p_x"), check_probability(p_y, "p_y")
    gen = np.random.default_rng(seed + 71)
    X = int(gen.binomial(n_x, p_x))
    Y = int(gen.binomial(n_y, p_y))
    table = ratio.noisy_two_by_two(X, n_x - X, Y, n_y - Y, epsilon=epsilon, mechanism=mechanism, delta=delta, rng=gen)

    def row(name: str, ci: ratio.ORInterval) -> dict:
        return {
            "method": name,
            "estimate": ci.estimate,
            "lower": ci.lower,
            "upper": ci.upper,
            "privacy share": ci.privacy_share,
        }

    rows = []
    if min(X, n_x - X, Y, n_y - Y) >= 1:
        rows.append(
            row("Woolf on true cells (no privacy)", ratio.or_confidence_interval(X, n_x - X, Y, n_y - Y, level=level))
        )
    rows.append(
        row("Woolf on noisy cells (ignores noise)", ratio.or_confidence_interval(*table.cells, level=level, clip=True))
    )
    rows.append(
        row(
            "Noisy cells + noise variance",
            ratio.or_confidence_interval(*table.cells, level=level, clip=True, noise_variance=table.noise_variance),
        )
    )
    cov = {}
    for cons in (False, True):
        r = ratio.simulate_or_coverage(
            p_x,
            p_y,
            n_x,
            n_y,
            epsilon=epsilon,
            mechanism=mechanism,
            delta=delta,
            conservative=cons,
            n_sims=N_COVER,
            level=level,
            rng=seed + int(cons),
        )
        cov["with noise variance" if cons else "ignoring the noise"] = (r.coverage, r.se, r.mean_width)
    r = ratio.simulate_or_coverage(
        p_x, p_y, n_x, n_y, epsilon=epsilon, mechanism="none", n_sims=N_COVER, level=level, rng=seed + 2
    )
    cov["no privacy"] = (r.coverage, r.se, r.mean_width)
    a, b, c, d = table.cells
    return OddsRatioView(
        true_cells=(X, n_x - X, Y, n_y - Y),
        noisy_cells=(float(a), float(b), float(c), float(d)),
        intervals=tuple(rows),
        true_or=p_x * (1 - p_y) / ((1 - p_x) * p_y),
        coverage=cov,
    )


# ---------------------------------------------------------------------------------------------
# The ACS example: poverty between two groups
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PovertyView:
    """People in poverty (POVPIP < 100) in two groups of the ACS excerpt: the public group sizes,
    the confidential counts (shown only to teach), the released noisy counts and three intervals."""

    column: str
    group_x: int
    group_y: int
    people: tuple[int, int]
    confidential_in_poverty: tuple[int, int]
    noisy_counts: tuple[float, float]
    intervals: tuple[dict, ...]
    rr_without_privacy: float
    rr_with_privacy: float
    privacy_share: float

    def to_dict(self) -> dict:
        return to_plain(
            {
                "column": self.column,
                "groups": [self.group_x, self.group_y],
                "people": self.people,
                "in_poverty_confidential": self.confidential_in_poverty,
                "noisy_counts": self.noisy_counts,
                "intervals": self.intervals,
                "privacy_share": self.privacy_share,
            }
        )


def poverty_view(
    column: str,
    group_x: int,
    group_y: int,
    *,
    epsilon: float,
    mechanism: str = "laplace",
    delta: float | None = None,
    level: float = 0.95,
    seed: int,
    frame: Any = None,
) -> PovertyView:
    """The ACS poverty example (``frame``: the ACS excerpt, loaded with :func:`dpcore.data.acs_frame`
    when None). The two counts get noise exactly as in the other views (rng ``seed + 81``)."""
    from ..data import acs_frame, poverty_counts

    if frame is None:
        frame = acs_frame(("POVPIP", "SEX", "RAC1P", "HISP"))
        if frame is None:
            raise DPInputError("the ACS excerpt is not available on this machine")
    cn = ratio.count_noise(epsilon, mechanism=mechanism, delta=delta)
    x, n_x, y, n_y = poverty_counts(frame, column, group_x, group_y)
    gen = np.random.default_rng(_seed(seed) + 81)
    rel = noised_counts(x, y, epsilon=epsilon, mechanism=mechanism, delta=delta, rng=gen)
    if x < 1 or y < 1:
        raise DPInputError(
            f"a group has nobody below the poverty line (x = {x}, y = {y}): the relative "
            "risk is 0 or undefined there; choose other groups"
        )
    truth = ratio.katz_interval(x, y, n_x, n_y, level=level)
    t42 = ratio.rr_confidence_interval(x, y, n_x, n_y, level=level)
    priv = ratio.rr_confidence_interval(rel.x_noisy, rel.y_noisy, n_x, n_y, level=level, noise_variance=cn.variance)
    rows = tuple(
        _rr_row(name, ci)
        for name, ci in (
            ("Katz on the confidential counts", truth),
            ("Theorem 4.2 on the confidential counts", t42),
            ("Theorem 4.5 on the noisy counts (private)", priv),
        )
    )
    return PovertyView(
        column=column,
        group_x=group_x,
        group_y=group_y,
        people=(n_x, n_y),
        confidential_in_poverty=(x, y),
        noisy_counts=(float(rel.x_noisy), float(rel.y_noisy)),
        intervals=rows,
        rr_without_privacy=float(t42.estimate),
        rr_with_privacy=float(priv.estimate),
        privacy_share=float(priv.privacy_share),
    )
