"""A durable privacy-budget ledger in a real database (SQLite by default, PostgreSQL for a shared server).

Why a database: a budget kept in memory (a browser session, a Python object) is forgotten by a reload,
a restart, a second tab or a crash, so its cap protects nobody. Here every charge is a row in a
database, written and committed **before** any noise is drawn.

Public API (kept stable; outside checks use these names)::

    from dpcore import ledger
    db = ledger.open_ledger("sqlite:////abs/path/ledger.db")   # or "postgresql://...", None = default
    db = ledger.open_ledger(url, create=False, on_wait=print)  # refuse a missing ledger; lock-wait notes
    ledger.init_ledger(url)                                     # create a new ledger (refuses an existing one)
    acct = db.account("dataset-id", cap_epsilon=2.0, label="CPS 2023, income")   # open or create
    acct.charge("label", epsilon=0.5, record={...})       # raises ledger.BudgetExceeded over the cap
    acct.charge("label", cost=budget.approx(0.5, 1e-9))   # approximate DP / zCDP costs too
    link = acct.attach_result(entry.id, {...})            # ResultLink: recorded, or journaled (link.message)
    acct.spent_epsilon(); acct.remaining_epsilon(); acct.entries(); acct.cap; acct.export("csv")
    db.verify()                                           # VerifyReport: integrity, schema, hash chain
    ledger.dataset_fingerprint(path_or_bytes, "income", group_column=None)
    ledger.dataset_fingerprints(path_or_bytes, db.record_fingerprint_versions)  # what attach_source takes

Where the ledger lives (:func:`default_url`): the URL given to :func:`open_ledger`; else the
environment variable ``DPCORE_LEDGER_URL``; else the SQLite file
``$XDG_DATA_HOME/dpcore/ledger.db`` (``~/.local/share/dpcore/ledger.db``), outside the repository.
URLs: ``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db`` (SQLAlchemy's convention:
the path is what follows ``sqlite:///``), a ``pathlib.Path``, or ``postgresql://user@host:port/db``
(also ``postgres://``; driver ``psycopg`` version 3, imported only when such a URL is opened).

What is guaranteed:

* **The ledger knows it exists.** A ledger is created only on purpose (:func:`init_ledger`, or
  ``open_ledger(create=True)``, the library default, for a path that does not exist yet), atomically
  (built under a temporary name, then linked into place), so a 0-byte ledger file is never one of ours.
  A 0-byte file, a file that is not SQLite, a truncated or damaged file, a SQLite file or PostgreSQL
  database without the ledger's tables are refused (:class:`LedgerCorrupt`), never taken as a new, empty
  ledger (that would restore a full cap and lose the history). ``create=False`` (the command line and
  the app) refuses a missing ledger too (:class:`LedgerMissing`). A ledger file deleted or replaced
  while a process holds it open is noticed at the next transaction (its inode changed).
* **Populations** (schema 3): one budget per group of people, registered once by the data owner
  with its caps (:meth:`LedgerDB.register_population`, ``python -m dpcore ledger population add``);
  data sources attach to one population by the record-canonical :func:`dataset_fingerprint` of their
  records (:meth:`LedgerDB.attach_source`), so the same records under another name, re-saved or
  converted, or with another income column, find the same budget (docs/ledger.md, "Populations"). The
  fingerprint versions a ledger computes are fixed in it (schema 4): version 2, and version 1 beside it for a
  ledger whose sources were attached by version 1 (:attr:`LedgerDB.record_fingerprint_versions`).
* **Accounts** are keyed by an id (a population's name; for old app accounts a fingerprint of the
  file's bytes) and carry a human label. The cap (epsilon, and delta for approximate-DP / zCDP releases)
  is fixed when the account is created and stored with it; opening the account with another cap is
  refused (:class:`DPInputError`): a cap is never raised or reset.
* **Charge before reveal**: :meth:`Account.charge` checks the cap and appends the entry in ONE
  transaction that holds the account's lock (SQLite ``BEGIN IMMEDIATE``, a database-wide write
  lock; PostgreSQL ``SELECT ... FOR UPDATE`` on the account row, then a transaction-scoped advisory
  lock for the hash chain), so racing sessions, tabs or processes are serialised and can never together
  spend more than the cap. Callers draw noise only after ``charge`` returned; a crash after the commit
  loses at most the release, never the charge.
* **Append-only, chained**: there is no API to delete, reset or edit an entry, a result, an account or
  the key table; database triggers refuse ``UPDATE``/``DELETE`` on every table (and ``TRUNCATE`` on
  PostgreSQL, and SQLite's ``INSERT OR REPLACE``, which deletes without firing delete triggers). Each
  entry stores the hash of the previous entry of the ledger and its own hash over its content and its
  account's cap, and each result a hash over its entry's hash and content, so an edited, reordered or
  deleted entry (or a cap changed with the triggers dropped) is found by :meth:`LedgerDB.verify`
  (``python -m dpcore ledger verify``). Ledgers of schema 1 are migrated once on open (see docs/ledger.md).
* **The link survives**: :meth:`Account.attach_result` retries a few seconds; if the database stays
  unreachable it appends the result to a local journal file (mode 0600) and says so
  (:class:`ResultLink`); every later :func:`open_ledger` replays the journal (idempotent) and removes it.
* **Database faults are messages**: every sqlite3 / psycopg error that can reach a caller is a
  :class:`LedgerError` (a :class:`DPInputError`) naming the ledger and what to do; a wait for the lock
  longer than :data:`LOCK_NOTE_AFTER_S` is reported to ``on_wait`` (a callable taking one line).
* **Composition** uses :mod:`dpcore.budget`: pure epsilons add (Dwork & Roth 2014, Thm 3.16);
  (epsilon, delta) costs add in both; zCDP rhos add (Bun & Steinke 2016, Lemma 2.3) and are
  converted to (epsilon, delta) at the delta the cap leaves (Canonne, Kamath & Steinke 2020, Cor. 13).
  A pure-epsilon account (cap delta = 0) accepts only pure-DP costs.

What the ledger stores is public except the account ids (fingerprints of the data: a one-way hash,
but a hash of confidential content) and the key of the public ids; the SQLite file is created 0600 in a
0700 folder (when dpcore creates the folder), and exports carry the keyed public id, never the fingerprint.

SQLite runs in WAL mode with ``synchronous=FULL`` and a 60 s busy timeout, so racing processes wait
for the lock instead of failing, and a committed charge survives a crash of the process or machine.
"""

from __future__ import annotations

import contextlib
import csv
import fcntl
import functools
import hashlib
import hmac
import io
import json
import os
import secrets
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from . import __version__
from . import budget as _budget
from .validation import DPInputError, check_delta, check_epsilon

__all__ = [
    "BudgetExceeded",
    "LedgerError",
    "LedgerMissing",
    "LedgerExists",
    "LedgerCorrupt",
    "LedgerUnavailable",
    "LedgerDB",
    "Account",
    "Entry",
    "ResultLink",
    "VerifyReport",
    "open_ledger",
    "init_ledger",
    "default_url",
    "default_path",
    "dataset_fingerprint",
    "dataset_fingerprints",
    "ENV_VAR",
]

#: Environment variable naming the ledger database URL.
ENV_VAR = "DPCORE_LEDGER_URL"
#: 1: tables and append-only triggers; 2: hash chain (prev_hash, entry_hash, result_hash), every table
#: append-only (the key table included), insert guards; 3: populations and sources; 4: the record fingerprint
#: versions the ledger computes (``dpcore_meta.record_fingerprints``; dpcore before it refuses the ledger, so a
#: source is never looked up by a version the ledger does not hold).
SCHEMA_VERSION = 4
BUSY_TIMEOUT_S = 60.0
#: a wait for the ledger's lock longer than this is reported to ``on_wait`` (then every LOCK_NOTE_EVERY_S)
LOCK_NOTE_AFTER_S = 1.0
LOCK_NOTE_EVERY_S = 10.0
#: pauses between the tries of attach_result before it journals the result (about 4 s in all: a
#: PostgreSQL restart or a brief network cut is over by then; a read-only file is not, and is journaled)
ATTACH_RETRY_DELAYS_S = (0.25, 0.5, 1.0, 2.0)
#: a pooled PostgreSQL connection idle for longer than this is checked (SELECT 1) before use
PG_PING_AFTER_IDLE_S = 5.0
#: Relative tolerance of the cap check (float sums of epsilons such as 20 x 0.05 = 1.0000000000000002).
CAP_TOLERANCE = 1e-12
#: prev_hash of the first entry of a ledger
CHAIN_GENESIS = hashlib.sha256(b"dpcore-ledger-chain-v1").hexdigest()
_PG_SCHEMA_LOCK = 727270011
_PG_CHAIN_LOCK = 727270012
_SQLITE_HEADER = b"SQLite format 3\x00"
_TABLES = ("dpcore_meta", "dpcore_accounts", "dpcore_entries", "dpcore_results")
#: schema 3: populations (the people protected, one budget each) and the sources attached to them
_POPULATION_TABLES = ("dpcore_populations", "dpcore_sources")
_INIT_HINT = (
    "create it with 'python -m dpcore ledger init {url}' (or the release command's --init-ledger), "
    "or point DPCORE_LEDGER_URL / --ledger at the existing ledger"
)
#: the head file beside a SQLite ledger (``<ledger>.head``): how much history the ledger held at its last commit
HEAD_SUFFIX = ".head"
#: after a commit, how long the checkpoint that copies it into the ledger file waits for readers of an older
#: snapshot before leaving the rest to the next commit (a reader's transaction is a few milliseconds)
CHECKPOINT_WAIT_S = 1.0

OnWait = Callable[[str], Any]


class PopulationError(DPInputError):
    """A population that is not registered, registered again with other caps, or a source that belongs to
    another population (the message names it and says what to do)."""


class BudgetExceeded(DPInputError):
    """A charge that would bring the account's spending above its cap (nothing was charged)."""


class LedgerError(DPInputError):
    """A fault of the ledger database itself (the message names the ledger and what to do)."""

    #: True when the fault came from the commit of a write transaction, whose outcome is then unknown until
    #: someone looks (:meth:`Account.charge` does); a fault before the commit wrote nothing
    at_commit = False


class LedgerMissing(LedgerError):
    """No ledger where one was expected (``create=False``): the file or the tables do not exist."""


class LedgerExists(LedgerError):
    """:func:`init_ledger` on a location that already holds a ledger (or any file)."""


class LedgerCorrupt(LedgerError):
    """The location holds something that is not an intact ledger: 0 bytes, not SQLite, truncated,
    damaged, tables missing, a newer schema. Never taken as a new ledger (that would reset the caps)."""


class LedgerUnavailable(LedgerError):
    """The ledger exists but cannot be used now: read-only, locked too long, disk full, server down."""


# ----------------------------------------------------------------------------------------------------
# Locations
# ----------------------------------------------------------------------------------------------------
def default_path() -> Path:
    """``$XDG_DATA_HOME/dpcore/ledger.db`` (default ``~/.local/share/dpcore/ledger.db``)."""
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / "dpcore" / "ledger.db"


def default_url() -> str:
    """``DPCORE_LEDGER_URL`` when set (and not empty), else ``sqlite:///`` + :func:`default_path`."""
    url = os.environ.get(ENV_VAR, "").strip()
    return url if url else "sqlite:///" + str(default_path())


def _sqlite_path(url: str) -> Path:
    rest = url[len("sqlite://") :]
    if not rest.startswith("/"):
        raise DPInputError(
            f"a SQLite ledger URL is sqlite:///relative/path.db or sqlite:////absolute/path.db, got {url!r}"
        )
    path = rest[1:]
    if path in ("", ":memory:"):
        raise DPInputError(
            "an in-memory SQLite ledger forgets every charge when the process ends; "
            "give a file, e.g. sqlite:////var/lib/dpcore/ledger.db"
        )
    return Path(path).expanduser()


def _backend_for(url: str | os.PathLike | None) -> _Backend:
    if url is None:
        url = default_url()
    if isinstance(url, os.PathLike):
        url = "sqlite:///" + str(Path(url).expanduser().absolute())
    if not isinstance(url, str):
        raise TypeError(f"the ledger URL must be a string or a path, got {type(url).__name__}")
    url = url.strip()
    if not url:
        raise DPInputError("the ledger URL is empty: give sqlite:///path.db, postgresql://... or None for the default")
    if url.startswith(("postgresql://", "postgres://", "postgresql+psycopg://")):
        return _PostgresBackend(url.replace("postgresql+psycopg://", "postgresql://", 1))
    if url.startswith("sqlite:"):
        if not url.startswith("sqlite://"):
            raise DPInputError(f"a SQLite ledger URL starts with sqlite:/// , got {url!r}")
        return _SqliteBackend(_sqlite_path(url))
    if "://" in url:
        raise DPInputError(
            f"unsupported ledger URL {url.split('://')[0]!r}://...: use sqlite:///path.db or postgresql://..."
        )
    # a bare string is refused rather than silently creating a database file named after it
    raise DPInputError(
        f"a ledger URL starts with sqlite:/// or postgresql://, got {url[:60]!r}; for a file give "
        "'sqlite:////absolute/path/ledger.db' or a pathlib.Path"
    )


