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
screen, and the group-means page's charts do not tilt their category labels (one page visit serves the page
check and the layout checks).

Skipped cleanly when /usr/bin/chromium or playwright is missing (``.ci/run`` installs chromium).
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

import numpy as np
import pytest
from quality_support import REPO_ROOT, chromium_available, discover_pages, wait_for_app_idle
from support.browser import COLD_SEED, PageWatch, good_csv, run_and_wait, sidebar_seeds, upload

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

PAGES = discover_pages()
SHOTS = REPO_ROOT / "screenshots"
TIMINGS: dict[str, float] = {}


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


#: Screenshots for people, not checks (~0.6 s of browser CPU each, and the charts drawn again at the tall
#: viewport): BROWSER_SCREENSHOTS=pages saves one per page (slider moved) and the two uploads; =all also each
#: page before its slider moves and each page with the uploaded file. By default only the README's picture.
SHOTS_WANTED = os.environ.get("BROWSER_SCREENSHOTS", "")
ALL_SHOTS = SHOTS_WANTED == "all"


def _shot(page, name: str, *, extra: bool = False) -> None:
    """Screenshot of the whole page: Streamlit scrolls inside its main container, so the
    viewport is made as tall as the content for the shot (capped), then restored. ``extra`` shots
    only with BROWSER_SCREENSHOTS=all, the others with BROWSER_SCREENSHOTS=pages (for people, not a check)."""
    if not SHOTS_WANTED or (extra and not ALL_SHOTS):
        return
    t0 = time.perf_counter()
    SHOTS.mkdir(exist_ok=True)
    size = page.viewport_size or {"width": 1366, "height": 900}
    height = page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]');
        return m ? m.scrollHeight : document.body.scrollHeight; }""")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 8000))})
    page.wait_for_timeout(200)  # the charts follow the new size
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)
    TIMINGS["screenshots (all)"] = TIMINGS.get("screenshots (all)", 0.0) + time.perf_counter() - t0


#: The README's picture: the Gini page's first screen at 1280x720, remade by every run of this test so it
#: shows the page as it is (a policy-maker's first view: the answer and the recommended epsilon).
README_PICTURE = REPO_ROOT / "docs" / "img" / "gini_page.png"


def _readme_picture(page) -> None:
    size = page.viewport_size or {"width": 1366, "height": 900}
    page.set_viewport_size({"width": 1280, "height": 720})
    try:
        page.wait_for_timeout(300)  # the charts follow the new size
        page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]');
            if (m) m.scrollTo(0, 0); window.scrollTo(0, 0); }""")
        README_PICTURE.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(README_PICTURE))
    finally:
        page.set_viewport_size(size)


THUMB = 'input[type="range"], [role="slider"]'  # react-aria (Streamlit >= 1.5x) or baseweb


def _main_slider_thumb(page):
    """The thumb of the page's main slider: the first main-area slider about epsilon, else the first."""
    # Only visible sliders: those in a hidden tab or a collapsed expander cannot be dragged.
    sliders = [s for s in page.query_selector_all('[data-testid="stMain"] [data-testid="stSlider"]') if s.is_visible()]
    if not sliders:
        return None
    labels = [(s.query_selector('[data-testid="stWidgetLabel"]') or s).inner_text() for s in sliders]
    eps = [
        s
        for s, lab in zip(sliders, labels, strict=True)
        if re.search(r"ε|epsilon|privacy budget", lab, re.I) and not re.match(r"\s*(runs|number|how many)", lab, re.I)
    ]
    chosen = (eps or sliders)[0]
    thumb = chosen.query_selector(THUMB)
    assert thumb is not None, "a slider is shown but its thumb cannot be found (the DOM changed?)"
    return thumb


def _slider_value(thumb) -> str | None:
    return thumb.get_attribute("aria-valuetext") or thumb.get_attribute("aria-valuenow") or thumb.input_value()


# A thumb at its maximum (react-aria <input type=range>, or a baseweb [role=slider]): ArrowRight would not move it.
_AT_MAX = """e => e.type === 'range' ? e.valueAsNumber >= Number(e.max)
    : Number(e.getAttribute('aria-valuenow')) >= Number(e.getAttribute('aria-valuemax'))"""


def _move_main_slider(watch: PageWatch) -> str | None:
    """Press ArrowRight on the main slider (ArrowLeft at its maximum) and wait for the run it starts;
    'old -> new' or None when the page shows no slider."""
    page = watch.page
    thumb = _main_slider_thumb(page)
    if thumb is None:
        return None
    label = thumb.get_attribute("aria-label") or ""
    before = _slider_value(thumb)
    key = "ArrowLeft" if thumb.evaluate(_AT_MAX) else "ArrowRight"

    def press() -> None:
        thumb.focus()
        page.keyboard.press(key)

    run_and_wait(page, press)
    after = _slider_value(_main_slider_thumb(page))
    assert after != before, f"the main slider {label!r} did not move ({key})"
    return f"{label} {before} -> {after}"


