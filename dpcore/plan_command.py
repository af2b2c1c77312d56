"""``python -m dpcore plan PLAN.toml --data SOURCE --out SOLVED.toml``: solve each statistic's epsilon from its
accuracy target on a DP snapshot of the source, and write the plan with the epsilons filled in.

PLAN.toml is a release plan whose statistics carry a target instead of (or besides) ``epsilon``: ``half_width``
(every published interval's expected half-width, in the statistic's unit) or ``relative_half_width`` (a share of
the value), with the top-level ``planning_epsilon`` (default 0.1). Order of events (a confidential source):

1. the plan is read (its statistics to solve may lack ``epsilon``); the statistics with a target become the
   planner's statistics (:func:`statistic_items`) and the snapshot's public schema is built from the plan alone
   (:func:`snapshot_schema`: the targets' cells, bounds, the relative risk, ``planning_epsilon``);
2. the ledger and the plan's registered population are opened, as for a release
   (:func:`dpcore.engines.execute.open_population`: refused without a ledger, without a registered population or
   with another cap);
3. a snapshot already charged to the population for these settings and this source is reused
   (:func:`dpcore.snapshot.stored_snapshot`): nothing is read or charged. Otherwise the engine aggregates the
   snapshot's tables, the source joins its population (refused when its records belong to another) and the
   snapshot is released (:func:`dpcore.snapshot.draw_snapshot`: :func:`dpcore.pipeline.release`, charged
   ``planning_epsilon`` once, its document attached to the ledger entry);
4. synthetic planning data are drawn from it (post-processing) and the planner's solver finds each statistic's
   smallest epsilon (:func:`dpcore.views.private_plan.solve_plan`);
5. SOLVED.toml is the same plan with ``epsilon`` filled in, validated as a release plan (its total must fit the
   cap), its header stating the snapshot's epsilon, date and ledger entry, and which epsilons are exact.

``public_data``: the source is declared public and planned on directly (the records themselves, as
``--seed`` releases do): no ledger, nothing charged, and the header says so.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .mechanisms.snapshot import DEFAULT_PLANNING_EPSILON, RiskSchema, SnapshotSchema
from .plan import ReleasePlan, StatisticSpec, load_plan, plan_from_dict, plan_to_dict, write_plan
from .validation import DPInputError

__all__ = ["PlanSolution", "plan_command", "statistic_items", "snapshot_schema", "cell_labels"]

#: the top of the snapshot's bins for a plan whose targets have no income bound (percentiles only): the top edge
#: of the PSEO bins (Table 1 of Foote et al.)
PERCENTILES_TOP = 614_597.0


@dataclass(frozen=True)
class PlanSolution:
    """What :func:`plan_command` did: the solved plan, where it was written, each solved statistic's epsilon and
    whether it is exact, the snapshot (None with ``public_data``), whether it was reused (nothing charged) and the
    ledger entry that paid for it."""

    plan: ReleasePlan
    out: Path
    solved: tuple[tuple[str, float, bool], ...]
    snapshot: Any
    reused: bool
    entry_id: int | None
    header: tuple[str, ...]
    #: said when the solved plan costs more than the population has left (its release would be refused)
    warning: str | None = None


def _plan(plan: Any) -> ReleasePlan:
    if not isinstance(plan, ReleasePlan):
        raise TypeError(f"plan must be a dpcore.plan.ReleasePlan (dpcore.plan.load_plan), got {type(plan).__name__}")
    return plan


def _cells(cells: Any) -> list[tuple[str, ...]]:
    """Cells as tuples of text (each cell one value per ``by`` column)."""
    if isinstance(cells, (str, bytes)) or not isinstance(cells, Sequence):
        raise TypeError(f"cells must be a sequence of tuples of text, got {type(cells).__name__}")
    out = []
    for cell in cells:
        if not isinstance(cell, tuple) or not all(isinstance(v, str) for v in cell):
            raise TypeError(f"each cell must be a tuple of text, got {cell!r:.60}")
        out.append(cell)
    return out


def _targets(plan: ReleasePlan) -> list[StatisticSpec]:
    return [s for s in plan.statistics if s.half_width is not None or s.relative_half_width is not None]


def statistic_items(plan: ReleasePlan) -> list[tuple[StatisticSpec, dict[str, Any]]]:
    """Each statistic with a target, as an item of :func:`dpcore.views.private_plan.solve_plan` (the planner's kind
    and settings): a mean by cells is the planner's group means, percentiles (PSEO bins, the histogram method)
    its percentiles with the plan's ``q``, a Gini or a relative risk by cells one per cell. Refused, naming the
    statistic, where the planner cannot plan it (other bins, the exponential method: it publishes no interval)."""
    _plan(plan)
    out = []
    for s in _targets(plan):
        relative = s.relative_half_width is not None
        target = {
            "half_width": float(s.relative_half_width if relative else s.half_width),  # type: ignore[arg-type]
            "relative": relative,
            "level": plan.level,
        }
        if s.kind == "percentiles":
            if s.margins:
                raise DPInputError(
                    f"{s.where}: the planner plans the cells' percentiles, not their margins: give this statistic's "
                    "epsilon (and epsilon_split), or plan it without margins"
                )
            if s.method == "exponential":
                raise DPInputError(
                    f"{s.where}: the exponential mechanism publishes no interval, so a half-width target cannot be "
                    "planned: give its epsilon, or use the histogram method"
                )
            if s.bins_scheme != "pseo":
                raise DPInputError(
                    f"{s.where}: the planner plans percentiles on the PSEO bins (bins = \"pseo\"); give this "
                    "statistic's epsilon, or use the PSEO bins"
                )
            item = {"kind": "percentiles", "params": {"q": list(s.q or (50.0,))}, "by_cell": False}
        elif s.kind == "mean":
            bounds = {"lower": s.lower, "upper": s.upper}
            item = {"kind": "group_means", "params": bounds} if s.by else {"kind": "mean", "params": bounds}
        elif s.kind == "gini":
            params: dict[str, Any] = {"lower": s.lower, "upper": s.upper, "calibration": s.calibration or "tight"}
            if s.noise == "laplace":
                params.update(noise="laplace", delta=s.delta)
            else:
                params["gamma"] = s.gamma if s.gamma is not None else 2.0
            item = {"kind": "gini", "params": params, "by_cell": bool(s.by)}
        else:  # relative_risk
            item = {"kind": "ratio", "params": {}, "by_cell": bool(s.by)}
        out.append((s, {**item, **target}))
    return out


def _cell_columns(plan: ReleasePlan) -> tuple[str, ...]:
    """The ``by`` of the statistics to solve: one (the snapshot's cells), or none (the whole source)."""
    bys = {s.by for s in _targets(plan) if s.by}
    if len(bys) > 1:
        raise DPInputError(
            "the statistics to solve are by different columns "
            + ", ".join(str(list(b)) for b in sorted(bys))
            + ": a snapshot is taken over one set of cells; solve them with one plan per set of cells"
        )
    return next(iter(bys), ())


def cell_labels(plan: ReleasePlan, by: Sequence[str]) -> tuple[tuple[str, ...], ...] | None:
    """The snapshot's cells: the plan's declared ``[keys]`` cells of ``by``, or None when the cells are the data's
    (``cell_sizes = "public"``: the cells present and their sizes are public). Refused otherwise: the snapshot
    lists declared cells only (a DP selection of cells is not offered for it)."""
    _plan(plan)
    if isinstance(by, (str, bytes)) or not isinstance(by, Sequence) or not all(isinstance(c, str) for c in by):
        raise TypeError(f"by must be a sequence of column names, got {by!r:.60}")
    by = tuple(by)
    if not by:
        return ((),)
    if plan.keys is not None and plan.keys.covers(by):
        return tuple(tuple(c) for c in plan.keys.cells(by))
    if plan.cell_sizes == "public":
        return None
    raise DPInputError(
        f"the statistics to solve are by {list(by)}: declare those cells in [keys] (or cell_sizes = \"public\" when "
        "the cells and their sizes are public): the snapshot is released for declared cells"
    )


def _label(cell: tuple[str, ...]) -> str:
    return " | ".join(cell) if cell else "all"


def snapshot_schema(
    plan: ReleasePlan, cells: Sequence[tuple[str, ...]], sizes: Sequence[int] | None = None
) -> SnapshotSchema:
    """The snapshot's public schema for ``plan``: its ``planning_epsilon``, the cells, bounds [min(0, lowers),
    the largest upper] of the statistics to solve (the PSEO bins' top for percentiles alone), the relative risk to
    solve (at most one), and the cells' public sizes when the plan declares them public."""
    _plan(plan)
    cells = _cells(cells)
    if sizes is not None:
        if isinstance(sizes, (str, bytes)) or not isinstance(sizes, Sequence) or len(sizes) != len(cells):
            raise TypeError("sizes must be None or one whole number per cell")
        if not all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) and n >= 0 for n in sizes):
            raise DPInputError("sizes must be whole numbers >= 0, one per cell")
    targets = _targets(plan)
    uppers = [s.upper for s in targets if s.upper is not None]
    lowers = [s.lower for s in targets if s.lower is not None]
    risks = [s for s in targets if s.kind == "relative_risk"]
    if len(risks) > 1:
        raise DPInputError("a snapshot prepares one relative risk: solve the others in another plan")
    risk = None
    if risks:
        r = risks[0]
        risk = RiskSchema(str(r.exposed), str(r.reference), r.outcome_below)
    labels = tuple(_label(c) for c in cells) if any(cells) else ()
    return SnapshotSchema(
        upper=float(max(uppers)) if uppers else PERCENTILES_TOP,
        lower=float(min([0.0, *lowers])),
        cells=labels,
        cell_sizes=None if sizes is None else tuple(int(n) for n in sizes),
        risk=risk,
        planning_epsilon=plan.planning_epsilon or DEFAULT_PLANNING_EPSILON,
    )


