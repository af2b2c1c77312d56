"""Cell keys and cell sizes of a release plan: declared (public) keys, DP partition selection, noisy n.

Why: a table that lists only the cells present in the data, each with its exact number of rows, is not
differentially private under "replace one person": a neighbouring file in which one person sits in another
cell lists another set of cells (a one-person cell appears or vanishes) and other exact n's. Two public ways
to get the cells, and one to get their sizes:

* **declared keys** (a top-level ``[keys]`` table of the plan: a list of values per ``by`` column, the cells
  being the cross product of the lists of a statistic's ``by`` columns, or ``file = "keys.csv"``, the allowed
  combinations). The cells listed are exactly the declared ones, whatever the data hold: a declared cell absent
  from the data is released like any other (n = 0 plus noise) and rows whose key is not declared are dropped
  (a public rule). Nothing about which cells exist depends on the data.
* **DP partition selection** (no declared keys, cell sizes not public; drawn by
  :class:`dpcore.mechanisms.CellSizesMechanism`): the cell counts go through OpenDP's Laplace threshold
  mechanism (``make_laplace_threshold``, Rogers et al. 2023, "A unifying privacy analysis framework for
  unknown domain algorithms"): discrete Laplace noise of scale 2m / n_epsilon on every present
  cell's count, and only the cells whose noisy count reaches a threshold T are kept. A cell absent from one file
  and present (with at most m rows of one person) in its neighbour is kept with probability <= delta, which is
  why the mechanism is (epsilon, delta)-DP; T is the smallest integer for which OpenDP's privacy map gives
  delta <= ``selection_delta`` at the input distance (l0, l1, linf) = (2m, 2m, m) (one person moves at most m
  rows, each between two cells). The released n of a kept cell is its noisy count (the same draw).
* **noisy n** (declared keys, cell sizes not public): every declared cell's count + discrete Laplace of scale
  2m / n_epsilon (L1 sensitivity 2m: one person moves m rows, each changing two counts by 1).

``cell_sizes = "public"`` keeps the PSEO assumption (cells present and their exact n are public, as the Census
Bureau publishes PSEO cell counts): the paper's setting and the bundled PSEO example. Cells below a public
size threshold are then warned about.

Neighbouring relation with private cell sizes: replace one person; their rows may move between cells (and
exposure groups). What that changes besides the counts: a clipped sum moves by at most max(U - L, 2 max(|L|, |U|))
per row (removed from one cell, added to another) -- :func:`dpcore.stratified.mean_sum_sensitivity_cents`; histograms and outcome
counts by 2 per row, as already calibrated; a Gini's smooth sensitivity assumes a fixed n per cell, so a Gini
by cells needs ``cell_sizes = "public"`` (refused otherwise when the plan is read).
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from .lazy import LazyModule
from .validation import DPInputError

if TYPE_CHECKING:
    import pandas as pd
else:
    # imported when cells are first computed: reading a plan (the command line, before its engines) needs no pandas
    pd = LazyModule("pandas")

__all__ = [
    "CELL_SIZES",
    "DEFAULT_N_EPSILON",
    "DEFAULT_SELECTION_DELTA",
    "DEFAULT_SMALL_CELL_THRESHOLD",
    "MAX_DECLARED_CELLS",
    "DeclaredKeys",
    "KeysError",
    "parse_keys",
    "cell_text",
    "restrict_to_declared",
    "cell_counts",
    "restrict_to_cells",
    "nearly_unique_cells",
]

CELL_SIZES = ("public", "noisy")
#: the epsilon of each statistic's noisy cell sizes (and of the partition selection) when the plan gives none:
#: charged on top of the statistic's own epsilon. 0.1 adds discrete Laplace noise of scale 20 (m = 1) to n.
DEFAULT_N_EPSILON = 0.1
#: the delta of one statistic's DP partition selection when the plan gives none. Ten selections fit the
#: default 1e-9 delta cap of a new ledger account; at n_epsilon = 0.1 (m = 1) the threshold is 462 rows.
DEFAULT_SELECTION_DELTA = 1e-10
#: with cell_sizes = "public": cells with fewer rows are warned about (one-person cells are the PSEO worry)
DEFAULT_SMALL_CELL_THRESHOLD = 10
#: declared cells per statistic (cross product or file rows): each is an output row and a noisy draw
MAX_DECLARED_CELLS = 1_000_000
#: bytes of a keys file (read whole when the plan is read)
MAX_KEYS_FILE_BYTES = 64_000_000
#: a statistic's data cells are "nearly unique per row" when there are more than this share of its rows
NEARLY_UNIQUE_SHARE = 0.5


class KeysError(DPInputError):
    """A ``[keys]`` table that does not validate (dpcore.plan reports it as a PlanError: the plan module sits
    above this one, so this module never imports it)."""


def _fail(field_name: str, message: str) -> DPInputError:
    return KeysError(f"plan: [keys] field '{field_name}' {message}")


def _key_value(value: Any, column: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise _fail(column, f"must list text (or integer) values of the column, got {str(value)[:60]!r}")
    text = str(value)
    if len(text) > 200:
        raise _fail(column, f"lists a value of {len(text):,} characters; at most 200")
    return text


@dataclass(frozen=True)
class DeclaredKeys:
    """The public cells of a plan: per-column value lists (``values``) or the combinations of a keys file
    (``combinations``, one tuple per row, in ``columns`` order). Values are text (compared as text)."""

    columns: tuple[str, ...]
    values: tuple[tuple[str, ...], ...] | None = None
    combinations: tuple[tuple[str, ...], ...] | None = None
    file: str | None = None

    def covers(self, by: Sequence[str]) -> bool:
        """True when every ``by`` column is declared (then the statistic's cells are the declared ones)."""
        return bool(by) and all(c in self.columns for c in by)

    def cells(self, by: Sequence[str]) -> list[tuple[str, ...]]:
        """The declared cells of a statistic by ``by`` (in declared order, no repeats)."""
        index = [self.columns.index(c) for c in by]
        if self.values is not None:
            return list(itertools.product(*(self.values[i] for i in index)))
        return list(dict.fromkeys(tuple(row[i] for i in index) for row in self._combinations()))

    def _combinations(self) -> tuple[tuple[str, ...], ...]:
        if self.combinations is None:
            raise KeysError("declared keys need their values or their combinations")
        return self.combinations

    def count(self, by: Sequence[str]) -> int:
        if self.values is not None:
            return math.prod(len(self.values[self.columns.index(c)]) for c in by)
        return len(self.cells(by))

    def to_dict(self) -> dict[str, Any]:
        if self.file is not None:
            return {"file": self.file}
        if self.values is None:
            raise KeysError("keys declared by combinations are written as their file")
        return {c: list(v) for c, v in zip(self.columns, self.values, strict=True)}


# complexity above the cap: a flat list of independent checks of one keys file
def parse_keys(  # noqa: C901
    raw: Any,
    base_dir: str | os.PathLike | None = None,
    *,
    max_column_name_chars: int = 200,
) -> DeclaredKeys:
    """The plan's ``[keys]`` table: ``column = [values]`` entries, or ``file = "keys.csv"`` (a CSV whose header
    names the declared columns and whose rows are the allowed combinations; a relative path is relative to the
    plan file's folder, ``base_dir``); column names of at most ``max_column_name_chars`` (the plan's limit)."""
    if not isinstance(raw, Mapping) or not raw:
        raise _fail("keys", "must be a table of column = [values] entries or file = \"keys.csv\"")
    if "file" in raw:
        if len(raw) != 1:
            raise _fail("file", "is the only field of [keys] when given (the file lists the allowed combinations)")
        name = raw["file"]
        if not isinstance(name, str) or not name.strip():
            raise _fail("file", f"must be a path (text), got {str(name)[:60]!r}")
        path = Path(name).expanduser()
        if not path.is_absolute() and base_dir is not None:
            path = Path(base_dir) / path
        if not path.is_file():
            raise _fail("file", f"names no file: {str(path)[:200]!r}")
        if path.stat().st_size > MAX_KEYS_FILE_BYTES:
            raise _fail("file", f"is over {MAX_KEYS_FILE_BYTES:,} bytes")
        try:
            text = path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError:
            raise _fail("file", f"{str(path)[:200]!r} is not UTF-8 text") from None
        rows = [r for r in csv.reader(io.StringIO(text)) if r]
        if len(rows) < 2:
            raise _fail("file", f"{str(path)[:200]!r} needs a header (the columns) and at least one combination")
        header = tuple(h.strip() for h in rows[0])
        if any(not h or len(h) > max_column_name_chars for h in header) or len(set(header)) != len(header):
            raise _fail("file", f"{str(path)[:200]!r}: the header must name distinct columns")
        for line, row in enumerate(rows[1:], start=2):
            if len(row) != len(header):
                raise _fail("file", f"{str(path)[:200]!r} line {line}: {len(row)} fields, the header has {len(header)}")
        combos = tuple(dict.fromkeys(tuple(v for v in row) for row in rows[1:]))
        if len(combos) > MAX_DECLARED_CELLS:
            raise _fail("file", f"lists {len(combos):,} combinations; at most {MAX_DECLARED_CELLS:,}")
        return DeclaredKeys(header, combinations=combos, file=str(path.absolute()))
    columns, values = [], []
    for column, listed in raw.items():
        if not isinstance(column, str) or not column.strip() or len(column) > max_column_name_chars:
            raise _fail(str(column)[:60], "is not a column name")
        if not isinstance(listed, list) or not listed:
            raise _fail(column, "must be a non-empty list of the column's public values")
        texts = tuple(_key_value(v, column) for v in listed)
        if len(set(texts)) != len(texts):
            raise _fail(column, "lists a value twice")
        columns.append(column)
        values.append(texts)
    return DeclaredKeys(tuple(columns), values=tuple(values))


def cell_text(value: Any) -> str:
    """A cell label as text, as keys are compared: missing -> "", an integral float -> its integer ("3", the
    same cell as the integer 3 of another engine), booleans -> "true" / "false"."""
    if value is None:
        return ""
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (float, np.floating)):
        if math.isnan(value):
            return ""
        return str(int(value)) if float(value).is_integer() else repr(float(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    try:
        if pd.isna(value):
            return ""
    except (TypeError, ValueError):
        pass
    return str(value)


def _check_frame(frame: Any, by: Any, what: str) -> list[str]:
    """The aggregate frame and its label columns, checked (these helpers take engine output; a wrong call is a
    programming error said in words, never a KeyError from pandas)."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{what}: frame must be a pandas DataFrame of per-cell aggregates, got {type(frame).__name__}")
    if isinstance(by, str) or not isinstance(by, (list, tuple)) or not all(isinstance(c, str) for c in by):
        raise TypeError(f"{what}: by must be a list of column names, got {by!r}"[:200])
    missing = [c for c in by if c not in frame.columns]
    if missing:
        raise DPInputError(f"{what}: the aggregate has no column {missing[0]!r}"[:200])
    return list(by)


def _check_keys(keys: Any, what: str) -> list[tuple]:
    if (
        isinstance(keys, (str, bytes))
        or not isinstance(keys, (list, tuple))
        or not all(isinstance(k, tuple) for k in keys)
    ):
        raise TypeError(f"{what}: cell keys must be a list of tuples of text, got {type(keys).__name__}")
    return list(keys)


#: exact types of object-column values whose equality (as pandas.factorize sees it) implies equal cell_text,
#: as long as booleans and numbers are not mixed (True == 1 and False == 0 for factorize, "true" != "1")
_SAFE_OBJECT_TYPES = frozenset({str, np.str_, int, float, bool, np.bool_, type(None)})
_BOOL_TYPES = frozenset({bool, np.bool_})


def _safe_object_types() -> frozenset:
    """:data:`_SAFE_OBJECT_TYPES` with pandas' missing values (pandas is imported when data are first read)."""
    return _SAFE_OBJECT_TYPES | {type(pd.NaT), type(pd.NA)}


def _factorize_safe(column: pd.Series) -> Any:
    """The values to factorize when grouping equal values never merges two cell texts (else None: the column
    is converted row by row)."""
    dtype = column.dtype
    if isinstance(dtype, np.dtype):
        if dtype.kind in "biufmM":
            return column
        if dtype.kind != "O":
            return None
        values = column.to_numpy()
        types = set(map(type, values))
        numeric = types - _safe_object_types()
        if not all(issubclass(t, (np.integer, np.floating)) for t in numeric):
            return None
        if types & _BOOL_TYPES and (numeric or types & {int, float}):
            return None
        return values
    from pandas.core.dtypes.dtypes import BaseMaskedDtype

    if isinstance(dtype, (pd.CategoricalDtype, pd.StringDtype, pd.DatetimeTZDtype, BaseMaskedDtype)):
        return column
    return None


def _text_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, texts): the cell text of row i is texts[codes[i]]; texts distinct, in order of first appearance.
    cell_text is called once per distinct value (the whole column only for columns of unusual types)."""
    values = _factorize_safe(column)
    if values is None:
        row_texts = np.array([cell_text(v) for v in column.tolist()], dtype=object)
        codes, uniques = pd.factorize(row_texts)
        return codes.astype(np.int64, copy=False), np.asarray(uniques, dtype=object)
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    texts = [cell_text(v) for v in uniques.tolist()]
    codes = codes.astype(np.int64, copy=False)
    if len(codes) and codes.min() < 0:
        codes = np.where(codes < 0, len(texts), codes)
        texts.append("")
    # distinct values may share a text (1 and 1.0, "3" and 3): the codes of the texts, in first-appearance order
    text_codes, text_uniques = pd.factorize(np.array(texts, dtype=object))
    codes = text_codes.astype(np.int64, copy=False)[codes]
    renumber, order = pd.factorize(codes)
    return renumber.astype(np.int64, copy=False), np.asarray(text_uniques, dtype=object)[order]


def _run_starts(frame: pd.DataFrame, by: Sequence[str]) -> np.ndarray | None:
    """The rows whose ``by`` labels differ from the previous row's, when every ``by`` column holds only text (or
    missing values): then ``==`` is the equality that factorize uses and equal labels have equal cell text, so a
    row equal to the one before it has its cell. None when a column holds anything else (``True == 1``, but
    their cell texts differ). An engine's aggregate frame is sorted by cell: a histogram's 21 rows per cell
    collapse to one, and the cells of its 600,600 rows are found in 0.16 s instead of 0.36 s."""
    change = np.zeros(len(frame), dtype=bool)
    change[:1] = True
    for c in by:
        column = frame[c]
        text_dtype = isinstance(column.dtype, pd.StringDtype)
        if not text_dtype and (
            column.dtype != object or pd.api.types.infer_dtype(column, skipna=True) not in ("string", "empty")
        ):
            return None
        values = column.to_numpy(dtype=object)
        differs = values[1:] != values[:-1]
        if not isinstance(differs, np.ndarray) or differs.dtype != bool:  # pd.NA compares to NA
            return None
        change[1:] |= differs
    return np.flatnonzero(change)


def _cells_of(frame: pd.DataFrame, by: Sequence[str]) -> tuple[np.ndarray, list[tuple[str, ...]]]:
    """(group, cells) of a non-empty frame and non-empty ``by``: ``cells`` the distinct keys (tuples of cell
    text, as :func:`keys_of` gives them) in order of first appearance, ``group[i]`` the index in ``cells`` of
    row i's key."""
    starts = _run_starts(frame, by)
    if starts is not None and len(starts) < len(frame):  # the cells of the runs' first rows, spread over the runs
        group, cells = _cells_of(frame.iloc[starts], by)
        return np.repeat(group, np.diff(np.append(starts, len(frame)))), cells
    columns = [_text_codes(frame[c]) for c in by]
    group = columns[0][0]
    for codes, texts in columns[1:]:
        group, _ = pd.factorize(group * max(len(texts), 1) + codes)
        group = group.astype(np.int64, copy=False)
    _, first = np.unique(group, return_index=True)
    cells = list(zip(*(texts[codes[first]].tolist() for codes, texts in columns), strict=True))
    return group, cells


