"""The answer box at the top of a method page: the sentence with the number that matters,
its tail risk, and the recommended ε for a target typed in the statistic's own units.

Numbers come from :mod:`dpcore.views.answers`; this module only draws them.
"""

from __future__ import annotations

import streamlit as st

from dpcore import defaults
from dpcore.views.answers import EpsilonRecommendation, GiniAnswer
from ui.common import qp_number, qp_selectbox

CONFIDENCES = {"half the time": 0.5, "9 times in 10": 0.9, "19 times in 20": 0.95, "99 times in 100": 0.99}


def gini_target_controls(container) -> tuple[float, float]:
    """The target of the recommendation: ± Gini points, how often (URL-backed: gini_target, gini_conf)."""
    c1, c2 = container.columns(2)
    target = float(
        qp_number(
            "Your target: published Gini within ± (Gini points)",
            "gini_target",
            defaults.ANSWER_TARGET_GINI,
            min_value=0.0005,
            max_value=0.5,
            step=0.001,
            container=c1,
            format="%.4f",
            help="0.01 = one Gini point, e.g. 0.45 published as anything in 0.44–0.46.",
        )
    )
    how_often = qp_selectbox("… how often", "gini_conf", list(CONFIDENCES), "9 times in 10", container=c2)
    return target, CONFIDENCES[how_often]


def gini_answer(answer: GiniAnswer, recommendation: EpsilonRecommendation | None, container) -> None:
    """The answer sentence (success box), the tail risk and the recommendation."""
    with container:
        st.success(f"**{answer.sentence}**", icon=":material/lightbulb:")
        if recommendation is not None:
            if recommendation.recommended_epsilon is None:
                st.warning(recommendation.recommendation)
            else:
                st.info(
                    f"**Recommended:** {recommendation.recommendation} Set ε below to "
                    f"{recommendation.recommended_epsilon:.3g} or the nearest step above it.",
                    icon=":material/recommend:",
                )
        if abs(answer.clipping_bias) > 0.1 * answer.median_abs_error:
            st.caption(
                f"Includes the bias from clipping incomes to U = {answer.upper:,.0f} "
                f"({answer.clipping_bias:+.4f}); a lower U means less noise but more clipping."
            )


def ratio_target_controls(container) -> tuple[float, float]:
    """The ratios page's target: published relative risk within ± (URL-backed: ratio_target, ratio_conf)."""
    c1, c2 = container.columns(2)
    target = float(
        qp_number(
            "Your target: published relative risk within ±",
            "ratio_target",
            0.1,
            min_value=0.001,
            max_value=100.0,
            step=0.01,
            container=c1,
            format="%.3f",
            help="In relative-risk units: 0.1 means 1.5 is published as anything in 1.4–1.6.",
        )
    )
    how_often = qp_selectbox("… how often", "ratio_conf", list(CONFIDENCES), "9 times in 10", container=c2)
    return target, CONFIDENCES[how_often]


def statistic_answer(answer, recommendation: EpsilonRecommendation | None, container) -> None:
    """A StatisticAnswer sentence and its recommendation (any planner statistic)."""
    with container:
        st.success(f"**{answer.sentence}**", icon=":material/lightbulb:")
        if recommendation is not None:
            if recommendation.recommended_epsilon is None:
                st.warning(recommendation.recommendation)
            else:
                st.info(f"**Recommended:** {recommendation.recommendation}", icon=":material/recommend:")


def percentile_target_controls(container) -> tuple[float, float]:
    """The percentiles page's target: the cell's published median within ± dollars (perc_target, perc_conf)."""
    c1, c2 = container.columns(2)
    target = float(
        qp_number(
            "Your target: published median within ± ($)",
            "perc_target",
            2_000.0,
            min_value=1.0,
            max_value=1e7,
            step=500.0,
            container=c1,
            format="%.0f",
            help="In dollars of yearly earnings.",
        )
    )
    how_often = qp_selectbox("… how often", "perc_conf", list(CONFIDENCES), "9 times in 10", container=c2)
    return target, CONFIDENCES[how_often]


#: the group-means target a variable starts with, as a share of its public clip range: ±40,000 for incomes clipped
#: to 0-200,000 (dpcore.views.answers.DEFAULT_GROUP_MEANS_TARGET, reachable on the page's default data),
#: ±20 years for ages clipped to 0-100 (a target of ±40,000 years recommended ε = 0.006: true, and useless)
TARGET_SHARE_OF_CLIP_RANGE = 0.2


def group_means_target_controls(container, *, clip_range: float, variable: str) -> tuple[float, float]:
    """The group-means page's target: every published group mean within ± (strat_target, strat_conf), in the
    units of ``variable``; it starts at :data:`TARGET_SHARE_OF_CLIP_RANGE` of ``clip_range`` (its default clip
    range) and starts there again when the variable changes (a target in dollars means nothing for ages)."""
    default = TARGET_SHARE_OF_CLIP_RANGE * float(clip_range)
    if st.session_state.get("_strat_target_variable", variable) != variable:
        st.session_state["strat_target"] = default
    st.session_state["_strat_target_variable"] = variable
    c1, c2 = container.columns(2)
    target = float(
        qp_number(
            "Your target: every group mean within ±",
            "strat_target",
            default,
            min_value=1e-6,
            max_value=1e9,
            step=max(default / 20, 1e-6),
            container=c1,
            format="%g",
            help="In the units of the variable (dollars for incomes), for every group at once: tiny "
            "groups get the most noise, so they set the ε.",
        )
    )
    how_often = qp_selectbox("… how often", "strat_conf", list(CONFIDENCES), "9 times in 10", container=c2)
    return target, CONFIDENCES[how_often]
