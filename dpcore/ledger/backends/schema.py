"""The ledger's schema: its version, tables and DDL (SQLite and PostgreSQL), and the migrations from older versions.

1: tables and append-only triggers; 2: hash chain (prev_hash, entry_hash, result_hash), every table append-only
(the key table included), insert guards; 3: populations and sources; 4: the record fingerprint versions the ledger
computes (``dpcore_meta.record_fingerprints``; dpcore before it refuses the ledger, so a source is never looked up
by a version the ledger does not hold). A new ledger is created at schema 1 and migrated, so a new and an upgraded
ledger are built by the same statements. The meta keys the migrations write (``migrated_1_to_2``, ...) stay in the
ledger's key table: ``verify`` reads them.
"""

from __future__ import annotations

import json
from typing import Any

from ... import __version__
from ..chain import CHAIN_GENESIS, entry_hash, hashed_accounts, looks_like_fingerprint, public_id_of, result_hash
from ..entries import now
from ..errors import LedgerCorrupt
from .base import Backend

__all__ = ["SCHEMA_VERSION", "FILE_BYTES_MARK", "RECORDS_MARK", "KNOWN_SOURCE_MARK"]

SCHEMA_VERSION = 4
#: the tables of schema 1 and 2
TABLES = ("dpcore_meta", "dpcore_accounts", "dpcore_entries", "dpcore_results")
#: schema 3: populations (the people protected, one budget each) and the sources attached to them
POPULATION_TABLES = ("dpcore_populations", "dpcore_sources")

#: the end of the ``software`` text of a source row that is a byte key, not a record fingerprint
FILE_BYTES_MARK = " (file bytes)"
#: the end of the ``software`` text of a record fingerprint of version N (schema 4 on; the sources of schema 3
#: carry no mark: they are version 1)
RECORDS_MARK = " (records v{version})"
#: ... and of a record fingerprint attached to a source the ledger already held by another version (a version-1
#: source of schema 3 seen again): :meth:`LedgerDB.source_count` counts the source once
KNOWN_SOURCE_MARK = ", known)"


# ----- SQLite ----------------------------------------------------------------------------------------
#: schema 1's tables (a new ledger is created at schema 1, then migrated)
SQLITE_V1 = """
CREATE TABLE dpcore_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE dpcore_accounts (
    dataset_id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    cap_epsilon REAL NOT NULL,
    cap_delta REAL NOT NULL,
    created TEXT NOT NULL,
    software TEXT NOT NULL
);
CREATE TABLE dpcore_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_id TEXT NOT NULL REFERENCES dpcore_accounts(dataset_id),
    label TEXT NOT NULL,
    cost TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    time TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX dpcore_entries_account ON dpcore_entries(dataset_id, id);
CREATE TABLE dpcore_results (
    entry_id INTEGER PRIMARY KEY REFERENCES dpcore_entries(id),
    time TEXT NOT NULL,
    result TEXT NOT NULL
);
"""


def sqlite_v2_triggers() -> dict[str, str]:
    """name -> CREATE TRIGGER. Every table refuses UPDATE and DELETE. The INSERT guards refuse a row whose
    key exists: SQLite's INSERT OR REPLACE deletes the old row without firing delete triggers (unless
    recursive_triggers is on, which an SQL shell does not set), so without them REPLACE would edit a cap,
    an entry or the key. Entries and results must carry their hashes."""
    out = {}
    for table, what in (
        ("dpcore_meta", "the key table of the dpcore ledger is append-only"),
        ("dpcore_accounts", "a dpcore ledger account is fixed when it is created (its cap too)"),
        ("dpcore_entries", "dpcore ledger entries are append-only"),
        ("dpcore_results", "dpcore ledger results are append-only"),
    ):
        for op in ("UPDATE", "DELETE"):
            name = f"{table}_no_{op.lower()}"
            out[name] = f"CREATE TRIGGER {name} BEFORE {op} ON {table} BEGIN SELECT RAISE(ABORT, '{what}'); END"
    guards = {
        "dpcore_meta": "EXISTS (SELECT 1 FROM dpcore_meta WHERE key = NEW.key)",
        "dpcore_accounts": "EXISTS (SELECT 1 FROM dpcore_accounts WHERE dataset_id = NEW.dataset_id)",
        "dpcore_entries": "NEW.prev_hash IS NULL OR NEW.entry_hash IS NULL OR "
        "EXISTS (SELECT 1 FROM dpcore_entries WHERE id = NEW.id)",
        "dpcore_results": "NEW.result_hash IS NULL OR EXISTS (SELECT 1 FROM dpcore_results WHERE entry_id = NEW.entry_id)",
    }
    for table, cond in guards.items():
        name = f"{table}_insert_guard"
        out[name] = (
            f"CREATE TRIGGER {name} BEFORE INSERT ON {table} WHEN {cond} "
            f"BEGIN SELECT RAISE(ABORT, 'dpcore ledger: {table} is append-only (no replace; hashes required)'); END"
        )
    return out


