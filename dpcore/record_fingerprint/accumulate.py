"""The record fingerprint of chunks of records (:class:`RecordFingerprint`), in each version of its definition, and
of one DataFrame (:func:`frame_fingerprint`, :func:`frame_fingerprints`)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ..validation import DPInputError
from .canonical import canonical_arrow, column_order, frame_column_text, is_arrow, text_row_sums
from .codes import arrow_value_codes, code_row_sums, frame_column_codes

DOMAIN_TAG = b"dpcore-record-fingerprint-v1\x00"
#: the definitions of the fingerprint: 1 hashes each canonical row text; 2 codes the same canonical values column
#: by column (numbers by their float64 bits: no text is written). A ledger computes the versions it was created
#: with (``LedgerDB.record_fingerprint_versions``): a ledger holding version-1 sources keeps computing version 1
VERSIONS = (1, 2)
LATEST_VERSION = 2
DOMAIN_TAG_V2 = b"dpcore-record-fingerprint-v2\x00"


@dataclass
class RecordFingerprint:
    """Accumulates chunks of records (DataFrames) in one ``version`` of the definition; :meth:`hexdigest` is the
    fingerprint.

    Chunks may come in any order and be split anywhere: only the multiset of rows counts.
    ``merge`` adds a partial accumulator (e.g. one per Spark partition)."""

    rows: int = 0
    sum1: int = 0
    sum2: int = 0
    columns: tuple[str, ...] | None = None
    version: int = LATEST_VERSION

    def __post_init__(self) -> None:
        check_versions((self.version,))

    def update(self, frame: Any) -> RecordFingerprint:
        """Add one chunk: a pandas DataFrame, or a pyarrow RecordBatch / Table (read column by column with
        Arrow's compute kernels: :func:`canonical_arrow` / :func:`arrow_value_codes`, equal to the reference)."""
        if not is_arrow(frame) and not isinstance(frame, pd.DataFrame):
            raise TypeError(
                f"a chunk of records must be a pandas DataFrame or a pyarrow RecordBatch, got {type(frame).__name__}"
            )
        return self.add_sums(*chunk_sums(frame, self.version))

    def add_sums(self, columns: tuple[str, ...] | None, s1: int, s2: int, n: int) -> RecordFingerprint:
        if columns is not None:
            if self.columns is None:
                self.columns = columns
            elif self.columns != columns:
                raise DPInputError(
                    f"the parts of the data have different columns: {list(self.columns)[:8]} and {list(columns)[:8]}"
                )
        self.rows += n
        self.sum1 = (self.sum1 + s1) % (1 << 64)
        self.sum2 = (self.sum2 + s2) % (1 << 64)
        return self

    def merge(self, rows: int, sum1: int, sum2: int, columns: Iterable[str] | None = None) -> RecordFingerprint:
        if columns is not None:
            columns = tuple(columns)
            if self.columns is not None and self.columns != columns:
                raise DPInputError("the parts of the data have different columns")
            self.columns = columns
        self.rows += int(rows)
        self.sum1 = (self.sum1 + int(sum1)) % (1 << 64)
        self.sum2 = (self.sum2 + int(sum2)) % (1 << 64)
        return self

    def hexdigest(self) -> str:
        if self.rows == 0:
            raise DPInputError("the data have no rows: there are no records to fingerprint")
        digest = hashlib.sha256(DOMAIN_TAG if self.version == 1 else DOMAIN_TAG_V2)
        digest.update(
            json.dumps({"rows": self.rows, "sum1": self.sum1, "sum2": self.sum2}, sort_keys=True).encode("utf-8")
        )
        return digest.hexdigest()


def chunk_sums(chunk: Any, version: int) -> tuple[tuple[str, ...], int, int, int]:
    """(column names in order, the two row sums, rows) of one chunk in ``version``: an Arrow RecordBatch or Table
    (the engines' readers) column by column with Arrow's kernels, or a pandas DataFrame (an upload the app parsed)
    through :func:`frame_column`."""
    arrow = is_arrow(chunk)
    names, order = column_order(chunk.schema.names if arrow else chunk.columns)

    def column_of(i: int) -> Any:
        if arrow:
            return (canonical_arrow if version == 1 else arrow_value_codes)(chunk.column(i))
        return (frame_column_text if version == 1 else frame_column_codes)(chunk.iloc[:, i])

    combine = text_row_sums if version == 1 else code_row_sums
    return combine(names, order, column_of, chunk.num_rows if arrow else len(chunk))


def add_chunk(accs: dict[int, RecordFingerprint], chunk: Any) -> None:
    """Add one chunk to the accumulator of each version."""
    for version, acc in accs.items():
        acc.add_sums(*chunk_sums(chunk, version))


def check_versions(versions: Any) -> tuple[int, ...]:
    """Fingerprint versions to compute: one of :data:`VERSIONS` or a non-empty collection of them, returned
    sorted without repeats."""
    if isinstance(versions, (int, np.integer)) and not isinstance(versions, bool):
        versions = (versions,)
    if isinstance(versions, (str, bytes)) or not isinstance(versions, Iterable):
        raise TypeError(f"versions must be a collection of record fingerprint versions {VERSIONS}, got {versions!r}")
    chosen = tuple(versions)
    for v in chosen:
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or int(v) not in VERSIONS:
            raise ValueError(f"the record fingerprint versions are {VERSIONS}, got {versions!r}")
    if not chosen:
        raise ValueError(f"name at least one record fingerprint version of {VERSIONS}")
    return tuple(sorted({int(v) for v in chosen}))


@dataclass(frozen=True)
class RecordFingerprints:
    """The record fingerprints of one source, one per definition version computed (a ledger attaches the versions
    it reads: :attr:`dpcore.ledger.LedgerDB.record_fingerprint_versions`)."""

    by_version: tuple[tuple[int, str], ...]

    @property
    def versions(self) -> tuple[int, ...]:
        return tuple(v for v, _ in self.by_version)

    def of(self, version: int) -> str:
        for v, hexdigest in self.by_version:
            if v == version:
                return hexdigest
        raise ValueError(f"the record fingerprint version {version} was not computed (only {self.versions})")

    @property
    def latest(self) -> str:
        """The fingerprint of the newest version computed."""
        return self.by_version[-1][1]


def frame_fingerprint(frame: pd.DataFrame, *, version: int = LATEST_VERSION) -> str:
    """The record fingerprint of one DataFrame (every column; see the module docstring)."""
    return RecordFingerprint(version=version).update(frame).hexdigest()


def frame_fingerprints(frame: pd.DataFrame, versions: Any = VERSIONS) -> RecordFingerprints:
    """The record fingerprints of one DataFrame in each of ``versions``."""
    return RecordFingerprints(tuple((v, frame_fingerprint(frame, version=v)) for v in check_versions(versions)))
