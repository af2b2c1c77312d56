"""The engines' shared parts: sources, progress, the CSV checks, the aggregate helpers and the Engine base class
(the package docstring of :mod:`dpcore.engines` describes them)."""

from __future__ import annotations

import glob as _glob
import hashlib
import os
import re
import sys
import tempfile
import time
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.io import csv_shape
from ..validation import DPInputError

if TYPE_CHECKING:  # the ledger reads files through engines.fingerprint: the engines' base does not load plans
    from ..plan import StatisticSpec

__all__ = [
    "ENGINES",
    "Source",
    "parse_source",
    "frame_source",
    "Engine",
    "EngineOptions",
    "Progress",
    "gini_cell",
    "bounding_key",
    "bin_index",
    "outcome_flag",
    "sort_arrow_cells",
    "sort_cells",
    "shown",
    "first_line",
    "CsvLayout",
    "csv_layout",
    "check_csv_last_line",
    "csv_line_too_long",
    "column_kind_refusal",
    "arrow_kind",
    "parquet_kinds_disagree",
    "income_not_numeric",
    "missing_income_refused",
    "negative_income_refused",
    "INCOME_FORMATS",
    "income_shape",
    "decide_income_format",
    "csv_delimiter",
]

ENGINES = ("duckdb", "spark", "pandas")
TRUE_WORDS = ("1", "1.0", "true", "t", "yes")
FALSE_WORDS = ("0", "0.0", "false", "f", "no")


# ---------------------------------------------------------------------------------------------
# One-line messages: what is quoted from the data is cut, so a 50 MB header or cell never fills a message
# ---------------------------------------------------------------------------------------------

#: characters of a value quoted from the data (a cell, a column name, a label) in a message
MAX_SHOWN_CHARS = 60
#: characters of a message taken from an engine's own error (its first line)
MAX_ENGINE_MESSAGE_CHARS = 300


def shown(value: Any, limit: int = MAX_SHOWN_CHARS) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters with the full length said."""
    text = repr(value)
    if len(text) <= limit:
        return text
    length = len(value) if isinstance(value, (str, bytes)) else len(text)
    return f"{text[:limit]}... ({length:,} characters)"


def first_line(exc: BaseException, limit: int = MAX_ENGINE_MESSAGE_CHARS) -> str:
    """The first non-empty line of an engine's error, cut to ``limit`` characters (DuckDB and Spark quote
    the offending line or header in their messages; the cut keeps the message one short line)."""
    text = str(exc).strip()
    line = next((ln.strip() for ln in text.splitlines() if ln.strip()), "") or type(exc).__name__
    return line if len(line) <= limit else f"{line[:limit]}... (cut; {len(line):,} characters)"


def missing_income_refused(column: str, count: int) -> DPInputError:
    """The one message for a plan with ``missing_income = "refuse"`` on data with a missing or non-finite
    income (seen only by whoever runs the release on the confidential data; nothing is charged)."""
    return DPInputError(
        f"the income column {column!r} has {count:,} missing or non-finite value(s) and the plan "
        "says missing_income = 'refuse': fill or remove them, or use missing_income = 'lower' "
        "(kept in n at the public lower bound); nothing was charged"
    )


def negative_income_refused(column: str, count: int) -> DPInputError:
    """The one message for a plan without a negative-income rule (``negative_incomes = "refuse"``, the
    default) on data with a negative income: never clipped silently (the app asks the same question);
    seen only by whoever runs the release on the confidential data; nothing is charged."""
    return DPInputError(
        f"the income column {column!r} has {count:,} negative value(s) and the plan says "
        "negative_incomes = 'refuse' (the default): set negative_incomes = 'clip' (to the lower "
        "bound) or 'drop' (counted as a missing income), as the app asks; nothing was charged"
    )


#: how a text income writes its numbers, the app's rule (dpcore.data.detect_number_format): "plain" (a decimal
#: point), "thousands_comma" (45,527 / 1,234.56: the commas are dropped), "decimal_comma" (1.234,56 / 45,5: dots
#: dropped, the comma read as the point). The engines consult the rule only when a plain parse fails.
INCOME_FORMATS = ("plain", "thousands_comma", "decimal_comma")


def income_shape(text: str) -> str:
    """The app's cell shape of one stripped text (dpcore.data's patterns: int, comma3, dot3, us, eu, point; the
    first that fits), "castable" for other texts a plain parse reads (nan, inf) and "bad" for the rest."""

    from ..data.io.numbers import NUMBER_PATTERNS

    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    for name, pattern in NUMBER_PATTERNS:
        if re.fullmatch(pattern, text):
            return name
    try:
        float(text)
        return "castable"
    except ValueError:
        return "castable" if text.lower() in ("nan", "+nan", "-nan") else "bad"


def decide_income_format(column: str, shapes: dict[str, str], delimiter: str | None) -> str:
    """The format of a text income from its shapes (shape -> one example text, every non-blank cell
    classified), by the app's own decision (:func:`dpcore.data.detect_number_format`, which depends only on
    the shapes found and the CSV delimiter). A cell that fits no number shape is refused, naming the smallest
    such text; ambiguous or mixed conventions are refused with the app's message, never guessed."""
    from ..data import detect_number_format

    if not isinstance(column, str):
        raise TypeError(f"column must be a column name (str), got {type(column).__name__}")
    if not isinstance(shapes, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in shapes.items()):
        raise TypeError("shapes must be a dict of shape name -> example text (str -> str)")
    if delimiter is not None and delimiter not in CSV_DELIMITERS:
        raise DPInputError(f"delimiter must be None or one of {CSV_DELIMITERS!r}, got {shown(delimiter)}")
    if "bad" in shapes:  # a text no format reads: named (the smallest, as every engine sees it)
        raise income_not_numeric(column, shapes["bad"])
    fmt = detect_number_format([t for s, t in shapes.items() if s != "castable"], delimiter=delimiter)
    if fmt.style in ("thousands_comma", "decimal_comma"):
        return fmt.style
    if fmt.style in ("ambiguous", "mixed"):
        raise DPInputError(fmt.explain(column).replace("upload the file again", "run the release again"))
    return "plain"


