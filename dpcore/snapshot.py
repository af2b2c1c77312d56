"""The DP snapshot of a confidential source: one small release from which every planning number is simulated.

Planning on a confidential file is itself not private (every planning number is a function of the data). A
**snapshot** is one differentially private release of public-format summaries, charged once at a small
``planning_epsilon`` (default 0.1); synthetic planning data are then drawn from it (post-processing), and the
planner's own solvers run on them. Everything it holds is a DP output or public, so plans, memos and scripts made
from it are publishable.

What it releases, for a public :class:`SnapshotSchema` (declared cells, public income bounds, fine public bins):

* per declared cell, a **noisy histogram** of incomes on the schema's bins: a first bin ``[lower, floor)`` and
  ``n_log_bins`` (default 16) log-spaced bins from ``floor`` to ``upper`` (values outside ``[lower, upper]`` fall in the end
  bins), by :class:`dpcore.percentiles.HistogramMechanism` (discrete Laplace of scale 2/epsilon on every cell x bin
  count: one replaced record leaves one count and enters another, L1 sensitivity 2 for the whole table);
* per declared cell, a **noisy count** (:class:`dpcore.mechanisms.CountMechanism`, L1 sensitivity 2: a replaced
  record may leave one cell and enter another), unless the schema declares the cell sizes public;
* with a relative risk declared (:class:`RiskSchema`), per cell the **outcome x exposure table** (cases and
  non-cases of the exposed and the reference group; :class:`dpcore.mechanisms.CountMechanism`, L1 sensitivity 2:
  a replaced record leaves one entry and enters another).

Neighbouring relation: replace one record (its cell, exposure group and outcome may change too), n public; with
public cell sizes, replace one person within their cell, the declared cells and their sizes public. Each table is
epsilon_i-DP for it (the sensitivities above), and the three compose sequentially: the snapshot costs
``planning_epsilon`` = the sum of the epsilon_i (``SnapshotMechanism.privacy_cost``, :mod:`dpcore.budget`). The
split is public (:data:`DEFAULT_SHARES`).

Post-processing (no privacy cost, public rules only):

* cell sizes: the noisy count and the noisy histogram's total, combined by inverse variance
  (:func:`estimated_sizes`); exact when declared public;
* the income distribution of a cell: a smooth log-density fitted to the noisy histogram (:func:`fit_histogram`:
  least squares against the known noise variance plus a penalty on the second differences of the log-density over
  the log bins, whose null space is a power law, the shape of income tails), corrected for the bias that the
  noise and the density's positivity give the fit (a parametric bootstrap of the known noise law, seeded from the
  public ``fit_seed``). Clamping the noisy counts instead puts about scale/2 spurious people in each empty top bin
  (measured: the snapshot's mean 10-30% too high at n = 1,500, epsilon 0.075);
* synthetic planning data (:func:`synthetic_data`): per cell its estimated size, spread over the bins by largest
  remainders, uniform within a bin on a log scale tilted by the fitted density's slope (linear in the first bin);
  with further planning data sets drawn from the snapshot's law (:func:`posterior_draws`: a parametric bootstrap
  of the known noise), over which a percentile's planned width is averaged;
* the relative risk's counts: each one's posterior mean given the noisy table, under the known noise law and a
  flat prior on the non-negative integers (:func:`risk_counts`).

Planning numbers are then **exact** when they depend on public inputs only (a mean's or a count's interval
half-width given public cell sizes; a count's in people) and **approximate** otherwise: measured in
``docs/planner.md`` ("Planning on a DP snapshot") and ``benchmarks/bench_snapshot.py``.

A real snapshot (``rng`` None) is paid for before it is drawn: :func:`draw_snapshot` is a release of
:func:`dpcore.pipeline.release` on the population's durable ledger account, its document attached to the charged
entry (:func:`stored_snapshot` finds it again); a numpy seed draws a simulation (marked ``simulated``: not a
release).
"""

from __future__ import annotations

import copy
import datetime as _dt
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import __version__
from .mechanisms.snapshot import (
    DEFAULT_BOOTSTRAP_FITS,
    DEFAULT_SMOOTHING,
    RISK_GROUPS,
    RISK_OUTCOMES,
    ConfidentialTables,
    RiskSchema,
    SnapshotMechanism,
    SnapshotSchema,
)
from .rng import SecureRandom
from .validation import DPInputError, as_finite_array, as_generator, check_int, check_positive

__all__ = [
    "SNAPSHOT_FORMAT",
    "confidential_tables",
    "Snapshot",
    "take_snapshot",
    "draw_snapshot",
    "snapshot_record",
    "stored_snapshot",
    "SNAPSHOT_RECORD_KIND",
    "snapshot_from_json",
    "estimated_sizes",
    "fit_histogram",
    "PlanningData",
    "synthetic_data",
    "risk_counts",
    "resolved_upper",
    "discrete_laplace_posterior_mean",
    "posterior_draws",
    "DEFAULT_DRAWS",
    "planning_data_from_records",
]

#: the ``format`` field of a snapshot's JSON document
SNAPSHOT_FORMAT = "dpcore.snapshot/1"
#: the label of the one cell of a schema without declared cells
# ---------------------------------------------------------------------------------------------
# The confidential aggregates and the mechanism
# ---------------------------------------------------------------------------------------------


def _schema(schema: Any) -> SnapshotSchema:
    if not isinstance(schema, SnapshotSchema):
        raise TypeError(f"schema must be a dpcore.mechanisms.snapshot.SnapshotSchema, got {type(schema).__name__}")
    return schema


