"""One rule for negative incomes in the app and the command line: a plan field, never a silent clip.

The audit found the command line keeping negative incomes (clipped to the lower bound) in a file the app
makes the user refuse, drop or clip: the same file gave two different n. A plan now says
``negative_incomes = "refuse" | "clip" | "drop"``; without it a negative income stops the release before
any charge, in every engine; the record states the rule; the planner's plan file writes the app's choice.
"""

from __future__ import annotations

import json

import pandas as pd
import pytest
import tomllib
from streamlit.testing.v1 import AppTest
from test_release_panel import HARNESS

from dpcore import cli
from dpcore import plan as plan_module
from ui.planner import sections as planner_sections

PLAN_TEXT = (
    'version = 1\ndataset = "losses"\nincome = "income"\ncap_epsilon = 4.0\n{extra}\n'
    '[[statistics]]\nkind = "mean"\nepsilon = 0.5\nlower = 0\nupper = 200000\n'
)


@pytest.fixture()
def losses(tmp_path):
    frame = pd.DataFrame({"income": [52_000.0, -3_500.0, 61_000.0, 48_250.5, 0.0, 75_000.0] * 20})
    data = tmp_path / "losses.csv"
    frame.to_csv(data, index=False)
    return tmp_path, data


def _release(tmp_path, data, extra: str, engine: str, out: str):
    plan = tmp_path / f"plan_{out}.toml"
    plan.write_text(PLAN_TEXT.format(extra=extra))
    return cli.main(
        [
            "release",
            str(plan),
            "--data",
            str(data),
            "--out",
            str(tmp_path / out),
            "--engine",
            engine,
            "--ledger",
            f"sqlite:///{tmp_path / f'ledger_{out}.db'}",
            "--init-ledger",
            "--quiet",
        ]
    )


@pytest.mark.parametrize("engine", ["duckdb", "pandas"])
def test_a_plan_without_a_rule_refuses_negative_incomes_before_any_charge(losses, engine, capsys):
    tmp_path, data = losses
    assert _release(tmp_path, data, "", engine, "refused") == 2  # was 0: clipped silently
    err = capsys.readouterr().err
    assert "negative_incomes = 'refuse'" in err and "nothing was charged" in err and "Traceback" not in err
    assert not (tmp_path / "refused").exists()


@pytest.mark.parametrize("rule", ["clip", "drop"])
def test_clip_and_drop_release_with_the_rule_in_the_record_and_every_row_in_n(losses, rule, capsys):
    tmp_path, data = losses
    assert _release(tmp_path, data, f'negative_incomes = "{rule}"', "pandas", rule) == 0, capsys.readouterr().err
    record = json.loads((tmp_path / rule / "release_record.json").read_text())
    assert record["negative_incomes"].startswith(f"{rule}:")
    assert record["plan"]["negative_incomes"] == rule
    table = pd.read_csv(tmp_path / rule / "01_mean.csv")
    if "n" in table:  # the row stays in n under both rules (drop counts it as a missing income)
        assert int(table["n"].iloc[0]) == 120


def test_the_plan_field_is_checked_and_written():
    with pytest.raises(plan_module.PlanError, match="negative_incomes"):
        plan_module.parse_plan(PLAN_TEXT.format(extra='negative_incomes = "ignore"'))
    parsed = plan_module.parse_plan(PLAN_TEXT.format(extra=""))
    assert parsed.negative_incomes == "refuse"  # no silent default: refuse unless the plan says
    clipped = plan_module.parse_plan(PLAN_TEXT.format(extra='negative_incomes = "clip"'))
    assert tomllib.loads(plan_module.plan_to_toml(clipped))["negative_incomes"] == "clip"


def test_the_planners_plan_file_writes_the_apps_choice():
    at = AppTest.from_string(HARNESS, default_timeout=300)
    for key, value in {
        "data_source": "Upload a CSV or Parquet file",
        "data_neg": "clip",
        "planner_stats": "gini",
        "planner_view": planner_sections.SHARE.heading,
    }.items():
        at.query_params[key] = value
    at.run()
    csv = pd.DataFrame({"income": [52_000.0, -3_500.0, 61_000.0, 48_250.5, 75_000.0] * 40}).to_csv(index=False)
    at.sidebar.file_uploader(key="data_upload").set_value(("losses.csv", csv.encode(), "text/csv")).run()
    assert not at.exception
    texts = [c.value for c in at.code if "cap_epsilon" in c.value]
    assert texts, [e.value for e in at.error]
    assert tomllib.loads(texts[0])["negative_incomes"] == "clip"
