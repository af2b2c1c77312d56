"""The ledger's history is append-only and chained, on SQLite and a real PostgreSQL server.

Every table (the key table included) refuses UPDATE and DELETE (SQLite also INSERT OR REPLACE,
PostgreSQL also TRUNCATE); `verify` finds an edited, deleted or reordered entry, an edited cap or
result (tampering simulated with the triggers dropped, as someone with write access could);
schema-1 ledgers are chained on open; exports and `dpcore ledger show` never contain a dataset
fingerprint or the key; the command line's init / verify / show exit codes.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import threading
from pathlib import Path

import pytest
from support.postgres import fresh_database

from dpcore import budget as B
from dpcore import ledger as L
from dpcore import ledger_cli
from dpcore.ledger import chain as ledger_chain
from dpcore.ledger.backends import head as ledger_head
from dpcore.ledger.backends import postgres as postgres_backend
from dpcore.ledger.backends import schema as ledger_schema

ROOT = Path(__file__).resolve().parents[1]


def _fresh_pg_database(server_url: str) -> str:
    return fresh_database(server_url, "chain_test")


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/ledger.db"
    return _fresh_pg_database(request.getfixturevalue("pg_server"))


class _Raw:
    """Direct SQL on the ledger's database, as a user with write access (not through dpcore)."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.pg = url.startswith("postgresql")
        if self.pg:
            import psycopg

            self.conn = psycopg.connect(url, autocommit=True)
            self.errors: tuple = (psycopg.Error,)
        else:
            self.conn = sqlite3.connect(L.sqlite_path(url), isolation_level=None)
            self.errors = (sqlite3.DatabaseError,)

    def run(self, sql: str, params: tuple = ()) -> None:
        self.conn.execute(sql.replace("?", "%s") if self.pg else sql, params)

    def tamper(self, sql: str, params: tuple = ()) -> None:
        """Run ``sql`` with the append-only triggers out of the way (dropped / disabled), then restore them."""
        if self.pg:
            for table in ledger_schema.TABLES:
                self.run(f"ALTER TABLE {table} DISABLE TRIGGER USER")
            self.run(sql, params)
            for table in ledger_schema.TABLES:
                self.run(f"ALTER TABLE {table} ENABLE TRIGGER USER")
            return
        triggers = ledger_schema.sqlite_v2_triggers()
        for name in triggers:
            self.run(f"DROP TRIGGER {name}")
        self.run(sql, params)
        for create in triggers.values():
            self.run(create)

    def close(self) -> None:
        self.conn.close()


def _history(url: str) -> L.LedgerDB:
    db = L.open_ledger(url)
    a = db.account("ds-a", cap_epsilon=10.0, label="A")
    b = db.account("ds-b", cap_epsilon=5.0, cap_delta=1e-6, label="B")
    for i in range(3):
        entry = a.charge(f"a{i}", epsilon=0.5, record={"i": i})
        a.attach_result(entry.id, {"released": [float(i)]})
        b.charge(f"b{i}", cost=B.approx(0.25, 1e-9))
    return db


# ----------------------------------------------------------------------------------------------------
# Append-only by trigger, the key table included
# ----------------------------------------------------------------------------------------------------
def test_every_table_refuses_update_delete_and_replace_the_key_table_included(url):
    db = _history(url)
    key_before = db.database.public_id_key
    raw = _Raw(url)
    attempts = [
        "UPDATE dpcore_meta SET value = 'attacker' WHERE key = 'public_id_key'",  # unlinks every public id
        "DELETE FROM dpcore_meta",
        "UPDATE dpcore_accounts SET cap_epsilon = 100",
        "DELETE FROM dpcore_accounts",
        "UPDATE dpcore_entries SET epsilon = 0",
        "DELETE FROM dpcore_entries",
        "UPDATE dpcore_results SET result = '{}'",
        "DELETE FROM dpcore_results",
    ]
    if raw.pg:
        attempts += [f"TRUNCATE {t} CASCADE" for t in ledger_schema.TABLES]  # TRUNCATE fires no row trigger
    else:  # REPLACE deletes the old row without firing delete triggers (recursive_triggers is off)
        attempts += [
            "INSERT OR REPLACE INTO dpcore_meta(key, value) VALUES ('public_id_key', 'attacker')",
            "INSERT OR REPLACE INTO dpcore_accounts(dataset_id, label, cap_epsilon, cap_delta, created, "
            "software) VALUES ('ds-a', 'A', 100.0, 0.0, 'now', 'x')",
            "INSERT OR REPLACE INTO dpcore_results(entry_id, time, result, result_hash) "
            "SELECT entry_id, time, '{}', result_hash FROM dpcore_results",
        ]
    try:
        for sql in attempts:
            with pytest.raises(raw.errors):
                raw.run(sql)
    finally:
        raw.close()
    again = L.open_ledger(url, create=False)
    assert again.database.public_id_key == key_before
    assert again.find_account("ds-a").cap_epsilon == 10.0 and again.find_account("ds-a").spent_epsilon() == 1.5
    assert again.verify().ok, again.verify().problems


