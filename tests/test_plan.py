"""Release plan files (dpcore.plan): the issue's example, validation messages, writing, the planner bridge."""

from __future__ import annotations

import math

import numpy as np
import pytest
import tomllib

from dpcore import plan as planmod
from dpcore.plan import PlanError, load_plan, parse_plan, plan_from_dict, plan_from_planner, write_plan
from dpcore.plan import write as plan_write
from ui.planner import sections as planner_sections

ISSUE_PLAN = planmod.EXAMPLE_PLAN  # the issue's example, verbatim (comments included)


def _raw() -> dict:
    return tomllib.loads(ISSUE_PLAN)


def _error(raw: dict) -> str:
    with pytest.raises(PlanError) as info:
        plan_from_dict(raw)
    return str(info.value)


def test_issue_example_parses():
    plan = parse_plan(ISSUE_PLAN)
    assert plan.version == 1 and plan.dataset == "pseo-earnings-2019" and plan.income == "earnings"
    assert plan.cap_epsilon == 3.0
    assert [s.kind for s in plan.statistics] == ["percentiles", "gini", "mean"]
    pct, gini, mean = plan.statistics
    from dpcore.percentiles import PSEO_BIN_EDGES

    assert np.array_equal(np.array(pct.bins), PSEO_BIN_EDGES) and pct.bins_scheme == "pseo"
    assert pct.q == (25.0, 50.0, 75.0) and pct.by == ("institution", "degree_level", "cohort")
    assert (gini.lower, gini.upper, gini.gamma, gini.calibration) == (0.0, 2_000_000.0, 2.0, "tight")
    assert (mean.lower, mean.upper) == (0.0, 500_000.0)
    # parallel inside a statistic, sequential across: 1 + 0.5 + 0.5
    assert plan.total_epsilon == pytest.approx(2.0)
    assert plan.rows_per_person == 1
    assert plan.columns() == ("earnings", "institution", "degree_level", "cohort", "state")


@pytest.mark.parametrize(
    "mutate, expected",
    [
        (lambda r: r["statistics"][1].pop("epsilon"), "statistics[2] (gini): field 'epsilon' is required"),
        (lambda r: r["statistics"][1].update(epsilon=-1), "statistics[2] (gini): field 'epsilon' must be > 0"),
        (
            lambda r: r["statistics"][2].update(upper=-5),
            "statistics[3] (mean): field 'upper' must be greater than lower",
        ),
        (lambda r: r["statistics"][1].pop("upper"), "statistics[2] (gini): field 'upper' is required"),
        (lambda r: r["statistics"][0].update(kind="median"), "statistics[1]: field 'kind' must be one of"),
        (lambda r: r["statistics"][0].update(epsilom=1), "statistics[1] (percentiles): field 'epsilom' is not a field"),
        (
            lambda r: r["statistics"][0].update(bins=[1, 3, 2]),
            "statistics[1] (percentiles): field 'bins' edges must be strictly increasing",
        ),
        (lambda r: r["statistics"][0].update(bins="weird"), "statistics[1] (percentiles): field 'bins' must be one of"),
        (
            lambda r: r["statistics"][0].update(q=[50, 150]),
            "statistics[1] (percentiles): field 'q' percentiles must be in (0, 100]",
        ),
        (lambda r: r["statistics"][0].update(q="median"), "statistics[1] (percentiles): field 'q'"),
        (
            lambda r: r["statistics"][2].update(by="state"),
            """statistics[3] (mean): field 'by' must be a list of column names, e.g. by = ["state"]""",
        ),
        (lambda r: r["statistics"][1].update(lower=-1), "statistics[2] (gini): field 'lower' must be >= 0"),
        (lambda r: r["statistics"][1].update(gamma=1.0), "statistics[2] (gini): field 'gamma'"),
        (lambda r: r["statistics"][2].update(lower="zero"), "statistics[3] (mean): field 'lower' must be a number"),
        (
            lambda r: r["statistics"][2].update(by=["state", "state"]),
            "statistics[3] (mean): field 'by' names a column twice",
        ),
        (
            lambda r: r["statistics"][2].update(by=["earnings"]),
            "statistics[3] (mean): field 'by' contains the income column",
        ),
        (lambda r: r["statistics"][2].update(epsilon=2.5), "the statistics cost epsilon = 4 in total"),
        (
            lambda r: r["statistics"][2].update(epsilon=3.5),
            "statistics[3] (mean): field 'epsilon' 3.5 exceeds the plan's cap",
        ),
        (lambda r: r.update(version=2), "plan: field 'version' must be 1"),
        (lambda r: r.pop("income"), "plan: field 'income' is required"),
        (lambda r: r.pop("cap_epsilon"), "plan: field 'cap_epsilon' is required"),
        (lambda r: r.update(cap_epsilon=0), "plan: field 'cap_epsilon' must be > 0"),
        (lambda r: r.update(statistics=[]), "plan: field 'statistics' is required"),
        (lambda r: r.update(extra=1), "plan: field 'extra' is not a plan field"),
        (lambda r: r.update(max_rows_per_person=2), "needs a 'privacy_unit'"),
        (lambda r: r.update(privacy_unit="person"), "'max_rows_per_person' is required with a privacy_unit"),
        (lambda r: r.update(privacy_unit="person", max_rows_per_person=0), "must be an integer in [1, 1000]"),
        (
            lambda r: r.update(privacy_unit="state", max_rows_per_person=2),
            "statistics[2] (gini): field 'by' uses the privacy unit",
        ),
        (lambda r: r["statistics"][1].update(name="gini by state"), "statistics[2] (gini): field 'name' must be"),
        (
            lambda r: r["statistics"][1].update(name="x") or r["statistics"][2].update(name="x"),
            "statistics[2] (gini): field 'name' 'x' is used by two",
        ),
    ],
)
def test_validation_names_the_statistic_and_field(mutate, expected):
    raw = _raw()
    mutate(raw)
    assert expected in _error(raw)