# ---------------------------------------------------------------------------------------------
# The snapshot's tables from an engine, and the records of a public file
# ---------------------------------------------------------------------------------------------


def _engine_tables(eng: Any, plan: ReleasePlan, by: tuple[str, ...], cells: Any) -> tuple[Any, list, list]:
    """The snapshot's confidential tables from the engine's aggregates (the release's: histogram counts by cell
    and bin, outcome counts by cell and exposure group; a missing income in the first bin, the plan's rules), over
    the declared cells (``cells``; None: the cells present, public); returns (tables, cells, sizes)."""
    from .mechanisms.snapshot import ConfidentialTables

    probe = snapshot_schema(plan, [("x",)] if by else [()])
    edges = [float(e) for e in probe.edges]
    hist_long = eng.histogram(list(by), edges)
    keys = [tuple(str(v) for v in row) for row in hist_long[list(by)].itertuples(index=False)] if by else None
    if cells is None:  # public cells: those present (public by the plan's declaration)
        cells = sorted(set(keys or [()]))
    index = {tuple(c): i for i, c in enumerate(cells)}
    hist = np.zeros((len(cells), len(edges) - 1), dtype=np.int64)
    bins = hist_long["bin"].to_numpy(dtype=np.int64)
    counts = hist_long["count"].to_numpy(dtype=np.int64)
    for k in range(len(hist_long)):
        i = index.get(keys[k] if keys is not None else ())
        if i is not None:  # a row of an undeclared cell is left out (a public rule)
            hist[i, bins[k]] += counts[k]
    risk = None
    risks = [s for s in _targets(plan) if s.kind == "relative_risk"]
    if risks:
        r = risks[0]
        o = eng.outcomes(list(by), r)
        risk = np.zeros((len(cells), 2, 2), dtype=np.int64)
        for row in o.to_dict("records"):
            i = index.get(tuple(str(row[c]) for c in by))
            if i is None:
                continue
            risk[i] = [
                [row["cases_exposed"], row["n_exposed"] - row["cases_exposed"]],
                [row["cases_reference"], row["n_reference"] - row["cases_reference"]],
            ]
    sizes = hist.sum(axis=1)
    return ConfidentialTables(hist, sizes, risk), list(cells), sizes.tolist()