# ----------------------------------------------------------------------------------------------------
# The hash chain: verify finds tampering
# ----------------------------------------------------------------------------------------------------
TAMPERING = {
    "edited entry": (
        "UPDATE dpcore_entries SET epsilon = 0.01, cost = ? WHERE id = 3",
        (json.dumps(B.pure(0.01).to_dict()),),
        "entry 3 was edited",
    ),
    "deleted entry": ("DELETE FROM dpcore_entries WHERE id = 3", (), "entry 4 does not follow"),
    "deleted first entries": ("DELETE FROM dpcore_entries WHERE id <= 2", (), "does not start the chain"),
    "reordered entries": ("UPDATE dpcore_entries SET id = -id WHERE id IN (1, 3)", (), "does not follow"),
    "raised cap": ("UPDATE dpcore_accounts SET cap_epsilon = 1000 WHERE dataset_id = 'ds-a'", (), "was edited"),
    "edited result": (
        "UPDATE dpcore_results SET result = '{\"released\": [9.0]}' WHERE entry_id = 1",
        (),
        "result of entry 1 was edited",
    ),
}


@pytest.mark.parametrize("kind", sorted(TAMPERING))
def test_verify_finds_tampering_with_the_history(url, kind):
    sql, params, problem = TAMPERING[kind]
    db = _history(url)
    assert db.verify().ok
    raw = _Raw(url)
    try:
        if kind in ("deleted entry", "deleted first entries", "reordered entries"):
            raw.tamper("DELETE FROM dpcore_results")  # results reference entries (foreign key)
        raw.tamper(sql, params)
    finally:
        raw.close()
    report = L.open_ledger(url, create=False).verify()
    assert not report.ok and any(problem in p for p in report.problems), report.problems
    assert report.summary().startswith("ledger DAMAGED")


def test_verify_sees_entries_cut_from_the_end(url):
    _history(url)
    raw = _Raw(url)
    raw.tamper("DELETE FROM dpcore_entries WHERE id = 6")  # the newest entry (b2) has no result
    raw.close()
    report = L.open_ledger(url, create=False).verify()
    if url.startswith("sqlite"):  # SQLite's AUTOINCREMENT counter never goes back: a verdict
        assert any("entries after entry 5 were deleted" in p for p in report.problems), report.problems
    else:  # a PostgreSQL sequence also advances for a failed commit: a note
        assert any("sequence is at 6, after the last entry 5" in n for n in report.notes), report.notes


