"""A release plan's fields and their public limits, :class:`StatisticSpec`, :class:`ReleasePlan` and the plan-file
form of a validated plan (see :mod:`dpcore.plan` and ``docs/plan_format.md``)."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, TypeVar

from ..kinds import PLAN_KINDS
from ..validation import DPInputError

__all__ = [
    "EXAMPLE_PLAN",
    "PLAN_VERSION",
    "KINDS",
    "PlanError",
    "StatisticSpec",
    "ReleasePlan",
    "plan_to_dict",
    "GINI_PLAN_NOISES",
    "DEFAULT_GINI_NOISE_DELTA",
    "BIN_SCHEMES",
    "PERCENTILE_METHODS",
    "MISSING_INCOME_RULES",
    "NEGATIVE_INCOME_RULES",
    "MAX_BINS",
    "MAX_BY",
    "MAX_STATISTICS",
    "MAX_DESCRIPTION_CHARS",
    "MAX_COLUMN_NAME_CHARS",
    "MAX_PLAN_BYTES",
    "MAX_ABS_INCOME_BOUND",
]

#: The documented example plan (docs/plan_format.md; the format's reference case, tested as written).
EXAMPLE_PLAN = """
version = 1
dataset = "pseo-earnings-2019"      # the ledger account's label
income = "earnings"                 # income column
cap_epsilon = 3.0                   # the dataset's total budget in the ledger
cell_sizes = "public"               # PSEO publishes its cells and their exact counts

[[statistics]]
kind = "percentiles"                # gini | percentiles | mean | relative_risk
by = ["institution", "degree_level", "cohort"]   # disjoint cells: parallel composition
epsilon = 1.0
bins = "pseo"                       # or a list of public edges
q = [25, 50, 75]

[[statistics]]
kind = "gini"
by = ["state"]
epsilon = 0.5
lower = 0
upper = 2000000

[[statistics]]
kind = "mean"
by = ["state"]
epsilon = 0.5
lower = 0
upper = 500000
"""


PLAN_VERSION = 1
KINDS = tuple(PLAN_KINDS)
BIN_SCHEMES = ("pseo", "lognormal", "even")
#: how a percentiles statistic is released: "histogram" (the default: the PSEO noisy histogram, every percentile
#: for one epsilon) or "exponential" (the exponential-mechanism quantile on a public candidate grid, epsilon split
#: across at most dpcore.percentiles.MAX_EXPONENTIAL_QUANTILES levels: the better choice for a lone median)
PERCENTILE_METHODS = ("histogram", "exponential")
MAX_BINS = 1000
MAX_BY = 8
#: statistics per plan. Each statistic is its own pass over the data and its own output file. 1,000 is far above any published release (PSEO's
#: earnings tables are a few dozen) and is refused before any statistic is looked at.
MAX_STATISTICS = 1000
#: characters of the free-text ``description``: it is copied into the release record and every ledger row
#: of the release, so a 10 MB description became 10 MB per ledger row.
MAX_DESCRIPTION_CHARS = 2000
#: characters of a column name (income, by, group, outcome, privacy unit): names are echoed in messages,
#: output files and the record.
MAX_COLUMN_NAME_CHARS = 200
#: bytes of a plan file, refused before the TOML is parsed (1,000 statistics with their fields and a full
#: description fit in well under this).
MAX_PLAN_BYTES = 2_000_000
#: sanity range of every public number that is an income (lower, upper, bin edges, outcome_below): a
#: bound beyond it is a typo, not a choice -- ``upper = 1e300`` released means near +-1e298 (the noise
#: scales with upper - lower). 1e15 is also the income clamp of the bounding key (cents then fit a
#: 64-bit integer: 1e17 < 9.2e18).
MAX_ABS_INCOME_BOUND = 1e15
#: the Gini's smooth-sensitivity noises a plan can release: "cauchy" (the default when the field is
#: absent: pure epsilon, the certified generalized-Cauchy sampler) and "laplace" (NRS 2007, (epsilon, delta),
#: OpenDP's floating-point-safe Laplace sampler). "laplace_lognormal" is refused: no floating-point-safe sampler.
GINI_PLAN_NOISES = ("cauchy", "laplace")
#: the delta of a noise = "laplace" Gini when its plan entry gives none (dpcore.noise.smooth.DEFAULT_DELTA)
DEFAULT_GINI_NOISE_DELTA = 1e-6
#: what a row with a missing (or non-finite) income counts as; public rules, so one person's missing value
#: moves only noisy numbers. "lower": the row stays in every n; the mean and the Gini take the statistic's
#: public ``lower`` bound, the percentiles' histogram its first bin, an ``outcome_below`` outcome is missing
#: (not a case). "refuse": a missing income stops the release before any charge (the owner cleans the data).
MISSING_INCOME_RULES = ("lower", "refuse")
#: what a negative income (a loss) does, the app's three choices (dpcore.data.NEGATIVE_POLICIES): "refuse" (the
#: default: a negative income stops the release before any charge, never a silent clip), "clip" (to the
#: statistic's public lower bound, as every income below it), "drop" (the row's income counts as missing: the
#: row stays in n under ``missing_income``, so one person's sign moves only noisy numbers)
NEGATIVE_INCOME_RULES = ("refuse", "clip", "drop")


def margin_table_name(name: str, columns: tuple[str, ...]) -> str:
    """The table name of a statistic's margin (:meth:`StatisticSpec.level_names`)."""
    if not columns:
        return f"{name}__total"
    return f"{name}__" + "_".join(re.sub(r"[^A-Za-z0-9]+", "-", c) for c in columns)


