"""Shared fixtures: seeded generators and paths to the real data in ../shared/data (skip when absent).

Page-test helpers live in ``tests/support`` (``from support import open_page, page_text, assert_clean,
page_script, run_script``): one copy for every page test instead of a private ``_open`` / ``_clean`` /
``_text`` in each file.
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TESTS_DIR = Path(__file__).resolve().parent
for _path in (REPO_ROOT, TESTS_DIR):  # the app's packages, and tests/support
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

SHARED_DATA = REPO_ROOT.parent / "shared" / "data"

# Bytecode caches (__pycache__/, git-ignored) are written even when PYTHONDONTWRITEBYTECODE is set in the
# environment: without them every pytest process (each xdist worker, each collection) compiles every
# module again and re-runs pytest's assertion rewriting of every test file, about half of the CPU time
# of a collection (measured: `pytest --collect-only` 13.0 s CPU without the caches, 6.0 s with them).
# Set here, before pytest imports the test modules; python subprocesses of tests read the caches too.
sys.dont_write_bytecode = False

# No test may write to the user's real budget ledger (~/.local/share/dpcore/ledger.db): every test
# process, and every app or script it starts (they inherit the environment), uses a throwaway one.
if "DPCORE_LEDGER_URL" not in os.environ:
    os.environ["DPCORE_LEDGER_URL"] = "sqlite:///" + str(
        Path(tempfile.mkdtemp(prefix="dpcore-test-ledger-")) / "ledger.db"
    )


# The test files of 3 s or more, longest first (summed test times per file from the junit report of a full
# run, 2026-11-27 10:20 UTC, after the Gini split search and the probed smooth sensitivity made the Gini files
# short). With `bash run.sh test` (pytest-xdist, --dist loadfile --no-loadscope-reorder) whole files go to the
# workers in collection order: the long ones start at once and the short ones fill in at the end, so the
# workers finish together (the wall time is at least the longest file). A serial run only changes its order.
# Files not listed keep their alphabetical order. test_spark_cluster.py (a standalone Spark cluster: master,
# worker, driver and executor JVMs) was added later: as long as test_engines.py, measured alone one after the
# other on 2026-12-07 (67 s and 68 s at load 10; 38 s of CPU). test_plan_command.py and test_snapshot.py (they ran
# last, alphabetically) are placed by their CPU measured alone on 2026-12-07 after the snapshot's refits, the
# percentile half-widths and the Gini split's screen were made faster: 18 s and 12 s, single-threaded, so about
# their wall time on a free core, beside the files of that much CPU.
SLOW_FILES_FIRST = (
    "test_engines.py",
    "test_spark_cluster.py",
    "test_browser.py",
    "test_browser_paths.py",
    "test_browser_lessons.py",
    "test_ledger.py",
    "test_cli_faults.py",
    "test_code_health.py",
    "test_hostile_inputs.py",
    "test_browser_sidebar_state.py",
    "test_plan_command.py",
    "test_smooth_noise_certificates.py",
    "test_browser_lessons_more.py",
    "test_browser_class_mode.py",
    "test_browser_accessibility.py",
    "test_page_gini.py",
    "test_snapshot.py",
    "test_page_lessons.py",
    "test_population.py",
    "test_serve.py",
    "test_release_panel.py",
    "test_page_percentiles.py",
    "test_gini_bruteforce.py",
    "test_gini_experiments.py",
    "test_serve_faults.py",
    "test_gini_split_search.py",
    "test_plan_light_noise.py",
    "test_browser_planner_release.py",
    "test_ledger_chain.py",
    "test_cli.py",
    "test_page_planner.py",
    "test_planner_half_width.py",
    "test_security.py",
    "test_page_stratified.py",
    "test_ratio_rivals.py",
    "test_app_pages.py",
    "test_notebooks.py",
    "test_planner_experiments.py",
    "test_upload_bombs.py",
    "test_page_attacker.py",
    "test_page_ratios.py",
    "test_percentiles_stats.py",
    "test_sidebar.py",
    "test_ledger_faults.py",
    "test_bounds.py",
    "test_gini_page_noise_follows.py",
    "test_attacker.py",
    "test_record_fingerprint_arrow.py",
    "test_sidebar_uploads.py",
    "test_noise_secure.py",
    "test_run_sh.py",
    "test_load.py",
    "test_missing_values.py",
    "test_engine_inputs.py",
    "test_noise_smooth.py",
    "test_keys.py",
    "test_gini_page_fragment.py",
    "test_answers.py",
    "test_intervals.py",
    "test_planner_gini_points.py",
    "test_data.py",
    "test_classroom.py",
    "test_views_fast_paths.py",
    "test_scriptgen.py",
    "test_app_release_side_doors.py",
    "test_ratio.py",
    "test_url_values.py",
    "test_landing.py",
    "test_cold_server_sessions.py",
    "test_plan_to_release.py",
)


def pytest_collection_modifyitems(config, items):  # pytest hook signature
    rank = {name: index for index, name in enumerate(SLOW_FILES_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: in-file order is kept


# Every AppTest, at its first run, scans the metadata of every installed distribution for Streamlit components:
# each test process scans once (support.pages.scan_components_once, where the measurements are), installed before
# each test once a test module or helper has imported Streamlit (a dictionary look-up per test until then).
def pytest_runtest_setup(item):  # pytest hook signature
    if "streamlit" in sys.modules:
        from support.pages import scan_components_once

        scan_components_once()


# The test files that use the shared app server (``app_server`` below), in two groups. With ``--dist loadfile``
# (bash run.sh test) each group goes to one worker as one unit of work, its files one after the other, where
# pytest-xdist would hand each file to whichever worker is free: every worker then started its own app server,
# made its cold visit and filled its caches (about 7 s of CPU each, measured alone: the cold-visit test takes
# 7.9 s, pytest's own start 0.8 s). Two groups, not one: a single worker would need about 120 s of CPU for
# every browser test (all in one process), the length of the whole run on the 2-core machine. The groups are
# of about the same CPU (55-60 s each) and start first: a group takes the place of its first file in
# SLOW_FILES_FIRST. test_browser_accessibility.py (axe-core on the 8 pages) was added to the first group after that
# measurement; it reads the page tour of test_browser.py (tests/support/page_tour.py: one visit of each page for
# both), so the two must stay in one group.
BROWSER_GROUPS = (
    ("test_browser.py", "test_browser_lessons.py", "test_browser_class_mode.py", "test_browser_accessibility.py"),
    (
        "test_browser_paths.py",
        "test_browser_sidebar_state.py",
        "test_browser_lessons_more.py",
        "test_browser_planner_release.py",
        "test_browser_private_plan.py",
        "test_browser_release_card.py",  # only the process's Chromium: launched once with the group's
    ),
)
_BROWSER_GROUP_OF = {name: number for number, names in enumerate(BROWSER_GROUPS, 1) for name in names}


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: unknown (and unused) without it
def pytest_xdist_make_scheduler(config, log):
    """``--dist loadfile`` with the files of a browser group as one unit (BROWSER_GROUPS); other modes as usual."""
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class BrowserGroupScheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            group = _BROWSER_GROUP_OF.get(path.rsplit("/", 1)[-1])
            return path if group is None else f"browser group {group}"

    return BrowserGroupScheduling(config, log)


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


@pytest.fixture
def release_account(tmp_path):
    """A durable ledger account with room for a test's releases (cap epsilon 100, delta 1e-5), in a throw-away
    SQLite ledger: a real release (dpcore.release.make_release) is charged to a durable account only."""
    from dpcore import ledger

    return ledger.init_ledger(f"sqlite:///{tmp_path}/release-ledger.db").account(
        "test-releases", cap_epsilon=100.0, label="test releases", cap_delta=1e-5
    )


def shared_file(name: str) -> Path:
    """Path of ../shared/data/<name>; skips the calling test cleanly when the file is absent."""
    path = SHARED_DATA / name
    if not path.is_file():
        pytest.skip(f"real data file ../shared/data/{name} is not available on this machine")
    return path


@pytest.fixture
def cps_path() -> Path:
    return shared_file("cps_asec2016_ipums_midwest.csv.gz")


@pytest.fixture
def acs_path() -> Path:
    return shared_file("acs2019_nist_excerpt_national.csv.gz")


@pytest.fixture
def pseo_path() -> Path:
    return shared_file("pseo_earnings_co_tx.csv.gz")


@pytest.fixture(scope="module")
def pg_server():
    """URL of a real PostgreSQL server for this test module (tests/support/postgres.py: initdb + pg_ctl as a
    non-root user in a temp dir, free localhost port); skips with the reason when it cannot start."""
    from support.postgres import PostgresUnavailable, postgres_server

    try:
        with postgres_server() as url:
            yield url
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL test server unavailable: {exc}")


# ---------------------------------------------------------------------------------------------
# Real browser (tests/support/browser.py): one app server and one Chromium per test process
# ---------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def chromium():
    """Debian's Chromium through Playwright, one per test process (the sync API cannot run two at once in
    a thread: every browser test uses this one). Skips when chromium or playwright is missing."""
    from quality_support import chromium_available
    from support.browser import chromium_browser

    if not chromium_available():
        pytest.skip("needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)")
    with chromium_browser() as browser:
        yield browser


@pytest.fixture(scope="session")
def tabs(chromium):
    """The process's kept browser page (support.browser.TabKeeper), lent to one test or module at a time."""
    from support.browser import TabKeeper

    keeper = TabKeeper(chromium)
    try:
        yield keeper
    finally:
        keeper.close()