SQLITE_V3 = """
CREATE TABLE dpcore_populations (
    name TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL UNIQUE REFERENCES dpcore_accounts(dataset_id),
    created TEXT NOT NULL,
    software TEXT NOT NULL
);
CREATE TABLE dpcore_sources (
    fingerprint TEXT PRIMARY KEY,
    dataset_id TEXT NOT NULL REFERENCES dpcore_accounts(dataset_id),
    attached TEXT NOT NULL,
    software TEXT NOT NULL
);
"""


def sqlite_v3_triggers() -> dict[str, str]:
    """Populations and sources are append-only like every other table: a source moved to another
    population, or a population pointed at a fresh account, would restart a budget."""
    out = {}
    for table, key in (("dpcore_populations", "name"), ("dpcore_sources", "fingerprint")):
        for op in ("UPDATE", "DELETE"):
            name = f"{table}_no_{op.lower()}"
            out[name] = (
                f"CREATE TRIGGER {name} BEFORE {op} ON {table} BEGIN SELECT RAISE(ABORT, "
                f"'dpcore ledger: {table} is append-only (a population and its sources are fixed)'); END"
            )
        name = f"{table}_insert_guard"
        out[name] = (
            f"CREATE TRIGGER {name} BEFORE INSERT ON {table} WHEN EXISTS (SELECT 1 FROM {table} WHERE "
            f"{key} = NEW.{key}) BEGIN SELECT RAISE(ABORT, 'dpcore ledger: {table} is append-only (no replace)'); END"
        )
    return out


def split_sql(script: str) -> list[str]:
    """Statements of a schema script (triggers contain ';' inside BEGIN ... END)."""
    out, buf = [], []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf).strip()
        if text.endswith(";") and (not text.upper().startswith("CREATE TRIGGER") or text.upper().endswith("END;")):
            out.append(text)
            buf = []
    if buf and "\n".join(buf).strip():
        out.append("\n".join(buf).strip())
    return out


