"""The landing page routes: "What do you want to do?" cards before the essay, each a
page link with a preset that the target page accepts; every page says which data it uses."""

from __future__ import annotations

import pytest
from support import assert_clean, open_page, page_text

from ui import landing


def test_cards_come_first_and_link_every_task():
    at = open_page("app_pages/about.py")
    assert_clean(at)
    headers = [h.value for h in at.header]
    assert headers[0] == "What do you want to do?"  # before the essay's sections
    links = at.get("page_link")
    pages = [link.proto.page for link in links]
    assert pages == ["gini", "percentiles", "stratified", "ratios", "planner", "lessons"]
    assert "gini_eps=1.0" in links[0].proto.query_string


@pytest.mark.parametrize("card", landing.cards(), ids=lambda c: c[2])
def test_each_card_opens_its_page_cleanly_with_its_preset(card):
    _, _, page, _, _, preset = card
    at = open_page(page, **preset)
    assert_clean(at)
    for key, value in preset.items():
        shown = at.query_params.get(key)
        assert (shown[0] if isinstance(shown, list) else shown) == value, key


@pytest.mark.parametrize(
    "page,expected",
    [
        ("app_pages/gini.py", "the sidebar's data set in use"),
        ("app_pages/planner.py", "the sidebar's data set in use"),
        ("app_pages/percentiles.py", "not the sidebar's data set"),
        ("app_pages/stratified.py", "not the sidebar's data set"),
        ("app_pages/ratios.py", "not the sidebar's data set"),
    ],
)
def test_every_page_says_which_data_it_uses(page, expected):
    at = open_page(page)
    assert_clean(at)
    notes = [i.value for i in at.info if "Data on this page" in i.value]
    assert len(notes) == 1 and expected in notes[0], notes


def test_percentiles_page_with_the_sidebar_data_says_so():
    at = open_page("app_pages/percentiles.py", perc_src="Sidebar dataset (random subset)")
    assert_clean(at)
    assert any("sidebar's data set in use" in i.value for i in at.info)


def test_about_page_claim_matches_the_pages():
    text = page_text(open_page("app_pages/about.py"))
    assert "The sidebar chooses the data every page uses" not in text
    assert "each page says at its top which data it uses" in text


def _popovers(at) -> dict[str, object]:
    return {block.proto.popover.label: block for block in at.get("popover")}


def test_landing_sidebar_keeps_its_widgets_in_popovers():
    """A plain first visit of app.py (the landing page): the sidebar's data widgets and the seed sit in
    two popovers, which the browser mounts only when opened (cold start: the widgets were
    half of the landing page's browser work); the widgets themselves, their keys, values and URL
    parameters are those of every other page, and the data are not built."""
    from streamlit.testing.v1 import AppTest

    from ui import sidebar

    at = AppTest.from_file("../app.py", default_timeout=90)
    at.run()
    assert_clean(at)
    popovers = _popovers(at)
    assert set(popovers) == {"Choose the data", f"Random seed: {sidebar.DEFAULT_SEED}"}
    (source,) = popovers["Choose the data"].selectbox
    assert source.key == "data_source" and source.value == sidebar.SRC_LOGNORMAL
    assert [w.key for w in popovers[f"Random seed: {sidebar.DEFAULT_SEED}"].number_input] == ["seed"]
    assert isinstance(at.session_state["dataset"], sidebar.DeferredDataset)
    assert any("default synthetic data" in c.value for c in at.sidebar.caption)
    # a choice made in the popover is used like anywhere else, and the seed's label follows the seed
    at.number_input(key="seed").set_value(7).run()
    source = at.sidebar.selectbox(key="data_source").set_value(sidebar.SRC_EXAMPLE)
    at = source.run()
    assert_clean(at)
    assert at.session_state["dataset"].n == 235 and "Random seed: 7" in _popovers(at)
    assert at.query_params["data_source"] in (sidebar.SRC_EXAMPLE, [sidebar.SRC_EXAMPLE])


def test_data_pages_show_the_sidebar_widgets_directly():
    """Only the landing page folds the sidebar's widgets away: a page that uses data shows them."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file("../app.py", default_timeout=90)
    at.query_params["data_source"] = "Real example: Engel 1857, Belgian households"
    at.run()
    assert_clean(at)
    at.switch_page("app_pages/gini.py").run()
    assert_clean(at)
    assert not _popovers(at)
    assert at.sidebar.selectbox(key="data_source").value.startswith("Real example")