def csv_delimiter(source: Any) -> str | None:
    """The field delimiter of a CSV source (its first file's header, :func:`csv_layout`), None for the others:
    the app's number rule reads "45,527" as a thousand only in a comma-separated file."""
    if getattr(source, "kind", None) != "csv" or not getattr(source, "paths", ()):
        return None
    return csv_layout(source.paths[0]).delimiter


def income_not_numeric(column: str, smallest_bad: Any) -> DPInputError:
    """The one message for a text income that does not parse as a number. Every engine quotes the
    *smallest* such text (code-point order, the same in Python, DuckDB and Spark), so the engines name the
    same value whatever order they scan the rows in."""
    return DPInputError(f"the income column {column!r} is not numeric: found {shown(str(smallest_bad))}")


#: generic names of column types, the same words in every engine's messages
NESTED_KINDS = ("struct", "list", "map", "union")


def column_kind_refusal(column: str, kind: str, *, income: bool) -> DPInputError | None:
    """One rule for column types, whatever the engine (``kind`` is the engine's type in generic words:
    "number", "text", "boolean", "date/time", "binary", "null", "struct", "list", "map", "union", "other").

    * nested values (struct, list, map, union) are refused in every column a plan reads: their text form
      differs between engines, so the same file would give different cells;
    * the income must be a number or text (text is parsed as a number): booleans are refused (DuckDB and
      Spark cast them to 0/1, pandas did not: a true/false column is not an amount), and so are dates,
      times and binary values.
    Returns the error to raise, or None when the column is accepted."""
    if kind in NESTED_KINDS:
        return DPInputError(
            f"the column {column!r} holds nested values (a {kind}); the income, by, group, outcome "
            "and privacy-unit columns must hold text or numbers (flatten the column first)"
        )
    if income and kind == "boolean":
        return DPInputError(
            f"the income column {column!r} holds true/false values, not amounts: booleans are "
            "refused as incomes (convert them to numbers first if they are meant as 0/1)"
        )
    if income and kind not in ("number", "text", "null"):
        return DPInputError(f"the income column {column!r} holds {kind} values, not amounts")
    return None


def arrow_kind(arrow_type: Any) -> str:
    """An Arrow type in the generic words of :func:`dpcore.engines.column_kind_refusal`."""
    import pyarrow as pa

    if not isinstance(arrow_type, pa.DataType):
        raise TypeError(f"arrow_type must be a pyarrow DataType, got {type(arrow_type).__name__}")

    t = arrow_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_map(t):
        return "map"
    if (
        pa.types.is_list(t)
        or pa.types.is_large_list(t)
        or pa.types.is_fixed_size_list(t)
        or getattr(pa.types, "is_list_view", lambda _: False)(t)
        or getattr(pa.types, "is_large_list_view", lambda _: False)(t)
    ):
        return "list"
    if pa.types.is_union(t):
        return "union"
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        return "number"
    if pa.types.is_string(t) or pa.types.is_large_string(t) or getattr(pa.types, "is_string_view", lambda _: False)(t):
        return "text"
    if pa.types.is_temporal(t):
        return "date/time"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return "binary"
    if pa.types.is_null(t):
        return "null"
    return "other"


