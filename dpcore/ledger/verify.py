"""Verification: the ledger's integrity, schema and append-only triggers, and the hash chain recomputed.

:func:`verify_ledger` is what ``python -m dpcore ledger verify`` and :meth:`dpcore.ledger.LedgerDB.verify` run, and
what a release runs before it charges anything (``open_ledger(..., verify=True)``): a ledger whose history was
edited, cut or lost must not take more charges. It costs a pass over every entry (docs/benchmarks.md: the ledger).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass

from .backends.base import Backend
from .backends.schema import SCHEMA_VERSION, read_meta
from .chain import CHAIN_GENESIS, entry_hash, hashed_accounts, public_id_of, result_hash
from .journal import pending_results

__all__ = ["VerifyReport"]


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


# complexity above the cap: one check per ledger invariant, each reported on its own
def verify_ledger(backend: Backend) -> VerifyReport:  # noqa: C901
    """What :meth:`dpcore.ledger.LedgerDB.verify` checks (its docstring says what it finds and what it cannot see),
    on the ledger database ``backend``."""
    problems: list[str] = []
    notes: list[str] = []
    with backend.reading() as conn:
        if backend.name == "sqlite":
            checks = [r[0] for r in conn.execute("PRAGMA integrity_check").fetchall()]
            if checks != ["ok"]:
                problems.append("SQLite integrity check: " + "; ".join(checks[:3]))
        meta = read_meta(conn)
        version = int(meta.get("schema_version", "0") or 0)
        if version != SCHEMA_VERSION:
            problems.append(f"schema version {version}, expected {SCHEMA_VERSION}")
        if version >= 4:
            try:
                from .. import record_fingerprint as records

                records.check_versions(json.loads(meta.get("record_fingerprints", "")))
            except (TypeError, ValueError):
                problems.append(
                    "the record fingerprint versions (dpcore_meta.record_fingerprints) are missing or damaged"
                )
        missing = sorted(backend.expected_triggers() - backend.trigger_names(conn))
        if missing:
            problems.append(f"append-only triggers missing (someone dropped them): {', '.join(missing)}")
        key = meta.get("public_id_key", "")
        accounts = hashed_accounts(conn)
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
                    else f"entry {entry_id}, the first, does not start the chain (the entries before it were deleted)"
                )
            want = entry_hash(r[8] or "", public_id_of(key, r[1]), accounts[r[1]], r[2], r[3], r[4], r[5], r[6], r[7])
            if r[9] != want:
                if r[9] == entry_hash(
                    r[8] or "", public_id_of("", r[1]), accounts[r[1]], r[2], r[3], r[4], r[5], r[6], r[7]
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
            elif r[3] != result_hash(hashes[int(r[0])], r[1], r[2]):
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
    for path, n in pending_results(backend):
        notes.append(f"{n} result(s) journaled at {path}, recorded at the next write-open")
    return VerifyReport(
        backend.describe(), version, len(accounts), n_entries, n_results, head, tuple(problems), tuple(notes)
    )
