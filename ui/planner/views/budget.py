"""Budget first: one ε slider per statistic splitting the total, and the accuracy each statistic reaches with it.

The allocation (one ε per chosen statistic, summing to the total) lives in ``st.session_state["_planner_alloc"]``
and in the URL (``planner_alloc``); the sliders ``planner_eps_<kind>`` always show it
(:func:`ui.planner.plan_state.allocation` re-syncs them whenever the allocation is rebuilt, e.g. after a statistic
was removed). Moving one slider rebalances the unlocked others (:func:`dpcore.planner.rebalance`), so the total
stays fixed; the callbacks here only store what dpcore computes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import planner
from dpcore.views.planner import BudgetFirstView
from ui.common import download_csv, show_figure
from ui.planner.plan_state import ALLOC_KEY, EPS_SLIDER_MIN, allocation, split_allocation, store_allocation
from ui.planner.views.rendering import (
    INTERVAL_COLUMN,
    INTERVAL_NOTE,
    figure,
    interval_text,
    remembered,
    render_cost,
    show_failures,
    widths_by_statistic,
)


def on_total_change(kinds: list[str]) -> None:
    """Callback of the total-epsilon slider: re-split the total, keeping locked statistics."""
    total = float(st.session_state["planner_total"])
    alloc = st.session_state.get(ALLOC_KEY)
    if alloc is None or list(alloc) != list(kinds):
        alloc = {k: 1.0 for k in kinds}
    store_allocation(kinds, split_allocation(kinds, alloc, total), total)


def _on_slider(kind: str, kinds: list[str]) -> None:
    alloc = st.session_state[ALLOC_KEY]
    total = float(st.session_state["planner_total"])
    current = [alloc[k] for k in kinds]
    locked = [i for i, k in enumerate(kinds) if st.session_state.get(f"planner_lock_{k}")]
    try:
        new = planner.rebalance(
            current,
            kinds.index(kind),
            float(st.session_state[f"planner_eps_{kind}"]),
            locked,
            total=total,
            floor=EPS_SLIDER_MIN,
        )
    except ValueError as exc:
        st.session_state["_planner_alloc_error"] = str(exc)
        new = np.asarray(current, dtype=float)
    store_allocation(kinds, dict(zip(kinds, map(float, new), strict=True)), total)


def budget_sliders(kinds: list[str], total: float) -> dict[str, float]:
    """One epsilon slider (and a lock) per statistic; returns the allocation they show."""
    st.markdown(
        "Split the **total ε** above. Move one statistic's slider and the others rebalance (in proportion "
        "to their current shares) so the total stays fixed; lock a statistic to keep its ε. The accuracy "
        "of each statistic updates at its own confidence level."
    )
    allocation(kinds, total)
    err = st.session_state.pop("_planner_alloc_error", None)
    if err:
        st.warning(f"Could not move that slider: {err}")
    for kind in kinds:
        c1, c2 = st.columns([4, 1])
        c2.checkbox("lock", key=f"planner_lock_{kind}", help="Keep this ε when others move.")
        c1.slider(
            f"ε for {planner.STAT_KINDS[kind]}",
            min_value=EPS_SLIDER_MIN,
            max_value=float(total),
            step=0.001,
            format="%.3f",
            key=f"planner_eps_{kind}",
            on_change=_on_slider,
            args=(kind, list(kinds)),
        )
    return dict(st.session_state[ALLOC_KEY])


def budget_frame(view: BudgetFirstView) -> pd.DataFrame:
    widths = widths_by_statistic(view.interval_widths)
    return pd.DataFrame(
        [
            {
                "statistic": r.statistic,
                "epsilon": r.epsilon,
                "relative_error_percent": 100 * r.relative_error,
                "error within ±": (
                    f"{r.abs_error:.4f} Gini points"
                    if r.abs_error is not None
                    else f"{100 * r.relative_error:.3g}% of the value"
                ),
                "confidence_percent": 100 * r.confidence,
                "privacy cost": r.cost,
                INTERVAL_COLUMN: interval_text(widths.get(r.statistic)),
            }
            for r in view.rows
        ]
    )


def render_budget(view: BudgetFirstView) -> None:
    show_failures(view.failures)
    if not view.rows:
        return
    frame = remembered("budget_frame", view, lambda: budget_frame(view))
    show_figure(figure("fig_budget", view, frame), width="stretch")
    render_cost(view.cost)
    st.markdown(INTERVAL_NOTE)
    st.dataframe(
        frame.drop(columns=["relative_error_percent"]).rename(columns={"confidence_percent": "with probability %"}),
        hide_index=True,
        width="stretch",
    )
    download_csv(frame, "Download the split (CSV)", "planner_budget_first.csv", key="planner_dl_budget")
