"""Gini index with differential privacy (Lan & Reiter 2025): the flagship page.

Thin page: controls -> one cached call to :func:`dpcore.views.gini.gini_view` -> renderers
in :mod:`ui.gini.views` (figures in :mod:`ui.gini.plots`). The generated script makes the same call.
"""
from __future__ import annotations

import numpy as np
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dpcore import defaults
from dpcore.views import answers as answer_experiments
from dpcore.views import gini as gini_experiments
from ui import answer_views, repro
from ui.common import (
    guard,
    link_default,
    qp_number,
    qp_radio,
    qp_select_slider,
    qp_selectbox,
    qp_slider,
    qp_toggle,
    run_on_button,
    seed,
)
from ui.data_note import data_note
from ui.gini import noise_choice, sections
from ui.gini import views as gini_views
from ui.sidebar import current_dataset

EPS_OPTIONS = [0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 5.0]
GAMMA_OPTIONS = [1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 5.0, 6.0]
DEFAULT_UPPER = defaults.INCOME_UPPER  # shared with the planner (dpcore.defaults)
BOUNDS_PUBLIC = "Public bounds (typed in, chosen without looking at the data)"
BOUNDS_DP = "Estimate U with DP (costs extra ε)"
LIGHT_EXACT_MIN_EPSILON = 1.0  # below it, light-tailed noises use the fast bound in the view (see slow_light)
DRAW_OPTIONS = {"10,000": 10_000, "100,000": 100_000, "1,000,000 (as in the paper; slower)": 1_000_000}
DEFAULT_DRAWS = "100,000"
VIEW_MODULE, VIEW_FUNCTION = gini_experiments.__name__, "gini_view"


# The cached calls are keyed by the data's digest (gini_views.data_digest: computed once per data set) and
# the settings' text (gini_views.settings_key); records and settings are passed unhashed, so a rerun does not
# hash the records and walk the settings dicts once per call. cache_resource: one shared,
# never-changed view object per setting (no pickling of its 40,000 draws per rerun); renderers only read it.
@st.cache_resource(show_spinner=False, max_entries=32)
def _view(data_digest: str, settings_key: str, _values: np.ndarray, _settings: dict) -> gini_experiments.GiniView:
    return gini_experiments.gini_view(_values, **_settings)


@st.cache_data(show_spinner=False, max_entries=32)
def _answer(data_digest: str, settings_key: str, _values: np.ndarray, _settings: dict) -> answer_experiments.GiniAnswer:
    return answer_experiments.gini_answer(_values, **_settings)


@st.cache_data(show_spinner="Finding the ε for your target...", max_entries=32)
def _recommendation(data_digest: str, settings_key: str, _values: np.ndarray,
                    _settings: dict) -> answer_experiments.EpsilonRecommendation:
    return answer_experiments.gini_recommendation(_values, **_settings)


@st.cache_resource(show_spinner=False, max_entries=16)
def _warm_calibrations(gamma: float, calibration: str, noise: str) -> bool:
    """Once per process and setting: the calibration of every ε of the slider (public). A setting
    that cannot be calibrated is left to the view call, which shows the error."""
    try:
        gini_experiments.calibrate_epsilons(EPS_OPTIONS, gamma=gamma, calibration=calibration, noise=noise)
        noise_choice.warm_unit_tradeoffs(tuple(EPS_OPTIONS), noise_choice.DEFAULT_DELTA, gamma)
    except ValueError:
        return False
    return True


@st.cache_data(show_spinner=False, max_entries=8)
def _subsample(data_digest: str, _values: np.ndarray, n: int) -> np.ndarray:
    return gini_experiments.subsample(_values, n)


st.title("Gini index with differential privacy")
# The answer and its recommended ε come first (at 1280x720 they must be on the first screen): the introduction
# is two lines here; the guarantee and the definition follow the controls (gini_views.guarantee_and_definition).
st.markdown(
    "The **Gini index** measures income inequality (0: everyone earns the same; close to 1: one person has "
    "everything). Published with **differential privacy** it carries random noise: the box below says how far the "
    "published Gini lands from the true one and which ε meets your target; the sections explain *why* "
    "(smooth sensitivity with heavy-tailed noise, Lan & Reiter 2025) and what an analyst can infer.")

ds = current_dataset()
data_note(uses_sidebar=True)
if ds.confidential:
    st.warning("**You are planning on an uploaded (confidential) file.** Every simulated release below "
               "uses the real records, so this planning is itself *not* private. Plan on a synthetic "
               "look-alike (sidebar) and use the real file only for the one release you count.")
if ds.n < 2:
    st.error(f"Cannot compute the Gini index: the data have {ds.n} record(s); at least n = 2 are needed.")
    st.stop()