class PlanError(DPInputError):
    """A release plan that does not validate; the message names the statistic and the field."""


_T = TypeVar("_T")


def _required(value: _T | None, where: str, field_name: str) -> _T:
    """``value``, or a PlanError when a field its kind needs is missing (a spec built without the parser)."""
    if value is None:
        raise PlanError(f"{where}: field '{field_name}' is required")
    return value


@dataclass(frozen=True)
class StatisticSpec:
    """One statistic of a plan (validated). ``index`` counts from 1 (as in error messages).

    Fields that do not apply to ``kind`` are None. ``bins`` holds the public edges (a tuple of floats)
    and ``bins_scheme`` the scheme name when the plan used one ("pseo", ...), else None. A percentiles statistic
    with ``method = "exponential"`` keeps its candidate grid in ``bins`` (the engines count the rows into it, as
    into any histogram) and the grid's name ("pseo-fine") in ``bins_scheme``.
    """

    index: int
    kind: str
    epsilon: float
    by: tuple[str, ...] = ()
    name: str = ""
    bins: tuple[float, ...] | None = None
    bins_scheme: str | None = None
    q: tuple[float, ...] | None = None
    lower: float | None = None
    upper: float | None = None
    gamma: float | None = None
    calibration: str | None = None
    group: str | None = None
    exposed: str | None = None
    reference: str | None = None
    outcome: str | None = None
    outcome_below: float | None = None
    #: the Gini's smooth-sensitivity noise ("cauchy" or "laplace"; None for the other kinds)
    noise: str | None = None
    #: the (epsilon, delta) target of a noise = "laplace" Gini (None otherwise)
    delta: float | None = None
    #: a percentiles statistic's method ("histogram" or "exponential"; None for the other kinds)
    method: str | None = None
    #: the coarser groupings released with the cells (finest first, each in ``by``'s order; ``()`` the whole
    #: table), made consistent with them (:mod:`dpcore.consistency`); None: the cells alone
    margins: tuple[tuple[str, ...], ...] | None = None
    #: the plan's weights of epsilon over the levels (cells first, then each margin); None: evenly
    epsilon_split: tuple[float, ...] | None = None
    #: the accuracy target ``python -m dpcore plan`` solves ``epsilon`` for: every published interval's expected
    #: half-width at most ``half_width`` (in the statistic's unit) or ``relative_half_width`` (a share of the value);
    #: None: no target. Without ``epsilon`` the statistic is still to be solved (``epsilon`` NaN until then)
    half_width: float | None = None
    relative_half_width: float | None = None

    @property
    def solved(self) -> bool:
        """False for a statistic whose ``epsilon`` is still to be solved from its target (``dpcore plan``)."""
        return math.isfinite(self.epsilon)

    @property
    def where(self) -> str:
        return f"statistics[{self.index}] ({self.kind})"

    @property
    def has_cells(self) -> bool:
        """True when the statistic is released per cell: ``by`` columns, or the exposure groups of its kind (a
        relative risk's, :attr:`dpcore.kinds.PlanKind.exposure_groups`)."""
        return bool(self.by) or PLAN_KINDS[self.kind].exposure_groups

    def level_columns(self) -> tuple[tuple[str, ...], ...]:
        """The grouping columns of every level released (the cells first, then each margin)."""
        return (self.by, *(self.margins or ()))

    def level_epsilons(self) -> tuple[float, ...]:
        """The epsilon of every level (cells first): the statistic's epsilon split evenly over its levels, or in
        proportion to ``epsilon_split``; they add up to ``epsilon`` (sequential composition over the levels: a
        person is in one node of every level)."""
        from ..consistency import split_epsilon

        levels = len(self.level_columns())
        return tuple(float(e) for e in split_epsilon(self.epsilon, levels, self.epsilon_split))

    def level_names(self) -> tuple[str, ...]:
        """The table name of every level: ``name`` for the cells, ``name__<columns joined by _>`` for a margin
        (each column's characters other than letters and digits as ``-``), ``name__total`` for the whole table."""
        return (self.name, *(margin_table_name(self.name, cols) for cols in self.margins or ()))

    def columns(self) -> tuple[str, ...]:
        """Columns this statistic reads besides the income column."""
        cols = list(self.by)
        if self.kind == "relative_risk":
            cols.append(_required(self.group, self.where, "group"))
            if self.outcome is not None:
                cols.append(self.outcome)
        return tuple(dict.fromkeys(cols))

    def to_dict(self) -> dict[str, Any]:
        """The plan-file form (only the fields that apply; ``bins`` as the scheme name when there is one)."""
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "by": list(self.by)}
        if self.solved:
            out["epsilon"] = self.epsilon
        if self.half_width is not None:
            out["half_width"] = self.half_width
        if self.relative_half_width is not None:
            out["relative_half_width"] = self.relative_half_width
        if self.kind == "percentiles":
            edges = self.bins_scheme if self.bins_scheme else list(_required(self.bins, self.where, "bins"))
            if self.method == "exponential":  # a histogram plan is written as before (no method field)
                out["method"], out["candidates"] = "exponential", edges
            else:
                out["bins"] = edges
            out["q"] = list(_required(self.q, self.where, "q"))
            if self.margins is not None:
                out["margins"] = [list(cols) for cols in self.margins]
            if self.epsilon_split is not None:
                out["epsilon_split"] = list(self.epsilon_split)
        elif self.kind in ("gini", "mean"):
            out["lower"], out["upper"] = self.lower, self.upper
            if self.kind == "gini" and self.noise == "laplace":  # "cauchy" is written as before (no noise field)
                out["noise"], out["delta"], out["calibration"] = self.noise, self.delta, self.calibration
            elif self.kind == "gini":
                out["gamma"], out["calibration"] = self.gamma, self.calibration
        else:
            out["group"], out["exposed"], out["reference"] = self.group, self.exposed, self.reference
            if self.outcome is not None:
                out["outcome"] = self.outcome
            else:
                out["outcome_below"] = self.outcome_below
        return out


