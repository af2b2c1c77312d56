"""Plotly figure builder for the About page. Pure function: numbers in, figure out."""
from __future__ import annotations

import pandas as pd
import plotly.graph_objects as go


def posterior_bound_figure(curve: pd.DataFrame, *, epsilon: float, prior: float, posterior: float) -> go.Figure:
    """The largest belief an attacker can reach after an epsilon-DP release, against the belief before
    (``curve``: columns prior, largest_posterior, as fractions), with the page's example marked."""
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=100 * curve["prior"], y=100 * curve["prior"], name="no release (belief unchanged)",
                             line=dict(dash="dot", color="grey")))
    fig.add_trace(go.Scatter(x=100 * curve["prior"], y=100 * curve["largest_posterior"],
                             name=f"largest belief after an ε = {epsilon:g} release", line=dict(width=3)))
    fig.add_trace(go.Scatter(x=[prior], y=[100 * posterior], mode="markers", name="your example",
                             marker=dict(size=12)))
    fig.update_layout(xaxis_title="attacker's belief before (%)", yaxis_title="attacker's belief after, at most (%)",
                      height=380, margin=dict(l=10, r=10, t=30, b=10), legend=dict(orientation="h", y=-0.25))
    return fig
