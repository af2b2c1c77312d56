"""Accuracy first (relative-error targets): the smallest ε per statistic, its table, chart, dot plots and downloads.

The view is :func:`dpcore.views.planner.accuracy_first`'s; the page draws it with :func:`render_accuracy`, which
remembers the plan for Release mode (:func:`ui.planner.plan_state.remember_plan`) and offers the decision memo
(:func:`ui.planner.views.exports.plan_memo`). The same targets stated as interval half-widths are
:mod:`ui.planner.views.half_width`.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

import pandas as pd
import streamlit as st

from dpcore.views.planner import AccuracyFirstView, StatisticDots
from ui.common import download_csv, marked_download, show_figure
from ui.planner import plots as plots_planner
from ui.planner.plan_state import remember_plan
from ui.planner.views.exports import plan_memo
from ui.planner.views.rendering import (
    INTERVAL_COLUMN,
    INTERVAL_NOTE,
    figure,
    interval_text,
    remembered,
    render_answer,
    show_failures,
    sideways_cue,
    widths_by_statistic,
)

if TYPE_CHECKING:  # the figures are built in ui.planner.plots
    import plotly.graph_objects as go


def accuracy_table(view: AccuracyFirstView) -> pd.DataFrame:
    """Every column of the accuracy-first plan (the CSV download)."""
    widths = widths_by_statistic(view.interval_widths)
    return pd.DataFrame(
        [
            {
                "statistic": r.statistic,
                "target": r.target,
                "smallest ε": r.epsilon,
                "probability met at that ε": r.achieved,
                "how it was found": r.method,
                "Monte Carlo uncertainty": r.uncertainty,
                "composition inside": r.parallel_note or "one number or a joint mechanism",
                "privacy cost": r.cost,
                INTERVAL_COLUMN: interval_text(widths.get(r.statistic)),
            }
            for r in view.rows
        ]
    )


#: the columns of the accuracy table drawn on the page (every column is in its CSV): eight columns in a
#: grid scrolled sideways even at 1920 px wide; a static table of seven wraps its text to the page's width
SHOWN_ACCURACY_COLUMNS = [
    "statistic",
    "target",
    "smallest ε",
    "probability met at that ε",
    "how it was found",
    "privacy cost",
    INTERVAL_COLUMN,
]


def shown_accuracy_table(table: pd.DataFrame) -> Any:
    """The accuracy table as drawn: six columns, numbers formatted (the values stay exact)."""
    return (
        table[SHOWN_ACCURACY_COLUMNS]
        .style.format({"smallest ε": "{:.4g}", "probability met at that ε": "{:.4f}"})
        .hide(axis="index")
    )


def render_accuracy(
    view: AccuracyFirstView, budget: float, dataset: dict[str, Any], *, confidential: bool = True
) -> None:
    """The answer first (total ε, what it means, whether it fits the budget), then the table behind it.
    ``confidential``: the plan was solved on a confidential file (remembered with it; its memo is marked)."""
    show_failures(view.failures)
    if not view.rows:
        return
    remember_plan(view, confidential=confidential, data_name=str(dataset.get("name", "")))
    table = remembered("accuracy_table", view, lambda: accuracy_table(view))
    render_answer(view, budget)
    st.markdown(
        "For each statistic, the **smallest ε** that meets its target on the planning data. Closed forms are "
        "exact; the percentiles need simulation, so their ε carries Monte Carlo uncertainty (we report the "
        "conservative end; see the CSV)."
    )
    st.markdown(INTERVAL_NOTE + sideways_cue(), unsafe_allow_html=True)
    st.table(
        remembered("accuracy_table_shown", view, lambda: shown_accuracy_table(table)),
        alt="Smallest ε meeting each statistic's target",
    )
    show_figure(
        figure("fig_epsilons", view, table.rename(columns={"smallest ε": "epsilon"}), view.total_epsilon),
        width="stretch",
    )
    download_csv(table, "Download this table (CSV)", "planner_accuracy_first.csv", key="planner_dl_acc")
    label, file_name = marked_download("Download the decision memo (HTML, works offline)", "dp_plan_memo.html")
    st.download_button(
        label,
        lambda: plan_memo(view, budget, dataset, confidential=confidential).encode(),
        file_name=file_name,
        mime="text/html",
        key="planner_dl_memo",
        help="A self-contained report of this plan for the people who approve the release.",
    )
    if view.dots:
        st.markdown(
            "**Plausible releases at the chosen ε** — each dot is 1/20 of the releases the mechanism could "
            "produce (a quantile dot plot); green dots are within the target."
        )
        frame = remembered("dots_frame", view, lambda: plots_planner.dots_frame(view.dots))
        for dots in view.dots:
            title = f"{dots.statistic} at ε = {dots.epsilon:.3g} ({100 * dots.confidence:g}% target)"
            show_figure(
                remembered("fig_quantile_dots", dots, functools.partial(_quantile_dots, frame, dots, title), title),
                width="stretch",
            )
        download_csv(frame, "Download the dot-plot data (CSV)", "planner_dots.csv", key="planner_dl_dots")


def _quantile_dots(frame: pd.DataFrame, dots: StatisticDots, title: str) -> go.Figure:
    """The dot plot of one statistic, its target in its own unit: Gini points for an absolute target (its dots
    ``errors_abs``), else % of the true value."""
    rows = frame[frame["statistic"] == dots.statistic]
    if dots.errors_abs is not None and dots.abs_error is not None:
        return plots_planner.fig_quantile_dots(rows, dots.abs_error, title, gini_points=True)
    return plots_planner.fig_quantile_dots(rows, 100 * dots.rel_error, title, gini_points=False)
