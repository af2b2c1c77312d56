"""The Gini page's noise choice: ui.gini.noise_choice on its own, then on the Gini page."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.views import gini_noises
from ui.gini import noise_choice


def _renderer_app():
    import numpy as np  # runs inside the AppTest script
    import streamlit as st

    from dpcore.views import gini_noises
    from ui.gini.noise_choice import render_noise_choice

    x = np.random.default_rng(2026).lognormal(10.5, 0.9, 2000)
    eps = st.slider("epsilon", 0.25, 4.0, 1.0, key="t_eps")
    comp = gini_noises.compare_noises(x, epsilon=eps, lower=0.0, upper=float(x.max()))
    chosen = render_noise_choice("t", comparison=comp)
    st.write(f"chosen={chosen}")
    render_noise_choice("u", epsilon=eps)  # data-free variant


@pytest.fixture(scope="module")
def comparison():
    x = np.random.default_rng(2026).lognormal(10.5, 0.9, 10_000)
    return gini_noises.compare_noises(x, epsilon=1.0, lower=0.0, upper=float(x.max()))


def test_comparison_numbers_and_sentence(comparison):
    c, lap, lln = (comparison.row(n) for n in ("cauchy", "laplace", "laplace_lognormal"))
    assert c.rmse is None and lap.rmse is not None and lln.rmse is not None
    assert lap.q99_abs_error <= 0.2 * c.q99_abs_error and lap.median_abs_error <= 1.5 * c.median_abs_error
    sentence = comparison.sentence("laplace")
    assert "median" in sentence and "99th percentile" in sentence and "1e-06" in sentence
    assert "ρ" in comparison.sentence("laplace_lognormal")
    assert comparison.to_dict()["rows"][1]["cost"].startswith("(ε, δ)")


def test_error_figure_has_both_panels(comparison):
    spec = noise_choice.noise_error_figure(comparison, chosen="laplace")  # a plain plotly specification
    kinds = [t["type"] for t in spec["data"]]
    assert kinds.count("scatter") == 3 and kinds.count("bar") == 3
    assert spec["layout"]["yaxis2"]["type"] == "log"
    import plotly.graph_objects as go

    fig = go.Figure(spec)  # valid for plotly: the bars on the right panel, the densities on the left
    assert [t.xaxis for t in fig.data] == ["x", "x2"] * 3 and fig.layout.xaxis2.domain[0] > fig.layout.xaxis.domain[1]
    rows = noise_choice.comparison_table(comparison)
    assert [r["privacy cost"][:1] for r in rows] == ["ε", "(", "ρ"]


def test_renderer_selects_and_explains():
    at = AppTest.from_function(_renderer_app, default_timeout=60)
    at.run()
    assert not at.exception
    assert any("chosen=cauchy" in m.value for m in at.markdown)
    assert any("Generalized Cauchy" in m.value for m in at.markdown)
    at.selectbox(key="t_noise").set_value("laplace").run()
    assert not at.exception
    text = " ".join(m.value for m in at.markdown)
    assert "chosen=laplace" in text and "Laplace (NRS)" in text and "(ε, δ) = (1, 1e-06)" in text
    at.slider(key="t_eps").set_value(4.0).run()
    assert not at.exception
    assert "(ε, δ) = (4, 1e-06)" in " ".join(m.value for m in at.markdown)
    assert any("per unit of smooth sensitivity" in m.value.lower() for m in at.markdown)


def _section_app():
    import numpy as np
    import streamlit as st

    from ui.gini.noise_choice import render_gini_noise_section

    x = np.random.default_rng(2026).lognormal(10.5, 0.9, 3000)
    eps = st.select_slider("epsilon", [0.25, 1.0, 4.0], 1.0, key="s_eps")
    render_gini_noise_section(
        "s", x, epsilon=eps, lower=0.0, upper=2e6, gamma=2.0, calibration="tight", method="exact", seed=7
    )


def test_section_renders_runs_on_button_at_small_epsilon_and_shows_a_release():
    at = AppTest.from_function(_section_app, default_timeout=120)
    at.run()
    assert not at.exception and not at.error
    text = " ".join(m.value for m in at.markdown)
    # default noise: the instant data-free comparison, the data one on a button
    assert "Per unit of smooth sensitivity" in text and len(at.dataframe) == 0
    at.selectbox(key="s_noise").set_value("laplace_lognormal").run()  # a light noise: computed on the data
    assert not at.exception and len(at.dataframe) == 1
    text = " ".join(m.value for m in at.markdown)
    assert "One release with this noise" in text and "ρ = " in text
    at.select_slider(key="s_eps").set_value(0.25).run()  # small epsilon, exact bound: on a button
    assert not at.exception and len(at.dataframe) == 0
    at.button(key="s_noise_run").click().run()
    assert not at.exception and len(at.dataframe) == 1


# ------------------------------------------------------------------------------------ on the Gini page

PAGE = "app_pages/gini.py"


def test_gini_page_offers_the_noise_choice():
    from support import assert_clean, open_page, page_text, query_param

    at = open_page(PAGE)
    assert_clean(at)
    text = page_text(at)
    assert "Lighter tails" in text and "Generalized Cauchy (the paper's)" in text
    at.selectbox(key="gini_noise").set_value("laplace").run()
    assert_clean(at)
    text = page_text(at)
    assert "Laplace (NRS)" in text and "1e-06" in text and "One release with this noise" in text
    assert query_param(at, "gini_noise") == "laplace"
    at.select_slider(key="gini_eps").set_value(2.0).run()
    assert_clean(at)
    assert "(ε, δ) = (2, 1e-06)" in page_text(at)


def test_gini_page_bad_noise_in_link_falls_back_and_bad_bounds_show_an_error():
    from support import assert_clean, open_page, page_text

    at = open_page(PAGE, gini_noise="student_t")  # a hand-edited link: the default noise, no error
    assert_clean(at)
    assert "Generalized Cauchy (the paper's)" in page_text(at)
    at.selectbox(key="gini_noise").set_value("laplace_lognormal").run()
    at.number_input(key="gini_U").set_value(0.0).run()  # bad bounds: a clear error, no traceback
    assert_clean(at, expected_error="must be above the lower bound")
