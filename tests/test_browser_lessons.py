"""Lesson links open their pages without an exception box, in a real headless Chromium.

One link per lesson and target page is clicked here (the lessons' other links open the same page with other
values of the same query parameters; tests/test_page_lessons.py opens every link with AppTest, settings
included). They are split over this file and tests/test_browser_lessons_more.py so that two xdist workers
share them.

The app server shared by the browser tests (``app_server`` in tests/conftest.py: free localhost port,
temp log dir, stopped at the end); Playwright drives Debian's /usr/bin/chromium. For each lesson step: open the
Lessons page, click the step's link (``st.page_link`` with query parameters), wait for the run it
starts to finish, and fail on any exception box, st.error box, console error or uncaught page error;
the address must carry the step's query parameters (the target page read them). Then back to the
Lessons page by one press of the browser's Back button, as a teacher would (in the app: no reload of the
frontend, which cost about 2 s of browser CPU per step; on the first step's page a slider is moved first),
and the next step. Also plays one round of the attacker game in the browser. Skipped when chromium or
playwright is missing.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from quality_support import chromium_available, visible_problems, wait_for_app_idle
from support.browser import run_and_wait

from ui.gini.plots import YOUR_EPSILON_COLOR
from ui.lessons import views as lessons_views

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

STEPS = [(lesson, number, step) for lesson in lessons_views.LESSONS for number, step in enumerate(lesson.steps, 1)]
LINK = '[data-testid="stMain"] [data-testid="stPageLink-NavLink"]'
SCROLL_TOP = """() => { const m = document.querySelector('[data-testid="stMain"]');
    return m ? m.scrollTop : document.scrollingElement.scrollTop; }"""
SCROLLED_TO_TOP = f"() => ({SCROLL_TOP})() === 0"
NAV_LESSONS = '[data-testid="stSidebarNav"] a[href$="/lessons"]'
MAIN_CHARTS = '[data-testid="stMain"] [data-testid="stPlotlyChart"]'
SLIDER_THUMB = '[data-testid="stSlider"] :is(input[type="range"], [role="slider"])'  # react-aria or baseweb
_AT_MAX = """e => e.type === 'range' ? e.valueAsNumber >= Number(e.max)
    : Number(e.getAttribute('aria-valuenow')) >= Number(e.getAttribute('aria-valuemax'))"""


def _on_lessons_page(page) -> bool:
    return len(page.query_selector_all(LINK)) == len(STEPS)


def _open_lessons(page, server) -> None:
    page.goto(f"{server.url}/lessons")
    wait_for_app_idle(page, timeout_ms=90_000)


#: the steps clicked in the browser (indices into STEPS): the first of each lesson's steps on each page; a click
#: and the way back cost two page runs and their charts in Chromium, about 2.5 s of CPU
BROWSER_STEPS = [
    i
    for i, (lesson, _, step) in enumerate(STEPS)
    if all((other.key, other_step.page) != (lesson.key, step.page) for other, _, other_step in STEPS[:i])
]
HALF = (len(BROWSER_STEPS) + 1) // 2  # the second half runs in tests/test_browser_lessons_more.py (another worker)


def test_first_half_of_lesson_links_open_without_error(app_server, tab):
    tab.page.set_viewport_size({"width": 1280, "height": 720})  # the window of the layout check below
    check_lesson_links(app_server, tab, BROWSER_STEPS[:HALF], check_chart_labels=True)


# The texts of a plotly chart (axis titles, tick labels, annotations) whose boxes overlap by more than 2 px
# both ways: what a reader sees as labels written over each other.
_OVERLAPPING_LABELS_JS = """chart => {
    const boxes = [...chart.querySelectorAll('svg text')].filter(t => t.textContent.trim())
        .map(t => [t.textContent.trim(), t.getBoundingClientRect()]);
    const out = [];
    for (let i = 0; i < boxes.length; i++) for (let j = i + 1; j < boxes.length; j++) {
        const [ta, a] = boxes[i], [tb, b] = boxes[j];
        const dx = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const dy = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (dx > 2 && dy > 2) out.push(ta + ' | ' + tb);
    }
    return out;
}"""


def overlapping_chart_labels(page) -> list[str]:
    """Overlapping labels in the Lessons page's before/after charts (drawn at the page's width)."""
    charts = f'{MAIN_CHARTS}:has(svg.main-svg text)'
    page.wait_for_function(f"() => document.querySelectorAll('{charts}').length >= 2")
    return [overlap for chart in page.query_selector_all(charts) for overlap in chart.evaluate(_OVERLAPPING_LABELS_JS)]


def check_lesson_links(app_server, tab, indices, *, check_chart_labels: bool = False) -> None:
    """One tab, as a teacher would use it: the Lessons page lists every step's link; click a link, check
    the page, back to the Lessons page by the sidebar's navigation link, next link (for the steps in
    ``indices``). With ``check_chart_labels``, first: no overlapping labels in the before/after charts
    (at 1280 px their two-line panel titles used to run into each other)."""
    page, errors = tab.page, tab.errors
    page.set_default_timeout(60_000)
    _open_lessons(page, app_server)
    assert not visible_problems(page) and not errors, (visible_problems(page), errors)
    assert _on_lessons_page(page), f"{len(page.query_selector_all(LINK))} lesson links for {len(STEPS)} steps"
    if check_chart_labels:
        assert not overlapping_chart_labels(page), overlapping_chart_labels(page)
    failures = []
    for index in indices:
        lesson, number, step = STEPS[index]
        link = page.query_selector_all(LINK)[index]
        assert step.label in link.inner_text()
        before = page.evaluate("location.href")  # (page.url can lag behind the app's in-page navigations)
        run_and_wait(page, link.click, timeout_ms=90_000)
        page.wait_for_function("before => location.href !== before", arg=before)  # the address changed
        url = urlparse(page.evaluate("location.href"))
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        where = f"{lesson.key} step {number} ({step.label})"
        if url.path.rstrip("/").split("/")[-1] != (
            lessons_views.URL_PATHS[step.page] or url.path.rstrip("/").split("/")[-1]
        ):
            failures.append(f"{where}: opened {url.path}")
        failures += [
            f"{where}: {key}={query.get(key)!r}, expected {value!r}"
            for key, value in step.params.items()
            if query.get(key) != value
        ]
        if not page.query_selector('[data-testid="stMain"] h1'):
            failures.append(f"{where}: no title rendered")
        try:  # the page opens at its top, wherever the link sat on the Lessons page (app.py scrolls up)
            page.wait_for_function(SCROLLED_TO_TOP, timeout=10_000)
        except Exception:  # reported with the position below
            failures.append(f"{where}: opened {page.evaluate(SCROLL_TOP)} px down the page, not at its top")
        if step.page == "app_pages/gini.py":
            failures += [f"{where}: {problem}" for problem in _error_chart_problems(page)]
        if step.page == "app_pages/planner.py":
            failures += [f"{where}: {problem}" for problem in _sideways_cue_problems(page)]
        if index == indices[0] and _move_first_slider(page):
            failures += [f"{where}, slider moved: {problem}" for problem in tab.all_problems()]
        failures += [f"{where}: {problem}" for problem in tab.all_problems()]
        errors.clear()
        # back to the Lessons page by one press of the browser's Back button, as a teacher would: a page
        # visit is one history entry, also after its settings changed (ui.browser_history)
        if index != indices[-1]:
            run_and_wait(page, page.go_back, timeout_ms=90_000)
            if not _on_lessons_page(page):
                failures.append(f"one Back press after {where} opened {page.evaluate('location.href')}")
                run_and_wait(page, page.locator(NAV_LESSONS).click, timeout_ms=90_000)
            failures += [f"Lessons page after {where}: {problem}" for problem in tab.all_problems()]
            errors.clear()
    assert not failures, failures


# The Gini page's error-against-ε chart (section 4): its "your ε" label and line, and the ε axis's tick labels.
def _rgb(hex_colour: str) -> str:
    """'#217a21' as the browser writes it in a style: 'rgb(33, 122, 33)'."""
    return "rgb({}, {}, {})".format(*(int(hex_colour[i : i + 2], 16) for i in (1, 3, 5)))


_ERROR_CHART_JS = """() => {
    for (const chart of document.querySelectorAll('[data-testid="stPlotlyChart"]')) {
        const label = [...chart.querySelectorAll('g.annotation')].find(a => a.textContent.includes('your ε'));
        if (!label) continue;
        const line = [...chart.querySelectorAll('path')].find(
            p => (p.getAttribute('style') || '').includes('YOUR_EPSILON_RGB'));
        return {label: label.getBoundingClientRect().left, line: line ? line.getBoundingClientRect().left : null,
                ticks: [...chart.querySelectorAll('g.xtick text')].map(t => t.textContent)};
    }
    return null;
}""".replace("YOUR_EPSILON_RGB", _rgb(YOUR_EPSILON_COLOR))


def _error_chart_problems(page) -> list[str]:
    """The "your ε" label starts at its line (it sat 290 px right of it: an annotation on a log axis is placed
    in log10 units) and every tick of the log ε axis is written in full (0.5, 0.2: not "5", "2")."""
    page.wait_for_function(f"() => ({_ERROR_CHART_JS})() !== null")
    chart = page.evaluate(_ERROR_CHART_JS)
    problems = []
    if chart["line"] is None or abs(chart["label"] - chart["line"]) > 8:
        problems.append(f"the 'your ε' label is at {chart['label']:.0f} px, its line at {chart['line']} px")
    if any(float(t) >= 1 for t in chart["ticks"][:2]) or "0.5" not in chart["ticks"]:
        problems.append(f"the ε axis reads {chart['ticks']}")
    return problems


_CUE = '[data-testid="stMain"] .dp-sideways-cue'
_WIDE_TABLE_JS = """() => [...document.querySelectorAll('[data-testid="stMain"] [data-testid="stTable"] *')]
    .some(e => ['auto', 'scroll'].includes(getComputedStyle(e).overflowX) && e.scrollWidth > e.clientWidth + 2)"""


def _sideways_cue_problems(page) -> list[str]:
    """On a phone (390 x 844) the planner's table scrolls sideways: a cue says so there, and only there."""
    problems, size = [], page.viewport_size
    page.wait_for_selector(f'{_CUE}, [data-testid="stMain"] [data-testid="stTable"]', state="attached")
    if page.locator(_CUE).first.is_visible():
        problems.append("the 'swipe sideways' cue shows on a wide screen")
    page.set_viewport_size({"width": 390, "height": 844})
    try:
        page.wait_for_function(_WIDE_TABLE_JS)  # the table is wider than a phone
        if not page.locator(_CUE).first.is_visible():
            problems.append("a phone's table scrolls sideways with no cue")
    finally:
        page.set_viewport_size(size)
    return problems


