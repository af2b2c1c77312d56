"""Latency of the durable ledger (dpcore.ledger): charge, read spent, a full make_release, open an existing
ledger (create=False: existence and format checks, journal replay check) and verify (integrity check and the
whole hash chain), on SQLite and, when the PostgreSQL binaries are present, on a throw-away local PostgreSQL
server.

Run: .venv/bin/python benchmarks/bench_ledger.py   (about 20 s)
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from support.postgres import PostgresUnavailable, postgres_server  # noqa: E402

from dpcore import ledger, planner, release  # noqa: E402


def _bench(url: str, name: str, n: int = 200) -> None:
    db = ledger.open_ledger(url)
    acct = db.account(f"bench-{time.time_ns()}", cap_epsilon=1e6)
    t = time.perf_counter()
    for i in range(n):
        acct.charge(f"c{i}", epsilon=0.01, record={"i": i, "statistic": "bench"})
    charge_ms = (time.perf_counter() - t) / n * 1e3
    t = time.perf_counter()
    for _ in range(20):
        acct.spent_epsilon()
    spent_ms = (time.perf_counter() - t) / 20 * 1e3
    x = np.random.default_rng(1).lognormal(10, 1, 10_000)
    stat = planner.CountAbove(x, 20_000.0)
    release.make_release([(stat, 0.1)], acct)  # warm
    t = time.perf_counter()
    for _ in range(20):
        release.make_release([(stat, 0.1)], acct)
    rel_ms = (time.perf_counter() - t) / 20 * 1e3
    t = time.perf_counter()
    for _ in range(20):
        ledger.open_ledger(url, create=False)
    open_ms = (time.perf_counter() - t) / 20 * 1e3
    t = time.perf_counter()
    report = db.verify()
    verify_ms = (time.perf_counter() - t) * 1e3
    assert report.ok, report.problems
    print(
        f"{name:11s} charge {charge_ms:6.2f} ms | spent_epsilon with {n + 21} entries {spent_ms:6.2f} ms | "
        f"make_release(count) {rel_ms:6.2f} ms | open_ledger {open_ms:6.2f} ms | verify {report.entries} entries "
        f"{verify_ms:7.1f} ms"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        _bench(f"sqlite:///{tmp}/ledger.db", "SQLite")
    try:
        with postgres_server() as url:
            _bench(url, "PostgreSQL")
    except PostgresUnavailable as exc:
        print(f"PostgreSQL skipped: {exc}")
