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
   output the free space cannot hold is refused, from public facts only (:func:`_refuse_undeliverable`; with
   protected cell sizes nothing one person can change decides a refusal) -- everything so far charges nothing;
5. the source's records are fingerprinted and the source joins its population (refused when its records
   belong to another one). Meanwhile a thread draws the noisy tables (:class:`_DrawAhead`; the noise of
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
  OpenDP's noisy max on the scores -|#(x < c) - q n / 100| (:class:`dpcore.percentiles.ExponentialQuantileMechanism`;
  epsilon / len(q) per level, score sensitivity m, 2m when cell sizes are noisy).
* mean (stratified paper Eq. 2/3): clipped sum in cents + Laplace with scale m (cU - cL)/epsilon
  (cU, cL the bounds in cents; OpenDP's scale for that map), divided by the public n.
* gini (Lan & Reiter, eqs. (9)-(10)): per cell g + (S_beta(X)/alpha) Z drawn by :class:`dpcore.gini.GiniMechanism`
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
import hashlib
import json
import math
import os
import re
import shutil
import signal
import tempfile
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import __version__
from ..noise.ahead import AHEAD_MIN_SOURCE_BYTES
from ..plan import ReleasePlan, StatisticSpec, plan_to_dict, plan_to_toml
from ..published import published_table
from ..release_card import card_bytes_estimate, write_release_card
from ..validation import DPInputError
from . import EngineSpec, Progress, Source, open_engine
from .fingerprint import engine_record_fingerprints, source_bytes_key

__all__ = [
    "gini_mechanism",
    "DEFAULT_GINI_CAP_DELTA",
    "PlanCost",
    "plan_cost",
    "delta_sources",
    "PlanResult",
    "run_plan",
    "SIMULATION_NOTE",
    "SIMULATION_PREFIX",
    "check_simulation_allowed",
    "OutputSlot",
    "write_release_folder",
    "ChargeNotice",
    "ReleaseNotDelivered",
    "InterruptedAfterCharge",
    "Terminated",
]

#: delta cap of a ledger account created by a plan with a Gini statistic and no cap_delta
DEFAULT_GINI_CAP_DELTA = 1e-9
SIMULATION_NOTE = "simulation, not a release"
RECORD_FILE = "release_record.json"


# ---------------------------------------------------------------------------------------------
# Costs
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanCost:
    """The privacy cost of a plan: per statistic (epsilon, delta) and the sequential total."""

    epsilon: float
    delta: float
    per_statistic: tuple[tuple[float, float], ...]

    def as_budget_cost(self):
        from .. import budget

        return budget.approx(self.epsilon, self.delta) if self.delta > 0 else budget.pure(self.epsilon)


def gini_mechanism(spec: StatisticSpec, m: int, level: float = 0.95):
    """The :class:`dpcore.mechanisms.GiniIntervalMechanism` of a plan's Gini: the value by
    :class:`dpcore.gini.GiniMechanism` (the mechanism every released Gini is drawn by) and a DP upper bound on its
    smooth sensitivity, so that the published interval needs nothing confidential; epsilon/m per cell (split
    between value and bound), and for "laplace" delta / (m e^{(m-1) epsilon/m}) per cell, so group privacy over
    the m rows of one person gives back the plan's (epsilon, delta)."""
    from ..mechanisms import GiniIntervalMechanism

    # the plan parser sets the bounds, the noise and the calibration of every Gini
    assert spec.lower is not None and spec.upper is not None and spec.noise is not None
    assert spec.calibration is not None
    return GiniIntervalMechanism(
        spec.epsilon,
        spec.lower,
        spec.upper,
        noise=spec.noise,
        gamma=2.0 if spec.gamma is None else spec.gamma,
        calibration=spec.calibration,
        delta=spec.delta if spec.noise != "cauchy" else None,
        rows_per_person=m,
        level=level,
    )


def _statistic_delta(spec: StatisticSpec, m: int) -> float:
    """The plan's delta of a statistic: a "laplace" Gini's (its value's calibration keeps group privacy within
    it); 0 for the pure-DP mechanisms."""
    if spec.kind != "gini" or spec.noise == "cauchy":
        return 0.0
    return float(spec.delta or 0.0)


def plan_cost(plan: ReleasePlan) -> PlanCost:
    """(epsilon, delta) of every statistic and their sum (sequential composition); data-independent."""
    m = plan.rows_per_person
    # a statistic with noisy cell sizes also costs n_epsilon, and its DP cell selection selection_delta
    # (dpcore.cell_keys): ReleasePlan.statistic_epsilon / statistic_selection_delta
    per = tuple(
        (plan.statistic_epsilon(s), _statistic_delta(s, m) + plan.statistic_selection_delta(s)) for s in plan.statistics
    )
    return PlanCost(math.fsum(e for e, _ in per), math.fsum(d for _, d in per), per)


def delta_sources(plan: ReleasePlan) -> str:
    """Where a plan's delta comes from, in words ("" for a pure-epsilon plan): the DP cell selections (cells not
    declared, sizes protected) and the ``noise = "laplace"`` Ginis. The certified generalized-Cauchy sampler of a
    Gini runs in its pure-DP mode in every release, so it adds none."""
    m = plan.rows_per_person
    selections = sum(1 for s in plan.statistics if plan.statistic_selection_delta(s) > 0)
    laplace = sum(1 for s in plan.statistics if _statistic_delta(s, m) > 0)
    parts = []
    if selections:
        parts.append(f"the DP cell selection of {selections} statistic(s)")
    if laplace:
        parts.append(f"{laplace} Gini(s) with noise = \"laplace\"")
    return " and ".join(parts)


# ---------------------------------------------------------------------------------------------
# Neighbouring relation text
# ---------------------------------------------------------------------------------------------


def missing_values_rule(plan: ReleasePlan) -> dict[str, str]:
    """The public rule for missing values that a release follows (the record's ``missing_values``).

    Why a rule and not a filter: dropping a row with a missing value changes the published cell sizes (a
    one-person cell disappears), and with a ``privacy_unit`` it changes which rows of a person are kept, when
    only that person's value goes missing. Under these rules one person's value going missing (or coming
    back) is a change of that person's values, which the neighbouring relation already covers: only noisy
    numbers move. A missing outcome counts as not a case (no extra count and no extra epsilon; a noisy count of
    missing outcomes would need its own share of epsilon or a wider noise)."""
    if plan.missing_income == "refuse":
        income = (
            f"refuse: a missing or non-finite value of the income column {plan.income!r} stops the release "
            "before any charge (the data were checked to have none)"
        )
    else:
        income = (
            f"lower: a row whose income {plan.income!r} is missing or not finite stays in every n; the mean "
            "and the Gini count it at the statistic's public 'lower' bound, the percentiles' histogram in its "
            "first bin, an 'outcome_below' outcome as not a case"
        )
    return {
        "income": income,
        "outcome": "a missing outcome is a third value: the row stays in n_exposed / n_reference and is not a "
        "case (cases count the known positives only)",
        "cells": "a missing cell label ('by', the exposure group) is its own cell, shown empty",
        "privacy_unit": "the per-person row sample is taken from every row, before any missing value is looked at; "
        "a row whose privacy unit is missing (empty or null) is its own person: it is always kept and never pooled "
        "with other such rows (pooled, one person's id going missing would drop another person's row)",
    }


#: the record's sentence for each negative-income rule of a plan (dpcore.plan.NEGATIVE_INCOME_RULES)
NEGATIVE_INCOME_SENTENCES = {
    "refuse": "refuse: a negative income stops the release before any charge (the data were checked to have none)",
    "clip": "clip: a negative income is clipped to the statistic's public lower bound, as every income below it",
    "drop": "drop: a negative income counts as a missing income (the missing-values rule applies; the row stays in "
    "every n, so one person's sign moves only noisy numbers)",
}


def negative_incomes_rule(plan: ReleasePlan) -> str:
    """The public rule for negative incomes that a release follows (the record's ``negative_incomes``): the
    plan's field, refuse unless it says otherwise (a silent clip made the command line's n differ from the
    app's, which asks the user)."""
    return NEGATIVE_INCOME_SENTENCES[getattr(plan, "negative_incomes", "refuse")]


def _relation(plan: ReleasePlan) -> dict[str, str]:
    m = plan.rows_per_person
    if plan.privacy_unit:
        who = (
            f"replace one person (one value of the privacy unit column {plan.privacy_unit!r}); each person "
            f"keeps at most {m} row(s), a seeded uniform sample of their rows (bounding_seed "
            f"{plan.bounding_seed}), so one person changes the values of at most {m} row(s), in any cells; a row "
            "whose privacy unit is missing (empty or null) is a person of its own (one row)"
        )
    else:
        who = "replace one record (row): one row's values change"
    public = (
        "public (not protected): the cells (values of the 'by' columns and of the exposure group) that "
        "the rows fall in and the number of rows of every cell (published in the tables, as PSEO "
        "publishes cell counts), the bounds, bins, percentile levels and thresholds of the plan. "
        "No row is left out for a missing value: a person's value going missing is a change of their values "
        "(rules in 'missing_values')."
    )
    change = (
        f"one person can change: every histogram (all cells together) by at most {2 * m} in L1; every "
        f"clipped sum by at most {m} x (upper - lower); every outcome count table by at most {m} "
        f"(calibrated as {2 * m}, epsilon/2 per count); every cell's Gini through at most {m} of its "
        f"incomes (group privacy: each cell's Gini is released at epsilon/{m})"
    )
    return {"neighbouring": who, "public": public, "what_one_person_can_change": change}


# ---------------------------------------------------------------------------------------------
# Noise on aggregates
# ---------------------------------------------------------------------------------------------


def _q_label(q: float) -> str:
    return "p" + (f"{q:g}".replace(".", "_"))


def _percentiles(engine, spec: StatisticSpec, m: int, rng, cells_move: bool = False) -> tuple[pd.DataFrame, dict]:
    """Every cell's histogram through :class:`dpcore.percentiles.HistogramMechanism` (module docstring), or with
    ``method = "exponential"`` its histogram on the candidate grid through
    :class:`dpcore.percentiles.ExponentialQuantileMechanism` (score sensitivity m, 2m when ``cells_move``: cell
    sizes protected, rows may move between cells)."""
    from ..percentiles import ExponentialQuantileMechanism, HistogramDraw, HistogramMechanism

    by = list(spec.by)
    mech: HistogramMechanism | ExponentialQuantileMechanism
    if spec.method == "exponential":
        mech = ExponentialQuantileMechanism(spec.epsilon, spec.bins, spec.q, rows_per_person=m, cells_move=cells_move)
        n_bins = len(mech.candidates) - 1
    else:
        mech = HistogramMechanism(spec.epsilon, spec.bins, spec.q, rows_per_person=m)
        n_bins = len(mech.edges) - 1
    hist = engine.histogram(by, spec.bins)
    rows = np.zeros(len(hist), dtype=np.int64)
    if by and len(hist):  # cell ids in order of first appearance; ``cells`` holds each cell's first row's labels
        rows = hist.groupby(by, sort=False, dropna=False).ngroup().to_numpy()
        cells = hist[by].iloc[np.unique(rows, return_index=True)[1]].reset_index(drop=True)
    else:
        cells = hist[by].iloc[:0] if by else pd.DataFrame(index=[0])  # the whole table: one cell, for every input
    counts = np.zeros((len(cells), n_bins), dtype=np.int64)
    if len(hist):
        np.add.at(counts, (rows, hist["bin"].to_numpy()), hist["count"].to_numpy())
    table = cells.copy()
    table["n"] = counts.sum(axis=1).astype(np.int64)
    d = mech.draw(counts, rng=rng)
    info: dict[str, Any] = {
        **mech.record(),
        "measurement": d.measurement,
        "privacy_map": d.privacy_map,
        "map_epsilon": d.map_epsilon,
    }
    assert spec.q is not None  # the plan parser sets the levels of every percentiles statistic
    for j, q in enumerate(spec.q):
        table[_q_label(q)] = d.percentiles[:, j].astype(float)
    if isinstance(mech, HistogramMechanism):  # the noisy histogram is a DP output: its intervals need it
        from ..published import NOISY_BIN_PREFIX

        assert isinstance(d, HistogramDraw)  # what HistogramMechanism.draw returns

        for j in range(n_bins):
            table[f"{NOISY_BIN_PREFIX}{j + 1:02d}"] = np.asarray(d.noisy_counts)[:, j].astype(np.int64)
    return table, info


def _mean(
    engine, spec: StatisticSpec, m: int, rng, simulate: bool, cells_move: bool = False
) -> tuple[pd.DataFrame, dict]:
    """Clipped sums through :class:`dpcore.stratified.MeanMechanism`. ``cells_move``: cell sizes are protected, so
    one person's rows may move between cells (a wider sensitivity) and the n divided by is the noisy one."""
    from ..stratified import MeanMechanism

    by = list(spec.by)
    assert spec.lower is not None and spec.upper is not None  # the plan parser requires both for a mean
    sums = engine.sums(by, spec.lower, spec.upper)
    mech = MeanMechanism(spec.epsilon, spec.lower, spec.upper, rows_per_person=m, cells_move=cells_move)
    table = sums[by].copy() if by else pd.DataFrame(index=range(len(sums)))
    table["n"] = sums["n"].to_numpy(dtype=np.int64)
    d = mech.draw(sums["sum_cents"].to_numpy(dtype=np.float64), sums["n"].to_numpy(dtype=float), rng=rng)
    info: dict[str, Any] = {
        **mech.record(),
        "measurement": d.measurement,
        "privacy_map": d.privacy_map,
        "map_epsilon": d.map_epsilon,
    }
    table["mean"] = d.means
    return table, info


def _gini(engine, spec: StatisticSpec, m: int, rng, level: float = 0.95) -> tuple[pd.DataFrame, dict]:
    """Per cell: :meth:`dpcore.mechanisms.GiniIntervalMechanism.draw` (module docstring): the value and the DP upper
    bound on its smooth sensitivity that the published interval is computed from. A cell with n <= 1 releases 0
    (the Gini is 0 for every data set of that size, public: nothing to protect) and no bound."""
    by = list(spec.by)
    mech = gini_mechanism(spec, m, level)
    inputs = engine.gini_inputs(by, spec.lower, spec.upper, mech.smoothness)
    table = inputs[by].copy() if by else pd.DataFrame(index=range(len(inputs)))
    table["n"] = inputs["n"].to_numpy(dtype=np.int64)
    values, bounds = [], []
    measurement = privacy_map = bound_measurement = None
    for g, s in zip(
        inputs["confidential_gini"].to_numpy(float),
        inputs["confidential_smooth_sensitivity"].to_numpy(float),
        strict=True,
    ):
        draw = mech.draw(float(g), float(s), rng=rng)
        if s > 0:
            measurement, privacy_map = measurement or draw.measurement, privacy_map or draw.privacy_map
            bound_measurement = bound_measurement or draw.bound_measurement
        values.append(draw.value)
        bounds.append(draw.smooth_sensitivity_upper)
    table["gini"] = np.array(values, dtype=float)
    table["smooth_sensitivity_bound"] = np.array(bounds, dtype=float)
    info = {
        **mech.record(),
        "noise": (
            f"per cell: Gini + (S_beta(X)/alpha) Z by dpcore.gini.GiniMechanism (noise {spec.noise!r}, "
            f"epsilon_value/m = {mech.plan.epsilon_value!r} per cell; group privacy over m = {m} rows), and "
            f"a DP upper bound on S_beta(X) at epsilon_bound/m = {mech.plan.epsilon_bound!r} per cell "
            "(published: smooth_sensitivity_bound); S_beta(X) itself and the noise scale depend on the data "
            "and are not published"
        ),
        "measurement": measurement,
        "privacy_map": privacy_map,
        "bound_measurement": bound_measurement,
    }
    return table, info


def _relative_risk(engine, spec: StatisticSpec, m: int, rng) -> tuple[pd.DataFrame, dict]:
    """Both case counts of every cell through :class:`dpcore.ratio.RelativeRiskMechanism` (module docstring)."""
    from ..ratio import RelativeRiskMechanism

    by = list(spec.by)
    counts = engine.outcomes(by, spec.group, spec.exposed, spec.reference, spec.outcome, spec.outcome_below)
    table = counts[by].copy() if by else pd.DataFrame(index=range(len(counts)))
    nx = counts["n_exposed"].to_numpy(dtype=np.int64)
    ny = counts["n_reference"].to_numpy(dtype=np.int64)
    table["n_exposed"], table["n_reference"] = nx, ny
    mech = RelativeRiskMechanism(spec.epsilon, rows_per_person=m)
    d = mech.draw(
        counts["cases_exposed"].to_numpy(np.int64), counts["cases_reference"].to_numpy(np.int64), nx, ny, rng=rng
    )
    info: dict[str, Any] = {
        **mech.record(),
        "measurement": d.measurement,
        "privacy_map": d.privacy_map,
        "map_epsilon": d.map_epsilon,
    }
    table["cases_exposed"], table["cases_reference"] = d.cases_exposed, d.cases_reference
    table["relative_risk"] = d.relative_risk
    return table, info


# ---------------------------------------------------------------------------------------------
# Output: the --out slot (checked, locked and probed before any charge), atomic writing
# ---------------------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class ChargeNotice:
    """A charge that is on the ledger: what a failure after it must say (the epsilon is spent whatever follows)."""

    epsilon: float
    delta: float
    account: str
    entry_id: int

    def lost(self, reason: str) -> str:
        spent = f"epsilon = {self.epsilon:g}" + (f" (delta = {self.delta:.3g})" if self.delta > 0 else "")
        return (
            f"{spent} was charged to account {self.account!r} (ledger entry {self.entry_id}) and nothing was "
            f"written: {reason}"
        )


class ReleaseNotDelivered(Exception):
    """A failure after the charge: the epsilon is spent (the charge stands: a lost release is acceptable, a lost
    charge never) and nothing was written to ``--out``. ``str()`` is the one line that says both."""

    def __init__(self, notice: ChargeNotice, reason: str) -> None:
        super().__init__(notice.lost(reason))
        self.notice, self.reason = notice, reason


class InterruptedAfterCharge(KeyboardInterrupt):
    """SIGINT/SIGTERM after the charge: still an interrupt for the caller (a ``KeyboardInterrupt``), and its text
    says that the epsilon was spent. ``signal_number`` is the signal that stopped the run; ``written_to`` is
    the output directory when the tables were already in place (then only the ledger's revealed mark is
    missing: the entry still counts in full)."""

    def __init__(self, notice: ChargeNotice, signal_number: int, written_to: Path | None = None) -> None:
        name = signal.Signals(signal_number).name
        if written_to is None:
            text = notice.lost(f"interrupted by {name}")
        else:
            text = (
                f"{name} after the release was written to {str(written_to)!r}: epsilon = "
                f"{notice.epsilon:g} is charged to account {notice.account!r} (ledger entry {notice.entry_id}), "
                "which may not be marked revealed"
            )
        super().__init__(text)
        self.notice, self.signal_number, self.written_to = notice, signal_number, written_to


class Terminated(KeyboardInterrupt):
    """Raised by the command line's SIGTERM handler, so that SIGTERM unwinds like Ctrl-C: the temporary folder
    and the ``--out`` lock are removed by the ``finally`` blocks that already handle Ctrl-C."""

    signal_number = signal.SIGTERM


#: the staging folder beside --out: ``.<name>.tmp-<pid>-<random>``; a folder of this shape whose run is gone
#: (no lock held on --out) is what a killed run (kill -9, power loss) left
_STAGING = ".{name}.tmp-"
_STAGING_SUFFIX = re.compile(r"(?:[0-9]+-)?[a-z0-9_]{8}")
#: what a staging folder holds: the tables, plan.toml, the record (and half-written files of them)
_RELEASE_FILE = re.compile(r"[A-Za-z0-9_.-]+\.(?:csv|parquet)|plan\.toml|release_record\.json")
#: typical CSV bytes per number with its comma (measured 9 for 60,000 percentile cells: counts and noisy
#: percentiles such as 24936.444444444445; a full float repr is 18-24): an estimate, not a bound, so that only an
#: output that clearly does not fit is refused before the charge (a near miss fails after it, and says so)
_CSV_BYTES_PER_VALUE = 12
#: a Parquet file's fixed part (footer, schema, pandas metadata: 2.2 KiB measured for 3 columns, 4.3 KiB for 7);
#: its data part is taken as a quarter of the CSV's (measured 0.19 for the 60,000 cells)
_PARQUET_OVERHEAD = 4096
#: the record's part per statistic (the record of the example plan, 3 statistics: 6 KiB measured)
_RECORD_PER_STATISTIC = 4096


class OutputSlot:
    """``--out`` made ready for one run, before any data is read or anything is charged.

    Entered: ``--out`` is absent or an empty directory, its parent exists; a lock file ``.<name>.lock`` beside
    it is held (``fcntl.flock``, so a second run writing the same ``--out`` is refused at once, before its
    charge; the kernel drops the lock when a run dies, even by kill -9); staging folders left by a killed run
    are reported and removed; a probe file is created, written and removed in the parent (a read-only or
    full file system, or a directory without write permission, is found now, not after the charge).
    :meth:`check_space` (after aggregation, before the charge) refuses when the free space is clearly short of
    what the tables need. Left: the lock file is removed.
    """

    def __init__(self, out_dir: str | os.PathLike, progress: Progress) -> None:
        self.out = Path(out_dir).expanduser().absolute()
        self.progress = progress
        self.lock_path = self.out.parent / f".{self.out.name}.lock"
        self._lock_fd: int | None = None

    def __enter__(self) -> OutputSlot:
        self._check_empty()
        if not self.out.parent.is_dir():
            raise DPInputError(f"the parent directory of --out ({str(self.out.parent)!r}) does not exist")
        self._lock()
        try:
            self._remove_leftovers()
            self._check_empty()  # again under the lock: a run that finished meanwhile filled it
            self._probe()
        except BaseException:
            self._unlock()
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        self._unlock()

    def _check_empty(self) -> None:
        out = self.out
        if out.exists() or out.is_symlink():
            if not out.is_dir():
                raise DPInputError(f"--out {str(out)!r} exists and is not a directory")
            if any(out.iterdir()):
                raise DPInputError(
                    f"--out {str(out)!r} is not empty: give a new or empty directory (nothing is overwritten)"
                )

    def _lock(self) -> None:
        import fcntl

        while True:
            try:
                fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o644)
            except OSError as exc:
                raise DPInputError(
                    f"--out {str(self.out)!r} cannot be written: cannot create the lock file "
                    f"{self.lock_path.name!r} beside it ({exc.strerror or exc}); nothing was charged"
                ) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise DPInputError(
                    f"another dpcore release is writing --out {str(self.out)!r} (it holds "
                    f"{self.lock_path.name!r}); nothing was charged: wait for it or choose another "
                    "--out"
                ) from None
            # the holder before us may have removed the file between our open and our flock: then we hold a
            # lock on a name nobody sees; start again on the current file
            try:
                same = os.path.samestat(os.fstat(fd), os.stat(self.lock_path))
            except FileNotFoundError:
                same = False
            if same:
                self._lock_fd = fd
                os.ftruncate(fd, 0)  # the holder's pid, for a person looking at the file
                os.write(fd, f"{os.getpid()}\n".encode())
                return
            os.close(fd)

    def _unlock(self) -> None:
        fd, self._lock_fd = self._lock_fd, None
        if fd is None:
            return
        try:  # remove the name while still holding the lock (a waiter re-checks the name, _lock)
            if os.path.samestat(os.fstat(fd), os.stat(self.lock_path)):
                os.unlink(self.lock_path)
        except OSError:
            pass
        os.close(fd)

    def _remove_leftovers(self) -> None:
        """Remove staging folders of this --out left by a killed run: we hold the lock, so no live run owns one.

        Only a folder named as :func:`_write_outputs` names them (``.<name>.tmp-<pid>-<random>``, or the
        ``.<name>.tmp-<random>`` of earlier versions) and holding only the files a release writes is removed."""
        prefix = _STAGING.format(name=self.out.name)
        probe = f".{self.out.name}.probe-"
        try:
            listing = os.listdir(self.out.parent)
        except OSError:
            return
        for name in listing:  # a probe file of a run killed between creating and removing it (zeros)
            if name.startswith(probe) and name[len(probe) :].isdigit():
                with contextlib.suppress(OSError):
                    os.unlink(self.out.parent / name)
        names = sorted(n for n in listing if n.startswith(prefix) and _STAGING_SUFFIX.fullmatch(n[len(prefix) :]))
        for name in names:
            path = self.out.parent / name
            try:
                if path.is_symlink() or not path.is_dir():
                    continue
                if not all(child.is_file() and _RELEASE_FILE.fullmatch(child.name) for child in path.iterdir()):
                    continue
            except OSError:
                continue
            shutil.rmtree(path, ignore_errors=True)
            if not path.exists():
                self.progress.say(f"removed leftover {name} from an interrupted run")

    def _probe(self) -> None:
        probe = self.out.parent / f".{self.out.name}.probe-{os.getpid()}"
        try:
            fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            try:
                os.write(fd, b"\0" * 4096)
                os.fsync(fd)
            finally:
                os.close(fd)
                os.unlink(probe)
        except OSError as exc:
            raise DPInputError(
                f"--out {str(self.out)!r} cannot be written ({exc.strerror or exc}); nothing was charged"
            ) from None

    def check_space(self, needed: int) -> None:
        """Refuse when the free space beside --out is below ``needed`` bytes (an estimate, :func:`_output_bytes`)."""
        try:
            st = os.statvfs(self.out.parent)
        except OSError:
            return
        free = st.f_bavail * st.f_frsize
        if free < needed:
            raise DPInputError(
                f"not enough free space for --out {str(self.out)!r}: the tables need about "
                f"{_human_bytes(needed)} and {_human_bytes(free)} are free; nothing was charged"
            )


