"""The stratified page's cached calls, its data controls and the views beyond the group means (trends and the
synthesizers): the page (``app_pages/stratified.py``) reads the controls and calls these; the renderers are
:mod:`ui.stratified.views`."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from dpcore.data import recipe_from_key
from dpcore.views import answers as answer_experiments
from dpcore.views import stratified as strat_experiments
from ui import common, private_source, repro
from ui.common import guard, qp_select_slider, qp_selectbox, qp_slider, seed
from ui.stratified import views

DATA_SOURCES = (
    "ACS 2019 excerpt",
    "Synthetic mixture (paper's model)",
    "Paper's NY group sizes",
    "Sidebar dataset (choose grouping columns)",
)
NONE = "(none)"


# cache_resource: one shared GroupedData per recipe (read only), so its group index is built once and a
# rerun does not unpickle a copy of the data
@st.cache_resource(show_spinner=False, max_entries=16)
def recipe_data(recipe_text: str, _recipe: dict) -> strat_experiments.GroupedData:
    """Keyed by the recipe's JSON text (a dict costs Streamlit ~0.5 ms to hash per call)."""
    return strat_experiments.grouped_data(_recipe)


@st.cache_resource(show_spinner=False, max_entries=8)
def column_data(values, frame, recipe: dict) -> strat_experiments.GroupedData:
    return strat_experiments.grouped_data(recipe, values=values, frame=frame)


# cache_resource: one shared view object per setting (read only), not a pickled copy per rerun
@st.cache_resource(show_spinner=False, max_entries=32)
def group_means(data_key: str, settings_text: str, _data: strat_experiments.GroupedData, _settings: dict):
    return strat_experiments.group_means_view(_data, **_settings)


@st.cache_resource(show_spinner=False, max_entries=16)
def answer_statistic(data_key: str, _data, clip: tuple):
    """The answer's planner statistic, once per data and clip range (shared, never mutated)."""
    return strat_experiments.group_means_answer_statistic(_data.values, _data.groups, clip=clip)


@st.cache_data(show_spinner=False, max_entries=64)
def answer_sentence(data_key: str, _data, clip: tuple, epsilon: float):
    """The answer sentence at the slider's ε (group_means_answer's first half, the same numbers)."""
    return strat_experiments.group_means_answer_at_epsilon(answer_statistic(data_key, _data, clip), epsilon=epsilon)


@st.cache_data(show_spinner=False, max_entries=32)
def recommendation(data_key: str, _data, clip: tuple, target: float, confidence: float, max_epsilon: float):
    """The recommended ε (group_means_answer's second half, the same numbers): independent of the ε slider."""
    return answer_experiments.group_means_recommendation(
        answer_statistic(data_key, _data, clip), target_error=target, confidence=confidence, max_epsilon=max_epsilon
    )


def recipe_key_text(recipe) -> str:
    return json.dumps(recipe, sort_keys=True, default=str)


@st.cache_data(show_spinner=False, max_entries=16)
def bounds(n: int, k: int):
    return strat_experiments.bounds_view(n, k)


@dataclass
class DataChoice:
    """The data the controls chose and what follows from them (filled as the controls are read, so a refused
    choice keeps what was read before it); ``clip`` a float: the synthetic data's bound R."""

    source: str
    data: strat_experiments.GroupedData | None = None
    recipe: dict | None = None
    clip: tuple[float, float] | float | None = None
    prior: tuple = (-3.0, 3.0)
    value_label: str = "value"
    data_key: str = ""
    target_range: float = 200_000.0  # the variable's default clip range: its target's start
    target_variable: str = field(default="")
    on_snapshot: bool = False  # the sidebar upload's DP snapshot: publishable, and no script (it reads the file)