@dataclass(frozen=True)
class ReleasePlan:
    """A validated release plan (see the module docstring and ``docs/plan_format.md``)."""

    dataset: str
    income: str
    cap_epsilon: float
    statistics: tuple[StatisticSpec, ...]
    version: int = PLAN_VERSION
    privacy_unit: str | None = None
    max_rows_per_person: int | None = None
    bounding_seed: int = 0
    description: str = ""
    cap_delta: float | None = None
    #: the public rule for a missing income (:data:`MISSING_INCOME_RULES`)
    missing_income: str = "lower"
    #: the public rule for a negative income (:data:`NEGATIVE_INCOME_RULES`)
    negative_incomes: str = "refuse"
    #: the public cells (the ``[keys]`` table, :class:`dpcore.cell_keys.DeclaredKeys`); None: none declared
    keys: Any = None
    #: "noisy" (the default: every cell's n is a noisy count costing n_epsilon more) or "public" (the PSEO
    #: assumption: cells present and their exact n are public)
    cell_sizes: str = "noisy"
    #: the registered population (the people protected) whose ledger budget pays: the ``population``
    #: field; a plan without it (written before populations existed) names it by ``dataset``
    population: str = ""
    #: epsilon of each statistic's noisy cell sizes (and DP partition selection) with cell_sizes = "noisy"
    n_epsilon: float = 0.1
    #: delta of each statistic's DP partition selection (cells not declared, cell sizes noisy)
    selection_delta: float = 1e-10
    #: with cell_sizes = "public", cells with fewer rows are warned about
    small_cell_threshold: int = 10
    #: the level of the interval published next to every released value (dpcore.published)
    level: float = 0.95
    #: epsilon of the DP snapshot ``python -m dpcore plan`` solves the statistics' targets on (None: the default,
    #: :data:`dpcore.mechanisms.snapshot.DEFAULT_PLANNING_EPSILON`); charged once, never by a release
    planning_epsilon: float | None = None

    def cells_private(self, spec: StatisticSpec) -> bool:
        """True when this statistic's cells and their sizes are protected: cell_sizes = "noisy" and it has cells
        (``by``, or the exposure groups of a relative risk)."""
        return self.cell_sizes != "public" and spec.has_cells

    def keys_declared(self, spec: StatisticSpec) -> bool:
        """True when every ``by`` column of the statistic is declared in ``[keys]`` (its cells are public)."""
        return self.keys is not None and self.keys.covers(spec.by)

    def statistic_epsilon(self, spec: StatisticSpec) -> float:
        """The statistic's cost: its ``epsilon`` plus ``n_epsilon`` when its cell sizes are noisy."""
        return spec.epsilon + (self.n_epsilon if self.cells_private(spec) else 0.0)

    def statistic_selection_delta(self, spec: StatisticSpec) -> float:
        """delta of the statistic's DP partition selection (0 when its cells are declared or public)."""
        selected = self.cells_private(spec) and bool(spec.by) and not self.keys_declared(spec)
        return self.selection_delta if selected else 0.0

    @property
    def total_epsilon(self) -> float:
        """Sequential composition across statistics (each statistic costs its epsilon once, plus n_epsilon when its
        cell sizes are noisy: :meth:`statistic_epsilon`)."""
        return float(math.fsum(self.statistic_epsilon(s) for s in self.statistics))

    @property
    def noise_delta(self) -> float:
        """Sum of the deltas of the noise = "laplace" Gini statistics (sequential composition; 0 without any)."""
        return float(math.fsum(_required(s.delta, s.where, "delta") for s in self.statistics if s.noise == "laplace"))

    @property
    def rows_per_person(self) -> int:
        """m: how many rows one person can change (1 without a privacy unit)."""
        if not self.privacy_unit:
            return 1
        return int(_required(self.max_rows_per_person, "plan", "max_rows_per_person"))

    def histogram_noise_scales(self) -> list[float]:
        """The public scales of the histograms' discrete Laplace noise (the bulk of a release's draws: a count per
        cell and bin), known from the plan alone, so the noise can be drawn before the data are read
        (:mod:`dpcore.noise.ahead`)."""
        from ..mechanisms import HistogramMechanism

        return [
            HistogramMechanism(eps, s.bins, s.q, rows_per_person=self.rows_per_person).noise_scale
            for s in self.statistics
            if s.kind == "percentiles" and s.method != "exponential"
            for eps in s.level_epsilons()
        ]

    def columns(self) -> tuple[str, ...]:
        """Every column the plan reads (income first)."""
        cols = [self.income]
        if self.privacy_unit:
            cols.append(self.privacy_unit)
        for s in self.statistics:
            cols.extend(s.columns())
        return tuple(dict.fromkeys(cols))

    def to_dict(self) -> dict[str, Any]:
        return plan_to_dict(self)


