"""What a ledger backend does: transactions (a write holds the ledger's lock, a read sees one snapshot), the
locking statements, the hooks the schema's migrations call, and where it journals result marks.

Backends differ only in placeholders, the locking statements and the schema DDL (:mod:`.schema`); everything
above them (accounts, the hash chain, verify) is written once, in SQL both run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["BUSY_TIMEOUT_S", "LOCK_NOTE_AFTER_S", "LOCK_NOTE_EVERY_S", "OnWait"]

#: how long a transaction waits for another process's lock before it is refused (:class:`LedgerUnavailable`)
BUSY_TIMEOUT_S = 60.0
#: a wait for the ledger's lock longer than this is reported to ``on_wait`` (then every LOCK_NOTE_EVERY_S)
LOCK_NOTE_AFTER_S = 1.0
LOCK_NOTE_EVERY_S = 10.0

OnWait = Callable[[str], Any]


def lock_note(where: str, waited: float, limit: float) -> str:
    """The line ``on_wait`` hears while a transaction waits for the lock (up to ``limit`` seconds)."""
    return f"waiting for the ledger lock held by another release ({where}): {waited:.0f} s so far, up to {limit:.0f} s"


class Backend:
    """The database behind a ledger (SQLite or PostgreSQL): its connection, transactions and schema hooks."""

    name = ""
    ph = "?"
    #: the key of the accounts' public ids (``dpcore_meta.public_id_key``), read when the ledger is opened
    public_id_key = ""

    def open(self, *, create: bool, on_wait: OnWait | None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def create_new(self, *, on_wait: OnWait | None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    @contextlib.contextmanager
    def locked(self, dataset_id: str | None, on_wait: OnWait | None = None) -> Iterator[Any]:  # pragma: no cover
        raise NotImplementedError
        yield

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def lock_row(self, conn: Any, sql: str, params: tuple, on_wait: OnWait | None) -> Any:
        """Run a locking SELECT (PostgreSQL's FOR UPDATE waits here; SQLite already holds its lock)."""
        return conn.execute(sql, params).fetchone()

    def lock_chain(self, conn: Any, on_wait: OnWait | None) -> None:
        """Serialise appends to the ledger-wide hash chain (SQLite's write lock already does)."""

    def history_problems(self, conn: Any) -> list[str]:
        """What the database lacks of the history recorded beside it (SQLite's head file); [] when it holds it."""
        return []

    def history_notes(self) -> list[str]:
        """Notes for ``verify`` about the record of the history (SQLite: no head file yet)."""
        return []

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def journal_paths(self) -> list[Path]:  # pragma: no cover - abstract
        raise NotImplementedError

    # ----- the hooks of the schema's migrations (:func:`.schema.migrate`), inside its write transaction ----------
    def set_schema_version(self, conn: Any, version: int) -> None:  # pragma: no cover - abstract
        """Write the schema version: the one UPDATE of the key table, its guard lifted inside the transaction."""
        raise NotImplementedError

    def create_population_tables(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def drop_triggers(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def add_hash_columns(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def create_triggers(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def trigger_names(self, conn: Any) -> set[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def expected_triggers(self) -> set[str]:  # pragma: no cover - abstract
        raise NotImplementedError
