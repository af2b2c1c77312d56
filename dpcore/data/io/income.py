"""The income column of a table: :func:`clean_income_column` validates it, :func:`load_income_file` reads a file and
does it, :class:`IncomeData` is the form in which every data source reaches the pages."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import numpy as np

from ...lazy import LazyModule
from ...validation import DPInputError, check_int
from .numbers import detect_number_format
from .source import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, shown
from .table import guess_income_column, income_like_column, numeric_columns, read_table

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a file is first read (cold start: see dpcore.lazy)

#: What to do with negative incomes (losses): refuse the file, drop those rows, or clip them to 0.
NEGATIVE_POLICIES = ("refuse", "drop", "clip")


@dataclass(frozen=True)
class IncomeData:
    """A loaded income column plus the frame it came from.

    values: the income column as finite floats (what single-column methods use).
    frame: the table the values came from, restricted to the rows kept (``frame[column]`` equals
        ``values`` row by row, so group columns line up), or None for generated data.
    confidential: True for an uploaded file (planning on it is not private; pages say so).
    notes: what validation changed (rows dropped, values clipped), shown on screen.
    bounds: public bounds (L, U) that come with the data by construction (the two-point data of
        the Gini paper), else None: pages then ask for bounds chosen without looking at the data.
    public_cell_sizes: the number of rows in each cell of the data's group columns is published (its
        catalogue entry says so: the bundled PSEO table, whose cells the Census Bureau publishes), so a
        release plan may treat cell sizes as public. Never set by a file's name: an upload has False.
    """

    values: np.ndarray
    name: str
    source: str  # "synthetic" | "example" | "shared" | "upload" | "snapshot" (the app's, of an upload)
    column: str = "income"
    confidential: bool = False
    frame: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    bounds: tuple[float, float] | None = None
    public_cell_sizes: bool = False

    @property
    def n(self) -> int:
        """Number of records (public under the "replace one record" relation)."""
        return int(self.values.size)


def explain_column(frame: pd.DataFrame, column: str) -> str | None:
    """Why ``frame[column]`` cannot be an income column, as a sentence to act on, or None if it can."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if column not in frame.columns:
        return f"column {shown(column)} is not in the file"
    known = frame.attrs.get("number_formats", {}).get(str(column))
    if known:
        return known
    col = frame[column]
    if pd.api.types.is_bool_dtype(col):
        return f"column {shown(column)} holds true/false values, not incomes"
    if pd.api.types.is_numeric_dtype(col):
        return None if col.notna().any() else f"column {shown(column)} has no values: every cell is missing"
    if column in numeric_columns(frame[[column]]):
        return None
    fmt = detect_number_format(col.dropna())
    return fmt.explain(str(column)) if not fmt.parseable else None


