"""Income data: loading and validating user files, synthetic generators, bundled examples.

Three kinds of data reach the pages, all as :class:`IncomeData`:

* **uploaded files** (CSV or Parquet, given as bytes, a path or a binary file object):
  :func:`read_table` parses them in memory (never written to disk or logged),
  :func:`numeric_columns` lists the columns that can hold incomes, :func:`clean_income_column`
  validates the chosen one (missing values dropped and counted, negative values refused / dropped /
  clipped to 0 as the caller decides, non-numeric text reported with an example and its line) and
  :func:`load_income_file` does all three. Every problem raises :class:`DPInputError` (a
  ``ValueError``) whose message names the problem and what to do.
* **real data**: the bundled public-domain examples (:func:`load_example`: Engel's 1857 Belgian
  households, the ACS 2019 PUMS excerpt of NIST and the Census PSEO earnings table, see
  ``dpcore/examples/README.md``) and the real survey files in ``../shared/data``
  (:func:`load_shared`; the ACS and PSEO files fall back to the bundled copies, so only the CPS
  extract, which is never bundled, can be ``None``). :func:`real_data_path` gives the file to read.
* **recipes**: :func:`build_dataset` turns a plain-dict recipe (source kind + parameters, e.g.
  ``{"kind": "lognormal", "n": 10000, "sigma": 0.9, "seed": 2026}``) into an :class:`IncomeData`;
  the sidebar and the generated scripts both call it, so a script rebuilds the page's data.
* **synthetic generators** (all take ``rng``): :func:`lognormal_incomes`,
  :func:`pareto_mixture_incomes` (log-normal body + Pareto top tail calibrated to a target Gini)
  and :func:`two_point_incomes` (the extremal two-point data of Proposition 5.1 of Lan & Reiter).

Privacy assumptions: none of these functions releases anything. An uploaded file is marked
``confidential=True`` because *planning on confidential data is itself not private* (design.md
section 2); the pages say so and offer synthetic look-alikes. The neighbouring relation the
methods use is "replace one record, n public", so a record must be one unit of privacy (one
person or one household), which holds for every dataset offered here except the PSEO table,
whose rows are published cell statistics, not persons.
"""
from __future__ import annotations

import csv
import functools
import io
import math
import os
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

from .validation import DPInputError, as_generator, check_finite, check_int, check_positive


