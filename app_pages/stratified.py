"""Group means and parity: does differential privacy bury small groups, and what does stratifying cost?

Thin page: controls -> one cached view call (:mod:`dpcore.views.stratified`) -> renderers
(:mod:`ui.stratified.views`). The generated script makes the same view call.
"""
from __future__ import annotations

import json

import streamlit as st

from dpcore.data import recipe_from_key
from dpcore.views import answers as answer_experiments
from dpcore.views import stratified as strat_experiments
from ui import answer_views, common, data_note, repro
from ui.common import guard, qp_select_slider, qp_selectbox, qp_slider, seed
from ui.sidebar import current_dataset
from ui.stratified import sections, views

DATA_SOURCES = ("ACS 2019 excerpt", "Synthetic mixture (paper's model)", "Paper's NY group sizes",
                "Sidebar dataset (choose grouping columns)")
NONE = "(none)"
EPS_OPTIONS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.0, 5.0]


# cache_resource: one shared GroupedData per recipe (read only), so its group index is built once and a
# rerun does not unpickle a copy of the data
@st.cache_resource(show_spinner=False, max_entries=16)
def _recipe_data(recipe_text: str, _recipe: dict) -> strat_experiments.GroupedData:
    """Keyed by the recipe's JSON text (a dict costs Streamlit ~0.5 ms to hash per call)."""
    return strat_experiments.grouped_data(_recipe)


@st.cache_resource(show_spinner=False, max_entries=8)
def _column_data(values, frame, recipe: dict) -> strat_experiments.GroupedData:
    return strat_experiments.grouped_data(recipe, values=values, frame=frame)


# cache_resource: one shared view object per setting (read only), not a pickled copy per rerun
@st.cache_resource(show_spinner=False, max_entries=32)
def _group_means(data_key: str, settings_text: str, _data: strat_experiments.GroupedData, _settings: dict):
    return strat_experiments.group_means_view(_data, **_settings)


@st.cache_resource(show_spinner=False, max_entries=16)
def _answer_statistic(data_key: str, _data, clip: tuple):
    """The answer's planner statistic, once per data and clip range (shared, never mutated)."""
    return strat_experiments.group_means_answer_statistic(_data.values, _data.groups, clip=clip)


@st.cache_data(show_spinner=False, max_entries=64)
def _answer_sentence(data_key: str, _data, clip: tuple, epsilon: float):
    """The answer sentence at the slider's ε (group_means_answer's first half, the same numbers)."""
    return strat_experiments.group_means_answer_at_epsilon(_answer_statistic(data_key, _data, clip), epsilon=epsilon)


@st.cache_data(show_spinner=False, max_entries=32)
def _recommendation(data_key: str, _data, clip: tuple, target: float, confidence: float):
    """The recommended ε (group_means_answer's second half, the same numbers): independent of the ε slider."""
    return answer_experiments.group_means_recommendation(_answer_statistic(data_key, _data, clip), target_error=target,
                                                         confidence=confidence, max_epsilon=max(EPS_OPTIONS))


def recipe_key_text(recipe) -> str:
    return json.dumps(recipe, sort_keys=True, default=str)


@st.cache_data(show_spinner=False, max_entries=16)
def _bounds(n: int, k: int):
    return strat_experiments.bounds_view(n, k)


st.title("Group means and parity")
st.markdown(views.INTRO)
common.privacy_note(*views.PRIVACY_NOTE)

