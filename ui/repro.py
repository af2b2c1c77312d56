"""Shareable and reproducible views: a "copy link" hint and a generated Python script.

How a page uses it (one line at the end of the page)::

    from ui import repro
    repro.share_panel("gini", script=repro.view_script_for(
        "dpcore.views.gini", "gini_view", settings, title="Gini index"))

``view_script_for`` writes the page's own view call (module, function, the same literal keyword
arguments the page passed) with :func:`ui.scriptgen.view_script_parts`, taking the data recipe from the
sidebar (:func:`dataset_key`), so the script rebuilds the same planning data and prints the same
numbers as the page. The share panel offers it as a Python script and as a Jupyter notebook
(:mod:`ui.notebook`: the same parts, one cell each, with the page's charts); both files are made when their
button is clicked, and the script is shown only when its expander is opened (:func:`ui.lazy.lazy_expander`).
Page state must be in URL query parameters (``ui.common.qp_*`` widgets) for the link to reproduce the view.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import streamlit as st

from ui import scriptgen
from ui.common import link_values, marked_download
from ui.lazy import lazy_expander

__all__ = ["dataset_key", "current_link", "view_script_for", "share_panel"]


def dataset_key() -> tuple | None:
    """The sidebar's recipe for the current dataset (e.g. ("lognormal", n, sigma, data_seed)), or None."""
    memo = st.session_state.get("_data_memo")
    if memo is None:
        return None
    try:
        key = tuple(memo[0])
    except (TypeError, IndexError):
        return None
    return key or None


def current_link(page: str | None = None) -> str:
    """The address of this view: the app URL (when the browser told us) plus every setting of the page,
    defaults included (the address bar leaves them out: ``ui.common.write_url_value``), and every other
    query parameter."""
    params = {**link_values(), **st.query_params.to_dict()}
    query = urlencode(params)
    base = ""
    try:
        url = st.context.url
        if url:
            base = str(url).split("?")[0]
    except Exception:  # no browser context (AppTest, bare mode)
        base = ""
    if not base:
        base = f"http://localhost:8501/{page or ''}".rstrip("/")
    return f"{base}?{query}" if query else base


def view_script_for(
    module: str,
    function: str,
    kwargs: dict[str, Any],
    *,
    title: str,
    dataset_recipe: tuple | None = None,
    data_arg: str | None = "values",
) -> scriptgen.ViewScript | None:
    """The script (its parts) of a view computed by one call ``module.function(values, **kwargs)``, or None when
    the data source cannot be scripted. ``dataset_recipe`` defaults to the sidebar's recipe; ``("none",)``
    for a view that builds its own data from ``kwargs``."""
    try:
        return scriptgen.view_script_parts(
            module,
            function,
            kwargs,
            dataset_key() if dataset_recipe is None else dataset_recipe,
            title=title,
            data_arg=data_arg,
        )
    except ValueError:
        return None


def share_panel(
    page: str,
    *,
    script: scriptgen.ViewScript | None = None,
    note: str = "",
    key: str | None = None,
    unscripted: str = "This data source cannot be rebuilt by a script (it is neither generated nor a bundled file).",
) -> None:
    """Draw the "share or reproduce" section: the link to copy, the script and the notebook (downloads made when
    clicked), and the script itself in an expander drawn when opened; ``unscripted``, said without a script."""
    key = key or f"{page}_repro"
    st.markdown("#### Share or reproduce this view")
    st.caption(
        "Every choice on this page is kept in the address bar (a setting left at its default is not written "
        "there: a link without it means the default). Copy the link below, which names every setting, or the "
        "browser's address: whoever opens it sees the same view, same data recipe, same settings, same seed."
    )
    # Wrapped: a code box that scrolls sideways cannot be scrolled by keyboard (Streamlit's <pre> takes no focus)
    st.code(current_link(page), language=None, wrap_lines=True)
    if script is None:
        st.info(unscripted)
        return
    st.caption(
        "The Python script below rebuilds the planning data and recomputes this view with `dpcore`; "
        "it prints the page's numbers as JSON. Run it from the repository folder: `python "
        f"{page}_view.py`. The notebook is the same analysis for Jupyter, with notes and the page's charts."
        + (f" {note}" if note else "")
    )
    # a script or notebook of a page on a confidential file prints its numbers: marked as the page's downloads
    label, file_name = marked_download("Download the Python script", f"{page}_view.py")
    st.download_button(
        label,
        lambda: script.text.encode("utf-8"),
        file_name=file_name,
        mime="text/x-python",
        key=f"{key}_dl",
    )
    label, file_name = marked_download("Download the notebook (.ipynb)", f"{page}_view.ipynb")
    st.download_button(
        label,
        lambda: _notebook(script),
        file_name=file_name,
        mime="application/x-ipynb+json",
        key=f"{key}_nb",
    )
    box, shown = lazy_expander("Show the script", f"{key}_show")
    if shown:
        # Plain text: Streamlit's syntax colours (a fixed palette, not the theme's) fall below WCAG's 4.5:1
        # contrast on the code box (green strings 2.8:1, blue keywords 3.6:1, grey comments 3.5:1)
        box.code(script.text, language=None, wrap_lines=True)


def _notebook(script: scriptgen.ViewScript) -> bytes:
    from ui.notebook import view_notebook  # nbformat loads on the first click, not with the page

    return view_notebook(script)