def open_ledger(
    url: str | os.PathLike | None = None,
    *,
    create: bool = True,
    on_wait: OnWait | None = None,
    verify: bool = False,
) -> LedgerDB:
    """Open the ledger database at ``url``; with ``create=True`` (the library default) create it when
    nothing exists there yet (SQLite: the file, mode 0600, and its missing folders, mode 0700;
    PostgreSQL: the tables in an existing, empty database).

    ``url``: ``sqlite:///...``, ``postgresql://...`` / ``postgres://...``, a ``pathlib.Path`` of a SQLite
    file, or None for :func:`default_url` (``DPCORE_LEDGER_URL`` or the default SQLite file). A bare
    string without a scheme is refused (it would silently create a file named after a typo).

    Refused whatever ``create`` says (:class:`LedgerCorrupt`): a 0-byte file, a file that is not SQLite,
    a truncated or damaged file, a database without the ledger's tables, a schema newer than this
    dpcore. ``create=False`` also refuses a missing file or schema (:class:`LedgerMissing`, saying how to
    create one): a deleted ledger must not come back as an empty one with full caps.

    ``on_wait(line)`` is called when a transaction of this ledger (a charge, an account, a result)
    waits for another process's lock longer than :data:`LOCK_NOTE_AFTER_S` (then every
    :data:`LOCK_NOTE_EVERY_S`); :meth:`Account.charge` and :meth:`Account.attach_result` take their own.
    A ledger of schema 1 is migrated (hash chain added) in one transaction; result marks journaled by an
    earlier :meth:`Account.attach_result` are replayed into the database and removed from the journal.

    ``verify=True`` (a release: the command line and the app) also runs :meth:`LedgerDB.verify` and refuses a
    damaged ledger with its summary (:meth:`LedgerDB.require_intact`), before anything is charged.
    """
    backend = _backend_for(url)
    backend.open(create=create, on_wait=on_wait)
    db = LedgerDB(backend, on_wait=on_wait)
    db._replay_journal()
    if verify:
        db.require_intact()
    return db


def init_ledger(url: str | os.PathLike | None = None, *, on_wait: OnWait | None = None) -> LedgerDB:
    """Create a new, empty ledger at ``url`` (``python -m dpcore ledger init``); refuses
    (:class:`LedgerExists`) when a file, or the ledger's tables, already exist there: an existing
    ledger is never re-initialised, whatever state it is in."""
    backend = _backend_for(url)
    backend.create_new(on_wait=on_wait)
    # then opened as any ledger is: its key read (a charge through a ledger only created hashed its entry under
    # the public id of an empty key, which verify then found edited) and, for SQLite, the file's identity noted
    backend.open(create=False, on_wait=on_wait)
    return LedgerDB(backend, on_wait=on_wait)


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
    from . import record_fingerprint as records

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
    from . import record_fingerprint as records

    versions = records.check_versions(records.VERSIONS if versions is None else versions)
    import pandas as pd

    if isinstance(data, pd.DataFrame):
        return records.frame_fingerprints(data, versions)
    if isinstance(data, (bytes, bytearray, memoryview)):
        if len(data) == 0:
            raise DPInputError("the dataset is empty (0 bytes): there is nothing to fingerprint")
        from .data import read_table

        frame, _notes = read_table(bytes(data))
        return records.frame_fingerprints(frame, versions)
    if isinstance(data, (str, os.PathLike)):  # read as the engines read it: the same records, the same values
        from .engines.fingerprint import file_fingerprints

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


# ----------------------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    """One charge (append-only): what was charged, when, and the release record written with it.

    ``result`` is the released output attached after the noise was drawn (None when the release was
    lost: a crash or an error after the charge; the charge stands either way).
    """

    id: int
    dataset_id: str
    label: str
    cost: _budget.PrivacyCost
    epsilon: float
    delta: float
    time: str
    record: Any
    result: Any = None
    #: this entry's link in the ledger's hash chain (see LedgerDB.verify)
    entry_hash: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "dataset_id": self.dataset_id,
            "label": self.label,
            "cost": self.cost.to_dict(),
            "epsilon": self.epsilon,
            "delta": self.delta,
            "time": self.time,
            "record": self.record,
            "result": self.result,
            "entry_hash": self.entry_hash,
        }


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _json_default(obj: Any) -> Any:
    if isinstance(obj, np.integer):
        return int(obj)
    if isinstance(obj, np.floating):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, (set, frozenset, tuple)):
        return list(obj)
    if hasattr(obj, "to_dict"):
        return obj.to_dict()
    raise TypeError(f"{type(obj).__name__} is not JSON serialisable")


def _to_json(obj: Any, what: str) -> str:
    try:
        return json.dumps(obj, default=_json_default, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"the {what} must be JSON (numbers finite, keys strings): {exc}") from None


@functools.lru_cache(maxsize=4096)
def _cost_from_json(text: str) -> _budget.PrivacyCost:  # PrivacyCost is frozen: sharing instances is safe
    """A stored cost; ValueError when the text is not one (a damaged entry: the caller names it)."""
    try:
        d = json.loads(text)
        return _budget.PrivacyCost(
            d["kind"], epsilon=d.get("epsilon", 0.0), delta=d.get("delta", 0.0), rho=d.get("rho", 0.0)
        )
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a privacy cost ({_first_line(exc)})") from None


def _stored(parse: Callable[[str], Any], text: str, what: str, entry_id: Any, where: str) -> Any:
    """``parse(text)`` of an entry's stored JSON; a damaged one is :class:`LedgerCorrupt` naming the entry (never a
    JSON traceback): only a person with write access to the database changes stored text."""
    try:
        return parse(text)
    except (TypeError, ValueError) as exc:
        raise LedgerCorrupt(
            f"the ledger database ({where}) is damaged: the {what} of entry {entry_id} cannot be read "
            f"({_first_line(exc)}); run 'python -m dpcore ledger verify' and restore the ledger from a backup "
            "(docs/ledger.md). Nothing was charged or released."
        ) from None


# ----------------------------------------------------------------------------------------------------


# ----------------------------------------------------------------------------------------------------
# The hash chain
# ----------------------------------------------------------------------------------------------------
def _sha(parts: list[Any]) -> str:
    return hashlib.sha256(json.dumps(parts, ensure_ascii=False, separators=(",", ":")).encode("utf-8")).hexdigest()


def _entry_hash(
    prev_hash: str,
    public_id: str,
    account: tuple,
    label: str,
    cost_json: str,
    epsilon: float,
    delta: float,
    stamp: str,
    record_json: str,
) -> str:
    """SHA-256 over the previous entry's hash, the account (by its keyed public id, never the fingerprint:
    the hash may be exported, and a hash over the fingerprint would let an export holder confirm a
    guessed file), the account's label, cap and creation time, and the entry's own content. Floats are
    hashed by ``repr`` (exact round trip through SQLite REAL and PostgreSQL DOUBLE PRECISION)."""
    acct_label, cap_eps, cap_delta, created = account
    return _sha(
        [
            "dpcore-entry-v1",
            prev_hash,
            public_id,
            acct_label,
            repr(float(cap_eps)),
            repr(float(cap_delta)),
            created,
            label,
            cost_json,
            repr(float(epsilon)),
            repr(float(delta)),
            stamp,
            record_json,
        ]
    )


def _result_hash(entry_hash: str, stamp: str, result_json: str) -> str:
    return _sha(["dpcore-result-v1", entry_hash, stamp, result_json])


def _looks_like_fingerprint(dataset_id: str) -> bool:
    """A 64-hex id is a file fingerprint (kept out of messages and listings); anything else is a name."""
    return len(dataset_id) == 64 and all(c in "0123456789abcdef" for c in dataset_id.lower())


def _public_id(key: str, dataset_id: str) -> str:
    return hmac.new(key.encode(), dataset_id.encode("utf-8"), hashlib.sha256).hexdigest()[:32]


# ----------------------------------------------------------------------------------------------------
# Faults -> messages
# ----------------------------------------------------------------------------------------------------
#: what a fault before the commit of a transaction means: the database rolled it back
_NOTHING_WRITTEN_NOTE = "Nothing was written to the ledger by this attempt: nothing was charged or released."
#: what a fault at the commit means when nobody could look afterwards (Account.charge looks, and says which)
_CHARGE_NOTE = (
    "Nothing was revealed; the fault came at the commit, so the charge may or may not have been recorded: "
    "check the archive before releasing again."
)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _note(at_commit: bool) -> str:
    return _CHARGE_NOTE if at_commit else _NOTHING_WRITTEN_NOTE


def _at_commit(fault: LedgerError, at_commit: bool) -> LedgerError:
    """Mark a fault raised by the commit itself (the only moment a transaction's outcome is unknown)."""
    fault.at_commit = at_commit
    return fault


def _sqlite_fault(where: str, exc: sqlite3.Error, *, at_commit: bool = False) -> LedgerError:
    """One line naming the ledger and what to do, for every sqlite3 error a caller could meet. ``at_commit``: the
    error came from COMMIT (the outcome is unknown until someone looks); else nothing was written."""
    return _at_commit(_sqlite_fault_text(where, exc, _note(at_commit)), at_commit)


def _sqlite_fault_text(where: str, exc: sqlite3.Error, note: str) -> LedgerError:
    text = _first_line(exc)
    low = text.lower()
    if "readonly" in low or "read-only" in low:
        return LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: it is read-only for this user "
            f"({text}); make the ledger file, its -wal and -shm files and its folder writable for this "
            f"user (chmod u+w on each) and retry. {note}"
        )
    if "locked" in low or "busy" in low:
        return LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: it stayed locked by another process "
            f"(a release in progress?) for {BUSY_TIMEOUT_S:.0f} s ({text}); retry when it has "
            f"finished. {note}"
        )
    if "full" in low:
        return LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: the disk is full ({text}); free space and retry. {note}"
        )
    if "malformed" in low or "not a database" in low or "corrupt" in low or "disk i/o" in low:
        return LedgerCorrupt(
            f"the ledger database ({where}) is damaged ({text}): restore it from a backup "
            "(docs/ledger.md) and run 'python -m dpcore ledger verify'. Nothing was released."
        )
    if "unable to open" in low:
        return LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: it cannot be opened ({text}); check "
            "that the file and its folder exist and are readable and writable by this user."
        )
    return LedgerUnavailable(f"the ledger database ({where}) is unavailable: {text}. {note}")


def _pg_fault(where: str, exc: BaseException, *, at_commit: bool = False) -> LedgerError:
    return _at_commit(_pg_fault_text(where, exc, _note(at_commit)), at_commit)


def _pg_fault_text(where: str, exc: BaseException, note: str) -> LedgerError:
    text = _first_line(exc)
    name = type(exc).__name__
    if name in ("UndefinedTable", "UndefinedColumn"):
        return LedgerCorrupt(
            f"the ledger database ({where}) lacks the ledger's tables or columns ({text}): restore it "
            "from a backup (docs/ledger.md). Nothing was released."
        )
    if name in ("ReadOnlySqlTransaction", "InsufficientPrivilege"):
        return LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: this user cannot write to it ({text}); "
            f"grant the ledger's role write access or use a primary server. {note}"
        )
    if name in ("DiskFull",):
        return LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: the server's disk is full ({text}). {note}"
        )
    return LedgerUnavailable(
        f"the ledger database ({where}) is unavailable: {text}; check that the PostgreSQL server "
        f"is running and reachable. {note}"
    )


def _lock_note(where: str, waited: float) -> str:
    return (
        f"waiting for the ledger lock held by another release ({where}): {waited:.0f} s so far, "
        f"up to {BUSY_TIMEOUT_S:.0f} s"
    )


# ----------------------------------------------------------------------------------------------------
# The local journal of result marks that could not reach the database
# ----------------------------------------------------------------------------------------------------
@contextlib.contextmanager
def _locked_file(path: Path, flags: int) -> Iterator[int | None]:
    """An fd of ``path`` under an exclusive flock, re-opened when another process replaced or removed the
    file while we waited (a replay unlinks the journal it emptied); None when it does not exist and
    ``flags`` do not create it."""
    while True:
        try:
            fd = os.open(path, flags, 0o600)
        except FileNotFoundError:
            yield None
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                yield fd
                return
        finally:
            os.close(fd)


def _journal_append(paths: list[Path], line: dict[str, Any]) -> Path:
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    errors = []
    for path in paths:
        try:
            if not path.parent.exists():
                _make_private_dirs(path.parent)
            with _locked_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT) as fd:
                assert fd is not None
                os.write(fd, data)
                os.fsync(fd)
            return path
        except OSError as exc:
            errors.append(f"{path}: {exc.strerror or exc}")
    raise LedgerUnavailable(
        "the result could not be recorded in the ledger nor journaled locally ("
        + "; ".join(errors)
        + "); the charge stands, the entry shows 'not revealed'"
    )


def _make_private_dirs(folder: Path) -> None:
    """Create ``folder`` and its missing parents, each mode 0700 (they may hold the ledger or its journal)."""
    missing = []
    cur = folder
    while not cur.exists():
        missing.append(cur)
        if cur.parent == cur:
            break
        cur = cur.parent
    for path in reversed(missing):
        try:
            path.mkdir(mode=0o700)
        except FileExistsError:
            continue
        os.chmod(path, 0o700)  # mkdir's mode is masked by the umask; 0700 is what we mean


