"""Faults of the ledger database, reproduced on real files and a real PostgreSQL server.

A ledger file that is empty, deleted, not SQLite, not a ledger or truncated is refused with a message
naming it (never taken as a new ledger with full caps); a read-only file, a held lock and a stopped
server give one-line LedgerError messages; a result that cannot reach the database is journaled and
replayed; the SQLite file is private (0600 in a 0700 folder).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sqlite3
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from dpcore import ledger as L
from dpcore.ledger import accounts as ledger_accounts
from dpcore.validation import DPInputError

REPO = Path(__file__).resolve().parents[1]


def _close(db: L.LedgerDB) -> None:
    """Close the pooled connection (the last one checkpoints the WAL into the file and removes it)."""
    db.database._drop()


def _full_ledger(path: Path) -> L.LedgerDB:
    db = L.open_ledger(f"sqlite:///{path}")
    acct = db.account("cps-2023", cap_epsilon=1.0, label="CPS 2023")
    acct.charge("everything", epsilon=1.0)
    assert acct.remaining_epsilon() == 0.0
    _close(db)
    return db


# ----------------------------------------------------------------------------------------------------
# What is not an intact ledger is refused, whatever create says
# ----------------------------------------------------------------------------------------------------
def test_a_ledger_truncated_to_0_bytes_is_refused_not_reopened_with_a_full_cap(tmp_path):
    path = tmp_path / "ledger.db"
    _full_ledger(path)
    path.write_bytes(b"")  # truncated to 0 bytes: the account and its history are gone from the file
    for create in (True, False):
        with pytest.raises(L.LedgerCorrupt, match=r"empty file \(0 bytes\)") as info:
            L.open_ledger(f"sqlite:///{path}", create=create)
        assert str(path) in str(info.value) and "backup" in str(info.value)
    assert path.stat().st_size == 0  # nothing was written into it
    with pytest.raises(L.LedgerExists):
        L.init_ledger(path)  # not even init re-initialises it: a person decides


def test_a_deleted_ledger_is_refused_with_create_false_and_noticed_by_an_open_process(tmp_path):
    path = tmp_path / "ledger.db"
    db = L.open_ledger(f"sqlite:///{path}")
    acct = db.account("cps-2023", cap_epsilon=1.0)
    acct.charge("first", epsilon=0.5)
    for name in os.listdir(tmp_path):
        os.unlink(tmp_path / name)
    with pytest.raises(L.LedgerMissing, match="ledger init") as info:
        L.open_ledger(f"sqlite:///{path}", create=False)
    assert str(path) in str(info.value)
    assert not path.exists()  # the refusal created nothing
    # a process that had it open would otherwise keep charging into the deleted file (lost with it)
    with pytest.raises(L.LedgerMissing, match="deleted or replaced"):
        acct.charge("second", epsilon=0.5)
    assert not path.exists()


def test_files_that_are_not_ledgers_are_refused_and_left_untouched(tmp_path):
    csv_file = tmp_path / "incomes.csv"
    csv_file.write_bytes(b"income,region\n1000,north\n")
    other_db = tmp_path / "other.sqlite"
    with sqlite3.connect(other_db) as conn:
        conn.execute("CREATE TABLE people (name TEXT)")
    empty_db = tmp_path / "empty.sqlite"
    with sqlite3.connect(empty_db) as conn:
        conn.execute("PRAGMA user_version = 7")  # a valid SQLite file without any table
    for path, match in (
        (csv_file, "not a SQLite database"),
        (other_db, "without the ledger's tables"),
        (empty_db, "without the ledger's tables"),
        (tmp_path, "is a folder"),
    ):
        before = path.read_bytes() if path.is_file() else None
        for create in (True, False):
            with pytest.raises(L.LedgerCorrupt, match=match) as info:
                L.open_ledger(path, create=create)
            assert str(path) in str(info.value)
        if before is not None:
            assert path.read_bytes() == before


def _ledger_with_pages(path: Path, n: int = 40) -> None:
    db = L.open_ledger(path)
    acct = db.account("ds", cap_epsilon=1000.0)
    for i in range(n):
        entry = acct.charge(f"c{i}", epsilon=0.5, record={"pad": "x" * 2000})
        acct.attach_result(entry.id, {"released": [i]})
    _close(db)


def test_a_truncated_or_damaged_file_is_refused_by_name(tmp_path):
    path = tmp_path / "ledger.db"
    _ledger_with_pages(path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # truncated mid-file (a copy cut short, a full disk)
    with pytest.raises(L.LedgerCorrupt, match="truncated") as info:
        L.open_ledger(path)
    assert str(path) in str(info.value)
    page = int.from_bytes(data[16:18], "big")
    damaged = bytearray(data)
    middle = len(data) // page // 2  # a page of the entries (the schema-3 tables moved them by a few pages)
    damaged[middle * page : middle * page + 200] = b"\xff" * 200  # a damaged page: found when it is read
    path.write_bytes(bytes(damaged))
    with pytest.raises(L.LedgerCorrupt, match="damaged") as info:
        L.open_ledger(path).find_account("ds").entries()
    assert str(path) in str(info.value) and "Traceback" not in str(info.value)


def test_sqlite_file_is_created_0600_in_a_0700_folder(tmp_path):
    path = tmp_path / "new" / "deeper" / "ledger.db"
    db = L.open_ledger(path)
    acct = db.account("ds", cap_epsilon=1.0)
    acct.charge("c", epsilon=0.5)  # the WAL and shared-memory files exist now
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for folder in (path.parent, path.parent.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for sibling in path.parent.iterdir():  # -wal and -shm take the database file's mode
        assert stat.S_IMODE(sibling.stat().st_mode) == 0o600, sibling
    # init on a new path too; no temporary file left beside it
    made = L.init_ledger(tmp_path / "init" / "l.db")
    assert stat.S_IMODE((tmp_path / "init" / "l.db").stat().st_mode) == 0o600
    _close(made)
    assert sorted(os.listdir(tmp_path / "init")) == ["l.db", "l.db.head"]  # the head file is 0600 too (above)


# ----------------------------------------------------------------------------------------------------
# A held lock: a note after about a second, then the charge goes ahead
# ----------------------------------------------------------------------------------------------------
def test_a_charge_waiting_for_the_sqlite_lock_says_so(tmp_path):
    path = tmp_path / "ledger.db"
    acct = L.open_ledger(path).account("ds", cap_epsilon=1.0)
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # another release holds the write lock
    notes: list[str] = []

    def on_wait(line: str) -> None:  # the holder finishes once the waiting charge has said it waits
        notes.append(line)
        holder.execute("ROLLBACK")

    try:
        entry = acct.charge("waited", epsilon=0.25, on_wait=on_wait)
    finally:
        holder.close()
    assert len(notes) == 1 and notes[0].startswith("waiting for the ledger lock held by another release")
    assert str(path) in notes[0]
    assert acct.entries()[-1].id == entry.id and acct.spent_epsilon() == 0.25


# ----------------------------------------------------------------------------------------------------
# A read-only ledger file (run as a non-root user: root writes through file modes)
# ----------------------------------------------------------------------------------------------------
READ_ONLY_SCRIPT = textwrap.dedent("""
    import json, os, stat, sys
    from dpcore import ledger as L
    from dpcore.ledger import accounts
    accounts.ATTACH_RETRY_DELAYS_S = (0.05, 0.05)
    from pathlib import Path
    path = Path(sys.argv[1])
    out = {}
    acct = L.open_ledger(path).account("ds", cap_epsilon=1.0)
    entry = acct.charge("release", epsilon=0.5)
    os.chmod(path, 0o444)                                    # the ledger file becomes read-only
    acct.db.database._drop()   # (an open connection keeps its write access: the next process meets the mode)
    link = acct.attach_result(entry.id, {"released": [1.5]})
    out["recorded"], out["journal"], out["message"] = link.recorded, link.journal, link.message
    out["journal_mode"] = oct(stat.S_IMODE(os.stat(link.journal).st_mode))
    try:
        acct.charge("another", epsilon=0.25)
    except L.LedgerUnavailable as exc:
        out["charge_error"] = str(exc)
    again = L.open_ledger(path, create=False)                # reading still works; the journal waits
    out["spent_read_only"] = again.find_account("ds").spent_epsilon()
    out["pending_read_only"] = len(again.pending_results())
    for name in os.listdir(path.parent):                     # writable again (as the message says: the
        if name.startswith(path.name + "-"):                 # -wal and -shm files made while it was
            os.chmod(path.parent / name, 0o600)              # read-only took its mode)
    os.chmod(path, 0o600)                                    # the next open replays the journal
    fresh = L.open_ledger(path, create=False)
    out["result_after"] = fresh.find_account("ds").entries()[0].result
    out["journal_left"] = os.path.exists(link.journal)
    out["verify"] = fresh.verify().ok
    print(json.dumps(out))
