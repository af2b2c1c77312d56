"""The answer first: dpcore.views.answers and the Gini page's answer box."""

from __future__ import annotations

import numpy as np
import pytest
from support import assert_clean, open_page, query_param

from dpcore import defaults, noise
from dpcore import planner as planner_lib
from dpcore.data import lognormal_incomes
from dpcore.validation import DPInputError
from dpcore.views import answers
from dpcore.views import percentiles as percentile_experiments

VALUES = lognormal_incomes(2_000, rng=np.random.default_rng(7))


def test_sentence_quantiles_are_those_of_the_released_gini():
    answer = answers.gini_answer(VALUES, epsilon=1.0)
    stat = planner_lib.make_statistic("gini", VALUES, upper=defaults.INCOME_UPPER)
    draws = 400_000
    errors = np.abs(stat.bias + stat.scale(1.0) * noise.GeneralizedCauchy(2.0).rvs(draws, np.random.default_rng(1)))
    for level, value in zip(
        answers.ANSWER_LEVELS, (answer.median_abs_error, answer.q90_abs_error, answer.q99_abs_error), strict=True
    ):
        share = float(np.mean(errors <= value))
        se = np.sqrt(level * (1 - level) / draws)
        assert abs(share - level) < 5 * se, (level, share)
    assert f"±{answer.q90_abs_error:.3f}" in answer.sentence or f"±{answer.q90_abs_error:.2g}" in answer.sentence
    assert "one time in a hundred" in answer.sentence and "heavy tail" in answer.sentence
    assert answer.q99_abs_error > 5 * answer.q90_abs_error  # the tail is stated, and it is heavy


def test_recommendation_meets_the_target_and_is_the_smallest():
    rec = answers.gini_recommendation(VALUES, target_error=0.02, confidence=0.9)
    eps = rec.recommended_epsilon
    stat = planner_lib.make_statistic("gini", VALUES, upper=defaults.INCOME_UPPER)
    rel = 0.02 / stat.truth[0]
    assert stat.prob_within(eps, rel)[0] >= 0.9 - 1e-9
    assert stat.prob_within(eps * 0.98, rel)[0] < 0.9
    assert f"ε = {eps:.3g}" in rec.recommendation
    # the planner, given the same target in %, recommends the same epsilon
    same = planner_lib.solve_epsilon(stat, planner_lib.AccuracyTarget(rel_error=rel, confidence=0.9))
    assert same.epsilon == pytest.approx(eps)


def test_unreachable_target_and_bad_input():
    rec = answers.gini_recommendation(VALUES[:50], target_error=0.0005, confidence=0.99)
    assert rec.recommended_epsilon is None and "No ε up to 10" in rec.recommendation
    with pytest.raises(DPInputError, match="Gini points"):
        answers.gini_recommendation(VALUES, target_error=5.0)
    with pytest.raises(DPInputError):
        answers.gini_answer(VALUES, epsilon=-1.0)
    assert answers.gini_answer(VALUES, epsilon=0.5).to_dict()["epsilon"] == 0.5


def test_gini_answer_and_recommendation_share_one_settings_object_and_one_limit_rule():
    """The Gini's answer and recommendation read one GiniAnswerSettings (the page passes the same settings to
    both); the recommendation is statistic_recommendation on that statistic (one limit rule for every
    recommendation: above the caller's largest ε there is none, and the reason names both)."""
    settings = {"upper": 500_000.0, "gamma": 3.0, "n": 1_500, "noise": "laplace", "delta": 1e-6}
    stat = answers.GiniAnswerSettings(**settings).statistic(VALUES)
    assert stat.upper == 500_000.0 and stat.values.size == 1_500
    answer = answers.gini_answer(VALUES, epsilon=1.0, **settings)
    assert answer.upper == 500_000.0 and answer.n == 1_500 and "Laplace" in answer.sentence
    rec = answers.gini_recommendation(VALUES, target_error=0.01, confidence=0.9, **settings)
    same = answers.statistic_recommendation(stat, target_error=0.01, confidence=0.9, noun="Gini")
    assert rec == same
    capped = answers.gini_recommendation(VALUES, target_error=0.01, confidence=0.9, max_epsilon=0.1, **settings)
    assert capped.recommended_epsilon is None
    assert capped.why_no_epsilon == f"the target needs ε = {same.recommended_epsilon:.3g}, above the limit 0.1"
    with pytest.raises(TypeError, match="uper"):
        answers.gini_answer(VALUES, epsilon=1.0, uper=1e6)  # a misspelt setting is refused, never ignored
    with pytest.raises(TypeError, match="uper"):
        answers.gini_recommendation(VALUES, uper=1e6)


