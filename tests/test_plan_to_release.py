"""Plan -> release: Release mode starts from the accuracy-first plan (ε per statistic,
cap >= the plan's total) and states every difference; the JSON record holds every release of the
account and the dataset identity (never the fingerprint); the decision memo is self-contained HTML."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from test_release_panel import HARNESS, RELEASE, _csv

from dpcore import ledger as L
from dpcore import memo as memo_lib
from ui import memo as memo_html
from ui.planner import choices

PLAN = "Plan: choose ε on planning data"


@pytest.fixture
def ledger_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(L.ENV_VAR, url)
    return url


def _downloads(at: AppTest) -> dict[str, bytes]:
    out = {}
    for element in at.get("download_button"):
        proto = element.proto
        out[proto.label] = proto
    return out


def test_release_starts_from_the_plan_and_shows_differences(ledger_url):
    # planned on the sidebar's synthetic data: its ε may start the release (an ε solved on a confidential
    # file may not: tests/test_side_door_planner_epsilon.py)
    at = AppTest.from_string(HARNESS, default_timeout=300)
    for k, v in {"planner_mode": PLAN, "planner_stats": "gini"}.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    plan = dict(at.session_state["_planner_plan"])
    assert set(plan) == {"gini"} and plan["gini"] > 0
    assert any(b.proto.label.startswith("Download the decision memo") for b in at.get("download_button"))
    at.radio(key="planner_mode").set_value(RELEASE).run()
    assert not at.exception
    # the bug this guards against: the field started at the budget-first split and the cap at 2, whatever the plan
    field = at.number_input(key="planner_rel_eps_gini").value
    assert field == pytest.approx(choices.round_up(plan["gini"]))
    assert at.number_input(key="planner_cap").value >= field
    assert not [w.value for w in at.warning if "instead of the planned" in w.value]
    at.number_input(key="planner_rel_eps_gini").set_value(round(field / 2, 4)).run()
    assert any("instead of the planned" in w.value and "less accurate" in w.value for w in at.warning)


def test_plan_differences_and_cap_default():
    assert choices.plan_cap_default(5.31) == pytest.approx(5.4)
    assert choices.plan_cap_default(0.3) == 2.0
    msgs = choices.plan_differences({"gini": 1.0}, {"gini": 1.0, "ratio": 0.5}, cap=1.2)
    assert any("was not in the plan" in m for m in msgs) and any("above the cap" in m for m in msgs)
    assert choices.plan_differences({"gini": 0.12345}, {"gini": 0.1235}, cap=2.0) == []


def test_record_holds_every_release_and_identity_but_no_fingerprint(ledger_url):
    from dpcore import planner, release

    values = np.random.default_rng(3).lognormal(10, 0.8, 500)
    db = L.open_ledger(ledger_url)
    fingerprint = L.dataset_fingerprint(b"income\n87000\n", "income")
    account = db.account(fingerprint, cap_epsilon=3.0, label="survey")
    identity = {"file_name": "survey.csv", "income_column": "income", "group_column": None, "n": 500}
    first = release.make_release([(planner.make_statistic("gini", values, upper=1e6), 0.5)], account, dataset=identity)
    second = release.make_release(
        [(planner.make_statistic("mean", values, upper=1e6), 0.25)], account, dataset=identity
    )
    text = memo_lib.complete_record_json(second, account, account.entries())
    doc = json.loads(text)
    assert len(doc["every_release_of_the_account"]) == 2  # the bug: only the last release was kept
    assert doc["dataset"]["file_name"] == "survey.csv" and doc["dataset"]["n"] == 500
    assert doc["epsilon_spent_in_total"] == pytest.approx(0.75)
    assert doc["dpcore_version"] and doc["this_release"][0]["mechanism"]
    assert fingerprint not in text and "dataset_id" not in text
    assert first[0].released[0] == pytest.approx(
        doc["every_release_of_the_account"][0]["result"]["records"][0]["released"][0]
    )


def test_memo_is_self_contained_html():
    page = memo_html.decision_memo_html(
        title="Memo",
        dataset={"name": "survey.csv", "n": 500},
        plan_rows=[{"statistic": "Gini", "ε": 0.8}],
        total_epsilon=0.8,
        cap_epsilon=2.0,
        figures=[memo_html.epsilon_figure({"Gini": 0.8}, {})],
    )
    assert page.startswith("<!doctype html>") and "within</b>" not in page and "within the cap" in page
    assert "<script" not in page and "<svg" in page  # a static inline SVG chart: works offline
    assert len(page) < 300_000  # (plotly.js inline made it 4.8 MB)


def test_ratio_groups_stay_different_after_a_change_of_group_column(ledger_url):
    # the bug this guards against: random groups A/B/C -> 'region' made both selectors fall back to 'north', and the
    # real release failed with "choose two different groups for the relative risk"
    at = AppTest.from_string(HARNESS, default_timeout=300)
    at.query_params["data_source"] = "Upload a CSV or Parquet file"
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", _csv(1414), "text/csv")).run()
    at.selectbox(key="planner_groupcol").set_value("region").run()
    assert not at.exception
    gx, gy = at.selectbox(key="planner_ratio_gx").value, at.selectbox(key="planner_ratio_gy").value
    assert gx != gy
    assert gx not in at.selectbox(key="planner_ratio_gy").options


def test_group_columns_that_do_not_qualify_are_explained_and_small_cells_advised():
    from types import SimpleNamespace

    from ui.planner import views as planner_views

    frame = pd.DataFrame(
        {
            "income": np.arange(100.0),
            "id": np.arange(100),
            "country": ["X"] * 100,
            "region": ["a"] * 60 + ["b"] * 39 + ["c"],
        }
    )
    reasons = planner_views.group_rejections(SimpleNamespace(frame=frame, column="income"))
    assert any("`id`: 100 distinct values" in r and "merge" in r for r in reasons)
    assert any("`country`: 1 distinct value" in r for r in reasons)
    advice = planner_views.small_cell_advice(frame["region"].to_numpy())
    assert len(advice) == 1 and "**c** has only 1 records" in advice[0] and "Merge" in advice[0]
    assert "suppress" in advice[0]


def test_median_income_by_group_plans_and_releases(ledger_url):
    from dpcore import planner, release
    from dpcore.views.planner import GROUPED_KINDS

    assert planner.STAT_KINDS["group_medians"] == "Median income by group" and "group_medians" in GROUPED_KINDS
    gen = np.random.default_rng(5)
    values = gen.lognormal(10.6, 0.6, 3000)
    groups = gen.choice(["north", "south"], 3000)
    stat = planner.make_statistic("group_medians", values, groups, n_sims=800, seed=1)
    assert stat.kind == "group_medians" and len(stat.labels) == 2
    eps = planner.solve_epsilon(stat, planner.AccuracyTarget(0.10, 0.9)).epsilon
    assert 0.01 < eps < 10
    account = L.open_ledger(ledger_url).account("demo:medians", cap_epsilon=5.0)
    records = release.make_release([(stat, eps)], account)
    assert records[0].kind == "group_medians" and len(records[0].released) == 2
    for label, value in zip(("north", "south"), records[0].released, strict=True):
        assert abs(value - np.median(values[groups == label])) < 0.5 * np.median(values)
    assert records[0].neighbouring.startswith("replace one person")


def test_release_mode_with_the_lookalike_says_how_to_release_the_file(ledger_url):
    at = AppTest.from_string(HARNESS, default_timeout=300)
    for k, v in {
        "data_source": "Upload a CSV or Parquet file",
        "planner_mode": RELEASE,
        "planner_stats": "gini",
    }.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", _csv(), "text/csv")).run()
    at.sidebar.toggle(key="data_lookalike").set_value(True).run()
    assert not at.exception
    # the bug: "upload it in the sidebar" although the file was uploaded
    assert any("switch off *Plan on a synthetic look-alike instead*" in w.value for w in at.warning)
    assert not any("upload it in the sidebar" in i.value for i in at.info)


def test_median_by_group_goes_into_a_release_plan():
    from dpcore import planner
    from dpcore.plan import plan_from_planner_choices

    gen = np.random.default_rng(6)
    values, groups = gen.lognormal(10.5, 0.7, 600), gen.choice(["a", "b"], 600)
    stat = planner.make_statistic("group_medians", values, groups, n_sims=200)
    plan, left_out = plan_from_planner_choices(
        ["group_medians"],
        lambda kind: stat,
        {"group_medians": 0.7},
        dataset="survey",
        income="income",
        cap_epsilon=2.0,
        group_column="region",
    )
    assert not left_out
    (item,) = plan.statistics
    assert item.kind == "percentiles" and list(item.by) == ["region"] and list(item.q) == [50.0]
