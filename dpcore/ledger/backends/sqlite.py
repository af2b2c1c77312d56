"""The SQLite backend: one file (WAL mode, ``synchronous=FULL``), its head file beside it, a pooled connection.

SQLite runs in WAL mode with ``synchronous=FULL`` and a busy timeout of :data:`BUSY_TIMEOUT_S`, so racing processes
wait for the lock instead of failing, and a committed charge survives a crash of the process or machine. A write
(``BEGIN IMMEDIATE``) holds the database-wide write lock; a read (``BEGIN``) sees one snapshot. After every commit
a checkpoint copies it from the WAL into the file and the head file records how much history the file holds
(:mod:`.head`), so a ``.db`` copied alone is whole, and one that lost history is found. The file is opened with
``mode=rw`` (never created as a side effect) and its inode noted, so a ledger deleted or replaced while a process
holds it is noticed at the next transaction.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import sqlite3
import threading
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ... import __version__
from .. import errors
from ..entries import now
from ..paths import make_private_dirs, user_journal_path
from .base import BUSY_TIMEOUT_S, LOCK_NOTE_AFTER_S, LOCK_NOTE_EVERY_S, Backend, OnWait, lock_note
from .head import HEAD_SUFFIX, History, history_of, read_head, write_head
from .schema import (
    SCHEMA_VERSION,
    SQLITE_V1,
    SQLITE_V3,
    TABLES,
    check_version,
    migrate,
    read_meta,
    split_sql,
    sqlite_v2_triggers,
    sqlite_v3_triggers,
)

__all__ = ["CHECKPOINT_WAIT_S", "SqliteBackend"]

#: after a commit, how long the checkpoint that copies it into the ledger file waits for readers of an older
#: snapshot before leaving the rest to the next commit (a reader's transaction is a few queries)
CHECKPOINT_WAIT_S = 1.0
_SQLITE_HEADER = b"SQLite format 3\x00"


def _sqlite_fault(where: str, exc: sqlite3.Error, *, at_commit: bool = False) -> errors.LedgerError:
    """One line naming the ledger and what to do, for every sqlite3 error a caller could meet. ``at_commit``: the
    error came from COMMIT (the outcome is unknown until someone looks); else nothing was written."""
    return errors.mark_at_commit(_sqlite_fault_text(where, exc, errors.outcome_note(at_commit)), at_commit)


def _sqlite_fault_text(where: str, exc: sqlite3.Error, note: str) -> errors.LedgerError:
    text = errors.first_line(exc)
    low = text.lower()
    if "readonly" in low or "read-only" in low:
        return errors.LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: it is read-only for this user "
            f"({text}); make the ledger file, its -wal and -shm files and its folder writable for this "
            f"user (chmod u+w on each) and retry. {note}"
        )
    if "locked" in low or "busy" in low:
        return errors.LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: it stayed locked by another process "
            f"(a release in progress?) for {BUSY_TIMEOUT_S:.0f} s ({text}); retry when it has "
            f"finished. {note}"
        )
    if "full" in low:
        return errors.LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: the disk is full ({text}); free space and retry. {note}"
        )
    if "malformed" in low or "not a database" in low or "corrupt" in low or "disk i/o" in low:
        return errors.LedgerCorrupt(
            f"the ledger database ({where}) is damaged ({text}): restore it from a backup "
            "(docs/ledger.md) and run 'python -m dpcore ledger verify'. Nothing was released."
        )
    if "unable to open" in low:
        return errors.LedgerUnavailable(
            f"the ledger database ({where}) is unavailable: it cannot be opened ({text}); check "
            "that the file and its folder exist and are readable and writable by this user."
        )
    return errors.LedgerUnavailable(f"the ledger database ({where}) is unavailable: {text}. {note}")


class SqliteBackend(Backend):
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
        return [self.path.with_name(self.path.name + ".pending.jsonl"), user_journal_path(f"sqlite:{self.path}")]

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
            raise errors.LedgerCorrupt(f"the ledger location {self.path} is a folder, not a ledger file")
        try:
            with open(self.path, "rb") as fh:
                header = fh.read(100)
                size = os.fstat(fh.fileno()).st_size
        except OSError as exc:
            raise errors.LedgerUnavailable(
                f"the ledger database ({where}) cannot be read: {exc.strerror or exc}; check the file's permissions"
            ) from None
        if size == 0:
            raise errors.LedgerCorrupt(
                f"the ledger database ({where}) is an empty file (0 bytes): it was truncated or "
                "replaced, and its accounts, caps and history are not in it. dpcore never takes an empty "
                "file as a new ledger (that would restore full caps): restore the file from a backup "
                "(docs/ledger.md), or remove it and run 'python -m dpcore ledger init' only if this is "
                "truly a new ledger"
            )
        if not header.startswith(_SQLITE_HEADER):
            raise errors.LedgerCorrupt(
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
                raise errors.LedgerCorrupt(
                    f"the ledger database ({where}) is truncated ({size} bytes; its header says "
                    f"{pages * page_size}): restore it from a backup (docs/ledger.md)"
                )
        elif len(header) < 100:
            raise errors.LedgerCorrupt(
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
            raise errors.LedgerUnavailable(
                f"cannot look for the ledger at {self.path}: {exc.strerror or exc}"
            ) from None
        if not exists:
            self._refuse_a_lost_ledger()
            if not create:
                raise errors.LedgerMissing(
                    f"there is no ledger at {self.path} (the file does not exist): "
                    + errors.INIT_HINT.format(url="sqlite:///" + str(self.path))
                )
            with contextlib.suppress(errors.LedgerExists):  # another process created it meanwhile: open that one
                self.create_new(on_wait=on_wait)
        self._check_file()
        self._inode = self._stat_key()
        self._setup(on_wait)

    def _refuse_a_lost_ledger(self) -> None:
        """A head file without its ledger: the ledger that held that history was deleted or moved. A new ledger
        (or a silent empty one) in its place would restart every cap, so both are refused until a person decides."""
        if os.path.lexists(self.head_path):
            raise errors.LedgerMissing(
                f"there is no ledger at {self.path}, but the head file {self.head_path} of a ledger that was there "
                "is: that ledger was deleted or moved, with its history. Restore it (docs/ledger.md, Restore), or "
                f"point DPCORE_LEDGER_URL / --ledger at it; only if a new ledger with fresh caps is truly meant, move "
                f"{self.head_path.name} away first. Nothing was charged"
            )

    def create_new(self, *, on_wait: OnWait | None) -> None:
        """Build the ledger under a temporary name (mode 0600) and link it into place, so a crash never leaves a
        0-byte or half-made file under the ledger's name (which open would then refuse)."""
        if os.path.lexists(self.path):
            raise errors.LedgerExists(
                f"a file already exists at {self.path}: dpcore never re-initialises an existing ledger "
                "(run 'python -m dpcore ledger verify' to check it; move it away yourself if it is not one)"
            )
        self._refuse_a_lost_ledger()
        try:
            make_private_dirs(self.path.parent)
        except OSError as exc:
            raise errors.LedgerUnavailable(
                f"cannot create the folder of the ledger database {self.path}: {exc.strerror or exc}"
            ) from None
        tmp = self.path.with_name(f".{self.path.name}.init-{os.getpid()}-{secrets.token_hex(4)}")
        try:
            os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            conn = self._connect_path(tmp)
            try:
                mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
                if str(mode).lower() != "wal":  # pragma: no cover - e.g. a network file system
                    raise errors.LedgerUnavailable(
                        f"the ledger database {self.path} cannot use WAL mode (got {mode!r})"
                    )
                conn.execute("BEGIN IMMEDIATE")
                for stmt in split_sql(SQLITE_V1):
                    conn.execute(stmt)
                conn.execute("INSERT INTO dpcore_meta(key, value) VALUES ('schema_version', '1')")
                conn.execute(
                    "INSERT INTO dpcore_meta(key, value) VALUES ('public_id_key', ?)", (secrets.token_hex(32),)
                )
                conn.execute(
                    "INSERT INTO dpcore_meta(key, value) VALUES ('created', ?)",
                    (json.dumps({"time": now(), "software": f"dpcore {__version__}"}),),
                )
                migrate(self, conn, 1, record=False)
                history = history_of(conn)
                conn.execute("COMMIT")
            finally:
                conn.close()  # the last connection checkpoints the WAL into the file and removes it
            try:
                os.link(tmp, self.path)  # atomic; fails when someone else created the ledger meanwhile
            except FileExistsError:
                raise errors.LedgerExists(f"a ledger was created at {self.path} by another process meanwhile") from None
            if history is not None:
                write_head(self.head_path, history)
            with contextlib.suppress(OSError):
                dir_fd = os.open(self.path.parent, os.O_RDONLY)
                try:
                    os.fsync(dir_fd)
                finally:
                    os.close(dir_fd)
        except sqlite3.Error as exc:
            raise _sqlite_fault(self.describe(), exc) from None
        except OSError as exc:
            raise errors.LedgerUnavailable(
                f"cannot create the ledger database {self.path}: {exc.strerror or exc}"
            ) from None
        finally:
            for suffix in ("", "-wal", "-shm", "-journal"):
                with contextlib.suppress(OSError):
                    os.unlink(str(tmp) + suffix)

    def _setup(self, on_wait: OnWait | None) -> None:
        where = self.describe()
        with self.reading() as conn:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()}
            ours = tables & set(TABLES)
            if not ours:
                raise errors.LedgerCorrupt(
                    f"the ledger database ({where}) is a SQLite database without the ledger's tables: "
                    "not a dpcore ledger, and dpcore will not turn it into one. Point DPCORE_LEDGER_URL / "
                    "--ledger at the ledger file, or give a new path to 'python -m dpcore ledger init'"
                )
            if ours != set(TABLES):
                raise errors.LedgerCorrupt(
                    f"the ledger database ({where}) lacks the tables {sorted(set(TABLES) - ours)}: "
                    "restore it from a backup (docs/ledger.md)"
                )
            meta = read_meta(conn)
        version = check_version(meta, self.describe())
        if version < SCHEMA_VERSION:
            with self.locked(None, on_wait) as conn:
                meta = read_meta(conn)
                version = check_version(meta, self.describe())
                if version < SCHEMA_VERSION:  # not migrated by a racing process meanwhile
                    migrate(self, conn, version, record=True)
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
    def drop_triggers(self, conn: Any) -> None:
        for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'dpcore%'"
        ).fetchall():
            conn.execute(f'DROP TRIGGER "{name}"')

    def add_hash_columns(self, conn: Any) -> None:
        have = {r[1] for r in conn.execute("PRAGMA table_info(dpcore_entries)").fetchall()}
        for col in ("prev_hash", "entry_hash"):
            if col not in have:
                conn.execute(f"ALTER TABLE dpcore_entries ADD COLUMN {col} TEXT")
        if "result_hash" not in {r[1] for r in conn.execute("PRAGMA table_info(dpcore_results)").fetchall()}:
            conn.execute("ALTER TABLE dpcore_results ADD COLUMN result_hash TEXT")

    def create_triggers(self, conn: Any) -> None:
        for sql in sqlite_v2_triggers().values():
            conn.execute(sql)

    def set_schema_version(self, conn: Any, version: int) -> None:
        conn.execute("DROP TRIGGER IF EXISTS dpcore_meta_no_update")
        conn.execute("UPDATE dpcore_meta SET value = ? WHERE key = 'schema_version'", (str(version),))
        conn.execute(sqlite_v2_triggers()["dpcore_meta_no_update"])

    def create_population_tables(self, conn: Any) -> None:
        for stmt in split_sql(SQLITE_V3):
            conn.execute(stmt)
        for sql in sqlite_v3_triggers().values():
            conn.execute(sql)

    def trigger_names(self, conn: Any) -> set[str]:
        return {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall()}

    def expected_triggers(self) -> set[str]:
        return set(sqlite_v2_triggers()) | set(sqlite_v3_triggers())

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
                        on_wait(lock_note(self.describe(), waited, BUSY_TIMEOUT_S))
        finally:
            with contextlib.suppress(sqlite3.Error):
                conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")

    @contextlib.contextmanager
    def _transaction(self, begin: str, on_wait: OnWait | None = None) -> Iterator[sqlite3.Connection]:
        with self._lock:
            if self._inode is not None and self._stat_key() != self._inode:
                # the pooled connection would write into a deleted or replaced file, where nobody will read it
                self._drop()
                raise errors.LedgerMissing(
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
                        raise errors.LedgerCorrupt(
                            f"the ledger database ({self.describe()}) is damaged: {'; '.join(problems)}. "
                            f"{errors.NOTHING_WRITTEN_NOTE}"
                        )
                yield conn
                history = history_of(conn) if write else None
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
    def _after_commit(self, conn: sqlite3.Connection, history: History | None) -> None:
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
            write_head(self.head_path, history)

    @property
    def head_path(self) -> Path:
        """The head file beside the ledger: how much history it held at its last commit."""
        return self.path.with_name(self.path.name + HEAD_SUFFIX)

    def history_problems(self, conn: Any) -> list[str]:
        """What the database lacks of the history its head file records (inside a transaction)."""
        try:
            recorded = read_head(self.head_path)
        except (OSError, ValueError) as exc:
            return [
                f"the head file {self.head_path} cannot be read ({errors.first_line(exc)}): dpcore writes it after every "
                "commit and nothing else should; compare it with the ledger, then move it away (the next write "
                "records a new one)"
            ]
        held = history_of(conn) if recorded is not None else None
        if recorded is None or held is None:
            return []
        lost = held.lacks(recorded)
        if recorded.last_entry:
            row = conn.execute("SELECT entry_hash FROM dpcore_entries WHERE id = ?", (recorded.last_entry,)).fetchone()
            if row is None or row[0] != recorded.head:
                lost.append(f"entry {recorded.last_entry} with the chain head {recorded.head[:16]}")
        if not lost:
            return []
        return [
            f"history lost: the head file {self.head_path.name} (written after every commit) records "
            f"{recorded.describe()}, the database holds {held.describe()}: it lacks {', '.join(lost)}. The ledger "
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