class _LazyModule:
    """A module imported on first attribute access (app start-up time: scipy.special alone costs
    0.2-0.4 s and the default synthetic data never needs it)."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        import importlib

        return getattr(importlib.import_module(self._name), attr)


special = _LazyModule("scipy.special")  # scipy.integrate / optimize are imported where used

__all__ = [
    "REPO_ROOT",
    "SHARED_DATA_DIR",
    "EXAMPLES_DIR",
    "IncomeData",
    "NEGATIVE_POLICIES",
    "MAX_UPLOAD_MB",
    "DEFAULT_MAX_BYTES",
    "DEFAULT_MAX_ROWS",
    "MAX_SHEET_XML_BYTES",
    "MAX_TABLE_CELLS",
    "WORKBOOK_SECONDS",
    "WORKBOOK_MEMORY_BYTES",
    "shared_data_path",
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
    "EXAMPLES",
    "example_path",
    "real_data_path",
    "load_example",
    "SHARED_DATASETS",
    "SharedDataset",
    "available_shared",
    "load_shared",
    "load_cps",
    "load_acs",
    "load_pseo",
    "ACS_PAGE_COLUMNS",
    "acs_frame",
    "POVERTY_GROUPINGS",
    "poverty_counts",
    "gini_coefficient",
    "lognormal_incomes",
    "ParetoTailMixture",
    "pareto_mixture_incomes",
    "TwoPointData",
    "min_iq_for_gini",
    "two_point_incomes",
    "RECIPE_KINDS",
    "DEFAULT_RECIPE",
    "check_recipe",
    "build_dataset",
    "recipe_from_key",
    "describe_recipe",
]

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA_DIR = REPO_ROOT.parent / "shared" / "data"
EXAMPLES_DIR = Path(__file__).resolve().parent / "examples"

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


def shared_data_path(file_name: str) -> Path | None:
    """Path of a file in ../shared/data next to the repository, or None when it is absent."""
    path = SHARED_DATA_DIR / file_name
    return path if path.is_file() else None


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
                "limit; use a smaller extract (a sample of rows or fewer columns)")
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
        size = "more than " + _fmt_bytes(max_bytes) if hasattr(source, "read") else _fmt_bytes(len(data))
        raise DPInputError(
            f"{label} is {size}, larger than the {_fmt_limit(max_bytes)} limit; use a smaller extract "
            "(a sample of rows or fewer columns)")
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
            f"{label} decompresses to more than the {_fmt_limit(max_bytes)} limit; use a smaller extract")
    return out


def _utf16_without_bom(head: bytes) -> str | None:
    """"utf-16-le" / "utf-16-be" when ``head`` looks like UTF-16 text without a BOM (ASCII letters
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
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or _utf16_without_bom(data[:4096]):
        encoding = "utf-16" if data[:2] in (b"\xff\xfe", b"\xfe\xff") else _utf16_without_bom(data[:4096])
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise DPInputError(f"{label} starts like UTF-16 text but cannot be decoded as UTF-16 "
                               f"(byte {exc.start}); save it as CSV (UTF-8) and upload that") from None
        if "\x00" in text[:65536]:
            raise DPInputError(f"{label} is not a text file (it contains NUL characters after UTF-16 "
                               "decoding); save it as CSV (UTF-8) or Parquet")
        return text.lstrip("\ufeff"), "the file is UTF-16 text; it was decoded as such"
    head = data[:65536]
    if b"\x00" in head:
        raise DPInputError(
            f"{label} is not a text file (it contains NUL bytes): it may be a spreadsheet, an "
            "archive or UTF-16 text. Save it as CSV (UTF-8) or Parquet and upload that")
    # Share of control characters other than tab / newline / carriage return / form feed.
    ctrl = sum(1 for b in head if b < 32 and b not in (9, 10, 12, 13))
    if head and ctrl / len(head) > 0.01:
        raise DPInputError(
            f"{label} does not look like CSV text ({ctrl} control characters in the first "
            f"{len(head):,} bytes); save it as CSV (UTF-8) or Parquet and upload that")
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
    best = max(counts, key=counts.get)
    if counts[best] > 0:
        return best
    try:
        return csv.Sniffer().sniff(sample, delimiters=",;\t|").delimiter
    except csv.Error:
        return ","  # one column: any delimiter works


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
        raise DPInputError(f"{label} is not a readable Parquet file ({type(exc).__name__}: "
                           f"{str(exc)[:200]})") from None
    nested = [f.name for f in fields if pa.types.is_nested(f.type)]
    flat = [f for f in fields if not pa.types.is_nested(f.type)]
    if not flat:
        raise DPInputError(f"{label} has only nested columns ({', '.join(_short(n) for n in nested[:5])}: "
                           "structs, lists or maps); incomes must be a plain numeric column. Flatten the "
                           "table (one column per field) and save it again")
    if meta.num_rows > max_rows:
        raise DPInputError(f"{label} has {meta.num_rows:,} data rows, more than the {max_rows:,}-row limit; "
                           "use a random sample of rows")
    if meta.num_rows * len(flat) > MAX_TABLE_CELLS:
        raise DPInputError(f"{label} has {meta.num_rows:,} rows x {len(flat):,} columns, more than the "
                           f"{MAX_TABLE_CELLS:,}-cell limit; keep only the columns you need")
    if unpacked > 8 * max_bytes:
        raise DPInputError(f"{label} unpacks to {_fmt_bytes(unpacked)}, more than 8 x the "
                           f"{_fmt_limit(max_bytes)} limit; use a smaller extract")
    text_columns = [f.name for f in flat if pa.types.is_string(f.type) or pa.types.is_large_string(f.type)
                    or pa.types.is_binary(f.type) or pa.types.is_large_binary(f.type)]
    try:
        table = pq.read_table(io.BytesIO(data), columns=[f.name for f in flat],
                              read_dictionary=text_columns or None)
        frame = table.to_pandas()
    except MemoryError:
        raise DPInputError(f"{label} needs more memory than this server has to open; use a smaller "
                           "extract") from None
    except Exception as exc:  # pyarrow raises its own error types
        raise DPInputError(f"{label} is not a readable Parquet file ({type(exc).__name__}: "
                           f"{str(exc)[:200]})") from None
    for name in text_columns:
        if name in frame.columns and isinstance(frame[name].dtype, pd.CategoricalDtype):
            # back to plain text cells (the same string objects, so no copy per row)
            frame[name] = frame[name].astype(object)
    notes = []
    if nested:
        notes.append(f"left out {len(nested)} nested column(s) ({', '.join(_short(n) for n in nested[:5])}): "
                     "structs, lists and maps cannot hold incomes")
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
def _parse_excel(data: bytes, label: str, max_bytes: int, max_rows: int = DEFAULT_MAX_ROWS,  # noqa: C901
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
        raise DPInputError(f"{label} looks like a zip archive or an Excel workbook (.xlsx) but cannot be "
                           f"opened ({exc}); open it and save the sheet as CSV (UTF-8)") from None
    if "xl/workbook.xml" not in names:
        raise DPInputError(f"{label} is a zip archive, not an Excel workbook; unzip it and upload the CSV "
                           "or Parquet file inside")
    if unpacked > 8 * max_bytes:
        raise DPInputError(f"{label} unpacks to {_fmt_bytes(unpacked)}, more than 8 x the "
                           f"{_fmt_limit(max_bytes)} limit; save the sheet as CSV (UTF-8) and upload a "
                           "smaller extract")
    part = _first_sheet_part(archive)
    sheet_parts = [part] if part in names else [n for n in names if n.startswith("xl/worksheets/")
                                                and n.endswith(".xml")]
    try:
        for sheet_part in sheet_parts:
            size = archive.getinfo(sheet_part).file_size
            if size > max_sheet_xml:
                raise DPInputError(
                    f"{label}: its first sheet unpacks to {_fmt_bytes(size)} of XML, more than the "
                    f"{_fmt_limit(max_sheet_xml)} a workbook may hold here (reading it would stall the "
                    "server); save the sheet as CSV (UTF-8), gzip it if you like, and upload that")
            declared = _declared_cells(archive, sheet_part)
            if declared is not None:
                rows, columns = declared
                if rows - 1 > max_rows:
                    raise DPInputError(f"{label}: its first sheet has {rows - 1:,} data rows, more than the "
                                       f"{max_rows:,}-row limit; use a random sample of rows")
                if rows * columns > max_cells:
                    raise DPInputError(
                        f"{label}: its first sheet has {rows:,} rows x {columns:,} columns, more than the "
                        f"{max_cells:,}-cell limit; keep only the columns you need, or save it as CSV")
            if part in names:
                break
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
        raise DPInputError(f"{label} is an Excel workbook that cannot be read ({type(exc).__name__}: "
                           f"{str(exc)[:160]}); open it in Excel and save the sheet as CSV (UTF-8)") from None
    try:
        import openpyxl  # noqa: F401 - pandas' engine for .xlsx (imported in the child too)
    except ImportError:  # pragma: no cover - openpyxl is in requirements.txt
        raise DPInputError(f"{label} is an Excel workbook and reading .xlsx needs the openpyxl package; "
                           "open it in Excel and save the sheet as CSV (UTF-8)") from None
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1")
    try:
        child = subprocess.run([sys.executable, "-I", "-c", _WORKBOOK_CHILD, str(int(memory)),
                                str(math.ceil(seconds))], input=data, capture_output=True,
                               timeout=3 * seconds, env=env, check=False)
    except subprocess.TimeoutExpired:
        child = None
    if child is None or child.returncode == -signal.SIGXCPU:
        raise DPInputError(f"{label}: reading this workbook took more than {math.ceil(seconds)} s of CPU time "
                           "and was stopped; save the sheet as CSV (UTF-8) and upload that") from None
    try:
        status, payload = pickle.loads(child.stdout)  # written by _WORKBOOK_CHILD, our own code
    except Exception:  # noqa: BLE001 - the child died before writing its answer
        # out of address space inside C code (a failed allocation aborts rather than raising), or killed
        last = (child.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {child.returncode}"])[-1]
        status = "memory" if ("MemoryError" in last or "alloc" in last or child.returncode < 0) else "error"
        payload = last[:160]
    if status == "memory":
        raise DPInputError(f"{label}: reading this workbook needed more than {_fmt_bytes(memory)} of memory "
                           "and was stopped; save the sheet as CSV (UTF-8) and upload that")
    if status != "ok":
        raise DPInputError(f"{label} is an Excel workbook that cannot be read ({payload}); open it in Excel "
                           "and save the sheet as CSV (UTF-8)")
    frame, sheets = payload
    notes = [f"read the Excel sheet {sheets[0]!r}"
             + (f" (the first of {len(sheets)} sheets; the others are ignored)" if len(sheets) > 1 else "")]
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
def read_table(source: bytes | str | Path | BinaryIO, *, file_name: str | None = None,  # noqa: C901
               max_bytes: int = DEFAULT_MAX_BYTES, max_rows: int = DEFAULT_MAX_ROWS,
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
            "in Excel and save the sheet as CSV (UTF-8) or as .xlsx, then upload that")
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
        try:
            frame = pd.read_csv(io.StringIO(text), sep=sep, nrows=max_rows + 1, skipinitialspace=True,
                                low_memory=False)
        except pd.errors.EmptyDataError:
            raise DPInputError(f"{label} has no columns: it is empty or blank") from None
        except pd.errors.ParserError as exc:
            msg = str(exc).strip().splitlines()[-1][:200]
            raise DPInputError(f"{label} is not a well-formed CSV table: {msg}. Check that every row "
                               "has as many fields as the header and that quotes are closed") from None
        except (ValueError, OverflowError, MemoryError) as exc:
            raise DPInputError(f"{label} cannot be read as CSV ({type(exc).__name__}: {str(exc)[:200]})") from None
        text_frame = None
        if sep == ";":  # a European export: 1.234 may be a thousand, so look at the text again
            recheck = [c for c in frame.columns if pd.api.types.is_float_dtype(frame[c])]
            if recheck and len(frame) <= max_rows:
                text_frame = pd.read_csv(io.StringIO(text), sep=sep, usecols=recheck, dtype=str,
                                         nrows=max_rows + 1, skipinitialspace=True)
        frame, more = _normalize_number_columns(frame, sep, label, text_frame)
        notes += more
    if frame.shape[1] == 0:
        raise DPInputError(f"{label} has no columns")
    if len(frame) > max_rows:
        raise DPInputError(
            f"{label} has more than {max_rows:,} data rows (the row limit); use a random sample of rows")
    if len(frame) == 0:
        cols = ", ".join(_short(c) for c in list(frame.columns)[:8])
        raise DPInputError(f"{label} has a header ({cols}) but no data rows")
    formats = {str(k).strip(): v for k, v in frame.attrs.get("number_formats", {}).items()}
    frame.columns = [str(c).strip() for c in frame.columns]
    frame.attrs["number_formats"] = formats
    if all(_is_number(c) for c in frame.columns):
        notes.append(f"the first line ({', '.join(list(frame.columns)[:3])}) was read as column names; "
                     "if it is data, add a header line such as 'income' at the top of the file")
    dup = frame.columns[frame.columns.duplicated()].tolist()
    if dup:
        raise DPInputError(f"{label} has duplicate column names: {', '.join(_short(d) for d in dup[:5])}; "
                           "rename them so each column has its own name")
    return frame, tuple(notes)


# ---------------------------------------------------------------------------------------------
# Choosing and validating the income column.
# ---------------------------------------------------------------------------------------------

_INCOME_NAMES = ("income", "pincp", "inctot", "ptotval", "earnings", "wage", "wages", "wagp",
                 "salary", "inc", "revenue", "y1_p50_earnings")


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
    for name in frame.columns:
        col = frame[name]
        if str(name) in unclear:
            continue
        if pd.api.types.is_bool_dtype(col):
            continue
        if pd.api.types.is_numeric_dtype(col):
            if col.notna().any():
                out.append(str(name))
            continue
        if pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col):
            present, numeric = _numeric_share(col, min_share)
            if present and numeric / present >= min_share:
                out.append(str(name))
    return out


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
            return (f"column {_short(column)} has values such as {ex} where the {sep!r} could be a thousands "
                    f"separator ({first} = {plain_thousands}) or a decimal mark ({first} = {as_decimal}); "
                    f"no guess is made. Write the incomes without thousands separators (e.g. "
                    f"{plain_thousands}) and with a decimal point, then upload the file again")
        if self.style == "mixed":
            return (f"column {_short(column)} mixes two number styles ({ex}): some cells use a decimal "
                    "comma, others a decimal point with comma thousands. Write every income the same "
                    "way, without thousands separators and with a decimal point (e.g. 1234.56)")
        if self.style == "text":
            return (f"column {_short(column)} holds cells that are not numbers, e.g. {ex}. Write incomes as "
                    "plain numbers such as 31500.50 (no currency signs, units or words), or choose "
                    "another column")
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


def _normalize_number_columns(frame: pd.DataFrame, delimiter: str | None, label: str,
                              text_frame: pd.DataFrame | None = None) -> tuple[pd.DataFrame, list[str]]:
    """Convert the text columns written with thousands separators or decimal commas to floats.

    ``text_frame``: the raw text of columns pandas already parsed as numbers but that need a second
    look (a ";"-separated file, where 1.234 may be a thousand). Columns whose format is ambiguous
    or mixed stay text; their reason is kept in ``frame.attrs["number_formats"]`` for
    :func:`explain_column` and the upload page. Returns the frame and notes.
    """
    notes: list[str] = []
    problems: dict[str, str] = {}
    columns = {}
    for name in frame.columns:
        col = frame[name]
        if text_frame is not None and name in text_frame.columns:
            col = text_frame[name]
        elif not (pd.api.types.is_object_dtype(col) or pd.api.types.is_string_dtype(col)):
            continue
        present = col.dropna()
        if present.empty:
            continue
        fmt = detect_number_format(present, delimiter=delimiter)
        if fmt.style in ("thousands_comma", "decimal_comma"):
            columns[name] = parse_numbers(col, fmt)
            ex = fmt.examples[0] if fmt.examples else ""
            notes.append(f"column {name!r} is written with {_STYLE_NOTES[fmt.style]}: read {ex!r} as "
                         f"{parse_numbers(pd.Series([ex]), fmt)[0]:,.6g}")
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


def clean_income_column(frame: pd.DataFrame, column: str, *, negative: str = "refuse",
                        min_rows: int = 2) -> tuple[pd.DataFrame, tuple[str, ...]]:
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
                "31500.50, no currency signs or thousands separators), or choose another column")
    inf = np.isinf(values)
    if inf.any():
        i = int(np.flatnonzero(inf)[0])
        raise DPInputError(f"column {_short(column)} has {int(inf.sum()):,} infinite values "
                           f"(e.g. line {i + 2}); replace them with real amounts or delete those rows")
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
                "with them: drop those rows or clip them to 0")
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
            f"cleaning{why}; at least {min_rows} are needed")
    out = frame.loc[keep].copy()
    out[column] = values[keep]
    out = out.reset_index(drop=True)
    return out, tuple(notes)


