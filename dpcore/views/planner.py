"""The planner page's views: planning data + settings -> frozen results with ``.to_dict()``.

One function per view of ``app_pages/planner.py``; the page renders the result, the page's
generated script makes the same call (:func:`planner_view`) and prints ``result.to_dict()``:

* :func:`accuracy_first` - the smallest epsilon meeting each statistic's accuracy target
  (:func:`dpcore.planner.solve_epsilon`), their total under sequential composition, the largest
  attacker belief from a 1% prior at that total (:func:`dpcore.risk.max_posterior`), and a
  quantile dot plot of plausible releases per statistic at its epsilon;
* :func:`half_width_first` - accuracy first with the target stated on the published intervals: the smallest
  epsilon per statistic whose expected interval half-width meets a :class:`HalfWidthTarget`
  (:func:`solve_epsilon_for_half_width`, ±X in the statistic's unit or ±X% of its planning value), and the total;
* :func:`budget_first` - the accuracy each statistic reaches with a given split of a total epsilon
  (:meth:`dpcore.planner.PlannedStatistic.error_quantile`);
* :func:`attacker_belief` - what an epsilon means for one person: the largest posterior belief
  p e^eps / (1 - p + p e^eps) of an attacker with prior p (Kasiviswanathan & Smith's bound,
  ``dpcore.risk``), curves for a few epsilons;
* :func:`planner_view` - what the script prints: builds the statistics from a table or an array of
  incomes, then the accuracy-first (and, with half-width targets, the half-width) and budget-first views;
* :func:`expected_interval_width` - how wide each statistic's published interval will be at an epsilon
  (``dpcore.intervals``, the functions a release publishes its intervals with), before any budget is spent;
* :func:`plan_cost` - the privacy cost of a plan in the currency each mechanism gives (the
  Gini's smooth-sensitivity noise is pure epsilon for "cauchy", (epsilon, delta) for "laplace",
  rho-zCDP for "laplace_lognormal"), composed sequentially by a :class:`dpcore.budget.Ledger`.

Neighbouring relation: replace one person's record, n public (and the group / cell sizes). The
statistics' own docstrings (``dpcore.planner``) state their mechanisms. **Planning numbers are
computed on the planning data without protection**: plan on synthetic or public data.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import budget, planner, risk
from .. import intervals as intervals_lib
from ..kinds import grouped_kinds
from ..validation import DPInputError, as_generator, check_epsilon, check_int, check_positive, check_probability

__all__ = [
    "StatisticSpec",
    "statistic_specs",
    "build_statistics",
    "quantile_dots",
    "AccuracyRow",
    "StatisticDots",
    "AccuracyFirstView",
    "accuracy_first",
    "BudgetRow",
    "BudgetFirstView",
    "budget_first",
    "AttackerBeliefView",
    "attacker_belief",
    "PlannerView",
    "planner_view",
    "N_DOTS",
    "N_PLAUSIBLE",
    "GROUPED_KINDS",
    "ABSOLUTE_TARGET_KINDS",
    "PlanCost",
    "plan_cost",
    "statistic_cost",
    "describe_cost",
    "IntervalWidth",
    "expected_interval_width",
    "INTERVAL_DRAWS",
    "INTERVAL_UNITS",
    "INTERVAL_MAX_BIN_SCALE",
    "INTERVAL_MIN_GINI_EPSILON",
    "SKIPPED_NOTE",
    "HalfWidthTarget",
    "HalfWidthSolution",
    "solve_epsilon_for_half_width",
    "HALF_WIDTH_REL",
    "SIMULATED_WIDTHS",
    "HalfWidthRow",
    "HalfWidthView",
    "half_width_targets",
    "half_width_first",
]

#: Dots per statistic in a quantile dot plot (each dot = 1/20 of the plausible releases).
N_DOTS = 20
#: Simulated releases behind each dot plot.
N_PLAUSIBLE = 2000
#: Statistics computed on groups or cells (they need a group label per record).
GROUPED_KINDS = grouped_kinds()
#: Statistics whose accuracy target may be absolute (one number in [0, 1]: the Gini, in Gini points).
ABSOLUTE_TARGET_KINDS = ("gini",)
#: Priors of the attacker-belief curves (201 points in [0, 1], as dpcore.risk.posterior_curve).
_PRIORS = np.linspace(0.0, 1.0, 201)


def _plain(value: Any) -> Any:
    """A setting as plain data (tuples -> lists, numpy scalars -> Python), for to_dict and scripts."""
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic of the plan: ``kind`` (a key of :data:`dpcore.planner.STAT_KINDS`), its public
    settings ``params`` (keyword arguments of :func:`dpcore.planner.make_statistic`, as sorted
    pairs so the spec is hashable) and its accuracy target, over the noise only, with probability
    ``confidence``: a relative error at most ``rel_error`` (a share of the true value), or, for the
    Gini only, an absolute error at most ``abs_error`` Gini points (0.01 = one point), the unit the
    Gini page states its answers in.

    An absolute Gini target is exactly a relative one: ``|G~ - G| <= a`` is ``|G~ - G| <= (a / G) G``,
    so :meth:`target_for` hands :func:`dpcore.planner.solve_epsilon` the relative error ``a / G`` of
    the planning data's Gini ``G`` (planning numbers are computed on the planning data anyway)."""

    kind: str
    params: tuple[tuple[str, Any], ...]
    rel_error: float | None
    confidence: float
    abs_error: float | None = None

    def __post_init__(self) -> None:
        if self.kind not in planner.STAT_KINDS:
            raise DPInputError(f"unknown statistic {self.kind!r}; choose one of {', '.join(planner.STAT_KINDS)}")
        if self.abs_error is not None:
            if self.kind not in ABSOLUTE_TARGET_KINDS:
                raise DPInputError(
                    f"an absolute error target (abs_error) is for the Gini only, got it for {self.kind!r}; "
                    "give rel_error (a share of the true value) instead"
                )
            if self.rel_error is not None:
                raise DPInputError("give either rel_error or abs_error for a statistic, not both")
            check_positive(self.abs_error, "Gini error target (Gini points)")
            if self.abs_error >= 1.0:
                raise DPInputError(
                    f"a Gini error target of ±{self.abs_error:g} is at least the whole range [0, 1] "
                    "of the Gini: give Gini points, e.g. 0.01 for one point"
                )
            check_probability(self.confidence, "confidence level")
        elif self.rel_error is None:
            raise DPInputError(f"the target of {self.kind!r} needs rel_error (a share of the true value)")
        else:
            planner.AccuracyTarget(self.rel_error, self.confidence)  # validates both

    @property
    def target(self) -> planner.AccuracyTarget:
        """The relative target (a spec with a relative error only; see :meth:`target_for`)."""
        if self.rel_error is None:
            raise DPInputError("an absolute Gini target depends on the data's Gini: use target_for(statistic)")
        return planner.AccuracyTarget(self.rel_error, self.confidence)

    def target_for(self, stat: planner.PlannedStatistic) -> planner.AccuracyTarget:
        """The target as :func:`dpcore.planner.solve_epsilon` takes it, for the planned statistic ``stat``
        (an absolute Gini target divided by the statistic's Gini, see the class docstring)."""
        if self.abs_error is None:
            return self.target
        truth = abs(float(np.asarray(stat.truth, dtype=float).ravel()[0]))
        if not truth > 0:
            raise DPInputError(
                "the Gini of these data is 0 (every income equal after clipping): there is no inequality to measure"
            )
        return planner.AccuracyTarget(self.abs_error / truth, self.confidence)

    def describe_target(self) -> str:
        """The target in words, in its own unit."""
        if self.abs_error is None:
            return self.target.describe()
        points = 100 * self.abs_error
        return (
            f"within ±{self.abs_error:.4g} of the true Gini ({points:.4g} Gini point{'' if points == 1 else 's'}) "
            f"with {100 * self.confidence:g}% probability"
        )

    @property
    def label(self) -> str:
        return planner.STAT_KINDS[self.kind]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "kind": self.kind,
            "params": {k: _plain(v) for k, v in self.params},
            "rel_error": self.rel_error,
            "confidence": self.confidence,
        }
        if self.abs_error is not None:
            out = {
                "kind": self.kind,
                "params": out["params"],
                "abs_error": self.abs_error,
                "confidence": self.confidence,
            }
        return out


