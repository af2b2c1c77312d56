"""The planner page's views: planning data + settings -> frozen results with ``.to_dict()``.

A package of one concern per module (this ``__init__`` imports their public names: ``dpcore.views.planner.<name>``
is their public path): :mod:`~dpcore.views.planner.specs` (the plan's statistics and their privacy cost),
:mod:`~dpcore.views.planner.widths` (how wide the published intervals will be),
:mod:`~dpcore.views.planner.half_width` (accuracy first stated as interval half-widths) and
:mod:`~dpcore.views.planner.page` (the accuracy-first, budget-first and attacker views, and the whole plan).

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
* :func:`statistic_cost` - the privacy cost of a statistic in the currency its mechanism gives (the
  Gini's smooth-sensitivity noise is pure epsilon for "cauchy", (epsilon, delta) for "laplace",
  rho-zCDP for "laplace_lognormal"); a plan's, composed sequentially, is :func:`dpcore.budget.compose_plan`'s
  :class:`dpcore.budget.PlanCost` (the type of a release plan's cost too).

Neighbouring relation: replace one person's record, n public (and the group / cell sizes). The
statistics' own docstrings (``dpcore.planner``) state their mechanisms. **Planning numbers are
"""

from __future__ import annotations

from .half_width import (
    HALF_WIDTH_REL,
    SIMULATED_WIDTHS,
    HalfWidthRow,
    HalfWidthSolution,
    HalfWidthTarget,
    HalfWidthView,
    half_width_first,
    half_width_targets,
    solve_epsilon_for_half_width,
)
from .page import (
    AccuracyFirstView,
    AccuracyRow,
    AttackerBeliefView,
    BudgetFirstView,
    BudgetRow,
    PlannerView,
    StatisticDots,
    accuracy_first,
    attacker_belief,
    budget_first,
    planner_view,
)
from .specs import (
    ABSOLUTE_TARGET_KINDS,
    GROUPED_KINDS,
    N_DOTS,
    N_PLAUSIBLE,
    StatisticTarget,
    build_statistics,
    describe_cost,
    quantile_dots,
    statistic_cost,
    statistic_specs,
)
from .widths import (
    INTERVAL_DRAWS,
    INTERVAL_MAX_BIN_SCALE,
    INTERVAL_MIN_GINI_EPSILON,
    INTERVAL_UNITS,
    SKIPPED_NOTE,
    IntervalWidth,
    expected_interval_width,
)

__all__ = [
    "StatisticTarget",
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
