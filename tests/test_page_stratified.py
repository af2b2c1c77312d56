"""AppTest tests of app_pages/stratified.py: defaults (ACS incomes by group), main sliders, data sources,
experiments, bad input, the share link and one generated-script run (the page and the script make the
same ``group_means_view`` call; the view functions themselves are tested in test_stratified_views.py)."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest
from support import APP, assert_clean, link_param, metrics, open_page, page_script, page_text, run_script

from ui.stratified import sections

PAGE = "app_pages/stratified.py"
SYNTHETIC = "Synthetic mixture (paper's model)"


def _view(at: AppTest, name: str) -> None:
    at.radio(key="strat_view").set_value(name).run()


def test_opens_with_defaults_and_explains_itself():
    """The default view is real data: ACS 2019 incomes by SEX × RAC1P (bundled, so also on a fresh
    machine). The default used to be the synthetic mixture (n = 10,000, k = 9)."""
    at = open_page(PAGE)
    assert_clean(at)
    assert at.title[0].value == "Group means and parity"
    text = page_text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    assert "ρ = ε²/2" in text and "δ =" in text  # zCDP conversion next to rho
    assert "20 PUMAs" in text and "not a state" in text
    assert at.radio(key="strat_data").value == "ACS 2019 excerpt"
    assert len(at.dataframe) >= 2  # the group table and the method summary
    shown = metrics(at)
    assert shown["groups k"] == "16" and shown["people n"] == "11,503"  # half of the 23,006 people with PINCP
    # the default ε is named by the share link, not added to the address (ui.browser_history)
    assert "strat_eps" not in at.query_params and link_param(at, "strat_eps") == "1.0"
    _view(at, sections.THEORY.heading)
    assert_clean(at)
    assert "80 %" in page_text(at) and "does not reproduce" in page_text(at)  # the NY example honesty note
    _view(at, sections.ACCOUNTING.heading)
    assert_clean(at)
    assert "parallel composition" in page_text(at)


def test_main_sliders_rerun_cleanly():
    at = open_page(PAGE, strat_data=SYNTHETIC)
    assert metrics(at)["groups k"] == "9" and metrics(at)["people n"] == "10,000"
    at.select_slider(key="strat_eps").set_value(0.2).run()
    assert_clean(at)
    at.slider(key="strat_k").set_value(18).run()
    assert_clean(at)
    assert metrics(at)["groups k"] == "18"
    at.select_slider(key="strat_alpha").set_value(0.05).run()
    assert_clean(at)
    at.select_slider(key="strat_n").set_value(2000).run()
    assert_clean(at)
    at.slider(key="strat_R").set_value(5.0).run()
    assert_clean(at)
    for m in ("Global Laplace", "CoinPress", "StratCoinpress", "PubStratCoinpress"):
        at.selectbox(key="strat_method").set_value(m).run()
        assert_clean(at)
    at.toggle(key="strat_clamp").set_value(True).run()
    assert_clean(at)


def test_same_seed_same_numbers():
    a = open_page(PAGE)
    b = open_page(PAGE)
    assert a.dataframe[0].value.equals(b.dataframe[0].value)


def test_paper_presets():
    at = open_page(PAGE, strat_data="Paper's NY group sizes")
    assert_clean(at)
    at.selectbox(key="strat_preset").set_value("NY SEX x RACE (k=18, paper Table 3)").run()
    assert_clean(at)
    assert metrics(at)["groups k"] == "18"


def test_acs_variables_and_groupings():
    at = open_page(PAGE)
    at.selectbox(key="strat_var").set_value("AGEP (age, years)").run()
    assert_clean(at)
    at.selectbox(key="strat_grp").set_value("SEX").run()
    assert_clean(at)
    assert metrics(at)["groups k"] == "2"
    at.select_slider(key="strat_eps").set_value(0.5).run()
    assert_clean(at)


def test_synthetic_experiment_runs_with_progress():
    at = open_page(PAGE, strat_view=sections.TRENDS.heading)
    at.selectbox(key="strat_sweep").set_value("error vs k (paper Fig. 7)").run()
    at.slider(key="strat_runs").set_value(5).run()
    at.button(key="strat_run").click().run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) >= 1
    assert "Press **Run experiment**" not in page_text(at)  # the results are shown, not the prompt


@pytest.mark.parametrize(
    "sweep, needle",
    [
        pytest.param(
            "ACS excerpt: error and parity vs number of groups (paper Fig. 2)", "Groupings used", marks=pytest.mark.slow
        ),
        ("ACS excerpt (SEX × RAC1P): error and parity vs ε", "ρ ="),
    ],
)
def test_acs_experiments_run(sweep, needle):
    at = open_page(PAGE, strat_view=sections.TRENDS.heading, strat_sweep=sweep, strat_runs="5")
    at.button(key="strat_run").click().run()
    assert_clean(at)
    assert "parity" in page_text(at).lower() and needle in page_text(at)


def test_bad_input_n_below_k_shows_error():
    at = open_page(PAGE, strat_view=sections.THEORY.heading)
    at.number_input(key="strat_thk").set_value(100).run()
    assert_clean(at)  # 100 groups is allowed for the bounds
    at.number_input(key="strat_thn").set_value(50).run()
    assert_clean(at, expected_error="at least k")  # n < k: a clear st.error, no exception


def test_bad_url_values_fall_back_to_defaults():
    at = open_page(PAGE, strat_eps="-3", strat_k="100000")
    assert_clean(at)


def test_sidebar_dataset_without_group_columns_says_so():
    at = open_page(PAGE, strat_data="Sidebar dataset (choose grouping columns)")
    assert_clean(at)
    assert "no other columns" in page_text(at)


def test_grouping_column_with_hundreds_of_levels_is_capped(cps_path):
    at = open_page(
        PAGE,
        data_source="Real: CPS ASEC 2016, 5 Midwest states",
        strat_data="Sidebar dataset (choose grouping columns)",
        strat_col1="STATEFIP",
    )
    assert_clean(at)
    assert at.session_state["dataset"].frame is not None
    at.selectbox(key="strat_col1").set_value("SERIAL").run()
    assert_clean(at, expected_error="cap of 100")


def test_synthesizer_tab_runs():
    at = open_page(PAGE, strat_view=sections.SYNTHETIC.heading)
    at.slider(key="strat_synruns").set_value(1).run()
    at.button(key="strat_synrun").click().run()
    assert_clean(at)
    assert "parity" in page_text(at)


# ---- share / reproduce ------------------------------------------------------------------------------


def test_share_panel_link_and_csv_for_every_chart():
    at = open_page(PAGE)
    assert_clean(at)
    assert "Share or reproduce this view" in page_text(at)
    link = next(c.value for c in at.code if c.value.startswith("http"))
    assert "/stratified?" in link and "strat_eps=1.0" in link and "strat_view=" in link and "seed=" in link
    # every chart of the group-means view has a CSV download (plus the script download)
    charts = at.get("plotly_chart")
    dls = [d for d in at.get("download_button") if "CSV" in str(d.proto.label)]
    assert len(charts) == 3 and len(dls) >= len(charts), (len(charts), len(dls))
    script = page_script(at)
    assert "group_means_view(" in script and "epsilon=1.0" in script and "method='Stratified Laplace'" in script
    assert re.search(r"^\s+seed=\d+,$", script, re.M)
    assert "np.quantile" not in script and "simulate_methods" not in script  # no page logic in the script
    for name in (sections.THEORY.heading, sections.ACCOUNTING.heading):  # the share panel is on the other views too
        _view(at, name)
        assert_clean(at)
        assert "group_means_view(" in page_script(at), name


def test_generated_script_reproduces_page_numbers():
    """The script is the page's own call: its printed numbers equal the page's tables (one subprocess run)."""
    at = open_page(PAGE, strat_method="StratCoinpress", strat_grp="SEX × HISP", strat_cliphi="150000.0")
    assert_clean(at)
    res = run_script(page_script(at))
    shown = metrics(at)
    for label in ("people n", "groups k", "smallest group", "largest group"):
        assert f"{res[label]:,}" == shown[label], label
    table = at.dataframe[0].value.set_index("group")
    assert res["group means"]["method"] == "StratCoinpress"
    rows = res["group means"]["groups"]
    assert sorted(r["group"] for r in rows) == sorted(table.index)
    shown_columns = {"share (public)": "share", "true mean": "true mean", "release": "release", "sd of releases": "sd"}
    for r in rows:  # the page's seven columns (numbers unrounded, formatted by the browser; the 90% range as text)
        for col, shown_col in shown_columns.items():
            assert float(table.loc[r["group"], shown_col]) == pytest.approx(r[col], rel=1e-12, abs=1e-12), col
        short = [f"{v:,.0f}" if abs(v) >= 1000 else f"{v:.4g}" for v in (r["q05"], r["q95"])]
        assert table.loc[r["group"], "middle 90% of releases"] == " – ".join(short)
    summary = at.dataframe[1].value.set_index("method")  # shown unrounded
    for m, r in res["overall mean by method"].items():
        for col in ("one release", "true overall mean", "RMSE of overall", "mean parity error"):
            assert float(summary.loc[m, col]) == pytest.approx(r[col], rel=1e-12, abs=1e-12), (m, col)


def test_link_reopens_the_same_view():
    """Every setting moved is in the URL (the others at their defaults): a fresh session opened with the moved
    page's query parameters shows the same numbers."""
    at = open_page(PAGE)
    at.number_input(key="seed").set_value(7).run()
    at.radio(key="strat_data").set_value("Paper's NY group sizes").run()
    at.select_slider(key="strat_eps").set_value(0.5).run()
    at.slider(key="strat_R").set_value(2.0).run()
    at.selectbox(key="strat_method").set_value("StratCoinpress").run()
    assert_clean(at)
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert {"seed", "strat_data", "strat_eps", "strat_R", "strat_method"} <= set(params)
    fresh = AppTest.from_file(str(APP), default_timeout=120)
    for k, v in params.items():
        fresh.query_params[k] = v
    fresh.run()
    fresh.switch_page(PAGE)
    fresh.run()
    assert_clean(fresh)
    assert fresh.selectbox(key="strat_method").value == "StratCoinpress"
    assert fresh.dataframe[0].value.equals(at.dataframe[0].value)
    assert fresh.dataframe[1].value.equals(at.dataframe[1].value)