def test_gini_page_and_planner_share_the_defaults():
    source = open("app_pages/gini.py").read()
    assert "DEFAULT_UPPER = defaults.INCOME_UPPER" in source
    assert "defaults.INCOME_UPPER" in open("ui/planner/views/settings.py").read()


def test_gini_page_shows_the_answer_first_and_jargon_under_advanced():
    at = open_page("app_pages/gini.py")
    assert_clean(at)
    first = at.success[0].value
    assert first.startswith("**At ε = 1 the published Gini is within ±") and "nine times in ten" in first
    assert any(
        "**Recommended:** To be within ±0.01 of the true Gini 90% of the time, use ε =" in i.value for i in at.info
    )
    advanced = next(e for e in at.expander if e.label.startswith("Advanced"))
    keys = {getattr(w, "key", None) for w in advanced.select_slider} | {getattr(w, "key", None) for w in advanced.radio}
    assert {"gini_gamma", "gini_method", "gini_cal"} <= keys
    at.number_input(key="gini_target").set_value(0.005).run()
    assert_clean(at)
    assert query_param(at, "gini_target") == "0.005"
    assert any("within ±0.005" in i.value for i in at.info)


def test_ratio_answer_matches_simulated_releases():
    from dpcore import planner as planner_lib

    answer, rec = answers.ratio_answer(
        epsilon=1.0, p_x=0.3, p_y=0.2, n_x=200, n_y=200, target_error=0.1, confidence=0.9
    )
    stat = planner_lib.RatioStatistic(60, 40, 200, 200)
    draws = stat.simulate(1.0, 200_000, np.random.default_rng(2))
    errors = np.abs(np.asarray(draws).ravel() - 1.5)
    assert abs(np.mean(errors <= answer.q90_rel_error * 1.5) - 0.9) < 0.01
    assert rec.recommended_epsilon is not None and "within ±0.1 of the true relative risk" in rec.recommendation


def test_ratios_page_answers_first():
    at = open_page("app_pages/ratios.py")
    assert_clean(at)
    assert at.success[0].value.startswith("**At ε = 1 the published relative risk is within ±")
    assert any("**Recommended:** To be within ±0.1 of the true relative risk" in i.value for i in at.info)


def test_percentile_cell_answer_and_page():
    answer, rec = percentile_experiments.percentile_cell_answer(epsilon=1.0, target_error=3000.0, confidence=0.9)
    assert answer.median_rel_error < answer.q90_rel_error < answer.q99_rel_error
    assert answer.sentence.startswith("At ε = 1 the published median of this cell is within ±$")
    assert rec.recommended_epsilon is not None and "±$3,000" in rec.recommendation
    at = open_page("app_pages/percentiles.py")
    assert_clean(at)
    assert at.success[0].value.startswith("**At ε = 1 the published median of this cell is within ±$")
    assert any("**Recommended:** To be within ±$2,000 of the true median" in i.value for i in at.info)


def test_group_means_answer_and_page():
    gen = np.random.default_rng(4)
    values = gen.lognormal(10.4, 0.7, 4000)
    groups = gen.choice(["a", "b", "c"], 4000, p=[0.6, 0.3, 0.1])
    answer, rec = answers.group_means_answer(values, groups, epsilon=1.0, clip=(0.0, 200_000.0), target_error=500.0)
    assert answer.sentence.startswith("At ε = 1 every published group mean is within ±")
    assert "(all groups at once)" in answer.sentence and "% of each value" not in answer.sentence
    # the sentence's numbers are quantiles of the largest |published - true| over the groups (simulated releases)
    stat = planner_lib.make_statistic("group_means", values, groups, lower=0.0, upper=200_000.0)
    draws = 200_000
    largest = np.max(np.abs(stat.simulate(1.0, draws, np.random.default_rng(5)) - stat.truth), axis=1)
    for level, value in zip(
        answers.ANSWER_LEVELS, (answer.median_error, answer.q90_error, answer.q99_error), strict=True
    ):
        assert abs(np.mean(largest <= value) - level) < 5 * np.sqrt(level * (1 - level) / draws), level
    # the recommendation keeps every group within ±500 (not ±500 scaled down to the smallest mean): the smallest ε
    eps = rec.recommended_epsilon
    within = lambda e: np.mean(
        np.max(
            np.abs(stat.simulate(e, draws, np.random.default_rng(6)) - stat.truth),
            axis=1,
        )
        <= 500.0
    )
    assert within(eps) == pytest.approx(0.9, abs=0.004) and within(0.97 * eps) < 0.9
    at = open_page("app_pages/stratified.py")
    assert_clean(at)
    assert at.success[0].value.startswith("**At ε = 1 every published group mean is within ±")


