"""Relative risk and ratios from noisy counts (Shoham & Ligett 2025): is the privacy noise the problem,
or the sample size?

Thin page: controls -> one cached view call (:mod:`dpcore.views.ratio`) -> renderers
(:mod:`ui.ratios.views`). The generated script makes the same view call.
"""

from __future__ import annotations

import math

import streamlit as st

from dpcore import ratio
from dpcore.data import POVERTY_GROUPINGS
from dpcore.validation import DPInputError, check_probability
from dpcore.views import answers as answer_experiments
from dpcore.views import ratio as ratio_experiments
from ui import answer_views, repro
from ui.common import guard, privacy_note, qp_number, qp_radio, qp_select_slider, qp_selectbox, qp_slider, seed
from ui.data_note import data_note
from ui.ratios import sections, views
from ui.sections import by_heading

EPS_OPTIONS = [0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 8.0]
DELTA_OPTIONS = [1e-7, 1e-6, 1e-5, 1e-4, 1e-3]
MECH = {"Laplace": "laplace", "Gaussian (analytic)": "gaussian"}
PLANNING = "Proportions (planning)"


@st.cache_data(show_spinner=False, max_entries=64)
def _answer(eps: float, px: float, py: float, nx: int, ny: int, target: float, confidence: float):
    """The answer sentence and recommended ε (dpcore.views.answers.ratio_answer)."""
    return answer_experiments.ratio_answer(
        epsilon=eps,
        p_x=px,
        p_y=py,
        n_x=nx,
        n_y=ny,
        target_error=target,
        confidence=confidence,
        max_epsilon=max(EPS_OPTIONS),
    )


@st.cache_data(show_spinner=False, max_entries=64)
def _view(function: str, settings: dict):
    """The one view call of this page: ``dpcore.views.ratio.<function>(**settings)``."""
    return getattr(ratio_experiments, function)(**settings)


st.title("Relative risk and ratios")
st.markdown(views.INTRO)
privacy_note(*views.PRIVACY_NOTE)
data_note(
    uses_sidebar=False,
    what="counts you type in (or the ACS excerpt's poverty counts)",
    why="a ratio compares two counts, not an income column; only the sidebar's random seed is used "
    "(same seed, same simulated studies)",
)

answer_box = st.container(border=True)  # the answer first (filled once the settings below are read)
answer_text = answer_box.container()
target_error, target_confidence = answer_views.ratio_target_controls(answer_box)

with st.expander("Settings", expanded=True):
    c1, c2, c3 = st.columns(3)
    eps = qp_select_slider(
        "Privacy budget ε (total for both counts)",
        "ratio_eps",
        EPS_OPTIONS,
        1.0,
        container=c1,
        help="Smaller ε = more noise = more privacy.",
    )
    mech_label = qp_radio(
        "Noise",
        "ratio_mech",
        list(MECH),
        "Laplace",
        container=c1,
        horizontal=True,
        help="Laplace gives pure ε-DP; Gaussian needs a small failure probability δ.",
    )
    mech = MECH[mech_label]
    delta = qp_select_slider(
        "δ (Gaussian only)",
        "ratio_delta",
        DELTA_OPTIONS,
        1e-4,
        container=c1,
        format_func=lambda d: f"{d:.0e}",
        disabled=mech != "gaussian",
    )
    mode = qp_radio(
        "Describe the study by", "ratio_mode", [PLANNING, "Observed noisy counts"], container=c2, horizontal=True
    )
    nx = qp_number(
        "n_x: people in group x (public)", "ratio_nx", 200, min_value=0, max_value=10_000_000, step=10, container=c2
    )
    ny = qp_number(
        "n_y: people in group y (public)", "ratio_ny", 200, min_value=0, max_value=10_000_000, step=10, container=c2
    )
    if mode == PLANNING:
        px = qp_slider("p_x: share with the outcome in group x", "ratio_px", 0.01, 0.99, 0.3, 0.01, container=c3)
        py = qp_slider("p_y: share with the outcome in group y", "ratio_py", 0.01, 0.99, 0.2, 0.01, container=c3)
        x_obs = y_obs = None
    else:
        x_obs = qp_number("noisy count x~ (group x with outcome)", "ratio_xobs", 60.0, container=c3, step=1.0)
        y_obs = qp_number("noisy count y~ (group y with outcome)", "ratio_yobs", 40.0, container=c3, step=1.0)
        px = x_obs / nx if nx > 0 else float("nan")
        py = y_obs / ny if ny > 0 else float("nan")
    level = qp_select_slider(
        "Confidence level", "ratio_level", [0.8, 0.9, 0.95, 0.99], 0.95, container=c3, format_func=lambda v: f"{v:.0%}"
    )

if nx < 1 or ny < 1:
    answer_text.caption("No answer: the group sizes must be at least 1 (see the message below).")
elif mode == PLANNING and mech == "laplace":
    with answer_text, guard("the answer"):
        answer, recommendation = _answer(
            float(eps), float(px), float(py), int(nx), int(ny), target_error, target_confidence
        )
        answer_views.statistic_answer(answer, recommendation, answer_text)
else:
    answer_text.caption("The answer sentence is for planning with the Laplace mechanism (choose them in Settings).")
view = by_heading(sections.SECTIONS, qp_radio("Show", "ratio_view", list(sections.VIEWS), horizontal=True))
delta_used = delta if mech == "gaussian" else None
noise = dict(epsilon=float(eps), mechanism=mech, delta=None if delta_used is None else float(delta_used))

