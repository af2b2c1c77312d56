"""Accuracy first stated as the half-width of the published intervals: the smallest epsilon whose expected interval
half-widths meet a :class:`HalfWidthTarget` (an ITP search on log epsilon), per statistic and for the plan."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import intervals as intervals_lib
from ... import planner, risk
from ...budget import PlanCost, compose_plan
from ...validation import DPInputError, check_epsilon, check_int, check_positive, check_probability
from .specs import StatisticTarget, check_pair, describe_cost, plan_delta, statistic_cost
from .widths import IntervalWidth, expected_width_and_typical

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
    width, typical = expected_width_and_typical(stat, eps, target.level, seed)
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
    page's grid at the default public inputs), for its public inputs; a width there costs no optimisation (each
    other width optimises a split: docs/benchmarks.md, "A first half-width plan of the Gini")."""
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
    targets: Mapping[str, Mapping[str, Any] | HalfWidthTarget], specs: Sequence[StatisticTarget]
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
    specs: Sequence[StatisticTarget],
    targets: Sequence[HalfWidthTarget],
    *,
    seed: int = 0,
) -> HalfWidthView:
    """Smallest epsilon per statistic whose published intervals meet its half-width target
    (:func:`solve_epsilon_for_half_width`), the sequential total (:func:`dpcore.budget.compose_plan`) and the attacker belief bound
    at that total (:func:`dpcore.risk.max_posterior`). A target that cannot be met is listed in ``failures`` with
    the solver's reason; the total covers the others (as :func:`accuracy_first`)."""
    check_pair(statistics, specs)
    if len(targets) != len(specs):
        raise DPInputError(f"one half-width target per statistic is needed ({len(specs)}), got {len(targets)}")
    rows, failures, costs = [], [], []
    delta = plan_delta(statistics)
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
    total_cost = compose_plan(costs, delta=delta) if rows else None
    total = total_cost.epsilon if total_cost is not None else 0.0
    return HalfWidthView(
        tuple(rows), float(total), float(risk.max_posterior(0.01, total)) if rows else 0.01, tuple(failures), total_cost
    )
