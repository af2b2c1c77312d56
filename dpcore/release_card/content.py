"""The release card's content, computed once for both renderers from the release record and the released tables:
the values by statistic, the privacy statement, what is public, the methods with their papers, the notes."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from .. import intervals as intervals_lib
from ..errors import DPInputError
from ..kinds import PLANNER_KINDS
from .numbers import CardNumber, as_float, card_number

#: rows of one statistic shown on the card; the rest are in the statistic's CSV (a card of 60,000 cells would
#: be a 15 MB page nobody reads; the tables hold every cell)
MAX_CARD_ROWS = 1000

#: columns of a released table that are neither cell labels nor released numbers
_NOT_VALUES = {"simulation"}
#: published columns a reader of the card does not need beside the statistics (they are in the table files): the
#: noisy histogram a percentile and its interval are read from, the Gini's DP bound on its smooth sensitivity
_AUXILIARY_PREFIXES = ("noisy_bin_", "smooth_sensitivity_bound", "bin_", "ls_bin_", "ls_sd")
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
    "percentiles_margins": (
        "earnings percentiles with margins",
        "a histogram of every cell, margin and total over public bins, each level with its share of epsilon and "
        "discrete Laplace noise; then the least-squares estimate over the levels and whole counts that add up "
        "(post-processing); the percentiles are read off the whole counts",
        "M. Hay, V. Rastogi, G. Miklau and D. Suciu (2010), Boosting the Accuracy of Differentially Private "
        "Histograms Through Consistency, PVLDB; J. M. Abowd et al. (2022), The 2020 Census Disclosure Avoidance "
        "System TopDown Algorithm, Harvard Data Science Review",
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
    if plan_statistic.get("margins") is not None and f"{key}_margins" in METHODS:
        return f"{key}_margins"
    variant = f"{key}_{plan_statistic.get('method')}"
    return variant if variant in METHODS else key


# ---------------------------------------------------------------------------------------------
# The card's content, once, for both renderers
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CardColumn:
    name: str
    interval: bool  # the table has <name>_lower and <name>_upper
    size: bool  # a cell size (n) column


@dataclass(frozen=True)
class CardStatistic:
    name: str
    kind: str
    by: tuple[str, ...]
    epsilon: float
    delta: float
    columns: tuple[CardColumn, ...]
    rows: tuple[tuple[tuple[str, ...], tuple[CardNumber, ...]], ...]  # (labels, numbers) per shown row
    cells: int
    noise: str
    measurement: str
    labelled: bool = False  # rows are labelled numbers (the app's releases), not cells of 'by' columns
    auxiliary: tuple[str, ...] = ()  # published columns left to the table file
    published: bool = False  # the release rounded the values itself (honest digits in the tables)
    method: str = ""  # the METHODS entry
    part_of: str = ""  # a margin of this statistic (its epsilon is a share of that statistic's)
    hierarchy: str = ""  # a statistic with margins: its levels and their post-processing, in one sentence


def _value_columns(table: pd.DataFrame, by: Sequence[str]) -> tuple[CardColumn, ...]:
    names = [str(c) for c in table.columns]
    bounds = {c for c in names for base in names if c in (f"{base}_lower", f"{base}_upper") and base != c}
    out = []
    for c in names:
        if c in by or c in _NOT_VALUES or c in bounds or c.startswith(_AUXILIARY_PREFIXES):
            continue
        out.append(CardColumn(c, f"{c}_lower" in names and f"{c}_upper" in names, c in _SIZE_COLUMNS))
    return tuple(out)


def _auxiliary(table: pd.DataFrame) -> tuple[str, ...]:
    return tuple(str(c) for c in table.columns if str(c).startswith(_AUXILIARY_PREFIXES))


def _table_rows(
    table: pd.DataFrame, by: Sequence[str], columns: Sequence[CardColumn], published: bool
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
) -> CardStatistic:
    name = str(info.get("name"))
    by = tuple(str(b) for b in info.get("by", ()))
    missing = [b for b in by if b not in table.columns]
    if missing:
        raise DPInputError(f"the table of {name!r} has no column {missing[0]!r} (a cell label of the record)")
    columns = _value_columns(table, by)
    published = info.get("interval_level") is not None  # set where the release rounded its tables honestly
    eps, delta = costs.get(name, (float(info.get("epsilon", 0.0)), 0.0))
    return CardStatistic(
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
        str(info.get("part_of") or ""),
        _hierarchy(info),
    )


def _hierarchy(info: Mapping[str, Any]) -> str:
    """The levels of a statistic with margins (its record's ``levels``), finest first, and what was done to them."""
    levels = info.get("levels")
    if not isinstance(levels, list) or not levels or info.get("part_of"):
        return ""
    shown = " > ".join(
        f"{lv.get('name')} ({', '.join(lv.get('by') or []) or 'whole table'}; {int(lv.get('nodes', 0)):,} "
        f"node(s); epsilon {float(lv.get('epsilon', 0.0)):g})"
        for lv in levels
        if isinstance(lv, Mapping)
    )
    return (
        f"Hierarchy of {len(levels)} levels, each measured with its share of epsilon: {shown}. Post-processed "
        "(no privacy cost) into non-negative whole counts that add up exactly from the cells to each margin to "
        "the total (least squares over the levels, then controlled rounding); the least-squares estimates and "
        "their standard deviations are published beside them (ls_bin_*, ls_sd) and the intervals are computed "
        "from them."
    )


def _statistics(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> tuple[CardStatistic, ...]:
    if not isinstance(record, Mapping) or not isinstance(record.get("statistics"), list):
        raise DPInputError("a release card needs the release record (release_record.json) with its 'statistics'")
    costs = _costs(record)
    plan = _plan_statistics(record)
    out = []
    for info in record["statistics"]:
        name = str(info.get("name"))
        if name not in tables:
            raise DPInputError(f"no table for the statistic {name!r} of the record (tables: {sorted(tables)})")
        method = _method_key(str(info.get("kind", "")), plan.get(name, {}))
        out.append(_statistic(info, tables[name], costs, method))
        for level in (info.get("levels") or [])[1:]:  # a statistic's margins: their tables after its cells'
            if isinstance(level, Mapping) and str(level.get("name")) in tables:
                part = {**info, **level, "part_of": name}
                out.append(_statistic(part, tables[str(level["name"])], {}, method))
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
        if isinstance(stat, Mapping) and as_float(stat.get("interval_level")) is not None:
            return float(stat["interval_level"])
    for source in (record.get("intervals"), record.get("plan"), record):
        if isinstance(source, Mapping) and as_float(source.get("level")) is not None:
            return float(source["level"])
    return intervals_lib.DEFAULT_LEVEL


def _plan_statistics(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    plan = record.get("plan") or {}
    return {str(s.get("name")): s for s in plan.get("statistics", []) if isinstance(s, Mapping)}


def plain_number(x: Any) -> str:
    v = as_float(x)
    return "?" if v is None else (f"{v:,.0f}" if float(v).is_integer() and abs(v) >= 1000 else f"{v:g}")


@dataclass(frozen=True)
class Card:
    title: str
    simulation: bool
    created: str
    software: str
    opendp: str | None
    epsilon: float
    delta: float
    level: float
    statistics: tuple[CardStatistic, ...]
    protected: tuple[str, ...]  # the privacy statement's paragraphs (plain text)
    public: tuple[str, ...]  # what is public, one item each
    methods: tuple[tuple[str, str, str], ...]  # (statistic kind, method, paper)
    notes: tuple[str, ...]  # measurement lines, composition, ledger


def _population(record: Mapping[str, Any]) -> str:
    plan = record.get("plan") or {}
    ledger = record.get("ledger") or {}
    return str(plan.get("population") or ledger.get("population") or record.get("dataset") or "the data set")


def unit_sentence(record: Mapping[str, Any]) -> str:
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
        unit_sentence(record),
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


def _cells_item(s: CardStatistic, cells: Mapping[str, Any], info: Mapping[str, Any]) -> str:
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


def _public_items(record: Mapping[str, Any], stats: Sequence[CardStatistic]) -> tuple[str, ...]:
    cells = record.get("cells") or {}
    plan_stats = _plan_statistics(record)
    out = []
    for s in stats:
        p = plan_stats.get(s.name, {})
        if s.by and cells:  # the app's tables list numbers by label, not cells
            out.append(_cells_item(s, cells, _record_statistic(record, s.name)))
        bounds = (p.get("lower"), p.get("upper"))
        if all(b is not None for b in bounds):
            out.append(f"{s.name}: the clipping bounds {plain_number(bounds[0])} to {plain_number(bounds[1])}")
        edges = _record_statistic(record, s.name).get("bin_edges")
        if edges:
            out.append(
                f"{s.name}: the {len(edges) - 1} histogram bins, edges {plain_number(edges[0])} to {plain_number(edges[-1])}"
            )
        if p.get("q"):
            out.append(f"{s.name}: the percentile levels {', '.join(plain_number(q) for q in p['q'])}")
        for key in ("group", "exposed", "reference", "outcome", "outcome_below", "threshold"):
            if p.get(key) is not None:
                out.append(f"{s.name}: {key} = {p[key]}")
    if cells.get("n"):
        out.append(f"cell sizes: {cells['n']}")
    statement = (record.get("privacy") or {}).get("public")
    if statement:
        out.append(f"as the record states it: {statement}")
    return tuple(out)


def _methods(stats: Sequence[CardStatistic]) -> tuple[tuple[str, str, str], ...]:
    seen: dict[str, tuple[str, str, str]] = {}
    for s in stats:
        if s.method in METHODS and s.method not in seen:
            seen[s.method] = METHODS[s.method]
    return tuple(seen.values())


def _notes(record: Mapping[str, Any], stats: Sequence[CardStatistic]) -> tuple[str, ...]:
    out = [f"{s.name}: {s.measurement}" for s in stats if s.measurement and not s.part_of]
    ledger = record.get("ledger") or {}
    if ledger.get("entry_id") is not None:
        out.append(
            f"charged to the budget account {ledger.get('account')!r} (ledger entry {ledger['entry_id']}); "
            f"epsilon spent on it after this release: {plain_number(ledger.get('spent_epsilon_after'))} of its cap "
            f"{plain_number(ledger.get('cap_epsilon'))}"
        )
    return tuple(out)


def build_card(record: Mapping[str, Any], tables: Mapping[str, pd.DataFrame]) -> Card:
    stats = _statistics(record, tables)
    cost = (record.get("privacy") or {}).get("cost") or {}
    eps = float(cost.get("epsilon", sum(s.epsilon for s in stats)))
    delta = float(cost.get("delta", sum(s.delta for s in stats)))
    mode = str(record.get("mode", "release"))
    return Card(
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


def interval_note(card: Card) -> str:
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
            + _margins_caveat(card)
        )
    return (
        "This release publishes no intervals: values are shown as in the tables (whole numbers as they are, "
        "others to 6 significant digits), which says nothing about their accuracy."
    )


def _margins_caveat(card: Card) -> str:
    if not any(s.method == "percentiles_margins" for s in card.statistics):
        return ""
    return (
        " The percentile intervals of a statistic with margins use a normal quantile of the least-squares "
        "estimates' exact variance: their coverage is measured (at least 98.6% at 95% on PSEO's tables), not "
        "proven for every data set."
    )


def _risk_caveat(card: Card) -> str:
    if not any(s.method == "relative_risk" and any(c.interval for c in s.columns) for s in card.statistics):
        return ""
    return (
        " The relative risk's interval (Shoham & Ligett, Theorem 4.5) holds asymptotically: trust it when both "
        "noisy case counts are at least about 30."
    )


def auxiliary_note(s: CardStatistic) -> str:
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
    counts = [c for c in s.auxiliary if c.startswith("bin_")]
    if counts:
        what.append(
            f"{counts[0]} to {counts[-1]} (the histogram in non-negative whole counts that add up across the levels, "
            "which the percentiles are read from)"
        )
    estimates = [c for c in s.auxiliary if c.startswith("ls_")]
    if estimates:
        what.append(
            f"{', '.join(estimates[:1] + estimates[-1:])} (the unbiased least-squares estimates of the bins and their "
            "standard deviation, which the intervals are computed from)"
        )
    what += [
        f"{c} (the published DP upper bound on the smooth sensitivity that the interval is computed from)"
        for c in s.auxiliary
        if not c.startswith(("noisy_bin_", "bin_", "ls_"))
    ]
    return "Also published in the table file: " + "; ".join(what) + "."


def software_line(card: Card) -> str:
    opendp = f"OpenDP {card.opendp}" if card.opendp else "OpenDP not used by this release's noise"
    return f"{card.software}; {opendp}"


def describe_statistic(s: CardStatistic) -> str:
    what = METHODS.get(s.method, (s.kind,))[0]
    if s.part_of:
        where = f" by {', '.join(s.by)}" if s.by else " of the whole table"
        return (
            f"{what}{where}, a margin of {s.part_of} (its sums, consistent with its cells); measured with epsilon = "
            f"{s.epsilon:g}, part of {s.part_of}'s cost; {s.cells:,} node(s)"
        )
    where = f" by {', '.join(s.by)}" if s.by and not s.labelled else ""
    count = f"{s.cells:,} released number(s)" if s.labelled else f"{s.cells:,} cell(s)"
    text = f"{what}{where}; epsilon = {s.epsilon:g}, delta = {s.delta:.3g}; {count}"
    return f"{text}. {s.hierarchy}" if s.hierarchy else text


def check_record(record: Any) -> None:
    if not isinstance(record, Mapping):
        raise TypeError(f"record must be a release record (a dict, release_record.json), got {type(record).__name__}")


#: the Unicode categories shown as escapes in a card: controls (NUL, ESC ...), format characters (U+202E, the
#: right-to-left override, reverses what follows on screen; zero-width spaces and joiners hide text), surrogates,
#: line and paragraph separators
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def visible(text: str) -> str:
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
