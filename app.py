"""Entry point: `streamlit run app.py`. Navigation over the pages plus the shared sidebar."""

from __future__ import annotations

import streamlit as st

from ui.browser_history import one_entry_per_page
from ui.common import focus_styles, keyboard_fixes
from ui.notices import open_notice_area, run_completed

# Page icons are Material icons, not emoji: an emoji page icon makes the browser load Streamlit's emoji
# catalogue (~0.15 s) on the first page view (cold start). The tab icon (favicon) is set here,
# before st.navigation: otherwise the browser takes the page's Material icon as the favicon and fetches
# it from fonts.gstatic.com (tests/test_security.py forbids any other host). It is the lock emoji, which
# the frontend draws as an inline SVG (no request, no catalogue); the server only checks it against
# streamlit.emojis (~35 ms once per process), where a data: URL or image would go through Streamlit's
# image code and import numpy and PIL (~0.1 s) before the first element leaves.
st.set_page_config(page_title="DP income explorer", layout="wide", page_icon="\N{LOCK}")

ABOUT = st.Page("app_pages/about.py", title="About differential privacy", icon=":material/menu_book:", default=True)
RATIOS = st.Page("app_pages/ratios.py", title="Relative risk and ratios", icon=":material/percent:", url_path="ratios")
ATTACKER = st.Page(
    "app_pages/attacker.py", title="Play the attacker", icon=":material/sports_esports:", url_path="attacker"
)
PAGES = [
    ABOUT,
    st.Page("app_pages/gini.py", title="Gini index", icon=":material/show_chart:", url_path="gini"),
    st.Page(
        "app_pages/percentiles.py",
        title="Earnings percentiles (PSEO)",
        icon=":material/bar_chart:",
        url_path="percentiles",
    ),
    st.Page("app_pages/stratified.py", title="Group means and parity", icon=":material/groups:", url_path="stratified"),
    RATIOS,
    st.Page("app_pages/planner.py", title="Choose epsilon (planner)", icon=":material/explore:", url_path="planner"),
    ATTACKER,
    st.Page("app_pages/lessons.py", title="Lessons (teaching)", icon=":material/school:", url_path="lessons"),
]
#: Pages that never read the sidebar's dataset: their content is drawn before the sidebar.
DATA_FREE_PAGES = (ABOUT, RATIOS, ATTACKER)
#: Data-free pages whose sidebar keeps the data choice out of the way, in one closed popover ("This page
#: does not use these data"; the ratios page works with counts, the attacker game with its own two data
#: sets). The landing page instead offers the data choice for the pages its cards open.
PAGES_WITHOUT_DATA_SECTION = (RATIOS, ATTACKER)


def render_sidebar(*, data_free: bool, data_used: bool = True) -> None:
    # On a data-free page the sidebar builds the default data only when a page needs them (no
    # dpcore.data, no pandas on a plain first visit) and keeps its widgets in popovers, which the
    # browser mounts only when opened (ui.sidebar.render_sidebar: defer_default, compact, data_used).
    from ui.sidebar import render_sidebar as draw_sidebar

    draw_sidebar(defer_default=data_free, compact=data_free, data_used=data_used)


def scroll_to_top_on_page_change(current: str) -> None:
    """Streamlit keeps the main area's scroll position when the app moves to another page inside the tab
    (st.page_link, the sidebar's links): a lesson link clicked low on the Lessons page opened its page
    mid-way. Scroll to the top when the page changes; not on a first run or a rerun of the same page, so
    neither the cold start nor a slider move pays for it."""
    previous = st.session_state.get("_page_shown")
    st.session_state["_page_shown"] = current
    if previous is not None and previous != current:
        # numbered: the frontend keeps an element whose content did not change since the last run in place
        # (and does not run its script again), so two page changes in a row must not send the same text
        count = st.session_state["_page_changes"] = st.session_state.get("_page_changes", 0) + 1
        st.html(
            f"""<script>(() => {{ /* page change {count} */
            const main = document.querySelector('[data-testid="stMain"]');
            (main || document.scrollingElement).scrollTo(0, 0);
        }})();</script>""",
            unsafe_allow_javascript=True,
        )


navigation = st.navigation(PAGES)
st.set_page_config(page_title=f"{navigation.title} · DP income explorer")  # each page its own title (WCAG 2.4.2)
scroll_to_top_on_page_change(navigation.url_path)
# On the landing page (the first page of a cold server) the page goes first and the sidebar second,
# and on a plain visit the sidebar does not build the default data (cold start). Every
# other page reads the sidebar's dataset, so the sidebar goes first there.
data_free = any(navigation is page for page in DATA_FREE_PAGES)
data_used = not any(navigation is page for page in PAGES_WITHOUT_DATA_SECTION)
# The top of the main area, for notices (a link value that was out of range, a refused upload),
# wherever the widget that raises them is drawn (ui.notices.main_notice).
open_notice_area()
focus_styles()  # a visible keyboard focus on links (WCAG 2.4.7)
try:
    if not data_free:
        render_sidebar(data_free=False)
    navigation.run()
    if data_free:
        render_sidebar(data_free=True, data_used=data_used)
    one_entry_per_page()  # Back leaves the page (ui.browser_history)
    run_completed()  # not reached by a run that was stopped: its one-shot outcomes are drawn again
    keyboard_fixes()  # no single-key rerun (WCAG 2.1.4), wide tables reachable by keyboard (2.1.1)
finally:
    # After a run that imported modules (a page's first view), move the long-lived objects out of
    # the garbage collector's way (see ui.common.freeze_long_lived_objects).
    from ui.common import freeze_long_lived_objects

    freeze_long_lived_objects()
