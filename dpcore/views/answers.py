"""The answer a method page shows first: one sentence with the number that matters, its
tail risk, and the smallest ε that meets a target the user types in the statistic's own units.

Planning, not release: the numbers describe the planning data (confidential when uploaded); they are
computed by the planner's statistics (:mod:`dpcore.planner`) so the page and the planner agree.
Neighbouring relation: replace one record; n, the bounds and ε public.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from scipy import optimize

from .. import defaults
from .. import planner as planner_lib
from ..planner.closed_forms import laplace_interval_prob
from ..planner.solve import bisect_log
from ..validation import DPInputError, check_epsilon, check_finite, check_int, check_positive, check_probability
from .gini import subsample

#: how the answer sentence names a light-tailed noise (dpcore.noise.smooth.SMOOTH_NOISES)
_NOISE_NAMES = {"laplace": "Laplace", "laplace_lognormal": "Laplace log-normal"}
#: the three levels of the answer sentence: half the time, nine times in ten, one time in a hundred
ANSWER_LEVELS = (0.5, 0.9, 0.99)
#: the group-means page's default target (the variable's units: dollars of the ACS excerpt's personal income).
#: Reachable on the page's default data (ACS SEX x RAC1P, clip 0-200,000, ε up to 5): clipping alone moves
#: Male x Asian's mean by ~24,900 and the 8-person group's noise is Laplace(25,000/ε), so ±1,000 was never
#: reachable at any ε; ±40,000 nine times in ten needs ε = 1.76.
DEFAULT_GROUP_MEANS_TARGET = 40_000.0


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
    own units), or None with ``why_no_epsilon`` when no ε up to the caller's limit reaches it."""

    statistic: str
    target_error: float
    confidence: float
    recommended_epsilon: float | None
    achieved_probability: float | None
    why_no_epsilon: str
    recommendation: str

    @classmethod
    def found(
        cls, statistic: str, target_error: float, confidence: float, epsilon: float, achieved: float, text: str
    ) -> EpsilonRecommendation:
        """The recommendation of ``epsilon``, which reaches the target with probability ``achieved``."""
        return cls(statistic, float(target_error), float(confidence), epsilon, achieved, "", text)

    @classmethod
    def not_found(
        cls, statistic: str, target_error: float, confidence: float, why: str, text: str
    ) -> EpsilonRecommendation:
        """No ε up to the caller's limit: ``why`` (the reason) and ``text`` (the sentence that says so)."""
        return cls(statistic, float(target_error), float(confidence), None, None, why, text)

    @classmethod
    def within_limit(
        cls,
        statistic: str,
        target_error: float,
        confidence: float,
        epsilon: float,
        achieved: float,
        *,
        limit: float,
        text: str,
        text_above_limit: str,
    ) -> EpsilonRecommendation:
        """The ``epsilon`` a target needs, recommended (``text``) when the caller can use it, at most ``limit``;
        above it, no recommendation (``text_above_limit``; the reason names both)."""
        if epsilon > limit:
            why = f"the target needs ε = {epsilon:.3g}, above the limit {limit:g}"
            return cls.not_found(statistic, target_error, confidence, why, text_above_limit)
        return cls.found(statistic, target_error, confidence, epsilon, achieved, text)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _abs_error_quantile(stat: planner_lib.GiniStatistic, epsilon: float, level: float) -> float:
    """t with P(|c + s Z| <= t) = level (c the clipping bias, s the noise scale, Z the statistic's noise:
    generalized Cauchy, or the light-tailed law of a ``make_statistic("gini", noise=...)`` statistic)."""
    c, s = float(stat.bias), float(stat.scale(epsilon))
    if s <= 0:
        return abs(c)
    law = stat.noise_law(epsilon)
    prob = lambda t: float(law.cdf((t - c) / s) - law.cdf((-t - c) / s)) - level
    hi = abs(c) + s
    while prob(hi) < 0:
        hi *= 2.0
    return float(optimize.brentq(prob, 0.0, hi, xtol=1e-12 + 1e-9 * hi))