# ---------------------------------------------------------------------------------------------
# Upload through the sidebar (first: the page-by-page tests below hold the kept tab until the module ends)
# ---------------------------------------------------------------------------------------------


def _nav_links(page):
    return page.query_selector_all('[data-testid="stSidebarNav"] a')


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
    _shot(page, "upload_binary")
    assert upload(page, "incomes_upload.csv", good_csv())
    assert not tab.all_problems(), f"after a good upload following a bad one: {tab.all_problems()}"
    _shot(page, "upload_done")
    # Visit every page in the same session (page.goto would start a new session without the file).
    n_links = len(_nav_links(page))
    assert n_links == len(PAGES), f"sidebar navigation shows {n_links} links for {len(PAGES)} pages"
    for i, pg in enumerate(PAGES):
        t0 = time.perf_counter()
        run_and_wait(page, _nav_links(page)[i].click)
        TIMINGS[f"upload: open {pg.name} (navigation link)"] = time.perf_counter() - t0
        assert not tab.all_problems(), f"{pg.path} with the uploaded CSV: {tab.all_problems()}"
        _move_main_slider(tab)
        assert not tab.all_problems(), f"{pg.path} with the uploaded CSV, slider moved: {tab.all_problems()}"
        _shot(page, f"upload_{pg.name}", extra=True)


# ---------------------------------------------------------------------------------------------
# Page by page, with the layout checks of the method pages on the way
# ---------------------------------------------------------------------------------------------

#: The window of the page-by-page pass: the README picture's, and the screen the method pages must fit.
VIEWPORT = {"width": 1280, "height": 720}
#: The method pages measured on the way (at their defaults, before the slider moves): what does not fit.
LAYOUT_ROUTES = ("gini", "percentiles", "stratified", "ratios")

# Everything is measured inside the page in one evaluation (no round trip per element):
# * a metric label is cut ("True Gini (confident…"): the label element's scrollWidth exceeds its clientWidth;
# * a table in the main area scrolls sideways: a data grid's scroller is wider than its box (tables in an
#   expander are measured with the expander open: a closed one is not drawn), a Markdown table is wider than
#   its column;
# * a text drawn in a chart (title, annotations, marker labels such as "k* = 0", the legend) lies over another;
# * a chart tilts its category labels (the group-means page's were crowded into each other).
_MEASURE = r"""() => {
    const main = document.querySelector('[data-testid="stMain"]');
    const cut = [];
    for (const label of main.querySelectorAll('[data-testid="stMetricLabel"]')) {
        for (const el of [label, ...label.querySelectorAll('*')]) {
            if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) { cut.push(label.innerText); break; }
        }
    }
    const sideways = [];
    for (const frame of main.querySelectorAll('[data-testid="stDataFrame"]')) {
        const scroller = frame.querySelector('.dvn-scroller');
        if (scroller && scroller.scrollWidth > scroller.clientWidth + 1) {
            sideways.push(`${scroller.scrollWidth} px of columns in ${scroller.clientWidth} px: `
                          + (frame.getAttribute('aria-label') || frame.innerText.slice(0, 80)));
        }
    }
    for (const table of main.querySelectorAll('[data-testid="stMarkdownContainer"] table')) {
        const column = table.closest('[data-testid="stElementContainer"]');
        const over = table.getBoundingClientRect().right - column.getBoundingClientRect().right;
        if (over > 1) sideways.push(`a Markdown table ${over.toFixed(0)} px past its column: ${table.innerText.slice(0, 60)}`);
    }
    const overlaps = [];
    const boxes = (root, selector) => [...root.querySelectorAll(selector)]
        .map(el => ({text: (el.textContent || '').trim().slice(0, 40), r: el.getBoundingClientRect()}))
        .filter(b => b.r.width > 0 && b.r.height > 0 && b.text);
    // text boxes are the font's line boxes: two that share even part of a pixel are drawn into each other
    const meet = (a, b) => a.r.left < b.r.right && b.r.left < a.r.right && a.r.top < b.r.bottom && b.r.top < a.r.bottom;
    for (const plot of main.querySelectorAll('.js-plotly-plot')) {
        const texts = [...boxes(plot, 'g.annotation-text-g text'), ...boxes(plot, 'g.textpoint text'),
                       ...boxes(plot, '.g-gtitle text')];
        const legend = plot.querySelector('g.legend');
        const legendBox = legend && legend.getBoundingClientRect();
        for (let i = 0; i < texts.length; i++) {
            if (legendBox && legendBox.width > 0 && meet(texts[i], {r: legendBox})) {
                overlaps.push(`"${texts[i].text}" over the legend`);
            }
            for (let j = i + 1; j < texts.length; j++) {
                if (meet(texts[i], texts[j])) overlaps.push(`"${texts[i].text}" over "${texts[j].text}"`);
            }
        }
    }
    const tilted = [];  // charts whose category labels plotly tilted because they did not fit side by side
    for (const plot of main.querySelectorAll('.js-plotly-plot')) {
        const label = [...plot.querySelectorAll('g.xtick text')]
            .find(t => /rotate\((?!0[,)])/.test(t.getAttribute('transform') || ''));
        if (label) tilted.push(label.textContent);
    }
    return {cut, sideways, overlaps, tilted};
}"""

