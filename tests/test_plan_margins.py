"""A percentiles statistic's ``margins`` in a release plan: validation, the split of epsilon over the levels, the
table names, the plan-file round trip and ``dpcore check``."""

from __future__ import annotations

import pytest

from dpcore import cli
from dpcore.kinds import PLAN_KINDS
from dpcore.plan import PlanError, parse_plan, plan_from_dict, plan_to_toml

BASE = """
version = 1
dataset = "margins"
income = "earnings"
cap_epsilon = 3.0
cell_sizes = "public"

[[statistics]]
kind = "percentiles"
name = "h"
by = ["state", "institution"]
epsilon = 1.5
"""


def _plan(extra: str):
    return parse_plan(BASE + extra)


def test_margins_levels_split_and_names():
    spec = _plan('margins = [[], ["state"]]').statistics[0]
    assert spec.margins == (("state",), ())  # finest first, whatever the plan's order
    assert spec.level_columns() == (("state", "institution"), ("state",), ())
    assert spec.level_names() == ("h", "h__state", "h__total")
    assert spec.level_epsilons() == pytest.approx((0.5, 0.5, 0.5))  # evenly unless the plan says
    weighted = _plan('margins = [["state"], []]\nepsilon_split = [2, 1, 1]').statistics[0]
    assert weighted.level_epsilons() == pytest.approx((0.75, 0.375, 0.375))
    assert sum(weighted.level_epsilons()) == pytest.approx(1.5)
    assert "margins" in PLAN_KINDS["percentiles"].fields and "epsilon_split" in PLAN_KINDS["percentiles"].fields


def test_margins_round_trip_through_the_plan_file():
    plan = _plan('margins = [["state"], []]\nepsilon_split = [2, 1, 1]')
    assert parse_plan(plan_to_toml(plan)) == plan
    assert plan_from_dict(plan.to_dict()) == plan
    plain = _plan("")
    assert plain.statistics[0].margins is None and "margins" not in plain.statistics[0].to_dict()


def test_the_levels_noise_is_drawn_ahead_at_their_scales():
    plan = _plan('margins = [["state"], []]\nepsilon_split = [2, 1, 1]')
    assert plan.histogram_noise_scales() == pytest.approx([2 / 0.75, 2 / 0.375, 2 / 0.375])


@pytest.mark.parametrize(
    ("extra", "field", "words"),
    [
        ('margins = [["institution"], ["state"]]', "margins", "nested"),  # crossed: a lattice, not a tree
        ('margins = [["degree"]]', "margins", "not among"),
        ('margins = [["state", "institution"]]', "margins", "coarser"),
        ('margins = ["state"]', "margins", "list of lists"),
        ("margins = []", "margins", "leave it out"),
        ('margins = [["state"], ["state"]]', "margins", "twice"),
        ('margins = [["state"], []]\nepsilon_split = [1, 2]', "epsilon_split", "3 positive weights"),
        ('margins = [["state"], []]\nepsilon_split = [1, 0, 1]', "epsilon_split", "> 0"),
        ('margins = [["state"], []]\nepsilon_split = [1, 1e7, 1]', "epsilon_split", "1e6"),
        ("epsilon_split = [1, 1]", "epsilon_split", "give margins"),
        ('margins = [[]]\nmethod = "exponential"\ncandidates = "pseo-fine"\nq = [50]', "margins", "histogram"),
    ],
)
def test_bad_margins_are_refused_naming_the_field(extra, field, words):
    with pytest.raises(PlanError) as info:
        _plan(extra)
    assert f"statistics[1] (percentiles): field '{field}'" in str(info.value) and words in str(info.value)


def test_margins_need_by_and_apply_to_percentiles_only():
    with pytest.raises(PlanError, match="needs 'by' columns"):
        parse_plan(BASE.replace('by = ["state", "institution"]', "by = []") + "margins = [[]]")
    mean = BASE.replace('kind = "percentiles"', 'kind = "mean"') + "lower = 0\nupper = 1000\nmargins = [[]]"
    with pytest.raises(PlanError, match="field 'margins' is not a field of a mean statistic"):
        parse_plan(mean)


def test_a_margin_table_name_taken_by_another_statistic_is_refused():
    second = BASE.split("[[statistics]]")[1].replace('name = "h"', 'name = "h__state"')
    text = BASE + 'margins = [["state"], []]\n\n[[statistics]]' + second
    with pytest.raises(PlanError, match="'h__state' is used by two statistics"):
        parse_plan(text)


def test_a_margin_table_name_is_a_safe_file_name():
    text = BASE.replace('["state", "institution"]', '["../state x", "institution"]') + 'margins = [["../state x"]]'
    assert parse_plan(text).statistics[0].level_names() == ("h", "h__-state-x")


def test_check_prints_the_split_over_the_levels(tmp_path, capsys):
    path = tmp_path / "plan.toml"
    path.write_text(BASE + 'margins = [["state"], []]\nepsilon_split = [2, 1, 1]\n')
    assert cli.main(["check", str(path)]) == 0
    out = capsys.readouterr().out
    assert "epsilon = 1.5 of cap 3" in out
    assert "level h: by state, institution, epsilon = 0.75" in out
    assert "level h__state: by state, epsilon = 0.375" in out
    assert "level h__total: by (whole table), epsilon = 0.375" in out
    assert "non-negative integers that add up" in out
