"""A ledger's history lives in its file, and a release refuses a ledger that lost some of it or was damaged.

* Every dpcore command ends with ``os._exit`` (no SQLite checkpoint at exit): a ``.db`` copied without its ``-wal``
  file after each kind of command (real subprocesses: init, population add, release, backup) must hold every
  account, population, entry, result and source.
* A SQLite ledger's head file (``<ledger>.head``, written after every commit) makes ``verify``, a release and
  every write refuse a database that holds less history than it once did (an older copy put back, a lost
  ``-wal``); the head file may lag the database (a crash between the commit and its update) without an alarm.
* A release opens the ledger with ``verify``'s checks (SQLite and PostgreSQL): one damaged entry refuses it
  before any charge, with ``verify``'s own summary.
* A fault at the commit is exact about the charge: a full disk that stopped it says that nothing was charged.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.postgres import fresh_database

from dpcore import cli, ledger_cli
from dpcore import ledger as L
from dpcore.ledger.backends import schema as ledger_schema

REPO = Path(__file__).resolve().parents[1]
POPULATION = "people"
PLAN = """version = 1
population = "people"
income = "earnings"
cap_epsilon = 5.0

[[statistics]]
kind = "mean"
epsilon = 0.5
lower = 0
upper = 500000
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    base = tmp_path_factory.mktemp("history")
    rng = np.random.default_rng(37)
    pd.DataFrame({"earnings": np.round(rng.lognormal(10.8, 0.8, 300))}).to_parquet(base / "data.parquet", index=False)
    (base / "plan.toml").write_text(PLAN)
    return base