def data_controls(source: str, c1: Any, c2: Any, sidebar_dataset: Callable[[], Any]) -> DataChoice:
    """Draw the controls of the chosen data ``source`` (in columns ``c1``, ``c2``) and build its grouped data;
    ``sidebar_dataset`` (the page's data of the sidebar, :func:`ui.private_source.page_data`: an upload's records
    or its DP snapshot's; None while the snapshot waits for its confirmation) is called for the sidebar source
    only."""
    chosen = DataChoice(source, target_variable=source)
    with guard("the data"):
        if source == DATA_SOURCES[0]:
            var = qp_selectbox("Variable", "strat_var", list(strat_experiments.ACS_VARIABLES), container=c1)
            grouping = qp_selectbox("Groups", "strat_grp", list(strat_experiments.ACS_GROUPINGS), container=c1)
            spec = strat_experiments.ACS_VARIABLES[var]
            chosen.target_range, chosen.target_variable = spec["clip"][1] - spec["clip"][0], f"ACS {var}"
            hi = qp_slider(
                "Clip values to at most (public)",
                "strat_cliphi",
                float(spec["step"]),
                spec["clip_max"],
                spec["clip"][1],
                spec["step"],
                container=c2,
                help="Chosen without looking at the data. Values above are set to this; below 0 set to 0.",
            )
            chosen.clip, chosen.prior, chosen.value_label = (0.0, float(hi)), tuple(spec["prior"]), var
            chosen.recipe = dict(source="acs", variable=var, grouping=grouping, seed=seed())
            chosen.data = recipe_data(recipe_key_text(chosen.recipe), chosen.recipe)
            st.caption(views.acs_caption(spec))
        elif source == DATA_SOURCES[3] and (ds := sidebar_dataset()) is not None:
            _sidebar_columns(chosen, ds, c1, c2)
        else:
            n = qp_select_slider(
                "Number of people n",
                "strat_n",
                [1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000, 196_967],
                10_000,
                container=c1,
            )
            if source == DATA_SOURCES[1]:
                k = qp_slider("Number of groups k", "strat_k", 2, 40, 9, container=c1)
                alpha = qp_select_slider(
                    "Dirichlet α (group-size spread)",
                    "strat_alpha",
                    [0.05, 0.1, 0.13, 0.2, 0.3, 0.5, 0.7, 1.0, 2.0, 5.0, 10.0],
                    0.3,
                    container=c1,
                    help="Small α: one or two big groups and many tiny ones. Large α: similar sizes.",
                )
                preset = None
            else:
                preset = qp_selectbox("Group sizes", "strat_preset", list(strat_experiments.PRESETS), container=c1)
                k, alpha = len(strat_experiments.PRESETS[preset]), 1.0
            bound = qp_slider(
                "Bound R on group means (public)",
                "strat_R",
                1.0,
                10.0,
                3.0,
                0.5,
                container=c2,
                help="Laplace clips at ±(R + √(ln|G|/γ)), γ = 0.1 (paper Eq. 3); CoinPress starts from [−R, R].",
            )
            chosen.clip, chosen.prior = float(bound), (-float(bound), float(bound))
            chosen.target_range = 6.0  # the bound R's default range, [-3, 3]
            chosen.recipe = dict(source="synthetic", n=int(n), k=int(k), alpha=float(alpha), preset=preset, seed=seed())
            chosen.data = recipe_data(recipe_key_text(chosen.recipe), chosen.recipe)
            st.caption(views.SYNTHETIC_CAPTION)
    return chosen


