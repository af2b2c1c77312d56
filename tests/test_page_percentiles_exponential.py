"""AppTest tests of the percentiles page's method choice: the exponential mechanism for the one-cell view and the
recommendation sentence."""

from __future__ import annotations

import pytest
from support import assert_clean, metrics, open_page, page_script, page_text, query_param

from dpcore.views.percentiles import exponential_cell_view

PAGE = "app_pages/percentiles.py"
EXPONENTIAL = "Exponential mechanism (one quantile)"


def test_recommendation_follows_the_levels():
    at = open_page(PAGE)
    assert_clean(at)
    assert "For 3 percentiles use the noisy histogram" in page_text(at)  # default levels 25, 50, 75
    at.selectbox(key="perc_q").set_value("50").run()
    assert_clean(at)
    assert "For one percentile (p50) use the exponential mechanism" in page_text(at)


def test_exponential_method_releases_one_quantile_and_moves_with_epsilon():
    at = open_page(PAGE, perc_q="50")
    at.radio(key="perc_method").set_value(EXPONENTIAL).run()
    assert_clean(at)
    assert query_param(at, "perc_method") == EXPONENTIAL
    shown = metrics(at)
    assert {"Released P50 (exponential)", "P50 read off the noisy histogram", "True P50 (confidential)"} <= set(shown)
    assert "1,001 public candidates" in page_text(at)
    assert len(at.get("plotly_chart")) == 1  # the law of the choice; no histogram sections
    view = exponential_cell_view(source="synthetic", n=200, epsilon=1.0, q=50.0, seed=2026)  # the page's defaults
    assert shown["True P50 (confidential)"] == f"${view.true:,.0f}"
    assert shown["Released P50 (exponential)"] == f"${view.released:,.0f}"
    at.slider(key="perc_eps").set_value(0.2).run()
    assert_clean(at)
    assert "ε = 0.2" in page_text(at)
    script = page_script(at)
    assert "exponential_cell_view(values" in script and " cell_view(values" not in script and "epsilon=0.2" in script


@pytest.mark.parametrize("levels", ["25, 50, 75", "10, 25, 50, 75, 90"])
def test_exponential_method_with_several_levels_releases_the_median(levels):
    """Several levels chosen: the one-quantile method releases the median (or the first level without one)."""
    at = open_page(PAGE, perc_q=levels, perc_method=EXPONENTIAL)
    assert_clean(at)
    assert "Released P50 (exponential)" in metrics(at)
    assert "use the noisy histogram" in page_text(at)


def test_one_person_cell_releases_without_refusal():
    """The histogram's answer box refuses a one-person cell (its read-off needs two); the exponential mechanism's
    view still releases (its score is defined for any public cell size) and nothing raises."""
    at = open_page(PAGE, perc_method=EXPONENTIAL, perc_q="50")
    at.number_input(key="perc_n").set_value(1).run()
    assert_clean(at, expected_error="only 1 person")
    assert "Released P50 (exponential)" in metrics(at)


def test_sidebar_source_with_the_exponential_method():
    at = open_page(PAGE, perc_method=EXPONENTIAL, perc_q="50")
    at.selectbox(key="perc_src").set_value("Sidebar dataset (random subset)").run()
    assert_clean(at)
    assert "Released P50 (exponential)" in metrics(at)
    assert "build_dataset(" in page_script(at)  # the generated script rebuilds the sidebar's data
