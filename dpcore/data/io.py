"""Reading a user's file: CSV, Parquet or Excel (.xlsx) bytes into a table, and its income column into
:class:`IncomeData`, the form in which every data source reaches the pages.

:func:`read_table` parses a file given as bytes, a path or a binary file object in memory (never written
to disk or logged), within the size, row and cell limits below (gzip, Parquet and workbook bombs are
refused before they are unpacked; a workbook is parsed in a child process with CPU and memory limits);
:func:`detect_number_format` / :func:`parse_numbers` read thousands separators and decimal commas when
a column's spelling is unambiguous; :func:`numeric_columns` lists the columns that can hold incomes,
:func:`clean_income_column` validates the chosen one (missing values dropped and counted, negative values
refused / dropped / clipped to 0 as the caller decides, non-numeric text reported with an example and its
line) and :func:`load_income_file` does all three. Every problem raises :class:`DPInputError` (a
``ValueError``) whose message names the problem and what to do.

Privacy assumptions: nothing here releases anything. An uploaded file is marked ``confidential=True``
because *planning on confidential data is itself not private* (design.md section 2); the pages say so
and offer synthetic look-alikes. The neighbouring relation the methods use is "replace one record,
n public", so a record must be one unit of privacy (one person or one household).
"""

from __future__ import annotations

import csv
import io
import math
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ..lazy import LazyModule
from ..validation import DPInputError, check_int

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a file is first read (cold start: see dpcore.lazy)

__all__ = [
    "IncomeData",
    "NEGATIVE_POLICIES",
    "MAX_UPLOAD_MB",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ROWS",
    "MAX_SHEET_XML_BYTES",
    "MAX_TABLE_CELLS",
    "MAX_CSV_HEADER_BYTES",
    "MAX_CSV_COLUMNS",
    "MAX_CSV_ROW_BYTES",
    "count_outside_quotes",
    "csv_header_too_long",
    "csv_too_many_columns",
    "csv_row_too_long",
    "WORKBOOK_SECONDS",
    "WORKBOOK_MEMORY_BYTES",
    "read_table",
    "numeric_columns",
    "guess_income_column",
    "income_like_column",
    "explain_column",
    "NumberFormat",
    "detect_number_format",
    "parse_numbers",
    "clean_income_column",
    "load_income_file",
]

#: What to do with negative incomes (losses): refuse the file, drop those rows, or clip them to 0.
NEGATIVE_POLICIES = ("refuse", "drop", "clip")
#: The upload limit in megabytes, as `.streamlit/config.toml` sets ``server.maxUploadSize``.
MAX_UPLOAD_MB = 50
#: Default cap on the size of a file (bytes, after gzip decompression). One limit in bytes
#: everywhere: Streamlit's uploader turns ``maxUploadSize`` into bytes with 1 MB = 10**6 bytes
#: (1024**2 only in a browser on Windows; frontend ``utils``), its server with 1024**2
#: (``starlette_routes``: ``maxUploadSize * 1024 * 1024``), nginx (`run.sh serve`) with 1024**2 + 1 MiB.
#: The smallest, 50,000,000 bytes, is the limit the browser states and shows ("50MB"), so it is
#: the one dpcore enforces and names in its messages (with the exact number of bytes).
DEFAULT_MAX_BYTES = MAX_UPLOAD_MB * 1_000_000
#: Largest first sheet of an .xlsx workbook, in bytes of sheet XML once unzipped. openpyxl parses
#: 2-5 MB of sheet XML per second of CPU (measured 5.4 MB/s on the 2-core dev machine, idle), so
#: this bounds the parse at ~20-50 s; a 1,048,576-row sheet (Excel's own maximum) of one or two
#: numeric columns is ~60-90 MB. A workbook bomb (1.5 MB zipped, 373 MB of sheet XML) took 206 s.
MAX_SHEET_XML_BYTES = 100_000_000
#: Largest number of cells a workbook's first sheet or a Parquet file may hold (rows x columns,
#: from the sheet's declared dimension or the Parquet metadata, checked before parsing). Ten
#: million cells of Python objects are ~1 GB in pandas' object columns.
MAX_TABLE_CELLS = 10_000_000
#: CPU seconds and address space (bytes) of the subprocess that parses a workbook, which also gets
#: 3 x WORKBOOK_SECONDS of wall-clock time. The parse runs in its own process so that it neither
#: holds the app process's GIL (every other session of a Streamlit process waits while pure-Python
#: openpyxl runs) nor its memory. CPU time, not wall-clock time, is the limit of work: a real 95 MB
#: sheet takes 26 s of CPU, and more than 60 s of wall-clock time while 30 users load the machine.
WORKBOOK_SECONDS = 60
WORKBOOK_MEMORY_BYTES = 2 * 1024**3
#: Default cap on the number of data rows.
DEFAULT_MAX_ROWS = 2_000_000
#: The shape limits of a CSV file, the same for an upload and for the command line's engines (which read the
#: header with :func:`dpcore.engines.csv_layout` and rows in blocks of MAX_CSV_ROW_BYTES), checked before
#: any parser sees the file. Bytes of the header line: a longer "header" (a file with no line breaks, a 50 MB
#: first line) is no CSV header.
MAX_CSV_HEADER_BYTES = 1 << 20
#: Columns of a CSV file. The engines read only the columns a plan needs; pandas builds every column of an
#: upload: 10,000,000 columns (a 40 MB file) held a server process for minutes and 1.3 GB, 50,000 take about
#: a second (docs/data.md).
MAX_CSV_COLUMNS = 50_000
#: Bytes of one CSV row that every engine reads in one piece (the pandas engine parses blocks of this size; DuckDB
#: is given twice this as its ``max_line_size``); an upload's line longer than this is refused.
MAX_CSV_ROW_BYTES = 4 << 20
#: Columns above which a parsed CSV's per-column blocks are joined (one copy) before the column checks.
_WIDE_COLUMNS = 256
#: Longest text shown from a bad cell in an error message.
_SHOW_CHARS = 40


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
    """

    values: np.ndarray
    name: str
    source: str  # "synthetic" | "example" | "shared" | "upload"
    column: str = "income"
    confidential: bool = False
    frame: pd.DataFrame | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    bounds: tuple[float, float] | None = None

    @property
    def n(self) -> int:
        """Number of records (public under the "replace one record" relation)."""
        return int(self.values.size)


# ---------------------------------------------------------------------------------------------
# Reading a user file (bytes or path) into a DataFrame, in memory only.
# ---------------------------------------------------------------------------------------------


def _short(value: Any) -> str:
    """A value as it can be shown in a message: repr, cut to a few dozen characters."""
    text = str(value)
    if len(text) > _SHOW_CHARS:
        text = text[:_SHOW_CHARS] + f"... ({len(text):,} characters)"
    return repr(text) if not text.endswith("characters)") else "'" + text + "'"


def _fmt_bytes(n: int) -> str:
    """A size in the units the browser's uploader uses (1 MB = 10**6 bytes, see DEFAULT_MAX_BYTES)."""
    if n >= 1_000_000_000:
        return f"{n / 1_000_000_000:.1f} GB"
    if n >= 1_000_000:
        return f"{n / 1_000_000:.1f} MB"
    if n >= 1000:
        return f"{n / 1000:.1f} KB"
    return f"{n} bytes"


