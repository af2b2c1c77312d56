"""Earnings percentiles from a noisy histogram (the Census PSEO system) and its rivals.

Thin page: controls -> one cached view call in :mod:`dpcore.views.percentiles` (``cell_view`` or, with the
exponential mechanism chosen, ``exponential_cell_view``; ``many_cells_view`` or ``figures_view``) -> renderers in
:mod:`ui.percentiles.views`. The generated script makes the same call.
"""
from __future__ import annotations

import streamlit as st

from dpcore.views import percentiles as percentile_experiments
from ui import answer_views, common, data_note, repro
from ui.common import guard, qp_number, qp_radio, qp_selectbox, qp_slider, qp_toggle, run_on_button, seed
from ui.percentiles import sections
from ui.percentiles import views as percentiles_views
from ui.sidebar import current_dataset

SCHEMES = {"PSEO bins (Table 1, 21 bins)": "pseo", "Log-normal bins": "lognormal", "Even bins": "even",
           "Custom edges": "custom"}
RELATIONS = {"Replace one person (cell size public)": "replace", "Add or remove one person (the paper's)": "add_remove"}
Q_OPTIONS = {"25, 50, 75": (25, 50, 75), "50": (50,), "10, 50, 90": (10, 50, 90),
             "10, 25, 50, 75, 90": (10, 25, 50, 75, 90)}
SOURCES = {"Synthetic cell (PSEO-like quartiles)": "synthetic",
           "A real PSEO cell (its published quartiles and size)": "pseo", "Sidebar dataset (random subset)": "sidebar"}
CALIBRATIONS = {"Tight (certified, less noise)": "tight", "Paper (Nissim-Raskhodnikova-Smith constants)": "paper"}
EPS_MAX = 3.0  # the ε slider's end: a recommendation above it could not be set
DEFAULT_EDGES = "10000, 20000, 30000, 40000, 50000, 65000, 80000, 100000, 150000, 250000, 614597"


@st.cache_data(show_spinner=False, max_entries=32)
def _recommendation(values, settings: dict):
    """The recommended ε for the page's cell (dpcore.views.answers): independent of the ε slider."""
    return percentile_experiments.percentile_cell_answer(values, **settings)[1]


@st.cache_resource(show_spinner=False, max_entries=16)
def _answer_statistic(values, cell: dict):
    """The answer's planner statistic, once per cell (shared; its Monte Carlo memo is deterministic)."""
    return percentile_experiments.cell_answer_statistic(values, **cell)


@st.cache_data(show_spinner=False, max_entries=64)
def _answer_sentence(values, cell: dict, epsilon: float):
    """The answer sentence at the slider's ε (the same numbers as percentile_cell_answer's first half)."""
    return percentile_experiments.cell_answer_at_epsilon(_answer_statistic(values, cell), epsilon=epsilon)


@st.cache_resource(show_spinner=False, max_entries=4)  # read only: no copy per rerun
def _cells():
    return percentile_experiments.pseo_cells(48)


@st.cache_data(show_spinner="Computing the cell's view...", max_entries=32)
def _cell_view(values, settings: dict) -> percentile_experiments.CellView:
    return percentile_experiments.cell_view(values, **settings)


@st.cache_data(show_spinner="Computing the cell's view...", max_entries=32)
def _exponential_view(values, settings: dict) -> percentile_experiments.ExponentialCellView:
    return percentile_experiments.exponential_cell_view(values, **settings)


# cache_resource: ε does not change the curves; the shared view is not unpickled on every ε move
@st.cache_resource(show_spinner="Simulating the accuracy curves...", max_entries=16)
def _cell_curves_view(values, settings: dict) -> tuple:
    """The curves view and its figure spec, built together once per setting (no DataFrame hashing per rerun)."""
    view = percentile_experiments.cell_curves_view(values, **settings)
    return view, percentiles_views.curves_spec(view)


@st.cache_data(show_spinner="Releasing every cell...", max_entries=16)
def _many_cells_view(settings: dict) -> percentile_experiments.ManyCellsView:
    return percentile_experiments.many_cells_view(**settings)


def _custom_edges_text() -> str:
    key = "perc_edges"
    if key not in st.session_state:
        st.session_state[key] = st.query_params.get(key, DEFAULT_EDGES)
    text = st.text_input("Custom bin edges ($, increasing, comma separated)", key=key)
    common.write_url_value(key, text, is_default=text == DEFAULT_EDGES)
    return text


def _exponential_section(settings: dict) -> None:
    """The one cell released by the exponential mechanism (one level), its view and its generated script."""
    ds = current_dataset() if settings["source"] == "sidebar" else None
    with guard("the release"):
        view = _exponential_view(None if ds is None else ds.values, settings)
        percentiles_views.cell_caption(view, "" if ds is None else ds.name)
        if ds is not None and getattr(ds, "confidential", False):
            st.warning("This is an uploaded file: simulating releases on confidential data is itself not private.")
        percentiles_views.exponential_cell(view)
        repro.share_panel("percentiles", script=repro.view_script_for(
            percentile_experiments.__name__, "exponential_cell_view", settings,
            title="Earnings percentiles: the exponential mechanism",
            dataset_recipe=None if ds is not None else ("none",)))