_RECOMMENDED_BOTTOM = """() => {
    const box = [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stAlert"]')]
        .find(el => el.innerText.includes('Recommended:'));
    return box ? box.getBoundingClientRect().bottom : null;
}"""


def _open_expanders_with_tables(page) -> None:
    """Open the main area's closed expanders that hold a table (a click in the browser, no script run)."""
    for expander in page.query_selector_all('[data-testid="stMain"] [data-testid="stExpander"] details:not([open])'):
        if expander.query_selector('[data-testid="stDataFrame"]'):
            expander.query_selector("summary").click()
    page.wait_for_timeout(300)  # the grid is drawn on the next frames after the expander opens


@dataclass
class PageVisit:
    """What the page-by-page pass saw on one page: what went wrong (empty: right) and, on a method page,
    what does not fit the screen (``_MEASURE``) and where the Gini page's recommended ε ends."""

    failures: list[str] = field(default_factory=list)
    layout: dict | None = None
    recommended_bottom: float | None = None


def _visit(app_server, tab: PageWatch, pg, visit: PageVisit) -> None:
    """Open ``pg`` (its URL for the first page and the deep link, else the sidebar's link), check it, measure
    a method page's layout, then move its main slider and check again."""
    page = tab.page
    tab.errors.clear()
    deep_link = pg == PAGES[-1]
    t0 = time.perf_counter()
    links = [] if deep_link or not page.url.startswith(app_server.url) else _nav_links(page)
    if len(links) == len(PAGES):
        run_and_wait(page, links[PAGES.index(pg)].click, timeout_ms=90_000)
    else:
        page.goto(f"{app_server.url}/{pg.route}" + (f"?seed={COLD_SEED}" if deep_link else ""))
        wait_for_app_idle(page, timeout_ms=90_000)  # a first run on a loaded machine (a limit, not a timed check)
    TIMINGS[f"open {pg.name}"] = time.perf_counter() - t0
    if not page.query_selector('[data-testid="stMain"] h1'):
        visit.failures.append(f"{pg.path}: no title rendered")
    if tab.all_problems():
        visit.failures.append(f"{pg.path} on open: {tab.all_problems()}")
    if deep_link and COLD_SEED not in sidebar_seeds(page):
        visit.failures.append(f"seed from the URL not shown in the sidebar: {sidebar_seeds(page)}")
    _shot(page, f"{pg.name}_opened", extra=True)
    if pg.route in LAYOUT_ROUTES:
        if pg.route == "gini":
            visit.recommended_bottom = page.evaluate(_RECOMMENDED_BOTTOM)
        page.wait_for_selector('[data-testid="stMetricLabel"], [data-testid="stDataFrame"]')
        _open_expanders_with_tables(page)
        visit.layout = page.evaluate(_MEASURE)

    t0 = time.perf_counter()
    moved = _move_main_slider(tab)
    if moved is not None:
        TIMINGS[f"slider {pg.name}"] = time.perf_counter() - t0
        if tab.all_problems():
            visit.failures.append(f"{pg.path} after moving the main slider ({moved}): {tab.all_problems()}")
    _shot(page, pg.name)  # the slider moved, if the page has one
    if pg.name == "gini":
        _readme_picture(page)


@pytest.fixture(scope="module")
def page_by_page(app_server, browser, tabs) -> dict[str, PageVisit]:  # ``browser``: cold visit made
    """Every page in one tab, at 1280x720, as a user goes: one Streamlit session from the first page (opened by
    its URL) to the last but one (each opened by the sidebar's navigation link; in the app: a reload of the
    frontend costs the browser 1-1.5 s of CPU per page; every page opened fresh by its URL is
    tests/test_app_pages.py's, in AppTest), then the last page opened as a shared link with a seed in the query
    string (a warm deep link, a page load). The process's kept tab (tests/conftest.py ``tabs``), held until the
    module ends, so the upload test runs before. A page that raises is recorded and the next one visited."""
    visits = {pg.name: PageVisit() for pg in PAGES}
    with tabs.lease(timeout_ms=60_000) as tab:
        tab.page.set_viewport_size(VIEWPORT)
        for pg in PAGES:
            try:
                _visit(app_server, tab, pg, visits[pg.name])
            except Exception as exc:  # this page's test reports it; the next pages are still visited
                visits[pg.name].failures.append(f"{pg.path}: {type(exc).__name__}: {exc}")
        yield visits


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
