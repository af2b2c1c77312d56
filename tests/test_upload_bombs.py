"""Uploads that cannot freeze a class: workbook and Parquet bombs, nested Parquet columns, one byte limit.

The fault-injection run's workbook (1.5 MB zipped, 373 MB of sheet XML, under the 8 x 50 MiB unpacked
limit) took 206 s and 1.6 GB inside the app process, and every other session of that process waited
for the GIL (slider p50 6.2 s). The bombs are built here in memory (benchmarks/upload_bombs.py), never
committed. Load numbers with a bomb uploaded during a 30-user class: docs/data.md.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from pathlib import Path

import pytest
import tomllib

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "deploy"))

from upload_bombs import nested_parquet, wide_csv, xlsx_bomb

from dpcore.data import io as data
from dpcore.data import load_income_file, read_table
from dpcore.data.io import binary as io_binary
from dpcore.data.io import csv_shape as io_csv_shape
from dpcore.validation import DPInputError


def _children() -> set[int]:
    path = Path(f"/proc/{os.getpid()}/task")
    found: set[int] = set()
    for task in path.iterdir():
        try:
            found |= {int(p) for p in (task / "children").read_text().split()}
        except OSError:
            pass
    return found


def test_workbook_bomb_is_refused_from_its_zip_directory_before_parsing():
    bomb = xlsx_bomb(373.0, declare_dimension=False)  # the fault-injection run's file, ~1 MB
    assert len(bomb) < 2_000_000
    with pytest.raises(
        DPInputError,
        match=r"first sheet unpacks to 373\.0 MB of XML, more than the 100 MB "
        r"\(100,000,000 bytes\).*save the sheet as CSV",
    ):
        read_table(bomb, file_name="bomb.xlsx")


def test_workbook_declaring_too_many_cells_is_refused_before_parsing(monkeypatch):
    monkeypatch.setattr(io_binary, "MAX_TABLE_CELLS", 100_000)
    bomb = xlsx_bomb(5.0)  # 87,719 data rows x 2 columns, declared in <dimension>
    with pytest.raises(
        DPInputError,
        match=r"first sheet has 87,720 rows x 2 columns, more than the "
        r"100,000-cell limit",
    ):
        read_table(bomb, file_name="wide.xlsx")
    with pytest.raises(DPInputError, match=r"87,719 data rows, more than the 1,000-row limit"):
        read_table(bomb, file_name="long.xlsx", max_rows=1000)


def test_workbook_that_hides_its_size_is_parsed_in_a_child_process_and_stopped_at_the_cpu_limit(monkeypatch):
    # no <dimension> and under the sheet-XML cap: only the child's own limits stop it. While it runs,
    # the parse is in a child process (the app process's thread only waits on a pipe, so the GIL is
    # free for the other sessions); at the CPU-time limit the child is stopped and the user is told why.
    monkeypatch.setattr(io_binary, "WORKBOOK_SECONDS", 2)
    bomb = xlsx_bomb(40.0, declare_dimension=False)
    before = _children()
    outcome: list[BaseException | None] = []
    seen: set[int] = set()

    def parse() -> None:
        try:
            read_table(bomb, file_name="slow.xlsx")
            outcome.append(None)
        except BaseException as exc:  # handed to the main thread
            outcome.append(exc)

    worker = threading.Thread(target=parse)
    worker.start()
    while worker.is_alive():
        seen |= _children() - before
        worker.join(0.05)
    assert isinstance(outcome[0], DPInputError), outcome
    assert re.search(
        r"slow\.xlsx: reading this workbook took more than 2 s of CPU time and was stopped", str(outcome[0])
    )
    assert seen, "the workbook was parsed in the app process itself"
    assert not (seen & _children()), "the stopped child process is still there"


def test_workbook_child_out_of_memory_is_a_clear_message(monkeypatch):
    monkeypatch.setattr(io_binary, "WORKBOOK_MEMORY_BYTES", 64 * 1024**2)  # too little even to import pandas
    with pytest.raises(DPInputError, match=r"book\.xlsx: reading this workbook needed more than 67\.1 MB of memory"):
        read_table(xlsx_bomb(0.01), file_name="book.xlsx")


def test_small_workbook_still_reads_through_the_child():
    frame, notes = read_table(xlsx_bomb(0.01), file_name="book.xlsx")
    assert list(frame.columns) == ["income", "age"] and len(frame) == 175
    assert frame["income"].eq(41000).all()
    assert notes[0] == "read the Excel sheet 'Sheet1'"


def test_parquet_nested_columns_are_left_out_with_a_note():
    loaded = load_income_file(nested_parquet(), name="people.parquet")
    assert loaded.column == "income" and loaded.n == 50
    assert list(loaded.frame.columns) == ["income"]
    assert any("left out 2 nested column(s) ('person', 'tags')" in note for note in loaded.notes)


def test_parquet_with_only_nested_columns_is_refused_clearly():
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(pa.table({"person": pa.array([{"income": 1.0}, {"income": 2.0}])}), out)
    with pytest.raises(DPInputError, match=r"only nested columns \('person'.*Flatten the table"):
        read_table(out.getvalue(), file_name="nested.parquet")


def test_parquet_bomb_is_refused_from_its_metadata():
    # 2,000,000 rows x 8 one-byte columns of zeros: a few KB of Parquet, 16 million cells once read
    import io

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    zeros = pa.array(np.zeros(2_000_000, dtype=np.int8))
    out = io.BytesIO()
    pq.write_table(pa.table({f"c{i}": zeros for i in range(8)}), out, compression="zstd")
    assert len(out.getvalue()) < 200_000
    with pytest.raises(DPInputError, match=r"2,000,000 rows x 8 columns, more than the 10,000,000-cell limit"):
        read_table(out.getvalue(), file_name="cells.parquet")
    with pytest.raises(DPInputError, match=r"2,000,000 data rows, more than the 1,000-row limit"):
        read_table(out.getvalue(), file_name="rows.parquet", max_rows=1000)


def test_one_upload_limit_in_bytes_everywhere():
    # Streamlit's uploader turns maxUploadSize (MB) into bytes with 10**6 (its frontend, except in a
    # browser on Windows), its server with 1024**2: dpcore enforces the smaller and names it exactly
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    assert config["server"]["maxUploadSize"] == data.MAX_UPLOAD_MB
    assert data.DEFAULT_MAX_BYTES == data.MAX_UPLOAD_MB * 1_000_000 == 50_000_000
    head, tail = b"income,note\n1,", b"\n2,b\n"  # long note cells, one per line, fill the file to the byte
    lines = b"a" * 999_999 + b"\n1,"
    filler = lines * ((data.DEFAULT_MAX_BYTES - len(head) - len(tail)) // len(lines))
    at_limit = head + filler + b"a" * (data.DEFAULT_MAX_BYTES - len(head) - len(tail) - len(filler)) + tail
    assert len(at_limit) == data.DEFAULT_MAX_BYTES
    frame, _ = read_table(at_limit)  # exactly the limit: accepted
    assert frame["income"].tolist() == [1] * (len(filler) // len(lines) + 1) + [2]
    with pytest.raises(DPInputError, match=r"is 50\.0 MB, larger than the 50 MB \(50,000,000 bytes\) limit"):
        read_table(at_limit + b"1\n")
    # nginx (run.sh serve) lets the largest accepted upload and its multipart framing through
    import serve as serve_launcher

    args, _ = serve_launcher.parse_args([])
    conf = serve_launcher.render_nginx_config(
        runtime=Path("/tmp/x"), backends=["127.0.0.1:1"], listen=["listen 1;"], max_body_mb=args.max_upload_mb
    )
    body_mib = int(re.search(r"client_max_body_size (\d+)m;", conf).group(1))
    assert body_mib * 1024**2 >= data.DEFAULT_MAX_BYTES + 1024**2


# ---------------------------------------------------------------------------------------------
# CSV shapes: the command line's limits, applied before pandas sees an upload
# ---------------------------------------------------------------------------------------------
@pytest.fixture()
def no_pandas_parse(monkeypatch):
    """pandas' CSV reader made to fail the test: a refusal must come before it."""
    import pandas

    def read_csv(*args, **kwargs):
        raise AssertionError("pandas parsed a file the limits refuse")

    monkeypatch.setattr(pandas, "read_csv", read_csv)


