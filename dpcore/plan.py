"""Release plan files (TOML, versioned): parse, validate, write.

A release plan says what to release from one dataset, with which privacy budget; the command line
(``python -m dpcore release PLAN --data SOURCE ...``, :mod:`dpcore.cli`) reads it and the planner page
writes it ("Download the release plan"). Format, field by field: ``docs/plan_format.md``. Example::

    version = 1
    dataset = "pseo-earnings-2019"      # the ledger account (its id and label)
    income = "earnings"                 # income column
    cap_epsilon = 3.0                   # the dataset's total budget in the ledger

    [[statistics]]
    kind = "percentiles"                # gini | percentiles | mean | relative_risk
    by = ["institution", "degree_level", "cohort"]
    epsilon = 1.0
    bins = "pseo"                       # or a list of public edges
    q = [25, 50, 75]

Privacy accounting of a plan (:attr:`ReleasePlan.total_epsilon`): inside one statistic the cells
(the distinct values of the ``by`` columns) are disjoint, so one statistic costs its ``epsilon`` once
(parallel composition, Dwork & Roth 2014, Thm 3.16 with disjoint inputs); statistics compose
sequentially, so the plan costs the sum of its statistics' epsilons. Cells are the plan's declared
``[keys]`` or selected with DP, and each cell's n is a noisy count costing ``n_epsilon`` more (plus
``selection_delta`` for a selection), unless ``cell_sizes = "public"`` (the PSEO assumption):
:mod:`dpcore.cell_keys`. A Gini's ``noise`` is "cauchy" (the default when the field is absent: pure
epsilon) or "laplace" (NRS 2007 (epsilon, delta) with the
entry's ``delta``; the plan then needs ``cap_delta`` >= the sum of those deltas, :attr:`ReleasePlan.noise_delta`). With a ``privacy_unit`` and
``max_rows_per_person = m`` every mechanism is calibrated for one person changing up to m rows
(see :mod:`dpcore.engines` and ``docs/release_cli.md``), so the cost per statistic stays ``epsilon``.

Reading uses the standard library's ``tomllib`` (Python 3.11+); writing uses the tiny writer
:func:`plan_to_toml` (the format only needs strings, numbers, booleans, flat lists and an array of
tables). Validation errors are :class:`PlanError` (a :class:`dpcore.DPInputError`) naming the
statistic (index from 1 and kind) and the field.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from types import ModuleType
from typing import Any, TypeVar

import numpy as np

from .kinds import PLAN_KINDS
from .validation import DPInputError

_toml: ModuleType | None
try:  # Python 3.11+
    import tomllib as _toml
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    try:
        import tomli as _toml  # type: ignore[no-redef]
    except ModuleNotFoundError:
        _toml = None

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

__all__ = [
    "EXAMPLE_PLAN",
    "PLAN_VERSION",
    "KINDS",
    "PlanError",
    "StatisticSpec",
    "ReleasePlan",
    "parse_plan",
    "load_plan",
    "plan_from_dict",
    "plan_to_dict",
    "plan_to_toml",
    "write_plan",
    "plan_from_planner",
    "plan_from_planner_choices",
    "GINI_PLAN_NOISES",
]

PLAN_VERSION = 1
KINDS = tuple(PLAN_KINDS)
BIN_SCHEMES = ("pseo", "lognormal", "even")
#: how a percentiles statistic is released: "histogram" (the default: the PSEO noisy histogram, every percentile
#: for one epsilon) or "exponential" (the exponential-mechanism quantile on a public candidate grid, epsilon split
#: across at most dpcore.percentiles.MAX_EXPONENTIAL_QUANTILES levels: the better choice for a lone median)
PERCENTILE_METHODS = ("histogram", "exponential")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
MAX_BINS = 1000
MAX_BY = 8
#: statistics per plan. Each statistic is its own pass over the data and its own output file; a plan of
#: 100,000 statistics took 175 s to check alone. 1,000 is far above any published release (PSEO's
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

#: fields allowed per kind (besides the common ones)
_COMMON = ("kind", "by", "epsilon", "name")
_KIND_FIELDS = {kind.name: kind.fields for kind in PLAN_KINDS.values()}
#: the Gini's smooth-sensitivity noises a plan can release: "cauchy" (the default when the field is
#: absent: pure epsilon, the certified generalized-Cauchy sampler) and "laplace" (NRS 2007, (epsilon, delta),
#: OpenDP's floating-point-safe Laplace sampler). "laplace_lognormal" is refused: no floating-point-safe sampler.
GINI_PLAN_NOISES = ("cauchy", "laplace")
#: the delta of a noise = "laplace" Gini when its plan entry gives none (dpcore.noise.smooth.DEFAULT_DELTA)
DEFAULT_GINI_NOISE_DELTA = 1e-6
_TOP_FIELDS = (
    "version",
    "population",
    "dataset",
    "income",
    "cap_epsilon",
    "cap_delta",
    "privacy_unit",
    "max_rows_per_person",
    "bounding_seed",
    "description",
    "statistics",
    "missing_income",
    "keys",
    "cell_sizes",
    "n_epsilon",
    "selection_delta",
    "small_cell_threshold",
    "negative_incomes",
    "level",
)
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

    @property
    def where(self) -> str:
        return f"statistics[{self.index}] ({self.kind})"

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
        out: dict[str, Any] = {"kind": self.kind, "name": self.name, "by": list(self.by), "epsilon": self.epsilon}
        if self.kind == "percentiles":
            edges = self.bins_scheme if self.bins_scheme else list(_required(self.bins, self.where, "bins"))
            if self.method == "exponential":  # a histogram plan is written as before (no method field)
                out["method"], out["candidates"] = "exponential", edges
            else:
                out["bins"] = edges
            out["q"] = list(_required(self.q, self.where, "q"))
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

    def cells_private(self, spec: StatisticSpec) -> bool:
        """True when this statistic's cells and their sizes are protected: cell_sizes = "noisy" and it has cells
        (``by``, or the exposure groups of a relative risk)."""
        return self.cell_sizes != "public" and (bool(spec.by) or spec.kind == "relative_risk")

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
        from .mechanisms import HistogramMechanism

        return [
            HistogramMechanism(s.epsilon, s.bins, s.q, rows_per_person=self.rows_per_person).noise_scale
            for s in self.statistics
            if s.kind == "percentiles" and s.method != "exponential"
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


# ---------------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------------


def _fail(where: str, field_name: str, message: str) -> PlanError:
    return PlanError(f"{where}: field '{field_name}' {message}")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _number(value: Any, where: str, name: str, *, positive: bool = False, minimum: float | None = None) -> float:
    if not _is_number(value):
        raise _fail(where, name, f"must be a number, got {_shown(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise _fail(where, name, f"must be a finite number, got {_shown(value)}")
    if positive and v <= 0:
        raise _fail(where, name, f"must be > 0, got {_shown(value)}")
    if minimum is not None and v < minimum:
        raise _fail(where, name, f"must be >= {minimum:g}, got {_shown(value)}")
    return v


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to ``limit`` characters: a message quotes what it refuses, never all of it."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text):,} characters)"


def _column(value: Any, where: str, name: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _fail(where, name, f"must be a column name (a non-empty string), got {_shown(value)}")
    if len(value) > MAX_COLUMN_NAME_CHARS:
        raise _fail(
            where,
            name,
            f"must be a column name of at most {MAX_COLUMN_NAME_CHARS} characters, "
            f"got {len(value):,} characters ({_shown(value)})",
        )
    return value


def _income_bound(value: Any, where: str, name: str) -> float:
    """A public income number (bound, edge, threshold): finite and within +-:data:`MAX_ABS_INCOME_BOUND`."""
    v = _number(value, where, name)
    if abs(v) > MAX_ABS_INCOME_BOUND:
        raise _fail(
            where,
            name,
            f"must be within +-{MAX_ABS_INCOME_BOUND:g} (a public income bound; beyond it "
            f"the noise, which scales with the bounds, swamps any income), got {v:g}",
        )
    return v


def _label(value: Any, where: str, name: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _fail(where, name, f"must be a string (or an integer) value of the group column, got {_shown(value)}")
    if len(str(value)) > MAX_COLUMN_NAME_CHARS:
        raise _fail(
            where,
            name,
            f"must be a value of at most {MAX_COLUMN_NAME_CHARS} characters, "
            f"got {len(str(value)):,} characters ({_shown(value)})",
        )
    return str(value)


def _gini_noise(raw: Mapping, where: str) -> str:
    """The Gini's ``noise`` field: "cauchy" when absent (plans written before the field existed), else checked."""
    noise_name = raw.get("noise", "cauchy")
    if noise_name in GINI_PLAN_NOISES and isinstance(noise_name, str):
        return noise_name
    if noise_name == "laplace_lognormal":
        raise _fail(
            where,
            "noise",
            "'laplace_lognormal' cannot be released: there is no floating-point-safe "
            "sampler for the Laplace log-normal noise (plan with it, release with "
            "\"laplace\" or \"cauchy\")",
        )
    raise _fail(where, "noise", f"must be \"cauchy\" (the default) or \"laplace\", got {_shown(noise_name)}")


