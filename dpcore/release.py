"""Release mode: make the real DP release of planned statistics from a confidential file.

What happens (:func:`make_release`):

1. The total cost of the requested statistics is checked against the ledger's cap **before** any
   noise is drawn; a release that would exceed the cap is refused (``DPInputError``).
2. Each statistic is released by its method module (``dpcore.gini.release_gini``,
   ``dpcore.percentiles.release_percentiles``, ``dpcore.stratified.stratified_mean`` /
   ``clipped_laplace_mean``, ``dpcore.ratio.laplace_noised_counts``, or a geometric count) with
   randomness from :func:`dpcore.noise.secure_generator` (``os.urandom``, the OS CSPRNG).
   If a method module does not accept that source (it validates ``rng`` as a numpy Generator),
   the release falls back to numpy's PCG64 seeded with 256 bits from ``os.urandom`` and the
   record says so (``sampler``). Never a user-visible or guessable seed.
3. Released values are rounded to a public grid (post-processing, no privacy cost), which removes
   the low-order floating-point bits that Mironov (2012) showed can leak through textbook
   floating-point samplers. This is a mitigation, not the snapping mechanism's full proof; the
   geometric counts and histogram counts are integers and have no such issue.
4. The ledger is charged only when every statistic was released (a failure releases nothing).
5. A :class:`ReleaseRecord` per statistic holds the released numbers, the mechanism, all public
   parameters, epsilon/delta spent, a UTC timestamp and ``dpcore.__version__``. It never holds a
   true (confidential) value; data-dependent noise scales (smooth sensitivity) are not published.

Generalized Cauchy (Gini): ``GeneralizedCauchy.rvs`` draws |Z|^gamma as a beta-prime variable by
the inverse regularised incomplete beta of a uniform (``dpcore.noise``); with the CSPRNG source
the uniforms come from ``os.urandom`` (53-bit), so the sampler's only randomness is the OS CSPRNG.
OpenDP's samplers were not used: OpenDP has no generalized-Cauchy sampler, and its Laplace /
geometric samplers would need the whole release (clipping, histogram, post-processing) rebuilt
as OpenDP transformations; documented as a possible hardening step.
"""
from __future__ import annotations

import io
import json
import math
import os
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Sequence

import numpy as np

from . import __version__
from . import budget as _budget
from . import noise
from .validation import DPInputError, check_epsilon

__all__ = ["ReleaseRecord", "make_release", "records_to_json", "records_to_csv", "ROUNDING", "secure_rng"]

#: Public rounding grid per statistic kind (units of the statistic).
ROUNDING = {"count": 1.0, "mean": 0.01, "group_means": 0.01, "percentiles": 1.0, "gini": 1e-6, "ratio": 1e-6}

CSPRNG = "dpcore.noise.secure_generator() (os.urandom, the operating system's CSPRNG)"
FALLBACK = ("numpy PCG64 seeded with 256 bits from os.urandom (the method module accepts only numpy "
            "Generators; not itself a CSPRNG, but its seed is secret and never shown)")

NEIGHBOURING = {
    "count": "replace one record; n public",
    "mean": "replace one record; n and the clip range public",
    "group_means": "replace one person's value within their group; group labels and sizes public",
    "percentiles": "replace one person within a cell; cell sizes and bin edges public",
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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["labels"] = list(self.labels)
        d["released"] = [float(v) for v in self.released]
        d["notes"] = list(self.notes)
        d["dpcore_version"] = __version__
        return d


def secure_rng() -> noise.SecureRandom:
    """The OS-CSPRNG source used for real releases."""
    return noise.secure_generator()


def _os_seeded_generator() -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int.from_bytes(os.urandom(32), "big"))))


def _round(values: np.ndarray, grid: float) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    decimals = -math.log10(grid)
    if abs(decimals - round(decimals)) < 1e-12:  # a power of ten: round in decimal, no 0.1 + 0.2 artefacts
        return np.round(v, int(round(decimals)))
    return np.round(v / grid) * grid