def _human_bytes(n: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"  # pragma: no cover


def _numeric_columns(spec: StatisticSpec) -> int:
    """Columns a statistic's table has besides its cell labels (n and the released values)."""
    if spec.kind == "percentiles":
        assert spec.q is not None  # the plan parser sets the levels of every percentiles statistic
        return 1 + len(spec.q)
    if spec.kind == "relative_risk":
        return 5  # n_exposed, n_reference, cases_exposed, cases_reference, relative_risk
    return 2  # n and the mean or the Gini


def _output_bytes(plan: ReleasePlan, cells: dict[str, pd.DataFrame], block: int) -> int:
    """About the bytes the output will take, from every statistic's cells (one table row per cell; public: the
    cells and their sizes are released): per table a CSV (labels plus _CSV_BYTES_PER_VALUE per number) and a
    Parquet file (a footer plus a quarter of the CSV), each rounded up to the file system's block; plan.toml and
    the record. ``cells``: per statistic a frame with one row per cell holding its label columns (``by``).
    Measured: 1.35 x the bytes written for 60,000 cells, 1.4 x for the example plan's 16 cells."""

    def blocks(n: int) -> int:
        return -(-max(int(n), 1) // block) * block

    total = blocks(len(plan_to_toml(plan).encode())) + blocks(_RECORD_PER_STATISTIC * (1 + len(plan.statistics)))
    total += 3 * blocks(card_bytes_estimate([len(cells[s.name]) for s in plan.statistics]) // 3)  # the card's files
    for s in plan.statistics:
        frame = cells[s.name]
        label_bytes = sum(int(frame[c].astype(str).str.len().sum()) + len(frame) for c in s.by if c in frame.columns)
        csv = label_bytes + len(frame) * _numeric_columns(s) * _CSV_BYTES_PER_VALUE
        total += blocks(csv) + blocks(_PARQUET_OVERHEAD + csv // 4)
    return total


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_outputs(
    out: Path, plan: ReleasePlan, tables: dict[str, pd.DataFrame], record: dict, *, simulation: bool = False
) -> dict[str, str]:
    tmp = Path(tempfile.mkdtemp(prefix=_STAGING.format(name=out.name) + f"{os.getpid()}-", dir=out.parent))
    try:
        hashes = {}
        for name, table in tables.items():
            stem = _table_stem(name, simulation)
            csv_path, pq_path = tmp / f"{stem}.csv", tmp / f"{stem}.parquet"
            table.to_csv(csv_path, index=False)
            table.to_parquet(pq_path, index=False)
            hashes[csv_path.name] = _sha256(csv_path)
            hashes[pq_path.name] = _sha256(pq_path)
        (tmp / "plan.toml").write_text(plan_to_toml(plan), encoding="utf-8")
        hashes["plan.toml"] = _sha256(tmp / "plan.toml")
        record.update(_write_card(tmp, record, tables, hashes))  # a card not written: the caller says so too
        (tmp / RECORD_FILE).write_text(
            json.dumps({**record, "files": hashes}, indent=2, sort_keys=False, default=_json_default), encoding="utf-8"
        )
        if out.exists():
            out.rmdir()  # empty (checked); a race that filled it makes this fail and leaves it alone
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return hashes


def write_release_folder(
    out: str | os.PathLike, plan: ReleasePlan, record: dict, tables: dict[str, pd.DataFrame]
) -> dict[str, str]:
    """Write a release made elsewhere (the app's Release mode) as the command line writes its ``--out`` folder,
    with the command line's own writer: each statistic's table (CSV and Parquet), ``plan.toml``,
    ``release_card.html`` / ``.md`` and the registry entry, and ``release_record.json`` (``record`` with each
    statistic's files and every file's SHA-256). ``out`` must not exist or be empty; ``record["statistics"]``
    names the tables (``tables`` by statistic name). Returns the SHA-256 of every file."""
    statistics = [
        {**stat, "files": [f"{_table_stem(stat['name'], False)}.csv", f"{_table_stem(stat['name'], False)}.parquet"]}
        for stat in record.get("statistics", [])
    ]
    if sorted(s["name"] for s in statistics) != sorted(tables):
        raise DPInputError("the record's statistics and the tables do not match")
    return _write_outputs(Path(out), plan, tables, {**record, "statistics": statistics})


def _write_card(tmp: Path, record: dict, tables: dict[str, pd.DataFrame], hashes: dict[str, str]) -> dict:
    """The card for publication and the registry entry (post-processing of the record and the tables), added to
    ``hashes``. A failure here loses the card, never the charged release: the record says why it is missing."""
    try:
        paths = write_release_card(tmp, record, tables)  # all three or none
    except Exception as exc:  # the tables and the record are what was paid for; the card can be remade from them
        return {
            "release_card": f"not written: {_one_line(exc)} (remake it with dpcore.release_card from this "
            "record and the tables)"
        }
    hashes.update({path.name: _sha256(path) for path in paths})
    return {}


def _json_default(obj: Any) -> Any:
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (np.floating,)):
        return float(obj)
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, Path):
        return str(obj)
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


def _open_ledger(ledger_url: str | None, *, create: bool, progress: Progress):
    """:func:`dpcore.ledger.open_ledger` (``create=True``: :func:`dpcore.ledger.init_ledger`, a new ledger only),
    with the ledger's lock-wait notes ("waiting for the ledger lock ...") shown as progress lines. An existing
    ledger is opened with ``verify``'s checks: a damaged one is refused with its summary before anything is read
    or charged."""
    from .. import ledger

    if create:
        return ledger.init_ledger(ledger_url, on_wait=progress.say)
    return ledger.open_ledger(ledger_url, create=False, on_wait=progress.say, verify=True)


def _open_account(
    plan: ReleasePlan,
    cost: PlanCost,
    ledger_url: str | None,
    *,
    init_ledger: bool = False,
    progress: Progress | None = None,
):
    """Open the ledger (never created silently: ``init_ledger`` creates a new one, and refuses a ledger that holds
    charges), open or create the plan's account and check the plan's cost against what is left (public inputs only)."""
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
            plan.cap_delta if plan.cap_delta is not None else (DEFAULT_GINI_CAP_DELTA if cost.delta > 0 else 0.0)
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
    if cost.delta > 0 and acct.cap_delta <= 0:
        raise DPInputError(
            f"the population {population!r} is pure epsilon-DP (cap delta = 0), but this plan has delta = "
            f"{cost.delta:.3g} (from {delta_sources(plan)}); declare the cells in [keys] (no selection delta) or use "
            "a population registered with --cap-delta > 0; nothing was charged"
        )
    if acct.would_exceed(cost.as_budget_cost()):
        spent = acct.spent_epsilon()
        from ..ledger import BudgetExceeded

        raise BudgetExceeded(
            f"refused before reading any data: the plan costs epsilon = {cost.epsilon:g}, but the population "
            f"{population!r} has spent {spent:g} of its cap {acct.cap_epsilon:g} (left {max(0.0, acct.cap_epsilon - spent):g})"
        )
    return db, acct


@contextlib.contextmanager
def _signals_held():
    """Hold SIGINT and SIGTERM while the charge commits, then deliver them.

    An interrupt inside the charge's transaction would leave the caller not knowing whether epsilon was spent
    (the commit may or may not have happened); held, it lands either before the charge (nothing spent) or after
    it (spent, and said so). Python signal handlers run in the main thread only: elsewhere nothing is held."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(sig)
        if handler is None:  # installed outside Python: leave it alone
            continue
        previous[sig] = signal.signal(sig, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if caught:
            signal.raise_signal(caught[0])


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return (text or type(exc).__name__)[:400]


def _statistic_cells(deferred: _Deferred) -> tuple[pd.DataFrame, int]:
    """(one row per cell with its labels, total rows) of one statistic's aggregates: both public (every cell and
    its n are released)."""
    spec = deferred.spec
    frame = deferred.aggregate_frame()
    by = list(spec.by)
    if spec.kind == "percentiles" and by and len(frame):  # one aggregate row per cell and bin
        keys, counts = deferred.cell_counts()
        rows, cells = int(counts.sum()), pd.DataFrame(keys, columns=by)
    elif spec.kind == "percentiles":  # the whole table: one cell, whatever the data
        rows = int(frame["count"].sum()) if len(frame) else 0
        cells = pd.DataFrame(index=range(1))
    else:
        columns = ["n_exposed", "n_reference"] if spec.kind == "relative_risk" else ["n"]
        rows = int(frame[columns].to_numpy().sum()) if len(frame) else 0
        cells = frame[by] if by else pd.DataFrame(index=range(len(frame)))
    return cells, rows


def _input_is_empty(plan: ReleasePlan, aggregates: dict[str, _Deferred], engine: Any) -> bool:
    """Whether the source has no row at all (a header-only or empty input), asked of the engine only when a
    statistic has no row in its cells. Public: a data set with no row has no neighbour but itself (there is no
    person to replace), so refusing it tells nothing about anyone."""
    if all(_statistic_cells(aggregates[s.name])[1] > 0 for s in plan.statistics):
        return False
    return not engine.has_rows()


def _refuse_undeliverable(
    plan: ReleasePlan, aggregates: dict[str, _Deferred], slot: OutputSlot, input_empty: bool = False
) -> list[str]:
    """Before the charge: refuse, from public facts only, an input with no row, a statistic whose public cells hold
    no row, and an output the disk cannot hold.

    * An input with no row (``input_empty``, :func:`_input_is_empty`) is refused: public (it has no neighbour).
    * A statistic whose cell sizes are public (``cell_sizes = "public"``, or a whole-table statistic other than a
      relative risk: the total n is public under replace-one) and whose cells hold no row is refused: its n is
      published anyway, so the refusal reveals nothing more.
    * A statistic whose cells are protected (``cell_sizes = "noisy"`` with ``by`` or exposure groups) is never
      refused for holding no row: how many rows its cells hold depends on where one person's rows fall (one person
      leaving the only exposed row, or all rows in undeclared cells). It is released: declared cells and exposure
      groups as noisy zeros, DP-selected cells as an empty selection (Laplace threshold mechanism).

    The space estimate uses public cell counts only: the declared cells, the cells of public cell sizes, one for a
    whole table, and none for DP-selected cells (their number before the selection is confidential; a release
    whose selected cells do not fit fails after the charge and says so)."""
    if input_empty:
        raise DPInputError(
            f"the data have no row (a header-only or empty input): nothing to release from "
            f"{plan.income!r}; nothing was charged"
        )
    empty = []
    cells: dict[str, pd.DataFrame] = {}
    for s in plan.statistics:
        cells[s.name], n_rows = _statistic_cells(aggregates[s.name])
        if n_rows == 0 and not plan.cells_private(s):
            empty.append(_empty_statistic_reason(plan, s))
    if empty:
        raise DPInputError(f"{'; '.join(empty)}: nothing to release; nothing was charged")
    warnings = _check_cells(plan, aggregates, cells, slot.progress)
    space_cells = {
        s.name: cells[s.name].iloc[:0] if _cells_selected(plan, s) else cells[s.name] for s in plan.statistics
    }
    try:
        block = os.statvfs(slot.out.parent).f_frsize or 4096
    except OSError:
        block = 4096
    slot.check_space(_output_bytes(plan, space_cells, block))
    return warnings


def _cells_selected(plan: ReleasePlan, spec: StatisticSpec) -> bool:
    """True when the statistic's cells are selected with DP (protected cell sizes, ``by``, no declared keys)."""
    return plan.cells_private(spec) and bool(spec.by) and not plan.keys_declared(spec)


