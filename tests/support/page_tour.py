"""The page tour: every page of app.py's navigation visited once in one kept tab, at 1280x720, for two test files.

* ``tests/test_browser.py`` reads what the tour saw as a user (each page opens and its main slider moves without an
  exception box, st.error, console error or failed request; the method pages' layout at their defaults; the
  deep-linked last page's seed) from :attr:`PageTour.visits`;
* ``tests/test_browser_accessibility.py`` reads what it saw as an auditor (axe-core's WCAG 2.1 A/AA rules with every
  disclosure open, the charts' text alternatives and text contrast, the keyboard path, the tabs' titles) from
  :attr:`PageTour.accessibility`.

Why one tour: the two files visited the same 8 pages in the same window, one after the other, on the same worker;
each visit draws the page's charts again (1.5-3 s of Chromium's CPU per page on 2 cores). One visit now serves both.

The order, as a reader goes: the landing page by its URL ("r" pressed there must not rerun it; the page checked);
the Gini page reached from it by keyboard alone (skip link, "Open the Gini page", the ε slider moved by an arrow
key: that is the Gini page's slider move); the next pages by the sidebar's links; the last page as a shared link
with a seed in its query (a warm deep link, a page load); then back to the landing page by its link to move its
slider (moved first, the focus would start the keyboard path inside the slider instead of at the top).
Clicks that only open a disclosure are made by the page's own ``click()`` (no focus move), so the keyboard path
starts where a reader's would. A page that raises is recorded (in both results) and the next one visited.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field

from quality_support import REPO_ROOT, discover_pages, wait_for_app_idle

from support.browser import COLD_SEED, PageWatch, TabKeeper, open_data_popover, run_and_wait, sidebar_seeds

PAGES = discover_pages()
#: The window of the tour: the README picture's, and the screen the method pages must fit.
VIEWPORT = {"width": 1280, "height": 720}
DESKTOP = VIEWPORT
PHONE = {"width": 390, "height": 844}
#: The method pages measured on the way (at their defaults, before the slider moves): what does not fit.
LAYOUT_ROUTES = ("gini", "percentiles", "stratified", "ratios")

# ---------------------------------------------------------------------------------------------
# Screenshots and timings (for people, not checks)
# ---------------------------------------------------------------------------------------------

SHOTS = REPO_ROOT / "screenshots"
TIMINGS: dict[str, float] = {}
#: Screenshots for people, not checks (~0.6 s of browser CPU each, and the charts drawn again at the tall
#: viewport): BROWSER_SCREENSHOTS=pages saves one per page (slider moved) and the two uploads; =all also each
#: page before its slider moves and each page with the uploaded file. By default only the README's picture.
SHOTS_WANTED = os.environ.get("BROWSER_SCREENSHOTS", "")
ALL_SHOTS = SHOTS_WANTED == "all"


def shot(page, name: str, *, extra: bool = False) -> None:
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


#: The README's picture: the Gini page's first screen at 1280x720, remade by every run of the tour so it
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


# ---------------------------------------------------------------------------------------------
# The main slider (a user's check: the page reruns when it moves)
# ---------------------------------------------------------------------------------------------

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


def move_main_slider(watch: PageWatch) -> str | None:
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


def nav_links(page):
    return page.query_selector_all('[data-testid="stSidebarNav"] a')


# ---------------------------------------------------------------------------------------------
# Layout of the method pages (measured in the browser, not guessed from the code)
# ---------------------------------------------------------------------------------------------

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

# Open the main area's closed expanders that hold a table, by their summary's own click() (Streamlit's expander
# follows it; the focus stays where it was, so a keyboard path after it goes on from where it stood).
_OPEN_EXPANDERS_WITH_TABLES_JS = """() => {
    let opened = 0;
    for (const d of document.querySelectorAll('[data-testid="stMain"] [data-testid="stExpander"] details:not([open])')) {
        const summary = d.querySelector(':scope > summary');
        if (summary && d.querySelector('[data-testid="stDataFrame"]')) { summary.click(); opened++; }
    }
    return opened;
}"""


def _measure_layout(page) -> dict:
    page.wait_for_selector('[data-testid="stMetricLabel"], [data-testid="stDataFrame"]')
    if page.evaluate(_OPEN_EXPANDERS_WITH_TABLES_JS):
        page.wait_for_timeout(300)  # the grid is drawn on the next frames after the expander opens
    return page.evaluate(_MEASURE)


# ---------------------------------------------------------------------------------------------
# Accessibility (axe-core, the charts' text, the keyboard)
# ---------------------------------------------------------------------------------------------

#: The axe-core rule tags of WCAG 2.0 and 2.1, levels A and AA (docs/accessibility.md names them).
WCAG_21_AA_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
#: The rules whose outcome depends on the window's width, run again at PHONE (a full run is ~1.5 s of CPU per page).
PHONE_RULES = ("scrollable-region-focusable",)
#: The rules run again with a compact sidebar's data popover open (its widgets are drawn only while it is open).
POPOVER_RULES = ("label", "aria-input-field-name", "button-name", "select-name", "color-contrast", "aria-allowed-attr")
_AXE = None


def axe_violations(page, *, rules: tuple[str, ...] | None = None) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is now, one line per element (empty: none)."""
    global _AXE
    if _AXE is None:
        from axe_playwright_python.sync_playwright import Axe

        _AXE = Axe()
    only = {"type": "rule", "values": list(rules)} if rules else {"type": "tag", "values": list(WCAG_21_AA_TAGS)}
    response = _AXE.run(page, options={"runOnly": only, "resultTypes": ["violations"]}).response
    return [
        f"{violation['id']} ({violation['impact']}): {violation['help']} -- {node['html'][:160]} -- "
        f"{(node.get('failureSummary') or '').splitlines()[-1:]}"
        for violation in response["violations"]
        for node in violation["nodes"]
    ]


