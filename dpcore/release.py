"""Releases of planned statistics (:mod:`dpcore.planner`) and their records.

:func:`make_release` is the real release of planned statistics from a confidential file, paid from a durable
ledger account; it runs :func:`dpcore.pipeline.release`, the one transaction of every real release (the command
line's too):

1. The statistics are checked from public inputs only: each of a kind :mod:`dpcore.planner` registers
   (``planner.RELEASABLE``: no object that merely has a ``release`` method), each real-release setting allowed
   (``check_real_release``), and the total cost composed; a release over the account's cap is refused
   (``dpcore.ledger.BudgetExceeded``, a ``DPInputError``) before anything is charged or drawn. An in-memory
   :class:`dpcore.budget.Ledger` and a caller's seeded ``rng`` are refused: no release without a durable charge,
   and noise reproducible from a seed could be regenerated and subtracted.
2. The total is **charged first**, in one database transaction that re-checks the cap under the account's lock
   (:meth:`dpcore.ledger.Account.charge`), with the planned record (dataset identity, mechanisms, parameters,
   costs): racing sessions cannot overspend, and a crash after this point can lose the release but never the
   charge.
3. Each statistic draws through its registered mechanisms (:mod:`dpcore.mechanisms`, declared to the transaction
   and charged for), whose noise comes from :mod:`dpcore.noise.secure`: OpenDP's exact discrete Laplace for
   counts and histograms, OpenDP's floating-point-safe Laplace for means and the ratio's two counts, and the
   certified generalized-Cauchy sampler for the Gini. The record names the measurement and its privacy map
   (``measurement``, ``privacy_map``); its epsilon/delta are the certified ones (docs/secure_noise.md).
4. Released values get honest digits where an interval is published, else a public grid (post-processing).
5. The released records are appended to the charged ledger entry (``attach_result``) and only then returned
   (revealed). If drawing fails, the charge stays and the error says so. If the ledger cannot record the result
   (unreachable after retries), the ledger journals it locally and every record's ``notes`` ends with a
   ``"ledger: ..."`` line saying where (the entry counts in full meanwhile).
6. A :class:`ReleaseRecord` per statistic holds the released numbers, the mechanism, all public parameters,
   epsilon/delta spent, the dataset identity (the ledger account's public id -- a keyed hash, never the content
   fingerprint --, label, columns, n -- public in the replace-one relation), the ledger entry id, a UTC
   timestamp and ``dpcore.__version__``. It never holds a true (confidential) value; data-dependent noise scales
   (smooth sensitivity) are not published.

:func:`simulate_release` is the same with numpy noise from a caller's generator: a simulation, never charged,
labelled in every record. Neighbouring data sets behave alike: whether a statistic releases, and every record
field except the released numbers, depend on public inputs only (tests/test_release_neighbours.py). The release
files of the command line are read back by :func:`read_release` and checked by :func:`recompute_intervals`.
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

from . import __version__, pipeline
from . import budget as _budget
from .kinds import PLANNER_KINDS
from .pipeline import SEEDED_REAL_RELEASE
from .rng import SecureRandom, as_generator
from .validation import DPInputError, check_epsilon

__all__ = [
    "ReleaseRecord",
    "make_release",
    "simulate_release",
    "records_to_json",
    "records_to_csv",
    "ROUNDING",
    "MISSING_INCOME_AT_LOWER_BOUND",
    "missing_income_value",
    "with_missing_incomes",
    "read_release",
    "recompute_intervals",
]

#: Public rounding grid per statistic kind (units of the statistic).
ROUNDING = {kind.name: kind.rounding for kind in PLANNER_KINDS.values()}

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
        # an interval end that does not exist (a cell with no row: no interval) is null in the JSON record
        d["released_lower"] = [_finite_or_none(v) for v in self.released_lower]
        d["released_upper"] = [_finite_or_none(v) for v in self.released_upper]
        d["notes"] = list(self.notes)
        d["dpcore_version"] = __version__
        return d


def _finite_or_none(value: Any) -> float | None:
    number = float(value)
    return number if math.isfinite(number) else None


def _round(values: np.ndarray, grid: float) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    decimals = -math.log10(grid)
    if abs(decimals - round(decimals)) < 1e-12:  # a power of ten: round in decimal, no 0.1 + 0.2 artefacts
        return np.round(v, int(round(decimals)))
    return np.round(v / grid) * grid


#: the sampler of a simulated release (:func:`simulate_release`): reproducible from the caller's generator
SIMULATION_SAMPLER = (
    "caller-supplied generator: a SIMULATION, NOT for real releases (the noise is reproducible from it)"
)
OPENDP_SAMPLER = (
    "OpenDP's exact samplers (discrete Laplace / floating-point-safe Laplace) or the certified "
    "generalized-Cauchy sampler of dpcore.noise.secure (os.urandom); see the measurement note"
)


def _dataset_identity(ledger: Any, dataset: Any, stats: Sequence[Any]) -> dict[str, Any]:
    """The public identity of the released data: the ledger account's public id and label, columns, n.

    Not the dataset fingerprint: that is a hash of the confidential content (not a DP output; with all
    records but one known, hashing candidates would confirm the last). ``ledger_account`` is the
    account's keyed-hash public id (:attr:`dpcore.ledger.Account.public_id`)."""
    if dataset is not None and not isinstance(dataset, dict):
        raise TypeError("dataset must be a dict (income_column, group_column, n, source ...) or None")
    out: dict[str, Any] = {}
    if ledger is not None:
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
        "neighbouring": stat.neighbouring,
        "rounding": ROUNDING.get(stat.kind, 1e-6),
    }


