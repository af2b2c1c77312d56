"""The archive: accounts and their entries as JSON or CSV, and a consistent copy of a SQLite ledger.

Exports name accounts by their keyed public id, never by their dataset id (a fingerprint of the confidential file,
which release records deliberately omit); the entries' ``entry_hash`` is computed over the public id, so it is no
oracle for a guessed file either.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import sqlite3
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from .. import __version__
from ..validation import DPInputError
from .entries import Entry, json_default, now

__all__ = ["CSV_COLUMNS"]

CSV_COLUMNS = (
    "public_id",
    "account_label",
    "cap_epsilon",
    "cap_delta",
    "entry_id",
    "label",
    "kind",
    "epsilon",
    "delta",
    "rho",
    "time",
    "record",
    "result",
)


class ExportedAccount(Protocol):
    """What an export reads of an account (:class:`dpcore.ledger.Account`)."""

    @property
    def dataset_id(self) -> str: ...

    @property
    def public_id(self) -> str: ...

    @property
    def label(self) -> str: ...

    @property
    def cap_epsilon(self) -> float: ...

    @property
    def cap_delta(self) -> float: ...

    def entries(self) -> list[Entry]: ...

    def to_dict(self, entries: list[Entry] | None = None) -> dict[str, Any]: ...


def _public_account(d: dict[str, Any]) -> dict[str, Any]:
    """An account for an export: named by its keyed public id, never by its dataset id (a fingerprint of
    the confidential file, which release records deliberately omit)."""
    return {k: v for k, v in d.items() if k != "dataset_id"}


def _public_entry(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "dataset_id"}


def export_accounts(
    accounts: Sequence[ExportedAccount], fmt: str, ledger: str, snapshot: dict[str, list[Entry]] | None = None
) -> str:
    """``accounts`` (:class:`ExportedAccount`) and their entries as JSON (a document) or CSV (one row per entry);
    ``ledger``: where the ledger lives (the JSON says); ``snapshot``: entries already read, by dataset id."""
    if fmt not in ("json", "csv"):
        raise DPInputError(f"export format must be 'json' or 'csv', got {fmt!r}")
    snapshot = dict(snapshot or {})
    for a in accounts:
        if a.dataset_id not in snapshot:
            snapshot[a.dataset_id] = a.entries()
    if fmt == "json":
        doc = {
            "dpcore_version": __version__,
            "exported": now(),
            "ledger": ledger,
            "accounts": [
                {
                    **_public_account(a.to_dict(snapshot[a.dataset_id])),
                    "entries": [_public_entry(e.to_dict()) for e in snapshot[a.dataset_id]],
                }
                for a in accounts
            ],
        }
        return json.dumps(doc, indent=2, default=json_default, ensure_ascii=False)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for a in accounts:
        for e in snapshot[a.dataset_id]:
            writer.writerow(
                [
                    a.public_id,
                    a.label,
                    repr(a.cap_epsilon),
                    repr(a.cap_delta),
                    e.id,
                    e.label,
                    e.cost.kind,
                    repr(e.cost.epsilon),
                    repr(e.cost.delta),
                    repr(e.cost.rho),
                    e.time,
                    json.dumps(e.record, ensure_ascii=False),
                    "" if e.result is None else json.dumps(e.result, ensure_ascii=False),
                ]
            )
    return buf.getvalue()


def backup_sqlite(source: Path, where: str, dest: str | os.PathLike) -> Path:
    """Copy the SQLite ledger file ``source`` to ``dest`` (a new path; mode 0600: the copy holds the key) with
    SQLite's online backup: one consistent snapshot, even while releases run. ``where``: the ledger, for messages.
    Returns the copy's absolute path; :class:`DPInputError` when ``dest`` exists or the copy fails (then no copy
    is left)."""
    dest = Path(dest).expanduser().absolute()
    if os.path.lexists(dest):
        raise DPInputError(f"the backup destination {dest} exists: give a new path")
    try:
        os.close(os.open(dest, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))  # the copy holds the key: 0600
        with (
            contextlib.closing(
                sqlite3.connect("file:" + urllib.parse.quote(str(source)) + "?mode=ro", uri=True)
            ) as src,
            contextlib.closing(sqlite3.connect(str(dest))) as out,
        ):
            src.backup(out)  # SQLite's online backup: one consistent snapshot, even while releases run
    except (OSError, sqlite3.Error) as exc:
        with contextlib.suppress(OSError):
            os.unlink(dest)
        raise DPInputError(f"the backup of {where} to {dest} failed: {exc}") from None
    return dest
