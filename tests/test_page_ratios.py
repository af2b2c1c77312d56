"""AppTest tests of app_pages/ratios.py: defaults, every view, main sliders, seed reproducibility, URL state,
bad input (st.error, never an exception), the ACS poverty example against dpcore, and one generated-script
run (the page and the script make the same dpcore.views.ratio call; the view functions themselves are
tested in test_ratio_views.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from support import assert_clean, open_page, page_script, page_text, run_script

from dpcore import data as dpdata
from dpcore import ratio
from ui.ratios.sections import VIEWS

PAGE = "app_pages/ratios.py"


def _open(**query):
    return open_page(PAGE, **query)


def test_opens_with_defaults_and_explains_itself():
    at = _open()
    assert_clean(at)
    assert at.title[0].value == "Relative risk and ratios"
    text = page_text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    assert "sampling" in text and "privacy noise" in text
    assert len(at.get("plotly_chart")) == 1
    labels = [m.label for m in at.metric]
    assert "share of variance from privacy" in labels


FUNCTIONS = dict(
    zip(
        VIEWS,
        (
            "sampling_view",
            "intervals_view",
            "coverage_heatmap_view",
            "accuracy_view",
            "bias_view",
            "odds_ratio_view",
            "poverty_view",
        ),
        strict=True,
    )
)


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_renders_and_survives_the_main_sliders(view):
    at = _open()
    at.radio(key="ratio_view").set_value(view).run()
    assert_clean(at)
    # the share panel's script is this view's one dpcore call
    assert f"from dpcore.views.ratio import {FUNCTIONS[view]}" in page_script(at)
    assert len(at.get("plotly_chart")) >= 1 or "not available" in page_text(at)
    at.select_slider(key="ratio_eps").set_value(0.25).run()
    assert_clean(at)
    at.slider(key="ratio_px").set_value(0.5).run()
    assert_clean(at)
    at.radio(key="ratio_mech").set_value("Gaussian (analytic)").run()
    assert_clean(at)
    at.select_slider(key="ratio_level").set_value(0.9).run()
    assert_clean(at)


def test_same_seed_same_numbers_and_seed_changes_them():
    a = _open(ratio_view="Intervals")
    b = _open(ratio_view="Intervals")
    assert_clean(a)
    assert a.dataframe[0].value.equals(b.dataframe[0].value)
    c = _open(ratio_view="Intervals", seed=7)
    assert not a.dataframe[0].value.equals(c.dataframe[0].value)


def test_url_state_is_read_and_written():
    at = _open(ratio_eps="0.5", ratio_nx="150", ratio_view="Bias vs n")
    assert_clean(at)
    assert at.select_slider(key="ratio_eps").value == 0.5
    assert at.number_input(key="ratio_nx").value == 150
    assert at.subheader[0].value.startswith("Bias")
    at.slider(key="ratio_py").set_value(0.4).run()
    qp = at.query_params.get("ratio_py")
    assert (qp[0] if isinstance(qp, list) else qp) == "0.4"


def test_intervals_match_dpcore_for_observed_counts():
    """Counts mode: the page's intervals are exactly dpcore's Theorem 4.2 / 4.5 on the user's noisy counts."""
    at = _open(
        ratio_view="Intervals",
        ratio_mode="Observed noisy counts",
        ratio_nx="100",
        ratio_ny="100",
        ratio_xobs="60.0",
        ratio_yobs="40.0",
    )
    assert_clean(at)
    df = at.dataframe[0].value
    cons = df[df["method"] == "Theorem 4.5 conservative"].iloc[0]
    want = ratio.rr_confidence_interval(60, 40, 100, 100, noise_variance=8.0)
    assert cons["lower"] == pytest.approx(want.lower, abs=1e-4) and cons["upper"] == pytest.approx(want.upper, abs=1e-4)


@pytest.mark.parametrize(
    "query,needle",
    [
        (dict(ratio_view="Intervals", ratio_mode="Observed noisy counts", ratio_xobs="-3.0"), "<= 0"),
        (dict(ratio_view="Intervals", ratio_mode="Observed noisy counts", ratio_yobs="0.0"), "<= 0"),
        (dict(ratio_nx="0"), "group sizes"),
        (dict(ratio_mode="Observed noisy counts", ratio_nx="10", ratio_xobs="60.0"), "between 0 and 1"),
    ],
)
def test_bad_input_shows_error_not_exception(query, needle):
    at = _open(**query)
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and needle in at.error[0].value, [e.value for e in at.error]


def test_bad_input_by_widget():
    at = _open()
    at.number_input(key="ratio_ny").set_value(0).run()
    assert not at.exception
    assert at.error and "group sizes" in at.error[0].value


def test_acs_poverty_example_matches_dpcore():
    """The ACS excerpt is bundled: the example runs on a fresh machine too."""
    at = _open(ratio_view="Real example: poverty (ACS)")
    assert_clean(at)
    frame = pd.read_csv(dpdata.example_path("acs"), usecols=["POVPIP", "SEX", "RAC1P", "HISP"])
    x, nx, y, ny = dpdata.poverty_counts(frame, "SEX", 2, 1)
    tab = at.dataframe[0].value
    assert list(tab["in poverty (confidential)"]) == [x, y]
    assert list(tab["people (public)"]) == [nx, ny]
    at.selectbox(key="ratio_acs_col").set_value("RAC1P").run()
    assert_clean(at)
    at.selectbox(key="ratio_acs_gx").set_value(2).run()
    assert_clean(at)
    at.selectbox(key="ratio_acs_gy").set_value(2).run()  # same group twice -> clear error
    assert not at.exception and at.error and "two different groups" in at.error[0].value


# ---------------------------------------------------------------------------------------------
# share / reproduce: the generated script is the page's own view call
# ---------------------------------------------------------------------------------------------


def test_share_panel_shows_link_with_the_settings():
    at = _open(ratio_eps="0.5", ratio_nx="300", ratio_view="Bias vs n")
    assert_clean(at)
    link = next(c.value for c in at.code if "ratio_view" in c.value)
    assert "ratio_eps=0.5" in link and "ratio_nx=300" in link and "ratio_view=Bias" in link
    assert any(getattr(b, "label", "") == "Download the Python script" for b in at.get("download_button"))
    script = page_script(at)
    assert "from dpcore.views.ratio import bias_view" in script and "epsilon=0.5" in script
    assert "binomial_ratio_bias" not in script  # no page logic in the script


def test_script_reproduces_intervals_view():
    """One subprocess run: the script prints what the page shows (Gaussian noise, moved settings)."""
    at = _open(
        ratio_view="Intervals",
        seed=7,
        ratio_mech="Gaussian (analytic)",
        ratio_delta="1e-05",
        ratio_eps="0.25",
        ratio_level="0.9",
        ratio_ny="120",
        ratio_py="0.35",
    )
    assert_clean(at)
    res = run_script(page_script(at))
    shown = at.dataframe[0].value
    assert list(shown["method"]) == [r["method"] for r in res["intervals"]]
    for col in ("estimate", "lower", "upper", "width"):
        assert shown[col].tolist() == pytest.approx([r[col] for r in res["intervals"]], rel=1e-12, abs=1e-12)
    cov = at.dataframe[1].value
    assert cov["coverage"].tolist() == pytest.approx([r["coverage"] for r in res["coverage"]], rel=1e-12)
    assert cov["± (MC s.e.)"].tolist() == pytest.approx([r["± (MC s.e.)"] for r in res["coverage"]], rel=1e-12)