def _fmt(value: float) -> str:
    return f"{value:.3f}" if value >= 0.0095 else f"{value:.2g}"


#: The Gini of eq. (1) lies in [0, (n - 1)/n]. An error quantile beyond that range is not a number anyone can
#: use ("off by more than 427" for an index in [0, 1] only means "anywhere"), and a median error of half the
#: range is where the Gini view calls a release saturated (dpcore.views.gini, ``saturated``).
GINI_RANGE = (0.0, 1.0)


def error_sentence(
    *,
    epsilon: float,
    subject: str,
    truth: str,
    errors: Sequence[float],
    show: Any,
    value_range: tuple[float, float] | None = None,
    range_name: str = "the whole range",
    swamped: str = "noise swamps the statistic",
    missed: str = "it is off by",
    jointly: str = "",
    note: str = "",
) -> str:
    """The answer sentence: "At ε = e <subject> is within ±a of <truth> half the time and within ±b nine times
    in ten<jointly>; one time in a hundred <missed> more than c (<note>)." ``errors``: the quantiles of
    |published - true| at :data:`ANSWER_LEVELS`; ``show`` formats one in the statistic's units.

    ``value_range`` (public: the statistic's possible values, e.g. the Gini's [0, 1] or a clip range): a
    quantile wider than the whole range is said in words ("more than the Gini's whole range of 0 to 1"), never
    as a number; when even the median error is half the range or more, the sentence only says that ``swamped``
    and that the release is no better than a guess (the Gini view's saturation rule)."""
    med, q90, q99 = (float(e) for e in errors)
    tail = f" ({note})." if note else "."
    if value_range is None:
        return (
            f"At ε = {epsilon:g} {subject} is within ±{show(med)} of {truth} half the time and within "
            f"±{show(q90)} nine times in ten{jointly}; one time in a hundred {missed} more than {show(q99)}{tail}"
        )
    lower, upper = value_range
    width = upper - lower
    whole = f"{range_name} of {lower:,.6g} to {upper:,.6g}"
    if med >= 0.5 * width:
        how_far = whole if med > width else f"half of {whole}"
        return (
            f"At ε = {epsilon:g} {swamped}: the release is no better than a guess (half the time {missed} "
            f"more than {how_far})."
        )
    sentence = f"At ε = {epsilon:g} {subject} is within ±{show(med)} of {truth} half the time"
    if q90 > width:
        return sentence + f"{jointly}, but one time in ten {missed} more than {whole}{tail}"
    return (
        sentence + f" and within ±{show(q90)} nine times in ten{jointly}; one time in a hundred {missed} more "
        "than " + (whole if q99 > width else show(q99)) + tail
    )


def _no_epsilon_text(
    subject: str, within: str, confidence: float, limit: float, needed: float | None, advice: str
) -> str:
    """The recommendation when no ε up to ``limit`` (the largest ε the caller offers) meets the target."""
    needs = f" (it would take ε = {needed:.3g})" if needed is not None else ""
    return (
        f"No ε up to {limit:g} keeps the published {subject} within ±{within}, {100 * confidence:g}% of the "
        f"time, on these data{needs}: {advice}."
    )