def load_income_file(source: bytes | str | Path | BinaryIO, *, column: str | None = None,
                     negative: str = "refuse", name: str | None = None,
                     max_bytes: int = DEFAULT_MAX_BYTES, max_rows: int = DEFAULT_MAX_ROWS,
                     min_rows: int = 2, confidential: bool = True) -> IncomeData:
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
                "column=... to choose one")
        if not candidates:
            if frame.shape[1] == 1:
                only = frame.columns[0]
                raise DPInputError(
                    f"{label} has only one column, {_short(only)}, and it is not numeric (e.g. "
                    f"{_short(frame[only].dropna().iloc[0]) if frame[only].notna().any() else 'empty'}); "
                    "if the file uses another delimiter, save it as comma-separated CSV")
            cols = ", ".join(_short(c) for c in list(frame.columns)[:12])
            raise DPInputError(f"{label} has no numeric column (columns: {cols}); incomes must be numbers")
        column = guess_income_column(candidates)
        if len(candidates) > 1:
            notes = notes + (f"used column {column!r} (numeric columns: {', '.join(candidates[:12])})",)
    cleaned, more = clean_income_column(frame, column, negative=negative, min_rows=min_rows)
    return IncomeData(values=cleaned[column].to_numpy(dtype=float), name=str(label), source="upload",
                      column=str(column), confidential=bool(confidential), frame=cleaned,
                      notes=tuple(notes) + more)


# ---------------------------------------------------------------------------------------------
# Real data: the bundled examples and the files in ../shared/data.
# ---------------------------------------------------------------------------------------------

#: Bundled real examples: key -> (file in dpcore/examples, income column, display name).
#: "acs" and "pseo" are byte-identical copies of the ../shared/data files (public domain, see
#: dpcore/examples/README.md), so the app shows real American incomes on a machine without
#: ../shared. The CPS IPUMS extract is never bundled (IPUMS terms: no redistribution).
EXAMPLES: dict[str, tuple[str, str, str]] = {
    "engel": ("engel1857_belgium.csv", "income",
              "Engel 1857: Belgian household incomes (real, 235 households, francs)"),
    "acs": ("acs2019_nist_excerpt_national.csv.gz", "PINCP",
            "ACS 2019 PUMS, NIST excerpt (20 PUMAs): personal income (real)"),
    "pseo": ("pseo_earnings_co_tx.csv.gz", "y1_p50_earnings",
             "PSEO 2019 release: median earnings 1 year after graduation, per published cell (real)"),
}


