"""Release mode: make the real DP release of planned statistics from a confidential file.

What happens (:func:`make_release`):

1. The total cost of the requested statistics is composed and checked against the cap of the
   ledger account **before** anything is charged or drawn; a release that would exceed it is refused
   (``dpcore.ledger.BudgetExceeded``, a ``DPInputError``). The decision uses public inputs only.
   Then the total is **charged first**, in one database transaction that re-checks the cap under the
   account's lock (:meth:`dpcore.ledger.Account.charge`), with the planned record (dataset identity,
   mechanisms, parameters, costs): racing sessions cannot overspend, and a crash after this point can
   lose the release but never the charge.
2. Each statistic is released by its private ``_draw_real`` (:mod:`dpcore.planner`), whose noise comes
   from :mod:`dpcore.noise.secure`: OpenDP's exact discrete Laplace for counts and
   histograms, OpenDP's floating-point-safe Laplace for means and the ratio's two counts, and the
   certified generalized-Cauchy sampler (exact inversion of an ``os.urandom`` uniform of 128+ bits
   against the CDF in high precision, on a public grid) for the Gini. The record names the
   measurement and its privacy map (``measurement``, ``privacy_map``); its epsilon/delta are the
   certified ones (docs/secure_noise.md). Other statistic objects fall back to their own
   ``release`` with the OS CSPRNG (``sampler`` says which). A real draw is reachable only here, after
   the charge; a durable account refuses a caller's ``rng`` (a seeded draw could be inverted).
3. Released values are rounded to a public grid (post-processing, no privacy cost).
4. The released records are appended to the charged ledger entry (``attach_result``) and only then
   returned (revealed). If drawing fails, the charge stays and the error says so. If the ledger cannot
   record the result (unreachable after retries), the ledger journals it locally and every record's
   ``notes`` ends with a ``"ledger: ..."`` line saying where (the entry counts in full meanwhile).
5. A :class:`ReleaseRecord` per statistic holds the released numbers, the mechanism, all public
   parameters, epsilon/delta spent, the dataset identity (the ledger account's public id -- a keyed
   hash, never the content fingerprint --, label, columns, n -- public in the replace-one relation),
   the ledger entry id, a UTC timestamp and ``dpcore.__version__``. It never holds a
   true (confidential) value; data-dependent noise scales (smooth sensitivity) are not published.

Neighbouring data sets behave alike: whether a statistic releases, and every record field except
the released numbers, depend on public inputs only (tests/test_release_neighbours.py).
"""

from __future__ import annotations

import io
import json
import math
import os
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any

import numpy as np

from . import __version__
from . import budget as _budget
from .rng import SecureRandom, secure_generator
from .validation import DPInputError, check_epsilon

__all__ = [
    "ReleaseRecord",
    "make_release",
    "records_to_json",
    "records_to_csv",
    "ROUNDING",
    "secure_rng",
    "MISSING_INCOME_AT_LOWER_BOUND",
    "missing_income_value",
    "with_missing_incomes",
    "read_release",
    "recompute_intervals",
]

#: Public rounding grid per statistic kind (units of the statistic).
ROUNDING = {
    "count": 1.0,
    "mean": 0.01,
    "group_means": 0.01,
    "percentiles": 1.0,
    "group_medians": 1.0,
    "gini": 1e-6,
    "ratio": 1e-6,
}

#: The record's ``dataset.missing_values`` of an app release: the command line's ``missing_income = "lower"``
#: rule. Why a rule and not a filter: removing a row whose income is missing changes the published n (and a
#: group's size) when only one person's value goes missing; counted at a public value, that person's income
#: going missing is a change of their value, which the replace-one relation covers: only noisy numbers move.
#: The number of such rows is data-dependent and never written in a record.
MISSING_INCOME_AT_LOWER_BOUND = (
    "no row is left out: a row whose income is missing (or negative, with the 'drop' policy for negative incomes) "
    "stays in n and is counted at the statistic's public lower bound: the Gini's and the means' 'lower' clip bound; "
    "the first bin of a percentile histogram; not a case of a relative risk of low income; not above the "
    "threshold of a count (the command line's missing_income = \"lower\")"
)