def clean_income_column(
    frame: pd.DataFrame, column: str, *, negative: str = "refuse", min_rows: int = 2
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Validate ``frame[column]`` as incomes; return the kept rows (column as float) and notes.

    * missing cells (empty, ``NA``, ``NaN`` ...) are dropped and counted in a note;
    * text that is not a number raises DPInputError naming how many cells, one example and its
      line in the file (line 1 is the header, so data row i is line i + 1);
    * infinite values raise DPInputError;
    * negative values are counted; ``negative="refuse"`` raises DPInputError, ``"drop"`` drops
      those rows, ``"clip"`` sets them to 0 (both with a note). Incomes below 0 are losses; the
      DP methods here assume a public lower bound of 0 or more, hence the explicit choice;
    * fewer than ``min_rows`` (at least 2) rows left raises DPInputError.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if negative not in NEGATIVE_POLICIES:
        raise DPInputError(f"negative must be one of {', '.join(NEGATIVE_POLICIES)}, got {negative!r}")
    min_rows = check_int(min_rows, "min_rows", minimum=2)
    if column not in frame.columns:
        avail = ", ".join(shown(c) for c in list(frame.columns)[:12])
        raise DPInputError(f"column {shown(column)} is not in the file; its columns are: {avail}")
    col = frame[column]
    n_rows = len(col)
    if pd.api.types.is_bool_dtype(col):
        raise DPInputError(f"column {shown(column)} holds true/false values, not incomes")
    missing = col.isna().to_numpy()
    if missing.all():
        raise DPInputError(f"column {shown(column)} has no values: all {n_rows:,} cells are missing")
    if pd.api.types.is_numeric_dtype(col):
        values = col.to_numpy(dtype=float, na_value=np.nan)
    else:
        text = col.astype(str).str.strip()
        values = pd.to_numeric(text.where(~col.isna()), errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(values) & ~missing
        if bad.any():
            idx = np.flatnonzero(bad)
            first = int(idx[0])
            examples = ", ".join(f"{shown(col.iloc[i])} (line {i + 2})" for i in idx[:3])
            raise DPInputError(
                f"column {shown(column)} has {idx.size:,} non-numeric "
                f"value{'s' if idx.size > 1 else ''}, e.g. {examples}; the first is in data row "
                f"{first + 1}. Fix or delete these cells (write incomes as plain numbers such as "
                "31500.50, no currency signs or thousands separators), or choose another column"
            )
    inf = np.isinf(values)
    if inf.any():
        i = int(np.flatnonzero(inf)[0])
        raise DPInputError(
            f"column {shown(column)} has {int(inf.sum()):,} infinite values "
            f"(e.g. line {i + 2}); replace them with real amounts or delete those rows"
        )
    notes: list[str] = []
    keep = ~np.isnan(values)
    n_missing = int((~keep).sum())
    if n_missing:
        notes.append(f"dropped {n_missing:,} of {n_rows:,} rows with a missing {column}")
    neg = keep & (values < 0)
    n_neg = int(neg.sum())
    if n_neg:
        i = int(np.flatnonzero(neg)[np.argmin(values[neg])])
        detail = f"{n_neg:,} negative value{'s' if n_neg > 1 else ''} (smallest {values[i]:,.6g} on line {i + 2})"
        if negative == "refuse":
            raise DPInputError(
                f"column {shown(column)} has {detail}. Incomes below 0 are losses; choose what to do "
                "with them: drop those rows or clip them to 0"
            )
        if negative == "drop":
            keep &= ~neg
            notes.append(f"dropped {detail}")
        else:
            values = np.where(neg, 0.0, values)
            notes.append(f"clipped {detail} to 0")
    n_keep = int(keep.sum())
    if n_keep < min_rows:
        why = f" ({'; '.join(notes)})" if notes else ""
        raise DPInputError(
            f"only {n_keep} usable value{'s' if n_keep != 1 else ''} left in column {shown(column)} after "
            f"cleaning{why}; at least {min_rows} are needed"
        )
    out = frame.loc[keep].copy()
    out[column] = values[keep]
    out = out.reset_index(drop=True)
    return out, tuple(notes)


def load_income_file(
    source: bytes | str | Path | BinaryIO,
    *,
    column: str | None = None,
    negative: str = "refuse",
    name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_rows: int = DEFAULT_MAX_ROWS,
    min_rows: int = 2,
    confidential: bool = True,
) -> IncomeData:
    """Read, validate and clean a user file: :func:`read_table` + :func:`clean_income_column`.

    ``column=None`` picks the only numeric column, or the one whose name looks like an income
    (:func:`guess_income_column`), and says so in the notes. The result is marked
    ``confidential`` (default True: an uploaded file is treated as the confidential data itself).
    """
    frame, notes = read_table(source, file_name=name, max_bytes=max_bytes, max_rows=max_rows)
    label = name or (Path(source).name if isinstance(source, (str, Path)) else "uploaded file")
    candidates = numeric_columns(frame)
    if column is None:
        wanted = income_like_column(list(frame.columns))
        if wanted is not None and wanted not in candidates:
            raise DPInputError(
                f"{label}: the column {wanted!r} looks like the income but cannot be used: "
                f"{explain_column(frame, wanted)}. No other column is used in its place; pass "
                "column=... to choose one"
            )
        if not candidates:
            if frame.shape[1] == 1:
                only = frame.columns[0]
                raise DPInputError(
                    f"{label} has only one column, {shown(only)}, and it is not numeric (e.g. "
                    f"{shown(frame[only].dropna().iloc[0]) if frame[only].notna().any() else 'empty'}); "
                    "if the file uses another delimiter, save it as comma-separated CSV"
                )
            cols = ", ".join(shown(c) for c in list(frame.columns)[:12])
            raise DPInputError(f"{label} has no numeric column (columns: {cols}); incomes must be numbers")
        column = guess_income_column(candidates) or candidates[0]  # candidates is not empty here
        if len(candidates) > 1:
            notes = notes + (f"used column {column!r} (numeric columns: {', '.join(candidates[:12])})",)
    cleaned, more = clean_income_column(frame, column, negative=negative, min_rows=min_rows)
    return IncomeData(
        values=cleaned[column].to_numpy(dtype=float),
        name=str(label),
        source="upload",
        column=str(column),
        confidential=bool(confidential),
        frame=cleaned,
        notes=tuple(notes) + more,
    )