def example_path(key: str) -> Path:
    """Path of a bundled example file in dpcore/examples (``"engel"``, ``"acs"``, ``"pseo"``)."""
    if key not in EXAMPLES:
        raise DPInputError(f"unknown example {key!r}; choose one of {', '.join(EXAMPLES)}")
    return EXAMPLES_DIR / EXAMPLES[key][0]


def real_data_path(file_name: str) -> Path | None:
    """Where to read a real public file: ../shared/data/<file_name> when present, else the copy
    bundled in dpcore/examples (the ACS excerpt and the PSEO table), else None (the CPS extract,
    which is only in ../shared). Pages read the ACS and PSEO files through this, so they show real
    data on a fresh machine."""
    path = shared_data_path(file_name)
    if path is not None:
        return path
    bundled = EXAMPLES_DIR / str(file_name)
    if any(spec[0] == file_name for key, spec in EXAMPLES.items() if key in _BUNDLED_SHARED):
        return bundled if bundled.is_file() else None
    return None


@dataclass(frozen=True)
class SharedDataset:
    """A real survey file: which column is the income and what else it offers."""

    key: str
    file_name: str
    column: str
    label: str
    weight: str | None
    groups: tuple[str, ...]
    description: str
    filter_column: str | None = None  # keep rows where this column == filter_value
    filter_value: Any = None


SHARED_DATASETS: dict[str, SharedDataset] = {
    "cps": SharedDataset(
        "cps", "cps_asec2016_ipums_midwest.csv.gz", "INCTOT",
        "CPS ASEC 2016, 5 Midwest states: total personal income 2015 (real)", "ASECWT",
        ("STATEFIP", "AGE", "EDUC"),
        "IPUMS-CPS person records; INCTOT is missing for persons under 15 (dropped)."),
    "acs": SharedDataset(
        "acs", "acs2019_nist_excerpt_national.csv.gz", "PINCP",
        "ACS 2019 PUMS, NIST excerpt (20 PUMAs): personal income (real)", "PWGTP",
        ("SEX", "RAC1P", "AGEP", "POVPIP", "HISP", "EDU", "ST", "PUMA"),
        "ACS person records; PINCP is missing under age 15 (dropped)."),
    "pseo": SharedDataset(
        "pseo", "pseo_earnings_co_tx.csv.gz", "y1_p50_earnings",
        "PSEO 2019 release: median earnings 1 year after graduation, per published cell (real)", None,
        ("institution", "degree_level", "cipcode", "institution_state"),
        "Rows are published cells (institution x degree x field x cohort), not persons; only cells "
        "with status_y1_earnings == 1 (published) are kept.",
        filter_column="status_y1_earnings", filter_value=1),
}
#: Shared files that also ship in dpcore/examples (load_shared falls back to them).
_BUNDLED_SHARED = ("acs", "pseo")


def available_shared() -> list[str]:
    """Keys of the real survey files loadable on this machine: the ../shared/data files present,
    plus the bundled ACS and PSEO copies (always)."""
    return [k for k, d in SHARED_DATASETS.items() if real_data_path(d.file_name) is not None]


def _load_spec(spec: SharedDataset, path: Path, *, source: str, negative: str,
               columns: Sequence[str] | None = None, extra_notes: tuple[str, ...] = ()) -> IncomeData:
    """Read one real survey file (filtered to its published rows, income column cleaned)."""
    usecols = None
    if columns is not None:
        columns = [str(c) for c in columns]
        usecols = list(dict.fromkeys([spec.column, *columns,
                                      *([spec.filter_column] if spec.filter_column else [])]))
    try:
        frame = pd.read_csv(path, low_memory=False, usecols=usecols,
                            dtype={"PUMA": str} if spec.key == "acs" else None)
    except ValueError as exc:  # usecols naming a column the file lacks
        raise DPInputError(f"{spec.file_name}: {exc}") from None
    if spec.filter_column is not None:
        frame = frame.loc[frame[spec.filter_column] == spec.filter_value].reset_index(drop=True)
    cleaned, notes = clean_income_column(frame, spec.column, negative=negative)
    if columns is not None:
        cleaned = cleaned[list(dict.fromkeys([spec.column, *columns]))]
    return IncomeData(values=cleaned[spec.column].to_numpy(dtype=float), name=spec.label, source=source,
                      column=spec.column, confidential=False, frame=cleaned,
                      notes=(spec.description,) + extra_notes + notes)


def load_example(key: str = "engel", *, negative: str = "drop",
                 columns: Sequence[str] | None = None) -> IncomeData:
    """A bundled real public-domain example (see ``dpcore/examples/README.md`` for provenance).

    ``"engel"``: Engel's 1857 Belgian households (no negatives: ``negative`` is ignored).
    ``"acs"`` / ``"pseo"``: the bundled copies of the ACS 2019 NIST excerpt (PINCP; persons under
    15 dropped, negative incomes dropped by default) and of the PSEO table (published y1 medians).
    ``columns`` keeps only those columns (plus the income column) in ``frame``.
    """
    path = example_path(key)
    if key in SHARED_DATASETS:
        return _load_spec(SHARED_DATASETS[key], path, source="example", negative=negative, columns=columns)
    _, column, label = EXAMPLES[key]
    frame, _ = read_table(path)
    cleaned, notes = clean_income_column(frame, column, negative="refuse")
    if columns is not None:
        missing = [c for c in columns if c not in cleaned.columns]
        if missing:
            raise DPInputError(f"the example {key!r} has no column(s) {missing}")
        cleaned = cleaned[list(dict.fromkeys([column, *columns]))]
    return IncomeData(values=cleaned[column].to_numpy(dtype=float), name=label, source="example",
                      column=column, confidential=False, frame=cleaned, notes=notes)


def load_shared(key: str, *, negative: str = "drop", columns: Sequence[str] | None = None) -> IncomeData | None:
    """Load a real survey file as IncomeData (full frame, rows aligned), or None if it is absent.

    Reads ../shared/data; for ``"acs"`` and ``"pseo"`` it falls back to the copies bundled in
    dpcore/examples (identical files, with a note saying so), so only ``"cps"`` can give None.
    The income column is cleaned with :func:`clean_income_column`: missing incomes (persons
    under 15) are dropped; negative incomes are dropped by default, as in the data README's
    figures (pass ``negative="clip"`` to keep those persons at 0). ``frame`` keeps every column
    (groups such as SEX, RAC1P, AGEP, POVPIP, PWGTP for ACS; STATEFIP, AGE, EDUC, ASECWT for CPS)
    unless ``columns`` names the ones to keep.
    """
    if key not in SHARED_DATASETS:
        raise DPInputError(f"unknown shared dataset {key!r}; choose one of {', '.join(SHARED_DATASETS)}")
    if negative not in NEGATIVE_POLICIES:
        raise DPInputError(f"negative must be one of {', '.join(NEGATIVE_POLICIES)}, got {negative!r}")
    spec = SHARED_DATASETS[key]
    path = shared_data_path(spec.file_name)
    notes: tuple[str, ...] = ()
    if path is None:
        path = real_data_path(spec.file_name)
        if path is None:
            return None
        notes = ("read from the copy bundled in dpcore/examples (../shared/data is not on this machine)",)
    return _load_spec(spec, path, source="shared", negative=negative, columns=columns, extra_notes=notes)


def load_cps(*, negative: str = "drop") -> IncomeData | None:
    """CPS ASEC 2016 (5 Midwest states), INCTOT; None when ../shared/data is absent (never bundled)."""
    return load_shared("cps", negative=negative)