def _planned(items: Any, level: float, *, real: bool) -> list[tuple[Any, float, _budget.PrivacyCost]]:
    """(statistic, epsilon, cost) of every item, checked from public inputs only, before anything is charged or
    drawn: a statistic of a kind dpcore.planner registers (``planner.RELEASABLE``: each draws through its
    registered mechanisms only), never an object that merely has a ``release`` or ``draw`` method."""
    from .planner import RELEASABLE

    level = float(level)
    if not 0.5 <= level < 1.0:
        raise DPInputError(f"the level of the published intervals must be in [0.5, 1), got {level!r}")
    if isinstance(items, (str, bytes)) or not hasattr(items, "__iter__"):
        raise TypeError("items must be a list of (statistic, epsilon) pairs")
    items = list(items)
    if not items:
        raise DPInputError("nothing to release: choose at least one statistic")
    out = []
    for item in items:
        if not isinstance(item, (tuple, list)) or len(item) != 2:
            raise TypeError("items must be a list of (statistic, epsilon) pairs")
        stat, eps = item
        if type(stat) not in RELEASABLE:
            raise TypeError(
                f"a release takes the statistics of dpcore.planner ({', '.join(c.__name__ for c in RELEASABLE)}: "
                f"planner.make_statistic builds them), which draw through the registered mechanisms of "
                f"dpcore.mechanisms; got {type(stat).__name__}: nothing was charged or released"
            )
        eps = check_epsilon(eps, f"epsilon of {stat.name}")
        if real:
            stat.check_real_release(eps)  # public settings only: refuses before anything is charged
        out.append((stat, eps, stat.privacy_cost(eps)))
    return out


