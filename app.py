"""Entry point: `streamlit run app.py`. Navigation over the pages plus the shared sidebar."""
from __future__ import annotations

import streamlit as st

# Page icons are Material icons, not emoji: an emoji icon makes Streamlit load its emoji catalogue
# (~0.2 s) on the first page view (issue 13, cold start). The tab icon stays an emoji: a Material
# favicon is fetched by the browser from fonts.gstatic.com (tests/test_security.py forbids other hosts).
st.set_page_config(page_title="DP income explorer", page_icon="🔒", layout="wide")

from ui.sidebar import render_sidebar  # noqa: E402  (after set_page_config)

PAGES = [
    st.Page("app_pages/about.py", title="About differential privacy", icon=":material/menu_book:", default=True),
    st.Page("app_pages/gini.py", title="Gini index", icon=":material/show_chart:", url_path="gini"),
    st.Page("app_pages/percentiles.py", title="Earnings percentiles (PSEO)", icon=":material/bar_chart:", url_path="percentiles"),
    st.Page("app_pages/stratified.py", title="Group means and parity", icon=":material/groups:", url_path="stratified"),
    st.Page("app_pages/ratios.py", title="Relative risk and ratios", icon=":material/percent:", url_path="ratios"),
    st.Page("app_pages/planner.py", title="Choose epsilon (planner)", icon=":material/explore:", url_path="planner"),
    st.Page("app_pages/attacker.py", title="Play the attacker", icon=":material/sports_esports:", url_path="attacker"),
    st.Page("app_pages/lessons.py", title="Lessons (teaching)", icon=":material/school:", url_path="lessons"),
]

navigation = st.navigation(PAGES)
render_sidebar()
try:
    navigation.run()
finally:
    # After a run that imported modules (a page's first view), move the long-lived objects out of
    # the garbage collector's way (issue 13; see ui.common.freeze_long_lived_objects).
    from ui.common import freeze_long_lived_objects

    freeze_long_lived_objects()