def keys_of(frame: pd.DataFrame, by: Sequence[str]) -> list[tuple[str, ...]]:
    """The cell key of every row (a tuple of :func:`cell_text` of its ``by`` labels); cell_text is called once
    per distinct label value, not per row (a percentiles frame has 21 rows per cell)."""
    if not len(frame) or not by:
        return []
    columns = [_text_codes(frame[c]) for c in by]
    return list(zip(*(texts[codes].tolist() for codes, texts in columns), strict=True))


def restrict_to_declared(frame: pd.DataFrame, by: Sequence[str], declared: Sequence[tuple[str, ...]]) -> pd.DataFrame:
    """An aggregate frame (label columns ``by`` + aggregate columns) restricted to the declared cells, with a row
    of zeros for every declared cell the data lack, labels as declared text, in declared order. Rows of cells
    not declared are dropped (a public rule)."""
    by = _check_frame(frame, by, "restrict_to_declared")
    declared = _check_keys(declared, "restrict_to_declared")
    order = {key: i for i, key in enumerate(declared)}
    if len(frame) and by:  # one look-up per distinct cell, not per row
        group, cells = _cells_of(frame, by)
        position = np.array([order.get(k, -1) for k in cells], dtype=np.int64)[group]
    else:
        position = np.array([order.get(k, -1) for k in keys_of(frame, by)], dtype=np.int64)
    kept = frame.loc[position >= 0].copy() if len(frame) else frame.copy()
    kept_pos = position[position >= 0]
    for j, c in enumerate(by):
        labels = np.empty(len(declared), dtype=object)
        labels[:] = [d[j] if j < len(d) else None for d in declared]
        kept[c] = labels[kept_pos].tolist()
    missing = np.setdiff1d(np.arange(len(declared), dtype=np.int64), kept_pos).tolist()
    if missing:
        zeros: dict[str, Any] = {c: [declared[p][j] for p in missing] for j, c in enumerate(by)}
        for c in frame.columns:
            if c not in by:
                zeros[c] = [0] * len(missing)
        filler = pd.DataFrame(zeros, columns=list(frame.columns))
        for c in frame.columns:
            if c not in by and frame[c].dtype != object:
                filler[c] = filler[c].astype(frame[c].dtype)
        kept = pd.concat([kept, filler], ignore_index=True) if len(kept) else filler
        kept_pos = np.concatenate([kept_pos, np.array(missing, dtype=np.int64)])
    kept["_declared_order"] = kept_pos
    out = kept.sort_values("_declared_order", kind="stable").drop(columns="_declared_order")
    return out.reset_index(drop=True)