def _drawn_records(
    planned: Sequence[tuple[Any, float, _budget.PrivacyCost]],
    draws: Sequence[Any],
    *,
    sampler: str,
    stamp: str,
    identity: dict[str, Any],
    entry_id: int | None,
) -> list[ReleaseRecord]:
    """The release records of drawn statistics (public inputs and DP outputs only)."""
    out: list[ReleaseRecord] = []
    for (stat, eps, cost), draw in zip(planned, draws, strict=True):
        values = np.asarray(draw.values, dtype=float)
        grid = ROUNDING.get(stat.kind, 1e-6)
        extra: dict[str, Any] = {"measurement": draw.measurement, "privacy_map": draw.privacy_map}
        published = draw.published
        if published is not None:
            extra.update(
                released_lower=tuple(float(v) for v in published["lower"]),
                released_upper=tuple(float(v) for v in published["upper"]),
                interval_level=published["level"],
                published_inputs=published["inputs"],
            )
        # honest digits where an interval was published (the value's own step); the kind's grid otherwise
        values = np.asarray(published["values"], dtype=float) if published is not None else _round(values, grid)
        if not np.all(np.isfinite(values)):
            raise DPInputError(f"{stat.name}: the mechanism returned a non-finite value")
        notes = list(draw.notes)
        if stat.kind == "gini":
            notes.append("the noise scale S_beta(X)/alpha depends on the data and is not published")
        fields: dict[str, Any] = dict(
            statistic=stat.name,
            kind=stat.kind,
            labels=tuple(stat.labels),
            released=tuple(float(v) for v in values),
            mechanism=stat.mechanism,
            parameters=_jsonable(stat.params()),
            epsilon=float(cost.epsilon) if cost.kind != "zcdp" else float(eps),
            delta=float(cost.delta),
            neighbouring=stat.neighbouring,
            sampler=sampler,
            rounding=grid,
            timestamp=stamp,
            notes=tuple(notes),
            dataset=identity,
            cost=cost.to_dict(),
            ledger_entry_id=entry_id,
        )
        fields.update({k: v if k in ("released_lower", "released_upper") else _jsonable(v) for k, v in extra.items()})
        out.append(ReleaseRecord(**fields))
    return out


def make_release(
    items: Sequence[tuple[Any, float]],
    ledger: Any,
    rng: Any = None,
    *,
    dataset: dict | None = None,
    level: float = 0.95,
) -> list[ReleaseRecord]:
    """Release every (statistic, epsilon) pair on its (confidential) data, paying from ``ledger``.

    ``items``: pairs of a statistic of :mod:`dpcore.planner` (``planner.make_statistic``) and its epsilon;
    ``ledger``: a durable :class:`dpcore.ledger.Account` (``db.account(...)`` / ``db.population(...)``): an
    in-memory :class:`dpcore.budget.Ledger` is refused (no release without a durable charge: explore with
    :func:`simulate_release`). ``dataset``: public identity of the data written into every record
    (``income_column``, ``group_column``, ``n``, ``source`` ...), with the account's public id
    (``ledger_account``) and label. ``rng``: None (or :class:`dpcore.rng.SecureRandom`): any other is refused
    before anything is charged (noise reproducible from a caller's seed can be regenerated and subtracted).

    The release is :func:`dpcore.pipeline.release`, the command line's transaction: the costs are composed and
    checked against the cap from public inputs; the total is charged in one transaction that re-checks the cap
    under the account's lock, with the planned record (everything but the released numbers); each statistic draws
    through its registered mechanisms (:meth:`dpcore.planner.PlannedStatistic.mechanisms_at`, declared and
    charged for); the released records are attached to the charged entry before they are returned. A failure
    after the charge keeps it and says so (a lost release is acceptable, a lost charge never).
    """
    from . import ledger as ledger_lib
    from .mechanisms import Drawer

    if not isinstance(ledger, ledger_lib.Account):
        raise TypeError(
            "ledger must be a durable dpcore.ledger account (ledger.open_ledger(...).account(...) or "
            f".population(...)), got {type(ledger).__name__}: a release is charged to a durable ledger; to "
            "explore with seeded noise and no ledger, use dpcore.release.simulate_release(items, rng)"
        )
    if rng is not None and not isinstance(rng, SecureRandom):
        # a charged release whose noise the caller can regenerate is no release: with the seed, released minus
        # regenerated noise is the true value, whatever epsilon was charged
        raise DPInputError(SEEDED_REAL_RELEASE.format(rng=f"rng={rng!r}"))
    planned = _planned(items, level, real=True)
    total = _budget.compose_sequential([c for _, _, c in planned])
    identity = _dataset_identity(ledger, dataset, [s for s, _, _ in planned])
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    record = {
        "kind": "dpcore release",
        "time": stamp,
        "software": f"dpcore {__version__}",
        "dataset": identity,
        "total_cost": total.to_dict(),
        "statistics": [_planned_record(s, e, c) for s, e, c in planned],
    }
    drawer = Drawer([m for s, e, _ in planned for m in s.mechanisms_at(e, level)], rng)
    records: list[ReleaseRecord] = []

    def draw() -> list[Any]:
        # the statistic's draw is private to every caller but the release, which has charged for its drawer
        return [stat._draw(eps, level=level, drawer=drawer) for stat, eps, _ in planned]  # noqa: SLF001

    def deliver(draws: list[Any], entry_id: int) -> tuple[dict, None]:
        records.extend(
            _drawn_records(planned, draws, sampler=OPENDP_SAMPLER, stamp=stamp, identity=identity, entry_id=entry_id)
        )
        return {"records": [r.to_dict() for r in records]}, None

    def undelivered(notice: Any, exc: Exception) -> DPInputError:
        return DPInputError(
            f"the release failed after its cost {total.describe()} was charged (ledger entry {notice.entry_id}); "
            f"the charge stands and nothing was released: {exc}"
        )

    released = pipeline.release(
        ledger,
        label="release: " + ", ".join(s.name for s, _, _ in planned),
        cost=total,
        record=record,
        drawer=drawer,
        draw=draw,
        deliver=deliver,
        undelivered=undelivered,
    )
    link = released.link
    if link is None or not getattr(link, "recorded", True):
        # the ledger could not mark the entry revealed (journaled, or not even that): the release is drawn and
        # charged; each record says so, for the page to show
        note = f"ledger: {link.message if link is not None else released.link_warning}"
        return [replace(r, notes=r.notes + (note,)) for r in records]
    return records