# ---- everything below the introduction is one fragment: moving a control reruns this part only,
# not the sidebar, the navigation and the introduction; the data come from the sidebar's last full run.
@st.fragment
def live_view(ds) -> None:
    # ---- the answer first (filled once the controls below are read) ---------------------------
    answer_box = st.container(border=True)
    answer_text = answer_box.container()
    target_error, target_confidence = answer_views.gini_target_controls(answer_box)

    # ---- controls -----------------------------------------------------------------------------
    c1, c2, c3 = st.columns(3)
    advanced = st.expander("Advanced: noise tail γ, noise calibration, sensitivity bound")
    eps = float(qp_select_slider("Privacy loss ε (log scale)", "gini_eps", EPS_OPTIONS, 1.0, container=c1,
                                 help="Smaller ε = stronger privacy = more noise. Steps are roughly "
                                      "evenly spaced on a log scale from 0.05 to 5."))
    noise = noise_choice.noise_selector("gini", container=c1)  # every number below follows it (sections.NOISE)
    gamma = float(qp_select_slider("Noise tail γ (> 1)", "gini_gamma", GAMMA_OPTIONS, 2.0, container=advanced,
                                   help="Noise density ∝ 1/(1+|z|^γ). The paper uses γ = 2 (Cauchy-like, "
                                        "no mean or variance). γ > 3 gives a finite variance (an RMSE)."))
    n = ds.n
    if ds.n > 2:
        if st.session_state.get("gini_n", 0) > ds.n:
            st.session_state["gini_n"] = ds.n
        n = int(qp_slider("Records used n (random sub-sample)", "gini_n", 2, ds.n, ds.n, 1, container=c2,
                          help="A fixed random sub-sample of the sidebar data (the sidebar seed only redraws "
                               "the noise). n is public."))
    method = qp_radio("Sensitivity bound", "gini_method", ["exact", "fast"], "exact", container=advanced,
                      format_func=gini_views.METHOD_LABELS.get, horizontal=True)
    if method == "exact" and n > 200_000:
        advanced.caption("On this many records the exact bound takes a few seconds per change; 'fast' is instant and never "
                   "smaller.")
    calibration = qp_radio("Noise calibration", "gini_cal", ["tight", "paper"], "tight", container=advanced,
                           format_func=gini_views.CAL_LABELS.get,
                           help="Both are ε-DP. 'paper' uses α = ε/(4γ); 'tight' the largest α whose "
                                "privacy loss is certified ≤ ε (about 5× less noise at γ = 2).")
    bounds_mode = qp_radio("Income bounds [L, U]", "gini_bounds", [BOUNDS_PUBLIC, BOUNDS_DP], BOUNDS_PUBLIC, container=c3)

    b1, b2, b3 = st.columns(3)
    lower = float(qp_number("Lower bound L", "gini_L", 0.0, min_value=0.0, max_value=1e12, step=1000.0,
                            container=b1, help="Incomes below L (including losses) are set to L."))
    upper: float | None = None
    upper_eps = 0.0
    if bounds_mode == BOUNDS_PUBLIC:
        upper = float(qp_number("Upper bound U", "gini_U", DEFAULT_UPPER, min_value=0.0, max_value=1e13,
                                step=100_000.0, container=b2,
                                help="Public: chosen from outside knowledge, never from this file. Incomes "
                                     "above U are clipped to U."))
    else:
        upper_eps = float(qp_select_slider("ε spent on U", "gini_eps_u", [0.05, 0.1, 0.15, 0.2, 0.3, 0.5], 0.15,
                                           container=b2, help="Paper: 0.075 for a noisy count + 0.075 for the "
                                                              "AboveThreshold search; U = 2.5 × the estimate."))
    b3.metric("Total privacy loss ε", f"{eps + upper_eps:g}",
              help="ε of the Gini release plus ε spent on U (sequential composition).")
    if noise != "cauchy":
        b3.caption(f"plus δ = {noise_choice.DEFAULT_DELTA:.0e}: {noise_choice.NOISE_LABELS[noise]}")
    gini_views.guarantee_and_definition()

    # The posterior section's control comes before the view call (the view draws the posterior for this prior).
    clipping_area, headline_area, section1, section2 = st.container(), st.container(), st.container(), st.container()
    section3_controls = st.empty()
    with section3_controls.container():
        st.header(sections.POSTERIOR.heading)
        prior_key = qp_radio("Analyst's prior belief about the Gini", "gini_prior", list(gini_views.PRIORS), "uniform",
                             format_func=lambda k: gini_views.PRIORS[k][1], horizontal=True)
    prior, prior_text = gini_views.PRIORS[prior_key]

    # ---- the one view call ------------------------------------------------------------------------
    _warm_calibrations(gamma, str(calibration), str(noise))
    # Light-tailed noises need beta ~ ε/ln(1/δ): below ε = 1 the exact bound takes seconds to minutes. The view
    # then uses the fast bound (never smaller) and the answer (exact, as a release plans it) waits for a click.
    slow_light = noise != "cauchy" and method == "exact" and eps < LIGHT_EXACT_MIN_EPSILON
    if slow_light:
        clipping_area.info(f"With a light-tailed noise at ε < {LIGHT_EXACT_MIN_EPSILON:g} the exact sensitivity bound "
                           "takes seconds to minutes: the sections below use the fast bound (never smaller, so "
                           "their errors are upper bounds).")
    settings = {"epsilon": eps, "gamma": gamma, "lower": lower, "upper": upper, "upper_epsilon": upper_eps,
                "calibration": str(calibration), "method": "fast" if slow_light else str(method), "n": int(n),
                "prior": prior, "seed": seed(), "noise": str(noise)}
    view = None
    digest = gini_views.data_digest(ds.values)
    with clipping_area, guard("the Gini view"):  # an error shows at the top, where the numbers would be
        view = _view(digest, gini_views.settings_key(settings), ds.values, settings)
    if view is None:
        section3_controls.empty()
        st.session_state["_gini_paper_inputs"] = None
        return
    if bounds_mode == BOUNDS_DP:
        b2.caption(f"DP estimate: U = {view.upper:,.0f} (ε = {view.upper_epsilon:g} spent)")
    answer_settings = {"lower": lower, "upper": view.upper, "gamma": gamma, "calibration": str(calibration), "n": int(n),
                       "noise": str(noise)}
    with answer_text, guard("the answer"):
        answer_args = {"epsilon": eps, **answer_settings}
        answer_key = gini_views.settings_key(answer_args)
        answer = (run_on_button("Compute the answer (exact bound; slow at small ε with this noise)", "gini_answer_run",
                                lambda: _answer(digest, answer_key, ds.values, answer_args), what="the answer",
                                state_key=f"gini_answer_{sorted(answer_args.items())}")
                  if slow_light else _answer(digest, answer_key, ds.values, answer_args))
        if answer is not None:
            target = {"target_error": target_error, "confidence": target_confidence, **answer_settings,
                      "max_epsilon": max(EPS_OPTIONS), "min_epsilon": min(EPS_OPTIONS)}
            recommendation = _recommendation(digest, gini_views.settings_key(target), ds.values, target)
            answer_views.gini_answer(answer, recommendation, answer_text)
            gini_views.answer_note(view)  # which accuracy the sentence means; the published interval's width
    with clipping_area:
        gini_views.clipping_notes(view)
    with headline_area:
        gini_views.headline(view)
    with section1:
        gini_views.releases(view, fixed_axes=qp_toggle("Fixed axes (compare ε by eye)", "gini_fixed_axes", False,
                                                       help="Axes 0–1 whatever the draws, so the spread visibly changes with ε."))
    with section2:
        gini_views.sensitivity(view)
    gini_views.posterior(view, prior_text)
    gini_views.error_curve(view)
    noise_choice.render_gini_noise_section("gini", _subsample(digest, ds.values, n), epsilon=eps, lower=lower, upper=float(view.upper),
                                           gamma=gamma, calibration=str(calibration), method=str(settings["method"]), seed=seed(),
                                           saturated=bool(view.saturated), chosen=str(noise))

    # ---- 5. share / reproduce -------------------------------------------------------------------------
    link_default("gini_exp_draws", DEFAULT_DRAWS)  # the paper section's control is drawn below, after the link
    gini_views.numbers(view, heading=sections.SHARE.heading)
    # The script is the same view call with the same literal settings (numbers and fixed option names only).
    repro.share_panel("gini", script=repro.view_script_for(VIEW_MODULE, VIEW_FUNCTION, settings,
                                                           title="Gini index with differential privacy"),
                      note=f"The paper experiments ({sections.PAPER.cited}; download their tables below) and the noise "
                           f"comparison ({sections.NOISE.number}) are not in the script.")
    # The paper section lies outside this fragment (it does not depend on ε): when one of its inputs changed in a
    # fragment-only run, redraw the whole page once.
    paper_inputs = {"gamma": gamma, "upper": upper, "upper_epsilon": upper_eps, "n": int(n)}
    st.session_state["_gini_paper_inputs"] = paper_inputs
    if paper_inputs != st.session_state.get("_gini_paper_inputs_shown") and _fragment_only_run():
        st.rerun()


def _fragment_only_run() -> bool:
    ctx = get_script_run_ctx()
    return bool(ctx is not None and ctx.fragment_ids_this_run)


live_view(ds)
# ---- 6. paper experiments (outside the fragment: on buttons, independent of ε) ---------------------------
paper = st.session_state.get("_gini_paper_inputs")
if paper is not None:
    st.session_state["_gini_paper_inputs_shown"] = paper
    st.markdown(f"## {sections.PAPER.heading}\n\nEach runs on a button (they take a few seconds), with "
                "the paper's calibration and ours side by side.")
    n_draws = DRAW_OPTIONS[qp_selectbox("Simulated releases per setting", "gini_exp_draws", list(DRAW_OPTIONS),
                                        DEFAULT_DRAWS)]
    gini_views.paper_experiments(_subsample(gini_views.data_digest(ds.values), ds.values, paper["n"]), gamma=paper["gamma"], upper=paper["upper"],
                                 upper_epsilon=paper["upper_epsilon"], n_draws=n_draws, seed=seed())
