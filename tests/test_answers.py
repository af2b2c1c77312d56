"""The answer first (issue 14): dpcore.experiments.answers and the Gini page's answer box."""
from __future__ import annotations

import numpy as np
import pytest

from dpcore import defaults, noise
from dpcore import planner as planner_lib
from dpcore.data import lognormal_incomes
from dpcore.experiments import answers
from dpcore.validation import DPInputError
from support import assert_clean, open_page, query_param

VALUES = lognormal_incomes(2_000, rng=np.random.default_rng(7))


def test_sentence_quantiles_are_those_of_the_released_gini():
    answer = answers.gini_answer(VALUES, epsilon=1.0)
    stat = planner_lib.make_statistic("gini", VALUES, upper=defaults.INCOME_UPPER)
    draws = 400_000
    errors = np.abs(stat.bias + stat.scale(1.0) * noise.GeneralizedCauchy(2.0).rvs(draws, np.random.default_rng(1)))
    for level, value in zip(answers.ANSWER_LEVELS, (answer.median_abs_error, answer.q90_abs_error, answer.q99_abs_error)):
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


def test_gini_page_and_planner_share_the_defaults():
    source = open("app_pages/gini.py").read()
    assert "DEFAULT_UPPER = defaults.INCOME_UPPER" in source
    assert "defaults.INCOME_UPPER" in open("ui/planner_views.py").read()


def test_gini_page_shows_the_answer_first_and_jargon_under_advanced():
    at = open_page("app_pages/gini.py")
    assert_clean(at)
    first = at.success[0].value
    assert first.startswith("**At ε = 1 the published Gini is within ±") and "nine times in ten" in first
    assert any("**Recommended:** To be within ±0.01 of the true Gini 90% of the time, use ε =" in i.value
               for i in at.info)
    advanced = next(e for e in at.expander if e.label.startswith("Advanced"))
    keys = {getattr(w, "key", None) for w in advanced.select_slider} | {getattr(w, "key", None) for w in advanced.radio}
    assert {"gini_gamma", "gini_method", "gini_cal"} <= keys
    at.number_input(key="gini_target").set_value(0.005).run()
    assert_clean(at)
    assert query_param(at, "gini_target") == "0.005"
    assert any("within ±0.005" in i.value for i in at.info)


def test_ratio_answer_matches_simulated_releases():
    from dpcore import planner as planner_lib

    answer, rec = answers.ratio_answer(epsilon=1.0, p_x=0.3, p_y=0.2, n_x=200, n_y=200, target_error=0.1,
                                       confidence=0.9)
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
    answer, rec = answers.percentile_cell_answer(epsilon=1.0, target_error=3000.0, confidence=0.9)
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
    assert "mean of every group" in answer.sentence and "% of each value" in answer.sentence
    stat = planner_lib.make_statistic("group_means", values, groups, lower=0.0, upper=200_000.0)
    rel = 500.0 / np.max(stat.truth)
    assert stat.prob_within(rec.recommended_epsilon, rel)[0] >= 0.9 - 1e-9
    at = open_page("app_pages/stratified.py")
    assert_clean(at)
    assert at.success[0].value.startswith("**At ε = 1 the published mean of every group is within ±")


# ---- bad input (issue 8): refused with a DPInputError naming the parameter, never truncated or dropped ----

@pytest.mark.parametrize("call", [
    lambda: answers.gini_answer(VALUES, epsilon=1.0, n=2.5),
    lambda: answers.gini_recommendation(VALUES, n=2.5),
    lambda: answers.gini_answer(VALUES, epsilon=1.0, n=float("nan")),
], ids=["gini_answer", "gini_recommendation", "gini_answer-nan"])
def test_gini_answers_refuse_a_fractional_sample_size(call):
    # int(2.5) used to answer for n = 2 (a different question, silently)
    with pytest.raises(DPInputError, match=r"\bn must be an integer"):
        call()
    assert answers.gini_answer(VALUES, epsilon=1.0, n=500.0).n == 500  # an integral float is a size


@pytest.mark.parametrize("n_x,n_y,message", [(2.5, 120, "n_x must be an integer"), (100, 7.9, "n_y must be an integer"),
                                             (0, 120, "n_x must be >= 1"), (100, -5, "n_y must be >= 1")])
def test_ratio_answer_refuses_bad_group_sizes(n_x, n_y, message):
    with pytest.raises(DPInputError, match=message):
        answers.ratio_answer(epsilon=1.0, p_x=0.3, p_y=0.2, n_x=n_x, n_y=n_y)


def test_percentile_cell_answer_refuses_what_cell_view_refuses():
    from dpcore.experiments import percentiles as percentile_experiments

    incomes = np.sort(np.random.default_rng(0).lognormal(10.3, 0.8, 60)).round(2)
    sidebar = dict(source="sidebar", n=60, n_sims=100)
    with pytest.raises(DPInputError, match="seed must be an integer"):  # int(1.5) used to run seed 1
        answers.percentile_cell_answer(incomes, **sidebar, seed=1.5)
    with pytest.raises(DPInputError, match="n_sims"):
        answers.percentile_cell_answer(incomes, source="sidebar", n=60, n_sims=99.5)
    with pytest.raises(DPInputError, match="cell size must be an integer"):
        answers.percentile_cell_answer(incomes, source="sidebar", n=2.5, n_sims=100)
    # a one-person cell: cell_view refuses it, so the answer (same cell) refuses it with the same message
    for call in (answers.percentile_cell_answer, percentile_experiments.cell_view):
        with pytest.raises(DPInputError, match="only 1 person"):
            call(np.array([52_000.0]), source="sidebar", n=60)
    # NaN is refused (as on upload), not dropped with the non-positive incomes
    with_nan = np.array([30_000.0, np.nan, 45_000.0, 52_000.0])
    for call in (answers.percentile_cell_answer, percentile_experiments.cell_view,
                 percentile_experiments.cell_curves_view):
        with pytest.raises(DPInputError, match="missing or infinite"):
            call(with_nan, source="sidebar", n=4)
    # the answer is built on the page's per-cell statistic: the same numbers
    answer, _ = answers.percentile_cell_answer(incomes, **sidebar, seed=3)
    stat = percentile_experiments.cell_answer_statistic(incomes, **sidebar, seed=3)
    assert answer == percentile_experiments.cell_answer_at_epsilon(stat, epsilon=1.0)