def simulate_release(
    items: Sequence[tuple[Any, float]], rng: Any = None, *, dataset: dict | None = None, level: float = 0.95
) -> list[ReleaseRecord]:
    """A SIMULATION of :func:`make_release`: the same statistics, mechanisms and records, with numpy noise from
    ``rng`` (a seed or a numpy Generator; None: a fresh unseeded one). Nothing is charged and no ledger is involved;
    each record's ``sampler`` says it is a simulation. Not a release: with a known seed the noise can be
    regenerated and subtracted, so use it on public or synthetic data only (exploration, tests)."""
    from .mechanisms import Drawer

    if isinstance(rng, SecureRandom):
        raise DPInputError(
            "simulate_release draws numpy noise and never the secure sampler: a real release is "
            "dpcore.release.make_release(items, ledger_account), which charges first"
        )
    planned = _planned(items, level, real=False)
    gen = as_generator(rng)
    drawer = Drawer([m for s, e, _ in planned for m in s.mechanisms_at(e, level)], gen)
    draws = [stat._draw(eps, level=level, drawer=drawer) for stat, eps, _ in planned]  # noqa: SLF001 - a simulation
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    identity = _dataset_identity(None, dataset, [s for s, _, _ in planned])
    return _drawn_records(planned, draws, sampler=SIMULATION_SAMPLER, stamp=stamp, identity=identity, entry_id=None)


def _is_account(ledger: Any) -> bool:
    from . import ledger as ledger_lib

    return isinstance(ledger, ledger_lib.Account)


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
        for level in stat.get("levels", [])[1:]:  # a statistic with margins: each margin's table by its name
            level_csv = next((f for f in level.get("files", []) if f.endswith(".csv")), None)
            if level_csv is None:
                raise DPInputError(f"{folder}: the record names no CSV table for the margin {level.get('name')!r}")
            tables[level["name"]] = pd.read_csv(folder / level_csv)
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
        level = stat.get("interval_level")
        if stat.get("levels"):  # a statistic with margins: every level's table, intervals from the least squares
            for part in stat["levels"]:
                table = tables[part["name"]]
                out[part["name"]] = (
                    table if level is None else published_table("percentiles_consistent", table, stat, float(level))
                )
            continue
        table = tables[stat["name"]]
        out[stat["name"]] = table if level is None else published_table(stat["kind"], table, stat, float(level))
    return out