def cell_counts(frame: pd.DataFrame, kind: str, by: Sequence[str]) -> tuple[list[tuple[str, ...]], np.ndarray]:
    """(cell keys, counts) of an aggregate frame: rows per cell; for a relative risk the keys carry the group
    as a last element ("exposed" / "reference") and count its rows."""
    by = _check_frame(frame, by, "cell_counts")
    if kind not in ("percentiles", "relative_risk", "mean", "gini"):
        raise DPInputError(f"cell_counts: unknown statistic kind {kind!r}"[:200])
    if kind == "percentiles":  # several rows (bins) per cell: counts summed per cell, cells in order of first row
        if not len(frame):
            frame["count"].to_numpy(np.int64)  # a frame without counts fails as it always did
            return [], np.zeros(0, dtype=np.int64)
        if by:
            group, cells = _cells_of(frame, by)
        else:
            group, cells = np.zeros(len(frame), dtype=np.int64), [()]
        totals = np.zeros(len(cells), dtype=np.int64)
        np.add.at(totals, group, frame["count"].to_numpy(np.int64))
        return cells, totals
    keys: list[tuple[str, ...]] = keys_of(frame, by) if by else [()] * len(frame)
    if kind == "relative_risk":
        out_keys = [k + (g,) for k in keys for g in ("exposed", "reference")]
        counts = np.column_stack([frame["n_exposed"].to_numpy(np.int64), frame["n_reference"].to_numpy(np.int64)])
        return out_keys, counts.reshape(-1)
    return keys, frame["n"].to_numpy(np.int64)


def restrict_to_cells(frame: pd.DataFrame, by: Sequence[str], cells: set) -> pd.DataFrame:
    """The rows of an aggregate frame whose cell is in ``cells`` (keys as :func:`cell_counts` gives them)."""
    by = _check_frame(frame, by, "restrict_to_cells")
    if not isinstance(cells, (set, frozenset)):
        raise TypeError(f"restrict_to_cells: cells must be a set of cell keys, got {type(cells).__name__}")
    if len(frame) and by:  # one look-up per distinct cell, not per row
        group, distinct = _cells_of(frame, by)
        mask = np.array([k in cells for k in distinct], dtype=bool)[group]
    else:
        mask = np.array([k in cells for k in keys_of(frame, by)], dtype=bool)
    return frame.loc[mask].reset_index(drop=True) if len(frame) else frame


def nearly_unique_cells(n_cells: int, n_rows: int) -> bool:
    """True when a statistic's data cells are (nearly) one per row: more cells than half its rows (at least 2)."""
    return n_cells >= 2 and n_cells > NEARLY_UNIQUE_SHARE * n_rows
