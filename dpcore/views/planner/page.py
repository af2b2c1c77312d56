"""The planner page's views: accuracy first, budget first, what epsilon means for a person, and the whole plan
(:func:`planner_view`, what the generated script calls)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import intervals as intervals_lib
from ... import planner, risk
from ...budget import PlanCost, compose_plan
from ...validation import DPInputError, check_epsilon, check_int, check_probability
from .half_width import HalfWidthView, half_width_first, half_width_targets
from .specs import (
    GROUPED_KINDS,
    N_DOTS,
    N_PLAUSIBLE,
    StatisticTarget,
    build_statistics,
    check_pair,
    describe_cost,
    plan_delta,
    quantile_dots,
    statistic_cost,
    statistic_specs,
)
from .widths import IntervalWidth, expected_interval_widths

#: Priors of the attacker-belief curves (201 points in [0, 1], as dpcore.risk.posterior_curve).
_PRIORS = np.linspace(0.0, 1.0, 201)


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
    specs: Sequence[StatisticTarget],
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
    check_pair(statistics, specs)
    rows, dots, failures, costs, solved = [], [], [], [], []
    delta = plan_delta(statistics)
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
            errors_abs: tuple[tuple[float, ...], ...] | None = None
            if spec.abs_error is None:  # relative errors, in % of the true value
                q = quantile_dots(sims / stat.truth[None, :] - 1.0, n_dots)
                errors_percent = tuple(tuple(100.0 * float(v) for v in row) for row in q)
            else:  # an absolute target: the dots in its unit, no percent plot
                q = quantile_dots(sims - stat.truth[None, :], n_dots)
                errors_percent, errors_abs = (), tuple(tuple(float(v) for v in row) for row in q)
            dots.append(
                StatisticDots(
                    stat.name,
                    spec.kind,
                    float(sol.epsilon),
                    target.rel_error,
                    spec.confidence,
                    tuple(stat.labels),
                    errors_percent,
                    spec.abs_error,
                    errors_abs,
                )
            )
    total_cost = compose_plan(costs, delta=delta) if rows else None
    total = total_cost.epsilon if total_cost is not None else 0.0  # pure plans: the sum of the epsilons (as plan_total)
    return AccuracyFirstView(
        tuple(rows),
        float(total),
        float(risk.max_posterior(0.01, total)) if rows else 0.01,
        tuple(dots),
        dots_seed,
        tuple(failures),
        total_cost,
        expected_interval_widths(solved, interval_level),
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
    specs: Sequence[StatisticTarget],
    allocation: Sequence[float],
    *,
    interval_level: float | None = intervals_lib.DEFAULT_LEVEL,
    interval_skip: Sequence[str] = (),
) -> BudgetFirstView:
    """The relative error each statistic reaches, at its own confidence level, with the epsilon
    ``allocation[i]`` (``total_epsilon`` is their sum; ``cost`` is the split composed in each
    statistic's currency by :func:`dpcore.budget.compose_plan`: a pure plan costs exactly the sum), and the expected width of each
    statistic's published interval at that epsilon (:func:`expected_interval_width`, ``interval_level``), except
    for the kinds in ``interval_skip`` (a page whose sliders move epsilon continuously skips the Gini, whose split is
    optimised per epsilon in seconds)."""
    check_pair(statistics, specs)
    if isinstance(allocation, (str, bytes)) or len(allocation) != len(specs):
        raise DPInputError(f"the allocation needs one epsilon per statistic ({len(specs)}), got {allocation!r}")
    epsilons = [check_epsilon(eps, f"epsilon of {spec.label}") for spec, eps in zip(specs, allocation, strict=True)]
    rows, failures = [], []
    delta = plan_delta(statistics)
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
        compose_plan(costs, delta=delta),
        expected_interval_widths(list(zip(statistics, epsilons, strict=True)), interval_level, interval_skip),
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
    specs: tuple[StatisticTarget, ...]
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