def _laplace_gini_fields(raw: Mapping, where: str) -> dict[str, Any]:
    """``delta`` (default 1e-6, in (0, 1e-3)) and ``calibration`` of a noise = "laplace" Gini; ``gamma`` is
    the generalized Cauchy's exponent and is refused here (it would be silently unused)."""
    if "gamma" in raw:
        raise _fail(
            where,
            "gamma",
            "is the generalized Cauchy's tail exponent; it does not apply to noise = \"laplace\" (remove it)",
        )
    delta = _number(raw.get("delta", DEFAULT_GINI_NOISE_DELTA), where, "delta")
    if not 0.0 < delta < 1e-3:
        raise _fail(
            where, "delta", f"must be in (0, 1e-3) (the (epsilon, delta) target of the Laplace noise), got {delta:g}"
        )
    calibration = raw.get("calibration", "tight")
    if calibration not in ("tight", "paper"):
        raise _fail(where, "calibration", f"must be 'tight' or 'paper', got {_shown(calibration)}")
    return {"noise": "laplace", "delta": delta, "calibration": calibration}


def _public_edges(value: Any, where: str, field_name: str, schemes: Sequence[str]) -> dict[str, Any]:
    """``bins`` / ``candidates``: a scheme name or a list of 2 to MAX_BINS + 1 increasing edges >= 0."""
    from . import percentiles

    if isinstance(value, str):
        if value not in schemes:
            raise _fail(
                where, field_name, f"must be one of {', '.join(schemes)} or a list of public edges, got {_shown(value)}"
            )
        grid = percentiles.bin_edges(value) if value in BIN_SCHEMES else percentiles.candidate_grid(value)
        return {"bins": tuple(float(v) for v in grid), "bins_scheme": value}
    if not isinstance(value, list):
        raise _fail(where, field_name, f"must be \"{schemes[0]}\" or a list of public edges, got {_shown(value)}")
    if len(value) < 2 or len(value) > MAX_BINS + 1:
        raise _fail(where, field_name, f"must list between 2 and {MAX_BINS + 1} edges, got {len(value)}")
    edges = [_income_bound(v, where, field_name) for v in value]
    if any(b <= a for a, b in zip(edges[:-1], edges[1:], strict=True)):
        raise _fail(where, field_name, f"edges must be strictly increasing, got {_shown(value)}")
    if edges[0] < 0:
        raise _fail(where, field_name, f"edges must be >= 0 (earnings), got {edges[0]:g}")
    return {"bins": tuple(edges)}


