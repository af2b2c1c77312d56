"""The databases a ledger runs on: SQLite (a file, the default) and PostgreSQL (a shared server).

:mod:`.base` is what both do (transactions, locks, the schema's hooks), :mod:`.schema` the tables, their DDL and the
migrations, :mod:`.head` the head file beside a SQLite ledger, :mod:`.sqlite` and :mod:`.postgres` the two backends;
:func:`backend_for` picks one from a ledger URL (:func:`dpcore.ledger.paths.parse_ledger_url`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..paths import parse_ledger_url
from .base import Backend
from .postgres import PostgresBackend
from .sqlite import SqliteBackend

__all__ = ["Backend", "PostgresBackend", "SqliteBackend", "backend_for"]


def backend_for(url: str | os.PathLike | None) -> Backend:
    """The backend of the ledger at ``url`` (not opened yet): see :func:`dpcore.ledger.open_ledger` for the URLs."""
    kind, where = parse_ledger_url(url)
    if kind == "postgresql":
        return PostgresBackend(str(where))
    return SqliteBackend(Path(where))
