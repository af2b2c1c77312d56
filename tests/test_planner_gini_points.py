"""The planner's Gini target is in Gini points (absolute ±, 0.01 = one point), as on the Gini page; it was
a relative error in % of the Gini. An old link's relative target (planner_gini_tol) is converted once with
the planning data's Gini, and the page says so; the plan is the same."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_clean, open_page

from dpcore import defaults
from dpcore import planner as planner_lib
from dpcore.views import planner as planner_experiments

PAGE = "app_pages/planner.py"
QUERY = {"data_n": "2000", "planner_stats": "gini"}


def _gini_row(at):
    table = at.table[0].value
    return table[table["statistic"] == "Gini index"].iloc[0]


def test_gini_target_is_in_gini_points_like_the_gini_page():
    at = open_page(PAGE, timeout=240, **QUERY)
    assert_clean(at)
    field = at.number_input(key="planner_gini_err")
    assert "Gini points" in field.label and field.value == defaults.ANSWER_TARGET_GINI
    assert not [s for s in at.slider if s.key == "planner_gini_tol"]
    row = _gini_row(at)
    assert row["target"].startswith("within ±0.01 of the true Gini (1 Gini point) with 90% probability")
    values = np.asarray(at.session_state["dataset"].values, dtype=float)
    stat = planner_lib.make_statistic("gini", values, upper=defaults.INCOME_UPPER)
    expected = planner_lib.solve_epsilon(stat, planner_lib.AccuracyTarget(0.01 / stat.truth[0], 0.9)).epsilon
    assert row["smallest ε"] == expected
    # its dot plot is drawn in the same unit: the band is ±0.01 of the Gini, not a % of it
    specs = [chart.proto.spec for chart in at.get("plotly_chart")]
    gini_dots = [spec for spec in specs if "Gini index at ε" in spec]
    assert gini_dots and "one Gini point" in gini_dots[0] and "target ±0.01\"" in gini_dots[0]


def test_an_old_link_with_a_relative_gini_target_is_converted_and_said():
    at = open_page(PAGE, timeout=240, planner_gini_tol="10", **QUERY)
    assert_clean(at)
    values = np.asarray(at.session_state["dataset"].values, dtype=float)
    stat = planner_lib.make_statistic("gini", values, upper=defaults.INCOME_UPPER)
    points = round(0.10 * float(stat.truth[0]), 4)
    assert at.number_input(key="planner_gini_err").value == pytest.approx(points)
    assert any("relative error of 10% of the Gini" in i.value and f"±{points:.4g}" in i.value for i in at.info)
    assert "planner_gini_tol" not in at.query_params
    # the same plan as the old relative target, up to the rounding of the points to 4 decimals
    old = planner_lib.solve_epsilon(stat, planner_lib.AccuracyTarget(0.10, 0.9)).epsilon
    assert _gini_row(at)["smallest ε"] == pytest.approx(old, rel=2e-3)


def test_absolute_targets_are_for_the_gini_only():
    spec = planner_experiments.StatisticTarget("gini", (("upper", 1e6),), None, 0.9, abs_error=0.02)
    assert spec.to_dict()["abs_error"] == 0.02
    assert planner_experiments.statistic_specs([spec.to_dict()]) == (spec,)
    with pytest.raises(ValueError, match="for the Gini only"):
        planner_experiments.StatisticTarget("mean", (), None, 0.9, abs_error=100.0)
    with pytest.raises(ValueError, match="whole range"):
        planner_experiments.StatisticTarget("gini", (), None, 0.9, abs_error=1.5)
    with pytest.raises(ValueError, match="not both"):
        planner_experiments.StatisticTarget("gini", (), 0.1, 0.9, abs_error=0.01)
