"""AppTest tests of app_pages/ratios.py: defaults, every view, main sliders, seed reproducibility, URL state,
bad input (st.error, never an exception), and the ACS poverty example against dpcore."""
from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import ratio as R

APP = str(Path(__file__).resolve().parent.parent / "app.py")
VIEWS = ("Sampling distribution", "Intervals", "Coverage heatmaps", "Accuracy vs ε", "Bias vs n", "Odds ratio",
         "Real example: poverty (ACS)")


def _open(**query) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    for k, v in query.items():
        at.query_params[k] = str(v)
    at.run()
    at.switch_page("app_pages/ratios.py")
    at.run()
    return at


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def test_opens_with_defaults_and_explains_itself():
    at = _open()
    _clean(at)
    assert at.title[0].value == "Relative risk and ratios"
    text = _text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    assert "sampling" in text and "privacy noise" in text
    assert len(at.get("plotly_chart")) == 1
    labels = [m.label for m in at.metric]
    assert "share of variance from privacy" in labels


@pytest.mark.parametrize("view", VIEWS)
def test_every_view_renders_and_survives_the_main_sliders(view):
    at = _open()
    at.radio(key="ratio_view").set_value(view).run()
    _clean(at)
    assert len(at.get("plotly_chart")) >= 1 or "not available" in _text(at)
    at.select_slider(key="ratio_eps").set_value(0.25).run()
    _clean(at)
    at.slider(key="ratio_px").set_value(0.5).run()
    _clean(at)
    at.radio(key="ratio_mech").set_value("Gaussian (analytic)").run()
    _clean(at)
    at.select_slider(key="ratio_level").set_value(0.9).run()
    _clean(at)


def test_same_seed_same_numbers_and_seed_changes_them():
    a = _open(ratio_view="Intervals")
    b = _open(ratio_view="Intervals")
    _clean(a)
    assert a.dataframe[0].value.equals(b.dataframe[0].value)
    c = _open(ratio_view="Intervals", seed=7)
    assert not a.dataframe[0].value.equals(c.dataframe[0].value)


def test_url_state_is_read_and_written():
    at = _open(ratio_eps="0.5", ratio_nx="150", ratio_view="Bias vs n")
    _clean(at)
    assert at.select_slider(key="ratio_eps").value == 0.5
    assert at.number_input(key="ratio_nx").value == 150
    assert at.subheader[0].value.startswith("Bias")
    at.slider(key="ratio_py").set_value(0.4).run()
    qp = at.query_params.get("ratio_py")
    assert (qp[0] if isinstance(qp, list) else qp) == "0.4"


def test_intervals_match_dpcore_for_observed_counts():
    """Counts mode: the page's intervals are exactly dpcore's Theorem 4.2 / 4.5 on the user's noisy counts."""
    at = _open(ratio_view="Intervals", ratio_mode="Observed noisy counts", ratio_nx="100", ratio_ny="100",
               ratio_xobs="60.0", ratio_yobs="40.0")
    _clean(at)
    df = at.dataframe[0].value
    cons = df[df["method"] == "Theorem 4.5 conservative"].iloc[0]
    want = R.rr_confidence_interval(60, 40, 100, 100, noise_variance=8.0)
    assert cons["lower"] == pytest.approx(want.lower, abs=1e-4) and cons["upper"] == pytest.approx(want.upper, abs=1e-4)


@pytest.mark.parametrize("query,needle", [
    (dict(ratio_view="Intervals", ratio_mode="Observed noisy counts", ratio_xobs="-3.0"), "<= 0"),
    (dict(ratio_view="Intervals", ratio_mode="Observed noisy counts", ratio_yobs="0.0"), "<= 0"),
    (dict(ratio_nx="0"), "group sizes"),
    (dict(ratio_mode="Observed noisy counts", ratio_nx="10", ratio_xobs="60.0"), "between 0 and 1"),
])
def test_bad_input_shows_error_not_exception(query, needle):
    at = _open(**query)
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and needle in at.error[0].value, [e.value for e in at.error]


def test_bad_input_by_widget():
    at = _open()
    at.number_input(key="ratio_ny").set_value(0).run()
    assert not at.exception
    assert at.error and "group sizes" in at.error[0].value


def test_acs_poverty_example_matches_dpcore(acs_path):
    at = _open(ratio_view="Real example: poverty (ACS)")
    _clean(at)
    frame = pd.read_csv(acs_path, usecols=["POVPIP", "SEX", "RAC1P", "HISP"])
    x, nx, y, ny = R.poverty_counts(frame, "SEX", 2, 1)
    tab = at.dataframe[0].value
    assert list(tab["in poverty (confidential)"]) == [x, y]
    assert list(tab["people (public)"]) == [nx, ny]
    at.selectbox(key="ratio_acs_col").set_value("RAC1P").run()
    _clean(at)
    at.selectbox(key="ratio_acs_gx").set_value(2).run()
    _clean(at)
    at.selectbox(key="ratio_acs_gy").set_value(2).run()  # same group twice -> clear error
    assert not at.exception and at.error and "two different groups" in at.error[0].value
