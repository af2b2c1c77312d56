"""Latency of the durable ledger (dpcore.ledger): charge, read spent, a full make_release, open an existing
ledger (create=False: existence and format checks, journal replay check) and verify (integrity check and the
whole hash chain), on SQLite and, when the PostgreSQL binaries are present, on a throw-away local PostgreSQL
server.

``--durability`` compares how a SQLite ledger keeps its history in its file (docs/ledger.md), alternating the
modes in rounds so that the machine's load falls on each alike: the charge (median and 90th percentile of
``acct.charge``) and a whole real release (``dpcore.engines.execute.run_plan``: a mean of 2,000 rows, its source
attached, the charge, the result: four write transactions), with

* ``wal``: WAL without a checkpoint and without the head file (what dpcore did: the history stayed in -wal);
* ``wal+checkpoint``: WAL, a checkpoint after every commit, the head file (what dpcore does);
* ``delete``: a rollback journal (``journal_mode = DELETE``: the file is whole after each commit), the head file.

``--verify-sizes N ...`` times ``verify`` (what a release now runs before its charge) on ledgers of N entries
whose records are the size of a command-line release's (3 KB charged, 1 KB result).

Run: .venv/bin/python benchmarks/bench_ledger.py   (about 20 s)
     .venv/bin/python benchmarks/bench_ledger.py --durability [--rounds 5] --verify-sizes 100 1000 10000
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "tests"))

from support.postgres import PostgresUnavailable, postgres_server

from dpcore import budget, ledger, planner, release
from dpcore.ledger import chain as ledger_chain
from dpcore.ledger import entries as ledger_entries
from dpcore.ledger.backends.head import write_head
from dpcore.ledger.backends.sqlite import SqliteBackend


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


MODES = ("wal", "wal+checkpoint", "delete")


@contextlib.contextmanager
def _mode(name: str, path: Path):
    """The ledger at ``path`` kept in the journal mode ``name`` (see the module docstring)."""
    backend = SqliteBackend
    saved = backend._after_commit, backend.history_problems
    if name == "wal":
        backend._after_commit = lambda self, conn, history: None  # type: ignore[method-assign]
        backend.history_problems = lambda self, conn: []  # type: ignore[method-assign]
    elif name == "delete":
        with contextlib.closing(sqlite3.connect(path)) as conn:
            assert conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0] == "delete"
        backend._after_commit = lambda self, conn, history: history is not None and write_head(self.head_path, history)  # type: ignore[method-assign]
    try:
        yield
    finally:
        backend._after_commit, backend.history_problems = saved
        if name == "delete":
            with contextlib.closing(sqlite3.connect(path)) as conn:
                conn.execute("PRAGMA journal_mode = WAL")


def _release_files(tmp: Path) -> tuple[Path, Path]:
    data = tmp / "data.parquet"
    rng = np.random.default_rng(3)
    pd.DataFrame({"earnings": np.round(rng.lognormal(10.8, 0.8, 2000))}).to_parquet(data, index=False)
    plan = tmp / "plan.toml"
    plan.write_text(
        'version = 1\npopulation = "bench"\nincome = "earnings"\ncap_epsilon = 1000.0\n\n[[statistics]]\n'
        'kind = "mean"\nepsilon = 0.01\nlower = 0\nupper = 500000\n'
    )
    return plan, data


def durability(rounds: int, charges: int = 40, releases: int = 4) -> None:
    from dpcore.engines import execute, parse_source
    from dpcore.plan import load_plan

    timings: dict[str, dict[str, list[float]]] = {m: {"charge": [], "release": []} for m in MODES}
    record = {"plan": "x" * 3000}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        plan_path, data = _release_files(tmp)
        plan = load_plan(plan_path)
        for m in MODES:
            ledger.init_ledger(tmp / f"{m}.db").register_population("bench", 1000.0)
        runs = 0
        for _ in range(rounds):
            for m in MODES:
                path = tmp / f"{m}.db"
                with _mode(m, path):
                    acct = ledger.open_ledger(path, create=False).account("charges", cap_epsilon=1e6)
                    for i in range(charges):
                        t = time.perf_counter()
                        acct.charge(f"c{i}", epsilon=0.001, record=record)
                        timings[m]["charge"].append(time.perf_counter() - t)
                    for _ in range(releases):
                        runs += 1
                        t = time.perf_counter()
                        execute.run_plan(
                            plan, parse_source(str(data)), out_dir=tmp / f"out{runs}", ledger_url=f"sqlite:///{path}"
                        )
                        timings[m]["release"].append(time.perf_counter() - t)
    print(f"SQLite ledger durability, {rounds} rounds (modes alternated), load average {os.getloadavg()[0]:.1f}")
    for m in MODES:
        c, r = np.array(timings[m]["charge"]) * 1e3, np.array(timings[m]["release"]) * 1e3
        print(
            f"  {m:15s} charge median {np.median(c):6.2f} ms, p90 {np.percentile(c, 90):6.2f} ms ({len(c)}) | "
            f"release median {np.median(r):6.1f} ms, p90 {np.percentile(r, 90):6.1f} ms ({len(r)})"
        )


def verify_sizes(sizes: list[int]) -> None:
    record, result = {"plan": "x" * 3000}, {"files": "y" * 1000}
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"v{n}.db"
            db = ledger.open_ledger(path)
            acct = db.account("big", cap_epsilon=1e6)
            conn = sqlite3.connect(path, isolation_level=None)  # the entries chained as charge does, in one go
            conn.execute("BEGIN IMMEDIATE")
            prev = ledger.CHAIN_GENESIS
            account = (acct.label, acct.cap_epsilon, acct.cap_delta, acct.created)
            cost_json, record_json, result_json = (
                json.dumps(x) for x in (budget.pure(0.001).to_dict(), record, result)
            )
            for i in range(n):
                stamp = ledger_entries.now()
                h = ledger_chain.entry_hash(
                    prev, acct.public_id, account, f"c{i}", cost_json, 0.001, 0.0, stamp, record_json
                )
                entry_id = conn.execute(
                    "INSERT INTO dpcore_entries(dataset_id, label, cost, epsilon, delta, time, record, prev_hash, "
                    "entry_hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    ("big", f"c{i}", cost_json, 0.001, 0.0, stamp, record_json, prev, h),
                ).lastrowid
                conn.execute(
                    "INSERT INTO dpcore_results(entry_id, time, result, result_hash) VALUES (?, ?, ?, ?)",
                    (entry_id, stamp, result_json, ledger_chain.result_hash(h, stamp, result_json)),
                )
                prev = h
            conn.execute("COMMIT")
            conn.close()
            times = []
            for _ in range(3):
                t = time.perf_counter()
                report = ledger.open_ledger(path, create=False, verify=True).verify()
                times.append(time.perf_counter() - t)
            assert report.ok and report.entries == n, report.problems
            t = time.perf_counter()
            acct.charge("one more", epsilon=0.001, record=record)
            charge_ms = (time.perf_counter() - t) * 1e3
            print(
                f"  verify with {n:>6,} entries ({path.stat().st_size / 1e6:5.1f} MB): open + verify "
                f"{min(times) * 1e3:7.1f} ms (best of 3), a charge then {charge_ms:6.1f} ms; "
                f"load average {os.getloadavg()[0]:.1f}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--durability", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--verify-sizes", type=int, nargs="*", default=[])
    args = parser.parse_args()
    if args.durability or args.verify_sizes:
        if args.durability:
            durability(args.rounds)
        if args.verify_sizes:
            verify_sizes(args.verify_sizes)
        raise SystemExit(0)
    with tempfile.TemporaryDirectory() as tmp:
        _bench(f"sqlite:///{tmp}/ledger.db", "SQLite")
    try:
        with postgres_server() as url:
            _bench(url, "PostgreSQL")
    except PostgresUnavailable as exc:
        print(f"PostgreSQL skipped: {exc}")
