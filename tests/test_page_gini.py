"""AppTest tests of app_pages/gini.py: defaults, sliders, bad input and bad data, saturation, experiments.

The rerun time of a slider change is printed (run with -s to see it); no timing assertion here
(benchmarks/bench_gini_page.py prints a table).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from support import (
    assert_clean,
    assert_page_intro,
    metrics,
    open_expanders,
    open_page,
    page_script,
    page_text,
    query_param,
    run_scripts,
)

import ui.sidebar
from dpcore import defaults
from dpcore import gini as gini_mechanism
from dpcore.data import IncomeData

PAGE = "app_pages/gini.py"


def _open_on(dataset: IncomeData, monkeypatch) -> AppTest:
    """The Gini page on ``dataset`` in place of the sidebar's data (inputs no sidebar source produces)."""
    monkeypatch.setattr(ui.sidebar, "current_dataset", lambda: dataset)
    return open_page(PAGE)


def test_defaults_render_and_explain_themselves(script_views):
    at = script_views["defaults"][0]  # the page at its defaults, opened once for this module (read only here)
    text = assert_page_intro(at, "Gini index with differential privacy")
    assert "treats it as known" in text  # the posterior's known-scale assumption is stated
    assert not at.latex  # the definition's formulas are drawn when its expander is opened (ui.lazy)
    m = metrics(at)
    # the true Gini shown is dpcore's eq.-(1) Gini of the default data clipped to [0, U] (dpcore.defaults)
    xs, _, _ = gini_mechanism.clip_incomes(ui.sidebar.default_dataset().values, lower=0.0, upper=defaults.INCOME_UPPER)
    assert m["True Gini"] == f"{gini_mechanism.gini(xs):.4f}"
    assert m["Total privacy loss ε"] == "1"
    assert len(at.get("plotly_chart")) >= 5  # releases, dots, decay, posterior, error vs epsilon
    assert "No RMSE" in text and "infinite variance" in text  # gamma = 2 by default
    assert len(at.get("download_button")) >= 4


def test_closed_sections_are_drawn_when_opened():
    """The definition's formulas, the generated script and the paper experiments are drawn when their expander is
    opened (ui.lazy): a first screen does not pay for them; the script and notebook downloads are there."""
    at = open_page(PAGE)
    assert not at.latex and not any("Reproduces the view" in str(c.value) for c in at.code)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"Download the Python script", "Download the notebook (.ipynb)"} <= labels
    assert open_expanders(at, "Which Gini? (definition used everywhere on this page)") == 1
    assert any("n^2" in lx.value for lx in at.latex)  # the Gini definition used (eq. 1)
    assert "gini_view(" in page_script(at)  # opens "Show the script"
    assert_clean(at)


def test_the_slider_calibrations_are_warmed_after_the_page_in_a_background_thread(monkeypatch):
    """A first visit does not wait for the calibration of every ε of the slider (1.4 s of a 5.8 s first visit after
    a server start): a background thread started once the live view is drawn computes them."""
    import threading

    import streamlit as st

    from dpcore.views import gini as gini_experiments

    callers = []
    calibrate = gini_experiments.calibrate_epsilons

    def spy(*args, **kwargs):
        callers.append(threading.current_thread().name)
        return calibrate(*args, **kwargs)

    monkeypatch.setattr(gini_experiments, "calibrate_epsilons", spy)
    st.cache_resource.clear()  # a first visit of this process
    assert_clean(open_page(PAGE))
    for thread in threading.enumerate():
        if thread.name == "gini-slider-calibrations":
            thread.join(timeout=300)
    assert callers and set(callers) == {"gini-slider-calibrations"}


def test_main_sliders_move_and_are_kept_in_the_url(capsys):
    at = open_page(PAGE)
    timings = []
    for eps in (0.5, 0.25, 2.0, 1.0):
        t = time.perf_counter()
        at.select_slider(key="gini_eps").set_value(eps).run()
        timings.append(time.perf_counter() - t)
        assert_clean(at)
    assert query_param(at, "gini_eps") == "1.0"
    at.select_slider(key="gini_gamma").set_value(4.0).run()
    assert_clean(at)
    assert "RMSE is shown because γ > 3" in page_text(at)
    at.slider(key="gini_n").set_value(500).run()
    assert_clean(at)
    assert query_param(at, "gini_n") == "500"
    at.radio(key="gini_method").set_value("fast").run()
    assert_clean(at)
    at.radio(key="gini_cal").set_value("paper").run()
    assert_clean(at)
    with capsys.disabled():
        print(
            f"\n[gini page] epsilon-slider reruns (s): {', '.join(f'{t:.3f}' for t in timings)}; "
            f"median {np.median(timings):.3f}"
        )