# After the layout has followed a change (a disclosure opened, the window resized): two animation frames.
_SETTLED_JS = "() => new Promise(done => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"

# Open every closed disclosure (Streamlit's expanders and the charts' "Chart data as a table" are <details>) by a
# click on its summary, as a reader does: setting ``open`` alone does not tell Streamlit, so a section drawn only
# when opened (ui.lazy) would stay empty.
_OPEN_ALL_JS = """() => {
    const closed = [...document.querySelectorAll('details:not([open])')];
    closed.forEach(d => { const summary = d.querySelector(':scope > summary'); if (summary) summary.click(); else d.open = true; });
    return closed.length;
}"""

# Charts (plotly) not followed by their text alternative, by the chart's title or position.
_CHARTS_WITHOUT_TEXT_JS = """() => [...document.querySelectorAll('[data-testid="stPlotlyChart"]')].flatMap((chart, i) => {
    const box = chart.closest('[data-testid="stElementContainer"]');
    const next = box && box.nextElementSibling;
    if (next && next.querySelector('.dp-chart-text')) return [];
    const title = chart.querySelector('.gtitle');
    return [`chart ${i + 1}: ${title ? title.textContent : '(no title)'}`];
})"""

# Text drawn in plotly charts below 4.5:1 against what is behind it: the bar it is written in, else the chart's
# background (WCAG's relative luminance and contrast ratio).
_CHART_TEXT_CONTRAST_JS = r"""() => {
    const rgb = c => (c.match(/[\d.]+/g) || []).slice(0, 3).map(Number);
    const lum = c => { const [r, g, b] = rgb(c).map(v => { v /= 255;
        return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
        return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
    const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
    const low = [];
    for (const plot of document.querySelectorAll('.js-plotly-plot')) {
        const opaque = c => !/^rgba\(.*,\s*0\)$/.test(c) && c !== 'transparent';
        const svgBg = getComputedStyle(plot.querySelector('.main-svg')).backgroundColor;
        const paper = opaque(svgBg) ? svgBg : getComputedStyle(document.body).backgroundColor;
        const bgRect = plot.querySelector('.bglayer rect.bg');
        const plotBg = bgRect && Number(getComputedStyle(bgRect).fillOpacity) > 0 ? getComputedStyle(bgRect).fill : paper;
        for (const text of plot.querySelectorAll('text')) {
            const content = (text.textContent || '').trim();
            if (!content || text.getBoundingClientRect().width === 0) continue;
            const bar = text.closest('g.point') && text.closest('g.point').querySelector('path');
            const behind = bar ? getComputedStyle(bar).fill : plotBg;
            const fill = getComputedStyle(text).fill;
            const r = ratio(fill, behind);
            if (r < 4.5) low.push(`"${content.slice(0, 40)}": ${fill} on ${behind}, ${r.toFixed(2)}:1`);
        }
    }
    return low;
}"""