@dataclass(frozen=True)
class GiniAnswerSettings:
    """The Gini statistic the answer box speaks of, one object for the answer and the recommendation (the Gini
    page passes the same settings to both): the public clip range [``lower``, ``upper``], the noise's ``gamma``
    and ``calibration``, the page's sub-sample of ``n`` records (None: all), and the smooth-sensitivity
    ``noise`` (``dpcore.noise.smooth.SMOOTH_NOISES``) with its ``delta`` for the light-tailed ones."""

    lower: float = defaults.INCOME_LOWER
    upper: float = defaults.INCOME_UPPER
    gamma: float = defaults.GINI_GAMMA
    calibration: str = defaults.GINI_CALIBRATION
    n: int | None = None
    noise: str = "cauchy"
    delta: float | None = None

    def statistic(self, values: Any) -> planner_lib.GiniStatistic:
        """The planner's Gini statistic on the planning values (checked there: the page and the planner agree)."""
        # n is checked by subsample (an integer >= 2: 2.5 is refused, never truncated)
        x = subsample(values, np.asarray(values).size if self.n is None else self.n)
        lower, upper = check_finite(self.lower, "lower bound L"), check_finite(self.upper, "upper bound U")
        stat = planner_lib.make_statistic(
            "gini",
            x,
            lower=lower,
            upper=upper,
            gamma=self.gamma,
            calibration=self.calibration,
            noise=self.noise,
            delta=self.delta,
        )
        assert isinstance(stat, planner_lib.GiniStatistic)  # make_statistic("gini", ...) builds one
        truth = float(stat.truth[0])
        if not math.isfinite(truth) or truth <= 0:
            raise DPInputError("the Gini of these data is 0 (every income is equal): there is no error to state")
        return stat


def gini_answer(values: Any, *, epsilon: float, **settings: Any) -> GiniAnswer:
    """The answer sentence for the Gini at ``epsilon`` (Lan & Reiter 2025: smooth sensitivity eq. (8)
    + generalized Cauchy noise, as released by :func:`dpcore.gini.release_gini`): the median, 90% and
    99% quantiles of |published - true Gini| (exact: noise CDF plus the clipping bias).

    ``values``: the planning incomes (the page's sub-sample of ``n`` records, as in ``gini_view``).
    ``settings``: the fields of :class:`GiniAnswerSettings` (lower, upper, gamma, calibration, n, noise, delta).
    ``noise``/``delta``: the smooth-sensitivity noise as in ``release_gini``; the light-tailed ones cost (ε, δ)
    (or the zCDP ρ implying it), said in the sentence.
    """
    epsilon = check_epsilon(epsilon)
    gini = GiniAnswerSettings(**settings)
    stat = gini.statistic(values)
    noise = gini.noise
    med, q90, q99 = (_abs_error_quantile(stat, epsilon, q) for q in ANSWER_LEVELS)
    if noise == "cauchy":
        tail = "the noise has a heavy tail: rare releases land far away"
    else:
        cost = stat.privacy_cost(epsilon)
        implied = "" if cost.kind != "zcdp" else f", which implies (ε, δ) = ({epsilon:g}, {stat.delta:.0e})"
        tail = (
            f"light-tailed {_NOISE_NAMES.get(noise, noise)} noise: it costs {cost.describe()}{implied} "
            "instead of pure ε"
        )
    sentence = error_sentence(
        epsilon=epsilon,
        subject="the published Gini",
        truth="the true Gini",
        errors=(med, q90, q99),
        show=_fmt,
        value_range=GINI_RANGE,
        range_name="the Gini's whole range",
        swamped=f"and n = {stat.values.size:,}, noise swamps the Gini",
        note=tail,
    )
    return GiniAnswer(
        epsilon=epsilon,
        n=int(stat.values.size),
        upper=float(stat.upper),
        true_gini=float(stat.truth[0]),
        clipping_bias=float(stat.bias),
        median_abs_error=med,
        q90_abs_error=q90,
        q99_abs_error=q99,
        sentence=sentence,
    )


