"""Tests of dpcore.ledger on real databases: SQLite always, PostgreSQL on a server the tests start.

Racing processes, kill -9 in a loop of releases, fixed caps, append-only storage, composition of
approximate-DP and zCDP costs, URLs and fingerprints.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest
from support.postgres import fresh_database

from dpcore import budget as B
from dpcore import ledger as L
from dpcore.ledger import chain as ledger_chain
from dpcore.ledger.backends import postgres as postgres_backend
from dpcore.validation import DPInputError

REPO = Path(__file__).resolve().parents[1]


# ----------------------------------------------------------------------------------------------------
# Fixtures: one SQLite file per test; one PostgreSQL server per module (each test its own database)
# ----------------------------------------------------------------------------------------------------
def _fresh_pg_database(server_url: str) -> str:
    return fresh_database(server_url, "ledger_test")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/sub/ledger.db"
    return _fresh_pg_database(request.getfixturevalue("pg_server"))


# ----------------------------------------------------------------------------------------------------
# The public API
# ----------------------------------------------------------------------------------------------------
def test_charge_spent_entries_and_cap(url):
    db = L.open_ledger(url)
    acct = db.account("ds-1", cap_epsilon=2.0, label="CPS income")
    assert acct.cap == B.BudgetCap(epsilon=2.0) and acct.cap_epsilon == 2.0 and acct.label == "CPS income"
    assert acct.spent_epsilon() == 0.0 and acct.remaining_epsilon() == 2.0 and acct.entries() == []
    e1 = acct.charge("first release", epsilon=0.5, record={"statistic": "gini", "released": [0.41]})
    e2 = acct.charge("second", epsilon=1.25)
    assert acct.spent_epsilon() == 1.75 and acct.remaining_epsilon() == 0.25
    entries = acct.entries()
    assert [e.id for e in entries] == [e1.id, e2.id] and e1.id < e2.id
    assert entries[0].label == "first release" and entries[0].record == {"statistic": "gini", "released": [0.41]}
    assert entries[0].cost == B.pure(0.5) and entries[0].epsilon == 0.5 and entries[0].delta == 0.0
    assert entries[0].time.endswith("+00:00")  # UTC
    assert entries[1].record == {}
    with pytest.raises(L.BudgetExceeded, match=r"leaving ε = 0.25.*Nothing was charged") as info:
        acct.charge("too much", epsilon=0.5)
    assert isinstance(info.value, DPInputError) and isinstance(info.value, ValueError)
    assert len(acct.entries()) == 2 and acct.spent_epsilon() == 1.75  # a refusal writes nothing
    acct.charge("exactly the rest", epsilon=0.25)  # reaching the cap exactly is allowed
    assert acct.spent_epsilon() == 2.0 and acct.remaining_epsilon() == 0.0
    # another connection (a reload, a restart) sees the same account and spending
    again = L.open_ledger(url).account("ds-1", cap_epsilon=2.0)
    assert again.spent_epsilon() == 2.0 and again.label == "CPS income" and len(again.entries()) == 3
    assert L.open_ledger(url).find_account("ds-1").spent_epsilon() == 2.0
    assert again.public_id == acct.public_id and len(acct.public_id) == 32 and "ds-1" not in acct.public_id
    assert L.open_ledger(url).find_account("nope") is None
    assert [a.dataset_id for a in db.accounts()] == ["ds-1"]


def test_cap_is_fixed_at_creation(url):
    db = L.open_ledger(url)
    db.account("ds", cap_epsilon=1.0, label="a")
    with pytest.raises(DPInputError, match="can never be raised or reset") as info:
        db.account("ds", cap_epsilon=3.0)
    assert not isinstance(info.value, L.BudgetExceeded)
    assert "ε = 1" in str(info.value) and "ε = 3" in str(info.value)
    assert "new account" not in str(info.value)  # the refusal no longer says how to reset the budget
    with pytest.raises(DPInputError, match="can never be raised or reset"):
        db.account("ds", cap_epsilon=1.0, cap_delta=1e-6)
    assert db.account("ds", cap_epsilon=1.0).cap_epsilon == 1.0  # the same cap reopens it
    # a different dataset id is a different, independent account
    other = db.account("ds (cap 3)", cap_epsilon=3.0)
    other.charge("x", epsilon=2.5)
    assert db.account("ds", cap_epsilon=1.0).spent_epsilon() == 0.0


def test_no_delete_or_reset_api_and_storage_is_append_only(tmp_path):
    for cls in (L.LedgerDB, L.Account):
        names = [n for n in dir(cls) if not n.startswith("_")]
        assert not [
            n
            for n in names
            if any(w in n.lower() for w in ("delete", "reset", "remove", "clear", "drop", "set_cap", "update"))
        ], names
    path = tmp_path / "l.db"
    acct = L.open_ledger(f"sqlite:///{path}").account("ds", cap_epsilon=1.0)
    entry = acct.charge("c", epsilon=0.5)
    acct.attach_result(entry.id, {"released": [1.0]})
    with pytest.raises(DPInputError, match="already has its result"):
        acct.attach_result(entry.id, {"released": [2.0]})
    conn = sqlite3.connect(path)
    for sql in (
        "DELETE FROM dpcore_entries",
        "UPDATE dpcore_entries SET epsilon = 0",
        "UPDATE dpcore_accounts SET cap_epsilon = 100",
        "DELETE FROM dpcore_accounts",
        "DELETE FROM dpcore_results",
        "UPDATE dpcore_results SET result = '{}'",
    ):
        with pytest.raises(sqlite3.DatabaseError):
            conn.execute(sql)
    conn.close()
    assert acct.spent_epsilon() == 0.5 and acct.entries()[0].result == {"released": [1.0]}


def test_postgres_storage_is_append_only(pg_server):
    import psycopg

    url = _fresh_pg_database(pg_server)
    acct = L.open_ledger(url).account("ds", cap_epsilon=1.0)
    acct.charge("c", epsilon=0.5)
    for sql in (
        "DELETE FROM dpcore_entries",
        "UPDATE dpcore_entries SET epsilon = 0",
        "UPDATE dpcore_accounts SET cap_epsilon = 100",
        "DELETE FROM dpcore_accounts",
    ):
        with psycopg.connect(url, autocommit=True) as conn, pytest.raises(psycopg.errors.RaiseException):
            conn.execute(sql)
    assert acct.spent_epsilon() == 0.5
    L.open_ledger(url)  # reopening re-runs the idempotent schema set-up
    assert acct.spent_epsilon() == 0.5


def test_approx_and_zcdp_costs_compose_like_dpcore_budget(url):
    db = L.open_ledger(url)
    acct = db.account("mixed", cap_epsilon=3.0, cap_delta=1e-6)
    costs = [B.pure(0.3), B.approx(0.4, 1e-8), B.zcdp(0.02), B.zcdp(0.03)]
    for i, cost in enumerate(costs):
        acct.charge(f"c{i}", cost=cost)
    reference = B.Ledger(cap=B.BudgetCap(epsilon=3.0, delta=1e-6))
    for i, cost in enumerate(costs):
        reference.charge(f"c{i}", cost)
    zdelta = 1e-6 - 1e-8  # the delta the cap leaves for converting the zCDP part
    want_eps, want_delta = reference.spent_approx(zdelta)
    assert acct.spent_epsilon() == pytest.approx(want_eps, rel=1e-12)
    assert acct.spent_delta() == pytest.approx(want_delta, rel=1e-12)
    # rhos add: 0.05 in total, so the account must be charged more than for a single 0.02
    assert want_eps > 0.3 + 0.4 + B.zcdp_to_approx_dp(0.03, zdelta)
    assert [e.cost for e in acct.entries()] == costs
    # the cap binds on the composed epsilon
    rest = 3.0 - acct.spent_epsilon()
    with pytest.raises(L.BudgetExceeded):
        acct.charge("over", cost=B.approx(rest + 0.01, 1e-9))
    acct.charge("under", cost=B.approx(rest - 0.01, 1e-9))
    # a pure-epsilon account refuses approximate / zCDP costs with a precise message (not BudgetExceeded)
    pure_acct = db.account("pure", cap_epsilon=5.0)
    for cost in (B.approx(0.1, 1e-9), B.zcdp(0.01)):
        with pytest.raises(DPInputError, match="pure epsilon-DP") as info:
            pure_acct.charge("x", cost=cost)
        assert not isinstance(info.value, L.BudgetExceeded)
    assert pure_acct.entries() == []
    assert pure_acct.spent_pure() == 0.0 and acct.spent_pure() is None
    # the delta cap binds too: deltas add (basic composition)
    small = db.account("delta-cap", cap_epsilon=10.0, cap_delta=1e-8)
    small.charge("a", cost=B.approx(0.1, 6e-9))
    with pytest.raises(L.BudgetExceeded, match="delta"):
        small.charge("b", cost=B.approx(0.1, 6e-9))
    small.charge("c", cost=B.approx(0.1, 4e-9))
    assert small.spent_delta() == pytest.approx(1e-8) and len(small.entries()) == 2
    with pytest.raises(L.BudgetExceeded):  # a zCDP cost needs some delta left to be converted
        small.charge("z", cost=B.zcdp(0.001))


def test_charge_argument_errors(tmp_path):
    acct = L.open_ledger(tmp_path / "l.db").account("ds", cap_epsilon=1.0)
    with pytest.raises(DPInputError, match="either epsilon"):
        acct.charge("x")
    with pytest.raises(DPInputError, match="either epsilon"):
        acct.charge("x", epsilon=0.1, cost=B.pure(0.1))
    with pytest.raises(DPInputError):
        acct.charge("x", epsilon=0.0)
    with pytest.raises(DPInputError):
        acct.charge("x", epsilon=float("nan"))
    with pytest.raises(DPInputError, match="label"):
        acct.charge("", epsilon=0.1)
    with pytest.raises(TypeError):
        acct.charge("x", cost=0.1)
    with pytest.raises(DPInputError, match="JSON"):
        acct.charge("x", epsilon=0.1, record={"bad": float("nan")})
    with pytest.raises(DPInputError, match="JSON"):
        acct.charge("x", epsilon=0.1, record={"bad": object()})
    assert acct.entries() == []
    db = L.open_ledger(tmp_path / "l.db")
    with pytest.raises(DPInputError):
        db.account("", cap_epsilon=1.0)
    with pytest.raises(TypeError):
        db.account(123, cap_epsilon=1.0)
    with pytest.raises(DPInputError):
        db.account("ds2", cap_epsilon=-1.0)
    with pytest.raises(DPInputError):
        db.account("ds2", cap_epsilon=float("inf"))


def test_urls_and_default_location(tmp_path, monkeypatch):
    monkeypatch.delenv(L.ENV_VAR, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert L.default_path() == tmp_path / "xdg" / "dpcore" / "ledger.db"
    db = L.open_ledger(None)
    assert db.backend == "sqlite" and (tmp_path / "xdg" / "dpcore" / "ledger.db").is_file()  # folders created
    assert REPO not in L.default_path().parents
    monkeypatch.setenv(L.ENV_VAR, f"sqlite:///{tmp_path}/env/ledger.db")
    L.open_ledger().account("ds", cap_epsilon=1.0).charge("c", epsilon=0.5)
    assert L.open_ledger(f"sqlite:///{tmp_path}/env/ledger.db").find_account("ds").spent_epsilon() == 0.5
    assert L.open_ledger(tmp_path / "env" / "ledger.db").find_account("ds").spent_epsilon() == 0.5  # a Path
    for bad in (
        "sqlite:///:memory:",
        "sqlite://",
        "mysql://x/y",
        "",
        "sqlite:relative.db",
        "abc",
        "1.0",
        str(tmp_path / "plain.db"),
    ):
        with pytest.raises(DPInputError):
            L.open_ledger(bad)
    assert not (tmp_path / "plain.db").exists() and not Path("abc").exists()  # no file made from a bad URL
    with pytest.raises(TypeError):
        L.open_ledger(42)
    with pytest.raises(DPInputError, match="cannot"):
        L.open_ledger("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")


def test_dataset_fingerprint_is_record_canonical(tmp_path):
    content = b"income,region\n1000,north\n2000,south\n"
    path = tmp_path / "data.csv"
    path.write_bytes(content)
    fp = L.dataset_fingerprint(content, "income")
    assert len(fp) == 64 and int(fp, 16) >= 0
    assert fp == L.dataset_fingerprint(path, "income") == L.dataset_fingerprint(str(path), "income")
    assert fp == L.dataset_fingerprint(bytearray(content), "income")
    # the same records: another released column, row order, line ends, quoting, trailing newline, spelling
    assert fp == L.dataset_fingerprint(content, "region") == L.dataset_fingerprint(content, "income", "region")
    assert fp == L.dataset_fingerprint(b'region,income\r\n"south","2,000"\r\nnorth,1000.0\r\n\r\n')
    assert fp == L.dataset_fingerprint(pd.DataFrame({"income": [2000, 1000], "region": ["south", "north"]}))
    # other records
    assert fp != L.dataset_fingerprint(content + b"3000,west\n", "income")
    assert fp != L.dataset_fingerprint(b"income,region\n1000,north\n2001,south\n")
    assert fp != L.dataset_fingerprint(b"income,area\n1000,north\n2000,south\n")
    assert fp != L.file_bytes_fingerprint(content, "income")  # the schema-2 key of the app (bytes) is not it
    with pytest.raises(DPInputError):
        L.dataset_fingerprint(b"", "income")
    with pytest.raises(DPInputError):
        L.dataset_fingerprint(content, "")
    with pytest.raises(DPInputError, match="no such file"):
        L.dataset_fingerprint(tmp_path / "missing.csv", "income")
    with pytest.raises(TypeError):
        L.dataset_fingerprint(123, "income")


def test_export_json_and_csv(url):
    db = L.open_ledger(url)
    acct = db.account("ds", cap_epsilon=2.0, label="label, with \"quotes\"")
    e = acct.charge("release: Gini", epsilon=0.5, record={"statistics": [{"statistic": "Gini"}]})
    acct.attach_result(e.id, {"records": [{"released": [0.42]}]})
    acct.charge("release: mean", epsilon=0.25)
    db.account("other", cap_epsilon=1.0).charge("x", epsilon=0.125)
    doc = json.loads(acct.export("json"))
    (a,) = doc["accounts"]
    # named by the keyed public id, never by the dataset id (a fingerprint of the confidential file)
    assert "dataset_id" not in a and a["public_id"] == acct.public_id
    assert a["spent_epsilon"] == 0.75 and a["cap_epsilon"] == 2.0
    assert [x["label"] for x in a["entries"]] == ["release: Gini", "release: mean"]
    assert a["entries"][0]["result"] == {"records": [{"released": [0.42]}]} and a["entries"][1]["result"] is None
    assert "password" not in json.dumps(doc)
    rows = list(csv.DictReader(io.StringIO(db.export("csv"))))
    assert len(rows) == 3 and rows[0]["account_label"] == "label, with \"quotes\""
    assert rows[0]["public_id"] == acct.public_id and "dataset_id" not in rows[0]
    assert json.loads(rows[0]["record"]) == {"statistics": [{"statistic": "Gini"}]}
    assert float(rows[1]["epsilon"]) == 0.25 and rows[1]["result"] == ""
    with pytest.raises(DPInputError):
        db.export("xml")


# ----------------------------------------------------------------------------------------------------
# Racing processes and crashes
# ----------------------------------------------------------------------------------------------------
RACE_WORKER = textwrap.dedent("""
    import os, sys, time
    from dpcore import ledger
    url, dataset, start_flag, tag = sys.argv[1:5]
    acct = ledger.open_ledger(url).account(dataset, cap_epsilon=3.0)
    print("READY", flush=True)
    while not os.path.exists(start_flag):
        time.sleep(0.001)
    for i in range(30):
        try:
            entry = acct.charge(f"{tag}-{i}", epsilon=0.125, record={"worker": tag, "i": i})
            print("OK", entry.id, flush=True)
        except ledger.BudgetExceeded:
            print("REFUSED", flush=True)
