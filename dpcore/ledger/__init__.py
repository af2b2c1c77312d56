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

The package, one concern per module (this ``__init__`` imports their public names: ``dpcore.ledger.<name>`` is their
public path), bottom to top: :mod:`~dpcore.ledger.errors` (the exceptions and the notes their messages end with),
:mod:`~dpcore.ledger.paths` (URLs and file locations), :mod:`~dpcore.ledger.chain` (the hash chain and the keyed
public ids), :mod:`~dpcore.ledger.entries` (an entry's stored JSON, reading entries, appending a result),
:mod:`~dpcore.ledger.backends` (SQLite and PostgreSQL: transactions and locks, the schema and its migrations, the
head file), :mod:`~dpcore.ledger.caps` (composition against a cap), :mod:`~dpcore.ledger.journal` (the local
journal of result marks), :mod:`~dpcore.ledger.sources` (fingerprints and the sources table),
:mod:`~dpcore.ledger.export` (JSON/CSV exports, backups), :mod:`~dpcore.ledger.verify` (integrity and the chain
recomputed) and :mod:`~dpcore.ledger.accounts` (:class:`LedgerDB`, :class:`Account`, :func:`open_ledger`). A test
that shortens a timeout (``BUSY_TIMEOUT_S``, ``ATTACH_RETRY_DELAYS_S``, ...) patches it in the module that reads it.
"""

from __future__ import annotations

from ..validation import DPInputError
from .accounts import (
    ATTACH_RETRY_DELAYS_S,
    Account,
    LedgerDB,
    ResultLink,
    check_population_name,
    init_ledger,
    open_ledger,
)
from .backends.base import BUSY_TIMEOUT_S, LOCK_NOTE_AFTER_S, LOCK_NOTE_EVERY_S, OnWait
from .backends.head import HEAD_SUFFIX
from .backends.postgres import PG_PING_AFTER_IDLE_S
from .backends.schema import FILE_BYTES_MARK, KNOWN_SOURCE_MARK, RECORDS_MARK, SCHEMA_VERSION
from .backends.sqlite import CHECKPOINT_WAIT_S
from .caps import CAP_TOLERANCE
from .chain import CHAIN_GENESIS
from .entries import Entry
from .errors import (
    BudgetExceeded,
    LedgerCorrupt,
    LedgerError,
    LedgerExists,
    LedgerMissing,
    LedgerUnavailable,
    PopulationError,
)
from .export import CSV_COLUMNS
from .paths import ENV_VAR, default_path, default_url, sqlite_path
from .sources import dataset_fingerprint, dataset_fingerprints, file_bytes_fingerprint
from .verify import VerifyReport

__all__ = [
    "BudgetExceeded",
    "PopulationError",
    "LedgerError",
    "LedgerMissing",
    "LedgerExists",
    "LedgerCorrupt",
    "LedgerUnavailable",
    "DPInputError",
    "LedgerDB",
    "Account",
    "Entry",
    "ResultLink",
    "VerifyReport",
    "open_ledger",
    "init_ledger",
    "default_url",
    "default_path",
    "sqlite_path",
    "dataset_fingerprint",
    "dataset_fingerprints",
    "file_bytes_fingerprint",
    "check_population_name",
    "OnWait",
    "ENV_VAR",
    "SCHEMA_VERSION",
    "CHAIN_GENESIS",
    "HEAD_SUFFIX",
    "FILE_BYTES_MARK",
    "RECORDS_MARK",
    "KNOWN_SOURCE_MARK",
    "CSV_COLUMNS",
    "CAP_TOLERANCE",
    "BUSY_TIMEOUT_S",
    "LOCK_NOTE_AFTER_S",
    "LOCK_NOTE_EVERY_S",
    "ATTACH_RETRY_DELAYS_S",
    "PG_PING_AFTER_IDLE_S",
    "CHECKPOINT_WAIT_S",
]