def _dpcore(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    """``python -m dpcore ...`` in a child process: it ends with os._exit, as every command does."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(cwd / "xdg"), "OPENBLAS_NUM_THREADS": "1"}
    env.pop(L.ENV_VAR, None)
    return subprocess.run(
        [sys.executable, "-m", "dpcore", *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env, timeout=300
    )


def _holdings(path: Path) -> dict:
    """What the ledger file at ``path`` holds, read through dpcore (``verify`` must find it intact)."""
    db = L.open_ledger(f"sqlite:///{path}", create=False)
    report = db.verify()
    assert report.ok, report.problems
    populations = db.populations()
    return {
        "accounts": report.accounts,
        "entries": report.entries,
        "results": report.results,
        "head": report.head,
        "populations": [p.population for p in populations],
        "sources": sum(db.source_count(p.dataset_id) for p in populations),
    }


def _copies(ledger: Path, where: Path) -> tuple[Path, Path]:
    """The .db alone, and the .db with its -wal file (never the -shm: it is rebuilt), each in a folder of its own."""
    alone, with_wal = where / "alone", where / "with_wal"
    for folder in (alone, with_wal):
        folder.mkdir(parents=True)
        shutil.copy2(ledger, folder / ledger.name)
    wal = ledger.with_name(ledger.name + "-wal")
    if wal.exists():
        shutil.copy2(wal, with_wal / wal.name)
    return alone / ledger.name, with_wal / ledger.name


def test_a_db_copied_without_its_wal_after_each_command_holds_every_entry(files, tmp_path):
    path = tmp_path / "ledger.db"
    url = f"sqlite:///{path}"
    steps = [
        ("init", ("ledger", "init", url), {"accounts": 0, "entries": 0}),
        (
            "population add",
            ("ledger", "population", "add", POPULATION, "--cap-epsilon", 5, "--ledger", url),
            {"accounts": 1, "populations": [POPULATION]},
        ),
        (
            "release",
            (
                "release",
                files / "plan.toml",
                "--data",
                files / "data.parquet",
                "--out",
                tmp_path / "out",
                "--ledger",
                url,
            ),
            {"entries": 1, "results": 1, "sources": 1},
        ),
        ("backup", ("ledger", "backup", tmp_path / "backup.db", "--ledger", url), {"entries": 1, "results": 1}),
    ]
    for step, (name, args, expected) in enumerate(steps):
        proc = _dpcore(*args, cwd=tmp_path)
        assert proc.returncode == 0, (name, proc.stderr)
        alone, with_wal = _copies(path, tmp_path / f"copies-{step}")  # before anything here opens the ledger
        held = _holdings(path)
        assert {k: held[k] for k in expected} == expected, (name, held)
        assert _holdings(alone) == held, f"the .db copied without its -wal after '{name}' lost history"
        assert _holdings(with_wal) == held, name
    backup_alone, _ = _copies(tmp_path / "backup.db", tmp_path / "backup-copies")
    assert _holdings(backup_alone) == held  # the backup is a whole file too


def _release(files: Path, url: str, out: Path, capsys) -> tuple[int, str]:
    code = cli.main(
        ["release", str(files / "plan.toml"), "--data", str(files / "data.parquet"), "--out", str(out)]
        + ["--ledger", url, "--quiet"]
    )
    return code, capsys.readouterr().err


def _verify(url: str, capsys) -> tuple[int, str, str]:
    code = ledger_cli.main(["verify", url])
    out, err = capsys.readouterr()
    return code, out, err


def _entries(path: Path) -> int:
    with sqlite3.connect(path) as conn:
        return conn.execute("SELECT COUNT(*) FROM dpcore_entries").fetchone()[0]


def test_a_ledger_put_back_from_an_older_copy_is_refused_by_verify_release_and_writes(files, tmp_path, capsys):
    """The audit's case: the history left in a lost -wal file, or an older copy put back. With the head file beside
    the ledger, verify, a release and re-registering the population all refuse it; nothing is charged."""
    path = tmp_path / "ledger.db"
    url = f"sqlite:///{path}"
    L.init_ledger(url)
    older = tmp_path / "older.db"
    shutil.copy2(path, older)  # a copy of the ledger holding no population yet
    assert ledger_cli.main(["population", "add", POPULATION, "--cap-epsilon", "5", "--ledger", url]) == 0
    assert _release(files, url, tmp_path / "o1", capsys)[0] == 0
    assert _release(files, url, tmp_path / "o2", capsys)[0] == 0
    capsys.readouterr()
    head_before = path.with_name("ledger.db.head").read_text()
    # put the older copy back, as a restore or a copy without the -wal file does
    shutil.copy2(older, path)
    for suffix in ("-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)

    code, out, err = _verify(url, capsys)
    assert code == 2 and "ledger DAMAGED" in err and "history lost" in err, (out, err)
    assert "2 entries up to entry 2" in err and "it lacks 2 entries, 2 results, 1 account, 1 population" in err
    summary = next(line for line in err.splitlines() if "ledger DAMAGED" in line).removeprefix("dpcore: error: ")

    code, err = _release(files, url, tmp_path / "o3", capsys)
    line = next(line for line in err.splitlines() if line.startswith("dpcore: error:"))
    assert code == 2 and summary in line and "Nothing was charged" in line, err
    assert not (tmp_path / "o3").exists()
    # re-registering the population would open a fresh budget for the same people: refused too
    assert ledger_cli.main(["population", "add", POPULATION, "--cap-epsilon", "5", "--ledger", url]) == 2
    assert "history lost" in capsys.readouterr().err
    assert _entries(path) == 0 and path.with_name("ledger.db.head").read_text() == head_before


def test_a_head_file_that_lags_one_commit_is_no_alarm(tmp_path):
    """The head file is written after the commit: a crash in between leaves it one commit behind the database,
    which is no sign of lost history (verify and releases go on) and is caught up by the next commit. A
    transaction that does not commit (refused over the cap) never moves it."""
    path = tmp_path / "ledger.db"
    db = L.open_ledger(path)
    acct = db.account("ds", cap_epsilon=1.0)
    acct.charge("first", epsilon=0.25)
    head = path.with_name("ledger.db.head")
    after_first = head.read_text()
    acct.charge("second", epsilon=0.25)
    head.write_text(after_first)  # the head file as a crash before its update leaves it
    assert L.open_ledger(path, create=False, verify=True).verify().ok
    with pytest.raises(L.BudgetExceeded):
        acct.charge("over the cap", epsilon=0.75)
    assert head.read_text() == after_first
    acct.charge("third", epsilon=0.25)
    assert '"entries": 3' in head.read_text() and db.verify().ok


def test_init_refuses_where_the_head_file_of_a_lost_ledger_remains(tmp_path, capsys):
    path = tmp_path / "ledger.db"
    db = L.open_ledger(path)
    db.account("ds", cap_epsilon=1.0).charge("spent", epsilon=0.5)
    del db
    for suffix in ("", "-wal", "-shm"):
        path.with_name(path.name + suffix).unlink(missing_ok=True)  # the ledger is gone; its head file is not
    assert path.with_name("ledger.db.head").exists()
    assert ledger_cli.main(["init", f"sqlite:///{path}"]) == 2
    err = capsys.readouterr().err
    assert "head file" in err and "deleted or moved" in err
    with pytest.raises(L.LedgerMissing, match="head file"):
        L.open_ledger(path)  # the library's create=True does not bring it back empty either
    assert not path.exists()


def test_an_unreadable_head_file_is_a_problem_not_a_fresh_start(tmp_path):
    path = tmp_path / "ledger.db"
    L.open_ledger(path).account("ds", cap_epsilon=1.0).charge("spent", epsilon=0.5)
    path.with_name("ledger.db.head").write_text("not json")
    report = L.open_ledger(path, create=False).verify()
    assert not report.ok and "cannot be read" in report.problems[0]
    with pytest.raises(L.LedgerCorrupt, match="head file"):
        L.open_ledger(path, create=False).account("ds", cap_epsilon=1.0).charge("more", epsilon=0.1)


# ----------------------------------------------------------------------------------------------------
# A release opens the ledger with verify's checks (SQLite and PostgreSQL)
# ----------------------------------------------------------------------------------------------------
@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.db"
    return fresh_database(request.getfixturevalue("pg_server"), "history_test")


def _damage_first_entry(url: str) -> None:
    """One entry's record JSON cut short, with the append-only triggers out of the way (someone with write access)."""
    if url.startswith("postgresql"):
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("ALTER TABLE dpcore_entries DISABLE TRIGGER USER")
            conn.execute("UPDATE dpcore_entries SET record = left(record, 20) WHERE id = 1")
            conn.execute("ALTER TABLE dpcore_entries ENABLE TRIGGER USER")
        return
    conn = sqlite3.connect(L.sqlite_path(url), isolation_level=None)
    try:
        conn.execute("DROP TRIGGER dpcore_entries_no_update")
        conn.execute("UPDATE dpcore_entries SET record = substr(record, 1, 20) WHERE id = 1")
        conn.execute(ledger_schema.sqlite_v2_triggers()["dpcore_entries_no_update"])
    finally:
        conn.close()


def test_a_release_refuses_a_damaged_entry_before_the_charge_with_verifys_message(files, url, tmp_path, capsys):
    L.init_ledger(url)
    assert ledger_cli.main(["population", "add", POPULATION, "--cap-epsilon", "5", "--ledger", url]) == 0
    assert _release(files, url, tmp_path / "o1", capsys)[0] == 0
    _damage_first_entry(url)
    code, _, err = _verify(url, capsys)
    assert code == 2 and "entry 1 was edited" in err
    summary = next(line for line in err.splitlines() if "ledger DAMAGED" in line).removeprefix("dpcore: error: ")
    code, err = _release(files, url, tmp_path / "o2", capsys)
    line = next(line for line in err.splitlines() if line.startswith("dpcore: error:"))
    assert code == 2 and summary in line and "Nothing was charged" in line, err
    with pytest.raises(L.LedgerCorrupt, match="entry 1 was edited"):
        L.open_ledger(url, create=False, verify=True)
    assert ledger_cli.main(["show", url]) == 2  # one line naming the entry, not a JSON traceback
    assert "the record of entry 1 cannot be read" in capsys.readouterr().err
    assert L.open_ledger(url, create=False).population(POPULATION).spent_epsilon() == 0.5  # one charge, not two


def test_a_charge_through_the_ledger_init_returns_verifies(url):
    """init_ledger's object had not read the key: its charges were hashed under an empty key's public id, so the
    first release of ``--init-ledger`` was "edited" for verify (and refused by the next release). Entries written
    that way stay readable: verify notes them, their content being intact."""
    db = L.init_ledger(url)
    acct = db.account("ds", cap_epsilon=1.0)
    acct.charge("first", epsilon=0.25)
    report = db.verify()
    assert report.ok and not report.notes, (report.problems, report.notes)
    assert acct.public_id == L.open_ledger(url, create=False).find_account("ds").public_id
    db.database.public_id_key = ""  # as that object charged
    acct.charge("hashed under the empty key", epsilon=0.25)
    report = L.open_ledger(url, create=False).verify()
    assert report.ok and any("entry 2 hashed under an empty key" in n for n in report.notes), report


# ----------------------------------------------------------------------------------------------------
# A full disk: exact about the charge
# ----------------------------------------------------------------------------------------------------
def test_a_full_disk_at_the_commit_says_that_nothing_was_charged(tmp_path):
    """The ledger on a tiny tmpfs filled up: the charge's pages do not fit into the WAL at its commit. The ledger is
    read again and the message says the charge was not recorded (it said "may or may not have been recorded")."""
    where = tmp_path / "small"
    where.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(where)], capture_output=True, text=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.strip()[:200]}")
    try:
        db = L.open_ledger(where / "ledger.db")
        acct = db.account("ds", cap_epsilon=1.0)
        acct.charge("fits", epsilon=0.25)
        with open(where / "filler", "wb", buffering=0) as filler:
            with pytest.raises(OSError):
                while True:
                    filler.write(b"\0" * 4096)
        with pytest.raises(L.LedgerUnavailable, match="disk is full") as caught:
            acct.charge("does not fit", epsilon=0.25, record={"big": "x" * 200_000})
        text = str(caught.value)
        assert "nothing was charged" in text and "may or may not" not in text, text
        assert acct.spent_epsilon() == 0.25 and db.verify().ok
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