def _percentiles_fields(raw: Mapping, where: str) -> dict[str, Any]:
    """``method``, ``bins`` or ``candidates``, and ``q`` of a percentiles statistic."""
    from . import percentiles

    method = raw.get("method", "histogram")
    if method not in PERCENTILE_METHODS:
        raise _fail(where, "method", f"must be 'histogram' or 'exponential', got {_shown(method)}")
    if method == "exponential":
        if "bins" in raw:
            raise _fail(
                where,
                "bins",
                "applies to method = \"histogram\"; the exponential mechanism chooses among "
                "'candidates' (\"pseo-fine\" or a list of public edges)",
            )
        fields = _public_edges(raw.get("candidates", "pseo-fine"), where, "candidates", percentiles.CANDIDATE_SCHEMES)
    else:
        if "candidates" in raw:
            raise _fail(where, "candidates", "applies to method = \"exponential\"; the histogram uses 'bins'")
        fields = _public_edges(raw.get("bins", "pseo"), where, "bins", BIN_SCHEMES)
    q = raw.get("q", [50] if method == "exponential" else [25, 50, 75])
    if not isinstance(q, list) or not q:
        raise _fail(where, "q", f"must be a non-empty list of percentiles in (0, 100], got {_shown(q)}")
    qs = tuple(_number(v, where, "q") for v in q)
    if any(v <= 0 or v > 100 for v in qs):
        raise _fail(where, "q", f"percentiles must be in (0, 100], got {_shown(q)}")
    if len(set(qs)) != len(qs):
        raise _fail(where, "q", f"lists a percentile twice: {_shown(q)}")
    if method == "exponential":
        if any(v >= 100 for v in qs):
            raise _fail(
                where,
                "q",
                "the exponential mechanism needs levels below 100 (the 100th percentile is the "
                "maximum: no rank to aim at); use method = \"histogram\"",
            )
        if len(qs) > percentiles.MAX_EXPONENTIAL_QUANTILES:
            raise _fail(
                where,
                "q",
                f"lists {len(qs)} percentiles; method = \"exponential\" releases at most "
                f"{percentiles.MAX_EXPONENTIAL_QUANTILES} (epsilon is split across them, so each "
                "gets noisier): use method = \"histogram\", which gives every percentile and the "
                "histogram itself for one epsilon",
            )
    return {**fields, "q": qs, "method": method}


# complexity above the cap: a flat list of independent field checks per statistic kind
def _check_statistic(index: int, raw: Any) -> StatisticSpec:  # noqa: C901
    where0 = f"statistics[{index}]"
    if not isinstance(raw, Mapping):
        raise PlanError(f"{where0}: must be a table ([[statistics]]), got {_shown(raw)}")
    kind = raw.get("kind")
    if kind is None:
        raise _fail(where0, "kind", f"is required (one of {', '.join(KINDS)})")
    if kind not in KINDS:
        raise _fail(where0, "kind", f"must be one of {', '.join(KINDS)}, got {_shown(kind)}")
    where = f"{where0} ({kind})"
    allowed = set(_COMMON) | set(_KIND_FIELDS[kind])
    for key in raw:
        if key not in allowed:
            raise _fail(
                where,
                _shown(key, 40).strip("'\""),
                f"is not a field of a {kind} statistic (allowed: {', '.join(sorted(allowed))})",
            )
    if "epsilon" not in raw:
        raise _fail(where, "epsilon", "is required (the privacy cost of this statistic, > 0)")
    epsilon = _number(raw["epsilon"], where, "epsilon", positive=True)
    if epsilon > 1e3:
        raise _fail(where, "epsilon", f"must be at most 1000, got {epsilon:g}")
    by_raw = raw.get("by", [])
    if isinstance(by_raw, str):
        # refused, not read as [by_raw]: every list field of a plan is a TOML list (q, bins, [keys]), and a text
        # such as "state, region" would otherwise be one column of that name
        raise _fail(
            where,
            "by",
            f"must be a list of column names, e.g. by = [{json.dumps(by_raw[:60])}]; got the text {_shown(by_raw)}",
        )
    if not isinstance(by_raw, list):
        raise _fail(where, "by", f"must be a list of column names, got {_shown(by_raw)}")
    by = tuple(_column(c, where, "by") for c in by_raw)
    if len(set(by)) != len(by):
        raise _fail(where, "by", f"names a column twice: {list(by)}")
    if len(by) > MAX_BY:
        raise _fail(where, "by", f"has {len(by)} columns; at most {MAX_BY}")
    name = raw.get("name")
    if name is None:
        name = f"{index:02d}_{kind}" + ("_by_" + "_".join(re.sub(r"[^A-Za-z0-9]+", "-", c) for c in by) if by else "")
        name = name[:64]
    elif not isinstance(name, str) or not _NAME_RE.match(name):
        raise _fail(
            where,
            "name",
            "must be 1-64 letters, digits, '_', '-' or '.', starting with a letter or digit "
            f"(it names the output files), got {_shown(name)}",
        )
    spec = dict(index=index, kind=kind, epsilon=epsilon, by=by, name=name)
    if kind == "percentiles":
        spec.update(_percentiles_fields(raw, where))
    elif kind in ("gini", "mean"):
        for key in ("lower", "upper"):
            if key not in raw:
                raise _fail(where, key, "is required (a public income bound chosen without looking at the data)")
        lower = _income_bound(raw["lower"], where, "lower")
        upper = _income_bound(raw["upper"], where, "upper")
        if upper <= lower:
            raise _fail(where, "upper", f"must be greater than lower ({lower:g}), got {upper:g}")
        spec["lower"], spec["upper"] = lower, upper
        if kind == "gini":
            if lower < 0:
                raise _fail(where, "lower", f"must be >= 0 for the Gini index, got {lower:g}")
            noise_name = _gini_noise(raw, where)
            if noise_name == "laplace":
                spec.update(_laplace_gini_fields(raw, where))
                return StatisticSpec(**spec)
            if "delta" in raw:
                raise _fail(
                    where,
                    "delta",
                    "applies to noise = \"laplace\" only: the generalized Cauchy (the "
                    "default noise) is pure epsilon-DP (its sampler's tiny delta is computed)",
                )
            spec["noise"] = "cauchy"
            gamma = _number(raw.get("gamma", 2.0), where, "gamma")
            if gamma <= 1 or gamma > 20:
                raise _fail(where, "gamma", f"must be in (1, 20] (noise density 1/(1+|z|^gamma)), got {gamma:g}")
            calibration = raw.get("calibration", "tight")
            if calibration not in ("tight", "paper"):
                raise _fail(where, "calibration", f"must be 'tight' or 'paper', got {_shown(calibration)}")
            if calibration == "paper":
                from . import noise

                try:
                    noise.smooth_noise_calibration(1.0, gamma, mode="paper")
                except DPInputError as exc:
                    raise _fail(where, "calibration", f"'paper' does not work with gamma = {gamma:g}: {exc}") from None
            spec["gamma"], spec["calibration"] = gamma, calibration
    else:  # relative_risk
        for key in ("group", "exposed", "reference"):
            if key not in raw:
                raise _fail(
                    where,
                    key,
                    "is required (the exposure column 'group' and its two compared values 'exposed' and 'reference')",
                )
        spec["group"] = _column(raw["group"], where, "group")
        spec["exposed"] = _label(raw["exposed"], where, "exposed")
        spec["reference"] = _label(raw["reference"], where, "reference")
        if spec["exposed"] == spec["reference"]:
            raise _fail(where, "reference", f"must differ from exposed ({spec['exposed']!r})")
        if spec["group"] in by:
            raise _fail(
                where, "group", f"{spec['group']!r} is also in 'by'; the exposure column cannot define the cells"
            )
        has_outcome, has_below = "outcome" in raw, "outcome_below" in raw
        if has_outcome == has_below:
            raise _fail(
                where,
                "outcome",
                "give exactly one of 'outcome' (a 0/1 or true/false column) and "
                "'outcome_below' (the outcome is income < this public threshold)",
            )
        if has_outcome:
            spec["outcome"] = _column(raw["outcome"], where, "outcome")
        else:
            spec["outcome_below"] = _income_bound(raw["outcome_below"], where, "outcome_below")
    return StatisticSpec(**spec)