def missing_income_value(kind: str, params: dict) -> float:
    """The public income a missing income is counted at, for a statistic ``kind`` with ``params`` (those of
    :func:`dpcore.planner.make_statistic`): see :data:`MISSING_INCOME_AT_LOWER_BOUND`."""
    if kind in ("gini", "mean", "group_means"):
        return float(params.get("lower", 0.0))
    if kind in ("percentiles", "group_medians"):
        return 0.0  # below the first public edge (PSEO bins start at $10,000): the first bin
    threshold = float(params["threshold"])
    if not math.isfinite(threshold):
        raise DPInputError(f"the threshold of {kind!r} must be finite, got {threshold!r}")
    if kind == "ratio":
        return threshold  # a case is income < threshold: at the threshold it is not a case
    if kind == "count":
        return threshold - max(1.0, abs(threshold))  # counted are incomes >= threshold: this one is not
    raise DPInputError(f"unknown statistic kind {kind!r}")


def with_missing_incomes(
    kind: str, params: dict, values: Any, groups: Any, missing_groups: Any, n_missing: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """(values, groups) of a release with ``n_missing`` rows of missing income put back at the public value
    of :func:`missing_income_value`; ``missing_groups``: their group labels (as text) when ``groups`` is given.
    """
    x = np.asarray(values, dtype=float)
    if isinstance(n_missing, bool) or not isinstance(n_missing, (int, np.integer)) or n_missing < 0:
        raise DPInputError(f"n_missing must be a count >= 0, got {n_missing!r}")
    if n_missing == 0:
        return x, None if groups is None else np.asarray(groups).astype(str)
    x = np.concatenate([x, np.full(int(n_missing), missing_income_value(kind, params))])
    if groups is None:
        return x, None
    extra = np.asarray(missing_groups if missing_groups is not None else [], dtype=object).astype(str)
    if extra.shape[0] != n_missing:
        raise DPInputError(
            f"give a group label for each of the {n_missing} rows with a missing income, got {extra.shape[0]}"
        )
    return x, np.concatenate([np.asarray(groups).astype(str), extra])


CSPRNG = "dpcore.rng.secure_generator() (os.urandom, the operating system's CSPRNG)"
FALLBACK = (
    "numpy PCG64 seeded with 256 bits from os.urandom (the method module accepts only numpy "
    "Generators; not itself a CSPRNG, but its seed is secret and never shown)"
)

NEIGHBOURING = {
    "count": "replace one record; n public",
    "mean": "replace one record; n and the clip range public",
    "group_means": "replace one person's value within their group; group labels and sizes public",
    "percentiles": "replace one person within a cell; cell sizes and bin edges public",
    "group_medians": "replace one person within a group; group sizes and bin edges public",
    "gini": "replace one record; n and [lower, upper] public",
    "ratio": "replace one record (it may change both counts); n_x and n_y public",
}


@dataclass(frozen=True)
class ReleaseRecord:
    """One released statistic: released values only (never the true ones) and everything to audit it."""

    statistic: str
    kind: str
    labels: tuple[str, ...]
    released: tuple[float, ...]
    mechanism: str
    parameters: dict
    epsilon: float
    delta: float
    neighbouring: str
    sampler: str
    rounding: float
    timestamp: str
    software: str = f"dpcore {__version__}"
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: public identity of the released dataset: ledger account public id, label, income/group column, n (public)
    dataset: dict = field(default_factory=dict)
    #: the composed privacy cost charged for this statistic (budget.PrivacyCost.to_dict())
    cost: dict = field(default_factory=dict)
    #: id of the durable ledger entry (dpcore.ledger) that paid for the release this record belongs to
    ledger_entry_id: int | None = None
    #: the OpenDP measurement (or certified dpcore sampler) that drew the noise, and its privacy map
    measurement: str = ""
    privacy_map: str = ""
    #: the interval of each released value at ``interval_level`` (dpcore.published: from published numbers only)
    released_lower: tuple[float, ...] = ()
    released_upper: tuple[float, ...] = ()
    interval_level: float | None = None
    #: the extra DP outputs the intervals are computed from (a noisy histogram, a bound on the Gini's sensitivity)
    published_inputs: dict = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["labels"] = list(self.labels)
        d["released"] = [float(v) for v in self.released]
        d["released_lower"] = [float(v) for v in self.released_lower]
        d["released_upper"] = [float(v) for v in self.released_upper]
        d["notes"] = list(self.notes)
        d["dpcore_version"] = __version__
        return d


def secure_rng() -> SecureRandom:
    """The OS-CSPRNG source used for real releases."""
    return secure_generator()


def _os_seeded_generator() -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int.from_bytes(os.urandom(32), "big"))))


