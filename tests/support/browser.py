"""Real-browser helpers shared by tests/test_browser*.py and tests/test_serve.py.

The fixtures built on them live in tests/conftest.py:

* ``chromium`` (session): Debian's Chromium driven by Playwright, one per test process (Playwright's sync API
  cannot run twice at once in a thread, so every browser test of the process uses this one; a launch costs
  a second or more of CPU on a loaded machine).
* ``tabs`` (session): a :class:`TabKeeper`, the process's one kept page, lent to one test at a time (a page
  load there costs Chromium about half of one in a new context; each lease starts as a new visitor).
* ``app_server`` (session): one ``streamlit run app.py`` per test process for every browser test, with its
  own throw-away budget ledger. Its very first visitor is a cold deep link (a shared URL opened right after
  a restart, in a tab of ``tabs``); what that visitor saw is kept in ``app_server.cold_visit``
  for ``test_browser.py::test_cold_deep_link_runs_through_app_py``.
* ``browser``: ``chromium`` once ``app_server`` has had its cold visit.
* ``tab``: the kept page as a new visitor's tab (``tabs.lease()``; a new browser context when a module fixture
  holds it), with a :class:`PageWatch` (console errors, page errors, HTTP errors).

Waiting: :func:`run_and_wait` does an action that starts a script run (a click, a key press, an upload)
and waits for that very run to start and finish (a MutationObserver sees the start however short the run
is), then for the app to be quiet (``wait_for_app_idle``); no fixed sleeps.
"""

from __future__ import annotations

import contextlib
import re
import time
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from quality_support import (
    Server,
    discover_pages,
    launch_chromium,
    streamlit_server,
    visible_problems,
    wait_for_app_idle,
)

SIDEBAR = '[data-testid="stSidebar"]'
# Streamlit's frontend probes <page>/_stcore/health and host-config when a deep link such as
# /gini is opened (to detect a base path); the 404s of those probes are expected, nothing else is.
BENIGN_404 = re.compile(r"^https?://[^/]+/[^_][^/]*/_stcore/(health|host-config)$")
#: The shared URL the first visitor of ``app_server`` opens (last page of app.py's PAGES, a seed in the query).
COLD_SEED = "777"


class PageWatch:
    """Collects console errors, uncaught page errors and failed HTTP responses of one tab, and counts the
    script runs the server reports finished (its ``script_finished`` messages on the app's WebSocket)."""

    def __init__(self, page):
        self.page = page
        self.errors: list[str] = []
        self.runs_finished = 0
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"uncaught page error: {exc}"))
        page.on("response", self._response)
        page.on("websocket", lambda websocket: websocket.on("framereceived", self._frame))
        _WATCHES[page] = self

    def _frame(self, payload) -> None:
        if isinstance(payload, (bytes, bytearray)) and _is_run_finished(payload):
            self.runs_finished += 1

    def _console(self, msg) -> None:
        # "Failed to load resource" duplicates a failed response, which _response judges by URL.
        if msg.type == "error" and not msg.text.startswith("Failed to load resource"):
            self.errors.append(f"console error: {msg.text[:500]}")

    def _response(self, resp) -> None:
        if resp.status >= 400 and not (resp.status == 404 and BENIGN_404.match(resp.url)):
            self.errors.append(f"HTTP {resp.status} for {resp.url}")

    def all_problems(self) -> list[str]:
        return visible_problems(self.page) + self.errors


_WATCHES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # page -> its PageWatch