def _cell_codes(cells: Any, n: int, schema: SnapshotSchema) -> np.ndarray:
    """The index of each record's declared cell, -1 for an undeclared cell (its row is left out: a public rule)."""
    if not schema.cells:
        if cells is not None:
            raise DPInputError("cells were given for a schema without declared cells: declare them in the schema")
        return np.zeros(n, dtype=np.int64)
    if cells is None:
        raise DPInputError("the schema declares cells: give each record's cell")
    labels = np.asarray(cells).astype(str)
    if labels.shape != (n,):
        raise DPInputError(f"one cell per record is needed ({n}), got {labels.shape[0] if labels.ndim else 1}")
    index = {c: i for i, c in enumerate(schema.cells)}
    return np.array([index.get(c, -1) for c in labels.tolist()], dtype=np.int64)


def confidential_tables(
    values: Any,
    schema: SnapshotSchema,
    *,
    cells: Any = None,
    risk_groups: Any = None,
    outcome: Any = None,
) -> ConfidentialTables:
    """The exact tables of ``schema`` on the records: ``values`` (finite incomes: apply the plan's missing-income
    rule first), ``cells`` (one label per record, compared as text; records of undeclared cells are left out),
    ``risk_groups`` (the exposure column, compared as text; other values are in neither group) and ``outcome``
    (0/1 per record, when the risk's outcome is not ``income < outcome_below``)."""
    _schema(schema)
    x = as_finite_array(values, "income values", min_size=0) if np.size(values) else np.zeros(0)
    codes = _cell_codes(cells, x.size, schema)
    keep = codes >= 0
    edges = schema.edges
    n_cells, n_bins = len(schema.labels), edges.size - 1
    bins = np.clip(np.searchsorted(edges, x, side="right") - 1, 0, n_bins - 1)
    hist = np.bincount(codes[keep] * n_bins + bins[keep], minlength=n_cells * n_bins).reshape(n_cells, n_bins)
    sizes = np.bincount(codes[keep], minlength=n_cells)
    risk = None
    if schema.risk is not None:
        if risk_groups is None:
            raise DPInputError("the schema declares a relative risk: give each record's exposure group (risk_groups)")
        g = np.asarray(risk_groups).astype(str)
        if g.shape != x.shape:
            raise DPInputError(f"one exposure group per record is needed ({x.size})")
        if schema.risk.outcome_below is not None:
            if outcome is not None:
                raise DPInputError("give either the schema's outcome_below or an outcome per record, not both")
            case = x < schema.risk.outcome_below
        else:
            if outcome is None:
                raise DPInputError("the relative risk has no outcome_below: give a 0/1 outcome per record")
            out = np.asarray(outcome)
            if out.shape != x.shape:
                raise DPInputError(f"one outcome per record is needed ({x.size})")
            try:
                out_f = out.astype(float)
            except (TypeError, ValueError):
                raise DPInputError("the outcome must be 0/1 (or true/false) per record") from None
            if not np.all(np.isin(out_f, (0.0, 1.0))):
                raise DPInputError("the outcome must be 0/1 (or true/false) per record")
            case = out_f == 1.0
        group = np.where(g == schema.risk.exposed, 0, np.where(g == schema.risk.reference, 1, -1))
        in_risk = keep & (group >= 0)
        flat = (codes[in_risk] * 2 + group[in_risk]) * 2 + np.where(case[in_risk], 0, 1)
        risk = np.bincount(flat, minlength=n_cells * 4).reshape(n_cells, 2, 2)
    return ConfidentialTables(hist.astype(np.int64), sizes.astype(np.int64), None if risk is None else risk)


# ---------------------------------------------------------------------------------------------
# The snapshot: DP outputs + public schema, and its JSON document
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Snapshot:
    """A DP snapshot: the public ``schema`` and the noisy tables (DP outputs), the mechanism's public record, the
    UTC date it was drawn and whether it is a simulation (a numpy seed: NOT private). Nothing else: every field is
    public or a DP output, so the document (:meth:`to_json`) can be stored with release records."""

    schema: SnapshotSchema
    noisy_histogram: np.ndarray
    noisy_sizes: np.ndarray | None
    noisy_risk: np.ndarray | None
    created: str
    simulated: bool
    measurements: tuple[str, ...] = ()

    @property
    def epsilon(self) -> float:
        return self.schema.planning_epsilon

    @property
    def mechanism(self) -> SnapshotMechanism:
        return SnapshotMechanism(self.schema)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": SNAPSHOT_FORMAT,
            "created": self.created,
            "simulated": self.simulated,
            "planning_epsilon": self.epsilon,
            "schema": self.schema.to_dict(),
            "edges": [float(e) for e in self.schema.edges],
            "cells": list(self.schema.labels),
            "noisy_histogram": self.noisy_histogram.tolist(),
            "noisy_sizes": None if self.noisy_sizes is None else self.noisy_sizes.tolist(),
            "noisy_risk": None if self.noisy_risk is None else self.noisy_risk.tolist(),
            "risk_axes": [list(RISK_GROUPS), list(RISK_OUTCOMES)] if self.noisy_risk is not None else None,
            "mechanism": self.mechanism.record(),
            "measurements": list(self.measurements),
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1, sort_keys=True)