def _cell_settings(
    raw: Mapping[str, Any], specs: Sequence[StatisticSpec], base_dir: str | os.PathLike | None
) -> dict[str, Any]:
    """``keys``, ``cell_sizes``, ``n_epsilon``, ``selection_delta``, ``small_cell_threshold`` (see
    :mod:`dpcore.cell_keys`), checked against the statistics."""
    from . import cell_keys

    cell_sizes = raw.get("cell_sizes", "noisy")
    if not isinstance(cell_sizes, str) or cell_sizes not in cell_keys.CELL_SIZES:
        raise PlanError(
            f"plan: field 'cell_sizes' must be \"noisy\" (the default: noisy counts, cells declared or "
            f"selected with DP) or \"public\" (exact n, the PSEO assumption), got {_shown(cell_sizes)}"
        )
    n_epsilon = _number(raw.get("n_epsilon", cell_keys.DEFAULT_N_EPSILON), "plan", "n_epsilon", positive=True)
    if n_epsilon > 1e3:
        raise PlanError(f"plan: field 'n_epsilon' must be at most 1000, got {n_epsilon:g}")
    selection_delta = _number(
        raw.get("selection_delta", cell_keys.DEFAULT_SELECTION_DELTA), "plan", "selection_delta", positive=True
    )
    if selection_delta >= 1e-3:
        raise PlanError(f"plan: field 'selection_delta' must be below 1e-3, got {selection_delta:g}")
    small = raw.get("small_cell_threshold", cell_keys.DEFAULT_SMALL_CELL_THRESHOLD)
    if isinstance(small, bool) or not isinstance(small, int) or not 0 <= small <= 1_000_000:
        raise PlanError(f"plan: field 'small_cell_threshold' must be an integer in [0, 1000000], got {_shown(small)}")
    try:
        keys = (
            cell_keys.parse_keys(raw["keys"], base_dir, max_column_name_chars=MAX_COLUMN_NAME_CHARS)
            if "keys" in raw
            else None
        )
    except cell_keys.KeysError as exc:
        raise PlanError(str(exc)) from None
    if cell_sizes != "public":
        for s in specs:
            if s.kind == "gini" and s.by:
                raise _fail(
                    s.where,
                    "by",
                    "needs cell_sizes = \"public\": the Gini's smooth-sensitivity calibration "
                    "assumes each cell's n is public (release the Gini of the whole table, "
                    "by = [], or declare cell_sizes = \"public\" as PSEO does)",
                )
    if keys is not None:
        for s in specs:
            if keys.covers(s.by) and keys.count(s.by) > cell_keys.MAX_DECLARED_CELLS:
                raise _fail(
                    s.where,
                    "by",
                    f"has {keys.count(s.by):,} declared cells (the cross product of [keys]); "
                    f"at most {cell_keys.MAX_DECLARED_CELLS:,}",
                )
    return {
        "keys": keys,
        "cell_sizes": cell_sizes,
        "n_epsilon": n_epsilon,
        "selection_delta": selection_delta,
        "small_cell_threshold": int(small),
    }


