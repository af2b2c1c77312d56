"""pandas engine: the small-data reference (the whole table in memory; what the app uses for uploads).

It implements the per-row definitions of :mod:`dpcore.engines` with numpy, independently of the SQL of
the DuckDB and Spark engines; the tests check that the three give identical tables.
"""
from __future__ import annotations

import os
from typing import Any, Iterator, Sequence

import numpy as np
import pandas as pd

from ..validation import DPInputError
from . import (Engine, EngineSpec, Progress, Source, bin_index, bounding_key, cents, first_line, gini_cell,
               income_not_numeric, outcome_flag, shown, sort_cells, stage_postgres)
from .sql import KEY_CLAMP

_NAN_WORDS = {"nan", "+nan", "-nan"}
#: rows per chunk read from the source (a chunk of three text columns is ~40 MB as Python strings)
CHUNK_ROWS = 200_000


def _arrow_kind(arrow_type: Any) -> str:
    """An Arrow type in the generic words of :func:`dpcore.engines.column_kind_refusal`."""
    import pyarrow as pa

    t = arrow_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_struct(t):
        return "struct"
    if pa.types.is_map(t):
        return "map"
    if (pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)
            or getattr(pa.types, "is_list_view", lambda _: False)(t)
            or getattr(pa.types, "is_large_list_view", lambda _: False)(t)):
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


def _encode(values: np.ndarray, dictionary: dict[str, int]) -> np.ndarray:
    """Codes of ``values`` (str / None) in ``dictionary`` (extended with new labels); -1 for None."""
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    mapping = np.array([dictionary.setdefault(u, len(dictionary)) for u in uniques], dtype=np.int32)
    out = np.full(codes.size, -1, dtype=np.int32)
    found = codes >= 0
    out[found] = mapping[codes[found]]
    return out


def _decode(codes: np.ndarray, dictionary: dict[str, int]) -> pd.Series:
    """The codes as a categorical column (one Python string per distinct label, not per row)."""
    return pd.Series(pd.Categorical.from_codes(codes, categories=list(dictionary)))