""")


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_two_processes_racing_30_charges_each_never_overspend(url, tmp_path):
    """Cap 3 = 24 charges of 0.125 (exact in binary): 60 attempts, exactly 24 accepted and recorded."""
    L.open_ledger(url).account("race", cap_epsilon=3.0, label="race")
    flag = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE_WORKER, url, "race", str(flag), tag],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
            cwd=str(tmp_path),
        )
        for tag in "AB"
    ]
    for p in procs:  # both have opened the ledger; then they start together
        assert p.stdout.readline().strip() == "READY", p.communicate()[1]
    flag.write_text("go")
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    lines = [line.split() for out, _ in outs for line in out.splitlines()]
    accepted = [int(parts[1]) for parts in lines if parts[0] == "OK"]
    assert len(lines) == 60
    acct = L.open_ledger(url).find_account("race")
    entries = acct.entries()
    assert acct.spent_epsilon() == 3.0  # never above the cap
    assert len(accepted) == 24 == len(entries)
    assert sorted(accepted) == [e.id for e in entries]  # every accepted charge is recorded, nothing else
    assert {(e.record["worker"], e.record["i"]) for e in entries} == {(e.label[0], int(e.label[2:])) for e in entries}


HOLD_WORKER = textwrap.dedent("""
    import os, sys, time
    from dpcore import ledger
    acct = ledger.open_ledger(sys.argv[1]).account("held", cap_epsilon=1.0)
    print("READY", flush=True)
    while not os.path.exists(sys.argv[2]):
        time.sleep(0.001)
    print("CHARGING", flush=True)
    acct.charge("waiting", epsilon=0.5)
    print("CHARGED", flush=True)
