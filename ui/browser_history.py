"""One browser-history entry per page visited, so the Back button goes back to the previous page.

Streamlit's frontend (1.67, ``App.handlePageInfoChanged``) calls ``history.pushState`` for every change of
the query string the server sends, and a page here keeps its settings in the URL (``ui.common.qp_*``): a
slider moved ten times left ten entries, and Back stepped through them on the same page. The frontend
pushes a new path only when the page changes (``App.maybeUpdatePageUrl``). The script below turns a push
that keeps the path (a change of the query string only) into ``history.replaceState``: the entry of the
page visit follows its settings, and Back leaves the page.

The script is installed by an element the first run draws, i.e. after that run's own query-string
messages may have arrived; so a page visit must not change the URL in its first run unless the link asked
for something the page corrects: ``ui.common`` writes a widget's value into the URL only when it differs
from the URL or from the widget's default (a link without a setting means its default).
"""

from __future__ import annotations

import streamlit as st

#: Installed once per browser document (the app's page changes keep the document); idempotent.
_ONE_ENTRY_PER_PAGE_JS = """<script>(() => {
    if (window.__dpOneEntryPerPage) return;
    window.__dpOneEntryPerPage = true;
    const push = history.pushState.bind(history);
    history.pushState = (state, unused, url) => {
        if (url !== undefined && url !== null
                && new URL(String(url), location.href).pathname === location.pathname) {
            history.replaceState(state, unused, url);
        } else {
            push(state, unused, url);
        }
    };
})();</script>"""


def one_entry_per_page() -> None:
    """Draw the (invisible) element that installs the script; drawn at the end of the main area, where the
    gap Streamlit leaves around an element is out of the way. The same content every run: the frontend
    keeps the element in place and does not run the script again."""
    st.html(_ONE_ENTRY_PER_PAGE_JS, unsafe_allow_javascript=True)