def gini_recommendation(
    values: Any,
    *,
    target_error: float = defaults.ANSWER_TARGET_GINI,
    confidence: float = defaults.ANSWER_CONFIDENCE,
    max_epsilon: float | None = None,
    min_epsilon: float | None = None,
    **settings: Any,
) -> EpsilonRecommendation:
    """The smallest ε that keeps the published Gini within ±``target_error`` Gini points of the true
    Gini with probability ``confidence``: :func:`dpcore.planner.solve_epsilon` on the planner's Gini
    statistic with the relative target ``target_error / true Gini`` (the planner gives the same ε).

    ``max_epsilon``: the largest ε the caller can use (a page's slider end; default the planner's limit for
    the Gini, 10): an ε above it is no recommendation, and the text says the limit that was searched.
    ``min_epsilon``: the smallest ε the caller offers (a slider's first step): a smaller answer recommends it
    (:func:`_at_least`). ``settings``: the Gini statistic, as in :func:`gini_answer` (:class:`GiniAnswerSettings`)."""
    target_error = check_positive(target_error, "target error (Gini points)")
    if target_error >= 1:
        raise DPInputError(f"the target error is in Gini points (between 0 and 1), got {target_error:g}")
    confidence = check_probability(confidence, "confidence")
    stat = GiniAnswerSettings(**settings).statistic(values)
    recommendation = statistic_recommendation(
        stat,
        target_error=target_error,
        confidence=confidence,
        noun="Gini",
        max_epsilon=max_epsilon,
        advice="relax the target, use more records or a lower upper bound U",
    )
    rel_error = target_error / float(stat.truth[0])
    return _at_least(recommendation, stat, rel_error, min_epsilon, f"±{target_error:g} of the true Gini")


def _at_least(
    recommendation: EpsilonRecommendation, stat: Any, rel_error: float, min_epsilon: float | None, within: str
) -> EpsilonRecommendation:
    """A recommended ε below the smallest the caller offers (``min_epsilon``) becomes that smallest ε, which meets the
    target too (the success probability grows with ε), said with its probability: a slider starting at 0.05 was told
    to go to 0.0135."""
    eps = recommendation.recommended_epsilon
    if min_epsilon is None or eps is None or eps >= min_epsilon:
        return recommendation
    smallest = check_epsilon(min_epsilon, "min_epsilon")
    achieved = float(stat.prob_within(smallest, rel_error)[0])
    return replace(
        recommendation,
        recommended_epsilon=smallest,
        achieved_probability=achieved,
        recommendation=(
            f"Even the smallest ε offered, {smallest:g}, keeps the published value within {within} at least "
            f"{100 * recommendation.confidence:g}% of the time ({100 * achieved:.1f}%): use ε = {smallest:g}."
        ),
    )


@dataclass(frozen=True)
class StatisticAnswer:
    """The answer sentence of any planner statistic at ``epsilon``: relative error quantiles (joint
    over the statistic's numbers) and, for a one-number statistic, the same in its own units.

    Group means (several numbers) state their sentence in the variable's units instead: the quantiles of
    the largest |published - true| over the groups (``median_error``, ``q90_error``, ``q99_error``; for one
    number they are the relative errors times |truth|). A relative error of several numbers is NaN when a
    true value is 0 (undefined), as ``truth_scale`` is for several numbers."""

    statistic: str
    epsilon: float
    median_rel_error: float
    q90_rel_error: float
    q99_rel_error: float
    truth_scale: float
    sentence: str
    median_error: float = math.nan
    q90_error: float = math.nan
    q99_error: float = math.nan

    @classmethod
    def from_quantiles(
        cls,
        statistic: str,
        epsilon: float,
        rel: Sequence[float],
        errors: Sequence[float],
        truth_scale: float,
        sentence: str,
    ) -> StatisticAnswer:
        """The answer from the three quantiles (:data:`ANSWER_LEVELS`) of the relative and of the absolute error."""
        (median_rel, q90_rel, q99_rel), (median, q90, q99) = rel, errors
        return cls(statistic, epsilon, median_rel, q90_rel, q99_rel, truth_scale, sentence, median, q90, q99)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def statistic_answer(
    stat: planner_lib.PlannedStatistic,
    *,
    epsilon: float,
    noun: str,
    unit_format: str = "{:.3g}",
    truth_noun: str | None = None,
) -> StatisticAnswer:
    """The sentence "at ε the published <noun> is within ±a of the true <truth_noun> half the time, ±b nine
    times in ten; one time in a hundred it is off by more than c" for a one-number planner statistic (its own
    error law: :meth:`dpcore.planner.PlannedStatistic.error_quantile`, exact for closed forms, Monte Carlo
    else), in the statistic's units (relative error x |truth|). ``truth_noun`` defaults to ``noun``.

    A statistic of several numbers is answered by :func:`group_means_sentence` (its errors in the variable's
    units); here it gets the joint relative error ("within ±a% of its true value, every one of them")."""
    epsilon = check_epsilon(epsilon)
    rel = [float(stat.error_quantile(epsilon, level)[0]) for level in ANSWER_LEVELS]
    truth = np.abs(np.asarray(stat.truth, dtype=float))
    one = truth.size == 1 and math.isfinite(float(truth[0]))
    scale = float(truth[0]) if one else float("nan")
    if one:
        errors = [r * scale for r in rel]
        sentence = error_sentence(
            epsilon=epsilon,
            subject=f"the published {noun}",
            truth=f"the true {truth_noun or noun}",
            errors=errors,
            show=unit_format.format,
        )
    else:
        errors = [math.nan] * 3
        sentence = error_sentence(
            epsilon=epsilon,
            subject=f"every published {noun}",
            truth="its true value",
            errors=rel,
            show=lambda r: f"{100 * r:.3g}%",
            jointly=" (all at once)",
            missed="at least one is off by",
        )
    return StatisticAnswer.from_quantiles(stat.name, epsilon, rel, errors, scale, sentence)