st.title("Earnings percentiles (PSEO)")
percentiles_views.intro()

# Everything below depends on the page's controls: an st.fragment, so a control reruns this part only
# (not the sidebar, the page script's set-up or the intro). A full rerun runs it too.
@st.fragment
def _page_body() -> None:
    answer_box = st.container(border=True)  # the answer first (filled once the controls below are read)
    answer_text = answer_box.container()
    target_error, target_confidence = answer_views.percentile_target_controls(answer_box)
    c1, c2, c3 = st.columns(3)
    eps = qp_slider("Privacy budget ε (per cell)", "perc_eps", 0.1, EPS_MAX, 1.0, 0.1, container=c1,
                    help="Smaller ε = more noise = more privacy. All percentiles of a cell together cost ε.")
    scheme = SCHEMES[qp_radio("Bins", "perc_scheme", list(SCHEMES), container=c2,
                              help="PSEO: the Bureau's 21 bins. Log-normal: equally likely bins for typical earnings. "
                                   "Even: equal widths from $10,000 to $614,597.")]
    n_bins = qp_slider("Number of bins (log-normal and even)", "perc_bins", 10, 30, 20, 1, container=c1,
                       help="More bins: finer read-off but more noise in total (noise is added to every bin).")
    q = Q_OPTIONS[qp_selectbox("Percentiles to release", "perc_q", list(Q_OPTIONS), container=c3)]
    relation = RELATIONS[qp_radio("Neighbouring relation", "perc_rel", list(RELATIONS), container=c3)]
    source = SOURCES[qp_selectbox("Cell data", "perc_src", list(SOURCES), container=c2)]
    if scheme == "pseo":
        c1.caption("The PSEO scheme always has 21 bins; the slider applies to the log-normal and even schemes.")
    cells = _cells()
    if source == "pseo" and cells is None:
        st.warning("The real PSEO table is not on this machine; using the synthetic cell.")
        source = "synthetic"
    cell_number, n = 100, 200
    if source == "pseo":
        cell_number = int(qp_number(f"Cell number (1 = largest of {len(cells):,} published cells)", "perc_cell", 100,
                                    min_value=1, max_value=len(cells), step=1))
    else:
        n = int(qp_number("Cell size (graduates)", "perc_n", 200, min_value=1, max_value=200_000, step=10,
                          help="PSEO suppresses cells with fewer than 30 graduates."))
    custom_edges = None
    if scheme == "custom":
        with guard("the bins"):
            custom_edges = percentiles_views.parse_edges(_custom_edges_text())
    calibration = CALIBRATIONS[qp_radio("Smooth-sensitivity constants", "perc_cal", list(CALIBRATIONS), horizontal=True)]
    view_name = qp_radio("View", "perc_view", list(sections.VIEWS), horizontal=True,
                         help="Only the chosen view is computed, so the page stays quick.")
    data_note.percentiles_note(view_name == sections.ONE_CELL.heading, source)
    with answer_text, guard("the answer"):
        answer_cell = {"source": source, "n": n, "cell_number": cell_number, "relation": relation}
        answer_values = None if source != "sidebar" else current_dataset().values
        answer_views.statistic_answer(
            _answer_sentence(answer_values, answer_cell, float(eps)),
            _recommendation(answer_values, {**answer_cell, "target_error": target_error, "confidence": target_confidence,
                                            "max_epsilon": EPS_MAX}),
            answer_text)
        answer_text.caption(f"For the cell of {sections.HISTOGRAM.cited} (the cell data chosen below), released with "
                            "the PSEO bins.")

    method = "histogram"
    if view_name == sections.ONE_CELL.heading:
        method = percentiles_views.METHODS[qp_radio("Method", "perc_method", list(percentiles_views.METHODS),
                                                    horizontal=True)]
        percentiles_views.method_advice(q)
    if method == "exponential":
        _exponential_section({"source": source, "n": n, "cell_number": cell_number, "epsilon": float(eps),
                              "q": float(50 if 50 in q else q[0]), "seed": seed()})
    elif view_name == sections.ONE_CELL.heading and (scheme != "custom" or custom_edges is not None):
        cell_settings = {"source": source, "n": n, "cell_number": cell_number}
        settings: dict = {**cell_settings, "epsilon": float(eps), "scheme": scheme, "n_bins": int(n_bins),
                    "custom_edges": custom_edges, "q": list(q), "relation": relation, "calibration": calibration,
                    "seed": seed()}
        ds = current_dataset() if source == "sidebar" else None
        values = None if ds is None else ds.values
        view = None
        with guard("the release"):
            view = _cell_view(values, settings)
        if view is not None:
            percentiles_views.cell_caption(view, "" if ds is None else ds.name)
            if ds is not None and getattr(ds, "confidential", False):
                st.warning("This is an uploaded file: simulating releases on confidential data is itself not "
                           "private. Plan on synthetic data; release once.")
            percentiles_views.cell(view, fixed_axes=qp_toggle("Fixed axes (compare ε by eye)", "perc_fixed_axes", False,
                                                              help="The count axis depends on the cell size only."))
            st.subheader(sections.ACCURACY.heading)
            curve_q = float(qp_selectbox("Percentile shown in the curves", "perc_curve_q", [f"{x:g}" for x in q],
                                         f"{50 if 50 in q else q[0]:g}"))
            with guard("the accuracy curves"):
                percentiles_views.curves(*_cell_curves_view(values, {**cell_settings, "q": curve_q, "n_bins": int(n_bins),
                                                                    "relation": relation, "seed": seed()}))
            repro.share_panel("percentiles", script=repro.view_script_for(
                percentile_experiments.__name__, "cell_view", settings, title="Earnings percentiles (PSEO)",
                dataset_recipe=None if source == "sidebar" else ("none",)))

    if view_name != sections.ONE_CELL.heading and cells is None:
        st.info("These views need the real PSEO table (pseo_earnings_co_tx.csv.gz), which is not on this machine.")
    elif view_name == sections.MANY_CELLS.heading:
        st.subheader("Many cells: a whole PSEO table")
        st.markdown(
            "For each published cell of the real PSEO table (Colorado, UT System and two more; first year after "
            "graduation) we simulate graduates whose quartiles and count match the published ones, release every "
            "cell with the settings above (20 noise draws) and measure the relative accuracy of the "
            "median. Cells of one level are disjoint, so the whole table costs ε once (parallel composition); "
            "publishing the nested aggregate levels too would cost ε per level.")
        n_cells = int(qp_slider("Cells used", "perc_cells", 100, len(cells), min(300, len(cells)), 100,
                                help=f"A random sample of the {len(cells):,} finest cells."))
        settings = {"n_cells": n_cells, "epsilon": float(eps), "n_bins": int(n_bins), "relation": relation,
                    "seed": seed()}
        with guard("the many-cells view"):
            percentiles_views.many_cells(_many_cells_view(settings))
        repro.share_panel("percentiles", script=repro.view_script_for(
            percentile_experiments.__name__, "many_cells_view", settings, title="Earnings percentiles: many cells",
            dataset_recipe=("none",), data_arg=None))

    elif view_name == sections.FIGURES.heading:
        st.subheader("Reproduce the paper's Figures 1–3")
        st.markdown(
            "Mean relative accuracy of the median over PSEO-like cells, for ε = 0.1 … 3 (step 0.1): **Figure 1** by "
            "number of bins (10, 15, 20, 25), **Figure 2** by cell size (20 bins), **Figure 3** against the number of "
            "bins (10 … 30) at one ε. Blue = log-normal bins, red dashed = even bins, green dash-dot = smooth "
            "sensitivity (paper constants), light green = smooth sensitivity (our tight constants), purple = "
            "exponential mechanism.")
        f1, f2, f3, f4 = st.columns(4)
        fig_cells = int(qp_slider("Cells", "perc_fig_cells", 50, min(2000, len(cells)), 300, 50, container=f1))
        fig_draws = int(qp_slider("Noise draws per setting", "perc_fig_draws", 5, 100, 20, 5, container=f2,
                                  help="The paper used 20."))
        split_label = qp_radio("Rivals' budget", "perc_fig_split",
                               ["ε/3 per percentile (fair)", "ε per percentile (as in the paper's figures)"],
                               container=f3)
        fig3_eps = float(qp_slider("ε for Figure 3", "perc_fig3_eps", 0.1, 3.0, 1.0, 0.1, container=f4))
        settings = {"n_cells": fig_cells, "n_draws": fig_draws, "rival_split": 3 if split_label.startswith("ε/3") else 1,
                    "figure3_epsilon": fig3_eps, "relation": relation, "seed": seed()}

        def _run():
            bar = st.progress(0.0, text="Starting...")
            result = (settings, percentile_experiments.figures_view(
                **settings, progress=lambda f, t: bar.progress(min(1.0, f), text=t)))
            bar.empty()
            return result

        stored = run_on_button("Run the simulations", "perc_fig_run", _run, what="the figures",
                               state_key="perc_fig_result", type="primary")
        if stored is None or stored[0] != settings:
            st.caption("Press the button to run (about 10–20 s for 300 cells; progress is shown).")
        else:
            percentiles_views.figures(stored[1])
            repro.share_panel("percentiles", script=repro.view_script_for(
                percentile_experiments.__name__, "figures_view", settings, title="Earnings percentiles: Figures 1-3",
                dataset_recipe=("none",), data_arg=None))


_page_body()

percentiles_views.method_notes()