def statistic_specs(statistics: Sequence[Mapping[str, Any] | StatisticSpec]) -> tuple[StatisticSpec, ...]:
    """Specs from plain dicts ``{"kind", "params", "rel_error", "confidence"}`` (the script's literals)."""
    if isinstance(statistics, (str, bytes, Mapping)) or not hasattr(statistics, "__iter__"):
        raise TypeError("statistics must be a list of {'kind', 'params', 'rel_error', 'confidence'} dicts")
    out = []
    for item in statistics:
        if isinstance(item, StatisticSpec):
            out.append(item)
            continue
        if not isinstance(item, Mapping) or "kind" not in item:
            raise DPInputError(f"each statistic needs a 'kind', got {item!r}")
        params = item.get("params") or {}
        if not isinstance(params, Mapping):
            raise DPInputError(f"the params of {item['kind']!r} must be a dict")
        frozen = tuple(sorted((str(k), tuple(v) if isinstance(v, list) else v) for k, v in params.items()))
        if item.get("abs_error") is not None:
            out.append(
                StatisticSpec(
                    str(item["kind"]),
                    frozen,
                    None,
                    float(item.get("confidence", 0.9)),
                    abs_error=float(item["abs_error"]),
                )
            )
        else:
            out.append(
                StatisticSpec(
                    str(item["kind"]), frozen, float(item.get("rel_error", 0.1)), float(item.get("confidence", 0.9))
                )
            )
    if not out:
        raise DPInputError("the plan has no statistics: choose at least one")
    kinds = [s.kind for s in out]
    if len(set(kinds)) != len(kinds):
        raise DPInputError(f"each statistic can be planned once, got {kinds}")
    return tuple(out)


def build_statistics(values: Any, groups: Any, specs: Sequence[StatisticSpec]) -> tuple[planner.PlannedStatistic, ...]:
    """The planned statistics of ``specs`` on the planning data (``groups``: one label per record)."""
    return tuple(planner.make_statistic(s.kind, values, groups, **dict(s.params)) for s in specs)


def quantile_dots(sim_rel_errors: np.ndarray, n_dots: int = N_DOTS) -> np.ndarray:
    """Quantiles (i + 1/2)/n_dots of each column: a quantile dot plot, each dot = 1/n_dots of the releases.

    ``sim_rel_errors``: (n_sims, k) relative errors of simulated releases; returns (k, n_dots)."""
    n_dots = check_int(n_dots, "n_dots", minimum=1, maximum=1000)
    levels = (np.arange(n_dots) + 0.5) / n_dots
    return np.quantile(np.asarray(sim_rel_errors, dtype=float), levels, axis=0).T


def _check_pair(statistics: Sequence[Any], specs: Sequence[StatisticSpec]) -> None:
    if len(statistics) != len(specs) or not specs:
        raise DPInputError("one spec per statistic is needed (and at least one statistic)")


# ---------------------------------------------------------------------------------------------
# Privacy cost of a plan (pure, approximate, zCDP) composed sequentially
# ---------------------------------------------------------------------------------------------


def statistic_cost(stat: planner.PlannedStatistic, epsilon: float) -> budget.PrivacyCost:
    """What one statistic planned at ``epsilon`` costs, in its mechanism's own currency.

    A Gini with a light-tailed smooth noise (``noise`` "laplace" or "laplace_lognormal",
    ``dpcore.planner.make_statistic("gini", ..., noise=...)``) costs its calibration's statement:
    (epsilon, delta) for "laplace" (NRS), rho-zCDP for "laplace_lognormal" (Bun & Steinke 2019;
    rho is the largest whose conversion gives epsilon at the statistic's delta). Every other statistic
    of the planner (including the generalized-Cauchy Gini) is pure epsilon-DP at its planned epsilon."""
    eps = check_epsilon(epsilon)
    if getattr(stat, "noise", "cauchy") != "cauchy":
        return stat.privacy_cost(eps)
    return budget.pure(eps)


@dataclass(frozen=True)
class PlanCost:
    """The privacy cost of a plan: its statistics composed sequentially (:class:`dpcore.budget.Ledger`).

    ``kind``: "pure" (epsilon), "approx" ((epsilon, delta): epsilons and deltas add, Dwork & Roth
    Thm 3.16) or "zcdp" (rho: rhos add, pure epsilon counted as epsilon^2/2, Bun & Steinke 2016
    Lemma 2.3 / Prop. 1.4). ``epsilon``/``delta``: the plan as (epsilon, delta)-DP; when zCDP is in the
    plan it is converted at ``conversion_delta`` (the plan's delta, Canonne-Kamath-Steinke 2020),
    which is included in ``delta``. ``rho``: total rho when the plan has no (epsilon, delta) part.
    ``explicit_conversion``: zCDP and (epsilon, delta) parts were both present, so the zCDP part was
    converted to (epsilon, delta) at ``conversion_delta`` before composing (``compose_sequential``
    refuses to mix them without a delta)."""

    kind: str
    epsilon: float
    delta: float
    rho: float | None
    conversion_delta: float | None
    explicit_conversion: bool
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "rho": self.rho,
            "conversion_delta": self.conversion_delta,
            "explicit_conversion": self.explicit_conversion,
            "text": self.text,
        }


def describe_cost(cost: budget.PrivacyCost, delta: float | None = None) -> str:
    """One statistic's cost as text; a zCDP cost also in (epsilon, delta) at ``delta``."""
    if cost.kind == "pure":
        return f"ε = {cost.epsilon:.4g} (pure)"
    if cost.kind == "approx":
        return f"(ε, δ) = ({cost.epsilon:.4g}, {cost.delta:.3g})"
    if delta is None:
        return f"ρ = {cost.rho:.4g} (zCDP)"
    eps, d = cost.as_approx(delta)
    return f"ρ = {cost.rho:.4g} (zCDP), i.e. (ε, δ) = ({eps:.4g}, {d:.3g})"


