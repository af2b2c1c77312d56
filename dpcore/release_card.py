"""The release card: what an agency publishes beside the tables, and the release as a registry entry.

Three files, all computed from the release record and the released tables alone (post-processing of DP
outputs and public parameters; nothing here sees the confidential data):

* ``release_card.html`` (:func:`release_card_html`): one self-contained page (inline CSS, no script, no
  external URL; a Content-Security-Policy of ``default-src 'none'`` forbids any fetch, so it opens offline and
  cannot run anything a label smuggled in). Every text taken from the record or the tables is escaped
  (``html.escape``): cell labels and column names come from the user's data.
* ``release_card.md`` (:func:`release_card_markdown`): the same content in Markdown (HTML-escaped and
  Markdown-escaped, so a label cannot open a link, a table cell or a tag in a renderer).
* ``opendp_registry.yaml`` (:func:`opendp_registry_entry`): the release as an entry of the OpenDP
  Differential Privacy Deployments Registry, so agencies can publish their epsilons there.

What the card shows: every released value with its interval when the table has ``<v>_lower`` / ``<v>_upper``
columns, with honest digits (:func:`card_number`: printed exactly as published when the release rounded its
tables itself, its statistics' ``interval_level`` says so; else rounded here to the step of
:func:`dpcore.intervals.honest_grid`, between 1/50 and 1/20 of the interval's width; a release's own step is cut
from a public width, at most 1/20 of it: :mod:`dpcore.published`), so no digit is finer than the noise allows;
the privacy statement in plain words (who is protected, the unit, epsilon and delta per statistic and in total, what is public); the
methods with their papers; the date and the software (dpcore and OpenDP versions, read from the record).

Neighbouring data sets give cards that differ only in the released numbers (and the intervals and rounding
steps computed from them): every other text is a function of the plan and public parameters
(tests/test_release_card.py).
"""

from __future__ import annotations

import html
import json
import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from . import intervals as intervals_lib
from .errors import DPInputError
from .kinds import PLANNER_KINDS

__all__ = [
    "CARD_HTML",
    "CARD_MARKDOWN",
    "REGISTRY_YAML",
    "CARD_FILES",
    "SIMULATION_FILE_PREFIX",
    "card_file_names",
    "MAX_CARD_ROWS",
    "CardNumber",
    "card_number",
    "release_card_html",
    "release_card_markdown",
    "opendp_registry_entry",
    "write_release_card",
    "card_inputs_from_app_records",
    "card_bytes_estimate",
    "REGISTRY_PLACEHOLDER",
]

CARD_HTML = "release_card.html"
CARD_MARKDOWN = "release_card.md"
REGISTRY_YAML = "opendp_registry.yaml"
CARD_FILES = (CARD_HTML, CARD_MARKDOWN, REGISTRY_YAML)
#: a simulation's card files start with this, as its tables' files do: nothing of a simulation passes for a release
SIMULATION_FILE_PREFIX = "SIMULATION_"

#: rows of one statistic shown on the card; the rest are in the statistic's CSV (a card of 60,000 cells would
#: be a 15 MB page nobody reads; the tables hold every cell)
MAX_CARD_ROWS = 1000

#: the marker of a registry field only the publishing agency can fill
REGISTRY_PLACEHOLDER = "FILL IN"

#: columns of a released table that are neither cell labels nor released numbers
_NOT_VALUES = {"simulation"}
#: published columns a reader of the card does not need beside the statistics (they are in the table files): the
#: noisy histogram a percentile and its interval are read from, the Gini's DP bound on its smooth sensitivity
_AUXILIARY_PREFIXES = ("noisy_bin_", "smooth_sensitivity_bound")
#: columns holding a cell's number of rows (exact when cell sizes are public, noisy otherwise)
_SIZE_COLUMNS = {"n", "n_exposed", "n_reference"}

#: per statistic kind: (what it is, the method in one sentence, the paper)
METHODS: dict[str, tuple[str, str, str]] = {
    "gini": (
        "Gini index",
        "the Gini index of each cell's incomes clipped to public bounds, plus noise scaled to "
        "its smooth sensitivity (a noise scale that depends on the data and is not published)",
        "W. Lan and J. P. Reiter (2025), Differentially Private Computation of the Gini Index for Income Inequality",
    ),
    "percentiles": (
        "earnings percentiles",
        "a histogram of each cell's incomes over public bins, each count with "
        "discrete Laplace noise; the percentiles are read off the noisy histogram",
        "A. Foote, A. Machanavajjhala and K. McKinney (2019), Releasing Earnings Distributions using "
        "Differential Privacy: Disclosure Avoidance System for Post-Secondary Employment Outcomes "
        "(PSEO), Journal of Privacy and Confidentiality",
    ),
    "mean": (
        "mean income",
        "the sum of each cell's incomes clipped to public bounds, with Laplace noise, divided "
        "by the cell's number of rows",
        "L. Rosenblatt, J. Stoyanovich and C. Musco (2023), A Simple and Practical Method for Reducing the "
        "Disparate Impact of Differential Privacy, arXiv:2312.11712",
    ),
    "relative_risk": (
        "relative risk",
        "the two case counts (exposed and reference group), each with noise; the "
        "relative risk is their ratio over the group sizes",
        "T. Shoham and K. Ligett (2025), Differentially Private Ratio Statistics, arXiv:2505.20351",
    ),
    "percentiles_exponential": (
        "earnings percentiles",
        "each percentile chosen among public candidate values by the exponential mechanism "
        "(report noisy max) on each cell's histogram over the public candidate grid",
        "F. McSherry and K. Talwar (2007), Mechanism Design via Differential Privacy, FOCS; A. Smith (2011), "
        "Privacy-preserving Statistical Estimation with Optimal Convergence Rates, STOC",
    ),
    "count": (
        "count",
        "a count with discrete Laplace noise",
        "C. Dwork, F. McSherry, K. Nissim and A. Smith (2006), Calibrating Noise to Sensitivity in Private "
        "Data Analysis, TCC",
    ),
}
#: the app's statistic kinds, by the method they use
_KIND_METHOD = {k.name: k.plan_kind for k in PLANNER_KINDS.values() if k.plan_kind not in (None, k.name)}


