"""The planner and its Release mode in a real Chromium (shared ``app_server`` and ``tab`` fixtures):

* the planner's answer (the plan's total ε) is on the first screen at 1280x720, no metric label is cut
  and no table of the page scrolls sideways;
* a real double click on "Make the release" charges the budget once: the button is disabled after the
  release, the confirmation box is a new, unticked one, and the status reads the ledger.

One page load (a deep link with a data seed of its own, so the demonstration account is this test's);
Release mode is opened with the page's own control.
"""

from __future__ import annotations

import contextlib
import re
import secrets

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

CONFIRM = "I understand that this spends privacy budget that cannot be recovered."


def _main_text(page) -> str:
    return page.inner_text('[data-testid="stMain"]')


def _spent(page) -> float:
    match = re.search(r"Spent so far\s*ε = ([0-9.]+)", _main_text(page))
    assert match, _main_text(page)[-2000:]
    return float(match.group(1))


def _cut_or_scrolled(page) -> list[str]:
    """Metric labels cut by their box and tables wider than their frame, in the main area."""
    return page.evaluate("""() => {
        const out = [];
        for (const el of document.querySelectorAll('[data-testid="stMain"] [data-testid="stMetricLabel"] p')) {
            if (el.scrollWidth > el.clientWidth + 1) out.push('metric label cut: ' + el.innerText);
        }
        for (const el of document.querySelectorAll('[data-testid="stMain"] [data-testid="stTable"], '
                                                   + '[data-testid="stMain"] [data-testid="stTable"] *')) {
            if (el.scrollWidth > el.clientWidth + 1 && el.clientWidth > 0)
                out.push('table scrolls sideways: ' + el.scrollWidth + ' > ' + el.clientWidth);
        }
        return out;
    }""")


def _releases_in_ledger(app_server, cost: float) -> int | str:
    """How many entries of ε = ``cost`` the shared server's ledger holds (what a failure message says: the ledger
    is the truth when the page does not show the release)."""
    import sqlite3

    path = app_server.server.log_path.parent / "ledger.db"
    try:
        with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
            return sum(abs(float(e) - cost) < 1e-3 for (e,) in con.execute("SELECT epsilon FROM dpcore_entries"))
    except sqlite3.Error as exc:
        return f"unknown ({exc})"


def test_answer_first_and_a_double_click_charges_once(app_server, tab):
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    page = tab.page
    page.set_viewport_size({"width": 1280, "height": 720})
    sockets: list = []  # the app's WebSocket connections opened by this tab during the test
    page.on("websocket", lambda socket: sockets.append(socket))
    seed = secrets.randbelow(10**6) + 1000  # this test's own demonstration account
    run_and_wait(
        page,
        lambda: page.goto(
            f"{app_server.url}/planner?data_n=2000&data_seed={seed}&planner_stats=gini,mean&planner_cap=50"
        ),
        timeout_ms=180_000,
    )
    answer = page.locator('[data-testid="stMetricLabel"]', has_text="Total ε of the plan").first
    answer.wait_for(timeout=120_000)
    box = answer.bounding_box()
    assert box is not None and box["y"] + box["height"] < 720, f"the answer is below the first screen: {box}"
    assert not _cut_or_scrolled(page), _cut_or_scrolled(page)

    run_and_wait(page, page.get_by_text("Release: make the real release (spends budget)").click, timeout_ms=120_000)
    create = page.get_by_role("button", name="Create the budget ledger")
    if create.count():
        run_and_wait(page, create.click)
    cost = float(re.search(r"This release costs ε = ([0-9.]+) in total", _main_text(page)).group(1))
    before = _spent(page)
    run_and_wait(page, page.get_by_text(CONFIRM).click)
    button = page.get_by_role("button", name="Make the release")
    assert button.is_enabled()
    connections = len(sockets)
    run_and_wait(page, button.dblclick, timeout_ms=120_000)
    try:
        page.get_by_text("Released.").first.wait_for(timeout=60_000)
    except PlaywrightTimeoutError:
        pytest.fail(
            "no 'Released.' within 60 s of the double click "
            f"({len(sockets) - connections} new connection(s) of the tab to the app meanwhile; the ledger holds "
            f"{_releases_in_ledger(app_server, cost)} release(s) of ε = {cost} made during the test); the page says:\n"
            + _main_text(page)[-3000:]
        )
    assert _spent(page) == pytest.approx(before + cost, rel=1e-3), "the double click charged twice"
    # used up: the button is disabled and the confirmation box is a new, unticked one (the old page kept
    # both live, and a further click spent the budget again)
    assert button.is_disabled()
    assert not page.get_by_role("checkbox", name=CONFIRM).is_checked()
    button.click(force=True)  # a disabled button: the browser sends nothing
    wait_for_app_idle(page)
    assert _spent(page) == pytest.approx(before + cost, rel=1e-3)
    assert "1 release so far" in _main_text(page)
    assert not _cut_or_scrolled(page), _cut_or_scrolled(page)  # the released values and the status fit
    assert not page.query_selector('[data-testid="stException"]')
    assert not tab.all_problems(), tab.all_problems()