def _public_records(plan: ReleasePlan, source: Any, by: tuple[str, ...]) -> dict[str, Any]:
    """The records of a public CSV or Parquet source for planning on them directly: incomes under the plan's
    missing and negative income rules (a missing one at the lower bound, as the release counts it), each record's
    cell, exposure group and outcome."""
    import pandas as pd

    if source.kind not in ("csv", "parquet") or not source.paths:
        raise DPInputError("--public-data plans on a CSV or Parquet file (or folder of Parquet files)")
    read = pd.read_csv if source.kind == "csv" else pd.read_parquet
    frames = [read(p) for p in source.paths]
    frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
    missing = [c for c in plan.columns() if c not in frame.columns]
    if missing:
        raise DPInputError(f"the source has no column(s) {missing}; it has {list(frame.columns)[:20]}")
    raw = frame[plan.income]
    x = pd.to_numeric(raw, errors="coerce").to_numpy(dtype=float)
    bad = raw[np.isnan(x) & raw.notna() & (raw.astype(str).str.strip() != "")]
    if len(bad):
        raise DPInputError(
            f"the income column {plan.income!r} has text that is not a number: {str(bad.iloc[0])[:40]!r}"
        )
    lower = snapshot_schema(plan, [()]).lower
    if np.any(np.isnan(x)) and plan.missing_income == "refuse":
        raise DPInputError(f"the income column {plan.income!r} has missing values and the plan refuses them")
    negative = x < 0
    if negative.any():
        if plan.negative_incomes == "refuse":
            raise DPInputError(f"the income column {plan.income!r} has {int(negative.sum())} negative value(s)")
        x = np.where(negative, np.nan if plan.negative_incomes == "drop" else lower, x)
    x = np.where(np.isnan(x), lower, x)
    out: dict[str, Any] = {"values": x}
    if by:
        tuples = [tuple(str(v) for v in row) for row in frame[list(by)].itertuples(index=False)]
        out["cell_tuples"] = sorted(set(tuples))
        out["cells"] = np.array([_label(t) for t in tuples])
    risks = [s for s in _targets(plan) if s.kind == "relative_risk"]
    if risks:
        r = risks[0]
        out["risk_groups"] = frame[str(r.group)].astype(str).to_numpy()
        if r.outcome is not None:
            flag = frame[r.outcome].map(_flag)
            out["outcome"] = flag.fillna(0.0).to_numpy(dtype=float)
    return out