def _fmt_limit(n: int) -> str:
    """A limit in exact bytes, with its size in MB when it is a whole number of them: "50 MB
    (50,000,000 bytes)" (the browser's uploader says "50MB" for the same limit)."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000} MB ({n:,} bytes)"
    return f"{n:,} bytes"


def _read_source(source: Any, max_bytes: int) -> tuple[bytes, str]:
    """The raw bytes of ``source`` (bytes, path or binary file object) and a display name."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
        label = "the uploaded file"
    elif isinstance(source, (str, Path)):
        path = Path(source)
        if not path.is_file():
            raise DPInputError(f"file not found: {path}")
        size = path.stat().st_size
        if size > max_bytes:
            raise DPInputError(
                f"the file {path.name} is {_fmt_bytes(size)}, larger than the {_fmt_limit(max_bytes)} "
                "limit; use a smaller extract (a sample of rows or fewer columns)"
            )
        data = path.read_bytes()
        label = path.name
    elif hasattr(source, "read"):
        data = source.read(max_bytes + 1)
        if isinstance(data, str):
            raise TypeError("open the file in binary mode ('rb') or pass its bytes")
        label = getattr(source, "name", "the uploaded file")
    else:
        raise TypeError(f"source must be bytes, a path or a binary file object, got {type(source).__name__}")
    if len(data) > max_bytes:
        shown = "more than " + _fmt_bytes(max_bytes) if hasattr(source, "read") else _fmt_bytes(len(data))
        raise DPInputError(
            f"{label} is {shown}, larger than the {_fmt_limit(max_bytes)} limit; use a smaller extract "
            "(a sample of rows or fewer columns)"
        )
    return data, str(label)