""")


def _run_without_override(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """Run ``script`` so that file modes bind: as root, without the capabilities that let root write
    through them (util-linux setpriv drops CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and CAP_FOWNER from
    the bounding set; the process stays the files' owner, so it can chmod them back)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip(
                "running as root without util-linux 'setpriv': a read-only file cannot be simulated "
                "(root writes through file modes)"
            )
        prefix = [setpriv, "--bounding-set=-dac_override,-dac_read_search,-fowner"]
    env = {**os.environ, "PYTHONPATH": str(REPO), "XDG_DATA_HOME": str(cwd / "xdg"), "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(
        [*prefix, sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=str(cwd),
        timeout=120,
    )


def test_a_read_only_ledger_file_journals_the_result_and_replays_it(tmp_path):
    proc = _run_without_override(READ_ONLY_SCRIPT, str(tmp_path / "ledger.db"), cwd=tmp_path)
    if proc.returncode != 0 and "setpriv" in proc.stderr:
        pytest.skip(f"setpriv cannot drop capabilities here: {proc.stderr.strip()[:200]}")
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["recorded"] is False and out["journal"] == str(tmp_path / "ledger.db.pending.jsonl")
    assert out["journal_mode"] == "0o600"
    assert "read-only" in out["message"] and "journaled at" in out["message"] and "entry 1" in out["message"]
    assert "read-only" in out["charge_error"] and str(tmp_path / "ledger.db") in out["charge_error"]
    assert out["spent_read_only"] == 0.5 and out["pending_read_only"] == 1
    assert out["result_after"] == {"released": [1.5]} and out["journal_left"] is False and out["verify"] is True


# ----------------------------------------------------------------------------------------------------
# PostgreSQL stopped between the charge and attach_result
# ----------------------------------------------------------------------------------------------------
class _Server:
    """A test PostgreSQL server that the test can stop and start again (same data, port and socket)."""

    def __init__(self, url: str) -> None:
        import psycopg
        from support.postgres import find_pg_bin

        self.url = url
        with psycopg.connect(url, autocommit=True) as conn:
            self.data = conn.execute("SHOW data_directory").fetchone()[0]
        opts = shlex.split(Path(self.data, "postmaster.opts").read_text())[1:]
        while "-D" in opts:
            i = opts.index("-D")
            del opts[i : i + 2]
        self.opts = " ".join(shlex.quote(o) for o in opts)
        self.bin = find_pg_bin()
        self.prefix = ["runuser", "-u", "nobody", "--"] if os.geteuid() == 0 else []

    def _ctl(self, *args: str) -> None:
        out = subprocess.run(
            [*self.prefix, str(self.bin / "pg_ctl"), "-D", self.data, *args],
            capture_output=True,
            text=True,
            cwd=str(Path(self.data).parent),
            timeout=120,
        )
        assert out.returncode == 0, out.stderr

    def stop(self) -> None:
        self._ctl("-m", "fast", "-w", "stop")

    def start(self) -> None:
        self._ctl("-l", str(Path(self.data).parent / "restart.log"), "-o", self.opts, "-w", "start")


@pytest.fixture(scope="module")
def stoppable_pg():
    from support.postgres import PostgresUnavailable, postgres_server

    try:
        with postgres_server() as url:
            yield _Server(url)
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL unavailable: {exc}")


def test_postgres_stopped_before_attach_result_journals_then_replays(stoppable_pg, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(ledger_accounts, "ATTACH_RETRY_DELAYS_S", (0.1, 0.2))
    url = stoppable_pg.url
    acct = L.open_ledger(url).account("pg-ds", cap_epsilon=1.0)
    entry = acct.charge("release", epsilon=0.5)
    stoppable_pg.stop()
    try:
        link = acct.attach_result(entry.id, {"out_dir": "/srv/out", "files": {"a.csv": "ab12"}})
        assert link.recorded is False and link.journal is not None
        journal = Path(link.journal)
        assert journal.is_relative_to(tmp_path / "xdg" / "dpcore") and "postgres" not in journal.name
        assert stat.S_IMODE(journal.stat().st_mode) == 0o600
        assert stat.S_IMODE(journal.parent.stat().st_mode) == 0o700
        assert "journaled at" in link.message and "next time" in link.message
        assert "PostgreSQL database postgres on 127.0.0.1" in link.message
        # the server is down: every use is one LedgerError naming the ledger, never a psycopg exception
        for action in (
            lambda: acct.charge("more", epsilon=0.25),
            lambda: L.open_ledger(url, create=False),
            acct.spent_epsilon,
        ):
            with pytest.raises(L.LedgerUnavailable, match="PostgreSQL") as info:
                action()
            assert "\n" not in str(info.value)
    finally:
        stoppable_pg.start()
    assert acct.db.pending_results() == [(str(journal), 1)]
    acct.charge("after the restart", epsilon=0.25)  # the same process's next charge replays the journal
    assert acct.entries()[0].result == {"out_dir": "/srv/out", "files": {"a.csv": "ab12"}}
    assert not journal.exists() and acct.db.pending_results() == []
    db = L.open_ledger(url, create=False)
    assert db.find_account("pg-ds").spent_epsilon() == 0.75 and db.verify().ok


def test_postgres_database_without_the_schema_is_missing_with_create_false(stoppable_pg):
    import psycopg

    with psycopg.connect(stoppable_pg.url, autocommit=True) as conn:
        conn.execute("CREATE DATABASE no_ledger_here")
    url = stoppable_pg.url.rsplit("/", 1)[0] + "/no_ledger_here"
    with pytest.raises(L.LedgerMissing, match="ledger init") as info:
        L.open_ledger(url, create=False)
    assert "no_ledger_here" in str(info.value)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE dpcore_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    with pytest.raises(L.LedgerCorrupt, match="lacks the tables"):
        L.open_ledger(url)  # part of a ledger: never completed into a new one
    with pytest.raises(L.LedgerExists):
        L.init_ledger(url)
    assert isinstance(L.LedgerMissing("x"), DPInputError)


def test_journal_replay_is_idempotent_and_keeps_what_the_ledger_refuses(tmp_path):
    path = tmp_path / "ledger.db"
    acct = L.open_ledger(path).account("ds", cap_epsilon=1.0)
    done = acct.charge("revealed", epsilon=0.25)
    acct.attach_result(done.id, {"released": [1.0]})
    pending = acct.charge("journaled", epsilon=0.25)
    journal = acct.db.database.journal_paths()[0]
    lines = [  # the first try may have committed before its error: its mark is then in the journal too
        {"v": 1, "dataset_id": "ds", "entry_id": done.id, "time": "t", "result": json.dumps({"released": [9.0]})},
        {"v": 1, "dataset_id": "ds", "entry_id": pending.id, "time": "t", "result": json.dumps({"released": [2.0]})},
        {"v": 1, "dataset_id": "another", "entry_id": pending.id, "time": "t", "result": "{}"},  # not this account's
    ]
    journal.write_text("".join(json.dumps(line) + "\n" for line in lines) + "not json\n")
    db = L.open_ledger(path, create=False)
    results = [e.result for e in db.find_account("ds").entries()]
    assert results == [{"released": [1.0]}, {"released": [2.0]}]  # recorded once; the first is not overwritten
    kept = journal.read_text().splitlines()
    assert kept == [json.dumps(lines[2]), "not json"]  # left for a person to look at
    assert db.pending_results() == [(str(journal), 2)] and any("journaled" in n for n in db.verify().notes)