def test_the_target_starts_in_the_variables_units():
    """The answer's target is in the variable's units: ±40,000 for incomes clipped to 0-200,000, ±20 (years) once
    the variable is age (±40,000 years recommended ε = 0.006); a target from a shared link is kept."""
    at = open_page(PAGE)
    assert at.number_input(key="strat_target").value == 40_000.0
    at.selectbox(key="strat_var").set_value("AGEP (age, years)").run()
    assert_clean(at)
    assert at.number_input(key="strat_target").value == 20.0
    assert any("within ±20," in w.value for w in at.warning)  # the 1-person groups need more than the slider's ε
    shared = open_page(PAGE, strat_target="50000")
    assert shared.number_input(key="strat_target").value == 50_000.0
    assert any("within ±50,000 of its true mean" in i.value for i in shared.info)


def test_the_data_note_does_not_call_real_sidebar_data_synthetic():
    """With the ACS excerpt in the sidebar (it has group columns), the note no longer says the sidebar's data are
    synthetic and lack groups; with the default synthetic data it still says why they cannot be used."""
    from ui import sidebar as sb

    def note(at) -> str:
        return next(i.value for i in at.info if "Data on this page" in i.value)

    acs = open_page(PAGE, data_source=sb.SHARED_LABELS["acs"])
    assert_clean(acs)
    assert "synthetic" not in note(acs) and "does not have" not in note(acs), note(acs)
    assert "Sidebar dataset" in note(acs)
    assert "does not have" in note(open_page(PAGE))