# complexity above the cap: a flat list of independent checks of the plan's top-level fields
def plan_from_dict(raw: Mapping[str, Any], base_dir: str | os.PathLike | None = None) -> ReleasePlan:  # noqa: C901
    """Validate a plan given as a dict (what ``tomllib`` returns); raise :class:`PlanError` naming the field.
    ``base_dir``: the folder a relative ``[keys] file`` is read from (the plan file's folder)."""
    if not isinstance(raw, Mapping):
        raise PlanError(f"a plan must be a table of fields, got {type(raw).__name__}")
    for key in raw:
        if key not in _TOP_FIELDS:
            raise PlanError(f"plan: field {_shown(key, 40)} is not a plan field (allowed: {', '.join(_TOP_FIELDS)})")
    if "version" not in raw:
        raise PlanError(f"plan: field 'version' is required (this dpcore reads version = {PLAN_VERSION})")
    if raw["version"] != PLAN_VERSION or isinstance(raw["version"], bool):
        raise PlanError(f"plan: field 'version' must be {PLAN_VERSION}, got {_shown(raw['version'])}")
    if "population" not in raw and "dataset" not in raw:
        raise PlanError(
            "plan: field 'population' is required (the registered population whose budget pays; "
            "'python -m dpcore ledger population list' shows them)"
        )
    if "income" not in raw:
        raise PlanError("plan: field 'income' is required")
    for key in ("population", "dataset"):
        value = raw.get(key, "x")
        if not isinstance(value, str) or not value.strip() or len(value) > 200 or any(ord(c) < 32 for c in value):
            raise PlanError(
                f"plan: field {key!r} must be a non-empty name (one line, at most 200 characters), got {_shown(value)}"
            )
    # a plan written before populations existed names its budget by `dataset`: that name is its population
    # (the ledger's migration made every old account a population of the same name)
    population = raw.get("population", raw.get("dataset")).strip()
    dataset = raw.get("dataset", population)
    income = _column(raw["income"], "plan", "income")
    if "cap_epsilon" not in raw:
        raise PlanError("plan: field 'cap_epsilon' is required (the dataset's total budget in the ledger)")
    cap = _number(raw["cap_epsilon"], "plan", "cap_epsilon", positive=True)
    cap_delta = raw.get("cap_delta")
    if cap_delta is not None:
        cap_delta = _number(cap_delta, "plan", "cap_delta", minimum=0.0)
        if cap_delta >= 1e-3:
            raise PlanError(f"plan: field 'cap_delta' must be below 1e-3, got {cap_delta:g}")
    unit = raw.get("privacy_unit")
    m = raw.get("max_rows_per_person")
    if unit is not None:
        unit = _column(unit, "plan", "privacy_unit")
        if unit == income:
            raise PlanError("plan: field 'privacy_unit' must not be the income column")
        if m is None:
            raise PlanError(
                "plan: field 'max_rows_per_person' is required with a privacy_unit "
                "(how many rows of one person are kept; sensitivities scale with it)"
            )
    if m is not None:
        if unit is None:
            raise PlanError("plan: field 'max_rows_per_person' needs a 'privacy_unit' column (who a person is)")
        if isinstance(m, bool) or not isinstance(m, int) or not 1 <= m <= 1000:
            raise PlanError(f"plan: field 'max_rows_per_person' must be an integer in [1, 1000], got {_shown(m)}")
    seed = raw.get("bounding_seed", 0)
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise PlanError(f"plan: field 'bounding_seed' must be a non-negative integer, got {_shown(seed)}")
    missing_income = raw.get("missing_income", "lower")
    if not isinstance(missing_income, str) or missing_income not in MISSING_INCOME_RULES:
        raise PlanError(
            f"plan: field 'missing_income' must be one of {', '.join(map(repr, MISSING_INCOME_RULES))}, "
            f"got {_shown(missing_income)}"
        )
    negative_incomes = raw.get("negative_incomes", "refuse")
    if not isinstance(negative_incomes, str) or negative_incomes not in NEGATIVE_INCOME_RULES:
        raise PlanError(
            "plan: field 'negative_incomes' must be one of "
            f"{', '.join(map(repr, NEGATIVE_INCOME_RULES))}, got {_shown(negative_incomes)}"
        )
    level = raw.get("level", 0.95)
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.5 <= float(level) < 1.0:
        raise PlanError(
            f"plan: field 'level' (the published intervals' level) must be a number in [0.5, 1), got {_shown(level)}"
        )
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise PlanError(f"plan: field 'description' must be a string, got {_shown(description)}")
    if len(description) > MAX_DESCRIPTION_CHARS:
        raise PlanError(
            f"plan: field 'description' must be at most {MAX_DESCRIPTION_CHARS:,} characters (it is "
            f"copied into the release record and every ledger row), got {len(description):,}"
        )
    stats = raw.get("statistics")
    if not isinstance(stats, list) or not stats:
        raise PlanError("plan: field 'statistics' is required: at least one [[statistics]] table")
    if len(stats) > MAX_STATISTICS:
        raise PlanError(
            f"plan: at most {MAX_STATISTICS:,} statistics per plan, got {len(stats):,} "
            "(split the release into several plans)"
        )
    specs = tuple(_check_statistic(i, s) for i, s in enumerate(stats, start=1))
    seen_names: set[str] = set()
    for s in specs:
        if s.name in seen_names:
            first = next(t for t in specs if t.name == s.name)
            raise _fail(first.where, "name", f"{s.name!r} is used by two statistics (it names the output files)")
        seen_names.add(s.name)
        if income in s.by:
            raise _fail(s.where, "by", f"contains the income column {income!r}")
        if unit is not None and unit in s.columns():
            raise _fail(s.where, "by", f"uses the privacy unit {unit!r} (cells of one person are not protected)")
    plan = ReleasePlan(
        dataset=dataset,
        income=income,
        cap_epsilon=cap,
        statistics=specs,
        privacy_unit=unit,
        max_rows_per_person=m,
        bounding_seed=int(seed),
        description=description,
        cap_delta=cap_delta,
        missing_income=missing_income,
        population=population,
        negative_incomes=negative_incomes,
        level=float(level),
    )
    plan = replace(plan, **_cell_settings(raw, specs, base_dir))
    noise_delta = plan.noise_delta
    if noise_delta > 0 and cap_delta is None:
        raise PlanError(
            f"plan: field 'cap_delta' is required when a Gini uses noise = \"laplace\" (its statistics "
            f"spend delta = {noise_delta:g} in total; cap_delta is the ledger account's delta cap)"
        )
    if noise_delta > 0 and cap_delta is not None and noise_delta > cap_delta * (1 + 1e-12):
        raise PlanError(
            f"plan: the Gini statistics with noise = \"laplace\" spend delta = {noise_delta:g} in total, "
            f"more than cap_delta = {cap_delta:g}"
        )
    for s in specs:
        if s.epsilon > cap * (1 + 1e-12):
            raise _fail(s.where, "epsilon", f"{s.epsilon:g} exceeds the plan's cap_epsilon {cap:g}")
    if plan.total_epsilon > cap * (1 + 1e-12):
        raise PlanError(
            f"plan: the statistics cost epsilon = {plan.total_epsilon:g} in total (sequential "
            f"composition), more than cap_epsilon = {cap:g}"
        )
    selection = math.fsum(plan.statistic_selection_delta(s) for s in specs)
    delta_cap = cap_delta if cap_delta is not None else 1e-9  # a new account's default delta cap (engines.execute)
    if selection > 0 and noise_delta + selection > delta_cap * (1 + 1e-12):
        raise PlanError(
            f"plan: the DP cell selections spend delta = {selection:g} (selection_delta per statistic "
            f"without declared [keys]), more than the delta cap {delta_cap:g}; declare the cells in "
            "[keys], lower selection_delta or raise cap_delta"
        )
    return plan