def _flag(value: Any) -> float | None:
    """A 0/1 outcome as the engines read it (1/0, true/false, t/f, yes/no; anything else is missing: not a case)."""
    text = str(value).strip().lower()
    if text in ("1", "1.0", "true", "t", "yes", "y"):
        return 1.0
    if text in ("0", "0.0", "false", "f", "no", "n"):
        return 0.0
    return None


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------


def plan_command(  # noqa: C901
    plan_path: str | os.PathLike,
    data: str,
    *,
    out: str | os.PathLike,
    query: str | None = None,
    engine: str = "duckdb",
    ledger_url: str | None = None,
    init_ledger: bool = False,
    public_data: bool = False,
    progress: Any = None,
) -> PlanSolution:
    """Solve the epsilons of the plan at ``plan_path`` on ``data`` and write SOLVED.toml at ``out`` (module
    docstring). Raises :class:`DPInputError` (or :class:`dpcore.ledger.BudgetExceeded`) with one line for every
    user error; all before the charge but a target no epsilon meets, said after it (the snapshot is then stored:
    planning again with another target costs nothing more)."""
    from . import engines, snapshot
    from .engines import execute
    from .views import private_plan

    progress = progress or engines.Progress(quiet=True)
    out_path = Path(out)
    if out_path.exists() and out_path.is_dir():
        raise DPInputError(f"--out {str(out_path)!r} is a folder: give the path of the solved plan file (.toml)")
    if not out_path.parent.is_dir():
        raise DPInputError(f"--out: no folder {str(out_path.parent)!r} to write the solved plan in")
    plan = load_plan(plan_path, solving=True)
    items = statistic_items(plan)
    if not items:
        raise DPInputError("the plan has no statistic with a target (half_width or relative_half_width) to solve")
    if plan.privacy_unit:
        raise DPInputError(
            "planning on a snapshot is offered for one row per person (no privacy_unit) for now: give the epsilons"
        )
    by = _cell_columns(plan)
    declared = cell_labels(plan, by)
    source = engines.parse_source(data, query)
    entry_id: int | None = None
    left: float | None = None  # what the population has left once the snapshot is paid (None: --public-data)
    reused = False
    cells: list[tuple[str, ...]]
    if public_data:
        recs = _public_records(plan, source, by)
        cells = list(declared) if declared is not None else (recs["cell_tuples"] if by else [()])
        sizes = None
        if plan.cell_sizes == "public" and by:
            labels = [_label(c) for c in cells]
            sizes = [int(np.count_nonzero(recs["cells"] == lab)) for lab in labels]
        schema = snapshot_schema(plan, cells, sizes)
        planning = snapshot.planning_data_from_records(
            recs["values"],
            schema,
            cells=recs.get("cells"),
            risk_groups=recs.get("risk_groups"),
            outcome=recs.get("outcome"),
        )
        snap = None
        progress.say("planning directly on data declared public (--public-data): nothing is charged")
    else:
        _, acct = execute.open_population(
            plan, ledger_url, init_ledger=init_ledger, progress=progress, cost_delta=plan.noise_delta
        )
        key = _source_key(source)
        probe = snapshot_schema(plan, declared if declared is not None else [("x",)])
        snap = snapshot.stored_snapshot(acct, probe, key) if declared is not None else None
        if snap is None and declared is None:
            snap = _stored_public_cells(acct, plan, key)
        if snap is not None:
            reused = True
            progress.say(
                f"reusing the DP snapshot charged on {snap.created} (epsilon {snap.epsilon:g}): nothing more is spent"
            )
        else:
            if acct.would_exceed(_pure(probe)):
                raise _budget_exceeded(acct, probe)
            engine_spec = engines.EngineSpec.from_plan(plan)
            with engines.open_engine(engine, source, engine_spec, progress=progress) as eng:
                with progress.step(f"{engine}: reading and checking the source ({source.describe()[:80]})"):
                    eng.prepare()
                with progress.step(f"{engine}: aggregating the snapshot's tables"):
                    tables, cells, sizes = _engine_tables(eng, plan, by, declared)
                identity = execute.identify_source(eng, source, acct, engine, progress)
            identity.attach(acct)
            schema = snapshot_schema(plan, cells, sizes if (plan.cell_sizes == "public" and by) else None)
            with progress.step(f"ledger: charging the DP snapshot (epsilon = {schema.planning_epsilon:g})"):
                snap = snapshot.draw_snapshot(tables, schema, account=acct, source=key)
        planning = snapshot.synthetic_data(snap, seed=0)
        entry_id = _snapshot_entry(acct, key)
        left = acct.cap_epsilon - acct.spent_epsilon()
    with progress.step(f"solving {len(items)} epsilon(s) on the {'data' if public_data else 'snapshot'}"):
        view = private_plan.solve_plan(planning, [item for _, item in items])
    if view.failures:
        where = "; ".join(f"{label}: {why}" for label, why in view.failures)
        spent = "" if public_data or snap is None else " (the snapshot is stored: planning again costs nothing more)"
        raise DPInputError(f"a target cannot be met{spent}: {where}")
    solved_specs = {s.index: s for s in plan.statistics}
    solved = []
    for (spec, _), row in zip(items, view.rows, strict=True):
        eps = _round_up(row.epsilon)
        solved_specs[spec.index] = dataclasses.replace(spec, epsilon=eps)
        solved.append((spec.name, eps, bool(row.exact)))
    unsolved = [s for s in solved_specs.values() if not s.solved]
    if unsolved:  # pragma: no cover - every statistic without epsilon has a target (load_plan)
        raise DPInputError(f"{unsolved[0].where}: no epsilon and no target")
    solved_plan = _releasable(plan, solved_specs, plan_path)
    # the planner's models are not the release's in every setting (a noisy n widens a mean's interval; the
    # published rounding): the solved plan is released, simulated, on the planning data (post-processing of the
    # snapshot), and a statistic whose published intervals miss the target in more than 20% of the cells gets the
    # epsilon that the simulation says it needs (at most MAX_CHECK_ROUNDS times), else a warning in the header
    with progress.step("checking the solved plan by a simulated release on the planning data"):
        check = release_check(solved_plan, planning)
        for _ in range(MAX_CHECK_ROUNDS):
            factors = check.factors
            if not factors:
                break
            trial = dict(solved_specs)
            for spec in solved_plan.statistics:
                if spec.name in factors:
                    trial[spec.index] = dataclasses.replace(spec, epsilon=_round_up(spec.epsilon * factors[spec.name]))
            try:
                trial_plan = _releasable(plan, trial, plan_path)
            except DPInputError:  # beyond the cap: the plan stays as solved, its header says what it misses
                break
            trial_check = release_check(trial_plan, planning)
            if not any(trial_check.shares.get(name, 0.0) > check.shares.get(name, 0.0) for name in factors):
                break  # more epsilon did not help (e.g. a noisy n's error dominates): not spent
            solved_specs, solved_plan, check = trial, trial_plan, trial_check
        final = {s.name: s.epsilon for s in solved_plan.statistics}
        solved = [(name, final[name], exact) for name, _, exact in solved]
    header = _header(solved_plan, solved, snap, reused, entry_id, public_data, check)
    write_plan(solved_plan, out_path, header=header)
    warnings = [
        f"{spec.name}: {private_plan.RISK_NOISE_NOTE}"
        for (spec, _), row in zip(items, view.rows, strict=True)
        if private_plan.RISK_NOISE_NOTE in row.note
    ]
    missed = [name for name in check.shares if not check.meets(name)]
    if missed:
        noisy = " (with cell_sizes = \"noisy\" the noisy n widens each interval too: a larger n_epsilon helps)"
        warnings.append(
            f"simulated releases on the planning data say that one release may miss the target of "
            f"{', '.join(missed)} in more than {1 - MET_SHARE:.0%} of cells, at the largest epsilon that helped"
            f"{noisy if plan.cell_sizes != 'public' else ''}"
        )
    if left is not None and solved_plan.total_epsilon > left * (1 + 1e-12):
        warnings.append(
            f"the solved plan costs epsilon = {solved_plan.total_epsilon:g}, but the population "
            f"{acct.population!r} has {max(left, 0.0):g} left: its release would be refused; relax the targets"
        )
    warning = "; ".join(warnings) or None
    return PlanSolution(solved_plan, out_path, tuple(solved), snap, reused, entry_id, tuple(header), warning)