def _gunzip(data: bytes, max_bytes: int, label: str) -> bytes:
    """Decompress gzip data without ever holding more than ``max_bytes`` of output (zip bombs)."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = d.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise DPInputError(f"{label} looks gzip-compressed but cannot be decompressed ({exc})") from None
    if len(out) > max_bytes or d.unconsumed_tail:
        raise DPInputError(
            f"{label} decompresses to more than the {_fmt_limit(max_bytes)} limit; use a smaller extract"
        )
    return out


def _utf16_without_bom(head: bytes) -> str | None:
    """ "utf-16-le" / "utf-16-be" when ``head`` looks like UTF-16 text without a BOM (ASCII letters
    alternating with NUL bytes), else None."""
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    if odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    return None


def _decode_text(data: bytes, label: str) -> tuple[str, str | None]:
    """Decode CSV bytes: UTF-16 (with a BOM, or plainly alternating NUL bytes), UTF-8 (with or
    without BOM), else Latin-1; refuse binary files."""
    bom = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    without_bom = None if bom else _utf16_without_bom(data[:4096])
    if bom or without_bom:
        encoding = without_bom or "utf-16"
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise DPInputError(
                f"{label} starts like UTF-16 text but cannot be decoded as UTF-16 "
                f"(byte {exc.start}); save it as CSV (UTF-8) and upload that"
            ) from None
        if "\x00" in text[:65536]:
            raise DPInputError(
                f"{label} is not a text file (it contains NUL characters after UTF-16 "
                "decoding); save it as CSV (UTF-8) or Parquet"
            )
        return text.lstrip("\ufeff"), "the file is UTF-16 text; it was decoded as such"
    head = data[:65536]
    if b"\x00" in head:
        raise DPInputError(
            f"{label} is not a text file (it contains NUL bytes): it may be a spreadsheet, an "
            "archive or UTF-16 text. Save it as CSV (UTF-8) or Parquet and upload that"
        )
    # Share of control characters other than tab / newline / carriage return / form feed.
    ctrl = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    if head and ctrl / len(head) > 0.01:
        raise DPInputError(
            f"{label} does not look like CSV text ({ctrl} control characters in the first "
            f"{len(head):,} bytes); save it as CSV (UTF-8) or Parquet and upload that"
        )
    try:
        return data.decode("utf-8-sig"), None
    except UnicodeDecodeError:
        pass
    try:
        text = data.decode("latin-1")
    except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes every byte
        raise DPInputError(f"{label} is neither UTF-8 nor Latin-1 text; save it as CSV (UTF-8)") from None
    return text, "the file is not valid UTF-8; it was read as Latin-1 (Western European)"


def _sniff_delimiter(text: str) -> str:
    sample = text[:65536]
    # the header line decides when it has a clear delimiter
    first = sample.split("\n", 1)[0]
    counts = {d: first.count(d) for d in (",", ";", "\t", "|")}
    best = max(counts, key=lambda d: counts[d])
    if counts[best] > 0:
        return best
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","  # one column: any delimiter works


def count_outside_quotes(line: str, char: str) -> int:
    """How many times ``char`` occurs in ``line`` outside double quotes (a CSV header's delimiters)."""
    if '"' not in line:
        return line.count(char)
    count, quoted = 0, False
    for c in line:
        if c == '"':
            quoted = not quoted
        elif c == char and not quoted:
            count += 1
    return count


def csv_header_too_long(subject: str) -> DPInputError:
    """The refusal of a header line over :data:`MAX_CSV_HEADER_BYTES` (``subject``: "the CSV file 'x.csv'")."""
    return DPInputError(
        f"{subject} has a header line longer than {MAX_CSV_HEADER_BYTES:,} bytes (at most {MAX_CSV_COLUMNS:,} "
        "columns are read): is it a CSV file with a header?"
    )


def csv_too_many_columns(subject: str, columns: int, keep: str = "the columns the plan needs") -> DPInputError:
    return DPInputError(f"{subject} has {columns:,} columns; at most {MAX_CSV_COLUMNS:,} are read (keep {keep})")


def csv_row_too_long(subject: str) -> DPInputError:
    return DPInputError(f"{subject} has a row longer than the {MAX_CSV_ROW_BYTES:,} bytes read in one piece")


def _check_csv_shape(text: str, raw: bytes, delimiter: str, label: str) -> None:
    """The command line's CSV limits on an upload, before pandas parses it: the header line's bytes, its number of
    columns (delimiters outside quotes), the longest line's bytes. ``raw``: the text's bytes in an encoding whose
    line end is the byte 10 (the file itself, or the text re-encoded as UTF-8 when it was UTF-16). Costs one
    pass over the bytes in numpy (about 30 ms for 50 MB)."""
    end = text.find("\n", 0, MAX_CSV_HEADER_BYTES + 1)
    header = text[: end if end >= 0 else MAX_CSV_HEADER_BYTES + 1].rstrip("\r")
    if len(header.encode("utf-8")) > MAX_CSV_HEADER_BYTES:
        raise csv_header_too_long(label)
    columns = count_outside_quotes(header, delimiter) + 1
    if columns > MAX_CSV_COLUMNS:
        raise csv_too_many_columns(label, columns, "the columns you need")
    ends = np.flatnonzero(np.frombuffer(raw, dtype=np.uint8) == 10)
    if len(raw) and np.diff(ends, prepend=-1, append=len(raw)).max() - 1 > MAX_CSV_ROW_BYTES:
        raise csv_row_too_long(label)


def _parse_parquet(data: bytes, label: str, max_bytes: int, max_rows: int) -> tuple[pd.DataFrame, list[str]]:
    """A Parquet file's flat columns, after checking its metadata (rows, cells, unpacked bytes)
    against the limits before any column is decoded: a few MB of Parquet can hold billions of
    run-length-encoded values. Nested columns (struct, list, map) cannot hold incomes and are left
    out with a note (pandas would give dict / array cells, which no column check can hash). Text
    columns are read dictionary-encoded, so a value repeated on every row is held once."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as exc:  # pragma: no cover - pyarrow is in requirements.txt
        raise DPInputError(f"reading Parquet needs the pyarrow package ({exc})") from None
    try:
        parquet = pq.ParquetFile(io.BytesIO(data))
        meta = parquet.metadata
        fields = list(parquet.schema_arrow)
        unpacked = sum(meta.row_group(i).total_byte_size for i in range(meta.num_row_groups))
    except Exception as exc:  # pyarrow raises its own error types
        raise DPInputError(f"{label} is not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]})") from None
    nested = [f.name for f in fields if pa.types.is_nested(f.type)]
    flat = [f for f in fields if not pa.types.is_nested(f.type)]
    if not flat:
        raise DPInputError(
            f"{label} has only nested columns ({', '.join(_short(n) for n in nested[:5])}: "
            "structs, lists or maps); incomes must be a plain numeric column. Flatten the "
            "table (one column per field) and save it again"
        )
    if meta.num_rows > max_rows:
        raise DPInputError(
            f"{label} has {meta.num_rows:,} data rows, more than the {max_rows:,}-row limit; "
            "use a random sample of rows"
        )
    if meta.num_rows * len(flat) > MAX_TABLE_CELLS:
        raise DPInputError(
            f"{label} has {meta.num_rows:,} rows x {len(flat):,} columns, more than the "
            f"{MAX_TABLE_CELLS:,}-cell limit; keep only the columns you need"
        )
    if unpacked > 8 * max_bytes:
        raise DPInputError(
            f"{label} unpacks to {_fmt_bytes(unpacked)}, more than 8 x the "
            f"{_fmt_limit(max_bytes)} limit; use a smaller extract"
        )
    text_columns = [
        f.name
        for f in flat
        if pa.types.is_string(f.type)
        or pa.types.is_large_string(f.type)
        or pa.types.is_binary(f.type)
        or pa.types.is_large_binary(f.type)
    ]
    try:
        table = pq.read_table(io.BytesIO(data), columns=[f.name for f in flat], read_dictionary=text_columns or None)
        frame = table.to_pandas()
    except MemoryError:
        raise DPInputError(f"{label} needs more memory than this server has to open; use a smaller extract") from None
    except Exception as exc:  # pyarrow raises its own error types
        raise DPInputError(f"{label} is not a readable Parquet file ({type(exc).__name__}: {str(exc)[:200]})") from None
    for name in text_columns:
        if name in frame.columns and isinstance(frame[name].dtype, pd.CategoricalDtype):
            # back to plain text cells (the same string objects, so no copy per row)
            frame[name] = frame[name].astype(object)
    notes = []
    if nested:
        notes.append(
            f"left out {len(nested)} nested column(s) ({', '.join(_short(n) for n in nested[:5])}): "
            "structs, lists and maps cannot hold incomes"
        )
    return frame, notes


_XLS_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE2: Excel 97-2003 .xls (and old .doc)

#: The workbook parser's child process: reads the workbook from stdin, limits its own address space
#: first (RLIMIT_AS) and asks the kernel to kill it if the app process dies (PR_SET_PDEATHSIG), then
#: writes a pickle of (status, payload) to stdout. Run with ``python -I -c`` (no current directory,
#: no PYTHONPATH: only the installed pandas and openpyxl), and never imports dpcore.
_WORKBOOK_CHILD = r"""
import io, pickle, resource, sys
limit, cpu = int(sys.argv[1]), int(sys.argv[2])
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU ends the process at the soft limit
try:
    import ctypes, signal
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
except Exception:
    pass
out = sys.stdout.buffer
try:
    import pandas as pd
    data = sys.stdin.buffer.read()
    book = pd.ExcelFile(io.BytesIO(data), engine="openpyxl")
    sheets = book.sheet_names
    frame = pd.read_excel(book, sheet_name=sheets[0])
    result = ("ok", (frame, sheets))
except MemoryError:
    result = ("memory", "")
except Exception as exc:
    result = ("error", f"{type(exc).__name__}: {str(exc)[:160]}")
out.write(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
out.flush()
"""


def _first_sheet_part(archive: Any) -> str | None:
    """The zip member of a workbook's first sheet (xl/workbook.xml's first <sheet>, resolved through
    xl/_rels/workbook.xml.rels), or None when the workbook does not say."""
    import re

    def small(name: str) -> str:
        info = archive.getinfo(name)
        if info.file_size > 5_000_000:  # an index file, never this large in a real workbook
            return ""
        return archive.read(name).decode("utf-8", "replace")

    try:
        sheet = re.search(r"<(?:\w+:)?sheet\b[^>]*>", small("xl/workbook.xml"))
        rid = sheet and re.search(r'\b(?:\w+:)?id="([^"]+)"', sheet.group(0))
        rels = small("xl/_rels/workbook.xml.rels")
    except KeyError:
        return None
    if not rid:
        return None
    for rel in re.findall(r"<(?:\w+:)?Relationship\b[^>]*>", rels):
        if re.search(rf'\bId="{re.escape(rid.group(1))}"', rel):
            target = re.search(r'\bTarget="([^"]+)"', rel)
            if target:
                path = target.group(1)
                return path.lstrip("/") if path.startswith("/") else "xl/" + path
    return None


def _declared_cells(archive: Any, part: str) -> tuple[int, int] | None:
    """(rows, columns) of a sheet's <dimension ref="A1:C900"/>, read from its first 64 KB."""
    import re

    with archive.open(part) as sheet:
        head = sheet.read(65536).decode("utf-8", "replace")
    found = re.search(r'<(?:\w+:)?dimension\s+ref="([A-Z]+)(\d+)(?::([A-Z]+)(\d+))?"', head)
    if not found:
        return None

    def column_number(letters: str) -> int:
        number = 0
        for ch in letters:
            number = number * 26 + ord(ch) - 64
        return number

    c1, r1, c2, r2 = found.groups()
    c2, r2 = c2 or c1, r2 or r1
    return abs(int(r2) - int(r1)) + 1, abs(column_number(c2) - column_number(c1)) + 1


# complexity above the cap: a flat list of independent guards of one workbook
def _parse_excel(  # noqa: C901
    data: bytes,
    label: str,
    max_bytes: int,
    max_rows: int = DEFAULT_MAX_ROWS,
) -> tuple[pd.DataFrame, list[str]]:
    """The first sheet of an .xlsx workbook (openpyxl), with a note naming it; a zip archive
    that is not a workbook is refused with what to do.

    Bounded before and during parsing (a workbook bomb is 1.5 MB zipped and 373 MB of sheet XML):
    the zip's unpacked total (8 x ``max_bytes``), the first sheet's XML (MAX_SHEET_XML_BYTES) and its
    declared dimension (rows <= ``max_rows``, cells <= MAX_TABLE_CELLS) are checked from the zip's
    directory and the sheet's first bytes; then the sheet is parsed in a child process limited to
    WORKBOOK_SECONDS of CPU time and WORKBOOK_MEMORY_BYTES of address space, so that a sheet
    that lies about its dimension costs at most that, and the app process's other sessions go on
    meanwhile (its thread only waits on a pipe). The limits are read when called (tests lower them)."""
    import pickle
    import signal
    import subprocess
    import sys
    import zipfile

    max_sheet_xml, max_cells = MAX_SHEET_XML_BYTES, MAX_TABLE_CELLS
    seconds, memory = WORKBOOK_SECONDS, WORKBOOK_MEMORY_BYTES

    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
        unpacked = sum(info.file_size for info in archive.infolist())
    except (zipfile.BadZipFile, ValueError, OSError) as exc:
        raise DPInputError(
            f"{label} looks like a zip archive or an Excel workbook (.xlsx) but cannot be "
            f"opened ({exc}); open it and save the sheet as CSV (UTF-8)"
        ) from None
    if "xl/workbook.xml" not in names:
        raise DPInputError(
            f"{label} is a zip archive, not an Excel workbook; unzip it and upload the CSV or Parquet file inside"
        )
    if unpacked > 8 * max_bytes:
        raise DPInputError(
            f"{label} unpacks to {_fmt_bytes(unpacked)}, more than 8 x the "
            f"{_fmt_limit(max_bytes)} limit; save the sheet as CSV (UTF-8) and upload a "
            "smaller extract"
        )
    part = _first_sheet_part(archive)
    sheet_parts = (
        [part] if part in names else [n for n in names if n.startswith("xl/worksheets/") and n.endswith(".xml")]
    )
    try:
        for sheet_part in sheet_parts:
            size = archive.getinfo(sheet_part).file_size
            if size > max_sheet_xml:
                raise DPInputError(
                    f"{label}: its first sheet unpacks to {_fmt_bytes(size)} of XML, more than the "
                    f"{_fmt_limit(max_sheet_xml)} a workbook may hold here (reading it would stall the "
                    "server); save the sheet as CSV (UTF-8), gzip it if you like, and upload that"
                )
            declared = _declared_cells(archive, sheet_part)
            if declared is not None:
                rows, columns = declared
                if rows - 1 > max_rows:
                    raise DPInputError(
                        f"{label}: its first sheet has {rows - 1:,} data rows, more than the "
                        f"{max_rows:,}-row limit; use a random sample of rows"
                    )
                if rows * columns > max_cells:
                    raise DPInputError(
                        f"{label}: its first sheet has {rows:,} rows x {columns:,} columns, more than the "
                        f"{max_cells:,}-cell limit; keep only the columns you need, or save it as CSV"
                    )
            if part in names:
                break
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
        raise DPInputError(
            f"{label} is an Excel workbook that cannot be read ({type(exc).__name__}: "
            f"{str(exc)[:160]}); open it in Excel and save the sheet as CSV (UTF-8)"
        ) from None
    try:
        import openpyxl  # noqa: F401 - pandas' engine for .xlsx (imported in the child too)
    except ImportError:  # pragma: no cover - openpyxl is in requirements.txt
        raise DPInputError(
            f"{label} is an Excel workbook and reading .xlsx needs the openpyxl package; "
            "open it in Excel and save the sheet as CSV (UTF-8)"
        ) from None
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        child = subprocess.run(
            [sys.executable, "-I", "-c", _WORKBOOK_CHILD, str(int(memory)), str(math.ceil(seconds))],
            input=data,
            capture_output=True,
            timeout=3 * seconds,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        child = None
    if child is None or child.returncode == -signal.SIGXCPU:
        raise DPInputError(
            f"{label}: reading this workbook took more than {math.ceil(seconds)} s of CPU time "
            "and was stopped; save the sheet as CSV (UTF-8) and upload that"
        ) from None
    try:
        status, payload = pickle.loads(child.stdout)  # written by _WORKBOOK_CHILD, our own code
    except Exception:  # noqa: BLE001 - the child died before writing its answer
        # out of address space inside C code (a failed allocation aborts rather than raising), or killed
        last = (child.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {child.returncode}"])[-1]
        status = "memory" if ("MemoryError" in last or "alloc" in last or child.returncode < 0) else "error"
        payload = last[:160]
    if status == "memory":
        raise DPInputError(
            f"{label}: reading this workbook needed more than {_fmt_bytes(memory)} of memory "
            "and was stopped; save the sheet as CSV (UTF-8) and upload that"
        )
    if status != "ok":
        raise DPInputError(
            f"{label} is an Excel workbook that cannot be read ({payload}); open it in Excel "
            "and save the sheet as CSV (UTF-8)"
        )
    frame, sheets = payload
    notes = [
        f"read the Excel sheet {sheets[0]!r}"
        + (f" (the first of {len(sheets)} sheets; the others are ignored)" if len(sheets) > 1 else "")
    ]
    frame = frame.dropna(how="all").dropna(axis=1, how="all")
    frame.columns = [str(c) for c in frame.columns]
    return frame.reset_index(drop=True), notes


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


# complexity above the cap: one branch per file format, in detection order
def read_table(  # noqa: C901
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
    data, label = _read_source(source, max_bytes)
    if file_name:
        label = str(file_name)
    notes: list[str] = []
    if not data.strip():
        raise DPInputError(f"{label} is empty: it has no header and no data rows")
    if data[:2] == b"\x1f\x8b":
        data = _gunzip(data, max_bytes, label)
        if not data.strip():
            raise DPInputError(f"{label} is empty after decompression")
    if data[:8] == _XLS_MAGIC:
        raise DPInputError(
            f"{label} is an old Excel workbook (.xls, Excel 97-2003), which is not read here; open it "
            "in Excel and save the sheet as CSV (UTF-8) or as .xlsx, then upload that"
        )
    if data[:2] == b"PK":
        frame, more = _parse_excel(data, label, max_bytes, max_rows)
        notes += more
        frame, more = _normalize_number_columns(frame, None, label)
        notes += more
    elif data[:4] == b"PAR1":
        frame, more = _parse_parquet(data, label, max_bytes, max_rows)
        notes += more
        frame, more = _normalize_number_columns(frame, None, label)
        notes += more
    else:
        text, note = _decode_text(data, label)
        if note:
            notes.append(note)
        sep = _sniff_delimiter(text)
        _check_csv_shape(text, text.encode("utf-8") if note and "UTF-16" in note else data, sep, label)
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
            # pandas' CSV reader gives each column a block of its own, and every later step then pays per block:
            # 50,000 columns (the limit) took 6 s of the server's CPU; one copy joins the blocks of each type
            frame = frame.copy()
        text_frame = None
        if sep == ";":  # a European export: 1.234 may be a thousand, so look at the text again
            recheck = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
            if recheck and len(frame) <= max_rows:
                text_frame = pd.read_csv(
                    io.StringIO(text), sep=sep, usecols=recheck, dtype=str, nrows=max_rows + 1, skipinitialspace=True
                )
        frame, more = _normalize_number_columns(frame, sep, label, text_frame)
        notes += more
    if frame.shape[1] == 0:
        raise DPInputError(f"{label} has no columns")
    if len(frame) > max_rows:
        raise DPInputError(f"{label} has more than {max_rows:,} data rows (the row limit); use a random sample of rows")
    if len(frame) == 0:
        cols = ", ".join(_short(c) for c in list(frame.columns)[:8])
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
            f"{label} has duplicate column names: {', '.join(_short(d) for d in dup[:5])}; "
            "rename them so each column has its own name"
        )
    return frame, tuple(notes)


# ---------------------------------------------------------------------------------------------
# Choosing and validating the income column.
# ---------------------------------------------------------------------------------------------

_INCOME_NAMES = (
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
    # the numeric columns in one operation: a column at a time costs ~0.3 ms of pandas overhead, 15 s of the
    # server's CPU for an upload of 50,000 columns (the CSV limit)
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
    for key in _INCOME_NAMES:
        if key in lower:
            return lower[key]
    for c in columns:
        if any(k in c.lower() for k in ("income", "earn", "wage", "salar", "inc")):
            return c
    return columns[0] if columns else None


# ---------------------------------------------------------------------------------------------
# Number formats: thousands separators and decimal commas (never guessed silently).
# ---------------------------------------------------------------------------------------------

#: Cell patterns (after stripping spaces). "us": 45,527 / 1,234.56 / 1,234,567; "eu": 1.234,56 /
#: 45,5 / 1.234.567; "comma3": one comma followed by exactly three digits (45,527: thousands or
#: decimal comma?); "dot3": one dot followed by exactly three digits (1.234: decimal point or
#: thousands?); "point": a plain decimal point (12.5); "int": digits only.
_NUMBER_PATTERNS: tuple[tuple[str, str], ...] = (
    ("int", r"[+-]?\d+"),
    ("comma3", r"[+-]?\d{1,3},\d{3}"),
    ("dot3", r"[+-]?\d{1,3}\.\d{3}"),
    ("us", r"[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?"),
    ("eu", r"[+-]?\d{1,3}(?:\.\d{3})+(?:,\d*)?|[+-]?\d*,\d+"),
    ("point", r"[+-]?\d*\.\d+(?:[eE][+-]?\d+)?|[+-]?\d+\.(?:[eE][+-]?\d+)?|[+-]?\d+[eE][+-]?\d+"),
)


@dataclass(frozen=True)
class NumberFormat:
    """How the text cells of one column are written, as :func:`detect_number_format` read them.

    style: "plain" (digits and a decimal point: pandas reads them), "thousands_comma" (45,527 and
        1,234.56: commas group thousands), "decimal_comma" (1.234,56 and 45,5: the comma is the
        decimal mark, dots group thousands), "ambiguous" (every separator could be either, e.g.
        only values like 45,527 in a ";"-separated file), "mixed" (both styles in one column) or
        "text" (some cells are not numbers in any style).
    examples: up to three cells that decided the style (or that are not numbers).
    """

    style: str
    examples: tuple[str, ...] = ()

    @property
    def parseable(self) -> bool:
        return self.style in ("plain", "thousands_comma", "decimal_comma")

    def explain(self, column: str) -> str:
        """A sentence a user can act on: what the cells look like and what to change."""
        ex = ", ".join(repr(e) for e in self.examples)
        if self.style == "ambiguous":
            first = self.examples[0] if self.examples else "45,527"
            sep = "," if "," in first else "."
            plain_thousands = first.replace(sep, "")
            as_decimal = first.replace(",", ".")
            return (
                f"column {_short(column)} has values such as {ex} where the {sep!r} could be a thousands "
                f"separator ({first} = {plain_thousands}) or a decimal mark ({first} = {as_decimal}); "
                f"no guess is made. Write the incomes without thousands separators (e.g. "
                f"{plain_thousands}) and with a decimal point, then upload the file again"
            )
        if self.style == "mixed":
            return (
                f"column {_short(column)} mixes two number styles ({ex}): some cells use a decimal "
                "comma, others a decimal point with comma thousands. Write every income the same "
                "way, without thousands separators and with a decimal point (e.g. 1234.56)"
            )
        if self.style == "text":
            return (
                f"column {_short(column)} holds cells that are not numbers, e.g. {ex}. Write incomes as "
                "plain numbers such as 31500.50 (no currency signs, units or words), or choose "
                "another column"
            )
        return f"column {_short(column)} holds numbers ({self.style.replace('_', ' ')})"


def _classify_cells(cells: pd.Series) -> pd.Series:
    """The pattern name of each (stripped, non-missing) text cell; "bad" when none fits."""
    kind = pd.Series("bad", index=cells.index, dtype=object)
    for name, pattern in reversed(_NUMBER_PATTERNS):  # earlier patterns win
        kind[cells.str.fullmatch(pattern)] = name
    return kind


def detect_number_format(cells: Any, *, delimiter: str | None = None) -> NumberFormat:
    """How the non-missing text cells ``cells`` write their numbers (see :class:`NumberFormat`).

    Decision (a cell shape that fits one convention only decides; never a silent guess):

    * any cell that is not a number in any style -> "text";
    * thousands-comma shapes (1,234,567 / 1,234.56 / 12.5) and decimal-comma shapes
      (1.234,56 / 1.234.567 / 45,5) in one column -> "mixed";
    * one of them (plus cells that fit both such as 45,527 or 1.234) -> that style;
    * only cells like 45,527 -> thousands when the file is comma-separated (a comma there cannot
      be the decimal mark of a spreadsheet export: it would need quotes in every cell), else
      "ambiguous"; only cells like 1.234 -> "plain" (a decimal point) except in a
      ";"-separated file, where it is "ambiguous" (1.234 is a thousand there).

    ``delimiter``: the CSV field separator ("," ";" TAB "|"), or None for Parquet/Excel cells.
    """
    series = pd.Series(cells, dtype=object).dropna().astype(str).str.strip()
    series = series[series != ""]
    if series.empty:
        return NumberFormat("plain")
    unique = pd.Series(pd.unique(series.to_numpy()))
    head = _classify_cells(unique.head(2000))
    if (head == "bad").any():  # cheap exit for label columns (one pass over a sample)
        return NumberFormat("text", tuple(unique.head(2000)[head == "bad"].head(3)))
    kinds = _classify_cells(unique)
    found = set(kinds)

    def examples(*names: str) -> tuple[str, ...]:
        return tuple(unique[kinds.isin(names)].head(3))

    if "bad" in found:
        return NumberFormat("text", examples("bad"))
    us = {"us", "point"} & found
    eu = {"eu"} & found
    if us and eu:
        return NumberFormat("mixed", examples("us", "point")[:2] + examples("eu")[:1])
    if "us" in found or ("point" in found and "comma3" in found):
        return NumberFormat("thousands_comma", examples("us", "comma3"))
    if eu:
        return NumberFormat("decimal_comma", examples("eu", "dot3", "comma3"))
    if "comma3" in found and "dot3" in found:
        return NumberFormat("ambiguous", examples("comma3", "dot3"))
    if "comma3" in found:
        if delimiter == ",":
            return NumberFormat("thousands_comma", examples("comma3"))
        return NumberFormat("ambiguous", examples("comma3"))
    if "dot3" in found and delimiter == ";":
        return NumberFormat("ambiguous", examples("dot3"))
    return NumberFormat("plain")


def parse_numbers(cells: Any, number_format: NumberFormat) -> np.ndarray:
    """The text cells as floats under ``number_format`` (missing cells -> NaN).

    Raises DPInputError when the format is not parseable (ambiguous, mixed or text) with
    :meth:`NumberFormat.explain`'s message.
    """
    if not isinstance(number_format, NumberFormat):
        raise TypeError("number_format must be a NumberFormat (see detect_number_format)")
    series = pd.Series(cells, dtype=object)
    if not number_format.parseable:
        raise DPInputError(number_format.explain(str(getattr(cells, "name", "the column"))))
    text = series.where(series.isna(), series.astype(str).str.strip())
    if number_format.style == "thousands_comma":
        text = text.str.replace(",", "", regex=False)
    elif number_format.style == "decimal_comma":
        text = text.str.replace(".", "", regex=False).str.replace(",", ".", regex=False)
    text = text.where(text != "", None)
    return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)


_STYLE_NOTES = {
    "thousands_comma": "commas as thousands separators",
    "decimal_comma": "a decimal comma ('.' or nothing between thousands)",
}


def _normalize_number_columns(
    frame: pd.DataFrame, delimiter: str | None, label: str, text_frame: pd.DataFrame | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """Convert the text columns written with thousands separators or decimal commas to floats.

    ``text_frame``: the raw text of columns pandas already parsed as numbers but that need a second
    look (a ";"-separated file, where 1.234 may be a thousand). Columns whose format is ambiguous
    or mixed stay text; their reason is kept in ``frame.attrs["number_formats"]`` for
    :func:`explain_column` and the upload page. Returns the frame and notes.
    """
    notes: list[str] = []
    problems: dict[str, str] = {}
    columns = {}
    for i, (name, dtype) in enumerate(frame.dtypes.items()):  # dtypes first: a column at a time is slow
        if text_frame is not None and name in text_frame.columns:
            col = text_frame[name]
        elif pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
            col = frame.iloc[:, i]
        else:
            continue
        present = col.dropna()
        if present.empty:
            continue
        fmt = detect_number_format(present, delimiter=delimiter)
        if fmt.style in ("thousands_comma", "decimal_comma"):
            columns[name] = parse_numbers(col, fmt)
            ex = fmt.examples[0] if fmt.examples else ""
            notes.append(
                f"column {name!r} is written with {_STYLE_NOTES[fmt.style]}: read {ex!r} as "
                f"{parse_numbers(pd.Series([ex]), fmt)[0]:,.6g}"
            )
        elif fmt.style == "plain" and text_frame is not None and name in text_frame.columns:
            continue  # pandas' own parse stands
        elif fmt.style in ("ambiguous", "mixed"):
            problems[str(name)] = fmt.explain(str(name))
            if text_frame is not None and name in text_frame.columns:
                columns[name] = text_frame[name]  # keep the text: never a silent decimal point
    if columns:
        frame = frame.copy()
        for name, values in columns.items():
            frame[name] = values
    frame.attrs["number_formats"] = problems
    return frame, notes


def explain_column(frame: pd.DataFrame, column: str) -> str | None:
    """Why ``frame[column]`` cannot be an income column, as a sentence to act on, or None if it can."""
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"frame must be a pandas DataFrame, got {type(frame).__name__}")
    if column not in frame.columns:
        return f"column {_short(column)} is not in the file"
    known = frame.attrs.get("number_formats", {}).get(str(column))
    if known:
        return known
    col = frame[column]
    if pd.api.types.is_bool_dtype(col):
        return f"column {_short(column)} holds true/false values, not incomes"
    if pd.api.types.is_numeric_dtype(col):
        return None if col.notna().any() else f"column {_short(column)} has no values: every cell is missing"
    if column in numeric_columns(frame[[column]]):
        return None
    fmt = detect_number_format(col.dropna())
    return fmt.explain(str(column)) if not fmt.parseable else None


def income_like_column(columns: Sequence[str]) -> str | None:
    """The column whose *name* says income (``income``, ``PINCP``, ``wage`` ...), or None.

    Unlike :func:`guess_income_column` it never falls back to the first column: the upload page
    uses it to tell the user when the column that looks like the income cannot be used.
    """
    columns = [str(c) for c in columns]
    lower = {c.lower(): c for c in columns}
    for key in _INCOME_NAMES:
        if key in lower:
            return lower[key]
    for c in columns:
        if any(k in c.lower() for k in ("income", "earn", "wage", "salar")):
            return c
    return None


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
        avail = ", ".join(_short(c) for c in list(frame.columns)[:12])
        raise DPInputError(f"column {_short(column)} is not in the file; its columns are: {avail}")
    col = frame[column]
    n_rows = len(col)
    if pd.api.types.is_bool_dtype(col):
        raise DPInputError(f"column {_short(column)} holds true/false values, not incomes")
    missing = col.isna().to_numpy()
    if missing.all():
        raise DPInputError(f"column {_short(column)} has no values: all {n_rows:,} cells are missing")
    if pd.api.types.is_numeric_dtype(col):
        values = col.to_numpy(dtype=float, na_value=np.nan)
    else:
        text = col.astype(str).str.strip()
        values = pd.to_numeric(text.where(~col.isna()), errors="coerce").to_numpy(dtype=float)
        bad = np.isnan(values) & ~missing
        if bad.any():
            idx = np.flatnonzero(bad)
            first = int(idx[0])
            examples = ", ".join(f"{_short(col.iloc[i])} (line {i + 2})" for i in idx[:3])
            raise DPInputError(
                f"column {_short(column)} has {idx.size:,} non-numeric "
                f"value{'s' if idx.size > 1 else ''}, e.g. {examples}; the first is in data row "
                f"{first + 1}. Fix or delete these cells (write incomes as plain numbers such as "
                "31500.50, no currency signs or thousands separators), or choose another column"
            )
    inf = np.isinf(values)
    if inf.any():
        i = int(np.flatnonzero(inf)[0])
        raise DPInputError(
            f"column {_short(column)} has {int(inf.sum()):,} infinite values "
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
                f"column {_short(column)} has {detail}. Incomes below 0 are losses; choose what to do "
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
            f"only {n_keep} usable value{'s' if n_keep != 1 else ''} left in column {_short(column)} after "
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
                    f"{label} has only one column, {_short(only)}, and it is not numeric (e.g. "
                    f"{_short(frame[only].dropna().iloc[0]) if frame[only].notna().any() else 'empty'}); "
                    "if the file uses another delimiter, save it as comma-separated CSV"
                )
            cols = ", ".join(_short(c) for c in list(frame.columns)[:12])
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