def parse_plan(text: str | bytes, base_dir: str | os.PathLike | None = None) -> ReleasePlan:
    """Parse and validate a plan from TOML text (``base_dir``: where a relative ``[keys] file`` is read from)."""
    if _toml is None:  # pragma: no cover
        raise PlanError("reading plans needs Python 3.11+ (tomllib) or the 'tomli' package")
    if len(text) > MAX_PLAN_BYTES:
        raise PlanError(
            f"the plan is {len(text):,} bytes; a plan file is at most {MAX_PLAN_BYTES:,} bytes "
            f"(at most {MAX_STATISTICS:,} statistics, a description of at most "
            f"{MAX_DESCRIPTION_CHARS:,} characters)"
        )
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise PlanError("the plan file is not UTF-8 text") from None
    if not isinstance(text, str):
        raise TypeError(f"a plan is TOML text (str or bytes), got {type(text).__name__}")
    try:
        raw = _toml.loads(text)
    except _toml.TOMLDecodeError as exc:
        raise PlanError(f"the plan is not valid TOML: {exc}") from None
    return plan_from_dict(raw, base_dir)


def load_plan(path: str | os.PathLike) -> ReleasePlan:
    """Read and validate a plan file."""
    p = Path(path)
    if not p.is_file():
        raise PlanError(f"no plan file at {str(p)!r}")
    size = p.stat().st_size
    if size > MAX_PLAN_BYTES:  # refused before reading it into memory
        raise PlanError(
            f"the plan file {str(p)!r} is {size:,} bytes; a plan file is at most {MAX_PLAN_BYTES:,} "
            f"bytes (at most {MAX_STATISTICS:,} statistics)"
        )
    return parse_plan(p.read_bytes(), p.parent)


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------


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
    if plan.cell_sizes == "public" or any(s.by or s.kind == "relative_risk" for s in plan.statistics):
        out["cell_sizes"] = plan.cell_sizes  # written wherever there are cells: is n exact? a reader's first question
    from .cell_keys import DEFAULT_N_EPSILON, DEFAULT_SELECTION_DELTA

    if plan.n_epsilon != DEFAULT_N_EPSILON:
        out["n_epsilon"] = plan.n_epsilon
    if plan.selection_delta != DEFAULT_SELECTION_DELTA:
        out["selection_delta"] = plan.selection_delta
    if plan.small_cell_threshold != 10:
        out["small_cell_threshold"] = plan.small_cell_threshold
    if plan.level != 0.95:  # the default is not written: plans written before the field read the same
        out["level"] = plan.level
    if plan.keys is not None:
        out["keys"] = plan.keys.to_dict()
    out["statistics"] = [s.to_dict() for s in plan.statistics]
    return out


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if not math.isfinite(v):
            raise PlanError(f"cannot write a non-finite number ({v}) into a plan")
        if v.is_integer() and abs(v) < 1e15:
            return f"{v:.1f}"
        return repr(v)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise PlanError(f"cannot write {type(value).__name__} into a plan")


def _toml_key(key: str) -> str:
    return key if re.match(r"^[A-Za-z0-9_-]+$", key) else json.dumps(key)