RR = {
    "kind": "relative_risk",
    "epsilon": 0.5,
    "by": ["state"],
    "group": "treated",
    "exposed": "yes",
    "reference": "no",
    "outcome": "employed",
}


def test_relative_risk_fields():
    raw = _raw()
    raw["statistics"].append(dict(RR))
    raw["cap_epsilon"] = 3.0
    plan = plan_from_dict(raw)
    rr = plan.statistics[3]
    assert (rr.group, rr.exposed, rr.reference, rr.outcome, rr.outcome_below) == (
        "treated",
        "yes",
        "no",
        "employed",
        None,
    )
    assert plan.columns()[-2:] == ("treated", "employed")
    for mutate, expected in [
        (lambda s: s.pop("group"), "statistics[4] (relative_risk): field 'group' is required"),
        (lambda s: s.update(outcome_below=30000), "field 'outcome' give exactly one of"),
        (lambda s: s.pop("outcome"), "field 'outcome' give exactly one of"),
        (lambda s: s.update(reference="yes"), "field 'reference' must differ from exposed"),
        (lambda s: s.update(group="state"), "field 'group' 'state' is also in 'by'"),
    ]:
        raw2 = _raw()
        stat = dict(RR)
        mutate(stat)
        raw2["statistics"].append(stat)
        assert expected in _error(raw2)
    raw3 = _raw()
    stat = {k: v for k, v in RR.items() if k != "outcome"}
    stat["outcome_below"] = 30000
    stat["exposed"] = 1  # integer labels are compared as text
    raw3["statistics"].append(stat)
    rr = plan_from_dict(raw3).statistics[3]
    assert rr.outcome_below == 30000.0 and rr.exposed == "1" and rr.outcome is None


def test_invalid_toml_and_missing_file(tmp_path):
    with pytest.raises(PlanError, match="not valid TOML"):
        parse_plan("version = = 1")
    with pytest.raises(PlanError, match="no plan file"):
        load_plan(tmp_path / "missing.toml")


def test_write_round_trip(tmp_path):
    raw = _raw()
    raw["statistics"].append(dict(RR, name="rr-by-state", exposed='ye"s\\', by=["state"]))
    raw["statistics"][0]["bins"] = [0, 10000.5, 20000, 1e6]
    raw["privacy_unit"] = "person"
    raw["max_rows_per_person"] = 3
    raw["bounding_seed"] = 7
    raw["description"] = "Zürich \"quoted\"\nline"
    plan = plan_from_dict(raw)
    path = tmp_path / "plan.toml"
    text = write_plan(plan, path)
    assert path.read_text() == text
    again = load_plan(path)
    assert again == plan
    assert again.statistics[3].exposed == 'ye"s\\'
    assert again.description == "Zürich \"quoted\"\nline"
    # write_plan without a path only returns the text; a dict is validated first
    assert write_plan(plan) == text
    with pytest.raises(PlanError):
        write_plan({"version": 1})