def parquet_kinds_disagree(paths: Sequence[str], columns: Sequence[str]) -> DPInputError | None:
    """The refusal of Parquet files (a folder or a glob) that give one of ``columns`` values of different kinds
    (:func:`arrow_kind`: numbers in one file, text in another), or None. The engines stack the files by column
    name, each in its own way (DuckDB and Spark widen to one type, text; the pandas engine reads each file's
    values as they are), and a text "1.234,56" is not the number of another file: one column, one kind, whatever
    the engine. A column holding only missing values ("null") agrees with any kind; a file without a column is
    the engines' own refusal (a missing column). Reads the files' footers only."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    seen: dict[str, tuple[str, str]] = {}
    for path in paths:
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as exc:
            return DPInputError(f"cannot read the Parquet file {shown(os.path.basename(path))}: {first_line(exc)}")
        for column in columns:
            if column not in schema.names:
                continue
            kind = arrow_kind(schema.field(column).type)
            if kind == "null":
                continue
            first = seen.setdefault(column, (kind, path))
            if first[0] != kind:
                return DPInputError(
                    f"the Parquet files disagree on the column {column!r}: {first[0]} in "
                    f"{shown(os.path.basename(first[1]))}, {kind} in {shown(os.path.basename(path))}; write every "
                    "file with the same type for it (nothing was charged)"
                )
    return None


# ---------------------------------------------------------------------------------------------
# CSV files: one reading of the header for every engine
# ---------------------------------------------------------------------------------------------

# The CSV limits (MAX_CSV_HEADER_BYTES, MAX_CSV_COLUMNS, MAX_CSV_ROW_BYTES) are dpcore.data.io's: an upload to the
# app is held to the same. Every engine reads only the columns the plan needs, so a wide file is fast (a
# 10,000-column file: DuckDB 0.2 s instead of 8.5 s with its type sniffer). The pandas engine parses blocks of
# MAX_CSV_ROW_BYTES (Arrow's reader: a row may straddle one block boundary, not two; it reads a bounded number of
# blocks ahead, ~90 MB with 4 MiB blocks, whatever the file size), DuckDB is given twice it as its
# ``max_line_size``: a row up to it is read by every engine, a row over twice it is refused by every engine with
# the same message (in between, Arrow's refusal depends on where the row falls in its blocks).

#: delimiters recognised in the header line (the most frequent one outside quotes wins; none -> ",")
CSV_DELIMITERS = (",", ";", "\t", "|")


def csv_fields_error(path: str, columns: int) -> DPInputError:
    """A row whose fields do not match the header (every engine reads CSV strictly: a row with an unquoted
    delimiter inside a value, e.g. ``1,234``, would otherwise shift every later field of the row)."""
    return DPInputError(
        f"the CSV file {shown(os.path.basename(path))} has a row whose fields do not match its "
        f"header's {columns:,} columns (a missing or extra field, a delimiter inside an unquoted "
        "value, or an unclosed quote)"
    )


def csv_row_too_long_error(path: str) -> DPInputError:
    return csv_shape.csv_row_too_long(f"the CSV file {shown(os.path.basename(path))}")


def csv_not_utf8_error(path: str) -> DPInputError:
    return DPInputError(f"the CSV file {shown(os.path.basename(path))} is not UTF-8 text")


@dataclass(frozen=True)
class CsvLayout:
    """A CSV file as every engine reads it: the header's column names (BOM and line end removed), the
    delimiter (taken from the header), and whether the file has rows after the header."""

    path: str
    columns: tuple[str, ...]
    delimiter: str

    def read_names(self, needed: Sequence[str]) -> list[str]:
        """The names every engine gives the columns: the needed ones keep theirs, the others get
        placeholders (duplicate or empty names elsewhere in the header do not matter)."""
        keep = set(needed)
        return [c if c in keep else f"__dpcore_unread_{i}" for i, c in enumerate(self.columns)]

    def arrow_parse_options(self):
        """Arrow's CSV dialect of this file, as the engines that read CSV with Arrow parse it: the header's
        delimiter, double quotes (a quote inside one doubled), line ends inside quoted values, empty lines
        skipped."""
        import pyarrow.csv as pacsv

        return pacsv.ParseOptions(
            delimiter=self.delimiter,
            quote_char='"',
            double_quote=True,
            newlines_in_values=True,
            ignore_empty_lines=True,
        )


def _open_csv_bytes(path: str):
    """The file's bytes, decompressed (.gz, .zst, .bz2) by Arrow as the engines do; None when this Arrow
    build lacks the codec (the engines then read the header themselves)."""
    if path.lower().endswith((".gz", ".zst", ".bz2")):
        import pyarrow as pa

        try:
            return pa.input_stream(path, compression="detect")
        except (pa.ArrowNotImplementedError, ValueError):
            return None
    return open(path, "rb")


def csv_line_too_long(path: str) -> bool:
    """Whether a line of ``path`` (decompressed: .gz, .zst, .bz2) is longer than twice MAX_CSV_ROW_BYTES, the
    length past which every engine refuses a row. One pass of two ``memchr`` per 1 MiB block: a line that long
    spans blocks, so only the run of bytes between the last line end of a block and the first of a later one
    counts."""
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, got {type(path).__name__}")
    limit = 2 * csv_shape.MAX_CSV_ROW_BYTES
    try:
        handle = _open_csv_bytes(path)
    except OSError as exc:
        raise DPInputError(f"cannot read the CSV file {shown(os.path.basename(path))}: {first_line(exc)}") from None
    if handle is None:
        return False
    run = 0
    try:
        with handle:
            while block := handle.read(1 << 20):
                first = block.find(b"\n")
                if first < 0:
                    run += len(block)
                    if run > limit:
                        return True
                    continue
                if run + first > limit:
                    return True
                run = len(block) - block.rfind(b"\n") - 1
    except (OSError, ValueError) as exc:  # a damaged compressed stream (Arrow's errors are of these kinds)
        raise DPInputError(f"cannot read the CSV file {shown(os.path.basename(path))}: {first_line(exc)}") from None
    return run > limit


def check_csv_last_line(path: str) -> None:
    """Refuse a CSV file whose last line is longer than twice MAX_CSV_ROW_BYTES, as every engine refuses any such
    row: DuckDB's reader (2.0) drops a last line longer than its buffer without a word (a header, one row and 2 GB
    of NUL bytes reads as one row, where the pandas engine refuses the file; any bytes do, not only NUL), and
    refuses such a line before other rows with an error of its own. A file read directly: its last 8 MiB; a
    compressed one: a pass over its decompressed bytes (:func:`csv_line_too_long`)."""
    if not isinstance(path, str):
        raise TypeError(f"path must be a string, got {type(path).__name__}")
    limit = 2 * csv_shape.MAX_CSV_ROW_BYTES
    if path.lower().endswith((".gz", ".zst", ".bz2")):
        if csv_line_too_long(path):
            raise csv_row_too_long_error(path)
        return
    try:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size <= limit:
                return
            fh.seek(max(0, size - limit - 3))
            tail = fh.read()
    except OSError as exc:
        raise DPInputError(f"cannot read the CSV file {shown(os.path.basename(path))}: {first_line(exc)}") from None
    tail = tail.removesuffix(b"\n").removesuffix(b"\r")  # the line end of the last row is no line of its own
    if len(tail) > limit and b"\n" not in tail[-(limit + 1) :]:
        raise csv_row_too_long_error(path)


def csv_layout(path: str, needed: Sequence[str] = ()) -> CsvLayout:
    """Read the header line of ``path`` (at most :data:`MAX_CSV_HEADER_BYTES`), find the delimiter and the
    column names; refuse an empty file, an overlong header, too many columns, a header that is not UTF-8,
    and a needed column that appears twice (engines rename duplicates differently)."""
    import csv
    import io

    name = shown(os.path.basename(path))
    try:
        handle = _open_csv_bytes(path)
        if handle is None:  # a codec this Arrow build lacks: the engines read it, the header is not checked
            return CsvLayout(path, (), ",")
        with handle:
            buf = bytearray()
            while b"\n" not in buf and len(buf) <= csv_shape.MAX_CSV_HEADER_BYTES:
                block = handle.read(64 * 1024)
                if not block:
                    break
                buf += block
    except OSError as exc:
        raise DPInputError(f"cannot read the CSV file {name}: {first_line(exc)}") from None
    end = buf.find(b"\n")
    if end < 0 and len(buf) > csv_shape.MAX_CSV_HEADER_BYTES or end > csv_shape.MAX_CSV_HEADER_BYTES:
        raise csv_shape.csv_header_too_long(f"the CSV file {name}")
    line_bytes = bytes(buf if end < 0 else buf[:end])
    if line_bytes.startswith(b"\xef\xbb\xbf"):
        line_bytes = line_bytes[3:]
    line_bytes = line_bytes.rstrip(b"\r")
    if not line_bytes.strip():
        raise DPInputError(f"the CSV file {name} is empty: it has no header line (the first line names the columns)")
    try:
        line = line_bytes.decode("utf-8")
    except UnicodeDecodeError:
        raise DPInputError(f"the header of the CSV file {name} is not UTF-8 text") from None
    counts = {d: csv_shape.count_outside_quotes(line, d) for d in CSV_DELIMITERS}
    delimiter = max(CSV_DELIMITERS, key=lambda d: counts[d]) if any(counts.values()) else ","
    columns = tuple(next(csv.reader(io.StringIO(line), delimiter=delimiter)))
    if len(columns) > csv_shape.MAX_CSV_COLUMNS:
        raise csv_shape.csv_too_many_columns(f"the CSV file {name}", len(columns))
    for col in dict.fromkeys(needed):
        times = columns.count(col)
        if times > 1:
            raise DPInputError(f"the column {col!r} appears {times} times in the header of the CSV file {name}")
    return CsvLayout(path, columns, delimiter)


# ---------------------------------------------------------------------------------------------
# Progress on stderr
# ---------------------------------------------------------------------------------------------


class Progress:
    """One line per step on stderr ("[engine] step ... done in 1.2 s"); ``quiet`` silences it."""

    def __init__(self, quiet: bool = False, stream: Any = None) -> None:
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self._t0 = time.perf_counter()

    def say(self, message: str) -> None:
        if not self.quiet:
            print(f"[{time.perf_counter() - self._t0:7.1f} s] {message}", file=self.stream, flush=True)

    def step(self, message: str) -> _Step:
        return _Step(self, message)


class _Step:
    def __init__(self, progress: Progress, message: str) -> None:
        self.progress, self.message = progress, message

    def __enter__(self) -> _Step:
        self.t = time.perf_counter()
        self.cpu = time.process_time()
        self.progress.say(f"{self.message} ...")
        return self

    def tick(self, done: int, total: int | None = None, what: str = "") -> None:
        """A progress bar line for long loops (at most every 2 s)."""
        now = time.perf_counter()
        if now - getattr(self, "_last", 0.0) < 2.0:
            return
        self._last = now
        if total:
            width = 30
            filled = int(width * done / total)
            self.progress.say(f"  [{'#' * filled}{'.' * (width - filled)}] {done}/{total} {what}")
        else:
            self.progress.say(f"  {done} {what}")

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.progress.say(
                f"{self.message}: done in {time.perf_counter() - self.t:.1f} s "
                f"(CPU {time.process_time() - self.cpu:.1f} s)"
            )


# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """Where the data are. ``kind``: csv | parquet | duckdb | postgresql | frame. ``location``: the path, glob or
    URL (for a frame: a public name, e.g. the uploaded file's); ``query``: the SQL query (database sources).
    ``paths``: the files (csv/parquet). ``frame``: the records of an in-memory table (kind "frame", the pandas
    engine only: :func:`frame_source`)."""

    kind: str
    location: str
    query: str | None = None
    paths: tuple[str, ...] = ()
    frame: Any = field(default=None, compare=False, repr=False)

    @property
    def sql_query(self) -> str:
        """The query of a database source (:func:`parse_source` requires one for duckdb and postgresql)."""
        if self.query is None:
            raise DPInputError(f"a {self.kind} source needs a query (the rows to release from)")
        return self.query

    def file_bytes(self) -> int | None:
        """The total size of the source's files; None for a database source or a file that cannot be read now
        (what a caller choosing how to read it falls back from)."""
        if not self.paths:
            return None
        try:
            return sum(os.path.getsize(p) for p in self.paths)
        except OSError:
            return None

    def describe(self) -> str:
        """A description for the record (a database URL without its password)."""
        if self.kind == "postgresql":
            parts = urllib.parse.urlsplit(self.location)
            netloc = parts.hostname or ""
            if parts.port:
                netloc += f":{parts.port}"
            if parts.username:
                netloc = f"{parts.username}@{netloc}"
            loc = urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, "", ""))
            return f"postgresql query on {loc}: {self.query}"
        if self.kind == "duckdb":
            return f"duckdb query on {self.location}: {self.query}"
        if self.kind == "frame":
            return f"in-memory table {self.location}"
        return f"{self.kind} {self.location}"


_CSV_SUFFIXES = (".csv", ".csv.gz", ".tsv", ".txt", ".csv.zst")


# complexity above the cap: one branch per source kind, in detection order
def frame_source(frame: pd.DataFrame, name: str = "table") -> Source:
    """An in-memory table as a source of the pandas engine: its records are read from memory, never written to
    disk (the app's Release mode releases an uploaded file this way). ``name``: a public description for the
    record (e.g. the uploaded file's name). Columns are typed as the frame holds them, as a Parquet file's are."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"a frame source needs a pandas DataFrame, got {type(frame).__name__}")
    if not all(isinstance(c, str) for c in frame.columns):
        raise DPInputError("every column of a table to release must have a name (text)")
    if not isinstance(name, str) or not name.strip():
        raise DPInputError("a frame source needs a name for the record (e.g. the file's name)")
    return Source("frame", name.strip(), frame=frame)


def parse_source(data: str, query: str | None = None) -> Source:  # noqa: C901
    """Interpret ``--data`` (and ``--query``); raise :class:`DPInputError` with what is accepted."""
    if not isinstance(data, str) or not data.strip():
        raise DPInputError(
            "--data is required: a CSV or Parquet file, a directory or glob of Parquet files, "
            "duckdb:///file.db?query=SELECT ..., or postgresql://... with --query"
        )
    data = data.strip()
    if query is not None and not query.strip():
        raise DPInputError("--query is empty")
    lower = data.lower()
    if lower.startswith("duckdb:"):
        # SQLAlchemy's convention, as the ledger's sqlite URLs: duckdb:///relative.db, duckdb:////abs/path.db
        if not data.startswith("duckdb:///"):
            raise DPInputError(
                "a DuckDB source is duckdb:///relative/path.db or duckdb:////absolute/path.db "
                "(with ?query=SELECT ... or --query)"
            )
        path, _, qs = data[len("duckdb:///") :].partition("?")
        path = urllib.parse.unquote(path)
        q = urllib.parse.parse_qs(qs).get("query", [None])[0] if qs else None
        if q and query:
            raise DPInputError("give the query either in the duckdb:// URL (?query=...) or with --query, not both")
        q = q or query
        if not q:
            raise DPInputError("a duckdb:// source needs a query: duckdb:///file.db?query=SELECT ... or --query")
        if os.path.exists(path) and not os.path.isfile(path):
            raise _not_a_regular_file(path)
        if not os.path.isfile(path):
            raise DPInputError(f"no DuckDB database file at {path!r}")
        return Source("duckdb", path, q)
    if lower.startswith(("postgresql://", "postgres://")):
        if not query:
            raise DPInputError("a postgresql:// source needs --query \"SELECT ...\" (the rows to release from)")
        return Source("postgresql", data, query)
    if query:
        raise DPInputError("--query applies to database sources only (duckdb:///file.db or postgresql://...)")
    if lower.endswith(".duckdb") or lower.endswith(".db"):
        raise DPInputError(f"{data!r} looks like a database: use duckdb:///{data}?query=SELECT ... (or --query)")
    p = Path(data)
    if p.is_dir():
        files = sorted(str(f) for f in p.rglob("*.parquet"))
        if not files:
            raise DPInputError(f"the directory {data!r} holds no .parquet files")
        return Source("parquet", str(p), None, tuple(files))
    if any(ch in data for ch in "*?["):
        files = sorted(_glob.glob(data, recursive=True))
        if not files:
            raise DPInputError(f"no file matches {data!r}")
        if all(f.lower().endswith(".parquet") for f in files):
            return Source("parquet", data, None, tuple(files))
        if all(f.lower().endswith(_CSV_SUFFIXES) for f in files):
            return Source("csv", data, None, tuple(files))
        raise DPInputError(f"{data!r} matches files that are neither all Parquet nor all CSV")
    if p.exists() and not p.is_file():
        raise _not_a_regular_file(data)
    if not p.is_file():
        raise DPInputError(f"no such file or directory: {data!r}")
    if lower.endswith(".parquet") or lower.endswith(".pq"):
        return Source("parquet", str(p), None, (str(p),))
    if lower.endswith(_CSV_SUFFIXES):
        return Source("csv", str(p), None, (str(p),))
    raise DPInputError(f"cannot tell the format of {data!r}: name it .csv, .csv.gz or .parquet")


def _not_a_regular_file(path: str) -> DPInputError:
    """/dev/zero, a FIFO or a socket is there but holds no file to read (it was called "no such file")."""
    return DPInputError(
        f"--data {path!r} is not a regular file (a device, a pipe or a socket): give a CSV or Parquet file, a "
        "directory of Parquet files or a database URL"
    )


_PG_NUMERIC = {20: "int64", 21: "int64", 23: "int64", 700: "float64", 701: "float64", 1700: "float64", 16: "bool"}


def stage_postgres(source: Source, directory: str, progress: Progress | None = None, batch_rows: int = 200_000) -> str:
    """Stream a PostgreSQL query into ``directory``/stage.parquet (server-side cursor, batches); return the path."""
    try:
        import psycopg
    except ImportError:  # pragma: no cover
        raise DPInputError("PostgreSQL sources need the 'psycopg' package (pip install 'dpcore[postgres]')") from None
    import pyarrow as pa
    import pyarrow.parquet as pq

    out = os.path.join(directory, "stage.parquet")
    writer = None
    rows = 0
    try:
        with psycopg.connect(source.location, autocommit=False) as conn:
            with conn.cursor(name="dpcore_release") as cur:
                cur.itersize = batch_rows
                try:
                    cur.execute(source.sql_query)
                except psycopg.Error as exc:
                    raise DPInputError(f"the PostgreSQL query failed: {first_line(exc)}") from None
                while True:
                    batch = cur.fetchmany(batch_rows)
                    if writer is None:
                        if cur.description is None:  # a statement that returns no rows
                            raise DPInputError("the PostgreSQL query returns no rows (give a SELECT)")
                        names = [d.name for d in cur.description]
                        types = [_PG_NUMERIC.get(d.type_code, "string") for d in cur.description]
                        arrow_types = {
                            "int64": pa.int64(),
                            "float64": pa.float64(),
                            "bool": pa.bool_(),
                            "string": pa.string(),
                        }
                        schema = pa.schema([(n, arrow_types[t]) for n, t in zip(names, types, strict=True)])
                        writer = pq.ParquetWriter(out, schema)
                    if not batch:
                        break
                    cols = list(zip(*batch, strict=True))
                    arrays: list[Any] = []
                    for col, t in zip(cols, types, strict=True):
                        values: Sequence[Any] = col
                        if t == "string":
                            values = [None if v is None else str(v) for v in col]
                        elif t == "float64":
                            values = [None if v is None else float(v) for v in col]
                        arrays.append(pa.array(values, type=schema.field(len(arrays)).type))
                    writer.write_table(pa.Table.from_arrays(arrays, schema=schema))
                    rows += len(batch)
                    if progress is not None:
                        progress.say(f"  staged {rows:,} rows from PostgreSQL")
    except psycopg.Error as exc:
        raise DPInputError(f"cannot read from PostgreSQL: {first_line(exc)}") from None
    finally:
        if writer is not None:
            writer.close()
    return out


# ---------------------------------------------------------------------------------------------
# Shared per-row definitions (every engine implements exactly these)
# ---------------------------------------------------------------------------------------------


def bin_index(x: np.ndarray, edges: Sequence[float]) -> np.ndarray:
    """Bin of each value: j with edges[j] <= x < edges[j+1]; below the first edge -> 0, at/above the last -> last."""
    e = np.asarray(edges, dtype=float)
    return np.clip(np.searchsorted(e, np.asarray(x, dtype=float), side="right") - 1, 0, e.size - 2)


def outcome_flag(text: Any) -> float | None:
    """1 / 0 for the accepted outcome words (case-insensitive), None for a missing value (None or a float
    NaN); any other value raises a DPInputError naming it (never a silent NaN)."""
    if text is None or (isinstance(text, float) and np.isnan(text)):
        return None
    t = str(text).strip().lower()
    if t in TRUE_WORDS:
        return 1.0
    if t in FALSE_WORDS:
        return 0.0
    raise DPInputError(
        f"outcome value {shown(text)} is not one of the accepted words "
        f"({', '.join(sorted(set(TRUE_WORDS) | set(FALSE_WORDS)))})"
    )


def compared_groups(statistic: StatisticSpec) -> tuple[str, str, str]:
    """The group column and the exposed and reference labels a relative-risk statistic compares (a validated
    plan has all three; a hand-built statistic without them is refused, not counted as nothing)."""
    group, exposed, reference = statistic.group, statistic.exposed, statistic.reference
    if group is None or exposed is None or reference is None:
        raise DPInputError(
            f"{statistic.where}: a relative risk needs a group column and its exposed and reference labels"
        )
    return group, exposed, reference


def bounding_key(seed: int, parts: Sequence[str | None]) -> str:
    """md5 hex of "seed|part|part|..." with missing parts skipped (SQL concat_ws); the sampling order."""
    return hashlib.md5("|".join([str(int(seed)), *[p for p in parts if p is not None]]).encode("utf-8")).hexdigest()


def gini_cell(sorted_x: np.ndarray, *, lower: float, upper: float, beta: float) -> tuple[int, float, float]:
    """(n, Gini eq. (1), beta-smooth sensitivity) of one cell's sorted clipped incomes.

    Decided from public inputs only where the Gini module refuses: n = 1 has Gini 0 for every data set
    (sensitivity 0); an all-zero cell (possible only when lower = 0) has Gini 0 by the convention of
    :mod:`dpcore.gini` and smooth sensitivity = the global sensitivity (n-1)/n, the largest any
    beta-smooth bound can be (its local sensitivity is (n-1)/n, reached by one person earning upper).
    """
    from .. import gini as gini_module

    xs = np.asarray(sorted_x, dtype=float)
    n = int(xs.size)
    if n <= 1:
        return n, 0.0, 0.0
    total = float(xs.sum())
    if total <= 0:
        return n, 0.0, float(gini_module.gini_global_sensitivity(n, lower, upper))
    ranks = 2.0 * np.arange(1, n + 1) - n - 1.0
    g = float(np.dot(ranks, xs) / (n * total))
    ss = gini_module.smooth_sensitivity(xs, lower=lower, upper=upper, beta=beta, method="exact")
    return n, g, float(ss.value)


def sort_cells(frame: Any, by: Sequence[str], within: Sequence[str] = ()) -> pd.DataFrame:
    """Rows sorted by cell labels as text (missing first; a stable sort), then by the integer columns ``within``
    (a histogram's ``bin``: engines return a cell's bins in any order, DuckDB and Spark differently from run to
    run): the canonical order in which noise is drawn. The label columns come back as object arrays of ``str`` (``None`` for missing) in which a label is one
    Python object however many rows carry it (:func:`_ranked_labels`): the 600,600-row PSEO-like histogram holds
    1.8M labels of 28,600 cells, 150 MB as one object per value (what ``astype(object)`` made), 15 MB shared.

    ``frame``: a pandas DataFrame, or a pyarrow Table straight from the engine (the same frame as sorting
    ``table.to_pandas()``, without pandas' conversion of the label columns: 0.14 s of the 10M-row histogram)."""
    if _is_arrow_table(frame):
        return sort_arrow_cells(lambda: frame, by, within)
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    _check_by(by)
    _check_by(within)
    if not (by or within) or frame.empty:
        return frame.reset_index(drop=True)
    out = frame.copy(deep=False)
    ranks = []
    for col in by:
        codes, uniques = pd.factorize(out[col], use_na_sentinel=True)
        labels, rank = _ranked_labels(codes, np.asarray(uniques, dtype=object))
        out[col] = pd.Series(labels, index=out.index, dtype=object)  # object: pandas would infer its str dtype
        ranks.append(rank)
    ranks += [np.asarray(out[col], dtype=np.int64) for col in within]
    order = np.lexsort(ranks[::-1])  # stable; the first column is the primary key
    return out.take(order).reset_index(drop=True)


def _check_by(by: Any) -> None:
    if isinstance(by, str) or not isinstance(by, (list, tuple)) or not all(isinstance(c, str) for c in by):
        raise TypeError("by must be a list of column names")


def _is_arrow_table(frame: Any) -> bool:
    return type(frame).__module__.startswith("pyarrow") and type(frame).__name__ == "Table"


def sort_arrow_cells(fetch: Callable[[], Any], by: Sequence[str], within: Sequence[str] = ()) -> pd.DataFrame:
    """:func:`sort_cells` of the pyarrow Table that ``fetch()`` returns (an engine's query result), held here
    alone: each label column is dictionary-encoded by Arrow (its distinct labels once), the other columns
    converted by Arrow, and the table is dropped before the sorted copy is made (the 100M-row histogram's
    release peaks at this moment, with DuckDB's aggregate memory still held: about 20 MB lower)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    _check_by(by)
    table = fetch()
    if not by or table.num_rows == 0:
        frame = table.to_pandas()
        for col in by:  # the label columns of an empty result: object, as sort_cells makes them
            frame[col] = pd.Series(frame[col].tolist(), index=frame.index, dtype=object)
        return sort_cells(frame, by, within)
    names = table.column_names
    ranks, labels_of = [], {}
    for col in by:
        column = table.column(col)
        if not (
            pa.types.is_string(column.type) or pa.types.is_large_string(column.type) or pa.types.is_null(column.type)
        ):
            raise TypeError(f"cell labels must be text, got {column.type}")  # engine bug, not user input
        encoded = pc.dictionary_encode(column).combine_chunks()
        codes = pc.fill_null(encoded.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        labels_of[col], rank = _ranked_labels(codes, np.asarray(encoded.dictionary.to_pylist(), dtype=object))
        ranks.append(rank)
    others = [c for c in names if c not in labels_of]
    rest = table.select(others).to_pandas() if others else pd.DataFrame()
    del table, column, encoded, codes
    ranks += [np.asarray(rest[col], dtype=np.int64) for col in within]
    order = np.lexsort(ranks[::-1])  # stable; the first column is the primary key
    del ranks
    out = pd.DataFrame({c: pd.Series(labels_of[c], dtype=object) if c in labels_of else rest[c] for c in names})
    return out.take(order).reset_index(drop=True)


def _ranked_labels(codes: np.ndarray, distinct: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(labels, rank) of one cell-label column given as ``codes`` into its ``distinct`` labels (-1: missing): an
    object array holding one ``str`` per distinct label (``None`` for missing), and each row's rank in text order
    (missing -1: first). Text order is Python's ``str`` order (code points), as sorting the object values does."""
    bad = [v for v in distinct if not isinstance(v, str)]
    if bad:
        raise TypeError(f"cell labels must be text, got {type(bad[0]).__name__}")  # engine bug, not user input
    rank_of = np.empty(len(distinct), dtype=np.int64)
    rank_of[sorted(range(len(distinct)), key=distinct.__getitem__)] = np.arange(len(distinct))
    present = codes >= 0
    rank = np.full(len(codes), -1, dtype=np.int64)
    rank[present] = rank_of[codes[present]]
    labels = np.empty(len(codes), dtype=object)  # None where missing
    labels[present] = distinct[codes[present]]
    return labels, rank


# ---------------------------------------------------------------------------------------------
# The engine interface
# ---------------------------------------------------------------------------------------------


@dataclass
class EngineSpec:
    """What an engine needs from the plan: the income column, every text column, the bounding."""

    income: str
    text_columns: tuple[str, ...]
    privacy_unit: str | None = None
    max_rows_per_person: int | None = None
    bounding_seed: int = 0
    outcome_columns: tuple[str, ...] = ()
    #: the plan's public rule for a missing income ("lower" or "refuse", :data:`dpcore.plan.MISSING_INCOME_RULES`)
    missing_income: str = "lower"
    #: the plan's public rule for a negative income ("refuse", "clip" or "drop",
    #: :data:`dpcore.plan.NEGATIVE_INCOME_RULES`); "clip" here for engines built without a plan
    negative_incomes: str = "clip"
    #: how a text income writes its numbers (:data:`INCOME_FORMATS`), set by the engine when it reads the data
    income_format: str = "plain"

    @property
    def bounding(self) -> tuple[str, int]:
        """(privacy unit, m): the person column and the rows kept per person, for a spec with a privacy unit."""
        if not self.privacy_unit or self.max_rows_per_person is None:
            raise DPInputError("bounding contributions needs a privacy_unit and max_rows_per_person")
        return self.privacy_unit, self.max_rows_per_person

    @classmethod
    def from_plan(cls, plan: Any) -> EngineSpec:
        text = []
        outcomes = []
        for s in plan.statistics:
            text.extend(s.by)
            if s.kind == "relative_risk":
                text.append(s.group)
                if s.outcome is not None:
                    outcomes.append(s.outcome)
        text = [c for c in dict.fromkeys(text) if c != plan.income]
        return cls(
            plan.income,
            tuple(text),
            plan.privacy_unit,
            plan.max_rows_per_person,
            plan.bounding_seed,
            tuple(dict.fromkeys(outcomes)),
            getattr(plan, "missing_income", "lower"),
            getattr(plan, "negative_incomes", "refuse"),
        )

    @property
    def key_columns(self) -> tuple[str, ...]:
        """The text columns hashed into the bounding key (in this order, after the unit)."""
        return self.text_columns


@dataclass(frozen=True)
class EngineOptions:
    """How an engine runs, not what it computes (no option changes a released number): ``master``, the Spark
    master URL (None: ``spark.master`` from spark-submit's configuration, else ``local[*]``); ``memory_limit``,
    DuckDB's ``memory_limit`` (None: :data:`dpcore.engines.duckdb_engine.DEFAULT_MEMORY_LIMIT`). An engine
    reads the options that concern it (the command line passes both, whichever engine it opens)."""

    master: str | None = None
    memory_limit: str | None = None


class Engine:
    """Common interface; see the module docstring. Frames returned have the ``by`` columns as text.

    One constructor for every engine: the checks every engine applies before reading (a multi-file Parquet
    source whose files disagree on a needed column's kind is refused here), the progress and the scratch
    directory, then the engine's own start (:meth:`_start`: a connection, a Spark session, its state)."""

    name = "engine"

    def __init__(
        self,
        source: Source,
        spec: EngineSpec,
        *,
        progress: Progress | None = None,
        workdir: str | None = None,
        options: EngineOptions | None = None,
    ) -> None:
        self.source = source
        self.spec = spec
        if source.kind == "parquet" and len(source.paths) > 1:  # one rule for every engine, before any reading
            error = parquet_kinds_disagree(source.paths, self._needed())
            if error is not None:
                raise error
        self.progress = progress or Progress(quiet=True)
        self.options = options or EngineOptions()
        self._tmp = tempfile.TemporaryDirectory(prefix=f"dpcore-{self.name}-", dir=workdir)
        self.workdir = self._tmp.name
        self._start()

    def _start(self) -> None:
        """The engine's own start, after the common part of the constructor (``self.workdir`` exists)."""

    # to implement -------------------------------------------------------------------------
    def histogram(self, by: Sequence[str], edges: Sequence[float]) -> pd.DataFrame:
        """Columns: *by, "bin" (0-based int), "count" (int); only non-zero (cell, bin) pairs."""
        raise NotImplementedError

    def sums(self, by: Sequence[str], lower: float, upper: float) -> pd.DataFrame:
        """Columns: *by, "n" (rows), "sum_cents" (exact sum of cents of incomes clipped to [lower, upper])."""
        raise NotImplementedError

    def outcomes(self, by: Sequence[str], statistic: StatisticSpec) -> pd.DataFrame:
        """Columns: *by, n_exposed, n_reference, cases_exposed, cases_reference (cells with a row in either group).

        ``statistic`` is the relative-risk statistic: its ``group`` column, the ``exposed`` and ``reference``
        labels, and the case rule (``outcome`` a 0/1 column, or an income below ``outcome_below``)."""
        raise NotImplementedError

    def gini_inputs(self, by: Sequence[str], lower: float, upper: float, beta: float) -> pd.DataFrame:
        """Columns: *by, n, confidential_gini, confidential_smooth_sensitivity (see :func:`gini_cell`)."""
        raise NotImplementedError

    def prepare(self) -> None:
        """Check the columns (missing, non-numeric income, bad outcome values) and set up the bounded rows."""
        raise NotImplementedError

    def has_rows(self) -> bool:
        """Whether the source has at least one row (after the checks of :meth:`prepare`); reads one row, not all."""
        raise NotImplementedError

    def close(self) -> None:
        self._tmp.cleanup()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # helpers ------------------------------------------------------------------------------
    def _missing_columns(self, available: Sequence[str]) -> None:
        needed = [
            self.spec.income,
            *([self.spec.privacy_unit] if self.spec.privacy_unit else []),
            *self.spec.text_columns,
            *self.spec.outcome_columns,
        ]
        have = set(available)
        missing = [c for c in dict.fromkeys(needed) if c not in have]
        if missing:
            names = list(available)
            listed_names: list[str] = []
            for c in names:  # at most ~200 characters of names, each cut to 40
                if listed_names and sum(len(n) + 2 for n in listed_names) + len(shown(c, 40)) > 200:
                    break
                listed_names.append(shown(c, 40))
            listed = ", ".join(listed_names) + (
                f" and {len(names) - len(listed_names):,} more" if len(names) > len(listed_names) else ""
            )
            raise DPInputError(
                f"column {missing[0]!r} is not in the data"
                + (f" (nor {', '.join(repr(m) for m in missing[1:])})" if len(missing) > 1 else "")
                + f"; the data have: {listed}"
            )

    def _needed(self) -> list[str]:
        """The columns the plan reads (income, unit, text columns, outcomes), each once."""
        s = self.spec
        return list(
            dict.fromkeys(
                [s.income, *([s.privacy_unit] if s.privacy_unit else []), *s.text_columns, *s.outcome_columns]
            )
        )

    def _csv_layouts(self) -> list[CsvLayout]:
        """Every CSV file's header, checked the same way for every engine (each file must have every
        needed column: a column missing from one file of several is an error, never a column of NULLs)."""
        layouts = []
        for path in self.source.paths:
            layout = csv_layout(path, self._needed())
            if layout.columns:
                self._missing_columns(layout.columns)
            check_csv_last_line(path)
            layouts.append(layout)
        return layouts

    def _check_column_kinds(self, kinds: dict[str, str]) -> None:
        """Apply :func:`column_kind_refusal` to the needed columns (``kinds``: column -> generic kind)."""
        for col in self._needed():
            error = column_kind_refusal(col, kinds.get(col, "text"), income=(col == self.spec.income))
            if error is not None:
                raise error