def _releasable(plan: ReleasePlan, specs: dict[int, StatisticSpec], plan_path: Any) -> ReleasePlan:
    """The plan with its solved statistics, validated as a release plan (its total within the cap)."""
    solved_plan = dataclasses.replace(plan, statistics=tuple(specs[i] for i in sorted(specs)))
    try:
        return plan_from_dict(plan_to_dict(solved_plan), Path(plan_path).parent)
    except DPInputError as exc:
        raise DPInputError(f"the solved plan is not releasable as it is: {exc}") from None


#: how many times the simulated release may raise a statistic's epsilon (each by what the simulation measured)
MAX_CHECK_ROUNDS = 3
#: a published half-width within this factor of its target meets it; one release of a statistic meets its target
#: when at least MET_SHARE of its cells do (the issue's yardstick for a real release of SOLVED.toml)
MET_FACTOR = 1.25
MET_SHARE = 0.8
#: the probability with which one real release should meet MET_SHARE (:func:`required_share`)
MET_CONFIDENCE = 0.9
_CHECKED_KINDS = ("mean", "gini", "percentiles")


def required_share(cells: int, confidence: float = MET_CONFIDENCE) -> float:
    """The smallest probability p that each published interval meets its target with, such that one release meets
    it in at least :data:`MET_SHARE` of ``cells`` intervals with probability ``confidence``: P(Binomial(cells, p)
    >= ceil(MET_SHARE x cells)) >= confidence, cells taken as independent (their noises are). Aiming at the
    share of cells itself is not enough: a release's share scatters around it (at 7 cells a per-cell 80% gives
    >= 6 of 7 in only 42% of releases), and with 3 cells 80% means all 3 (p = 0.9^(1/3) = 0.965)."""
    m = int(cells)
    if m <= 0:
        return 0.0
    k = math.ceil(MET_SHARE * m - 1e-9)

    def meets(p: float) -> float:
        return sum(math.comb(m, j) * p**j * (1.0 - p) ** (m - j) for j in range(k, m + 1))

    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if meets(mid) >= confidence else (mid, hi)
    return hi


