"""A durable privacy-budget ledger in a real database (SQLite by default, PostgreSQL for a shared server).

Why a database: a budget kept in memory (a browser session, a Python object) is forgotten by a reload,
a restart, a second tab or a crash, so its cap protects nobody. Here every charge is a row in a
database, written and committed **before** any noise is drawn.

Public API (kept stable; outside checks use these names)::

    from dpcore import ledger
    db = ledger.open_ledger("sqlite:////abs/path/ledger.db")   # or "postgresql://...", None = default
    acct = db.account("dataset-id", cap_epsilon=2.0, label="CPS 2023, income")   # open or create
    acct.charge("label", epsilon=0.5, record={...})       # raises ledger.BudgetExceeded over the cap
    acct.charge("label", cost=budget.approx(0.5, 1e-9))   # approximate DP / zCDP costs too
    acct.spent_epsilon(); acct.remaining_epsilon(); acct.entries(); acct.cap; acct.export("csv")
    ledger.dataset_fingerprint(path_or_bytes, "income", group_column=None)

Where the ledger lives (:func:`default_url`): the URL given to :func:`open_ledger`; else the
environment variable ``DPCORE_LEDGER_URL``; else the SQLite file
``$XDG_DATA_HOME/dpcore/ledger.db`` (``~/.local/share/dpcore/ledger.db``), outside the repository.
URLs: ``sqlite:///relative/path.db`` and ``sqlite:////absolute/path.db`` (SQLAlchemy's convention:
the path is what follows ``sqlite:///``), a ``pathlib.Path``, or ``postgresql://user@host:port/db``
(also ``postgres://``; driver ``psycopg`` version 3, imported only when such a URL is opened).

What is guaranteed:

* **Accounts** are keyed by a dataset identity (for files: :func:`dataset_fingerprint`, a SHA-256
  of the file's bytes and the income/group column names, so re-uploading the same file finds its
  budget) and carry a human label. The cap (epsilon, and delta for approximate-DP / zCDP releases)
  is fixed when the account is created and stored with it; opening the account with another cap is
  refused (:class:`DPInputError`): a new cap means a new, visibly different account.
* **Charge before reveal**: :meth:`Account.charge` checks the cap and appends the entry in ONE
  transaction that holds the account's lock (SQLite ``BEGIN IMMEDIATE``, a database-wide write
  lock; PostgreSQL ``SELECT ... FOR UPDATE`` on the account row), so racing sessions, tabs or
  processes are serialised and can never together spend more than the cap. Callers draw noise only
  after ``charge`` returned; a crash after the commit loses at most the release, never the charge.
* **Append-only**: there is no API to delete, reset or edit an entry or a cap, and database triggers
  refuse ``UPDATE``/``DELETE`` of entries and results and a change of an account's cap.
* **Composition** uses :mod:`dpcore.budget`: pure epsilons add (Dwork & Roth 2014, Thm 3.16);
  (epsilon, delta) costs add in both; zCDP rhos add (Bun & Steinke 2016, Lemma 2.3) and are
  converted to (epsilon, delta) at the delta the cap leaves (Canonne, Kamath & Steinke 2020, Cor. 13).
  A pure-epsilon account (cap delta = 0) accepts only pure-DP costs.

What the ledger stores is public: parameters, costs, times and release records (released DP outputs
and public inputs). It never needs the confidential data; the fingerprint is a one-way hash.

SQLite runs in WAL mode with ``synchronous=FULL`` and a 60 s busy timeout, so racing processes wait
for the lock instead of failing, and a committed charge survives a crash of the process or machine.
"""
from __future__ import annotations

import contextlib
import csv
import functools
import hashlib
import io
import json
import hmac
import os
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from . import __version__
from . import budget as _budget
from .validation import DPInputError, check_delta, check_epsilon

__all__ = [
    "BudgetExceeded",
    "LedgerDB",
    "Account",
    "Entry",
    "open_ledger",
    "default_url",
    "default_path",
    "dataset_fingerprint",
    "ENV_VAR",
]

