"""End-to-end tests in a real headless Chromium (issue 8, "Real browser").

A module-scoped fixture starts ``streamlit run app.py --server.headless true`` on a free localhost
port; Playwright (from PyPI) drives Debian's /usr/bin/chromium (never a downloaded browser).
For every page of app.py's PAGES list: open it, move its main slider, fail on any exception box,
st.error box, browser console error or uncaught page error, and save a screenshot to
screenshots/ (git-ignored). Then upload a CSV through the sidebar and visit every page with it.

Skipped cleanly when /usr/bin/chromium or playwright is missing (``.ci/run`` installs chromium).
"""
from __future__ import annotations

import re
import time
from pathlib import Path

import numpy as np
import pytest

from quality_support import (
    REPO_ROOT,
    chromium_available,
    discover_pages,
    launch_chromium,
    streamlit_server,
    visible_problems,
    wait_for_app_idle,
)

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not chromium_available(), reason="needs /usr/bin/chromium and playwright "
                       "(apt-get install chromium; .ci/run does it)"),
]

PAGES = discover_pages()
SHOTS = REPO_ROOT / "screenshots"
# Streamlit's frontend probes <page>/_stcore/health and host-config when a deep link such as
# /gini is opened (to detect a base path); the 404s of those probes are expected, nothing else is.
BENIGN_404 = re.compile(r"^https?://[^/]+/[^_][^/]*/_stcore/(health|host-config)$")
TIMINGS: dict[str, float] = {}


@pytest.fixture(scope="module")
def server(tmp_path_factory, browser):
    with streamlit_server(tmp_path_factory.mktemp("browser_server")) as srv:
        TIMINGS["server start to healthy"] = srv.started_in
        # Cold start measured through the entry point (deep links on a cold server have their own test).
        context = browser.new_context()
        page = context.new_page()
        t0 = time.perf_counter()
        page.goto(srv.url)
        wait_for_app_idle(page, timeout_ms=60_000)
        TIMINGS["first render of / (cold server)"] = time.perf_counter() - t0
        context.close()
        yield srv
    # How long the real-browser steps took (for people, not a check): screenshots/timings.txt
    SHOTS.mkdir(exist_ok=True)
    width = max(map(len, TIMINGS))
    (SHOTS / "timings.txt").write_text(
        "".join(f"{k:<{width}}  {v:6.2f} s\n" for k, v in TIMINGS.items()), encoding="utf-8")


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch_chromium(p)
        yield b
        b.close()


class PageWatch:
    """Collects console errors, uncaught page errors and failed HTTP responses of one tab."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught page error: {exc}"))
        page.on("response", self._response)

    def _console(self, msg) -> None:
        # "Failed to load resource" duplicates a failed response, which _response judges by URL.
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            self.errors.append(f"console error: {msg.text[:500]}")

    def _response(self, resp) -> None:
        if resp.status >= 400 and not (resp.status == 404 and BENIGN_404.match(resp.url)):
            self.errors.append(f"HTTP {resp.status} for {resp.url}")

    def all_problems(self) -> list[str]:
        return visible_problems(self.page) + self.errors


@pytest.fixture
def tab(browser):
    context = browser.new_context(viewport={"width": 1366, "height": 900})
    page = context.new_page()
    page.set_default_timeout(30_000)
    watch = PageWatch(page)
    yield watch
    context.close()


def _shot(page, name: str) -> None:
    """Screenshot of the whole page: Streamlit scrolls inside its main container, so the
    viewport is made as tall as the content for the shot (capped), then restored."""
    SHOTS.mkdir(exist_ok=True)
    size = page.viewport_size or {"width": 1366, "height": 900}
    height = page.evaluate("""() => { const m = document.querySelector('[data-testid="stMain"]');
        return m ? m.scrollHeight : document.body.scrollHeight; }""")
    page.set_viewport_size({"width": size["width"], "height": int(min(max(height, size["height"]), 8000))})
    page.wait_for_timeout(200)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)
    page.set_viewport_size(size)


THUMB = 'input[type="range"], [role="slider"]'  # react-aria (Streamlit >= 1.5x) or baseweb


def _main_slider_thumb(page):
    """The thumb of the page's main slider: the first main-area slider about epsilon, else the first."""
    # Only visible sliders: those in a hidden tab or a collapsed expander cannot be dragged.
    sliders = [s for s in page.query_selector_all('[data-testid="stMain"] [data-testid="stSlider"]')
               if s.is_visible()]
    if not sliders:
        return None
    labels = [(s.query_selector('[data-testid="stWidgetLabel"]') or s).inner_text() for s in sliders]
    eps = [s for s, lab in zip(sliders, labels)
           if re.search(r"ε|epsilon|privacy budget", lab, re.I)
           and not re.match(r"\s*(runs|number|how many)", lab, re.I)]
    chosen = (eps or sliders)[0]
    thumb = chosen.query_selector(THUMB)
    assert thumb is not None, "a slider is shown but its thumb cannot be found (the DOM changed?)"
    return thumb