def test_group_means_page_opens_on_a_reachable_target():
    """The page's default data (ACS, SEX x RAC1P, clip 0-200,000) and default target give a recommendation
    inside the ε slider, so the page (and lesson 2, which lands there) opens on an answer, not a failure."""
    at = open_page("app_pages/stratified.py")
    assert_clean(at)
    assert not at.warning, [w.value for w in at.warning]
    recommended = [i.value for i in at.info if i.value.startswith("**Recommended:**")]
    assert (
        recommended
        and "To have every group mean within ±40,000 of its true mean 90% of the time, use ε = 1.76" in recommended[0]
    )


def test_unreachable_targets_name_the_page_limit_and_the_cause():
    gen = np.random.default_rng(4)
    values = gen.lognormal(10.4, 0.7, 4000)
    groups = gen.choice(["a", "b", "c"], 4000, p=[0.6, 0.3, 0.1])
    # clipping at 30,000 moves group means by more than the target: no ε can help, and the text says why
    _, rec = answers.group_means_answer(values, groups, epsilon=1.0, clip=(0.0, 30_000.0), target_error=1000.0)
    assert rec.recommended_epsilon is None and "clipping to 0–30,000 moves the mean of group" in rec.recommendation
    # a target that needs more ε than the page offers names the page's limit (and the ε it would take)
    _, rec = answers.group_means_answer(
        values, groups, epsilon=1.0, clip=(0.0, 200_000.0), target_error=300.0, max_epsilon=5.0
    )
    assert rec.recommended_epsilon is None and rec.recommendation.startswith("No ε up to 5 keeps")
    assert "(it would take ε = " in rec.recommendation
    rec = answers.gini_recommendation(VALUES, target_error=0.002, confidence=0.9, max_epsilon=5.0)
    assert rec.recommended_epsilon is None and rec.recommendation.startswith("No ε up to 5 keeps the published Gini")
    assert "No ε up to 10" not in rec.recommendation


# ---- every answer template on a grid of settings: grammatical, and no number the statistic cannot take ----

_NUMBER = r"[0-9][0-9,]*(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?"


def _stated_errors(sentence: str) -> list[float]:
    """The error sizes a sentence states as numbers: after "±" and after "more than" (not ε, n or a range)."""
    import re

    found = re.findall(r"±\$?(" + _NUMBER + r")|more than \$?(" + _NUMBER + r")(?! to )", sentence)
    return [float((a or b).replace(",", "")) for a, b in found]


def _template_cases():
    incomes = lognormal_incomes(1_000, rng=np.random.default_rng(11))
    for n in (100, 1_000):
        for epsilon in (0.05, 0.3, 1.0, 5.0):
            yield (
                f"gini-n{n}-eps{epsilon}",
                lambda n=n, e=epsilon: answers.gini_answer(incomes, epsilon=e, n=n).sentence,
                1.0,
            )
    gen = np.random.default_rng(12)
    values = gen.lognormal(10.4, 0.7, 3_040)
    groups = np.repeat(["tiny", "small", "large"], [4, 36, 3_000])
    for epsilon in (0.01, 0.1, 1.0, 10.0):
        yield (
            f"group_means-eps{epsilon}",
            lambda e=epsilon: answers.group_means_answer(values, groups, epsilon=e, clip=(0.0, 200_000.0))[0].sentence,
            200_000.0,
        )
    for epsilon in (0.1, 1.0, 8.0):
        yield (
            f"ratio-eps{epsilon}",
            lambda e=epsilon: answers.ratio_answer(epsilon=e, p_x=0.3, p_y=0.2, n_x=40, n_y=40)[0].sentence,
            None,
        )
    for epsilon in (0.1, 3.0):
        yield (
            f"percentile-eps{epsilon}",
            lambda e=epsilon: percentile_experiments.percentile_cell_answer(epsilon=e, n_sims=300)[0].sentence,
            None,
        )


