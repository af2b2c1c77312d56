"""Gini index with differential privacy (Lan & Reiter 2025): the flagship page.

Thin page: controls (:mod:`ui.gini.controls`) -> one cached call to :func:`dpcore.views.gini.gini_view` -> renderers
in :mod:`ui.gini.views` (figures in :mod:`ui.gini.plots`). The generated script makes the same call.
"""

from __future__ import annotations

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from dpcore import defaults
from dpcore.views import gini as gini_experiments
from ui import answer_views, private_source, repro
from ui.common import (
    guard,
    link_default,
    qp_radio,
    qp_toggle,
    seed,
)
from ui.data_note import data_note
from ui.gini import controls as gini_controls
from ui.gini import noise_choice, sections
from ui.gini import views as gini_views
from ui.sidebar import current_dataset

EPS_OPTIONS = list(defaults.GINI_EPSILON_STEPS)
DEFAULT_UPPER = defaults.INCOME_UPPER  # shared with the planner (dpcore.defaults)
DRAW_OPTIONS = {"10,000": 10_000, "100,000": 100_000, "1,000,000 (as in the paper; slower)": 1_000_000}
DEFAULT_DRAWS = "100,000"
VIEW_MODULE, VIEW_FUNCTION = gini_experiments.__name__, "gini_view"


st.title("Gini index with differential privacy")
# The answer and its recommended ε come first (at 1280x720 they must be on the first screen): the introduction
# is two lines here; the guarantee and the definition follow the controls (gini_views.guarantee_and_definition).
st.markdown(
    "The **Gini index** measures income inequality (0: everyone earns the same; close to 1: one person has "
    "everything). Published with **differential privacy** it carries random noise: the box below says how far the "
    "published Gini lands from the true one and which ε meets your target; the sections explain *why* "
    "(smooth sensitivity with heavy-tailed noise, Lan & Reiter 2025) and what an analyst can infer."
)

data_note(uses_sidebar=True)
# a confidential upload: its raw records (every download marked confidential) or its DP snapshot's (publishable)
ds = private_source.page_data(current_dataset(), "gini")
if ds is None:
    st.stop()
ON_SNAPSHOT = private_source.is_snapshot(ds)
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

    # ---- controls (ui.gini.controls) ------------------------------------------------------------
    chosen = gini_controls.controls(ds, EPS_OPTIONS, DEFAULT_UPPER)
    eps, noise, gamma, n, method = chosen.epsilon, chosen.noise, chosen.gamma, chosen.n, chosen.method
    calibration, lower, upper, upper_eps = chosen.calibration, chosen.lower, chosen.upper, chosen.upper_epsilon
    gini_views.guarantee_and_definition()

    # The posterior section's control comes before the view call (the view draws the posterior for this prior).
    clipping_area, headline_area, section1, section2 = st.container(), st.container(), st.container(), st.container()
    section3_controls = st.empty()
    with section3_controls.container():
        st.header(sections.POSTERIOR.heading)
        prior_key = qp_radio(
            "Analyst's prior belief about the Gini",
            "gini_prior",
            list(gini_views.PRIORS),
            "uniform",
            format_func=lambda k: gini_views.PRIORS[k][1],
            horizontal=True,
        )
    prior, prior_text = gini_views.PRIORS[prior_key]

    # ---- the one view call ------------------------------------------------------------------------
    # Light-tailed noises need beta ~ ε/ln(1/δ): below ε = 1 the exact bound takes seconds to minutes. The view
    # then uses the fast bound (never smaller) and the answer (exact, as a release plans it) waits for a click.
    slow_light = noise != "cauchy" and method == "exact" and eps < gini_controls.LIGHT_EXACT_MIN_EPSILON
    if slow_light:
        clipping_area.info(
            f"With a light-tailed noise at ε < {gini_controls.LIGHT_EXACT_MIN_EPSILON:g} the exact sensitivity bound "
            "takes seconds to minutes: the sections below use the fast bound (never smaller, so "
            "their errors are upper bounds)."
        )
    settings = {
        "epsilon": eps,
        "gamma": gamma,
        "lower": lower,
        "upper": upper,
        "upper_epsilon": upper_eps,
        "calibration": str(calibration),
        "method": "fast" if slow_light else str(method),
        "n": int(n),
        "prior": prior,
        "seed": seed(),
        "noise": str(noise),
    }
    view = None
    digest = gini_views.data_digest(ds.values)
    with clipping_area, guard("the Gini view"):  # an error shows at the top, where the numbers would be
        view = gini_controls.cached_view(digest, gini_views.settings_key(settings), ds.values, settings)
    if view is None:
        section3_controls.empty()
        st.session_state["_gini_paper_inputs"] = None
        return
    if chosen.bounds_mode == gini_controls.BOUNDS_DP:
        chosen.upper_area.caption(f"DP estimate: U = {view.upper:,.0f} (ε = {view.upper_epsilon:g} spent)")
    with answer_text, guard("the answer"):
        gini_controls.answer(
            view,
            chosen,
            ds,
            digest,
            target=(target_error, target_confidence),
            slow_light=slow_light,
            epsilons=EPS_OPTIONS,
            container=answer_text,
        )
    with clipping_area:
        gini_views.clipping_notes(view, confidential=ds.confidential, synthetic=ON_SNAPSHOT)
    with headline_area:
        gini_views.headline(view)
    with section1:
        gini_views.releases(
            view,
            fixed_axes=qp_toggle(
                "Fixed axes (compare ε by eye)",
                "gini_fixed_axes",
                False,
                help="Axes 0–1 whatever the draws, so the spread visibly changes with ε.",
            ),
        )
    with section2:
        gini_views.sensitivity(view)
    gini_views.posterior(view, prior_text)
    gini_views.error_curve(view)
    noise_choice.render_gini_noise_section(
        "gini",
        gini_controls.subsample(digest, ds.values, n),
        epsilon=eps,
        lower=lower,
        upper=float(view.upper),
        gamma=gamma,
        calibration=str(calibration),
        method=str(settings["method"]),
        seed=seed(),
        saturated=bool(view.saturated),
        chosen=str(noise),
    )

    # ---- 5. share / reproduce -------------------------------------------------------------------------
    link_default("gini_exp_draws", DEFAULT_DRAWS)  # the paper section's control is drawn below, after the link
    gini_views.numbers(view, heading=sections.SHARE.heading)
    # The script is the same view call with the same literal settings (numbers and fixed option names only).
    repro.share_panel(
        "gini",
        script=None
        if ON_SNAPSHOT  # the script would recompute on the file itself
        else repro.view_script_for(VIEW_MODULE, VIEW_FUNCTION, settings, title="Gini index with differential privacy"),
        unscripted=private_source.PRIVATE_SCRIPT_NOTE,
        note=f"The paper experiments ({sections.PAPER.cited}; download their tables below) and the noise "
        f"comparison ({sections.NOISE.number}) are not in the script.",
    )
    gini_controls.warm_calibrations(tuple(EPS_OPTIONS), gamma, calibration, noise)
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
    st.markdown(
        f"## {sections.PAPER.heading}\n\nEach runs on a button (they take a few seconds), with "
        "the paper's calibration and ours side by side."
    )
    paper_n, paper_values = int(paper["n"]), ds.values
    gini_views.paper_experiments(
        lambda: gini_controls.subsample(gini_views.data_digest(paper_values), paper_values, paper_n),
        gamma=paper["gamma"],
        upper=paper["upper"],
        upper_epsilon=paper["upper_epsilon"],
        seed=seed(),
        draw_options=DRAW_OPTIONS,
        default_draws=DEFAULT_DRAWS,
    )
