"""pandas engine: the small-data reference (the whole table in memory; what the app uses for uploads).

It implements the per-row definitions of :mod:`dpcore.engines` with numpy, independently of the SQL of
the DuckDB and Spark engines; the tests check that the three give identical tables.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np
import pandas as pd

from ..validation import DPInputError
from . import (Engine, EngineSpec, Progress, Source, bin_index, bounding_key, cents, gini_cell, outcome_flag,
               sort_cells, stage_postgres)
from .sql import KEY_CLAMP

_NAN_WORDS = {"nan", "+nan", "-nan"}


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
    def _needed(self) -> list[str]:
        s = self.spec
        return list(dict.fromkeys([s.income, *([s.privacy_unit] if s.privacy_unit else []), *s.text_columns,
                                   *s.outcome_columns]))

    def _read_arrow(self) -> Any:
        import pyarrow as pa
        import pyarrow.parquet as pq

        s = self.source
        if s.kind == "postgresql":
            with self.progress.step("staging the PostgreSQL query to Parquet"):
                path = stage_postgres(s, self.workdir, self.progress)
            paths = (path,)
        elif s.kind == "duckdb":
            import duckdb

            con = duckdb.connect(s.location, read_only=True)
            try:
                result = con.execute(s.query)
                table = result.to_arrow_table() if hasattr(result, "to_arrow_table") else result.fetch_arrow_table()
            except duckdb.Error as exc:
                raise DPInputError(f"DuckDB could not read the data: {str(exc).strip().splitlines()[0]}") from None
            finally:
                con.close()
            self._missing_columns(table.column_names)
            return table.select(self._needed())
        else:
            paths = s.paths
        tables = []
        for p in paths:
            try:
                schema = pq.read_schema(p)
            except (OSError, pa.ArrowException) as exc:
                raise DPInputError(f"cannot read the Parquet file {p!r}: {exc}") from None
            self._missing_columns(schema.names)
            tables.append(pq.read_table(p, columns=self._needed()))
        return pa.concat_tables(tables, promote_options="default") if len(tables) > 1 else tables[0]

    def _read_csv(self) -> pd.DataFrame:
        frames = []
        for p in self.source.paths:
            try:
                head = pd.read_csv(p, nrows=0)
            except (OSError, ValueError, pd.errors.ParserError) as exc:
                raise DPInputError(f"cannot read the CSV file {p!r}: {exc}") from None
            self._missing_columns(list(head.columns))
            frames.append(pd.read_csv(p, usecols=self._needed(), dtype=str, keep_default_na=False, na_values=[""]))
        frame = pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]
        return frame.astype(object).where(frame.notna(), None)

    def prepare(self) -> None:
        if self.frame is not None:
            return
        spec = self.spec
        with self.progress.step("pandas: reading the whole table into memory"):
            if self.source.kind == "csv":
                raw = self._read_csv()
                income_raw = raw[spec.income]
                text = {c: raw[c].astype("category") for c in (*spec.text_columns, *spec.outcome_columns,
                                                     *([spec.privacy_unit] if spec.privacy_unit else []))}
                numeric_income = False
            else:
                table = self._read_arrow()
                import pyarrow as pa

                itype = table.schema.field(spec.income).type
                numeric_income = pa.types.is_integer(itype) or pa.types.is_floating(itype) or pa.types.is_decimal(itype)
                income_raw = pd.Series(table.column(spec.income).to_pylist() if not numeric_income else
                                       table.column(spec.income).to_numpy(zero_copy_only=False))
                if not numeric_income:
                    income_raw = pd.Series(_values(_arrow_to_text(table.column(spec.income))), dtype=object)
                text = {c: _arrow_to_text(table.column(c)) for c in (*spec.text_columns, *spec.outcome_columns,
                                                                      *([spec.privacy_unit] if spec.privacy_unit else []))}
        if numeric_income:
            x = pd.to_numeric(income_raw, errors="coerce").astype(float).to_numpy()
        else:
            x = pd.to_numeric(income_raw.map(lambda v: v.strip() if isinstance(v, str) else v),
                              errors="coerce").astype(float).to_numpy()
            for v, xv in zip(income_raw, x):
                if v is not None and np.isnan(xv) and str(v).strip() != "" and str(v).strip().lower() not in _NAN_WORDS:
                    raise DPInputError(f"the income column {spec.income!r} is not numeric: found {str(v)[:40]!r}")
        keep = np.isfinite(x)
        frame = pd.DataFrame({"__x": x})
        for c in spec.text_columns:
            frame[c] = text[c].reset_index(drop=True)
        for i, c in enumerate(spec.outcome_columns):
            flags = [_flag_or_nan(v) for v in _values(text[c])]
            bad = sum(1 for f, k in zip(flags, keep) if k and f is not None and np.isnan(f))
            if bad:
                raise DPInputError(f"the outcome column {c!r} has {bad} value(s) other than 0/1/true/false/yes/no")
            frame[f"__o{i}"] = pd.Series([np.nan if f is None else f for f in flags], dtype=float)
        if spec.privacy_unit:
            frame["__u"] = pd.Series(_values(text[spec.privacy_unit]), dtype=object)
        frame = frame[keep].reset_index(drop=True)
        if spec.privacy_unit:
            frame = self._bound(frame)
        self.frame = frame

    def _bound(self, frame: pd.DataFrame) -> pd.DataFrame:
        spec = self.spec
        cents_key = np.floor(np.clip(frame["__x"].to_numpy(), -KEY_CLAMP, KEY_CLAMP) * 100).astype(np.int64)
        cols = [_values(frame[c]) for c in spec.key_columns]
        outs = [[None if np.isnan(v) else str(int(v)) for v in frame[f"__o{i}"].to_numpy(float)]
                for i in range(len(spec.outcome_columns))]
        units = frame["__u"].tolist()
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
