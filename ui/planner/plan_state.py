"""The planner page's session state that Plan and Release mode share: the total ε and its budget-first split,
the accuracy-first plan remembered with the data it was solved on, the release protocol's keys, and the app's
negative-income rule. Below both modes' modules (views, choices, accounts, release_panel), so none imports another
mode's renderers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import streamlit as st

from dpcore import planner
from ui.common import write_url_value

if TYPE_CHECKING:
    from dpcore.views.planner import AccuracyFirstView, HalfWidthView

__all__ = [
    "TOTAL_KEY",
    "TOTAL_START",
    "TOTAL_RANGE",
    "EPS_SLIDER_MIN",
    "ALLOC_KEY",
    "PLAN_KEY",
    "PLAN_TARGETS_KEY",
    "PLAN_SOURCE_KEY",
    "store_allocation",
    "allocation",
    "split_allocation",
    "remember_plan",
    "plan_solved_on_confidential",
    "CONFIDENTIAL_PLAN_NOTE",
    "app_negative_incomes",
    "RELEASE_COUNTER",
    "RELEASE_REQUEST",
    "RELEASE_OUTCOME",
]


#: the total-ε slider of Plan mode: key, start, range (Release mode's ε fields start from its split)
TOTAL_KEY, TOTAL_START, TOTAL_RANGE = "planner_total", 2.0, (0.05, 20.0)

#: the smallest ε of a statistic's slider in Plan mode (the allocation itself may be smaller)
EPS_SLIDER_MIN = 0.001

ALLOC_KEY = "_planner_alloc"


#: the last accuracy-first plan (kind -> smallest ε); ui.planner.release_panel starts from it
PLAN_KEY = "_planner_plan"


#: the accuracy target of each planned statistic (kind -> text): what its planned ε buys (the release memo)
PLAN_TARGETS_KEY = "_planner_plan_targets"


#: which data the last accuracy-first plan was solved on ({"confidential": bool, "name": str}). An ε solved on
#: the confidential file is a function of its records, not a DP output (the audit's neighbouring files gave
#: 7.977 and 7.844), so Release mode and the plan file never start from it and the memos mark it; an ε solved
#: on public or synthetic data may start them.
PLAN_SOURCE_KEY = "_planner_plan_source"


def store_allocation(kinds: list[str], alloc: dict[str, float], total: float, *, equal_split: bool = False) -> None:
    st.session_state[ALLOC_KEY] = alloc
    for kind, value in alloc.items():  # the slider shows the value inside its range; the allocation stays exact
        st.session_state[f"planner_eps_{kind}"] = float(min(max(value, EPS_SLIDER_MIN), total))
    text = ",".join(f"{k}:{alloc[k]:.6g}" for k in kinds)
    write_url_value("planner_alloc", text, is_default=equal_split)  # a link without it: the equal split


def _from_url(kinds: list[str]) -> dict[str, float] | None:
    raw = st.query_params.get("planner_alloc")
    if not raw:
        return None
    try:
        pairs = dict(p.split(":") for p in raw.split(","))
        alloc = {k: float(pairs[k]) for k in kinds}
    except (ValueError, KeyError):
        return None
    return alloc if all(v > 0 for v in alloc.values()) else None


def allocation(kinds: list[str], total: float) -> dict[str, float]:
    """The budget-first split of ``total`` over ``kinds``: session state, else the URL, else an equal
    split; rescaled (locks kept) when it does not sum to ``total``. Every rebuild goes through
    :func:`store_allocation`, so the sliders show the very epsilons the table and chart use."""
    stored: dict[str, float] | None = st.session_state.get(ALLOC_KEY)
    rebuilt = stored is None or list(stored) != list(kinds)
    equal_split = False
    alloc = None if rebuilt else stored
    if alloc is None:
        alloc = _from_url(kinds)
        if alloc is None:
            alloc, equal_split = {k: total / len(kinds) for k in kinds}, True
    if abs(sum(alloc.values()) - total) > 1e-6 * total:
        alloc = split_allocation(kinds, alloc, total)
        rebuilt = True
    if rebuilt or any(st.session_state.get(f"planner_eps_{k}") is None for k in kinds):
        store_allocation(kinds, alloc, total, equal_split=equal_split)
    return dict(alloc)


def split_allocation(kinds: list[str], alloc: dict[str, float], total: float) -> dict[str, float]:
    locked = {i: alloc[k] for i, k in enumerate(kinds) if st.session_state.get(f"planner_lock_{k}")}
    try:
        new = planner.split_budget(total, [alloc[k] for k in kinds], locked)
    except ValueError as exc:
        st.session_state["_planner_alloc_error"] = f"{exc}; the locks were ignored for this change"
        new = planner.split_budget(total, [alloc[k] for k in kinds])
    return dict(zip(kinds, map(float, new), strict=True))


def remember_plan(view: AccuracyFirstView | HalfWidthView, *, confidential: bool = True, data_name: str = "") -> None:
    """Keep the accuracy-first plan (kind -> smallest ε, and its target) for Release mode and the plan file,
    with the data it was solved on (``confidential``: the sidebar's file is confidential; unknown counts as
    confidential, so a forgotten argument never lets a data-derived ε start a release)."""
    st.session_state[PLAN_KEY] = {row.kind: float(row.epsilon) for row in view.rows}
    st.session_state[PLAN_TARGETS_KEY] = {row.kind: row.target for row in view.rows}
    st.session_state[PLAN_SOURCE_KEY] = {"confidential": bool(confidential), "name": str(data_name)}


def plan_solved_on_confidential() -> bool:
    """True when this session's accuracy-first plan was solved on a confidential file (or its data are unknown)."""
    source = st.session_state.get(PLAN_SOURCE_KEY)
    return bool(st.session_state.get(PLAN_KEY)) and (source is None or bool(source.get("confidential", True)))


#: said wherever an ε solved on the confidential file would otherwise be used or shown as public
CONFIDENTIAL_PLAN_NOTE = (
    "Your accuracy-first ε were solved on the **confidential file**: each is a function of its "
    "records (not a DP output), so publishing one leaks information about the people in it. "
    "They are not copied into the release: type the ε you decide on (a round, public choice), "
    "or plan on the synthetic look-alike, whose ε may be used as they are."
)


#: the sidebar's negative-income choice for each data source kind (ui.sidebar: "data_neg" for an upload,
#: "data_shared_neg" for the bundled shared tables) and what it starts as there
_NEGATIVE_CHOICE = {"upload": ("data_neg", "refuse"), "shared": ("data_shared_neg", "drop")}


def app_negative_incomes(dataset: Any) -> str:
    """The negative-income rule the app used for ``dataset`` (the sidebar's choice: refuse, drop or clip), the
    plan's ``negative_incomes``: the command line then treats the full data's negatives as the app did (it
    refuses them unless the plan says). Data without the choice (synthetic, examples) have no negatives."""
    key, default = _NEGATIVE_CHOICE.get(getattr(dataset, "source", ""), (None, "refuse"))
    if key is None:
        return "refuse"
    value = st.session_state.get(key, st.query_params.get(key, default))
    return value if value in ("refuse", "clip", "drop") else default


#: session keys of the one-click-one-charge protocol (see ui.planner.release_panel's docstring)
RELEASE_COUNTER = "_planner_release_counter"


RELEASE_REQUEST = "_planner_release_request"


RELEASE_OUTCOME = "_planner_release_outcome"
