"""AppTest tests of app_pages/percentiles.py: defaults, main sliders, data sources, figures, bad input."""

from __future__ import annotations

import time

import pytest
from support import (
    assert_clean,
    assert_page_intro,
    link_param,
    open_page,
    page_script,
    page_text,
    query_param,
    run_script,
)

from ui.percentiles import sections

PAGE = "app_pages/percentiles.py"


def test_opens_with_defaults_and_explains_itself():
    at = open_page(PAGE)
    text = assert_page_intro(at, "Earnings percentiles (PSEO)")
    assert "ε per bin = 0.5" in text  # replace relation: epsilon / 2 per bin
    assert len(at.dataframe) >= 2
    # the default ε is named by the share link, not added to the address (ui.browser_history)
    assert query_param(at, "perc_eps") is None and link_param(at, "perc_eps") == "1.0"
    assert len(at.get("plotly_chart")) == 3  # histogram, CDF, accuracy curves


def test_main_sliders_rerun_cleanly_and_fast():
    at = open_page(PAGE)
    timings = []
    for key, value in [("perc_eps", 0.3), ("perc_eps", 2.5), ("perc_bins", 12), ("perc_bins", 28)]:
        t0 = time.perf_counter()
        at.slider(key=key).set_value(value).run()
        timings.append(time.perf_counter() - t0)
        assert_clean(at)
    assert query_param(at, "perc_bins") == "28"
    for label in ("Log-normal bins", "Even bins", "PSEO bins (Table 1, 21 bins)"):
        at.radio(key="perc_scheme").set_value(label).run()
        assert_clean(at)
    at.selectbox(key="perc_q").set_value("10, 25, 50, 75, 90").run()
    assert_clean(at)
    at.radio(key="perc_rel").set_value("Add or remove one person (the paper's)").run()
    assert_clean(at)
    assert "ε per bin = 2.5" in page_text(at)  # epsilon was left at 2.5: full epsilon per bin
    at.radio(key="perc_cal").set_value("Paper (Nissim-Raskhodnikova-Smith constants)").run()
    assert_clean(at)
    at.number_input(key="perc_n").set_value(3000).run()
    assert_clean(at)
    print("slider reruns (s):", [round(t, 3) for t in timings])


def test_other_cell_sources():
    at = open_page(PAGE)
    at.selectbox(key="perc_src").set_value("Sidebar dataset (random subset)").run()
    assert_clean(at)
    at.selectbox(key="perc_src").set_value("A real PSEO cell (its published quartiles and size)").run()
    assert_clean(at)


@pytest.mark.parametrize(
    "action, message",
    [
        (lambda at: at.number_input(key="perc_n").set_value(1), "only 1 person"),
        (
            lambda at: (
                at.radio(key="perc_scheme").set_value("Custom edges").run(),
                at.text_input(key="perc_edges").set_value("10000, 50000, 40000, 90000"),
            ),
            "strictly increasing",
        ),
        (
            lambda at: (
                at.radio(key="perc_scheme").set_value("Custom edges").run(),
                at.text_input(key="perc_edges").set_value("10000, abc"),
            ),
            "numbers",
        ),
    ],
)
def test_bad_input_shows_error_not_exception(action, message):
    at = open_page(PAGE)
    action(at)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and any(message in e.value for e in at.error), [e.value for e in at.error]


def test_many_cells_view(pseo_path):
    at = open_page(PAGE)
    at.radio(key="perc_view").set_value(sections.MANY_CELLS.heading).run()
    assert_clean(at)
    assert "parallel composition" in page_text(at)
    at.slider(key="perc_eps").set_value(0.4).run()
    assert_clean(at)
    at.slider(key="perc_cells").set_value(200).run()
    assert_clean(at)
    assert len(at.get("plotly_chart")) == 2
    script = page_script(at)
    assert "many_cells_view(" in script and "n_cells=200" in script
    res = run_script(script)
    shown = at.session_state["perc_eps"]
    assert res["epsilon"] == pytest.approx(shown) and res["n_cells"] == 200


@pytest.mark.slow
def test_figures_run_with_progress(pseo_path):
    at = open_page(PAGE)
    at.radio(key="perc_view").set_value(sections.FIGURES.heading).run()
    assert_clean(at)
    at.slider(key="perc_fig_cells").set_value(50).run()
    at.slider(key="perc_fig_draws").set_value(5).run()
    at.button(key="perc_fig_run").click().run()
    assert_clean(at)
    text = page_text(at)
    assert "Figure 1." in text and "Figure 2." in text and "Figure 3." in text
    assert len(at.get("plotly_chart")) == 3  # Figures 1, 2, 3


def test_generated_script_is_the_view_call_and_reproduces_the_page():
    at = open_page(PAGE)
    assert_clean(at)
    script = page_script(at)
    assert "cell_view(" in script and "release_percentiles" not in script  # one call, not a copy of the page
    res = run_script(script)
    table = at.dataframe[0].value
    assert table["histogram release"].to_numpy() == pytest.approx(res["histogram"], rel=1e-12)
    assert table["true (confidential)"].to_numpy() == pytest.approx(res["true"], rel=1e-12)
    assert table["smooth sensitivity"].to_numpy() == pytest.approx(res["smooth_sensitivity"], rel=1e-12)
    assert table["exponential mechanism"].to_numpy() == pytest.approx(res["exponential_mechanism"], rel=1e-12)


def test_generated_script_for_the_sidebar_source_rebuilds_the_sidebar_data():
    at = open_page(PAGE)
    at.selectbox(key="perc_src").set_value("Sidebar dataset (random subset)").run()
    at.slider(key="perc_eps").set_value(0.5).run()
    assert_clean(at)
    script = page_script(at)
    assert "build_dataset(" in script and "'source': 'sidebar'" not in script and "source='sidebar'" in script
    res = run_script(script)
    table = at.dataframe[0].value
    assert table["histogram release"].to_numpy() == pytest.approx(res["histogram"], rel=1e-12)
    assert table["true (confidential)"].to_numpy() == pytest.approx(res["true"], rel=1e-12)
