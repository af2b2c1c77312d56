"""The three user paths (director, analyst, bad upload) in a real headless Chromium (Playwright +
/usr/bin/chromium), with the shared browser fixtures of tests/conftest.py (``app_server``, ``browser``,
``tab``) and tests/support/browser.py:

* director: landing page -> "Open the Gini page" card -> the answer sentence and the recommended ε
  -> a target typed in Gini points changes the recommendation;
* analyst: upload -> planner (plan) -> Release mode starts from the plan -> release -> the JSON
  record holds the release and the dataset identity -> a reload (new session) with the same file
  shows the spent budget (the shared server's DPCORE_LEDGER_URL points at its own temp SQLite file);
* each bad file of tests/upload_files.py gives the right column or a clear message (in the main area too: the file
  is not in use, the default data are), and no stale error stays after a good upload. The files are uploaded one after the other in one session (each refused file
  followed by a good one, which must then show no error): one page load instead of one per file.
"""

from __future__ import annotations

import json
import re

import pytest
from quality_support import chromium_available, wait_for_app_idle
from support.browser import data_panel_errors, data_panel_text, run_and_wait, upload
from test_release_panel import _csv
from upload_files import bad_files

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]


@pytest.fixture(scope="module")
def upload_tab(app_server, tabs):
    """One session (one page load) for the bad-file checks, in the process's kept tab (tests/conftest.py
    ``tabs``), held until the module ends: the two user paths, which take a tab of their own, run first."""
    with tabs.lease() as watch:
        watch.page.goto(app_server.url)
        wait_for_app_idle(watch.page, timeout_ms=60_000)
        yield watch


def _main_text(page) -> str:
    return page.inner_text('[data-testid="stMain"]')


def _errors(page) -> list[str]:
    return [e.inner_text() for e in page.query_selector_all('[data-testid="stAlertContentError"]')]


#: The order of the bad-file uploads in one session: each refused file is followed by a file that loads
#: (which must then show no stale error); old.xls -> incomes.xlsx is also test_no_stale_error_after_a_good_upload's.
BAD_FILE_ORDER = (
    "ambiguous.csv",
    "thousands.csv",
    "old.xls",
    "incomes.xlsx",
    "decimal_comma.csv",
    "utf16.csv",
    "utf8_bom.csv",
)


@pytest.fixture(scope="module")
def bad_file_results(upload_tab) -> dict[str, list[str]]:
    """Upload every bad file of tests/upload_files.py in turn in one session; for each, what went wrong
    (empty: right)."""
    files = bad_files()
    assert sorted(BAD_FILE_ORDER) == sorted(files), "a bad file is missing from BAD_FILE_ORDER"
    tab, page = upload_tab, upload_tab.page
    results: dict[str, list[str]] = {}
    previous = "a fresh session"
    for name in BAD_FILE_ORDER:
        content, expect = files[name]
        tab.errors.clear()
        assert upload(page, name, content, "application/octet-stream")
        panel, failures = data_panel_text(page), []
        after = f"(uploaded after {previous})"
        if "error" in expect:
            errors = data_panel_errors(page)
            if not any(expect["error"] in e for e in errors):
                failures.append(
                    f"{name} {after}: no error saying {expect['error']!r}; errors {errors}; sidebar {panel[:1500]}"
                )
            if page.query_selector('[data-testid="stException"]'):
                failures.append(f"{name} {after}: an exception box")
            main = _main_text(page)  # the main area says it too, not only the sidebar
            if name not in main or "default synthetic data" not in main:
                failures.append(f"{name} {after}: the main area does not say the file is not in use: {main[:800]}")
        else:
            if f"Income column in use: {expect['column']}" not in panel:
                failures.append(
                    f"{name} {after}: 'Income column in use: {expect['column']}' not shown; sidebar {panel[:1500]}"
                )
            failures += [f"{name} {after}: {problem}" for problem in tab.all_problems()]
        results[name] = failures
        previous = name
    return results


def test_director_path_landing_to_recommended_epsilon(app_server, tab):
    page = tab.page
    page.goto(app_server.url)
    wait_for_app_idle(page, timeout_ms=60_000)
    assert "What do you want to do?" in _main_text(page)
    run_and_wait(page, page.get_by_role("link", name="Open the Gini page").click)
    text = _main_text(page)
    assert re.search(r"At ε = 1 the published Gini is within ±[0-9.]+ of the true Gini half the time", text), text[
        :2000
    ]
    assert "one time in a hundred" in text
    match = re.search(
        r"Recommended: To be within ±0\.01 of the true Gini 90% of the time, use ε = ([0-9]+(?:\.[0-9]+)?)", text
    )
    assert match, text[:3000]
    target = page.get_by_role("spinbutton", name="Your target: published Gini within ± (Gini points)")
    target.fill("0.005")
    run_and_wait(page, lambda: target.press("Enter"))
    second = re.search(
        r"within ±0\.005 of the true Gini 90% of the time, use ε = ([0-9]+(?:\.[0-9]+)?)", _main_text(page)
    )
    assert second and float(second.group(1)) > float(match.group(1))
    assert not tab.all_problems(), tab.all_problems()


