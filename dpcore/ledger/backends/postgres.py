"""The PostgreSQL backend (psycopg 3, imported only when a ``postgresql://`` URL is opened): a shared server.

A charge locks its account row (``SELECT ... FOR UPDATE``), then a transaction-scoped advisory lock serialises the
appends to the ledger-wide hash chain; each lock is waited for in slices (``lock_timeout``) so that ``on_wait`` hears
about a long wait and a lock held for ever is an error after :data:`BUSY_TIMEOUT_S`. One pooled connection per
process, checked before use when it was idle (a server restart), re-made after an error or a fork.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import __version__
from .. import errors
from ..entries import now
from ..paths import user_journal_path
from .base import BUSY_TIMEOUT_S, LOCK_NOTE_AFTER_S, LOCK_NOTE_EVERY_S, Backend, OnWait, lock_note
from .schema import (
    PG_REFUSE_FUNCTION,
    PG_TRIGGERS,
    PG_V1,
    PG_V1_TRIGGERS,
    PG_V3,
    PG_V3_TRIGGERS,
    POPULATION_TABLES,
    SCHEMA_VERSION,
    TABLES,
    check_version,
    migrate,
    read_meta,
)

__all__ = ["PG_PING_AFTER_IDLE_S", "PostgresBackend"]

#: a pooled PostgreSQL connection idle for longer than this is checked (SELECT 1) before use
PG_PING_AFTER_IDLE_S = 5.0
_PG_SCHEMA_LOCK = 727270011
_PG_CHAIN_LOCK = 727270012


def _pg_fault(where: str, exc: BaseException, *, at_commit: bool = False) -> errors.LedgerError:
    return errors.mark_at_commit(_pg_fault_text(where, exc, errors.outcome_note(at_commit)), at_commit)


def _pg_fault_text(where: str, exc: BaseException, note: str) -> errors.LedgerError:
    text = errors.first_line(exc)
    name = type(exc).__name__
    if name in ("UndefinedTable", "UndefinedColumn"):
        return errors.LedgerCorrupt(
            f"the ledger database ({where}) lacks the ledger's tables or columns ({text}): restore it "
            "from a backup (docs/ledger.md). Nothing was released."
        )
    if name in ("ReadOnlySqlTransaction", "InsufficientPrivilege"):
        return errors.LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: this user cannot write to it ({text}); "
            f"grant the ledger's role write access or use a primary server. {note}"
        )
    if name in ("DiskFull",):
        return errors.LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: the server's disk is full ({text}). {note}"
        )
    return errors.LedgerUnavailable(
        f"the ledger database ({where}) is unavailable: {text}; check that the PostgreSQL server "
        f"is running and reachable. {note}"
    )


class PostgresBackend(Backend):
    name = "postgresql"
    ph = "%s"

    def __init__(self, url: str) -> None:
        self.url = url
        # one connection per backend object and process, used by one thread at a time (a Streamlit
        # server shares one LedgerDB between sessions); reconnects after an error or a fork
        self._lock = threading.Lock()
        self._conn: Any = None
        self._pid = 0
        self._last_used = 0.0

    def _info(self) -> dict[str, Any]:
        from psycopg.conninfo import conninfo_to_dict

        return conninfo_to_dict(self.url)

    def describe(self) -> str:
        try:
            info = self._info()
            return f"PostgreSQL database {info.get('dbname', '?')} on {info.get('host', 'localhost')}:{info.get('port', 5432)}"
        except Exception:  # pragma: no cover - never show a password
            return "PostgreSQL database"

    def journal_paths(self) -> list[Path]:
        """Under the user's data folder, keyed by the URL without its password."""
        try:
            info = {k: v for k, v in self._info().items() if k in ("host", "port", "dbname", "user")}
            key = json.dumps(info, sort_keys=True)
        except Exception:  # pragma: no cover
            key = self.describe()
        return [user_journal_path("postgresql:" + key)]

    def connect(self):
        try:
            import psycopg
        except ImportError:
            raise errors.LedgerUnavailable(
                "a PostgreSQL ledger needs the psycopg package: pip install 'psycopg[binary]'"
            ) from None
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise errors.LedgerUnavailable(
                f"cannot connect to the PostgreSQL ledger ({self.describe()}): {errors.first_line(exc)}; "
                "check that the server is running and the URL is right"
            ) from None

    def _tables(self, conn: Any) -> set[str]:
        return {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                "AND table_name = ANY(%s)",
                (list(TABLES),),
            ).fetchall()
        }

    def _create_schema(self, conn: Any) -> None:
        for stmt in PG_V1:
            conn.execute(stmt)
        conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('schema_version', '1')")
        conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('public_id_key', %s)", (secrets.token_hex(32),))
        conn.execute(
            "INSERT INTO dpcore_meta(key, value) VALUES ('created', %s)",
            (json.dumps({"time": now(), "software": f"dpcore {__version__}"}),),
        )
        migrate(self, conn, 1, record=False)

    def open(self, *, create: bool, on_wait: OnWait | None) -> None:
        self._setup(create=create, must_be_new=False, on_wait=on_wait)

    def create_new(self, *, on_wait: OnWait | None) -> None:
        self._setup(create=True, must_be_new=True, on_wait=on_wait)

    def _setup(self, *, create: bool, must_be_new: bool, on_wait: OnWait | None) -> None:
        import psycopg

        where = self.describe()
        conn = self.connect()
        try:
            with conn.transaction():
                # concurrent first-time set-ups and migrations would race on the catalogue: serialise them
                self.lock_row(conn, "SELECT pg_advisory_xact_lock(%s)", (_PG_SCHEMA_LOCK,), on_wait)
                tables = self._tables(conn)
                if must_be_new and tables:
                    raise errors.LedgerExists(
                        f"the ledger database ({where}) already holds ledger tables: dpcore never "
                        "re-initialises an existing ledger (run 'python -m dpcore ledger verify')"
                    )
                if not tables:
                    if not create:
                        raise errors.LedgerMissing(
                            f"there is no ledger in the {where} (its tables do not exist): "
                            + errors.INIT_HINT.format(url="postgresql://...")
                        )
                    self._create_schema(conn)
                elif tables != set(TABLES):
                    raise errors.LedgerCorrupt(
                        f"the ledger database ({where}) lacks the tables {sorted(set(TABLES) - tables)}: "
                        "restore it from a backup (docs/ledger.md)"
                    )
                meta = read_meta(conn)
                version = check_version(meta, self.describe())
                if version < SCHEMA_VERSION:
                    migrate(self, conn, version, record=True)
                self.public_id_key = meta["public_id_key"]
        except psycopg.Error as exc:
            raise _pg_fault(where, exc) from None
        finally:
            conn.close()

    def drop_triggers(self, conn: Any) -> None:
        for name in (*PG_V1_TRIGGERS, *PG_TRIGGERS):
            table = next((t for t in TABLES if name.startswith(t)), None)
            if table is not None:
                conn.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")

    def add_hash_columns(self, conn: Any) -> None:
        conn.execute("ALTER TABLE dpcore_entries ADD COLUMN IF NOT EXISTS prev_hash TEXT")
        conn.execute("ALTER TABLE dpcore_entries ADD COLUMN IF NOT EXISTS entry_hash TEXT")
        conn.execute("ALTER TABLE dpcore_results ADD COLUMN IF NOT EXISTS result_hash TEXT")

    def create_triggers(self, conn: Any) -> None:
        for col, table in (
            ("prev_hash", "dpcore_entries"),
            ("entry_hash", "dpcore_entries"),
            ("result_hash", "dpcore_results"),
        ):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN {col} SET NOT NULL")  # filled by the migration
        conn.execute(PG_REFUSE_FUNCTION)
        for name, when in PG_TRIGGERS.items():
            conn.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION dpcore_refuse_change()")

    def set_schema_version(self, conn: Any, version: int) -> None:
        conn.execute("DROP TRIGGER IF EXISTS dpcore_meta_append_only ON dpcore_meta")
        conn.execute("UPDATE dpcore_meta SET value = %s WHERE key = 'schema_version'", (str(version),))
        conn.execute(
            f"CREATE TRIGGER dpcore_meta_append_only {PG_TRIGGERS['dpcore_meta_append_only']} "
            "EXECUTE FUNCTION dpcore_refuse_change()"
        )

    def create_population_tables(self, conn: Any) -> None:
        for stmt in PG_V3:
            conn.execute(stmt)
        conn.execute(PG_REFUSE_FUNCTION)
        for name, when in PG_V3_TRIGGERS.items():
            conn.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION dpcore_refuse_change()")

    def trigger_names(self, conn: Any) -> set[str]:
        return {
            r[0]
            for r in conn.execute(
                "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE NOT t.tgisinternal AND c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace",
                (list(TABLES + POPULATION_TABLES),),
            ).fetchall()
        }

    def expected_triggers(self) -> set[str]:
        return set(PG_TRIGGERS) | set(PG_V3_TRIGGERS)

    def lock_row(self, conn: Any, sql: str, params: tuple, on_wait: OnWait | None) -> Any:
        """A locking statement that waits up to BUSY_TIMEOUT_S (then LedgerUnavailable, as SQLite), telling
        ``on_wait`` after LOCK_NOTE_AFTER_S: each try runs in a savepoint with a ``lock_timeout`` slice, so a
        timed-out try leaves the transaction usable."""
        import psycopg

        start = time.monotonic()
        notes = 0
        while True:
            elapsed = time.monotonic() - start
            next_note = LOCK_NOTE_AFTER_S + notes * LOCK_NOTE_EVERY_S
            budget = BUSY_TIMEOUT_S - elapsed  # as SQLite's busy timeout: a lock held for ever is an error
            if on_wait is not None:
                budget = min(budget, max(0.01, next_note - elapsed))
            try:
                with conn.transaction():
                    conn.execute(f"SET LOCAL lock_timeout = '{max(1, int(budget * 1000))}ms'")
                    row = conn.execute(sql, params).fetchone()
                conn.execute("SET LOCAL lock_timeout = 0")
                return row
            except psycopg.errors.LockNotAvailable:
                waited = time.monotonic() - start
                if waited >= BUSY_TIMEOUT_S - 0.005:
                    raise errors.LedgerUnavailable(
                        f"the ledger database ({self.describe()}) is unavailable: it stayed locked "
                        f"by another process for {BUSY_TIMEOUT_S:.0f} s; retry when that release has "
                        f"finished. {errors.NOTHING_WRITTEN_NOTE}"
                    ) from None
                if on_wait is not None and waited >= next_note - 0.005:
                    notes += 1
                    on_wait(lock_note(self.describe(), waited, BUSY_TIMEOUT_S))

    def lock_chain(self, conn: Any, on_wait: OnWait | None) -> None:
        self.lock_row(conn, "SELECT pg_advisory_xact_lock(%s)", (_PG_CHAIN_LOCK,), on_wait)

    def _live_connection(self) -> Any:
        """The pooled connection; a new one when absent, broken, from another process, or when an idle
        one no longer answers (a server restart): nothing has been sent yet, so reconnecting is safe."""
        import psycopg

        conn = self._conn
        if conn is not None and not conn.closed and not conn.broken and self._pid == os.getpid():
            if time.monotonic() - self._last_used < PG_PING_AFTER_IDLE_S:
                return conn
            try:
                conn.execute("SELECT 1")
                return conn
            except psycopg.Error:
                pass
        if conn is not None and self._pid == os.getpid():
            with contextlib.suppress(Exception):
                conn.close()
        self._conn = None
        self._conn = self.connect()
        self._pid = os.getpid()
        return self._conn

    @contextlib.contextmanager
    def _session(self, phase: dict[str, bool] | None = None) -> Iterator[Any]:
        """The pooled connection under the lock; a psycopg error becomes a :class:`LedgerError` (``at_commit``
        when ``phase["commit"]`` was set: the body was done and the transaction's commit failed)."""
        import psycopg
        from psycopg import pq

        with self._lock:
            conn = self._live_connection()
            try:
                yield conn
            except BaseException as exc:
                if conn.closed or conn.broken or conn.info.transaction_status != pq.TransactionStatus.IDLE:
                    with contextlib.suppress(Exception):
                        conn.close()
                    self._conn = None
                if isinstance(exc, psycopg.Error):
                    raise _pg_fault(self.describe(), exc, at_commit=bool(phase and phase["commit"])) from exc
                raise
            finally:
                self._last_used = time.monotonic()

    @contextlib.contextmanager
    def locked(self, dataset_id: str | None, on_wait: OnWait | None = None) -> Iterator[Any]:
        """One transaction; ``charge`` locks the account row with ``SELECT ... FOR UPDATE``."""
        phase = {"commit": False}
        with self._session(phase) as conn, conn.transaction():
            yield conn
            phase["commit"] = True  # what fails from here on is the commit (the transaction's exit)

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        with self._session() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one consistent snapshot
            yield conn