def test_privacy_unit_rows_per_person():
    raw = _raw()
    raw.update(privacy_unit="person", max_rows_per_person=4)
    plan = plan_from_dict(raw)
    assert plan.rows_per_person == 4 and plan.bounding_seed == 0
    assert plan.total_epsilon == pytest.approx(2.0)  # the calibration absorbs m; the cost stays epsilon


def test_plan_from_planner():
    from dpcore import planner

    rng = np.random.default_rng(0)
    x = rng.lognormal(10.5, 0.8, 400)
    groups = rng.choice(["a", "b"], 400)
    items = [
        (planner.make_statistic("gini", x, upper=1e6), 0.5),
        (planner.make_statistic("percentiles", x, groups, n_sims=100), 1.0),
        (planner.make_statistic("group_means", x, groups, lower=0, upper=2e5), 0.25),
        (planner.make_statistic("mean", x, lower=0, upper=2e5), np.float64(0.25)),
        dict(RR, by=[]),
    ]
    plan = plan_from_planner(items, dataset="cps-2023", income="income", cap_epsilon=5.0, by=["region"])
    kinds = [(s.kind, s.by) for s in plan.statistics]
    assert kinds == [
        ("gini", ()),
        ("percentiles", ("region",)),
        ("mean", ("region",)),
        ("mean", ()),
        ("relative_risk", ()),
    ]
    assert plan.statistics[0].upper == 1e6 and plan.statistics[1].bins_scheme == "pseo"
    assert plan.total_epsilon == pytest.approx(2.5 + 3 * 0.1)  # + n_epsilon per statistic with noisy cell sizes
    text = write_plan(plan)
    assert parse_plan(text) == plan
    with pytest.raises(PlanError, match="no release-plan form"):
        plan_from_planner(
            [(planner.make_statistic("count", x, threshold=1e4), 0.1)], dataset="d", income="i", cap_epsilon=1.0
        )
    with pytest.raises(PlanError, match="needs the cell column names"):
        plan_from_planner(
            [(planner.make_statistic("percentiles", x, groups, n_sims=100), 1.0)],
            dataset="d",
            income="i",
            cap_epsilon=1.0,
        )


def test_toml_writer_numbers():
    assert plan_write._toml_value(2.0) == "2.0" and plan_write._toml_value(1e-5) == "1e-05"
    assert tomllib.loads(f"a = {plan_write._toml_value(1e-5)}")["a"] == 1e-5
    assert tomllib.loads(f"a = {plan_write._toml_value(0.1)}")["a"] == 0.1
    with pytest.raises(PlanError):
        plan_write._toml_value(math.inf)


def test_plan_from_planner_choices():
    from dpcore import planner
    from dpcore.plan import plan_from_planner_choices

    rng = np.random.default_rng(1)
    x = rng.lognormal(10.5, 0.8, 300)
    groups = rng.choice(["north", "south"], 300)
    params = {
        "gini": {"upper": 1e6},
        "percentiles": {"n_sims": 100},
        "group_means": {"lower": 0, "upper": 2e5},
        "ratio": {"threshold": 20000.0, "group_x": "north", "group_y": "south"},
        "count": {"threshold": 1e4},
    }

    def stat(kind):
        extra = {k: v for k, v in params[kind].items() if k not in ("group_x", "group_y")}
        return planner.make_statistic(kind, x, groups, **extra)

    kinds = ["gini", "percentiles", "group_means", "ratio", "count"]
    alloc = {"gini": 0.5, "percentiles": 1.0, "group_means": 0.25, "ratio": 0.25, "count": 0.1}
    plan, left_out = plan_from_planner_choices(
        kinds,
        stat,
        alloc,
        dataset="upload.csv",
        income="income",
        cap_epsilon=1.0,
        group_column="region",
        params_for=params.get,
    )
    assert [s.kind for s in plan.statistics] == ["gini", "percentiles", "mean", "relative_risk"]
    rr = plan.statistics[3]
    assert (rr.group, rr.exposed, rr.reference, rr.outcome_below) == ("region", "north", "south", 20000.0)
    assert plan.cap_epsilon == pytest.approx(2.0 + 3 * 0.1)  # raised to the plan's total (+ n_epsilon: noisy n)
    assert len(left_out) == 1 and left_out[0].startswith("count")
    plan2, left_out2 = plan_from_planner_choices(
        ["gini", "percentiles"], stat, alloc, dataset="d", income="i", cap_epsilon=3.0
    )
    assert [s.kind for s in plan2.statistics] == ["gini"] and "percentiles" in left_out2[0]
    with pytest.raises(PlanError, match="none of the chosen statistics"):
        plan_from_planner_choices(["count"], stat, alloc, dataset="d", income="i", cap_epsilon=1.0)


