"""Notices at the top of the main area, whichever part of the script raises them.

A widget whose link value was out of range (ui.common's qp_* widgets) or a refused upload (the sidebar,
drawn before the page) must be said where the reader looks, the main area, not beside a widget in the
sidebar or deep in a column. app.py opens the area at the start of every full run.

Imports only streamlit: app.py imports it before the landing page's first elements are sent (ui.common
brings numpy, ~0.1 s on a cold server; see app_pages/about.py).
"""

from __future__ import annotations

import streamlit as st

#: Session-state slot of the main-area container app.py opens at the top of every full run.
_NOTICE_AREA = "_main_notice_area"


def open_notice_area() -> None:
    """Reserve the top of the main area for this run's notices (app.py calls it before the page and the
    sidebar are drawn, so a notice raised by a sidebar widget still lands in the main area)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    # kept with this run's cursor table (a new dict every run): a later run never writes into this one
    st.session_state[_NOTICE_AREA] = (getattr(ctx, "cursors", None), st.container())


def main_notice(text: str, *, error: bool = False, inline_fallback: bool = True) -> None:
    """Show ``text`` at the top of the main area (``st.warning``, or ``st.error``). Where this run has no
    notice area (a page or the sidebar run without app.py, or a fragment rerun, which may not write
    outside its fragment) it is shown at the caller's position, or not at all with
    ``inline_fallback=False`` (a caller that has already said it there)."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    run, area = st.session_state.get(_NOTICE_AREA, (None, None))
    if area is None or ctx is None or run is not ctx.cursors or ctx.fragment_ids_this_run:
        if not inline_fallback:
            return
        area = st
    if error:
        area.error(text, icon=":material/error:")
    else:
        area.warning(text, icon=":material/link:")
