"""SQL shared by the DuckDB and Spark engines (two small dialects), implementing the per-row definitions of
:mod:`dpcore.engines` exactly (same casts, same clipping, same cents, same bins, same bounding key).

Views: ``dp_src`` (the source), ``dp_valid`` (every row, typed), ``dp_base`` (after contribution
bounding). ``dp_base`` columns: ``__x`` (income, DOUBLE; NULL when missing or not finite: such rows are
kept, see :func:`income_or_lower`), the text columns under their own
names (as text), ``__o0, __o1, ...`` (outcome flags 1/0/NULL, -1 for an unreadable value) and, with a
privacy unit, ``__u`` (the unit as text).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import DPInputError
from .base import FALSE_WORDS, TRUE_WORDS, EngineSpec, compared_groups

if TYPE_CHECKING:
    from ..plan import StatisticSpec

#: clamp of the income inside the bounding key (so that cents fit a BIGINT)
KEY_CLAMP = 1e15


@dataclass(frozen=True)
class Dialect:
    name: str
    string_type: str

    def quote(self, column: str) -> str:
        if self.name == "spark":
            return "`" + column.replace("`", "``") + "`"
        return '"' + column.replace('"', '""') + '"'

    def text(self, value: str) -> str:
        if self.name == "spark":
            return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"
        return "'" + value.replace("'", "''") + "'"

    def number(self, value: float) -> str:
        return f"CAST({self.text(repr(float(value)))} AS DOUBLE)"

    def as_text(self, expr: str) -> str:
        return f"CAST({expr} AS {self.string_type})"

    def full_match(self, expr: str, pattern: str) -> str:
        """``expr`` matches the (RE2 / Java) regular expression ``pattern`` as a whole."""
        if self.name == "spark":
            return f"({expr} rlike {self.text('^(?:' + pattern + ')$')})"
        return f"regexp_full_match({expr}, {self.text(pattern)})"

    def finite(self, expr: str) -> str:
        if self.name == "duckdb":
            return f"isfinite({expr})"
        return f"(NOT isnan({expr}) AND {expr} < double('Infinity') AND {expr} > double('-Infinity'))"


DUCKDB = Dialect("duckdb", "VARCHAR")
SPARK = Dialect("spark", "STRING")


def outcome_expr(d: Dialect, column: str) -> str:
    t = f"lower(trim({d.as_text(d.quote(column))}))"
    yes = ", ".join(d.text(w) for w in TRUE_WORDS)
    no = ", ".join(d.text(w) for w in FALSE_WORDS)
    return (
        f"CASE WHEN {d.quote(column)} IS NULL THEN NULL WHEN {t} IN ({yes}) THEN 1 "
        f"WHEN {t} IN ({no}) THEN 0 ELSE -1 END"
    )


def income_number(d: Dialect, column: str, number_format: str = "plain") -> str:
    """The income as DOUBLE (NULL when it is not a number) under the app's number format
    (:data:`dpcore.engines.INCOME_FORMATS`): thousands commas dropped, or a decimal comma read as the point."""
    col = d.quote(column)
    if number_format == "plain":
        return f"TRY_CAST({col} AS DOUBLE)"
    t = f"trim({d.as_text(col)})"
    if number_format == "thousands_comma":
        t = f"replace({t}, ',', '')"
    elif number_format == "decimal_comma":
        t = f"replace(replace({t}, '.', ''), ',', '.')"
    else:
        raise ValueError(f"unknown number format {number_format!r}")
    return f"TRY_CAST({t} AS DOUBLE)"


def income_shapes(d: Dialect, income: str) -> str:
    """(shape, smallest text) of the non-blank income texts, shaped as :func:`dpcore.engines.income_shape`
    (the app's cell patterns): the input of :func:`dpcore.engines.decide_income_format`."""
    from ..data.io.numbers import NUMBER_PATTERNS

    t = "__t"
    cases = " ".join(f"WHEN {d.full_match(t, pattern)} THEN {d.text(name)}" for name, pattern in NUMBER_PATTERNS)
    shape = f"CASE {cases} WHEN TRY_CAST({t} AS DOUBLE) IS NOT NULL THEN 'castable' ELSE 'bad' END"
    col = d.quote(income)
    return (
        f"SELECT __shape, MIN(__t) AS __example FROM (SELECT __t, {shape} AS __shape FROM (SELECT "
        f"trim({d.as_text(col)}) AS __t FROM dp_src WHERE {col} IS NOT NULL) AS __texts WHERE __t <> '') "
        "AS __shaped GROUP BY __shape"
    )


def valid_view(d: Dialect, spec: EngineSpec) -> str:
    """SELECT for dp_valid (from dp_src): every row, a missing or non-finite income as NULL.

    No row is dropped here: a filter on missing values before the contribution bounding would change which
    rows of a person are kept, and after it would change the public cell sizes, both when one person's
    income goes missing (the neighbouring relation lets a person's values change, missingness included)."""
    x = income_number(d, spec.income, spec.income_format)
    # negative_incomes = "drop": a negative income counts as missing (the row stays, as a missing one does)
    drop = f" AND {x} >= 0" if spec.negative_incomes == "drop" else ""
    cols = [f"CASE WHEN {x} IS NOT NULL AND {d.finite(x)}{drop} THEN {x} ELSE NULL END AS __x"]
    cols += [d.quote(c) for c in spec.text_columns]  # native types; cast to text after aggregating
    cols += [f"{outcome_expr(d, c)} AS __o{i}" for i, c in enumerate(spec.outcome_columns)]
    if spec.privacy_unit:
        cols.append(f"{d.as_text(d.quote(spec.privacy_unit))} AS __u")
    return f"SELECT {', '.join(cols)} FROM dp_src"


def base_view(d: Dialect, spec: EngineSpec) -> str:
    """SELECT for dp_base (from dp_valid): all rows, or at most m rows per person (the md5 sample).

    A row whose privacy unit is missing (NULL, or the empty text) is its own person and is always kept (the public rule
    the record states, :func:`dpcore.engines.execute.missing_values_rule`). ``PARTITION BY`` alone would pool every such row into one
    "person" and keep m of them, so that one person's id going missing would drop another person's row."""
    keep = ["__x", *[d.quote(c) for c in spec.text_columns], *[f"__o{i}" for i in range(len(spec.outcome_columns))]]
    if not spec.privacy_unit:
        return f"SELECT {', '.join(keep)} FROM dp_valid"
    keep.append("__u")
    # a missing income gives a NULL key part, which concat_ws skips (as bounding_key skips None)
    clamp = f"LEAST(GREATEST(__x, {d.number(-KEY_CLAMP)}), {d.number(KEY_CLAMP)})"
    income_key = d.as_text(f"CAST(FLOOR({clamp} * 100) AS BIGINT)")
    cells = [d.text(str(int(spec.bounding_seed))), "__u", *[d.as_text(d.quote(c)) for c in spec.key_columns]]
    values = [income_key, *[d.as_text(f"__o{i}") for i in range(len(spec.outcome_columns))]]
    # k1 depends on the person and the cells only, so which cells the kept rows fall in (and the cell
    # sizes) never depend on incomes or outcomes; k2 breaks ties among rows of the same cells
    k1 = f"md5(concat_ws('|', {', '.join(cells)}))"
    k2 = f"md5(concat_ws('|', {', '.join(cells + values)}))"
    return (
        f"SELECT {', '.join(keep)} FROM (SELECT *, row_number() OVER (PARTITION BY __u ORDER BY {k1}, {k2}) "
        f"AS __rn FROM dp_valid) AS __bounded WHERE __rn <= {int(spec.bounding[1])} OR __u IS NULL OR __u = ''"
    )


def nonnumeric_probe(d: Dialect, income: str, number_format: str = "plain") -> str:
    """The smallest income text that is not a number (NULL when there is none): the smallest, not the
    first found, so that every engine names the same value (scan order differs between engines)."""
    col = d.quote(income)
    return (
        f"SELECT MIN({d.as_text(col)}) FROM dp_src WHERE {col} IS NOT NULL AND trim({d.as_text(col)}) <> '' "
        f"AND {income_number(d, income, number_format)} IS NULL"
    )


def income_or_lower(d: Dialect, lower: float) -> str:
    """The income with a missing one replaced by the statistic's public ``lower`` bound (the plan's
    ``missing_income = "lower"`` rule; with "refuse" no NULL reaches an aggregate)."""
    return f"COALESCE(__x, {d.number(lower)})"


def bin_expr(d: Dialect, edges: Sequence[float]) -> str:
    """The histogram bin of ``__x``; a missing income is in the first bin (below the first edge: the
    ``missing_income = "lower"`` rule for percentiles, which have no ``lower`` field)."""
    e = [float(v) for v in edges]
    last = len(e) - 2
    if last == 0:
        return "0"
    whens = " ".join(f"WHEN __x < {d.number(e[j + 1])} THEN {j}" for j in range(last))
    return f"CASE WHEN __x IS NULL THEN 0 {whens} ELSE {last} END"


def _group(d: Dialect, by: Sequence[str]) -> tuple[str, str]:
    """(select list, GROUP BY clause) grouping by the native columns."""
    cols = ", ".join(d.quote(c) for c in by)
    return (cols + ", ") if cols else "", (f" GROUP BY {cols}" if cols else "")


def _as_text_outer(d: Dialect, by: Sequence[str], inner: str, rest: Sequence[str]) -> str:
    """Wrap an aggregate query: the cell columns cast to text (on the small result), then ``rest``."""
    cols = [f"{d.as_text(d.quote(c))} AS {d.quote(c)}" for c in by] + list(rest)
    return f"SELECT {', '.join(cols)} FROM ({inner}) AS __agg"


def histogram_sql(d: Dialect, by: Sequence[str], edges: Sequence[float]) -> str:
    sel, grp = _group(d, by)
    grp = f" GROUP BY {sel}__bin"
    inner = f"SELECT {sel}__bin AS bin, COUNT(*) AS count FROM (SELECT {sel}{bin_expr(d, edges)} AS __bin FROM dp_base) AS __binned{grp}"
    return _as_text_outer(d, by, inner, ["bin", "count"])


def cents_expr(d: Dialect, lower: float, upper: float) -> str:
    x = income_or_lower(d, lower)
    return f"CAST(FLOOR(LEAST(GREATEST({x}, {d.number(lower)}), {d.number(upper)}) * 100 + 0.5) AS BIGINT)"


def sums_sql(d: Dialect, by: Sequence[str], lower: float, upper: float) -> str:
    sel, grp = _group(d, by)
    inner = f"SELECT {sel}COUNT(*) AS n, SUM({cents_expr(d, lower, upper)}) AS sum_cents FROM dp_base{grp}"
    return _as_text_outer(d, by, inner, ["n", "sum_cents"])


def outcomes_sql(d: Dialect, by: Sequence[str], statistic: StatisticSpec, spec: EngineSpec) -> str:
    """The relative-risk counts of ``statistic`` (:meth:`dpcore.engines.base.Engine.outcomes`); an outcome column
    is read as ``__o<i>``, its index in ``spec.outcome_columns``."""
    group, exposed, reference = compared_groups(statistic)
    outcome_index = None if statistic.outcome is None else spec.outcome_columns.index(statistic.outcome)
    outcome_below = statistic.outcome_below
    sel, grp = _group(d, by)
    g = d.as_text(d.quote(group))
    ex, ref = d.text(exposed), d.text(reference)
    # a missing outcome (or, with outcome_below, a missing income) is a third outcome value: the row stays
    # in n_exposed / n_reference and is not a case (NULL = 1 and NULL < t are not true)
    if outcome_index is not None:
        case = f"__o{outcome_index} = 1"
    elif outcome_below is not None:
        case = f"__x < {d.number(outcome_below)}"
    else:
        raise DPInputError("a relative risk needs an outcome column or outcome_below (what a case is)")
    where = f"{g} IN ({ex}, {ref})"
    inner = (
        f"SELECT {sel}SUM(CASE WHEN {g} = {ex} THEN 1 ELSE 0 END) AS n_exposed, "
        f"SUM(CASE WHEN {g} = {ref} THEN 1 ELSE 0 END) AS n_reference, "
        f"SUM(CASE WHEN {g} = {ex} AND {case} THEN 1 ELSE 0 END) AS cases_exposed, "
        f"SUM(CASE WHEN {g} = {ref} AND {case} THEN 1 ELSE 0 END) AS cases_reference "
        f"FROM dp_base WHERE {where}{grp}"
    )
    return _as_text_outer(d, by, inner, ["n_exposed", "n_reference", "cases_exposed", "cases_reference"])


def clipped_sql(d: Dialect, by: Sequence[str], lower: float, upper: float, order: bool = True) -> str:
    """Cell columns as text and the clipped income ``__c`` (sorted by cell and income when ``order``)."""
    cols = ", ".join(f"{d.as_text(d.quote(c))} AS {d.quote(c)}" for c in by)
    sel = (cols + ", ") if cols else ""
    clip = f"LEAST(GREATEST({income_or_lower(d, lower)}, {d.number(lower)}), {d.number(upper)})"
    sql = f"SELECT {sel}{clip} AS __c FROM dp_base"
    if order:
        keys = ", ".join(d.quote(c) for c in by)
        sql = f"SELECT * FROM ({sql}) AS __clipped ORDER BY {keys + ', ' if keys else ''}__c"
    return sql


def cells_sql(d: Dialect, by: Sequence[str]) -> str:
    """The distinct cells (native types) with an id 0, 1, ... (for the DuckDB Gini buckets)."""
    cols = ", ".join(d.quote(c) for c in by)
    return f"SELECT row_number() OVER () - 1 AS __id, {cols} FROM (SELECT DISTINCT {cols} FROM dp_base) AS __cells"


def cell_values_sql(d: Dialect, by: Sequence[str], lower: float, upper: float) -> str:
    """(cell id, clipped income) for every row, unsorted (joined with dp_cells)."""
    on = " AND ".join(f"b.{d.quote(c)} IS NOT DISTINCT FROM c.{d.quote(c)}" for c in by)
    clip = f"LEAST(GREATEST(COALESCE(b.__x, {d.number(lower)}), {d.number(lower)}), {d.number(upper)})"
    return f"SELECT c.__id AS __id, {clip} AS __c FROM dp_base AS b JOIN dp_cells AS c ON {on}"