def _round(values: np.ndarray, grid: float) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    decimals = -math.log10(grid)
    if abs(decimals - round(decimals)) < 1e-12:  # a power of ten: round in decimal, no 0.1 + 0.2 artefacts
        return np.round(v, int(round(decimals)))
    return np.round(v / grid) * grid


#: the sampler of a make_release on an in-memory budget with a caller's generator: reproducible from it
SIMULATION_SAMPLER = (
    "caller-supplied generator: a SIMULATION, NOT for real releases (the noise is reproducible from it)"
)
OPENDP_SAMPLER = (
    "OpenDP's exact samplers (discrete Laplace / floating-point-safe Laplace) or the certified "
    "generalized-Cauchy sampler of dpcore.noise.secure (os.urandom); see the measurement note"
)


def _is_secure_source(rng: Any) -> bool:
    """None or :class:`dpcore.rng.SecureRandom`: the sources of a real release (nothing a caller can replay)."""
    return rng is None or isinstance(rng, SecureRandom)


def _release_one(
    stat: Any, epsilon: float, rng: Any, level: float = 0.95
) -> tuple[np.ndarray, str] | tuple[np.ndarray, str, dict]:
    """Draw one statistic. Planned statistics (dpcore.planner: ``_draw_real`` / ``_draw``) return
    (values, sampler, extra) where ``extra`` names the OpenDP measurement / certified sampler and its
    privacy map (record fields ``measurement``, ``privacy_map`` and ``notes``); others (values, sampler).
    ``rng`` is a caller's generator only with an in-memory :class:`dpcore.budget.Ledger` (a simulation:
    :func:`make_release` refuses one with a durable account)."""
    if hasattr(stat, "_draw_real"):
        if _is_secure_source(rng):
            draw, sampler = stat._draw_real(epsilon, level=level), OPENDP_SAMPLER
        else:
            draw, sampler = stat._draw(epsilon, rng=rng, level=level), SIMULATION_SAMPLER
        notes = tuple(getattr(draw, "notes", ()))
        extra = {"measurement": draw.measurement, "privacy_map": draw.privacy_map, "notes": notes}
        published = getattr(draw, "published", None)
        if published is not None:
            extra.update(
                released_lower=tuple(float(v) for v in published["lower"]),
                released_upper=tuple(float(v) for v in published["upper"]),
                interval_level=published["level"],
                published_inputs=published["inputs"],
                published_values=published["values"],
            )
        return (np.asarray(draw.values, dtype=float), sampler, extra)
    if not _is_secure_source(rng):
        return np.asarray(stat.release(epsilon, rng=rng), dtype=float), SIMULATION_SAMPLER
    try:
        return np.asarray(stat.release(epsilon, rng=secure_rng()), dtype=float), CSPRNG
    except TypeError as exc:
        if "rng" not in str(exc):
            raise
        return np.asarray(stat.release(epsilon, rng=_os_seeded_generator()), dtype=float), FALLBACK


def _is_account(ledger: Any) -> bool:
    from . import ledger as _ledger

    return isinstance(ledger, _ledger.Account)


def _dataset_identity(ledger: Any, dataset: Any, stats: Sequence[Any]) -> dict[str, Any]:
    """The public identity of the released data: the ledger account's public id and label, columns, n.

    Not the dataset fingerprint: that is a hash of the confidential content (not a DP output; with all
    records but one known, hashing candidates would confirm the last). ``ledger_account`` is the
    account's keyed-hash public id (:attr:`dpcore.ledger.Account.public_id`)."""
    if dataset is not None and not isinstance(dataset, dict):
        raise TypeError("dataset must be a dict (income_column, group_column, n, source ...) or None")
    out: dict[str, Any] = {}
    if _is_account(ledger):
        out["ledger_account"] = ledger.public_id
        out["label"] = ledger.label
    out.update(_jsonable(dict(dataset or {})))
    if "n" not in out:
        sizes = set()
        for stat in stats:
            for attr in ("values", "x"):
                arr = getattr(stat, attr, None)
                if isinstance(arr, np.ndarray) and arr.ndim == 1:
                    sizes.add(int(arr.size))
                    break
        if len(sizes) == 1:
            out["n"] = sizes.pop()  # n is public in this project's neighbouring relation (replace one record)
    return out