def load_acs(*, negative: str = "drop") -> IncomeData | None:
    """ACS 2019 NIST excerpt, PINCP (../shared/data, else the bundled copy)."""
    return load_shared("acs", negative=negative)


def load_pseo(*, negative: str = "drop") -> IncomeData | None:
    """PSEO earnings cells, published y1 medians (../shared/data, else the bundled copy)."""
    return load_shared("pseo", negative=negative)


#: Columns of the ACS excerpt used by the group-means and ratio pages (person income, age, sex,
#: race, Hispanic origin, education, marital status, income-to-poverty ratio).
ACS_PAGE_COLUMNS = ("PINCP", "AGEP", "SEX", "RAC1P", "HISP", "EDU", "MSP", "POVPIP")


@functools.lru_cache(maxsize=2)
def _acs_columns(columns: tuple[str, ...]) -> pd.DataFrame | None:
    path = real_data_path(SHARED_DATASETS["acs"].file_name)
    if path is None:
        return None
    return pd.read_csv(path, usecols=list(columns))


def acs_frame(columns: Sequence[str] = ACS_PAGE_COLUMNS) -> pd.DataFrame | None:
    """The ACS 2019 excerpt (NIST, 20 PUMAs; public domain) as a DataFrame with ``columns``, all rows,
    unfiltered (missing values kept): ../shared/data when present, else the bundled copy; None when
    neither exists. Read once per process (a fresh copy is returned, so callers may modify it)."""
    cols = tuple(str(c) for c in columns)
    unknown = [c for c in cols if c not in ACS_PAGE_COLUMNS]
    if unknown or not cols:
        raise DPInputError(f"acs_frame reads the columns {', '.join(ACS_PAGE_COLUMNS)}; got {list(cols)}")
    full = _acs_columns(ACS_PAGE_COLUMNS)
    return None if full is None else full.loc[:, list(cols)].copy()


#: Group codes of the ACS excerpt's SEX, RAC1P and HISP columns (PUMS data dictionary 2019) for the
#: poverty example of the ratio page.
POVERTY_GROUPINGS: dict[str, dict[int, str]] = {
    "SEX": {1: "Male", 2: "Female"},
    "RAC1P": {1: "White alone", 2: "Black alone", 3: "American Indian alone", 4: "Alaska Native alone",
              5: "AIAN tribes specified", 6: "Asian alone", 7: "NHPI alone", 8: "Some other race alone",
              9: "Two or more races"},
    "HISP": {0: "Not Hispanic", 1: "Mexican", 2: "Puerto Rican", 3: "Cuban", 4: "Other Hispanic"},
}


def poverty_counts(frame: Any, column: str, group_x: Any, group_y: Any, *, threshold: float = 100.0
                   ) -> tuple[int, int, int, int]:
    """(x, n_x, y, n_y): people with POVPIP < threshold and with POVPIP known, in two groups of ``column``.

    Rows with missing POVPIP (poverty status not determined) are dropped. Raises DPInputError for an
    unknown column, identical groups, or an empty group. These are the confidential counts that the
    ratio page's poverty example then releases with noise (dpcore.ratio).
    """
    if column not in getattr(frame, "columns", ()):
        raise DPInputError(f"the data has no column {column!r}")
    if "POVPIP" not in frame.columns:
        raise DPInputError("the data has no POVPIP column (income-to-poverty ratio)")
    if group_x == group_y:
        raise DPInputError("choose two different groups")
    threshold = check_finite(threshold, "threshold")
    known = frame[frame["POVPIP"].notna()]
    if (known["POVPIP"] < 0).any():
        raise DPInputError("POVPIP has negative values; it is a ratio in percent (0..501)")
    out = []
    for g in (group_x, group_y):
        sel = known[known[column] == g]
        if len(sel) == 0:
            raise DPInputError(f"group {column} = {g} is empty (no one with a known poverty ratio)")
        out.append((int((sel["POVPIP"] < threshold).sum()), int(len(sel))))
    return out[0][0], out[0][1], out[1][0], out[1][1]


# ---------------------------------------------------------------------------------------------
# Gini (for the generators and their tests; the DP Gini lives in dpcore.gini).
# ---------------------------------------------------------------------------------------------

GINI_DEFINITIONS = ("eq1", "eq2")


def gini_coefficient(x: Any, *, definition: str = "eq1") -> float:
    """Sample Gini of non-negative data with a positive sum.

    ``definition="eq1"`` (default, as in ``dpcore.gini``, the paper's Algorithms 1-2 and
    ../shared/data/README.md): Lan & Reiter eq. (1), sum_ij |x_i - x_j| / (2 n^2 xbar)
    = sum_i (2i - n - 1) x_(i) / (n sum x). ``"eq2"``: eq. (2), divide by n (n - 1) xbar instead,
    i.e. eq1 * n / (n - 1).
    """
    if definition not in GINI_DEFINITIONS:
        raise DPInputError(f"definition must be 'eq1' or 'eq2', got {definition!r}")
    arr = np.sort(np.asarray(x, dtype=float))
    if arr.ndim != 1 or arr.size < 2:
        raise DPInputError("the Gini index needs at least 2 values")
    if not np.isfinite(arr).all():
        raise DPInputError("the Gini index needs finite values (drop missing values first)")
    if arr[0] < 0:
        raise DPInputError("the Gini index needs non-negative values")
    total = arr.sum()
    if total <= 0:
        raise DPInputError("the Gini index is undefined when every value is 0")
    n = arr.size
    weights = 2.0 * np.arange(1, n + 1) - n - 1
    g1 = float(weights @ arr / (n * total))
    return g1 * n / (n - 1) if definition == "eq2" else g1


# ---------------------------------------------------------------------------------------------
# Synthetic generators.
# ---------------------------------------------------------------------------------------------

def lognormal_incomes(n: int, *, mu: float = 10.5, sigma: float = 0.9, rng=None) -> np.ndarray:
    """n log-normal incomes exp(N(mu, sigma^2)); Gini = 2 Phi(sigma / sqrt 2) - 1."""
    n = check_int(n, "n", minimum=1)
    mu = check_finite(mu, "mu")
    sigma = check_positive(sigma, "sigma")
    return as_generator(rng).lognormal(mu, sigma, size=n)


_SIGMA_MIN, _SIGMA_MAX = 1e-4, 4.0


