"""Accuracy first stated as the half-width of the published 95% intervals: its targets and its plan.

:func:`half_width_choice` is the choice at the top of Accuracy first (relative error, or a half-width per statistic
in its unit or in % of its value); the targets are kept in the session (:data:`HALF_WIDTHS_KEY`) so that the share
view's script and the plan file carry them (:func:`remembered_half_widths`). The plan is
:func:`dpcore.views.planner.half_width_first`'s, drawn by :func:`render_half_width` as the relative-error one.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import streamlit as st

from dpcore import planner
from dpcore.views import planner as planner_experiments
from dpcore.views.planner import HalfWidthView
from ui.common import download_csv, qp_number, qp_radio, qp_toggle, show_figure
from ui.planner.plan_state import remember_plan
from ui.planner.views.rendering import amount_text, figure, remembered, render_answer, show_failures, sideways_cue

#: how an accuracy-first target is stated (the choice at the top of Accuracy first)
RELATIVE_ERROR, HALF_WIDTH = "relative error", "interval half-width"
TARGET_MODES = [RELATIVE_ERROR, HALF_WIDTH]
#: the half-width targets of the accuracy-first view ({kind: {"half_width", "relative", "level"}}, or None in the
#: relative-error mode): the share view's script and the plan carry them
HALF_WIDTHS_KEY = "_planner_half_widths"
#: default half-widths in each statistic's unit (dpcore.views.planner.INTERVAL_UNITS) and in % of the value;
#: the percentiles' and medians' intervals are never narrower than their bins (PSEO's: about ±15% of the first
#: quartile), the relative risk's than its sampling uncertainty (about ±0.08 at n = 10,000)
HALF_WIDTH_DEFAULTS = {
    "gini": (0.01, 3),
    "mean": (1000.0, 2),
    "group_means": (1000.0, 3),
    "percentiles": (5000.0, 20),
    "group_medians": (5000.0, 15),
    "ratio": (0.1, 10),
    "count": (50.0, 5),
}
#: the unit an absolute half-width is typed in, per statistic
HALF_WIDTH_UNITS = {**planner_experiments.INTERVAL_UNITS, "gini": "Gini points, 0.01 = one point"}


def half_width_choice(kinds: list[str]) -> dict[str, dict[str, Any]] | None:
    """Accuracy first's choice of target: ``None`` for the relative error (the settings' targets), else the
    half-width of each statistic's published 95% interval, typed here ({kind: target as plain data})."""
    mode = qp_radio(
        "State each target as",
        "planner_target_mode",
        TARGET_MODES,
        RELATIVE_ERROR,
        horizontal=True,
        help="relative error: each released value within ±X% of the truth with probability Y% (set in the "
        "settings below); interval half-width: every published 95% interval at most ±X wide.",
    )
    if mode == RELATIVE_ERROR:
        st.session_state[HALF_WIDTHS_KEY] = None
        return None
    st.markdown(
        "Every released value is published with a **95% interval**: a range that anyone can compute from the "
        "published numbers and that contains the true value 95% of the time. Say how wide you can accept it, "
        "e.g. ±1,000 around a mean income; the page finds the smallest ε whose **expected** interval is that "
        "narrow (on the planning data)."
    )
    relative = qp_toggle(
        "Give each half-width as a % of the value",
        "planner_hw_relative",
        False,
        help="±X% of the statistic's value on the planning data (as every planning number).",
    )
    targets = {}
    # bottom-aligned: the labels wrap to different heights, and the fields sat at different heights under them
    columns = [column for _ in range(0, len(kinds), 4) for column in st.columns(4, vertical_alignment="bottom")]
    columns = columns[: len(kinds)]
    for column, kind in zip(columns, kinds, strict=True):
        absolute, percent = HALF_WIDTH_DEFAULTS[kind]
        label = planner.STAT_KINDS[kind]
        if relative:
            value = qp_number(
                f"{label}: ± % of the value",
                f"planner_hwp_{kind}",
                float(percent),
                min_value=0.1,
                max_value=100.0,
                step=1.0,
                container=column,
            )
            targets[kind] = {"half_width": float(value) / 100.0, "relative": True, "level": 0.95}
        else:
            value = qp_number(
                f"{label}: ± {HALF_WIDTH_UNITS[kind]}",
                f"planner_hw_{kind}",
                absolute,
                min_value=1e-6,
                max_value=1e12,
                step=absolute / 10,
                format="%g",
                container=column,
            )
            targets[kind] = {"half_width": float(value), "relative": False, "level": 0.95}
    st.session_state[HALF_WIDTHS_KEY] = targets
    return targets


def remembered_half_widths(kinds: list[str]) -> dict[str, dict[str, Any]] | None:
    """The half-width targets Accuracy first was last shown with, if they are for these statistics (else None: the
    relative-error plan)."""
    targets = st.session_state.get(HALF_WIDTHS_KEY)
    return targets if targets and list(targets) == list(kinds) else None


#: the expected half-width column of the half-width plan
HALF_WIDTH_COLUMN = "expected half-width of its 95% intervals at that ε"


def _half_width_text(row: Any) -> str:
    sol = row.solution
    text = (
        f"±{100 * sol.achieved:.3g}% of the value" if sol.target.relative else "±" + amount_text(sol.widest, sol.unit)
    )
    if len(sol.half_widths) > 1:
        text = f"up to {text} (widest of {len(sol.half_widths)})"
    return text


def half_width_table(view: HalfWidthView) -> pd.DataFrame:
    """Every column of the half-width plan (the CSV download)."""
    return pd.DataFrame(
        [
            {
                "statistic": r.statistic,
                "target": r.target,
                "smallest ε": r.epsilon,
                HALF_WIDTH_COLUMN: _half_width_text(r),
                "how it was found": r.solution.method,
                "note": r.solution.note,
                "privacy cost": r.cost,
            }
            for r in view.rows
        ]
    )


def render_half_width(
    view: HalfWidthView, budget: float, dataset: dict[str, Any], *, confidential: bool = True
) -> None:
    """The half-width plan as the relative-error one: the answer first, then one row per statistic with its ε and
    the expected half-width of its published intervals there."""
    show_failures(view.failures)
    if not view.rows:
        return
    remember_plan(view, confidential=confidential, data_name=str(dataset.get("name", "")))
    table = remembered("half_width_table", view, lambda: half_width_table(view))
    render_answer(view, budget, relax="a larger half-width")
    st.markdown(
        "For each statistic, the **smallest ε** at which every interval it publishes is expected to be within "
        "your half-width on the planning data (the Gini: its typical width on these data; the note gives the "
        "release's public model)." + sideways_cue(),
        unsafe_allow_html=True,
    )
    st.table(
        table[["statistic", "target", "smallest ε", HALF_WIDTH_COLUMN, "note"]]
        .style.format({"smallest ε": "{:.4g}"})
        .hide(axis="index"),
        alt="Smallest ε at which each statistic's intervals meet your half-width",
    )
    show_figure(
        figure("fig_epsilons", view, table.rename(columns={"smallest ε": "epsilon"}), view.total_epsilon),
        width="stretch",
    )
    download_csv(table, "Download this table (CSV)", "planner_half_width_first.csv", key="planner_dl_hw")