def test_planner_page_offers_the_release_plan():
    """The planner's Share view has a "Download the release plan" button (app_pages/planner.py)."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(Path(__file__).resolve().parents[1] / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/planner.py")
    at.run()
    view = [r for r in at.radio if "View" in (r.label or "")][0]
    view.set_value(planner_sections.SHARE.heading).run()
    assert not at.exception and not at.error
    labels = [b.label for b in at.get("download_button")]
    assert "Download the release plan" in labels
    captions = " ".join(c.value for c in at.caption)
    assert "Not in the plan: percentiles: needs a group (cell) column" in captions  # synthetic data: no cells


# ---------------------------------------------------------------------------------------------
# Documented limits (docs/plan_format.md, "Limits"): refused up front with a message, never echoed whole
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("field, value", [("lower", -1e300), ("upper", 1e300), ("upper", 1e16)])
def test_bounds_beyond_the_sanity_range_are_refused(field, value):
    raw = _raw()
    raw["statistics"][2][field] = value  # the mean: lower may be negative, so only the range refuses it
    message = _error(raw)
    assert f"statistics[3] (mean): field '{field}' must be within +-1e+15" in message
    raw = _raw()
    raw["statistics"][0]["bins"] = [0, 1e300]
    assert "statistics[1] (percentiles): field 'bins' must be within +-1e+15" in _error(raw)
    raw = _raw()
    raw["statistics"].append(dict(RR, outcome_below=1e300))
    del raw["statistics"][-1]["outcome"]
    assert "field 'outcome_below' must be within +-1e+15" in _error(raw)
    raw = _raw()
    raw["statistics"][2]["upper"] = planmod.MAX_ABS_INCOME_BOUND  # the limit itself is accepted
    assert plan_from_dict(raw).statistics[2].upper == 1e15


def test_description_longer_than_the_limit_is_refused_without_echo():
    raw = _raw()
    raw["description"] = "x" * planmod.MAX_DESCRIPTION_CHARS
    assert len(plan_from_dict(raw).description) == 2000
    raw["description"] = "x" * 10_000_000
    message = _error(raw)
    assert "field 'description' must be at most 2,000 characters" in message and "10,000,000" in message
    assert len(message) < 300


def test_statistics_per_plan_limit_refused_before_checking_them():
    raw = _raw()
    one = {"kind": "mean", "epsilon": 0.001, "lower": 0, "upper": 1000}
    raw["statistics"] = [dict(one) for _ in range(planmod.MAX_STATISTICS)]
    raw["cap_epsilon"] = 10.0
    plan = plan_from_dict(raw)  # 1,000 statistics: accepted (duplicate-name check is linear, not quadratic)
    assert len(plan.statistics) == 1000 and plan.statistics[-1].name == "1000_mean"
    raw["statistics"] = [dict(one) for _ in range(100_000)] + [{"kind": "nonsense"}]
    message = _error(raw)  # refused by count, before the bad last statistic is reached
    assert message == ("plan: at most 1,000 statistics per plan, got 100,001 (split the release into several plans)")


def test_plan_file_size_and_long_values_are_refused_with_short_messages(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text(ISSUE_PLAN + "\n" * planmod.MAX_PLAN_BYTES)
    with pytest.raises(PlanError, match="is at most 2,000,000 bytes"):
        load_plan(big)
    with pytest.raises(PlanError, match="a plan file is at most"):
        parse_plan(ISSUE_PLAN + "#" * planmod.MAX_PLAN_BYTES)
    huge = "c" * 5_000_000
    for mutate, expected in [
        (lambda r: r.update(income=huge), "plan: field 'income' must be a column name of at most 200 characters"),
        (lambda r: r["statistics"][1].update(by=[huge]), "field 'by' must be a column name of at most 200"),
        (lambda r: r.update(dataset=huge), "plan: field 'dataset' must be a non-empty name"),
        (lambda r: r["statistics"][1].update(name=huge), "field 'name' must be 1-64 letters"),
        (lambda r: r["statistics"][1].update(kind=huge), "field 'kind' must be one of"),
        (lambda r: r["statistics"][1].update({huge: 1}), "is not a field of a gini statistic"),
        (lambda r: r.update({huge: 1}), "is not a plan field"),
        (lambda r: r["statistics"].append(dict(RR, exposed=huge)), "field 'exposed' must be a value of at most 200"),
    ]:
        raw = _raw()
        mutate(raw)
        message = _error(raw)
        assert expected in message and len(message) < 400, message[:500]
