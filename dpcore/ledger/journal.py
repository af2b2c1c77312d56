"""The local journal of result marks that could not reach the database.

:meth:`dpcore.ledger.Account.attach_result` appends a mark here (a JSON line, mode 0600: beside a SQLite ledger,
under the user's data folder for PostgreSQL) when the database stays unreachable through its retries, so a delivered
release is never shown as 'not revealed'; every later open of the ledger, and the next charge of a long-lived
process, replays the journal (idempotent) and removes what it recorded. Writers and the replay hold an exclusive
``flock`` on the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..validation import DPInputError
from .backends.base import Backend, OnWait
from .entries import insert_result
from .errors import LedgerError, LedgerUnavailable
from .paths import make_private_dirs


@contextlib.contextmanager
def locked_file(path: Path, flags: int) -> Iterator[int | None]:
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


def journal_append(paths: list[Path], line: dict[str, Any]) -> Path:
    """Append the mark ``line`` to the first of ``paths`` that can be written (synced); the path written."""
    data = (json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
    errors = []
    for path in paths:
        try:
            if not path.parent.exists():
                make_private_dirs(path.parent)
            with locked_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT) as fd:
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


def replay_journal(backend: Backend, on_wait: OnWait | None) -> int:
    """Record the results journaled by :meth:`Account.attach_result` while the database was
    unreachable, then remove them from the journal. Idempotent: a mark already recorded (another
    process replayed it, or the first try did commit) is dropped. A mark the database refuses (its
    entry is not in this ledger) stays for a person to look at (``verify`` lists it). Returns the
    number recorded; leaves the journal when the database is still unwritable."""
    recorded = 0
    for path in backend.journal_paths():
        if not path.exists():
            continue
        try:
            with locked_file(path, os.O_RDWR) as fd:
                if fd is None:
                    continue
                with os.fdopen(os.dup(fd), "rb") as fh:
                    lines = [line for line in fh.read().decode("utf-8", "replace").splitlines() if line.strip()]
                keep: list[str] = []
                with backend.locked(None, on_wait) as conn:
                    for line in lines:
                        try:
                            mark = json.loads(line)
                            done = insert_result(
                                conn,
                                backend.ph,
                                backend.describe(),
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


def pending_results(backend: Backend) -> list[tuple[str, int]]:
    """(journal file, number of result marks) still waiting to be recorded in the database."""
    out = []
    for path in backend.journal_paths():
        with contextlib.suppress(OSError):
            with open(path, "rb") as fh:
                n = sum(1 for line in fh if line.strip())
            if n:
                out.append((str(path), n))
    return out
