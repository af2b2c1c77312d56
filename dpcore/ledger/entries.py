"""An entry as the ledger stores it: the charge's JSON (its cost and release record), the result appended to it,
and reading them back (a damaged stored text is a :class:`LedgerCorrupt` naming the entry)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

import numpy as np

from .. import budget as _budget
from ..validation import DPInputError
from .chain import result_hash
from .errors import LedgerCorrupt, first_line

__all__ = ["Entry"]


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


def now() -> str:
    """The time stamp of a row: UTC, ISO 8601 to the microsecond."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def json_default(obj: Any) -> Any:
    """JSON for the numpy numbers, arrays, sets and result objects a record holds."""
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


def to_json(obj: Any, what: str) -> str:
    """The stored text of a record, result or cost; :class:`DPInputError` naming ``what`` when it is not JSON."""
    try:
        return json.dumps(obj, default=json_default, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise DPInputError(f"the {what} must be JSON (numbers finite, keys strings): {exc}") from None


@functools.lru_cache(maxsize=4096)
def cost_from_json(text: str) -> _budget.PrivacyCost:  # PrivacyCost is frozen: sharing instances is safe
    """A stored cost; ValueError when the text is not one (a damaged entry: the caller names it)."""
    try:
        d = json.loads(text)
        return _budget.PrivacyCost(
            d["kind"], epsilon=d.get("epsilon", 0.0), delta=d.get("delta", 0.0), rho=d.get("rho", 0.0)
        )
    except (TypeError, KeyError, AttributeError, ValueError) as exc:
        raise ValueError(f"not a privacy cost ({first_line(exc)})") from None


def stored(parse: Callable[[str], Any], text: str, what: str, entry_id: Any, where: str) -> Any:
    """``parse(text)`` of an entry's stored JSON; a damaged one is :class:`LedgerCorrupt` naming the entry (never a
    JSON traceback): only a person with write access to the database changes stored text."""
    try:
        return parse(text)
    except (TypeError, ValueError) as exc:
        raise LedgerCorrupt(
            f"the ledger database ({where}) is damaged: the {what} of entry {entry_id} cannot be read "
            f"({first_line(exc)}); run 'python -m dpcore ledger verify' and restore the ledger from a backup "
            "(docs/ledger.md). Nothing was charged or released."
        ) from None


def read_entries(conn: Any, ph: str, where: str, dataset_id: str) -> list[Entry]:
    """Every entry of the account ``dataset_id`` with its result, oldest first (``conn``: inside a transaction;
    ``ph``: the backend's placeholder; ``where``: the ledger, for messages)."""
    rows = conn.execute(
        f"SELECT e.id, e.label, e.cost, e.epsilon, e.delta, e.time, e.record, r.result, e.entry_hash "
        f"FROM dpcore_entries e LEFT JOIN dpcore_results r ON r.entry_id = e.id WHERE e.dataset_id = {ph} "
        f"ORDER BY e.id",
        (dataset_id,),
    ).fetchall()
    return [
        Entry(
            id=int(r[0]),
            dataset_id=dataset_id,
            label=r[1],
            cost=stored(cost_from_json, r[2], "cost", r[0], where),
            epsilon=float(r[3]),
            delta=float(r[4]),
            time=r[5],
            record=stored(json.loads, r[6], "record", r[0], where),
            result=None if r[7] is None else stored(json.loads, r[7], "result", r[0], where),
            entry_hash=r[8] or "",
        )
        for r in rows
    ]


def read_costs(conn: Any, ph: str, where: str, dataset_id: str) -> list[_budget.PrivacyCost]:
    """The costs of the account's entries, oldest first (what its cap is checked against)."""
    return [
        stored(cost_from_json, r[1], "cost", r[0], where)
        for r in conn.execute(
            f"SELECT id, cost FROM dpcore_entries WHERE dataset_id = {ph} ORDER BY id", (dataset_id,)
        ).fetchall()
    ]


def insert_result(
    conn: Any,
    ph: str,
    where: str,
    dataset_id: str,
    entry_id: int,
    stamp: str,
    result_json: str,
    *,
    replay: bool = False,
) -> bool:
    """Insert a result, hashed onto its entry's hash (False when the entry already has one and ``replay``:
    idempotent)."""
    row = conn.execute(f"SELECT dataset_id, entry_hash FROM dpcore_entries WHERE id = {ph}", (entry_id,)).fetchone()
    if row is None or row[0] != dataset_id:
        raise DPInputError(f"entry {entry_id} is not an entry of this account in {where}")
    if conn.execute(f"SELECT 1 FROM dpcore_results WHERE entry_id = {ph}", (entry_id,)).fetchone():
        if replay:
            return False
        raise DPInputError(f"entry {entry_id} already has its result (results are append-only)")
    conn.execute(
        f"INSERT INTO dpcore_results(entry_id, time, result, result_hash) VALUES ({ph}, {ph}, {ph}, {ph})",
        (entry_id, stamp, result_json, result_hash(row[1], stamp, result_json)),
    )
    return True