def test_a_csv_of_ten_million_columns_is_refused_before_pandas_sees_it(no_pandas_parse):
    """The audit's upload: 40 MB, 10,000,000 columns; it held an app process for minutes (1.3 GB) and every other
    session on it dropped. Its header line is refused, as the command line refuses it (1 MiB, 50,000 columns)."""
    bomb = wide_csv(10_000_000)
    assert 39_000_000 < len(bomb) < data.DEFAULT_MAX_BYTES
    with pytest.raises(
        DPInputError,
        match=r"^wide\.csv has a header line longer than 1,048,576 bytes \(at most 50,000 columns are read\): "
        r"is it a CSV file with a header\?$",
    ):
        read_table(bomb, file_name="wide.csv")


def test_csv_limits_are_the_command_lines_and_come_before_pandas(no_pandas_parse, tmp_path):
    from dpcore.engines import csv_layout

    columns = data.MAX_CSV_COLUMNS + 1  # a short header (100 KB) with one column too many
    wide = wide_csv(columns)
    with pytest.raises(DPInputError, match=r"^wide\.csv has 50,001 columns; at most 50,000 are read") as app:
        read_table(wide, file_name="wide.csv")
    (tmp_path / "wide.csv").write_bytes(wide)
    with pytest.raises(DPInputError, match=r"has 50,001 columns; at most 50,000 are read") as cli:
        csv_layout(str(tmp_path / "wide.csv"))
    assert (
        str(app.value).split(" has ", 1)[1].split(" (keep")[0] == str(cli.value).split(" has ", 1)[1].split(" (keep")[0]
    )
    long_row = b"income,note\n1," + b"a" * (data.MAX_CSV_ROW_BYTES + 1) + b"\n2,b\n"
    with pytest.raises(DPInputError, match=r"^long\.csv has a row longer than the 4,194,304 bytes read in one piece$"):
        read_table(long_row, file_name="long.csv")
    quoted = b'"a,b",' + b",".join([b"x"] * data.MAX_CSV_COLUMNS) + b"\n1,2\n"  # a delimiter in quotes: 50,001
    with pytest.raises(DPInputError, match=r"has 50,001 columns"):
        read_table(quoted, file_name="quoted.csv")


def test_a_csv_at_the_column_limit_is_read(monkeypatch):
    monkeypatch.setattr(io_csv_shape, "MAX_CSV_COLUMNS", 300)  # above the width at which the parsed blocks are joined
    frame, _ = read_table(wide_csv(300, rows=3).replace(b"x,x", b"x,y", 1).replace(b"x", b"income", 1))
    assert frame.shape == (3, 300)
    with pytest.raises(DPInputError, match=r"has 301 columns; at most 300 are read"):
        read_table(wide_csv(301))
