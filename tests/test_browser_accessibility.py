"""Accessibility (WCAG 2.1 levels A and AA) in a real Chromium: what docs/accessibility.md, the app's conformance
report, claims and these tests keep true.

* axe-core (the script bundled by ``axe-playwright-python``) with the WCAG 2.0/2.1 A and AA rules finds no violation
  on any of the 8 pages of app.py's navigation, visited by the app's own links in one tab at 1280x720 with every
  disclosure (expanders, "Chart data as a table") open (and the rules about names and contrast again with a compact
  sidebar's data popover open); then at a phone's 390x844 the rule that depends on the layout (a box that scrolls
  without keyboard access).
* Every chart drawn is followed by its text alternative (``ui.chart_text``), and every text drawn in a chart has a
  contrast of 4.5:1 with what is behind it (axe-core leaves chart text "incomplete": it cannot tell the background).
* The policy-maker's path works by keyboard alone: landing page -> skip link -> "Open the Gini page" (with a visible
  focus ring) -> the answer -> the ε slider moved with the arrow key changes the answer; the Gini page is checked
  in that state. Each page has its own title in the browser's tab; "r" alone does not rerun the page.

Skipped only where Chromium (or Playwright) is missing, like the other browser tests.
"""

from __future__ import annotations

import re

import pytest
from axe_playwright_python.sync_playwright import Axe
from quality_support import chromium_available, discover_pages, wait_for_app_idle
from support.browser import open_data_popover, run_and_wait

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

PAGES = discover_pages()
#: The axe-core rule tags of WCAG 2.0 and 2.1, levels A and AA (docs/accessibility.md names them).
WCAG_21_AA_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
DESKTOP = {"width": 1280, "height": 720}
PHONE = {"width": 390, "height": 844}
#: The rules whose outcome depends on the window's width, run again at PHONE (a full run is ~1.5 s of CPU per page).
PHONE_RULES = ("scrollable-region-focusable",)
#: The rules run again with a compact sidebar's data popover open (its widgets are drawn only while it is open).
POPOVER_RULES = ("label", "aria-input-field-name", "button-name", "select-name", "color-contrast", "aria-allowed-attr")
AXE = Axe()


def axe_violations(page, *, rules: tuple[str, ...] | None = None) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page as it is now, one line per element (empty: none)."""
    only = {"type": "rule", "values": list(rules)} if rules else {"type": "tag", "values": list(WCAG_21_AA_TAGS)}
    response = AXE.run(page, options={"runOnly": only, "resultTypes": ["violations"]}).response
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


def _keyboard_path_to_gini(page) -> list[str]:
    """From the landing page to the Gini page's answer and a new ε with the keyboard only (Tab, Enter, an arrow
    key), as a policy-maker who does not use a mouse; what went wrong (empty: nothing)."""
    page.keyboard.press("Tab")
    if _focused(page)["text"] != "Skip to main content":  # the first stop bypasses the sidebar (2.4.1)
        return [f"the first Tab stop is not Streamlit's skip link: {_focused(page)}"]
    page.keyboard.press("Enter")
    link = _tab_to(page, lambda f: "Open the Gini page" in f["text"])
    problems = [] if link["outline"] >= 2 else ["the focused link has no visible focus ring (2.4.7)"]
    run_and_wait(page, lambda: page.keyboard.press("Enter"))
    if not page.url.split("?")[0].endswith("/gini"):
        return [*problems, f"Enter on the link opened {page.url}"]
    before = _answer(page)
    slider = _tab_to(page, lambda f: f["type"] == "range" and "ε" in f["label"])
    if slider["label"] != "Privacy loss ε (log scale)" or not before.startswith("At ε = 1 "):
        return [*problems, f"the first ε slider reached is {slider['label']!r}; the answer {before!r}"]
    run_and_wait(page, lambda: page.keyboard.press("ArrowRight"))
    after = _answer(page)
    if after == before or after.startswith("At ε = 1 "):
        problems.append(f"the arrow key did not change the answer: {before!r} -> {after!r}")
    return problems


#: The results of the keyboard path and of the single-key shortcut (``page_problems``) are kept under these names.
KEYBOARD_PATH = "keyboard path: landing -> Gini answer -> new ε"
SINGLE_KEY = "single-key shortcut"


@pytest.fixture(scope="module")
def page_problems(app_server, tabs) -> dict[str, list[str]]:
    """Every page of the navigation in one tab, in navigation order: the landing page, the Gini page reached from
    it by keyboard alone (and checked after its ε slider moved), then the others by their sidebar links. What is
    wrong on each page, and on the keyboard path."""
    results: dict[str, list[str]] = {}
    with tabs.lease() as watch:
        page = watch.page
        page.set_viewport_size(DESKTOP)
        page.goto(app_server.url)
        wait_for_app_idle(page, timeout_ms=60_000)
        runs = watch.runs_finished
        page.keyboard.press("r")  # Streamlit's rerun shortcut, with the focus on the page (not in a field)
        wait_for_app_idle(page)
        results[SINGLE_KEY] = [] if watch.runs_finished == runs else ['"r" alone reran the page']
        for number, info in enumerate(PAGES):
            if info.route == "gini" and number == 1:
                try:
                    results[KEYBOARD_PATH] = _keyboard_path_to_gini(page)
                except AssertionError as exc:  # a Tab stop not reached: the other pages are still checked
                    results[KEYBOARD_PATH] = [str(exc)]
            if number and not page.url.split("?")[0].endswith(f"/{info.route}"):
                link = page.locator('[data-testid="stSidebarNav"] a').nth(number)
                run_and_wait(page, link.click)
            results[info.name] = _check_shown_page(page)
            # a compact sidebar's data choice is drawn only while its popover is open (not on the landing page:
            # the keyboard path starts there from the top of the page)
            if number and open_data_popover(page):
                results[info.name] += [f"data popover open: {v}" for v in axe_violations(page, rules=POPOVER_RULES)]
                page.keyboard.press("Escape")
            if not page.title().startswith(f"{info.title} · "):
                results[info.name].append(f"the tab's title is {page.title()!r}, not the page's own (2.4.2)")
            results[info.name] += watch.all_problems()
            watch.errors.clear()
    results.setdefault(KEYBOARD_PATH, ["the Gini page is not the second page of app.py's navigation"])
    return results


def test_the_policy_makers_path_works_by_keyboard_alone(page_problems):
    """Landing page -> skip link -> "Open the Gini page" (a visible focus ring) -> the answer -> the ε slider by
    Tab, moved by the arrow key: the answer follows. The Gini page's own check is made in that state."""
    assert page_problems[KEYBOARD_PATH] == [], "\n".join(page_problems[KEYBOARD_PATH])


def test_no_single_key_shortcut_reruns_the_page(page_problems):
    """WCAG 2.1.4: Streamlit's "r" (rerun) is turned off by the app (ui.common.keyboard_fixes)."""
    assert page_problems[SINGLE_KEY] == []


@pytest.mark.parametrize("name", [info.name for info in PAGES])
def test_no_wcag_21_aa_violation_on_the_page(page_problems, name):
    assert page_problems[name] == [], "\n".join(page_problems[name])