def plan_to_dict(plan: ReleasePlan) -> dict[str, Any]:
    """The plan-file form of a validated plan (round-trips through :func:`plan_from_dict`)."""
    if not isinstance(plan, ReleasePlan):
        raise TypeError(f"plan must be a dpcore.plan.ReleasePlan, got {type(plan).__name__}")
    out: dict[str, Any] = {"version": plan.version}
    if plan.population and plan.population != plan.dataset:
        out["population"] = plan.population
    out.update({"dataset": plan.dataset, "income": plan.income, "cap_epsilon": plan.cap_epsilon})
    if plan.cap_delta is not None:
        out["cap_delta"] = plan.cap_delta
    if plan.description:
        out["description"] = plan.description
    if plan.privacy_unit:
        out["privacy_unit"] = plan.privacy_unit
        out["max_rows_per_person"] = plan.max_rows_per_person
        out["bounding_seed"] = plan.bounding_seed
    if plan.missing_income != "lower":  # the default is not written: plans written before the field read the same
        out["missing_income"] = plan.missing_income
    if plan.negative_incomes != "refuse":  # the default (refuse) is not written, as missing_income's
        out["negative_incomes"] = plan.negative_incomes
    if plan.cell_sizes == "public" or any(s.has_cells for s in plan.statistics):
        out["cell_sizes"] = plan.cell_sizes  # written wherever there are cells: is n exact? a reader's first question
    from ..cell_keys import DEFAULT_N_EPSILON, DEFAULT_SELECTION_DELTA

    if plan.n_epsilon != DEFAULT_N_EPSILON:
        out["n_epsilon"] = plan.n_epsilon
    if plan.selection_delta != DEFAULT_SELECTION_DELTA:
        out["selection_delta"] = plan.selection_delta
    if plan.small_cell_threshold != 10:
        out["small_cell_threshold"] = plan.small_cell_threshold
    if plan.level != 0.95:  # the default is not written: plans written before the field read the same
        out["level"] = plan.level
    if plan.planning_epsilon is not None:
        out["planning_epsilon"] = plan.planning_epsilon
    if plan.keys is not None:
        out["keys"] = plan.keys.to_dict()
    out["statistics"] = [s.to_dict() for s in plan.statistics]
    return out