@dataclass(frozen=True)
class ParetoTailMixture:
    """Log-normal body with a Pareto top tail: the classic model of an income distribution.

    Quantile function (u in (0, 1), p = ``tail_share``, a = ``tail_index``, z_p = Phi^-1(1 - p)):

        Q(u) = exp(mu + sigma Phi^-1(u))                     for u < 1 - p   (log-normal body)
        Q(u) = x_m (p / (1 - u))^(1/a),  x_m = exp(mu + sigma z_p)   for u >= 1 - p  (Pareto tail)

    i.e. a mixture with weight 1 - p on the log-normal truncated to (0, x_m) and weight p on a
    Pareto(x_m, a) above it; Q is continuous at the splice. ``a > 1`` keeps the mean finite
    (``a > 2`` also the variance). The population Gini is exact up to quadrature error (~1e-10):
    G = 2 int_0^1 u Q(u) du / mean - 1, with the tail part in closed form. It does not depend on
    mu (scale invariance). :meth:`calibrated` solves for sigma so that G equals a target.
    """

    sigma: float
    tail_share: float = 0.1
    tail_index: float = 2.5
    mu: float = 10.0

    def __post_init__(self) -> None:
        check_positive(self.sigma, "sigma")
        check_finite(self.mu, "mu")
        p = check_finite(self.tail_share, "tail_share")
        if not 0 < p < 1:
            raise DPInputError(f"tail_share must be strictly between 0 and 1, got {p:g}")
        a = check_finite(self.tail_index, "tail_index")
        if a <= 1:
            raise DPInputError(f"tail_index must be > 1 (otherwise the mean income is infinite), got {a:g}")

    @property
    def _zp(self) -> float:
        return float(special.ndtri(1.0 - self.tail_share))

    @property
    def threshold(self) -> float:
        """x_m: the income where the Pareto tail starts (the (1 - p) quantile)."""
        return math.exp(self.mu + self.sigma * self._zp)

    @property
    def mean(self) -> float:
        p, a, s = self.tail_share, self.tail_index, self.sigma
        body = math.exp(self.mu + s * s / 2) * special.ndtr(self._zp - s)
        return float(body + self.threshold * p * a / (a - 1))

    @property
    def gini(self) -> float:
        """Population Gini (the n -> infinity limit of both eq. (1) and eq. (2))."""
        p, a, s, zp = self.tail_share, self.tail_index, self.sigma, self._zp
        # body: int_0^{1-p} u Q(u) du = exp(mu + s^2/2) int_{-inf}^{z_p} Phi(z) phi(z - s) dz
        f = lambda z: special.ndtr(z) * math.exp(-0.5 * (z - s) ** 2) / math.sqrt(2 * math.pi)  # noqa: E731
        lo = min(zp, s) - 12.0
        from scipy import integrate

        body_int, _ = integrate.quad(f, lo, zp, epsabs=1e-13, epsrel=1e-11, limit=200)
        body = math.exp(self.mu + s * s / 2) * body_int
        # tail: int_{1-p}^1 u x_m (p/(1-u))^{1/a} du = x_m (p a/(a-1) - p^2 a/(2a-1))
        tail = self.threshold * (p * a / (a - 1) - p * p * a / (2 * a - 1))
        return float(2.0 * (body + tail) / self.mean - 1.0)

    def ppf(self, u: Any) -> np.ndarray:
        """Quantile function Q(u)."""
        u = np.asarray(u, dtype=float)
        if np.any((u < 0) | (u > 1)) or np.any(np.isnan(u)):
            raise DPInputError("quantile levels must be in [0, 1]")
        p, a = self.tail_share, self.tail_index
        with np.errstate(divide="ignore", over="ignore"):
            body = np.exp(self.mu + self.sigma * special.ndtri(np.minimum(u, 1 - p)))
            tail = self.threshold * (p / (1.0 - np.maximum(u, 1 - p))) ** (1.0 / a)
        return np.where(u < 1 - p, body, tail)

    def cdf(self, x: Any) -> np.ndarray:
        """F(x), the inverse of :meth:`ppf`."""
        x = np.asarray(x, dtype=float)
        p, a, xm = self.tail_share, self.tail_index, self.threshold
        with np.errstate(divide="ignore", invalid="ignore"):
            body = special.ndtr((np.log(np.maximum(x, 1e-300)) - self.mu) / self.sigma)
            tail = 1.0 - p * (xm / np.maximum(x, xm)) ** a
        out = np.where(x < xm, body, tail)
        return np.where(x <= 0, 0.0, out)

    def rvs(self, n: int, rng=None) -> np.ndarray:
        """n draws by inversion (vectorised)."""
        n = check_int(n, "n", minimum=1)
        u = as_generator(rng).random(n)
        return self.ppf(u)

    @classmethod
    def calibrated(cls, gini: float, *, tail_share: float = 0.1, tail_index: float = 2.5,
                   mu: float = 10.0) -> ParetoTailMixture:
        """The mixture whose population Gini equals ``gini`` (solved for sigma by Brent's method).

        G is increasing in sigma; the reachable range is (G(sigma -> 0), G(sigma = 4)). A target
        outside raises DPInputError naming the range (raise ``tail_index`` for lower Ginis).
        """
        g = check_finite(gini, "gini")
        lo_m = cls(_SIGMA_MIN, tail_share, tail_index, mu)
        hi_m = cls(_SIGMA_MAX, tail_share, tail_index, mu)
        g_lo, g_hi = lo_m.gini, hi_m.gini
        if not g_lo < g < g_hi:
            raise DPInputError(
                f"a Pareto-tailed mixture with tail share {tail_share:g} and tail index {tail_index:g} "
                f"has a Gini between {g_lo:.3f} and {g_hi:.3f}; got target {g:g}. Choose a target in "
                "that range (a larger tail index allows lower Ginis)")
        from scipy import optimize

        sigma = optimize.brentq(lambda s: cls(s, tail_share, tail_index, mu).gini - g,
                                _SIGMA_MIN, _SIGMA_MAX, xtol=1e-12, rtol=1e-12)
        return cls(float(sigma), tail_share, tail_index, mu)


def pareto_mixture_incomes(n: int, *, gini: float = 0.45, tail_share: float = 0.1,
                           tail_index: float = 2.5, median: float = 30_000.0, rng=None) -> np.ndarray:
    """n incomes from the :class:`ParetoTailMixture` whose population Gini is ``gini``.

    ``median`` sets the scale (the median is exp(mu) when tail_share < 0.5). Default tail index
    2.5 is in the range estimated for top US incomes; tail share 0.1 = the top decile is Pareto.
    """
    n = check_int(n, "n", minimum=1)
    median = check_positive(median, "median")
    model = ParetoTailMixture.calibrated(gini, tail_share=tail_share, tail_index=tail_index,
                                         mu=math.log(median))
    return model.rvs(n, rng)


@dataclass(frozen=True)
class TwoPointData:
    """Two-point data of Lan & Reiter Prop. 5.1: ``n_low`` values ``a``, ``n - n_low`` values ``b``.

    ``lower``/``upper`` are the public bounds L <= a < b <= U with (U - L) / mean = ``iq``
    (the paper's normalized range IQ(X), Theorem 4.4), and ``gini`` is the exact Gini of
    ``values`` under ``definition``.
    """

    values: np.ndarray
    lower: float
    upper: float
    gini: float
    iq: float
    n_low: int
    low_value: float
    high_value: float
    definition: str


def min_iq_for_gini(gini: float, n: int | None = None, *, definition: str = "eq1") -> float:
    """inf{IQ(X) : g(X) = gini} of Lan & Reiter Proposition 5.1, eq. (31) / (61).

    The paper states 4g for g <= 1/2 and 1/(1-g) for 1/2 < g < 1. Its proof (Appendix A.4) sets the
    mean to 1 and writes g(X) = sum_ij |x_i - x_j| / n^2, which is a typo: with that denominator the
    two-point data would give 2 alpha (1 - alpha)(U - L), not eq. (62). Eq. (62) and hence (31) are
    right for eq. (1) (denominator 2 n^2 xbar). For eq. (2) (denominator n (n - 1) xbar), the same
    data have g2 = g1 n / (n - 1), so the infimum is eq. (31) evaluated at g1 = gini (n - 1) / n;
    ``definition="eq2"`` therefore needs ``n`` (and is only defined for gini < 1). Tested against a
    brute-force search over small datasets.
    """
    g = check_finite(gini, "gini")
    if definition not in GINI_DEFINITIONS:
        raise DPInputError(f"definition must be 'eq1' or 'eq2', got {definition!r}")
    if definition == "eq2":
        if n is None:
            raise DPInputError("definition 'eq2' needs n (its Gini depends on n through n / (n - 1))")
        n = check_int(n, "n", minimum=2)
        g = g * (n - 1) / n
    if not 0 <= g < 1:
        raise DPInputError(f"gini must be in [0, 1), got {gini:g}")
    return 4.0 * g if g <= 0.5 else 1.0 / (1.0 - g)


