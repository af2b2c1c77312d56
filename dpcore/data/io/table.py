"""A user's file as a table (:func:`read_table`: CSV, Parquet or Excel, detected from the content) and the columns
that can hold incomes."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ...lazy import LazyModule
from ...validation import DPInputError, check_int
from .binary import XLS_MAGIC, parse_excel, parse_parquet
from .csv_shape import check_csv_shape
from .numbers import normalize_number_columns
from .source import DEFAULT_MAX_BYTES, DEFAULT_MAX_ROWS, decode_text, gunzip, read_source, shown, sniff_delimiter

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a file is first read (cold start: see dpcore.lazy)

#: Columns above which a parsed CSV's per-column blocks are joined (one copy) before the column checks.
_WIDE_COLUMNS = 256


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def read_table(
    source: bytes | str | Path | BinaryIO,
    *,
    file_name: str | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """Parse a CSV, Parquet or Excel (.xlsx) file held in memory (or at a path) into a DataFrame.

    Returns ``(frame, notes)``. The format is detected from the content (Parquet magic ``PAR1``,
    gzip magic, zip magic ``PK`` = .xlsx read with openpyxl (first sheet, with a note), old .xls
    refused with what to do, else CSV text with the delimiter among ``, ; TAB |`` taken from the
    header line), so a wrong file extension does not matter. CSV text is decoded as UTF-16 (BOM,
    or NUL bytes alternating with ASCII), UTF-8 (a BOM is allowed), else Latin-1 (with a note);
    files with NUL bytes or many control characters are refused as binary. Nothing is written to
    disk.

    Number formats are never guessed silently (:func:`detect_number_format`): text columns written
    with thousands separators ("45,527", "1,234.56") or a decimal comma ("1.234,56", "45,5" in a
    ";"-separated file) are converted to numbers with a note; columns whose separators could mean
    either (only "45,527" cells in a ";" file) or that mix both styles stay text, and
    ``frame.attrs["number_formats"]`` keeps the reason (:func:`explain_column`).

    Raises DPInputError for: a file over ``max_bytes`` (also after decompression), more than
    ``max_rows`` data rows, an empty file, a header without data rows, a zip that is not a
    workbook, an .xls workbook, a binary file, a CSV that cannot be parsed (the parser's line
    number is passed on).
    """
    max_bytes = check_int(max_bytes, "max_bytes", minimum=1)
    max_rows = check_int(max_rows, "max_rows", minimum=1)
    data, label = read_source(source, max_bytes)
    if file_name:
        label = str(file_name)
    notes: list[str] = []
    if not data.strip():
        raise DPInputError(f"{label} is empty: it has no header and no data rows")
    if data[:2] == b"\x1f\x8b":
        data = gunzip(data, max_bytes, label)
        if not data.strip():
            raise DPInputError(f"{label} is empty after decompression")
    if data[:8] == XLS_MAGIC:
        raise DPInputError(
            f"{label} is an old Excel workbook (.xls, Excel 97-2003), which is not read here; open it "
            "in Excel and save the sheet as CSV (UTF-8) or as .xlsx, then upload that"
        )
    if data[:2] == b"PK":
        frame, more = parse_excel(data, label, max_bytes, max_rows)
        notes += more
        frame, more = normalize_number_columns(frame, None, label)
        notes += more
    elif data[:4] == b"PAR1":
        frame, more = parse_parquet(data, label, max_bytes, max_rows)
        notes += more
        frame, more = normalize_number_columns(frame, None, label)
        notes += more
    else:
        try:
            frame, more = _parse_text(data, label, max_rows)
        except DPInputError as exc:
            raise _named_as_other_format(label, exc) from None
        notes += more
    read_as_text = data[:2] != b"PK" and data[:4] != b"PAR1"
    if read_as_text and _named_format(label):
        if frame.shape[1] == 0 or len(frame) == 0:
            _raise_named_as_other_format(label)  # a text file named .xlsx is not "a header without data rows"
        notes.append(f"{label} is named {_named_format(label)} but holds text: it was read as a CSV table")
    return _finish_frame(frame, notes, label, max_rows)


#: file-name endings of the binary formats, and what their files start with
_BINARY_FORMATS = {".xlsx": "an Excel workbook (.xlsx files are zip archives)", ".parquet": "a Parquet file"}


def _named_format(label: str) -> str | None:
    """The binary format a file's name claims (".xlsx", ".parquet"), or None."""
    name = str(label).lower()
    return next((ending for ending in _BINARY_FORMATS if name.endswith(ending)), None)