def _open_planner_release(page, csv: bytes) -> None:
    assert upload(page, "confidential.csv", csv)
    run_and_wait(
        page, page.locator('[data-testid="stSidebarNav"] a', has_text="Choose epsilon").click, timeout_ms=120_000
    )
    groups = page.locator('[data-testid="stSelectbox"]', has_text="Groups / cells")
    groups.scroll_into_view_if_needed()  # below the plan's answer and charts, which settle as they draw
    wait_for_app_idle(page)
    groups.click()
    run_and_wait(page, page.get_by_role("option", name="region").click, timeout_ms=180_000)
    assert "confidential.csv" in data_panel_text(page), ("the upload is not in use", data_panel_text(page)[:1500])


def test_analyst_path_upload_plan_release_record_reload(app_server, tab):
    csv = _csv(seed=1414)
    page = tab.page
    page.goto(app_server.url)
    wait_for_app_idle(page, timeout_ms=60_000)
    _open_planner_release(page, csv)
    assert "smallest ε" in _main_text(page)
    run_and_wait(page, page.get_by_text("Release: make the real release (spends budget)").click, timeout_ms=120_000)
    create = page.get_by_role("button", name="Create the budget ledger")  # the server's ledger is new: asked once
    if create.count():
        run_and_wait(page, create.click)
    text = _main_text(page)
    assert "confidential.csv" in data_panel_text(page), ("the upload was lost in Release mode", data_panel_text(page))
    # the plan's accuracy-first ε were solved on the uploaded confidential file: not copied into the release
    assert "solved on the confidential file" in text, text[:2000]
    assert page.get_by_role("spinbutton", name="ε for Gini index").input_value()
    total = float(re.search(r"This release costs ε = ([0-9]+(?:\.[0-9]+)?) in total", text).group(1))
    run_and_wait(page, page.get_by_text("These group labels are public").click)  # group statistics: declared
    labels = page.get_by_role("textbox", name="The public group labels, separated by commas")
    labels.fill("north, south, west")
    run_and_wait(page, lambda: labels.press("Enter"))
    run_and_wait(page, page.get_by_text("The size of each group is public too").click)
    run_and_wait(page, page.get_by_text("I understand that this spends privacy budget").click)
    run_and_wait(page, page.get_by_role("button", name="Make the release").click, timeout_ms=120_000)
    assert "Released." in _main_text(page), _main_text(page)[-2500:]
    with page.expect_download() as download:
        page.get_by_role("button", name="Download the release record (JSON)").click()
    doc = json.loads(open(download.value.path(), encoding="utf-8").read())
    assert doc["dataset"]["file_name"] == "confidential.csv" and doc["dataset"]["income_column"] == "income"
    assert len(doc["every_release_of_the_account"]) == 1
    assert doc["epsilon_spent_in_total"] == pytest.approx(total, rel=1e-3)
    # a reload is a new session: the same file finds its budget in the ledger
    page.reload()
    wait_for_app_idle(page, timeout_ms=60_000)
    _open_planner_release(page, csv)
    if "Release: make the real release" in _main_text(page) and "Spent so far" not in _main_text(page):
        run_and_wait(page, page.get_by_text("Release: make the real release (spends budget)").click, timeout_ms=120_000)
    spent = re.search(r"Spent so far\s*ε = ([0-9.]+)", _main_text(page))
    assert spent and float(spent.group(1)) == pytest.approx(total, rel=1e-3), _main_text(page)[-2000:]
    assert not page.query_selector('[data-testid="stException"]')


@pytest.mark.parametrize("name", sorted(bad_files()))
def test_each_bad_file_shows_the_right_column_or_a_clear_message(bad_file_results, name):
    """The file's upload (in the session of ``bad_file_results``) shows its income column, or a clear
    st.error naming the problem and no exception box."""
    assert not bad_file_results[name], bad_file_results[name]


def test_no_stale_error_after_a_good_upload(upload_tab, bad_file_results):  # runs after the chain
    page = upload_tab.page
    content, _ = bad_files()["old.xls"]
    assert upload(page, "old.xls", content, "application/vnd.ms-excel")
    assert data_panel_errors(page)
    content, _ = bad_files()["incomes.xlsx"]
    assert upload(page, "incomes.xlsx", content, "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert not _errors(page), _errors(page)
    assert "incomes.xlsx" in data_panel_text(page)
