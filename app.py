"""Entry point: `streamlit run app.py`. Navigation over the pages plus the shared sidebar."""
from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="DP income explorer", page_icon="🔒", layout="wide")

from ui.sidebar import render_sidebar  # noqa: E402  (after set_page_config)

PAGES = [
    st.Page("pages/about.py", title="About differential privacy", icon="📖", url_path="about", default=True),
    st.Page("pages/gini.py", title="Gini index", icon="📈", url_path="gini"),
    st.Page("pages/percentiles.py", title="Earnings percentiles (PSEO)", icon="📊", url_path="percentiles"),
    st.Page("pages/stratified.py", title="Group means and parity", icon="👥", url_path="stratified"),
    st.Page("pages/ratios.py", title="Relative risk and ratios", icon="➗", url_path="ratios"),
    st.Page("pages/planner.py", title="Choose epsilon (planner)", icon="🧭", url_path="planner"),
]

navigation = st.navigation(PAGES)
render_sidebar()
navigation.run()