def _move_first_slider(page) -> bool:
    """One step of the first visible slider of the main area (a change of the page's URL); False if none."""
    thumbs = [t for t in page.query_selector_all(f'[data-testid="stMain"] {SLIDER_THUMB}') if t.is_visible()]
    if not thumbs:
        return False
    before = page.evaluate("location.href")

    def press() -> None:
        thumbs[0].focus()
        page.keyboard.press("ArrowLeft" if thumbs[0].evaluate(_AT_MAX) else "ArrowRight")

    run_and_wait(page, press, timeout_ms=90_000)
    page.wait_for_function("before => location.href !== before", arg=before)
    return True


def test_attacker_round_in_the_browser(app_server, tab):
    """Open a round, guess, see the answer, go to the next round: no errors, the round number advances."""
    page, errors = tab.page, tab.errors
    page.set_default_timeout(60_000)
    page.goto(f"{app_server.url}/attacker?atk_mech=count&atk_eps=1.0&atk_round=5")
    wait_for_app_idle(page, timeout_ms=90_000)
    assert "The answer was" not in page.inner_text('[data-testid="stMain"]')
    run_and_wait(page, page.get_by_role("button", name="Guess A: the target is in").click)
    assert "The answer was" in page.inner_text('[data-testid="stMain"]')
    run_and_wait(page, page.get_by_role("button", name="Next round").click)
    page.wait_for_url("**atk_round=6**")
    assert "atk_round=6" in page.url
    assert not visible_problems(page) and not errors, (visible_problems(page), errors)
