"""The percentiles page's cached view calls, its answer box and the views beyond one cell (the exponential
mechanism's cell, many cells, the paper's figures): the page (``app_pages/percentiles.py``) reads the controls and
calls these; the renderers are :mod:`ui.percentiles.views`."""

from __future__ import annotations

from typing import Any

import streamlit as st

from dpcore.views import percentiles as percentile_experiments
from ui import answer_views, common, margins, repro
from ui.common import guard, qp_radio, qp_slider, run_on_button
from ui.percentiles import sections
from ui.percentiles import views as percentiles_views
from ui.private_source import PRIVATE_SCRIPT_NOTE

DEFAULT_EDGES = "10000, 20000, 30000, 40000, 50000, 65000, 80000, 100000, 150000, 250000, 614597"


@st.cache_data(show_spinner=False, max_entries=32)
def recommendation(values, settings: dict):
    """The recommended ε for the page's cell (dpcore.views.answers): independent of the ε slider."""
    return percentile_experiments.percentile_cell_answer(values, **settings)[1]


@st.cache_resource(show_spinner=False, max_entries=16)
def answer_statistic(values, cell: dict):
    """The answer's planner statistic, once per cell (shared; its Monte Carlo memo is deterministic)."""
    return percentile_experiments.cell_answer_statistic(values, **cell)


@st.cache_data(show_spinner=False, max_entries=64)
def answer_sentence(values, cell: dict, epsilon: float):
    """The answer sentence at the slider's ε (the same numbers as percentile_cell_answer's first half)."""
    return percentile_experiments.cell_answer_at_epsilon(answer_statistic(values, cell), epsilon=epsilon)


@st.cache_resource(show_spinner=False, max_entries=4)  # read only: no copy per rerun
def pseo_cells():
    return percentile_experiments.pseo_cells(48)


@st.cache_data(show_spinner="Computing the cell's view...", max_entries=32)
def cell_view(values, settings: dict) -> percentile_experiments.CellView:
    return percentile_experiments.cell_view(values, **settings)


@st.cache_data(show_spinner="Computing the cell's view...", max_entries=32)
def exponential_view(values, settings: dict) -> percentile_experiments.ExponentialCellView:
    return percentile_experiments.exponential_cell_view(values, **settings)


# cache_resource: ε does not change the curves; the shared view is not unpickled on every ε move
@st.cache_resource(show_spinner="Simulating the accuracy curves...", max_entries=16)
def cell_curves_view(values, settings: dict) -> tuple:
    """The curves view and its figure spec, built together once per setting (no DataFrame hashing per rerun)."""
    view = percentile_experiments.cell_curves_view(values, **settings)
    return view, percentiles_views.curves_spec(view)


@st.cache_data(show_spinner="Releasing every cell...", max_entries=16)
def many_cells_view(settings: dict) -> percentile_experiments.ManyCellsView:
    return percentile_experiments.many_cells_view(**settings)


def custom_edges_text() -> str:
    key = "perc_edges"
    if key not in st.session_state:
        st.session_state[key] = st.query_params.get(key, DEFAULT_EDGES)
    text = st.text_input("Custom bin edges ($, increasing, comma separated)", key=key)
    common.write_url_value(key, text, is_default=text == DEFAULT_EDGES)
    return text


def answer(
    cell: dict, values: Any, epsilon: float, target: tuple[float, float], eps_max: float, container: Any
) -> None:
    """The answer sentence at ``epsilon`` and the ε recommended for ``target`` (error, confidence), for the
    chosen cell released with the PSEO bins, in ``container``; ``values``: the page's data for the sidebar
    source (the upload's records or its DP snapshot's, :func:`ui.private_source.page_data`), else None."""
    target_error, target_confidence = target
    answer_views.statistic_answer(
        answer_sentence(values, cell, epsilon),
        recommendation(
            values, {**cell, "target_error": target_error, "confidence": target_confidence, "max_epsilon": eps_max}
        ),
        container,
    )
    container.caption(
        f"For the cell of {sections.HISTOGRAM.cited} (the cell data chosen below), released with the PSEO bins."
    )


