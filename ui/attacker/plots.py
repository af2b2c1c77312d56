"""Figures of the attacker game: numbers in, plotly figure out (no st.* calls)."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from dpcore import noise
from dpcore.views import attacker as attacker_lib

COLORS = {"A": "#d62728", "B": "#1f77b4"}


def release_densities(setup: attacker_lib.GameSetup) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
    """(grid, density if A, density if B, discrete?) of the one-number release (not for ``percentile``)."""
    lo = min(setup.statistic_in - 6 * setup.noise_scale_in, setup.statistic_out - 6 * setup.noise_scale_out)
    hi = max(setup.statistic_in + 6 * setup.noise_scale_in, setup.statistic_out + 6 * setup.noise_scale_out)
    if setup.mechanism == "count_geometric":
        grid = np.arange(np.floor(lo), np.ceil(hi) + 1)
        return (
            grid,
            noise.two_sided_geometric_pmf(grid - setup.statistic_in, setup.epsilon),
            noise.two_sided_geometric_pmf(grid - setup.statistic_out, setup.epsilon),
            True,
        )
    grid = np.linspace(lo, hi, 801)
    if setup.mechanism == "gini":
        law = noise.GeneralizedCauchy(setup.gamma)
        dens_in = law.pdf((grid - setup.statistic_in) / setup.noise_scale_in) / setup.noise_scale_in
        dens_out = law.pdf((grid - setup.statistic_out) / setup.noise_scale_out) / setup.noise_scale_out
    else:
        b = setup.noise_scale_in
        dens_in = np.exp(-np.abs(grid - setup.statistic_in) / b) / (2 * b)
        dens_out = np.exp(-np.abs(grid - setup.statistic_out) / b) / (2 * b)
    return grid, dens_in, dens_out, False


def densities_figure(setup: attacker_lib.GameSetup, release: float) -> go.Figure:
    """How likely each release is if A (target in) or B was used, with the published value marked."""
    grid, dens_in, dens_out, discrete = release_densities(setup)
    fig = go.Figure()
    for name, dens in (("A", dens_in), ("B", dens_out)):
        label = f"if {name} was used"
        if discrete:
            fig.add_bar(x=grid, y=dens, name=label, marker_color=COLORS[name], opacity=0.6)
        else:
            fig.add_scatter(x=grid, y=dens, name=label, mode="lines", line=dict(color=COLORS[name]))
    fig.add_vline(x=release, line_color="black", line_dash="dash", annotation_text="published")
    fig.update_layout(
        height=300,
        margin=dict(l=10, r=10, t=30, b=10),
        barmode="overlay",
        xaxis_title="released value",
        yaxis_title="probability" if discrete else "density",
        legend=dict(orientation="h", y=1.15),
    )
    return fig
