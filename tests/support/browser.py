"""Real-browser helpers shared by tests/test_browser*.py and tests/test_serve.py.

The fixtures built on them live in tests/conftest.py:

* ``app_server`` (session): one ``streamlit run app.py`` per test process for every browser test, with its
  own throw-away budget ledger. Its very first visitor is a cold deep link (a shared URL opened right after
  a restart); what that visitor saw is kept in ``app_server.cold_visit`` for
  ``test_browser.py::test_cold_deep_link_runs_through_app_py``.
* ``browser`` (module): Debian's Chromium driven by Playwright. Module scope, not session: Playwright's sync
  API cannot run twice in one thread, and tests/test_security.py starts its own.
* ``tab``: a fresh browser context + page with a :class:`PageWatch` (console errors, page errors, HTTP errors).
"""
from __future__ import annotations

import contextlib
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from quality_support import (Server, discover_pages, launch_chromium, streamlit_server, visible_problems,
                             wait_for_app_idle)

SIDEBAR = '[data-testid="stSidebar"]'
# Streamlit's frontend probes <page>/_stcore/health and host-config when a deep link such as
# /gini is opened (to detect a base path); the 404s of those probes are expected, nothing else is.
BENIGN_404 = re.compile(r"^https?://[^/]+/[^_][^/]*/_stcore/(health|host-config)$")
#: The shared URL the first visitor of ``app_server`` opens (last page of app.py's PAGES, a seed in the query).
COLD_SEED = "777"


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


@contextlib.contextmanager
def open_tab(browser, *, timeout_ms: float = 30_000, **context_options) -> Iterator[PageWatch]:
    """A new browser context (its own cookies: a new Streamlit session) with one watched page."""
    context = browser.new_context(viewport={"width": 1366, "height": 900}, **context_options)
    try:
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        yield PageWatch(page)
    finally:
        context.close()


def sidebar_seeds(page) -> list[str]:
    """The values of the sidebar's number inputs (the seed is one of them)."""
    return [el.input_value() for el in page.query_selector_all(f'{SIDEBAR} [data-testid="stNumberInput"] input')]


@dataclass
class ColdVisit:
    """What the first visitor of a freshly started server saw when opening a shared deep link."""

    url: str
    seeds: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class AppServer:
    """The shared app server: the live ``Server`` plus what its cold first visitor saw."""

    server: Server
    cold_visit: ColdVisit

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def started_in(self) -> float:
        return self.server.started_in


def visit_cold_deep_link(server: Server) -> ColdVisit:
    """Open ``/<last page>?seed=777`` as the first visitor (a Playwright of its own, closed at once)."""
    from playwright.sync_api import sync_playwright

    visit = ColdVisit(url=f"{server.url}/{discover_pages()[-1].route}?seed={COLD_SEED}")
    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            with open_tab(browser, timeout_ms=60_000) as watch:
                t0 = time.perf_counter()
                watch.page.goto(visit.url)
                wait_for_app_idle(watch.page, timeout_ms=90_000)
                visit.seconds = time.perf_counter() - t0
                visit.seeds = sidebar_seeds(watch.page)
                visit.problems = watch.all_problems()
        finally:
            browser.close()
    return visit


@contextlib.contextmanager
def shared_app_server(folder: Path) -> Iterator[AppServer]:
    """A ``streamlit run app.py`` with its own SQLite ledger in ``folder``, cold-visited once through a deep link."""
    env = {"DPCORE_LEDGER_URL": f"sqlite:///{folder}/ledger.db"}
    with streamlit_server(folder, extra_env=env) as server:
        yield AppServer(server=server, cold_visit=visit_cold_deep_link(server))


# Upload through the sidebar (tests/test_browser.py, tests/test_browser_paths.py)

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


# Records the next start of a script run (MutationObserver on the attribute wait_for_app_idle reads), so a
# run is seen however short it is and however late it starts.
_WATCH_NEXT_RUN = """() => {
    window.__dpRunStarted = false;
    const app = document.querySelector('[data-testid="stApp"]');
    new MutationObserver((records, observer) => {
        // a short run can go running -> notRunning before this callback: the records' old values show it
        if (app.getAttribute('data-test-script-state') === 'running' || records.some(r => r.oldValue === 'running')) {
            window.__dpRunStarted = true; observer.disconnect();
        }
    }).observe(app, {attributes: true, attributeOldValue: true, attributeFilter: ['data-test-script-state']});
}"""


def upload(page, name: str, content: bytes, mime: str = "text/csv") -> bool:
    """Upload ``content`` as ``name`` through the sidebar and wait for the run that reads it to start and
    finish (no fixed sleep: a loaded machine cannot make us read the page before that run); False when
    the sidebar offers no upload."""
    el = find_upload_input(page)
    if el is None:
        return False
    page.evaluate(_WATCH_NEXT_RUN)
    el.set_input_files({"name": name, "mimeType": mime, "buffer": content})
    page.wait_for_function("() => window.__dpRunStarted === true", timeout=60_000)
    wait_for_app_idle(page, timeout_ms=60_000)
    return True
