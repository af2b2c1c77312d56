"""AppTest tests of app_pages/planner.py: defaults, the view selector (only the chosen view is drawn),
sliders and rebalancing, the budget-first sliders after statistics are removed, bad input, URL state,
the generated script, release mode never shows a true value. The view functions themselves are
tested in tests/test_planner_experiments.py; the release panel in tests/test_release_panel.py."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support import assert_clean, metrics, open_page, page_script, page_text, run_script

from dpcore import ledger
from dpcore import planner as planner_lib
from ui.planner import sections as planner_sections

PAGE = "app_pages/planner.py"
RELEASE = "Release: make the real release (spends budget)"
ACCURACY, BUDGET, RISK, SHARE = planner_sections.VIEWS


def _open(**query) -> AppTest:
    return open_page(PAGE, timeout=240, **query)


def _all_text(at: AppTest) -> str:
    """Text, metrics and tables (the true-value detector reads all of them)."""
    parts = [page_text(at)] + [str(c.value) for c in at.code]
    parts += [f"{m.label} {m.value}" for m in at.metric]
    parts += [df.value.to_csv(index=False) for df in [*at.dataframe, *at.table]]
    return "\n".join(parts)


NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _assert_no_true_value(
    at: AppTest | None, truths: list[float], text: str | None = None, released: list[float] = ()
) -> None:
    """No number on the page is a true value written to its own precision (4+ significant digits),
    except the released numbers themselves, which may coincide with the truth by chance."""
    if at is not None:
        text = _all_text(at)
        released = [
            v
            for df in [*at.dataframe, *at.table]
            if "released value" in df.value.columns
            for v in df.value["released value"]
        ]
    released = np.asarray(released, dtype=float)
    for token in NUMBER.findall(text):
        clean = token.replace(",", "")
        try:
            v = float(clean)
        except ValueError:
            continue
        mantissa = clean.lower().split("e")[0].lstrip("-")
        digits = len(mantissa.replace(".", "").lstrip("0"))
        if digits < 4 or "e" in clean.lower():
            continue
        if released.size and np.any(np.isclose(released, v, rtol=1e-12, atol=0)):
            continue
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        half_ulp = 0.5 * 10.0 ** (-decimals)
        for t in truths:
            assert abs(v - t) > half_ulp * (1 + 1e-9), f"true value {t!r} shown as {token!r}"


@pytest.mark.slow  # first test pays the cold caches (Gini smooth sensitivity, Monte Carlo search)
def test_opens_with_defaults_and_explains_itself():
    at = _open()
    assert_clean(at)
    assert at.title[0].value == "Choose ε before a release"
    text = page_text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    total = float(metrics(at)["Total ε of the plan"])
    assert total > 0
    table = at.table[0].value
    assert list(table["statistic"])[0] == "Gini index"
    assert table["smallest ε"].sum() == pytest.approx(total, rel=1e-3)
    assert (table["probability met at that ε"] >= np.array([0.9, 0.9, 0.95, 0.95]) - 1e-9).all()
    assert "Monte Carlo" in " ".join(table["how it was found"])
    assert "planner_stats" not in at.query_params  # a default is not added to the address (ui.browser_history)
    assert len(at.get("plotly_chart")) == 1 + 4  # the epsilons and one dot plot per statistic
    # only the chosen view is drawn: no budget sliders, no attacker curve, no script
    assert not [s for s in at.slider if s.key.startswith("planner_eps_")]
    assert not [c for c in at.code if "Reproduces the view" in str(c.value)]


def test_views_and_main_sliders_and_rebalancing():
    at = _open()
    at.number_input(key="planner_gini_err").set_value(0.02).run()
    assert_clean(at)
    at.slider(key="planner_group_means_conf").set_value(90).run()
    assert_clean(at)
    at.slider(key="planner_total").set_value(4.0).run()  # the main slider sits above the views
    assert_clean(at)
    assert metrics(at)["Your total ε (slider above)"] == "4"
    at.radio(key="planner_view").set_value(BUDGET).run()
    assert_clean(at)
    alloc = at.session_state["_planner_alloc"]
    assert sum(alloc.values()) == pytest.approx(4.0)
    # lock group means, move gini: ratio and percentiles absorb the change, group means keep theirs
    at.checkbox(key="planner_lock_group_means").check().run()
    gm = alloc["group_means"]
    at.slider(key="planner_eps_gini").set_value(2.0).run()
    assert_clean(at)
    alloc = at.session_state["_planner_alloc"]
    assert alloc["gini"] == pytest.approx(2.0) and alloc["group_means"] == pytest.approx(gm)
    assert sum(alloc.values()) == pytest.approx(4.0)
    assert "gini:2" in str(at.query_params["planner_alloc"])
    # the smallest total, one statistic takes (almost) all: the others stay at the slider minimum
    at.slider(key="planner_total").set_value(0.05).run()
    at.checkbox(key="planner_lock_group_means").uncheck().run()
    at.slider(key="planner_eps_gini").set_value(0.05).run()
    assert_clean(at)
    alloc = at.session_state["_planner_alloc"]
    assert sum(alloc.values()) == pytest.approx(0.05) and min(alloc.values()) >= 0.001 - 1e-12
    at.radio(key="planner_view").set_value(RISK).run()
    at.slider(key="planner_risk_eps").set_value(3.0).run()
    assert_clean(at)
    assert not at.dataframe[0].value.empty and len(at.get("plotly_chart")) == 1
    metric = [m for m in at.metric if m.label.startswith("Largest belief after an ε = 3")][0]
    assert metric.value == f"{100 * math.exp(3) * 0.01 / (0.99 + 0.01 * math.exp(3)):.2f}%"


def test_budget_first_sliders_match_the_table_after_removing_statistics():
    """Regression: after removing statistics, the ε slider showed 0.500 while the table and the chart
    used the whole total 2 (the allocation was rebuilt without updating the slider state)."""
    at = _open(planner_view=BUDGET)
    assert_clean(at)
    assert at.slider(key="planner_eps_gini").value == pytest.approx(0.5)
    at.multiselect(key="planner_stats").set_value(["gini"]).run()
    assert_clean(at)
    table = at.dataframe[0].value
    assert table["epsilon"].tolist() == [pytest.approx(2.0)]
    assert at.slider(key="planner_eps_gini").value == pytest.approx(2.0)
    at.multiselect(key="planner_stats").set_value(["gini", "mean", "count"]).run()
    assert_clean(at)
    shown = {s.key: s.value for s in at.slider if s.key.startswith("planner_eps_")}
    table = at.dataframe[0].value
    assert sum(shown.values()) == pytest.approx(2.0)
    assert sorted(shown.values()) == pytest.approx(sorted(table["epsilon"]))


def test_bad_input_shows_error_not_exception():
    at = _open()
    at.number_input(key="planner_gini_upper").set_value(20_000.0).run()  # heavy clipping: target unreachable
    assert_clean(at, expected_error="does not reach")
    assert len(at.table[0].value) == 3  # the other statistics are still planned
    at.multiselect(key="planner_stats").set_value([]).run()
    assert not at.exception and any("at least one statistic" in i.value for i in at.info)


def test_url_state_reproduces_view():
    at = _open(planner_stats="ratio,count", planner_ratio_tol="20", planner_count_thr="50000.0")
    assert_clean(at)
    table = at.table[0].value
    assert len(table) == 2 and table["target"].iloc[0].startswith("relative error at most 20%")
    assert at.slider(key="planner_ratio_tol").value == 20
    budget = _open(
        planner_stats="ratio,count", planner_view=BUDGET, planner_total="3.0", planner_alloc="ratio:1,count:2"
    )
    assert_clean(budget)
    assert budget.dataframe[0].value["epsilon"].tolist() == [pytest.approx(1.0), pytest.approx(2.0)]
    assert budget.slider(key="planner_eps_count").value == pytest.approx(2.0)


@pytest.mark.slow
def test_generated_script_reproduces_page_numbers():
    at = _open(planner_stats="gini,group_means,ratio")
    assert_clean(at)
    shown = at.table[0].value
    at.radio(key="planner_view").set_value(SHARE).run()
    assert_clean(at)
    script = page_script(at)
    assert "planner_view(" in script and "dpcore.views.planner" in script
    out = run_script(script)
    got = [s["epsilon"] for s in out["accuracy_first"]]
    np.testing.assert_allclose(got, shown["smallest ε"].to_numpy(), rtol=1e-12)
    assert out["total_epsilon_sequential"] == pytest.approx(shown["smallest ε"].sum(), rel=1e-12)
    assert [r["epsilon"] for r in out["budget_first"]] == pytest.approx([2 / 3] * 3)


def test_changing_the_dataset_recomputes():
    before = _open(planner_stats="group_means,ratio").table[0].value["smallest ε"].to_numpy()
    small = _open(planner_stats="group_means,ratio", data_n="2000")
    assert_clean(small)
    after = small.table[0].value["smallest ε"].to_numpy()
    assert np.all(after > before)  # fewer people: more noise per person, a larger epsilon is needed
    engel = _open(planner_stats="gini,mean", data_source="Real example: Engel 1857, Belgian households")
    assert not engel.exception


def test_release_from_uploaded_confidential_file_shows_no_true_value(tmp_path, monkeypatch):
    """The real use: a confidential CSV uploaded in the sidebar, released in Release mode."""
    monkeypatch.setenv(ledger.ENV_VAR, f"sqlite:///{tmp_path}/ledger.db")  # never the user's ledger
    gen = np.random.default_rng(404)
    n = 3000
    income = np.round(gen.lognormal(10.6, 0.8, n), 2)
    region = gen.choice(np.array(["north", "south", "west"]), n)
    csv = pd.DataFrame({"income": income, "region": region}).to_csv(index=False).encode()
    # sidebar + planner page in one script (AppTest drops the sidebar tree after st.navigation reruns)
    from support.pages import REPO_ROOT

    harness = (
        f"import runpy, sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
        f"runpy.run_path({str(REPO_ROOT / PAGE)!r})\n"
    )
    at = AppTest.from_string(harness, default_timeout=240)
    for k, v in {
        "data_source": "Upload a CSV or Parquet file",
        "planner_mode": RELEASE,
        "planner_stats": "gini,group_means,percentiles,mean",
        "planner_groupcol": "region",
    }.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", csv, "text/csv")).run()
    assert at.session_state["dataset"].confidential
    at.selectbox(key="planner_groupcol").set_value("region").run()
    at.button(key="planner_create_ledger").click().run()  # a new ledger is created on purpose, once
    assert_clean(at)
    at.checkbox(key="planner_labels_public").check().run()  # group statistics need declared public groups
    at.text_input(key="planner_public_labels").set_value("north, south, west").run()
    at.checkbox(key="planner_sizes_public").check().run()
    at.checkbox(key="planner_confirm").check().run()
    at.button(key="planner_release").click().run()
    assert_clean(at)
    released = next(df.value for df in at.table if "released value" in df.value.columns)
    assert set(released["statistic"]) >= {"Gini index", "Mean income by group"}
    assert set(released.loc[released["statistic"] == "Mean income by group", "number"]) == {"north", "south", "west"}
    groups = region.astype(str)
    truths = []
    for kind, params in [
        ("gini", {"upper": 1e6}),
        ("group_means", {"upper": 5e5}),
        ("percentiles", {"n_sims": 100}),
        ("mean", {"upper": 5e5}),
    ]:
        truths += [float(t) for t in planner_lib.make_statistic(kind, income, groups, **params).truth]
    _assert_no_true_value(at, truths)


def test_true_value_detector_catches_a_leak():
    """The detector itself can fail: a page that prints a true value is caught."""
    cases = [
        ("Gini 0.4753", 0.475336, True),
        ("Gini 0.4754", 0.475336, False),
        ("mean 54,321.12", 54321.1234, True),
        ("p50 29,330", 29329.4, False),
        ("p50 29,329", 29329.4, True),
    ]
    for shown, truth, leak in cases:
        if leak:
            with pytest.raises(AssertionError):
                _assert_no_true_value(None, [truth], text=shown)
        else:
            _assert_no_true_value(None, [truth], text=shown)
    # a released value that happens to equal the rounded truth is allowed (it is noisy by construction)
    _assert_no_true_value(None, [0.475336], text="Gini 0.475336", released=[0.475336])


def test_the_plan_says_how_wide_the_published_intervals_will_be():
    """Accuracy first and budget first: a column with each statistic's expected published-interval width at the ε
    shown, the same as the view function's (ui.planner.views.interval_text of expected_interval_width)."""
    import ui.planner.views as views
    from dpcore import defaults
    from dpcore.views import planner as planner_experiments
    from ui.sidebar import default_dataset

    at = _open()
    assert_clean(at)
    assert "How wide will our intervals be?" in page_text(at)
    table = at.table[0].value
    column = table[views.INTERVAL_COLUMN]
    assert list(table["statistic"])[0] == "Gini index" and column.iloc[1].startswith("up to ")
    stat = planner_lib.make_statistic("gini", default_dataset().values, upper=defaults.INCOME_UPPER)
    width = planner_experiments.expected_interval_width(stat, float(table["smallest ε"].iloc[0]))
    assert column.iloc[0] == views.interval_text(width) and "Gini points (on the planning data" in column.iloc[0]
    at.radio(key="planner_view").set_value(BUDGET).run()
    assert_clean(at)
    frame = at.dataframe[0].value
    assert "How wide will our intervals be?" in page_text(at)
    # budget first moves ε continuously: the Gini's split (seconds per ε) is left to Accuracy first
    assert planner_experiments.SKIPPED_NOTE in frame[views.INTERVAL_COLUMN].iloc[0]
    assert frame[views.INTERVAL_COLUMN].iloc[2].startswith("up to ")  # group means: exact at its allocated ε