@dataclass(frozen=True)
class ReleaseCheck:
    """The simulated releases of a solved plan (:func:`release_check`), per statistic: ``shares``, the share of
    (cell, release) pairs whose published half-width is within :data:`MET_FACTOR` of its target (the probability
    that one cell of one release meets it); ``required``, the share that makes one real release meet it in
    :data:`MET_SHARE` of its cells with probability :data:`MET_CONFIDENCE` (:func:`required_share`); ``factors``,
    for each statistic below it, the factor its epsilon needs."""

    shares: dict[str, float]
    required: dict[str, float]
    factors: dict[str, float]

    def meets(self, name: str) -> bool:
        return self.shares.get(name, 1.0) >= self.required.get(name, 0.0)


def published_half_widths(kind: str, table: Any, spec: StatisticSpec) -> tuple[np.ndarray, np.ndarray]:
    """Each published interval's half-width in a release table of ``spec`` and its target (the half_width, or the
    relative_half_width times the value); a percentiles table gives one row per cell and level."""
    if kind == "mean":
        cols = [("mean", "mean_lower", "mean_upper")]
    elif kind == "gini":
        cols = [("gini", "gini_lower", "gini_upper")]
    else:
        names = ["p" + f"{float(q):g}".replace(".", "_") for q in (spec.q or (25.0, 50.0, 75.0))]
        cols = [(c, f"{c}_lower", f"{c}_upper") for c in names]
    halves, targets = [], []
    for value, lo, hi in cols:
        v = table[value].to_numpy(dtype=float)
        halves.append((table[hi].to_numpy(dtype=float) - table[lo].to_numpy(dtype=float)) / 2.0)
        rel = spec.relative_half_width
        targets.append(np.abs(v) * rel if rel is not None else np.full(v.shape, float(spec.half_width or 0.0)))
    return np.concatenate(halves), np.concatenate(targets)


