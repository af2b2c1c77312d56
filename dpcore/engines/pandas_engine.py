"""pandas engine: the small-data reference, in bounded memory.

It implements the per-row definitions of :mod:`dpcore.engines` with numpy, independently of the SQL of
the DuckDB and Spark engines; the tests check that the three give identical tables.

Memory: the source is read in chunks (batches of :data:`CHUNK_ROWS` rows from Parquet and DuckDB,
blocks of :data:`dpcore.data.io.MAX_CSV_ROW_BYTES` bytes of CSV), only the columns the plan needs;
each chunk is checked and turned into compact columns (the income as float64, every text column as int32
codes into one dictionary of labels per column), written to files in the engine's work directory
(12 bytes per row for one text column). The histogram, the clipped sums and the outcome counts read
those files back chunk by chunk and add per-chunk results, so their peak memory does not grow with the
file (tests/test_engine_inputs.py measures it; benchmarks/bench_engine_memory.py: sparse CSVs of 104 and
404 MB, histogram + sums by a cell column, peak RSS 868 and 2,714 MB read whole as text, 321 and 393 MB
now; 383 and 526 MB with a Gini by the same cells). Two steps need more by their nature: the Gini
holds the clipped incomes of its cells (8 bytes per row: each cell is sorted), and the contribution
bounding (``privacy_unit``) ranks all rows of each person, so it holds the compact rows. For data
beyond memory use DuckDB (out-of-core sort).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..data.io import MAX_CSV_ROW_BYTES
from ..stratified import clipped_cents
from ..validation import DPInputError
from . import base
from .base import Engine
from .sql import KEY_CLAMP

if TYPE_CHECKING:
    from ..plan import StatisticSpec

_NAN_WORDS = {"nan", "+nan", "-nan"}
#: rows per chunk read from the source (a chunk of three text columns is ~40 MB as Python strings)
CHUNK_ROWS = 200_000


def _parse_income(raw: np.ndarray) -> tuple[np.ndarray, str | None]:
    """Text incomes (str / None) as floats, and the smallest text that is not a number (None if none);
    blanks and the NaN words are missing values, not errors (as TRY_CAST in the SQL engines)."""
    stripped = pd.Series([v.strip() if isinstance(v, str) else v for v in raw], dtype=object)
    x = pd.to_numeric(stripped, errors="coerce").astype(float).to_numpy()
    smallest = None
    for v in raw[np.isnan(x)]:
        if v is None:
            continue
        t = str(v).strip()
        if t == "" or t.lower() in _NAN_WORDS:
            continue
        if smallest is None or str(v) < smallest:
            smallest = str(v)
    return x, smallest


class _ReadAgain(Exception):
    """The text income is written in the app's ``number_format`` (thousands or decimal commas): read again."""

    def __init__(self, number_format: str) -> None:
        super().__init__(number_format)
        self.number_format = number_format


def _with_number_format(column: Any, number_format: str) -> Any:
    """An Arrow text income rewritten as a plain number text under the app's format (as
    :func:`dpcore.engines.sql.income_number`): thousands commas dropped, or dots dropped and the comma a point."""
    if number_format == "plain":
        return column
    import pyarrow as pa
    import pyarrow.compute as pc

    if not (pa.types.is_string(column.type) or pa.types.is_large_string(column.type)):
        column = pc.cast(column, pa.string())
    text = pc.utf8_trim_whitespace(column)
    if number_format == "thousands_comma":
        return pc.replace_substring(text, ",", "")
    return pc.replace_substring(pc.replace_substring(text, ".", ""), ",", ".")