def exponential_section(settings: dict, ds: Any, on_snapshot: bool) -> None:
    """The one cell released by the exponential mechanism (one level), its view and its generated script;
    ``ds``: the page's data for the sidebar source, else None; ``on_snapshot``: they are an upload's DP
    snapshot's (no script: it would recompute on the file itself)."""
    with guard("the release"):
        view = exponential_view(None if ds is None else ds.values, settings)
        percentiles_views.cell_caption(view, "" if ds is None else ds.name)
        percentiles_views.exponential_cell(view)
        repro.share_panel(
            "percentiles",
            script=None
            if on_snapshot
            else repro.view_script_for(
                percentile_experiments.__name__,
                "exponential_cell_view",
                settings,
                title="Earnings percentiles: the exponential mechanism",
                dataset_recipe=None if ds is not None else ("none",),
            ),
            unscripted=PRIVATE_SCRIPT_NOTE,
        )


def many_cells_section(cells: Any, epsilon: float, n_bins: int, relation: str) -> None:
    """Every cell of the real PSEO table released with the page's settings (the median's relative accuracy)."""
    st.subheader("Many cells: a whole PSEO table")
    st.markdown(
        "For each published cell of the real PSEO table (Colorado, UT System and two more; first year after "
        "graduation) we simulate graduates whose quartiles and count match the published ones, release every "
        "cell with the settings above (20 noise draws) and measure the relative accuracy of the "
        "median. Cells of one level are disjoint, so the whole table costs ε once (parallel composition); "
        "publishing the nested aggregate levels too shares ε between them (below)."
    )
    n_cells = int(
        qp_slider(
            "Cells used",
            "perc_cells",
            100,
            len(cells),
            min(300, len(cells)),
            100,
            help=f"A random sample of the {len(cells):,} finest cells.",
        )
    )
    settings = {"n_cells": n_cells, "epsilon": epsilon, "n_bins": n_bins, "relation": relation, "seed": common.seed()}
    with guard("the many-cells view"):
        percentiles_views.many_cells(many_cells_view(settings))
    margins.margins_panel(epsilon, key="perc_margins")
    repro.share_panel(
        "percentiles",
        script=repro.view_script_for(
            percentile_experiments.__name__,
            "many_cells_view",
            settings,
            title="Earnings percentiles: many cells",
            dataset_recipe=("none",),
            data_arg=None,
        ),
    )


def figures_section(cells: Any, relation: str) -> None:
    """The paper's Figures 1-3, simulated on a button (with progress)."""
    st.subheader("Reproduce the paper's Figures 1–3")
    st.markdown(
        "Mean relative accuracy of the median over PSEO-like cells, for ε = 0.1 … 3 (step 0.1): **Figure 1** by "
        "number of bins (10, 15, 20, 25), **Figure 2** by cell size (20 bins), **Figure 3** against the number of "
        "bins (10 … 30) at one ε. Blue = log-normal bins, red dashed = even bins, green dash-dot = smooth "
        "sensitivity (paper constants), light green = smooth sensitivity (our tight constants), purple = "
        "exponential mechanism."
    )
    f1, f2, f3, f4 = st.columns(4)
    fig_cells = int(qp_slider("Cells", "perc_fig_cells", 50, min(2000, len(cells)), 300, 50, container=f1))
    fig_draws = int(
        qp_slider("Noise draws per setting", "perc_fig_draws", 5, 100, 20, 5, container=f2, help="The paper used 20.")
    )
    split_label = qp_radio(
        "Rivals' budget",
        "perc_fig_split",
        ["ε/3 per percentile (fair)", "ε per percentile (as in the paper's figures)"],
        container=f3,
    )
    fig3_eps = float(qp_slider("ε for Figure 3", "perc_fig3_eps", 0.1, 3.0, 1.0, 0.1, container=f4))
    settings: dict = {
        "n_cells": fig_cells,
        "n_draws": fig_draws,
        "rival_split": 3 if split_label.startswith("ε/3") else 1,
        "figure3_epsilon": fig3_eps,
        "relation": relation,
        "seed": common.seed(),
    }

    def _run():
        bar = st.progress(0.0, text="Starting...")
        result = (
            settings,
            percentile_experiments.figures_view(**settings, progress=lambda f, t: bar.progress(min(1.0, f), text=t)),
        )
        bar.empty()
        return result

    stored = run_on_button(
        "Run the simulations", "perc_fig_run", _run, what="the figures", state_key="perc_fig_result", type="primary"
    )
    if stored is None or stored[0] != settings:
        st.caption("Press the button to run (about 10–20 s for 300 cells; progress is shown).")
    else:
        percentiles_views.figures(stored[1])
        repro.share_panel(
            "percentiles",
            script=repro.view_script_for(
                percentile_experiments.__name__,
                "figures_view",
                settings,
                title="Earnings percentiles: Figures 1-3",
                dataset_recipe=("none",),
                data_arg=None,
            ),
        )
