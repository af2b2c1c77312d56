"""Hostile uploads that are small on the wire and huge once opened, built in memory (never committed).

    .venv/bin/python benchmarks/upload_bombs.py xlsx OUT.xlsx [--sheet-mb 373] [--no-dimension]
    .venv/bin/python benchmarks/upload_bombs.py parquet-nested OUT.parquet
    .venv/bin/python benchmarks/upload_bombs.py wide-csv OUT.csv [--columns 10000000]

* :func:`xlsx_bomb`: a valid .xlsx workbook whose one sheet is ``sheet_mb`` MB of identical rows of
  XML. The rows repeat byte for byte, so deflate packs ~370 MB into ~1.5 MB (the fault-injection
  run's file: 1.5 MB upload, 373 MB of sheet XML, under the old 8 x 50 MiB unpacked limit; openpyxl
  took 206 s and 1.6 GB for it while every other session of the process waited for the GIL). With
  ``declare_dimension`` the sheet carries an honest ``<dimension ref="A1:B..."/>``, as Excel writes
  it; without, a reader must count the cells itself.
* :func:`nested_parquet`: a Parquet file with a struct and a list column beside a numeric income
  (pandas gives dict / ndarray cells for them, which the column chooser could not hash).
* :func:`wide_csv`: a CSV of millions of columns (40 MB for 10,000,000), refused from its header line before
  pandas sees it (the command line's limits: 1 MiB of header, 50,000 columns, 4 MiB per row).

The tests (tests/test_upload_bombs.py) and the load measurement in docs/data.md use these builders.
"""

from __future__ import annotations

import argparse
import io
import zipfile

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    '</Types>'
)
_ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="xl/workbook.xml"/></Relationships>'
)
_WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
_WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" '
    'Target="worksheets/sheet1.xml"/></Relationships>'
)
#: One data row without cell references (allowed by the format: cells follow each other), so that
#: every row is the same bytes and deflate finds them all.
_ROW = b'<row><c t="n"><v>41000</v></c><c t="n"><v>7</v></c></row>'


def xlsx_bomb(sheet_mb: float = 373.0, *, declare_dimension: bool = True) -> bytes:
    """A workbook of ``sheet_mb`` MB (10**6 bytes) of sheet XML: a header row (income, age) and as
    many identical data rows as fit."""
    rows = max(1, int(sheet_mb * 1_000_000) // len(_ROW))
    head = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
        '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
        + (f'<dimension ref="A1:B{rows + 1}"/>' if declare_dimension else "")
        + '<sheetData><row><c t="inlineStr"><is><t>income</t></is></c>'
        '<c t="inlineStr"><is><t>age</t></is></c></row>'
    ).encode()
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _ROOT_RELS)
        archive.writestr("xl/workbook.xml", _WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", _WORKBOOK_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            sheet.write(head)
            block = _ROW * 20_000
            full, rest = divmod(rows, 20_000)
            for _ in range(full):
                sheet.write(block)
            sheet.write(_ROW * rest)
            sheet.write(b"</sheetData></worksheet>")
    return out.getvalue()


def nested_parquet(rows: int = 50) -> bytes:
    """A Parquet file with ``income`` (float), ``person`` (struct) and ``tags`` (list) columns."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "income": pa.array([1000.0 * (i + 1) for i in range(rows)]),
            "person": pa.array([{"age": 20 + i % 50, "region": f"r{i % 4}"} for i in range(rows)]),
            "tags": pa.array([[i, i + 1] for i in range(rows)]),
        }
    )
    out = io.BytesIO()
    pq.write_table(table, out)
    return out.getvalue()


def wide_csv(columns: int = 10_000_000, rows: int = 1) -> bytes:
    """A CSV of ``columns`` one-letter columns and ``rows`` rows of ones: the audit's file (10,000,000 columns,
    40 MB) held an app process for minutes (1.3 GB) and dropped every other session on it."""
    header = ",".join(["x"] * columns).encode()
    row = ",".join(["1"] * columns).encode()
    return b"\n".join([header, *([row] * rows)]) + b"\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kind", choices=["xlsx", "parquet-nested", "wide-csv"])
    ap.add_argument("out")
    ap.add_argument("--sheet-mb", type=float, default=373.0)
    ap.add_argument("--no-dimension", action="store_true")
    ap.add_argument("--columns", type=int, default=10_000_000, help="wide-csv: the number of columns")
    args = ap.parse_args()
    if args.kind == "wide-csv":
        data = wide_csv(args.columns)
    else:
        data = (
            xlsx_bomb(args.sheet_mb, declare_dimension=not args.no_dimension)
            if args.kind == "xlsx"
            else nested_parquet()
        )
    with open(args.out, "wb") as f:
        f.write(data)
    print(f"{args.out}: {len(data):,} bytes")


if __name__ == "__main__":
    main()
