"""DuckDB engine (the default): reads the source in place, aggregates out of core, never loads it into pandas.

Only the small aggregate tables come back to Python. For the Gini the clipped incomes are streamed
sorted by cell (``ORDER BY cell, income``; DuckDB sorts out of core, spilling to a temp directory under
its ``memory_limit``) in Arrow batches, and each cell's smooth sensitivity is computed as soon as the
cell is complete, so Python holds one cell at a time.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import pyarrow.compute as pc

from ..data.io import MAX_CSV_ROW_BYTES
from ..validation import DPInputError
from . import base
from . import sql as sqlmod
from .base import Engine

if TYPE_CHECKING:
    from ..plan import StatisticSpec

DEFAULT_MEMORY_LIMIT = "1GB"
BATCH_ROWS = 1 << 20
#: the Gini reads all rows into per-cell numpy buffers when they need at most this many bytes (8 per row);
#: beyond it, DuckDB sorts out of core and the cells are streamed one at a time
GINI_BUFFER_BYTES = 1_000_000_000


def _duckdb():
    try:
        import duckdb
    except ImportError:  # pragma: no cover
        raise DPInputError("the duckdb engine needs the 'duckdb' package (pip install duckdb)") from None
    return duckdb


_NUMERIC_TYPES = (
    "TINYINT",
    "SMALLINT",
    "INTEGER",
    "BIGINT",
    "HUGEINT",
    "FLOAT",
    "DOUBLE",
    "UTINYINT",
    "USMALLINT",
    "UINTEGER",
    "UBIGINT",
    "UHUGEINT",
)


def column_kind(duckdb_type: str) -> str:
    """DuckDB's type name in the generic words of :func:`dpcore.engines.column_kind_refusal`."""
    t = str(duckdb_type).upper().strip()
    if t.startswith("STRUCT"):
        return "struct"
    if t.startswith("MAP"):
        return "map"
    if t.startswith("UNION"):
        return "union"
    if t.endswith("]"):
        return "list"
    if t in _NUMERIC_TYPES or t.startswith("DECIMAL"):
        return "number"
    if t == "BOOLEAN":
        return "boolean"
    if t == "VARCHAR" or t.startswith("VARCHAR") or t.startswith("ENUM"):
        return "text"
    if t.startswith(("DATE", "TIME", "INTERVAL")):
        return "date/time"
    if t in ("BLOB", "BIT"):
        return "binary"
    if t == '"NULL"' or t == "NULL":
        return "null"
    return "other"


