"""End-to-end tests in a real headless Chromium.

The app server is the one shared by every browser test of the process (``app_server`` in
tests/conftest.py: ``streamlit run app.py --server.headless true`` on a free localhost port, its first
visitor a cold deep link); Playwright (from PyPI) drives Debian's /usr/bin/chromium (never a downloaded browser).
For every page of app.py's PAGES list: open it, move its main slider, fail on any exception box,
st.error box, browser console error or uncaught page error, and save a screenshot to
screenshots/ (git-ignored). Upload a CSV through the sidebar and visit every page with it.

On the way through the pages, the method pages (Gini, percentiles, group means, ratios) are measured at their
defaults in the browser, at 1280x720, not guessed from the code: no metric label is cut, no table in the main
area scrolls sideways, no text drawn in a chart lies over another, the Gini page's recommended ε is on the first
screen, and the group-means page's charts do not tilt their category labels. One tour of the pages
(tests/support/page_tour.py) serves these checks and tests/test_browser_accessibility.py's.

Skipped cleanly when /usr/bin/chromium or playwright is missing (``.ci/run`` installs chromium).
"""

from __future__ import annotations

import time

import numpy as np
import pytest
from quality_support import chromium_available, discover_pages, wait_for_app_idle
from support.browser import COLD_SEED, good_csv, run_and_wait, upload
from support.page_tour import LAYOUT_ROUTES, SHOTS, TIMINGS, VIEWPORT, PageVisit, move_main_slider, nav_links, shot

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

PAGES = discover_pages()


@pytest.fixture(scope="module", autouse=True)
def timings(app_server):
    """How long the real-browser steps took (for people, not a check): screenshots/timings.txt."""
    TIMINGS["server start to healthy"] = app_server.started_in
    TIMINGS["first render of a cold deep link"] = app_server.cold_visit.seconds
    yield TIMINGS
    SHOTS.mkdir(exist_ok=True)
    width = max(map(len, TIMINGS))
    (SHOTS / "timings.txt").write_text(
        "".join(f"{k:<{width}}  {v:6.2f} s\n" for k, v in TIMINGS.items()), encoding="utf-8"
    )


# ---------------------------------------------------------------------------------------------
# Upload through the sidebar (first: the page-by-page tests below hold the kept tab until the module ends)
# ---------------------------------------------------------------------------------------------


def test_bad_then_good_upload_then_every_page_works(app_server, tab):
    """One session, as a user would go: a binary file renamed .csv gets a clear message (st.error /
    st.warning), no exception box; a valid CSV uploaded next is taken without a stale error; then every
    page works with it, its main slider moved (the full malformed-file matrix runs in AppTest, in
    tests/test_hostile_inputs.py)."""
    page = tab.page
    page.goto(app_server.url)
    wait_for_app_idle(page)
    junk = bytes(np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8))
    if not upload(page, "not_a_table.csv", junk):
        pytest.skip("the sidebar has no CSV upload yet")
    boxes = page.query_selector_all('[data-testid="stAlertContentError"], [data-testid="stAlertContentWarning"]')
    assert boxes, "a binary upload produced no error or warning message"
    assert not page.query_selector('[data-testid="stException"]'), "binary upload raised a traceback"
    assert not tab.errors, tab.errors
    shot(page, "upload_binary")
    assert upload(page, "incomes_upload.csv", good_csv())
    assert not tab.all_problems(), f"after a good upload following a bad one: {tab.all_problems()}"
    shot(page, "upload_done")
    # Visit every page in the same session (page.goto would start a new session without the file).
    n_links = len(nav_links(page))
    assert n_links == len(PAGES), f"sidebar navigation shows {n_links} links for {len(PAGES)} pages"
    for i, pg in enumerate(PAGES):
        t0 = time.perf_counter()
        run_and_wait(page, nav_links(page)[i].click)
        TIMINGS[f"upload: open {pg.name} (navigation link)"] = time.perf_counter() - t0
        assert not tab.all_problems(), f"{pg.path} with the uploaded CSV: {tab.all_problems()}"
        move_main_slider(tab)
        assert not tab.all_problems(), f"{pg.path} with the uploaded CSV, slider moved: {tab.all_problems()}"
        shot(page, f"upload_{pg.name}", extra=True)


# ---------------------------------------------------------------------------------------------
# Page by page, with the layout checks of the method pages on the way
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def page_by_page(page_tour) -> dict[str, PageVisit]:
    """What the page tour (tests/support/page_tour.py, shared with tests/test_browser_accessibility.py) saw as a
    user: every page in one tab at 1280x720, one Streamlit session from the first page (opened by its URL)
    through the others (the Gini page by keyboard from the landing page, the next ones by the sidebar's links;
    in the app: a reload of the frontend costs the browser 1-1.5 s of CPU per page; every page opened fresh by
    its URL is tests/test_app_pages.py's, in AppTest) to the last page opened as a shared link with a seed in
    its query string (a warm deep link, a page load). A page that raises is recorded and the next one visited."""
    return page_tour.visits


@pytest.mark.parametrize("pg", PAGES, ids=[p.name for p in PAGES])
def test_page_renders_and_main_slider_moves(page_by_page, pg):
    """Open the page, then move its main slider: no exception box, st.error, console or page error, or
    failed request either time; the deep-linked last page's sidebar shows the link's seed."""
    assert not page_by_page[pg.name].failures, page_by_page[pg.name].failures


def _layout(page_by_page, route: str) -> dict:
    visit = page_by_page[route]
    assert visit.layout is not None, f"{route} was not measured: {visit.failures}"
    return visit.layout


def test_the_gini_pages_recommended_epsilon_is_on_the_first_screen(page_by_page):
    bottom = page_by_page["gini"].recommended_bottom
    assert bottom is not None, "the Gini page shows no recommended ε"
    assert bottom <= VIEWPORT["height"], f"the recommended ε ends at {bottom:.0f} px, below the 720 px screen"


@pytest.mark.parametrize("route", LAYOUT_ROUTES)
def test_no_metric_label_is_cut(page_by_page, route):
    assert not _layout(page_by_page, route)["cut"], (
        f"{route}: truncated metric labels {_layout(page_by_page, route)['cut']}"
    )


@pytest.mark.parametrize("route", LAYOUT_ROUTES)
def test_no_table_scrolls_sideways(page_by_page, route):
    assert not _layout(page_by_page, route)["sideways"], f"{route}: {_layout(page_by_page, route)['sideways']}"


@pytest.mark.parametrize("route", LAYOUT_ROUTES)
def test_no_chart_text_lies_over_another(page_by_page, route):
    assert not _layout(page_by_page, route)["overlaps"], f"{route}: {_layout(page_by_page, route)['overlaps']}"


def test_group_means_charts_keep_their_labels_level(page_by_page):
    """The group-means page's group names ("Female × Other race (n=207)") and method names were tilted by plotly,
    crowded into each other: groups now run down the chart, methods are written on two lines."""
    tilted = _layout(page_by_page, "stratified")["tilted"]
    assert not tilted, f"tilted labels, e.g. {tilted}"


def test_cold_deep_link_runs_through_app_py(app_server):
    """The first visitor after a restart opens a shared URL (``/<last page>?seed=777``): it must get the
    real app, app.py's sidebar included. The shared server's fixture made that visit before anyone else
    (tests/support/browser.py: visit_cold_deep_link)."""
    visit = app_server.cold_visit
    assert not visit.problems, visit.problems
    assert COLD_SEED in visit.seeds, f"cold deep link did not run app.py's sidebar (seed inputs: {visit.seeds})"