# Everything below depends on the page's controls: an st.fragment, so a control reruns this part only
# (not the sidebar, the page script's set-up or the intro). A full rerun runs it too.
@st.fragment
def _page_body() -> None:  # noqa: C901 (one branch per view of the page, in page order)
    answer_box = st.container(border=True)  # the answer first (filled once the controls below are read)
    answer_text = answer_box.container()  # the target controls go under it once the variable is known
    c1, c2, c3 = st.container(border=True).columns(3)
    source = common.qp_radio("Data", "strat_data", DATA_SOURCES, container=c1,
                             help="The ACS excerpt is real (20 PUMAs); synthetic data follow the paper's model; the NY sizes "
                           "are the paper's Table 3.")
    epsilon = qp_select_slider("Privacy budget ε", "strat_eps", EPS_OPTIONS, 1.0, container=c2, help="Smaller ε = stronger privacy = more noise.")
    c2.caption(views.coinpress_caption(float(epsilon), "epsilon_delta"))
    method = qp_selectbox("Method shown per group", "strat_method", list(strat_experiments.METHODS), "Stratified Laplace",
                          container=c3, help="Global methods give every group the same (overall) number.")
    clamp = common.qp_toggle("Clamp CoinPress estimates into the prior interval", "strat_clamp", False, container=c3,
                             help="Free post-processing (not in the paper): stops a tiny group's estimate from flying far "
                           "outside the public prior interval.")

    data = recipe = None
    clip: tuple[float, float] | float | None = None  # a float: the synthetic data's bound R
    prior, value_label, data_key = (-3.0, 3.0), "value", ""
    target_range, target_variable = 200_000.0, source  # the variable's default clip range: its target's start
    data_note.stratified_note(source, DATA_SOURCES[3])
    with guard("the data"):
        if source == DATA_SOURCES[0]:
            var = qp_selectbox("Variable", "strat_var", list(strat_experiments.ACS_VARIABLES), container=c1)
            grouping = qp_selectbox("Groups", "strat_grp", list(strat_experiments.ACS_GROUPINGS), container=c1)
            spec = strat_experiments.ACS_VARIABLES[var]
            target_range, target_variable = spec["clip"][1] - spec["clip"][0], f"ACS {var}"
            hi = qp_slider("Clip values to at most (public)", "strat_cliphi", float(spec["step"]), spec["clip_max"],
                           spec["clip"][1], spec["step"], container=c2,
                           help="Chosen without looking at the data. Values above are set to this; below 0 set to 0.")
            clip, prior, value_label = (0.0, float(hi)), tuple(spec["prior"]), var
            recipe = dict(source="acs", variable=var, grouping=grouping, seed=seed())
            data = _recipe_data(recipe_key_text(recipe), recipe)
            st.caption(views.acs_caption(spec))
        elif source == DATA_SOURCES[3]:
            ds = current_dataset()
            cols = [] if ds.frame is None else [str(c) for c in ds.frame.columns if str(c) != ds.column]
            if not cols:
                st.info(f"The sidebar dataset ({ds.name}) has no other columns to group by. Choose a file with group "
                        "columns in the sidebar (a real survey file or your own upload).")
            else:
                g1 = qp_selectbox("Group by", "strat_col1", cols, container=c1)
                g2 = qp_selectbox("… and by", "strat_col2", [NONE] + [c for c in cols if c != g1], NONE, container=c1)
                hi = common.qp_number("Clip values to at most (public)", "strat_cliphi_ds", 200_000.0, min_value=1.0,
                                      max_value=1e12, container=c2,
                               help="Choose it without looking at the data (e.g. a published top-code).")
                sig = common.qp_number("Public guess of the standard deviation σ (CoinPress)", "strat_sigma_ds",
                                       float(hi) / 4, min_value=1e-9, max_value=1e12, container=c2)
                clip, prior, value_label = (0.0, float(hi)), (0.0, float(hi)), ds.column
                target_variable = f"{ds.name}: {ds.column}"
                if ds.confidential:
                    st.warning(views.CONFIDENTIAL_WARNING)
                recipe = dict(source="columns", columns=[g1] if g2 == NONE else [g1, g2], sigma=float(sig), seed=seed())
                data = _column_data(ds.values, ds.frame, recipe)
                try:  # the script rebuilds the sidebar's data from its recipe
                    recipe = dict(recipe, dataset=recipe_from_key(repro.dataset_key()))
                except (TypeError, ValueError):
                    pass
                data_key = f"{ds.name}|{ds.n}|{float(ds.values.sum())!r}"
                st.caption(views.columns_caption(ds.name))
        else:
            n = qp_select_slider("Number of people n", "strat_n", [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000,
                                                                     196_967], 10_000, container=c1)
            if source == DATA_SOURCES[1]:
                k = qp_slider("Number of groups k", "strat_k", 2, 40, 9, container=c1)
                alpha = qp_select_slider("Dirichlet α (group-size spread)", "strat_alpha",
                                         [0.05, 0.1, 0.13, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0], 0.3, container=c1,
                                         help="Small α: one or two big groups and many tiny ones. Large α: similar sizes.")
                preset = None
            else:
                preset = qp_selectbox("Group sizes", "strat_preset", list(strat_experiments.PRESETS), container=c1)
                k, alpha = len(strat_experiments.PRESETS[preset]), 1.0
            bound = qp_slider("Bound R on group means (public)", "strat_R", 1.0, 10.0, 3.0, 0.5, container=c2,
                              help="Laplace clips at ±(R + √(ln|G|/γ)), γ = 0.1 (paper Eq. 3); CoinPress starts from "
                                   "[−R, R].")
            clip, prior = float(bound), (-float(bound), float(bound))
            target_range = 6.0  # the bound R's default range, [-3, 3]
            recipe = dict(source="synthetic", n=int(n), k=int(k), alpha=float(alpha), preset=preset, seed=seed())
            data = _recipe_data(recipe_key_text(recipe), recipe)
            st.caption(views.SYNTHETIC_CAPTION)
    target_error, target_confidence = answer_views.group_means_target_controls(
        answer_box, clip_range=target_range, variable=target_variable)
    if data is not None and isinstance(clip, tuple):
        with answer_text, guard("the answer"):
            answer_key = data_key + recipe_key_text(recipe)
            answer_views.statistic_answer(_answer_sentence(answer_key, data, clip, float(epsilon)),
                                          _recommendation(answer_key, data, clip, target_error, target_confidence),
                                          answer_text)
            answer_text.caption("Stratified Laplace: each group's mean gets its own noise (the method of the table below).")
    else:
        answer_text.caption("The answer sentence needs values clipped to a public range: choose the ACS excerpt or "
                            "the sidebar dataset.")
    settings = dict(epsilon=float(epsilon), clip=clip, prior=list(prior), clamp=bool(clamp), method=method, seed=seed(),
                    match="epsilon_delta")  # every method (ε, δ)-DP
    data_key = json.dumps(recipe, sort_keys=True, default=str) + data_key

    # One view per run (a URL-backed choice, so a link opens the same view); rendering only the chosen
    # view keeps slider reruns fast.
    view = common.qp_radio("View shown below", "strat_view", sections.VIEWS, horizontal=True)  # a visible label (3.3.2)
    st.divider()

    if view == sections.GROUP_MEANS.heading and data is not None:
        with guard("the group means"):
            result = _group_means(data_key, json.dumps(settings, sort_keys=True), data, settings)
            views.group_means(result, value_label=value_label,
                              memo_key=(data_key, json.dumps({k_: v for k_, v in settings.items() if k_ != "method"})),
                              fixed_axes=common.qp_toggle("Fixed axes (compare ε by eye)", "strat_fixed_axes", False,
                                                          help="The y axis spans the public range, whatever the draws."))

    elif view == sections.TRENDS.heading:
        st.markdown(views.TRENDS_TEXT)
        sweep = qp_selectbox("Experiment", "strat_sweep", list(views.SWEEP_LABELS))
        runs = qp_slider("Runs per point", "strat_runs", 5, 50, 20, 5)
        experiment, x_title, log_x = views.SWEEP_LABELS[sweep]
        grid = strat_experiments.SWEEPS[experiment][1]
        st.caption(views.coinpress_budgets(grid if experiment in ("epsilon", "acs_eps") else [float(epsilon)]))
        if experiment in ("acs", "acs_eps"):
            trend = dict(variable=qp_selectbox("ACS variable", "strat_sweepvar", list(strat_experiments.ACS_VARIABLES)))
        else:  # the synthetic model's settings from the controls above (n capped at 20,000 by trend_view)
            synthetic = source in DATA_SOURCES[1:3]
            trend = dict(n=int(st.session_state.get("strat_n", 10_000)) if synthetic else 10_000,
                         k=int(st.session_state.get("strat_k", 9)), alpha=float(st.session_state.get("strat_alpha", 0.3)),
                         R=float(st.session_state.get("strat_R", 3.0)))
        trend.update(experiment=experiment, runs=int(runs), seed=seed(), clamp=bool(clamp), epsilon=float(epsilon))
        result = common.run_on_button("Run experiment", "strat_run", lambda: views.with_progress(
            lambda progress: strat_experiments.trend_view(**trend, progress=progress)), what="the experiment",
            state_key="strat_sweep:" + json.dumps(trend, sort_keys=True), type="primary")
        if result is None:
            st.info("Press **Run experiment** (takes a few seconds; a progress bar shows how far it is).")
        else:
            views.trends(result, x_title=x_title, log_x=log_x)

    elif view == sections.THEORY.heading:
        st.markdown(views.THEORY_TEXT)
        t1, t2 = st.columns(2)
        tn = common.qp_number("n", "strat_thn", 196_967, min_value=2, max_value=10_000_000, step=1000, container=t1)
        tk = common.qp_number("k", "strat_thk", 9, min_value=2, max_value=100, step=1, container=t2)
        with guard("the bounds"):
            views.bounds(_bounds(int(tn), int(tk)))

    elif view == sections.ACCOUNTING.heading:
        with guard("the accounting"):
            views.accounting(strat_experiments.accounting_view(float(epsilon), data.k if data is not None else 9))

    elif view == sections.SYNTHETIC.heading:
        st.markdown(views.SYNTHESIZER_TEXT)
        st.caption(views.SYNTHESIZER_CAPTION)
        syn_runs = qp_slider("Runs per ε", "strat_synruns", 1, 10, 3, 1)
        result = common.run_on_button("Run synthesizers", "strat_synrun", lambda: views.with_progress(
            lambda progress: strat_experiments.synthesizer_view(runs=int(syn_runs), seed=seed(), progress=progress)),
            what="the synthetic data", state_key=f"strat_synth:{syn_runs}:{seed()}")
        if result is None:
            st.info("Press **Run synthesizers** (a few seconds).")
        else:
            views.synthesizer(result)

    # ---- Share or reproduce: the group-means view as one dpcore call ---------------------------------
    st.divider()
    if data is not None:
        script = views.memo(("script", data_key, json.dumps(settings)), lambda: repro.view_script_for(
            "dpcore.views.stratified", "group_means_view", dict(data=recipe, **settings),
            title="Group means and parity", dataset_recipe=("none",), data_arg=None))
        repro.share_panel("stratified", script=script, note=views.SCRIPT_NOTE)
    else:
        st.markdown("#### Share or reproduce this view")
        st.caption("Every choice on this page is kept in the address bar: this link opens the same view.")
        st.code(repro.current_link("stratified"), language=None, wrap_lines=True)


_page_body()