def _named_as_other_format(label: str, exc: DPInputError) -> DPInputError:
    """The error of a file whose name claims a binary format its bytes do not have (else ``exc`` as is)."""
    ending = _named_format(label)
    if ending is None:
        return exc
    return DPInputError(
        f"{label} is named {ending} but is not {_BINARY_FORMATS[ending]}: its bytes are not in that format "
        f"({exc}). Save it again from the program that made it as {ending}, or, if it is a CSV table, "
        "rename it .csv"
    )


def _raise_named_as_other_format(label: str) -> None:
    ending = _named_format(label)
    if ending is not None:
        raise DPInputError(
            f"{label} is named {ending} but is not {_BINARY_FORMATS[ending]}: it holds text without a table "
            f"of data rows. Save it again from the program that made it as {ending}, or upload the CSV table"
        )


def _parse_text(data: bytes, label: str, max_rows: int) -> tuple[pd.DataFrame, list[str]]:
    """CSV text (decoded, delimiter sniffed, number formats normalised) into a frame, with notes."""
    notes: list[str] = []
    text, note = decode_text(data, label)
    if note:
        notes.append(note)
    sep = sniff_delimiter(text)
    check_csv_shape(text, text.encode("utf-8") if note and "UTF-16" in note else data, sep, label)
    try:
        frame = pd.read_csv(io.StringIO(text), sep=sep, nrows=max_rows + 1, skipinitialspace=True, low_memory=False)
    except pd.errors.EmptyDataError:
        raise DPInputError(f"{label} has no columns: it is empty or blank") from None
    except pd.errors.ParserError as exc:
        msg = str(exc).strip().splitlines()[-1][:200]
        raise DPInputError(
            f"{label} is not a well-formed CSV table: {msg}. Check that every row "
            "has as many fields as the header and that quotes are closed"
        ) from None
    except (ValueError, OverflowError, MemoryError) as exc:
        raise DPInputError(f"{label} cannot be read as CSV ({type(exc).__name__}: {str(exc)[:200]})") from None
    if frame.shape[1] > _WIDE_COLUMNS:
        # pandas' CSV reader gives each column a block of its own, and every later step then pays per block (at
        # the column limit, seconds of the server's CPU: docs/benchmarks.md, "Timings behind choices in the code");
        # one copy joins the blocks of each type
        frame = frame.copy()
    text_frame = None
    if sep == ";":  # a European export: 1.234 may be a thousand, so look at the text again
        recheck = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
        if recheck and len(frame) <= max_rows:
            text_frame = pd.read_csv(
                io.StringIO(text), sep=sep, usecols=recheck, dtype=str, nrows=max_rows + 1, skipinitialspace=True
            )
    frame, more = normalize_number_columns(frame, sep, label, text_frame)
    notes += more
    return frame, notes


def _finish_frame(frame: pd.DataFrame, notes: list[str], label: str, max_rows: int) -> tuple[pd.DataFrame, tuple]:
    if frame.shape[1] == 0:
        raise DPInputError(f"{label} has no columns")
    if len(frame) > max_rows:
        raise DPInputError(f"{label} has more than {max_rows:,} data rows (the row limit); use a random sample of rows")
    if len(frame) == 0:
        cols = ", ".join(shown(c) for c in list(frame.columns)[:8])
        raise DPInputError(f"{label} has a header ({cols}) but no data rows")
    formats = {str(k).strip(): v for k, v in frame.attrs.get("number_formats", {}).items()}
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs["number_formats"] = formats
    if all(_is_number(c) for c in frame.columns):
        notes.append(
            f"the first line ({', '.join(list(frame.columns)[:3])}) was read as column names; "
            "if it is data, add a header line such as 'income' at the top of the file"
        )
    dup = frame.columns[frame.columns.duplicated()].tolist()
    if dup:
        raise DPInputError(
            f"{label} has duplicate column names: {', '.join(shown(d) for d in dup[:5])}; "
            "rename them so each column has its own name"
        )
    return frame, tuple(notes)