@pytest.mark.parametrize(
    "sentence,value_range", [case[1:] for case in _template_cases()], ids=[case[0] for case in _template_cases()]
)
def test_every_answer_template_reads_and_states_only_possible_errors(sentence, value_range):
    text = sentence()
    assert text.startswith("At ε = ") and text.endswith(".") and text.count("(") == text.count(")"), text
    # one reference point per sentence ("of the true Gini"), never "of each value of the true value"
    assert text.count(" of the true ") + text.count(" of its true ") <= 1, text
    assert "of each value" not in text and " of the true value" not in text, text  # it names what is true
    if value_range is not None:  # an error wider than the statistic's whole range is said in words
        assert all(error <= value_range for error in _stated_errors(text)), text
        if "noise swamps" in text:
            assert not _stated_errors(text) and "no better than a guess" in text, text


def test_the_swamped_gini_is_said_in_words():
    """n = 100, ε = 0.05: the published Gini was "within ±6.715 ... off by more than 427.470" for an index
    in [0, 1]; the answer now says that the noise swamps the Gini, with no number."""
    answer = answers.gini_answer(lognormal_incomes(10_000, rng=np.random.default_rng(2026)), epsilon=0.05, n=100)
    assert answer.median_abs_error > 1  # the numbers themselves are unchanged in the result
    assert answer.sentence == (
        "At ε = 0.05 and n = 100, noise swamps the Gini: the release is no better than a "
        "guess (half the time it is off by more than the Gini's whole range of 0 to 1)."
    )


def test_gini_page_says_in_words_when_noise_swamps_and_names_its_slider_end():
    """n = 100, ε = 0.05 on the page: no impossible number in the answer, and the unreachable target names the
    ε slider's end (5), not the planner's 10."""
    at = open_page("app_pages/gini.py", gini_n="100", gini_eps="0.05")
    assert_clean(at)
    answer = at.success[0].value
    assert "noise swamps the Gini" in answer and "no better than a guess" in answer and "±" not in answer
    warning = next(w.value for w in at.warning if "No ε up to" in w.value)
    assert warning.startswith("No ε up to 5 keeps the published Gini within ±0.01") and "up to 10" not in warning


def _lesson_steps_on_method_pages():
    from ui.lessons.views import LESSONS

    pages = ("app_pages/gini.py", "app_pages/percentiles.py", "app_pages/stratified.py", "app_pages/ratios.py")
    return [
        (f"{lesson.key}-{number}", step)
        for lesson in LESSONS
        for number, step in enumerate(lesson.steps)
        if step.page in pages
    ]


@pytest.mark.parametrize(
    "step", [s for _, s in _lesson_steps_on_method_pages()], ids=[i for i, _ in _lesson_steps_on_method_pages()]
)
def test_every_lesson_step_on_a_method_page_lands_on_an_answer(step):
    """A lesson link opens its page on an answer sentence, never on a failure (lesson 2's group-means steps
    opened on "No ε up to the planner's limit ... relax the target")."""
    at = open_page(step.page, **step.params)
    assert_clean(at)
    assert at.success and at.success[0].value.startswith("**At ε = "), step.label
    if step.page == "app_pages/stratified.py":  # the default target is reachable on the default data
        # (a 30-graduate PSEO cell may well miss ±$2,000 below the slider's ε = 3: that warning is the lesson)
        assert not [w.value for w in at.warning if "No ε" in w.value], step.label


# ---- bad input: refused with a DPInputError naming the parameter, never truncated or dropped ----


@pytest.mark.parametrize(
    "call",
    [
        lambda: answers.gini_answer(VALUES, epsilon=1.0, n=2.5),
        lambda: answers.gini_recommendation(VALUES, n=2.5),
        lambda: answers.gini_answer(VALUES, epsilon=1.0, n=float("nan")),
    ],
    ids=["gini_answer", "gini_recommendation", "gini_answer-nan"],
)
def test_gini_answers_refuse_a_fractional_sample_size(call):
    # int(2.5) used to answer for n = 2 (a different question, silently)
    with pytest.raises(DPInputError, match=r"\bn must be an integer"):
        call()
    assert answers.gini_answer(VALUES, epsilon=1.0, n=500.0).n == 500  # an integral float is a size


