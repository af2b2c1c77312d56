"""AppTest: every page registered in app.py opens without an exception, on the default data and on
the bundled real example; the sidebar in app.py honours the URL on a first run; without ../shared/data
the real-data views show the bundled ACS and PSEO files."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support import open_page

from ui import sidebar as sb

APP = Path(__file__).resolve().parent.parent / "app.py"
PAGES = re.findall(r"st\.Page\(\s*[\"']([^\"']+\.py)[\"']", APP.read_text(encoding="utf-8"))


def test_app_registers_pages():
    assert "app_pages/about.py" in PAGES and len(PAGES) >= 6
    assert all((APP.parent / p).is_file() for p in PAGES)


def _open(page: str, **query) -> AppTest:
    """The page through the shared helper, plus what every registered page must show."""
    at = open_page(page, timeout=90, **query)
    assert not at.exception, (page, at.exception)
    assert len(at.main.children) > 0, f"{page} rendered nothing"
    assert len(at.title) >= 1, f"{page} has no title"
    return at


@pytest.mark.parametrize("page", PAGES)
def test_page_opens_on_default_data(page):
    at = _open(page)
    assert at.session_state["dataset"].source == "synthetic"


@pytest.mark.parametrize("page", PAGES)
def test_page_opens_on_the_bundled_real_example(page):
    at = _open(page, data_source=sb.SRC_EXAMPLE)
    assert at.session_state["dataset"].n == 235


def test_app_sidebar_reads_the_url_on_first_run():
    at = AppTest.from_file("../app.py", default_timeout=90)
    at.query_params["data_source"] = sb.SRC_TWO_POINT
    at.query_params["data_gini"] = "0.6"
    at.query_params["seed"] = "11"
    at.run()
    assert not at.exception and not at.error
    ds = at.session_state["dataset"]
    assert ds.bounds is not None and "Gini 0.600" in ds.name
    assert at.session_state["seed"] == 11
    assert at.sidebar.selectbox(key="data_source").value == sb.SRC_TWO_POINT


def test_app_ignores_an_unknown_source_in_the_url():
    at = AppTest.from_file("../app.py", default_timeout=90)
    at.query_params["data_source"] = "no such source"
    at.query_params["data_n"] = "-5"
    at.run()
    assert not at.exception and not at.error
    # the default source, at the nearest allowed n; the main area says what the link asked for
    assert at.session_state["dataset"].name == sb._synthetic(100, sb.DEFAULT_SEED).name
    notices = [w.value for w in at.main.warning]
    assert any("“Data source” = no such source, which is not one of the choices" in w for w in notices), notices
    assert any("“Number of records n” = -5; the smallest allowed is 100, used instead" in w for w in notices), notices
    assert not at.sidebar.warning


def _page_files_of(tuple_name: str) -> list[str]:
    """The page files of a tuple of st.Page names in app.py, e.g. PAGES_WITHOUT_DATA_SECTION."""
    import ast

    tree = ast.parse(APP.read_text(encoding="utf-8"))
    files = {
        target.id: node.value.args[0].value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Call)
        and getattr(node.value.func, "attr", None) == "Page"
        for target in node.targets
    }
    (names,) = [
        node.value.elts
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(target, "id", None) == tuple_name for target in node.targets)
    ]
    return [files[name.id] for name in names]


def test_every_page_that_never_reads_the_sidebar_data_skips_its_data_section():
    """The attacker page showed a Data sidebar it does not use. A page that never asks for the sidebar's
    dataset (ui.sidebar.current_dataset) keeps the data choice in one closed popover; the landing page
    offers it (in popovers too) for the pages its cards open."""
    without = set(_page_files_of("PAGES_WITHOUT_DATA_SECTION"))
    for page in PAGES:
        reads_data = "current_dataset" in (APP.parent / page).read_text(encoding="utf-8")
        if page != "app_pages/about.py":
            assert (page in without) == (not reads_data), page
    assert "app_pages/attacker.py" in without and without <= set(_page_files_of("DATA_FREE_PAGES"))


def test_attacker_page_sidebar_says_it_uses_no_data_and_keeps_the_choice():
    at = AppTest.from_file(str(APP), default_timeout=90)
    at.query_params.update(data_n="1000", seed="5")
    at.switch_page("app_pages/attacker.py")  # a deep link to the page: app.py's first run draws it
    at.run()
    assert not at.exception and not at.error
    assert any("This page does not use these data" in c.value for c in at.sidebar.caption)
    (panel,) = at.sidebar.get("popover")
    assert panel.proto.popover.label == "Data for the other pages"
    assert panel.selectbox(key="data_source").value == sb.SRC_LOGNORMAL  # drawn, so kept for the data pages
    assert panel.select_slider(key="data_n").value == 1000
    assert [w.key for w in at.sidebar.number_input if w.key == "seed"] == ["seed"] and at.session_state["seed"] == 5
    assert not [w for w in panel.number_input if w.key == "seed"]  # the seed stays in view (the game uses it)
    assert not any("Planning is not release" in i.value for i in at.sidebar.info)


# Views whose data are real public files: (page, query, what they show). On a fresh machine they read
# the copies bundled in dpcore/examples (identical files, so the same numbers).
REAL_DATA_VIEWS = [
    ("app_pages/stratified.py", {}, "ACS incomes by group (the page's default)"),
    ("app_pages/ratios.py", {"ratio_view": "Real example: poverty (ACS)"}, "ACS poverty counts"),
    (
        "app_pages/percentiles.py",
        {"perc_src": "A real PSEO cell (its published quartiles and size)"},
        "a published PSEO cell",
    ),
]


def _first_table(page: str, query: dict):
    import streamlit as st

    st.cache_data.clear()  # nothing read with the other file location may be served from a cache
    st.cache_resource.clear()
    from support import assert_clean, open_page, page_text

    at = open_page(page, timeout=240, **query)
    assert_clean(at)
    assert "not on this machine" not in page_text(at)
    assert at.dataframe, f"{page} shows no table"
    return at.dataframe[0].value


@pytest.mark.parametrize("page,query,what", REAL_DATA_VIEWS, ids=[p.split("/")[1] for p, _, _ in REAL_DATA_VIEWS])
def test_fresh_machine_shows_real_acs_and_pseo(monkeypatch, tmp_path, page, query, what):
    """Without ../shared/data (shared_data_path hidden) the real-data views load the bundled ACS / PSEO
    copies, and show the same numbers as with ../shared/data."""
    from dpcore.data import catalogue as data

    with_shared = _first_table(page, query) if data.shared_data_path(data.SHARED_DATASETS["acs"].file_name) else None
    monkeypatch.setattr(data, "SHARED_DATA_DIR", tmp_path)
    monkeypatch.setattr(data, "shared_data_path", lambda name: None)
    data._acs_columns.cache_clear()
    try:
        fresh = _first_table(page, query)
    finally:
        data._acs_columns.cache_clear()
    assert len(fresh) >= 2, what
    if with_shared is not None:
        pd.testing.assert_frame_equal(fresh, with_shared)
