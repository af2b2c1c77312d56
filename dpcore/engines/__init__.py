"""Aggregation engines for releases at scale: DuckDB (default), Spark, pandas (the small-data reference).

The engine computes the small per-cell aggregates a release plan needs, out of core; dpcore then adds
the noise to those aggregates (:mod:`dpcore.engines.execute`). This is the split of Tumult Analytics,
PipelineDP and OpenDP-on-Polars: aggregation in a data engine, noise on small tables.

Every engine implements :class:`Engine`:

* :meth:`Engine.histogram` -- rows per cell x bin (cells = distinct values of the ``by`` columns;
  bin j holds ``edges[j] <= x < edges[j+1]``, values below the first edge in bin 0 and at or above
  the last edge in the last bin, as :func:`dpcore.percentiles.histogram_counts`);
* :meth:`Engine.sums` -- rows and clipped sums per cell; the sum is exact, in integer cents of the
  incomes clipped to [lower, upper] (``floor(100 x + 1/2)``), so every engine gets the same number;
* :meth:`Engine.outcomes` -- rows and outcome counts per cell for an exposed and a reference group;
* :meth:`Engine.gini_inputs` -- per cell: n, the Gini (eq. (1)) and its beta-smooth sensitivity
  (:func:`dpcore.gini.smooth_sensitivity`, exact), computed from the sorted clipped incomes of that
  cell (:func:`gini_cell`). These are confidential inputs of the noise; they never reach an output.

Rows: no row is left out for a missing value. A missing or non-finite income follows the plan's public
``missing_income`` rule (:func:`missing_income_refused` for "refuse"; with "lower", the default, the row
stays in every n, the mean and the Gini take the statistic's ``lower`` bound, the histogram its first bin,
an ``outcome_below`` outcome counts it as not a case); a missing outcome is not a case and its row stays in
``n_exposed`` / ``n_reference``. So one person's value going missing moves only noisy numbers, never a
cell or its n. With a ``privacy_unit``, each person keeps at most ``max_rows_per_person`` rows (taken
before anything looks at missing values): a seeded uniform sample of the person's rows, in the order of
``k1 = md5(seed | unit | cell labels)`` and then
``k2 = md5(seed | unit | cell labels | income cents | outcome flags)`` (:func:`bounding_key`, identical in
every engine). ``k1`` does not depend on incomes or outcomes, so which cells the kept rows fall in -- and
so every cell size -- does not change when a person's values change (the neighbouring relation: cell
sizes are public); ``k2`` only picks among rows of the same cells, and rows tied on both are identical
for every statistic. Cell labels (``by``, the relative-risk group) are compared as text; a missing label
is its own cell (shown empty).

Sources (:func:`parse_source`): a CSV file, a Parquet file / directory / glob, a DuckDB database file
with a query (``duckdb:///path.db?query=SELECT ...`` or ``--query``), or a PostgreSQL query
(``postgresql://user@host:port/db`` with ``--query``). CSV files are read as text in every engine
(the income is parsed as a number, and a non-numeric value is an error), so the three engines see the
same cell labels.

One set of input rules, whatever the engine (tests/test_engine_inputs.py runs odd files through each and
asserts the same message or the same tables):

* CSV: the header line is read once for every engine (:func:`csv_layout`): at most
  :data:`dpcore.data.io.MAX_CSV_HEADER_BYTES` and :data:`~dpcore.data.io.MAX_CSV_COLUMNS` columns (the
  limits of an upload to the app too), UTF-8 (a BOM is dropped), the
  delimiter , ; tab or | (the most frequent in the header), each needed column named once; only the
  needed columns are read; a row whose fields do not match the header (a missing or extra field, an
  unclosed quote) is refused, as is a row longer than :data:`~dpcore.data.io.MAX_CSV_ROW_BYTES` (read up to
  it; refused past twice it, the last line too: :func:`check_csv_last_line`, since DuckDB's reader drops a
  last line longer than its buffer without a word) and text that is not UTF-8. Several files: each must have
  every needed column.
* Types (:func:`column_kind_refusal`): nested columns (struct, list, map, union) are refused in every
  column a plan reads; the income must be numbers or text that parses as numbers (booleans, dates and
  binary values are refused); a non-numeric income names the smallest offending text.
* Messages are one line; a value quoted from the data is cut to :data:`MAX_SHOWN_CHARS` characters and
  an engine's own error to its first line (:func:`first_line`).

PostgreSQL is read with ``psycopg`` in batches (a server-side cursor) into a temporary Parquet file,
which the engine then reads (DuckDB's postgres extension needs a download; Spark's JDBC needs a driver
jar; the staging copy needs neither).
"""

from __future__ import annotations

from ..validation import DPInputError
from .base import *  # noqa: F403  (the engines' public names: sources, Progress, Engine ...)
from .base import ENGINES, Engine, EngineOptions, EngineSpec, Progress, Source
from .base import __all__ as _base_all

__all__ = [*_base_all, "open_engine"]


def open_engine(
    name: str,
    source: Source,
    spec: EngineSpec,
    *,
    progress: Progress | None = None,
    master: str | None = None,
    workdir: str | None = None,
    memory_limit: str | None = None,
) -> Engine:
    """Create the engine called ``name`` (duckdb | spark | pandas) on ``source``."""
    if name not in ENGINES:
        raise DPInputError(f"unknown engine {name!r}; choose one of {', '.join(ENGINES)}")
    if source.kind == "frame" and name != "pandas":
        raise DPInputError(f"an in-memory table is released with the pandas engine, not {name!r}")
    engine_class: type[Engine]
    if name == "duckdb":
        from .duckdb_engine import DuckDBEngine

        engine_class = DuckDBEngine
    elif name == "spark":
        from .spark_engine import SparkEngine

        engine_class = SparkEngine
    else:
        from .pandas_engine import PandasEngine

        engine_class = PandasEngine
    options = EngineOptions(master=master, memory_limit=memory_limit)
    return engine_class(source, spec, progress=progress, workdir=workdir, options=options)