def test_an_edit_rehashed_with_dpcores_own_functions_passes_verify_and_only_a_kept_head_sees_it(tmp_path):
    """What docs/ledger.md promises, and no more: the chain's hashes are unkeyed to whoever holds the file (the key
    of the public ids is in it), so someone with write access who edits an entry, recomputes every later hash
    with dpcore's own functions and rewrites the head file beside the ledger gets a ledger that ``verify``
    passes. Only a chain head kept elsewhere after each release shows the rewrite."""
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = _history(url)
    kept_head = db.verify().head
    raw = _Raw(url)
    conn = raw.conn
    key = dict(conn.execute("SELECT key, value FROM dpcore_meta").fetchall())["public_id_key"]
    accounts = {
        r[0]: (r[1], float(r[2]), float(r[3]), r[4])
        for r in conn.execute("SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts")
    }
    rows = conn.execute(
        "SELECT id, dataset_id, label, cost, epsilon, delta, time, record FROM dpcore_entries ORDER BY id"
    ).fetchall()
    statements, prev, hashes = [], L.CHAIN_GENESIS, {}
    for r in rows:
        label, cost, epsilon = r[2], r[3], r[4]
        if r[0] == 3:  # the rewrite: a 0.5 charge made to look like 0.01
            cost, epsilon = json.dumps(B.pure(0.01).to_dict()), 0.01
        h = ledger_chain.entry_hash(
            prev, ledger_chain.public_id_of(key, r[1]), accounts[r[1]], label, cost, epsilon, r[5], r[6], r[7]
        )
        statements.append(
            (
                "UPDATE dpcore_entries SET cost = ?, epsilon = ?, prev_hash = ?, entry_hash = ? WHERE id = ?",
                (cost, epsilon, prev, h, r[0]),
            )
        )
        prev = hashes[r[0]] = h
    for r in conn.execute("SELECT entry_id, time, result FROM dpcore_results").fetchall():
        statements.append(
            (
                "UPDATE dpcore_results SET result_hash = ? WHERE entry_id = ?",
                (ledger_chain.result_hash(hashes[r[0]], r[1], r[2]), r[0]),
            )
        )
    try:
        for sql, params in statements:
            raw.tamper(sql, params)
    finally:
        raw.close()
    # the head file beside the ledger is written by whoever writes the ledger: rewritten to match, with dpcore's
    # own functions, it cannot tell either
    db_path = tmp_path / "ledger.db"
    head_path = db_path.with_name(db_path.name + ledger_head.HEAD_SUFFIX)
    with sqlite3.connect(db_path) as conn:
        history = ledger_head.history_of(conn)
    assert history is not None and ledger_head.read_head(head_path) != history  # the kept-beside head saw it
    head_path.unlink()
    ledger_head.write_head(head_path, history)
    again = L.open_ledger(url, create=False)
    report = again.verify()
    assert report.ok, report.problems  # the chain and the head file beside it cannot tell
    assert again.find_account("ds-a").spent_epsilon() == pytest.approx(1.01)  # was 1.5
    assert report.head != kept_head  # the head kept elsewhere does
    text = " ".join((ROOT / "docs" / "ledger.md").read_text().split())
    assert "recomputes every later hash with dpcore's own functions" in text


def test_verify_finds_dropped_triggers(url):
    _history(url)
    raw = _Raw(url)
    if raw.pg:
        raw.run("DROP TRIGGER dpcore_meta_append_only ON dpcore_meta")
    else:
        raw.run("DROP TRIGGER dpcore_meta_no_update")
    raw.close()
    report = L.open_ledger(url, create=False).verify()
    assert any("triggers missing" in p and "dpcore_meta" in p for p in report.problems), report.problems


# ----------------------------------------------------------------------------------------------------
# Schema 1 (before the chain) is migrated on open
# ----------------------------------------------------------------------------------------------------
_SQLITE_V1_TRIGGER_SQL = [
    "CREATE TRIGGER dpcore_entries_no_update BEFORE UPDATE ON dpcore_entries BEGIN SELECT RAISE(ABORT, 'x'); END",
    "CREATE TRIGGER dpcore_entries_no_delete BEFORE DELETE ON dpcore_entries BEGIN SELECT RAISE(ABORT, 'x'); END",
    "CREATE TRIGGER dpcore_results_no_update BEFORE UPDATE ON dpcore_results BEGIN SELECT RAISE(ABORT, 'x'); END",
    "CREATE TRIGGER dpcore_results_no_delete BEFORE DELETE ON dpcore_results BEGIN SELECT RAISE(ABORT, 'x'); END",
    "CREATE TRIGGER dpcore_accounts_no_delete BEFORE DELETE ON dpcore_accounts BEGIN SELECT RAISE(ABORT, 'x'); END",
    "CREATE TRIGGER dpcore_accounts_cap_fixed BEFORE UPDATE ON dpcore_accounts BEGIN SELECT RAISE(ABORT, 'x'); END",
]
_PG_V1_TRIGGER_SQL = [
    """CREATE OR REPLACE FUNCTION dpcore_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
       BEGIN RAISE EXCEPTION 'refused'; END $$""",
    "CREATE TRIGGER dpcore_entries_append_only BEFORE UPDATE OR DELETE ON dpcore_entries FOR EACH ROW "
    "EXECUTE FUNCTION dpcore_refuse_change()",
    "CREATE TRIGGER dpcore_results_append_only BEFORE UPDATE OR DELETE ON dpcore_results FOR EACH ROW "
    "EXECUTE FUNCTION dpcore_refuse_change()",
    "CREATE TRIGGER dpcore_accounts_fixed BEFORE UPDATE OR DELETE ON dpcore_accounts FOR EACH ROW "
    "EXECUTE FUNCTION dpcore_refuse_change()",
]


