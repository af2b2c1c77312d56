"""AppTest tests of app_pages/stratified.py: defaults, main sliders, data sources, experiments, bad input."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _open() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("app_pages/stratified.py")
    at.run()
    return at


def _view(at: AppTest, name: str) -> None:
    at.radio(key="strat_view").set_value(name).run()


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def test_opens_with_defaults_and_explains_itself():
    at = _open()
    _clean(at)
    assert at.title[0].value == "Group means and parity"
    text = _text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    assert "ρ = ε²/2" in text and "δ =" in text  # zCDP conversion next to rho
    # the group table and the method summary are shown
    assert len(at.dataframe) >= 2
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["groups k"] == "9" and metrics["people n"] == "10,000"
    assert at.query_params.get("strat_eps") == ["1.0"] or at.query_params.get("strat_eps") == "1.0"
    _view(at, "Theory: cost of stratifying")
    _clean(at)
    assert "80 %" in _text(at) and "does not reproduce" in _text(at)  # the NY example honesty note
    _view(at, "Privacy accounting")
    _clean(at)
    assert "parallel composition" in _text(at)


def test_main_sliders_rerun_cleanly():
    at = _open()
    at.select_slider(key="strat_eps").set_value(0.2).run()
    _clean(at)
    at.slider(key="strat_k").set_value(18).run()
    _clean(at)
    assert {m.label: m.value for m in at.metric}["groups k"] == "18"
    at.select_slider(key="strat_alpha").set_value(0.05).run()
    _clean(at)
    at.select_slider(key="strat_n").set_value(2000).run()
    _clean(at)
    at.slider(key="strat_R").set_value(5.0).run()
    _clean(at)
    for m in ("Global Laplace", "CoinPress", "StratCoinpress", "PubStratCoinpress"):
        at.selectbox(key="strat_method").set_value(m).run()
        _clean(at)
    at.toggle(key="strat_clamp").set_value(True).run()
    _clean(at)


def test_same_seed_same_numbers():
    a = _open()
    b = _open()
    ta = a.dataframe[0].value
    tb = b.dataframe[0].value
    assert ta.equals(tb)


def test_paper_presets():
    at = _open()
    at.radio(key="strat_data").set_value("Paper's NY group sizes").run()
    _clean(at)
    at.selectbox(key="strat_preset").set_value("NY SEX x RACE (k=18, paper Table 3)").run()
    _clean(at)
    assert {m.label: m.value for m in at.metric}["groups k"] == "18"


def test_acs_view_sex_by_race(acs_path):
    at = _open()
    at.radio(key="strat_data").set_value("ACS 2019 excerpt").run()
    _clean(at)
    assert "20 PUMAs" in _text(at) and "not a state" in _text(at)
    at.selectbox(key="strat_var").set_value("AGEP (age, years)").run()
    _clean(at)
    at.select_slider(key="strat_eps").set_value(0.5).run()
    _clean(at)


def test_synthetic_experiment_runs_with_progress():
    at = _open()
    _view(at, "Trends (paper figures)")
    at.selectbox(key="strat_sweep").set_value("error vs k (paper Fig. 7)").run()
    at.slider(key="strat_runs").set_value(5).run()
    at.button(key="strat_run").click().run()
    _clean(at)
    assert len(at.get("plotly_chart")) >= 1
    assert "Press **Run experiment**" not in _text(at)  # the results are shown, not the prompt


@pytest.mark.slow
def test_acs_experiment_runs(acs_path):
    at = _open()
    _view(at, "Trends (paper figures)")
    at.selectbox(key="strat_sweep").set_value("ACS excerpt: error and parity vs number of groups (paper Fig. 2)").run()
    at.slider(key="strat_runs").set_value(5).run()
    at.button(key="strat_run").click().run()
    _clean(at)
    assert "parity" in _text(at)


def test_bad_input_n_below_k_shows_error():
    at = _open()
    _view(at, "Theory: cost of stratifying")
    at.number_input(key="strat_thk").set_value(100).run()
    _clean(at)  # 100 groups is allowed for the bounds
    at.number_input(key="strat_thn").set_value(50).run()
    # n < k: the bounds cannot be computed; a clear st.error, no exception
    assert not at.exception
    assert any("at least k" in e.value for e in at.error)


def test_bad_url_values_fall_back_to_defaults():
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["strat_eps"] = "-3"
    at.query_params["strat_k"] = "100000"
    at.run()
    at.switch_page("app_pages/stratified.py")
    at.run()
    _clean(at)


def test_sidebar_dataset_without_group_columns_says_so():
    at = _open()
    at.radio(key="strat_data").set_value("Sidebar dataset (choose grouping columns)").run()
    _clean(at)
    assert "no other columns" in _text(at)


def test_grouping_column_with_hundreds_of_levels_is_capped(cps_path):
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["data_source"] = "Real: CPS ASEC 2016, 5 Midwest states"
    at.query_params["strat_data"] = "Sidebar dataset (choose grouping columns)"
    at.query_params["strat_col1"] = "STATEFIP"
    at.run()
    at.switch_page("app_pages/stratified.py")
    at.run()
    _clean(at)
    assert at.session_state["dataset"].frame is not None
    at.selectbox(key="strat_col1").set_value("SERIAL").run()
    assert not at.exception
    assert any("cap of 100" in e.value for e in at.error)


def test_synthesizer_tab_runs(acs_path):
    at = _open()
    _view(at, "Synthetic data (illustration)")
    at.slider(key="strat_synruns").set_value(1).run()
    at.button(key="strat_synrun").click().run()
    _clean(at)
    assert "parity" in _text(at)


def test_acs_epsilon_experiment(acs_path):
    at = _open()
    _view(at, "Trends (paper figures)")
    at.selectbox(key="strat_sweep").set_value("ACS excerpt (SEX × RAC1P): error and parity vs ε").run()
    at.slider(key="strat_runs").set_value(5).run()
    at.button(key="strat_run").click().run()
    _clean(at)
    assert "ρ =" in _text(at)


# ---- share / reproduce: the generated script prints the page's numbers ----------------------------

def _run_script(at: AppTest, tmp_path) -> dict:
    import json
    import subprocess
    import sys

    script = next(c.value for c in at.code if "simulate_methods" in c.value)
    compile(script, "stratified_view.py", "exec")
    path = tmp_path / "stratified_view.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], cwd=str(Path(APP).parent), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _assert_script_matches_page(at: AppTest, res: dict) -> None:
    import numpy as np

    metrics = {m.label: m.value for m in at.metric}
    for label in ("people n", "groups k", "smallest group", "largest group"):
        assert f"{res[label]:,}" == metrics[label], label
    # the group table is shown rounded to 4 decimals: the script's numbers rounded the same way are equal
    table = at.dataframe[0].value.set_index("group")
    assert res["group means"]["method"] == at.selectbox(key="strat_method").value
    rows = res["group means"]["groups"]
    assert sorted(r["group"] for r in rows) == sorted(table.index)
    assert [r["size"] for r in rows] == sorted(table["size"], reverse=True)
    for r in rows:
        shown = table.loc[r["group"]]
        assert int(shown["size"]) == r["size"]
        for col in ("share (public)", "PubStrat share", "true mean", "release", "q05", "q95", "sd of releases"):
            assert float(shown[col]) == pytest.approx(float(np.round(r[col], 4)), abs=1e-9), (r["group"], col)
    # the method summary is shown unrounded: equal to 1e-9
    summary = at.dataframe[1].value.set_index("method")
    assert sorted(summary.index) == sorted(res["overall mean by method"])
    for m, r in res["overall mean by method"].items():
        for col in ("one release", "true overall mean", "RMSE of overall", "mean parity error"):
            assert float(summary.loc[m, col]) == pytest.approx(r[col], rel=1e-9, abs=1e-12), (m, col)
        assert (f"ε = {res['epsilon']:g}" if "Laplace" in m else f"ρ = {res['coinpress_rho']:.3g}") in \
            summary.loc[m, "privacy cost"]


def test_share_panel_link_and_csv_for_every_chart():
    at = _open()
    _clean(at)
    assert "Share or reproduce this view" in _text(at)
    link = next(c.value for c in at.code if c.value.startswith("http"))
    assert "/stratified?" in link and "strat_eps=1.0" in link and "strat_view=" in link and "seed=" in link
    # every chart of the group-means view has a CSV download (plus the script download)
    charts = at.get("plotly_chart")
    dls = [d for d in at.get("download_button") if "CSV" in str(d.proto.label)]
    assert len(charts) == 3 and len(dls) >= len(charts), (len(charts), len(dls))
    script = next(c.value for c in at.code if "simulate_methods" in c.value)
    assert "EPSILON = 1.0" in script and "METHOD = 'Stratified Laplace'" in script
    assert re.search(r"^seed = \d+  # the sidebar's random seed$", script, re.M)
    # the share panel is on the other views too
    for name in ("Theory: cost of stratifying", "Privacy accounting"):
        _view(at, name)
        _clean(at)
        assert any("simulate_methods" in c.value for c in at.code), name


def test_generated_script_reproduces_page_numbers(tmp_path):
    at = _open()
    _clean(at)
    _assert_script_matches_page(at, _run_script(at, tmp_path))


def test_generated_script_reproduces_moved_settings(tmp_path):
    at = _open()
    at.radio(key="strat_data").set_value("Paper's NY group sizes").run()
    at.selectbox(key="strat_preset").set_value("NY SEX x RACE (k=18, paper Table 3)").run()
    at.select_slider(key="strat_eps").set_value(0.3).run()
    at.select_slider(key="strat_n").set_value(5000).run()
    at.slider(key="strat_R").set_value(4.5).run()
    at.selectbox(key="strat_method").set_value("PubStratCoinpress").run()
    at.toggle(key="strat_clamp").set_value(True).run()
    _clean(at)
    res = _run_script(at, tmp_path)
    assert res["epsilon"] == 0.3 and res["groups k"] == 18
    _assert_script_matches_page(at, res)
    # Dirichlet mixture with another seed-independent setting
    at.radio(key="strat_data").set_value("Synthetic mixture (paper's model)").run()
    at.slider(key="strat_k").set_value(5).run()
    at.select_slider(key="strat_alpha").set_value(2.0).run()
    _clean(at)
    _assert_script_matches_page(at, _run_script(at, tmp_path))


def test_generated_script_reproduces_acs_view(acs_path, tmp_path):
    at = _open()
    at.radio(key="strat_data").set_value("ACS 2019 excerpt").run()
    at.selectbox(key="strat_grp").set_value("SEX × HISP").run()
    at.slider(key="strat_cliphi").set_value(150_000.0).run()
    at.selectbox(key="strat_method").set_value("StratCoinpress").run()
    _clean(at)
    _assert_script_matches_page(at, _run_script(at, tmp_path))


def test_generated_script_reproduces_sidebar_dataset_view(cps_path, tmp_path):
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params["data_source"] = "Real: CPS ASEC 2016, 5 Midwest states"
    at.query_params["strat_data"] = "Sidebar dataset (choose grouping columns)"
    at.query_params["strat_col1"] = "STATEFIP"
    at.run()
    at.switch_page("app_pages/stratified.py")
    at.run()
    _clean(at)
    at.number_input(key="strat_cliphi_ds").set_value(150_000.0).run()
    _clean(at)
    script = next(c.value for c in at.code if "simulate_methods" in c.value)
    assert "GROUP_COLUMNS = ['STATEFIP']" in script and "load_shared(" in script
    _assert_script_matches_page(at, _run_script(at, tmp_path))


def test_link_reopens_the_same_view():
    """Every setting is in the URL: a fresh session opened with the moved page's query parameters
    shows the same numbers."""
    at = _open()
    at.number_input(key="seed").set_value(7).run()
    at.radio(key="strat_data").set_value("Paper's NY group sizes").run()
    at.select_slider(key="strat_eps").set_value(0.5).run()
    at.slider(key="strat_R").set_value(2.0).run()
    at.selectbox(key="strat_method").set_value("StratCoinpress").run()
    _clean(at)
    params = {k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()}
    assert {"seed", "strat_data", "strat_eps", "strat_R", "strat_method", "strat_preset"} <= set(params)
    fresh = AppTest.from_file(APP, default_timeout=90)
    for k, v in params.items():
        fresh.query_params[k] = v
    fresh.run()
    fresh.switch_page("app_pages/stratified.py")
    fresh.run()
    _clean(fresh)
    assert fresh.selectbox(key="strat_method").value == "StratCoinpress"
    assert fresh.dataframe[0].value.equals(at.dataframe[0].value)
    assert fresh.dataframe[1].value.equals(at.dataframe[1].value)