def plan_to_toml(plan: ReleasePlan | Mapping[str, Any]) -> str:
    """TOML text of a plan (validated first), readable by :func:`parse_plan`; comments explain the fields."""
    if not isinstance(plan, ReleasePlan):
        plan = plan_from_dict(plan)
    data = plan_to_dict(plan)
    comments = {
        "version": "plan format version",
        "population": "the registered population whose ledger budget pays (dpcore ledger population add)",
        "dataset": "the ledger account (id and label)",
        "income": "income column",
        "cap_epsilon": "the dataset's total budget in the ledger",
        "cap_delta": "the ledger account's delta cap (set when the account is created)",
        "privacy_unit": "one person = one value of this column",
        "max_rows_per_person": "rows kept per person (a seeded uniform sample)",
        "cell_sizes": "\"noisy\": n is a noisy count (cells from [keys] or DP-selected); \"public\": exact n",
        "n_epsilon": "epsilon of each statistic's noisy cell sizes, on top of its epsilon",
        "selection_delta": "delta of each DP cell selection (statistics whose cells are not in [keys])",
        "missing_income": "a missing income: 'lower' (kept in n at the public lower bound) or 'refuse'",
        "level": "level of the interval published next to every released value",
        "negative_incomes": "a negative income: 'refuse', 'clip' (to the lower bound) or 'drop' (as missing)",
    }
    lines = [
        "# dpcore release plan: python -m dpcore release THIS_FILE --data SOURCE --out DIR",
        f"# total epsilon {plan.total_epsilon:g} of cap {plan.cap_epsilon:g} (docs/plan_format.md)",
    ]
    for key, value in data.items():
        if key in ("statistics", "keys"):
            continue
        note = f"  # {comments[key]}" if key in comments else ""
        lines.append(f"{_toml_key(key)} = {_toml_value(value)}{note}")
    if "keys" in data:  # the public cells: a table before the statistics
        lines.append("")
        lines.append("[keys]")
        for key, value in data["keys"].items():
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    for stat in data["statistics"]:
        lines.append("")
        lines.append("[[statistics]]")
        for key, value in stat.items():
            lines.append(f"{_toml_key(key)} = {_toml_value(value)}")
    return "\n".join(lines) + "\n"


