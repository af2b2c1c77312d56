"""How wide the published intervals will be at an epsilon, before any budget is spent: each statistic's interval
computed with the functions a release publishes its intervals with (``dpcore.intervals``)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import intervals as intervals_lib
from ... import planner
from ...validation import DPInputError, as_generator, check_epsilon, check_int, check_probability

#: simulated noisy histograms behind a percentile interval's expected width (seeded; the median over them)
INTERVAL_DRAWS = 200
#: largest bin-noise scale at which a percentile interval's width is computed: the exact law of the noisy
#: cumulative counts is a convolution whose support, and cost, grow with the scale (docs/benchmarks.md, "Timings behind choices in the code");
#: above it the width is not computed (the ``note`` says so)
INTERVAL_MAX_BIN_SCALE = 20.0
#: smallest epsilon at which a Gini interval's width is computed: below it the optimiser of the split certifies
#: its calibrations for longer, the more so the smaller epsilon (docs/benchmarks.md, "Timings behind choices in the code")
INTERVAL_MIN_GINI_EPSILON = 0.05


@dataclass(frozen=True)
class IntervalWidth:
    """The expected width of the interval a release publishes for one statistic at ``epsilon``, at ``level``.

    ``widths``: one per released number (``labels``), in ``unit``; ``inf`` when the interval is open-ended (a
    percentile in the top bin, whose interval reaches the support's end). ``method`` says how it was computed;
    ``note`` why there is none (``widths`` empty: the statistic's release publishes no interval)."""

    statistic: str
    kind: str
    epsilon: float
    level: float
    labels: tuple[str, ...]
    widths: tuple[float, ...]
    unit: str
    method: str
    note: str = ""

    @property
    def widest(self) -> float | None:
        """The largest width over the released numbers (None without an interval)."""
        finite = [w for w in self.widths if not math.isnan(w)]
        return max(finite) if finite else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "kind": self.kind,
            "epsilon": self.epsilon,
            "level": self.level,
            "labels": list(self.labels),
            "widths": list(self.widths),
            "widest": self.widest,
            "unit": self.unit,
            "method": self.method,
            "note": self.note,
        }


def _mean_widths(stat: Any, eps: float, level: float, sizes: np.ndarray) -> tuple[np.ndarray, str]:
    """Exact: the published mean interval over a public n is value -+ q_level(|Laplace(b)|) / n, b the OpenDP scale
    of the clipped sum in cents / 100 (:func:`dpcore.intervals.mean_interval`), cut to the clip range."""
    scale = stat.mechanism_at(eps).noise_scale_cents / 100.0
    half = intervals_lib.laplace_quantile(level, scale) / sizes
    return np.minimum(2.0 * half, stat.upper - stat.lower), "exact: Laplace quantile of the sum's noise / public n"


def _percentile_widths(stat: Any, eps: float, level: float, seed: int) -> tuple[np.ndarray, str]:
    """Median over :data:`INTERVAL_DRAWS` seeded noisy histograms (the mechanism's discrete Laplace law) of
    :func:`dpcore.intervals.percentile_interval`'s width, n public; cells with fewer than 2 records: NaN.

    With several planning data sets (``stat.draw_counts``: planning data drawn from a DP snapshot's law), the
    noisy histograms take them in turn, so the median is over the data sets and the noise together: the width a
    release has with probability 1/2 given what the snapshot says of the data. On one data set the interval spans
    one bin or two depending on a few people around the bin edge next to the percentile (a step in epsilon at a
    position the snapshot knows only to 1.5-6% of the ranks); averaged over the data sets, the step becomes the
    share of them on each side. On the records themselves (one data set) this is the width on them."""
    mech = stat.mechanism_at(eps)
    tables = np.asarray(getattr(stat, "draw_counts", stat.confidential_counts[None]), dtype=float)
    counts = tables[np.arange(INTERVAL_DRAWS) % tables.shape[0]]  # (INTERVAL_DRAWS, cells, bins)
    sizes = counts.sum(axis=2)
    q = math.exp(-1.0 / mech.noise_scale)
    gen = as_generator(seed)
    shape = counts.shape
    noise = gen.geometric(1.0 - q, shape) - gen.geometric(1.0 - q, shape)  # P(k) ∝ q^|k|: discrete Laplace
    widths = np.full((counts.shape[1], len(stat.q)), np.nan)
    ok = sizes[0] >= 2
    if ok.any():
        noisy = (counts[:, ok] + noise[:, ok]).reshape(-1, counts.shape[2])
        res = intervals_lib.percentile_interval(
            noisy, stat.edges, stat.q, scale=mech.noise_scale, level=level, n=sizes[:, ok].ravel()
        )
        w = np.asarray(res.width, dtype=float).reshape(INTERVAL_DRAWS, int(ok.sum()), len(stat.q))
        widths[ok] = np.median(w, axis=0)
    method = f"median over {INTERVAL_DRAWS} simulated noisy histograms (exact discrete Laplace law)"
    if tables.shape[0] > 1:
        method += f" of {tables.shape[0]} planning data sets drawn from the snapshot in turn"
    return widths.ravel(), method


def _gini_widths(stat: Any, eps: float, level: float) -> tuple[np.ndarray, str, str, float]:
    """The plan's median-width model (:attr:`dpcore.intervals.GiniIntervalPlan.model_width`: public inputs only) of
    the release with its DP bound on S_beta, planned at the statistic's public n; last, the median published width
    on the planning data (NaN when there is no width)."""
    from ...gini import GiniCalibration
    from ...mechanisms import GiniIntervalMechanism
    from .. import gini as gini_experiments

    if stat.noise not in gini_experiments.PUBLISHED_NOISES:
        return np.zeros(0), "", "this noise is never released, so it has no published interval", math.nan
    if eps < INTERVAL_MIN_GINI_EPSILON:
        return (
            np.zeros(0),
            "",
            (
                f"not computed below ε = {INTERVAL_MIN_GINI_EPSILON:g} (the split's optimisation "
                "takes long there); the interval would be wide"
            ),
            math.nan,
        )
    delta = None if stat.noise == "cauchy" else stat.delta
    mech = GiniIntervalMechanism(
        eps,
        stat.lower,
        stat.upper,
        noise=stat.noise,
        gamma=stat.gamma,
        calibration=stat.calibration,
        delta=delta,
        level=level,
        planning_n=max(int(stat.values.size), 2),
    )
    full = GiniCalibration(
        eps, stat.lower, stat.upper, noise=stat.noise, gamma=stat.gamma, calibration=stat.calibration, delta=delta
    )
    plan = mech.plan
    width, _ = gini_experiments.expected_widths(plan, full)
    # the model assumes a mean of U/5; on the planning data the median width is about 2 q clamp(S_beta(X)/alpha) (the
    # bound's noise has median 0), a planning number like the error columns beside it
    constants = mech.interval_constants()
    scale = min(
        max(stat.confidential_smooth_sensitivity(eps, plan.beta) / constants["release_alpha"], constants["min_scale"]),
        constants["max_scale"],
    )
    # the published interval is cut to [0, 1]: its typical width (the Gini page's) never exceeds 1
    typical = gini_experiments.typical_clipped_width(
        float(stat.truth[0]), scale, plan.quantile() * scale, mech.value_mechanism.noise_law()
    )
    return (
        np.array([width]),
        f"planning model of the release's split (n = {plan.n:,}; no data)",
        f"on the planning data: typically {typical:.4f}",
        float(typical),
    )


def _ratio_widths(stat: Any, eps: float, level: float) -> tuple[np.ndarray, str]:
    """Shoham & Ligett's interval (:func:`dpcore.intervals.relative_risk_interval`) at the expected noisy counts
    (the noise has mean 0, so they are the planning counts)."""
    ci = intervals_lib.relative_risk_interval(
        stat.x, stat.y, stat.n_x, stat.n_y, scale=stat.mechanism_at(eps).noise_scale, level=level
    )
    return np.array([ci.width]), "Shoham & Ligett's interval at the expected noisy counts"


#: the unit of each kind's published interval (and of an absolute half-width target)
INTERVAL_UNITS = {
    "mean": "income units",
    "group_means": "income units",
    "percentiles": "earnings units",
    "group_medians": "income units",
    "gini": "Gini points",
    "ratio": "relative-risk units",
    "count": "people",
}


def expected_interval_width(
    stat: planner.PlannedStatistic, epsilon: float, *, level: float = intervals_lib.DEFAULT_LEVEL, seed: int = 0
) -> IntervalWidth:
    """How wide the interval a release publishes for ``stat`` will be at ``epsilon`` (``level``, default 0.95),
    computed with the functions the release publishes its intervals with (``dpcore.intervals``):

    * mean, group means: exact, 2 q_level(|Laplace|) b / n with the OpenDP scale b of the clipped sum and the
      public n (per group), cut to the clip range;
    * percentiles, group medians (noisy histogram): the median width of :func:`dpcore.intervals.percentile_interval`
      over :data:`INTERVAL_DRAWS` simulated noisy histograms of the planning cells (``seed``); the exponential
      mechanism publishes no interval (``note``);
    * relative risk: Shoham & Ligett's interval at the expected noisy counts (the planning counts);
    * Gini: the planning model's median width (:attr:`dpcore.intervals.GiniIntervalPlan.model_width`) of the
      release with its DP bound on S_beta, split optimised at the statistic's public n;
    * count: exact, 2 t with t the discrete Laplace quantile (:func:`dpcore.intervals.count_interval`, before its cut
      at 0).

    Planning numbers: the widths of percentiles and relative risk depend on the planning data (as every planning
    number does); the mean's and the Gini's depend on public inputs only."""
    eps = check_epsilon(epsilon)
    lev = check_probability(level, "level")
    return expected_width_and_typical(stat, eps, lev, check_int(seed, "seed", minimum=0))[0]


def expected_width_and_typical(
    stat: planner.PlannedStatistic, eps: float, lev: float, seed: int
) -> tuple[IntervalWidth, float]:
    """:func:`expected_interval_width` (arguments checked) and, for the Gini, the median published width on the
    planning data (NaN for the other kinds): the number a half-width target is checked against."""
    note, kind, typical = "", stat.kind, math.nan
    stat_any: Any = stat  # each kind's own attributes (sizes, mechanism) are read below
    if kind in ("mean", "group_means"):
        sizes = np.asarray(stat_any.counts if kind == "group_means" else [stat_any.values.size], dtype=float)
        widths, method = _mean_widths(stat, eps, lev, sizes)
    elif kind in ("percentiles", "group_medians"):
        if getattr(stat, "method", "histogram") == "exponential":
            widths, method, note = np.zeros(0), "", "the exponential mechanism publishes no interval"
        elif stat_any.mechanism_at(eps).noise_scale > INTERVAL_MAX_BIN_SCALE:
            widths, method = np.zeros(0), ""
            note = (
                f"not computed at a bin noise scale above {INTERVAL_MAX_BIN_SCALE:g} (its exact law is slow to "
                "compute); the interval would be wide"
            )
        else:
            widths, method = _percentile_widths(stat, eps, lev, seed)
    elif kind == "gini":
        widths, method, note, typical = _gini_widths(stat, eps, lev)
    elif kind == "ratio":
        widths, method = _ratio_widths(stat, eps, lev)
    elif kind == "count":
        t = intervals_lib.discrete_laplace_quantile(lev, stat_any.mechanism_at(eps).noise_scale)
        widths, method = np.array([2.0 * t]), "exact: discrete Laplace quantile"
    else:  # pragma: no cover - every planner kind is listed above
        raise DPInputError(f"no published interval for statistic kind {kind!r}")
    labels = tuple(stat.labels) if widths.size else ()
    return IntervalWidth(
        stat.name, kind, eps, lev, labels, tuple(float(w) for w in widths), INTERVAL_UNITS.get(kind, ""), method, note
    ), typical


#: said instead of a width for a kind a view was asked to skip (``interval_skip``)
SKIPPED_NOTE = "not computed in this view (see Accuracy first)"


def expected_interval_widths(
    pairs: Sequence[tuple[planner.PlannedStatistic, float]], level: float | None, skip: Sequence[str] = ()
) -> tuple[IntervalWidth, ...]:
    """:func:`expected_interval_width` of each (statistic, epsilon); settings a release refuses (e.g. no feasible
    split of a Gini's epsilon) give a width-less entry whose ``note`` says why, as do the kinds in ``skip``."""
    if level is None:
        return ()

    def without_width(stat: planner.PlannedStatistic, eps: float, note: str) -> IntervalWidth:
        return IntervalWidth(
            stat.name, stat.kind, float(eps), float(level), (), (), INTERVAL_UNITS.get(stat.kind, ""), "", note
        )

    out = []
    for stat, eps in pairs:
        if stat.kind in skip:
            out.append(without_width(stat, eps, SKIPPED_NOTE))
            continue
        try:
            out.append(expected_interval_width(stat, eps, level=level))
        except ValueError as exc:
            out.append(without_width(stat, eps, f"no published interval at these settings ({exc})"))
    return tuple(out)
