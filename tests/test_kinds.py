"""dpcore.kinds: the one registry of statistic kinds, and every consumer reading it (plan files, the planner, the
release card, the app's groups). Each test compares the registry with what the code does, so an entry that says
one thing while a module does another fails here."""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import plan, planner
from dpcore.kinds import PLAN_KINDS, PLANNER_KINDS, grouped_kinds, planner_kind
from dpcore.plan import plan_from_dict, plan_from_planner_choices
from dpcore.plan.validate import _KIND_FIELDS

RNG = np.random.default_rng(36)
INCOMES = RNG.lognormal(10.5, 0.8, 400)
GROUPS = RNG.choice(["north", "south"], 400)
PARAMS = {
    "gini": {"upper": 1e6},
    "percentiles": {"n_sims": 100},
    "group_means": {"lower": 0, "upper": 2e5},
    "group_medians": {"n_sims": 100},
    "ratio": {"threshold": 20000.0, "group_x": "north", "group_y": "south"},
    "mean": {"lower": 0, "upper": 2e5},
    "count": {"threshold": 1e4},
}


def _statistic(kind):
    extra = {k: v for k, v in PARAMS[kind].items() if k not in ("group_x", "group_y")}
    return planner.make_statistic(kind, INCOMES, GROUPS, **extra)


def test_plan_files_and_the_planner_list_the_registry_kinds():
    assert plan.KINDS == tuple(PLAN_KINDS)
    assert _KIND_FIELDS == {k.name: k.fields for k in PLAN_KINDS.values()}
    assert list(planner.STAT_KINDS) == list(PLANNER_KINDS)
    assert all(k.plan_kind is None or k.plan_kind in PLAN_KINDS for k in PLANNER_KINDS.values())
    with pytest.raises(ValueError, match="the planner's are gini"):
        planner_kind("median")


@pytest.mark.parametrize("kind", list(PLANNER_KINDS))
def test_a_planned_statistic_is_released_as_its_registry_plan_kind(kind):
    """The plan the page downloads (and Release mode makes) writes each planner kind as the registry says; a kind
    without a plan form (the count above a threshold) is left out and named, never released another way."""
    made, left_out = plan_from_planner_choices(
        [kind, "gini"] if kind != "gini" else [kind],
        _statistic,
        {kind: 0.5, "gini": 0.5},
        dataset="d",
        income="income",
        cap_epsilon=5.0,
        group_column="region",
        params_for=PARAMS.get,
    )
    entry = PLANNER_KINDS[kind]
    kinds = [s.kind for s in made.statistics]
    if entry.plan_kind is None:
        assert kinds == ["gini"] and left_out and left_out[0].startswith(kind)
        return
    assert kinds[0] == entry.plan_kind and not left_out
    written = made.statistics[0]
    assert bool(written.by) == entry.grouped or entry.plan_kind == "relative_risk"
    for field, value in entry.fixed.items():
        assert list(getattr(written, field)) == value


def test_grouped_kinds_need_groups_and_the_others_do_not():
    assert grouped_kinds() == ("percentiles", "group_means", "group_medians", "ratio")
    for kind in PLANNER_KINDS:
        if kind in grouped_kinds():
            with pytest.raises(Exception, match="group"):
                planner.make_statistic(
                    kind, INCOMES, None, **{k: v for k, v in PARAMS[kind].items() if k[:6] != "group_"}
                )
        else:
            _statistic(kind)


def test_a_relative_risk_has_cells_without_by():
    """Its exposure groups are cells (their sizes noisy unless declared public): PlanKind.exposure_groups."""
    raw = {
        "version": 1,
        "dataset": "d",
        "income": "income",
        "cap_epsilon": 3.0,
        "statistics": [
            {
                "kind": "relative_risk",
                "epsilon": 1.0,
                "group": "g",
                "exposed": "a",
                "reference": "b",
                "outcome_below": 10.0,
            },
            {"kind": "mean", "epsilon": 1.0, "lower": 0.0, "upper": 10.0},
            {"kind": "mean", "epsilon": 0.5, "lower": 0.0, "upper": 10.0, "by": ["g"], "name": "mean_by_g"},
        ],
    }
    rr, whole, by = plan_from_dict(raw).statistics
    assert (rr.has_cells, whole.has_cells, by.has_cells) == (True, False, True)
    assert [k for k, v in PLAN_KINDS.items() if v.exposure_groups] == ["relative_risk"]


def test_the_release_card_names_each_planner_kind_by_its_method():
    from dpcore.release_card.content import _KIND_METHOD

    assert _KIND_METHOD == {"group_means": "mean", "group_medians": "percentiles", "ratio": "relative_risk"}