def write_plan(plan: ReleasePlan | Mapping[str, Any], path: str | os.PathLike | None = None) -> str:
    """Validate and write ``plan`` as TOML to ``path`` (atomically) and return the text; ``path=None``
    only returns the text (e.g. for a download button)."""
    text = plan_to_toml(plan)
    if path is not None:
        p = Path(path)
        tmp = p.with_name(f".{p.name}.tmp-{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, p)
    return text


# ---------------------------------------------------------------------------------------------
# From the planner page
# ---------------------------------------------------------------------------------------------


def _from_planned(stat: Any, epsilon: float, by: Sequence[str]) -> dict[str, Any]:
    """Map a :class:`dpcore.planner.PlannedStatistic` to a plan statistic (dict form)."""
    kind = getattr(stat, "kind", None)
    if kind == "gini":
        noise_name = getattr(stat, "noise", "cauchy")
        if noise_name == "cauchy":
            return {
                "kind": "gini",
                "by": [],
                "epsilon": epsilon,
                "lower": stat.lower,
                "upper": stat.upper,
                "gamma": stat.gamma,
                "calibration": stat.calibration,
            }
        if noise_name not in GINI_PLAN_NOISES:
            raise PlanError(
                f"the Gini with noise {noise_name!r} cannot be released (no floating-point-safe sampler); "
                "plan it with the Laplace or the generalized Cauchy noise to write it into a plan"
            )
        return {
            "kind": "gini",
            "by": [],
            "epsilon": epsilon,
            "lower": stat.lower,
            "upper": stat.upper,
            "noise": noise_name,
            "delta": float(stat.delta),
            "calibration": stat.calibration,
        }
    if kind == "mean":
        return {"kind": "mean", "by": [], "epsilon": epsilon, "lower": stat.lower, "upper": stat.upper}
    if kind == "group_means":
        if not by:
            raise PlanError("a 'mean income by group' statistic needs the group column name (by=[...])")
        return {"kind": "mean", "by": list(by), "epsilon": epsilon, "lower": stat.lower, "upper": stat.upper}
    if kind in ("percentiles", "group_medians"):  # median income by group = percentiles with q = 50
        from . import percentiles

        if not by:
            raise PlanError("a percentiles-by-cell statistic needs the cell column names (by=[...])")
        if getattr(stat, "relation", "replace") != "replace":
            raise PlanError(
                "release plans use the replace-one relation; the add/remove percentiles setting "
                "cannot be written into a plan"
            )
        if getattr(stat, "method", "histogram") == "exponential":
            grid = np.asarray(stat.edges, dtype=float)
            fine = percentiles.fine_candidate_grid()
            same = grid.shape == fine.shape and np.array_equal(grid, fine)
            return {
                "kind": "percentiles",
                "by": list(by),
                "epsilon": epsilon,
                "method": "exponential",
                "candidates": "pseo-fine" if same else [float(v) for v in grid],
                "q": [float(v) for v in stat.q],
            }
        edges = stat.edges if getattr(stat, "edges", None) is not None else percentiles.PSEO_BIN_EDGES
        edges = np.asarray(edges, dtype=float)
        same = edges.shape == percentiles.PSEO_BIN_EDGES.shape and np.array_equal(edges, percentiles.PSEO_BIN_EDGES)
        return {
            "kind": "percentiles",
            "by": list(by),
            "epsilon": epsilon,
            "bins": "pseo" if same else [float(v) for v in edges],
            "q": [float(v) for v in stat.q],
        }
    raise PlanError(
        f"the planner statistic {getattr(stat, 'name', kind)!r} (kind {kind!r}) has no release-plan "
        "form; give it as a dict (kind = gini | percentiles | mean | relative_risk)"
    )


def plan_from_planner_choices(
    kinds: Sequence[str],
    statistic_for: Any,
    allocation: Mapping[str, float],
    *,
    dataset: str,
    income: str,
    cap_epsilon: float,
    group_column: str | None = None,
    params_for: Any = None,
    keys: Mapping[str, Any] | None = None,
    cell_sizes: str = "noisy",
    negative_incomes: str = "refuse",
) -> tuple[ReleasePlan, list[str]]:
    """The planner page's choices as a plan: ``(plan, left_out)``.

    ``kinds``: the planner's statistic kinds; ``statistic_for(kind)``: its PlannedStatistic;
    ``allocation[kind]``: its epsilon; ``group_column``: the real data's group column (cells of the
    grouped statistics); ``params_for(kind)``: the page's settings (dict) -- the ratio needs its
    ``threshold``, ``group_x``, ``group_y`` (-> ``relative_risk`` with ``outcome_below``).
    Statistics that have no plan form (a count, or a grouped statistic without a group column) are
    left out and named in ``left_out`` (the page says so). ``cap_epsilon`` is at least the plan's total.
    """
    items: list[Any] = []
    left_out: list[str] = []
    by = [group_column] if group_column else []
    for kind in kinds:
        eps = float(allocation[kind])
        if kind == "ratio":
            params = dict(params_for(kind)) if params_for is not None else {}
            if not group_column or not {"threshold", "group_x", "group_y"} <= set(params):
                left_out.append(f"{kind}: needs a group column and the two groups")
                continue
            items.append(
                {
                    "kind": "relative_risk",
                    "epsilon": eps,
                    "group": group_column,
                    "exposed": str(params["group_x"]),
                    "reference": str(params["group_y"]),
                    "outcome_below": float(params["threshold"]),
                }
            )
            continue
        if kind in ("percentiles", "group_medians", "group_means") and not group_column:
            left_out.append(f"{kind}: needs a group (cell) column in the data")
            continue
        try:
            items.append(_from_planned(statistic_for(kind), eps, by))
        except PlanError as exc:
            left_out.append(f"{kind}: {exc}")
    if not items:
        raise PlanError("none of the chosen statistics can be written into a release plan: " + "; ".join(left_out))
    from .cell_keys import DEFAULT_N_EPSILON

    noisy_cells = sum(1 for i in items if cell_sizes != "public" and (i.get("by") or i["kind"] == "relative_risk"))
    total = math.fsum(float(i["epsilon"]) for i in items) + noisy_cells * DEFAULT_N_EPSILON
    plan = plan_from_planner(
        items,
        dataset=dataset,
        income=income,
        cap_epsilon=max(float(cap_epsilon), total),
        keys=keys,
        cell_sizes=cell_sizes,
        negative_incomes=negative_incomes,
    )
    return plan, left_out


def plan_from_planner(
    statistics: Iterable[Any],
    *,
    dataset: str,
    income: str,
    cap_epsilon: float,
    by: Sequence[str] = (),
    privacy_unit: str | None = None,
    max_rows_per_person: int | None = None,
    bounding_seed: int = 0,
    description: str = "",
    keys: Mapping[str, Any] | None = None,
    cell_sizes: str = "noisy",
    negative_incomes: str = "refuse",
) -> ReleasePlan:
    """Build a validated plan from the planner page's choices.

    ``statistics``: items of either form

    * ``(planned_statistic, epsilon)`` with a :class:`dpcore.planner.PlannedStatistic` (what
      ``planner.make_statistic`` returns and ``release.make_release`` takes): gini, mean,
      group_means (-> mean by ``by``) and percentiles (cells = ``by``) are translated;
    * a dict in the plan-file form (``{"kind": "relative_risk", "epsilon": 0.5, "group": ..., ...}``).

    ``by``: the column names of the planner's group/cell column(s) in the real data (the planner only
    knows the planning data). Write the result with :func:`write_plan` (``write_plan(plan)`` returns
    the TOML text for a download button).

    ``keys``: the public cells, the plan's ``[keys]`` table (``{"state": ["AK", "CA"]}`` or ``{"file":
    "keys.csv"}``); ``cell_sizes``: "noisy" (the default: noisy n, cells from ``keys`` or selected with DP) or
    "public" (the PSEO assumption). Both are written into the plan (:mod:`dpcore.cell_keys`).
    """
    items = []
    for item in statistics:
        if isinstance(item, Mapping):
            items.append(dict(item))
        elif isinstance(item, (tuple, list)) and len(item) == 2:
            items.append(_from_planned(item[0], float(item[1]), list(by)))
        else:
            raise PlanError(f"each planner statistic must be (statistic, epsilon) or a dict, got {item!r}")
    raw: dict[str, Any] = {
        "version": PLAN_VERSION,
        "dataset": dataset,
        "income": income,
        "cap_epsilon": cap_epsilon,
        "statistics": items,
        "cell_sizes": cell_sizes,
        "negative_incomes": negative_incomes,
    }
    if keys is not None:
        raw["keys"] = dict(keys)
    noise_deltas = [
        i.get("delta", DEFAULT_GINI_NOISE_DELTA)
        for i in items
        if i.get("kind") == "gini" and i.get("noise") == "laplace"
    ]
    if (
        noise_deltas and all(_is_number(d) for d in noise_deltas)
    ):  # (a bad delta: validation names it)  # the account's delta cap: what the plan spends, as cap_epsilon is at least its epsilon
        raw["cap_delta"] = math.fsum(noise_deltas)
    if description:
        raw["description"] = description
    if privacy_unit is not None:
        raw["privacy_unit"] = privacy_unit
        raw["max_rows_per_person"] = max_rows_per_person
        raw["bounding_seed"] = bounding_seed
    return plan_from_dict(raw)