# ----------------------------------------------------------------------------------------------------
# How much history a ledger holds (the head file of a SQLite ledger)
# ----------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class _History:
    """How much history a ledger holds. Every table is append-only, so each count only grows from one commit to
    the next, and the last entry (its id and hash) names the end of the hash chain: a ledger that holds less than
    an earlier state of itself, or whose entry of that state's chain head has another hash, lost history."""

    entries: int
    last_entry: int
    head: str
    results: int
    accounts: int
    populations: int
    sources: int

    _COUNTS = ("entries", "results", "accounts", "populations", "sources")

    def to_json(self) -> str:
        return json.dumps({"v": 1, **{k: getattr(self, k) for k in self.__dataclass_fields__}}, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> _History:
        """Raises ValueError when ``text`` is not a head this dpcore wrote."""
        try:
            d = json.loads(text)
            if d.pop("v") != 1:
                raise ValueError("an unknown version")
            out = cls(**d)
        except (TypeError, KeyError, AttributeError) as exc:
            raise ValueError(f"not a ledger head ({exc})") from None
        if not isinstance(out.head, str) or not all(
            isinstance(getattr(out, k), int) and getattr(out, k) >= 0 for k in (*cls._COUNTS, "last_entry")
        ):
            raise ValueError("not a ledger head (a count is not a whole number)")
        return out

    def describe(self) -> str:
        return (
            f"{self.entries} entr{'y' if self.entries == 1 else 'ies'}"
            + (f" up to entry {self.last_entry} (chain head {self.head[:16]})" if self.last_entry else "")
            + f", {self.results} result(s), {self.accounts} account(s), {self.populations} population(s), "
            f"{self.sources} source(s)"
        )

    def lacks(self, earlier: _History) -> list[str]:
        """What of ``earlier`` (a state this ledger had) it no longer holds, by count (the chain head is checked
        against the database: :meth:`_SqliteBackend.history_problems`)."""
        singular = {"entries": "entry", "results": "result", "accounts": "account", "populations": "population"}
        return [
            f"{n} {singular.get(k, 'source') if n == 1 else k}"
            for k in self._COUNTS
            if (n := getattr(earlier, k) - getattr(self, k)) > 0
        ]


# ----------------------------------------------------------------------------------------------------
# Backends: the SQL differs only in placeholders, the locking statements and the schema DDL.
# ----------------------------------------------------------------------------------------------------
class _Backend:
    name = ""
    ph = "?"
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

    def _user_journal(self, key: str) -> Path:
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:32]
        return default_path().parent / "pending-results" / f"{digest}.jsonl"

    # ----- schema, shared by both backends ---------------------------------------------------------
    def _migrate_1_to_2(self, conn: Any, *, record: bool) -> None:
        """Chain the existing entries once, in id order (oldest first), hash the results, make every
        table append-only, record the schema version. Runs inside the caller's write transaction."""
        ph = self.ph
        self._drop_triggers(conn)
        self._add_hash_columns(conn)
        key = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'public_id_key'").fetchone()[0]
        accounts = {
            r[0]: (r[1], float(r[2]), float(r[3]), r[4])
            for r in conn.execute(
                "SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts"
            ).fetchall()
        }
        prev = CHAIN_GENESIS
        hashes: dict[int, str] = {}
        rows = conn.execute(
            "SELECT id, dataset_id, label, cost, epsilon, delta, time, record FROM dpcore_entries ORDER BY id"
        ).fetchall()
        for r in rows:
            h = _entry_hash(prev, _public_id(key, r[1]), accounts[r[1]], r[2], r[3], r[4], r[5], r[6], r[7])
            conn.execute(
                f"UPDATE dpcore_entries SET prev_hash = {ph}, entry_hash = {ph} WHERE id = {ph}", (prev, h, int(r[0]))
            )
            hashes[int(r[0])] = h
            prev = h
        for r in conn.execute("SELECT entry_id, time, result FROM dpcore_results ORDER BY entry_id").fetchall():
            conn.execute(
                f"UPDATE dpcore_results SET result_hash = {ph} WHERE entry_id = {ph}",
                (_result_hash(hashes[int(r[0])], r[1], r[2]), int(r[0])),
            )
        conn.execute(f"UPDATE dpcore_meta SET value = {ph} WHERE key = 'schema_version'", ("2",))
        if record:
            conn.execute(
                f"INSERT INTO dpcore_meta(key, value) VALUES ('migrated_1_to_2', {ph})",
                (json.dumps({"time": _now(), "entries_chained": len(rows), "software": f"dpcore {__version__}"}),),
            )
        self._create_triggers(conn)

    def _migrate(self, conn: Any, version: int, *, record: bool) -> None:
        """Bring a ledger of schema ``version`` to :data:`SCHEMA_VERSION`, one step after the other, inside the
        caller's write transaction."""
        if version < 2:
            self._migrate_1_to_2(conn, record=record)
        if version < 3:
            self._migrate_2_to_3(conn, record=record)
        if version < 4:
            self._migrate_3_to_4(conn, record=record)

    def _migrate_3_to_4(self, conn: Any, *, record: bool) -> None:
        """The record fingerprint versions the ledger computes for every source it sees, fixed here: version 2
        only for a ledger without record sources (a new one), versions 1 and 2 for a ledger whose sources were
        attached by their version-1 fingerprint. A re-saved copy of such a source (or the same file under
        another plan name) must still find its population, and only its version-1 fingerprint is attached."""
        ph = self.ph
        legacy = conn.execute(
            f"SELECT COUNT(*) FROM dpcore_sources WHERE software NOT LIKE {ph}", ("%" + FILE_BYTES_MARK,)
        ).fetchone()[0]
        versions = [1, 2] if legacy else [2]
        conn.execute(
            f"INSERT INTO dpcore_meta(key, value) VALUES ('record_fingerprints', {ph})", (json.dumps(versions),)
        )
        self._set_schema_version(conn, 4)
        if record:
            conn.execute(
                f"INSERT INTO dpcore_meta(key, value) VALUES ('migrated_3_to_4', {ph})",
                (json.dumps({"time": _now(), "record_fingerprints": versions, "software": f"dpcore {__version__}"}),),
            )

    def _set_schema_version(self, conn: Any, version: int) -> None:  # pragma: no cover - abstract
        """Write the schema version: the one UPDATE of the key table, its guard lifted inside the transaction."""
        raise NotImplementedError

    def _migrate_2_to_3(self, conn: Any, *, record: bool) -> None:
        """Populations and sources. Every existing account becomes a population with its cap and history:
        an account whose id is a name (the command line's plan ``dataset``) keeps it as the population's
        name, so old plans keep working; an account keyed by a file fingerprint (the app's) is named by its
        label (or ``account-<public id>`` when the label is empty or taken). Nothing is re-charged, no
        cap changes, no entry is rewritten: the chain continues across the upgrade."""
        ph = self.ph
        self._drop_triggers(conn)  # the key table refuses UPDATE (schema_version): re-created below
        self._create_population_tables(conn)
        key = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'public_id_key'").fetchone()[0]
        taken: set[str] = set()
        rows = conn.execute(
            "SELECT dataset_id, label, created FROM dpcore_accounts ORDER BY created, dataset_id"
        ).fetchall()
        named = [r for r in rows if not _looks_like_fingerprint(r[0])]
        for dataset_id, _label, _created in named:
            taken.add(dataset_id)
        for dataset_id, label, _created in rows:
            if _looks_like_fingerprint(dataset_id):
                name = " ".join(str(label or "").split())[:200]
                if not name or name in taken or _looks_like_fingerprint(name):
                    name = f"account-{_public_id(key, dataset_id)[:12]}"
            else:
                name = dataset_id
            taken.add(name)
            conn.execute(
                f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, {ph})",
                (name, dataset_id, _now(), f"dpcore {__version__} (migration 2 to 3)"),
            )
        conn.execute(f"UPDATE dpcore_meta SET value = {ph} WHERE key = 'schema_version'", ("3",))
        if record:
            conn.execute(
                f"INSERT INTO dpcore_meta(key, value) VALUES ('migrated_2_to_3', {ph})",
                (
                    json.dumps(
                        {"time": _now(), "populations_from_accounts": len(rows), "software": f"dpcore {__version__}"}
                    ),
                ),
            )
        self._create_triggers(conn)

    def _create_population_tables(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _read_meta(self, conn: Any) -> dict[str, str]:
        return {r[0]: r[1] for r in conn.execute("SELECT key, value FROM dpcore_meta").fetchall()}

    def _check_version(self, meta: dict[str, str]) -> int:
        try:
            version = int(meta.get("schema_version", ""))
        except ValueError:
            raise LedgerCorrupt(
                f"the ledger database ({self.describe()}) has no valid schema version: restore it "
                "from a backup (docs/ledger.md)"
            ) from None
        if version > SCHEMA_VERSION:
            raise LedgerCorrupt(
                f"the ledger database ({self.describe()}) has schema version {version}, newer than this "
                f"dpcore {__version__} understands ({SCHEMA_VERSION}): upgrade dpcore"
            )
        if "public_id_key" not in meta:
            raise LedgerCorrupt(
                f"the ledger database ({self.describe()}) has lost its key (dpcore_meta.public_id_key): "
                "restore it from a backup (docs/ledger.md)"
            )
        return version

    def _drop_triggers(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _add_hash_columns(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _create_triggers(self, conn: Any) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def trigger_names(self, conn: Any) -> set[str]:  # pragma: no cover - abstract
        raise NotImplementedError

    def expected_triggers(self) -> set[str]:  # pragma: no cover - abstract
        raise NotImplementedError


_SQLITE_V1 = """
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
#: schema 1's triggers (dropped by the migration)
_SQLITE_V1_TRIGGERS = (
    "dpcore_entries_no_update",
    "dpcore_entries_no_delete",
    "dpcore_results_no_update",
    "dpcore_results_no_delete",
    "dpcore_accounts_no_delete",
    "dpcore_accounts_cap_fixed",
)


def _sqlite_v2_triggers() -> dict[str, str]:
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


_SQLITE_V3 = """
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


def _sqlite_v3_triggers() -> dict[str, str]:
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


class _SqliteBackend(_Backend):
    name = "sqlite"
    ph = "?"

    def __init__(self, path: Path) -> None:
        self.path = Path(path).absolute()
        # one connection per backend object and process, used by one thread at a time; every use is a
        # complete transaction, so other processes' commits are seen at the next BEGIN
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0
        self._inode: tuple[int, int] | None = None

    def describe(self) -> str:
        return f"SQLite file {self.path}"

    def journal_paths(self) -> list[Path]:
        """Beside the ledger (backed up and moved with it); in the user's data folder when that folder is
        not writable (a read-only ledger folder must not lose the mark)."""
        return [self.path.with_name(self.path.name + ".pending.jsonl"), self._user_journal(f"sqlite:{self.path}")]

    def _connect_path(self, path: Path) -> sqlite3.Connection:
        # mode=rw: never create a database file as a side effect of opening (a deleted ledger would come back
        # empty); creation is create_new's job, under a temporary name
        uri = "file:" + urllib.parse.quote(str(path)) + "?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
        except sqlite3.Error as exc:
            raise _sqlite_fault(self.describe(), exc) from None
        return conn

    def connect(self) -> sqlite3.Connection:
        return self._connect_path(self.path)

    # ----- opening ---------------------------------------------------------------------------------
    def _check_file(self) -> None:
        """Refuse what is not an intact SQLite file without opening it: 0 bytes, another format, shorter
        than its header says (truncated; only when no WAL file exists, which may legitimately hold pages
        a crash left between the WAL and the file)."""
        where = self.describe()
        if self.path.is_dir():
            raise LedgerCorrupt(f"the ledger location {self.path} is a folder, not a ledger file")
        try:
            with open(self.path, "rb") as fh:
                header = fh.read(100)
                size = os.fstat(fh.fileno()).st_size
        except OSError as exc:
            raise LedgerUnavailable(
                f"the ledger database ({where}) cannot be read: {exc.strerror or exc}; check the file's permissions"
            ) from None
        if size == 0:
            raise LedgerCorrupt(
                f"the ledger database ({where}) is an empty file (0 bytes): it was truncated or "
                "replaced, and its accounts, caps and history are not in it. dpcore never takes an empty "
                "file as a new ledger (that would restore full caps): restore the file from a backup "
                "(docs/ledger.md), or remove it and run 'python -m dpcore ledger init' only if this is "
                "truly a new ledger"
            )
        if not header.startswith(_SQLITE_HEADER):
            raise LedgerCorrupt(
                f"the ledger database ({where}) is not a SQLite database (it does not start with the "
                "SQLite header): not a dpcore ledger. Point DPCORE_LEDGER_URL / --ledger at the ledger "
                "file, or restore it from a backup (docs/ledger.md)"
            )
        wal = self.path.with_name(self.path.name + "-wal")
        if len(header) == 100 and not (wal.exists() and wal.stat().st_size > 0):
            page_size = int.from_bytes(header[16:18], "big")
            page_size = 65536 if page_size == 1 else page_size
            pages = int.from_bytes(header[28:32], "big")
            if pages and header[24:28] == header[92:96] and size < pages * page_size:
                raise LedgerCorrupt(
                    f"the ledger database ({where}) is truncated ({size} bytes; its header says "
                    f"{pages * page_size}): restore it from a backup (docs/ledger.md)"
                )
        elif len(header) < 100:
            raise LedgerCorrupt(
                f"the ledger database ({where}) is truncated ({size} bytes, shorter than a SQLite "
                "header): restore it from a backup (docs/ledger.md)"
            )

    def _stat_key(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return (st.st_dev, st.st_ino)

    def open(self, *, create: bool, on_wait: OnWait | None) -> None:
        try:
            exists = os.path.lexists(self.path)
        except OSError as exc:  # pragma: no cover - lexists swallows most; a folder we may not search
            raise LedgerUnavailable(f"cannot look for the ledger at {self.path}: {exc.strerror or exc}") from None
        if not exists:
            self._refuse_a_lost_ledger()
            if not create:
                raise LedgerMissing(
                    f"there is no ledger at {self.path} (the file does not exist): "
                    + _INIT_HINT.format(url="sqlite:///" + str(self.path))
                )
            with contextlib.suppress(LedgerExists):  # another process created it meanwhile: open that one
                self.create_new(on_wait=on_wait)
        self._check_file()
        self._inode = self._stat_key()
        self._setup(on_wait)

    def _refuse_a_lost_ledger(self) -> None:
        """A head file without its ledger: the ledger that held that history was deleted or moved. A new ledger
        (or a silent empty one) in its place would restart every cap, so both are refused until a person decides."""
        if os.path.lexists(self.head_path):
            raise LedgerMissing(
                f"there is no ledger at {self.path}, but the head file {self.head_path} of a ledger that was there "
                "is: that ledger was deleted or moved, with its history. Restore it (docs/ledger.md, Restore), or "
                f"point DPCORE_LEDGER_URL / --ledger at it; only if a new ledger with fresh caps is truly meant, move "
                f"{self.head_path.name} away first. Nothing was charged"
            )

    def create_new(self, *, on_wait: OnWait | None) -> None:
        """Build the ledger under a temporary name (mode 0600) and link it into place, so a crash never leaves a
        0-byte or half-made file under the ledger's name (which open would then refuse)."""
        if os.path.lexists(self.path):
            raise LedgerExists(
                f"a file already exists at {self.path}: dpcore never re-initialises an existing ledger "
                "(run 'python -m dpcore ledger verify' to check it; move it away yourself if it is not one)"
            )
        self._refuse_a_lost_ledger()
        try:
            _make_private_dirs(self.path.parent)
        except OSError as exc:
            raise LedgerUnavailable(
                f"cannot create the folder of the ledger database {self.path}: {exc.strerror or exc}"
            ) from None
        tmp = self.path.with_name(f".{self.path.name}.init-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            conn = self._connect_path(tmp)
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":  # pragma: no cover - e.g. a network file system
                    raise LedgerUnavailable(f"the ledger database {self.path} cannot use WAL mode (got {mode!r})")
                conn.execute("BEGIN IMMEDIATE")
                for stmt in _split_sql(_SQLITE_V1):
                    conn.execute(stmt)
                conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('schema_version', '1')")
                conn.execute(
                    "INSERT INTO dpcore_meta(key, value) VALUES ('public_id_key', ?)", (secrets.token_hex(32),)
                )
                conn.execute(
                    "INSERT INTO dpcore_meta(key, value) VALUES ('created', ?)",
                    (json.dumps({"time": _now(), "software": f"dpcore {__version__}"}),),
                )
                self._migrate(conn, 1, record=False)
                history = self._history(conn)
                conn.execute("COMMIT")
            finally:
                conn.close()  # the last connection checkpoints the WAL into the file and removes it
            try:
                os.link(tmp, self.path)  # atomic; fails when someone else created the ledger meanwhile
            except FileExistsError:
                raise LedgerExists(f"a ledger was created at {self.path} by another process meanwhile") from None
            if history is not None:
                self._record_history(history)
            with contextlib.suppress(OSError):
                dir_fd = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
        except sqlite3.Error as exc:
            raise _sqlite_fault(self.describe(), exc) from None
        except OSError as exc:
            raise LedgerUnavailable(f"cannot create the ledger database {self.path}: {exc.strerror or exc}") from None
        finally:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    os.unlink(str(tmp) + suffix)

    def _setup(self, on_wait: OnWait | None) -> None:
        where = self.describe()
        with self.reading() as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
            ours = tables & set(_TABLES)
            if not ours:
                raise LedgerCorrupt(
                    f"the ledger database ({where}) is a SQLite database without the ledger's tables: "
                    "not a dpcore ledger, and dpcore will not turn it into one. Point DPCORE_LEDGER_URL / "
                    "--ledger at the ledger file, or give a new path to 'python -m dpcore ledger init'"
                )
            if ours != set(_TABLES):
                raise LedgerCorrupt(
                    f"the ledger database ({where}) lacks the tables {sorted(set(_TABLES) - ours)}: "
                    "restore it from a backup (docs/ledger.md)"
                )
            meta = self._read_meta(conn)
        version = self._check_version(meta)
        if version < SCHEMA_VERSION:
            with self.locked(None, on_wait) as conn:
                meta = self._read_meta(conn)
                version = self._check_version(meta)
                if version < SCHEMA_VERSION:  # not migrated by a racing process meanwhile
                    self._migrate(conn, version, record=True)
            self._make_private()
        self.public_id_key = meta["public_id_key"]

    def _make_private(self) -> None:
        """Schema-1 ledgers were created with the umask's mode (often 0644, world-readable) although they hold
        the fingerprints and the key: at the upgrade, make the file and its -wal/-shm files 0600 when this
        user owns them (a file owned by someone else is left as its owner set it)."""
        for path in (
            self.path,
            self.path.with_name(self.path.name + "-wal"),
            self.path.with_name(self.path.name + "-shm"),
        ):
            with contextlib.suppress(OSError):
                if os.stat(path).st_uid == os.geteuid():
                    os.chmod(path, 0o600)

    # ----- schema 2 --------------------------------------------------------------------------------
    def _drop_triggers(self, conn: Any) -> None:
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'dpcore%'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')

    def _add_hash_columns(self, conn: Any) -> None:
        have = {r[1] for r in conn.execute("PRAGMA table_info(dpcore_entries)").fetchall()}
        for col in ("prev_hash", "entry_hash"):
            if col not in have:
                conn.execute(f"ALTER TABLE dpcore_entries ADD COLUMN {col} TEXT")
        if "result_hash" not in {r[1] for r in conn.execute("PRAGMA table_info(dpcore_results)").fetchall()}:
            conn.execute("ALTER TABLE dpcore_results ADD COLUMN result_hash TEXT")

    def _create_triggers(self, conn: Any) -> None:
        for sql in _sqlite_v2_triggers().values():
            conn.execute(sql)

    def _set_schema_version(self, conn: Any, version: int) -> None:
        conn.execute("DROP TRIGGER IF EXISTS dpcore_meta_no_update")
        conn.execute("UPDATE dpcore_meta SET value = ? WHERE key = 'schema_version'", (str(version),))
        conn.execute(_sqlite_v2_triggers()["dpcore_meta_no_update"])

    def _create_population_tables(self, conn: Any) -> None:
        for stmt in _split_sql(_SQLITE_V3):
            conn.execute(stmt)
        for sql in _sqlite_v3_triggers().values():
            conn.execute(sql)

    def trigger_names(self, conn: Any) -> set[str]:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()}

    def expected_triggers(self) -> set[str]:
        return set(_sqlite_v2_triggers()) | set(_sqlite_v3_triggers())

    # ----- transactions ----------------------------------------------------------------------------
    def _begin(self, conn: sqlite3.Connection, begin: str, on_wait: OnWait | None) -> None:
        """BEGIN, waiting up to BUSY_TIMEOUT_S for another process's write lock. SQLite's busy handler cannot
        call back into Python, so the wait is cut into slices (the busy timeout of each try) and ``on_wait``
        hears about it between slices."""
        if on_wait is None or begin != "BEGIN IMMEDIATE":
            conn.execute(begin)
            return
        start = time.monotonic()
        notes = 0
        try:
            while True:
                elapsed = time.monotonic() - start
                next_note = LOCK_NOTE_AFTER_S + notes * LOCK_NOTE_EVERY_S
                budget = min(BUSY_TIMEOUT_S - elapsed, max(0.01, next_note - elapsed))
                conn.execute(f"PRAGMA busy_timeout = {max(1, int(budget * 1000))}")
                try:
                    conn.execute(begin)
                    return
                except sqlite3.OperationalError as exc:
                    low = str(exc).lower()
                    waited = time.monotonic() - start
                    if ("locked" not in low and "busy" not in low) or waited >= BUSY_TIMEOUT_S - 0.005:
                        raise
                    if waited >= next_note - 0.005:
                        notes += 1
                        on_wait(_lock_note(self.describe(), waited))
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")

    @contextlib.contextmanager
    def _transaction(self, begin: str, on_wait: OnWait | None = None) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._inode is not None and self._stat_key() != self._inode:
                # the pooled connection would write into a deleted or replaced file, where nobody will read it
                self._drop()
                raise LedgerMissing(
                    f"the ledger file {self.path} was deleted or replaced while in use: its accounts "
                    "and history are not in the file now at that path. Restore it from a backup "
                    "(docs/ledger.md); nothing was charged or released by this attempt"
                )
            conn = self._conn
            if conn is None or self._pid != os.getpid():
                conn = self._conn = self.connect()
                self._pid = os.getpid()
            try:
                self._begin(conn, begin, on_wait)
            except sqlite3.Error as exc:
                self._drop()
                raise _sqlite_fault(self.describe(), exc) from exc
            except BaseException:
                self._drop()
                raise
            write = begin == "BEGIN IMMEDIATE"
            try:
                if write:  # a ledger that lost history is never written to: a new charge would hide the loss
                    problems = self.history_problems(conn)
                    if problems:
                        raise LedgerCorrupt(
                            f"the ledger database ({self.describe()}) is damaged: {'; '.join(problems)}. "
                            f"{_NOTHING_WRITTEN_NOTE}"
                        )
                yield conn
                history = self._history(conn) if write else None
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except BaseException:
                    self._drop()
                if isinstance(exc, sqlite3.Error):
                    raise _sqlite_fault(self.describe(), exc) from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                self._drop()  # closing without COMMIT rolls back
                raise _sqlite_fault(self.describe(), exc, at_commit=True) from exc
            except BaseException:
                self._drop()
                raise
            if write:
                self._after_commit(conn, history)

    # ----- the history in one file ------------------------------------------------------------------
    def _after_commit(self, conn: sqlite3.Connection, history: _History | None) -> None:
        """After a write: copy it from the WAL into the ledger file, then record the head beside it.

        Every dpcore command ends with ``os._exit`` (:func:`dpcore.cli.exit_after_command`), so SQLite's own
        checkpoint (by the last connection to close, or every 1,000 pages) never runs, and without one the whole
        history stays in the ``-wal`` file: a ``.db`` copied without it holds no account. A PASSIVE checkpoint after every
        commit copies what no reader still needs (all of it, unless another process is inside a read); if
        some is left, a FULL one waits up to :data:`CHECKPOINT_WAIT_S` for those readers. A rollback journal
        (``journal_mode = DELETE``) keeps the file whole too, but lets a reader block a charge and cost more per
        commit (docs/benchmarks.md, the ledger's durability). The commit stands whatever happens here: it is
        durable in the WAL (``synchronous = FULL``), and a checkpoint left undone is done by the next commit."""
        with contextlib.suppress(sqlite3.Error):
            _busy, wal_frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            if copied < wal_frames:
                conn.execute(f"PRAGMA busy_timeout = {int(CHECKPOINT_WAIT_S * 1000)}")
                try:
                    conn.execute("PRAGMA wal_checkpoint(FULL)").fetchone()
                finally:
                    conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        if history is not None:
            self._record_history(history)

    @property
    def head_path(self) -> Path:
        """The head file beside the ledger: how much history it held at its last commit."""
        return self.path.with_name(self.path.name + HEAD_SUFFIX)

    def _history(self, conn: sqlite3.Connection) -> _History | None:
        """How much history the database holds now (inside a transaction); None before the ledger is at this
        dpcore's schema (a migration records it when it commits)."""
        row = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            return None
        last = conn.execute("SELECT id, entry_hash FROM dpcore_entries ORDER BY id DESC LIMIT 1").fetchone()

        def count(table: str) -> int:
            return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

        return _History(
            entries=count("dpcore_entries"),
            last_entry=0 if last is None else int(last[0]),
            head=CHAIN_GENESIS if last is None else str(last[1] or ""),
            results=count("dpcore_results"),
            accounts=count("dpcore_accounts"),
            populations=count("dpcore_populations"),
            sources=count("dpcore_sources"),
        )

    def _recorded_history(self) -> _History | None:
        """The head file's history; None when there is none; ValueError or OSError when it cannot be read."""
        try:
            text = self.head_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        return _History.from_json(text)

    def _record_history(self, history: _History) -> None:
        """Replace the head file (atomically: a new file, synced, renamed over) when ``history`` holds all it
        records. It is written after the commit, so it may lag the database (a crash in between, or racing
        writers: an older state renamed last), never lead it; a lag is no alarm, and the next commit catches up.
        A head file that cannot be written (a read-only folder) is left as it is: the commit stands."""
        path = self.head_path
        try:
            current = self._recorded_history()
        except (OSError, ValueError):
            return  # unreadable: the next write refuses and says so (history_problems); a person decides
        if current == history or (current is not None and history.lacks(current)):
            return
        tmp = path.with_name(f".{path.name}.{os.getpid()}-{secrets.token_hex(4)}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, (history.to_json() + "\n").encode("utf-8"))
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def history_problems(self, conn: Any) -> list[str]:
        """What the database lacks of the history its head file records (inside a transaction)."""
        try:
            recorded = self._recorded_history()
        except (OSError, ValueError) as exc:
            return [
                f"the head file {self.head_path} cannot be read ({_first_line(exc)}): dpcore writes it after every "
                "commit and nothing else should; compare it with the ledger, then move it away (the next write "
                "records a new one)"
            ]
        now = self._history(conn) if recorded is not None else None
        if recorded is None or now is None:
            return []
        lost = now.lacks(recorded)
        if recorded.last_entry:
            row = conn.execute("SELECT entry_hash FROM dpcore_entries WHERE id = ?", (recorded.last_entry,)).fetchone()
            if row is None or row[0] != recorded.head:
                lost.append(f"entry {recorded.last_entry} with the chain head {recorded.head[:16]}")
        if not lost:
            return []
        return [
            f"history lost: the head file {self.head_path.name} (written after every commit) records "
            f"{recorded.describe()}, the database holds {now.describe()}: it lacks {', '.join(lost)}. The ledger "
            "was copied or restored without its -wal file, or from an older copy: restore the newest copy with its "
            "-wal file ('python -m dpcore ledger backup' makes whole copies); to keep an older backup on purpose, "
            f"move {self.head_path.name} away, then count the missing releases against their caps before any new "
            "release (docs/ledger.md, Restore)"
        ]

    def history_notes(self) -> list[str]:
        if os.path.lexists(self.head_path):
            return []
        return [f"no head file beside the ledger yet ({self.head_path.name}: written at its next write)"]

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None

    @contextlib.contextmanager
    def locked(self, dataset_id: str | None, on_wait: OnWait | None = None) -> Iterator[sqlite3.Connection]:
        """One write transaction holding SQLite's database-wide write lock (``BEGIN IMMEDIATE``)."""
        with self._transaction("BEGIN IMMEDIATE", on_wait) as conn:
            yield conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        with self._transaction("BEGIN") as conn:  # one consistent snapshot for the whole read
            yield conn


def _split_sql(script: str) -> list[str]:
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


_PG_V1 = [
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
_PG_REFUSE_FUNCTION = """CREATE OR REPLACE FUNCTION dpcore_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'dpcore ledger: % on % is refused (append-only; caps and the key are fixed)', TG_OP, TG_TABLE_NAME;
    END $$"""
#: name -> when; row triggers refuse UPDATE/DELETE, statement triggers TRUNCATE (which fires no row trigger)
_PG_TRIGGERS = {
    **{f"{t}_append_only": f"BEFORE UPDATE OR DELETE ON {t} FOR EACH ROW" for t in _TABLES},
    **{f"{t}_no_truncate": f"BEFORE TRUNCATE ON {t} FOR EACH STATEMENT" for t in _TABLES},
}
_PG_V1_TRIGGERS = ("dpcore_entries_append_only", "dpcore_results_append_only", "dpcore_accounts_fixed")
_PG_V3 = [
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
_PG_V3_TRIGGERS = {
    **{f"{t}_append_only": f"BEFORE UPDATE OR DELETE ON {t} FOR EACH ROW" for t in _POPULATION_TABLES},
    **{f"{t}_no_truncate": f"BEFORE TRUNCATE ON {t} FOR EACH STATEMENT" for t in _POPULATION_TABLES},
}


class _PostgresBackend(_Backend):
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
        return [self._user_journal("postgresql:" + key)]

    def connect(self):
        try:
            import psycopg
        except ImportError:
            raise LedgerUnavailable(
                "a PostgreSQL ledger needs the psycopg package: pip install 'psycopg[binary]'"
            ) from None
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise LedgerUnavailable(
                f"cannot connect to the PostgreSQL ledger ({self.describe()}): {_first_line(exc)}; "
                "check that the server is running and the URL is right"
            ) from None

    def _tables(self, conn: Any) -> set[str]:
        return {
            r[0]
            for r in conn.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                "AND table_name = ANY(%s)",
                (list(_TABLES),),
            ).fetchall()
        }

    def _create_schema(self, conn: Any) -> None:
        for stmt in _PG_V1:
            conn.execute(stmt)
        conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('schema_version', '1')")
        conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('public_id_key', %s)", (secrets.token_hex(32),))
        conn.execute(
            "INSERT INTO dpcore_meta(key, value) VALUES ('created', %s)",
            (json.dumps({"time": _now(), "software": f"dpcore {__version__}"}),),
        )
        self._migrate(conn, 1, record=False)

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
                    raise LedgerExists(
                        f"the ledger database ({where}) already holds ledger tables: dpcore never "
                        "re-initialises an existing ledger (run 'python -m dpcore ledger verify')"
                    )
                if not tables:
                    if not create:
                        raise LedgerMissing(
                            f"there is no ledger in the {where} (its tables do not exist): "
                            + _INIT_HINT.format(url="postgresql://...")
                        )
                    self._create_schema(conn)
                elif tables != set(_TABLES):
                    raise LedgerCorrupt(
                        f"the ledger database ({where}) lacks the tables {sorted(set(_TABLES) - tables)}: "
                        "restore it from a backup (docs/ledger.md)"
                    )
                meta = self._read_meta(conn)
                version = self._check_version(meta)
                if version < SCHEMA_VERSION:
                    self._migrate(conn, version, record=True)
                self.public_id_key = meta["public_id_key"]
        except psycopg.Error as exc:
            raise _pg_fault(where, exc) from None
        finally:
            conn.close()

    def _drop_triggers(self, conn: Any) -> None:
        for name in (*_PG_V1_TRIGGERS, *_PG_TRIGGERS):
            table = next((t for t in _TABLES if name.startswith(t)), None)
            if table is not None:
                conn.execute(f"DROP TRIGGER IF EXISTS {name} ON {table}")

    def _add_hash_columns(self, conn: Any) -> None:
        conn.execute("ALTER TABLE dpcore_entries ADD COLUMN IF NOT EXISTS prev_hash TEXT")
        conn.execute("ALTER TABLE dpcore_entries ADD COLUMN IF NOT EXISTS entry_hash TEXT")
        conn.execute("ALTER TABLE dpcore_results ADD COLUMN IF NOT EXISTS result_hash TEXT")

    def _create_triggers(self, conn: Any) -> None:
        for col, table in (
            ("prev_hash", "dpcore_entries"),
            ("entry_hash", "dpcore_entries"),
            ("result_hash", "dpcore_results"),
        ):
            conn.execute(f"ALTER TABLE {table} ALTER COLUMN {col} SET NOT NULL")  # filled by the migration
        conn.execute(_PG_REFUSE_FUNCTION)
        for name, when in _PG_TRIGGERS.items():
            conn.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION dpcore_refuse_change()")

    def _set_schema_version(self, conn: Any, version: int) -> None:
        conn.execute("DROP TRIGGER IF EXISTS dpcore_meta_append_only ON dpcore_meta")
        conn.execute("UPDATE dpcore_meta SET value = %s WHERE key = 'schema_version'", (str(version),))
        conn.execute(
            f"CREATE TRIGGER dpcore_meta_append_only {_PG_TRIGGERS['dpcore_meta_append_only']} "
            "EXECUTE FUNCTION dpcore_refuse_change()"
        )

    def _create_population_tables(self, conn: Any) -> None:
        for stmt in _PG_V3:
            conn.execute(stmt)
        conn.execute(_PG_REFUSE_FUNCTION)
        for name, when in _PG_V3_TRIGGERS.items():
            conn.execute(f"CREATE TRIGGER {name} {when} EXECUTE FUNCTION dpcore_refuse_change()")

    def trigger_names(self, conn: Any) -> set[str]:
        return {
            r[0]
            for r in conn.execute(
                "SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid "
                "WHERE NOT t.tgisinternal AND c.relname = ANY(%s) AND c.relnamespace = current_schema()::regnamespace",
                (list(_TABLES + _POPULATION_TABLES),),
            ).fetchall()
        }

    def expected_triggers(self) -> set[str]:
        return set(_PG_TRIGGERS) | set(_PG_V3_TRIGGERS)

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
                    raise LedgerUnavailable(
                        f"the ledger database ({self.describe()}) is unavailable: it stayed locked "
                        f"by another process for {BUSY_TIMEOUT_S:.0f} s; retry when that release has "
                        f"finished. {_NOTHING_WRITTEN_NOTE}"
                    ) from None
                if on_wait is not None and waited >= next_note - 0.005:
                    notes += 1
                    on_wait(_lock_note(self.describe(), waited))

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


# ----------------------------------------------------------------------------------------------------
# The ledger and its accounts
# ----------------------------------------------------------------------------------------------------
def check_population_name(name: Any) -> str:
    """A population name: a non-empty one-line string of at most 200 characters, surrounding blanks removed."""
    if not isinstance(name, str):
        raise TypeError(f"a population name must be a string, got {type(name).__name__}")
    text = name.strip()
    if not text:
        raise DPInputError(
            "the population name is empty: name the people the budget protects, e.g. 'CPS 2023 households'"
        )
    if len(text) > 200 or any(ord(c) < 32 for c in text):
        raise DPInputError("a population name is one line of at most 200 characters")
    if _looks_like_fingerprint(text):
        raise DPInputError(
            "a population name cannot be 64 hex digits (that is how record fingerprints look): "
            "give it a name people read"
        )
    return text


#: the end of the ``software`` text of a source row that is a byte key, not a record fingerprint
FILE_BYTES_MARK = " (file bytes)"
#: the end of the ``software`` text of a record fingerprint of version N (schema 4 on; the sources of schema 3
#: carry no mark: they are version 1)
RECORDS_MARK = " (records v{version})"
#: ... and of a record fingerprint attached to a source the ledger already held by another version (a version-1
#: source of schema 3 seen again): :meth:`LedgerDB.source_count` counts the source once
KNOWN_SOURCE_MARK = ", known)"


def _check_fingerprint(fingerprint: Any) -> str:
    if not isinstance(fingerprint, str) or not _looks_like_fingerprint(fingerprint):
        raise DPInputError("a source fingerprint is 64 hex digits (ledger.dataset_fingerprint(...))")
    return fingerprint.lower()


def _shell_word(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _check_dataset_id(dataset_id: Any) -> str:
    if not isinstance(dataset_id, str):
        raise TypeError(
            f"dataset_id must be a string (e.g. ledger.dataset_fingerprint(...)), got {type(dataset_id).__name__}"
        )
    if not dataset_id.strip():
        raise DPInputError(
            "dataset_id is empty: give the dataset's identity, e.g. ledger.dataset_fingerprint(path, 'income')"
        )
    if len(dataset_id) > 1000:
        raise DPInputError("dataset_id is longer than 1000 characters")
    return dataset_id


@dataclass(frozen=True)
class ResultLink:
    """What :meth:`Account.attach_result` did: ``recorded`` in the database, or (the database stayed
    unreachable through the retries) appended to the local ``journal`` file, to be recorded by the next
    :func:`open_ledger` of this ledger. ``message`` is one line for the user ('' when recorded)."""

    entry_id: int
    recorded: bool
    journal: str | None = None
    reason: str = ""

    @property
    def message(self) -> str:
        if self.recorded:
            return ""
        return (
            f"the release was charged and its output produced, but the ledger could not be updated "
            f"({self.reason}): entry {self.entry_id}'s result is journaled at {self.journal} and will be "
            "recorded the next time this ledger is opened"
        )


@dataclass(frozen=True)
class VerifyReport:
    """What :meth:`LedgerDB.verify` found: ``ok`` when ``problems`` is empty."""

    ledger: str
    schema_version: int
    accounts: int
    entries: int
    results: int
    head: str
    problems: tuple[str, ...]
    notes: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """One line: 'ledger OK: ...' or 'ledger DAMAGED: ...'."""
        counts = (
            f"{self.ledger}, schema {self.schema_version}, {self.accounts} account(s), {self.entries} "
            f"entr{'y' if self.entries == 1 else 'ies'}, {self.results} result(s), chain head {self.head[:16]}"
        )
        if self.ok:
            return f"ledger OK: {counts}" + (f"; {'; '.join(self.notes)}" if self.notes else "")
        return (
            f"ledger DAMAGED: {counts}; {len(self.problems)} problem(s): "
            + "; ".join(self.problems[:5])
            + (" ..." if len(self.problems) > 5 else "")
        )


class LedgerDB:
    """A ledger database (see the module docstring); get accounts with :meth:`account`."""

    def __init__(self, backend: _Backend, on_wait: OnWait | None = None) -> None:
        self._backend = backend
        self._on_wait = on_wait
        self._record_versions: tuple[int, ...] | None = None

    @property
    def backend(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self._backend.name

    def describe(self) -> str:
        """Where the ledger lives (never shows a password)."""
        return self._backend.describe()

    def __repr__(self) -> str:
        return f"<dpcore ledger: {self.describe()}>"

    def account(
        self, dataset_id: str, cap_epsilon: float, label: str = "", *, cap_delta: float | None = None
    ) -> Account:
        """Open the account of ``dataset_id``, creating it with this cap when it does not exist.

        The cap (``cap_epsilon``, and ``cap_delta`` -- default 0, i.e. pure epsilon-DP -- for accounts that
        take approximate-DP or zCDP releases) is fixed at creation. Opening an existing account with a
        different cap raises :class:`DPInputError`.
        ``cap_delta=None`` on an existing account accepts whatever delta it was created with.
        ``label`` names the account for people (kept from creation; not part of the identity).
        """
        dataset_id = _check_dataset_id(dataset_id)
        cap_eps = check_epsilon(cap_epsilon, "cap_epsilon")
        cap_d = None if cap_delta is None else check_delta(cap_delta, "cap_delta", allow_zero=True)
        if not isinstance(label, str):
            raise TypeError(f"label must be a string, got {type(label).__name__}")
        ph = self._backend.ph
        select = f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}"
        with self._backend.reading() as conn:  # the common case (the account exists) takes no write lock
            row = conn.execute(select, (dataset_id,)).fetchone()
        if row is None:
            with self._backend.locked(dataset_id, self._on_wait) as conn:
                row = conn.execute(select, (dataset_id,)).fetchone()
                if row is None:
                    row = (label, cap_eps, 0.0 if cap_d is None else cap_d, _now())
                    conn.execute(
                        f"INSERT INTO dpcore_accounts(dataset_id, label, cap_epsilon, cap_delta, created, "
                        f"software) VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}) ON CONFLICT (dataset_id) DO NOTHING",
                        (dataset_id, *row, f"dpcore {__version__}"),
                    )
                    row = conn.execute(select, (dataset_id,)).fetchone()
        acct = Account(self, dataset_id, row[0], float(row[1]), float(row[2]), row[3])
        if acct.cap_epsilon != cap_eps or (cap_d is not None and acct.cap_delta != cap_d):
            raise DPInputError(
                f"the ledger account {acct.display_name()!r} was created on {acct.created} with the cap "
                f"{acct.cap.describe()}; you asked for {_budget.BudgetCap(epsilon=cap_eps, delta=cap_d or 0.0).describe()}. "
                "A cap is fixed when its account is created and can never be raised or reset; the budget already "
                "spent on these people counts against it."
            )
        return acct

    def find_account(self, dataset_id: str) -> Account | None:
        """The account of ``dataset_id`` when it exists (does not create one)."""
        dataset_id = _check_dataset_id(dataset_id)
        ph = self._backend.ph
        with self._backend.reading() as conn:
            row = conn.execute(
                f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}",
                (dataset_id,),
            ).fetchone()
        if row is None:
            return None
        return Account(self, dataset_id, row[0], float(row[1]), float(row[2]), row[3])

    # ----- populations and their sources ------------------------------------------------------------
    def register_population(self, name: str, cap_epsilon: float, cap_delta: float = 0.0, label: str = "") -> Account:
        """Register a population (the people a budget protects) with its caps; returns its account.

        Done once, by the data owner: the caps are the owner's decision and are fixed at registration
        (:meth:`population` opens it later; a plan names it). Registering the same name again with the
        same caps returns the existing account (a set-up script may run twice); with other caps it raises
        :class:`PopulationError`. Sources (files, tables, queries of these people) are attached to it by
        their record fingerprint with :meth:`attach_source`.
        """
        name = check_population_name(name)
        cap_eps = check_epsilon(cap_epsilon, "cap_epsilon")
        cap_d = check_delta(cap_delta, "cap_delta", allow_zero=True)
        if not isinstance(label, str):
            raise TypeError(f"label must be a string, got {type(label).__name__}")
        ph = self._backend.ph
        dataset_id = name  # as the command line keyed accounts before populations: old plans find their budget
        with self._backend.locked(dataset_id, self._on_wait) as conn:
            row = conn.execute(f"SELECT dataset_id FROM dpcore_populations WHERE name = {ph}", (name,)).fetchone()
            if row is None:
                if (
                    conn.execute(f"SELECT 1 FROM dpcore_accounts WHERE dataset_id = {ph}", (dataset_id,)).fetchone()
                    is None
                ):
                    conn.execute(
                        f"INSERT INTO dpcore_accounts(dataset_id, label, cap_epsilon, cap_delta, created, software) "
                        f"VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}) "
                        f"ON CONFLICT (dataset_id) DO NOTHING",
                        (dataset_id, label.strip() or name, cap_eps, cap_d, _now(), f"dpcore {__version__}"),
                    )
                conn.execute(
                    f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, {ph}) "
                    f"ON CONFLICT (name) DO NOTHING",
                    (name, dataset_id, _now(), f"dpcore {__version__}"),
                )
        acct = self.population(name)
        if acct is None:  # inserted above unless it was there: a ledger that lost the row cannot register it
            raise PopulationError(f"the population {name!r} could not be registered in {self.describe()}")
        if acct.cap_epsilon != cap_eps or acct.cap_delta != cap_d:
            raise PopulationError(
                f"the population {name!r} was registered on {acct.created} with the cap {acct.cap.describe()}; you "
                f"asked for {_budget.BudgetCap(epsilon=cap_eps, delta=cap_d).describe()}. A population's cap is fixed "
                "when it is registered and can never be raised or reset."
            )
        return acct

    def population(self, name: str) -> Account | None:
        """The account of the registered population ``name``, or None."""
        name = check_population_name(name)
        ph = self._backend.ph
        with self._backend.reading() as conn:
            row = conn.execute(
                f"SELECT p.dataset_id, a.label, a.cap_epsilon, a.cap_delta, a.created FROM dpcore_populations p "
                f"JOIN dpcore_accounts a ON a.dataset_id = p.dataset_id WHERE p.name = {ph}",
                (name,),
            ).fetchone()
        if row is None:
            return None
        return Account(self, row[0], row[1], float(row[2]), float(row[3]), row[4], population=name)

    def require_population(self, name: str) -> Account:
        """The account of the population ``name``; :class:`PopulationError` with the command that registers it
        when it is not registered (a plan never creates a population: its cap is the data owner's decision)."""
        acct = self.population(name)
        if acct is None and not _looks_like_fingerprint(name.strip()) and self.find_account(name.strip()) is not None:
            # an account opened by name through the API (``db.account(name, cap_epsilon=...)``) was given its cap
            # in code by whoever holds the ledger, as registering does: it becomes the population of that name
            ph = self._backend.ph
            with self._backend.locked(name.strip(), self._on_wait) as conn:
                conn.execute(
                    f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, "
                    f"{ph}) ON CONFLICT DO NOTHING",
                    (name.strip(), name.strip(), _now(), f"dpcore {__version__}"),
                )
            acct = self.population(name)
        if acct is None:
            raise PopulationError(
                f"the population {name!r} is not registered in the ledger ({self.describe()}): the data owner "
                f"registers it once, with its cap, e.g. 'python -m dpcore ledger population add {_shell_word(name)} "
                "--cap-epsilon 2' (add --cap-delta 1e-8 for releases with a delta); nothing was charged"
            )
        return acct

    def populations(self) -> list[Account]:
        """The account of every registered population (``.population`` is its name), oldest first."""
        with self._backend.reading() as conn:
            rows = conn.execute(
                "SELECT p.name, p.dataset_id, a.label, a.cap_epsilon, a.cap_delta, a.created "
                "FROM dpcore_populations p JOIN dpcore_accounts a ON a.dataset_id = p.dataset_id "
                "ORDER BY a.created, p.name"
            ).fetchall()
        return [Account(self, r[1], r[2], float(r[3]), float(r[4]), r[5], population=r[0]) for r in rows]

    def population_of_account(self, dataset_id: str) -> str | None:
        """The name of the population whose account is ``dataset_id``, or None."""
        dataset_id = _check_dataset_id(dataset_id)
        ph = self._backend.ph
        with self._backend.reading() as conn:
            row = conn.execute(f"SELECT name FROM dpcore_populations WHERE dataset_id = {ph}", (dataset_id,)).fetchone()
        return None if row is None else row[0]

    @property
    def record_fingerprint_versions(self) -> tuple[int, ...]:
        """The record fingerprint versions (:mod:`dpcore.record_fingerprint`) this ledger computes for every source,
        fixed when the ledger was created or upgraded to schema 4: (2,), or (1, 2) for a ledger whose sources were
        attached by version 1. :meth:`attach_source` wants each of them."""
        if self._record_versions is None:
            from . import record_fingerprint as _records

            with self._backend.reading() as conn:
                row = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'record_fingerprints'").fetchone()
            try:
                self._record_versions = _records.check_versions(json.loads(row[0]))
            except (TypeError, ValueError):
                raise LedgerCorrupt(
                    f"the ledger database ({self.describe()}) does not say which record fingerprints it computes "
                    "(dpcore_meta.record_fingerprints): restore it from a backup (docs/ledger.md)"
                ) from None
        return self._record_versions

    def _fingerprints_of(self, fingerprint: Any) -> list[tuple[int, str]]:
        """(version, hex) of each record fingerprint this ledger reads, from one hex (the newest version's) or a
        :class:`~dpcore.record_fingerprint.RecordFingerprints`; refuses one that lacks a version the ledger reads."""
        from . import record_fingerprint as _records

        versions = self.record_fingerprint_versions
        if isinstance(fingerprint, _records.RecordFingerprints):
            missing = [v for v in versions if v not in fingerprint.versions]
            if missing:
                raise ValueError(
                    f"this ledger computes the record fingerprint versions {list(versions)} for every source; "
                    f"version(s) {missing} were not computed: use ledger.dataset_fingerprints(data, "
                    "db.record_fingerprint_versions)"
                )
            return [(v, _check_fingerprint(fingerprint.of(v))) for v in versions]
        if versions != (_records.LATEST_VERSION,):
            raise ValueError(
                f"this ledger computes the record fingerprint versions {list(versions)} for every source (it holds "
                "sources attached by version 1): pass ledger.dataset_fingerprints(data, db.record_fingerprint_versions), "
                "not one fingerprint"
            )
        return [(_records.LATEST_VERSION, _check_fingerprint(fingerprint))]

    def source_population(self, fingerprint: Any) -> Account | None:
        """The account of the population the source with this record fingerprint is attached to, or None.
        ``fingerprint``: a :class:`~dpcore.record_fingerprint.RecordFingerprints` with every version this ledger
        reads, or one hex (a byte key, or the newest version's fingerprint in a ledger that reads only it)."""
        from . import record_fingerprint as _records

        if isinstance(fingerprint, _records.RecordFingerprints):
            keys = [hexdigest for _, hexdigest in self._fingerprints_of(fingerprint)]
        else:
            keys = [_check_fingerprint(fingerprint)]
        ph = self._backend.ph
        with self._backend.reading() as conn:
            for key in keys:  # the oldest version first: the one a source attached before an upgrade has
                row = conn.execute(
                    f"SELECT p.name, s.dataset_id, a.label, a.cap_epsilon, a.cap_delta, a.created "
                    f"FROM dpcore_sources s JOIN dpcore_accounts a ON a.dataset_id = s.dataset_id "
                    f"LEFT JOIN dpcore_populations p ON p.dataset_id = s.dataset_id "
                    f"WHERE s.fingerprint = {ph}",
                    (key,),
                ).fetchone()
                if row is not None:
                    return Account(self, row[1], row[2], float(row[3]), float(row[4]), row[5], population=row[0])
        return None

    def attach_source(self, fingerprint: Any, population: str, *, file_bytes: bool = False) -> Account:
        """Attach the source whose record fingerprints are ``fingerprint`` (:func:`dataset_fingerprints` with
        :attr:`record_fingerprint_versions`; one hex, :func:`dataset_fingerprint`, in a ledger that reads only the
        newest version) to the registered ``population``; returns the population's account. Idempotent for the
        same population.

        The same records can belong to one population only: a source already attached to another one (the
        same file under another plan name, a re-saved or reordered copy, another income column of it) is
        refused with :class:`PopulationError` naming the population it belongs to, so a second name never
        opens a second budget for the same people. Every version is checked and attached in one transaction
        under the ledger's write lock (racing first releases of one file under two names: one wins, the other
        is refused; a source found by one version is never attached elsewhere by another).

        ``file_bytes``: ``fingerprint`` is a source's byte key (``engines.fingerprint.source_bytes_key``),
        attached beside its record fingerprint so that the same files need not be fingerprinted again; it is
        kept apart from the record fingerprints in :meth:`source_count`."""
        if file_bytes:
            keys = [(_check_fingerprint(fingerprint), FILE_BYTES_MARK)]
        else:
            keys = [(hexdigest, RECORDS_MARK.format(version=v)) for v, hexdigest in self._fingerprints_of(fingerprint)]
        target = self.require_population(population)
        ph = self._backend.ph
        owners: set[str] = set()
        with self._backend.locked(target.dataset_id, self._on_wait) as conn:
            new = []
            for key, mark in keys:
                row = conn.execute(f"SELECT dataset_id FROM dpcore_sources WHERE fingerprint = {ph}", (key,)).fetchone()
                if row is None:
                    new.append((key, mark))
                else:
                    owners.add(row[0])
            if owners <= {target.dataset_id}:
                for key, mark in new:
                    if owners and not file_bytes:  # the source is attached by another version: counted once
                        mark = mark[:-1] + KNOWN_SOURCE_MARK
                    conn.execute(
                        f"INSERT INTO dpcore_sources(fingerprint, dataset_id, attached, software) "
                        f"VALUES ({ph}, {ph}, {ph}, {ph}) ON CONFLICT (fingerprint) DO NOTHING",
                        (key, target.dataset_id, _now(), f"dpcore {__version__}{mark}"),
                    )
        others = owners - {target.dataset_id}
        if others:
            owner = self.find_account(sorted(others)[0])
            owner_name = self.population_of_account(owner.dataset_id) if owner is not None else None
            owner_name = owner_name or (owner.display_name() if owner is not None else "another account")
            raise PopulationError(
                f"these records already belong to the population {owner_name!r} (the same records, whatever the file's "
                f"name, row order, line ends or released column), not to {population!r}: one population has one budget. "
                f"Release them with population = {owner_name!r}; nothing was charged"
            )
        return target

    def source_count(self, dataset_id: str) -> int:
        """How many sources are attached to ``dataset_id``: record fingerprints, one per source (a version-1 one
        attached beside its version-2 one, or one attached to a source already held by another version, is not
        counted again; byte keys are not counted)."""
        ph = self._backend.ph
        with self._backend.reading() as conn:
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

    def accounts(self) -> list[Account]:
        """Every account, oldest first."""
        with self._backend.reading() as conn:
            rows = conn.execute(
                "SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts "
                "ORDER BY created, dataset_id"
            ).fetchall()
        return [Account(self, r[0], r[1], float(r[2]), float(r[3]), r[4]) for r in rows]

    def export(self, fmt: str = "json") -> str:
        """Every account and entry, as JSON (a document) or CSV (one row per entry), for the archive.
        Accounts are named by their public id, never by their dataset id (a fingerprint of the data)."""
        return _export(self.accounts(), fmt, self)

    def pending_results(self) -> list[tuple[str, int]]:
        """(journal file, number of result marks) still waiting to be recorded in the database."""
        out = []
        for path in self._backend.journal_paths():
            with contextlib.suppress(OSError):
                with open(path, "rb") as fh:
                    n = sum(1 for line in fh if line.strip())
                if n:
                    out.append((str(path), n))
        return out

    # ----- integrity ---------------------------------------------------------------------------------
    # complexity above the cap: one check per ledger invariant, each reported on its own
    def verify(self) -> VerifyReport:  # noqa: C901
        """Check the database's integrity (SQLite ``PRAGMA integrity_check``), the schema version, the
        append-only triggers, and recompute the hash chain: every entry's hash over its content and its
        account, every entry's link to the previous one (first: :data:`CHAIN_GENESIS`), every result's
        hash; on SQLite also that no entry after the last one was removed (``sqlite_sequence``).

        A SQLite ledger is also compared with its head file (``<ledger>.head``, written after every commit):
        a database that holds less history than the head file records (copied or restored without its ``-wal``
        file, or from an older copy) is damaged.

        What it cannot see: entries removed from the end of the chain together with the id counter and the
        head file, by someone who can write both. Compare the chain head (in the summary) with a copy kept
        elsewhere (docs/ledger.md: backups) to cover that.
        """
        backend = self._backend
        problems: list[str] = []
        notes: list[str] = []
        with backend.reading() as conn:
            if backend.name == "sqlite":
                checks = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
                if checks != ["ok"]:
                    problems.append("SQLite integrity check: " + "; ".join(checks[:3]))
            meta = backend._read_meta(conn)
            version = int(meta.get("schema_version", "0") or 0)
            if version != SCHEMA_VERSION:
                problems.append(f"schema version {version}, expected {SCHEMA_VERSION}")
            if version >= 4:
                try:
                    from . import record_fingerprint as _records

                    _records.check_versions(json.loads(meta.get("record_fingerprints", "")))
                except (TypeError, ValueError):
                    problems.append(
                        "the record fingerprint versions (dpcore_meta.record_fingerprints) are missing or damaged"
                    )
            missing = sorted(backend.expected_triggers() - backend.trigger_names(conn))
            if missing:
                problems.append(f"append-only triggers missing (someone dropped them): {', '.join(missing)}")
            key = meta.get("public_id_key", "")
            accounts = {
                r[0]: (r[1], float(r[2]), float(r[3]), r[4])
                for r in conn.execute(
                    "SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts"
                ).fetchall()
            }
            if version >= 3:
                # a population or a source pointing at no account would send releases to a budget that is not there
                orphans = [
                    r[0]
                    for r in conn.execute("SELECT name, dataset_id FROM dpcore_populations").fetchall()
                    if r[1] not in accounts
                ]
                if orphans:
                    problems.append(f"{len(orphans)} population(s) without their account: {', '.join(orphans[:3])}")
                lost = sum(
                    1 for r in conn.execute("SELECT dataset_id FROM dpcore_sources").fetchall() if r[0] not in accounts
                )
                if lost:
                    problems.append(f"{lost} source(s) attached to no account")
            prev = CHAIN_GENESIS
            hashes: dict[int, str] = {}
            n_entries = 0
            last_id = 0
            empty_key: list[int] = []
            for r in conn.execute(
                "SELECT id, dataset_id, label, cost, epsilon, delta, time, record, prev_hash, "
                "entry_hash FROM dpcore_entries ORDER BY id"
            ).fetchall():
                n_entries += 1
                entry_id, last_id = int(r[0]), int(r[0])
                if r[1] not in accounts:
                    problems.append(f"entry {entry_id} belongs to no account")
                    prev = r[9] or prev
                    continue
                if r[8] != prev:
                    problems.append(
                        f"entry {entry_id} does not follow the entry before it (an entry was deleted, "
                        "inserted or reordered)"
                        if n_entries > 1
                        else f"entry {entry_id}, the first, does not start the chain (the entries before it were "
                        "deleted)"
                    )
                want = _entry_hash(
                    r[8] or "", _public_id(key, r[1]), accounts[r[1]], r[2], r[3], r[4], r[5], r[6], r[7]
                )
                if r[9] != want:
                    if r[9] == _entry_hash(
                        r[8] or "", _public_id("", r[1]), accounts[r[1]], r[2], r[3], r[4], r[5], r[6], r[7]
                    ):
                        # init_ledger's ledger object once charged without having read its key (the release
                        # command's --init-ledger): the content matches its hash, taken over an empty key's id
                        empty_key.append(entry_id)
                    else:
                        problems.append(
                            f"entry {entry_id} was edited (its content or its account's cap does not match its hash)"
                        )
                hashes[entry_id] = r[9] or ""
                prev = r[9] or prev
            head = prev
            n_results = 0
            for r in conn.execute(
                "SELECT entry_id, time, result, result_hash FROM dpcore_results ORDER BY entry_id"
            ).fetchall():
                n_results += 1
                if int(r[0]) not in hashes:
                    problems.append(f"result of entry {r[0]} has no entry")
                elif r[3] != _result_hash(hashes[int(r[0])], r[1], r[2]):
                    problems.append(f"the result of entry {r[0]} was edited")
            if backend.name == "sqlite":
                seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = 'dpcore_entries'").fetchone()
                if seq is not None and int(seq[0]) > last_id:
                    problems.append(f"entries after entry {last_id} were deleted (the id counter is at {int(seq[0])})")
            else:  # a PostgreSQL sequence also advances for a charge whose commit failed: a note, not a verdict
                name = conn.execute("SELECT pg_get_serial_sequence('dpcore_entries', 'id')").fetchone()[0]
                if name:
                    seq = conn.execute(f"SELECT last_value, is_called FROM {name}").fetchone()
                    if seq is not None and seq[1] and int(seq[0]) > last_id:
                        notes.append(
                            f"the entry id sequence is at {int(seq[0])}, after the last entry {last_id}: entries "
                            "were cut from the end, or a charge failed at its commit (compare with a backup)"
                        )
            if empty_key:
                notes.append(
                    f"entr{'y' if len(empty_key) == 1 else 'ies'} {', '.join(map(str, empty_key[:5]))} hashed under "
                    "an empty key's public id (a first release made with --init-ledger); content intact"
                )
            problems.extend(backend.history_problems(conn))
            notes.extend(backend.history_notes())
            if "migrated_1_to_2" in meta:
                with contextlib.suppress(Exception):
                    info = json.loads(meta["migrated_1_to_2"])
                    notes.append(
                        f"{info['entries_chained']} entr{'y' if info['entries_chained'] == 1 else 'ies'} "
                        f"chained when the ledger was upgraded on {info['time'][:19]}"
                    )
        for path, n in self.pending_results():
            notes.append(f"{n} result(s) journaled at {path}, recorded at the next write-open")
        return VerifyReport(
            self.describe(), version, len(accounts), n_entries, n_results, head, tuple(problems), tuple(notes)
        )

    def _entry_recorded(self, entry_id: int, entry_hash: str) -> bool | None:
        """Whether the entry ``entry_id`` with this hash is in the database (a fresh read after a fault at its
        commit); None when the database cannot be read either."""
        try:
            with self._backend.reading() as conn:
                row = conn.execute(
                    f"SELECT entry_hash FROM dpcore_entries WHERE id = {self._backend.ph}", (entry_id,)
                ).fetchone()
        except LedgerError:
            return None
        return row is not None and row[0] == entry_hash

    def require_intact(self) -> VerifyReport:
        """:meth:`verify`, refusing a damaged ledger: :class:`LedgerCorrupt` whose message is ``verify``'s summary
        (``ledger DAMAGED: ...`` and its first problems). What a release runs before anything is charged: a
        ledger whose history was edited, cut or lost must not take more charges (they would build on a history
        that no longer adds up). Costs a pass over every entry (docs/benchmarks.md: the ledger)."""
        report = self.verify()
        if not report.ok:
            raise LedgerCorrupt(
                f"{report.summary()}. Nothing was charged or released: see 'python -m dpcore ledger verify' and "
                "restore the ledger from a backup (docs/ledger.md)"
            )
        return report

    # ----- journal -----------------------------------------------------------------------------------
    def _replay_journal(self) -> int:
        """Record the results journaled by :meth:`Account.attach_result` while the database was
        unreachable, then remove them from the journal. Idempotent: a mark already recorded (another
        process replayed it, or the first try did commit) is dropped. A mark the database refuses (its
        entry is not in this ledger) stays for a person to look at (``verify`` lists it). Returns the
        number recorded; leaves the journal when the database is still unwritable."""
        recorded = 0
        for path in self._backend.journal_paths():
            if not path.exists():
                continue
            try:
                with _locked_file(path, os.O_RDWR) as fd:
                    if fd is None:
                        continue
                    with os.fdopen(os.dup(fd), "rb") as fh:
                        lines = [line for line in fh.read().decode("utf-8", "replace").splitlines() if line.strip()]
                    keep: list[str] = []
                    with self._backend.locked(None, self._on_wait) as conn:
                        for line in lines:
                            try:
                                mark = json.loads(line)
                                done = self._insert_result(
                                    conn,
                                    mark["dataset_id"],
                                    int(mark["entry_id"]),
                                    mark["time"],
                                    mark["result"],
                                    replay=True,
                                )
                            except (ValueError, KeyError, TypeError, DPInputError):
                                keep.append(line)
                                continue
                            recorded += int(done)
                    if keep:
                        os.ftruncate(fd, 0)
                        os.lseek(fd, 0, os.SEEK_SET)
                        os.write(fd, ("\n".join(keep) + "\n").encode("utf-8"))
                        os.fsync(fd)
                    else:
                        os.unlink(path)
            except (LedgerError, OSError):
                continue  # still unwritable: the journal waits for the next open
        return recorded

    def _insert_result(
        self, conn: Any, dataset_id: str, entry_id: int, stamp: str, result_json: str, *, replay: bool = False
    ) -> bool:
        """Insert a result (False when the entry already has one and ``replay``: idempotent)."""
        ph = self._backend.ph
        row = conn.execute(f"SELECT dataset_id, entry_hash FROM dpcore_entries WHERE id = {ph}", (entry_id,)).fetchone()
        if row is None or row[0] != dataset_id:
            raise DPInputError(f"entry {entry_id} is not an entry of this account in {self.describe()}")
        if conn.execute(f"SELECT 1 FROM dpcore_results WHERE entry_id = {ph}", (entry_id,)).fetchone():
            if replay:
                return False
            raise DPInputError(f"entry {entry_id} already has its result (results are append-only)")
        conn.execute(
            f"INSERT INTO dpcore_results(entry_id, time, result, result_hash) VALUES ({ph}, {ph}, {ph}, {ph})",
            (entry_id, stamp, result_json, _result_hash(row[1], stamp, result_json)),
        )
        return True

    # ----- internal --------------------------------------------------------------------------------
    def _entries(self, conn: Any, dataset_id: str) -> list[Entry]:
        ph = self._backend.ph
        rows = conn.execute(
            f"SELECT e.id, e.label, e.cost, e.epsilon, e.delta, e.time, e.record, r.result, e.entry_hash "
            f"FROM dpcore_entries e LEFT JOIN dpcore_results r ON r.entry_id = e.id WHERE e.dataset_id = {ph} "
            f"ORDER BY e.id",
            (dataset_id,),
        ).fetchall()
        where = self.describe()
        return [
            Entry(
                id=int(r[0]),
                dataset_id=dataset_id,
                label=r[1],
                cost=_stored(_cost_from_json, r[2], "cost", r[0], where),
                epsilon=float(r[3]),
                delta=float(r[4]),
                time=r[5],
                record=_stored(json.loads, r[6], "record", r[0], where),
                result=None if r[7] is None else _stored(json.loads, r[7], "result", r[0], where),
                entry_hash=r[8] or "",
            )
            for r in rows
        ]


def _composed(cap: _budget.BudgetCap, costs: list[_budget.PrivacyCost]) -> _budget.Ledger:
    return _budget.Ledger(cap=None, entries=[_budget.LedgerEntry(f"entry {i}", c) for i, c in enumerate(costs)])


def _spent(cap: _budget.BudgetCap, costs: list[_budget.PrivacyCost]) -> tuple[float, float]:
    """(epsilon, delta) spent by ``costs`` under ``cap`` (zCDP converted at the delta the cap leaves)."""
    if not costs:
        return 0.0, 0.0
    ledger = _composed(cap, costs)
    pure = ledger.spent_pure()
    if pure is not None:
        return pure, 0.0
    if cap.delta == 0:  # cannot happen for entries accepted by charge; say it rather than guess
        raise DPInputError("this pure-epsilon account holds non-pure entries")
    return ledger.spent_approx(ledger._zcdp_delta(cap))


@dataclass(frozen=True)
class Account:
    """One dataset's budget: a fixed cap and the append-only entries charged against it."""

    db: LedgerDB = field(repr=False, compare=False)
    dataset_id: str
    label: str
    cap_epsilon: float
    cap_delta: float
    created: str
    #: the registered population this account is the budget of (None for an account opened by id only)
    population: str | None = field(default=None, compare=False)

    @property
    def cap(self) -> _budget.BudgetCap:
        """The cap fixed at creation, as a :class:`dpcore.budget.BudgetCap`."""
        return _budget.BudgetCap(epsilon=self.cap_epsilon, delta=self.cap_delta)

    @property
    def public_id(self) -> str:
        """An opaque id of this account for release records: HMAC-SHA-256 of the dataset id under a random
        key kept in the ledger database (``dpcore_meta.public_id_key``), first 32 hex digits.

        The dataset id of a file is a hash of its content, and a published hash of the data would let
        anyone who knows all records but one confirm a guess of the last (hash the candidates); it is
        not a DP output. The public id links a record to its ledger account for whoever holds the
        ledger, and is unlinkable to the data without the ledger's key (HMAC is a pseudorandom function).
        """
        return _public_id(self.db._backend.public_id_key, self.dataset_id)

    def display_name(self) -> str:
        """The label and the start of the public id, for messages: never the start of a fingerprint (messages
        reach screens, logs and bug reports). A dataset id that is a name (not a 64-hex hash) is shown as is."""
        if self.label:
            return f"{self.label} [{self.public_id[:12]}]"
        return f"account {self.public_id[:12]}" if self.id_is_a_hash() else self.dataset_id

    def id_is_a_hash(self) -> bool:
        """True when the dataset id looks like a fingerprint (64 hex digits): kept out of messages and listings."""
        return _looks_like_fingerprint(self.dataset_id)

    # ----- charging --------------------------------------------------------------------------------
    def charge(
        self,
        label: str,
        epsilon: float | None = None,
        *,
        cost: _budget.PrivacyCost | None = None,
        record: Any = None,
        on_wait: OnWait | None = None,
    ) -> Entry:
        """Charge one release, atomically: lock the account, check the cap, append the entry, commit.

        Give ``epsilon`` (a pure epsilon-DP cost) or ``cost`` (a :class:`dpcore.budget.PrivacyCost`:
        pure, approximate or zCDP). ``record`` (JSON-serialisable; the release record) is stored with
        the charge. Raises :class:`BudgetExceeded` (a :class:`DPInputError`) when the total would
        exceed the cap, and :class:`DPInputError` for a cost the account cannot take (an (epsilon, delta)
        or zCDP cost on a pure-epsilon account); nothing is written then. Draw noise only after this
        returned: the charge is durable (committed) at that point. ``on_wait(line)`` (default: the
        ledger's) hears when the charge waits for another release's lock longer than LOCK_NOTE_AFTER_S.
        The entry is appended to the ledger's hash chain (its hash covers the previous entry's hash,
        the account's cap and the entry's content).
        """
        if not isinstance(label, str) or not label.strip():
            raise DPInputError("a charge needs a non-empty label (what is being released)")
        if (epsilon is None) == (cost is None):
            raise DPInputError(
                "give either epsilon (pure DP) or cost (a dpcore.budget.PrivacyCost), not both or neither"
            )
        if epsilon is not None:  # and cost is None (exactly one of the two is given)
            cost = _budget.pure(epsilon)
        elif not isinstance(cost, _budget.PrivacyCost):
            raise TypeError("cost must be a dpcore.budget.PrivacyCost (budget.pure / approx / zcdp)")
        if cost.kind != "zcdp" and cost.epsilon <= 0 and cost.delta <= 0:
            raise DPInputError("a charge must cost something: epsilon > 0 (or delta > 0)")
        if cost.kind == "zcdp" and cost.rho <= 0:
            raise DPInputError("a zCDP charge needs rho > 0")
        record_json = _to_json({} if record is None else record, "release record")
        cost_json = _to_json(cost.to_dict(), "cost")
        cap = self.cap
        backend = self.db._backend
        on_wait = self.db._on_wait if on_wait is None else on_wait
        if any(path.exists() for path in backend.journal_paths()):
            # a long-lived process (the app) opens the ledger once: the marks it journaled while the
            # database was away are recorded at its next charge, not only at the next open
            self.db._replay_journal()
        written: list[Any] = []  # (id, time, hash) of the entry once inserted: a fault at the commit is looked up
        try:
            entry_id, stamp, entry_hash = self._append(
                backend, cost, cost_json, record_json, label, cap, on_wait, written
            )
        except LedgerError as exc:
            if not (exc.at_commit and written):
                raise  # before the commit: its message says that nothing was written
            entry_id, stamp, entry_hash = written
            recorded = self.db._entry_recorded(entry_id, entry_hash)
            if recorded is None:
                raise  # the ledger cannot be read either: its message says to check the archive
            if not recorded:
                reason = str(exc).replace(_CHARGE_NOTE, "").strip()
                raise type(exc)(
                    f"{reason} The fault came at the commit; the ledger, read again, does not hold the charge: "
                    "nothing was charged or released."
                ) from exc
            # the commit landed before the fault reached us (e.g. a sync error after it): the charge stands
        return Entry(
            id=int(entry_id),
            dataset_id=self.dataset_id,
            label=label,
            cost=cost,
            epsilon=float(cost.epsilon),
            delta=float(cost.delta),
            time=stamp,
            record=json.loads(record_json),
            entry_hash=entry_hash,
        )

    def _append(
        self,
        backend: _Backend,
        cost: _budget.PrivacyCost,
        cost_json: str,
        record_json: str,
        label: str,
        cap: _budget.BudgetCap,
        on_wait: OnWait | None,
        written: list[Any],
    ) -> tuple[int, str, str]:
        """The charge's transaction: lock, check the cap, append the entry to the chain; (id, time, hash).
        ``written`` receives the same once the entry is inserted, before the commit."""
        ph = backend.ph
        with backend.locked(self.dataset_id, on_wait) as conn:
            lock = " FOR UPDATE" if backend.name == "postgresql" else ""
            row = backend.lock_row(
                conn,
                f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}{lock}",
                (self.dataset_id,),
                on_wait,
            )
            if row is None:
                raise DPInputError(f"the ledger account {self.display_name()!r} does not exist in {self.db.describe()}")
            where = self.db.describe()
            costs = [
                _stored(_cost_from_json, r[1], "cost", r[0], where)
                for r in conn.execute(
                    f"SELECT id, cost FROM dpcore_entries WHERE dataset_id = {ph} ORDER BY id", (self.dataset_id,)
                ).fetchall()
            ]
            self._check_fits(cap, costs, cost, label)
            backend.lock_chain(conn, on_wait)
            last = conn.execute("SELECT entry_hash FROM dpcore_entries ORDER BY id DESC LIMIT 1").fetchone()
            prev = CHAIN_GENESIS if last is None else last[0]
            stamp = _now()
            entry_hash = _entry_hash(
                prev,
                self.public_id,
                (row[0], float(row[1]), float(row[2]), row[3]),
                label,
                cost_json,
                float(cost.epsilon),
                float(cost.delta),
                stamp,
                record_json,
            )
            params = (
                self.dataset_id,
                label,
                cost_json,
                float(cost.epsilon),
                float(cost.delta),
                stamp,
                record_json,
                prev,
                entry_hash,
            )
            sql = (
                f"INSERT INTO dpcore_entries(dataset_id, label, cost, epsilon, delta, time, record, prev_hash, "
                f"entry_hash) VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph})"
            )
            if backend.name == "postgresql":
                entry_id = conn.execute(sql + " RETURNING id", params).fetchone()[0]
            else:
                entry_id = conn.execute(sql, params).lastrowid
            written[:] = [int(entry_id), stamp, entry_hash]
        return int(entry_id), stamp, entry_hash

    def _check_fits(
        self, cap: _budget.BudgetCap, costs: list[_budget.PrivacyCost], cost: _budget.PrivacyCost, label: str
    ) -> None:
        everything = [*costs, cost]
        if cap.delta == 0 and any(c.kind != "pure" for c in everything):
            raise DPInputError(
                f"the account {self.display_name()!r} is pure epsilon-DP (cap delta = 0), so it cannot pay for "
                f"'{label}' ({cost.describe()}); a release with delta > 0 or a zCDP cost needs a delta cap, which is "
                "fixed when a population is registered: release pure-epsilon statistics from it (e.g. the Gini with "
                "the generalized Cauchy noise)."
            )
        approx_delta = sum(c.delta for c in everything if c.kind == "approx")
        has_zcdp = any(c.kind == "zcdp" for c in everything)
        if approx_delta > cap.delta * (1 + CAP_TOLERANCE) or (has_zcdp and approx_delta >= cap.delta):
            raise BudgetExceeded(
                f"refused: '{label}' ({cost.describe()}) would bring the total delta to {approx_delta:.3g}, "
                f"which leaves nothing of the cap {cap.describe()} of the account {self.display_name()!r}. "
                "Nothing was charged or released."
            )
        trial = _composed(cap, everything)
        if not trial._within(cap, tol=CAP_TOLERANCE):
            before_eps, before_delta = _spent(cap, costs)
            assert cap.epsilon is not None  # an account's cap is an (epsilon, delta) cap
            rem = max(0.0, cap.epsilon - before_eps)
            raise BudgetExceeded(
                f"refused: '{label}' costs {cost.describe()}, but the account {self.display_name()!r} has spent "
                f"ε = {before_eps:.6g}"
                + (f" (δ = {before_delta:.3g})" if cap.delta else "")
                + f" of its cap {cap.describe()}, leaving ε = {rem:.6g}. Nothing was charged or released."
            )

    def would_exceed(self, cost: _budget.PrivacyCost | float) -> bool:
        """True when charging ``cost`` now would be refused (a read-only check; :meth:`charge` re-checks
        under the lock, so a race between this check and the charge cannot overspend)."""
        if not isinstance(cost, _budget.PrivacyCost):
            cost = _budget.pure(cost)
        try:
            self._check_fits(self.cap, self._costs(), cost, "check")
        except DPInputError:
            return True
        return False

    def attach_result(self, entry_id: int, result: Any, *, on_wait: OnWait | None = None) -> ResultLink:
        """Append the released output of a charged entry (once; results are append-only too).

        Call after the noise was drawn and before showing it. A release whose result is missing was
        charged but never revealed (a crash or an error after the charge).

        The output exists at this point (tables may already be written), so losing this mark would show a
        delivered release as 'not revealed'. When the database is unreachable (server down, file
        read-only or locked, disk full) it is tried again after each pause of ATTACH_RETRY_DELAYS_S
        (about 4 s in all); then the mark is appended to a local journal file (mode 0600; beside a SQLite
        ledger, under the user's data folder for PostgreSQL) and the returned :class:`ResultLink` says
        so (``recorded`` False, ``message`` one line to print); :func:`open_ledger` replays the journal.
        Raises :class:`DPInputError` for an entry of another account or one that has its result, and
        :class:`LedgerUnavailable` when neither the database nor the journal can be written.
        """
        if isinstance(entry_id, bool) or not isinstance(entry_id, (int, np.integer)):
            raise TypeError("entry_id must be the id of an entry returned by charge")
        result_json = _to_json(result, "release result")
        entry_id = int(entry_id)
        on_wait = self.db._on_wait if on_wait is None else on_wait
        stamp = _now()
        delays = tuple(ATTACH_RETRY_DELAYS_S)
        last: LedgerError | None = None
        for attempt in range(len(delays) + 1):
            try:
                with self.db._backend.locked(self.dataset_id, on_wait) as conn:
                    # replay=True after a failed try: that try's commit may have landed before the error
                    self.db._insert_result(conn, self.dataset_id, entry_id, stamp, result_json, replay=attempt > 0)
                return ResultLink(entry_id, True)
            except (LedgerUnavailable, LedgerCorrupt) as exc:
                last = exc
                if attempt < len(delays):
                    time.sleep(delays[attempt])
        reason = str(last).split(". ")[0] if last is not None else "unavailable"
        path = _journal_append(
            self.db._backend.journal_paths(),
            {"v": 1, "dataset_id": self.dataset_id, "entry_id": entry_id, "time": stamp, "result": result_json},
        )
        return ResultLink(entry_id, False, str(path), reason)

    # ----- reading ---------------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """Every entry of this account, oldest first (one consistent snapshot)."""
        with self.db._backend.reading() as conn:
            return self.db._entries(conn, self.dataset_id)

    def _costs(self) -> list[_budget.PrivacyCost]:
        ph = self.db._backend.ph
        with self.db._backend.reading() as conn:
            return [
                _stored(_cost_from_json, r[1], "cost", r[0], self.db.describe())
                for r in conn.execute(
                    f"SELECT id, cost FROM dpcore_entries WHERE dataset_id = {ph} ORDER BY id", (self.dataset_id,)
                ).fetchall()
            ]

    def spent(self, entries: list[Entry] | None = None) -> dict[str, float]:
        """{'epsilon': ..., 'delta': ...} spent (zCDP entries converted at the delta the cap leaves).
        ``entries``: computed from these (a snapshot from :meth:`entries`) instead of reading again."""
        costs = self._costs() if entries is None else [e.cost for e in entries]
        eps, delta = _spent(self.cap, costs)
        return {"epsilon": float(eps), "delta": float(delta)}

    def spent_epsilon(self) -> float:
        """Total epsilon spent (sequential composition, :mod:`dpcore.budget`)."""
        return self.spent()["epsilon"]

    def spent_pure(self) -> float | None:
        """Total pure epsilon, or None when some entry is not pure DP (as :meth:`dpcore.budget.Ledger.spent_pure`)."""
        costs = self._costs()
        if any(c.kind != "pure" for c in costs):
            return None
        return float(sum(c.epsilon for c in costs))

    def spent_delta(self) -> float:
        return self.spent()["delta"]

    def remaining_epsilon(self) -> float:
        """cap_epsilon - spent_epsilon (never below 0)."""
        return max(0.0, self.cap_epsilon - self.spent_epsilon())

    def remaining(self) -> dict[str, float]:
        s = self.spent()
        return {"epsilon": max(0.0, self.cap_epsilon - s["epsilon"]), "delta": max(0.0, self.cap_delta - s["delta"])}

    def describe(self, entries: list[Entry] | None = None) -> str:
        s = self.spent(entries)
        text = f"spent ε = {s['epsilon']:.4g} of {self.cap_epsilon:.4g}"
        if self.cap_delta:
            text += f" (δ = {s['delta']:.3g} of {self.cap_delta:.3g})"
        return text

    def to_dict(self, entries: list[Entry] | None = None) -> dict[str, Any]:
        s = self.spent(entries)
        return {
            "dataset_id": self.dataset_id,
            "public_id": self.public_id,
            "label": self.label,
            "cap_epsilon": self.cap_epsilon,
            "cap_delta": self.cap_delta,
            "created": self.created,
            "spent_epsilon": s["epsilon"],
            "spent_delta": s["delta"],
        }

    def export(self, fmt: str = "json", entries: list[Entry] | None = None) -> str:
        """This account and its entries as JSON (a document) or CSV (one row per entry); ``entries``: a
        snapshot from :meth:`entries` to export instead of reading again."""
        return _export([self], fmt, self.db, None if entries is None else {self.dataset_id: entries})


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


def _public_account(d: dict[str, Any]) -> dict[str, Any]:
    """An account for an export: named by its keyed public id, never by its dataset id (a fingerprint of
    the confidential file, which release records deliberately omit)."""
    return {k: v for k, v in d.items() if k != "dataset_id"}


def _public_entry(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in d.items() if k != "dataset_id"}


def _export(accounts: list[Account], fmt: str, db: LedgerDB, snapshot: dict[str, list[Entry]] | None = None) -> str:
    if fmt not in ("json", "csv"):
        raise DPInputError(f"export format must be 'json' or 'csv', got {fmt!r}")
    snapshot = dict(snapshot or {})
    for a in accounts:
        if a.dataset_id not in snapshot:
            snapshot[a.dataset_id] = a.entries()
    if fmt == "json":
        doc = {
            "dpcore_version": __version__,
            "exported": _now(),
            "ledger": db.describe(),
            "accounts": [
                {
                    **_public_account(a.to_dict(snapshot[a.dataset_id])),
                    "entries": [_public_entry(e.to_dict()) for e in snapshot[a.dataset_id]],
                }
                for a in accounts
            ],
        }
        return json.dumps(doc, indent=2, default=_json_default, ensure_ascii=False)
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
