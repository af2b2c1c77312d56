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