def two_point_incomes(n: int, gini: float, iq: float | None = None, *, mean: float = 1.0,
                      definition: str = "eq1", rng=None) -> TwoPointData:
    """The two-point datasets of Lan & Reiter section 5.2.1 / Appendix A.4 with Gini g, size n and IQ.

    Construction (A.4, with the mean scaled to 1): a fraction alpha of the values equals a and the
    rest equals b, so g1 = alpha (1 - alpha)(b - a) (eq. (62), eq.-(1) Gini; eq. (2) multiplies by
    n / (n - 1)). At the minimum IQ of eq. (31) the values sit at the public bounds: alpha = 1/2,
    a = 1 - 2g, b = 1 + 2g when g <= 1/2; a = L = 0, alpha = g, b = 1/(1-g) when g > 1/2.
    For a larger ``iq`` (``None`` = the minimum) we keep a and b at the bounds and solve
    alpha (1 - alpha) iq = g1 with the root alpha >= 1/2, which keeps a = 1 - (1 - alpha) iq >= 0.

    With finite n the count n_low = alpha n must be an integer. We round it (keeping a >= 0), then
    recompute the spread b - a = g1 / (alpha (1 - alpha)) so the Gini is *exact*, and put any
    left-over width of the bounds (iq - (b - a), zero when alpha n is already an integer) around
    the data so (U - L) / mean = iq exactly with L >= 0. A requested ``iq`` below the minimum
    raises DPInputError. ``iq=None`` gives the smallest IQ reachable with integer counts: eq. (31)
    exactly when alpha n is an integer (e.g. g = 0.5 with n even, or g n an integer for g > 1/2),
    slightly above it otherwise (the paper treats alpha as continuous).

    ``rng`` only shuffles the order of the records (the data are a multiset).
    """
    n = check_int(n, "n", minimum=2)
    mean = check_positive(mean, "mean")
    g_in = check_finite(gini, "gini")
    if definition not in GINI_DEFINITIONS:
        raise DPInputError(f"definition must be 'eq1' or 'eq2', got {definition!r}")
    factor = (n - 1) / n if definition == "eq2" else 1.0
    g1 = g_in * factor  # the eq.-(1) Gini to reach
    if not 0 < g1 < 1 - 1.0 / n:
        top = 1.0 if definition == "eq2" else 1 - 1.0 / n
        raise DPInputError(f"gini must be strictly between 0 and {top:g} for n = {n} ({definition}), got {g_in:g}")
    iq_inf = min_iq_for_gini(g1, definition="eq1")  # eq. (31): the continuous-alpha infimum
    if iq is not None:
        iq = check_positive(iq, "iq")
        if iq < iq_inf * (1 - 1e-12):
            raise DPInputError(
                f"iq = {iq:g} is below the minimum {iq_inf:.6g} that a Gini of {g_in:g} allows "
                "(Lan & Reiter Prop. 5.1): the bounds must span at least that many means")
    # every integer split m = n_low in 1..n-1 at once (vectorised; n up to millions is cheap)
    m_all = np.arange(1, n)
    alpha = m_all / n
    spread = g1 / (alpha * (1 - alpha))
    a_all = 1.0 - (1 - alpha) * spread
    feasible = a_all >= -1e-12
    if iq is None:
        if not feasible.any():  # pragma: no cover - m = n-1 is always feasible for g1 < 1 - 1/n
            raise DPInputError(f"no two-point dataset of size {n} has Gini {g_in:g}")
        i = int(np.argmin(np.where(feasible, spread, np.inf)))
        iq = float(spread[i])
    else:
        feasible &= spread <= iq * (1 + 1e-12)
        if not feasible.any():
            best_iq = float(np.min(np.where(a_all >= -1e-12, spread, np.inf)))
            raise DPInputError(
                f"with n = {n} records a two-point dataset with Gini {g_in:g} needs iq >= {best_iq:.6g} "
                f"(the limit {iq_inf:.6g} of Prop. 5.1 needs alpha n to be an integer); got {iq:g}")
        i = int(np.argmin(np.where(feasible, iq - spread, np.inf)))
    best = (max(0.0, iq - float(spread[i])), int(m_all[i]), max(float(a_all[i]), 0.0), float(spread[i]))
    slack, m, a, spread = best
    b = a + spread
    lower = max(0.0, a - slack / 2)
    upper = lower + iq
    values = np.concatenate([np.full(m, a), np.full(n - m, b)]) * mean
    if rng is not None:
        values = as_generator(rng).permutation(values)
    g_exact = gini_coefficient(values, definition=definition)
    return TwoPointData(values=values, lower=lower * mean, upper=upper * mean, gini=g_exact,
                        iq=(upper - lower) * mean / float(values.mean()), n_low=m, low_value=a * mean, high_value=b * mean,
                        definition=definition)


# ---------------------------------------------------------------------------------------------
# Dataset recipes: one plain-data description of every data source, and the function that builds it.
# ---------------------------------------------------------------------------------------------

#: Recipe kinds -> (required parameters, optional parameters with their defaults).
RECIPE_KINDS: dict[str, tuple[tuple[str, ...], dict[str, Any]]] = {
    "lognormal": (("n", "sigma", "seed"), {"mu": 10.5}),
    "pareto": (("n", "gini", "seed"), {"tail_index": 2.5, "median": 30_000.0}),
    # a synthetic look-alike of a confidential file: its n (public), a published Gini and median
    "lookalike": (("n", "gini", "median", "seed"), {"tail_index": 2.5}),
    "two_point": (("n", "gini", "seed"), {"iq": None, "mean": 30_000.0}),
    "example": (("name",), {"negative": "drop", "columns": None}),
    "shared": (("name",), {"negative": "drop", "columns": None}),
    "file": (("path",), {"column": None, "negative": "refuse"}),
}
#: The sidebar's default data: log-normal incomes, n = 10,000, sigma 0.9, data seed 2026.
DEFAULT_RECIPE: dict[str, Any] = {"kind": "lognormal", "n": 10_000, "sigma": 0.9, "seed": 2026}