# ----- PostgreSQL ------------------------------------------------------------------------------------
#: schema 1's tables
PG_V1 = [
    "CREATE TABLE dpcore_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE dpcore_accounts (
        dataset_id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        cap_epsilon DOUBLE PRECISION NOT NULL,
        cap_delta DOUBLE PRECISION NOT NULL,
        created TEXT NOT NULL,
        software TEXT NOT NULL)""",
    """CREATE TABLE dpcore_entries (
        id BIGSERIAL PRIMARY KEY,
        dataset_id TEXT NOT NULL REFERENCES dpcore_accounts(dataset_id),
        label TEXT NOT NULL,
        cost TEXT NOT NULL,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        time TEXT NOT NULL,
        record TEXT NOT NULL)""",
    "CREATE INDEX dpcore_entries_account ON dpcore_entries(dataset_id, id)",
    """CREATE TABLE dpcore_results (
        entry_id BIGINT PRIMARY KEY REFERENCES dpcore_entries(id),
        time TEXT NOT NULL,
        result TEXT NOT NULL)""",
]
PG_REFUSE_FUNCTION = """CREATE OR REPLACE FUNCTION dpcore_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'dpcore ledger: % on % is refused (append-only; caps and the key are fixed)', TG_OP, TG_TABLE_NAME;
    END $$"""
#: name -> when; row triggers refuse UPDATE/DELETE, statement triggers TRUNCATE (which fires no row trigger)
PG_TRIGGERS = {
    **{f"{t}_append_only": f"BEFORE UPDATE OR DELETE ON {t} FOR EACH ROW" for t in TABLES},
    **{f"{t}_no_truncate": f"BEFORE TRUNCATE ON {t} FOR EACH STATEMENT" for t in TABLES},
}
#: schema 1's triggers (the migration to schema 2 drops them)
PG_V1_TRIGGERS = ("dpcore_entries_append_only", "dpcore_results_append_only", "dpcore_accounts_fixed")
PG_V3 = [
    """CREATE TABLE dpcore_populations (
        name TEXT PRIMARY KEY,
        dataset_id TEXT NOT NULL UNIQUE REFERENCES dpcore_accounts(dataset_id),
        created TEXT NOT NULL,
        software TEXT NOT NULL)""",
    """CREATE TABLE dpcore_sources (
        fingerprint TEXT PRIMARY KEY,
        dataset_id TEXT NOT NULL REFERENCES dpcore_accounts(dataset_id),
        attached TEXT NOT NULL,
        software TEXT NOT NULL)""",
]
PG_V3_TRIGGERS = {
    **{f"{t}_append_only": f"BEFORE UPDATE OR DELETE ON {t} FOR EACH ROW" for t in POPULATION_TABLES},
    **{f"{t}_no_truncate": f"BEFORE TRUNCATE ON {t} FOR EACH STATEMENT" for t in POPULATION_TABLES},
}


# ----- reading the key table ---------------------------------------------------------------------------
def read_meta(conn: Any) -> dict[str, str]:
    """The key table (``dpcore_meta``): schema version, the public ids' key, migration notes."""
    return {r[0]: r[1] for r in conn.execute("SELECT key, value FROM dpcore_meta").fetchall()}


def check_version(meta: dict[str, str], where: str) -> int:
    """The schema version in ``meta``; :class:`LedgerCorrupt` when it is missing, newer than this dpcore, or the
    key of the public ids is lost (``where``: the ledger, for messages)."""
    try:
        version = int(meta.get("schema_version", ""))
    except ValueError:
        raise LedgerCorrupt(
            f"the ledger database ({where}) has no valid schema version: restore it from a backup (docs/ledger.md)"
        ) from None
    if version > SCHEMA_VERSION:
        raise LedgerCorrupt(
            f"the ledger database ({where}) has schema version {version}, newer than this "
            f"dpcore {__version__} understands ({SCHEMA_VERSION}): upgrade dpcore"
        )
    if "public_id_key" not in meta:
        raise LedgerCorrupt(
            f"the ledger database ({where}) has lost its key (dpcore_meta.public_id_key): "
            "restore it from a backup (docs/ledger.md)"
        )
    return version


# ----- migrations, shared by both backends ------------------------------------------------------------------
def migrate(backend: Backend, conn: Any, version: int, *, record: bool) -> None:
    """Bring a ledger of schema ``version`` to :data:`SCHEMA_VERSION`, one step after the other, inside the
    caller's write transaction (``record``: note each upgrade in the key table; not for a new ledger)."""
    if version < 2:
        _migrate_1_to_2(backend, conn, record=record)
    if version < 3:
        _migrate_2_to_3(backend, conn, record=record)
    if version < 4:
        _migrate_3_to_4(backend, conn, record=record)


