"""The head file beside a SQLite ledger (``<ledger>.head``): how much history the ledger held at its last commit.

A ledger file copied or restored without its ``-wal`` file, or from an older copy, holds less history than its head
file records: :meth:`dpcore.ledger.backends.sqlite.SqliteBackend.history_problems` finds it, and the ledger is not
written to (a new charge would hide the loss). The head file is written after every commit, atomically (a new file,
synced, renamed over), so it may lag the database, never lead it.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..chain import CHAIN_GENESIS
from .schema import SCHEMA_VERSION

__all__ = ["HEAD_SUFFIX"]

#: the head file beside a SQLite ledger (``<ledger>.head``): how much history the ledger held at its last commit
HEAD_SUFFIX = ".head"


@dataclass(frozen=True)
class History:
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
    def from_json(cls, text: str) -> History:
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

    def lacks(self, earlier: History) -> list[str]:
        """What of ``earlier`` (a state this ledger had) it no longer holds, by count (the chain head is checked
        against the database: :meth:`.sqlite.SqliteBackend.history_problems`)."""
        singular = {"entries": "entry", "results": "result", "accounts": "account", "populations": "population"}
        return [
            f"{n} {singular.get(k, 'source') if n == 1 else k}"
            for k in self._COUNTS
            if (n := getattr(earlier, k) - getattr(self, k)) > 0
        ]


def history_of(conn: Any) -> History | None:
    """How much history the database holds now (inside a transaction); None before the ledger is at this
    dpcore's schema (a migration records it when it commits)."""
    row = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'schema_version'").fetchone()
    if row is None or row[0] != str(SCHEMA_VERSION):
        return None
    last = conn.execute("SELECT id, entry_hash FROM dpcore_entries ORDER BY id DESC LIMIT 1").fetchone()

    def count(table: str) -> int:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])

    return History(
        entries=count("dpcore_entries"),
        last_entry=0 if last is None else int(last[0]),
        head=CHAIN_GENESIS if last is None else str(last[1] or ""),
        results=count("dpcore_results"),
        accounts=count("dpcore_accounts"),
        populations=count("dpcore_populations"),
        sources=count("dpcore_sources"),
    )


def read_head(path: Path) -> History | None:
    """The head file's history; None when there is none; ValueError or OSError when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return History.from_json(text)


def write_head(path: Path, history: History) -> None:
    """Replace the head file (atomically: a new file, synced, renamed over) when ``history`` holds all it
    records. It is written after the commit, so it may lag the database (a crash in between, or racing
    writers: an older state renamed last), never lead it; a lag is no alarm, and the next commit catches up.
    A head file that cannot be written (a read-only folder) is left as it is: the commit stands."""
    try:
        current = read_head(path)
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