def _method_key(kind: str, plan_statistic: Mapping[str, Any]) -> str:
    """The :data:`METHODS` entry of a statistic: its kind's, or the plan's ``method`` variant of it."""
    key = _KIND_METHOD.get(kind, kind)
    variant = f"{key}_{plan_statistic.get('method')}"
    return variant if variant in METHODS else key


# ---------------------------------------------------------------------------------------------
# Numbers, rounded honestly
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardNumber:
    """One released number as the card shows it.

    ``value``: the released value rounded to ``step`` (None when not finite: an undefined ratio); ``lower`` /
    ``upper``: the interval rounded outwards to the same step (None without an interval); ``step``: the public
    rounding step (None when the value is shown as the table has it: no interval to set the digits);
    ``text`` / ``interval_text``: what the card prints."""

    value: float | None
    lower: float | None
    upper: float | None
    step: float | None
    text: str
    interval_text: str


def _decimals(step: float) -> int:
    return max(0, -math.floor(math.log10(step) + 1e-12))


def _fmt(x: float, decimals: int) -> str:
    return f"{x + 0.0:,.{decimals}f}"  # + 0.0: never "-0"


def _as_float(x: Any) -> float | None:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _exact_decimals(*xs: float) -> int:
    """The fewest decimals (at most 12) that write every x exactly: how a number already rounded to a public grid
    is printed, without adding or dropping a digit."""
    for d in range(13):
        if all(abs(round(x, d) - x) <= 1e-9 * max(1.0, abs(x)) for x in xs):
            return d
    return 12


def _one_sided(lo: float | None, hi: float | None, text: Any) -> str:
    if lo is not None and hi is None:
        return f"{text(lo)} or more"
    if hi is not None and lo is None:
        return f"up to {text(hi)}"
    return "not available"


def card_number(
    value: Any, lower: Any = None, upper: Any = None, *, integer: bool = False, published: bool = False
) -> CardNumber:
    """``value`` (and its interval [lower, upper]) as the card prints it.

    ``published``: the release already rounded the value and its interval to public grids (its tables carry
    honest digits, :mod:`dpcore.published`): the card prints them exactly as the table has them, with the fewest
    decimals that write them, and never rounds them again (another grid would change a published number).

    Otherwise, with a finite interval of positive width: the step is :func:`dpcore.intervals.honest_grid` (1, 2
    or 5 x 10^k between width/50 and width/20), the value is rounded to it
    (:func:`~dpcore.intervals.round_to_grid`) and the interval outwards (:func:`~dpcore.intervals.round_interval`,
    so rounding never loses coverage): the card never shows a digit the noise makes meaningless.
    Post-processing of published numbers only.

    Without an interval (or a zero-width one): whole numbers (``integer``, or a value that is whole) as they
    are, others to 6 significant digits; a one-sided interval (an open top bin) prints as "X or more"."""
    v, lo, hi = _as_float(value), _as_float(lower), _as_float(upper)
    if v is None:
        return CardNumber(None, None, None, None, "undefined", "")
    two_sided = lo is not None and hi is not None and hi > lo
    if published:
        ends = [x for x in (lo, hi) if x is not None]
        d = _exact_decimals(v, *ends)
        step = intervals_lib.honest_grid(lo, hi) if two_sided and lo is not None and hi is not None else None
        interval = (
            f"{_fmt(lo, d)} to {_fmt(hi, d)}"
            if lo is not None and hi is not None
            else _one_sided(lo, hi, lambda x: _fmt(x, d))
            if ends
            else ""
        )
        return CardNumber(v, lo, hi, step, _fmt(v, d), interval)
    if two_sided and lo is not None and hi is not None:
        step = intervals_lib.honest_grid(lo, hi)
        d = _decimals(step)
        rv = float(intervals_lib.round_to_grid(v, step))
        rlo, rhi = intervals_lib.round_interval(lo, hi, step)
        return CardNumber(rv, rlo, rhi, step, _fmt(rv, d), f"{_fmt(rlo, d)} to {_fmt(rhi, d)}")
    text = f"{int(round(v)):,}" if integer or float(v).is_integer() else f"{v:,.6g}"
    interval = _one_sided(lo, hi, lambda x: f"{x:,.6g}") if (lo is None) != (hi is None) else ""
    return CardNumber(v, lo, hi, None, text, interval)


# ---------------------------------------------------------------------------------------------
# The card's content, once, for both renderers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Column:
    name: str
    interval: bool  # the table has <name>_lower and <name>_upper
    size: bool  # a cell size (n) column


@dataclass(frozen=True)
class _Statistic:
    name: str
    kind: str
    by: tuple[str, ...]
    epsilon: float
    delta: float
    columns: tuple[_Column, ...]
    rows: tuple[tuple[tuple[str, ...], tuple[CardNumber, ...]], ...]  # (labels, numbers) per shown row
    cells: int
    noise: str
    measurement: str
    labelled: bool = False  # rows are labelled numbers (the app's releases), not cells of 'by' columns
    auxiliary: tuple[str, ...] = ()  # published columns left to the table file
    published: bool = False  # the release rounded the values itself (honest digits in the tables)
    method: str = ""  # the METHODS entry


def _value_columns(table: pd.DataFrame, by: Sequence[str]) -> tuple[_Column, ...]:
    names = [str(c) for c in table.columns]
    bounds = {c for c in names for base in names if c in (f"{base}_lower", f"{base}_upper") and base != c}
    out = []
    for c in names:
        if c in by or c in _NOT_VALUES or c in bounds or c.startswith(_AUXILIARY_PREFIXES):
            continue
        out.append(_Column(c, f"{c}_lower" in names and f"{c}_upper" in names, c in _SIZE_COLUMNS))
    return tuple(out)


def _auxiliary(table: pd.DataFrame) -> tuple[str, ...]:
    return tuple(str(c) for c in table.columns if str(c).startswith(_AUXILIARY_PREFIXES))


def _table_rows(
    table: pd.DataFrame, by: Sequence[str], columns: Sequence[_Column], published: bool
) -> tuple[tuple[tuple[str, ...], tuple[CardNumber, ...]], ...]:
    head = table.head(MAX_CARD_ROWS)
    none = [None] * len(head)
    labels = [["(missing)" if _missing(x) else str(x) for x in head[b].tolist()] for b in by]
    numbers = [
        [
            card_number(v, lo, hi, integer=c.size, published=published)
            for v, lo, hi in zip(
                head[c.name].tolist(),
                head[f"{c.name}_lower"].tolist() if c.interval else none,
                head[f"{c.name}_upper"].tolist() if c.interval else none,
                strict=True,
            )
        ]
        for c in columns
    ]
    return tuple((tuple(col[i] for col in labels), tuple(col[i] for col in numbers)) for i in range(len(head)))


