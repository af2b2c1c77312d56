"""Run a release plan: engine aggregates -> ledger charge -> noise on the small aggregates -> atomic output.

:func:`run_plan` is what ``python -m dpcore release`` calls. Order of events (a real release):

1. the plan is validated; ``--out`` is taken (:class:`OutputSlot`: absent or empty, locked against a second
   run, leftovers of a killed run removed, a probe file written, so an unwritable ``--out`` is refused now);
2. the ledger is opened (it must exist; ``init_ledger`` creates it for a first release) and the plan's population
   (it must be registered with the plan's cap; ``init_ledger`` registers it in a new ledger); the plan's total cost
   is checked against what is left -- **before any data is read**;
3. the engine computes the per-cell aggregates (confidential, small). From step 1 on, a low-priority process
   draws the histograms' discrete Laplace noise ahead in idle CPU time (it depends on the public scale only:
   :mod:`dpcore.noise.ahead`), which the draw of step 5 takes first;
4. an input with no row, a statistic with public cell sizes and no row, public cells nearly one per row, or an
   output the free space cannot hold is refused, from public facts only (:func:`refuse_undeliverable`; with
   protected cell sizes nothing one person can change decides a refusal) -- everything so far charges nothing;
5. the source's records are fingerprinted and the source joins its population (refused when its records
   belong to another one). Meanwhile a thread draws the noisy tables (:class:`DrawAhead`; the noise of
   :mod:`dpcore.noise.secure`: OpenDP's discrete Laplace for counts, OpenDP's floating-point-safe Laplace for
   sums, the certified generalized-Cauchy sampler for the Gini). They stay in this process's memory: a refusal
   drops them unseen, and a failure of the draw is raised only after the charge, where it was raised when the
   draw followed the charge, so neighbouring data still refuse or release alike before any charge;
6. the ledger is charged (one entry for the whole plan, with the release record) -- before any noisy value is
   used or anything is written; SIGINT/SIGTERM are held while it commits;
7. the tables (CSV and Parquet) and ``release_record.json`` are written into a staging folder beside the
   output directory, which is renamed into place at the end (nothing is left there on failure or signal);
   a failure after step 6 raises :class:`ReleaseNotDelivered` / :class:`InterruptedAfterCharge`, whose text
   says that epsilon was spent;
8. the entry is marked revealed (:meth:`dpcore.ledger.Account.attach_result`; when the ledger cannot record
   it, the mark is journaled and :attr:`PlanResult.ledger_link_warning` says so).

``seed`` given = **simulation**: numpy noise with that seed, the record says "simulation, not a
release", the ledger is neither opened nor charged. Only on data the caller declares public
(``public_data=True``, ``--public-data``; refused before any data is read otherwise): with the seed the noise
can be regenerated and subtracted, so a simulation reveals its source exactly. Every table it writes has a
``simulation`` column (True) and is named ``SIMULATION_<statistic>.csv`` / ``.parquet``.

Mechanisms, per statistic with epsilon = its ``epsilon`` and m = rows one person can change (1, or
``max_rows_per_person`` with a privacy unit). Neighbouring relation: replace one person (one row without
a privacy unit): the values (income, outcome) of up to m of their rows change; with ``cell_sizes = "public"``
the cells (``by``, the exposure group) of the rows and the number of rows of every cell are public (as PSEO
publishes cell counts; the project's "replace one, n public" relation, per cell). With ``cell_sizes = "noisy"``
(the default) the rows may also move between cells: the cells listed are the plan's declared ``[keys]`` or
selected with DP, every n is a noisy count costing ``n_epsilon`` more, and the mean's sum sensitivity widens
(:mod:`dpcore.cell_keys`); a Gini by cells needs public cell sizes.

* percentiles (PSEO, Foote et al. 2019, Section 4.1): every cell x bin count + discrete Laplace with
  scale 2m/epsilon. A row moving between two bins changes two counts by 1, so the whole table (all
  cells) has L1 sensitivity 2m and is epsilon-DP; percentiles are read off each noisy histogram with
  eq. (4.2) (:func:`dpcore.percentiles.percentiles_from_histogram`, post-processing). With ``method =
  "exponential"``: the rows counted into the public candidate grid, and per cell and level one candidate chosen by
  OpenDP's noisy max on the scores -|#(x < c) - q n / 100| (:class:`dpcore.mechanisms.ExponentialQuantileMechanism`;
  epsilon / len(q) per level, score sensitivity m, 2m when cell sizes are noisy).
  With ``margins``: every level (the cells, each margin, the total) measured the same way with its share epsilon_l
  of epsilon (scale 2m/epsilon_l; the levels compose to epsilon), then made consistent (post-processing:
  :mod:`dpcore.engines.margins`).
* mean (stratified paper Eq. 2/3): clipped sum in cents + Laplace with scale m (cU - cL)/epsilon
  (cU, cL the bounds in cents; OpenDP's scale for that map), divided by the public n.
* gini (Lan & Reiter, eqs. (9)-(10)): per cell g + (S_beta(X)/alpha) Z drawn by :class:`dpcore.mechanisms.GiniMechanism`
  (the mechanism of every released Gini) with (alpha, beta) certified for epsilon/m
  (:func:`dpcore.noise.smooth_noise_calibration`); one person changes at most m rows in total, so by group
  privacy the cells together cost m * epsilon/m = epsilon. The certified sampler runs in its pure-DP mode
  (window [0, 1], scale floor), so the statistic's delta is 0.
  With ``noise = "laplace"``: Z ~ Laplace(1) and (alpha, beta) from
  :func:`dpcore.noise.smooth.smooth_calibration` ("laplace", NRS 2007's (epsilon, delta) with the certified
  delta of :func:`dpcore.noise.smooth.laplace_smooth_delta`) at epsilon/m and delta_cell = delta / (m
  e^{(m-1) epsilon/m}) (= delta for m = 1: the planner's calibration exactly), so by group privacy
  ((k eps, k e^{(k-1) eps} delta) for k changed rows; the cells compose) the statistic costs (epsilon, delta);
  the noise is drawn by OpenDP's floating-point-safe Laplace sampler at the confidential scale S_beta(X)/alpha
  and the value clamped to [0, 1] (post-processing).
* relative_risk (Shoham & Ligett, Claim 3.1): both outcome counts of every cell + discrete Laplace with
  scale 2m/epsilon (epsilon/2 per count, as :func:`dpcore.ratio.laplace_noised_counts`); RR =
  (x~/n_x) / (max(y~, 1)/n_y) is post-processing ("undefined" -- empty -- when a group is empty).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import pipeline
from ..budget import PlanCost
from ..mechanisms import Drawer
from ..noise.ahead import AHEAD_MIN_SOURCE_BYTES
from ..plan import ReleasePlan
from ..validation import DPInputError
from . import EngineSpec, Progress, Source, open_engine
from .checks import input_is_empty, refuse_undeliverable
from .draws import Deferred, DrawAhead, released_table, statistic_mechanisms
from .fingerprint import engine_record_fingerprints, source_bytes_key
from .margins import MARGIN_TABLES
from .output import RECORD_FILE, OutputSlot, table_stem, write_outputs
from .record import DEFAULT_GINI_CAP_DELTA, delta_sources, plan_cost, release_record

__all__ = [
    "PlanResult",
    "run_plan",
    "check_simulation_allowed",
    "Terminated",
    "open_population",
    "identify_source",
    "SourceIdentity",
]


@dataclass(frozen=True)
class PlanResult:
    """What :func:`run_plan` produced: the output directory, the record, the tables.

    ``ledger_link_warning``: None, or one line saying that the tables were written and the charge is on the
    ledger but marking the entry revealed failed (the release is delivered; exit code 0 on the command line).
    ``card_warning``: None, or one line saying that the release card could not be written (a full disk, say):
    the tables and the record are, and the record says why the card is missing."""

    out_dir: Path
    record: dict
    tables: dict = field(repr=False)
    simulation: bool
    ledger_entry_id: int | None = None
    ledger_link_warning: str | None = None
    card_warning: str | None = None


class Terminated(KeyboardInterrupt):
    """Raised by the command line's SIGTERM handler, so that SIGTERM unwinds like Ctrl-C: the temporary folder
    and the ``--out`` lock are removed by the ``finally`` blocks that already handle Ctrl-C."""

    signal_number = signal.SIGTERM


def _open_ledger(ledger_url: str | None, *, create: bool, progress: Progress):
    """:func:`dpcore.ledger.open_ledger` (``create=True``: :func:`dpcore.ledger.init_ledger`, a new ledger only),
    with the ledger's lock-wait notes ("waiting for the ledger lock ...") shown as progress lines. An existing
    ledger is opened with ``verify``'s checks: a damaged one is refused with its summary before anything is read
    or charged."""
    from .. import ledger

    if create:
        return ledger.init_ledger(ledger_url, on_wait=progress.say)
    return ledger.open_ledger(ledger_url, create=False, on_wait=progress.say, verify=True)


def open_population(
    plan: ReleasePlan,
    ledger_url: str | None,
    *,
    init_ledger: bool = False,
    progress: Progress | None = None,
    cost_delta: float = 0.0,
):
    """Open the ledger (never created silently: ``init_ledger`` creates a new one, and refuses a ledger that holds
    charges) and the plan's registered population, whose cap must be the plan's (public inputs only): the account
    a release, or a planning snapshot (``python -m dpcore plan``), is charged to. ``cost_delta``: the delta the
    plan spends, which sets the delta cap of a population that ``init_ledger`` registers."""
    from .. import ledger

    progress = progress or Progress(quiet=True)
    if init_ledger:
        # refused on a ledger that holds charges: a script that always passed the flag would fail from its second
        # release on, so the flag cannot stay in a script and recreate, unseen, a ledger deleted later. Accepted
        # on a ledger without charges, so a first release refused before its charge can be run again as it was.
        try:
            db = _open_ledger(ledger_url, create=False, progress=progress)
        except ledger.LedgerMissing:
            db = _open_ledger(ledger_url, create=True, progress=progress)
            progress.say(f"created a new ledger: {db.describe()}")
        else:
            if any(account.entries() for account in db.accounts()):
                raise DPInputError(
                    f"--init-ledger creates a new ledger, but {db.describe()} already holds charges: "
                    "drop --init-ledger (it is for the first release only)"
                )
    else:
        db = _open_ledger(ledger_url, create=False, progress=progress)
    # One budget per population: the plan names a population the data owner registered (with its caps); a plan
    # never creates one, since a name typed in a plan would otherwise open a fresh budget for the same people.
    population = plan.population or plan.dataset
    if init_ledger and db.population(population) is None:
        # --init-ledger is the data owner's first release into a ledger without charges (checked above): the
        # flag that creates the ledger also registers the plan's population with the plan's caps, said on screen
        cap_delta = (
            plan.cap_delta if plan.cap_delta is not None else (DEFAULT_GINI_CAP_DELTA if cost_delta > 0 else 0.0)
        )
        registered = db.register_population(population, plan.cap_epsilon, cap_delta)
        progress.say(
            f"registered the population {population!r} with the cap {registered.cap.describe()} "
            "(--init-ledger; later plans name it, and its cap is fixed)"
        )
    acct = db.require_population(population)
    if plan.cap_epsilon != acct.cap_epsilon or (plan.cap_delta is not None and plan.cap_delta != acct.cap_delta):
        raise DPInputError(
            f"the plan's cap (cap_epsilon = {plan.cap_epsilon:g}"
            + (f", cap_delta = {plan.cap_delta:g}" if plan.cap_delta is not None else "")
            + f") is not the cap of the population {population!r} in the ledger ({acct.cap.describe()}, fixed when it "
            "was registered): write the registered cap in the plan; nothing was charged"
        )
    return db, acct


def _open_account(
    plan: ReleasePlan,
    cost: PlanCost,
    ledger_url: str | None,
    *,
    init_ledger: bool = False,
    progress: Progress | None = None,
):
    """Open the ledger and the plan's population (:func:`open_population`) and check the plan's cost against what
    is left (public inputs only)."""
    db, acct = open_population(plan, ledger_url, init_ledger=init_ledger, progress=progress, cost_delta=cost.delta)
    population = plan.population or plan.dataset
    if cost.delta > 0 and acct.cap_delta <= 0:
        raise DPInputError(
            f"the population {population!r} is pure epsilon-DP (cap delta = 0), but this plan has delta = "
            f"{cost.delta:.3g} (from {delta_sources(plan)}); declare the cells in [keys] (no selection delta) or use "
            "a population registered with --cap-delta > 0; nothing was charged"
        )
    if acct.would_exceed(cost.privacy_cost()):
        spent = acct.spent_epsilon()
        from ..ledger import BudgetExceeded

        raise BudgetExceeded(
            f"refused before reading any data: the plan costs epsilon = {cost.epsilon:g}, but the population "
            f"{population!r} has spent {spent:g} of its cap {acct.cap_epsilon:g} (left {max(0.0, acct.cap_epsilon - spent):g})"
        )
    return db, acct


def check_simulation_allowed(public_data: bool) -> None:
    """Refuse a seeded simulation unless the caller declares the source public.

    A simulation draws numpy noise from a seed that its record names and charges nothing: anyone who reruns
    the plan with that seed on a file with the same cells (sizes are public) regenerates the noise exactly,
    and released minus regenerated noise is every true aggregate (a lone person's income, to the cent),
    whatever epsilon the plan states. So it may only run on data that may be revealed anyway: a synthetic or
    public file (such as the bundled examples), which the caller declares with ``public_data=True``
    (``--public-data``). Checked before any data is read."""
    if public_data is not True:
        raise DPInputError(
            "refused before reading any data: --seed runs a simulation, not a release -- its noise is "
            "regenerated from the seed, so subtracting it recovers every true value of the source exactly (a "
            "seeded simulation of confidential data publishes invertible numbers), and nothing is charged. "
            "For confidential data run a real release (drop --seed: the ledger is charged and the secure "
            "sampler draws the noise); to simulate, use a synthetic or public file and declare it with "
            "--public-data"
        )


def run_plan(
    plan: ReleasePlan,
    source: Source,
    *,
    engine: str = "duckdb",
    out_dir: str | os.PathLike,
    ledger_url: str | None = None,
    seed: int | None = None,
    master: str | None = None,
    progress: Progress | None = None,
    memory_limit: str | None = None,
    workdir: str | None = None,
    init_ledger: bool = False,
    public_data: bool = False,
) -> PlanResult:
    """Run ``plan`` on ``source`` with ``engine``; write the tables and the record into ``out_dir``.

    See the module docstring for the order of events, the mechanisms and the neighbouring relation.
    ``seed`` given: simulation (numpy noise, no ledger), only with ``public_data=True`` -- the caller declares
    the source public (:func:`check_simulation_allowed`); its tables carry ``simulation = True`` and are written
    as ``SIMULATION_<name>.csv`` / ``.parquet``. The ledger must exist (``init_ledger=True`` creates a
    new one for a first release). Raises :class:`DPInputError` (or :class:`dpcore.ledger.BudgetExceeded`) with
    a one-line message for every user error, all before the charge; after the charge,
    :class:`ReleaseNotDelivered` (or :class:`InterruptedAfterCharge` on SIGINT/SIGTERM), whose text says that
    epsilon was spent.
    """
    from ..noise.ahead import drawn_ahead

    progress = progress or Progress(quiet=True)
    if not isinstance(plan, ReleasePlan):
        raise TypeError("plan must be a dpcore.plan.ReleasePlan (use dpcore.plan.load_plan)")
    if engine not in ("duckdb", "spark", "pandas"):
        raise DPInputError(f"unknown engine {engine!r}; choose one of duckdb, spark, pandas")
    simulate = seed is not None
    if simulate:
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise DPInputError(f"--seed must be a non-negative integer, got {seed!r}")
        check_simulation_allowed(public_data)
        rng = np.random.default_rng(int(seed))
    else:
        rng = None
    noise_ahead = (
        drawn_ahead(plan.histogram_noise_scales())
        if not simulate and _worth_drawing_ahead(source)
        else contextlib.nullcontext()
    )
    with noise_ahead as ahead_report, OutputSlot(out_dir, progress) as slot:
        return _run_in_slot(
            plan,
            source,
            slot,
            engine=engine,
            ledger_url=ledger_url,
            seed=seed,
            rng=rng,
            master=master,
            progress=progress,
            memory_limit=memory_limit,
            workdir=workdir,
            init_ledger=init_ledger,
            ahead_report=ahead_report,
        )


def _worth_drawing_ahead(source: Source) -> bool:
    """Whether the scan of ``source`` is long enough to draw noise beside it (a database query: assumed so; an
    in-memory table: no, it is read at once)."""
    if source.kind == "frame":
        return False
    if not source.paths:
        return True
    size = source.file_bytes()
    return size is not None and size >= AHEAD_MIN_SOURCE_BYTES


def _import_opendp() -> None:
    """Import OpenDP (the samplers of a real release); a failure is left to the draw, where it is reported."""
    try:
        from ..noise.guarantees import load_opendp

        load_opendp()
    except Exception:  # the draw imports it again and says why it cannot
        pass


class _StepTimes:
    """Wall seconds of the phases of a release (ledger, scan, aggregate, noise, write), said as one progress
    line at the end, so an operator (and benchmarks/bench_release_scale.py, which sets them beside the bare
    DuckDB scan) sees where the time of a release goes; "other" is the rest (engine start, checks, record)."""

    def __init__(self, ahead_report: Any = None) -> None:
        self.started = time.perf_counter()
        self.seconds: dict[str, float] = {}
        #: wall seconds of work done in a thread beside the fingerprint (read after the thread is joined)
        self.overlapped: dict[str, float] = {}
        #: the noise reserves drawn ahead (dpcore.noise.ahead.AheadReport), when there were any
        self.ahead_report = ahead_report

    @contextlib.contextmanager
    def phase(self, name: str):
        t0 = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.perf_counter() - t0

    def line(self) -> str:
        total = time.perf_counter() - self.started
        parts = []
        for name, sec in self.seconds.items():
            text = f"{name} {sec:.1f} s"
            if name in self.overlapped:  # e.g. "noise 0.2 s (drawn in 2.9 s beside the fingerprint)"
                text += f" (drawn in {self.overlapped[name]:.1f} s beside the fingerprint)"
            if name == "noise" and self.ahead_report is not None and self.ahead_report.taken:
                text += f" ({self.ahead_report.taken:,} draws made ahead in idle CPU time)"
            parts.append(text)
        parts.append(f"other {max(total - sum(self.seconds.values()), 0.0):.1f} s")
        return f"step times: {', '.join(parts)} (total {total:.1f} s)"


@dataclass(frozen=True)
class SourceIdentity:
    """What attaches a source to its population: its record fingerprints in the versions the ledger reads (None
    when its exact bytes were fingerprinted before: see :func:`dpcore.engines.fingerprint.source_bytes_key`; a
    DPInputError when the records could not be fingerprinted, said after the refusals that explain it better) and
    its byte key."""

    records: Any
    bytes_key: str | None

    def attach(self, acct: Any) -> None:
        if isinstance(self.records, DPInputError):
            raise self.records
        if self.records is not None:
            acct.db.attach_source(self.records, acct.population)
        if self.bytes_key is not None:  # refuses, like the records would, bytes already of another population
            acct.db.attach_source(self.bytes_key, acct.population, file_bytes=True)


def identify_source(
    eng: Any, source: Source, acct: Any, engine: str, progress: Progress, times: _StepTimes | None = None
) -> SourceIdentity:
    """The source's identity for the ledger: its byte key, and its record fingerprint unless these exact
    bytes were fingerprinted before (the same bytes are the same records: the decision is the same).
    ``times``: the release's step times (None: not timed)."""
    times = times or _StepTimes()
    with times.phase("fingerprint"):
        bytes_key = source_bytes_key(source)
    if bytes_key is not None and acct.db.source_population(bytes_key) is not None:
        progress.say(
            f"{engine}: these exact files were fingerprinted by an earlier release: their population is "
            "known (the record fingerprint is not computed again)"
        )
        return SourceIdentity(None, bytes_key)
    versions = acct.db.record_fingerprint_versions
    legacy = (
        " by fingerprint versions 1 and 2 (this ledger holds sources attached by version 1)" if 1 in versions else ""
    )
    with (
        progress.step(f"{engine}: fingerprinting the source's records (which population they belong to){legacy}"),
        times.phase("fingerprint"),
    ):
        try:
            return SourceIdentity(engine_record_fingerprints(eng, versions), bytes_key)
        except DPInputError as exc:  # e.g. no rows: the refusals below say it first
            return SourceIdentity(exc, bytes_key)


# complexity above the cap: the release steps in order: the order (check, charge, draw, write) is the safety argument
def _run_in_slot(  # noqa: C901
    plan: ReleasePlan,
    source: Source,
    slot: OutputSlot,
    *,
    engine: str,
    ledger_url: str | None,
    seed: int | None,
    rng: Any,
    master: str | None,
    progress: Progress,
    memory_limit: str | None,
    workdir: str | None,
    init_ledger: bool,
    ahead_report: Any = None,
) -> PlanResult:
    out = slot.out
    times = _StepTimes(ahead_report)
    simulate = seed is not None
    cost = plan_cost(plan)
    acct = None
    if not simulate:
        with (
            progress.step(
                f"ledger: checking the budget of the population {plan.population or plan.dataset!r} "
                f"(plan costs epsilon = {cost.epsilon:g})"
            ),
            times.phase("ledger"),
        ):
            _, acct = _open_account(plan, cost, ledger_url, init_ledger=init_ledger, progress=progress)
    spec = EngineSpec.from_plan(plan)
    # the mechanisms each statistic draws with (public parameters only), and the release's only way to draw
    mechanisms = {s.name: statistic_mechanisms(plan, s) for s in plan.statistics}
    drawer = Drawer([m for s in plan.statistics for m in mechanisms[s.name].all()], rng)
    with open_engine(
        engine, source, spec, progress=progress, master=master, workdir=workdir, memory_limit=memory_limit
    ) as eng:
        with (
            progress.step(f"{engine}: reading and checking the source ({source.describe()[:80]})"),
            times.phase("scan"),
        ):
            eng.prepare()
        if acct is not None:
            # OpenDP's import (about 0.08 s, most of it opendp.prelude's extras) runs beside the aggregate, which
            # waits in DuckDB without the interpreter lock and leaves CPU idle, instead of ahead of the first draw
            threading.Thread(target=_import_opendp, name="dpcore-import-opendp", daemon=True).start()
        aggregates = {}
        for s in plan.statistics:
            with (
                progress.step(f"{engine}: aggregating {s.where} by {', '.join(s.by) or '(whole table)'}"),
                times.phase("aggregate"),
            ):
                aggregates[s.name] = Deferred(s, eng, plan, mechanisms[s.name])
                aggregates[s.name].compute()
        # the confidential aggregates are in memory; nothing has been revealed or charged yet. The engine's working
        # memory goes back before the checks, the noise and the fingerprint add theirs (the release's peak)
        input_empty = input_is_empty(plan, aggregates, eng)  # before the engine lets its tables go
        getattr(eng, "release_memory", lambda: None)()
        cell_warnings = refuse_undeliverable(plan, aggregates, slot, input_empty)
        ahead = None
        if acct is not None:
            # the noise does not wait for the fingerprint (seconds at 10M rows): drawn beside it, used after the charge
            ahead = DrawAhead(plan, aggregates, drawer, times)
            aggregates = {}
        identity = identify_source(eng, source, acct, engine, progress, times) if acct is not None else None
    if acct is not None and identity is not None:
        # the source joins its population before anything is charged: the same records already attached to
        # another population (another plan name, a re-saved, reordered or converted copy) are refused here
        with times.phase("ledger"):
            identity.attach(acct)
    record = release_record(
        plan, source=source.describe(), engine=engine, cost=cost, cell_warnings=cell_warnings, seed=seed
    )
    noise_step = "adding noise to the aggregates" + (" (simulation: numpy)" if simulate else " (OpenDP / certified)")
    tables: dict[str, pd.DataFrame] = {}

    def deliver(drawn: dict[str, tuple[pd.DataFrame, dict]], entry_id: int | None) -> tuple[dict, Path]:
        """The record's ledger part (after the charge), its statistics, and the output folder, written."""
        if acct is not None and entry_id is not None:
            try:
                spent_after = acct.spent_epsilon()
            except DPInputError:  # the ledger went away after the charge: the release goes on (the entry is there)
                spent_after = None
            record["ledger"] = {
                "backend": acct.db.backend if hasattr(acct, "db") else None,
                "account": acct.population or plan.dataset,
                "population": acct.population,
                "entry_id": entry_id,
                "charged": cost.privacy_cost().to_dict(),
                "spent_epsilon_after": spent_after,
                "cap_epsilon": acct.cap_epsilon,
            }
        stats_out = []
        for s in plan.statistics:
            table, info = drawn.pop(s.name)
            levels = {s.name: table, **info.pop(MARGIN_TABLES, {})}  # a statistic with margins: a table per level
            for name, level_table in levels.items():
                # every simulated table says so, in a column and in its file names
                tables[name] = level_table.assign(simulation=True) if simulate else level_table
            for level in info.get("levels", []):
                level["files"] = [f"{table_stem(level['name'], simulate)}.{ext}" for ext in ("csv", "parquet")]
            table = tables[s.name]
            stem = table_stem(s.name, simulate)
            stats_out.append(
                {
                    "name": s.name,
                    "kind": s.kind,
                    "by": list(s.by),
                    "epsilon": s.epsilon,
                    "cells": int(len(table)),
                    "columns": list(table.columns),
                    "files": [f"{stem}.csv", f"{stem}.parquet"],
                    **info,
                }
            )
        record["statistics"] = stats_out
        with progress.step(f"writing {len(tables)} table(s) and {RECORD_FILE} to {out}"), times.phase("write"):
            hashes = write_outputs(out, plan, tables, record, simulation=simulate)
        record["files"] = hashes
        return {"out_dir": str(out), "files": hashes}, out

    if acct is None:  # a simulation: numpy noise from the seed, nothing charged
        with progress.step(noise_step), times.phase("noise"):
            drawn = {s.name: released_table(plan, s, aggregates.pop(s.name), drawer) for s in plan.statistics}
        deliver(drawn, None)
        progress.say(times.line())
        card = record.get("release_card")
        return PlanResult(out, record, tables, simulate, None, None, f"the release card was {card}" if card else None)

    @contextlib.contextmanager
    def phase(name: str) -> Iterator[None]:
        """The command line's progress line and step time of each step of the release transaction."""
        with contextlib.ExitStack() as stack:
            if name == "charge":
                stack.enter_context(progress.step("ledger: charging the plan (before any noisy value is used)"))
            elif name == "draw":
                stack.enter_context(progress.step(noise_step))
            if name in ("charge", "record", "draw"):
                stack.enter_context(times.phase("noise" if name == "draw" else "ledger"))
            yield

    assert ahead is not None  # a real release draws beside the fingerprint
    released = pipeline.release(
        acct,
        label=f"release plan {plan.dataset}: " + ", ".join(s.name for s in plan.statistics),
        cost=cost.privacy_cost(),
        record=record,
        drawer=drawer,
        draw=ahead.result,
        deliver=deliver,
        account_name=acct.population or plan.dataset,
        phase=phase,
    )
    progress.say(times.line())
    card = record.get("release_card")
    card_warning = f"the release card was {card}" if card else None
    return PlanResult(out, record, tables, simulate, released.entry_id, released.link_warning, card_warning)
