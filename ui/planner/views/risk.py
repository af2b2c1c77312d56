"""What ε means for a person: the attacker's largest belief after a release, and ε in real deployments.

The bound p·e^ε / (1 − p + p·e^ε) is :func:`dpcore.risk.max_posterior` (the view is
:func:`dpcore.views.planner.attacker_belief`'s); the deployments' table is :func:`dpcore.risk.deployments_table`,
editable so a reader can add their organisation's releases.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st

from dpcore import risk
from dpcore.views.planner import AttackerBeliefView
from ui.common import download_csv, guard, qp_slider, show_figure
from ui.planner import plots as plots_planner
from ui.planner.views.rendering import figure

#: the deployment table's columns shown in the editor (δ, ρ, model and source are in its CSV): all eight
#: scrolled sideways (1,621 px in 818 at 1280x720)
DEPLOYMENT_COLUMNS = ["organisation", "release", "epsilon", "privacy unit"]
DEPLOYMENT_COLUMN_CONFIG = {
    "organisation": st.column_config.TextColumn(width=150),
    "release": st.column_config.TextColumn(width=350),
    "epsilon": st.column_config.NumberColumn(width=80),
    "privacy unit": st.column_config.TextColumn(width=190),
}


def risk_controls() -> tuple[float, float]:
    """The epsilon and prior of the attacker-belief view."""
    st.markdown(
        "Suppose an attacker believes with probability *p* (the **prior**) that a given person is in the data, "
        "or has some attribute. Whatever else they know, after seeing an ε-DP release their belief can rise "
        "at most to **p·e^ε / (1 − p + p·e^ε)**."
    )
    c1, c2 = st.columns(2)
    eps = qp_slider("ε to examine", "planner_risk_eps", 0.05, 20.0, 1.0, 0.05, container=c1)
    prior = qp_slider("Attacker's prior belief, %", "planner_prior", 0.1, 99.0, 1.0, 0.1, container=c2)
    return float(eps), float(prior) / 100.0


def render_risk(view: AttackerBeliefView) -> None:
    st.metric(
        f"Largest belief after an ε = {view.epsilon:g} release, from a {100 * view.prior:g}% prior",
        f"{100 * view.largest_belief:.2f}%",
    )
    frame = plots_planner.posterior_frame(
        view.curve_epsilons, np.asarray(view.priors), [np.asarray(c) for c in view.curves]
    )
    show_figure(figure("fig_posterior", view, frame, view.prior), width="stretch")
    download_csv(frame, "Download the curves (CSV)", "planner_posterior.csv", key="planner_dl_post")
    st.markdown(
        "**ε used in real deployments** (editable: add your organisation's releases). The units differ "
        "(per person for the whole release, per user per day, local vs central DP), so compare with care."
    )
    edited = st.data_editor(
        pd.DataFrame(risk.deployments_table()),
        num_rows="dynamic",
        hide_index=True,
        width="stretch",
        key="planner_deploy_editor",
        column_order=DEPLOYMENT_COLUMNS,
        column_config=DEPLOYMENT_COLUMN_CONFIG,
    )
    with guard("the deployment table"):
        eps_col = pd.to_numeric(edited["epsilon"], errors="coerce")
        ok = eps_col.notna() & (eps_col > 0)
        table = edited.loc[ok, ["organisation", "release", "epsilon", "privacy unit"]].copy()
        table[f"largest belief from a {100 * view.prior:g}% prior, %"] = [
            100 * risk.max_posterior(view.prior, float(e)) for e in eps_col[ok]
        ]
        st.table(
            table.reset_index(drop=True)
            .style.format({"epsilon": "{:g}", table.columns[-1]: "{:.2f}"})
            .hide(axis="index"),
            alt="Deployments and the largest belief each ε allows",
        )
        download_csv(edited, "Download the deployment table (CSV)", "planner_deployments.csv", key="planner_dl_deploy")