def _missing(x: Any) -> bool:
    try:
        return bool(pd.isna(x))
    except (TypeError, ValueError):
        return False


def _costs(record: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    per = record.get("privacy", {}).get("per_statistic", [])
    return {str(p.get("name")): (float(p.get("epsilon", 0.0)), float(p.get("delta", 0.0))) for p in per}


def _statistic(
    info: Mapping[str, Any], table: pd.DataFrame, costs: Mapping[str, tuple[float, float]], method: str
) -> _Statistic:
    name = str(info.get("name"))
    by = tuple(str(b) for b in info.get("by", ()))
    missing = [b for b in by if b not in table.columns]
    if missing:
        raise DPInputError(f"the table of {name!r} has no column {missing[0]!r} (a cell label of the record)")
    columns = _value_columns(table, by)
    published = info.get("interval_level") is not None  # set where the release rounded its tables honestly
    eps, delta = costs.get(name, (float(info.get("epsilon", 0.0)), 0.0))
    return _Statistic(
        name,
        str(info.get("kind", "")),
        by,
        eps,
        delta,
        columns,
        _table_rows(table, by, columns, published),
        int(len(table)),
        str(info.get("noise") or ""),
        str(info.get("measurement") or ""),
        bool(info.get("labelled")),
        _auxiliary(table),
        published,
        method,
    )


def _statistics(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> tuple[_Statistic, ...]:
    if not isinstance(record, Mapping) or not isinstance(record.get("statistics"), list):
        raise DPInputError("a release card needs the release record (release_record.json) with its 'statistics'")
    costs = _costs(record)
    plan = _plan_statistics(record)
    out = []
    for info in record["statistics"]:
        name = str(info.get("name"))
        if name not in tables:
            raise DPInputError(f"no table for the statistic {name!r} of the record (tables: {sorted(tables)})")
        out.append(_statistic(info, tables[name], costs, _method_key(str(info.get("kind", "")), plan.get(name, {}))))
    return tuple(out)


_OPENDP_VERSION = re.compile(r"OpenDP (\d+\.\d+(?:\.\d+)?[0-9A-Za-z.+-]*)")


def opendp_version(record: Mapping[str, Any]) -> str | None:
    """The OpenDP version named by the record's measurements ("OpenDP 0.16.0: ..."), None when no statistic
    drew its noise with OpenDP (a simulation, or only the certified Gini sampler)."""
    found = sorted(
        {
            m.group(1)
            for s in record.get("statistics", [])
            for key in ("measurement", "sampler")
            for m in _OPENDP_VERSION.finditer(str(s.get(key) or ""))
        }
    )
    return ", ".join(found) or None


def _level(record: Mapping[str, Any]) -> float:
    """The intervals' level: a statistic's ``interval_level``, the plan's ``level``, else the default."""
    for stat in record.get("statistics", []):
        if isinstance(stat, Mapping) and _as_float(stat.get("interval_level")) is not None:
            return float(stat["interval_level"])
    for source in (record.get("intervals"), record.get("plan"), record):
        if isinstance(source, Mapping) and _as_float(source.get("level")) is not None:
            return float(source["level"])
    return intervals_lib.DEFAULT_LEVEL


def _plan_statistics(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    plan = record.get("plan") or {}
    return {str(s.get("name")): s for s in plan.get("statistics", []) if isinstance(s, Mapping)}


def _g(x: Any) -> str:
    v = _as_float(x)
    return "?" if v is None else (f"{v:,.0f}" if float(v).is_integer() and abs(v) >= 1000 else f"{v:g}")


@dataclass(frozen=True)
class _Card:
    title: str
    simulation: bool
    created: str
    software: str
    opendp: str | None
    epsilon: float
    delta: float
    level: float
    statistics: tuple[_Statistic, ...]
    protected: tuple[str, ...]  # the privacy statement's paragraphs (plain text)
    public: tuple[str, ...]  # what is public, one item each
    methods: tuple[tuple[str, str, str], ...]  # (statistic kind, method, paper)
    notes: tuple[str, ...]  # measurement lines, composition, ledger


def _population(record: Mapping[str, Any]) -> str:
    plan = record.get("plan") or {}
    ledger = record.get("ledger") or {}
    return str(plan.get("population") or ledger.get("population") or record.get("dataset") or "the data set")


def _unit_sentence(record: Mapping[str, Any]) -> str:
    plan = record.get("plan") or {}
    if plan.get("privacy_unit"):
        m = plan.get("max_rows_per_person", 1)
        return (
            f"The unit of privacy is one person: all the rows that share a value of the column "
            f"{plan['privacy_unit']!r}, of which at most {m} per person are used (a public, seeded sample). "
            "The guarantee compares data sets in which one person's rows are replaced by any others."
        )
    return (
        "The unit of privacy is one record (row): the guarantee compares data sets that differ in one row, "
        "replaced by any other (the number of rows is public). A person with k rows is protected as k units: "
        "their privacy loss is at most k times epsilon (group privacy; delta grows too when it is not 0)."
    )


def _loss_sentence(eps: float, delta: float) -> str:
    """Pure DP: P[M(D) in S] <= e^epsilon P[M(D') in S] for neighbours D, D'; approximate DP adds delta."""
    odds = f"{math.exp(eps):,.3g}" if eps < 700 else "more than 10^300"
    tail = "" if delta == 0 else f", plus at most delta = {delta:.3g}"
    kind = "epsilon-differentially private (pure DP)" if delta == 0 else "(epsilon, delta)-differentially private"
    return (
        f"The whole release is {kind} with epsilon = {eps:g} and delta = {delta:.3g} in total: whatever one "
        "unit's data hold (replaced by anything else), the probability of any published outcome changes by at "
        f"most a factor e^epsilon = {odds}{tail}. The statistics add up (sequential composition); the cells "
        "of one statistic are disjoint, so each statistic costs its epsilon once (parallel composition)."
    )


def _protected(record: Mapping[str, Any], eps: float, delta: float) -> tuple[str, ...]:
    privacy = record.get("privacy") or {}
    out = [
        f"Who is protected: the people in the data set {_population(record)!r}.",
        _unit_sentence(record),
        _loss_sentence(eps, delta),
    ]
    for key, what in (
        ("neighbouring", "The neighbouring relation, as the record states it"),
        ("what_one_person_can_change", "What one person can change, as the record states it"),
    ):
        if privacy.get(key):
            out.append(f"{what}: {privacy[key]}.")
    return tuple(out)


def _record_statistic(record: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    return next((st for st in record.get("statistics", []) if isinstance(st, Mapping) and st.get("name") == name), {})


def _cells_item(s: _Statistic, cells: Mapping[str, Any], info: Mapping[str, Any]) -> str:
    """Which cells are public: with public cell sizes (PSEO) the cells present in the data; otherwise the
    declared ones, or none (the cells listed were selected with DP: a cell's presence is a DP output)."""
    where = f"{s.name}: the cells (values of {', '.join(s.by)})"
    if cells.get("cell_sizes", "public") == "public":
        return f"{where} of the {s.cells:,} published rows"
    detail = info.get("cells")
    how = str((detail.get("cells") if isinstance(detail, Mapping) else None) or cells.get("cells") or "")
    if how.startswith("declared"):
        return f"{where}: {how}"
    return f"{where} are not public: {how or 'see the record'}; only the cells listed in the table are released"


def _public_items(record: Mapping[str, Any], stats: Sequence[_Statistic]) -> tuple[str, ...]:
    cells = record.get("cells") or {}
    plan_stats = _plan_statistics(record)
    out = []
    for s in stats:
        p = plan_stats.get(s.name, {})
        if s.by and cells:  # the app's tables list numbers by label, not cells
            out.append(_cells_item(s, cells, _record_statistic(record, s.name)))
        bounds = (p.get("lower"), p.get("upper"))
        if all(b is not None for b in bounds):
            out.append(f"{s.name}: the clipping bounds {_g(bounds[0])} to {_g(bounds[1])}")
        edges = _record_statistic(record, s.name).get("bin_edges")
        if edges:
            out.append(f"{s.name}: the {len(edges) - 1} histogram bins, edges {_g(edges[0])} to {_g(edges[-1])}")
        if p.get("q"):
            out.append(f"{s.name}: the percentile levels {', '.join(_g(q) for q in p['q'])}")
        for key in ("group", "exposed", "reference", "outcome", "outcome_below", "threshold"):
            if p.get(key) is not None:
                out.append(f"{s.name}: {key} = {p[key]}")
    if cells.get("n"):
        out.append(f"cell sizes: {cells['n']}")
    statement = (record.get("privacy") or {}).get("public")
    if statement:
        out.append(f"as the record states it: {statement}")
    return tuple(out)


def _methods(stats: Sequence[_Statistic]) -> tuple[tuple[str, str, str], ...]:
    seen: dict[str, tuple[str, str, str]] = {}
    for s in stats:
        if s.method in METHODS and s.method not in seen:
            seen[s.method] = METHODS[s.method]
    return tuple(seen.values())


def _notes(record: Mapping[str, Any], stats: Sequence[_Statistic]) -> tuple[str, ...]:
    out = [f"{s.name}: {s.measurement}" for s in stats if s.measurement]
    ledger = record.get("ledger") or {}
    if ledger.get("entry_id") is not None:
        out.append(
            f"charged to the budget account {ledger.get('account')!r} (ledger entry {ledger['entry_id']}); "
            f"epsilon spent on it after this release: {_g(ledger.get('spent_epsilon_after'))} of its cap "
            f"{_g(ledger.get('cap_epsilon'))}"
        )
    return tuple(out)


def _card(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> _Card:
    stats = _statistics(record, tables)
    cost = (record.get("privacy") or {}).get("cost") or {}
    eps = float(cost.get("epsilon", sum(s.epsilon for s in stats)))
    delta = float(cost.get("delta", sum(s.delta for s in stats)))
    mode = str(record.get("mode", "release"))
    return _Card(
        title=str(record.get("dataset") or "release"),
        simulation=mode != "release",
        created=str(record.get("created", "")),
        software=str(record.get("software", "")),
        opendp=opendp_version(record),
        epsilon=eps,
        delta=delta,
        level=_level(record),
        statistics=stats,
        protected=_protected(record, eps, delta),
        public=_public_items(record, stats),
        methods=_methods(stats),
        notes=_notes(record, stats),
    )


SIMULATION_WARNING = (
    "SIMULATION, NOT A RELEASE: numpy noise from a recorded seed on data declared public; these "
    "numbers are not differentially private and must not be published as such."
)


def _interval_note(card: _Card) -> str:
    if any(c.interval for s in card.statistics for c in s.columns):
        rounding = (
            "as the release published them: rounded to a public step"
            if all(s.published for s in card.statistics if any(c.interval for c in s.columns))
            else "rounded here to a public step"
        )
        return (
            f"Each interval is a {card.level:.0%} confidence interval computed from the published numbers "
            "alone (the released values and the public parameters of their mechanisms): over the noise, it "
            "covers the statistic of the data clipped to the public bounds with at least that probability; "
            f"the clipping bias is not in it. Values and intervals are shown {rounding} of at most 1/20 of the "
            "width the noise gives the interval (intervals outwards), so no digit is finer than the noise allows."
            + _risk_caveat(card)
        )
    return (
        "This release publishes no intervals: values are shown as in the tables (whole numbers as they are, "
        "others to 6 significant digits), which says nothing about their accuracy."
    )


def _risk_caveat(card: _Card) -> str:
    if not any(s.method == "relative_risk" and any(c.interval for c in s.columns) for s in card.statistics):
        return ""
    return (
        " The relative risk's interval (Shoham & Ligett, Theorem 4.5) holds asymptotically: trust it when both "
        "noisy case counts are at least about 30."
    )


def _auxiliary_note(s: _Statistic) -> str:
    if not s.auxiliary:
        return ""
    what = []
    bins = [c for c in s.auxiliary if c.startswith("noisy_bin_")]
    if bins:
        what.append(
            f"{bins[0]} to {bins[-1]} (the noisy histogram the percentiles and their intervals are read from)"
            if len(bins) > 1
            else f"{bins[0]} (the noisy histogram)"
        )
    what += [
        f"{c} (the published DP upper bound on the smooth sensitivity that the interval is computed from)"
        for c in s.auxiliary
        if not c.startswith("noisy_bin_")
    ]
    return "Also published in the table file: " + "; ".join(what) + "."


def _software(card: _Card) -> str:
    opendp = f"OpenDP {card.opendp}" if card.opendp else "OpenDP not used by this release's noise"
    return f"{card.software}; {opendp}"


# ---------------------------------------------------------------------------------------------
# HTML
# ---------------------------------------------------------------------------------------------


#: the Unicode categories shown as escapes in a card: controls (NUL, ESC ...), format characters (U+202E, the
#: right-to-left override, reverses what follows on screen; zero-width spaces and joiners hide text), surrogates,
#: line and paragraph separators
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _visible(text: str) -> str:
    """``text`` with every character that would act instead of show (:data:`_HIDDEN_CATEGORIES`; tab and line
    ends stay) written as its escape, ``\\u202e``: a label from the data (a cell's value, a column's name) or a
    plan's text can then neither hide nor reorder what a card says. Escaped here, not refused in the plan: the
    cell labels come from the data, and a release refused because of a label's characters would depend on the
    data without a DP output."""
    if text.isprintable():
        return text
    return "".join(
        ch
        if ch in "\t\n\r" or unicodedata.category(ch) not in _HIDDEN_CATEGORIES
        else (f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}")
        for ch in text
    )


def _e(x: Any) -> str:
    return html.escape(_visible(str(x)), quote=True)


_CSS = """
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;background:#fff;margin:0}
main{max-width:60rem;margin:0 auto;padding:1.5rem}
h1{font-size:1.7rem;margin:.2rem 0 1rem}h2{font-size:1.3rem;margin-top:2rem;border-bottom:1px solid #d0d7de}
h3{font-size:1.05rem;margin:1.4rem 0 .3rem}
table{border-collapse:collapse;margin:.5rem 0 1rem;font-size:.93rem}
th,td{border:1px solid #d0d7de;padding:.25rem .55rem;text-align:left;vertical-align:top}
th{background:#f3f5f7}td.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.sim{background:#fff0f0;border:2px solid #c62828;padding:.6rem;font-weight:600}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.2rem 1rem}dt{font-weight:600}dd{margin:0}
.note{color:#484f58;font-size:.93rem}
@media print{main{max-width:none}}
"""


def _html_values(s: _Statistic, level: float) -> str:
    head = [f"<th>{_e(b)}</th>" for b in s.by]
    for c in s.columns:
        head.append(f"<th>{_e(c.name)}</th>")
        if c.interval:
            head.append(f"<th>{_e(c.name)}: {level:.0%} interval</th>")
    body = []
    for labels, numbers in s.rows:
        cells = [f"<td>{_e(lab)}</td>" for lab in labels]
        for c, num in zip(s.columns, numbers, strict=True):
            cells.append(f'<td class="num value" data-column="{_e(c.name)}">{_e(num.text)}</td>')
            if c.interval:
                cells.append(f'<td class="num interval" data-column="{_e(c.name)}">{_e(num.interval_text)}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    more = (
        ""
        if s.cells <= len(s.rows)
        else (f'<p class="note">The first {len(s.rows):,} of {s.cells:,} cells; every cell is in the table file.</p>')
    )
    return (
        f'<table data-statistic="{_e(s.name)}"><thead><tr>{"".join(head)}</tr></thead><tbody>'
        + "".join(body)
        + f"</tbody></table>{more}"
    )


def _what(s: _Statistic) -> str:
    what = METHODS.get(s.method, (s.kind,))[0]
    where = f" by {', '.join(s.by)}" if s.by and not s.labelled else ""
    count = f"{s.cells:,} released number(s)" if s.labelled else f"{s.cells:,} cell(s)"
    return f"{what}{where}; epsilon = {s.epsilon:g}, delta = {s.delta:.3g}; {count}"


def release_card_html(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> str:
    """The release card as one self-contained HTML page (module docstring). ``record``: the release record
    (``release_record.json`` as a dict); ``tables``: the released table of each statistic, by statistic name."""
    return _html(_card(record, tables))


def _html(card: _Card) -> str:
    parts = [
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>Release card: {_e(card.title)}</title><style>{_CSS}</style></head><body><main>",
        f"<h1>Release card: {_e(card.title)}</h1>",
    ]
    if card.simulation:
        parts.append(f'<p class="sim">{_e(SIMULATION_WARNING)}</p>')
    parts.append(
        f"<dl><dt>Date</dt><dd>{_e(card.created)}</dd><dt>Privacy loss</dt><dd>epsilon = "
        f"{card.epsilon:g}, delta = {card.delta:.3g} in total</dd><dt>Software</dt>"
        f"<dd>{_e(_software(card))}</dd></dl>"
    )
    parts.append("<h2>Released values</h2>")
    parts.append(f'<p class="note">{_e(_interval_note(card))}</p>')
    for s in card.statistics:
        aux = f'<p class="note">{_e(_auxiliary_note(s))}</p>' if s.auxiliary else ""
        parts.append(f"<section><h3>{_e(s.name)}</h3><p>{_e(_what(s))}</p>{_html_values(s, card.level)}{aux}</section>")
    parts.append("<h2>Privacy statement</h2>" + "".join(f"<p>{_e(p)}</p>" for p in card.protected))
    parts.append(_html_cost_table(card))
    parts.append(
        "<h3>What is public (not protected)</h3><ul>" + "".join(f"<li>{_e(p)}</li>" for p in card.public) + "</ul>"
    )
    parts.append(
        "<h2>Methods</h2><ul>"
        + "".join(
            f"<li><strong>{_e(w)}</strong>: {_e(m)}. Paper: <cite>{_e(p)}</cite>.</li>" for w, m, p in card.methods
        )
        + "</ul>"
    )
    if card.notes:
        parts.append(
            "<h3>Noise, as recorded</h3><ul>" + "".join(f'<li class="note">{_e(n)}</li>' for n in card.notes) + "</ul>"
        )
    parts.append(
        f"<h2>Date and software</h2><p>Released {_e(card.created)} with {_e(_software(card))}. The full "
        "audit record is release_record.json beside this card (SHA-256 of every file).</p>"
    )
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def _html_cost_table(card: _Card) -> str:
    rows = "".join(
        f"<tr><td>{_e(s.name)}</td><td>{_e(s.kind)}</td><td class=\"num\">{s.epsilon:g}</td>"
        f"<td class=\"num\">{s.delta:.3g}</td></tr>"
        for s in card.statistics
    )
    return (
        "<table><thead><tr><th>statistic</th><th>kind</th><th>epsilon</th><th>delta</th></tr></thead><tbody>"
        f"{rows}<tr><th>total</th><th></th><th class=\"num\">{card.epsilon:g}</th>"
        f"<th class=\"num\">{card.delta:.3g}</th></tr></tbody></table>"
    )


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_\[\]|~])")


def _m(x: Any) -> str:
    """Text safe in Markdown: HTML-escaped (a renderer passes raw HTML through), the punctuation that opens
    emphasis, code, links, strike-through or a table cell escaped, one line. Every such text follows "| ", "- "
    or a fixed word on its line, so no label can start a heading or a list."""
    text = html.escape(_visible(str(x)), quote=False).replace("\r", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(r"\\\1", text)


def _md_values(s: _Statistic, level: float) -> list[str]:
    head = [_m(b) for b in s.by]
    for c in s.columns:
        head.append(_m(c.name))
        if c.interval:
            head.append(_m(f"{c.name}: {level:.0%} interval"))
    align = ["---"] * len(s.by) + ["---:"] * (len(head) - len(s.by))
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join(align) + " |"]
    for labels, numbers in s.rows:
        cells = [_m(lab) for lab in labels]
        for c, num in zip(s.columns, numbers, strict=True):
            cells.append(_m(num.text))
            if c.interval:
                cells.append(_m(num.interval_text))
        lines.append("| " + " | ".join(cells) + " |")
    if s.cells > len(s.rows):
        lines += ["", f"The first {len(s.rows):,} of {s.cells:,} cells; every cell is in the table file."]
    return lines


def release_card_markdown(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> str:
    """The release card in Markdown: the content of :func:`release_card_html`."""
    return _markdown(_card(record, tables))


def _markdown(card: _Card) -> str:
    out = [f"# Release card: {_m(card.title)}", ""]
    if card.simulation:
        out += [f"**{_m(SIMULATION_WARNING)}**", ""]
    out += [
        f"- **Date:** {_m(card.created)}",
        f"- **Privacy loss:** epsilon = {card.epsilon:g}, delta = {card.delta:.3g} in total",
        f"- **Software:** {_m(_software(card))}",
        "",
        "## Released values",
        "",
        _m(_interval_note(card)),
        "",
    ]
    for s in card.statistics:
        out += [f"### {_m(s.name)}", "", _m(_what(s)), "", *_md_values(s, card.level), ""]
        if s.auxiliary:
            out += [_m(_auxiliary_note(s)), ""]
    out += ["## Privacy statement", ""]
    for p in card.protected:
        out += [_m(p), ""]
    out += ["| statistic | kind | epsilon | delta |", "| --- | --- | ---: | ---: |"]
    out += [f"| {_m(s.name)} | {_m(s.kind)} | {s.epsilon:g} | {s.delta:.3g} |" for s in card.statistics]
    out += [f"| **total** | | {card.epsilon:g} | {card.delta:.3g} |", "", "### What is public (not protected)", ""]
    out += [f"- {_m(p)}" for p in card.public]
    out += ["", "## Methods", ""]
    out += [f"- **{_m(w)}**: {_m(m)}. Paper: *{_m(p)}*." for w, m, p in card.methods]
    if card.notes:
        out += ["", "### Noise, as recorded", ""] + [f"- {_m(n)}" for n in card.notes]
    out += [
        "",
        "## Date and software",
        "",
        f"Released {_m(card.created)} with {_m(_software(card))}. The full audit "
        "record is release\\_record.json beside this card (SHA-256 of every file).",
        "",
    ]
    return "\n".join(out)


# ---------------------------------------------------------------------------------------------
# The OpenDP Deployments Registry entry
# ---------------------------------------------------------------------------------------------


def _yaml_scalar(v: Any) -> str:
    if isinstance(v, (Mapping, list)):  # only empty ones get here
        return "{}" if isinstance(v, Mapping) else "[]"
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        text = repr(v)
        if "e" in text and "." not in text.split("e")[0]:  # YAML 1.1 reads 1e-06 as text; 1.0e-06 as a number
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    return json.dumps(_visible(str(v)), ensure_ascii=False)  # a JSON string is a YAML double-quoted scalar


def _yaml_lines(obj: Any, indent: int) -> list[str]:
    pad = "  " * indent
    lines: list[str] = []
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            if isinstance(v, (Mapping, list)) and v:
                lines.append(f"{pad}{k}:")
                lines += _yaml_lines(v, indent + 1)
            else:
                lines.append(f"{pad}{k}: {_yaml_scalar(v)}")
        return lines
    for item in obj:
        if isinstance(item, (Mapping, list)):
            raise DPInputError("the registry emitter writes lists of scalars only")
        lines.append(f"{pad}- {_yaml_scalar(item)}")
    return lines


def to_yaml(doc: Mapping[str, Any]) -> str:
    """A tiny YAML emitter for nested mappings, lists of scalars and scalars (every string double-quoted with
    JSON escapes, which YAML reads the same), enough for a registry entry without a YAML dependency."""
    return "\n".join(_yaml_lines(doc, 0)) + "\n"


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:80] or "release"


def _fill(what: str) -> str:
    return f"{REGISTRY_PLACEHOLDER}: {what}"


def _privacy_parameters(eps: float, delta: float) -> dict[str, Any]:
    return {"epsilon": float(eps), "delta": float(delta)}


def _registry_basic(record: Mapping[str, Any], card: _Card) -> dict[str, Any]:
    plan = record.get("plan") or {}
    date = card.created[:10] if re.fullmatch(r"\d{4}-\d{2}-\d{2}", card.created[:10]) else _fill("YYYY-MM-DD")
    kinds = ", ".join(sorted({METHODS.get(s.method, (s.kind,))[0] for s in card.statistics}))
    description = str(
        plan.get("description")
        or f"Differentially private {kinds} of the data set {card.title!r}, released by cell with dpcore."
    )
    return {
        "name": card.title,
        "data_curators": [_fill("the agency publishing this release")],
        "description": description,
        "intended_use": _fill("what the statistics are published for"),
        "data_product_type": "Summary statistics",
        "data_product_region": _fill("the region the data describe, or whose laws apply"),
        "publication_date": date,
        "data_product_sector": "Government",
    }


def _registry_privacy(record: Mapping[str, Any], card: _Card) -> tuple[dict[str, Any], dict[str, Any]]:
    privacy = record.get("privacy") or {}
    plan = record.get("plan") or {}
    variant = {
        "variant_name": "Pure DP" if card.delta == 0 else "Approximate DP",
        "data_domain": (
            f"tables of rows with an income column {plan.get('income', 'income')!r} and the "
            f"cell columns of the statistics ({', '.join(sorted({b for s in card.statistics for b in s.by})) or 'none'})"
        ),
        "unprotected_quantities": str(privacy.get("public") or "; ".join(card.public)),
    }
    unit = (
        f"person (column {plan['privacy_unit']!r}, at most {plan.get('max_rows_per_person', 1)} rows each)"
        if plan.get("privacy_unit")
        else "record (one row)"
    )
    per = "; ".join(f"{s.name}: epsilon {s.epsilon:g}, delta {s.delta:.3g}" for s in card.statistics)
    loss = {
        "privacy_unit": unit,
        "privacy_unit_details": ". ".join(
            str(privacy[k]) for k in ("neighbouring", "what_one_person_can_change") if privacy.get(k)
        )
        or _unit_sentence(record),
        "privacy_parameters": _privacy_parameters(card.epsilon, card.delta),
        "privacy_parameters_details": f"per statistic (they add up): {per}",
    }
    return variant, loss


def _registry_model(record: Mapping[str, Any]) -> dict[str, Any]:
    ledger = record.get("ledger") or {}
    budget = (
        ""
        if ledger.get("entry_id") is None
        else f" This release was charged to the budget account {ledger.get('account')!r} of a durable ledger "
        f"(entry {ledger['entry_id']}), whose cap is epsilon = {_g(ledger.get('cap_epsilon'))}; epsilon spent "
        f"on it after this release: {_g(ledger.get('spent_epsilon_after'))}."
    )
    return {
        "model_name": "Central",
        "model_name_details": "The curator runs dpcore on the confidential data and publishes only the noisy "
        "tables, the plan and the release record.",
        "actors": _fill("who holds the confidential data, who runs the release, who reads the tables"),
        "release_type": "One release",
        "release_type_details": "One release of the plan's statistics." + budget,
        "data_source_type": "Static",
        "access_type": "Non-interactive",
    }


def _registry_implementation(record: Mapping[str, Any], card: _Card) -> dict[str, Any]:
    missing = record.get("missing_values") or {}
    mechanisms = " ".join(
        f"{s.name} ({s.kind}): " + ". ".join(t for t in (s.noise, s.measurement) if t) + "." for s in card.statistics
    )
    papers = "; ".join(p for _, _, p in card.methods)
    return {
        "preprocessing_and_hyperparameter_tuning": (
            f"Missing incomes: {missing.get('income', 'see the record')}. "
            + _fill("how the plan's epsilon, bounds and bins were chosen, and whether that used the data")
        ),
        "mechanisms": f"{mechanisms} Papers: {papers}. Software: {_software(card)}.",
        "justification": _fill("why these choices (epsilon, bounds, cells)"),
    }


def opendp_registry_entry(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame] | None = None) -> str:
    """The release as an entry of the OpenDP Differential Privacy Deployments Registry, in YAML.

    The field names, nesting, enumerations and required keys are those of the registry's schema
    ``schemas/deployments-schema.yaml`` and its template ``tests/good_deployments/template.yaml`` in
    github.com/opendp/deployments-registry-data (commit 3e9c812; the registry is shown at
    registry.opendp.org): required ``url_slug``, ``status``, ``tier``, ``deployment.basic`` (``name``,
    ``data_curators``, ``description``, ``intended_use``, ``data_product_type``, ``data_product_region``,
    ``publication_date``) and ``deployment.administrative.registry_authors``; no key outside the schema (it
    sets ``additionalProperties: False`` at every level).

    Mapping: a tier-3 ``Draft`` entry; the name is the record's dataset, the publication date its ``created``
    day, the description the plan's (else a sentence naming the statistics); ``dp_variant`` pure or approximate
    DP from the total delta, the unprotected quantities the record's public statement; ``privacy_loss`` the
    unit, the relation and the total (epsilon, delta), per statistic in the details; a central, non-interactive,
    static, one-release deployment (with the ledger account and its cap when charged); composition and
    post-processing as the record states them; the mechanisms as recorded with their papers and the software.
    What only the agency knows (curator, intended use, region, actors, how epsilon was chosen, the sources and
    the registry's authors) is left as ``"FILL IN: ..."``. ``tables`` is accepted for symmetry with the card
    and used only to count cells (the entry holds no released value)."""
    _check_record(record)
    return _registry_yaml(record, _card(record, tables if tables is not None else _empty_tables(record)))


def _registry_yaml(record: Mapping[str, Any], card: _Card) -> str:
    variant, loss = _registry_privacy(record, card)
    privacy = record.get("privacy") or {}
    doc = {
        "url_slug": _slug(f"{card.title}_{card.created[:10]}"),
        "status": "Draft",
        "tier": 3,
        "deployment": {
            "basic": _registry_basic(record, card),
            "dp_variant": variant,
            "privacy_loss": loss,
            "deployment_model": _registry_model(record),
            "accounting": {
                "post_processing": (
                    "Released values are clamped to their possible range and rounded to public grids; percentiles "
                    "are read off the noisy histograms; intervals are computed from the published numbers only."
                ),
                "composition": str(privacy.get("composition") or "sequential composition of the statistics"),
            },
            "implementation": _registry_implementation(record, card),
            "administrative": {
                "sources": _fill("a link to the published tables and release card"),
                "notes": (
                    f"Exported by {card.software} from release_record.json (plan SHA-256 "
                    f"{record.get('plan_sha256', 'not recorded')})."
                ),
                "registry_authors": [_fill("who fills in this entry")],
            },
        },
    }
    header = (
        "# An entry for the OpenDP Differential Privacy Deployments Registry (schema: "
        "opendp/deployments-registry-data, schemas/deployments-schema.yaml).\n"
        f"# Replace every \"{REGISTRY_PLACEHOLDER}: ...\" before submitting it.\n"
    )
    return header + to_yaml(doc)


def _empty_tables(record: Mapping[str, Any]) -> dict[str, pd.DataFrame]:
    return {str(s.get("name")): pd.DataFrame(columns=list(s.get("by", []))) for s in record.get("statistics", [])}


# ---------------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------------


def card_file_names(record: Mapping[str, Any]) -> tuple[str, str, str]:
    """The names of the card's three files: :data:`CARD_FILES`, each starting with ``SIMULATION_`` when the
    record is a simulation's."""
    _check_record(record)
    prefix = "" if str(record.get("mode", "release")) == "release" else SIMULATION_FILE_PREFIX
    html_name, markdown_name, yaml_name = (prefix + name for name in CARD_FILES)
    return html_name, markdown_name, yaml_name


def write_release_card(
    out_dir: str | Path, record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]
) -> list[Path]:
    """Write release_card.html, release_card.md and opendp_registry.yaml (:func:`card_file_names`) into
    ``out_dir``; return their paths (the caller lists them in the record's files with their SHA-256). All three
    texts are made before anything is written; a failure while writing removes what was written."""
    out = Path(out_dir)
    if not out.is_dir():
        raise DPInputError(f"the release card's folder {str(out)!r} does not exist")
    card = _card(record, tables)
    texts = (_html(card), _markdown(card), _registry_yaml(record, card))
    paths = [out / name for name in card_file_names(record)]
    try:
        for path, text in zip(paths, texts, strict=True):
            path.write_text(text, encoding="utf-8")
    except BaseException:
        for path in paths:
            path.unlink(missing_ok=True)
        raise
    return paths


#: bytes of the card files (HTML + Markdown + YAML): a fixed part and a part per shown row; measured 22 KB for the
#: 8 cells of a 4-statistic plan and 1.30 MB for 4 x 1,000 shown rows (about 320 bytes a row), so the estimate
#: is 1.1 to 1.3 x what is written
_CARD_FIXED_BYTES = 24_000
_CARD_BYTES_PER_ROW = 400


def card_bytes_estimate(rows_per_statistic: Sequence[int]) -> int:
    """About the bytes of the three card files for statistics of these many cells (at most
    :data:`MAX_CARD_ROWS` shown each), for the free-space check before a release."""
    rows = []
    for r in rows_per_statistic:
        if isinstance(r, bool) or not isinstance(r, (int, float)) or not math.isfinite(r) or r < 0:
            raise DPInputError(f"rows per statistic must be whole numbers >= 0, got {r!r}")
        rows.append(min(int(r), MAX_CARD_ROWS))
    return _CARD_FIXED_BYTES + _CARD_BYTES_PER_ROW * sum(rows)


# ---------------------------------------------------------------------------------------------
# The app's releases
# ---------------------------------------------------------------------------------------------


def _app_table(r: Mapping[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame(
        {"released number": [str(x) for x in r.get("labels", [])], "value": [float(v) for v in r.get("released", [])]}
    )
    for end in ("lower", "upper"):
        ends = r.get(f"released_{end}") or r.get(end)
        if isinstance(ends, (list, tuple)) and len(ends) == len(frame):
            frame[f"value_{end}"] = [float(v) for v in ends]
    return frame


def _app_parameters(params: Mapping[str, Any]) -> dict[str, Any]:
    """The public scalars of an app statistic's parameters, its clip bounds named as the plan names them."""
    out = {k: v for k, v in params.items() if not isinstance(v, (list, dict))}
    for end in ("lower", "upper"):
        if f"clip_{end}" in out:
            out.setdefault(end, out.pop(f"clip_{end}"))
    return out


def card_inputs_from_app_records(
    records: Sequence[Mapping[str, Any]],
) -> tuple[dict[str, Any], dict[str, pd.DataFrame]]:
    """(record, tables) for :func:`release_card_html` from the app's release records
    (:meth:`dpcore.release.ReleaseRecord.to_dict`): one table per statistic with its labels and released values
    (and ``value_lower`` / ``value_upper`` when the records carry intervals)."""
    recs = [dict(r) for r in records]
    if not recs:
        raise DPInputError("no release record to make a card from")
    dataset = recs[0].get("dataset") or {}
    names = [str(r.get("statistic")) for r in recs]
    simulation = any("SIMULATION" in str(r.get("sampler", "")) for r in recs)
    stats = [
        {
            "name": n,
            "kind": r.get("kind"),
            "by": ["released number"],
            "labelled": True,
            "epsilon": r.get("epsilon"),
            "noise": r.get("mechanism", ""),
            "measurement": r.get("measurement") or r.get("sampler", ""),
            # the release rounded its values with their intervals (dpcore.published): the card shows them as is
            **({"interval_level": r["interval_level"]} if r.get("interval_level") else {}),
        }
        for n, r in zip(names, recs, strict=True)
    ]
    plan_stats = [{"name": n, **_app_parameters(r.get("parameters") or {})} for n, r in zip(names, recs, strict=True)]
    relations = "; ".join(sorted({str(r.get("neighbouring")) for r in recs if r.get("neighbouring")}))
    size = f"the number of rows (n = {dataset['n']:,}), " if isinstance(dataset.get("n"), int) else ""
    public = f"{size}the bounds and thresholds of each statistic; per statistic: {relations}"
    record = {
        "record": "dpcore app release",
        "mode": "simulation, not a release" if simulation else "release",
        "created": recs[0].get("timestamp", ""),
        "software": recs[0].get("software", ""),
        "dataset": dataset.get("label") or dataset.get("source") or "the uploaded data",
        "plan": {"statistics": plan_stats},
        "privacy": {
            "neighbouring": relations,
            "public": public,
            "composition": "the statistics add up (sequential composition)",
            "cost": {
                "epsilon": sum(float(r.get("epsilon", 0.0)) for r in recs),
                "delta": sum(float(r.get("delta", 0.0)) for r in recs),
            },
            "per_statistic": [
                {"name": n, "kind": r.get("kind"), "epsilon": r.get("epsilon"), "delta": r.get("delta", 0.0)}
                for n, r in zip(names, recs, strict=True)
            ],
        },
        "statistics": stats,
    }
    return record, {n: _app_table(r) for n, r in zip(names, recs, strict=True)}


def _check_record(record: Any) -> None:
    if not isinstance(record, Mapping):
        raise TypeError(f"record must be a release record (a dict, release_record.json), got {type(record).__name__}")
