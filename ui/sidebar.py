"""The shared sidebar: data source, random seed, and the planning-versus-release note.

(Foundation stub: data sources are being extended under issue 2.)
"""
from __future__ import annotations

import streamlit as st

from dpcore.data import IncomeData, lognormal_incomes
from ui.common import DEFAULT_SEED, qp_number


@st.cache_data(show_spinner=False, max_entries=32)
def _synthetic(n: int, seed: int) -> IncomeData:
    return IncomeData(values=lognormal_incomes(n, rng=seed), name=f"Synthetic log-normal (n={n:,})",
                      source="synthetic")


def render_sidebar() -> None:
    """Draw the sidebar and store the chosen dataset in ``st.session_state['dataset']``."""
    with st.sidebar:
        st.header("Data")
        st.session_state["dataset"] = _synthetic(10_000, DEFAULT_SEED)
        qp_number("Random seed", "seed", DEFAULT_SEED, min_value=0, max_value=2**31 - 1, step=1,
                  help="Every simulated release on every page is drawn from this seed: same seed, same picture.")
        st.info("**Planning is not release.** Simulating releases on confidential data is itself not "
                "private: plan on synthetic or public look-alike data; use the real file only for the "
                "one release you count against the budget.")


def current_dataset() -> IncomeData:
    """The dataset chosen in the sidebar."""
    ds = st.session_state.get("dataset")
    if ds is None:
        ds = _synthetic(10_000, DEFAULT_SEED)
    return ds
