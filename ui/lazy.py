"""Sections drawn only when the reader opens them.

A closed ``st.expander`` still runs its content on the server and sends it to the browser, which mounts it: a
code box inside loads Streamlit's 1.5 MB syntax-highlighter bundle, a formula the KaTeX bundle, a row of tabs
the tab machinery, all before the page's run is over (on the Gini page: the paper experiments' tabs, the script
box and the definition's formulas; its load against a bare Streamlit page is in docs/benchmarks.md, "Page load").
Streamlit's expander state (``on_change="rerun"``) tells the script whether the reader opened it, so such a section
is drawn only then; opening it reruns the page (or the fragment it is in).
"""

from __future__ import annotations

from typing import Any

import streamlit as st

__all__ = ["lazy_expander"]


def lazy_expander(label: str, key: str, *, container: Any = st, **kwargs: Any) -> tuple[Any, bool]:
    """An ``st.expander`` whose content the caller draws only while it is open: returns the expander and whether
    it is open (``False`` on a first visit). ``key`` must be unique on the page; the open state lives in the
    session (a reload closes it)."""
    box = container.expander(label, key=key, on_change="rerun", **kwargs)
    return box, bool(box.open)