def _empty_statistic_reason(plan: ReleasePlan, spec: StatisticSpec) -> str:
    """Why a statistic with public cell sizes has no row to release, said precisely (the input has rows)."""
    if spec.kind == "relative_risk":
        return (
            f"{spec.where} {spec.name!r}: no row of the data has {spec.group!r} = {spec.exposed!r} or "
            f"{spec.reference!r} (both exposure groups are empty)"
        )
    if plan.keys_declared(spec):
        return (
            f"{spec.where} {spec.name!r}: no row of the data is in a cell declared in [keys] (rows of undeclared "
            "cells are dropped)"
        )
    return f"{spec.where} {spec.name!r}: no row of the data is in its cells"


def _check_cells(
    plan: ReleasePlan, aggregates: dict[str, _Deferred], cells: dict[str, pd.DataFrame], progress: Progress
) -> list[str]:
    """Before the charge: refuse a ``by`` whose public cells are (nearly) one per row, and warn about small public
    cells.

    Refused (``cell_sizes = "public"`` only): a statistic whose cells are not declared in ``[keys]`` and number
    more than half its rows (:func:`dpcore.cell_keys.nearly_unique_cells`, e.g. ``by = ["pid"]``): it would
    publish every person's cell and n = 1. The cells and their sizes are public there, so the refusal is a function
    of public information. With protected cell sizes the cells are selected with DP, which lists no one-person cell
    (an all-singletons table is released empty); counting the cells there would be a refusal on one person (one
    row moving to a new cell can tip the count over half the rows), so it is not done. Warned
    (``cell_sizes = "public"``): cells, or exposure groups of a relative risk, with fewer rows than the plan's public
    ``small_cell_threshold``."""
    from .. import cell_keys

    for s in plan.statistics:
        if not s.by or plan.keys_declared(s) or plan.cells_private(s):
            continue
        n_rows = _statistic_cells(aggregates[s.name])[1]
        if cell_keys.nearly_unique_cells(len(cells[s.name]), n_rows):
            raise DPInputError(
                f"{s.where} {s.name!r}: 'by' = {list(s.by)} gives nearly one cell per row (more cells "
                f"than half the rows) and cell_sizes = \"public\" would publish each with its exact n: such cells "
                "single out people; declare the public cells in [keys], choose coarser columns or protect the cell "
                "sizes (cell_sizes = \"noisy\"); nothing was charged and nothing was released"
            )
    warnings: list[str] = []
    if plan.cell_sizes != "public" or plan.small_cell_threshold <= 0:
        return warnings
    for s in plan.statistics:
        if not (s.by or s.kind == "relative_risk"):
            continue
        _, counts = aggregates[s.name].cell_counts()
        small = int(np.count_nonzero((counts > 0) & (counts < plan.small_cell_threshold)))
        if small:
            what = "exposure groups of cells" if s.kind == "relative_risk" else "cells"
            text = (
                f"{s.where} {s.name!r}: {small} {what} with fewer than {plan.small_cell_threshold} rows are "
                "published with their exact n (cell_sizes = \"public\"); a one-person cell's value is that "
                "person's value plus noise at epsilon"
            )
            warnings.append(text)
            progress.say(f"warning: {text}")
    return warnings