class DuckDBEngine(Engine):
    name = "duckdb"

    def _start(self) -> None:
        self.d = sqlmod.DUCKDB
        self._memory_limit = self.options.memory_limit or DEFAULT_MEMORY_LIMIT
        self._con: Any = None  # connected at first use (:attr:`con`)
        self._prepared = False
        self._layouts: list = []

    @property
    def con(self) -> Any:
        """The DuckDB connection, opened at first use: after :meth:`release_memory` a release that asks nothing
        more (most: the aggregates are computed once) never opens another (about 17 ms of CPU each, with its
        settings)."""
        if self._con is None:
            self._con = self._connect()
        return self._con

    def _connect(self) -> Any:
        con = _duckdb().connect(":memory:")
        tmp = self.workdir.replace("'", "''")
        con.execute(f"SET temp_directory = '{tmp}/duckdb_tmp'")
        con.execute(f"SET memory_limit = '{self._memory_limit}'")
        con.execute("SET preserve_insertion_order = false")
        return con

    def release_memory(self) -> None:
        """Close the connection that computed the aggregates; a fresh one is opened if something asks for more (the
        source is read again, and checked again, only then). DuckDB keeps the memory of a query's hash tables until its
        database closes: 563 MB -> 231 MB for the 10M-row PSEO-like histogram, measured in one process."""
        if self._con is not None:
            self._con.close()
            self._con = None
        self._prepared = False
        import pyarrow as pa

        pa.default_memory_pool().release_unused()  # what the Arrow conversions freed: 49 MB more, same histogram

    def _sql(self, query: str) -> Any:
        try:
            return self.con.execute(query)
        except _duckdb().Error as exc:
            raise self._read_error(exc) from None

    def _read_error(self, exc: Exception) -> DPInputError:
        """DuckDB's CSV errors as the messages of every engine (they quote the offending line, which can be
        megabytes long); other errors as their first line."""
        text = str(exc)
        if self.source.kind == "csv" and ("CSV Error" in text or "line size" in text.lower()):
            found = re.search(r"^\s*file = (.*)$", text, flags=re.MULTILINE)
            path = found.group(1).strip() if found else (self.source.paths[0] if self.source.paths else "")
            if "Expected Number of Columns" in text or "unterminated quote" in text:
                columns = next((len(lay.columns) for lay in self._layouts if lay.path == path), 0)
                return base.csv_fields_error(path, columns)
            if "Invalid unicode" in text:
                return base.csv_not_utf8_error(path)
            if "line size" in text.lower():
                return base.csv_row_too_long_error(path)
        if self.source.kind == "csv" and "does not support a full read" in text:
            # DuckDB's parallel reader on a line longer than its buffer: the rule of every engine says which
            long_line = next((p for p in self.source.paths if base.csv_line_too_long(p)), None)
            if long_line is not None:
                return base.csv_row_too_long_error(long_line)
        return DPInputError(f"DuckDB could not read the data: {base.first_line(exc)}")

    def _source_relation(self) -> str:
        s = self.source
        d = self.d
        if s.kind == "postgresql":
            with self.progress.step("staging the PostgreSQL query to Parquet"):
                path = base.stage_postgres(s, self.workdir, self.progress)
            return f"SELECT * FROM read_parquet({d.text(path)})"
        if s.kind == "csv":
            # Every column named from our own reading of the header (dpcore.engines.csv_layout), all as text,
            # DuckDB's sniffer off: with 10,000 columns the sniffer and union_by_name took 8.5 s on a 20 MB
            # file, the explicit layout 0.2 s. Columns the plan does not read get placeholder names (so
            # duplicate or empty names elsewhere in the header do not matter); the files are stacked by name.
            needed = self._needed()
            select = ", ".join(d.quote(c) for c in needed)
            parts = []
            self._layouts = self._csv_layouts()
            for layout in self._layouts:
                if not layout.columns:  # a codec this Arrow build lacks: DuckDB's own reading
                    parts.append(
                        f"SELECT {select} FROM read_csv({d.text(layout.path)}, header = true, all_varchar = true)"
                    )
                    continue
                columns = ", ".join(f"{d.text(c)}: 'VARCHAR'" for c in layout.read_names(needed))
                parts.append(
                    f"SELECT {select} FROM read_csv({d.text(layout.path)}, header = true, "
                    "auto_detect = false, "
                    f"delim = {d.text(layout.delimiter)}, quote = '\"', escape = '\"', null_padding = false, "
                    f"strict_mode = true, max_line_size = {2 * MAX_CSV_ROW_BYTES}, columns = {{{columns}}})"
                )
            return " UNION ALL ".join(parts)
        if s.kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            for p in s.paths:  # every file must have every needed column (as in the other engines)
                try:
                    self._missing_columns(pq.read_schema(p).names)
                except (OSError, pa.ArrowException) as exc:
                    raise DPInputError(
                        f"cannot read the Parquet file {base.shown(os.path.basename(p))}: {base.first_line(exc)}"
                    ) from None
            files = "[" + ", ".join(d.text(p) for p in s.paths) + "]"
            return f"SELECT * FROM read_parquet({files}, union_by_name = true)"
        if s.kind == "duckdb":
            self._sql(f"ATTACH {d.text(s.location)} AS dp_source_db (READ_ONLY)")
            self._sql("USE dp_source_db")
            return s.sql_query
        raise DPInputError(f"unknown source kind {s.kind!r}")  # pragma: no cover

    def prepare(self) -> None:
        if self._prepared:
            return
        d, spec = self.d, self.spec
        relation = self._source_relation()
        self._sql(f"CREATE TEMP VIEW dp_src AS {relation}")
        described = self._sql("DESCRIBE SELECT * FROM dp_src").fetchall()
        self._missing_columns([r[0] for r in described])
        kinds = {r[0]: column_kind(r[1]) for r in described}
        self._check_column_kinds(kinds)
        if kinds[spec.income] != "number":
            bad = self._sql(sqlmod.nonnumeric_probe(d, spec.income)).fetchall()
            from .base import csv_delimiter, decide_income_format

            delimiter = csv_delimiter(self.source)
            # the app's number rule (thousands or decimal commas, or refused) when a plain parse fails, and always
            # in a ';' file, where the app reads 1.234 as ambiguous (a thousand?), never as 1.234 silently
            if (bad and bad[0][0] is not None) or delimiter == ";":
                import dataclasses

                shapes = dict(self._sql(sqlmod.income_shapes(d, spec.income)).fetchall())
                fmt = decide_income_format(spec.income, shapes, delimiter)
                if fmt != "plain":
                    self.spec = spec = dataclasses.replace(spec, income_format=fmt)
                    bad = self._sql(sqlmod.nonnumeric_probe(d, spec.income, fmt)).fetchall()
                if bad and bad[0][0] is not None:
                    raise base.income_not_numeric(spec.income, bad[0][0])
        self._sql(f"CREATE TEMP VIEW dp_valid AS {sqlmod.valid_view(d, spec)}")
        if spec.missing_income == "refuse":
            missing = self._sql("SELECT COUNT(*) FROM dp_valid WHERE __x IS NULL").fetchall()[0][0]
            if missing:
                raise base.missing_income_refused(spec.income, int(missing))
        if spec.negative_incomes == "refuse":
            negative = self._sql("SELECT COUNT(*) FROM dp_valid WHERE __x < 0").fetchall()[0][0]
            if negative:
                raise base.negative_income_refused(spec.income, int(negative))
        for i, col in enumerate(spec.outcome_columns):
            bad = self._sql(f"SELECT COUNT(*) FROM dp_valid WHERE __o{i} = -1").fetchall()[0][0]
            if bad:
                raise DPInputError(f"the outcome column {col!r} has {bad} value(s) other than 0/1/true/false/yes/no")
        self._sql(f"CREATE TEMP VIEW dp_base AS {sqlmod.base_view(d, spec)}")
        self._prepared = True

    def has_rows(self) -> bool:
        """Whether the source has a row: DuckDB stops reading at the first (LIMIT 1 on the unbounded rows)."""
        self.prepare()
        return bool(self._sql("SELECT 1 FROM dp_valid LIMIT 1").fetchall())

    def record_fingerprints(self, versions: Any) -> Any:
        """The record fingerprints of the source in each of ``versions`` (:mod:`dpcore.record_fingerprint`) from
        DuckDB's own scan of every column (CSV all as text, named from the shared header layout; Parquet with its
        types), streamed in Arrow batches into the order-independent row sums (on every core for a large source).
        Other sources: the Arrow reader."""
        from ..record_fingerprint import batches_fingerprints
        from .base import csv_layout
        from .fingerprint import CHUNK_ROWS, is_large_source, source_record_fingerprints

        s, d = self.source, self.d
        if s.kind == "csv":
            parts = []
            for path in s.paths:
                layout = csv_layout(path)
                if not layout.columns:
                    return source_record_fingerprints(s, versions, workdir=self.workdir, progress=self.progress)
                columns = ", ".join(f"{d.text(c.strip())}: 'VARCHAR'" for c in layout.columns)
                parts.append(
                    f"SELECT * FROM read_csv({d.text(path)}, header = true, auto_detect = false, "
                    f"delim = {d.text(layout.delimiter)}, quote = '\"', escape = '\"', null_padding = false, "
                    f"strict_mode = true, max_line_size = {2 * MAX_CSV_ROW_BYTES}, columns = {{{columns}}})"
                )
            relation = " UNION ALL BY NAME ".join(parts)
        elif s.kind == "parquet":
            relation = (
                "SELECT * FROM read_parquet([" + ", ".join(d.text(p) for p in s.paths) + "], union_by_name = true)"
            )
        else:
            return source_record_fingerprints(s, versions, workdir=self.workdir, progress=self.progress)
        try:
            return batches_fingerprints(
                self.con.sql(relation).to_arrow_reader(CHUNK_ROWS), versions, large=is_large_source(s)
            )
        except _duckdb().Error as exc:
            raise self._read_error(exc) from None

    def _frame(self, query: str, by: Sequence[str]) -> pd.DataFrame:
        self.prepare()
        frame = self._sql(query).df()
        return base.sort_cells(frame, by)

    def _arrow_frame(self, query: str, by: Sequence[str], within: Sequence[str] = ()) -> pd.DataFrame:
        """:meth:`_frame` from the query's Arrow result: :func:`sort_cells` encodes the label columns itself,
        without pandas' conversion of them (0.14 s of the 600,600-row histogram); integer columns only (no
        missing values to convert differently)."""
        self.prepare()

        def fetch() -> Any:
            try:
                return self.con.sql(query).to_arrow_table()
            except _duckdb().Error as exc:
                raise self._read_error(exc) from None

        return base.sort_arrow_cells(fetch, by, within)

    def histogram(self, by: Sequence[str], edges: Sequence[float]) -> pd.DataFrame:
        frame = self._arrow_frame(sqlmod.histogram_sql(self.d, by, edges), by, within=("bin",))
        frame["bin"] = frame["bin"].astype(np.int64)
        frame["count"] = frame["count"].astype(np.int64)
        return frame

    def sums(self, by: Sequence[str], lower: float, upper: float) -> pd.DataFrame:
        self.prepare()
        rows = self._sql(sqlmod.sums_sql(self.d, by, lower, upper)).fetchall()
        frame = pd.DataFrame(rows, columns=[*by, "n", "sum_cents"])
        frame["n"] = frame["n"].astype(np.int64)
        frame["sum_cents"] = [0 if v is None else int(v) for v in frame["sum_cents"]]
        frame["sum_cents"] = frame["sum_cents"].astype(object)
        return base.sort_cells(frame, by)

    def outcomes(self, by: Sequence[str], statistic: StatisticSpec) -> pd.DataFrame:
        frame = self._frame(sqlmod.outcomes_sql(self.d, by, statistic, self.spec), by)
        for c in ("n_exposed", "n_reference", "cases_exposed", "cases_reference"):
            frame[c] = frame[c].fillna(0).astype(np.int64)
        return frame

    def _sorted_cells(self, by: Sequence[str], lower: float, upper: float) -> Iterator[tuple[tuple, np.ndarray]]:
        """(cell labels, sorted clipped incomes), one cell at a time, streamed from DuckDB."""
        self.prepare()
        try:
            relation = self.con.sql(sqlmod.clipped_sql(self.d, by, lower, upper))
            reader = relation.to_arrow_reader(BATCH_ROWS)
        except _duckdb().Error as exc:
            raise self._read_error(exc) from None
        key: tuple | None = None
        parts: list[np.ndarray] = []
        seen: set = set()
        nb = len(by)
        for batch in reader:
            values = batch.column(nb).to_numpy(zero_copy_only=False).astype(float, copy=False)
            if nb == 0:
                parts.append(values)
                key = ()
                continue
            n = values.size
            if n == 0:
                continue
            labels = [batch.column(i) for i in range(nb)]
            change = np.zeros(n - 1, dtype=bool)
            for col in labels:
                if n > 1:
                    a, b = col.slice(1), col.slice(0, n - 1)
                    diff = pc.fill_null(pc.not_equal(a, b), False).to_numpy(zero_copy_only=False)
                    nulls = pc.is_null(a).to_numpy(zero_copy_only=False) != pc.is_null(b).to_numpy(zero_copy_only=False)
                    change |= diff | nulls
            starts = [0, *(np.flatnonzero(change) + 1).tolist()]
            ends = [*starts[1:], n]
            for start, end in zip(starts, ends, strict=True):
                k = tuple(col[start].as_py() for col in labels)
                if key is not None and k != key:
                    yield key, self._finish(key, parts, seen)
                    parts = []
                key = k
                parts.append(values[start:end])
        if key is not None:
            yield key, self._finish(key, parts, seen)

    @staticmethod
    def _finish(key: tuple, parts: list, seen: set) -> np.ndarray:
        if key in seen:  # the stream must be ordered by cell; never merge two runs silently
            raise RuntimeError(f"DuckDB returned the cell {key!r} in two runs: the sorted stream is out of order")
        seen.add(key)
        xs = np.concatenate(parts) if len(parts) != 1 else parts[0]
        if xs.size > 1 and not bool(np.all(xs[1:] >= xs[:-1])):
            xs = np.sort(xs)
        return xs

    def _bucket_scan(self, by: Sequence[str], lower: float, upper: float) -> tuple[list[tuple], list[list[np.ndarray]]]:
        """One unsorted scan of (cell id, clipped income): rows are appended to per-cell numpy buffers
        (8 bytes per row in memory). Faster than DuckDB's global sort; used when the rows fit
        :data:`GINI_BUFFER_BYTES`. Returns the cell labels (text) and the buffers."""
        d = self.d
        self._sql("CREATE OR REPLACE TEMP TABLE dp_cells AS " + sqlmod.cells_sql(d, by))
        cells = self._sql(
            "SELECT __id, " + ", ".join(d.as_text(d.quote(c)) for c in by) + " FROM dp_cells ORDER BY __id"
        ).fetchall()
        n_cells = len(cells)
        id_type = np.uint16 if n_cells <= 65535 else np.int64  # 16-bit ids: numpy's stable argsort is a radix sort
        buffers: list[list[np.ndarray]] = [[] for _ in range(n_cells)]
        try:
            reader = self.con.sql(sqlmod.cell_values_sql(d, by, lower, upper)).to_arrow_reader(BATCH_ROWS)
        except _duckdb().Error as exc:
            raise self._read_error(exc) from None
        for batch in reader:
            ids = batch.column(0).to_numpy(zero_copy_only=False).astype(id_type)
            vals = batch.column(1).to_numpy(zero_copy_only=False).astype(float, copy=False)
            if ids.size == 0:
                continue
            order = np.argsort(ids, kind="stable")
            ids, vals = ids[order], vals[order]
            bounds = np.flatnonzero(ids[1:] != ids[:-1]) + 1
            for start, end in zip([0, *bounds.tolist()], [*bounds.tolist(), ids.size], strict=True):
                buffers[int(ids[start])].append(vals[start:end])  # vals is a fresh array: the batch can go
        return [tuple(labels) for _, *labels in cells], buffers

    def gini_inputs(self, by: Sequence[str], lower: float, upper: float, beta: float) -> pd.DataFrame:
        self.prepare()
        rows = []
        n_rows = int(self._sql("SELECT COUNT(*) FROM dp_base").fetchall()[0][0]) if by else 0
        bucket = bool(by) and n_rows * 8 <= GINI_BUFFER_BYTES
        how = "one scan into per-cell buffers" if bucket else "DuckDB sort, streamed"
        with self.progress.step(f"gini: incomes by {', '.join(by) or 'the whole table'} ({how})") as step:
            if bucket:
                labels, buffers = self._bucket_scan(by, lower, upper)
                sizes = [sum(p.size for p in parts) for parts in buffers]
                done = [0]

                def one(cid: int) -> tuple:
                    parts = buffers[cid]
                    buffers[cid] = []
                    xs = np.concatenate(parts) if len(parts) != 1 else parts[0]
                    del parts
                    xs.sort()
                    n, g, s = base.gini_cell(xs, lower=lower, upper=upper, beta=beta)
                    done[0] += 1
                    return (*labels[cid], n, g, s)

                # numpy's sort and sums release the GIL: two cells at a time use both cores. Smallest cells
                # first, so the biggest are sorted when most buffers are already freed (lower peak memory).
                from concurrent.futures import ThreadPoolExecutor

                order = sorted(range(len(labels)), key=sizes.__getitem__)
                with ThreadPoolExecutor(max_workers=max(1, min(2, os.cpu_count() or 1))) as pool:
                    for i, row in enumerate(pool.map(one, order), start=1):
                        rows.append(row)
                        step.tick(i, len(order), "cells")
            else:
                for i, (key, xs) in enumerate(self._sorted_cells(by, lower, upper), start=1):
                    n, g, s = base.gini_cell(xs, lower=lower, upper=upper, beta=beta)
                    rows.append((*key, n, g, s))
                    step.tick(i, None, "cells done")
        if not by and not rows:
            rows.append((0, 0.0, 0.0))
        frame = pd.DataFrame(rows, columns=[*by, "n", "confidential_gini", "confidential_smooth_sensitivity"])
        frame["n"] = frame["n"].astype(np.int64)
        return base.sort_cells(frame, by)

    def close(self) -> None:
        try:
            if self._con is not None:
                self._con.close()
                self._con = None
        finally:
            super().close()