def _planned_record(stat: Any, eps: float, cost: _budget.PrivacyCost) -> dict[str, Any]:
    """What is known before any noise is drawn (public inputs only): written with the charge."""
    return {
        "statistic": stat.name,
        "kind": stat.kind,
        "labels": list(stat.labels),
        "mechanism": stat.mechanism,
        "parameters": _jsonable(stat.params()),
        "epsilon": float(eps),
        "cost": cost.to_dict(),
        "neighbouring": getattr(stat, "neighbouring", None) or NEIGHBOURING.get(stat.kind, "replace one record"),
        "rounding": ROUNDING.get(stat.kind, 1e-6),
    }


def _unpack_release(result: Any) -> tuple[np.ndarray, str, dict[str, Any]]:
    """_release_one returns (values, sampler) or (values, sampler, extra record fields)."""
    if isinstance(result, tuple) and len(result) == 3:
        values, sampler, extra = result
        return np.asarray(values, dtype=float), str(sampler), dict(extra or {})
    values, sampler = result
    return np.asarray(values, dtype=float), str(sampler), {}


# complexity above the cap: the release steps in order: the order (check, charge, draw, record) is the safety argument
def make_release(  # noqa: C901
    items: Sequence[tuple[Any, float]],
    ledger: Any,
    rng: Any = None,
    *,
    dataset: dict | None = None,
    level: float = 0.95,
) -> list[ReleaseRecord]:
    """Release every (statistic, epsilon) pair on its (confidential) data, paying from ``ledger``.

    ``ledger``: a durable :class:`dpcore.ledger.Account` (real releases; ``db.account(...)``) or, for
    backwards compatibility, an in-memory :class:`dpcore.budget.Ledger`. ``dataset``: public identity
    of the data written into every record (``income_column``, ``group_column``, ``n``, ``source`` ...);
    with an account, its public id (``ledger_account``) and label are added.

    Order (charge before reveal):

    1. validate every (statistic, epsilon) and compose the costs (sequential composition); refuse,
       before anything is charged or drawn, a release that would exceed the cap (public inputs only);
    2. charge the total in ONE transaction that re-checks the cap under the account's lock
       (:meth:`dpcore.ledger.Account.charge`), with the planned record (everything but the released
       numbers) -- racing sessions cannot overspend;
    3. draw the noise and build the records; with an account, append the released records to the
       charged entry (:meth:`~dpcore.ledger.Account.attach_result`) before returning them.

    If anything fails after step 2 the charge stays (a lost release is acceptable, a lost charge never)
    and the error says so.

    ``rng``: None (or :class:`dpcore.rng.SecureRandom`) -- the secure samplers. With a durable account any
    other ``rng`` is refused before anything is charged: noise reproducible from a caller's seed can be
    regenerated and subtracted, which would publish the true values under a charged epsilon. Only an
    in-memory :class:`dpcore.budget.Ledger` accepts a generator, and its records say ``sampler``: a
    simulation, not a release (for tests and exploration).
    """
    level = float(level)
    if not 0.5 <= level < 1.0:
        raise DPInputError(f"the level of the published intervals must be in [0.5, 1), got {level!r}")
    if not items:
        raise DPInputError("nothing to release: choose at least one statistic")
    account = _is_account(ledger)
    if not account and not isinstance(ledger, _budget.Ledger):
        raise TypeError(
            "ledger must be a dpcore.ledger account (ledger.open_ledger(...).account(...)) or a dpcore.budget.Ledger"
        )
    if account and not _is_secure_source(rng):
        # a charged release whose noise the caller can regenerate is no release: with the seed, released minus
        # regenerated noise is the true value, whatever epsilon was charged
        raise DPInputError(
            f"refused: rng={rng!r} would make this release reproducible from the caller's generator, so the noise "
            "could be regenerated and subtracted (the true values exactly, whatever epsilon is charged). A release "
            "charged to a ledger account always draws from the secure sampler: leave rng=None. To explore with "
            "seeded noise, use statistic.simulate_draw(epsilon, rng) (no ledger; not a release). Nothing was "
            "charged or released."
        )
    try:
        items = list(items)
    except TypeError:
        raise TypeError("items must be a list of (statistic, epsilon) pairs") from None
    costs = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError("items must be a list of (statistic, epsilon) pairs")
        stat, eps = item
        eps = check_epsilon(eps, f"epsilon of {getattr(stat, 'name', 'a statistic')}")
        if _is_secure_source(rng) and hasattr(stat, "check_real_release"):
            stat.check_real_release(eps)  # public settings only: refuses before anything is charged
        costs.append((stat, eps, stat.privacy_cost(eps)))
    total = _budget.compose_sequential([c for _, _, c in costs])
    identity = _dataset_identity(ledger, dataset, [s for s, _, _ in costs])
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    names = ", ".join(s.name for s, _, _ in costs)
    entry_id = None
    # ---- 1-2: check the cap from public inputs, then charge (durably, for an account) ----
    if account:
        if ledger.would_exceed(total):
            raise _ledger_module().BudgetExceeded(
                f"refused: this release costs {total.describe()} and the account {ledger.display_name()!r} has "
                f"{ledger.describe()} (cap {ledger.cap.describe()}). Nothing was charged or released."
            )
        planned = {
            "kind": "dpcore release",
            "time": stamp,
            "software": f"dpcore {__version__}",
            "dataset": identity,
            "total_cost": total.to_dict(),
            "statistics": [_planned_record(s, e, c) for s, e, c in costs],
        }
        entry_id = ledger.charge(f"release: {names}", cost=total, record=planned).id
    else:
        if ledger.would_exceed(total):
            raise DPInputError(
                f"refused: this release costs {total.describe()} and the budget has {ledger.describe_remaining()} "
                f"left (cap {ledger.cap.describe()}). Nothing was released."
            )
        for stat, _, cost in costs:
            ledger.charge(f"release: {stat.name}", cost, note=stamp)
    # ---- 3: draw the noise (the charge stands whatever happens now) ----
    out: list[ReleaseRecord] = []
    try:
        for stat, eps, cost in costs:
            values, sampler, extra = _unpack_release(_release_one(stat, eps, rng, level))
            grid = ROUNDING.get(stat.kind, 1e-6)
            honest = extra.pop("published_values", None)
            # honest digits where an interval was published (the value's own step); the kind's grid otherwise
            values = np.asarray(honest, dtype=float) if honest is not None else _round(values, grid)
            if not np.all(np.isfinite(values)):
                raise DPInputError(f"{stat.name}: the mechanism returned a non-finite value")
            notes = list(extra.pop("notes", ()))
            if stat.kind == "gini":
                notes.append("the noise scale S_beta(X)/alpha depends on the data and is not published")
            fields = dict(
                statistic=stat.name,
                kind=stat.kind,
                labels=tuple(stat.labels),
                released=tuple(float(v) for v in values),
                mechanism=stat.mechanism,
                parameters=_jsonable(stat.params()),
                epsilon=float(cost.epsilon) if cost.kind != "zcdp" else float(eps),
                delta=float(cost.delta),
                neighbouring=getattr(stat, "neighbouring", None) or NEIGHBOURING.get(stat.kind, "replace one record"),
                sampler=sampler,
                rounding=grid,
                timestamp=stamp,
                notes=tuple(notes),
                dataset=identity,
                cost=cost.to_dict(),
                ledger_entry_id=entry_id,
            )
            known = set(ReleaseRecord.__dataclass_fields__)
            fields.update({k: _jsonable(v) for k, v in extra.items() if k in known})
            out.append(ReleaseRecord(**fields))
        if account:
            link = ledger.attach_result(entry_id, {"records": [r.to_dict() for r in out]})
            if not getattr(link, "recorded", True):
                # the ledger was unreachable: the mark is journaled (replayed at the next open). The release
                # goes ahead (charged, drawn): each record says so, for the page to show
                note = f"ledger: {link.message}"
                out = [replace(r, notes=r.notes + (note,)) for r in out]
    except Exception as exc:
        where = f"ledger entry {entry_id}" if entry_id is not None else "the budget"
        raise DPInputError(
            f"the release failed after its cost {total.describe()} was charged ({where}); the "
            f"charge stands and nothing was released: {exc}"
        ) from exc
    return out