""")


def _wait_until_waiting_for_the_lock(proc: subprocess.Popen, url: str) -> None:
    """Return once the charge of ``proc`` waits for the lock (a condition, not a fixed sleep): PostgreSQL
    shows its session waiting on a lock; SQLite's busy handler sleeps between tries, the only sleep of a
    charge (``/proc/<pid>/wchan``; where /proc has no wchan, 1.5 s are given)."""
    deadline = time.monotonic() + 60
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as watcher:
            while not watcher.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()"
            ).fetchone()[0]:
                assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                time.sleep(0.01)
        return
    wchan = Path(f"/proc/{proc.pid}/wchan")
    if not wchan.exists():
        time.sleep(1.5)
        return
    while "sleep" not in wchan.read_text():
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.01)


def _append_chained_entry(conn, backend, dataset_id: str, label: str, epsilon: float) -> None:
    """What a charge appends, written by hand inside a transaction the test holds (hash chain included)."""
    ph = backend.ph
    acct = conn.execute(
        f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}", (dataset_id,)
    ).fetchone()
    last = conn.execute("SELECT entry_hash FROM dpcore_entries ORDER BY id DESC LIMIT 1").fetchone()
    prev = L.CHAIN_GENESIS if last is None else last[0]
    cost = json.dumps(B.pure(epsilon).to_dict())
    h = ledger_chain.entry_hash(
        prev,
        ledger_chain.public_id_of(backend.public_id_key, dataset_id),
        (acct[0], acct[1], acct[2], acct[3]),
        label,
        cost,
        epsilon,
        0.0,
        "t",
        "{}",
    )
    conn.execute(
        f"INSERT INTO dpcore_entries(dataset_id, label, cost, epsilon, delta, time, record, prev_hash, "
        f"entry_hash) VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph})",
        (dataset_id, label, cost, epsilon, 0.0, "t", "{}", prev, h),
    )


def test_charge_waits_for_the_account_lock(url, tmp_path):
    """While another transaction holds the account's lock, a charge waits (it neither fails nor skips
    the check) and then sees what the holder committed."""
    L.open_ledger(url).account("held", cap_epsilon=1.0)
    backend = L.open_ledger(url).database
    flag = tmp_path / "go"
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD_WORKER, url, str(flag)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_env(),
        cwd=str(tmp_path),
    )
    assert proc.stdout.readline().strip() == "READY", proc.communicate()[1]
    with backend.locked("held") as conn:
        if backend.name == "postgresql":
            conn.execute("SELECT 1 FROM dpcore_accounts WHERE dataset_id = %s FOR UPDATE", ("held",))
        flag.write_text("go")
        assert proc.stdout.readline().strip() == "CHARGING", proc.communicate()[1]
        _wait_until_waiting_for_the_lock(proc, url)
        assert proc.poll() is None, proc.communicate()  # still waiting for the lock
        # the lock holder charges first: the waiting charge must see it
        _append_chained_entry(conn, backend, "held", "holder", 0.75)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode != 0 and "BudgetExceeded" in err  # 0.75 + 0.5 > 1: refused after waiting
    assert "CHARGED" not in out
    assert L.open_ledger(url).find_account("held").spent_epsilon() == 0.75


RELEASE_LOOP = textwrap.dedent("""
    import os, sys, traceback
    import numpy as np
    from dpcore import ledger, planner, release
    # Imported once. For each line on stdin a child process is forked that opens the ledger and releases in
    # a loop until the test kills it with SIGKILL; then "DEAD <signal>" follows everything the child printed.
    for _ in sys.stdin:
        pid = os.fork()
        if pid == 0:
            try:
                acct = ledger.open_ledger(sys.argv[1]).account("crash", cap_epsilon=1000.0, label="crash test")
                x = np.random.default_rng(3).lognormal(10, 1, 500)
                stat = planner.CountAbove(x, 20000.0)
                print("CHILD", os.getpid(), flush=True)
                while True:
                    (rec,) = release.make_release([(stat, 0.5)], acct)
                    # one write(2) of a short line to a pipe is atomic: a kill lands before or after the whole
                    # line, never inside it (print's buffered writes could leave "REVEALED" without its values)
                    os.write(1, f"REVEALED {rec.ledger_entry_id} {rec.released[0]!r}\\n".encode())
            finally:
                traceback.print_exc()
                os._exit(1)  # never back into the parent's loop
        _, status = os.waitpid(pid, 0)
        print("DEAD", os.WTERMSIG(status) if os.WIFSIGNALED(status) else -1, flush=True)
