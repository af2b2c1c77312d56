"""Choose epsilon before a release: accuracy first, budget first, what epsilon means, share; real release.

Thin page: controls -> one cached view call of ``dpcore.views.planner`` -> renderers in
``ui.planner.views`` (figures in ``ui.planner.plots``); Release mode is ``ui.planner.release_panel``.
Only the chosen view is computed and drawn. The main ε slider and the views are an ``st.fragment``:
moving the slider reruns only them. The Gini's smooth-sensitivity noise is a setting
(``dpcore.noise.smooth.SMOOTH_NOISES``); each view states the plan's cost in its currency.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from dpcore import planner as planner_lib
from dpcore.views import planner as planner_experiments
from ui import margins, private_source, repro
from ui.common import guard, mark_downloads, privacy_note, qp_radio, qp_slider, seed
from ui.data_note import data_note
from ui.planner import plan_state, sections, views
from ui.planner.choices import release_allocation
from ui.planner.release_panel import release_panel
from ui.sidebar import current_dataset

PLAN = "Plan: choose ε on planning data"
RELEASE = "Release: make the real release (spends budget)"
DEFAULT_KINDS = ["gini", "percentiles", "group_means", "ratio"]
VIEWS = list(sections.VIEWS)


@st.cache_resource(show_spinner=False, max_entries=32)
def _stat(kind: str, params: tuple, token: str, _values: np.ndarray, _groups: np.ndarray | None):
    # cache_resource: the same object across reruns, so its internal per-epsilon caches persist
    return planner_lib.make_statistic(kind, _values, _groups, **dict(params))


def _stats(specs: tuple, token: str) -> tuple:
    return tuple(_stat(s.kind, s.params, token, values, groups) for s in specs)


@st.cache_data(
    show_spinner="Solving for the smallest ε... (a light-tailed Gini noise: up to ~20 s the first time)",
    max_entries=128,
)
def _accuracy(specs: tuple, token: str, dots_seed: int) -> planner_experiments.AccuracyFirstView:
    return planner_experiments.accuracy_first(_stats(specs, token), specs, dots_seed=dots_seed)


@st.cache_data(
    show_spinner="Solving for the smallest ε of each interval... (the Gini: up to ~30 s the first time)",
    max_entries=128,
)
def _half_width(specs: tuple, token: str, targets: tuple) -> planner_experiments.HalfWidthView:
    return planner_experiments.half_width_first(_stats(specs, token), specs, targets)


def _plan(
    specs: tuple, half_widths: dict | None
) -> planner_experiments.AccuracyFirstView | planner_experiments.HalfWidthView:
    """Accuracy first's plan: the relative-error targets, or the half-widths when Accuracy first states them so."""
    if half_widths is None:
        return _accuracy(specs, token, seed())
    return _half_width(specs, token, planner_experiments.half_width_targets(half_widths, specs))


@st.cache_data(show_spinner=False, max_entries=256)
def _budget(specs: tuple, token: str, allocation: tuple) -> planner_experiments.BudgetFirstView:
    # the Gini's interval width needs its split optimised at each ε (seconds): shown in Accuracy first only
    return planner_experiments.budget_first(_stats(specs, token), specs, allocation, interval_skip=("gini",))


@st.cache_data(show_spinner=False, max_entries=64)
def _belief(epsilon: float, prior: float) -> planner_experiments.AttackerBeliefView:
    return planner_experiments.attacker_belief(epsilon, prior)


st.title("Choose ε before a release")
st.markdown(
    "Say how accurate each statistic must be: the page answers with the **smallest ε** that achieves it "
    "(right below). Settings, other views and the real release follow; the total ε is the privacy-loss "
    "budget: smaller hides each person better but adds more noise."
)

ds = current_dataset()
values = np.asarray(ds.values, dtype=float)
mode = qp_radio("What do you want to do?", "planner_mode", [PLAN, RELEASE], PLAN, horizontal=True)
confidential = bool(ds.confidential)  # Plan mode on an upload: True unless planned on a DP snapshot
summary = views.dataset_summary(ds)
# The answer comes first (a new user sees the plan's total ε on the first screen, 1280x720); the
# settings it depends on are read below it, into containers drawn further down the page.
answer_area = st.container()
settings_area = st.container()
release_area = st.container()  # Release mode: after the statistics it releases
about_area = st.container()
with about_area:
    data_note(uses_sidebar=True)
    st.markdown(
        "**How this page helps, in four steps:** "
        "**(1) accuracy first** — say how accurate each statistic must be and get the smallest ε that achieves it; "
        "**(2) budget first** — fix a total ε, split it, and see the accuracy you get; "
        "**(3) what ε means for a person** — how much an attacker could learn; "
        "**(4) release** — make the real release from the confidential file and keep a ledger of the budget spent."
    )
    privacy_note(
        "two datasets that differ by replacing one person's record; the number of records n (and the size of each "
        "group or cell) stays the same. A statistic computed separately on disjoint groups or cells costs ε once "
        "(parallel composition); different statistics on the same people add up (sequential composition).",
        "n and the group/cell sizes, the bounds and clip ranges, the PSEO bin edges, the accuracy targets and the "
        "ε values chosen here. Planning numbers computed on confidential data are not protected.",
    )