def statistic_recommendation(
    stat: planner_lib.PlannedStatistic,
    *,
    target_error: float,
    confidence: float,
    noun: str,
    unit_format: str = "{:g}",
    truth_noun: str | None = None,
    max_epsilon: float | None = None,
    advice: str = "relax the target",
) -> EpsilonRecommendation:
    """Smallest ε with the one number of ``stat`` within ±``target_error`` (its own units) of the truth
    with probability ``confidence``: :func:`dpcore.planner.solve_epsilon` with the relative target
    ``target_error / |truth|`` (exactly the target). ``max_epsilon``: the largest ε the caller can use (a
    page's slider end; default the statistic's planning limit); above it there is no recommendation.
    ``advice``: what the text suggests when no ε reaches the target.
    Several numbers (group means): :func:`group_means_recommendation` (a relative target would hold the
    smallest mean to a tolerance far below the one typed in)."""
    target_error = check_positive(target_error, "target error")
    confidence = check_probability(confidence, "confidence")
    limit = float(stat.eps_max) if max_epsilon is None else check_epsilon(max_epsilon, "max_epsilon")
    truth = float(np.max(np.abs(np.asarray(stat.truth, dtype=float))))
    if not math.isfinite(truth) or truth <= 0:
        raise DPInputError(f"the true {noun} is 0 or undefined on these planning numbers: no relative target")
    within = unit_format.format(target_error)
    try:
        solution = planner_lib.solve_epsilon(stat, planner_lib.AccuracyTarget(target_error / truth, confidence))
    except DPInputError as exc:
        return EpsilonRecommendation.not_found(
            stat.kind,
            target_error,
            confidence,
            str(exc),
            _no_epsilon_text(noun, within, confidence, min(limit, stat.eps_max), None, advice),
        )
    eps = float(solution.epsilon)
    return EpsilonRecommendation.within_limit(
        stat.kind,
        target_error,
        confidence,
        eps,
        float(solution.achieved),
        limit=limit,
        text=f"To be within ±{within} of the true {truth_noun or noun} {100 * confidence:g}% of the time, "
        f"use ε = {eps:.3g}.",
        text_above_limit=_no_epsilon_text(noun, within, confidence, limit, eps, advice),
    )


