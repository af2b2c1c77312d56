"""Odd and malformed input files through every engine: the same outcome everywhere (the same error class
and message text, or the same aggregate tables), and every message one short line (a 2 MB header or a
3 MB cell is never echoed whole)."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dpcore.engines import EngineSpec, open_engine, parse_source
from dpcore.plan import StatisticSpec
from dpcore.validation import DPInputError

# the relative-risk statistics Engine.outcomes counts for
GROUP_A_VS_B = StatisticSpec(1, "relative_risk", 1.0, group="group", exposed="a", reference="b", outcome="employed")

SPEC = EngineSpec("earnings", ("state", "group"), outcome_columns=("employed",))
EDGES = (0.0, 10_000.0, 50_000.0, 1_000_000.0)
MAX_MESSAGE = 400

STATES = ["CO", "TX", "CO", None, "TX", "VA", "VA", "CO"]
GROUPS = ["a", "b", "a", "b", "a", "b", "a", "b"]
BASE = pd.DataFrame(
    {
        "earnings": ["12000.5", "56000", "", "7000", "250000", "31000.25", "NaN", "0"],
        "state": pd.Series(STATES, dtype=object),
        "group": GROUPS,
        "employed": pd.Series(["1", "0", "1", "true", "no", "1", "0", None], dtype=object),
        "extra": ["x"] * 8,
    }
)


def _csv_text(frame: pd.DataFrame, sep: str = ",", line_end: str = "\n") -> str:
    lines = [sep.join(frame.columns)]
    for row in frame.itertuples(index=False):
        lines.append(sep.join("" if v is None or v is np.nan else str(v) for v in row))
    return line_end.join(lines) + line_end


def _with(**columns) -> pd.DataFrame:
    frame = BASE.copy()
    for name, values in columns.items():
        frame[name] = values
    return frame


def _typed(**arrays) -> pa.Table:
    """The base rows as a typed Parquet table (numbers as numbers), with some columns replaced."""
    cols = {
        "earnings": pa.array([12000.5, 56000.0, None, 7000.0, 250000.0, 31000.25, float("nan"), 0.0]),
        "state": pa.array(STATES),
        "group": pa.array(GROUPS),
        "employed": pa.array([1, 0, 1, 1, 0, 1, 0, None], pa.int64()),
        "extra": pa.array(["x"] * 8),
    }
    cols.update(arrays)
    return pa.table(cols)


HUGE_CELL = "9" * 10 + "x" * 3_000_000
LONG_NAMES = [f"{'n' * 300}{i}" for i in range(30)]

# name -> (writer of the file into a directory, returning its path; the expected outcome: "tables", or a
# fragment of the one message every engine gives)
CASES = {
    "plain csv": (lambda d: _write(d, "plain.csv", _csv_text(BASE)), "tables"),
    "BOM": (lambda d: _write(d, "bom.csv", "\ufeff" + _csv_text(BASE)), "tables"),
    "CRLF": (lambda d: _write(d, "crlf.csv", _csv_text(BASE, line_end="\r\n")), "tables"),
    "semicolons": (lambda d: _write(d, "semi.csv", _csv_text(BASE, sep=";")), "tables"),
    "tabs (.tsv)": (lambda d: _write(d, "tabs.tsv", _csv_text(BASE, sep="\t")), "tables"),
    "odd numbers": (
        lambda d: _write(
            d,
            "odd.csv",
            _csv_text(_with(earnings=[" 12000.5 ", "5.6e4", "inf", "-inf", "+250000", "31000.25", "nan", "0"])),
        ),
        "tables",
    ),
    "header only": (lambda d: _write(d, "header.csv", "earnings,state,group,employed\n"), "tables"),
    "all-NaN income": (lambda d: _write(d, "allnan.csv", _csv_text(_with(earnings=["NaN", ""] * 4))), "tables"),
    "a row with an extra field": (
        lambda d: _write(d, "extra.csv", _csv_text(BASE) + "1,234,CO,a,1,x\n"),
        "the CSV file 'extra.csv' has a row whose fields do not match its header's 5 columns",
    ),
    "a short row": (
        lambda d: _write(d, "short.csv", _csv_text(BASE) + "100\n"),
        "the CSV file 'short.csv' has a row whose fields do not match its header's 5 columns",
    ),
    "unclosed quote": (
        lambda d: _write(d, "quote.csv", _csv_text(BASE) + '5,"CO,a,1,x\n6,TX,b,0,x\n'),
        "the CSV file 'quote.csv' has a row whose fields do not match its header's 5 columns",
    ),
    "quoted delimiter and newline": (
        lambda d: _write(
            d, "quoted.csv", _csv_text(BASE).replace("\n56000,TX,", '\n56000,"TX",').replace(",x\n", ',"x,\ny"\n', 1)
        ),
        "tables",
    ),
    "a row over 8 MiB": (
        lambda d: _write(d, "longrow.csv", _csv_text(BASE) + "1,CO,a,1," + "y" * (9 << 20) + "\n"),
        "the CSV file 'longrow.csv' has a row longer than the 4,194,304 bytes read in one piece",
    ),
    "empty file": (lambda d: _write(d, "empty.csv", ""), "the CSV file 'empty.csv' is empty: it has no header"),
    "text in income": (
        lambda d: _write(d, "text.csv", _csv_text(_with(earnings=["12", "zz top", "abc", "1", "2", "3", "4", "5"]))),
        "the income column 'earnings' is not numeric: found 'abc'",
    ),
    "quoted thousands separator": (
        lambda d: _write(
            d, "thousands.csv", _csv_text(_with(earnings=['"1,234.50"', "2", "3", "4", "5", "6", "7", "8"]))
        ),
        "tables",
    ),  # read as 1234.50, as the app reads it (its number rule, tests/test_side_door_number_formats.py)
    "true/false text income": (
        lambda d: _write(d, "booltext.csv", _csv_text(_with(earnings=["true", "false"] * 4))),
        "the income column 'earnings' is not numeric: found 'false'",
    ),
    "huge cell": (
        lambda d: _write(d, "hugecell.csv", _csv_text(_with(earnings=[HUGE_CELL, "2", "3", "4", "5", "6", "7", "8"]))),
        "the income column 'earnings' is not numeric: found '9999999999xxxxx",
    ),
    "huge header": (
        lambda d: _write(
            d,
            "hugeheader.csv",
            ",".join(["earnings", "state", "group", "employed"] + ["h" * 1000] * 2000) + "\n1,CO,a,1\n",
        ),
        "has a header line longer than 1,048,576 bytes",
    ),
    "no line break": (
        lambda d: _write(d, "oneline.csv", "earnings," + "z" * 2_000_000),
        "has a header line longer than 1,048,576 bytes",
    ),
    "missing column, long names": (
        lambda d: _write(d, "names.csv", ",".join(LONG_NAMES) + "\n" + ",".join("1" * 30) + "\n"),
        "column 'earnings' is not in the data (nor 'state', 'group', 'employed')",
    ),
    "income named twice": (
        lambda d: _write(d, "twice.csv", "earnings,state,group,employed,earnings\n1,CO,a,1,2\n"),
        "the column 'earnings' appears 2 times in the header of the CSV file 'twice.csv'",
    ),
    "typed parquet": (lambda d: _parquet(d, "typed.parquet", _typed()), "tables"),
    "text income parquet": (
        lambda d: _parquet(
            d,
            "textincome.parquet",
            _typed(earnings=pa.array(["12000.5", "56000", None, "7000", "250000", "31000.25", "NaN", "0"])),
        ),
        "tables",
    ),
    "boolean income parquet": (
        lambda d: _parquet(d, "boolincome.parquet", _typed(earnings=pa.array([True, False] * 4))),
        "the income column 'earnings' holds true/false values, not amounts",
    ),
    "boolean cells and outcome parquet": (
        lambda d: _parquet(
            d,
            "boolby.parquet",
            _typed(
                state=pa.array([True, False, None, True, False, True, True, False]),
                employed=pa.array([True, False, True, True, False, True, False, None]),
            ),
        ),
        "tables",
    ),
    "struct by parquet": (
        lambda d: _parquet(d, "structby.parquet", _typed(state=pa.array([{"code": "CO", "n": 1}] * 8))),
        "the column 'state' holds nested values (a struct)",
    ),
    "list by parquet": (
        lambda d: _parquet(d, "listby.parquet", _typed(group=pa.array([["a", "b"]] * 8))),
        "the column 'group' holds nested values (a list)",
    ),
    "map outcome parquet": (
        lambda d: _parquet(
            d, "mapout.parquet", _typed(employed=pa.array([[("k", 1)]] * 8, pa.map_(pa.string(), pa.int64())))
        ),
        "the column 'employed' holds nested values (a map)",
    ),
    "struct income parquet": (
        lambda d: _parquet(d, "structincome.parquet", _typed(earnings=pa.array([{"amount": 1.0}] * 8))),
        "the column 'earnings' holds nested values (a struct)",
    ),
    "date income parquet": (
        lambda d: _parquet(
            d, "dateincome.parquet", _typed(earnings=pa.array([18262] * 8, pa.int32()).cast(pa.date32()))
        ),
        "the income column 'earnings' holds date/time values, not amounts",
    ),
    "decimal income parquet": (
        lambda d: _parquet(
            d,
            "decimal.parquet",
            _typed(earnings=pa.array([12000, 56000, None, 7000, 250000, 31000, 5, 0], pa.decimal128(12, 2))),
        ),
        "tables",
    ),
}


def _latin1(directory) -> str:
    path = os.path.join(directory, "latin1.csv")
    with open(path, "wb") as f:
        f.write(_csv_text(BASE).encode("utf-8") + "1,Z\u00fcrich,a,1,x\n".encode("latin-1"))
    return path


def _gzip(directory) -> str:
    import gzip

    path = os.path.join(directory, "plain.csv.gz")
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(_csv_text(BASE))
    return path


def _duckdb_query(select: str):
    """A DuckDB database file with the base rows (typed) and a query over them, as a --data source."""

    def write(directory) -> str:
        import duckdb

        path = os.path.join(directory, "source.duckdb")
        if not os.path.exists(path):
            con = duckdb.connect(path)
            con.execute(
                "CREATE TABLE t AS SELECT * FROM read_parquet(?)", [_parquet(directory, "for_duckdb.parquet", _typed())]
            )
            con.close()
        return f"duckdb:///{path}?query={select}"

    return write


CASES["latin-1 cell"] = (_latin1, "the CSV file 'latin1.csv' is not UTF-8 text")
CASES["duckdb query"] = (_duckdb_query("SELECT * FROM t"), "tables")
CASES["duckdb query, boolean income"] = (
    _duckdb_query("SELECT earnings > 20000 AS earnings, state, \"group\", employed FROM t"),
    "the income column 'earnings' holds true/false values, not amounts",
)
CASES["duckdb query, struct cells"] = (
    _duckdb_query("SELECT earnings, {'s': state} AS state, \"group\", employed FROM t"),
    "the column 'state' holds nested values (a struct)",
)


def _zstd(directory) -> str:
    path = os.path.join(directory, "plain.csv.zst")
    with pa.CompressedOutputStream(path, "zstd") as f:
        f.write(_csv_text(BASE).encode("utf-8"))
    return path


CASES["gzip csv"] = (_gzip, "tables")
CASES["zstd csv"] = (_zstd, "tables")


def _nul_filled(directory, name: str, nul_bytes: int, after: str = "") -> str:
    """The base rows, then ``nul_bytes`` NUL bytes (a hole: no disk space), then ``after``: the audit's file had
    2 GB of them after one row. DuckDB's reader dropped a last line longer than its buffer without a word and
    released the rows before it; the pandas engine refused it."""
    path = os.path.join(directory, name)
    with open(path, "wb") as f:
        f.write(_csv_text(BASE).encode("utf-8"))
        f.seek(nul_bytes, os.SEEK_CUR)
        f.write(after.encode("utf-8"))
        f.truncate()
    return path


def _gzip_long_last_line(directory) -> str:
    import gzip

    path = os.path.join(directory, "longlast.csv.gz")
    with gzip.open(path, "wb", compresslevel=1) as f:
        f.write(_csv_text(BASE).encode("utf-8") + b"\0" * (9 << 20))
    return path


LONG_ROW = "has a row longer than the 4,194,304 bytes read in one piece"
CASES["NUL bytes after the last row"] = (lambda d: _nul_filled(d, "nul.csv", 300 << 20), f"'nul.csv' {LONG_ROW}")
CASES["NUL bytes, then rows"] = (
    lambda d: _nul_filled(d, "nulrows.csv", 200 << 20, "\n1,CO,a,1,x\n2,TX,b,0,x\n"),
    f"'nulrows.csv' {LONG_ROW}",
)
CASES["a long last line, gzip"] = (_gzip_long_last_line, f"'longlast.csv.gz' {LONG_ROW}")


def _write(directory, name: str, text: str) -> str:
    path = os.path.join(directory, name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    return path


def _parquet(directory, name: str, table: pa.Table) -> str:
    path = os.path.join(directory, name)
    pq.write_table(table, path)
    return path


def write_input_files(directory: str, names=None) -> dict[str, str]:
    return {name: writer(directory) for name, (writer, _) in CASES.items() if names is None or name in names}


@pytest.fixture(scope="module")
def input_files(tmp_path_factory):
    return write_input_files(str(tmp_path_factory.mktemp("odd_inputs")))


def outcome(engine: str, path: str) -> tuple[str, object]:
    """("tables", the four aggregates) or ("DPInputError", message); any other exception is reported as
    such (a crash is never an agreement)."""
    try:
        with open_engine(engine, parse_source(path), SPEC) as eng:
            histogram = eng.histogram(["state"], EDGES)  # cells in the canonical order; bins in engine order
            histogram = histogram.sort_values(["state", "bin"], na_position="first", kind="mergesort")
            return "tables", {
                "histogram": histogram.reset_index(drop=True),
                "sums": eng.sums(["state"], 0, 100_000),
                "gini": eng.gini_inputs([], 0, 1e6, 0.1),
                "outcomes": eng.outcomes(["state"], GROUP_A_VS_B),
            }
    except DPInputError as exc:
        return type(exc).__name__, str(exc)
    except Exception as exc:  # reported, and the test fails
        return f"crash {type(exc).__name__}", str(exc)[:300]


def assert_same_outcome(name: str, expected: str, results: dict[str, tuple[str, object]]):
    engines = list(results)
    kinds = {e: results[e][0] for e in engines}
    if expected == "tables":
        assert set(kinds.values()) == {"tables"}, f"{name}: {results}"
        ref = results[engines[0]][1]
        for e in engines[1:]:
            for table in ref:
                pd.testing.assert_frame_equal(
                    ref[table], results[e][1][table], check_exact=True, obj=f"{name}: {table} ({engines[0]} vs {e})"
                )
    else:
        messages = {e: results[e][1] for e in engines}
        assert set(kinds.values()) == {"DPInputError"}, f"{name}: {messages}"
        assert len(set(messages.values())) == 1, f"{name}: the engines disagree: {messages}"
        message = messages[engines[0]]
        assert expected in message, f"{name}: {message}"
        assert len(message) <= MAX_MESSAGE and "\n" not in message, f"{name}: {len(message)} characters"


@pytest.mark.parametrize("name", list(CASES))
def test_pandas_and_duckdb_agree(input_files, name):
    expected = CASES[name][1]
    assert_same_outcome(name, expected, {e: outcome(e, input_files[name]) for e in ("pandas", "duckdb")})


def test_same_cells_as_the_plain_file(input_files):
    """The layout variants (BOM, CRLF, separators, typed Parquet) are the same data: the same tables."""
    plain = outcome("duckdb", input_files["plain csv"])[1]
    # the two missing incomes stay in n (missing_income = "lower")
    assert list(plain["sums"]["state"]) == [None, "CO", "TX", "VA"] and list(plain["sums"]["n"]) == [1, 3, 2, 2]
    for name in (
        "BOM",
        "CRLF",
        "semicolons",
        "tabs (.tsv)",
        "gzip csv",
        "zstd csv",
        "quoted delimiter and newline",
        "typed parquet",
        "text income parquet",
        "duckdb query",
    ):
        got = outcome("pandas", input_files[name])[1]
        for table in ("histogram", "sums", "gini", "outcomes"):
            pd.testing.assert_frame_equal(plain[table], got[table], obj=f"{name}: {table}")


def test_csv_files_must_each_have_the_needed_columns(tmp_path):
    (tmp_path / "parts").mkdir()
    _write(tmp_path / "parts", "a.csv", _csv_text(BASE))
    _write(tmp_path / "parts", "b.csv", _csv_text(BASE.drop(columns=["employed"])))
    results = {e: outcome(e, str(tmp_path / "parts" / "*.csv")) for e in ("pandas", "duckdb")}
    assert_same_outcome("two CSV files, one without a column", "column 'employed' is not in the data", results)


# ---------------------------------------------------------------------------------------------
# Bounded memory: the pandas engine reads chunks of the needed columns, never the whole file as text
# ---------------------------------------------------------------------------------------------


def _sparse_csv(path: str, rows: int) -> str:
    rng = np.random.default_rng(3)
    earnings = np.round(rng.lognormal(10.5, 0.9, rows), 2)
    states = rng.choice(["CO", "TX", "VA", "WY"], rows)
    groups = rng.choice(["a", "b"], rows)
    employed = rng.integers(0, 2, rows)
    with open(path, "w") as f:
        f.write("earnings,state,group,employed," + ",".join(f"f{i}" for i in range(12)) + "\n")
        f.writelines(
            f"{e},{s},{g},{o},,,,,,,,,,,,\n" for e, s, g, o in zip(earnings, states, groups, employed, strict=True)
        )
    return path


def _traced_peak(path: str) -> int:
    """Peak bytes allocated (tracemalloc: Python objects and numpy buffers) while the pandas engine
    computes a histogram, clipped sums and outcome counts by cell."""
    import tracemalloc

    tracemalloc.start()
    try:
        with open_engine("pandas", parse_source(path), SPEC) as eng:
            eng.histogram(["state"], EDGES)
            eng.sums(["state"], 0, 100_000)
            eng.outcomes(["state"], GROUP_A_VS_B)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_pandas_engine_memory_does_not_grow_with_the_file(tmp_path, monkeypatch):
    """Four times the rows, about the same peak: the rows are read in blocks (here of 32 KB) and the
    histogram, sums and outcome counts add per-chunk results. Read whole as text, the peak grew with the
    file (~200 bytes per row here; a 2 GB sparse CSV peaked at 14.5 GB RSS)."""
    from dpcore.engines import pandas_engine

    monkeypatch.setattr(pandas_engine, "CHUNK_ROWS", 1_000, raising=False)  # rows read back per chunk
    monkeypatch.setattr(pandas_engine, "MAX_CSV_ROW_BYTES", 32 * 1024, raising=False)  # CSV bytes parsed per block
    small = _traced_peak(_sparse_csv(str(tmp_path / "small.csv"), 5_000))
    large = _traced_peak(_sparse_csv(str(tmp_path / "large.csv"), 20_000))
    assert large < 1.3 * small + 500_000, (small, large)
    assert large < 3_000_000, large  # a chunk of text, not 20,000 rows of it


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_outcomes_refuse_a_statistic_without_its_groups(tmp_path, engine):
    """Engine.outcomes reads the groups from the statistic: one built by hand without them is refused with a
    DPInputError naming what is missing, before any row is read (not a KeyError, not empty counts)."""
    path = _sparse_csv(str(tmp_path / "rows.csv"), 50)
    no_groups = StatisticSpec(1, "relative_risk", 1.0, outcome="employed")
    with open_engine(engine, parse_source(path), SPEC) as eng:
        with pytest.raises(DPInputError, match="needs a group column and its exposed and reference labels"):
            eng.outcomes(["state"], no_groups)
