"""What margins cost and give, on the Percentiles page and the planner: the real PSEO table's hierarchy (cells,
state, nation) at the page's ε, from :func:`dpcore.views.margins.pseo_margins_view` (exact errors, no simulation),
drawn as one sentence and a table. No DP logic here."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from dpcore.views import margins as margins_views
from ui.common import download_csv, guard, qp_radio

__all__ = ["margins_table", "margins_panel"]

_SPLITS = {"Evenly (the plan's default)": "even", "Balanced (the worst level's error smallest)": "balanced"}


@st.cache_data(show_spinner=False, max_entries=32)
def _pseo_view(epsilon: float, split: str) -> margins_views.MarginsView | None:
    return margins_views.pseo_margins_view(epsilon, split=split)


def margins_table(view: margins_views.MarginsView, *, key: str) -> None:
    """The view's sentence and its table (one row per level), with a CSV download of the same numbers."""
    st.markdown(view.sentence)
    table = pd.DataFrame(view.rows())
    number = st.column_config.NumberColumn(format="%.3g")
    st.dataframe(
        table, hide_index=True, column_config={c: number for c in table.columns if c not in ("level", "nodes")}
    )
    st.caption(
        "Root mean square error of one bin count (people), exactly from the noise scales. 'Alone': the level released "
        "on its own with the whole ε; 'measured': at its share of ε, as a separate statistic; 'consistent': the "
        "least-squares estimate after consistency, published beside the whole counts that add up "
        "(docs/release_noise.md)."
    )
    st.caption(f"In a release plan, beside `margins`: `{view.plan_line}`")
    download_csv(table, "Download these numbers (CSV)", "margins_cost_and_gain.csv", key=key)


def margins_panel(epsilon: float, *, key: str) -> None:
    """The PSEO hierarchy at ``epsilon``: the split control, then :func:`margins_table` (nothing without the
    table on this machine)."""
    st.markdown(
        "**Tables that add up (margins).** Publishing the state and national tables with the cells (a plan's "
        "`margins`) splits ε over the three levels and makes them consistent:"
    )
    split = _SPLITS[qp_radio("ε over the levels", f"{key}_split", list(_SPLITS), horizontal=True)]
    with guard("the margins view"):
        view = _pseo_view(float(epsilon), split)
        if view is None:
            st.info("This view needs the real PSEO table (pseo_earnings_co_tx.csv.gz), which is not on this machine.")
        else:
            margins_table(view, key=f"{key}_dl")