def _open_every_disclosure(page) -> None:
    """Open every closed disclosure. A section drawn only when opened (``ui.lazy``: the script box, the Gini's
    formula, the paper experiments) reruns the page when opened; its content, which may hold disclosures of its
    own, is opened in turn, so axe checks what a reader who opens everything sees."""
    for _ in range(4):
        if not page.evaluate(_OPEN_ALL_JS):
            break
        wait_for_app_idle(page, timeout_ms=90_000)
    page.evaluate(_SETTLED_JS)


def _check_shown_page(page) -> list[str]:
    """What is wrong on the page as shown: charts without their text, low-contrast chart text, axe's violations
    at 1280x720 (every disclosure open), then the layout rules at 390x844."""
    _open_every_disclosure(page)
    problems = [f"no text alternative after {chart}" for chart in page.evaluate(_CHARTS_WITHOUT_TEXT_JS)]
    problems += [f"chart text below 4.5:1: {text}" for text in page.evaluate(_CHART_TEXT_CONTRAST_JS)]
    problems += [f"axe at 1280x720: {v}" for v in axe_violations(page)]
    page.set_viewport_size(PHONE)
    try:
        page.evaluate(_SETTLED_JS)
        problems += [f"axe at 390x844: {v}" for v in axe_violations(page, rules=PHONE_RULES)]
    finally:
        page.set_viewport_size(DESKTOP)
    return problems


def _focused(page) -> dict:
    return page.evaluate(
        """() => { const e = document.activeElement;
            const style = getComputedStyle(e);
            return {text: (e.innerText || '').trim(), label: e.getAttribute('aria-label') || '',
                    type: e.getAttribute('type') || '', testid: e.getAttribute('data-testid') || '',
                    outline: style.outlineStyle === 'none' ? 0 : parseFloat(style.outlineWidth)}; }"""
    )


def _tab_to(page, matches, *, limit: int = 40) -> dict:
    """Press Tab until the focused element ``matches``; fail after ``limit`` presses."""
    seen = []
    for _ in range(limit):
        page.keyboard.press("Tab")
        focused = _focused(page)
        if matches(focused):
            return focused
        seen.append(focused["text"][:40] or focused["label"][:40] or focused["testid"])
    raise AssertionError(f"not reached by {limit} Tab presses; the focus went through {seen}")


def _answer(page) -> str:
    text = page.inner_text('[data-testid="stMain"]')
    match = re.search(r"At ε = [0-9.]+ the published Gini is within ±[0-9.]+ of the true Gini half the time", text)
    assert match, text[:2000]
    return match.group(0)