def plan_cost(costs: Sequence[tuple[str, budget.PrivacyCost]], *, delta: float | None = None) -> PlanCost:
    """Sequential composition of ``(name, cost)`` pairs (one per statistic, each already composed in
    parallel over its groups or cells) with :class:`dpcore.budget.Ledger`.

    ``delta``: the plan's delta, used to state a zCDP part as (epsilon, delta) (needed only then; the
    views pass the delta the zCDP statistic was calibrated at). Pure + approximate: (sum epsilon, sum delta). Pure + zCDP: rho (pure as epsilon^2/2) and
    its (epsilon, delta) at ``delta`` (the better of two valid accountings, ``Ledger.spent_approx``).
    zCDP + approximate: the zCDP part converted to (epsilon, delta) at ``delta`` explicitly, then
    basic composition (deltas add)."""
    if not costs:
        raise DPInputError("the plan has no statistics")
    ledger = budget.Ledger()
    for name, cost in costs:
        ledger.charge(name, cost)
    kinds = ledger.kinds
    if kinds == {"pure"}:
        spent = ledger.spent_pure()
        assert spent is not None  # every charge is pure
        eps = float(spent)
        return PlanCost("pure", eps, 0.0, None, None, False, f"ε = {eps:.4g} (pure ε-DP)")
    if "zcdp" in kinds and delta is None:
        raise DPInputError("a plan with a zCDP statistic needs the plan's delta to state its (epsilon, delta)")
    conversion = check_probability(delta, "delta") if "zcdp" in kinds else None
    eps, total_delta = ledger.spent_approx(conversion if conversion is not None else 1e-300)
    rho = ledger.spent_rho()
    if "approx" in kinds and "zcdp" in kinds:
        text = (
            f"(ε, δ) = ({eps:.4g}, {total_delta:.3g}): the zCDP part converted to (ε, δ) at δ = "
            f"{conversion:.3g} before adding the (ε, δ) parts"
        )
        return PlanCost("approx", float(eps), float(total_delta), None, conversion, True, text)
    if "zcdp" in kinds:
        assert rho is not None  # zCDP and pure parts only: no (epsilon, delta) entry
        text = f"ρ = {rho:.4g} (zCDP), i.e. (ε, δ) = ({eps:.4g}, {total_delta:.3g})"
        return PlanCost("zcdp", float(eps), float(total_delta), float(rho), conversion, False, text)
    return PlanCost(
        "approx", float(eps), float(total_delta), None, None, False, f"(ε, δ) = ({eps:.4g}, {total_delta:.3g})"
    )


def _plan_delta(statistics: Sequence[planner.PlannedStatistic]) -> float | None:
    """The delta a light-noise statistic of the plan was calibrated at (its (epsilon, delta) target), if any:
    where a zCDP cost is stated as (epsilon, delta)."""
    deltas = [float(s.delta) for s in statistics if getattr(s, "noise", "cauchy") != "cauchy" and hasattr(s, "delta")]
    return max(deltas) if deltas else None


# ---------------------------------------------------------------------------------------------
# How wide the published intervals will be (before any budget is spent)
# ---------------------------------------------------------------------------------------------

#: simulated noisy histograms behind a percentile interval's expected width (seeded; the median over them)
INTERVAL_DRAWS = 200
#: largest bin-noise scale at which a percentile interval's width is computed: the exact law of the noisy
#: cumulative counts is a convolution whose support grows with the scale (measured: 0.3 s at scale 20, 3 s at
#: 67, minutes at 200); above it the width is not computed (the ``note`` says so)
INTERVAL_MAX_BIN_SCALE = 20.0
#: smallest epsilon at which a Gini interval's width is computed: below it the optimiser of the split certifies
#: its calibrations for 10 s to minutes (measured at n = 10,000: 10 s at 0.02, over a minute at 0.001)
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
    :func:`dpcore.intervals.percentile_interval`'s width, n public; cells with fewer than 2 records: NaN."""
    mech = stat.mechanism_at(eps)
    counts = np.asarray(stat._counts, dtype=float)
    sizes = counts.sum(axis=1)
    q = math.exp(-1.0 / mech.noise_scale)
    gen = as_generator(seed)
    shape = (INTERVAL_DRAWS,) + counts.shape
    noise = gen.geometric(1.0 - q, shape) - gen.geometric(1.0 - q, shape)  # P(k) ∝ q^|k|: discrete Laplace
    widths = np.full((counts.shape[0], len(stat.q)), np.nan)
    ok = sizes >= 2
    if ok.any():
        noisy = (counts[ok][None] + noise[:, ok]).reshape(-1, counts.shape[1])
        res = intervals_lib.percentile_interval(
            noisy, stat.edges, stat.q, scale=mech.noise_scale, level=level, n=np.tile(sizes[ok], INTERVAL_DRAWS)
        )
        w = np.asarray(res.width, dtype=float).reshape(INTERVAL_DRAWS, int(ok.sum()), len(stat.q))
        widths[ok] = np.median(w, axis=0)
    return widths.ravel(), f"median over {INTERVAL_DRAWS} simulated noisy histograms (exact discrete Laplace law)"


