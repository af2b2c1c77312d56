"""Parquet files and Excel (.xlsx) workbooks, their limits checked before anything is unpacked (a workbook is parsed
in a child process with CPU and memory limits)."""

from __future__ import annotations

import io
import math
import os
import zlib
from typing import TYPE_CHECKING, Any

from ...lazy import LazyModule
from ...validation import DPInputError
from .source import DEFAULT_MAX_ROWS, format_bytes, format_limit, shown

if TYPE_CHECKING:
    import pandas as pd
else:
    pd = LazyModule("pandas")  # imported when a file is first read (cold start: see dpcore.lazy)

#: Largest first sheet of an .xlsx workbook, in bytes of sheet XML once unzipped: it bounds openpyxl's parse
#: (its speed, and the workbook bomb it stops: docs/data.md, "Uploads that cannot freeze a class"); a
#: 1,048,576-row sheet (Excel's own maximum) of one or two numeric columns is ~60-90 MB.
MAX_SHEET_XML_BYTES = 100_000_000
#: Largest number of cells a workbook's first sheet or a Parquet file may hold (rows x columns,
#: from the sheet's declared dimension or the Parquet metadata, checked before parsing). Ten
#: million cells of Python objects are ~1 GB in pandas' object columns.
MAX_TABLE_CELLS = 10_000_000
#: CPU seconds and address space (bytes) of the subprocess that parses a workbook, which also gets
#: 3 x WORKBOOK_SECONDS of wall-clock time. The parse runs in its own process so that it neither
#: holds the app process's GIL (every other session of a Streamlit process waits while pure-Python
#: openpyxl runs) nor its memory. CPU time, not wall-clock time, is the limit of work: a loaded machine
#: stretches the wall-clock time of the same parse (docs/data.md).
WORKBOOK_SECONDS = 60
WORKBOOK_MEMORY_BYTES = 2 * 1024**3


def parse_parquet(data: bytes, label: str, max_bytes: int, max_rows: int) -> tuple[pd.DataFrame, list[str]]:
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
            f"{label} has only nested columns ({', '.join(shown(n) for n in nested[:5])}: "
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
            f"{label} unpacks to {format_bytes(unpacked)}, more than 8 x the "
            f"{format_limit(max_bytes)} limit; use a smaller extract"
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
            f"left out {len(nested)} nested column(s) ({', '.join(shown(n) for n in nested[:5])}): "
            "structs, lists and maps cannot hold incomes"
        )
    return frame, notes


XLS_MAGIC = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"  # OLE2: Excel 97-2003 .xls (and old .doc)

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
def parse_excel(  # noqa: C901
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
            f"{label} unpacks to {format_bytes(unpacked)}, more than 8 x the "
            f"{format_limit(max_bytes)} limit; save the sheet as CSV (UTF-8) and upload a "
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
                    f"{label}: its first sheet unpacks to {format_bytes(size)} of XML, more than the "
                    f"{format_limit(max_sheet_xml)} a workbook may hold here (reading it would stall the "
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
    except Exception:  # the child died before writing its answer
        # out of address space inside C code (a failed allocation aborts rather than raising), or killed
        last = (child.stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit code {child.returncode}"])[-1]
        status = "memory" if ("MemoryError" in last or "alloc" in last or child.returncode < 0) else "error"
        payload = last[:160]
    if status == "memory":
        raise DPInputError(
            f"{label}: reading this workbook needed more than {format_bytes(memory)} of memory "
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