def _cells_rule(plan: ReleasePlan) -> dict[str, Any]:
    """The record's ``cells``: how the listed cells and their n were obtained (:mod:`dpcore.cell_keys`)."""
    if plan.cell_sizes == "public":
        rule = {
            "cell_sizes": "public",
            "n": "exact (the PSEO assumption: cells present and their sizes are public)",
            "small_cell_threshold": plan.small_cell_threshold,
        }
    else:
        rule = {
            "cell_sizes": "noisy",
            "n_epsilon": plan.n_epsilon,
            "selection_delta": plan.selection_delta,
            "n": "a noisy count (discrete Laplace, scale 2m/n_epsilon), charged n_epsilon per statistic with cells",
            "cells": "declared in [keys] when every 'by' column is declared (absent cells released as n = 0 plus "
            "noise, undeclared rows dropped), else selected with DP (Laplace threshold, delta "
            "selection_delta)",
        }
    if plan.keys is not None:
        rule["keys"] = plan.keys.to_dict() if plan.keys.file is None else {"file": plan.keys.file}
    return rule


#: file-name prefix of every table a simulation writes (a simulated table is never mistaken for a release)
SIMULATION_PREFIX = "SIMULATION_"


def _table_stem(name: str, simulation: bool) -> str:
    return SIMULATION_PREFIX + name if simulation else name


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
    from ..noise import secure

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
        secure.integer_noise_ahead(plan.histogram_noise_scales())
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
    """Whether the scan of ``source`` is long enough to draw noise beside it (a database query: assumed so)."""
    if not source.paths:
        return True
    size = source.file_bytes()
    return size is not None and size >= AHEAD_MIN_SOURCE_BYTES