def _migrate_1_to_2(backend: Backend, conn: Any, *, record: bool) -> None:
    """Chain the existing entries once, in id order (oldest first), hash the results, make every
    table append-only, record the schema version. Runs inside the caller's write transaction."""
    ph = backend.ph
    backend.drop_triggers(conn)
    backend.add_hash_columns(conn)
    key = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'public_id_key'").fetchone()[0]
    accounts = hashed_accounts(conn)
    prev = CHAIN_GENESIS
    hashes: dict[int, str] = {}
    rows = conn.execute(
        "SELECT id, dataset_id, label, cost, epsilon, delta, time, record FROM dpcore_entries ORDER BY id"
    ).fetchall()
    for r in rows:
        h = entry_hash(prev, public_id_of(key, r[1]), accounts[r[1]], r[2], r[3], r[4], r[5], r[6], r[7])
        conn.execute(
            f"UPDATE dpcore_entries SET prev_hash = {ph}, entry_hash = {ph} WHERE id = {ph}", (prev, h, int(r[0]))
        )
        hashes[int(r[0])] = h
        prev = h
    for r in conn.execute("SELECT entry_id, time, result FROM dpcore_results ORDER BY entry_id").fetchall():
        conn.execute(
            f"UPDATE dpcore_results SET result_hash = {ph} WHERE entry_id = {ph}",
            (result_hash(hashes[int(r[0])], r[1], r[2]), int(r[0])),
        )
    conn.execute(f"UPDATE dpcore_meta SET value = {ph} WHERE key = 'schema_version'", ("2",))
    if record:
        conn.execute(
            f"INSERT INTO dpcore_meta(key, value) VALUES ('migrated_1_to_2', {ph})",
            (json.dumps({"time": now(), "entries_chained": len(rows), "software": f"dpcore {__version__}"}),),
        )
    backend.create_triggers(conn)


def _migrate_2_to_3(backend: Backend, conn: Any, *, record: bool) -> None:
    """Populations and sources. Every existing account becomes a population with its cap and history:
    an account whose id is a name (the command line's plan ``dataset``) keeps it as the population's
    name, so old plans keep working; an account keyed by a file fingerprint (the app's) is named by its
    label (or ``account-<public id>`` when the label is empty or taken). Nothing is re-charged, no
    cap changes, no entry is rewritten: the chain continues across the upgrade."""
    ph = backend.ph
    backend.drop_triggers(conn)  # the key table refuses UPDATE (schema_version): re-created below
    backend.create_population_tables(conn)
    key = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'public_id_key'").fetchone()[0]
    taken: set[str] = set()
    rows = conn.execute(
        "SELECT dataset_id, label, created FROM dpcore_accounts ORDER BY created, dataset_id"
    ).fetchall()
    named = [r for r in rows if not looks_like_fingerprint(r[0])]
    for dataset_id, _label, _created in named:
        taken.add(dataset_id)
    for dataset_id, label, _created in rows:
        if looks_like_fingerprint(dataset_id):
            name = " ".join(str(label or "").split())[:200]
            if not name or name in taken or looks_like_fingerprint(name):
                name = f"account-{public_id_of(key, dataset_id)[:12]}"
        else:
            name = dataset_id
        taken.add(name)
        conn.execute(
            f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, {ph})",
            (name, dataset_id, now(), f"dpcore {__version__} (migration 2 to 3)"),
        )
    conn.execute(f"UPDATE dpcore_meta SET value = {ph} WHERE key = 'schema_version'", ("3",))
    if record:
        conn.execute(
            f"INSERT INTO dpcore_meta(key, value) VALUES ('migrated_2_to_3', {ph})",
            (json.dumps({"time": now(), "populations_from_accounts": len(rows), "software": f"dpcore {__version__}"}),),
        )
    backend.create_triggers(conn)


def _migrate_3_to_4(backend: Backend, conn: Any, *, record: bool) -> None:
    """The record fingerprint versions the ledger computes for every source it sees, fixed here: version 2
    only for a ledger without record sources (a new one), versions 1 and 2 for a ledger whose sources were
    attached by their version-1 fingerprint. A re-saved copy of such a source (or the same file under
    another plan name) must still find its population, and only its version-1 fingerprint is attached."""
    ph = backend.ph
    version_1_sources = conn.execute(
        f"SELECT COUNT(*) FROM dpcore_sources WHERE software NOT LIKE {ph}", ("%" + FILE_BYTES_MARK,)
    ).fetchone()[0]
    versions = [1, 2] if version_1_sources else [2]
    conn.execute(f"INSERT INTO dpcore_meta(key, value) VALUES ('record_fingerprints', {ph})", (json.dumps(versions),))
    backend.set_schema_version(conn, 4)
    if record:
        conn.execute(
            f"INSERT INTO dpcore_meta(key, value) VALUES ('migrated_3_to_4', {ph})",
            (json.dumps({"time": now(), "record_fingerprints": versions, "software": f"dpcore {__version__}"}),),
        )