def _sidebar_columns(chosen: DataChoice, ds: Any, c1: Any, c2: Any) -> None:
    """The sidebar dataset ``ds`` grouped by one or two of its columns."""
    cols = [] if ds.frame is None else [str(c) for c in ds.frame.columns if str(c) != ds.column]
    if not cols and private_source.is_snapshot(ds):
        st.info(private_source.UNGROUPED_NOTE)
        return
    if not cols:
        st.info(
            f"The sidebar dataset ({ds.name}) has no other columns to group by. Choose a file with group "
            "columns in the sidebar (a real survey file or your own upload)."
        )
        return
    g1 = qp_selectbox("Group by", "strat_col1", cols, container=c1)
    g2 = qp_selectbox("… and by", "strat_col2", [NONE] + [c for c in cols if c != g1], NONE, container=c1)
    hi = common.qp_number(
        "Clip values to at most (public)",
        "strat_cliphi_ds",
        200_000.0,
        min_value=1.0,
        max_value=1e12,
        container=c2,
        help="Choose it without looking at the data (e.g. a published top-code).",
    )
    sig = common.qp_number(
        "Public guess of the standard deviation σ (CoinPress)",
        "strat_sigma_ds",
        float(hi) / 4,
        min_value=1e-9,
        max_value=1e12,
        container=c2,
    )
    chosen.clip, chosen.prior, chosen.value_label = (0.0, float(hi)), (0.0, float(hi)), ds.column
    chosen.target_variable = f"{ds.name}: {ds.column}"
    chosen.recipe = dict(source="columns", columns=[g1] if g2 == NONE else [g1, g2], sigma=float(sig), seed=seed())
    chosen.data = column_data(ds.values, ds.frame, chosen.recipe)
    chosen.on_snapshot = private_source.is_snapshot(ds)
    try:  # the script rebuilds the sidebar's data from its recipe
        chosen.recipe = dict(chosen.recipe, dataset=recipe_from_key(repro.dataset_key()))
    except (TypeError, ValueError):
        pass
    chosen.data_key = f"{ds.name}|{ds.n}|{float(ds.values.sum())!r}"
    st.caption(views.columns_caption(ds.name))


def trends_section(source: str, epsilon: float, clamp: bool) -> None:
    """How the methods' errors move with ε, n, k or α (or on the ACS variables), run on a button."""
    st.markdown(views.TRENDS_TEXT)
    sweep = qp_selectbox("Experiment", "strat_sweep", list(views.SWEEP_LABELS))
    runs = qp_slider("Runs per point", "strat_runs", 5, 50, 20, 5)
    experiment, x_title, log_x = views.SWEEP_LABELS[sweep]
    grid = strat_experiments.SWEEPS[experiment][1]
    st.caption(views.coinpress_budgets(grid if experiment in ("epsilon", "acs_eps") else [epsilon]))
    if experiment in ("acs", "acs_eps"):
        trend = dict(variable=qp_selectbox("ACS variable", "strat_sweepvar", list(strat_experiments.ACS_VARIABLES)))
    else:  # the synthetic model's settings from the controls above (n capped at 20,000 by trend_view)
        synthetic = source in DATA_SOURCES[1:3]
        trend = dict(
            n=int(st.session_state.get("strat_n", 10_000)) if synthetic else 10_000,
            k=int(st.session_state.get("strat_k", 9)),
            alpha=float(st.session_state.get("strat_alpha", 0.3)),
            R=float(st.session_state.get("strat_R", 3.0)),
        )
    trend.update(experiment=experiment, runs=int(runs), seed=seed(), clamp=clamp, epsilon=epsilon)
    result = common.run_on_button(
        "Run experiment",
        "strat_run",
        lambda: views.with_progress(lambda progress: strat_experiments.trend_view(**trend, progress=progress)),
        what="the experiment",
        state_key="strat_sweep:" + json.dumps(trend, sort_keys=True),
        type="primary",
    )
    if result is None:
        st.info("Press **Run experiment** (takes a few seconds; a progress bar shows how far it is).")
    else:
        views.trends(result, x_title=x_title, log_x=log_x)


def synthetic_section() -> None:
    """The DP synthesizers' group means against the direct releases, run on a button."""
    st.markdown(views.SYNTHESIZER_TEXT)
    st.caption(views.SYNTHESIZER_CAPTION)
    syn_runs = qp_slider("Runs per ε", "strat_synruns", 1, 10, 3, 1)
    result = common.run_on_button(
        "Run synthesizers",
        "strat_synrun",
        lambda: views.with_progress(
            lambda progress: strat_experiments.synthesizer_view(runs=int(syn_runs), seed=seed(), progress=progress)
        ),
        what="the synthetic data",
        state_key=f"strat_synth:{syn_runs}:{seed()}",
    )
    if result is None:
        st.info("Press **Run synthesizers** (a few seconds).")
    else:
        views.synthesizer(result)