def _release_one(stat: Any, epsilon: float, rng: Any) -> tuple[np.ndarray, str]:
    if rng is not None:
        return np.asarray(stat.release(epsilon, rng=rng), dtype=float), "caller-supplied generator (NOT for real releases)"
    try:
        return np.asarray(stat.release(epsilon, rng=secure_rng()), dtype=float), CSPRNG
    except TypeError as exc:
        if "rng" not in str(exc):
            raise
        return np.asarray(stat.release(epsilon, rng=_os_seeded_generator()), dtype=float), FALLBACK


def make_release(items: Sequence[tuple[Any, float]], ledger: _budget.Ledger, *, rng: Any = None) -> list[ReleaseRecord]:
    """Release every (statistic, epsilon) pair on its (confidential) data and charge ``ledger``.

    ``rng`` must stay None for a real release (the OS CSPRNG is used); tests pass a seeded
    generator. Refuses, before any noise is drawn, a release whose total cost exceeds the cap.
    """
    if not items:
        raise DPInputError("nothing to release: choose at least one statistic")
    if not isinstance(ledger, _budget.Ledger):
        raise TypeError("ledger must be a dpcore.budget.Ledger")
    costs = []
    for stat, eps in items:
        eps = check_epsilon(eps, f"epsilon of {getattr(stat, 'name', 'a statistic')}")
        costs.append((stat, eps, stat.privacy_cost(eps)))
    total = _budget.compose_sequential([c for _, _, c in costs])
    if ledger.would_exceed(total):
        raise DPInputError(
            f"refused: this release costs {total.describe()} and the budget has {ledger.describe_remaining()} left "
            f"(cap {ledger.cap.describe()}). Nothing was released.")
    stamp = datetime.now(timezone.utc).isoformat(timespec="seconds")
    out: list[ReleaseRecord] = []
    for stat, eps, cost in costs:
        values, sampler = _release_one(stat, eps, rng)
        grid = ROUNDING.get(stat.kind, 1e-6)
        values = _round(values, grid)
        if not np.all(np.isfinite(values)):
            raise DPInputError(f"{stat.name}: the mechanism returned a non-finite value; nothing was released")
        notes = []
        if stat.kind == "gini":
            notes.append("the noise scale S_beta(X)/alpha depends on the data and is not published")
        out.append(ReleaseRecord(
            statistic=stat.name, kind=stat.kind, labels=tuple(stat.labels), released=tuple(float(v) for v in values),
            mechanism=stat.mechanism, parameters=_jsonable(stat.params()), epsilon=float(eps),
            delta=float(cost.delta), neighbouring=NEIGHBOURING.get(stat.kind, "replace one record"),
            sampler=sampler, rounding=grid, timestamp=stamp, notes=tuple(notes)))
    for rec, (_, _, cost) in zip(out, costs):
        ledger.charge(f"release: {rec.statistic}", cost, note=rec.timestamp)
    return out


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


def records_to_json(records: Sequence[ReleaseRecord], ledger: _budget.Ledger | None = None) -> str:
    """The JSON release record: every released statistic plus the ledger after charging."""
    records = _records(records)
    if ledger is not None and not isinstance(ledger, _budget.Ledger):
        raise TypeError("ledger must be a dpcore.budget.Ledger or None")
    doc = {
        "dpcore_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "releases": [r.to_dict() for r in records],
        "epsilon_spent_by_this_release": float(sum(r.epsilon for r in records)),
        "delta_spent_by_this_release": float(sum(r.delta for r in records)),
    }
    if ledger is not None:
        doc["ledger"] = ledger.to_dict()
    return json.dumps(doc, indent=2)


def records_to_csv(records: Sequence[ReleaseRecord]) -> str:
    """CSV of the released values: statistic, label, released_value, epsilon, mechanism, timestamp."""
    records = _records(records)
    buf = io.StringIO()
    buf.write("statistic,label,released_value,epsilon,delta,mechanism,timestamp\n")
    for r in records:
        for lab, v in zip(r.labels, r.released):
            fields = [r.statistic, lab, repr(float(v)), repr(r.epsilon), repr(r.delta), r.mechanism, r.timestamp]
            buf.write(",".join('"' + str(f).replace('"', '""') + '"' for f in fields) + "\n")
    return buf.getvalue()