def test_tight_calibration_gives_less_noise_than_paper():
    at = open_page(PAGE)
    tight = float(metrics(at)["Noise scale"])
    at.radio(key="gini_cal").set_value("paper").run()
    paper = float(metrics(at)["Noise scale"])
    assert tight < paper / 4  # about 5.7x at gamma = 2, epsilon = 1


def test_bad_bounds_show_error_not_exception():
    at = open_page(PAGE)
    at.number_input(key="gini_U").set_value(0.0).run()
    assert not at.exception, [str(e.value) for e in at.exception]
    assert any("must be above the lower bound" in e.value for e in at.error)
    at.number_input(key="gini_U").set_value(1000.0).run()
    at.number_input(key="gini_L").set_value(5000.0).run()
    assert not at.exception, [str(e.value) for e in at.exception]
    assert any("must be above the lower bound" in e.value for e in at.error)


def test_values_above_u_are_clipped_with_a_visible_count():
    at = open_page(PAGE)
    at.number_input(key="gini_U").set_value(100_000.0).run()
    assert_clean(at)
    n_above = int((ui.sidebar.default_dataset().values > 100_000).sum())
    assert n_above > 0
    assert any(f"{n_above:,} incomes above U" in w.value for w in at.warning)
    # the demo data are public: their clipping counts are not called confidential
    assert not any("confidential" in w.value for w in at.warning)


@pytest.mark.parametrize(
    ("source", "confidential", "said"),
    [("upload", True, "the confidential data"), ("snapshot", False, "the DP snapshot's synthetic records")],
)
def test_clipping_counts_say_whose_records_they_describe(monkeypatch, source, confidential, said):
    vals = np.r_[np.random.default_rng(2).lognormal(10, 1, 300), [2e6, 3e6]]
    at = _open_on(IncomeData(values=vals, name="f", source=source, confidential=confidential), monkeypatch)
    assert_clean(at)
    notes = [w.value for w in at.warning if "incomes above U" in w.value]
    assert notes and all(said in n for n in notes), notes


def test_all_zero_incomes_show_error(monkeypatch):
    ds = IncomeData(values=np.zeros(50), name="zeros", source="synthetic")
    at = _open_on(ds, monkeypatch)
    assert not at.exception, [str(e.value) for e in at.exception]
    assert any("all incomes are zero" in e.value for e in at.error)


def test_negative_incomes_are_clipped_with_a_note(monkeypatch):
    vals = np.r_[np.random.default_rng(1).lognormal(10, 1, 300), [-500.0, -20.0, -1.0]]
    at = _open_on(IncomeData(values=vals, name="with losses", source="synthetic"), monkeypatch)
    assert_clean(at)
    assert any("3 negative incomes" in w.value for w in at.warning)


def test_too_few_records_show_error(monkeypatch):
    at = _open_on(IncomeData(values=np.array([1234.0]), name="one", source="synthetic"), monkeypatch)
    assert not at.exception, [str(e.value) for e in at.exception]
    assert any("at least n = 2" in e.value for e in at.error)


def test_two_records_work(monkeypatch):
    at = _open_on(IncomeData(values=np.array([100.0, 300.0]), name="two", source="synthetic"), monkeypatch)
    assert_clean(at)  # no n slider (nothing to sub-sample); the bound saturates and the page says so
    assert any("noise swamps the Gini" in w.value for w in at.warning)


def test_confidential_upload_shows_planning_note(monkeypatch):
    vals = np.random.default_rng(2).lognormal(10, 1, 400)
    at = _open_on(IncomeData(values=vals, name="upload.csv", source="upload", confidential=True), monkeypatch)
    assert_clean(at)
    assert any("exploring the raw confidential file" in w.value for w in at.warning)


def test_saturation_is_explained_instead_of_plotted():
    at = open_page(PAGE)
    at.slider(key="gini_n").set_value(200).run()
    at.select_slider(key="gini_eps").set_value(0.05).run()
    assert_clean(at)
    text = page_text(at)
    assert "noise swamps the Gini" in text and "Hidden" in text
    assert len(at.get("plotly_chart")) == 2  # only the explanation charts: decay and error vs epsilon


def test_dp_upper_bound_adds_to_total_epsilon():
    at = open_page(PAGE)
    at.radio(key="gini_bounds").set_value("Estimate U with DP (costs extra ε)").run()
    assert not at.exception, [str(e.value) for e in at.exception]
    try:
        from dpcore import bounds

        available = hasattr(bounds, "dp_upper_bound")
    except ImportError:
        available = False
    assert metrics(at)["Total privacy loss ε"] == "1.15"
    if available:
        assert not at.error
    else:
        assert any("not available" in e.value for e in at.error)