with settings_area:
    kinds = views.qp_multiselect(
        "Statistics in the planned release",
        "planner_stats",
        list(planner_lib.STAT_KINDS),
        DEFAULT_KINDS,
        format_func=planner_lib.STAT_KINDS.get,
        help="Each statistic is released once; their ε add up (sequential composition).",
    )
    if not kinds:
        st.info("Choose at least one statistic to plan.")
        st.stop()
    needs_groups = any(k in planner_experiments.GROUPED_KINDS for k in kinds)
    # a confidential upload in Plan mode: privately on a DP snapshot (publishable), or the raw file (confidential)
    choice = private_source.source_choice(ds) if mode == PLAN else None
    groups, token, group_labels, group_column = views.choose_groups(
        ds, values, kinds, seed(), data_notes=choice != private_source.PRIVATE
    )
    if choice is not None:
        source = private_source.planning_source(
            ds, choice, values, groups, group_labels, token, group_column, summary, seed()
        )
        if source is None:
            st.stop()
        values, groups, token, group_labels = source.values, source.groups, source.token, source.labels
        confidential, summary = source.confidential, source.summary
    # the tables, memo and script computed from a confidential file's records say so, in their names too
    mark_downloads("confidential" if confidential and mode == PLAN else None)  # Release mode's files are DP outputs
    specs = views.statistic_settings(
        kinds,
        group_labels,
        seed(),
        expanded=False,
        gini_of=lambda params: float(_stat("gini", tuple(sorted(params.items())), token, values, groups).truth[0]),
    )
spec_of = {s.kind: s for s in specs}


def _key(kind: str) -> tuple:
    return spec_of[kind].params


def _statistic(kind: str) -> planner_lib.PlannedStatistic:
    return _stat(kind, _key(kind), token, values, groups)


# =============================================================================================
# PLAN mode: the main ε slider and one view at a time (only the chosen view is computed). An
# st.fragment: moving the slider or a view's controls reruns only this part.
# =============================================================================================
@st.fragment
def plan_views() -> None:
    total = float(
        qp_slider(
            "Total ε you can afford for the whole release",
            plan_state.TOTAL_KEY,
            *plan_state.TOTAL_RANGE,
            plan_state.TOTAL_START,
            0.05,
            on_change=views.on_total_change,
            args=(list(kinds),),
            help="Budget first splits it; accuracy first compares the plan's total with it.",
        )
    )
    view = qp_radio("View", "planner_view", VIEWS, VIEWS[0], horizontal=True)
    if view == VIEWS[0]:
        half_widths = views.half_width_choice(list(kinds))
        with guard("the accuracy-first plan"):
            if half_widths is None:
                views.render_accuracy(_accuracy(specs, token, seed()), total, summary, confidential=confidential)
            else:
                targets = planner_experiments.half_width_targets(half_widths, specs)
                views.render_half_width(_half_width(specs, token, targets), total, summary, confidential=confidential)
    elif view == VIEWS[1]:
        alloc = views.budget_sliders(kinds, total)
        with guard("the budget-first accuracy"):
            views.render_budget(_budget(specs, token, tuple(float(alloc[k]) for k in kinds)))
        for kind in [k for k in ("percentiles", "group_medians") if k in kinds][:1]:  # what margins cost and give
            margins.margins_panel(float(alloc[kind]), key="planner_margins")
    elif view == VIEWS[2]:
        epsilon, prior = views.risk_controls()
        with guard("the attacker's belief"):
            views.render_risk(_belief(epsilon, prior))
    else:
        alloc = plan_state.allocation(kinds, total)
        half_widths = views.remembered_half_widths(list(kinds))
        with guard("the accuracy-first plan"):  # the plan file carries the accuracy-first ε, as Release mode
            plan_state.remember_plan(_plan(specs, half_widths), confidential=confidential, data_name=ds.name)
        if ds.confidential and not confidential:  # the script recomputes on the file itself: not the snapshot's
            st.caption(
                "The reproducible script recomputes everything from the file itself, so it is offered only "
                "when exploring the raw file (confidential); the plan file below is publishable."
            )
        else:
            _share_script(specs, group_column, alloc, half_widths)
        with guard("the release plan"):  # the plan file for `python -m dpcore release` (docs/plan_format.md)
            views.release_plan_download(kinds, specs, _statistic, alloc, ds, group_column, total)


def _share_script(specs: tuple, group_column: str | None, alloc: dict, half_widths: dict | None) -> None:
    kwargs, data_arg = views.script_settings(specs, ds, group_column, seed(), alloc, half_widths)
    repro.share_panel(
        "planner",
        script=repro.view_script_for(
            "dpcore.views.planner", "planner_view", kwargs, title="Choose epsilon (planner)", data_arg=data_arg
        ),
        note="It prints the smallest ε per statistic (for your half-widths too, if Accuracy first states them), "
        "the total, and the budget-first accuracy.",
    )


if mode == PLAN:
    with answer_area:
        plan_views()
else:  # RELEASE mode (durable ledger); what the chosen Gini noise implies is said first
    with release_area:
        if views.release_refusal(specs):
            st.warning(views.release_refusal(specs))
        elif views.release_delta_note(specs):
            st.info(views.release_delta_note(specs))
        release_panel(
            ds,
            kinds,
            _statistic,
            release_allocation(kinds),
            group_column=group_column,
            random_groups=needs_groups and group_column is None,
            statistic_params=lambda kind: dict(_key(kind)),
        )