def check_recipe(recipe: Any) -> dict[str, Any]:
    """A validated copy of ``recipe`` with every optional parameter filled in (DPInputError if bad)."""
    if not isinstance(recipe, dict):
        raise TypeError(f"a dataset recipe is a dict such as {DEFAULT_RECIPE!r}, got {type(recipe).__name__}")
    kind = recipe.get("kind")
    if kind not in RECIPE_KINDS:
        raise DPInputError(f"unknown dataset kind {kind!r}; choose one of {', '.join(RECIPE_KINDS)}")
    required, optional = RECIPE_KINDS[kind]
    missing = [p for p in required if p not in recipe]
    if missing:
        raise DPInputError(f"a {kind!r} dataset recipe needs {', '.join(missing)}")
    unknown = sorted(set(recipe) - {"kind", *required, *optional})
    if unknown:
        raise DPInputError(f"a {kind!r} dataset recipe has no parameter(s) {', '.join(map(repr, unknown))}; "
                           f"it takes {', '.join((*required, *optional))}")
    out = {"kind": kind, **optional, **{k: v for k, v in recipe.items() if k != "kind"}}
    if out.get("columns") is not None:
        if isinstance(out["columns"], str) or not all(isinstance(c, str) for c in out["columns"]):
            raise DPInputError("columns must be a list of column names")
        out["columns"] = list(out["columns"])
    return out


def build_dataset(recipe: dict[str, Any] | None = None) -> IncomeData:
    """The data a recipe describes (None -> :data:`DEFAULT_RECIPE`), as :class:`IncomeData`.

    Kinds and parameters (see :data:`RECIPE_KINDS`): ``lognormal`` (n, sigma, seed, mu),
    ``pareto`` / ``lookalike`` (n, gini, seed, tail_index, median: :func:`pareto_mixture_incomes`),
    ``two_point`` (n, gini, seed, iq, mean: :func:`two_point_incomes`, with its public bounds),
    ``example`` (name, negative, columns: :func:`load_example`), ``shared`` (name, negative,
    columns: :func:`load_shared`; DPInputError when the file is not on this machine) and ``file``
    (path, column, negative: :func:`load_income_file`, marked confidential). ``seed`` draws the
    data only (the pages draw privacy noise from another seed). A recipe is plain data, so a
    generated script can hold it as a literal and rebuild the very same data.
    """
    spec = check_recipe(dict(DEFAULT_RECIPE) if recipe is None else recipe)
    kind = spec["kind"]
    if kind == "lognormal":
        n, sigma = check_int(spec["n"], "n", minimum=1), float(spec["sigma"])
        values = lognormal_incomes(n, mu=spec["mu"], sigma=sigma, rng=check_int(spec["seed"], "seed", minimum=0))
        return IncomeData(values=values, name=f"Synthetic log-normal (n={n:,}, sigma={sigma:g})", source="synthetic")
    if kind in ("pareto", "lookalike"):
        n, gini = check_int(spec["n"], "n", minimum=1), float(spec["gini"])
        tail, median = float(spec["tail_index"]), float(spec["median"])
        values = pareto_mixture_incomes(n, gini=gini, tail_index=tail, median=median,
                                        rng=check_int(spec["seed"], "seed", minimum=0))
        return IncomeData(values=values, source="synthetic",
                          name=f"Synthetic Pareto-tailed (n={n:,}, population Gini {gini:.2f})",
                          notes=(f"log-normal body, top 10% Pareto with tail index {tail:g}, median "
                                 f"{median:,.0f}; the population Gini is {gini:.3f}, a sample's differs a little",))
    if kind == "two_point":
        n = check_int(spec["n"], "n", minimum=2)
        iq = None if spec["iq"] is None else float(spec["iq"])
        data = two_point_incomes(n, float(spec["gini"]), iq, mean=float(spec["mean"]),
                                 rng=check_int(spec["seed"], "seed", minimum=0))
        return IncomeData(values=data.values, source="synthetic", bounds=(data.lower, data.upper),
                          name=f"Two-point data (n={n:,}, Gini {data.gini:.3f}, IQ {data.iq:.3g})",
                          notes=(f"{data.n_low:,} records at {data.low_value:,.0f} and {n - data.n_low:,} at "
                                 f"{data.high_value:,.0f}; public bounds L = {data.lower:,.0f}, U = {data.upper:,.0f}, "
                                 f"IQ = (U - L) / mean = {data.iq:.4g}",))
    if kind == "example":
        return load_example(str(spec["name"]), negative=spec["negative"], columns=spec["columns"])
    if kind == "shared":
        out = load_shared(str(spec["name"]), negative=spec["negative"], columns=spec["columns"])
        if out is None:
            raise DPInputError(f"the real file {SHARED_DATASETS[spec['name']].file_name} is not on this machine "
                               "(it lives in ../shared/data next to the repository)")
        return out
    # kind == "file": a user's file, read from a path (the confidential data itself)
    return load_income_file(spec["path"], column=spec["column"], negative=spec["negative"])


def recipe_from_key(key: Sequence[Any] | None) -> dict[str, Any]:
    """The recipe of a sidebar dataset key, e.g. ("lognormal", n, sigma, data_seed) ->
    {"kind": "lognormal", "n": n, "sigma": sigma, "seed": data_seed}. Keys: ("lognormal", n, sigma,
    seed), ("pareto", n, gini, tail_index, seed), ("lookalike", n, gini, median, seed),
    ("two_point", n, gini, iq, seed), ("example", name), ("shared", name, negative) and
    ("upload", sha256, file_name, column, negative) (-> a "file" recipe reading file_name)."""
    if not key:
        return dict(DEFAULT_RECIPE)
    if isinstance(key, (str, bytes)):
        raise TypeError(f"a dataset key is a tuple such as ('lognormal', 10000, 0.9, 2026), got {key!r}")
    kind, *rest = tuple(key)
    shapes = {"lognormal": ("n", "sigma", "seed"), "pareto": ("n", "gini", "tail_index", "seed"),
              "lookalike": ("n", "gini", "median", "seed"), "two_point": ("n", "gini", "iq", "seed"),
              "example": ("name",), "shared": ("name", "negative"),
              "upload": ("sha256", "path", "column", "negative")}
    if kind not in shapes or len(rest) != len(shapes[kind]):
        raise DPInputError(f"this data source ({kind!r}) has no recipe")
    fields = dict(zip(shapes[kind], rest, strict=True))
    if kind == "upload":
        fields.pop("sha256")
        kind = "file"
    recipe = {"kind": kind, **fields}
    check_recipe(recipe)
    return recipe


def describe_recipe(recipe: dict[str, Any] | None) -> str:
    """One line saying what a recipe builds (for captions and script comments)."""
    spec = check_recipe(dict(DEFAULT_RECIPE) if recipe is None else recipe)
    kind = spec["kind"]
    if kind == "lognormal":
        return f"synthetic log-normal incomes, n = {int(spec['n']):,}, sigma = {spec['sigma']:g}, data seed {spec['seed']}"
    if kind in ("pareto", "lookalike"):
        what = "synthetic look-alike" if kind == "lookalike" else "synthetic Pareto-tailed incomes"
        return (f"{what}, n = {int(spec['n']):,}, population Gini {spec['gini']:g}, median "
                f"{spec['median']:,.0f}, tail index {spec['tail_index']:g}, data seed {spec['seed']}")
    if kind == "two_point":
        iq = "minimum" if spec["iq"] is None else f"{spec['iq']:g}"
        return f"two-point data (Gini paper, Prop. 5.1), n = {int(spec['n']):,}, Gini {spec['gini']:g}, IQ {iq}"
    if kind == "example":
        return f"bundled real example {spec['name']!r} ({EXAMPLES[spec['name']][2]})" if spec["name"] in EXAMPLES \
            else f"bundled example {spec['name']!r}"
    if kind == "shared":
        return f"real survey file {spec['name']!r}, negative incomes: {spec['negative']}"
    return f"your file {spec['path']!r}, column {spec['column']!r}, negative incomes: {spec['negative']}"