@pytest.mark.parametrize(
    "n_x,n_y,message",
    [
        (2.5, 120, "n_x must be an integer"),
        (100, 7.9, "n_y must be an integer"),
        (0, 120, "n_x must be >= 1"),
        (100, -5, "n_y must be >= 1"),
    ],
)
def test_ratio_answer_refuses_bad_group_sizes(n_x, n_y, message):
    with pytest.raises(DPInputError, match=message):
        answers.ratio_answer(epsilon=1.0, p_x=0.3, p_y=0.2, n_x=n_x, n_y=n_y)


def test_percentile_cell_answer_refuses_what_cell_view_refuses():
    from dpcore.views import percentiles as percentile_experiments

    incomes = np.sort(np.random.default_rng(0).lognormal(10.3, 0.8, 60)).round(2)
    sidebar = dict(source="sidebar", n=60, n_sims=100)
    with pytest.raises(DPInputError, match="seed must be an integer"):  # int(1.5) used to run seed 1
        percentile_experiments.percentile_cell_answer(incomes, **sidebar, seed=1.5)
    with pytest.raises(DPInputError, match="n_sims"):
        percentile_experiments.percentile_cell_answer(incomes, source="sidebar", n=60, n_sims=99.5)
    with pytest.raises(DPInputError, match="cell size must be an integer"):
        percentile_experiments.percentile_cell_answer(incomes, source="sidebar", n=2.5, n_sims=100)
    # a one-person cell: cell_view refuses it, so the answer (same cell) refuses it with the same message
    for call in (percentile_experiments.percentile_cell_answer, percentile_experiments.cell_view):
        with pytest.raises(DPInputError, match="only 1 person"):
            call(np.array([52_000.0]), source="sidebar", n=60)
    # NaN is refused (as on upload), not dropped with the non-positive incomes
    with_nan = np.array([30_000.0, np.nan, 45_000.0, 52_000.0])
    for call in (
        percentile_experiments.percentile_cell_answer,
        percentile_experiments.cell_view,
        percentile_experiments.cell_curves_view,
    ):
        with pytest.raises(DPInputError, match="missing or infinite"):
            call(with_nan, source="sidebar", n=4)
    # the answer is built on the page's per-cell statistic: the same numbers
    answer, _ = percentile_experiments.percentile_cell_answer(incomes, **sidebar, seed=3)
    stat = percentile_experiments.cell_answer_statistic(incomes, **sidebar, seed=3)
    assert answer == percentile_experiments.cell_answer_at_epsilon(stat, epsilon=1.0)


def test_a_recommendation_below_the_smallest_offered_epsilon_is_that_epsilon():
    """The Gini page's slider starts at 0.05: a target met at ε = 0.027 recommends 0.05 (it was told 0.0135), with the
    probability it reaches there; a recommendation inside the range is unchanged."""
    from dpcore import data
    from dpcore.views import answers as answer_experiments

    x = data.build_dataset({"kind": "lognormal", "n": 100_000, "sigma": 0.9, "seed": 2026}).values
    free = answer_experiments.gini_recommendation(x, target_error=0.05, confidence=0.9, max_epsilon=5.0)
    assert free.recommended_epsilon < 0.05
    held = answer_experiments.gini_recommendation(
        x, target_error=0.05, confidence=0.9, max_epsilon=5.0, min_epsilon=0.05
    )
    assert held.recommended_epsilon == 0.05 and held.achieved_probability >= 0.9
    assert "Even the smallest ε offered, 0.05" in held.recommendation and "use ε = 0.05." in held.recommendation
    inside = answer_experiments.gini_recommendation(
        x, target_error=0.005, confidence=0.9, max_epsilon=5.0, min_epsilon=0.05
    )
    assert inside.recommended_epsilon > 0.05 and "smallest ε offered" not in inside.recommendation


def test_the_gini_page_never_recommends_an_epsilon_below_its_slider():
    import re

    from support import open_page

    at = open_page("app_pages/gini.py", data_n="100000", gini_target="0.05")
    texts = [i.value for i in at.info if "Recommended" in i.value]
    assert texts, [i.value for i in at.info]
    shown = [float(v) for v in re.findall(r"Set ε below to ([0-9.]+)", texts[0])]
    assert shown and min(shown) >= 0.05, texts[0]