@pytest.mark.slow
def test_paper_experiments_run_on_buttons():
    at = open_page(PAGE)
    assert not at.get("tab")  # closed: the experiments' controls and tabs are not drawn (ui.lazy)
    assert open_expanders(at, "Open the experiments (Figures 1, 3 and 4)") == 1
    at.selectbox(key="gini_exp_draws").set_value("10,000").run()
    n_charts = len(at.get("plotly_chart"))
    for key in ("gini_run_fig1", "gini_run_fig3", "gini_run_fig4"):
        at.button(key=key).click().run()
        assert_clean(at)
    assert len(at.get("plotly_chart")) == n_charts + 3
    assert "RMSE does not exist" in page_text(at)  # Figure 4 at gamma = 2


def test_posterior_prior_choice():
    at = open_page(PAGE)
    uniform_text = page_text(at)
    at.radio(key="gini_prior").set_value("beta").run()
    assert_clean(at)
    assert "Beta(6, 7)" in page_text(at) and "flat prior" in uniform_text


def test_real_cps_file_with_dp_upper_bound(cps_path):
    # The CPS ASEC file from ../shared/data through the sidebar (skips when absent).
    at = open_page(PAGE, data_source="Real: CPS ASEC 2016, 5 Midwest states")
    assert_clean(at)
    # eq. (1), negatives dropped (sidebar default), clipped to U = 1,000,000 (dpcore.defaults; 0.5361 at 2,000,000)
    assert metrics(at)["True Gini"] == "0.5351"
    at.radio(key="gini_bounds").set_value("Estimate U with DP (costs extra ε)").run()
    assert_clean(at)
    assert metrics(at)["Total privacy loss ε"] == "1.15"
    assert any("DP estimate: U =" in c.value for c in at.caption)
    # on this file the paper's DP bound (2.5 x the AboveThreshold estimate) clips the top incomes
    assert any("incomes above U" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "source", ["Real example: Engel 1857, Belgian households", "Synthetic: two-point data (Gini paper, Prop. 5.1)"]
)
def test_other_sidebar_sources_render(source):
    at = open_page(PAGE, data_source=source)
    assert_clean(at)
    assert "True Gini" in metrics(at)


# ---- share / reproduce -------------------------------------------------------------------------


def _numbers(at: AppTest) -> dict[str, float]:
    """The page's full-precision numbers table (its share section, ui.gini.sections.SHARE)."""
    table = next(d.value for d in at.dataframe if "quantity" in d.value.columns)
    return dict(zip(table["quantity"], table["value"].astype(float), strict=True))


def _assert_same_numbers(page: dict[str, float], script: dict) -> None:
    missing = set(page) - set(script)
    assert not missing, f"the script does not print {sorted(missing)}"
    for k, v in page.items():
        assert float(script[k]) == pytest.approx(v, rel=1e-9, abs=1e-12), k


# Views whose generated script must print the page's numbers, opened through their links (widgets and links
# agree: test_main_sliders_move_and_are_kept_in_the_url, test_link_reproduces_the_view). The three scripts run
# in ONE subprocess (support.run_scripts: one interpreter start and one import of dpcore/scipy, not three).
SCRIPT_VIEWS = {
    "defaults": {},
    # gamma > 3 (RMSE), fast bound, paper calibration, a sub-sample, Beta prior, DP upper bound
    "changed": dict(
        gini_eps="2.0",
        gini_gamma="4.0",
        gini_n="3000",
        gini_method="fast",
        gini_cal="paper",
        gini_prior="beta",
        gini_bounds="Estimate U with DP (costs extra ε)",
    ),
    "saturated": dict(gini_n="200", gini_eps="0.05"),
}


@pytest.fixture(scope="module")
def script_views() -> dict:
    """name -> (the page's AppTest, what its generated script printed)."""
    pages = {name: open_page(PAGE, **query) for name, query in SCRIPT_VIEWS.items()}
    outputs = run_scripts([page_script(at) for at in pages.values()])
    return {name: (at, out) for (name, at), out in zip(pages.items(), outputs, strict=True)}


