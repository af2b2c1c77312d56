"""Group means and parity: does differential privacy bury small groups, and what does stratifying cost?

Thin page: controls (the data's in :mod:`ui.stratified.panels`) -> one cached view call
(:mod:`dpcore.views.stratified`) -> renderers (:mod:`ui.stratified.views`). The generated script makes the same
view call.
"""

from __future__ import annotations

import json

import streamlit as st

from dpcore.views import stratified as strat_experiments
from ui import answer_views, common, data_note, private_source, repro
from ui.common import guard, qp_select_slider, qp_selectbox, seed
from ui.sidebar import current_dataset
from ui.stratified import panels, sections, views
from ui.stratified.panels import DATA_SOURCES

EPS_OPTIONS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0]


st.title("Group means and parity")
st.markdown(views.INTRO)
common.privacy_note(*views.PRIVACY_NOTE)


# Everything below depends on the page's controls: an st.fragment, so a control reruns this part only
# (not the sidebar, the page script's set-up or the intro). A full rerun runs it too.
@st.fragment
def _page_body() -> None:
    answer_box = st.container(border=True)  # the answer first (filled once the controls below are read)
    answer_text = answer_box.container()  # the target controls go under it once the variable is known
    c1, c2, c3 = st.container(border=True).columns(3)
    source = common.qp_radio(
        "Data",
        "strat_data",
        DATA_SOURCES,
        container=c1,
        help="The ACS excerpt is real (20 PUMAs); synthetic data follow the paper's model; the NY sizes "
        "are the paper's Table 3.",
    )
    epsilon = qp_select_slider(
        "Privacy budget ε",
        "strat_eps",
        EPS_OPTIONS,
        1.0,
        container=c2,
        help="Smaller ε = stronger privacy = more noise.",
    )
    c2.caption(views.coinpress_caption(float(epsilon), "epsilon_delta"))
    method = qp_selectbox(
        "Method shown per group",
        "strat_method",
        list(strat_experiments.METHODS),
        "Stratified Laplace",
        container=c3,
        help="Global methods give every group the same (overall) number.",
    )
    clamp = common.qp_toggle(
        "Clamp CoinPress estimates into the prior interval",
        "strat_clamp",
        False,
        container=c3,
        help="Free post-processing (not in the paper): stops a tiny group's estimate from flying far "
        "outside the public prior interval.",
    )

    data_note.stratified_note(source, DATA_SOURCES[3])
    common.mark_downloads(None)  # the sidebar's upload marks them (private_source.page_data)
    chosen = panels.data_controls(  # ui.stratified.panels: the data's controls
        source, c1, c2, lambda: private_source.page_data(current_dataset(), "strat")
    )
    data, recipe, clip, prior, data_key = chosen.data, chosen.recipe, chosen.clip, chosen.prior, chosen.data_key
    value_label, target_range, target_variable = chosen.value_label, chosen.target_range, chosen.target_variable
    target_error, target_confidence = answer_views.group_means_target_controls(
        answer_box, clip_range=target_range, variable=target_variable
    )
    if data is not None and isinstance(clip, tuple):
        with answer_text, guard("the answer"):
            answer_key = data_key + panels.recipe_key_text(recipe)
            answer_views.statistic_answer(
                panels.answer_sentence(answer_key, data, clip, float(epsilon)),
                panels.recommendation(answer_key, data, clip, target_error, target_confidence, max(EPS_OPTIONS)),
                answer_text,
            )
            answer_text.caption(
                "Stratified Laplace: each group's mean gets its own noise (the method of the table below)."
            )
    else:
        answer_text.caption(
            "The answer sentence needs values clipped to a public range: choose the ACS excerpt or the sidebar dataset."
        )
    settings = dict(
        epsilon=float(epsilon),
        clip=clip,
        prior=list(prior),
        clamp=bool(clamp),
        method=method,
        seed=seed(),
        match="epsilon_delta",
    )  # every method (ε, δ)-DP
    data_key = json.dumps(recipe, sort_keys=True, default=str) + data_key

    # One view per run (a URL-backed choice, so a link opens the same view); rendering only the chosen
    # view keeps slider reruns fast.
    view = common.qp_radio("View shown below", "strat_view", sections.VIEWS, horizontal=True)  # a visible label (3.3.2)
    st.divider()

    if view == sections.GROUP_MEANS.heading and data is not None:
        with guard("the group means"):
            result = panels.group_means(data_key, json.dumps(settings, sort_keys=True), data, settings)
            views.group_means(
                result,
                value_label=value_label,
                memo_key=(data_key, json.dumps({k_: v for k_, v in settings.items() if k_ != "method"})),
                fixed_axes=common.qp_toggle(
                    "Fixed axes (compare ε by eye)",
                    "strat_fixed_axes",
                    False,
                    help="The y axis spans the public range, whatever the draws.",
                ),
            )

    elif view == sections.TRENDS.heading:
        panels.trends_section(source, float(epsilon), bool(clamp))

    elif view == sections.THEORY.heading:
        st.markdown(views.THEORY_TEXT)
        t1, t2 = st.columns(2)
        tn = common.qp_number("n", "strat_thn", 196_967, min_value=2, max_value=10_000_000, step=1000, container=t1)
        tk = common.qp_number("k", "strat_thk", 9, min_value=2, max_value=100, step=1, container=t2)
        with guard("the bounds"):
            views.bounds(panels.bounds(int(tn), int(tk)))

    elif view == sections.ACCOUNTING.heading:
        with guard("the accounting"):
            views.accounting(strat_experiments.accounting_view(float(epsilon), data.k if data is not None else 9))

    elif view == sections.SYNTHETIC.heading:
        panels.synthetic_section()

    # ---- Share or reproduce: the group-means view as one dpcore call ---------------------------------
    st.divider()
    if chosen.on_snapshot:  # the script would recompute on the file itself
        repro.share_panel("stratified", unscripted=private_source.PRIVATE_SCRIPT_NOTE)
    elif data is not None:
        script = views.memo(
            ("script", data_key, json.dumps(settings)),
            lambda: repro.view_script_for(
                "dpcore.views.stratified",
                "group_means_view",
                dict(data=recipe, **settings),
                title="Group means and parity",
                dataset_recipe=("none",),
                data_arg=None,
            ),
        )
        repro.share_panel("stratified", script=script, note=views.SCRIPT_NOTE)
    else:
        st.markdown("#### Share or reproduce this view")
        st.caption("Every choice on this page is kept in the address bar: this link opens the same view.")
        st.code(repro.current_link("stratified"), language=None, wrap_lines=True)


_page_body()