def _is_run_finished(payload: bytes) -> bool:
    """Whether a WebSocket frame from the server is a ForwardMsg saying a script run (or a fragment run)
    finished; a run stopped early for a rerun does not count (the rerun's own end will)."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    msg = ForwardMsg()
    try:
        msg.ParseFromString(payload)
    except Exception:  # not a ForwardMsg (protobuf's DecodeError)
        return False
    return msg.WhichOneof("type") == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN


#: The window of a new tab (``open_tab``, ``TabKeeper.lease``).
VIEWPORT = {"width": 1366, "height": 900}

_CLEAR_STORAGE_JS = "() => { try { localStorage.clear(); sessionStorage.clear(); } catch (e) {} }"


@contextlib.contextmanager
def open_tab(browser, *, timeout_ms: float = 30_000, **context_options) -> Iterator[PageWatch]:
    """A new browser context (its own cookies: a new Streamlit session) with one watched page."""
    context = browser.new_context(viewport=VIEWPORT, **context_options)
    try:
        page = context.new_page()
        page.set_default_timeout(timeout_ms)
        yield PageWatch(page)
    finally:
        context.close()


class TabKeeper:
    """One watched page of one browser context, kept for the whole test process and lent to one test (or
    module fixture) at a time; while it is lent, :meth:`lease` falls back to a new context (:func:`open_tab`).

    Why: the first page load in a new context runs in a new renderer process, which compiles the app's
    JavaScript again (the frontend and the 4.7 MB plotly chunk); a load in a page that has run the app
    before reuses what its renderer compiled. Measured on the Gini page (8 loads): 5.0 s of Chromium CPU per
    load in new contexts, 2.6 s in the kept page.

    Each lease starts as a new visitor would: the page is on ``about:blank`` (the last lease's Streamlit
    session ended when it left the app), with no cookies, empty local and session storage, the default
    window size and timeout, and no problems recorded. A test's first ``goto`` then opens a new session.
    """

    def __init__(self, browser) -> None:
        self.browser = browser
        self._context = None
        self._watch: PageWatch | None = None
        self._lent = False

    @contextlib.contextmanager
    def lease(self, *, timeout_ms: float = 30_000) -> Iterator[PageWatch]:
        if self._lent:
            with open_tab(self.browser, timeout_ms=timeout_ms) as watch:
                yield watch
            return
        if self._watch is None:
            self._context = self.browser.new_context(viewport=VIEWPORT)
            self._watch = PageWatch(self._context.new_page())
        watch = self._watch
        watch.page.set_viewport_size(VIEWPORT)
        watch.page.set_default_timeout(timeout_ms)
        watch.errors.clear()
        self._lent = True
        try:
            yield watch
        finally:
            self._lent = False
            self._reset()

    def _reset(self) -> None:
        """Leave the app (its session ends, as when a context closes) and forget what the visit stored;
        a page that cannot be reset is closed with its context (the next lease makes new ones)."""
        try:
            page = self._watch.page
            if page.url.startswith("http"):
                page.evaluate(_CLEAR_STORAGE_JS)
            page.goto("about:blank")
            self._context.clear_cookies()
            self._watch.errors.clear()
        except Exception:  # a broken page is replaced, not reused
            self.close()

    def close(self) -> None:
        context, self._context, self._watch = self._context, None, None
        if context is not None:
            with contextlib.suppress(Exception):
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


def visit_cold_deep_link(server: Server, tabs: TabKeeper) -> ColdVisit:
    """Open ``/<last page>?seed=777`` as the first visitor (in a tab of ``tabs``, left at once)."""
    visit = ColdVisit(url=f"{server.url}/{discover_pages()[-1].route}?seed={COLD_SEED}")
    with tabs.lease(timeout_ms=60_000) as watch:
        t0 = time.perf_counter()
        watch.page.goto(visit.url)
        wait_for_app_idle(watch.page, timeout_ms=90_000)
        visit.seconds = time.perf_counter() - t0
        visit.seeds = sidebar_seeds(watch.page)
        visit.problems = watch.all_problems()
    return visit


@contextlib.contextmanager
def chromium_browser() -> Iterator:
    """Playwright (sync API) with Debian's Chromium, closed afterwards."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


@contextlib.contextmanager
def shared_app_server(folder: Path, tabs: TabKeeper) -> Iterator[AppServer]:
    """A ``streamlit run app.py`` with its own SQLite ledger in ``folder``, cold-visited once through a deep
    link in a tab of ``tabs`` (the process's Playwright Chromium)."""
    env = {"DPCORE_LEDGER_URL": f"sqlite:///{folder}/ledger.db"}
    with streamlit_server(folder, extra_env=env) as server:
        yield AppServer(server=server, cold_visit=visit_cold_deep_link(server, tabs))


# Upload through the sidebar (tests/test_browser.py, tests/test_browser_paths.py, tests/test_security.py)

#: Where the data-source widgets are: the sidebar, or the sidebar popover a compact sidebar keeps them in
#: (the landing page: "Choose the data"; the browser mounts its widgets only while it is open).
POPOVER_BODY = '[data-testid="stPopoverBody"]'
DATA_PANELS = (SIDEBAR, POPOVER_BODY)


def _in_data_panels(page, selector: str) -> list:
    return [el for root in DATA_PANELS for el in page.query_selector_all(f"{root} {selector}")]


