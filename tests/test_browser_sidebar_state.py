"""The sidebar's data recipe and seeds through every way of moving around the app, in a real Chromium
(Playwright + /usr/bin/chromium; the shared ``app_server`` and ``chromium`` of tests/conftest.py).

The landing page keeps the sidebar's widgets in closed popovers, which the browser never mounts: the
browser then drew the next page's sidebar with the widgets' own defaults (n = 100, data seed 0, random
seed 0) while the server computed with the link's n = 10,000 and seed 2026, and the next click on the
seed's "+" sent n = 100 and seed 1 back. Here one session opens a deep link on the landing page and goes
through a card, sidebar links, a page that does not use data (the attacker game) and a reload; after
each step the sidebar must show, the main area use and the URL hold the same recipe and seeds.

The students' view has no developer controls: no Deploy button, no Rerun or Clear cache in the menu
(``client.toolbarMode = "viewer"`` in .streamlit/config.toml).
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest
from quality_support import chromium_available, wait_for_app_idle
from support.browser import SIDEBAR, run_and_wait, sidebar_seeds

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

#: Not the defaults (n = 10,000, seeds 2026), so a widget showing its own default is seen.
DEEP_LINK = "/?data_n=1000&data_seed=7&seed=42"


@pytest.fixture(scope="module")
def session_tab(app_server, tabs):
    """One session (one page load) that opened the deep link on the landing page, in the process's kept tab
    (tests/conftest.py ``tabs``)."""
    with tabs.lease() as watch:
        watch.page.goto(app_server.url + DEEP_LINK)
        wait_for_app_idle(watch.page, timeout_ms=60_000)
        yield watch


def _sidebar_link(page, title: str):
    return page.locator('[data-testid="stSidebarNav"] a', has_text=title).click


def _url_state(page) -> dict[str, str]:
    query = parse_qs(urlparse(page.url).query)
    return {key: query.get(key, ["(absent)"])[0] for key in ("data_n", "data_seed", "seed")}


def _sidebar_state(page) -> dict[str, str]:
    """What the sidebar's widgets show: n (the select slider), data seed and random seed (number inputs)."""
    n = page.locator(SIDEBAR).get_by_role("slider", name="Number of records n").get_attribute("aria-valuetext")
    data_seed, seed = sidebar_seeds(page)
    return {"data_n": n, "data_seed": data_seed, "seed": seed}


def _check_data_page(page, where: str, *, seed: str) -> None:
    expected = {"data_n": "1000", "data_seed": "7", "seed": seed}
    assert _sidebar_state(page) == expected, f"{where}: the sidebar shows {_sidebar_state(page)}"
    assert _url_state(page) == expected, f"{where}: the URL holds {_url_state(page)}"
    main = page.inner_text('[data-testid="stMain"]')
    assert "n=1,000" in main, f"{where}: the page does not say it uses n = 1,000: {main[:1500]}"


def test_sidebar_keeps_recipe_and_seeds_through_cards_links_a_data_free_page_and_reload(session_tab):
    tab, page = session_tab, session_tab.page
    run_and_wait(page, page.get_by_role("link", name="Open the Gini page").click)
    _check_data_page(page, "landing -> Gini card", seed="42")

    seed_box = page.locator(f'{SIDEBAR} [data-testid="stNumberInput"]', has_text="Random seed")
    run_and_wait(page, seed_box.locator('[data-testid="stNumberInputStepUp"]').click)
    _check_data_page(page, "the random seed's +", seed="43")

    run_and_wait(page, _sidebar_link(page, "About differential privacy"))
    assert "Random seed: 43" in page.inner_text(SIDEBAR)  # the landing page's popover button
    run_and_wait(page, _sidebar_link(page, "Gini index"))  # its views at these settings are cached by now
    _check_data_page(page, "landing -> Gini (sidebar link)", seed="43")

    run_and_wait(page, _sidebar_link(page, "Play the attacker"))
    sidebar = page.inner_text(SIDEBAR)
    assert "This page does not use these data" in sidebar and "Number of records n" not in sidebar, sidebar
    assert sidebar_seeds(page) == ["43"]
    run_and_wait(page, _sidebar_link(page, "Gini index"))
    _check_data_page(page, "attacker -> Gini (sidebar link)", seed="43")

    page.reload()
    wait_for_app_idle(page, timeout_ms=60_000)
    _check_data_page(page, "reload of the Gini page", seed="43")
    assert not tab.all_problems(), tab.all_problems()


def test_no_developer_controls_for_students(session_tab):
    page = session_tab.page
    assert page.query_selector('[data-testid="stMainMenu"]'), "the app's menu is not drawn"
    assert not page.query_selector('[data-testid="stAppDeployButton"]'), "a Deploy button is shown"
    page.click('[data-testid="stMainMenu"]')
    menu = page.wait_for_selector('[data-testid="stMainMenuPopover"]').inner_text()
    page.keyboard.press("Escape")
    assert "Clear cache" not in menu and "Rerun" not in menu, menu