def _import_opendp() -> None:
    """Import OpenDP (the samplers of a real release); a failure is left to the draw, where it is reported."""
    try:
        from ..noise import secure

        secure._opendp()
    except Exception:  # noqa: BLE001 - the draw imports it again and says why it cannot
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


def _released_table(plan: ReleasePlan, s: StatisticSpec, deferred: _Deferred, rng: Any) -> tuple[pd.DataFrame, dict]:
    """One statistic's noisy table and its record entry: the mechanism's draw on the aggregates, then every
    released value with its interval and honest digits (computed from the published numbers only)."""
    table, info = deferred.release(rng)
    if s.kind != "percentiles" or getattr(s, "method", "histogram") != "exponential":
        table = published_table(s.kind, table, info, plan.level)
        info = {**info, "interval_level": plan.level}
    return table, info


class _DrawAhead:
    """The noisy tables of a real release, drawn in a thread while the source is fingerprinted.

    The fingerprint does not use all of two cores (its worker and this process take turns with the reader) and
    the OpenDP draws release the GIL: the 10M-row PSEO-like histogram's release took 8.3 s instead of 8.9 s
    (median of three, alternating); the two still compete for the CPU. Why this is the same release:

    * the draw is the one that followed the charge (:func:`_released_table`, the same mechanisms and
      measurements, on the same frozen aggregates): only its start moved;
    * nothing noisy leaves the thread before the charge: :meth:`result` is called only after it, a refusal
      before it drops the tables unseen (the thread is a daemon: a refused run does not wait for it);
    * a failure of the draw is stored and raised by :meth:`result`, after the charge, where it was raised
      before; a refusal that depends on the draw would tell neighbouring data apart without a charge.
    """

    def __init__(self, plan: ReleasePlan, aggregates: dict[str, _Deferred], rng: Any, times: _StepTimes) -> None:
        self._work = [(s, aggregates[s.name]) for s in plan.statistics]
        self._plan, self._rng, self._times = plan, rng, times
        self._tables: dict[str, tuple[pd.DataFrame, dict]] = {}
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._draw, name="dpcore-noise-ahead", daemon=True)
        self._thread.start()

    def _draw(self) -> None:
        t0 = time.perf_counter()
        try:
            while self._work:
                s, deferred = self._work.pop(0)  # the thread holds the only reference: freed once drawn
                self._tables[s.name] = _released_table(self._plan, s, deferred, self._rng)
                del deferred
        except BaseException as exc:  # raised by result(), after the charge
            self._error = exc
        finally:
            self._times.overlapped["noise"] = time.perf_counter() - t0

    def result(self) -> dict[str, tuple[pd.DataFrame, dict]]:
        """The drawn tables (waits for the thread); call only after the charge."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._tables


@dataclass(frozen=True)
class _SourceIdentity:
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


def _identify_source(
    eng: Any, source: Source, acct: Any, engine: str, progress: Progress, times: _StepTimes
) -> _SourceIdentity:
    """The source's identity for the ledger: its byte key, and its record fingerprint unless these exact
    bytes were fingerprinted before (the same bytes are the same records: the decision is the same)."""
    with times.phase("fingerprint"):
        bytes_key = source_bytes_key(source)
    if bytes_key is not None and acct.db.source_population(bytes_key) is not None:
        progress.say(
            f"{engine}: these exact files were fingerprinted by an earlier release: their population is "
            "known (the record fingerprint is not computed again)"
        )
        return _SourceIdentity(None, bytes_key)
    versions = acct.db.record_fingerprint_versions
    legacy = (
        " by fingerprint versions 1 and 2 (this ledger holds sources attached by version 1)" if 1 in versions else ""
    )
    with (
        progress.step(f"{engine}: fingerprinting the source's records (which population they belong to){legacy}"),
        times.phase("fingerprint"),
    ):
        try:
            return _SourceIdentity(engine_record_fingerprints(eng, versions), bytes_key)
        except DPInputError as exc:  # e.g. no rows: the refusals below say it first
            return _SourceIdentity(exc, bytes_key)


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
    m = plan.rows_per_person
    spec = EngineSpec.from_plan(plan)
    tables: dict[str, pd.DataFrame] = {}
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
                aggregates[s.name] = _Deferred(s, eng, m, plan)
                aggregates[s.name].compute()
        # the confidential aggregates are in memory; nothing has been revealed or charged yet. The engine's working
        # memory goes back before the checks, the noise and the fingerprint add theirs (the release's peak)
        input_empty = _input_is_empty(plan, aggregates, eng)  # before the engine lets its tables go
        getattr(eng, "release_memory", lambda: None)()
        cell_warnings = _refuse_undeliverable(plan, aggregates, slot, input_empty)
        ahead = None
        if acct is not None:
            # the noise does not wait for the fingerprint (seconds at 10M rows): drawn beside it, used after the charge
            ahead = _DrawAhead(plan, aggregates, rng, times)
            aggregates = {}
        identity = _identify_source(eng, source, acct, engine, progress, times) if acct is not None else None
    if acct is not None and identity is not None:
        # the source joins its population before anything is charged: the same records already attached to
        # another population (another plan name, a re-saved, reordered or converted copy) are refused here
        with times.phase("ledger"):
            identity.attach(acct)
    relation = _relation(plan)
    record: dict[str, Any] = {
        "record": "dpcore release record",
        "record_version": 1,
        "mode": SIMULATION_NOTE if simulate else "release",
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "software": f"dpcore {__version__}",
        "dataset": plan.dataset,
        "source": source.describe(),
        "engine": engine,
        "plan": plan_to_dict(plan),
        "plan_sha256": hashlib.sha256(plan_to_toml(plan).encode("utf-8")).hexdigest(),
        "privacy": {
            **relation,
            "composition": "cells of one statistic are disjoint (parallel composition: each statistic costs its "
            "epsilon once); statistics add up (sequential composition)",
            "cost": {"epsilon": cost.epsilon, "delta": cost.delta},
            "per_statistic": [
                {"name": s.name, "kind": s.kind, "epsilon": e, "delta": d}
                for s, (e, d) in zip(plan.statistics, cost.per_statistic, strict=True)
            ],
        },
        "missing_values": missing_values_rule(plan),
        "negative_incomes": negative_incomes_rule(plan),
        "cells": {**_cells_rule(plan), "warnings": cell_warnings},
    }
    if plan.cell_sizes != "public":  # the cells and their sizes are protected, not public
        record["privacy"]["public"] = (
            "public (not protected): the declared [keys] cells, the bounds, bins, percentile levels and thresholds "
            "of the plan. Protected: which cell and exposure group each row falls in (rows may move between "
            "cells: the mean's sum sensitivity is m max(U - L, 2 max(|L|, |U|))) and every cell's n (noisy)."
        )
        record["privacy"]["what_one_person_can_change"] += (
            f"; their rows may also move between cells and exposure groups (cell_sizes = \"noisy\"): every clipped "
            f"sum table by at most {plan.rows_per_person} x max(upper - lower, 2 max(|lower|, |upper|)) in L1, every "
            f"table of cell sizes by at most {2 * plan.rows_per_person} (noise scale 2m/n_epsilon)"
        )
    if seed is not None:  # simulate: the seed is recorded only here (the source was declared public)
        record["simulation"] = {
            "seed": int(seed),
            "public_data": True,
            "note": "numpy noise with this seed; the ledger was not charged; the source was "
            "declared public (--public-data): these numbers are NOT a differentially "
            "private release and, with the seed, reveal the source's aggregates exactly",
        }
    entry = None
    notice: ChargeNotice | None = None
    written = False
    try:
        if acct is not None:
            with (
                progress.step("ledger: charging the plan (before any noisy value is used)"),
                _signals_held(),
                times.phase("ledger"),
            ):
                entry = acct.charge(
                    f"release plan {plan.dataset}: " + ", ".join(s.name for s in plan.statistics),
                    cost=cost.as_budget_cost(),
                    record=record,
                )
                notice = ChargeNotice(cost.epsilon, cost.delta, acct.population or plan.dataset, int(entry.id))
            try:
                spent_after = acct.spent_epsilon()
            except DPInputError:  # the ledger went away after the charge: the release goes on (the entry is there)
                spent_after = None
            record["ledger"] = {
                "backend": acct.db.backend if hasattr(acct, "db") else None,
                "account": acct.population or plan.dataset,
                "population": acct.population,
                "entry_id": entry.id,
                "charged": cost.as_budget_cost().to_dict(),
                "spent_epsilon_after": spent_after,
                "cap_epsilon": acct.cap_epsilon,
            }
        noise_step = "adding noise to the aggregates" + (
            " (simulation: numpy)" if simulate else " (OpenDP / certified)"
        )
        with progress.step(noise_step), times.phase("noise"):
            drawn = ahead.result() if ahead is not None else None
            stats_out = []
            for s in plan.statistics:
                if drawn is not None:
                    table, info = drawn.pop(s.name)
                else:
                    table, info = _released_table(plan, s, aggregates.pop(s.name), rng)
                if simulate:  # every simulated table says so, in a column and in its file names
                    table = table.assign(simulation=True)
                tables[s.name] = table
                stats_out.append(
                    {
                        "name": s.name,
                        "kind": s.kind,
                        "by": list(s.by),
                        "epsilon": s.epsilon,
                        "cells": int(len(table)),
                        "columns": list(table.columns),
                        "files": [f"{_table_stem(s.name, simulate)}.csv", f"{_table_stem(s.name, simulate)}.parquet"],
                        **info,
                    }
                )
        record["statistics"] = stats_out
        with progress.step(f"writing {len(tables)} table(s) and {RECORD_FILE} to {out}"), times.phase("write"):
            hashes = _write_outputs(out, plan, tables, record, simulation=simulate)
        written = True
        record["files"] = hashes
        warning = None
        if entry is not None:
            assert notice is not None  # set together with entry by the charge
            with times.phase("ledger"):
                warning = _mark_revealed(acct, entry.id, out, hashes, notice)
    except KeyboardInterrupt as exc:
        if notice is None:
            raise
        raise InterruptedAfterCharge(
            notice, int(getattr(exc, "signal_number", signal.SIGINT)), written_to=out if written else None
        ) from exc
    except Exception as exc:
        if notice is None:
            raise
        raise ReleaseNotDelivered(notice, _one_line(exc)) from exc
    progress.say(times.line())
    card = record.get("release_card")
    card_warning = f"the release card was {card}" if card else None
    return PlanResult(out, record, tables, simulate, None if entry is None else entry.id, warning, card_warning)


def _mark_revealed(acct, entry_id: int, out: Path, hashes: dict[str, str], notice: ChargeNotice) -> str | None:
    """Attach the written files to the charged entry (marks it revealed); when that fails, the one-line warning.

    The tables are written and the charge is on the ledger, so the release stands whatever happens here: an
    entry not marked revealed still counts in full against the cap (the ledger never under-counts).
    :meth:`dpcore.ledger.Account.attach_result` retries, then journals the mark locally (replayed by the next
    :func:`dpcore.ledger.open_ledger`) and says where; when even the journal cannot be written it raises."""
    try:
        link = acct.attach_result(entry_id, {"out_dir": str(out), "files": hashes})
    except Exception as exc:
        return (
            f"the release was written to {str(out)!r} and epsilon = {notice.epsilon:g} is charged to account "
            f"{notice.account!r} (ledger entry {entry_id}), but the ledger could not mark the entry revealed "
            f"and no journal could keep the mark: {_one_line(exc)}"
        )
    if getattr(link, "recorded", True):
        return None
    return f"the release was written to {str(out)!r}; {link.message}"


class _Deferred:
    """The aggregates of one statistic (computed by the engine) and the noise step (later, after the charge)."""

    def __init__(self, spec: StatisticSpec, engine, m: int, plan: ReleasePlan | None = None) -> None:
        self.spec, self.engine, self.m, self.plan = spec, engine, m, plan
        self._frozen: _FrozenEngine | None = None
        self._cell_counts: tuple[pd.DataFrame, tuple[list[tuple[str, ...]], np.ndarray]] | None = None

    def compute(self) -> None:
        level = self.plan.level if self.plan is not None else 0.95
        self._frozen = frozen = _FrozenEngine(self.engine, self.spec, self.m, level)
        if not self.spec.by and self.spec.kind != "percentiles":
            name = next(iter(frozen.frames))
            frozen.frames[name] = _whole_table_row(frozen.frames[name])
        if self.plan is not None and self.plan.keys_declared(self.spec):
            # declared cells only, each present (absent ones as zeros): the listed cells are public
            from ..cell_keys import restrict_to_declared

            by = list(self.spec.by)
            name = next(iter(frozen.frames))
            frozen.frames[name] = restrict_to_declared(frozen.frames[name], by, self.plan.keys.cells(by))

    @property
    def _frames(self) -> dict[str, pd.DataFrame]:
        """The frozen aggregate frames (:meth:`compute` runs first, while the engine is open)."""
        if self._frozen is None:
            raise RuntimeError("the aggregates are used before compute() froze them")
        return self._frozen.frames

    def _noisy_cells(self, rng) -> tuple[dict, dict]:
        """Noisy cell sizes (and, without declared keys, the DP-selected cells) of a statistic whose cell sizes
        are protected; the aggregate frame is cut to the released cells and carries the noisy n from here on
        (the mean divides by it, the relative risk by its noisy group sizes)."""
        from .. import cell_keys

        plan, s, by = self.plan, self.spec, list(self.spec.by)
        assert plan is not None  # only statistics of a plan with private cell sizes get here
        name = next(iter(self._frames))
        frame = self._frames[name]
        keys, counts = self.cell_counts()
        select = bool(by) and not plan.keys_declared(s)
        drawn = cell_keys.noisy_cell_counts(
            keys, counts, n_epsilon=plan.n_epsilon, m=self.m, rng=rng, select=select, delta=plan.selection_delta
        )
        noisy = {k: max(int(v), 0) for k, v in drawn.counts.items()}  # a count below 0 shown as 0: post-processing
        if s.kind == "relative_risk":  # a cell is listed when both its groups are
            cells = {k[:-1] for k in noisy if k[:-1] + ("exposed",) in noisy and k[:-1] + ("reference",) in noisy}
        else:
            cells = set(noisy)
        if select:
            frame = cell_keys.restrict_to_cells(frame, by, cells)
        frame = frame.copy()
        frame_keys = cell_keys._keys_of(frame, by) if by else [()] * len(frame)
        if s.kind == "mean":
            frame["n"] = np.array([noisy[k] for k in frame_keys], dtype=np.int64)
        elif s.kind == "relative_risk":
            frame["n_exposed"] = np.array([noisy[k + ("exposed",)] for k in frame_keys], dtype=np.int64)
            frame["n_reference"] = np.array([noisy[k + ("reference",)] for k in frame_keys], dtype=np.int64)
        self._frames[name] = frame
        return noisy, {**drawn.info, "n": "noisy (cell_sizes = \"noisy\")"}

    def aggregate_frame(self) -> pd.DataFrame:
        """The one aggregate frame of this statistic (histogram, sums, Gini inputs or outcome counts)."""
        return next(iter(self._frames.values()))

    def cell_counts(self) -> tuple[list[tuple[str, ...]], np.ndarray]:
        """(cell keys, rows per cell) of the aggregate frame (:func:`dpcore.cell_keys.cell_counts`), computed once
        per frame: the checks before the charge and the noisy cell sizes read them (0.37 s a call for the 600,600
        rows of the PSEO-like histogram)."""
        from .. import cell_keys

        frame = self.aggregate_frame()
        if self._cell_counts is None or self._cell_counts[0] is not frame:
            self._cell_counts = (frame, cell_keys.cell_counts(frame, self.spec.kind, list(self.spec.by)))
        return self._cell_counts[1]

    def release(self, rng) -> tuple[pd.DataFrame, dict]:
        table, info = self._release_values(rng)
        plan, s = self.plan, self.spec
        if plan is not None and (s.by or s.kind == "relative_risk"):
            info = {**info, "cells": self._cells_info}
        return table, info

    def _n_noise_scale(self) -> float:
        """Scale 2m/n_epsilon of the noise on a published noisy n (the cell sizes of a plan's statistic protected)."""
        if self.plan is None:
            raise RuntimeError("noisy cell sizes belong to a plan's statistic")
        return 2.0 * self.m / self.plan.n_epsilon

    def _release_values(self, rng) -> tuple[pd.DataFrame, dict]:
        s, eng = self.spec, self._frozen
        private = self.plan is not None and self.plan.cells_private(s)
        noisy: dict = {}
        if private:
            noisy, self._cells_info = self._noisy_cells(rng)
        elif self.plan is not None:
            self._cells_info = {
                "cells": (
                    "declared in the plan's [keys]" if self.plan.keys_declared(s) else "the cells present in the data"
                ),
                "n": "exact (cell_sizes = \"public\": the PSEO assumption)",
            }
        if s.kind == "percentiles":
            table, info = _percentiles(eng, s, self.m, rng, cells_move=private)
            if private:  # the histogram's exact row counts replaced by the noisy cell sizes
                from ..cell_keys import _keys_of

                table["n"] = np.array([noisy[k] for k in _keys_of(table, list(s.by))], dtype=np.int64)
                info["n_noise_scale"] = self._n_noise_scale()  # the published n is a noisy count
            return table, info
        if s.kind == "mean":
            table, info = _mean(eng, s, self.m, rng, rng is not None, cells_move=private)
            if private:
                info["n_noise_scale"] = self._n_noise_scale()
            return table, info
        if s.kind == "gini":
            return _gini(eng, s, self.m, rng, self.plan.level if self.plan is not None else 0.95)
        return _relative_risk(eng, s, self.m, rng)


def _whole_table_row(frame: pd.DataFrame) -> pd.DataFrame:
    """The aggregate of a statistic without ``by`` as exactly one row, zeros for an input with no row in it (the
    engines give no row, or one, for an empty aggregate: the pandas engine none for outcomes, DuckDB one). The whole
    table is one cell for every data set, so whether it is listed never depends on the data."""
    if len(frame):
        return frame
    return pd.DataFrame({c: np.zeros(1, dtype=frame[c].dtype if frame[c].dtype != object else np.int64) for c in frame})


class _FrozenEngine:
    """The one aggregate a statistic needs, computed now (while the engine is open) and replayed later."""

    def __init__(self, engine, spec: StatisticSpec, m: int, level: float = 0.95) -> None:
        by = list(spec.by)
        self.frames: dict[str, pd.DataFrame] = {}
        if spec.kind == "percentiles":
            self.frames["histogram"] = engine.histogram(by, spec.bins)
        elif spec.kind == "mean":
            self.frames["sums"] = engine.sums(by, spec.lower, spec.upper)
        elif spec.kind == "gini":
            self.frames["gini_inputs"] = engine.gini_inputs(
                by, spec.lower, spec.upper, gini_mechanism(spec, m, level).smoothness
            )
        else:
            self.frames["outcomes"] = engine.outcomes(
                by, spec.group, spec.exposed, spec.reference, spec.outcome, spec.outcome_below
            )

    def histogram(self, *args: Any) -> pd.DataFrame:
        return self.frames["histogram"]

    def sums(self, *args: Any) -> pd.DataFrame:
        return self.frames["sums"]

    def gini_inputs(self, *args: Any) -> pd.DataFrame:
        return self.frames["gini_inputs"]

    def outcomes(self, *args: Any) -> pd.DataFrame:
        return self.frames["outcomes"]
