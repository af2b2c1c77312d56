"""Plotly figure builders for the percentiles (PSEO) page. Pure functions: data in, figure out."""

from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from ui.figure_specs import plain_spec

#: Display names of the methods (UI text; dpcore uses the keys only).
METHOD_LABELS = {
    "lognormal": "Log-normal bins",
    "even": "Even bins",
    "pseo": "PSEO bins (Table 1)",
    "smooth_paper": "Smooth sensitivity (paper constants)",
    "smooth_tight": "Smooth sensitivity (tight constants)",
    "em": "Exponential mechanism",
}

# The paper's legend: Log-Normal solid blue, Even dashed red, Smooth-sensitivity dash-dot green.
STYLE = {
    "lognormal": dict(color="#1f77b4", dash="solid"),
    "pseo": dict(color="#17becf", dash="solid"),
    "even": dict(color="#d62728", dash="dash"),
    "smooth_paper": dict(color="#2ca02c", dash="dashdot"),
    "smooth_tight": dict(color="#98df8a", dash="dot"),
    "em": dict(color="#9467bd", dash="longdash"),
}
Y_FLOOR = -0.5  # relative accuracy axis starts here; lower means are off the chart (said in captions)


def _money(v: float) -> str:
    return f"${v / 1000:,.0f}k" if v < 1e6 else f"${v / 1e6:,.2f}M"


def bin_labels(edges: np.ndarray) -> list[str]:
    return [f"{_money(a)}–{_money(b)}" for a, b in zip(edges[:-1], edges[1:], strict=True)]


def fixed_count_range(n: int) -> tuple[float, float]:
    """A count axis that depends only on the public cell size n ("fixed axes"): room for the
    tallest bin of a typical cell (30 % of n) and for noise down to -(10 % of n) - 10 people."""
    return (-0.1 * n - 10.0, 0.3 * n + 10.0)


def histogram_figure(
    edges: np.ndarray, true_counts: np.ndarray, noisy_counts: np.ndarray, *, y_range: tuple[float, float] | None = None
) -> go.Figure:
    labels = bin_labels(edges)
    fig = go.Figure()
    fig.add_bar(x=labels, y=true_counts, name="True count (confidential)", marker_color="#7f7f7f")
    fig.add_bar(x=labels, y=noisy_counts, name="Noisy count (released)", marker_color="#1f77b4")
    fig.update_layout(
        barmode="group",
        height=360,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis_title="Earnings bin",
        yaxis_title="People",
        legend=dict(orientation="h", y=1.12),
    )
    if y_range is not None:
        fig.update_yaxes(range=list(y_range))
    fig.add_hline(y=0, line_color="black", line_width=1)
    return fig


