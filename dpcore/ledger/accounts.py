"""The ledger and its accounts: :class:`LedgerDB` (open with :func:`open_ledger`), its accounts and populations,
and :class:`Account`, one budget: a cap fixed at creation and the charges appended against it.

**Charge before reveal**: :meth:`Account.charge` checks the cap and appends the entry in ONE transaction that holds
the account's lock (SQLite ``BEGIN IMMEDIATE``, a database-wide write lock; PostgreSQL ``SELECT ... FOR UPDATE`` on
the account row, then a transaction-scoped advisory lock for the hash chain), so racing sessions, tabs or processes
are serialised and can never together spend more than the cap. Callers draw noise only after ``charge`` returned; a
crash after the commit loses at most the release, never the charge. The cap check is :func:`.caps.check_fits`.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__
from .. import budget as _budget
from ..validation import DPInputError, check_delta, check_epsilon
from . import chain
from .backends import backend_for
from .backends.base import Backend, OnWait
from .backends.schema import FILE_BYTES_MARK, RECORDS_MARK
from .backends.sqlite import SqliteBackend
from .caps import check_fits, spent_under
from .chain import looks_like_fingerprint, public_id_of
from .entries import Entry, insert_result, now, read_costs, read_entries, to_json
from .errors import CHARGE_NOTE, LedgerCorrupt, LedgerError, LedgerUnavailable, PopulationError
from .export import backup_sqlite, export_accounts
from .journal import journal_append, pending_results, replay_journal
from .sources import (
    attach_keys,
    check_fingerprint,
    count_sources,
    find_source,
    fingerprint_keys,
    read_fingerprint_versions,
)
from .verify import VerifyReport, verify_ledger

__all__ = [
    "ATTACH_RETRY_DELAYS_S",
    "Account",
    "LedgerDB",
    "ResultLink",
    "check_population_name",
    "init_ledger",
    "open_ledger",
]

#: pauses between the tries of attach_result before it journals the result (about 4 s in all: a
#: PostgreSQL restart or a brief network cut is over by then; a read-only file is not, and is journaled)
ATTACH_RETRY_DELAYS_S = (0.25, 0.5, 1.0, 2.0)


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
    backend = backend_for(url)
    backend.open(create=create, on_wait=on_wait)
    db = LedgerDB(backend, on_wait=on_wait)
    replay_journal(backend, on_wait)
    if verify:
        db.require_intact()
    return db


def init_ledger(url: str | os.PathLike | None = None, *, on_wait: OnWait | None = None) -> LedgerDB:
    """Create a new, empty ledger at ``url`` (``python -m dpcore ledger init``); refuses
    (:class:`LedgerExists`) when a file, or the ledger's tables, already exist there: an existing
    ledger is never re-initialised, whatever state it is in."""
    backend = backend_for(url)
    backend.create_new(on_wait=on_wait)
    # then opened as any ledger is: its key read (a charge through a ledger only created hashed its entry under
    # the public id of an empty key, which verify then found edited) and, for SQLite, the file's identity noted
    backend.open(create=False, on_wait=on_wait)
    return LedgerDB(backend, on_wait=on_wait)


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
    if looks_like_fingerprint(text):
        raise DPInputError(
            "a population name cannot be 64 hex digits (that is how record fingerprints look): "
            "give it a name people read"
        )
    return text


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


class LedgerDB:
    """A ledger database (see the module docstring); get accounts with :meth:`account`."""

    def __init__(self, backend: Backend, on_wait: OnWait | None = None) -> None:
        self.database = backend
        self.on_wait = on_wait
        self._record_versions: tuple[int, ...] | None = None

    @property
    def backend(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self.database.name

    def describe(self) -> str:
        """Where the ledger lives (never shows a password)."""
        return self.database.describe()

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
        ph = self.database.ph
        select = f"SELECT label, cap_epsilon, cap_delta, created FROM dpcore_accounts WHERE dataset_id = {ph}"
        with self.database.reading() as conn:  # the common case (the account exists) takes no write lock
            row = conn.execute(select, (dataset_id,)).fetchone()
        if row is None:
            with self.database.locked(dataset_id, self.on_wait) as conn:
                row = conn.execute(select, (dataset_id,)).fetchone()
                if row is None:
                    row = (label, cap_eps, 0.0 if cap_d is None else cap_d, now())
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
        ph = self.database.ph
        with self.database.reading() as conn:
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
        ph = self.database.ph
        dataset_id = name  # as the command line keyed accounts before populations: old plans find their budget
        with self.database.locked(dataset_id, self.on_wait) as conn:
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
                        (dataset_id, label.strip() or name, cap_eps, cap_d, now(), f"dpcore {__version__}"),
                    )
                conn.execute(
                    f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, {ph}) "
                    f"ON CONFLICT (name) DO NOTHING",
                    (name, dataset_id, now(), f"dpcore {__version__}"),
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
        ph = self.database.ph
        with self.database.reading() as conn:
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
        if acct is None and not looks_like_fingerprint(name.strip()) and self.find_account(name.strip()) is not None:
            # an account opened by name through the API (``db.account(name, cap_epsilon=...)``) was given its cap
            # in code by whoever holds the ledger, as registering does: it becomes the population of that name
            ph = self.database.ph
            with self.database.locked(name.strip(), self.on_wait) as conn:
                conn.execute(
                    f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, "
                    f"{ph}) ON CONFLICT DO NOTHING",
                    (name.strip(), name.strip(), now(), f"dpcore {__version__}"),
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
        with self.database.reading() as conn:
            rows = conn.execute(
                "SELECT p.name, p.dataset_id, a.label, a.cap_epsilon, a.cap_delta, a.created "
                "FROM dpcore_populations p JOIN dpcore_accounts a ON a.dataset_id = p.dataset_id "
                "ORDER BY a.created, p.name"
            ).fetchall()
        return [Account(self, r[1], r[2], float(r[3]), float(r[4]), r[5], population=r[0]) for r in rows]

    def population_of_account(self, dataset_id: str) -> str | None:
        """The name of the population whose account is ``dataset_id``, or None."""
        dataset_id = _check_dataset_id(dataset_id)
        ph = self.database.ph
        with self.database.reading() as conn:
            row = conn.execute(f"SELECT name FROM dpcore_populations WHERE dataset_id = {ph}", (dataset_id,)).fetchone()
        return None if row is None else row[0]

    @property
    def record_fingerprint_versions(self) -> tuple[int, ...]:
        """The record fingerprint versions (:mod:`dpcore.record_fingerprint`) this ledger computes for every source,
        fixed when the ledger was created or upgraded to schema 4: (2,), or (1, 2) for a ledger whose sources were
        attached by version 1. :meth:`attach_source` wants each of them."""
        if self._record_versions is None:
            self._record_versions = read_fingerprint_versions(self.database)
        return self._record_versions

    def source_population(self, fingerprint: Any) -> Account | None:
        """The account of the population the source with this record fingerprint is attached to, or None.
        ``fingerprint``: a :class:`~dpcore.record_fingerprint.RecordFingerprints` with every version this ledger
        reads, or one hex (a byte key, or the newest version's fingerprint in a ledger that reads only it)."""
        from .. import record_fingerprint as records

        if isinstance(fingerprint, records.RecordFingerprints):
            keys = [hexdigest for _, hexdigest in fingerprint_keys(self.record_fingerprint_versions, fingerprint)]
        else:
            keys = [check_fingerprint(fingerprint)]
        row = find_source(self.database, keys)
        if row is None:
            return None
        return Account(self, row[1], row[2], float(row[3]), float(row[4]), row[5], population=row[0])

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
            keys = [(check_fingerprint(fingerprint), FILE_BYTES_MARK)]
        else:
            keys = [
                (hexdigest, RECORDS_MARK.format(version=v))
                for v, hexdigest in fingerprint_keys(self.record_fingerprint_versions, fingerprint)
            ]
        target = self.require_population(population)
        others = attach_keys(self.database, keys, target.dataset_id, self.on_wait, file_bytes=file_bytes)
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
        return count_sources(self.database, dataset_id)

    def accounts(self) -> list[Account]:
        """Every account, oldest first."""
        with self.database.reading() as conn:
            rows = conn.execute(
                "SELECT dataset_id, label, cap_epsilon, cap_delta, created FROM dpcore_accounts "
                "ORDER BY created, dataset_id"
            ).fetchall()
        return [Account(self, r[0], r[1], float(r[2]), float(r[3]), r[4]) for r in rows]

    def export(self, fmt: str = "json") -> str:
        """Every account and entry, as JSON (a document) or CSV (one row per entry), for the archive.
        Accounts are named by their public id, never by their dataset id (a fingerprint of the data)."""
        return export_accounts(self.accounts(), fmt, self.describe())

    def backup(self, dest: str | os.PathLike) -> Path:
        """Write a consistent copy of this SQLite ledger to ``dest`` (a new path; mode 0600) with SQLite's online
        backup, even while releases run (``python -m dpcore ledger backup``); returns the copy's path. A PostgreSQL
        ledger is backed up with ``pg_dump`` (docs/ledger.md): :class:`DPInputError`."""
        if not isinstance(self.database, SqliteBackend):
            raise DPInputError(
                "'dpcore ledger backup' copies SQLite ledgers; back up a PostgreSQL ledger with pg_dump (docs/ledger.md)"
            )
        return backup_sqlite(self.database.path, self.describe(), dest)

    def pending_results(self) -> list[tuple[str, int]]:
        """(journal file, number of result marks) still waiting to be recorded in the database."""
        return pending_results(self.database)

    # ----- integrity ---------------------------------------------------------------------------------
    def verify(self) -> VerifyReport:
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
        return verify_ledger(self.database)

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


def _entry_recorded(backend: Backend, entry_id: int, entry_hash: str) -> bool | None:
    """Whether the entry ``entry_id`` with this hash is in the database (a fresh read after a fault at its
    commit); None when the database cannot be read either."""
    try:
        with backend.reading() as conn:
            row = conn.execute(f"SELECT entry_hash FROM dpcore_entries WHERE id = {backend.ph}", (entry_id,)).fetchone()
    except LedgerError:
        return None
    return row is not None and row[0] == entry_hash


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
        return public_id_of(self.db.database.public_id_key, self.dataset_id)

    def display_name(self) -> str:
        """The label and the start of the public id, for messages: never the start of a fingerprint (messages
        reach screens, logs and bug reports). A dataset id that is a name (not a 64-hex hash) is shown as is."""
        if self.label:
            return f"{self.label} [{self.public_id[:12]}]"
        return f"account {self.public_id[:12]}" if self.id_is_a_hash() else self.dataset_id

    def id_is_a_hash(self) -> bool:
        """True when the dataset id looks like a fingerprint (64 hex digits): kept out of messages and listings."""
        return looks_like_fingerprint(self.dataset_id)

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
        record_json = to_json({} if record is None else record, "release record")
        cost_json = to_json(cost.to_dict(), "cost")
        cap = self.cap
        backend = self.db.database
        on_wait = self.db.on_wait if on_wait is None else on_wait
        if any(path.exists() for path in backend.journal_paths()):
            # a long-lived process (the app) opens the ledger once: the marks it journaled while the
            # database was away are recorded at its next charge, not only at the next open
            replay_journal(backend, self.db.on_wait)
        written: list[Any] = []  # (id, time, hash) of the entry once inserted: a fault at the commit is looked up
        try:
            entry_id, stamp, entry_hash = self._append(
                backend, cost, cost_json, record_json, label, cap, on_wait, written
            )
        except LedgerError as exc:
            if not (exc.at_commit and written):
                raise  # before the commit: its message says that nothing was written
            entry_id, stamp, entry_hash = written
            recorded = _entry_recorded(backend, entry_id, entry_hash)
            if recorded is None:
                raise  # the ledger cannot be read either: its message says to check the archive
            if not recorded:
                reason = str(exc).replace(CHARGE_NOTE, "").strip()
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
        backend: Backend,
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
            costs = read_costs(conn, ph, self.db.describe(), self.dataset_id)
            check_fits(cap, costs, cost, label, self.display_name())
            backend.lock_chain(conn, on_wait)
            last = conn.execute("SELECT entry_hash FROM dpcore_entries ORDER BY id DESC LIMIT 1").fetchone()
            prev = chain.CHAIN_GENESIS if last is None else last[0]
            stamp = now()
            # the entry's content, in the columns' order: the hash is computed over exactly what is inserted
            content = (label, cost_json, float(cost.epsilon), float(cost.delta), stamp, record_json)
            entry_hash = chain.entry_hash(
                prev, self.public_id, (row[0], float(row[1]), float(row[2]), row[3]), *content
            )
            params = (self.dataset_id, *content, prev, entry_hash)
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

    def would_exceed(self, cost: _budget.PrivacyCost | float) -> bool:
        """True when charging ``cost`` now would be refused (a read-only check; :meth:`charge` re-checks
        under the lock, so a race between this check and the charge cannot overspend)."""
        if not isinstance(cost, _budget.PrivacyCost):
            cost = _budget.pure(cost)
        try:
            check_fits(self.cap, self._costs(), cost, "check", self.display_name())
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
        result_json = to_json(result, "release result")
        entry_id = int(entry_id)
        on_wait = self.db.on_wait if on_wait is None else on_wait
        stamp = now()
        delays = tuple(ATTACH_RETRY_DELAYS_S)
        last: LedgerError | None = None
        for attempt in range(len(delays) + 1):
            try:
                with self.db.database.locked(self.dataset_id, on_wait) as conn:
                    # replay=True after a failed try: that try's commit may have landed before the error
                    insert_result(
                        conn,
                        self.db.database.ph,
                        self.db.describe(),
                        self.dataset_id,
                        entry_id,
                        stamp,
                        result_json,
                        replay=attempt > 0,
                    )
                return ResultLink(entry_id, True)
            except (LedgerUnavailable, LedgerCorrupt) as exc:
                last = exc
                if attempt < len(delays):
                    time.sleep(delays[attempt])
        reason = str(last).split(". ")[0] if last is not None else "unavailable"
        path = journal_append(
            self.db.database.journal_paths(),
            {"v": 1, "dataset_id": self.dataset_id, "entry_id": entry_id, "time": stamp, "result": result_json},
        )
        return ResultLink(entry_id, False, str(path), reason)

    # ----- reading ---------------------------------------------------------------------------------
    def entries(self) -> list[Entry]:
        """Every entry of this account, oldest first (one consistent snapshot)."""
        with self.db.database.reading() as conn:
            return read_entries(conn, self.db.database.ph, self.db.describe(), self.dataset_id)

    def _costs(self) -> list[_budget.PrivacyCost]:
        with self.db.database.reading() as conn:
            return read_costs(conn, self.db.database.ph, self.db.describe(), self.dataset_id)

    def spent(self, entries: list[Entry] | None = None) -> dict[str, float]:
        """{'epsilon': ..., 'delta': ...} spent (zCDP entries converted at the delta the cap leaves).
        ``entries``: computed from these (a snapshot from :meth:`entries`) instead of reading again."""
        costs = self._costs() if entries is None else [e.cost for e in entries]
        eps, delta = spent_under(self.cap, costs)
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
        return export_accounts([self], fmt, self.db.describe(), None if entries is None else {self.dataset_id: entries})
