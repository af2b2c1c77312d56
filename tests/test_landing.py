"""The landing page routes (issue 14): "What do you want to do?" cards before the essay, each a
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


@pytest.mark.parametrize("page,expected", [
    ("app_pages/gini.py", "the sidebar's data set in use"),
    ("app_pages/planner.py", "the sidebar's data set in use"),
    ("app_pages/percentiles.py", "not the sidebar's data set"),
    ("app_pages/stratified.py", "not the sidebar's data set"),
    ("app_pages/ratios.py", "not the sidebar's data set"),
])
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
