"""Entry point: `streamlit run app.py`. Navigation over the pages plus the shared sidebar."""
from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="DP income explorer", page_icon="🔒", layout="wide")

from ui.sidebar import render_sidebar  # noqa: E402  (after set_page_config)

PAGES = [
    st.Page("app_pages/about.py", title="About differential privacy", icon="📖", default=True),
    st.Page("app_pages/gini.py", title="Gini index", icon="📈", url_path="gini"),
    st.Page("app_pages/percentiles.py", title="Earnings percentiles (PSEO)", icon="📊", url_path="percentiles"),
    st.Page("app_pages/stratified.py", title="Group means and parity", icon="👥", url_path="stratified"),
    st.Page("app_pages/ratios.py", title="Relative risk and ratios", icon="➗", url_path="ratios"),
    st.Page("app_pages/planner.py", title="Choose epsilon (planner)", icon="🧭", url_path="planner"),
]

navigation = st.navigation(PAGES)
render_sidebar()
navigation.run()