@pytest.fixture(scope="session")
def app_server(tmp_path_factory, tabs):
    """The app (``streamlit run app.py``) shared by every browser test of this process, with its own
    throw-away ledger; ``app_server.cold_visit`` is what its first visitor (a cold deep link) saw."""
    from support.browser import shared_app_server

    with shared_app_server(tmp_path_factory.mktemp("app_server"), tabs) as server:
        yield server


@pytest.fixture(scope="session")
def browser(app_server, chromium):
    """``chromium``, once ``app_server`` has had its cold first visitor."""
    return chromium


@pytest.fixture(scope="session")
def page_tour(app_server, browser, tabs):  # ``browser``: the app server has had its cold visit
    """Every page of the navigation visited once in the kept tab (support.page_tour.run_page_tour): what
    tests/test_browser.py and tests/test_browser_accessibility.py check, seen in one visit of each page."""
    from support.page_tour import run_page_tour

    return run_page_tour(app_server, tabs)


@pytest.fixture
def tab(browser, tabs):  # ``browser``: the app server has had its cold visit
    """A tab as a new visitor opens it (a new Streamlit session at its first page load), with one watched page
    (support.browser.PageWatch): the kept page of ``tabs`` (cleared), or a new context while it is lent."""
    with tabs.lease() as watch:
        yield watch