def _gini_widths(stat: Any, eps: float, level: float) -> tuple[np.ndarray, str, str, float]:
    """The plan's median-width model (:attr:`dpcore.intervals.GiniIntervalPlan.model_width`: public inputs only) of
    the release with its DP bound on S_beta, planned at the statistic's public n; last, the median published width
    on the planning data (NaN when there is no width)."""
    from ..gini import GiniCalibration
    from ..mechanisms import GiniIntervalMechanism
    from . import gini as gini_experiments

    if stat.noise not in gini_experiments.PUBLISHED_NOISES:
        return np.zeros(0), "", "this noise is never released, so it has no published interval", math.nan
    if eps < INTERVAL_MIN_GINI_EPSILON:
        return (
            np.zeros(0),
            "",
            (
                f"not computed below ε = {INTERVAL_MIN_GINI_EPSILON:g} (the split's optimisation "
                "takes minutes there); the interval would be wide"
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
        max(stat._smooth_sensitivity(eps, plan.beta) / constants["release_alpha"], constants["min_scale"]),
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
    return _expected_width(stat, eps, lev, check_int(seed, "seed", minimum=0))[0]


def _expected_width(stat: planner.PlannedStatistic, eps: float, lev: float, seed: int) -> tuple[IntervalWidth, float]:
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


def _interval_widths(
    pairs: Sequence[tuple[planner.PlannedStatistic, float]], level: float | None, skip: Sequence[str] = ()
) -> tuple[IntervalWidth, ...]:
    """:func:`expected_interval_width` of each (statistic, epsilon); settings a release refuses (e.g. no feasible
    split of a Gini's epsilon) give a width-less entry whose ``note`` says why, as do the kinds in ``skip``."""
    if level is None:
        return ()
    out = []
    for stat, eps in pairs:
        if stat.kind in skip:
            out.append(
                IntervalWidth(
                    stat.name,
                    stat.kind,
                    float(eps),
                    float(level),
                    (),
                    (),
                    INTERVAL_UNITS.get(stat.kind, ""),
                    "",
                    SKIPPED_NOTE,
                )
            )
            continue
        try:
            out.append(expected_interval_width(stat, eps, level=level))
        except ValueError as exc:
            out.append(
                IntervalWidth(
                    stat.name,
                    stat.kind,
                    float(eps),
                    float(level),
                    (),
                    (),
                    INTERVAL_UNITS.get(stat.kind, ""),
                    "",
                    f"no published interval at these settings ({exc})",
                )
            )
    return tuple(out)


# ---------------------------------------------------------------------------------------------
# Accuracy first, stated as the half-width of the published intervals
# ---------------------------------------------------------------------------------------------

#: relative precision in epsilon of :func:`solve_epsilon_for_half_width`'s bisection: the target is met at the
#: epsilon returned and not at epsilon * exp(-HALF_WIDTH_REL) (when the width decreases in epsilon)
HALF_WIDTH_REL = 1e-4

#: kinds whose expected width is simulated (the median over seeded noisy histograms): not monotone in epsilon
#: (measured: the default plan's percentile width moves by one bin back and forth between epsilon 0.87 and 0.92), so
#: their search first goes down the planner's log grid; the others' widths are monotone by formula (mean, count,
#: relative risk: a quantile of a noise whose scale is proportional to 1/epsilon) or measured so (the Gini's, on
#: the 33-point grid of the default data)
SIMULATED_WIDTHS = ("percentiles", "group_medians")

#: why a kind's published interval stops narrowing as epsilon grows (said when even eps_max cannot reach a target)
_WIDTH_FLOORS = {
    "percentiles": "a percentile's interval is read off the public bins and is never narrower than the bins around "
    "it (a percentile in the top bin has an open-ended interval): use finer bins or relax the target",
    "group_medians": "a median's interval is read off the public bins and is never narrower than the bins around it "
    "(a median in the top bin has an open-ended interval): use finer bins or relax the target",
    "ratio": "Shoham & Ligett's interval also covers the sampling uncertainty of the two groups' counts, which no "
    "epsilon removes: relax the target",
    "gini": "the Gini's interval narrows only up to the largest epsilon its smooth-sensitivity noise allows: relax "
    "the target",
}


@dataclass(frozen=True)
class HalfWidthTarget:
    """Every interval a release publishes for a statistic at ``level`` (default 0.95) has an EXPECTED half-width at
    most ``half_width``: in the statistic's own unit (income, Gini points as 0.01 = one point, people, relative-risk
    units), or with ``relative`` a share of each value (0.02: ±2% of the value), the value being the statistic's
    **planning value** (its value on the planning data, as every planning number; the released value differs).

    Intervals, not errors: the interval is what a release publishes next to each value (``dpcore.intervals``), its
    half-width is known before any budget is spent (:func:`expected_interval_width`); an
    :class:`dpcore.planner.AccuracyTarget` bounds the error of the value itself."""

    half_width: float
    relative: bool = False
    level: float = intervals_lib.DEFAULT_LEVEL

    def __post_init__(self) -> None:
        check_positive(self.half_width, "interval half-width target")
        if not isinstance(self.relative, bool):
            raise TypeError(f"relative must be True or False, got {self.relative!r}")
        check_probability(self.level, "interval level")

    def describe(self, unit: str = "") -> str:
        """The target in words (``unit``: the statistic's, for an absolute half-width)."""
        head = f"every published {100 * self.level:g}% interval at most ±"
        if self.relative:
            return head + f"{100 * self.half_width:g}% of the value (its planning value)"
        return head + _number(self.half_width) + (f" {unit}" if unit else "")

    def to_dict(self) -> dict[str, Any]:
        return {"half_width": self.half_width, "relative": self.relative, "level": self.level}


def _number(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"


@dataclass(frozen=True)
class HalfWidthSolution:
    """The smallest epsilon meeting a :class:`HalfWidthTarget`, with how it was found.

    ``half_widths``: the expected half-width of each released number (``labels``) at ``epsilon``, in ``unit``;
    ``achieved``: the largest of them in the target's unit (``unit``, or a share of the planning value for a
    relative target), at most ``target.half_width``. ``method``: the search and how the widths were computed;
    ``note``: what the number means beyond that (the Gini's public model, a lower end of the search reached)."""

    statistic: str
    kind: str
    epsilon: float
    target: HalfWidthTarget
    achieved: float
    labels: tuple[str, ...]
    half_widths: tuple[float, ...]
    unit: str
    method: str
    note: str = ""

    @property
    def widest(self) -> float:
        """The largest expected half-width over the released numbers, in the statistic's unit."""
        return max(w for w in self.half_widths if not math.isnan(w))

    def to_dict(self) -> dict[str, Any]:
        return {
            "statistic": self.statistic,
            "kind": self.kind,
            "epsilon": self.epsilon,
            "target": self.target.to_dict(),
            "achieved": self.achieved,
            "labels": list(self.labels),
            "half_widths": list(self.half_widths),
            "widest_half_width": self.widest,
            "unit": self.unit,
            "method": self.method,
            "note": self.note,
        }


@dataclass(frozen=True)
class _WidthCheck:
    """One evaluation of the target at an epsilon: met or not, the half-widths, the largest in the target's unit."""

    met: bool
    half_widths: np.ndarray
    achieved: float
    width: IntervalWidth
    typical: float


def _check_half_width(stat: planner.PlannedStatistic, eps: float, target: HalfWidthTarget, seed: int) -> _WidthCheck:
    """The target at ``eps``: every released number's expected half-width within it. A statistic without a width at
    ``eps`` (not computed there: a wide interval) does not meet it; cells without an interval (NaN) are skipped."""
    width, typical = _expected_width(stat, eps, target.level, seed)
    # the Gini's release is planned on a public model (a mean of U/5); its published width on the planning data is
    # the median 2 q clamp(S_beta(X)/alpha) (measured: 3.6 times the model's at n = 10,000, a mean of U/18)
    widths = np.array([typical]) if stat.kind == "gini" and width.widths else np.asarray(width.widths, dtype=float)
    half = 0.5 * widths
    if target.relative:
        scale = np.abs(np.asarray(stat.truth, dtype=float).ravel())
        with np.errstate(divide="ignore", invalid="ignore"):
            share = half / scale if half.size == scale.size else np.full(half.shape, np.nan)
    else:
        share = half
    known = share[~np.isnan(share)]
    achieved = float(known.max()) if known.size else math.inf
    return _WidthCheck(bool(known.size) and achieved <= target.half_width, half, achieved, width, typical)


def _half_width_search_range(
    stat: planner.PlannedStatistic, eps_min: float | None, eps_max: float | None
) -> tuple[float, float]:
    lo = getattr(stat, "eps_min", planner.EPS_MIN) if eps_min is None else check_epsilon(eps_min, "eps_min")
    hi = getattr(stat, "eps_max", planner.EPS_MAX) if eps_max is None else check_epsilon(eps_max, "eps_max")
    if not lo < hi:
        raise DPInputError(f"eps_min ({lo:g}) must be smaller than eps_max ({hi:g})")
    return float(lo), float(hi)


def _unreachable(stat: planner.PlannedStatistic, target: HalfWidthTarget, top: _WidthCheck, eps_max: float) -> str:
    """Why even eps_max does not meet the target: no interval at all, an open-ended one, or a floor of the width."""
    wanted = target.describe(top.width.unit)
    if not top.width.widths:
        return f"{stat.name}: no published interval to plan ({top.width.note}), so {wanted!r} cannot be planned"
    if np.isnan(top.half_widths).all():
        return f"{stat.name}: no released number has an interval (cells of fewer than 2 records), so {wanted!r} cannot be met"
    if math.isinf(top.achieved):
        return (
            f"{stat.name}: even at ε = {eps_max:g} an interval is open-ended (a value in the top bin reaches the "
            f"end of the support), so {wanted!r} cannot be met: {_WIDTH_FLOORS.get(stat.kind, 'relax the target')}"
        )
    got = f"{100 * top.achieved:.3g}% of the value" if target.relative else f"{_number(top.achieved)} {top.width.unit}"
    floor = _WIDTH_FLOORS.get(stat.kind, f"a larger epsilon than {eps_max:g} is needed: relax the target")
    return f"{stat.name}: even at ε = {eps_max:g} the widest expected half-width is ±{got}, not {wanted!r}: {floor}"


def solve_epsilon_for_half_width(
    stat: planner.PlannedStatistic,
    target: HalfWidthTarget,
    eps_min: float | None = None,
    eps_max: float | None = None,
    *,
    seed: int = 0,
) -> HalfWidthSolution:
    """Smallest epsilon at which every interval the release publishes for ``stat`` has an expected half-width within
    ``target``, on the planning data.

    The widths are the page's (:func:`expected_interval_width`, deterministic: percentile widths from the seeded
    noisy histograms of ``seed``), except the Gini's: its median published width on the planning data, shown there
    beside the public model's (``note``). The width decreases in epsilon (the noise scale is proportional to
    1/epsilon), so an ITP search (:func:`_itp_point`: bisection's guarantee, fewer evaluations on a smooth width,
    which matters for the Gini: each of its widths optimises a split, seconds) on log epsilon between ``eps_min``
    and ``eps_max`` (default the statistic's search range, as :func:`dpcore.planner.solve_epsilon`) returns, to a
    relative precision of :data:`HALF_WIDTH_REL`, the end that meets the target. A simulated width
    (:data:`SIMULATED_WIDTHS`) is monotone only up to its draws, so its search is first the monotone one of
    :func:`dpcore.planner.solve_epsilon`: down the fixed log grid of ``GRID_POINTS`` epsilons from ``eps_max`` while
    the target holds, then ITP inside the last grid step (the target holds at every grid point above the answer).
    Where the width is not computed (a percentile's bin noise
    above :data:`INTERVAL_MAX_BIN_SCALE`, a Gini below :data:`INTERVAL_MIN_GINI_EPSILON`) the target counts as not
    met (the interval would be wide), and ``note`` says so if the answer sits at that edge.

    Raises DPInputError when even ``eps_max`` does not meet it, with the reason: a statistic that publishes no
    interval (the exponential mechanism's percentiles, a Gini noise never released), an open-ended percentile
    interval (top bin), a floor of the width (bins, the ratio's sampling uncertainty), or a relative target of a
    statistic whose planning value is 0."""
    if not isinstance(target, HalfWidthTarget):
        raise TypeError("target must be a HalfWidthTarget")
    if not isinstance(stat, planner.PlannedStatistic):
        raise TypeError("stat must be a planned statistic (dpcore.planner.make_statistic builds one)")
    seed = check_int(seed, "seed", minimum=0)
    if target.relative and np.any(np.asarray(stat.truth, dtype=float) == 0):
        raise DPInputError(
            f"{stat.name}: a planning value is 0, so a half-width relative to it cannot be met; "
            "give the half-width in the statistic's unit instead"
        )
    lo, hi = _half_width_search_range(stat, eps_min, eps_max)
    # a Gini brackets its answer first on the epsilons whose split is shipped (every other width optimises a split,
    # seconds); when the largest of them meets the target, so does every larger epsilon (the width is monotone)
    shipped = [e for e in _shipped_gini_epsilons(stat, target.level) if lo < e < hi] if stat.kind == "gini" else []
    top = _check_half_width(stat, shipped[-1], target, seed) if shipped else None
    if top is not None and top.met:
        grid = np.array([lo, *shipped])
    else:
        top = _check_half_width(stat, hi, target, seed)
        if not top.met:
            raise DPInputError(_unreachable(stat, target, top, hi))
        points = planner.GRID_POINTS if stat.kind in SIMULATED_WIDTHS else 2
        grid = np.array([lo, *shipped, hi]) if shipped else np.exp(np.linspace(math.log(lo), math.log(hi), points))
        grid[0], grid[-1] = lo, hi
    i, below = grid.size - 1, None
    while i > 0:  # down the grid from eps_max while the target holds: it holds at every grid point above the answer
        check = _check_half_width(stat, float(grid[i - 1]), target, seed)
        if not check.met:
            below = check
            break
        top, i = check, i - 1
    if below is None:
        return _half_width_solution(stat, target, lo, top, None, lo)
    a, b = math.log(grid[i - 1]), math.log(grid[i])
    budget = math.ceil(math.log2((b - a) / HALF_WIDTH_REL)) + 1  # ITP's n_max = n_1/2 + n_0 with n_0 = 1
    kappa1 = 0.2 / (b - a)
    for step in range(budget + 1):
        if b - a <= HALF_WIDTH_REL:
            break
        x = _itp_point(a, b, _excess(below, target), _excess(top, target), budget - step, kappa1)
        check = _check_half_width(stat, math.exp(x), target, seed)
        if check.met:
            b, top = x, check
        else:
            a, below = x, check
    return _half_width_solution(stat, target, math.exp(b), top, below, lo)


def _shipped_gini_epsilons(stat: Any, level: float) -> list[float]:
    """The epsilons at which this Gini's split is shipped (:func:`dpcore.intervals.shipped_epsilons`: the Gini
    page's grid at the default public inputs), for its public inputs; a width there costs no optimisation (a first
    half-width plan at the defaults took 19 s of optimisations at ITP's points, seconds each)."""
    noise = getattr(stat, "noise", "cauchy")
    if noise not in ("cauchy", "laplace"):
        return []
    delta = None if noise == "cauchy" else float(stat.delta)
    n = max(int(stat.values.size), 2)
    return intervals_lib.shipped_epsilons(
        noise,
        delta,
        n,
        float(stat.lower),
        float(stat.upper),
        float(level),
        "pivot",
        float(stat.gamma),
        stat.calibration,
    )


def _excess(check: _WidthCheck, target: HalfWidthTarget) -> float:
    """log(achieved / target): > 0 not met, <= 0 met; NaN where no finite positive width interpolates."""
    if not check.width.widths or not 0 < check.achieved < math.inf:
        return math.nan
    return math.log(check.achieved / target.half_width)


def _itp_point(a: float, b: float, fa: float, fb: float, steps_left: int, kappa1: float) -> float:
    """The next point of the ITP search on [a, b] in log epsilon (Oliveira & Takahashi 2021, ACM TOMS 47(1), Alg. 1,
    with kappa_1 = 0.2 / (b_0 - a_0), kappa_2 = 2, n_0 = 1, 2 epsilon = HALF_WIDTH_REL): regula falsi on the log width truncated towards the midpoint and
    projected into the disc that keeps bisection's worst case (at most one step more than bisection), so a smooth
    width (the mean's, the Gini's: each Gini width optimises a split, seconds) takes a few evaluations and a step
    function (a percentile's bins, a count's integers) no more than bisection. Without a finite log width at ``a``
    (a width not computed there, an open-ended interval) the line through ``b`` has slope -1 (a width proportional
    to the noise scale, 1/epsilon); without one at ``b`` (a zero width), the midpoint."""
    mid = 0.5 * (a + b)
    if not math.isfinite(fb) or fa == fb:
        return mid
    regula = (fb * a - fa * b) / (fb - fa) if math.isfinite(fa) else b + fb
    sigma = 1.0 if mid >= regula else -1.0
    delta = kappa1 * (b - a) ** 2
    trunc = regula + sigma * delta if delta <= abs(mid - regula) else mid
    radius = HALF_WIDTH_REL / 2.0 * 2.0 ** max(steps_left, 0) - 0.5 * (b - a)
    point = trunc if abs(trunc - mid) <= radius else mid - sigma * radius
    return min(max(point, a), b)


def _half_width_solution(
    stat: planner.PlannedStatistic,
    target: HalfWidthTarget,
    eps: float,
    at: _WidthCheck,
    below: _WidthCheck | None,
    eps_min: float,
) -> HalfWidthSolution:
    notes = []
    if below is None:
        notes.append(f"already met at ε = {eps_min:g}, the lower end of the search")
    elif not below.width.widths:
        notes.append(f"just below this ε the width is {below.width.note}: the target may hold at a smaller ε")
    if stat.kind == "gini":
        notes.append(
            f"the half-width is the median published one on the planning data; the release's public model "
            f"(no data) says ±{0.5 * at.width.widths[0]:.4f}"
        )
    elif at.width.note:
        notes.append(at.width.note)
    search = (
        f"monotone search on log ε of the expected published half-width (deterministic), relative precision "
        f"{HALF_WIDTH_REL:.0e}"
        if below is not None
        else "lower end of the search range"
    )
    method = f"{search}; widths: {at.width.method}" if at.width.method else search
    return HalfWidthSolution(
        stat.name,
        stat.kind,
        float(eps),
        target,
        float(at.achieved),
        tuple(stat.labels),
        tuple(float(h) for h in at.half_widths),
        at.width.unit,
        method,
        "; ".join(notes),
    )


@dataclass(frozen=True)
class HalfWidthRow:
    """One statistic of the half-width plan (:class:`HalfWidthSolution` as the page shows it)."""

    statistic: str
    kind: str
    target: str
    epsilon: float
    solution: HalfWidthSolution
    cost: str = ""  # the statistic's privacy cost at epsilon (describe_cost)


@dataclass(frozen=True)
class HalfWidthView:
    """The accuracy-first plan with targets on the published intervals' half-widths: per statistic the smallest
    epsilon (:func:`solve_epsilon_for_half_width`), their total under sequential composition (``cost``), and the
    largest attacker belief from a 1% prior at that total."""

    rows: tuple[HalfWidthRow, ...]
    total_epsilon: float
    belief_from_1pct: float
    failures: tuple[tuple[str, str], ...] = ()
    cost: PlanCost | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "half_width_first": [{"target": r.target, "cost": r.cost, **r.solution.to_dict()} for r in self.rows],
            "half_width_total_epsilon": self.total_epsilon,
            "half_width_privacy_cost": None if self.cost is None else self.cost.to_dict(),
            "half_width_largest_belief_from_1pct_prior": self.belief_from_1pct,
            "half_width_failures": [list(f) for f in self.failures],
        }


def half_width_targets(
    targets: Mapping[str, Mapping[str, Any] | HalfWidthTarget], specs: Sequence[StatisticSpec]
) -> tuple[HalfWidthTarget, ...]:
    """One :class:`HalfWidthTarget` per spec from ``{kind: {"half_width", "relative", "level"}}`` (the script's
    literals); every statistic of the plan needs one, and no other kind may be given."""
    if not isinstance(targets, Mapping):
        raise TypeError("half-width targets must be a dict {kind: {'half_width': ..., 'relative': ..., 'level': ...}}")
    kinds = [s.kind for s in specs]
    extra = sorted(set(targets) - set(kinds))
    missing = [k for k in kinds if k not in targets]
    if extra or missing:
        raise DPInputError(
            f"give one half-width target per planned statistic ({', '.join(kinds)}); "
            + (f"missing: {', '.join(missing)}" if missing else f"not planned: {', '.join(extra)}")
        )
    out = []
    for kind in kinds:
        item = targets[kind]
        if isinstance(item, HalfWidthTarget):
            out.append(item)
        elif isinstance(item, Mapping) and "half_width" in item:
            out.append(
                HalfWidthTarget(
                    float(item["half_width"]),
                    bool(item.get("relative", False)),
                    float(item.get("level", intervals_lib.DEFAULT_LEVEL)),
                )
            )
        else:
            raise DPInputError(f"the half-width target of {kind!r} needs 'half_width', got {item!r}")
    return tuple(out)


def half_width_first(
    statistics: Sequence[planner.PlannedStatistic],
    specs: Sequence[StatisticSpec],
    targets: Sequence[HalfWidthTarget],
    *,
    seed: int = 0,
) -> HalfWidthView:
    """Smallest epsilon per statistic whose published intervals meet its half-width target
    (:func:`solve_epsilon_for_half_width`), the sequential total (:func:`plan_cost`) and the attacker belief bound
    at that total (:func:`dpcore.risk.max_posterior`). A target that cannot be met is listed in ``failures`` with
    the solver's reason; the total covers the others (as :func:`accuracy_first`)."""
    _check_pair(statistics, specs)
    if len(targets) != len(specs):
        raise DPInputError(f"one half-width target per statistic is needed ({len(specs)}), got {len(targets)}")
    rows, failures, costs = [], [], []
    delta = _plan_delta(statistics)
    for stat, spec, target in zip(statistics, specs, targets, strict=True):
        try:
            sol = solve_epsilon_for_half_width(stat, target, seed=seed)
        except ValueError as exc:
            failures.append((spec.label, str(exc)))
            continue
        cost = statistic_cost(stat, sol.epsilon)
        costs.append((sol.statistic, cost))
        rows.append(
            HalfWidthRow(
                sol.statistic, spec.kind, target.describe(sol.unit), sol.epsilon, sol, describe_cost(cost, delta)
            )
        )
    total_cost = plan_cost(costs, delta=delta) if rows else None
    total = total_cost.epsilon if total_cost is not None else 0.0
    return HalfWidthView(
        tuple(rows), float(total), float(risk.max_posterior(0.01, total)) if rows else 0.01, tuple(failures), total_cost
    )


# ---------------------------------------------------------------------------------------------
# Accuracy first
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AccuracyRow:
    """The smallest epsilon of one statistic (``dpcore.planner.EpsilonSolution`` as plain data)."""

    statistic: str
    kind: str
    target: str
    epsilon: float
    achieved: float
    mc_se: float
    epsilon_interval: tuple[float, float]
    method: str
    parallel_note: str
    cost: str = ""  # the statistic's privacy cost at epsilon (describe_cost)

    @property
    def uncertainty(self) -> str:
        if self.mc_se == 0:
            return "exact"
        return (
            f"±{100 * self.mc_se:.2f} pts on the probability; ε between {self.epsilon_interval[0]:.4g} "
            f"and {self.epsilon_interval[1]:.4g}"
        )


@dataclass(frozen=True)
class StatisticDots:
    """Quantile dot plot of one statistic at ``epsilon``: ``errors_percent[i][j]`` is dot j of number i
    (relative error of a plausible release, % of the true value)."""

    statistic: str
    kind: str
    epsilon: float
    rel_error: float
    confidence: float
    labels: tuple[str, ...]
    errors_percent: tuple[tuple[float, ...], ...]
    #: for an absolute (Gini-point) target: the target and the dots in its unit (released - true Gini);
    #: ``errors_percent`` is then empty (one plot, in the unit the target was given in)
    abs_error: float | None = None
    errors_abs: tuple[tuple[float, ...], ...] | None = None


@dataclass(frozen=True)
class AccuracyFirstView:
    rows: tuple[AccuracyRow, ...]
    total_epsilon: float
    belief_from_1pct: float
    dots: tuple[StatisticDots, ...]
    dots_seed: int | None
    failures: tuple[tuple[str, str], ...] = ()  # (statistic, message) of targets that cannot be met
    cost: PlanCost | None = None  # the plan's privacy cost composed (None when no statistic was planned)
    #: per planned statistic (the rows' order), the expected width of its published interval at its smallest epsilon
    interval_widths: tuple[IntervalWidth, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "interval_widths": [w.to_dict() for w in self.interval_widths],
            "failures": [list(f) for f in self.failures],
            "accuracy_first": [
                {
                    "statistic": r.statistic,
                    "kind": r.kind,
                    "target": r.target,
                    "epsilon": r.epsilon,
                    "achieved": r.achieved,
                    "mc_se": r.mc_se,
                    "epsilon_interval": list(r.epsilon_interval),
                    "method": r.method,
                    "cost": r.cost,
                }
                for r in self.rows
            ],
            "total_epsilon_sequential": self.total_epsilon,
            "privacy_cost": None if self.cost is None else self.cost.to_dict(),
            "largest_belief_from_1pct_prior": self.belief_from_1pct,
            "dots": [
                {
                    "statistic": d.statistic,
                    "epsilon": d.epsilon,
                    "labels": list(d.labels),
                    "errors_percent": [list(v) for v in d.errors_percent],
                    **(
                        {}
                        if d.errors_abs is None
                        else {"abs_error": d.abs_error, "errors_abs": [list(v) for v in d.errors_abs]}
                    ),
                }
                for d in self.dots
            ],
        }


def accuracy_first(
    statistics: Sequence[planner.PlannedStatistic],
    specs: Sequence[StatisticSpec],
    *,
    dots_seed: int | None = None,
    n_plausible: int = N_PLAUSIBLE,
    n_dots: int = N_DOTS,
    interval_level: float | None = intervals_lib.DEFAULT_LEVEL,
) -> AccuracyFirstView:
    """Smallest epsilon per statistic (:func:`dpcore.planner.solve_epsilon`), the sequential total,
    the attacker belief bound at that total, and (``dots_seed`` not None) the quantile dot plots of
    ``n_plausible`` simulated releases per statistic at its epsilon (seed ``dots_seed``), and (``interval_level``
    not None) the expected width of each statistic's published interval at its epsilon
    (:func:`expected_interval_width`).

    A statistic whose target cannot be met (or whose truth is 0) is listed in ``failures`` with the
    message of :func:`dpcore.planner.solve_epsilon`; the total covers the others."""
    _check_pair(statistics, specs)
    rows, dots, failures, costs, solved = [], [], [], [], []
    delta = _plan_delta(statistics)
    for stat, spec in zip(statistics, specs, strict=True):
        try:
            target = spec.target_for(stat)
            sol = planner.solve_epsilon(stat, target)
        except ValueError as exc:  # e.g. a target that clipping makes unreachable: report it, plan the rest
            failures.append((spec.label, str(exc)))
            continue
        solved.append((stat, float(sol.epsilon)))
        cost = statistic_cost(stat, sol.epsilon)
        costs.append((sol.statistic, cost))
        rows.append(
            AccuracyRow(
                sol.statistic,
                spec.kind,
                spec.describe_target(),
                float(sol.epsilon),
                float(sol.achieved),
                float(sol.mc_se),
                (float(sol.epsilon_interval[0]), float(sol.epsilon_interval[1])),
                sol.method,
                sol.parallel_note,
                describe_cost(cost, delta),
            )
        )
        if dots_seed is not None:
            sims = stat.simulate(sol.epsilon, check_int(n_plausible, "n_plausible", minimum=20), rng=dots_seed)
            if spec.abs_error is None:
                q = quantile_dots(sims / stat.truth[None, :] - 1.0, n_dots)
                dots.append(
                    StatisticDots(
                        stat.name,
                        spec.kind,
                        float(sol.epsilon),
                        target.rel_error,
                        spec.confidence,
                        tuple(stat.labels),
                        tuple(tuple(100.0 * float(v) for v in row) for row in q),
                    )
                )
            else:
                q = quantile_dots(sims - stat.truth[None, :], n_dots)
                dots.append(
                    StatisticDots(
                        stat.name,
                        spec.kind,
                        float(sol.epsilon),
                        target.rel_error,
                        spec.confidence,
                        tuple(stat.labels),
                        (),
                        spec.abs_error,
                        tuple(tuple(float(v) for v in row) for row in q),
                    )
                )
    total_cost = plan_cost(costs, delta=delta) if rows else None
    total = total_cost.epsilon if total_cost is not None else 0.0  # pure plans: the sum of the epsilons (as plan_total)
    return AccuracyFirstView(
        tuple(rows),
        float(total),
        float(risk.max_posterior(0.01, total)) if rows else 0.01,
        tuple(dots),
        dots_seed,
        tuple(failures),
        total_cost,
        _interval_widths(solved, interval_level),
    )


# ---------------------------------------------------------------------------------------------
# Budget first
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BudgetRow:
    statistic: str
    kind: str
    epsilon: float
    relative_error: float  # joint error bound reached with probability `confidence`
    confidence: float
    cost: str = ""  # the statistic's privacy cost at epsilon (describe_cost)
    #: the same bound in the unit of an absolute target (Gini points), when the spec's target is absolute
    abs_error: float | None = None


@dataclass(frozen=True)
class BudgetFirstView:
    rows: tuple[BudgetRow, ...]
    total_epsilon: float
    failures: tuple[tuple[str, str], ...] = ()
    cost: PlanCost | None = None  # the split's privacy cost composed over every statistic of the split
    #: per statistic of the split, the expected width of its published interval at its allocated epsilon
    interval_widths: tuple[IntervalWidth, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "budget_interval_widths": [w.to_dict() for w in self.interval_widths],
            "budget_failures": [list(f) for f in self.failures],
            "budget_first": [
                {
                    "statistic": r.statistic,
                    "kind": r.kind,
                    "epsilon": r.epsilon,
                    "relative_error": r.relative_error,
                    "abs_error": r.abs_error,
                    "confidence": r.confidence,
                    "cost": r.cost,
                }
                for r in self.rows
            ],
            "total_epsilon": self.total_epsilon,
            "budget_privacy_cost": None if self.cost is None else self.cost.to_dict(),
        }


def budget_first(
    statistics: Sequence[planner.PlannedStatistic],
    specs: Sequence[StatisticSpec],
    allocation: Sequence[float],
    *,
    interval_level: float | None = intervals_lib.DEFAULT_LEVEL,
    interval_skip: Sequence[str] = (),
) -> BudgetFirstView:
    """The relative error each statistic reaches, at its own confidence level, with the epsilon
    ``allocation[i]`` (``total_epsilon`` is their sum; ``cost`` is the split composed in each
    statistic's currency by :func:`plan_cost`: a pure plan costs exactly the sum), and the expected width of each
    statistic's published interval at that epsilon (:func:`expected_interval_width`, ``interval_level``), except
    for the kinds in ``interval_skip`` (a page whose sliders move epsilon continuously skips the Gini, whose split is
    optimised per epsilon in seconds)."""
    _check_pair(statistics, specs)
    if isinstance(allocation, (str, bytes)) or len(allocation) != len(specs):
        raise DPInputError(f"the allocation needs one epsilon per statistic ({len(specs)}), got {allocation!r}")
    epsilons = [check_epsilon(eps, f"epsilon of {spec.label}") for spec, eps in zip(specs, allocation, strict=True)]
    rows, failures = [], []
    delta = _plan_delta(statistics)
    costs = [(stat.name, statistic_cost(stat, eps)) for stat, eps in zip(statistics, epsilons, strict=True)]
    for stat, spec, eps, (_, cost) in zip(statistics, specs, epsilons, costs, strict=True):
        try:
            error, _ = stat.error_quantile(eps, spec.confidence)
        except ValueError as exc:
            failures.append((spec.label, str(exc)))
            continue
        # an absolute (Gini-point) target is answered in its unit: |G~ - G| <= r G is |G~ - G| <= r |G|
        absolute = (
            float(error) * abs(float(np.asarray(stat.truth, dtype=float).ravel()[0]))
            if spec.abs_error is not None
            else None
        )
        rows.append(
            BudgetRow(stat.name, spec.kind, eps, float(error), spec.confidence, describe_cost(cost, delta), absolute)
        )
    return BudgetFirstView(
        tuple(rows),
        float(sum(epsilons)),
        tuple(failures),
        plan_cost(costs, delta=delta),
        _interval_widths(list(zip(statistics, epsilons, strict=True)), interval_level, interval_skip),
    )


# ---------------------------------------------------------------------------------------------
# What epsilon means for a person
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class AttackerBeliefView:
    """Largest posterior belief after an epsilon-DP release, from ``prior`` (and curves over priors)."""

    epsilon: float
    prior: float
    largest_belief: float
    curve_epsilons: tuple[float, ...]
    priors: tuple[float, ...]
    curves: tuple[tuple[float, ...], ...]  # curves[i][j]: largest belief at curve_epsilons[i], priors[j]

    def to_dict(self) -> dict[str, Any]:
        return {
            "epsilon": self.epsilon,
            "prior": self.prior,
            "largest_belief": self.largest_belief,
            "curve_epsilons": list(self.curve_epsilons),
        }


def attacker_belief(
    epsilon: float, prior: float, *, curve_epsilons: Sequence[float] = (0.1, 1.0, 5.0)
) -> AttackerBeliefView:
    """The bound p e^eps / (1 - p + p e^eps) at (``epsilon``, ``prior``) and its curves over the prior
    for ``curve_epsilons`` plus ``epsilon`` (``dpcore.risk.max_posterior``)."""
    eps = check_epsilon(epsilon)
    prior = check_probability(prior, "prior")
    eps_list = tuple(sorted({*(check_epsilon(e) for e in curve_epsilons), eps}))
    curves = tuple(tuple(float(v) for v in risk.max_posterior(_PRIORS, e)) for e in eps_list)
    return AttackerBeliefView(
        eps, prior, float(risk.max_posterior(prior, eps)), eps_list, tuple(float(p) for p in _PRIORS), curves
    )


# ---------------------------------------------------------------------------------------------
# The whole plan (what the generated script calls)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlannerView:
    specs: tuple[StatisticSpec, ...]
    accuracy: AccuracyFirstView
    budget: BudgetFirstView | None
    half_width: HalfWidthView | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {"statistics": [s.to_dict() for s in self.specs], **self.accuracy.to_dict()}
        if self.half_width is not None:
            out.update(self.half_width.to_dict())
        if self.budget is not None:
            out.update(self.budget.to_dict())
        return out


def planner_view(
    data: Any,
    *,
    statistics: Sequence[Mapping[str, Any]],
    income_column: str | None = None,
    group_column: str | None = None,
    group_seed: int = 0,
    allocation: Sequence[float] | None = None,
    dots_seed: int | None = None,
    half_widths: Mapping[str, Mapping[str, Any]] | None = None,
) -> PlannerView:
    """The planner's numbers for ``data``: an array of incomes, or a table (pandas DataFrame) with
    ``income_column`` and optionally ``group_column`` (the groups / cells of the grouped statistics).

    Without a group column, the grouped statistics use :func:`dpcore.planner.planning_groups`
    (random groups A/B/C of 50/30/20%, seed ``group_seed``). ``allocation`` (one epsilon per
    statistic) adds the budget-first view; ``dots_seed`` the dot plots; ``half_widths`` (``{kind: {"half_width",
    "relative", "level"}}``, one per statistic: :func:`half_width_targets`) the half-width view."""
    specs = statistic_specs(statistics)
    targets = None if half_widths is None else half_width_targets(half_widths, specs)
    if hasattr(data, "columns"):  # a table
        column = income_column or (data.columns[0] if data.shape[1] == 1 else None)
        if column is None or column not in data.columns:
            raise DPInputError(f"income_column must name a column of the table, got {income_column!r}")
        values = data[column].to_numpy(dtype=float)
    else:
        values = np.asarray(data, dtype=float)
    groups = None
    if group_column is not None:
        if not hasattr(data, "columns") or group_column not in data.columns:
            raise DPInputError(f"group_column {group_column!r} needs a table that has that column")
        groups = data[group_column].astype(str).to_numpy()
    elif any(s.kind in GROUPED_KINDS for s in specs):
        groups = planner.planning_groups(values.size, seed=check_int(group_seed, "group_seed", minimum=0))
    stats = build_statistics(values, groups, specs)
    accuracy = accuracy_first(stats, specs, dots_seed=dots_seed)
    budget = None if allocation is None else budget_first(stats, specs, list(allocation))
    if budget is not None and not math.isfinite(budget.total_epsilon):  # pragma: no cover - checked per item
        raise DPInputError("the allocation must be finite")
    half = None if targets is None else half_width_first(stats, specs, targets)
    return PlannerView(specs, accuracy, budget, half)