# ---------------------------------------------------------------------------------------------
# Choosing and validating the income column.
# ---------------------------------------------------------------------------------------------

INCOME_NAMES = (
    "income",
    "pincp",
    "inctot",
    "ptotval",
    "earnings",
    "wage",
    "wages",
    "wagp",
    "salary",
    "inc",
    "revenue",
    "y1_p50_earnings",
)


def _numeric_share(col: pd.Series, min_share: float = 0.5, sample: int = 2000) -> tuple[int, int]:
    """(number of non-missing cells, number of them that parse as numbers).

    Text columns are first judged on their first ``sample`` distinct values (cheap for a column of
    a million labels such as "a", "b", "c"); only columns that look numeric there are parsed in full.
    """
    present = col.dropna()
    if present.empty:
        return 0, 0
    head = pd.Series(pd.unique(present.to_numpy()[: 20 * sample])[:sample])
    parsed = pd.to_numeric(head.astype(str).str.strip(), errors="coerce")
    if parsed.notna().mean() < min_share:
        return int(head.size), int(parsed.notna().sum())
    parsed = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    return int(present.size), int(parsed.notna().sum())


def numeric_columns(frame: pd.DataFrame, *, min_share: float = 0.5) -> list[str]:
    """Columns that can hold incomes: numeric dtype, or text where most cells are numbers.

    A text column qualifies when at least ``min_share`` of its non-missing cells parse as numbers
    (mixed columns such as ``"1200", "n/a?", "3400"`` are offered; choosing one then reports the
    bad cells precisely). Boolean columns and all-missing columns are not offered.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    out: list[str] = []
    unclear = frame.attrs.get("number_formats", {})  # ambiguous or mixed separators: never offered
    dtypes = list(frame.dtypes.items())
    # the numeric columns in one operation: a column at a time pays pandas' overhead per column, seconds of the
    # server's CPU at the CSV column limit (docs/benchmarks.md, "Timings behind choices in the code")
    numeric = [i for i, (_, dtype) in enumerate(dtypes) if _is_plain_number(dtype)]
    filled = frame.iloc[:, numeric].notna().any(axis=0).to_numpy() if numeric else []
    has_values = dict(zip(numeric, filled, strict=True))
    for i, (name, dtype) in enumerate(dtypes):
        if str(name) in unclear or pd.api.types.is_bool_dtype(dtype):
            continue
        if i in has_values:
            if has_values[i]:
                out.append(str(name))
            continue
        if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            present, numeric_cells = _numeric_share(frame.iloc[:, i], min_share)
            if present and numeric_cells / present >= min_share:
                out.append(str(name))
    return out


def _is_plain_number(dtype: Any) -> bool:
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def guess_income_column(columns: Sequence[str]) -> str | None:
    """The column whose name looks most like an income (``income``, ``PINCP``, ``INCTOT`` ...)."""
    if isinstance(columns, (str, bytes, bytearray)) or not isinstance(columns, (Sequence, pd.Index, np.ndarray)):
        raise TypeError(f"columns must be a list of column names, got {type(columns).__name__}")
    if not all(isinstance(c, str) for c in columns):
        raise TypeError("columns must be a list of column names (strings)")
    columns = list(columns)
    lower = {c.lower(): c for c in columns}
    for key in INCOME_NAMES:
        if key in lower:
            return lower[key]
    for c in columns:
        if any(k in c.lower() for k in ("income", "earn", "wage", "salar", "inc")):
            return c
    return columns[0] if columns else None


def income_like_column(columns: Sequence[str]) -> str | None:
    """The column whose *name* says income (``income``, ``PINCP``, ``wage`` ...), or None.

    Unlike :func:`guess_income_column` it never falls back to the first column: the upload page
    uses it to tell the user when the column that looks like the income cannot be used.
    """
    columns = [str(c) for c in columns]
    lower = {c.lower(): c for c in columns}
    for key in INCOME_NAMES:
        if key in lower:
            return lower[key]
    for c in columns:
        if any(k in c.lower() for k in ("income", "earn", "wage", "salar")):
            return c
    return None
