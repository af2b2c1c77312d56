"""The Gini page follows the chosen noise: the answer sentence, the numbers table, the
posterior and the generated script all use the noise picked in the selector (``gini_noise``)."""

from __future__ import annotations

import pytest
from support import assert_clean, open_page, page_script, run_scripts

import ui.sidebar
from dpcore import defaults
from dpcore.views import answers as answer_experiments
from dpcore.views import gini as gini_experiments

PAGE = "app_pages/gini.py"
NOISES = ("cauchy", "laplace", "laplace_lognormal")


def _numbers(at) -> dict[str, float]:
    table = next(d.value for d in at.dataframe if "quantity" in d.value.columns)
    return dict(zip(table["quantity"], table["value"].astype(float), strict=True))


@pytest.fixture(scope="module")
def pages():
    """The page at its defaults, opened once per noise through the link (gini_noise=...)."""
    opened = {}
    for noise in NOISES:
        at = open_page(PAGE, gini_noise=noise)
        assert_clean(at)
        opened[noise] = at
    return opened


@pytest.mark.parametrize("noise", NOISES)
def test_answer_and_numbers_are_the_librarys_for_the_chosen_noise(pages, noise):
    at = pages[noise]
    values = ui.sidebar.default_dataset().values
    answer = answer_experiments.gini_answer(
        values,
        epsilon=1.0,
        lower=0.0,
        upper=defaults.INCOME_UPPER,
        gamma=2.0,
        calibration="tight",
        n=values.size,
        noise=noise,
    )
    assert at.success[0].value == f"**{answer.sentence}**"
    assert ("heavy tail" in answer.sentence) == (noise == "cauchy")
    assert ("1e-06" in answer.sentence) == (noise != "cauchy")
    rec = answer_experiments.gini_recommendation(
        values,
        target_error=defaults.ANSWER_TARGET_GINI,
        confidence=0.9,
        lower=0.0,
        upper=defaults.INCOME_UPPER,
        gamma=2.0,
        calibration="tight",
        n=values.size,
        noise=noise,
    )
    assert any(rec.recommendation in i.value for i in at.info)
    view = gini_experiments.gini_view(
        values,
        epsilon=1.0,
        gamma=2.0,
        lower=0.0,
        upper=defaults.INCOME_UPPER,
        n=values.size,
        seed=int(ui.sidebar.DEFAULT_SEED),
        noise=noise,
    )
    page = _numbers(at)
    assert page == pytest.approx(view.numbers(), rel=1e-12)
    # the oracle's interval (the known-scale posterior) is labelled as such; the published one comes first
    posterior_text = next(m.value for m in at.markdown if "Oracle (not publishable)" in m.value)
    lo, hi = view.posterior_interval
    assert f"[{lo:.4f}, {hi:.4f}]" in posterior_text
    if view.published is not None:
        published_text = next(m.value for m in at.markdown if "From the published numbers alone" in m.value)
        assert f"[{view.published.lower:.4f}, {view.published.upper:.4f}]" in published_text
    script = page_script(at)
    assert f"noise={noise!r}" in script and "gini_view(" in script


def test_the_three_noises_give_different_answers(pages):
    sentences = {noise: at.success[0].value for noise, at in pages.items()}
    assert len(set(sentences.values())) == 3
    q99 = {noise: _numbers(at)["q99_abs_error"] for noise, at in pages.items()}
    assert q99["laplace"] < 0.2 * q99["cauchy"]  # the light-tailed noise's target on the default data


def test_generated_scripts_print_the_pages_numbers_for_each_noise(pages):
    """One subprocess runs the three generated scripts (the page's own call with noise=...)."""
    scripts = [page_script(pages[noise]) for noise in NOISES]
    for noise, out in zip(NOISES, run_scripts(scripts), strict=True):
        page = _numbers(pages[noise])
        assert set(page) <= set(out), (noise, sorted(set(page) - set(out)))
        for key, value in page.items():
            assert float(out[key]) == pytest.approx(value, rel=1e-9, abs=1e-12), (noise, key)


def test_light_noise_at_small_epsilon_uses_the_fast_bound_and_the_exact_answer_on_a_click():
    """Light-tailed noises need a small beta: below ε = 1 the view uses the fast bound (said on the page, and
    the script makes the same call) and the answer, exact as the planner computes it, waits for a click."""
    at = open_page(PAGE, gini_noise="laplace", gini_eps="0.5")
    assert_clean(at)
    assert any("the sections below use the fast bound" in i.value for i in at.info)
    assert "method='fast'" in page_script(at) and "noise='laplace'" in page_script(at)
    assert not at.success  # no answer yet
    at.button(key="gini_answer_run").click().run()
    assert_clean(at)
    values = ui.sidebar.default_dataset().values
    answer = answer_experiments.gini_answer(
        values,
        epsilon=0.5,
        lower=0.0,
        upper=defaults.INCOME_UPPER,
        gamma=2.0,
        calibration="tight",
        n=values.size,
        noise="laplace",
    )
    assert at.success[0].value == f"**{answer.sentence}**"
    at.select_slider(key="gini_eps").set_value(2.0).run()  # from ε = 1 on: exact bound, answer at once
    assert_clean(at)
    assert "method='exact'" in page_script(at) and at.success and "At ε = 2" in at.success[0].value