def _ledger_module():
    from . import ledger as _ledger

    return _ledger


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating, float)):
        return float(obj) if math.isfinite(float(obj)) else str(obj)
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist())
    return obj


def _records(records: Any) -> list[ReleaseRecord]:
    if isinstance(records, ReleaseRecord):
        return [records]
    if isinstance(records, (str, bytes)) or not hasattr(records, "__iter__"):
        raise TypeError("records must be a list of ReleaseRecord (from make_release)")
    out = list(records)
    if not all(isinstance(r, ReleaseRecord) for r in out):
        raise TypeError("records must be a list of ReleaseRecord (from make_release)")
    return out


def records_to_json(records: Sequence[ReleaseRecord], ledger: Any = None) -> str:
    """The JSON release record: every released statistic, the dataset identity, and the ledger after charging."""
    records = _records(records)
    if ledger is not None and not isinstance(ledger, _budget.Ledger) and not _is_account(ledger):
        raise TypeError("ledger must be a dpcore.ledger account, a dpcore.budget.Ledger or None")
    doc = {
        "dpcore_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "releases": [r.to_dict() for r in records],
        "epsilon_spent_by_this_release": float(sum(r.epsilon for r in records)),
        "delta_spent_by_this_release": float(sum(r.delta for r in records)),
    }
    datasets = [r.dataset for r in records if r.dataset]
    if datasets:
        doc["dataset"] = datasets[0]
    if ledger is not None:
        if _is_account(ledger):  # cap and spent after this release; not the dataset id (a hash of the content)
            doc["ledger"] = {k: v for k, v in ledger.to_dict().items() if k != "dataset_id"}
        else:
            doc["ledger"] = ledger.to_dict()
    return json.dumps(doc, indent=2)