def _group_means_within(stat: planner_lib.GroupMeans, epsilon: float, error: float) -> float:
    """P(every published group mean within ±``error`` of its true mean) at ``epsilon``: the product over the
    (independent) groups of P(|c_g + L_g| <= error), L_g ~ Laplace((U - L)/(n_g ε)), c_g the clipping bias."""
    p = laplace_interval_prob(
        np.full(len(stat.counts), float(error)),
        np.asarray(stat.bias, dtype=float),
        np.asarray(stat.scale(epsilon), dtype=float),
    )
    return float(np.prod(p))


def _group_means_error_quantile(stat: planner_lib.GroupMeans, epsilon: float, level: float) -> float:
    """t with P(max over groups |published - true| <= t) = level (bisection; the probability grows with t)."""
    lo, hi = 0.0, float(np.max(np.abs(stat.bias))) + float(np.max(stat.scale(epsilon))) + 1e-300
    while _group_means_within(stat, epsilon, hi) < level:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if _group_means_within(stat, epsilon, mid) >= level:
            hi = mid
        else:
            lo = mid
        if hi - lo <= 1e-9 * hi:
            break
    return hi


def _format_units(value: float) -> str:
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"


def group_means_sentence(stat: planner_lib.GroupMeans, *, epsilon: float) -> StatisticAnswer:
    """The group-means answer at ``epsilon`` in the variable's units: quantiles of the largest |published -
    true| over the groups (every group at once), exact (closed-form Laplace law with each group's clipping
    bias). Public range of the values: the clip range [lower, upper]; an error wider than it is said in words.
    The joint relative errors are kept in the result (NaN when a true group mean is 0: undefined)."""
    epsilon = check_epsilon(epsilon)
    errors = [_group_means_error_quantile(stat, epsilon, level) for level in ANSWER_LEVELS]
    truth = np.abs(np.asarray(stat.truth, dtype=float))
    rel = (
        [float(stat.error_quantile(epsilon, level)[0]) for level in ANSWER_LEVELS]
        if np.all(truth > 0)
        else [math.nan] * 3
    )
    sentence = error_sentence(
        epsilon=epsilon,
        subject="every published group mean",
        truth="its true mean",
        errors=errors,
        show=_format_units,
        value_range=(float(stat.lower), float(stat.upper)),
        range_name="the whole clip range",
        swamped="noise swamps the group means",
        missed="at least one is off by",
        jointly=" (all groups at once)",
    )
    return StatisticAnswer.from_quantiles(stat.name, epsilon, rel, errors, math.nan, sentence)


def group_means_recommendation(
    stat: planner_lib.GroupMeans, *, target_error: float, confidence: float, max_epsilon: float | None = None
) -> EpsilonRecommendation:
    """Smallest ε with every published group mean within ±``target_error`` (the variable's units) of its true
    mean with probability ``confidence`` (exact: :func:`_group_means_within` grows with ε; bisection in log ε
    to relative precision 1e-5, the end that meets the target). ``max_epsilon``: the caller's largest ε
    (default the planner's limit, 100). A group whose clipping bias alone exceeds the target makes every ε
    fail: the text names it."""
    target_error = check_positive(target_error, "target error")
    confidence = check_probability(confidence, "confidence")
    limit = float(stat.eps_max) if max_epsilon is None else check_epsilon(max_epsilon, "max_epsilon")
    within = _format_units(target_error)
    bias = np.abs(np.asarray(stat.bias, dtype=float))
    if np.max(bias) >= target_error:
        worst = int(np.argmax(bias))
        why = (
            f"clipping to {float(stat.lower):,.6g}–{float(stat.upper):,.6g} moves the mean of group "
            f"{stat.labels[worst]} by {_format_units(float(bias[worst]))}, more than the target"
        )
        return EpsilonRecommendation.not_found(
            stat.kind,
            target_error,
            confidence,
            why,
            f"No ε keeps every published group mean within ±{within} of its true mean: "
            f"{why}. Relax the target or raise the clip limit.",
        )
    ok = lambda e: _group_means_within(stat, e, target_error) >= confidence
    top = max(limit, float(stat.eps_max))
    if not ok(top):
        return EpsilonRecommendation.not_found(
            stat.kind,
            target_error,
            confidence,
            f"even ε = {top:g} does not reach the target",
            _no_epsilon_text(
                "mean of every group", within, confidence, limit, None, "relax the target or raise the clip limit"
            ),
        )
    eps = (
        float(stat.eps_min)
        if ok(float(stat.eps_min))
        else bisect_log(ok, float(stat.eps_min), top, rel=planner_lib.EXACT_REL)
    )
    advice = "relax the target or raise the clip limit"
    return EpsilonRecommendation.within_limit(
        stat.kind,
        target_error,
        confidence,
        eps,
        _group_means_within(stat, eps, target_error),
        limit=limit,
        text=f"To have every group mean within ±{within} of its true mean {100 * confidence:g}% of the time, "
        f"use ε = {eps:.3g}.",
        text_above_limit=_no_epsilon_text("mean of every group", within, confidence, limit, eps, advice),
    )


