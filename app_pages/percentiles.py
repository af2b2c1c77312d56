"""Earnings percentiles from a noisy histogram (the Census PSEO system) and its rivals.

Thin page: controls -> one cached view call in :mod:`dpcore.views.percentiles` (``cell_view`` or, with the
exponential mechanism chosen, ``exponential_cell_view``; ``many_cells_view`` or ``figures_view``; the cached calls
and the views beyond one cell are in :mod:`ui.percentiles.panels`) -> renderers in :mod:`ui.percentiles.views`.
The generated script makes the same call.
"""

from __future__ import annotations

import streamlit as st

from dpcore.views import percentiles as percentile_experiments
from ui import answer_views, data_note, private_source, repro
from ui.common import guard, mark_downloads, qp_number, qp_radio, qp_selectbox, qp_slider, qp_toggle, seed
from ui.percentiles import panels, sections
from ui.percentiles import views as percentiles_views
from ui.sidebar import current_dataset

SCHEMES = {
    "PSEO bins (Table 1, 21 bins)": "pseo",
    "Log-normal bins": "lognormal",
    "Even bins": "even",
    "Custom edges": "custom",
}
RELATIONS = {"Replace one person (cell size public)": "replace", "Add or remove one person (the paper's)": "add_remove"}
Q_OPTIONS = {
    "25, 50, 75": (25, 50, 75),
    "50": (50,),
    "10, 50, 90": (10, 50, 90),
    "10, 25, 50, 75, 90": (10, 25, 50, 75, 90),
}
SOURCES = {
    "Synthetic cell (PSEO-like quartiles)": "synthetic",
    "A real PSEO cell (its published quartiles and size)": "pseo",
    "Sidebar dataset (random subset)": "sidebar",
}
CALIBRATIONS = {"Tight (certified, less noise)": "tight", "Paper (Nissim-Raskhodnikova-Smith constants)": "paper"}
EPS_MAX = 3.0  # the ε slider's end: a recommendation above it could not be set


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
    eps = qp_slider(
        "Privacy budget ε (per cell)",
        "perc_eps",
        0.1,
        EPS_MAX,
        1.0,
        0.1,
        container=c1,
        help="Smaller ε = more noise = more privacy. All percentiles of a cell together cost ε.",
    )
    scheme = SCHEMES[
        qp_radio(
            "Bins",
            "perc_scheme",
            list(SCHEMES),
            container=c2,
            help="PSEO: the Bureau's 21 bins. Log-normal: equally likely bins for typical earnings. "
            "Even: equal widths from $10,000 to $614,597.",
        )
    ]
    n_bins = qp_slider(
        "Number of bins (log-normal and even)",
        "perc_bins",
        10,
        30,
        20,
        1,
        container=c1,
        help="More bins: finer read-off but more noise in total (noise is added to every bin).",
    )
    q = Q_OPTIONS[qp_selectbox("Percentiles to release", "perc_q", list(Q_OPTIONS), container=c3)]
    relation = RELATIONS[qp_radio("Neighbouring relation", "perc_rel", list(RELATIONS), container=c3)]
    source = SOURCES[qp_selectbox("Cell data", "perc_src", list(SOURCES), container=c2)]
    if scheme == "pseo":
        c1.caption("The PSEO scheme always has 21 bins; the slider applies to the log-normal and even schemes.")
    cells = panels.pseo_cells()
    if source == "pseo" and cells is None:
        st.warning("The real PSEO table is not on this machine; using the synthetic cell.")
        source = "synthetic"
    ds = None  # the sidebar's data: an upload's raw records (downloads marked confidential) or its DP snapshot's
    if source != "sidebar":
        mark_downloads(None)
    elif (ds := private_source.page_data(current_dataset(), "perc")) is None:
        return  # the snapshot's confirmation is shown
    values = None if ds is None else ds.values
    on_snapshot = private_source.is_snapshot(ds)
    cell_number, n = 100, 200
    if source == "pseo":
        cell_number = int(
            qp_number(
                f"Cell number (1 = largest of {len(cells):,} published cells)",
                "perc_cell",
                100,
                min_value=1,
                max_value=len(cells),
                step=1,
            )
        )
    else:
        n = int(
            qp_number(
                "Cell size (graduates)",
                "perc_n",
                200,
                min_value=1,
                max_value=200_000,
                step=10,
                help="PSEO suppresses cells with fewer than 30 graduates.",
            )
        )
    custom_edges = None
    if scheme == "custom":
        with guard("the bins"):
            custom_edges = percentiles_views.parse_edges(panels.custom_edges_text())
    calibration = CALIBRATIONS[
        qp_radio("Smooth-sensitivity constants", "perc_cal", list(CALIBRATIONS), horizontal=True)
    ]
    view_name = qp_radio(
        "View",
        "perc_view",
        list(sections.VIEWS),
        horizontal=True,
        help="Only the chosen view is computed, so the page stays quick.",
    )
    data_note.percentiles_note(view_name == sections.ONE_CELL.heading, source)
    with answer_text, guard("the answer"):
        answer_cell = {"source": source, "n": n, "cell_number": cell_number, "relation": relation}
        panels.answer(answer_cell, values, float(eps), (target_error, target_confidence), EPS_MAX, answer_text)

    method = "histogram"
    if view_name == sections.ONE_CELL.heading:
        method = percentiles_views.METHODS[
            qp_radio("Method", "perc_method", list(percentiles_views.METHODS), horizontal=True)
        ]
        percentiles_views.method_advice(q)
    if method == "exponential":
        panels.exponential_section(
            {
                "source": source,
                "n": n,
                "cell_number": cell_number,
                "epsilon": float(eps),
                "q": float(50 if 50 in q else q[0]),
                "seed": seed(),
            },
            ds,
            on_snapshot,
        )
    elif view_name == sections.ONE_CELL.heading and (scheme != "custom" or custom_edges is not None):
        cell_settings = {"source": source, "n": n, "cell_number": cell_number}
        settings: dict = {
            **cell_settings,
            "epsilon": float(eps),
            "scheme": scheme,
            "n_bins": int(n_bins),
            "custom_edges": custom_edges,
            "q": list(q),
            "relation": relation,
            "calibration": calibration,
            "seed": seed(),
        }
        view = None
        with guard("the release"):
            view = panels.cell_view(values, settings)
        if view is not None:
            percentiles_views.cell_caption(view, "" if ds is None else ds.name)
            percentiles_views.cell(
                view,
                fixed_axes=qp_toggle(
                    "Fixed axes (compare ε by eye)",
                    "perc_fixed_axes",
                    False,
                    help="The count axis depends on the cell size only.",
                ),
            )
            st.subheader(sections.ACCURACY.heading)
            curve_q = float(
                qp_selectbox(
                    "Percentile shown in the curves",
                    "perc_curve_q",
                    [f"{x:g}" for x in q],
                    f"{50 if 50 in q else q[0]:g}",
                )
            )
            with guard("the accuracy curves"):
                percentiles_views.curves(
                    *panels.cell_curves_view(
                        values,
                        {**cell_settings, "q": curve_q, "n_bins": int(n_bins), "relation": relation, "seed": seed()},
                    )
                )
            repro.share_panel(
                "percentiles",
                script=None
                if on_snapshot  # the script would recompute on the file itself
                else repro.view_script_for(
                    percentile_experiments.__name__,
                    "cell_view",
                    settings,
                    title="Earnings percentiles (PSEO)",
                    dataset_recipe=None if source == "sidebar" else ("none",),
                ),
                unscripted=private_source.PRIVATE_SCRIPT_NOTE,
            )

    if view_name != sections.ONE_CELL.heading and cells is None:
        st.info("These views need the real PSEO table (pseo_earnings_co_tx.csv.gz), which is not on this machine.")
    elif view_name == sections.MANY_CELLS.heading:
        panels.many_cells_section(cells, float(eps), int(n_bins), relation)
    elif view_name == sections.FIGURES.heading:
        panels.figures_section(cells, relation)


_page_body()

percentiles_views.method_notes()