def open_data_popover(page) -> bool:
    """Open the sidebar popover holding the data source when the sidebar is compact (a click in the
    browser, no script run); False when there is none or it is already open."""
    if page.query_selector(POPOVER_BODY):
        return False
    for button in page.query_selector_all(f'{SIDEBAR} [data-testid="stPopoverButton"]'):
        if "data" in button.inner_text().lower():
            button.click()
            # the popover's widgets mount after it opens: wait for the data source's
            page.wait_for_selector(
                ", ".join(
                    f"{POPOVER_BODY} {widget}"
                    for widget in ('[data-testid="stSelectbox"]', '[data-testid="stRadio"]', 'input[type="file"]')
                )
            )
            return True
    return False


def data_panel_text(page) -> str:
    """The text of the sidebar and of an open sidebar popover (the upload's messages are in one of them)."""
    return "\n".join(el.inner_text() for root in DATA_PANELS for el in page.query_selector_all(root))


def data_panel_errors(page) -> list[str]:
    """The st.error boxes of the sidebar and of an open sidebar popover."""
    return [el.inner_text() for el in _in_data_panels(page, '[data-testid="stAlertContentError"]')]


def find_upload_input(page, timeout_s: float = 3.0):
    """The sidebar's <input type=file>, selecting an 'upload' data source first if needed.

    The data source is a radio or a select box in the sidebar, or in a sidebar popover (opened first).
    Returns None when the sidebar offers no upload (the caller skips with that reason).
    """
    sel = 'input[type="file"]'
    open_data_popover(page)
    if _in_data_panels(page, sel):
        return _in_data_panels(page, sel)[0]
    for label in _in_data_panels(page, '[data-testid="stRadio"] label'):
        if "upload" in label.inner_text().lower():
            run_and_wait(page, label.click)
            break
    if not _in_data_panels(page, sel):
        for box in _in_data_panels(page, '[data-testid="stSelectbox"]'):
            box.click()
            page.wait_for_selector('[role="option"]')
            hit = next(
                (o for o in page.query_selector_all('[role="option"]') if "upload" in o.inner_text().lower()), None
            )
            if hit:
                run_and_wait(page, hit.click)
                break
            page.keyboard.press("Escape")
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = _in_data_panels(page, sel)
        if found:
            return found[0]
        page.wait_for_timeout(200)
    return None


def good_csv(n: int = 1500, seed: int = 7) -> bytes:
    g = np.random.default_rng(seed)
    income = np.round(g.lognormal(10.5, 0.9, n), 2)
    group = g.choice(["A", "B", "C"], n)
    weight = np.round(g.uniform(0.5, 2.0, n), 3)
    rows = "\n".join(f"{i:.2f},{gr},{w}" for i, gr, w in zip(income, group, weight, strict=True))
    return ("income,group,weight\n" + rows + "\n").encode()


def run_and_wait(page, action: Callable[[], object], *, timeout_ms: float = 60_000) -> None:
    """Do ``action`` (a click on a navigation or page link, a key press on a slider, an upload: something
    that makes the app run its script) and wait until the server reports a run finished after it, then for
    the app to be quiet (``wait_for_app_idle``). No fixed sleep: a loaded machine cannot make us read the
    page before that run. The run is seen on the WebSocket (a ``script_finished`` message), not in the
    DOM: a fast run's start and end can reach the browser together and be drawn as one render, leaving no
    trace in stApp's ``data-test-script-state``. ``page`` must come from :func:`open_tab` (a PageWatch)."""
    watch = _WATCHES[page]
    before = watch.runs_finished
    action()
    deadline = time.monotonic() + timeout_ms / 1000
    while watch.runs_finished == before:  # Playwright delivers the frames while we wait in one of its calls
        if time.monotonic() > deadline:
            raise TimeoutError(f"no script run finished within {timeout_ms / 1000:.0f} s of the action")
        page.wait_for_timeout(50)
    wait_for_app_idle(page, timeout_ms=timeout_ms)


def upload(page, name: str, content: bytes, mime: str = "text/csv") -> bool:
    """Upload ``content`` as ``name`` through the sidebar and wait for the run that reads it to start and
    finish (:func:`run_and_wait`); False when the sidebar offers no upload."""
    el = find_upload_input(page)
    if el is None:
        return False
    run_and_wait(page, lambda: el.set_input_files({"name": name, "mimeType": mime, "buffer": content}))
    return True