#: Environment variable naming the ledger database URL.
ENV_VAR = "DPCORE_LEDGER_URL"
SCHEMA_VERSION = 1
BUSY_TIMEOUT_S = 60.0
#: a pooled PostgreSQL connection idle for longer than this is checked (SELECT 1) before use
PG_PING_AFTER_IDLE_S = 5.0
#: Relative tolerance of the cap check (float sums of epsilons such as 20 x 0.05 = 1.0000000000000002).
CAP_TOLERANCE = 1e-12


class BudgetExceeded(DPInputError):
    """A charge that would bring the account's spending above its cap (nothing was charged)."""


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
    rest = url[len("sqlite://"):]
    if not rest.startswith("/"):
        raise DPInputError(f"a SQLite ledger URL is sqlite:///relative/path.db or sqlite:////absolute/path.db, got {url!r}")
    path = rest[1:]
    if path in ("", ":memory:"):
        raise DPInputError("an in-memory SQLite ledger forgets every charge when the process ends; "
                           "give a file, e.g. sqlite:////var/lib/dpcore/ledger.db")
    return Path(path).expanduser()


def open_ledger(url: str | os.PathLike | None = None) -> "LedgerDB":
    """Open (creating the file, its folders and the tables when missing) the ledger database at ``url``.

    ``url``: ``sqlite:///...``, ``postgresql://...`` / ``postgres://...``, a ``pathlib.Path`` of a SQLite
    file, or None for :func:`default_url` (``DPCORE_LEDGER_URL`` or the default SQLite file). A bare
    string without a scheme is refused (it would silently create a file named after a typo).
    """
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
        backend: _Backend = _PostgresBackend(url.replace("postgresql+psycopg://", "postgresql://", 1))
    elif url.startswith("sqlite:"):
        if not url.startswith("sqlite://"):
            raise DPInputError(f"a SQLite ledger URL starts with sqlite:/// , got {url!r}")
        backend = _SqliteBackend(_sqlite_path(url))
    elif "://" in url:
        raise DPInputError(f"unsupported ledger URL {url.split('://')[0]!r}://...: use sqlite:///path.db or postgresql://...")
    else:  # a bare string is refused rather than silently creating a database file named after it
        raise DPInputError(f"a ledger URL starts with sqlite:/// or postgresql://, got {url[:60]!r}; for a file give "
                           "'sqlite:////absolute/path/ledger.db' or a pathlib.Path")
    backend.init_schema()
    return LedgerDB(backend)