def _int_table(value: Any, shape: tuple[int, ...], name: str) -> np.ndarray:
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise DPInputError(f"the snapshot's {name} must be a table of integers") from None
    if arr.shape != shape:
        raise DPInputError(f"the snapshot's {name} must have shape {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)) or not np.all(arr == np.round(arr)):
        raise DPInputError(f"the snapshot's {name} must hold integers")
    return arr.astype(np.int64)


def snapshot_from_json(text: str | bytes | Mapping[str, Any]) -> Snapshot:
    """A :class:`Snapshot` from its JSON document (:meth:`Snapshot.to_json`), checked: the format, the schema, the
    tables' shapes, the edges and the epsilon recomputed from the schema (a document that does not add up is
    refused rather than planned on)."""
    if isinstance(text, Mapping):
        doc = dict(text)
    else:
        try:
            doc = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise DPInputError(f"a snapshot must be a JSON document ({exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != SNAPSHOT_FORMAT:
        raise DPInputError(f"not a dpcore snapshot (format {SNAPSHOT_FORMAT!r} expected)")
    schema = SnapshotSchema.from_dict(doc.get("schema") or {})
    if not np.allclose(np.asarray(doc.get("edges", []), dtype=float), schema.edges, rtol=1e-12, atol=0):
        raise DPInputError("the snapshot's edges do not match its schema")
    if list(doc.get("cells", [])) != list(schema.labels):
        raise DPInputError("the snapshot's cells do not match its schema")
    eps = doc.get("planning_epsilon")
    if not isinstance(eps, (int, float)) or not math.isclose(float(eps), schema.planning_epsilon, rel_tol=1e-12):
        raise DPInputError("the snapshot's planning_epsilon does not match its schema")
    n_cells, n_bins = len(schema.labels), schema.edges.size - 1
    hist = _int_table(doc.get("noisy_histogram"), (n_cells, n_bins), "noisy_histogram")
    sizes = None
    if not schema.sizes_public:
        sizes = _int_table(doc.get("noisy_sizes"), (n_cells,), "noisy_sizes")
    elif doc.get("noisy_sizes") is not None:
        raise DPInputError("a snapshot with public cell sizes has no noisy sizes")
    risk = None
    if schema.risk is not None:
        risk = _int_table(doc.get("noisy_risk"), (n_cells, 2, 2), "noisy_risk")
    elif doc.get("noisy_risk") is not None:
        raise DPInputError("a snapshot without a relative risk has no risk table")
    created = doc.get("created")
    if not isinstance(created, str):
        raise DPInputError("the snapshot's created date must be a text")
    simulated = doc.get("simulated")
    if not isinstance(simulated, bool):
        raise DPInputError("the snapshot's simulated flag must be true or false")
    measurements = tuple(str(m) for m in doc.get("measurements") or ())
    return Snapshot(schema, hist, sizes, risk, created, simulated, measurements)


#: the ``kind`` of a snapshot's ledger record (how :func:`stored_snapshot` finds it again)
SNAPSHOT_RECORD_KIND = "dpcore snapshot"


def snapshot_record(schema: SnapshotSchema, source: str = "") -> dict[str, Any]:
    """The record a real snapshot is charged with (public: the schema, the mechanism's record, the cost and the
    source's public description), the key :func:`stored_snapshot` matches."""
    _schema(schema)
    mech = SnapshotMechanism(schema)
    return {
        "kind": SNAPSHOT_RECORD_KIND,
        "format": SNAPSHOT_FORMAT,
        "software": f"dpcore {__version__}",
        "source": str(source),
        "schema": schema.to_dict(),
        "mechanism": mech.record(),
        "cost": mech.privacy_cost().to_dict(),
    }


def draw_snapshot(
    tables: ConfidentialTables,
    schema: SnapshotSchema,
    *,
    account: Any = None,
    rng: Any = None,
    source: str = "",
    label: str = "DP snapshot for planning",
) -> Snapshot:
    """The snapshot of confidential ``tables`` (:func:`confidential_tables`, or an engine's aggregates).

    ``rng`` None (or :class:`dpcore.rng.SecureRandom`): a real snapshot, by :func:`dpcore.pipeline.release` on the
    durable ledger ``account`` (a population's): checked and charged ``planning_epsilon`` (with
    :func:`snapshot_record`) before anything is drawn, drawn with OpenDP's samplers through the registered
    :class:`dpcore.mechanisms.SnapshotMechanism`, its document attached to the charged entry (where
    :func:`stored_snapshot` finds it again). Without an account it is refused before anything is drawn. A numpy
    Generator or seed: a simulation (``simulated`` True; nothing is charged; NOT private: the seed reproduces the
    noise)."""
    from . import pipeline
    from .mechanisms import Drawer

    if not isinstance(schema, SnapshotSchema):
        raise TypeError("schema must be a SnapshotSchema")
    mech = SnapshotMechanism(schema)
    simulation = rng is not None and not isinstance(rng, SecureRandom)
    if simulation:
        d = mech.draw(tables, rng=rng)
        return Snapshot(schema, d.noisy_histogram, d.noisy_sizes, d.noisy_risk, _now(), True, d.measurements)
    if account is None:
        raise DPInputError(
            "refused: a real snapshot is charged to the population's ledger account first (give account=, a "
            "durable dpcore.ledger account); nothing was drawn. To explore with seeded noise, give a numpy seed"
        )
    drawer = Drawer([mech], rng)
    made: list[Snapshot] = []

    def deliver(d: Any, entry_id: int) -> tuple[dict, None]:
        snap = Snapshot(schema, d.noisy_histogram, d.noisy_sizes, d.noisy_risk, _now(), False, d.measurements)
        made.append(snap)
        return {"snapshot": snap.to_dict(), "entry_id": entry_id}, None

    pipeline.release(
        account,
        label=label,
        cost=mech.privacy_cost(),
        record=snapshot_record(schema, source),
        drawer=drawer,
        draw=lambda: drawer(mech, tables),
        deliver=deliver,
    )
    return made[0]


def take_snapshot(
    values: Any,
    schema: SnapshotSchema,
    *,
    cells: Any = None,
    risk_groups: Any = None,
    outcome: Any = None,
    account: Any = None,
    rng: Any = None,
    source: str = "",
) -> Snapshot:
    """The DP snapshot of the records (:func:`confidential_tables` says what they are) under ``schema``: their
    tables are aggregated (a bad input is refused here, before any charge), then :func:`draw_snapshot`."""
    _schema(schema)
    tables = confidential_tables(values, schema, cells=cells, risk_groups=risk_groups, outcome=outcome)
    return draw_snapshot(tables, schema, account=account, rng=rng, source=source)


def _same_settings(stored: Any, schema: SnapshotSchema) -> bool:
    """Whether a stored schema (its dict) is ``schema`` but for public cell sizes, which are read from the data
    (the snapshot of the same source under the same settings has them)."""
    if not isinstance(stored, dict):
        return False
    want = schema.to_dict()
    if schema.sizes_public or stored.get("cell_sizes") is not None:
        if schema.sizes_public != (stored.get("cell_sizes") is not None):
            return False
        stored, want = {**stored, "cell_sizes": None}, {**want, "cell_sizes": None}
    return stored == want


def stored_snapshot(account: Any, schema: SnapshotSchema, source: str = "") -> Snapshot | None:
    """The newest snapshot already charged to ``account`` for these settings (the schema; public cell sizes are
    the data's) and this source, its document attached to the charged entry, or None: planning again on it costs
    nothing more (post-processing of a release already paid for)."""
    _schema(schema)
    if not callable(getattr(account, "entries", None)):
        raise TypeError(f"account must be a ledger account (dpcore.ledger), got {type(account).__name__}")
    for entry in reversed(account.entries()):
        rec, result = entry.record, entry.result
        if not isinstance(rec, dict) or rec.get("kind") != SNAPSHOT_RECORD_KIND or not isinstance(result, dict):
            continue
        if _same_settings(rec.get("schema"), schema) and rec.get("source") == str(source) and "snapshot" in result:
            return snapshot_from_json(result["snapshot"])
    return None


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---------------------------------------------------------------------------------------------
# Post-processing: sizes, the fitted distribution, synthetic planning data
# ---------------------------------------------------------------------------------------------


def _discrete_laplace_variance(scale: float) -> float:
    """Variance of P(k) ∝ exp(-|k|/scale): 2q/(1-q)^2 with q = exp(-1/scale)."""
    q = math.exp(-1.0 / scale)
    return 2.0 * q / (1.0 - q) ** 2


def estimated_sizes(snapshot: Snapshot) -> np.ndarray:
    """Each cell's size: the public size, or the inverse-variance combination of the noisy count and the noisy
    histogram's total (both unbiased: every record of a cell is in one of its bins), clamped to >= 0."""
    if not isinstance(snapshot, Snapshot):
        raise TypeError("snapshot must be a Snapshot (take_snapshot or snapshot_from_json)")
    schema = snapshot.schema
    if schema.cell_sizes is not None:
        return np.asarray(schema.cell_sizes, dtype=float)
    mech = snapshot.mechanism
    hist_total = snapshot.noisy_histogram.sum(axis=1).astype(float)
    var_hist = snapshot.noisy_histogram.shape[1] * _discrete_laplace_variance(mech.histogram_mechanism.noise_scale)
    sizes_mech = mech.sizes_mechanism
    assert sizes_mech is not None and snapshot.noisy_sizes is not None  # sizes are not public
    var_count = _discrete_laplace_variance(sizes_mech.noise_scale)
    w = var_hist / (var_hist + var_count) if var_hist + var_count > 0 else 1.0
    return np.maximum(w * snapshot.noisy_sizes.astype(float) + (1.0 - w) * hist_total, 0.0)


def _smooth_fits(
    counts: np.ndarray, totals: np.ndarray, variance: float, smoothing: float, first_free: bool, theta0: Any = None
) -> np.ndarray:
    """Bin probabilities p = softmax(theta) of every row of ``counts``, each minimising

        f(theta) = sum_b (counts_b - total p_b)^2 / (2 variance) + smoothing * sum (D theta)^2,

    D the second differences over the log bins (the first bin, ``[lower, floor)``, is left out of the penalty when
    ``first_free``: it holds the zeros, no part of the smooth density). Levenberg-Marquardt on the rows side by
    side: the Gauss-Newton matrix (total^2 / variance) J'J + 2 smoothing D'D (J = diag(p) - p p', the softmax's
    Jacobian) plus a damping per row, raised after a step that does not lower f and lowered after one that does;
    softmax is unchanged by adding a constant to theta, so the step is taken orthogonal to that direction (the mean
    of theta is kept). A row stops when its step moves theta by less than 1e-9 or lowers f by less than 1e-12
    relatively (a bin fitted at 0 sends its logit towards -inf without end), or after 500 steps. ``theta0``: the
    starting logits (default: the clamped counts')."""
    rows, m = counts.shape
    start = 1 if first_free else 0
    k = m - start
    diff2 = np.zeros((max(k - 2, 0), m))
    if k >= 3:
        diff2[:, start:] = np.diff(np.eye(k), 2, axis=0)
    penalty = 2.0 * smoothing * (diff2.T @ diff2)
    tot = np.asarray(totals, dtype=float).reshape(rows, 1)
    if theta0 is None:
        start_p = np.maximum(counts, 1.0)
        theta0 = np.log(start_p / start_p.sum(axis=1, keepdims=True))
    theta = np.array(theta0, dtype=float).reshape(rows, m)
    theta -= theta.mean(axis=1, keepdims=True)
    centre = np.eye(m) - 1.0 / m  # projects a step orthogonal to the constant direction

    def probabilities(t: np.ndarray) -> np.ndarray:
        w = np.exp(t - t.max(axis=1, keepdims=True))
        return w / w.sum(axis=1, keepdims=True)

    def value(t: np.ndarray, p: np.ndarray, c: np.ndarray, n: np.ndarray) -> np.ndarray:
        resid = c - n * p
        pen = t @ diff2.T
        return np.sum(resid * resid, axis=1) / (2.0 * variance) + smoothing * np.sum(pen * pen, axis=1)

    p = probabilities(theta)
    f = value(theta, p, counts, tot)
    damping = np.full(rows, 1e-3)
    done = np.zeros(rows, dtype=bool)
    eye = np.eye(m)[None]
    for _ in range(500):
        live = np.flatnonzero(~done)
        if live.size == 0:
            break
        t, pl, tl = theta[live], p[live], tot[live]
        jac = pl[:, :, None] * eye - pl[:, :, None] * pl[:, None, :]  # symmetric
        resid = counts[live] - tl * pl
        grad = np.matmul(jac, (-tl * resid / variance)[:, :, None])[:, :, 0] + t @ penalty
        gauss = (tl[:, :, None] ** 2 / variance) * np.matmul(jac, jac) + penalty[None]
        scale = np.trace(gauss, axis1=1, axis2=2) / m + 1e-12
        system = gauss + ((damping[live] + 1e-9) * scale)[:, None, None] * eye
        step = np.linalg.solve(system, grad[:, :, None])[:, :, 0] @ centre
        trial = t - step
        p_trial = probabilities(trial)
        f_trial = value(trial, p_trial, counts[live], tl)
        better = f_trial <= f[live]
        # converged: a negligible step, or a step that no longer lowers f (a bin whose fitted count is 0 sends its
        # logit to -inf: its steps stay large while f stops changing)
        small = (np.abs(step).max(axis=1) < 1e-9) | (better & (f[live] - f_trial <= 1e-12 * (1.0 + f[live])))
        theta[live] = np.where(better[:, None], trial, t)
        p[live] = np.where(better[:, None], p_trial, pl)
        f[live] = np.where(better, f_trial, f[live])
        damping[live] = np.where(better, np.maximum(damping[live] / 3.0, 1e-12), damping[live] * 10.0)
        done[live] = small | (damping[live] > 1e10)
    return p


def fit_histogram(
    noisy_counts: Any,
    totals: Any,
    scale: float,
    *,
    smoothing: float = DEFAULT_SMOOTHING,
    bootstrap_fits: int = DEFAULT_BOOTSTRAP_FITS,
    seed: int = 0,
    first_free: bool = True,
) -> np.ndarray:
    """The bin probabilities of each cell (a row of ``noisy_counts``) fitted to its noisy histogram
    (post-processing; see the module docstring): ``noisy_counts`` the counts + discrete Laplace of public ``scale``,
    ``totals`` the cells' (estimated) sizes. The smooth fit (:func:`_smooth_fits`) is biased where the counts are
    about the noise (the density cannot go below 0, the noise can): ``bootstrap_fits`` re-noised copies of each
    fit, with noise of the same public law drawn from ``seed``, estimate that bias; the answer is the fit minus it,
    clamped to >= 0 and normalised (the plain fit where the correction leaves nothing). A cell of size 0 gets
    uniform probabilities (it has no records to place)."""
    raw = np.asarray(noisy_counts, dtype=float) if not isinstance(noisy_counts, (str, bytes)) else np.zeros(0)
    if raw.ndim not in (1, 2) or raw.size == 0:
        raise DPInputError("noisy counts must be a table: one row of bin counts per cell")
    counts = np.atleast_2d(as_finite_array(raw.ravel(), "noisy counts", min_size=1).reshape(-1, raw.shape[-1]))
    rows, m = counts.shape
    tot = np.maximum(as_finite_array(totals, "cell sizes", min_size=1).reshape(-1), 0.0)
    if tot.size != rows:
        raise DPInputError(f"one size per cell is needed ({rows}), got {tot.size}")
    scale = check_positive(scale, "noise scale")
    k = check_int(bootstrap_fits, "bootstrap fits", minimum=0)
    return _fit_tables(counts[None], tot, scale, smoothing, k, [seed], first_free)[0]


def _fit_tables(
    tables: np.ndarray,
    tot: np.ndarray,
    scale: float,
    smoothing: float,
    k: int,
    seeds: list[Any],
    first_free: bool,
) -> np.ndarray:
    """:func:`fit_histogram` of several tables of noisy counts (``tables``: tables x cells x bins, checked) over the
    same cell sizes ``tot``, table t's bootstrap drawn from ``seeds[t]``: every table's fit is the one
    :func:`fit_histogram` gives it alone, up to rounding (the fits are row by row), but all of them are computed side
    by side in two calls of :func:`_smooth_fits`, whose cost is numpy's overhead per iteration more than the rows
    (measured: :func:`synthetic_data` of 3 cells with its 19 further data sets in half the CPU)."""
    n_tab, rows, m = tables.shape
    out = np.full((n_tab, rows, m), 1.0 / m)
    live = np.flatnonzero(tot > 0)
    if m == 1 or live.size == 0:
        return out
    # at a tiny scale the noise variance underflows to 0: a quarter (a count's rounding) keeps the fit's weights finite
    variance = max(_discrete_laplace_variance(scale), 0.25)
    p = _smooth_fits(
        tables[:, live].reshape(-1, m), np.tile(tot[live], n_tab), variance, smoothing, first_free
    ).reshape(n_tab, live.size, m)
    out[:, live] = p
    if k == 0:
        return out
    q = math.exp(-1.0 / scale)
    shape = (live.size, k, m)
    boot_counts = []
    for t in range(n_tab):
        gen = as_generator(seeds[t])
        noise = gen.geometric(1.0 - q, shape) - gen.geometric(1.0 - q, shape)  # discrete Laplace of the public scale
        boot_counts.append((tot[live, None, None] * p[t][:, None, :] + noise).reshape(-1, m))
    theta0 = np.repeat(np.log(np.maximum(p, 1e-300)).reshape(-1, m), k, axis=0)
    boots = _smooth_fits(
        np.concatenate(boot_counts), np.tile(np.repeat(tot[live], k), n_tab), variance, smoothing, first_free, theta0
    )
    corrected = np.maximum(2.0 * p - boots.reshape(n_tab, live.size, k, m).mean(axis=2), 0.0)
    sums = corrected.sum(axis=2, keepdims=True)
    out[:, live] = np.where(sums > 0, corrected / np.where(sums > 0, sums, 1.0), p)
    return out


def risk_counts(snapshot: Snapshot) -> np.ndarray | None:
    """The relative risk's four counts per cell read off the noisy table (post-processing; None without a relative
    risk): each count's posterior mean given its noisy value, under the known noise law (discrete Laplace of the
    risk mechanism's public scale) and a flat prior on the non-negative integers.

    Why not the noisy counts clamped at 0: the planned epsilon is a steep function of the counts (the interval's
    noise part goes as 1/count^2, its sampling part as 1/count), and the noise (scale 2/epsilon_r: 100 at the
    default split) is of the size of a cell's cases, so a count clamped to 0 or a few makes the target look
    unreachable. The posterior mean is the noisy count where the count is well above the noise (it differs by
    about scale * exp(-count/scale)) and stays near the scale where the noise hides the count. Measured on the ACS
    excerpt, 1,500 records per state (``benchmarks/bench_snapshot_fit.py``, docs/planner.md): snapshots declaring
    a ±0.5 target per state unreachable 81% -> 37%, and the relative risk pooled over the states (±0.1) within
    0.67-1.5x of the epsilon solved on the records in 57% of snapshots instead of 39% (none unreachable, not 10%)."""
    if not isinstance(snapshot, Snapshot):
        raise TypeError("snapshot must be a Snapshot (take_snapshot or snapshot_from_json)")
    mech = snapshot.mechanism.risk_mechanism
    if snapshot.noisy_risk is None or mech is None:
        return None
    return discrete_laplace_posterior_mean(snapshot.noisy_risk, float(mech.noise_scale))


def discrete_laplace_posterior_mean(noisy: Any, scale: float) -> np.ndarray:
    """E[k | k + noise = o] for each noisy integer count o, the noise discrete Laplace (P(j) ∝ q^|j|, q = exp(-1/scale))
    and a flat prior on k = 0, 1, 2, ...: in closed form, with S_1 = sum_{j=0}^{o} q^j and S_2 = q / (1 - q) the
    posterior's weights below and above o, (o S_1 - sum_{j=0}^{o} j q^j + o S_2 + q / (1 - q)^2) / (S_1 + S_2)
    for o >= 0, and q / (1 - q) (a geometric law on k >= 0) for o <= 0."""
    o = np.maximum(np.rint(as_finite_array(np.ravel(noisy), "noisy counts", min_size=0)), 0.0)
    step = -math.expm1(-1.0 / check_positive(scale, "noise scale"))  # 1 - q, exact for a large scale
    q = 1.0 - step
    q_o = np.exp(-o / scale)  # q^o
    s1 = (1.0 - q_o * q) / step
    j_sum = q * (1.0 - (o + 1.0) * q_o + o * q_o * q) / step**2
    s2 = q / step
    mean = (o * s1 - j_sum + o * s2 + q / step**2) / (s1 + s2)
    return mean.reshape(np.shape(noisy))


@dataclass(frozen=True, eq=False)
class PlanningData:
    """Records to plan on: incomes, each record's cell label, the cells in order, and the relative risk's counts
    per cell (cells x (exposed, reference) x (case, non-case), None without one). ``source``: "snapshot"
    (synthetic, drawn from a DP snapshot: publishable) or "data" (the records themselves: as private as they are);
    ``snapshot_epsilon`` the snapshot's cost (None for "data"); ``sizes_public``: the cells' sizes are the public
    ones (always for "data": they are the records' own); ``upper`` the snapshot's upper bound (no synthetic value
    lies above it); ``resolved_upper`` the income above which the snapshot's bins hold fewer people than their
    noise's sd (:func:`resolved_upper`; None when every bin is resolved, or for "data"); ``risk_noise_sd`` the sd of
    the noise on each count of the relative risk's table (None without one, or for "data").
    ``draws``: further planning data sets drawn from the snapshot's law given its noisy tables
    (:func:`posterior_draws`: a parametric bootstrap of the known noise), each a value per record of ``cells``;
    empty for the records, which are known. A planning number that is a step function of where a value falls
    between two public edges (a percentile's interval) is averaged over them (:mod:`dpcore.views.planner`)."""

    values: np.ndarray
    cells: np.ndarray
    labels: tuple[str, ...]
    risk: np.ndarray | None
    source: str
    snapshot_epsilon: float | None = None
    risk_schema: RiskSchema | None = None
    upper: float | None = None
    sizes_public: bool = True
    resolved_upper: float | None = None
    risk_noise_sd: float | None = None
    draws: tuple[np.ndarray, ...] = ()

    def cell_values(self, label: str) -> np.ndarray:
        return self.values[self.cells == label]

    def cell_draws(self, label: str) -> tuple[np.ndarray, ...]:
        """The cell's values in each of :attr:`draws` (empty for the records)."""
        keep = self.cells == label
        return tuple(d[keep] for d in self.draws)


def _allocate(total: int, p: np.ndarray) -> np.ndarray:
    """``total`` records over the bins in proportion to ``p`` by largest remainders (no sampling noise)."""
    raw = total * p
    base = np.floor(raw).astype(np.int64)
    left = int(total - base.sum())
    if left > 0:
        base[np.argsort(-(raw - base), kind="stable")[:left]] += 1
    return base


def _within_bins(
    edges: np.ndarray, p: np.ndarray, counts: np.ndarray, gen: np.random.Generator, floor_bin: bool
) -> np.ndarray:
    """``counts[b]`` values in each bin b, stratified (one per equal-probability slice, jittered) under the bin's
    law: uniform in the floor bin ``[lower, floor)`` (``floor_bin``), log-uniform tilted by the fitted
    log-density's slope in the log bins."""
    log_edges = np.log(np.where(edges > 0, edges, 1.0))
    widths = np.diff(log_edges)
    centres = log_edges[:-1] + 0.5 * widths
    logbin = np.ones(p.size, dtype=bool)
    logbin[0] = not floor_bin
    density = np.where(logbin, p / np.where(logbin, widths, 1.0), np.nan)
    slope = np.zeros(p.size)
    idx = np.flatnonzero(logbin)
    if idx.size >= 2:
        ld = np.log(np.maximum(density[idx], 1e-300))
        slope[idx] = np.clip(np.gradient(ld, centres[idx]), -20.0, 20.0)
    out = []
    for b in np.flatnonzero(counts):
        k = int(counts[b])
        u = (np.arange(k) + gen.random(k)) / k
        lo, hi = edges[b], edges[b + 1]
        if not logbin[b]:
            out.append(lo + u * (hi - lo))
            continue
        w, s = widths[b], slope[b]
        t = u * w if abs(s * w) < 1e-9 else np.log1p(u * math.expm1(s * w)) / s
        out.append(np.exp(log_edges[b] + t))
    return np.concatenate(out) if out else np.zeros(0)


#: planning data sets drawn from the snapshot's law besides the synthetic data (:func:`posterior_draws`), over
#: which a percentile's planned width is averaged: 20 data sets in all, 10 of the planner's 200 noisy histograms
#: each. The snapshot's cumulative share at a bin edge errs by 1.5-6% of the ranks at n = 1,500 per cell, more
#: than many medians lie from an edge (docs/planner.md, "Planning on a DP snapshot")
DEFAULT_DRAWS = 19


def _fit(snapshot: Snapshot, counts: np.ndarray, sizes: np.ndarray, seed: int) -> np.ndarray:
    return _fit_many(snapshot, counts[None], sizes, [seed])[0]


def _fit_many(snapshot: Snapshot, tables: np.ndarray, sizes: np.ndarray, seeds: list[int]) -> np.ndarray:
    """:func:`_fit` of each table of ``tables`` (tables x cells x bins), table t's bootstrap from ``seeds[t]``."""
    schema = snapshot.schema
    return _fit_tables(
        np.asarray(tables, dtype=float),
        np.maximum(sizes.astype(float), 0.0),
        snapshot.mechanism.histogram_mechanism.noise_scale,
        schema.smoothing,
        schema.bootstrap_fits,
        seeds,
        schema.has_floor_bin,
    )


def _draw_values(schema: SnapshotSchema, probabilities: np.ndarray, sizes: np.ndarray, gen: np.random.Generator):
    """One value array per cell: its size spread over the bins by largest remainders, stratified within bins."""
    return [
        _within_bins(
            schema.edges, probabilities[i], _allocate(int(sizes[i]), probabilities[i]), gen, schema.has_floor_bin
        )
        for i in range(len(schema.labels))
    ]


def posterior_draws(snapshot: Snapshot, draws: int = DEFAULT_DRAWS, seed: int = 0) -> tuple[np.ndarray, ...]:
    """``draws`` planning data sets as plausible as the synthetic data given the snapshot's noisy histogram, each
    one value per record of :func:`synthetic_data`'s ``cells`` (the same estimated sizes, in the same order).

    A parametric bootstrap of the known noise law (post-processing: only the snapshot, its public noise scale and
    ``seed``): the fitted counts (:func:`fit_histogram`, n_c p_c) plus fresh discrete Laplace noise of the
    snapshot's scale, fitted again by the same rule. Each refit differs from the fit as the fit differs from the
    cells' true distribution (to first order), so the draws spread a cell's cumulative share at any income as the
    snapshot leaves it uncertain: about the noise summed over the bins below (1.5-6% of the ranks at n = 1,500,
    epsilon 0.075; docs/planner.md). Planning numbers that jump where a value crosses a public edge (a
    percentile's interval, read off the PSEO bins) are averaged over them instead of taken at one guess."""
    if not isinstance(snapshot, Snapshot):
        raise TypeError("snapshot must be a Snapshot (take_snapshot or snapshot_from_json)")
    draws = check_int(draws, "posterior draws", minimum=0, maximum=1000)
    seed = check_int(seed, "seed", minimum=0)
    if draws == 0:
        return ()
    sizes = np.rint(estimated_sizes(snapshot)).astype(np.int64)
    p = _fit(snapshot, snapshot.noisy_histogram.astype(float), sizes, snapshot.schema.fit_seed)
    return _draws_around(snapshot, p, sizes, draws, seed)


def _draws_around(
    snapshot: Snapshot, p: np.ndarray, sizes: np.ndarray, draws: int, seed: int
) -> tuple[np.ndarray, ...]:
    """:func:`posterior_draws` around the snapshot's fit ``p`` for the estimated ``sizes`` (computed once by
    :func:`synthetic_data` for its own records too)."""
    schema = snapshot.schema
    scale = snapshot.mechanism.histogram_mechanism.noise_scale
    q = math.exp(-1.0 / scale)
    bits = np.random.PCG64([seed, 0x5EED])  # default_rng's stream for this seed, with its advance()
    gen = np.random.Generator(bits)
    expected = sizes[:, None].astype(float) * p
    # One stream, in the order: draw k's noise, then its values' jitter (one uniform per record: _within_bins). The
    # refits are computed side by side (one fit of all the tables: the cost is per fit, not per row), so each draw's
    # jitter is taken from a copy of the stream at its place and the stream is advanced past it (PCG64: one step
    # per uniform); the draws are those of fitting and drawing each data set in turn.
    records = int(sizes.sum())
    tables, jitters = [], []
    for _ in range(draws):
        tables.append(expected + gen.geometric(1.0 - q, p.shape) - gen.geometric(1.0 - q, p.shape))
        jitters.append(np.random.Generator(copy.deepcopy(bits)))
        bits.advance(records)
    refits = _fit_many(snapshot, np.array(tables), sizes, [schema.fit_seed + 1 + k for k in range(draws)])
    out = []
    for refit, jitter in zip(refits, jitters, strict=True):
        values = _draw_values(schema, refit, sizes, jitter)
        out.append(np.concatenate(values) if values else np.zeros(0))
    return tuple(out)


def synthetic_data(snapshot: Snapshot, seed: int = 0, draws: int = DEFAULT_DRAWS) -> PlanningData:
    """Synthetic planning data drawn from ``snapshot`` (post-processing: publishable). Per cell: its estimated
    size (:func:`estimated_sizes`, rounded), spread over the bins by largest remainders of the fitted
    probabilities (:func:`fit_histogram`), values stratified within each bin (:func:`_within_bins`, jittered from
    ``seed``); the relative risk's counts are read off the noisy table (:func:`risk_counts`). ``draws``: the
    number of further data sets drawn from the snapshot's law (:func:`posterior_draws`, from ``seed``), over
    which a percentile's planned width is averaged."""
    if not isinstance(snapshot, Snapshot):
        raise TypeError("snapshot must be a Snapshot (take_snapshot or snapshot_from_json)")
    seed = check_int(seed, "seed", minimum=0)
    draws = check_int(draws, "posterior draws", minimum=0, maximum=1000)
    schema = snapshot.schema
    sizes = np.rint(estimated_sizes(snapshot)).astype(np.int64)
    probabilities = _fit(snapshot, snapshot.noisy_histogram.astype(float), sizes, schema.fit_seed)
    gen = as_generator(seed)
    values = _draw_values(schema, probabilities, sizes, gen)
    cells = [np.full(v.size, label, dtype=object) for v, label in zip(values, schema.labels, strict=True)]
    risk = risk_counts(snapshot)
    scale = snapshot.mechanism.histogram_mechanism.noise_scale
    resolved = resolved_upper(schema.edges, probabilities * sizes[:, None], scale, schema.has_floor_bin)
    risk_mech = snapshot.mechanism.risk_mechanism
    risk_sd = None if risk_mech is None else math.sqrt(_discrete_laplace_variance(risk_mech.noise_scale))
    return PlanningData(
        np.concatenate(values) if values else np.zeros(0),
        np.concatenate(cells).astype(str) if cells else np.zeros(0, dtype=str),
        schema.labels,
        risk,
        "snapshot",
        snapshot.epsilon,
        schema.risk,
        schema.upper,
        schema.sizes_public,
        resolved,
        risk_sd,
        draws=_draws_around(snapshot, probabilities, sizes, draws, seed) if draws else (),
    )


def resolved_upper(edges: Any, fitted_counts: Any, scale: float, floor_bin: bool = True) -> float | None:
    """The income above which a snapshot no longer resolves its cells' tails (post-processing; None when it
    resolves every bin): the lowest lower edge, over the cells, of a log bin above the cell's mode whose fitted
    count (``fitted_counts``: cells x bins, people) is below the sd of one bin's noise (discrete Laplace of public
    ``scale``). Above it the synthetic incomes follow the fitted tail's shape more than the data, so a number that
    depends on them (a clipping bias at a bound there, a top percentile) is known only roughly: at epsilon 0.075 a
    bin's noise has sd 38 people, and a clipping bias at 500,000 of 667 log-normal incomes per cell is uncertain by
    an sd of about 32% of the cell's mean (docs/planner.md)."""
    e = np.asarray(edges, dtype=float)
    counts = np.atleast_2d(np.asarray(fitted_counts, dtype=float))
    if counts.shape[1] != e.size - 1:
        raise DPInputError(f"one fitted count per bin is needed ({e.size - 1}), got {counts.shape[1]}")
    sd = math.sqrt(_discrete_laplace_variance(check_positive(scale, "noise scale")))
    first = 1 if floor_bin else 0
    found = []
    for row in counts:
        if row.sum() <= 0 or row.size <= first:
            continue
        mode = first + int(np.argmax(row[first:]))
        thin = np.flatnonzero(row[mode + 1 :] < sd)
        if thin.size:
            found.append(float(e[mode + 1 + thin[0]]))
    return min(found) if found else None


def planning_data_from_records(
    values: Any,
    schema: SnapshotSchema,
    *,
    cells: Any = None,
    risk_groups: Any = None,
    outcome: Any = None,
) -> PlanningData:
    """The records themselves as planning data, under the same schema (declared cells; undeclared cells left
    out): planning directly on the data (``--public-data``), the yardstick the snapshot's honesty is measured
    against. As private as the records are: nothing is charged and nothing computed from it is DP."""
    _schema(schema)
    x = as_finite_array(values, "income values", min_size=0) if np.size(values) else np.zeros(0)
    codes = _cell_codes(cells, x.size, schema)
    keep = codes >= 0
    tables = confidential_tables(x, schema, cells=cells, risk_groups=risk_groups, outcome=outcome)
    labels = np.asarray(schema.labels, dtype=object)[codes[keep]].astype(str)
    return PlanningData(x[keep], labels, schema.labels, tables.confidential_risk, "data", None, schema.risk, None)
