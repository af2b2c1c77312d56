"""AppTest tests of app_pages/ratios.py: defaults, every view, main sliders, seed reproducibility, URL state,
bad input (st.error, never an exception), and the ACS poverty example against dpcore."""
from __future__ import annotations

from pathlib import Path

import numpy as np
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


# ---------------------------------------------------------------------------------------------
# share / reproduce: the generated script prints the page's numbers
# ---------------------------------------------------------------------------------------------

def _run_script(at: AppTest, tmp_path) -> dict:
    """Run the page's generated script in a subprocess (from the repository root) and return its JSON."""
    import json
    import subprocess
    import sys

    scripts = [c.value for c in at.code if "from dpcore import ratio as R" in c.value]
    assert len(scripts) == 1, "the share panel shows exactly one script"
    script = scripts[0]
    compile(script, "ratios_view.py", "exec")
    path = tmp_path / "ratios_view.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], cwd=str(Path(APP).parent), capture_output=True, text=True,
                         timeout=180)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _same(frame: pd.DataFrame, rows: list[dict], columns) -> None:
    """Every row/column of the page's table equals the script's numbers (to 1e-9 relative)."""
    assert len(frame) == len(rows)
    if "method" in frame:
        assert list(frame["method"]) == [r["method"] for r in rows]
    for col in columns:
        want = [float(r[col]) for r in rows]
        assert frame[col].to_numpy(dtype=float) == pytest.approx(want, rel=1e-9, abs=1e-12), col


def test_share_panel_shows_link_with_the_settings():
    at = _open(ratio_eps="0.5", ratio_nx="300", ratio_view="Bias vs n")
    _clean(at)
    link = next(c.value for c in at.code if "ratio_view" in c.value)
    assert "ratio_eps=0.5" in link and "ratio_nx=300" in link and "ratio_view=Bias" in link
    assert any(getattr(b, "label", "") == "Download the Python script" for b in at.get("download_button"))


def test_script_reproduces_sampling_view(tmp_path):
    at = _open(seed=11, ratio_eps="0.5", ratio_px="0.4", ratio_nx="150")
    _clean(at)
    res = _run_script(at, tmp_path)
    s = res["sampling"]
    summary = at.dataframe[0].value
    assert summary["s.d."].tolist() == pytest.approx([s["sd_nonprivate"], s["sd_private"]], rel=1e-9)
    assert summary["median"].tolist() == pytest.approx([s["median_nonprivate"], s["median_private"]], rel=1e-9)
    assert summary["mean"].tolist() == pytest.approx([s["mean_nonprivate"], s["mean_private"]], rel=1e-9)
    share = next(m.value for m in at.metric if m.label == "share of variance from privacy")
    assert share == f"{s['share_of_variance_from_privacy']:.0%}"


@pytest.mark.parametrize("query", [
    dict(),
    dict(seed=7, ratio_mech="Gaussian (analytic)", ratio_delta="1e-05", ratio_eps="0.25", ratio_level="0.9",
         ratio_ny="120", ratio_py="0.35"),
    dict(ratio_mode="Observed noisy counts", ratio_nx="100", ratio_ny="100", ratio_xobs="60.0", ratio_yobs="40.0"),
])
def test_script_reproduces_intervals_view(tmp_path, query):
    at = _open(ratio_view="Intervals", **query)
    _clean(at)
    res = _run_script(at, tmp_path)
    _same(at.dataframe[0].value, res["intervals"], ["estimate", "lower", "upper", "width"])
    if "ratio_xobs" in query:
        assert "coverage" not in res and len(at.dataframe) == 1
    else:
        cov = at.dataframe[1].value
        _same(cov, res["coverage"], ["coverage", "mean width"])
        assert cov["± (MC s.e.)"].tolist() == pytest.approx([r["se"] for r in res["coverage"]], rel=1e-9)


def test_script_reproduces_heatmaps(tmp_path):
    at = _open(ratio_view="Coverage heatmaps", ratio_hm_sims="500", ratio_nx="100", ratio_ny="300")
    _clean(at)
    res = _run_script(at, tmp_path)
    out = at.dataframe[0].value
    assert out["coverage"].to_numpy() == pytest.approx(np.ravel(res["coverage"]), rel=1e-9)
    assert out["width_ratio"].to_numpy() == pytest.approx(np.ravel(res["width_ratio"]), rel=1e-9)
    at.selectbox(key="ratio_hm_method").set_value("Katz (classic, no privacy)").run()
    _clean(at)
    res = _run_script(at, tmp_path)
    out = at.dataframe[0].value
    assert out["coverage"].to_numpy() == pytest.approx(np.ravel(res["coverage"]), rel=1e-9)


def test_script_reproduces_accuracy_and_bias(tmp_path):
    at = _open(ratio_view="Accuracy vs ε", ratio_alpha="0.2", ratio_px="0.45")
    _clean(at)
    res = _run_script(at, tmp_path)
    df = at.dataframe[0].value
    assert list(df["algorithm"]) == [r["algorithm"] for r in res["accuracy"]]
    assert df["accuracy"].to_numpy() == pytest.approx([r["accuracy"] for r in res["accuracy"]], rel=1e-9, abs=1e-12)
    at = _open(ratio_view="Bias vs n", ratio_eps="0.25", ratio_py="0.1")
    _clean(at)
    res = _run_script(at, tmp_path)
    _same(at.dataframe[0].value, res["bias"], ["true ratio", "E non-private", "E private", "non-private", "private"])


def test_script_reproduces_odds_ratio(tmp_path):
    at = _open(ratio_view="Odds ratio", seed=5, ratio_mech="Gaussian (analytic)")
    _clean(at)
    res = _run_script(at, tmp_path)
    cells = at.dataframe[0].value
    assert cells["with outcome (noisy)"].tolist() == pytest.approx(res["noisy_cells"][0::2], rel=1e-9)
    assert cells["without (noisy)"].tolist() == pytest.approx(res["noisy_cells"][1::2], rel=1e-9)
    _same(at.dataframe[1].value, res["odds_ratio_intervals"], ["estimate", "lower", "upper", "privacy share"])
    text = _text(at)
    for v in res["coverage"].values():
        assert f"{v:.1%}" in text


def test_script_reproduces_acs_example(tmp_path, acs_path):
    at = _open(ratio_view="Real example: poverty (ACS)", ratio_acs_col="RAC1P", ratio_acs_gx="2", ratio_acs_gy="1")
    _clean(at)
    res = _run_script(at, tmp_path)
    tab = at.dataframe[0].value
    assert list(tab["in poverty (confidential)"]) == res["in_poverty_confidential"]
    assert tab["noisy count"].tolist() == pytest.approx(res["noisy_counts"], rel=1e-9)
    link = next(c.value for c in at.code if "ratio_view" in c.value)
    assert "ratio_acs_col=RAC1P" in link