def records_to_csv(records: Sequence[ReleaseRecord]) -> str:
    """CSV of the released values, each with its interval as the JSON record and the release card give it:
    statistic, label, released_value, lower, upper, level (the interval's ends and level; empty for a value
    released without one), epsilon, delta, mechanism, timestamp."""
    records = _records(records)
    buf = io.StringIO()
    buf.write("statistic,label,released_value,lower,upper,level,epsilon,delta,mechanism,timestamp\n")
    for r in records:
        with_interval = bool(r.released_lower) and bool(r.released_upper) and r.interval_level is not None
        lows = r.released_lower if with_interval else (None,) * len(r.released)
        ups = r.released_upper if with_interval else (None,) * len(r.released)
        level = repr(float(r.interval_level)) if r.interval_level is not None and with_interval else ""
        for lab, v, lo, hi in zip(r.labels, r.released, lows, ups, strict=True):
            ends = ["" if e is None else repr(float(e)) for e in (lo, hi)]
            fields = [r.statistic, lab, repr(float(v)), *ends, level, repr(r.epsilon), repr(r.delta), r.mechanism]
            buf.write(",".join('"' + str(f).replace('"', '""') + '"' for f in [*fields, r.timestamp]) + "\n")
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# Published intervals, recomputed from the published files alone
# ---------------------------------------------------------------------------------------------


def read_release(out_dir: str | os.PathLike) -> tuple[dict, dict]:
    """(record, tables) of a command-line release folder: ``release_record.json`` and each statistic's CSV table
    (pandas DataFrames by statistic name), exactly what the release published."""
    from pathlib import Path

    import pandas as pd

    folder = Path(out_dir)
    try:
        record = json.loads((folder / "release_record.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DPInputError(f"{folder}: no readable release_record.json ({exc})") from None
    tables = {}
    for stat in record.get("statistics", []):
        csv = next((f for f in stat.get("files", []) if f.endswith(".csv")), None)
        if csv is None:
            raise DPInputError(f"{folder}: the record names no CSV table for {stat.get('name')!r}")
        tables[stat["name"]] = pd.read_csv(folder / csv)
    return record, tables


def recompute_intervals(record: dict, tables: dict) -> dict:
    """Every published table recomputed from the record and the tables alone (:func:`dpcore.published.
    published_table`: the released values' honest rounding and their ``<v>_lower`` / ``<v>_upper`` intervals at
    the record's level). Anyone holding the published files can run it; the command line computed the published
    columns with the same function, so they are equal (a test checks it). Statistics without published intervals
    (the exponential-mechanism quantile) are returned unchanged."""
    from .published import published_table

    if not isinstance(record, dict) or not isinstance(tables, dict):
        raise TypeError(
            "recompute_intervals needs the release record (a dict, release_record.json) and the tables "
            "(a dict of DataFrames by statistic name): dpcore.release.read_release(folder) gives both"
        )
    out = {}
    for stat in record.get("statistics", []):
        table = tables[stat["name"]]
        level = stat.get("interval_level")
        out[stat["name"]] = table if level is None else published_table(stat["kind"], table, stat, float(level))
    return out