def cdf_figure(
    edges: np.ndarray,
    true_counts: np.ndarray,
    noisy_counts: np.ndarray,
    q: np.ndarray,
    released: np.ndarray,
    truth: np.ndarray,
) -> go.Figure:
    """Cumulative share at each bin edge (true and noisy), with the percentile read-off."""

    def cum(c):
        c = np.asarray(c, dtype=float)
        tot = c.sum()
        return np.concatenate([[0.0], np.cumsum(c) / tot]) if tot > 0 else np.zeros(c.size + 1)

    fig = go.Figure()
    fig.add_scatter(x=edges, y=cum(true_counts), mode="lines+markers", name="True CDF", line=dict(color="#7f7f7f"))
    fig.add_scatter(
        x=edges,
        y=cum(noisy_counts),
        mode="lines+markers",
        name="Noisy CDF (eq. 4.1 on noisy counts)",
        line=dict(color="#1f77b4"),
    )
    for qi, r, t in zip(q, released, truth, strict=True):
        fig.add_shape(
            type="line", x0=edges[0], x1=r, y0=qi / 100, y1=qi / 100, line=dict(color="#ff7f0e", dash="dot", width=1)
        )
        fig.add_shape(type="line", x0=r, x1=r, y0=0, y1=qi / 100, line=dict(color="#ff7f0e", dash="dot", width=1))
        fig.add_scatter(
            x=[r],
            y=[qi / 100],
            mode="markers",
            marker=dict(color="#ff7f0e", size=10),
            name=f"P{qi:g} released: {_money(r)} (true {_money(t)})",
        )
    fig.update_layout(
        height=380,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis_title="Earnings ($, log scale)",
        yaxis_title="Share of the cell at or below",
        xaxis_type="log",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_yaxes(range=[-0.05, 1.05])
    return fig


def histogram_spec(
    edges: np.ndarray, true_counts: np.ndarray, noisy_counts: np.ndarray, *, y_range: tuple[float, float] | None = None
) -> dict:
    """:func:`histogram_figure` as a plain spec (equal to its ``to_dict()``; tests check), built in ~0.1 ms."""
    labels = bin_labels(edges)
    yaxis: dict = {"title": {"text": "People"}}
    if y_range is not None:
        yaxis["range"] = list(y_range)
    return plain_spec(
        [
            {
                "marker": {"color": "#7f7f7f"},
                "name": "True count (confidential)",
                "type": "bar",
                "x": labels,
                "y": np.asarray(true_counts),
            },
            {
                "marker": {"color": "#1f77b4"},
                "name": "Noisy count (released)",
                "type": "bar",
                "x": list(labels),
                "y": np.asarray(noisy_counts),
            },
        ],
        {
            "barmode": "group",
            "height": 360,
            "legend": {"orientation": "h", "y": 1.12},
            "margin": {"b": 10, "l": 10, "r": 10, "t": 30},
            "shapes": [
                {
                    "line": {"color": "black", "width": 1},
                    "type": "line",
                    "x0": 0,
                    "x1": 1,
                    "xref": "x domain",
                    "y0": 0,
                    "y1": 0,
                    "yref": "y",
                }
            ],
            "xaxis": {"title": {"text": "Earnings bin"}},
            "yaxis": yaxis,
        },
    )


def _cumulative_share(counts: np.ndarray) -> np.ndarray:
    counts = np.asarray(counts, dtype=float)
    total = counts.sum()
    return np.concatenate([[0.0], np.cumsum(counts) / total]) if total > 0 else np.zeros(counts.size + 1)


def cdf_spec(
    edges: np.ndarray,
    true_counts: np.ndarray,
    noisy_counts: np.ndarray,
    q: np.ndarray,
    released: np.ndarray,
    truth: np.ndarray,
) -> dict:
    """:func:`cdf_figure` as a plain spec (equal to its ``to_dict()``; tests check), built in ~0.1 ms."""
    x = np.asarray(edges, dtype=float)
    line = {"color": "#ff7f0e", "dash": "dot", "width": 1}
    data = [
        {
            "line": {"color": "#7f7f7f"},
            "mode": "lines+markers",
            "name": "True CDF",
            "type": "scatter",
            "x": x,
            "y": _cumulative_share(true_counts),
        },
        {
            "line": {"color": "#1f77b4"},
            "mode": "lines+markers",
            "name": "Noisy CDF (eq. 4.1 on noisy counts)",
            "type": "scatter",
            "x": x.copy(),
            "y": _cumulative_share(noisy_counts),
        },
    ]
    shapes = []
    for qi, r, t in zip(q, released, truth, strict=True):
        shapes += [
            {"line": dict(line), "type": "line", "x0": edges[0], "x1": r, "y0": qi / 100, "y1": qi / 100},
            {"line": dict(line), "type": "line", "x0": r, "x1": r, "y0": 0, "y1": qi / 100},
        ]
        data.append(
            {
                "marker": {"color": "#ff7f0e", "size": 10},
                "mode": "markers",
                "name": f"P{qi:g} released: {_money(r)} (true {_money(t)})",
                "type": "scatter",
                "x": [float(r)],
                "y": [float(qi / 100)],
            }
        )
    return plain_spec(
        data,
        {
            "height": 380,
            "legend": {"orientation": "h", "y": -0.25},
            "margin": {"b": 10, "l": 10, "r": 10, "t": 30},
            "shapes": shapes,
            "xaxis": {"title": {"text": "Earnings ($, log scale)"}, "type": "log"},
            "yaxis": {"range": [-0.05, 1.05], "title": {"text": "Share of the cell at or below"}},
        },
    )


def _line(fig, df, x, y, method, row=None, col=None, showlegend=True):
    st = STYLE.get(method, {})
    tr = go.Scatter(
        x=df[x],
        y=df[y],
        mode="lines+markers",
        name=METHOD_LABELS.get(method, method),
        line=dict(color=st.get("color"), dash=st.get("dash")),
        marker=dict(size=4),
        legendgroup=method,
        showlegend=showlegend,
    )
    if row is None:
        fig.add_trace(tr)
    else:
        fig.add_trace(tr, row=row, col=col)


def accuracy_curve_figure(summary: pd.DataFrame, title: str = "") -> go.Figure:
    """summary: columns method, epsilon, rel_accuracy (mean). One line per method."""
    fig = go.Figure()
    for method, g in summary.groupby("method", observed=True, sort=False):
        _line(fig, g.sort_values("epsilon"), "epsilon", "rel_accuracy", method)
    fig.update_layout(
        height=380,
        margin=dict(l=10, r=10, t=40, b=10),
        title=title,
        xaxis_title="epsilon",
        yaxis_title="Mean relative accuracy (eq. 5.1)",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_yaxes(range=[Y_FLOOR, 1.02])
    return fig


def many_cells_figure(per_cell: pd.DataFrame) -> go.Figure:
    """Relative accuracy of each cell against its size (log x), one colour per method."""
    fig = go.Figure()
    for method, g in per_cell.groupby("method", observed=True, sort=False):
        st = STYLE.get(method, {})
        fig.add_scatter(
            x=g["n"],
            y=g["rel_accuracy"],
            mode="markers",
            name=METHOD_LABELS.get(method, method),
            marker=dict(color=st.get("color"), size=5, opacity=0.55),
        )
    fig.update_layout(
        height=400,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis_type="log",
        xaxis_title="Cell size (graduates with earnings, log scale)",
        yaxis_title="Relative accuracy (mean over noise draws)",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_yaxes(range=[Y_FLOOR, 1.02])
    return fig


def size_class_figure(by_size: pd.DataFrame) -> go.Figure:
    fig = go.Figure()
    for method, g in by_size.groupby("method", observed=True, sort=False):
        fig.add_bar(
            x=g["size"].astype(str),
            y=g["rel_accuracy"],
            name=METHOD_LABELS.get(method, method),
            marker_color=STYLE.get(method, {}).get("color"),
        )
    fig.update_layout(
        barmode="group",
        height=340,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis_title="Cell size class",
        yaxis_title="Mean relative accuracy",
        legend=dict(orientation="h", y=-0.3),
    )
    fig.update_yaxes(range=[Y_FLOOR, 1.02])
    return fig


def figure1(summary: pd.DataFrame, bin_counts=(10, 15, 20, 25)) -> go.Figure:
    """Figure 1: mean relative accuracy vs epsilon, one panel per bin count; rivals in every panel."""
    fig = make_subplots(rows=2, cols=2, subplot_titles=[f"{b} bins" for b in bin_counts], shared_yaxes=True)
    rivals = summary[summary.n_bins == 0]
    for i, b in enumerate(bin_counts):
        r, c = i // 2 + 1, i % 2 + 1
        part = pd.concat([summary[summary.n_bins == b], rivals])
        for method, g in part.groupby("method", observed=True, sort=False):
            _line(fig, g.sort_values("epsilon"), "epsilon", "rel_accuracy", method, r, c, showlegend=(i == 0))
    fig.update_layout(height=620, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.12))
    fig.update_yaxes(range=[Y_FLOOR, 1.02])
    fig.update_xaxes(title_text="epsilon", row=2)
    return fig


def figure2(summary: pd.DataFrame) -> go.Figure:
    """Figure 2: mean relative accuracy vs epsilon by cell-size class (20 bins)."""
    sizes = (
        [s for s in summary["size"].cat.categories if s in set(summary["size"].astype(str))]
        if hasattr(summary["size"], "cat")
        else sorted(summary["size"].unique())
    )
    cols = 3
    rows = max(1, int(np.ceil(len(sizes) / cols)))
    fig = make_subplots(rows=rows, cols=cols, subplot_titles=[f"cells of {s} people" for s in sizes], shared_yaxes=True)
    for i, s in enumerate(sizes):
        r, c = i // cols + 1, i % cols + 1
        part = summary[summary["size"].astype(str) == s]
        for method, g in part.groupby("method", observed=True, sort=False):
            _line(fig, g.sort_values("epsilon"), "epsilon", "rel_accuracy", method, r, c, showlegend=(i == 0))
    fig.update_layout(height=330 * rows, margin=dict(l=10, r=10, t=40, b=10), legend=dict(orientation="h", y=-0.12))
    fig.update_yaxes(range=[Y_FLOOR, 1.02])
    return fig


def figure3(summary: pd.DataFrame, rivals: pd.DataFrame | None = None) -> go.Figure:
    """Figure 3: mean relative accuracy vs number of bins (one epsilon); rivals as flat lines."""
    fig = go.Figure()
    for method, g in summary.groupby("method", observed=True, sort=False):
        _line(fig, g.sort_values("n_bins"), "n_bins", "rel_accuracy", method)
    if rivals is not None:
        for method, g in rivals.groupby("method", observed=True, sort=False):
            v = float(g["rel_accuracy"].mean())
            if v >= Y_FLOOR:
                fig.add_hline(
                    y=v,
                    line=dict(color=STYLE.get(method, {}).get("color"), dash=STYLE.get(method, {}).get("dash")),
                    annotation_text=METHOD_LABELS.get(method, method),
                    annotation_position="bottom right",
                )
    fig.update_layout(
        height=380,
        margin=dict(l=10, r=10, t=30, b=10),
        xaxis_title="Number of bins",
        yaxis_title="Mean relative accuracy (eq. 5.1)",
        legend=dict(orientation="h", y=-0.25),
    )
    fig.update_yaxes(range=[Y_FLOOR, 1.02])
    return fig


# ---------------------------------------------------------------------------------------------
# The page's charts of one view (the notebook's charts: ui.notebook)
# ---------------------------------------------------------------------------------------------


def cell_view_figures(view) -> list[tuple[str, go.Figure]]:
    """The one-cell view's charts (a ``dpcore.views.percentiles.CellView``): the true and noisy histogram (count
    axis from the public cell size, as with the page's "Fixed axes") and the noisy CDF with the read-off."""
    return [
        (
            "The histogram: true and noisy counts",
            histogram_figure(view.edges, view.true_counts, view.noisy_counts, y_range=fixed_count_range(view.n)),
        ),
        (
            "The noisy CDF and the percentiles read off it",
            cdf_figure(view.edges, view.true_counts, view.noisy_counts, view.q, view.histogram, view.true),
        ),
    ]


def many_cells_view_figures(view) -> list[tuple[str, go.Figure]]:
    """The many-cells view's charts (a ``ManyCellsView``): accuracy of the median by cell and by cell size."""
    return [
        ("Relative accuracy of the median, cell by cell", many_cells_figure(view.per_cell)),
        ("Relative accuracy by cell size", size_class_figure(view.by_size)),
    ]


def figures_view_figures(view) -> list[tuple[str, go.Figure]]:
    """The paper's Figures 1-3 (a ``FiguresView``)."""
    return [
        ("Figure 1: by number of bins", figure1(view.figure1)),
        ("Figure 2: by cell size", figure2(view.figure2)),
        ("Figure 3: against the number of bins", figure3(view.figure3, view.figure3_rivals)),
    ]
