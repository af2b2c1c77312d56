"""AppTest of the method pages (Gini, percentiles, group means) on a confidential upload: the planner's choice,
"plan privately" (one confirmation, the DP snapshot charged once to the population in a real SQLite ledger; every
chart and download then from its synthetic records, said publishable) beside "explore the raw file" (the default:
nothing charged, every download marked confidential); a snapshot taken on one page is reused by every other page
at no further cost."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support import assert_clean, page_text

from dpcore import ledger
from ui import private_source

#: page -> (its file, the widgets' key prefix, query parameters that make it compute on the sidebar's data)
PAGES = {
    "gini": ("app_pages/gini.py", "gini", {"gini_exp_draws": "10,000"}),
    "percentiles": ("app_pages/percentiles.py", "perc", {"perc_src": "Sidebar dataset (random subset)"}),
    "stratified": ("app_pages/stratified.py", "strat", {"strat_data": "Sidebar dataset (choose grouping columns)"}),
}
TAKEN_NOTE = "Planning on a DP snapshot of your file"


def _harness(page: str) -> AppTest:
    """The page (a key of PAGES, or a page file) run after the sidebar, as test_page_planner_private does."""
    from support.pages import REPO_ROOT

    path = PAGES[page][0] if page in PAGES else page
    harness = (
        f"import runpy, sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
        f"runpy.run_path({str(REPO_ROOT / path)!r})\n"
    )
    return AppTest.from_string(harness, default_timeout=240)


def _csv() -> bytes:
    gen = np.random.default_rng(38)
    n = 2000
    income = np.round(gen.lognormal(10.6, 0.8, n), 2)
    region = gen.choice(np.array(["north", "south", "west"]), n)
    return pd.DataFrame({"income": income, "region": region}).to_csv(index=False).encode()


def _uploaded(page: str) -> AppTest:
    at = _harness(page)
    at.query_params["data_source"] = "Upload a CSV or Parquet file"
    for k, v in PAGES[page][2].items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", _csv(), "text/csv")).run()
    assert at.session_state["dataset"].confidential
    return at


def _download_labels(at) -> list[str]:
    return [str(b.proto.label) for b in at.get("download_button")]


def _charged(url: str) -> list:
    return [e for a in ledger.open_ledger(url, create=False).accounts() for e in a.entries()]


def _assert_clean_on_the_snapshot(at) -> None:
    """assert_clean, but for the one outcome a real snapshot may draw (as test_page_planner_private): its
    synthetic data, unseeded (charged, so never seeded), can make a target unreachable, said in an error box."""
    assert not at.exception, [str(e.value)[:1000] for e in at.exception]
    errors = [str(e.value) for e in at.error]
    assert all("does not reach" in e for e in errors), errors


def _take_snapshot(at, prefix: str, grouped: bool) -> None:
    key = f"{prefix}_source"
    assert at.radio(key=key).value == private_source.RAW  # the default: the page as before, nothing charged
    assert "exploring the raw confidential file" in page_text(at)
    labels = _download_labels(at)  # computed from the records: every download says so, in its name too
    assert labels and all(label.endswith("— CONFIDENTIAL") for label in labels), labels
    at.radio(key=key).set_value(private_source.PRIVATE).run()
    if grouped:  # the group column's labels, typed as public, are the snapshot's cells
        at.selectbox(key=f"{prefix}_snapshot_group").set_value("region").run()
        at.text_input(key=f"{prefix}_snapshot_cells").set_value("north, south, west").run()
    assert_clean(at)
    assert "costs ε = 0.1 of the population's budget, once" in page_text(at)
    assert TAKEN_NOTE not in page_text(at)
    at.button(key=f"{prefix}_take_snapshot").click().run()
    _assert_clean_on_the_snapshot(at)


@pytest.mark.parametrize(
    ("first", "second"),
    [("gini", "percentiles"), ("percentiles", "stratified"), ("stratified", "gini"), ("gini", "stratified")],
)
def test_a_method_page_plans_privately_and_another_page_reuses_the_snapshot(tmp_path, monkeypatch, first, second):
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(ledger.ENV_VAR, url)  # never the user's ledger
    ledger.init_ledger(url)
    at = _uploaded(first)
    _take_snapshot(at, PAGES[first][1], grouped=first != "gini")  # a page that does not group may declare cells
    (entry,) = _charged(url)
    assert entry.cost.epsilon == 0.1 and entry.record["kind"] == "dpcore snapshot"
    text = page_text(at)
    assert TAKEN_NOTE in text and "publishable" in text and "exploring the raw confidential file" not in text
    assert private_source.PRIVATE_SCRIPT_NOTE in text  # the script would read the file itself: not offered
    labels = _download_labels(at)
    assert labels and not any("CONFIDENTIAL" in label for label in labels), labels
    at.run()  # a rerun reuses the stored snapshot
    _assert_clean_on_the_snapshot(at)
    assert len(_charged(url)) == 1 and TAKEN_NOTE in page_text(at)
    # another page, another session, the same records: the stored snapshot, no confirmation, nothing charged
    other = _uploaded(second)
    other.radio(key=f"{PAGES[second][1]}_source").set_value(private_source.PRIVATE).run()
    _assert_clean_on_the_snapshot(other)
    assert not [b for b in other.button if b.key == f"{PAGES[second][1]}_take_snapshot"]
    assert TAKEN_NOTE in page_text(other) and len(_charged(url)) == 1
    if second == "stratified":  # the group means group by the snapshot's declared cells, if it declared any
        assert (private_source.UNGROUPED_NOTE in page_text(other)) == (first == "gini")
        if first != "gini":
            assert other.selectbox(key="strat_col1").value == private_source.CELL_COLUMN
    # the raw file beside it: said confidential, nothing charged
    other.radio(key=f"{PAGES[second][1]}_source").set_value(private_source.RAW).run()
    assert_clean(other)
    assert "exploring the raw confidential file" in page_text(other) and len(_charged(url)) == 1


@pytest.mark.parametrize("page", list(PAGES))
def test_without_an_upload_the_choice_is_not_drawn_and_nothing_is_marked(page):
    at = _harness(page)
    for k, v in PAGES[page][2].items():
        at.query_params[k] = v
    at.run()
    assert_clean(at)
    assert not [r for r in at.radio if r.key == f"{PAGES[page][1]}_source"]
    assert not any("CONFIDENTIAL" in label for label in _download_labels(at))
    assert "exploring the raw confidential file" not in page_text(at)


def test_a_download_is_marked_with_its_page_only(monkeypatch):
    """The mark is kept with the page that set it: another page's downloads (ratios, lessons) are never marked."""
    from ui import common

    state: dict = {}
    monkeypatch.setattr(common.st, "session_state", state)
    monkeypatch.setattr(common, "_page_hash", lambda: "gini-page")
    common.mark_downloads("confidential")
    assert common.marked_download("Download (CSV)", "x.csv") == ("Download (CSV) — CONFIDENTIAL", "confidential_x.csv")
    monkeypatch.setattr(common, "_page_hash", lambda: "ratios-page")
    assert common.marked_download("Download (CSV)", "x.csv") == ("Download (CSV)", "x.csv")


def test_the_planner_reuses_a_method_pages_snapshot_and_says_it_has_no_groups(tmp_path, monkeypatch):
    """A snapshot the Gini page took without cells: the planner reuses it (nothing charged) and, asked to plan by
    a column's groups, says the snapshot cannot (its records are one cell) instead of planning on one silently."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(ledger.ENV_VAR, url)
    ledger.init_ledger(url)
    _take_snapshot(_uploaded("gini"), "gini", grouped=False)
    assert len(_charged(url)) == 1
    planner = _harness("app_pages/planner.py")
    for k, v in {"data_source": "Upload a CSV or Parquet file", "planner_stats": "mean,group_means"}.items():
        planner.query_params[k] = v
    planner.run()
    planner.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", _csv(), "text/csv")).run()
    planner.selectbox(key="planner_groupcol").set_value("region").run()
    planner.radio(key=private_source.SOURCE_KEY).set_value(private_source.PRIVATE).run()
    _assert_clean_on_the_snapshot(planner)
    text = page_text(planner)
    assert TAKEN_NOTE in text and private_source.UNGROUPED_NOTE in text
    assert len(_charged(url)) == 1