#: simulated releases per check: every (cell, release) pair counts, so that the spread of one release's
#: half-width (a percentile's interval spans one or two bins, a Gini's follows its noisy sensitivity bound) is
#: in the check, not averaged away
CHECK_RELEASES = 5


def release_check(
    plan: ReleasePlan, planning: Any, seeds: Sequence[int] = tuple(range(CHECK_RELEASES))
) -> ReleaseCheck:
    """Release ``plan``'s means, Ginis and percentiles with targets, simulated (numpy noise from each of
    ``seeds``), on the planning data (synthetic, drawn from the snapshot, or the public records) with the
    release's own engine and published intervals; returns each statistic's share of (cell, release) pairs whose
    published half-width is within :data:`MET_FACTOR` of its target, the share it needs (:func:`required_share`
    of its cells: one real release then meets the target in :data:`MET_SHARE` of its cells with probability
    :data:`MET_CONFIDENCE`), and for each statistic below it the factor its epsilon needs (the pairs' ratio of
    half-width to target at the required quantile, the pair above it when it falls between two: a half-width
    falls as 1/epsilon where the statistic's noise dominates). Empty when the check cannot run (e.g. only relative risks)."""
    import tempfile

    import pandas as pd

    from . import engines
    from .engines import execute

    empty = ReleaseCheck({}, {}, {})
    specs = [
        s
        for s in _targets(plan)
        if s.kind in _CHECKED_KINDS and not (s.kind == "percentiles" and s.method == "exponential")
    ]
    if not specs:
        return empty
    by = _cell_columns(plan)
    frame = pd.DataFrame({plan.income: np.asarray(planning.values, dtype=float)})
    if by:
        parts = [str(c).split(" | ") for c in planning.cells]
        for j, col in enumerate(by):
            frame[col] = [p[j] if j < len(p) else "" for p in parts]
    keys = plan.keys if plan.keys is not None and plan.keys.covers(by) else None
    sub = dataclasses.replace(plan, statistics=tuple(specs), keys=keys)
    ratios: dict[str, list[np.ndarray]] = {s.name: [] for s in specs}
    with tempfile.TemporaryDirectory(prefix="dpcore-plan-check-") as tmp:
        path = Path(tmp) / "planning.parquet"
        frame.to_parquet(path, index=False)
        for seed in seeds:
            out = Path(tmp) / f"out{seed}"
            try:
                execute.run_plan(sub, engines.parse_source(str(path)), out_dir=out, seed=int(seed), public_data=True)
            except DPInputError:  # the check is a guard, not a condition of the plan: said as "not checked"
                return empty
            for spec in specs:
                table = pd.read_csv(out / f"SIMULATION_{spec.name}.csv", keep_default_na=True)
                half, target = published_half_widths(spec.kind, table, spec)
                ok = np.isfinite(half) & (target > 0)
                ratios[spec.name].append(np.where(ok, half / np.where(target > 0, target, 1.0), np.inf))
    shares: dict[str, float] = {}
    required: dict[str, float] = {}
    factors: dict[str, float] = {}
    for spec in specs:
        per_release = ratios[spec.name]
        pairs = np.concatenate(per_release)
        shares[spec.name] = float(np.mean(pairs <= MET_FACTOR)) if pairs.size else 1.0
        required[spec.name] = required_share(per_release[0].size) if per_release else 0.0
        if shares[spec.name] < required[spec.name]:
            need = float(np.quantile(pairs, required[spec.name], method="higher")) / MET_FACTOR
            if math.isfinite(need) and need > 1.0:
                factors[spec.name] = need
    return ReleaseCheck(shares, required, factors)