def _make_schema_1_ledger(url: str) -> None:
    """A ledger as dpcore wrote it before the hash chain (schema 1): tables, triggers, two accounts, entries."""
    if url.startswith("postgresql"):
        import psycopg

        conn = psycopg.connect(url, autocommit=True)
        statements, ph = [*ledger_schema.PG_V1, *_PG_V1_TRIGGER_SQL], "%s"
    else:
        path = L.sqlite_path(url)
        path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        statements, ph = [*ledger_schema.split_sql(ledger_schema.SQLITE_V1), *_SQLITE_V1_TRIGGER_SQL], "?"
    for sql in statements:
        conn.execute(sql)
    for key, value in (("schema_version", "1"), ("public_id_key", "ab" * 32)):
        conn.execute(f"INSERT INTO dpcore_meta(key, value) VALUES ({ph}, {ph})", (key, value))
    for ds, cap in (("old-a", 4.0), ("old-b", 2.0)):
        conn.execute(
            f"INSERT INTO dpcore_accounts VALUES ({ph}, {ph}, {ph}, 0.0, '2026-01-01T00:00:00+00:00', 'dpcore 0.1')",
            (ds, ds.upper(), cap),
        )
    for i, ds in enumerate(["old-a", "old-b", "old-a"]):
        conn.execute(
            f"INSERT INTO dpcore_entries(dataset_id, label, cost, epsilon, delta, time, record) VALUES "
            f"({ph}, {ph}, {ph}, 0.5, 0.0, {ph}, '{{}}')",
            (ds, f"e{i}", json.dumps(B.pure(0.5).to_dict()), f"2026-01-0{i + 2}T00:00:00+00:00"),
        )
    conn.execute(f"INSERT INTO dpcore_results(entry_id, time, result) VALUES (1, 't', {ph})", ('{"released": [1.0]}',))
    conn.close()


def test_a_schema_1_ledger_is_chained_once_on_open(url):
    _make_schema_1_ledger(url)
    if url.startswith("sqlite"):
        os.chmod(L.sqlite_path(url), 0o644)  # schema 1 took the umask's mode: world-readable
    db = L.open_ledger(url, create=False)
    if url.startswith("sqlite"):
        assert oct(L.sqlite_path(url).stat().st_mode & 0o777) == "0o600"  # made private at the upgrade
    report = db.verify()
    assert report.ok, report.problems
    assert report.schema_version == L.SCHEMA_VERSION == 4 and report.entries == 3 and report.results == 1
    assert db.population("old-a").dataset_id == "old-a"  # every old account became a population (migration 2 to 3)
    assert any("3 entries chained when the ledger was upgraded" in n for n in report.notes), report.notes
    a = db.find_account("old-a")
    assert a.spent_epsilon() == 1.0 and a.cap_epsilon == 4.0 and a.entries()[0].result == {"released": [1.0]}
    assert [e.label for e in a.entries()] == ["e0", "e2"] and all(e.entry_hash for e in a.entries())
    a.charge("after the upgrade", epsilon=0.5)  # appended to the migrated chain
    again = L.open_ledger(url, create=False)  # no second migration
    assert again.verify().ok and again.verify().head == a.entries()[-1].entry_hash
    raw = _Raw(url)
    try:
        with pytest.raises(raw.errors):  # the key table is append-only from now on
            raw.run("UPDATE dpcore_meta SET value = 'x' WHERE key = 'public_id_key'")
    finally:
        raw.close()


# ----------------------------------------------------------------------------------------------------
# Waiting for a PostgreSQL row lock says so
# ----------------------------------------------------------------------------------------------------
def test_a_charge_waiting_for_the_postgres_account_lock_says_so(pg_server):
    import psycopg

    url = _fresh_pg_database(pg_server)
    acct = L.open_ledger(url).account("held", cap_epsilon=1.0)
    holder = psycopg.connect(url)
    holder.execute("SELECT 1 FROM dpcore_accounts WHERE dataset_id = 'held' FOR UPDATE")  # another release
    notes: list[str] = []
    lock = threading.Lock()

    def on_wait(line: str) -> None:  # the holder commits once the waiting charge has said it waits
        with lock:
            notes.append(line)
            holder.commit()

    try:
        entry = acct.charge("waited", epsilon=0.25, on_wait=on_wait)
    finally:
        holder.close()
    assert len(notes) == 1 and notes[0].startswith("waiting for the ledger lock held by another release")
    assert acct.entries()[-1].id == entry.id and L.open_ledger(url).verify().ok