# ----------------------------------------------------------------------------------------------------
# Dataset identity
# ----------------------------------------------------------------------------------------------------
def dataset_fingerprint(content: bytes | bytearray | memoryview | str | os.PathLike, income_column: str,
                        group_column: str | None = None) -> str:
    """SHA-256 (hex) of a dataset's content and the columns released from it: the ledger account key.

    ``content`` is the file's bytes or a path to it (a ``str`` is a path). The same bytes with the same
    income (and group) column give the same fingerprint, so re-uploading the same file finds its
    budget; another column or another file gives another account. The hash is one-way: storing it
    reveals nothing about the data beyond equality with a file one already has.
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
    outer.update(json.dumps({"income_column": income_column, "group_column": group_column},
                            sort_keys=True).encode("utf-8"))
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

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "dataset_id": self.dataset_id, "label": self.label, "cost": self.cost.to_dict(),
                "epsilon": self.epsilon, "delta": self.delta, "time": self.time, "record": self.record,
                "result": self.result}


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
    d = json.loads(text)
    return _budget.PrivacyCost(d["kind"], epsilon=d.get("epsilon", 0.0), delta=d.get("delta", 0.0), rho=d.get("rho", 0.0))


# ----------------------------------------------------------------------------------------------------
# Backends: the SQL differs only in placeholders, the locking statement and the schema DDL.
# ----------------------------------------------------------------------------------------------------
def _unavailable(where: str, exc: BaseException) -> DPInputError:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DPInputError(f"the ledger database ({where}) is unavailable: {first}. Nothing was revealed; a charge "
                        "interrupted at its commit may or may not have been recorded: check the archive before "
                        "releasing again.")


class _Backend:
    name = ""
    ph = "?"
    public_id_key = ""

    def init_schema(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def connect(self):  # pragma: no cover - abstract
        raise NotImplementedError

    @contextlib.contextmanager
    def locked(self, dataset_id: str | None) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:  # pragma: no cover - abstract
        raise NotImplementedError
        yield

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError


_SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS dpcore_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS dpcore_accounts (
    dataset_id TEXT PRIMARY KEY,
    label TEXT NOT NULL,
    cap_epsilon REAL NOT NULL,
    cap_delta REAL NOT NULL,
    created TEXT NOT NULL,
    software TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS dpcore_entries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    dataset_id TEXT NOT NULL REFERENCES dpcore_accounts(dataset_id),
    label TEXT NOT NULL,
    cost TEXT NOT NULL,
    epsilon REAL NOT NULL,
    delta REAL NOT NULL,
    time TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS dpcore_entries_account ON dpcore_entries(dataset_id, id);
CREATE TABLE IF NOT EXISTS dpcore_results (
    entry_id INTEGER PRIMARY KEY REFERENCES dpcore_entries(id),
    time TEXT NOT NULL,
    result TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS dpcore_entries_no_update BEFORE UPDATE ON dpcore_entries
BEGIN SELECT RAISE(ABORT, 'dpcore ledger entries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS dpcore_entries_no_delete BEFORE DELETE ON dpcore_entries
BEGIN SELECT RAISE(ABORT, 'dpcore ledger entries are append-only'); END;
CREATE TRIGGER IF NOT EXISTS dpcore_results_no_update BEFORE UPDATE ON dpcore_results
BEGIN SELECT RAISE(ABORT, 'dpcore ledger results are append-only'); END;
CREATE TRIGGER IF NOT EXISTS dpcore_results_no_delete BEFORE DELETE ON dpcore_results
BEGIN SELECT RAISE(ABORT, 'dpcore ledger results are append-only'); END;
CREATE TRIGGER IF NOT EXISTS dpcore_accounts_no_delete BEFORE DELETE ON dpcore_accounts
BEGIN SELECT RAISE(ABORT, 'dpcore ledger accounts cannot be deleted'); END;
CREATE TRIGGER IF NOT EXISTS dpcore_accounts_cap_fixed BEFORE UPDATE ON dpcore_accounts
BEGIN SELECT RAISE(ABORT, 'the cap of a dpcore ledger account is fixed when it is created'); END;
"""