def _slider_value(thumb) -> str | None:
    return thumb.get_attribute("aria-valuetext") or thumb.get_attribute("aria-valuenow") or thumb.input_value()


def _move_main_slider(watch: PageWatch) -> str | None:
    """Press ArrowRight on the main slider (ArrowLeft at its maximum); 'old -> new' or None."""
    page = watch.page
    thumb = _main_slider_thumb(page)
    if thumb is None:
        return None
    label = thumb.get_attribute("aria-label") or ""
    before = _slider_value(thumb)
    after = before
    for key in ("ArrowRight", "ArrowLeft"):
        thumb = _main_slider_thumb(page)
        thumb.focus()
        page.keyboard.press(key)
        page.wait_for_timeout(300)
        wait_for_app_idle(page)
        after = _slider_value(_main_slider_thumb(page))
        if after != before:
            break
    assert after != before, f"the main slider {label!r} did not move"
    return f"{label} {before} -> {after}"


@pytest.mark.parametrize("pg", PAGES, ids=[p.name for p in PAGES])
def test_page_renders_and_main_slider_moves(server, tab, pg):
    page = tab.page
    t0 = time.perf_counter()
    page.goto(f"{server.url}/{pg.route}")
    wait_for_app_idle(page)
    TIMINGS[f"open {pg.name}"] = time.perf_counter() - t0
    assert page.query_selector('[data-testid="stMain"] h1'), f"{pg.path}: no title rendered"
    assert not tab.all_problems(), f"{pg.path} on open: {tab.all_problems()}"
    _shot(page, pg.name)

    t0 = time.perf_counter()
    moved = _move_main_slider(tab)
    if moved is not None:
        TIMINGS[f"slider {pg.name}"] = time.perf_counter() - t0
        assert not tab.all_problems(), f"{pg.path} after moving the main slider ({moved}): {tab.all_problems()}"
        _shot(page, f"{pg.name}_slider_moved")


def test_deep_link_with_query_params_restores_the_view(server, tab):
    """A shared URL (page + seed in the query string) opens without errors and keeps the seed."""
    page = tab.page
    page.goto(f"{server.url}/{PAGES[-1].route}?seed=777")
    wait_for_app_idle(page)
    assert not tab.all_problems(), tab.all_problems()
    seed_inputs = page.query_selector_all('[data-testid="stSidebar"] [data-testid="stNumberInput"] input')
    values = [el.input_value() for el in seed_inputs]
    assert "777" in values, f"seed from the URL not shown in the sidebar: {values}"


def test_cold_deep_link_runs_through_app_py(tmp_path_factory, browser):
    """The first visitor after a restart opens a shared URL: it must get the real app."""
    with streamlit_server(tmp_path_factory.mktemp("cold_server")) as srv:
        context = browser.new_context()
        page = context.new_page()
        watch = PageWatch(page)
        page.goto(f"{srv.url}/{PAGES[-1].route}?seed=777")
        wait_for_app_idle(page, timeout_ms=60_000)
        seeds = [el.input_value() for el in
                 page.query_selector_all('[data-testid="stSidebar"] [data-testid="stNumberInput"] input')]
        problems = watch.all_problems()
        context.close()
    assert not problems, problems
    assert "777" in seeds, f"cold deep link did not run app.py's sidebar (seed inputs: {seeds})"


# ---------------------------------------------------------------------------------------------
# Upload through the sidebar
# ---------------------------------------------------------------------------------------------