cn = None
with guard("the relative risk"):  # the shared inputs, checked once with messages a user can act on
    if nx < 1 or ny < 1:
        raise DPInputError(f"the group sizes must be at least 1 (got n_x = {nx}, n_y = {ny})")
    if mode != PLANNING:
        ratio.rr_confidence_interval(x_obs, y_obs, nx, ny)  # raises on zero/negative noisy counts
    names = ("p_x", "p_y") if mode == PLANNING else ("p_x = x~/n_x", "p_y = y~/n_y")
    check_probability(px, names[0])
    check_probability(py, names[1])
    cn = ratio.count_noise(eps, mechanism=mech, delta=delta_used)
if cn is not None:
    st.caption(
        f"Noise per count: {mech_label}, scale {cn.scale:.3g} (standard deviation {math.sqrt(cn.variance):.3g} "
        f"people). Expected counts: x ≈ {px * nx:,.1f}, y ≈ {py * ny:,.1f}."
    )

# ---- the chosen view: its settings (plain literals), then one cached call and its renderer -------------
call: tuple[str, dict] | None = None
counts = dict(p_x=float(px), p_y=float(py), n_x=int(nx), n_y=int(ny))
if cn is not None:
    if view is sections.SAMPLING:
        call = ("sampling_view", dict(counts, **noise, seed=seed()))
    elif view is sections.INTERVALS:
        observed = (
            dict(p_x=float(px), p_y=float(py))
            if x_obs is None or y_obs is None  # planning
            else dict(x_obs=float(x_obs), y_obs=float(y_obs))
        )
        call = ("intervals_view", dict(n_x=int(nx), n_y=int(ny), **noise, level=float(level), seed=seed(), **observed))
    elif view is sections.HEATMAPS:
        st.subheader("Coverage over many settings (the paper's Appendix D.2 tables)")
        c = st.columns(2)
        method = qp_selectbox(
            "Interval method", "ratio_hm_method", list(ratio_experiments.HEATMAP_METHODS), container=c[0]
        )
        n_sims = qp_select_slider(
            "Simulated studies per cell", "ratio_hm_sims", [500, 1000, 2000, 5000], 1000, container=c[1]
        )
        call = (
            "coverage_heatmap_view",
            dict(n_x=int(nx), n_y=int(ny), **noise, level=float(level), n_sims=int(n_sims), method=method, seed=seed()),
        )
    elif view is sections.ACCURACY:
        st.subheader("Sample accuracy of every algorithm (the paper's Figure 1)")
        alpha = qp_select_slider(
            "accuracy target α (absolute error in the ratio)", "ratio_alpha", [0.01, 0.05, 0.1, 0.2, 0.5], 0.1
        )
        call = ("accuracy_view", dict(counts, alpha=float(alpha)))
    elif view is sections.BIAS:
        call = ("bias_view", dict(p_x=float(px), p_y=float(py), epsilon=float(eps)))
    elif view is sections.ODDS_RATIO:
        st.subheader("Odds ratio from a noisy 2×2 table")
        st.markdown(views.ODDS_RATIO_TEXT)
        call = ("odds_ratio_view", dict(counts, **noise, level=float(level), seed=seed()))
    else:
        st.subheader("Who is more likely to be in poverty? (ACS 2019 excerpt)")
        st.markdown(views.POVERTY_TEXT)
        acs = st.columns(3)
        col = qp_selectbox("Compare groups by", "ratio_acs_col", list(POVERTY_GROUPINGS), container=acs[0])
        codes = list(POVERTY_GROUPINGS[col])
        group_names = POVERTY_GROUPINGS[col]
        gx = qp_selectbox(
            "group x",
            "ratio_acs_gx",
            codes,
            codes[1] if len(codes) > 1 else codes[0],
            container=acs[1],
            format_func=lambda v: group_names[v],
        )
        gy = qp_selectbox(
            "group y (reference)",
            "ratio_acs_gy",
            codes,
            codes[0],
            container=acs[2],
            format_func=lambda v: group_names[v],
        )
        call = (
            "poverty_view",
            dict(column=col, group_x=int(gx), group_y=int(gy), **noise, level=float(level), seed=seed()),
        )

result = None
if call is not None:
    with guard(f"the view '{view.heading}'"):
        result = _view(*call)
        if view is sections.SAMPLING:
            views.sampling(result)
        elif view is sections.INTERVALS:
            views.intervals(result, seed=seed(), n_x=int(nx), n_y=int(ny))
        elif view is sections.HEATMAPS:
            views.heatmaps(result)
        elif view is sections.ACCURACY:
            views.accuracy(result)
        elif view is sections.BIAS:
            views.bias(result)
        elif view is sections.ODDS_RATIO:
            views.odds_ratio(result)
        else:
            views.poverty(result, POVERTY_GROUPINGS[call[1]["column"]])

# ---- share / reproduce: the same call, as a script (only for a view that worked) -------------------------
if result is not None:
    st.divider()
    repro.share_panel(
        "ratios",
        script=repro.view_script_for(
            "dpcore.views.ratio",
            call[0],
            call[1],
            title=f"Relative risk and ratios: {view.heading}",
            dataset_recipe=("none",),
            data_arg=None,
        ),
        note="This page does not use the income file chosen in the sidebar; the script needs only the settings "
        "and the seed written in it.",
    )
