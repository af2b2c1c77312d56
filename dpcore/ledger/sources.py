"""Sources: what identifies a data source (its record fingerprints, or an old app account's file-bytes key) and how
the ledger stores the sources attached to a population (the ``dpcore_sources`` table).

A source attaches to one population by the record-canonical fingerprint of its records, so the same records under
another name, re-saved or converted, or with another income column, find the same budget (docs/ledger.md,
"Populations"). The fingerprint versions a ledger computes are fixed in it (schema 4): version 2, and version 1 beside
it for a ledger whose sources were attached by version 1. A fingerprint is a one-way hash of confidential records: it
stays in the ledger, never in a release record or an export.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from .. import __version__
from ..validation import DPInputError
from .backends.base import Backend, OnWait
from .backends.schema import FILE_BYTES_MARK, KNOWN_SOURCE_MARK, RECORDS_MARK
from .chain import looks_like_fingerprint
from .entries import now
from .errors import LedgerCorrupt

__all__ = ["dataset_fingerprint", "dataset_fingerprints", "file_bytes_fingerprint"]


def dataset_fingerprint(
    data: Any, income_column: str | None = None, group_column: str | None = None, *, version: int | None = None
) -> str:
    """The record-canonical fingerprint (64 hex) of a data source: what attaches it to its population.

    ``data``: a pandas DataFrame (parsed records, e.g. an upload), a path to a CSV (optionally .gz/.zst/.bz2)
    or Parquet file (a ``str`` is a path), or a file's bytes (parsed as the app parses an upload,
    :func:`dpcore.data.read_table`). The same records give the same fingerprint whatever their row order,
    line ends, quoting, encoding, number spelling or file format (:mod:`dpcore.record_fingerprint` defines
    the canonical values exactly). Every column counts, so ``income_column`` and ``group_column`` do not
    change it: they are accepted (and checked) only so that older calls keep working -- another income
    column of the same records is the same people, hence the same source. The hash is one-way, but it is a
    hash of confidential records: it stays in the ledger, never in a release record or an export.
    ``version``: the definition (default: the newest, ``record_fingerprint.LATEST_VERSION``); a ledger that
    holds version-1 sources reads both: :func:`dataset_fingerprints` with ``db.record_fingerprint_versions``.
    """
    from .. import record_fingerprint as records

    if income_column is not None and (not isinstance(income_column, str) or not income_column.strip()):
        raise DPInputError("income_column must be the (non-empty) name of the income column, or None")
    if group_column is not None and (not isinstance(group_column, str) or not group_column.strip()):
        raise DPInputError("group_column must be a non-empty column name or None")
    chosen = records.LATEST_VERSION if version is None else version
    return dataset_fingerprints(data, (chosen,)).of(chosen)


def dataset_fingerprints(data: Any, versions: Any = None) -> Any:
    """The record fingerprints of a data source (as :func:`dataset_fingerprint` reads it) in each of ``versions``
    (default: every version, ``record_fingerprint.VERSIONS``), in one pass: a
    :class:`dpcore.record_fingerprint.RecordFingerprints`, what :meth:`LedgerDB.attach_source` and
    :meth:`LedgerDB.source_population` take."""
    from .. import record_fingerprint as records

    versions = records.check_versions(records.VERSIONS if versions is None else versions)
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return records.frame_fingerprints(data, versions)
    if isinstance(data, (bytes, bytearray, memoryview)):
        if len(data) == 0:
            raise DPInputError("the dataset is empty (0 bytes): there is nothing to fingerprint")
        from ..data import read_table

        frame, _notes = read_table(bytes(data))
        return records.frame_fingerprints(frame, versions)
    if isinstance(data, (str, os.PathLike)):  # read as the engines read it: the same records, the same values
        from ..engines.fingerprint import file_fingerprints

        return file_fingerprints(data, versions)
    raise TypeError(f"data must be a DataFrame, bytes or a file path, got {type(data).__name__}")


def file_bytes_fingerprint(
    content: bytes | bytearray | memoryview | str | os.PathLike, income_column: str, group_column: str | None = None
) -> str:
    """The account key of schema 1 and 2 ledgers' app accounts: SHA-256 over a domain tag, the SHA-256 of
    the file's bytes and the JSON of the column names. Kept only to find an old account: the app looks it
    up once for an upload whose records are not attached yet, and attaches the records to that account's
    population (a re-saved copy of the file then finds the same budget). Not an identity of the records.
    """
    if not isinstance(income_column, str) or not income_column.strip():
        raise DPInputError("income_column must be the (non-empty) name of the income column")
    if group_column is not None and (not isinstance(group_column, str) or not group_column.strip()):
        raise DPInputError("group_column must be a non-empty column name or None")
    digest = hashlib.sha256()
    if isinstance(content, (bytes, bytearray, memoryview)):
        if len(content) == 0:
            raise DPInputError("the dataset is empty (0 bytes): there is nothing to fingerprint")
        digest.update(bytes(content))
    elif isinstance(content, (str, os.PathLike)):
        path = Path(content).expanduser()
        if not path.is_file():
            raise DPInputError(f"no such file to fingerprint: {str(path)!r}")
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
    else:
        raise TypeError(f"content must be bytes or a file path, got {type(content).__name__}")
    outer = hashlib.sha256()
    outer.update(b"dpcore-dataset-fingerprint-v1\x00")
    outer.update(digest.digest())
    outer.update(
        json.dumps({"income_column": income_column, "group_column": group_column}, sort_keys=True).encode("utf-8")
    )
    return outer.hexdigest()


def check_fingerprint(fingerprint: Any) -> str:
    """A source fingerprint (64 hex digits), lower case."""
    if not isinstance(fingerprint, str) or not looks_like_fingerprint(fingerprint):
        raise DPInputError("a source fingerprint is 64 hex digits (ledger.dataset_fingerprint(...))")
    return fingerprint.lower()


def read_fingerprint_versions(backend: Backend) -> tuple[int, ...]:
    """The record fingerprint versions the ledger computes for every source (``dpcore_meta.record_fingerprints``);
    :class:`LedgerCorrupt` when the key table does not say."""
    from .. import record_fingerprint as records

    with backend.reading() as conn:
        row = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'record_fingerprints'").fetchone()
    try:
        return records.check_versions(json.loads(row[0]))
    except (TypeError, ValueError):
        raise LedgerCorrupt(
            f"the ledger database ({backend.describe()}) does not say which record fingerprints it computes "
            "(dpcore_meta.record_fingerprints): restore it from a backup (docs/ledger.md)"
        ) from None


def fingerprint_keys(versions: tuple[int, ...], fingerprint: Any) -> list[tuple[int, str]]:
    """(version, hex) of each record fingerprint a ledger that reads ``versions`` looks up, from one hex (the newest
    version's) or a :class:`~dpcore.record_fingerprint.RecordFingerprints`; refuses one that lacks a version the
    ledger reads."""
    from .. import record_fingerprint as records

    if isinstance(fingerprint, records.RecordFingerprints):
        missing = [v for v in versions if v not in fingerprint.versions]
        if missing:
            raise ValueError(
                f"this ledger computes the record fingerprint versions {list(versions)} for every source; "
                f"version(s) {missing} were not computed: use ledger.dataset_fingerprints(data, "
                "db.record_fingerprint_versions)"
            )
        return [(v, check_fingerprint(fingerprint.of(v))) for v in versions]
    if versions != (records.LATEST_VERSION,):
        raise ValueError(
            f"this ledger computes the record fingerprint versions {list(versions)} for every source (it holds "
            "sources attached by version 1): pass ledger.dataset_fingerprints(data, db.record_fingerprint_versions), "
            "not one fingerprint"
        )
    return [(records.LATEST_VERSION, check_fingerprint(fingerprint))]


def find_source(backend: Backend, keys: list[str]) -> Any:
    """The row (population name, account id, label, cap epsilon, cap delta, created) of the account the first of
    ``keys`` found is attached to, or None."""
    ph = backend.ph
    with backend.reading() as conn:
        for key in keys:  # the oldest version first: the one a source attached before an upgrade has
            row = conn.execute(
                f"SELECT p.name, s.dataset_id, a.label, a.cap_epsilon, a.cap_delta, a.created "
                f"FROM dpcore_sources s JOIN dpcore_accounts a ON a.dataset_id = s.dataset_id "
                f"LEFT JOIN dpcore_populations p ON p.dataset_id = s.dataset_id "
                f"WHERE s.fingerprint = {ph}",
                (key,),
            ).fetchone()
            if row is not None:
                return row
    return None


def attach_keys(
    backend: Backend, keys: list[tuple[str, str]], dataset_id: str, on_wait: OnWait | None, *, file_bytes: bool
) -> set[str]:
    """Attach the source keys ``(fingerprint, mark)`` to the account ``dataset_id`` in one transaction under the
    ledger's write lock, unless one of them is attached to another account; returns the other accounts (nothing
    was attached when there are any)."""
    ph = backend.ph
    owners: set[str] = set()
    with backend.locked(dataset_id, on_wait) as conn:
        new = []
        for key, mark in keys:
            row = conn.execute(f"SELECT dataset_id FROM dpcore_sources WHERE fingerprint = {ph}", (key,)).fetchone()
            if row is None:
                new.append((key, mark))
            else:
                owners.add(row[0])
        if owners <= {dataset_id}:
            for key, mark in new:
                if owners and not file_bytes:  # the source is attached by another version: counted once
                    mark = mark[:-1] + KNOWN_SOURCE_MARK
                conn.execute(
                    f"INSERT INTO dpcore_sources(fingerprint, dataset_id, attached, software) "
                    f"VALUES ({ph}, {ph}, {ph}, {ph}) ON CONFLICT (fingerprint) DO NOTHING",
                    (key, dataset_id, now(), f"dpcore {__version__}{mark}"),
                )
    return owners - {dataset_id}


def count_sources(backend: Backend, dataset_id: str) -> int:
    """How many sources are attached to ``dataset_id`` (see :meth:`dpcore.ledger.LedgerDB.source_count`)."""
    ph = backend.ph
    with backend.reading() as conn:
        return int(
            conn.execute(
                f"SELECT COUNT(*) FROM dpcore_sources WHERE dataset_id = {ph} AND software NOT LIKE {ph} "
                f"AND software NOT LIKE {ph} AND software NOT LIKE {ph}",
                (
                    dataset_id,
                    "%" + FILE_BYTES_MARK,
                    "%" + RECORDS_MARK.format(version=1),
                    "%" + KNOWN_SOURCE_MARK,
                ),
            ).fetchone()[0]
        )