def test_generated_script_reproduces_page_numbers(script_views):
    from dpcore.views import gini as gini_experiments

    at, out = script_views["defaults"]
    assert_clean(at)
    page = _numbers(at)
    for k in (
        "true_gini",
        "smooth_sensitivity",
        "noise_scale",
        "median_abs_error",
        "laplace_median_abs_error",
        "released_gini",
        "posterior_interval_lower",
        "posterior_interval_upper",
    ):
        assert k in page
    # the table holds the headline metrics at full precision
    assert metrics(at)["True Gini"] == f"{page['true_gini']:.4f}"
    _assert_same_numbers(page, out)
    dots = gini_experiments.plausible_releases(page["true_gini"], page["noise_scale"], 2.0, 20)
    np.testing.assert_allclose(out["plausible_releases"], dots, rtol=1e-12)
    link = next(c.value for c in at.code if "gini_eps=" in str(c.value))
    for key in (
        "gini_eps",
        "gini_gamma",
        "gini_n",
        "gini_method",
        "gini_cal",
        "gini_bounds",
        "gini_L",
        "gini_U",
        "gini_prior",
        "gini_exp_draws",
        "seed=",
    ):
        assert key in link


def test_generated_script_reproduces_changed_settings(script_views):
    """gamma > 3 (RMSE), fast bound, paper calibration, a sub-sample, Beta prior, DP upper bound."""
    at, out = script_views["changed"]
    assert_clean(at)
    assert (at.slider(key="gini_n").value, at.radio(key="gini_method").value) == (3000, "fast")
    page = _numbers(at)
    assert page["n"] == 3000 and page["upper_epsilon"] == 0.15 and page["total_epsilon"] == pytest.approx(2.15)
    assert "rmse" in page and "posterior_mean" in page
    _assert_same_numbers(page, out)
    script = page_script(at)
    assert "prior=('beta', 6.0, 7.0)" in script and "upper=None" in script  # the page's own settings
    assert "gini_view(" in script and "smooth_sensitivity(" not in script  # one call, no copy of the pipeline


def test_saturated_view_script_matches_and_prints_no_release(script_views):
    at, out = script_views["saturated"]
    assert_clean(at)
    page = _numbers(at)
    assert page["n"] == 200 and page["saturated"] == 1.0 and "released_gini" not in page
    _assert_same_numbers(page, out)
    assert "released_gini" not in out


def test_the_interval_from_the_release_alone_is_shown_first_and_the_oracle_is_labelled(script_views):
    """The posterior section gives the interval an analyst computes from the published numbers (the page's numbers
    table), before the known-scale posterior, which is labelled as the non-publishable oracle; the answer box says which
    accuracy its sentence means; the expected widths (published and oracle) are stated."""
    at, out = script_views["defaults"]
    text = page_text(at)
    page = _numbers(at)
    sentence = (
        f"an analyst who sees only the published numbers is **95% sure the Gini lies in "
        f"[{page['published_interval_lower']:.4f}, {page['published_interval_upper']:.4f}]**"
    )
    assert sentence in text
    assert text.index(sentence) < text.index("Oracle (not publishable)") < text.index("confidential scale S(X)/α")
    assert "value alone at the full ε" in text  # the answer's and the releases section's errors name their release
    assert f"**{page['published_expected_width']:.4f}**, against {page['oracle_expected_width']:.4f}" in text
    assert f"typically **{page['confidential_published_typical_width']:.4f}** wide" in text
    assert out["published_interval_lower"] == pytest.approx(page["published_interval_lower"], rel=1e-12)
    # saturated (no oracle posterior): the published interval is still given, and says how little it tells
    sat, _ = script_views["saturated"]
    sat_page = _numbers(sat)
    assert "only the published numbers" in page_text(sat) and "published_interval_lower" in sat_page


def test_link_reproduces_the_view():
    at = open_page(PAGE)
    at.select_slider(key="gini_eps").set_value(0.5).run()
    at.select_slider(key="gini_gamma").set_value(3.5).run()
    at.slider(key="gini_n").set_value(4000).run()
    at.radio(key="gini_cal").set_value("paper").run()
    at.number_input(key="gini_U").set_value(500_000.0).run()
    at.radio(key="gini_prior").set_value("beta").run()
    open_expanders(at, "Open the experiments (Figures 1, 3 and 4)")
    at.selectbox(key="gini_exp_draws").set_value("10,000").run()
    assert_clean(at)
    params = {k: query_param(at, k) for k in at.query_params}
    assert params["gini_exp_draws"] == "10,000"
    fresh = open_page(PAGE, **params)
    assert_clean(fresh)
    assert _numbers(fresh) == _numbers(at)
    open_expanders(fresh, "Open the experiments (Figures 1, 3 and 4)")
    assert fresh.selectbox(key="gini_exp_draws").value == "10,000"
    assert fresh.radio(key="gini_prior").value == "beta"