def _keyboard_to_gini(page) -> list[str]:
    """From the top of the landing page to the Gini page by the keyboard only (Tab, Enter), as a policy-maker who
    does not use a mouse; what went wrong (empty: nothing)."""
    page.keyboard.press("Tab")
    if _focused(page)["text"] != "Skip to main content":  # the first stop bypasses the sidebar (2.4.1)
        return [f"the first Tab stop is not Streamlit's skip link: {_focused(page)}"]
    page.keyboard.press("Enter")
    link = _tab_to(page, lambda f: "Open the Gini page" in f["text"])
    problems = [] if link["outline"] >= 2 else ["the focused link has no visible focus ring (2.4.7)"]
    run_and_wait(page, lambda: page.keyboard.press("Enter"))
    if not page.url.split("?")[0].endswith("/gini"):
        return [*problems, f"Enter on the link opened {page.url}"]
    return problems


def _keyboard_moves_epsilon(page) -> list[str]:
    """On the Gini page just opened by keyboard: Tab to the ε slider, one arrow key, and the answer follows."""
    before = _answer(page)
    slider = _tab_to(page, lambda f: f["type"] == "range" and "ε" in f["label"])
    if slider["label"] != "Privacy loss ε (log scale)" or not before.startswith("At ε = 1 "):
        return [f"the first ε slider reached is {slider['label']!r}; the answer {before!r}"]
    run_and_wait(page, lambda: page.keyboard.press("ArrowRight"))
    after = _answer(page)
    if after == before or after.startswith("At ε = 1 "):
        return [f"the arrow key did not change the answer: {before!r} -> {after!r}"]
    return []


#: The results of the keyboard path and of the single-key shortcut are kept under these names.
KEYBOARD_PATH = "keyboard path: landing -> Gini answer -> new ε"
SINGLE_KEY = "single-key shortcut"

# ---------------------------------------------------------------------------------------------
# The tour
# ---------------------------------------------------------------------------------------------


@dataclass
class PageVisit:
    """What the tour saw on one page as a user: what went wrong (empty: right) and, on a method page, what does
    not fit the screen (``_MEASURE``) and where the Gini page's recommended ε ends."""

    failures: list[str] = field(default_factory=list)
    layout: dict | None = None
    recommended_bottom: float | None = None


@dataclass
class PageTour:
    """``visits``: page name -> :class:`PageVisit`; ``accessibility``: page name (and :data:`KEYBOARD_PATH`,
    :data:`SINGLE_KEY`) -> what is wrong (empty: nothing)."""

    visits: dict[str, PageVisit]
    accessibility: dict[str, list[str]]


def _open(app_server, watch: PageWatch, number: int, pg, visit: PageVisit, accessibility) -> None:
    """Open page ``number`` (the first and the last by their URL, the Gini page by keyboard from the landing
    page, the others by the sidebar's link) and check it as opened."""
    page = watch.page
    deep_link = number == len(PAGES) - 1
    t0 = time.perf_counter()
    if number == 0 or deep_link:
        page.goto(f"{app_server.url}/{pg.route}" + (f"?seed={COLD_SEED}" if deep_link else ""))
        wait_for_app_idle(page, timeout_ms=90_000)  # a first run on a loaded machine (a limit, not a timed check)
    else:
        if pg.route == "gini" and number == 1:
            try:
                accessibility[KEYBOARD_PATH] = _keyboard_to_gini(page)
            except AssertionError as exc:  # a Tab stop not reached: the page is opened by its link below
                accessibility[KEYBOARD_PATH] = [str(exc)]
        if not page.url.split("?")[0].endswith(f"/{pg.route}"):
            run_and_wait(page, nav_links(page)[number].click, timeout_ms=90_000)
    TIMINGS[f"open {pg.name}"] = time.perf_counter() - t0
    if not page.query_selector('[data-testid="stMain"] h1'):
        visit.failures.append(f"{pg.path}: no title rendered")
    if watch.all_problems():
        visit.failures.append(f"{pg.path} on open: {watch.all_problems()}")
    if deep_link and COLD_SEED not in sidebar_seeds(page):
        visit.failures.append(f"seed from the URL not shown in the sidebar: {sidebar_seeds(page)}")
    shot(page, f"{pg.name}_opened", extra=True)
    if pg.route in LAYOUT_ROUTES:
        if pg.route == "gini":
            visit.recommended_bottom = page.evaluate(_RECOMMENDED_BOTTOM)
        visit.layout = _measure_layout(page)