def _pure(schema: SnapshotSchema) -> Any:
    from . import budget

    return budget.pure(schema.planning_epsilon)


def _budget_exceeded(acct: Any, schema: SnapshotSchema) -> Exception:
    from .ledger import BudgetExceeded

    spent = acct.spent_epsilon()
    return BudgetExceeded(
        f"refused before reading any data: the DP snapshot costs epsilon = {schema.planning_epsilon:g}, but the "
        f"population {acct.population!r} has spent {spent:g} of its cap {acct.cap_epsilon:g}"
    )


def _source_key(source: Any) -> str:
    """The source's key in a snapshot's record: the key of its exact bytes (files), else its public description."""
    from .engines.fingerprint import source_bytes_key

    return source_bytes_key(source) or source.describe()


def _stored_public_cells(acct: Any, plan: ReleasePlan, key: str) -> Any:
    """A stored snapshot whose cells are the data's (public cells): matched on everything but the cells."""
    from . import snapshot

    for entry in reversed(acct.entries()):
        rec = entry.record
        if not isinstance(rec, dict) or rec.get("kind") != snapshot.SNAPSHOT_RECORD_KIND or rec.get("source") != key:
            continue
        stored = rec.get("schema") or {}
        cells = [tuple(str(c).split(" | ")) for c in stored.get("cells") or []] or [()]
        sizes = stored.get("cell_sizes")
        found = snapshot.stored_snapshot(acct, snapshot_schema(plan, cells, sizes), key)
        if found is not None:
            return found
    return None


def _snapshot_entry(acct: Any, key: str) -> int | None:
    from . import snapshot

    for entry in reversed(acct.entries()):
        rec = entry.record
        if isinstance(rec, dict) and rec.get("kind") == snapshot.SNAPSHOT_RECORD_KIND and rec.get("source") == key:
            return int(entry.id)
    return None


def _round_up(epsilon: float) -> float:
    """The solved epsilon rounded up to 4 significant digits (a target met at epsilon is met above it)."""
    if epsilon <= 0 or not math.isfinite(epsilon):
        return epsilon
    step = 10 ** (math.floor(math.log10(epsilon)) - 3)
    return float(f"{math.ceil(epsilon / step - 1e-9) * step:.6g}")


def _header(
    plan: ReleasePlan,
    solved: list,
    snap: Any,
    reused: bool,
    entry_id: int | None,
    public_data: bool,
    check: ReleaseCheck | None = None,
) -> list[str]:
    lines = ["Solved by 'python -m dpcore plan': each statistic with a target has the smallest epsilon meeting it."]
    if public_data:
        lines.append("Planned directly on data declared public (--public-data): nothing was charged.")
    else:
        lines.append(
            f"Planned on a DP snapshot of the source: planning_epsilon = {snap.epsilon:g}, drawn {snap.created}"
            + (f", ledger entry {entry_id}" if entry_id is not None else "")
            + (" (reused: nothing more spent)" if reused else "")
            + "; charged once to the population, never by a release of this plan."
        )
        lines.append("Every number below is public or computed from the snapshot (a DP release): publishable.")
    check = check or ReleaseCheck({}, {}, {})
    for name, eps, exact in solved:
        said = ""
        if name in check.shares:
            met = "meets" if check.meets(name) else "MISSES"
            said = (
                f"; {CHECK_RELEASES} simulated releases on the planning data: {check.shares[name]:.0%} of cells within "
                f"{MET_FACTOR:g}x, {met} the {check.required[name]:.0%} needed (docs/plan_format.md)"
            )
        lines.append(f"  {name}: epsilon {eps:g} ({'exact: public inputs only' if exact else 'approximate'}{said})")
    return lines
