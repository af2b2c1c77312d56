"""The answer a method page shows first (issue 14): one sentence with the number that matters, its
tail risk, and the smallest ε that meets a target the user types in the statistic's own units.

Planning, not release: the numbers describe the planning data (confidential when uploaded); they are
computed by the planner's statistics (:mod:`dpcore.planner`) so the page and the planner agree.
Neighbouring relation: replace one record; n, the bounds and ε public.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Sequence

import numpy as np
from scipy import optimize

from .. import defaults
from .. import planner as planner_lib
from ..validation import DPInputError, check_epsilon, check_finite, check_int, check_positive, check_probability
from .gini import subsample

#: how the answer sentence names a light-tailed noise (dpcore.smooth_noises.SMOOTH_NOISES, issue 17)
_NOISE_NAMES = {"laplace": "Laplace", "laplace_lognormal": "Laplace log-normal"}
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
    """t with P(|c + s Z| <= t) = level (c the clipping bias, s the noise scale, Z the statistic's noise:
    generalized Cauchy, or the light-tailed law of a ``make_statistic("gini", noise=...)`` statistic)."""
    c, s = float(stat.bias), float(stat.scale(epsilon))
    if s <= 0:
        return abs(c)
    law = stat._dist(epsilon) if hasattr(stat, "_dist") else stat._Z  # issue 17: the chosen noise's law
    prob = lambda t: float(law.cdf((t - c) / s) - law.cdf((-t - c) / s)) - level  # noqa: E731
    hi = abs(c) + s
    while prob(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(prob, 0.0, hi, xtol=1e-12 + 1e-9 * hi))


def _fmt(value: float) -> str:
    return f"{value:.3f}" if value >= 0.0095 else f"{value:.2g}"


def _gini_statistic(values: Any, *, lower: float, upper: float, gamma: float, calibration: str,
                    n: int | None, noise: str = "cauchy", delta: float | None = None) -> planner_lib.GiniStatistic:
    # n is checked by subsample (an integer >= 2: 2.5 is refused, never truncated)
    x = subsample(values, np.asarray(values).size if n is None else n)
    lower, upper = check_finite(lower, "lower bound L"), check_finite(upper, "upper bound U")
    stat = planner_lib.make_statistic("gini", x, lower=lower, upper=upper, gamma=gamma, calibration=calibration,
                                      noise=noise, delta=delta)
    truth = float(stat.truth[0])
    if not math.isfinite(truth) or truth <= 0:
        raise DPInputError("the Gini of these data is 0 (every income is 0): there is no error to state")
    return stat


def gini_answer(values: Any, *, epsilon: float, lower: float = defaults.INCOME_LOWER,
                upper: float = defaults.INCOME_UPPER, gamma: float = defaults.GINI_GAMMA,
                calibration: str = defaults.GINI_CALIBRATION, n: int | None = None, noise: str = "cauchy",
                delta: float | None = None) -> GiniAnswer:
    """The answer sentence for the Gini at ``epsilon`` (Lan & Reiter 2025: smooth sensitivity eq. (8)
    + generalized Cauchy noise, as released by :func:`dpcore.gini.release_gini`): the median, 90% and
    99% quantiles of |published - true Gini| (exact: noise CDF plus the clipping bias).

    ``values``: the planning incomes (the page's sub-sample of ``n`` records, as in ``gini_view``).
    ``noise``/``delta``: the smooth-sensitivity noise (``dpcore.smooth_noises.SMOOTH_NOISES``, issue 17) as in
    ``release_gini``; the light-tailed ones cost (ε, δ) (or the zCDP ρ implying it), said in the sentence.
    """
    epsilon = check_epsilon(epsilon)
    stat = _gini_statistic(values, lower=lower, upper=upper, gamma=gamma, calibration=calibration, n=n,
                           noise=noise, delta=delta)
    med, q90, q99 = (_abs_error_quantile(stat, epsilon, q) for q in ANSWER_LEVELS)
    if noise == "cauchy":
        tail = "the noise has a heavy tail: rare releases land far away"
    else:
        cost = stat.privacy_cost(epsilon)
        implied = "" if cost.kind != "zcdp" else f", which implies (ε, δ) = ({epsilon:g}, {stat.delta:.0e})"
        tail = (f"light-tailed {_NOISE_NAMES.get(noise, noise)} noise: it costs {cost.describe()}{implied} "
                "instead of pure ε")
    sentence = (f"At ε = {epsilon:g} the published Gini is within ±{_fmt(med)} of the true Gini half the time "
                f"and within ±{_fmt(q90)} nine times in ten; one time in a hundred it is off by more than "
                f"{_fmt(q99)} ({tail}).")
    return GiniAnswer(epsilon=epsilon, n=int(stat.values.size), upper=float(stat.upper), true_gini=float(stat.truth[0]),
                      clipping_bias=float(stat.bias), median_abs_error=med, q90_abs_error=q90, q99_abs_error=q99,
                      sentence=sentence)


def gini_recommendation(values: Any, *, target_error: float = defaults.ANSWER_TARGET_GINI,
                        confidence: float = defaults.ANSWER_CONFIDENCE, lower: float = defaults.INCOME_LOWER,
                        upper: float = defaults.INCOME_UPPER, gamma: float = defaults.GINI_GAMMA,
                        calibration: str = defaults.GINI_CALIBRATION, n: int | None = None, noise: str = "cauchy",
                        delta: float | None = None) -> EpsilonRecommendation:
    """The smallest ε that keeps the published Gini within ±``target_error`` Gini points of the true
    Gini with probability ``confidence``: :func:`dpcore.planner.solve_epsilon` on the planner's Gini
    statistic with the relative target ``target_error / true Gini`` (the planner gives the same ε)."""
    target_error = check_positive(target_error, "target error (Gini points)")
    if target_error >= 1:
        raise DPInputError(f"the target error is in Gini points (between 0 and 1), got {target_error:g}")
    confidence = check_probability(confidence, "confidence")
    stat = _gini_statistic(values, lower=lower, upper=upper, gamma=gamma, calibration=calibration, n=n,
                           noise=noise, delta=delta)
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


@dataclass(frozen=True)
class StatisticAnswer:
    """The answer sentence of any planner statistic at ``epsilon``: relative error quantiles (joint
    over the statistic's numbers) and, for a one-number statistic, the same in its own units."""

    statistic: str
    epsilon: float
    median_rel_error: float
    q90_rel_error: float
    q99_rel_error: float
    truth_scale: float
    sentence: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def statistic_answer(stat: planner_lib.PlannedStatistic, *, epsilon: float, noun: str,
                     unit_format: str = "{:.3g}") -> StatisticAnswer:
    """The sentence "at ε the published <noun> is within ±a half the time, ±b nine times in ten; one
    time in a hundred it is off by more than c" for a planner statistic (its own error law:
    :meth:`dpcore.planner.PlannedStatistic.error_quantile`, exact for closed forms, Monte Carlo else).
    Values in the statistic's units for one-number statistics (relative error x |truth|)."""
    epsilon = check_epsilon(epsilon)
    rel = [float(stat.error_quantile(epsilon, level)[0]) for level in ANSWER_LEVELS]
    truth = np.abs(np.asarray(stat.truth, dtype=float))
    one = truth.size == 1 and math.isfinite(float(truth[0]))
    scale = float(truth[0]) if one else float("nan")

    def show(r: float) -> str:
        return unit_format.format(r * scale) if one else f"{100 * r:.3g}% of each value"

    sentence = (f"At ε = {epsilon:g} the published {noun} is within ±{show(rel[0])} of the true value half the time "
                f"and within ±{show(rel[1])} nine times in ten; one time in a hundred it is off by more than "
                f"{show(rel[2])}.")
    return StatisticAnswer(statistic=stat.name, epsilon=epsilon, median_rel_error=rel[0], q90_rel_error=rel[1],
                           q99_rel_error=rel[2], truth_scale=scale, sentence=sentence)


def statistic_recommendation(stat: planner_lib.PlannedStatistic, *, target_error: float, confidence: float,
                             noun: str, unit_format: str = "{:g}") -> EpsilonRecommendation:
    """Smallest ε with every number of ``stat`` within ±``target_error`` (its own units) of the truth
    with probability ``confidence``: :func:`dpcore.planner.solve_epsilon` with the relative target
    ``target_error / max |truth|`` (exactly the target for one number; conservative for several)."""
    target_error = check_positive(target_error, "target error")
    confidence = check_probability(confidence, "confidence")
    truth = float(np.max(np.abs(np.asarray(stat.truth, dtype=float))))
    if not math.isfinite(truth) or truth <= 0:
        raise DPInputError(f"the true {noun} is 0 or undefined on these planning numbers: no relative target")
    try:
        solution = planner_lib.solve_epsilon(stat, planner_lib.AccuracyTarget(target_error / truth, confidence))
    except DPInputError as exc:
        return EpsilonRecommendation(stat.kind, float(target_error), float(confidence), None, None, str(exc),
                                     f"No ε up to the planner's limit keeps the published {noun} within "
                                     f"±{unit_format.format(target_error)} {100 * confidence:g}% of the time: "
                                     "relax the target.")
    eps = float(solution.epsilon)
    return EpsilonRecommendation(stat.kind, float(target_error), float(confidence), eps, float(solution.achieved), "",
                                 f"To be within ±{unit_format.format(target_error)} of the true {noun} {100 * confidence:g}% of the "
                                 f"time, use ε = {eps:.3g}.")


def ratio_answer(*, epsilon: float, p_x: float, p_y: float, n_x: int, n_y: int,
                 target_error: float = 0.1, confidence: float = defaults.ANSWER_CONFIDENCE
                 ) -> tuple[StatisticAnswer, EpsilonRecommendation]:
    """The ratios page's answer for planned shares p_x, p_y in groups of public sizes n_x, n_y: the
    relative risk by Laplace-noised counts (Claim 3.2 of the ratio paper; the planner's statistic),
    the error sentence at ``epsilon`` and the ε for ±``target_error`` (relative-risk units)."""
    n_x, n_y = check_int(n_x, "group size n_x", minimum=1), check_int(n_y, "group size n_y", minimum=1)
    x = int(round(check_probability(p_x, "p_x") * n_x))
    y = int(round(check_probability(p_y, "p_y") * n_y))
    stat = planner_lib.RatioStatistic(x, y, n_x, n_y)
    return (statistic_answer(stat, epsilon=epsilon, noun="relative risk"),
            statistic_recommendation(stat, target_error=target_error, confidence=confidence, noun="relative risk"))


def percentile_cell_answer(values: Any = None, *, source: str = "synthetic", n: int = 200, cell_number: int = 100,
                           epsilon: float = 1.0, relation: str = "replace", target_error: float = 2_000.0,
                           confidence: float = defaults.ANSWER_CONFIDENCE, n_sims: int = 2000, seed: int = 0
                           ) -> tuple[StatisticAnswer, EpsilonRecommendation]:
    """The percentiles page's answer for its one cell (the cell ``cell_view`` uses: same ``source``,
    ``n``, ``cell_number``): the median released by the PSEO noisy histogram over the 21 PSEO bins
    (Foote et al. 2019, eq. 4.2; the planner's percentiles statistic, Monte Carlo with ``n_sims``
    draws, seed ``seed``), the error sentence at ``epsilon`` in dollars and the ε for ±``target_error``
    dollars. Neighbouring: replace one person within the cell (or ``relation="add_remove"``)."""
    from .percentiles import cell_answer_statistic

    # one construction (and one set of argument checks) with the page's per-cell statistic
    stat = cell_answer_statistic(values, source=source, n=n, cell_number=cell_number, relation=relation,
                                 n_sims=n_sims, seed=seed)
    return (statistic_answer(stat, epsilon=epsilon, noun="median of this cell", unit_format="${:,.0f}"),
            statistic_recommendation(stat, target_error=target_error, confidence=confidence,
                                     noun="median of this cell", unit_format="${:,.0f}"))


def group_means_answer(values: Any, groups: Any, *, epsilon: float, clip: Sequence[float],
                       target_error: float = 1_000.0, confidence: float = defaults.ANSWER_CONFIDENCE
                       ) -> tuple[StatisticAnswer, EpsilonRecommendation]:
    """The group-means page's answer: the mean of every group released with stratified Laplace noise
    on values clipped to the public ``clip`` = (lower, upper) (the planner's group-means statistic:
    Laplace((upper - lower) / (n_g ε)) per group, parallel composition over disjoint groups; neighbouring:
    replace one person's value within their group, group sizes public). The sentence gives the joint
    error (every group at once, relative to each group's mean); the recommendation the ε that keeps
    every group mean within ±``target_error`` (same units as the values) with probability ``confidence``."""
    lower, upper = (check_finite(v, "clip bound") for v in clip)
    stat = planner_lib.make_statistic("group_means", values, groups, lower=lower, upper=upper)
    return (statistic_answer(stat, epsilon=epsilon, noun="mean of every group"),
            statistic_recommendation(stat, target_error=target_error, confidence=confidence,
                                     noun="mean of every group", unit_format="{:,.6g}"))
