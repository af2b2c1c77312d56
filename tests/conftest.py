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

# No test may write to the user's real budget ledger (~/.local/share/dpcore/ledger.db): every test
# process, and every app or script it starts (they inherit the environment), uses a throwaway one.
if "DPCORE_LEDGER_URL" not in os.environ:
    os.environ["DPCORE_LEDGER_URL"] = "sqlite:///" + str(Path(tempfile.mkdtemp(prefix="dpcore-test-ledger-")) / "ledger.db")


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(12345)


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