def _move_slider(watch: PageWatch, pg, visit: PageVisit, accessibility) -> None:
    """Move the page's main slider (on the Gini page reached by keyboard: by Tab and an arrow key) and check."""
    page = watch.page
    t0 = time.perf_counter()
    if pg.route == "gini" and KEYBOARD_PATH in accessibility and not accessibility[KEYBOARD_PATH]:
        try:
            accessibility[KEYBOARD_PATH] = _keyboard_moves_epsilon(page)
        except AssertionError as exc:
            accessibility[KEYBOARD_PATH] = [str(exc)]
        moved = "ε by the arrow key" if not accessibility[KEYBOARD_PATH] else move_main_slider(watch)
    else:
        moved = move_main_slider(watch)
    if moved is not None:
        TIMINGS[f"slider {pg.name}"] = time.perf_counter() - t0
        if watch.all_problems():
            visit.failures.append(f"{pg.path} after moving the main slider ({moved}): {watch.all_problems()}")
    shot(page, pg.name)  # the slider moved, if the page has one
    if pg.name == "gini":
        _readme_picture(page)


def _audit(watch: PageWatch, number: int, pg) -> list[str]:
    """The page as shown, every disclosure open: axe, the charts' text, the data popover, the tab's title."""
    page = watch.page
    problems = _check_shown_page(page)
    # a compact sidebar's data choice is drawn only while its popover is open (not on the landing page: the
    # keyboard path starts there from the top of the page)
    if number and open_data_popover(page):
        problems += [f"data popover open: {v}" for v in axe_violations(page, rules=POPOVER_RULES)]
        page.keyboard.press("Escape")
    if not page.title().startswith(f"{pg.title} · "):
        problems.append(f"the tab's title is {page.title()!r}, not the page's own (2.4.2)")
    return problems + watch.all_problems()


def run_page_tour(app_server, tabs: TabKeeper) -> PageTour:
    """Every page once in the kept tab of ``tabs`` (module docstring: the order and why)."""
    tour = PageTour(visits={pg.name: PageVisit() for pg in PAGES}, accessibility={})
    visits, accessibility = tour.visits, tour.accessibility
    with tabs.lease(timeout_ms=60_000) as watch:
        page = watch.page
        page.set_viewport_size(VIEWPORT)
        for number, pg in enumerate(PAGES):
            watch.errors.clear()
            try:
                _open(app_server, watch, number, pg, visits[pg.name], accessibility)
                if number == 0:
                    runs = watch.runs_finished
                    page.keyboard.press("r")  # Streamlit's rerun shortcut, with the focus on the page (not a field)
                    wait_for_app_idle(page)
                    accessibility[SINGLE_KEY] = [] if watch.runs_finished == runs else ['"r" alone reran the page']
                else:
                    _move_slider(watch, pg, visits[pg.name], accessibility)
                accessibility[pg.name] = _audit(watch, number, pg)
            except Exception as exc:  # this page's tests report it; the next pages are still visited
                failure = f"{pg.path}: {type(exc).__name__}: {exc}"
                visits[pg.name].failures.append(failure)
                accessibility.setdefault(pg.name, []).append(failure)
        # the landing page's slider, moved last (module docstring)
        first = PAGES[0]
        watch.errors.clear()
        try:
            run_and_wait(page, nav_links(page)[0].click, timeout_ms=90_000)
            if watch.all_problems():
                visits[first.name].failures.append(f"{first.path} opened again: {watch.all_problems()}")
            _move_slider(watch, first, visits[first.name], accessibility)
        except Exception as exc:
            visits[first.name].failures.append(f"{first.path} (slider): {type(exc).__name__}: {exc}")
    accessibility.setdefault(KEYBOARD_PATH, ["the Gini page is not the second page of app.py's navigation"])
    return tour