def _concat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.empty(0, dtype=dtype)


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

    def __init__(self, source: Source, spec: EngineSpec, *, progress: Progress | None = None,
                 workdir: str | None = None) -> None:
        super().__init__(source, spec, progress=progress, workdir=workdir)
        self.frame: pd.DataFrame | None = None

    # reading ----------------------------------------------------------------------------------
    # The source is read in chunks of CHUNK_ROWS rows, only the needed columns, and each chunk is checked
    # and turned into compact arrays at once: the income as float64 (finite rows only), every text column
    # as integer codes into one dictionary per column, outcome flags as float. So the memory is a chunk
    # of text plus ~8 + 4 x (text columns) + 8 x (outcomes) bytes per kept row, whatever the width of the
    # file or the length of its cells (a 2 GB sparse CSV read whole as text peaked at 14.5 GB RSS;
    # benchmarks/bench_engine_memory.py measures it). The Gini needs every income of a cell and the
    # contribution bounding every row of a person, so the compact rows stay in memory: DuckDB is the
    # engine for data that do not fit (it sorts out of core).

    def _arrow_batches(self) -> Iterator[Any]:
        """Record batches of the needed columns (Parquet, a DuckDB query, a staged PostgreSQL query), after
        the column checks every engine applies (missing columns, nested values, boolean incomes)."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        s = self.source
        if s.kind == "postgresql":
            with self.progress.step("staging the PostgreSQL query to Parquet"):
                paths: tuple[str, ...] = (stage_postgres(s, self.workdir, self.progress),)
        elif s.kind == "duckdb":
            import duckdb

            con = duckdb.connect(s.location, read_only=True)
            try:
                reader = con.sql(s.query).to_arrow_reader(CHUNK_ROWS)
                self._check_schema(reader.schema)
                yield from reader
            except duckdb.Error as exc:
                raise DPInputError(f"DuckDB could not read the data: {first_line(exc)}") from None
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
                raise DPInputError(f"cannot read the Parquet file {shown(os.path.basename(p))}: {first_line(exc)}") from None
            self._check_schema(f.schema_arrow)
            files.append(f)
        for f in files:
            for batch in f.iter_batches(batch_size=CHUNK_ROWS, columns=self._needed()):
                yield batch

    def _check_schema(self, schema: Any) -> None:
        self._missing_columns(schema.names)
        self._check_column_kinds({name: _arrow_kind(schema.field(name).type) for name in self._needed()})

    def _csv_chunks(self) -> Iterator[pd.DataFrame]:
        """Chunks of the needed columns of every CSV file as text (None for an empty field)."""
        for layout in self._csv_layouts():
            name = shown(os.path.basename(layout.path))
            try:
                reader = pd.read_csv(layout.path, sep=layout.delimiter, usecols=self._needed(), dtype=str,
                                     keep_default_na=False, na_values=[""], chunksize=CHUNK_ROWS, encoding="utf-8")
                for chunk in reader:
                    yield chunk.astype(object).where(chunk.notna(), None)
            except UnicodeDecodeError:
                raise DPInputError(f"the CSV file {name} is not UTF-8 text") from None
            except (OSError, ValueError, pd.errors.ParserError) as exc:
                raise DPInputError(f"cannot read the CSV file {name}: {first_line(exc)}") from None

    def _chunks(self) -> Iterator[tuple[np.ndarray, dict[str, np.ndarray]]]:
        """(income as float, needed text columns as object arrays of str / None), chunk by chunk; a text
        income that is not a number is refused (after the whole scan, naming the smallest such text)."""
        spec = self.spec
        others = [c for c in self._needed() if c != spec.income]
        smallest_bad: str | None = None
        if self.source.kind == "csv":
            for chunk in self._csv_chunks():
                x, bad = _parse_income(chunk[spec.income].to_numpy(dtype=object))
                if bad is not None and (smallest_bad is None or bad < smallest_bad):
                    smallest_bad = bad
                yield x, {c: chunk[c].to_numpy(dtype=object) for c in others}
        else:
            for batch in self._arrow_batches():
                col = batch.column(batch.schema.get_field_index(spec.income))
                if _arrow_kind(col.type) == "number":
                    x = pd.to_numeric(pd.Series(col.to_numpy(zero_copy_only=False)), errors="coerce")
                    x = x.astype(float).to_numpy()
                else:
                    x, bad = _parse_income(np.asarray(_values(_arrow_to_text(col)), dtype=object))
                    if bad is not None and (smallest_bad is None or bad < smallest_bad):
                        smallest_bad = bad
                text = {c: np.asarray(_values(_arrow_to_text(batch.column(batch.schema.get_field_index(c)))),
                                      dtype=object) for c in others}
                yield x, text
        if smallest_bad is not None:
            raise income_not_numeric(spec.income, smallest_bad)

    def prepare(self) -> None:
        if self.frame is not None:
            return
        spec = self.spec
        text_columns = [c for c in self._needed() if c != spec.income]
        dictionaries: dict[str, dict[str, int]] = {c: {} for c in text_columns}
        parts: dict[str, list[np.ndarray]] = {c: [] for c in ["__x", *text_columns]}
        with self.progress.step(f"pandas: reading the needed columns in chunks of {CHUNK_ROWS:,} rows") as step:
            rows = 0
            for x, text in self._chunks():
                keep = np.isfinite(x)
                parts["__x"].append(x[keep])
                for c in text_columns:
                    parts[c].append(_encode(text[c][keep], dictionaries[c]))
                rows += x.size
                step.tick(rows, None, "rows read")
        frame = pd.DataFrame({"__x": _concat(parts["__x"], np.float64)})
        columns = {c: _decode(_concat(parts[c], np.int32), dictionaries[c]) for c in text_columns}
        for c in spec.text_columns:
            frame[c] = columns[c]
        for i, c in enumerate(spec.outcome_columns):
            # one flag per distinct word: 1.0, 0.0, None (missing) or NaN (not an accepted word)
            word_flags = [_flag_or_nan(w) for w in dictionaries[c]]
            flags = np.array([np.nan if f is None else f for f in word_flags] + [np.nan])
            unaccepted = np.array([f is not None and np.isnan(f) for f in word_flags] + [False])
            codes = _concat(parts[c], np.int32)
            row_word = np.where(codes < 0, len(word_flags), codes)
            bad = int(unaccepted[row_word].sum())
            if bad:
                raise DPInputError(f"the outcome column {c!r} has {bad} value(s) other than 0/1/true/false/yes/no")
            frame[f"__o{i}"] = pd.Series(flags[row_word], dtype=float)
        if spec.privacy_unit:
            frame["__u"] = columns[spec.privacy_unit]
            frame = self._bound(frame)
        self.frame = frame

    def _bound(self, frame: pd.DataFrame) -> pd.DataFrame:
        spec = self.spec
        cents_key = np.floor(np.clip(frame["__x"].to_numpy(), -KEY_CLAMP, KEY_CLAMP) * 100).astype(np.int64)
        cols = [_values(frame[c]) for c in spec.key_columns]
        outs = [[None if np.isnan(v) else str(int(v)) for v in frame[f"__o{i}"].to_numpy(float)]
                for i in range(len(spec.outcome_columns))]
        units = _values(frame["__u"])
        k1, k2 = [], []
        for i, u in enumerate(units):
            cells = [u, *[col[i] for col in cols]]
            k1.append(bounding_key(spec.bounding_seed, cells))
            k2.append(bounding_key(spec.bounding_seed, [*cells, str(int(cents_key[i])), *[o[i] for o in outs]]))
        frame = frame.assign(__k1=k1, __k2=k2, __unit=["\x00missing" if u is None else "v" + u for u in units])
        frame = frame.sort_values(["__unit", "__k1", "__k2"], kind="stable")
        rank = frame.groupby("__unit", sort=False).cumcount()
        frame = frame[rank.to_numpy() < int(spec.max_rows_per_person)]
        return frame.drop(columns=["__k1", "__k2", "__unit"]).reset_index(drop=True)

    # aggregates -------------------------------------------------------------------------------
    def _groups(self, frame: pd.DataFrame, by: Sequence[str]):
        if not by:
            return [((), frame)]
        return [((k if isinstance(k, tuple) else (k,)), g)
                for k, g in frame.groupby(list(by), dropna=False, sort=False, observed=True)]

    @staticmethod
    def _key(k: tuple) -> tuple:
        return tuple(None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in k)

    def histogram(self, by: Sequence[str], edges: Sequence[float]) -> pd.DataFrame:
        self.prepare()
        frame = self.frame.assign(bin=bin_index(self.frame["__x"].to_numpy(), edges))
        rows = []
        for k, g in self._groups(frame, by):
            counts = np.bincount(g["bin"].to_numpy(), minlength=len(edges) - 1)
            for j in np.flatnonzero(counts):
                rows.append((*self._key(k), int(j), int(counts[j])))
        out = pd.DataFrame(rows, columns=[*by, "bin", "count"])
        out["bin"] = out["bin"].astype(np.int64)
        out["count"] = out["count"].astype(np.int64)
        return sort_cells(out, by)

    def sums(self, by: Sequence[str], lower: float, upper: float) -> pd.DataFrame:
        self.prepare()
        rows = []
        groups = self._groups(self.frame, by)
        for k, g in groups:
            c = cents(g["__x"].to_numpy(), lower, upper)
            rows.append((*self._key(k), int(c.size), int(c.sum())))  # int64: exact below 9.2e18 cents
        if not by and not rows:
            rows.append((0, 0))
        out = pd.DataFrame(rows, columns=[*by, "n", "sum_cents"])
        out["n"] = out["n"].astype(np.int64)
        out["sum_cents"] = out["sum_cents"].astype(object)
        return sort_cells(out, by)

    def outcomes(self, by: Sequence[str], group: str, exposed: str, reference: str, outcome: str | None,
                 outcome_below: float | None) -> pd.DataFrame:
        self.prepare()
        f = self.frame
        in_group = np.array(f[group].isin([exposed, reference]).to_numpy(), dtype=bool)
        if outcome is not None:
            col = f"__o{self.spec.outcome_columns.index(outcome)}"
            in_group &= f[col].notna().to_numpy()
            case = (f[col].to_numpy() == 1.0)
        else:
            case = f["__x"].to_numpy() < outcome_below
        f = f.assign(__case=case)[in_group]
        rows = []
        for k, g in self._groups(f, by):
            ex = (g[group] == exposed).to_numpy()
            ref = (g[group] == reference).to_numpy()
            cs = g["__case"].to_numpy()
            rows.append((*self._key(k), int(ex.sum()), int(ref.sum()), int((ex & cs).sum()), int((ref & cs).sum())))
        out = pd.DataFrame(rows, columns=[*by, "n_exposed", "n_reference", "cases_exposed", "cases_reference"])
        for c in ("n_exposed", "n_reference", "cases_exposed", "cases_reference"):
            out[c] = out[c].astype(np.int64)
        if not by and out.empty:
            return out
        return sort_cells(out, by)

    def gini_inputs(self, by: Sequence[str], lower: float, upper: float, beta: float) -> pd.DataFrame:
        self.prepare()
        rows = []
        groups = self._groups(self.frame, by)
        with self.progress.step(f"gini: {len(groups)} cell(s) (pandas)") as step:
            for i, (k, g) in enumerate(groups, start=1):
                xs = np.sort(np.clip(g["__x"].to_numpy(), lower, upper))
                n, gv, s = gini_cell(xs, lower=lower, upper=upper, beta=beta)
                rows.append((*self._key(k), n, gv, s))
                step.tick(i, len(groups), "cells")
        out = pd.DataFrame(rows, columns=[*by, "n", "confidential_gini", "confidential_smooth_sensitivity"])
        out["n"] = out["n"].astype(np.int64)
        return sort_cells(out, by)


def _flag_or_nan(value: Any) -> float | None:
    """:func:`outcome_flag`, with an unaccepted word as NaN: counted (on rows with an income) and reported
    once per column with the number of such values, as the SQL engines do."""
    try:
        return outcome_flag(value)
    except DPInputError:
        return float("nan")
