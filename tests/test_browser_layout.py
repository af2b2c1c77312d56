"""The method pages fit a 1280x720 screen (real headless Chromium, the shared ``app_server``): measured in the
browser, not guessed from the code.

One session visits the Gini page (one page load), then the percentiles, group-means and ratios pages by the
sidebar's links (in-app navigation), and on each measures:

* no metric label is cut ("True Gini (confident…"): the label element's scrollWidth exceeds its clientWidth;
* no table in the main area scrolls sideways: a data grid's scroller is wider than its box (tables in an
  expander are measured with the expander open: a closed one is not drawn), a Markdown table is wider than
  its column;
* no text drawn in a chart (title, annotations, marker labels such as "k* = 0", the legend) lies over
  another;
* on the Gini page, the answer's recommended ε is on the first screen (above the fold at 720 px);
* on the group-means page, no chart tilts its category labels (they were crowded into each other).
"""

from __future__ import annotations

import pytest
from quality_support import chromium_available, wait_for_app_idle
from support.browser import run_and_wait

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

VIEWPORT = {"width": 1280, "height": 720}
#: the pages as the sidebar names them, in the order visited (the first is opened by URL)
PAGES = {
    "gini": "Gini index",
    "percentiles": "Earnings percentiles (PSEO)",
    "stratified": "Group means and parity",
    "ratios": "Relative risk and ratios",
}

# Everything is measured inside the page in one evaluation (no round trip per element).
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


@pytest.fixture(scope="module")
def measured(app_server, tabs) -> dict[str, dict]:
    """Each page as a 1280x720 visitor sees it: what does not fit (see the module's docstring). In the
    process's kept tab (tests/conftest.py ``tabs``)."""
    with tabs.lease(timeout_ms=120_000) as watch:
        page = watch.page
        page.set_viewport_size(VIEWPORT)
        results: dict[str, dict] = {}
        for number, (route, title) in enumerate(PAGES.items()):
            if number == 0:
                page.goto(f"{app_server.url}/{route}")
                wait_for_app_idle(page, timeout_ms=120_000)
                results["recommended_bottom"] = page.evaluate(_RECOMMENDED_BOTTOM)
            else:
                link = page.locator('[data-testid="stSidebarNav"] a', has_text=title)
                run_and_wait(page, link.click, timeout_ms=180_000)
            page.wait_for_selector('[data-testid="stMetricLabel"], [data-testid="stDataFrame"]')
            _open_expanders_with_tables(page)
            results[route] = page.evaluate(_MEASURE)
        return results


def test_the_gini_pages_recommended_epsilon_is_on_the_first_screen(measured):
    bottom = measured["recommended_bottom"]
    assert bottom is not None, "the Gini page shows no recommended ε"
    assert bottom <= VIEWPORT["height"], f"the recommended ε ends at {bottom:.0f} px, below the 720 px screen"


@pytest.mark.parametrize("route", list(PAGES))
def test_no_metric_label_is_cut(measured, route):
    assert not measured[route]["cut"], f"{route}: truncated metric labels {measured[route]['cut']}"


@pytest.mark.parametrize("route", list(PAGES))
def test_no_table_scrolls_sideways(measured, route):
    assert not measured[route]["sideways"], f"{route}: {measured[route]['sideways']}"


@pytest.mark.parametrize("route", list(PAGES))
def test_no_chart_text_lies_over_another(measured, route):
    assert not measured[route]["overlaps"], f"{route}: {measured[route]['overlaps']}"


def test_group_means_charts_keep_their_labels_level(measured):
    """The group-means page's group names ("Female × Other race (n=207)") and method names were tilted by plotly,
    crowded into each other: groups now run down the chart, methods are written on two lines."""
    assert not measured["stratified"]["tilted"], f"tilted labels, e.g. {measured['stratified']['tilted']}"