def _parse_text_income(column: Any) -> tuple[np.ndarray, str | None]:
    """:func:`_parse_income` of an Arrow text column. Arrow's own parser first (trimmed, C++): when it
    accepts every value the numbers are the same (both round the decimal text correctly); when it refuses
    one, the row-by-row pandas parse decides what is a number, a missing value or an error."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
        try:
            parsed = pc.cast(pc.utf8_trim_whitespace(column), pa.float64())
            return parsed.to_numpy(zero_copy_only=False).astype(float, copy=False), None
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            pass
    return _parse_income(np.asarray(_values(_arrow_to_text(column)), dtype=object))


def _encode(values: pd.Series, dictionary: dict[str, int]) -> np.ndarray:
    """Codes of ``values`` (text labels, missing as None / NaN) in ``dictionary`` (extended with new
    labels); -1 for a missing value. A categorical is mapped through its categories (one Python step
    per distinct label, not per row)."""
    if isinstance(values.dtype, pd.CategoricalDtype):
        local, uniques = values.cat.codes.to_numpy(), values.cat.categories
    else:
        local, uniques = pd.factorize(np.asarray(_values(values), dtype=object), use_na_sentinel=True)
    mapping = np.array([dictionary.setdefault(u, len(dictionary)) for u in uniques], dtype=np.int32)
    out = np.full(local.size, -1, dtype=np.int32)
    found = local >= 0
    out[found] = mapping[local[found]]
    return out


def _arrow_to_text(column: Any) -> pd.Series:
    """Text form of an Arrow column as the SQL engines cast it (ints '12', bools 'true', floats repr),
    as a pandas categorical (one Python string per distinct label, not per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    t = column.type
    if pa.types.is_floating(t):
        return pd.Series([None if v is None else repr(float(v)) for v in column.to_pylist()], dtype=object)
    if pa.types.is_dictionary(t):
        column = column.cast(t.value_type)
        t = column.type
    if not (pa.types.is_string(t) or pa.types.is_large_string(t)):
        column = pc.cast(column, pa.string())
    return column.dictionary_encode().to_pandas()


def _values(series: pd.Series) -> list:
    """The labels as a list with None for a missing value."""
    return [None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in series.tolist()]


class PandasEngine(Engine):
    name = "pandas"

    def _start(self) -> None:
        self._prepared = False
        self._rows = 0
        self._bounded: dict[str, np.ndarray] | None = None

    # reading ----------------------------------------------------------------------------------
    # Chunks of CHUNK_ROWS rows of the needed columns, checked and encoded at once (see the module
    # docstring); a chunk of text is all that is ever held of the file itself.

    def _arrow_batches(self) -> Iterator[Any]:
        """Record batches of the needed columns (Parquet, a DuckDB query, a staged PostgreSQL query), after
        the column checks every engine applies (missing columns, nested values, boolean incomes)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        s = self.source
        if s.kind == "frame":  # an in-memory table: typed as its columns are, like a Parquet file's
            try:
                table = pa.Table.from_pandas(s.frame, preserve_index=False)
            except (pa.ArrowException, ValueError, TypeError) as exc:
                raise DPInputError(f"the table's columns cannot be read: {base.first_line(exc)}") from None
            self._check_schema(table.schema)
            yield from table.select(self._needed()).to_batches(max_chunksize=CHUNK_ROWS)
            return
        if s.kind == "postgresql":
            with self.progress.step("staging the PostgreSQL query to Parquet"):
                paths: tuple[str, ...] = (base.stage_postgres(s, self.workdir, self.progress),)
        elif s.kind == "duckdb":
            import duckdb

            con = duckdb.connect(s.location, read_only=True)
            try:
                reader = con.sql(s.sql_query).to_arrow_reader(CHUNK_ROWS)
                self._check_schema(reader.schema)
                yield from reader
            except duckdb.Error as exc:
                raise DPInputError(f"DuckDB could not read the data: {base.first_line(exc)}") from None
            finally:
                con.close()
            return
        else:
            paths = s.paths
        files = []
        for p in paths:
            try:
                f = pq.ParquetFile(p)
            except (OSError, pa.ArrowException) as exc:
                raise DPInputError(
                    f"cannot read the Parquet file {base.shown(os.path.basename(p))}: {base.first_line(exc)}"
                ) from None
            self._check_schema(f.schema_arrow)
            files.append(f)
        for f in files:
            yield from f.iter_batches(batch_size=CHUNK_ROWS, columns=self._needed())

    def _check_schema(self, schema: Any) -> None:
        self._missing_columns(schema.names)
        self._check_column_kinds({name: base.arrow_kind(schema.field(name).type) for name in self._needed()})

    def _csv_batches(self) -> Iterator[Any]:
        """Record batches of the needed columns of every CSV file, all as text (None for an empty field),
        named from the shared header layout. Arrow's streaming CSV reader, strict like DuckDB's: a row
        whose fields do not match the header is refused (pandas' reader with ``usecols`` drops extra
        fields silently, so ``1,234`` in an unquoted income shifted the row)."""
        import pyarrow as pa
        import pyarrow.csv as pacsv

        needed = self._needed()
        for layout in self._csv_layouts():
            if layout.columns:
                read = pacsv.ReadOptions(
                    block_size=MAX_CSV_ROW_BYTES, skip_rows=1, column_names=layout.read_names(needed)
                )
            else:  # a codec this Arrow build lacks: its own header reading
                read = pacsv.ReadOptions(block_size=MAX_CSV_ROW_BYTES)
            parse = layout.arrow_parse_options()
            convert = pacsv.ConvertOptions(
                include_columns=needed,
                column_types={c: pa.string() for c in needed},
                null_values=[""],
                strings_can_be_null=True,
                quoted_strings_can_be_null=True,
            )
            try:
                with pa.input_stream(layout.path, compression="detect") as stream:
                    reader = pacsv.open_csv(stream, read_options=read, parse_options=parse, convert_options=convert)
                    yield from reader
            except pa.ArrowInvalid as exc:
                text = str(exc)
                if "columns, got" in text:
                    raise base.csv_fields_error(layout.path, len(layout.columns)) from None
                if "UTF8" in text or "UTF-8" in text:
                    raise base.csv_not_utf8_error(layout.path) from None
                if "straddl" in text or "block size" in text:
                    raise base.csv_row_too_long_error(layout.path) from None
                raise DPInputError(
                    f"cannot read the CSV file {base.shown(os.path.basename(layout.path))}: {base.first_line(exc)}"
                ) from None
            except (OSError, pa.ArrowException) as exc:
                raise DPInputError(
                    f"cannot read the CSV file {base.shown(os.path.basename(layout.path))}: {base.first_line(exc)}"
                ) from None

    def _chunks(self) -> Iterator[tuple[np.ndarray, dict[str, pd.Series]]]:
        """(income as float, needed text columns as pandas Series of labels), chunk by chunk; a text
        income that is not a number is refused (after the whole scan, naming the smallest such text)."""
        spec = self.spec
        others = [c for c in self._needed() if c != spec.income]
        smallest_bad: str | None = None
        text_income = False
        batches = self._csv_batches() if self.source.kind == "csv" else self._arrow_batches()
        for batch in batches:
            col = batch.column(batch.schema.get_field_index(spec.income))
            if base.arrow_kind(col.type) == "number":
                x = pd.to_numeric(pd.Series(col.to_numpy(zero_copy_only=False)), errors="coerce")
                x = x.astype(float).to_numpy()
            else:
                text_income = True
                x, bad = _parse_text_income(_with_number_format(col, spec.income_format))
                if bad is not None and (smallest_bad is None or bad < smallest_bad):
                    smallest_bad = bad
            text = {c: _arrow_to_text(batch.column(batch.schema.get_field_index(c))) for c in others}
            yield x, text
        from .base import csv_delimiter, decide_income_format

        delimiter = csv_delimiter(self.source)
        # the app's number rule (thousands or decimal commas, or refused) when a plain parse failed, and always in
        # a ';' file, where the app reads 1.234 as ambiguous (a thousand?), never as 1.234 silently
        if spec.income_format == "plain" and (smallest_bad is not None or (delimiter == ";" and text_income)):
            number_format = decide_income_format(spec.income, self._income_shapes(), delimiter)
            if number_format != "plain":
                raise _ReadAgain(number_format)
        if smallest_bad is not None:
            raise base.income_not_numeric(spec.income, smallest_bad)

    def _income_shapes(self) -> dict[str, str]:
        """(shape -> smallest text) of the non-blank text incomes (:func:`dpcore.engines.income_shape`), one more
        pass over the income column, made only when a plain parse failed."""
        from .base import income_shape

        shapes: dict[str, str] = {}
        batches = self._csv_batches() if self.source.kind == "csv" else self._arrow_batches()
        for batch in batches:
            col = batch.column(batch.schema.get_field_index(self.spec.income))
            texts = pd.Series(_values(_arrow_to_text(col)), dtype=object).dropna().astype(str).str.strip()
            for text in pd.unique(texts[texts != ""].to_numpy()):
                shape = income_shape(text)
                if shape not in shapes or text < shapes[shape]:
                    shapes[shape] = text
        return shapes

    def record_fingerprints(self, versions: Any) -> Any:
        """The record fingerprints of the source in each of ``versions`` (:mod:`dpcore.record_fingerprint`): every
        column, read by Arrow in chunks as this engine reads (CSV all as text with the shared header layout;
        Parquet typed)."""
        if (
            self.source.kind == "frame"
        ):  # the app's fingerprint of the same records (dpcore.ledger.dataset_fingerprints)
            from ..record_fingerprint import frame_fingerprints

            return frame_fingerprints(self.source.frame, versions)
        from .fingerprint import source_record_fingerprints

        return source_record_fingerprints(self.source, versions, workdir=self.workdir, progress=self.progress)

    def prepare(self) -> None:
        """Read the needed columns once (:meth:`_prepare_rows`); a text income in the app's thousands- or
        decimal-comma format (found when a plain parse fails) is read again in that format."""
        try:
            self._prepare_rows()
        except _ReadAgain as again:
            import dataclasses

            self._reading_store.finish()

            self.spec = dataclasses.replace(self.spec, income_format=again.number_format)
            self._prepare_rows()

    def _prepare_rows(self) -> None:
        if self._prepared:
            return
        spec = self.spec
        text_columns = [c for c in self._needed() if c != spec.income]
        self._dictionaries: dict[str, dict[str, int]] = {c: {} for c in text_columns}
        word_counts = {c: np.zeros(0, dtype=np.int64) for c in spec.outcome_columns}
        store = _ColumnStore(self.workdir, {"__x": np.float64, **{c: np.int32 for c in text_columns}})
        self._reading_store = store  # closed by prepare() before a second reading (its buffers would overwrite)
        missing_incomes = negative_incomes = 0
        with self.progress.step(f"pandas: reading the needed columns in chunks of {CHUNK_ROWS:,} rows") as step:
            rows = 0
            for x, text in self._chunks():
                # every row is kept (a missing value never changes which rows are counted or bounded); a
                # missing or non-finite income is stored as NaN and follows spec.missing_income
                finite = np.isfinite(x)
                negative = finite & (x < 0)
                negative_incomes += int(np.count_nonzero(negative))
                if spec.negative_incomes == "drop":  # counted as a missing income (the row stays)
                    finite &= ~negative
                missing_incomes += int(x.size - np.count_nonzero(finite))
                arrays = {"__x": np.where(finite, x, np.nan)}
                for c in text_columns:
                    arrays[c] = _encode(text[c], self._dictionaries[c])
                for c in spec.outcome_columns:  # how often each word occurs (checked once, at the end)
                    counts = np.bincount(arrays[c][arrays[c] >= 0], minlength=len(self._dictionaries[c]))
                    counts[: word_counts[c].size] += word_counts[c]
                    word_counts[c] = counts
                store.append(arrays)
                rows += x.size
                step.tick(rows, None, "rows read")
        store.finish()
        self._rows = rows
        if missing_incomes and spec.missing_income == "refuse":
            raise base.missing_income_refused(spec.income, missing_incomes)
        if negative_incomes and spec.negative_incomes == "refuse":
            raise base.negative_income_refused(spec.income, negative_incomes)
        self._flags = {}
        for c in spec.outcome_columns:
            # one flag per distinct word: 1.0, 0.0 or NaN (not an accepted word); index -1 (missing) -> NaN
            word_flags = [_flag_or_nan(w) for w in self._dictionaries[c]]
            bad = int(sum(n for f, n in zip(word_flags, word_counts[c], strict=True) if f is not None and np.isnan(f)))
            if bad:
                raise DPInputError(f"the outcome column {c!r} has {bad} value(s) other than 0/1/true/false/yes/no")
            self._flags[c] = np.array([np.nan if f is None else f for f in word_flags] + [np.nan])
        self._labels = {c: list(d) for c, d in self._dictionaries.items()}
        self._store = store
        if spec.privacy_unit:  # the bounding ranks every row of a person: the compact rows in memory
            self._bounded = self._bound(store)
        self._prepared = True

    def has_rows(self) -> bool:
        """Whether the source has a row (counted while it was read)."""
        self.prepare()
        return self._rows > 0

    def _bound(self, store: _ColumnStore) -> dict[str, np.ndarray]:
        """The rows kept by the contribution bounding (at most m per person, the md5 order of
        :func:`dpcore.engines.bounding_key`), as compact arrays."""
        spec = self.spec
        unit, m = spec.bounding
        columns = store.read_all()
        x = columns["__x"]
        known = ~np.isnan(x)
        cents_key = np.zeros(x.size, dtype=np.int64)
        cents_key[known] = np.floor(np.clip(x[known], -KEY_CLAMP, KEY_CLAMP) * 100).astype(np.int64)
        income_keys = [str(int(v)) if k else None for v, k in zip(cents_key.tolist(), known.tolist(), strict=True)]
        cols = [self._texts(c, columns[c]) for c in spec.key_columns]
        outs = [
            [None if np.isnan(v) else str(int(v)) for v in self._outcome(c, columns[c])] for c in spec.outcome_columns
        ]
        units = self._texts(unit, columns[unit])
        k1, k2 = [], []
        for i, u in enumerate(units):
            cells = [u, *[col[i] for col in cols]]
            k1.append(base.bounding_key(spec.bounding_seed, cells))
            k2.append(base.bounding_key(spec.bounding_seed, [*cells, income_keys[i], *[o[i] for o in outs]]))
        frame = pd.DataFrame(
            {
                "__k1": k1,
                "__k2": k2,
                "__unit": ["\x00missing" if u is None else "v" + u for u in units],
                "__row": np.arange(x.size),
            }
        )
        frame = frame.sort_values(["__unit", "__k1", "__k2"], kind="stable")
        rank = frame.groupby("__unit", sort=False).cumcount()
        # a row whose unit is missing (None or "") is its own person: always kept, never pooled (as the SQL engines)
        own = np.array([u is None or u == "" for u in units], dtype=bool)[frame["__row"].to_numpy()]
        kept = np.sort(frame["__row"].to_numpy()[(rank.to_numpy() < int(m)) | own])
        return {c: a[kept] for c, a in columns.items()}

    # aggregates -------------------------------------------------------------------------------
    # Each aggregate streams the compact rows chunk by chunk (or the bounded rows) and adds per-cell
    # partial results; cells are the distinct code tuples of the ``by`` columns, labelled at the end.

    def _texts(self, column: str, codes: np.ndarray) -> list:
        labels = self._labels[column]
        return [None if k < 0 else labels[k] for k in codes.tolist()]

    def _outcome(self, column: str, codes: np.ndarray) -> np.ndarray:
        return self._flags[column][np.where(codes < 0, len(self._flags[column]) - 1, codes)]

    def _row_chunks(self, columns: Sequence[str]) -> Iterator[dict[str, np.ndarray]]:
        self.prepare()
        if self._bounded is not None:
            total = self._bounded["__x"].size
            for start in range(0, max(total, 1), CHUNK_ROWS):
                yield {c: self._bounded[c][start : start + CHUNK_ROWS] for c in columns}
        else:
            yield from self._store.chunks(columns)

    def _cells(self, by: Sequence[str]) -> _CellIndex:
        self.prepare()
        return _CellIndex(list(by), self._labels)

    def histogram(self, by: Sequence[str], edges: Sequence[float]) -> pd.DataFrame:
        cells = self._cells(by)
        nbins = len(edges) - 1
        counts: np.ndarray = np.zeros(0, dtype=np.int64)
        for chunk in self._row_chunks(["__x", *by]):
            ids = cells.ids(chunk)
            x = chunk["__x"]
            bins = np.where(np.isnan(x), 0, base.bin_index(x, edges))  # a missing income: the first bin (bin_expr)
            flat = np.bincount(ids * nbins + bins, minlength=len(cells) * nbins)
            flat[: counts.size] += counts
            counts = flat
        counts = counts.reshape(len(cells), nbins) if len(cells) else counts.reshape(0, nbins)
        rows = [
            (*cells.label(k), int(j), int(counts[k, j])) for k in range(len(cells)) for j in np.flatnonzero(counts[k])
        ]
        out = pd.DataFrame(rows, columns=[*by, "bin", "count"])
        out["bin"] = out["bin"].astype(np.int64)
        out["count"] = out["count"].astype(np.int64)
        return base.sort_cells(out, by)

    def sums(self, by: Sequence[str], lower: float, upper: float) -> pd.DataFrame:
        cells = self._cells(by)
        n = np.zeros(0, dtype=np.int64)
        total = np.zeros(0, dtype=np.int64)
        for chunk in self._row_chunks(["__x", *by]):
            ids = cells.ids(chunk)
            n = _add(n, np.bincount(ids, minlength=len(cells)))
            cents = clipped_cents(_income_or_lower(chunk["__x"], lower), lower, upper)
            total = _add(total, _int_sums(ids, cents, len(cells)))
        rows = [(*cells.label(k), int(n[k]), int(total[k])) for k in range(len(cells))]
        if not by and not rows:
            rows.append((0, 0))
        out = pd.DataFrame(rows, columns=[*by, "n", "sum_cents"])
        out["n"] = out["n"].astype(np.int64)
        out["sum_cents"] = out["sum_cents"].astype(object)
        return base.sort_cells(out, by)

    def outcomes(self, by: Sequence[str], statistic: StatisticSpec) -> pd.DataFrame:
        group, exposed, reference = base.compared_groups(statistic)
        outcome, outcome_below = statistic.outcome, statistic.outcome_below
        self.prepare()
        cells = self._cells(by)
        ex_code = self._dictionaries[group].get(exposed, -2)  # -2: no row has the label
        ref_code = self._dictionaries[group].get(reference, -2)
        names = ["n_exposed", "n_reference", "cases_exposed", "cases_reference"]
        sums = {k: np.zeros(0, dtype=np.int64) for k in names}
        needed = ["__x", group, *by, *([outcome] if outcome is not None else [])]
        for chunk in self._row_chunks(list(dict.fromkeys(needed))):
            ex = chunk[group] == ex_code
            ref = chunk[group] == ref_code
            # a missing outcome (or income, with outcome_below) is not a case; its row stays in n (sql.outcomes_sql)
            if outcome is not None:
                case = self._outcome(outcome, chunk[outcome]) == 1.0
            else:
                case = chunk["__x"] < outcome_below
            ids = cells.ids(chunk, rows=ex | ref)
            for k, mask in zip(names, (ex, ref, ex & case, ref & case), strict=True):
                sums[k] = _add(sums[k], np.bincount(ids[mask[ex | ref]], minlength=len(cells)))
        rows = [(*cells.label(k), *(int(sums[name][k]) for name in names)) for k in range(len(cells))]
        out = pd.DataFrame(rows, columns=[*by, *names])
        for c in names:
            out[c] = out[c].astype(np.int64)
        if not by and out.empty:
            return out
        return base.sort_cells(out, by)

    def gini_inputs(self, by: Sequence[str], lower: float, upper: float, beta: float) -> pd.DataFrame:
        cells = self._cells(by)
        buckets: list[list[np.ndarray]] = []
        for chunk in self._row_chunks(["__x", *by]):  # the clipped incomes of each cell (8 bytes per row)
            ids = cells.ids(chunk)
            buckets.extend([] for _ in range(len(cells) - len(buckets)))
            order = np.argsort(ids, kind="stable")
            sorted_ids, values = ids[order], np.clip(_income_or_lower(chunk["__x"][order], lower), lower, upper)
            starts: np.ndarray | list[int] = (
                np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]]) if ids.size else []
            )
            for start, end in zip(starts, [*starts[1:], ids.size], strict=False):  # no rows: starts is empty
                buckets[int(sorted_ids[start])].append(values[start:end])
        if not by and not buckets:
            buckets.append([])
            cells.ensure_whole_table()
        rows = []
        with self.progress.step(f"gini: {len(buckets)} cell(s) (pandas)") as step:
            for k, parts in enumerate(buckets):
                xs = np.sort(np.concatenate(parts)) if parts else np.empty(0)
                buckets[k] = []
                n, gv, s = base.gini_cell(xs, lower=lower, upper=upper, beta=beta)
                rows.append((*cells.label(k), n, gv, s))
                step.tick(k + 1, len(buckets), "cells")
        out = pd.DataFrame(rows, columns=[*by, "n", "confidential_gini", "confidential_smooth_sensitivity"])
        out["n"] = out["n"].astype(np.int64)
        return base.sort_cells(out, by)


def _income_or_lower(x: np.ndarray, lower: float) -> np.ndarray:
    """Incomes with a missing one (NaN) replaced by the public ``lower`` (as
    :func:`dpcore.engines.sql.income_or_lower`)."""
    return np.where(np.isnan(x), float(lower), x)


def _add(total: np.ndarray, part: np.ndarray) -> np.ndarray:
    """``total + part`` where ``part`` may be longer (cells first seen in this chunk)."""
    part = part.astype(np.int64, copy=True)
    part[: total.size] += total
    return part


def _int_sums(ids: np.ndarray, values: np.ndarray, size: int) -> np.ndarray:
    """Exact int64 sums of ``values`` per id (np.bincount's weights are float64: not exact in cents)."""
    out = np.zeros(size, dtype=np.int64)
    if ids.size:
        order = np.argsort(ids, kind="stable")
        sorted_ids = ids[order]
        starts = np.flatnonzero(np.r_[True, sorted_ids[1:] != sorted_ids[:-1]])
        out[sorted_ids[starts]] = np.add.reduceat(values[order].astype(np.int64), starts)
    return out


class _CellIndex:
    """Cell ids 0, 1, ... for the distinct tuples of codes of the ``by`` columns, in order of appearance."""

    def __init__(self, by: list[str], labels: dict[str, list[str]]) -> None:
        self.by, self.labels = by, labels
        self.keys: list[tuple] = []
        self.index: dict[tuple, int] = {}

    def __len__(self) -> int:
        return len(self.keys)

    def ensure_whole_table(self) -> None:
        if not self.keys:
            self.keys.append(())
            self.index[()] = 0

    def ids(self, chunk: dict[str, np.ndarray], rows: np.ndarray | None = None) -> np.ndarray:
        size = chunk["__x"].size if rows is None else int(np.count_nonzero(rows))
        if not self.by:
            if size:
                self.ensure_whole_table()
            return np.zeros(size, dtype=np.int64)
        if not size:
            return np.zeros(0, dtype=np.int64)
        columns = [(chunk[c] if rows is None else chunk[c][rows]).astype(np.int64) for c in self.by]
        radices = [len(self.labels[c]) + 1 for c in self.by]  # codes -1 (missing) .. len - 1
        if float(np.prod(np.array(radices, dtype=float))) < 2.0**62:
            # one int64 per row (mixed radix): a 1-D unique, much faster than np.unique(axis=0)
            combined = columns[0] + 1
            for col, radix in zip(columns[1:], radices[1:], strict=True):
                combined = combined * radix + (col + 1)
            unique_keys, inverse = np.unique(combined, return_inverse=True)
            digits = []
            rest = unique_keys.copy()
            for radix in reversed(radices[1:]):
                digits.append(rest % radix - 1)
                rest //= radix
            digits.append(rest - 1)
            unique = np.stack(digits[::-1], axis=1)
        else:
            unique, inverse = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
        mapping = np.empty(len(unique), dtype=np.int64)
        for i, key in enumerate(map(tuple, unique.tolist())):
            mapping[i] = self.index.setdefault(key, len(self.keys))
            if mapping[i] == len(self.keys):
                self.keys.append(key)
        return mapping[inverse.reshape(-1)]

    def label(self, k: int) -> tuple:
        return tuple(None if code < 0 else self.labels[c][code] for c, code in zip(self.by, self.keys[k], strict=True))


class _ColumnStore:
    """The compact columns of the kept rows in files of the engine's work directory: appended chunk by
    chunk while reading, read back chunk by chunk by each aggregate (so memory stays one chunk)."""

    def __init__(self, directory: str, dtypes: dict[str, Any]) -> None:
        self.dtypes = {c: np.dtype(t) for c, t in dtypes.items()}
        self.paths = {c: os.path.join(directory, f"column{i}.bin") for i, c in enumerate(dtypes)}
        self._files = {c: open(p, "wb") for c, p in self.paths.items()}
        self.rows = 0

    def append(self, arrays: dict[str, np.ndarray]) -> None:
        for c, f in self._files.items():
            f.write(np.ascontiguousarray(arrays[c], dtype=self.dtypes[c]).tobytes())
        self.rows += arrays["__x"].size

    def finish(self) -> None:
        for f in self._files.values():
            f.close()

    def chunks(self, columns: Sequence[str]) -> Iterator[dict[str, np.ndarray]]:
        files = {c: open(self.paths[c], "rb") for c in dict.fromkeys(columns)}
        try:
            for start in range(0, max(self.rows, 1), CHUNK_ROWS):
                count = min(CHUNK_ROWS, self.rows - start)
                yield {c: np.fromfile(f, dtype=self.dtypes[c], count=count) for c, f in files.items()}
        finally:
            for f in files.values():
                f.close()

    def read_all(self) -> dict[str, np.ndarray]:
        return {c: np.fromfile(p, dtype=self.dtypes[c]) for c, p in self.paths.items()}


def _flag_or_nan(value: Any) -> float | None:
    """:func:`outcome_flag`, with an unaccepted word as NaN: counted (on every row) and reported
    once per column with the number of such values, as the SQL engines do."""
    try:
        return base.outcome_flag(value)
    except DPInputError:
        return float("nan")