class _SqliteBackend(_Backend):
    name = "sqlite"
    ph = "?"

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        # one connection per backend object and process, used by one thread at a time; every use is a
        # complete transaction, so other processes' commits are seen at the next BEGIN
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = 0

    def describe(self) -> str:
        return f"SQLite file {self.path}"

    def connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(str(self.path), timeout=BUSY_TIMEOUT_S, isolation_level=None,
                                   check_same_thread=False)
        except sqlite3.Error as exc:
            raise DPInputError(f"cannot open the ledger database {str(self.path)!r}: {exc}") from None
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        conn.execute("PRAGMA synchronous = FULL")
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def init_schema(self) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DPInputError(f"cannot create the folder of the ledger database {str(self.path)!r}: {exc}") from None
        conn = self.connect()
        try:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":  # pragma: no cover - e.g. a network file system
                raise DPInputError(f"the ledger database {str(self.path)!r} cannot use WAL mode (got {mode!r})")
            conn.execute("BEGIN IMMEDIATE")
            for stmt in _split_sql(_SQLITE_SCHEMA):
                conn.execute(stmt)
            conn.execute("INSERT OR IGNORE INTO dpcore_meta(key, value) VALUES ('schema_version', ?)",
                         (str(SCHEMA_VERSION),))
            conn.execute("INSERT OR IGNORE INTO dpcore_meta(key, value) VALUES ('public_id_key', ?)",
                         (secrets.token_hex(32),))
            self.public_id_key = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'public_id_key'").fetchone()[0]
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            with contextlib.suppress(sqlite3.Error):
                conn.execute("ROLLBACK")
            raise DPInputError(f"cannot set up the ledger database {str(self.path)!r}: {exc}") from None
        finally:
            conn.close()

    @contextlib.contextmanager
    def _transaction(self, begin: str) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            if conn is None or self._pid != os.getpid():
                conn = self._conn = self.connect()
                self._pid = os.getpid()
            try:
                conn.execute(begin)
            except sqlite3.OperationalError as exc:
                self._drop()
                raise _unavailable(self.describe(), exc) from exc
            except BaseException:
                self._drop()
                raise
            try:
                yield conn
            except BaseException as exc:
                try:
                    conn.execute("ROLLBACK")
                except BaseException:
                    self._drop()
                if isinstance(exc, sqlite3.OperationalError):
                    raise _unavailable(self.describe(), exc) from exc
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.OperationalError as exc:
                self._drop()  # closing without COMMIT rolls back
                raise _unavailable(self.describe(), exc) from exc
            except BaseException:
                self._drop()
                raise

    def _drop(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(Exception):
                self._conn.close()
        self._conn = None

    @contextlib.contextmanager
    def locked(self, dataset_id: str | None) -> Iterator[sqlite3.Connection]:
        """One write transaction holding SQLite's database-wide write lock (``BEGIN IMMEDIATE``)."""
        with self._transaction("BEGIN IMMEDIATE") as conn:
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


_PG_SCHEMA = [
    "CREATE TABLE IF NOT EXISTS dpcore_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS dpcore_accounts (
        dataset_id TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        cap_epsilon DOUBLE PRECISION NOT NULL,
        cap_delta DOUBLE PRECISION NOT NULL,
        created TEXT NOT NULL,
        software TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS dpcore_entries (
        id BIGSERIAL PRIMARY KEY,
        dataset_id TEXT NOT NULL REFERENCES dpcore_accounts(dataset_id),
        label TEXT NOT NULL,
        cost TEXT NOT NULL,
        epsilon DOUBLE PRECISION NOT NULL,
        delta DOUBLE PRECISION NOT NULL,
        time TEXT NOT NULL,
        record TEXT NOT NULL)""",
    "CREATE INDEX IF NOT EXISTS dpcore_entries_account ON dpcore_entries(dataset_id, id)",
    """CREATE TABLE IF NOT EXISTS dpcore_results (
        entry_id BIGINT PRIMARY KEY REFERENCES dpcore_entries(id),
        time TEXT NOT NULL,
        result TEXT NOT NULL)""",
    """CREATE OR REPLACE FUNCTION dpcore_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'dpcore ledger: % on % is refused (append-only; caps are fixed)', TG_OP, TG_TABLE_NAME;
        END $$""",
]
_PG_TRIGGERS = {
    "dpcore_entries_append_only": "BEFORE UPDATE OR DELETE ON dpcore_entries",
    "dpcore_results_append_only": "BEFORE UPDATE OR DELETE ON dpcore_results",
    "dpcore_accounts_fixed": "BEFORE UPDATE OR DELETE ON dpcore_accounts",
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

    def describe(self) -> str:
        try:
            from psycopg.conninfo import conninfo_to_dict

            info = conninfo_to_dict(self.url)
            return f"PostgreSQL database {info.get('dbname', '?')} on {info.get('host', 'localhost')}:{info.get('port', 5432)}"
        except Exception:  # pragma: no cover - never show a password
            return "PostgreSQL database"

    def connect(self):
        try:
            import psycopg
        except ImportError:
            raise DPInputError("a PostgreSQL ledger needs the psycopg package: pip install 'psycopg[binary]'") from None
        try:
            return psycopg.connect(self.url, autocommit=True, connect_timeout=30)
        except psycopg.Error as exc:
            raise DPInputError(f"cannot connect to the PostgreSQL ledger ({self.describe()}): "
                               f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}") from None

    def init_schema(self) -> None:
        conn = self.connect()
        try:
            with conn.transaction():
                # concurrent first-time set-ups would race on the catalogue: serialise them
                conn.execute("SELECT pg_advisory_xact_lock(727270011)")
                for stmt in _PG_SCHEMA:
                    conn.execute(stmt)
                for name, when in _PG_TRIGGERS.items():
                    exists = conn.execute("SELECT 1 FROM pg_trigger WHERE tgname = %s", (name,)).fetchone()
                    if not exists:
                        conn.execute(f"CREATE TRIGGER {name} {when} FOR EACH ROW EXECUTE FUNCTION dpcore_refuse_change()")
                conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('schema_version', %s) "
                             "ON CONFLICT (key) DO NOTHING", (str(SCHEMA_VERSION),))
                conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('public_id_key', %s) "
                             "ON CONFLICT (key) DO NOTHING", (secrets.token_hex(32),))
                self.public_id_key = conn.execute(
                    "SELECT value FROM dpcore_meta WHERE key = 'public_id_key'").fetchone()[0]
        finally:
            conn.close()

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
        self._conn = self.connect()
        self._pid = os.getpid()
        return self._conn

    @contextlib.contextmanager
    def _session(self) -> Iterator[Any]:
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
                if isinstance(exc, psycopg.OperationalError):
                    raise _unavailable(self.describe(), exc) from exc
                raise
            finally:
                self._last_used = time.monotonic()

    @contextlib.contextmanager
    def locked(self, dataset_id: str | None) -> Iterator[Any]:
        """One transaction; ``charge`` locks the account row with ``SELECT ... FOR UPDATE``."""
        with self._session() as conn, conn.transaction():
            yield conn

    @contextlib.contextmanager
    def reading(self) -> Iterator[Any]:
        with self._session() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one consistent snapshot
            yield conn


# ----------------------------------------------------------------------------------------------------
# The ledger and its accounts
# ----------------------------------------------------------------------------------------------------
def _check_dataset_id(dataset_id: Any) -> str:
    if not isinstance(dataset_id, str):
        raise TypeError(f"dataset_id must be a string (e.g. ledger.dataset_fingerprint(...)), got {type(dataset_id).__name__}")
    if not dataset_id.strip():
        raise DPInputError("dataset_id is empty: give the dataset's identity, e.g. ledger.dataset_fingerprint(path, 'income')")
    if len(dataset_id) > 1000:
        raise DPInputError("dataset_id is longer than 1000 characters")
    return dataset_id


class LedgerDB:
    """A ledger database (see the module docstring); get accounts with :meth:`account`."""

    def __init__(self, backend: _Backend) -> None:
        self._backend = backend

    @property
    def backend(self) -> str:
        """"sqlite" or "postgresql"."""
        return self._backend.name

    def describe(self) -> str:
        """Where the ledger lives (never shows a password)."""
        return self._backend.describe()

    def __repr__(self) -> str:
        return f"<dpcore ledger: {self.describe()}>"

    def account(self, dataset_id: str, cap_epsilon: float, label: str = "", *,
                cap_delta: float | None = None) -> "Account":
        """Open the account of ``dataset_id``, creating it with this cap when it does not exist.

        The cap (``cap_epsilon``, and ``cap_delta`` -- default 0, i.e. pure epsilon-DP -- for accounts that
        take approximate-DP or zCDP releases) is fixed at creation. Opening an existing account with a
        different cap raises :class:`DPInputError`: a new cap means a new account (another dataset id).
        ``cap_delta=None`` on an existing account accepts whatever delta it was created with.
        ``label`` names the account for people (kept from creation; not part of the identity).
        """
        dataset_id = _check_dataset_id(dataset_id)
        cap_eps = check_epsilon(cap_epsilon, "cap_epsilon")
        cap_d = None if cap_delta is None else check_delta(cap_delta, "cap_delta", allow_zero=True)
        if not isinstance(label, str):
            raise TypeError(f"label must be a string, got {type(label).__name__}")
        ph = self._backend.ph
        with self._backend.locked(dataset_id) as conn:
            row = conn.execute(f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}",
                               (dataset_id,)).fetchone()
            if row is None:
                row = (label, cap_eps, 0.0 if cap_d is None else cap_d, _now())
                conn.execute(f"INSERT INTO dpcore_accounts(dataset_id, label, cap_epsilon, cap_delta, created, software) "
                             f"VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}) ON CONFLICT (dataset_id) DO NOTHING",
                             (dataset_id, *row, f"dpcore {__version__}"))
                row = conn.execute(f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts "
                                   f"WHERE dataset_id = {ph}", (dataset_id,)).fetchone()
        acct = Account(self, dataset_id, row[0], float(row[1]), float(row[2]), row[3])
        if acct.cap_epsilon != cap_eps or (cap_d is not None and acct.cap_delta != cap_d):
            raise DPInputError(
                f"the ledger account {acct.display_name()!r} was created on {acct.created} with the cap "
                f"{acct.cap.describe()}; you asked for {_budget.BudgetCap(epsilon=cap_eps, delta=cap_d or 0.0).describe()}. "
                "A cap is fixed when its account is created and can never be raised or reset: a new cap means a new "
                "account (a different dataset id, shown as a different account), and the budget already spent on "
                "this dataset still counts against it.")
        return acct

    def find_account(self, dataset_id: str) -> "Account | None":
        """The account of ``dataset_id`` when it exists (does not create one)."""
        dataset_id = _check_dataset_id(dataset_id)
        ph = self._backend.ph
        with self._backend.reading() as conn:
            row = conn.execute(f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}",
                               (dataset_id,)).fetchone()
        if row is None:
            return None
        return Account(self, dataset_id, row[0], float(row[1]), float(row[2]), row[3])

    def accounts(self) -> list["Account"]:
        """Every account, oldest first."""
        with self._backend.reading() as conn:
            rows = conn.execute("SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts "
                                "ORDER BY created, dataset_id").fetchall()
        return [Account(self, r[0], r[1], float(r[2]), float(r[3]), r[4]) for r in rows]

    def export(self, fmt: str = "json") -> str:
        """Every account and entry, as JSON (a document) or CSV (one row per entry), for the archive."""
        return _export(self.accounts(), fmt, self)

    # ----- internal --------------------------------------------------------------------------------
    def _entries(self, conn: Any, dataset_id: str) -> list[Entry]:
        ph = self._backend.ph
        rows = conn.execute(
            f"SELECT e.id, e.label, e.cost, e.epsilon, e.delta, e.time, e.record, r.result FROM dpcore_entries e "
            f"LEFT JOIN dpcore_results r ON r.entry_id = e.id WHERE e.dataset_id = {ph} ORDER BY e.id",
            (dataset_id,)).fetchall()
        return [Entry(id=int(r[0]), dataset_id=dataset_id, label=r[1], cost=_cost_from_json(r[2]), epsilon=float(r[3]),
                      delta=float(r[4]), time=r[5], record=json.loads(r[6]),
                      result=None if r[7] is None else json.loads(r[7])) for r in rows]


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
        key = self.db._backend.public_id_key.encode()
        return hmac.new(key, self.dataset_id.encode("utf-8"), hashlib.sha256).hexdigest()[:32]

    def display_name(self) -> str:
        return f"{self.label} [{self.dataset_id[:12]}]" if self.label else self.dataset_id

    # ----- charging --------------------------------------------------------------------------------
    def charge(self, label: str, epsilon: float | None = None, *, cost: _budget.PrivacyCost | None = None,
               record: Any = None) -> Entry:
        """Charge one release, atomically: lock the account, check the cap, append the entry, commit.

        Give ``epsilon`` (a pure epsilon-DP cost) or ``cost`` (a :class:`dpcore.budget.PrivacyCost`:
        pure, approximate or zCDP). ``record`` (JSON-serialisable; the release record) is stored with
        the charge. Raises :class:`BudgetExceeded` (a :class:`DPInputError`) when the total would
        exceed the cap, and :class:`DPInputError` for a cost the account cannot take (an (epsilon, delta)
        or zCDP cost on a pure-epsilon account); nothing is written then. Draw noise only after this
        returned: the charge is durable (committed) at that point.
        """
        if not isinstance(label, str) or not label.strip():
            raise DPInputError("a charge needs a non-empty label (what is being released)")
        if (epsilon is None) == (cost is None):
            raise DPInputError("give either epsilon (pure DP) or cost (a dpcore.budget.PrivacyCost), not both or neither")
        if cost is None:
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
        ph = backend.ph
        with backend.locked(self.dataset_id) as conn:
            lock = " FOR UPDATE" if backend.name == "postgresql" else ""
            row = conn.execute(f"SELECT cap_epsilon, cap_delta FROM dpcore_accounts WHERE dataset_id = {ph}{lock}",
                               (self.dataset_id,)).fetchone()
            if row is None:
                raise DPInputError(f"the ledger account {self.display_name()!r} does not exist in {self.db.describe()}")
            costs = [_cost_from_json(r[0]) for r in conn.execute(
                f"SELECT cost FROM dpcore_entries WHERE dataset_id = {ph} ORDER BY id", (self.dataset_id,)).fetchall()]
            self._check_fits(cap, costs, cost, label)
            stamp = _now()
            params = (self.dataset_id, label, cost_json, float(cost.epsilon), float(cost.delta), stamp, record_json)
            sql = (f"INSERT INTO dpcore_entries(dataset_id, label, cost, epsilon, delta, time, record) "
                   f"VALUES ({ph}, {ph}, {ph}, {ph}, {ph}, {ph}, {ph})")
            if backend.name == "postgresql":
                entry_id = conn.execute(sql + " RETURNING id", params).fetchone()[0]
            else:
                entry_id = conn.execute(sql, params).lastrowid
        return Entry(id=int(entry_id), dataset_id=self.dataset_id, label=label, cost=cost, epsilon=float(cost.epsilon),
                     delta=float(cost.delta), time=stamp, record=json.loads(record_json))

    def _check_fits(self, cap: _budget.BudgetCap, costs: list[_budget.PrivacyCost], cost: _budget.PrivacyCost,
                    label: str) -> None:
        everything = [*costs, cost]
        if cap.delta == 0 and any(c.kind != "pure" for c in everything):
            raise DPInputError(
                f"the account {self.display_name()!r} is pure epsilon-DP (cap delta = 0), so it cannot pay for "
                f"'{label}' ({cost.describe()}); a release with delta > 0 or a zCDP cost needs an account created "
                "with a delta cap (a new account).")
        approx_delta = sum(c.delta for c in everything if c.kind == "approx")
        has_zcdp = any(c.kind == "zcdp" for c in everything)
        if approx_delta > cap.delta * (1 + CAP_TOLERANCE) or (has_zcdp and approx_delta >= cap.delta):
            raise BudgetExceeded(
                f"refused: '{label}' ({cost.describe()}) would bring the total delta to {approx_delta:.3g}, "
                f"which leaves nothing of the cap {cap.describe()} of the account {self.display_name()!r}. "
                "Nothing was charged or released.")
        trial = _composed(cap, everything)
        if not trial._within(cap, tol=CAP_TOLERANCE):
            before_eps, before_delta = _spent(cap, costs)
            rem = max(0.0, cap.epsilon - before_eps)
            raise BudgetExceeded(
                f"refused: '{label}' costs {cost.describe()}, but the account {self.display_name()!r} has spent "
                f"ε = {before_eps:.6g}" + (f" (δ = {before_delta:.3g})" if cap.delta else "") +
                f" of its cap {cap.describe()}, leaving ε = {rem:.6g}. Nothing was charged or released.")

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

    def attach_result(self, entry_id: int, result: Any) -> None:
        """Append the released output of a charged entry (once; results are append-only too).

        Call after the noise was drawn and before showing it. A release whose result is missing was
        charged but never revealed (a crash or an error after the charge)."""
        if isinstance(entry_id, bool) or not isinstance(entry_id, (int, np.integer)):
            raise TypeError("entry_id must be the id of an entry returned by charge")
        result_json = _to_json(result, "release result")
        backend = self.db._backend
        ph = backend.ph
        with backend.locked(self.dataset_id) as conn:
            row = conn.execute(f"SELECT dataset_id FROM dpcore_entries WHERE id = {ph}", (int(entry_id),)).fetchone()
            if row is None or row[0] != self.dataset_id:
                raise DPInputError(f"entry {entry_id} is not an entry of the account {self.display_name()!r}")
            if conn.execute(f"SELECT 1 FROM dpcore_results WHERE entry_id = {ph}", (int(entry_id),)).fetchone():
                raise DPInputError(f"entry {entry_id} already has its result (results are append-only)")
            conn.execute(f"INSERT INTO dpcore_results(entry_id, time, result) VALUES ({ph}, {ph}, {ph})",
                         (int(entry_id), _now(), result_json))

    # ----- reading ---------------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """Every entry of this account, oldest first (one consistent snapshot)."""
        with self.db._backend.reading() as conn:
            return self.db._entries(conn, self.dataset_id)

    def _costs(self) -> list[_budget.PrivacyCost]:
        ph = self.db._backend.ph
        with self.db._backend.reading() as conn:
            return [_cost_from_json(r[0]) for r in conn.execute(
                f"SELECT cost FROM dpcore_entries WHERE dataset_id = {ph} ORDER BY id", (self.dataset_id,)).fetchall()]

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
        return {"dataset_id": self.dataset_id, "public_id": self.public_id, "label": self.label,
                "cap_epsilon": self.cap_epsilon,
                "cap_delta": self.cap_delta, "created": self.created, "spent_epsilon": s["epsilon"],
                "spent_delta": s["delta"]}

    def export(self, fmt: str = "json", entries: list[Entry] | None = None) -> str:
        """This account and its entries as JSON (a document) or CSV (one row per entry); ``entries``: a
        snapshot from :meth:`entries` to export instead of reading again."""
        return _export([self], fmt, self.db, None if entries is None else {self.dataset_id: entries})


CSV_COLUMNS = ("dataset_id", "account_label", "cap_epsilon", "cap_delta", "entry_id", "label", "kind", "epsilon",
               "delta", "rho", "time", "record", "result")


def _export(accounts: list[Account], fmt: str, db: LedgerDB, snapshot: dict[str, list[Entry]] | None = None) -> str:
    if fmt not in ("json", "csv"):
        raise DPInputError(f"export format must be 'json' or 'csv', got {fmt!r}")
    snapshot = dict(snapshot or {})
    for a in accounts:
        if a.dataset_id not in snapshot:
            snapshot[a.dataset_id] = a.entries()
    if fmt == "json":
        doc = {"dpcore_version": __version__, "exported": _now(), "ledger": db.describe(),
               "accounts": [{**a.to_dict(snapshot[a.dataset_id]),
                             "entries": [e.to_dict() for e in snapshot[a.dataset_id]]} for a in accounts]}
        return json.dumps(doc, indent=2, default=_json_default, ensure_ascii=False)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for a in accounts:
        for e in snapshot[a.dataset_id]:
            writer.writerow([a.dataset_id, a.label, repr(a.cap_epsilon), repr(a.cap_delta), e.id, e.label, e.cost.kind,
                             repr(e.cost.epsilon), repr(e.cost.delta), repr(e.cost.rho), e.time,
                             json.dumps(e.record, ensure_ascii=False),
                             "" if e.result is None else json.dumps(e.result, ensure_ascii=False)])
    return buf.getvalue()