def ratio_answer(
    *,
    epsilon: float,
    p_x: float,
    p_y: float,
    n_x: int,
    n_y: int,
    target_error: float = 0.1,
    confidence: float = defaults.ANSWER_CONFIDENCE,
    max_epsilon: float | None = None,
) -> tuple[StatisticAnswer, EpsilonRecommendation]:
    """The ratios page's answer for planned shares p_x, p_y in groups of public sizes n_x, n_y: the
    relative risk by Laplace-noised counts (Claim 3.2 of the ratio paper; the planner's statistic),
    the error sentence at ``epsilon`` and the ε for ±``target_error`` (relative-risk units), up to
    ``max_epsilon`` (the page's largest ε; default the planner's limit)."""
    n_x, n_y = check_int(n_x, "group size n_x", minimum=1), check_int(n_y, "group size n_y", minimum=1)
    x = int(round(check_probability(p_x, "p_x") * n_x))
    y = int(round(check_probability(p_y, "p_y") * n_y))
    stat = planner_lib.RatioStatistic(x, y, n_x, n_y)
    return (
        statistic_answer(stat, epsilon=epsilon, noun="relative risk"),
        statistic_recommendation(
            stat, target_error=target_error, confidence=confidence, noun="relative risk", max_epsilon=max_epsilon
        ),
    )


def group_means_answer(
    values: Any,
    groups: Any,
    *,
    epsilon: float,
    clip: Sequence[float],
    target_error: float = DEFAULT_GROUP_MEANS_TARGET,
    confidence: float = defaults.ANSWER_CONFIDENCE,
    max_epsilon: float | None = None,
) -> tuple[StatisticAnswer, EpsilonRecommendation]:
    """The group-means page's answer: the mean of every group released with stratified Laplace noise
    on values clipped to the public ``clip`` = (lower, upper) (the planner's group-means statistic:
    Laplace((upper - lower) / (n_g ε)) per group, parallel composition over disjoint groups; neighbouring:
    replace one person's value within their group, group sizes public). The sentence gives the joint
    error in the variable's units (the largest error over the groups, :func:`group_means_sentence`); the
    recommendation the ε that keeps every group mean within ±``target_error`` (same units as the values)
    with probability ``confidence`` (:func:`group_means_recommendation`), up to ``max_epsilon``."""
    lower, upper = (check_finite(v, "clip bound") for v in clip)
    stat = planner_lib.make_statistic("group_means", values, groups, lower=lower, upper=upper)
    assert isinstance(stat, planner_lib.GroupMeans)  # make_statistic("group_means", ...) builds one
    return (
        group_means_sentence(stat, epsilon=epsilon),
        group_means_recommendation(stat, target_error=target_error, confidence=confidence, max_epsilon=max_epsilon),
    )
