"""One sentence at the top of every page saying which data the page uses.

Some pages use the sidebar's "In use" data set, others have their own data (a PSEO cell, the ACS
excerpt, counts typed in): each page calls :func:`data_note` once, so the reader never has to guess
whether the sidebar's choice applies, and the About page's claim stays true.
"""

from __future__ import annotations

import streamlit as st

from ui.sidebar import current_dataset, refused_choice


def sidebar_data_sentence() -> str:
    """The sidebar's data set in use, as a short phrase."""
    ds = current_dataset()
    kind = " — your uploaded file, confidential" if ds.confidential else ""
    return f"{ds.name} ({ds.n:,} records, income column `{ds.column}`{kind})"


def data_note(*, uses_sidebar: bool, what: str = "", why: str = "", option: str = "") -> None:
    """Say which data this page uses.

    uses_sidebar: the page computes on the sidebar's data set in use.
    what / why: otherwise, the data it uses and why not the sidebar's.
    option: the control value that switches this page to the sidebar's data set, if any.
    """
    if uses_sidebar:
        refused = refused_choice()
        instead = (
            (" The data chosen in the sidebar were refused (see the message above), so these are the default data.")
            if refused
            else ""
        )
        st.info(
            f"**Data on this page:** the sidebar's data set in use, {sidebar_data_sentence()}.{instead}",
            icon=":material/database:",
        )
        return
    text = f"**Data on this page:** {what}, not the sidebar's data set ({current_dataset().name})"
    text += f": {why}." if why else "."
    if option:
        text += f" To use the sidebar's data set, choose **{option}** below."
    st.info(text, icon=":material/database:")


def percentiles_note(cell_view: bool, source: str) -> None:
    """The percentiles page: the one-cell view uses the sidebar's data only when chosen."""
    if not cell_view:
        data_note(
            uses_sidebar=False,
            what="the real PSEO table (published cells of Colorado and Texas)",
            why="these views release every published cell of that table",
        )
    elif source == "sidebar":
        data_note(uses_sidebar=True)
    else:
        what = (
            "a real PSEO cell (its published quartiles and size)"
            if source == "pseo"
            else "a synthetic cell with PSEO-like quartiles"
        )
        data_note(
            uses_sidebar=False,
            what=what,
            why="the PSEO method works cell by cell, and a cell is a few hundred graduates",
            option="Cell data: Sidebar dataset (random subset)",
        )


def stratified_note(source: str, sidebar_option: str) -> None:
    """The group-means page: the sidebar's data only with the 'Sidebar dataset' choice."""
    if source == sidebar_option:
        data_note(uses_sidebar=True)
        return
    frame = current_dataset().frame
    has_groups = frame is not None and frame.shape[1] >= 2  # a real or uploaded table: its other columns
    data_note(
        uses_sidebar=False,
        what=f"the {source}",
        why="" if has_groups else "group means need group columns, which the sidebar's data set does not have",
        option=f"Data: {sidebar_option}",
    )