def find_upload_input(page, timeout_s: float = 3.0):
    """The sidebar's <input type=file>, selecting an 'upload' data source first if needed.

    The sidebar's data-source widget is still being extended (issue 2): we try, in order, a file
    input that is already there, a radio option / selectbox option / button mentioning 'upload'.
    Returns None when the sidebar offers no upload (the caller skips with that reason).
    """
    sidebar = '[data-testid="stSidebar"]'
    sel = f'{sidebar} input[type="file"]'
    if page.query_selector(sel):
        return page.query_selector(sel)
    for label in page.query_selector_all(f'{sidebar} [data-testid="stRadio"] label'):
        if "upload" in label.inner_text().lower():
            label.click()
            wait_for_app_idle(page)
            break
    if not page.query_selector(sel):
        for box in page.query_selector_all(f'{sidebar} [data-testid="stSelectbox"]'):
            box.click()
            opts = page.query_selector_all('[role="option"]')
            hit = next((o for o in opts if "upload" in o.inner_text().lower()), None)
            if hit:
                hit.click()
                wait_for_app_idle(page)
                break
            page.keyboard.press("Escape")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        el = page.query_selector(sel)
        if el:
            return el
        page.wait_for_timeout(200)
    return None


def good_csv(n: int = 1500, seed: int = 7) -> bytes:
    g = np.random.default_rng(seed)
    income = np.round(g.lognormal(10.5, 0.9, n), 2)
    group = g.choice(["A", "B", "C"], n)
    weight = np.round(g.uniform(0.5, 2.0, n), 3)
    rows = "\n".join(f"{i:.2f},{gr},{w}" for i, gr, w in zip(income, group, weight))
    return ("income,group,weight\n" + rows + "\n").encode()


def upload(page, name: str, content: bytes, mime: str = "text/csv") -> bool:
    el = find_upload_input(page)
    if el is None:
        return False
    el.set_input_files({"name": name, "mimeType": mime, "buffer": content})
    page.wait_for_timeout(300)
    wait_for_app_idle(page)
    return True


def _nav_links(page):
    return page.query_selector_all('[data-testid="stSidebarNav"] a')


def test_upload_csv_then_every_page_works(server, tab):
    page = tab.page
    page.goto(server.url)
    wait_for_app_idle(page)
    if not upload(page, "incomes_upload.csv", good_csv()):
        pytest.skip("the sidebar has no CSV upload yet (issue 2 in progress)")
    assert not tab.all_problems(), f"after uploading a valid CSV: {tab.all_problems()}"
    _shot(page, "upload_done")
    # Visit every page in the same session (page.goto would start a new session without the file).
    n_links = len(_nav_links(page))
    assert n_links == len(PAGES), f"sidebar navigation shows {n_links} links for {len(PAGES)} pages"
    for i, pg in enumerate(PAGES):
        _nav_links(page)[i].click()
        page.wait_for_timeout(200)
        wait_for_app_idle(page)
        assert not tab.all_problems(), f"{pg.path} with the uploaded CSV: {tab.all_problems()}"
        _move_main_slider(tab)
        assert not tab.all_problems(), f"{pg.path} with the uploaded CSV, slider moved: {tab.all_problems()}"
        _shot(page, f"upload_{pg.name}")


def test_binary_upload_shows_a_message_and_the_app_recovers(server, tab):
    """A binary file renamed .csv: a clear message (st.error/st.warning), no exception box,
    and a valid upload afterwards works (the full malformed-file matrix runs in AppTest, in
    tests/test_hostile_inputs.py)."""
    page = tab.page
    page.goto(server.url)
    wait_for_app_idle(page)
    junk = bytes(np.random.default_rng(3).integers(0, 256, 4096, dtype=np.uint8))
    if not upload(page, "not_a_table.csv", junk):
        pytest.skip("the sidebar has no CSV upload yet (issue 2 in progress)")
    boxes = page.query_selector_all('[data-testid="stAlertContentError"], [data-testid="stAlertContentWarning"]')
    assert boxes, "a binary upload produced no error or warning message"
    assert not page.query_selector('[data-testid="stException"]'), "binary upload raised a traceback"
    assert not tab.errors, tab.errors
    _shot(page, "upload_binary")
    assert upload(page, "incomes_upload.csv", good_csv())
    assert not tab.all_problems(), f"after a good upload following a bad one: {tab.all_problems()}"
