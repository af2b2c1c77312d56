"""Notices at the top of the main area, whichever part of the script raises them.

A widget whose link value was out of range (ui.common's qp_* widgets) or a refused upload (the sidebar,
drawn before the page) must be said where the reader looks, the main area, not beside a widget in the
sidebar or deep in a column. app.py opens the area at the start of every full run.

Imports only streamlit: app.py imports it before the landing page's first elements are sent (ui.common
brings numpy, ~0.1 s on a cold server; see app_pages/about.py).
"""

from __future__ import annotations

from typing import Any

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


# ---------------------------------------------------------------------------------------------
# One-shot outcomes (what a click did), kept until a completed run has shown them
# ---------------------------------------------------------------------------------------------
#: (this run's cursor table, {key: outcome object}) of the outcomes drawn in the current run
_OUTCOMES_DRAWN = "_outcomes_drawn"
#: {key: outcome object} drawn by a run that completed: taken away at the next run
_OUTCOMES_SHOWN = "_outcomes_shown"


def outcome_to_show(key: str) -> Any:
    """The outcome kept under ``st.session_state[key]`` (what a click did: "Released.", a refusal), to be
    drawn by this run, or None.

    It is taken away only once a run that drew it has *completed* (app.py calls :func:`run_completed`).
    Taking it at the first run that reads it would lose it whenever that run is stopped halfway by the
    next message from the browser (a double click's second click, a widget changed meanwhile): Streamlit
    then starts a new run, and the browser drops what the stopped run drew. The object itself is
    remembered, so a new outcome stored under the same key meanwhile is never taken for the old one. In a
    fragment's own rerun (app.py does not run: nothing would mark it shown) it is taken at once. A run ended by
    ``st.stop()`` marks nothing either (Streamlit ignores session-state writes after it): an outcome drawn before
    the stop is drawn once more by the next run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    state = st.session_state
    ctx = get_script_run_ctx()
    if ctx is not None and ctx.fragment_ids_this_run:
        return state.pop(key, None)
    shown = state.get(_OUTCOMES_SHOWN) or {}
    value = state.get(key)
    if key in shown:
        old = shown.pop(key)
        if value is old:
            state.pop(key, None)
            return None
    if value is not None:
        cursors = getattr(ctx, "cursors", None)
        run, drawn = state.get(_OUTCOMES_DRAWN, (None, {}))
        if run is not cursors:
            drawn = {}
        drawn[key] = value
        state[_OUTCOMES_DRAWN] = (cursors, drawn)
    return value


def run_completed() -> None:
    """Called at the end of a run that was not stopped (app.py, after the page and the sidebar): the
    outcomes it drew have reached the browser and are taken away at the next run."""
    from streamlit.runtime.scriptrunner import get_script_run_ctx

    ctx = get_script_run_ctx()
    run, drawn = st.session_state.pop(_OUTCOMES_DRAWN, (None, {}))
    if ctx is not None and drawn and run is ctx.cursors:
        st.session_state[_OUTCOMES_SHOWN] = {**(st.session_state.get(_OUTCOMES_SHOWN) or {}), **drawn}
