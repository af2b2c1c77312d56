"""The one registry of released statistic kinds, shared by plan files, the planner and the app.

A **plan kind** (:data:`PLAN_KINDS`) is what a release plan's ``[[statistics]]`` entry says (``kind = ...``), what
the command line's engines aggregate and what a record's statistic is: its plan fields, its label. A **planner
kind** (:data:`PLANNER_KINDS`) is a choice of the planner page (the seven statistics a user plans), each the plan
kind it is released as (``plan_kind``: a mean by group is a ``mean`` by the group column, a median by group a
``percentiles`` with ``q = [50]``, a relative risk of low income a ``relative_risk`` with ``outcome_below``; None: no
plan form, so planned only and not offered for release), whether it needs groups, the neighbouring relation its
cost is stated in and the public grid its released values are rounded to. Code that branches on a kind reads the
answer here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .errors import DPInputError

__all__ = ["PlanKind", "PlannerKind", "PLAN_KINDS", "PLANNER_KINDS", "planner_kind", "grouped_kinds"]


@dataclass(frozen=True)
class PlanKind:
    """A statistic kind of release plans: its label, the plan fields it takes (besides kind, by, epsilon, name) and
    whether its rows fall into groups even without ``by`` (``exposure_groups``: a relative risk's exposed and
    reference groups are cells of the release, with their sizes)."""

    name: str
    label: str
    fields: tuple[str, ...]
    exposure_groups: bool = False


@dataclass(frozen=True)
class PlannerKind:
    """A statistic the planner plans: its label, the plan kind it is released as (None: none), whether it is
    computed by group, the fields its plan entry fixes (``fixed``), the neighbouring relation of its cost and the
    public rounding grid of its released values (units of the statistic)."""

    name: str
    label: str
    plan_kind: str | None
    grouped: bool
    neighbouring: str
    rounding: float
    fixed: dict[str, Any] = field(default_factory=dict)


PLAN_KINDS: dict[str, PlanKind] = {
    k.name: k
    for k in (
        PlanKind("gini", "Gini index", ("lower", "upper", "gamma", "calibration", "noise", "delta")),
        PlanKind(
            "percentiles", "earnings percentiles", ("bins", "q", "method", "candidates", "margins", "epsilon_split")
        ),
        PlanKind("mean", "mean income", ("lower", "upper")),
        PlanKind(
            "relative_risk",
            "relative risk",
            ("group", "exposed", "reference", "outcome", "outcome_below"),
            exposure_groups=True,
        ),
    )
}

#: in the order the planner page lists them. Group / cell labels and sizes are public in every grouped relation,
#: so the number of groups is public too: a refusal that depends on it (a relative risk needs two groups) is
#: decided from public inputs.
PLANNER_KINDS: dict[str, PlannerKind] = {
    k.name: k
    for k in (
        PlannerKind("gini", "Gini index", "gini", False, "replace one record; n and [lower, upper] public", 1e-6),
        PlannerKind(
            "percentiles",
            "Earnings percentiles by cell (PSEO)",
            "percentiles",
            True,
            "replace one person within a cell; cell labels and sizes and the bin edges public",
            1.0,
        ),
        PlannerKind(
            "group_means",
            "Mean income by group",
            "mean",
            True,
            "replace one person's value within their group; group labels and sizes public",
            0.01,
        ),
        PlannerKind(
            "group_medians",
            "Median income by group",
            "percentiles",
            True,
            "replace one person within a group; group labels and sizes and the bin edges public",
            1.0,
            {"q": [50.0]},
        ),
        PlannerKind(
            "ratio",
            "Relative risk of low income (group x vs group y)",
            "relative_risk",
            True,
            "replace one record (it may change both counts); group labels, n_x and n_y public",
            1e-6,
        ),
        PlannerKind("mean", "Mean income", "mean", False, "replace one record; n and the clip range public", 0.01),
        PlannerKind("count", "Number of people above an income", None, False, "replace one record; n public", 1.0),
    )
}


def planner_kind(name: str) -> PlannerKind:
    """The registry entry of a planner kind (a DPInputError names the kinds there are)."""
    if not isinstance(name, str) or name not in PLANNER_KINDS:
        raise DPInputError(f"unknown statistic {name!r}; the planner's are {', '.join(PLANNER_KINDS)}")
    return PLANNER_KINDS[name]


def grouped_kinds() -> tuple[str, ...]:
    """The planner kinds computed by group (they need a group column of the data)."""
    return tuple(k.name for k in PLANNER_KINDS.values() if k.grouped)