""")


def test_kill_9_in_a_loop_of_releases_loses_no_revealed_release(url, tmp_path):
    """Every release the process revealed (printed) is in the ledger with its values; at most one charge
    per kill lacks its result (charged, never revealed). Each round's releasing process is forked from one
    that imported dpcore once (four kills, one interpreter start)."""
    revealed: dict[int, float] = {}
    kills = 0
    forker = subprocess.Popen(
        [sys.executable, "-c", RELEASE_LOOP, url],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**_env(), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"},
        cwd=str(tmp_path),
    )
    child = None

    def reveal(line: str) -> None:
        kind, entry_id, value = line.split()
        assert kind == "REVEALED", line
        revealed[int(entry_id)] = float(value)

    try:
        for round_ in range(4):
            forker.stdin.write("go\n")
            forker.stdin.flush()
            first = forker.stdout.readline().split()
            assert first[:1] == ["CHILD"], forker.communicate()[1]
            child = int(first[1])
            wanted = 3 + 2 * round_
            for _ in range(wanted):
                line = forker.stdout.readline()
                assert line, forker.communicate()[1]
                reveal(line)
            if round_ % 2:
                time.sleep(0.05 * round_)  # kill at varying points of the loop
            os.kill(child, signal.SIGKILL)
            kills += 1
            for line in iter(forker.stdout.readline, ""):  # anything printed before the kill landed
                if line.startswith("DEAD"):
                    assert int(line.split()[1]) == signal.SIGKILL, line
                    break
                reveal(line)
            else:
                pytest.fail(f"the forking process ended: {forker.communicate()[1]}")
            child = None
    finally:
        if child is not None:
            try:
                os.kill(child, signal.SIGKILL)
            except ProcessLookupError:
                pass
        forker.stdin.close()
        forker.wait(timeout=60)
    acct = L.open_ledger(url).find_account("crash")
    entries = {e.id: e for e in acct.entries()}
    for entry_id, value in revealed.items():
        assert entry_id in entries, f"revealed release {entry_id} is missing from the ledger"
        assert entries[entry_id].result["records"][0]["released"] == [value]
    lost = [e for e in entries.values() if e.result is None]
    assert len(lost) <= kills
    assert acct.spent_epsilon() == 0.5 * len(entries)  # every charge counts, revealed or not
    assert len(entries) >= len(revealed)


def test_postgres_ledger_survives_a_server_side_disconnect(pg_server, monkeypatch):
    """The pooled connection is replaced when the server dropped it (e.g. a restart)."""
    import psycopg

    url = _fresh_pg_database(pg_server)
    acct = L.open_ledger(url).account("ds", cap_epsilon=1.0)
    acct.charge("before", epsilon=0.25)
    with psycopg.connect(url, autocommit=True) as admin:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
    monkeypatch.setattr(postgres_backend, "PG_PING_AFTER_IDLE_S", 0.0)  # an idle connection is checked before use
    acct.charge("after", epsilon=0.25)
    assert acct.spent_epsilon() == 0.5


def test_unreachable_database_is_a_dpinputerror(tmp_path):
    path = tmp_path / "l.db"
    acct = L.open_ledger(f"sqlite:///{path}").account("ds", cap_epsilon=1.0)
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process holds the database for longer than the busy timeout
    try:
        from dpcore.ledger.backends import sqlite as ledger_module

        backend = acct.db.database
        backend._drop()
        old = ledger_module.BUSY_TIMEOUT_S
        ledger_module.BUSY_TIMEOUT_S = 0.2
        try:
            # the lock was never taken, so nothing was written: the message says so, not "may or may not"
            with pytest.raises(DPInputError, match="unavailable.*nothing was charged") as caught:
                acct.charge("blocked", epsilon=0.5)
            assert "may or may not" not in str(caught.value)
        finally:
            ledger_module.BUSY_TIMEOUT_S = old
            backend._drop()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert acct.spent_epsilon() == 0.0
    acct.charge("later", epsilon=0.5)
    assert acct.spent_epsilon() == 0.5


def test_threads_racing_on_shared_and_separate_ledger_objects(url):
    """Streamlit sessions are threads sharing one LedgerDB (or holding their own): no overspending."""
    import threading

    shared = L.open_ledger(url)
    shared.account("threads", cap_epsilon=2.0)
    accepted, errors = [], []

    def worker(db):
        acct = db.account("threads", cap_epsilon=2.0)
        for i in range(15):
            try:
                accepted.append(acct.charge(f"t{i}", epsilon=0.125).id)
            except L.BudgetExceeded:
                pass
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(repr(exc))

    threads = [threading.Thread(target=worker, args=(shared if k % 2 else L.open_ledger(url),)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not errors, errors
    acct = shared.find_account("threads")
    assert acct.spent_epsilon() == 2.0 and len(accepted) == 16
    assert sorted(accepted) == [e.id for e in acct.entries()]
