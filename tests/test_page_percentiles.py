"""AppTest tests of app_pages/percentiles.py: defaults, main sliders, data sources, figures, bad input."""
from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

APP = str(Path(__file__).resolve().parent.parent / "app.py")


def _open() -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    at.switch_page("app_pages/percentiles.py")
    at.run()
    return at


def _clean(at: AppTest) -> None:
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def _text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [c.value for c in at.caption] + [i.value for i in at.info]
    return "\n".join(str(p) for p in parts)


def _qp(at: AppTest, key: str):
    v = at.query_params.get(key)
    return v[0] if isinstance(v, list) else v


def test_opens_with_defaults_and_explains_itself():
    at = _open()
    _clean(at)
    assert at.title[0].value == "Earnings percentiles (PSEO)"
    text = _text(at)
    assert "Neighbouring datasets" in text and "Public (not protected)" in text
    assert "ε per bin = 0.5" in text  # replace relation: epsilon / 2 per bin
    assert len(at.dataframe) >= 2
    assert _qp(at, "perc_eps") == "1.0"
    assert len(at.get("plotly_chart")) == 3  # histogram, CDF, accuracy curves


def test_main_sliders_rerun_cleanly_and_fast():
    at = _open()
    timings = []
    for key, value in [("perc_eps", 0.3), ("perc_eps", 2.5), ("perc_bins", 12), ("perc_bins", 28)]:
        t0 = time.perf_counter()
        at.slider(key=key).set_value(value).run()
        timings.append(time.perf_counter() - t0)
        _clean(at)
    assert _qp(at, "perc_bins") == "28"
    for label in ("Log-normal bins", "Even bins", "PSEO bins (Table 1, 21 bins)"):
        at.radio(key="perc_scheme").set_value(label).run()
        _clean(at)
    at.selectbox(key="perc_q").set_value("10, 25, 50, 75, 90").run()
    _clean(at)
    at.radio(key="perc_rel").set_value("Add or remove one person (the paper's)").run()
    _clean(at)
    assert "ε per bin = 2.5" in _text(at)  # epsilon was left at 2.5: full epsilon per bin
    at.radio(key="perc_cal").set_value("Paper (Nissim-Raskhodnikova-Smith constants)").run()
    _clean(at)
    at.number_input(key="perc_n").set_value(3000).run()
    _clean(at)
    print("slider reruns (s):", [round(t, 3) for t in timings])


def test_other_cell_sources():
    at = _open()
    at.selectbox(key="perc_src").set_value("Sidebar dataset (random subset)").run()
    _clean(at)
    at.selectbox(key="perc_src").set_value("A real PSEO cell (its published quartiles and size)").run()
    _clean(at)


@pytest.mark.parametrize("action, message", [
    (lambda at: at.number_input(key="perc_n").set_value(1), "only 1 person"),
    (lambda at: (at.radio(key="perc_scheme").set_value("Custom edges").run(),
                 at.text_input(key="perc_edges").set_value("10000, 50000, 40000, 90000")), "strictly increasing"),
    (lambda at: (at.radio(key="perc_scheme").set_value("Custom edges").run(),
                 at.text_input(key="perc_edges").set_value("10000, abc")), "numbers"),
])
def test_bad_input_shows_error_not_exception(action, message):
    at = _open()
    action(at)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.error and any(message in e.value for e in at.error), [e.value for e in at.error]


def test_many_cells_view(pseo_path):
    at = _open()
    at.radio(key="perc_view").set_value("Many cells (real PSEO table)").run()
    _clean(at)
    assert "parallel composition" in _text(at)
    at.slider(key="perc_eps").set_value(0.4).run()
    _clean(at)
    at.slider(key="perc_cells").set_value(200).run()
    _clean(at)
    assert len(at.get("plotly_chart")) == 2


@pytest.mark.slow
def test_figures_run_with_progress(pseo_path):
    at = _open()
    at.radio(key="perc_view").set_value("The paper's Figures 1–3").run()
    _clean(at)
    at.slider(key="perc_fig_cells").set_value(50).run()
    at.slider(key="perc_fig_draws").set_value(5).run()
    at.button(key="perc_fig_run").click().run()
    _clean(at)
    text = _text(at)
    assert "Figure 1." in text and "Figure 2." in text and "Figure 3." in text
    assert len(at.get("plotly_chart")) == 3  # Figures 1, 2, 3


def test_generated_script_reproduces_the_page(tmp_path):
    import json
    import subprocess
    import sys

    at = _open()
    _clean(at)
    script = next(c.value for c in at.code if "release_percentiles" in c.value)
    path = tmp_path / "percentiles_view.py"
    path.write_text(script)
    out = subprocess.run([sys.executable, str(path)], cwd=str(Path(APP).parent), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    table = at.dataframe[0].value
    shown = table["histogram release"].to_numpy()
    assert shown == pytest.approx(res["histogram"])
    assert table["true (confidential)"].to_numpy() == pytest.approx(res["true"])