def test_a_postgres_lock_held_too_long_is_a_ledger_error_not_an_endless_wait(pg_server, monkeypatch):
    import psycopg

    url = _fresh_pg_database(pg_server)
    acct = L.open_ledger(url).account("stuck", cap_epsilon=1.0)
    monkeypatch.setattr(postgres_backend, "BUSY_TIMEOUT_S", 0.3)  # 60 s in use; the same code path, shorter
    holder = psycopg.connect(url)
    holder.execute("SELECT 1 FROM dpcore_accounts WHERE dataset_id = 'stuck' FOR UPDATE")
    try:
        with pytest.raises(L.LedgerUnavailable, match="stayed locked") as info:
            acct.charge("blocked", epsilon=0.25)  # no on_wait: waited for ever before
        assert "PostgreSQL database" in str(info.value)
    finally:
        holder.close()
    assert acct.entries() == []
    acct.charge("later", epsilon=0.25)


# ----------------------------------------------------------------------------------------------------
# Exports and `dpcore ledger show` never contain a fingerprint or the key
# ----------------------------------------------------------------------------------------------------
def test_exports_and_show_never_contain_the_fingerprint_or_the_key(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/ledger.db"
    fingerprint = L.dataset_fingerprint(b"income\n1000\n2000\n", "income")
    db = L.open_ledger(url)
    acct = db.account(fingerprint, cap_epsilon=2.0, label="survey 2026")
    entry = acct.charge("release: Gini", epsilon=0.5, record={"dataset": {"account": acct.public_id}})
    acct.attach_result(entry.id, {"records": [{"released": [0.4]}]})
    texts = [db.export("json"), db.export("csv"), acct.export("json"), acct.export("csv")]
    assert ledger_cli.main(["show", url]) == 0
    texts.append(capsys.readouterr().out)
    key = db.database.public_id_key
    for text in texts:
        assert fingerprint not in text and fingerprint[:12] not in text and key not in text
        assert acct.public_id in text
    assert "survey 2026" in texts[-1] and "spent ε = 0.5 of ε = 2" in texts[-1]
    with pytest.raises(L.BudgetExceeded) as info:  # messages reach screens and logs: the public id, not the hash
        acct.charge("too much", epsilon=5.0)
    unlabelled = db.account(L.dataset_fingerprint(b"income\n1\n", "income"), cap_epsilon=1.0)
    with pytest.raises(L.BudgetExceeded) as info2:
        unlabelled.charge("too much", epsilon=5.0)
    for message in (str(info.value), str(info2.value)):
        assert fingerprint[:12] not in message and unlabelled.dataset_id[:12] not in message
    assert acct.public_id[:12] in str(info.value) and unlabelled.public_id[:12] in str(info2.value)


# ----------------------------------------------------------------------------------------------------
# python -m dpcore ledger init / verify / show
# ----------------------------------------------------------------------------------------------------
def test_ledger_command_line_init_verify_show(tmp_path, capsys):
    url = f"sqlite:///{tmp_path}/cli/ledger.db"
    assert ledger_cli.main(["verify", url]) == 2
    assert "ledger init" in capsys.readouterr().err  # no ledger: says how to create one, creates nothing
    assert not (tmp_path / "cli").exists()
    assert ledger_cli.main(["init", url]) == 0 and "created a new, empty ledger" in capsys.readouterr().out
    assert ledger_cli.main(["init", url]) == 2 and "never re-initialises" in capsys.readouterr().err
    L.open_ledger(url, create=False).account("ds", cap_epsilon=1.0).charge("c", epsilon=0.25)
    assert ledger_cli.main(["verify", url]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ledger OK:") and "1 entry" in out and len(out.strip().splitlines()) == 1
    backup = tmp_path / "backup.db"
    assert ledger_cli.main(["backup", str(backup), "--ledger", url]) == 0 and "ledger OK" in capsys.readouterr().out
    assert oct(backup.stat().st_mode & 0o777) == "0o600"
    raw = _Raw(url)
    raw.tamper("UPDATE dpcore_entries SET epsilon = 0.0001")
    raw.close()
    assert ledger_cli.main(["verify", url]) == 2
    err = capsys.readouterr().err
    assert err.startswith("dpcore: error: ledger DAMAGED") and "entry 1 was edited" in err
    (tmp_path / "zero.db").write_bytes(b"")
    assert ledger_cli.main(["show", f"sqlite:///{tmp_path}/zero.db"]) == 2
    err = capsys.readouterr().err
    assert "0 bytes" in err and "zero.db" in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert ledger_cli.main(["verify", "mysql://x/y"]) == 2 and "unsupported ledger URL" in capsys.readouterr().err
    shutil.rmtree(tmp_path / "cli")
