"""Chart labels that do not collide, checked on the figure specifications (no browser; tests/test_browser.py
measures the drawn pages at 1280x720)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ui.gini import plots as plots_gini
from ui.ratios import plots as plots_ratio
from ui.stratified import plots as plots_stratified


def _decay(n: int = 6) -> pd.DataFrame:
    k = np.arange(n)
    a = 1e-3 * (1 + k)
    return pd.DataFrame({"k": k, "A": a, "decay": np.exp(-0.5 * k) * a})


def _star_labels(figure: dict) -> list[tuple[str, str]]:
    return [
        (trace["text"][0], trace["textposition"]) for trace in figure["data"] if trace.get("mode") == "markers+text"
    ]


def test_one_k_star_label_when_both_bounds_peak_at_the_same_k():
    figure = plots_gini.decay_figure(_decay(), _decay() * 2, k_star_exact=0, k_star_fast=0, beta=0.5)
    assert _star_labels(figure) == [("k* = 0 (both)", "top right")]  # was "k* = 0" twice, drawn into each other


def test_two_k_star_labels_on_either_side_when_they_differ():
    figure = plots_gini.decay_figure(_decay(), _decay() * 2, k_star_exact=0, k_star_fast=2, beta=0.5)
    assert sorted(_star_labels(figure)) == [("k* = 0", "bottom right"), ("k* = 2", "top right")]


def test_ratio_legend_is_not_where_the_true_rr_label_is():
    hist = pd.DataFrame({"bin_mid": [1.0, 1.5, 2.0], "non-private": [0.2, 0.5, 0.3], "private": [0.3, 0.4, 0.3]})
    layout = plots_ratio.sampling_figure(hist, 1.5).to_dict()["layout"]
    (label,) = layout["annotations"]
    assert label["y"] == 1 and label["yanchor"] == "bottom"  # above the plot area
    assert layout["legend"]["y"] < 0  # under the x axis (it was at y = 1.12, under the label)


def test_group_means_chart_has_a_row_per_group_and_level_method_names():
    groups = [f"Female × Other race × group {i}" for i in range(16)]
    table = pd.DataFrame(
        {
            "group": groups,
            "size": np.arange(16, 0, -1) * 10,
            "release": np.linspace(1, 2, 16),
            "true mean": np.linspace(1, 2, 16),
            "q05": np.zeros(16),
            "q95": np.full(16, 3.0),
        }
    )
    spec = plots_stratified.group_means_spec(table, "Stratified Laplace")
    points = spec["data"][0]
    assert list(points["y"]) == [
        f"{g} (n={s:,})" for g, s in zip(groups, table["size"], strict=True)
    ]  # names down the side
    assert spec["layout"]["height"] >= 16 * plots_stratified.GROUP_CHART_ROW
    errors = pd.DataFrame({"method": np.repeat(list(plots_stratified.METHOD_COLORS), 3), "error": np.arange(15.0)})
    for spec in (
        plots_stratified.overall_errors_spec(errors),
        plots_stratified.parity_spec(
            pd.DataFrame({"method": list(plots_stratified.METHOD_COLORS), "mean": 1.0, "q05": 0.5, "q95": 1.5})
        ),
    ):
        axis = spec["layout"]["xaxis"]
        assert axis["tickangle"] == 0 and all(
            len(line) <= 10 for text in axis["ticktext"] for line in text.split("<br>")
        )
