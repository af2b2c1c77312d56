"""Validation of a release plan: :func:`plan_from_dict` (a dict, what ``tomllib`` returns), :func:`parse_plan`
(TOML text) and :func:`load_plan` (a file). Errors are :class:`~dpcore.plan.model.PlanError` naming the statistic
(index from 1 and kind) and the field."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from ..kinds import PLAN_KINDS
from ..validation import DPInputError
from .model import (
    BIN_SCHEMES,
    DEFAULT_GINI_NOISE_DELTA,
    GINI_PLAN_NOISES,
    KINDS,
    MAX_ABS_INCOME_BOUND,
    MAX_BINS,
    MAX_BY,
    MAX_COLUMN_NAME_CHARS,
    MAX_DESCRIPTION_CHARS,
    MAX_PLAN_BYTES,
    MAX_STATISTICS,
    MISSING_INCOME_RULES,
    NEGATIVE_INCOME_RULES,
    PERCENTILE_METHODS,
    PLAN_VERSION,
    PlanError,
    ReleasePlan,
    StatisticSpec,
)

_toml: ModuleType | None
if sys.version_info >= (3, 11):
    import tomllib as _toml
else:  # pragma: no cover - Python 3.10: tomli, a dependency there (pyproject.toml)
    try:  # a venv of a newer Python lacks tomli, so mypy sees an untyped module redefining the name
        import tomli as _toml  # type: ignore[no-redef]
    except ModuleNotFoundError:
        _toml = None

_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
#: fields allowed per kind (besides the common ones)
_COMMON = ("kind", "by", "epsilon", "name", "half_width", "relative_half_width")
_KIND_FIELDS = {kind.name: kind.fields for kind in PLAN_KINDS.values()}
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
    "planning_epsilon",
)


# ---------------------------------------------------------------------------------------------
# Validation helpers
# ---------------------------------------------------------------------------------------------


def _fail(where: str, field_name: str, message: str) -> PlanError:
    return PlanError(f"{where}: field '{field_name}' {message}")


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)


def _number(value: Any, where: str, name: str, *, positive: bool = False, minimum: float | None = None) -> float:
    if not is_number(value):
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
    from .. import percentiles

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
    from .. import percentiles

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


#: characters of a table's name (a file name is at most 255 bytes on the usual file systems; the simulation prefix
#: and the ``.parquet`` suffix come on top)
MAX_TABLE_NAME_CHARS = 200


def _margins_fields(raw: Mapping, where: str, by: tuple[str, ...], name: str, method: str) -> dict[str, Any]:
    """``margins`` and ``epsilon_split`` of a percentiles statistic (:func:`dpcore.consistency.check_margins`:
    nested coarser groupings of ``by``, ``[]`` the whole table) and its levels' table names."""
    from ..consistency import check_margins
    from .model import margin_table_name

    if "margins" not in raw:
        if "epsilon_split" in raw:
            raise _fail(where, "epsilon_split", "splits epsilon over the levels of 'margins'; give margins too")
        return {}
    if method != "histogram":
        raise _fail(
            where,
            "margins",
            "applies to method = \"histogram\" (the levels' histograms are made consistent; the exponential "
            "mechanism releases no histogram)",
        )
    if not by:
        raise _fail(where, "margins", "needs 'by' columns: a margin is a coarser grouping of the statistic's cells")
    raw_margins = raw["margins"]
    if not isinstance(raw_margins, list) or any(not isinstance(m, list) for m in raw_margins):
        raise _fail(
            where,
            "margins",
            f"must be a list of lists of 'by' columns, e.g. [[\"state\"], []]; got {_shown(raw_margins)}",
        )
    try:
        margins = check_margins(by, raw_margins)
    except DPInputError as exc:
        raise _fail(where, "margins", f"is refused: {exc}") from None
    names = [name, *(margin_table_name(name, cols) for cols in margins)]
    if len(set(names)) != len(names):
        raise _fail(where, "margins", f"two levels would write the same table name ({names}); rename a column")
    if any(len(n) > MAX_TABLE_NAME_CHARS for n in names):
        raise _fail(where, "margins", f"a level's table name is longer than {MAX_TABLE_NAME_CHARS} characters")
    out: dict[str, Any] = {"margins": margins}
    if "epsilon_split" in raw:
        split = raw["epsilon_split"]
        if not isinstance(split, list) or len(split) != len(names):
            raise _fail(
                where,
                "epsilon_split",
                f"must list {len(names)} positive weights, one per level (the cells first, then each margin from "
                f"the finest), got {_shown(split)}",
            )
        weights = tuple(_number(w, where, "epsilon_split", positive=True) for w in split)
        if max(weights) / min(weights) > 1e6:
            raise _fail(
                where, "epsilon_split", f"weights more than 1e6 apart leave a level without budget: {_shown(split)}"
            )
        out["epsilon_split"] = weights
    return out


