"""The answer a method page shows first (issue 14): one sentence with the number that matters, its
tail risk, and the smallest ε that meets a target the user types in the statistic's own units.

Planning, not release: the numbers describe the planning data (confidential when uploaded); they are
computed by the planner's statistics (:mod:`dpcore.planner`) so the page and the planner agree.
Neighbouring relation: replace one record; n, the bounds and ε public.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
from scipy import optimize

from .. import defaults
from .. import planner as planner_lib
from ..validation import DPInputError, check_epsilon, check_finite, check_positive, check_probability
from .gini import subsample

#: the three levels of the answer sentence: half the time, nine times in ten, one time in a hundred
ANSWER_LEVELS = (0.5, 0.9, 0.99)


@dataclass(frozen=True)
class GiniAnswer:
    """The Gini page's answer at ``epsilon``: error quantiles of the published Gini (noise and the
    clipping bias to U, against the Gini of the unclipped data) and the sentence stating them."""

    epsilon: float
    n: int
    upper: float
    true_gini: float
    clipping_bias: float
    median_abs_error: float
    q90_abs_error: float
    q99_abs_error: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return {k: (float(v) if isinstance(v, (np.floating, float)) else v) for k, v in asdict(self).items()}


@dataclass(frozen=True)
class EpsilonRecommendation:
    """The smallest ε with ``P(|published - true| <= target_error) >= confidence`` (in the statistic's
    own units), or None with ``why_no_epsilon`` when even ε = 10 does not reach it."""

    statistic: str
    target_error: float
    confidence: float
    recommended_epsilon: float | None
    achieved_probability: float | None
    why_no_epsilon: str
    recommendation: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _abs_error_quantile(stat: planner_lib.GiniStatistic, epsilon: float, level: float) -> float:
    """t with P(|c + s Z| <= t) = level (c the clipping bias, s the noise scale, Z generalized Cauchy)."""
    c, s = float(stat.bias), float(stat.scale(epsilon))
    if s <= 0:
        return abs(c)
    prob = lambda t: float(stat._Z.cdf((t - c) / s) - stat._Z.cdf((-t - c) / s)) - level  # noqa: E731
    hi = abs(c) + s
    while prob(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(prob, 0.0, hi, xtol=1e-12 + 1e-9 * hi))


def _fmt(value: float) -> str:
    return f"{value:.3f}" if value >= 0.0095 else f"{value:.2g}"


def _gini_statistic(values: Any, *, lower: float, upper: float, gamma: float, calibration: str,
                    n: int | None) -> planner_lib.GiniStatistic:
    x = subsample(values, np.asarray(values).size if n is None else int(n))
    lower, upper = check_finite(lower, "lower bound L"), check_finite(upper, "upper bound U")
    stat = planner_lib.make_statistic("gini", x, lower=lower, upper=upper, gamma=gamma, calibration=calibration)
    truth = float(stat.truth[0])
    if not math.isfinite(truth) or truth <= 0:
        raise DPInputError("the Gini of these data is 0 (every income is 0): there is no error to state")
    return stat


def gini_answer(values: Any, *, epsilon: float, lower: float = defaults.INCOME_LOWER,
                upper: float = defaults.INCOME_UPPER, gamma: float = defaults.GINI_GAMMA,
                calibration: str = defaults.GINI_CALIBRATION, n: int | None = None) -> GiniAnswer:
    """The answer sentence for the Gini at ``epsilon`` (Lan & Reiter 2025: smooth sensitivity eq. (8)
    + generalized Cauchy noise, as released by :func:`dpcore.gini.release_gini`): the median, 90% and
    99% quantiles of |published - true Gini| (exact: noise CDF plus the clipping bias).

    ``values``: the planning incomes (the page's sub-sample of ``n`` records, as in ``gini_view``).
    """
    epsilon = check_epsilon(epsilon)
    stat = _gini_statistic(values, lower=lower, upper=upper, gamma=gamma, calibration=calibration, n=n)
    med, q90, q99 = (_abs_error_quantile(stat, epsilon, q) for q in ANSWER_LEVELS)
    sentence = (f"At ε = {epsilon:g} the published Gini is within ±{_fmt(med)} of the true Gini half the time "
                f"and within ±{_fmt(q90)} nine times in ten; one time in a hundred it is off by more than "
                f"{_fmt(q99)} (the noise has a heavy tail: rare releases land far away).")
    return GiniAnswer(epsilon=epsilon, n=int(stat.values.size), upper=float(stat.upper), true_gini=float(stat.truth[0]),
                      clipping_bias=float(stat.bias), median_abs_error=med, q90_abs_error=q90, q99_abs_error=q99,
                      sentence=sentence)


def gini_recommendation(values: Any, *, target_error: float = defaults.ANSWER_TARGET_GINI,
                        confidence: float = defaults.ANSWER_CONFIDENCE, lower: float = defaults.INCOME_LOWER,
                        upper: float = defaults.INCOME_UPPER, gamma: float = defaults.GINI_GAMMA,
                        calibration: str = defaults.GINI_CALIBRATION, n: int | None = None) -> EpsilonRecommendation:
    """The smallest ε that keeps the published Gini within ±``target_error`` Gini points of the true
    Gini with probability ``confidence``: :func:`dpcore.planner.solve_epsilon` on the planner's Gini
    statistic with the relative target ``target_error / true Gini`` (the planner gives the same ε)."""
    target_error = check_positive(target_error, "target error (Gini points)")
    if target_error >= 1:
        raise DPInputError(f"the target error is in Gini points (between 0 and 1), got {target_error:g}")
    confidence = check_probability(confidence, "confidence")
    stat = _gini_statistic(values, lower=lower, upper=upper, gamma=gamma, calibration=calibration, n=n)
    target = planner_lib.AccuracyTarget(rel_error=target_error / float(stat.truth[0]), confidence=confidence)
    try:
        solution = planner_lib.solve_epsilon(stat, target)
    except DPInputError as exc:
        return EpsilonRecommendation(
            statistic="gini", target_error=float(target_error), confidence=float(confidence), recommended_epsilon=None,
            achieved_probability=None, why_no_epsilon=str(exc),
            recommendation=(f"No ε up to 10 keeps the published Gini within ±{target_error:g} "
                            f"{100 * confidence:g}% of the time on these data: relax the target, use more "
                            "records or a lower upper bound U."))
    eps = float(solution.epsilon)
    return EpsilonRecommendation(
        statistic="gini", target_error=float(target_error), confidence=float(confidence), recommended_epsilon=eps,
        achieved_probability=float(solution.achieved), why_no_epsilon="",
        recommendation=(f"To be within ±{target_error:g} of the true Gini {100 * confidence:g}% of the time, "
                        f"use ε = {eps:.3g}."))