# complexity above the cap: a flat list of independent field checks per statistic kind
def _targets(raw: Mapping, where: str) -> dict[str, Any]:
    """The statistic's accuracy target for ``dpcore plan``: ``half_width`` (> 0, the statistic's unit) or
    ``relative_half_width`` (in (0, 10], a share of the value), at most one of them."""
    out: dict[str, Any] = {}
    if "half_width" in raw and "relative_half_width" in raw:
        raise _fail(where, "relative_half_width", "and 'half_width' are two targets: give one of them")
    if "half_width" in raw:
        out["half_width"] = _number(raw["half_width"], where, "half_width", positive=True)
    if "relative_half_width" in raw:
        r = _number(raw["relative_half_width"], where, "relative_half_width", positive=True)
        if r > 10:
            raise _fail(where, "relative_half_width", f"is a share of the value (0.05 = 5%), at most 10, got {r:g}")
        out["relative_half_width"] = r
    return out


def _check_statistic(index: int, raw: Any, solving: bool = False) -> StatisticSpec:  # noqa: C901
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
    targets = _targets(raw, where)
    if "epsilon" not in raw:
        if not targets:
            raise _fail(
                where,
                "epsilon",
                "is required (the privacy cost of this statistic, > 0), or give a target (half_width or "
                "relative_half_width) and solve the epsilon with 'python -m dpcore plan'",
            )
        if not solving:
            raise _fail(
                where,
                "epsilon",
                "is still to be solved from the statistic's target: run 'python -m dpcore plan PLAN.toml --data "
                "SOURCE --out SOLVED.toml' and release SOLVED.toml",
            )
        epsilon = math.nan
    else:
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
    spec = dict(index=index, kind=kind, epsilon=epsilon, by=by, name=name, **targets)
    if kind == "percentiles":
        spec.update(_percentiles_fields(raw, where))
        spec.update(_margins_fields(raw, where, by, name, spec["method"]))
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
                from .. import noise

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
    from .. import cell_keys

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
def plan_from_dict(  # noqa: C901
    raw: Mapping[str, Any], base_dir: str | os.PathLike | None = None, *, solving: bool = False
) -> ReleasePlan:
    """Validate a plan given as a dict (what ``tomllib`` returns); raise :class:`PlanError` naming the field.
    ``base_dir``: the folder a relative ``[keys] file`` is read from (the plan file's folder). ``solving``: the
    plan of ``python -m dpcore plan``, whose statistics with a target may lack their ``epsilon`` (NaN until
    solved: :attr:`StatisticSpec.solved`); the epsilons' checks against the cap are then left to the solved plan,
    which is validated again before it is written."""
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
    specs = tuple(_check_statistic(i, s, solving) for i, s in enumerate(stats, start=1))
    seen_names: set[str] = set()
    for s in specs:
        for table_name in s.level_names():  # a margin's table name too: one file per name
            if table_name in seen_names:
                first = next(t for t in specs if table_name in t.level_names())
                raise _fail(
                    first.where, "name", f"{table_name!r} is used by two statistics (it names the output files)"
                )
            seen_names.add(table_name)
        if income in s.by:
            raise _fail(s.where, "by", f"contains the income column {income!r}")
        if unit is not None and unit in s.columns():
            raise _fail(s.where, "by", f"uses the privacy unit {unit!r} (cells of one person are not protected)")
    planning_epsilon = raw.get("planning_epsilon")
    if planning_epsilon is not None:
        planning_epsilon = _number(planning_epsilon, "plan", "planning_epsilon", positive=True)
        if planning_epsilon > cap:
            raise PlanError(
                f"plan: field 'planning_epsilon' ({planning_epsilon:g}) is charged to the population once and must "
                f"fit its cap_epsilon ({cap:g})"
            )
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
        planning_epsilon=planning_epsilon,
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
    if not all(s.solved for s in specs):  # a plan to solve (``solving``): its epsilons are checked once solved
        return plan
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


def parse_plan(text: str | bytes, base_dir: str | os.PathLike | None = None, *, solving: bool = False) -> ReleasePlan:
    """Parse and validate a plan from TOML text (``base_dir``: where a relative ``[keys] file`` is read from;
    ``solving``: see :func:`plan_from_dict`)."""
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
    return plan_from_dict(raw, base_dir, solving=solving)


def load_plan(path: str | os.PathLike, *, solving: bool = False) -> ReleasePlan:
    """Read and validate a plan file (``solving``: see :func:`plan_from_dict`)."""
    p = Path(path)
    if not p.is_file():
        raise PlanError(f"no plan file at {str(p)!r}")
    size = p.stat().st_size
    if size > MAX_PLAN_BYTES:  # refused before reading it into memory
        raise PlanError(
            f"the plan file {str(p)!r} is {size:,} bytes; a plan file is at most {MAX_PLAN_BYTES:,} "
            f"bytes (at most {MAX_STATISTICS:,} statistics)"
        )
    return parse_plan(p.read_bytes(), p.parent, solving=solving)
