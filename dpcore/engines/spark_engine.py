"""Spark engine (PySpark): Spark SQL aggregates; the per-cell Gini inputs in the executors through
``groupBy(...).applyInPandas``. ``--master local[*]`` by default; under ``spark-submit`` the session of the
submission (its master, its cluster) is used, so the same command runs on a cluster.

The executors must be able to import ``dpcore``: in local mode this process's ``PYTHONPATH`` is passed on;
on a cluster (``--master spark://...``, or a submission's master) the engine ships the driver's dpcore as a
zip (``SparkContext.addPyFile``), unless the driver itself imported it from one (``spark-submit --py-files``).
The executors' Python is ``PYSPARK_PYTHON`` (default: the driver's interpreter), which must exist on every
node with the driver's minor version and numpy, pandas and pyarrow. A ``spark://`` master that does not
accept a connection is refused at once.

Database sources (DuckDB files, PostgreSQL) are first staged to Parquet by the driver (DuckDB's ``COPY`` /
``psycopg`` in batches), so no JDBC driver is needed; on a cluster, point ``--data`` at Parquet files the
executors can read (HDFS, S3, a shared file system) instead.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..validation import DPInputError
from . import base
from . import sql as sqlmod
from .base import Engine

if TYPE_CHECKING:
    from ..plan import StatisticSpec

LOCAL_SHUFFLE_PARTITIONS = 8


def column_kind(data_type: Any) -> str:
    """A Spark SQL type in the generic words of :func:`dpcore.engines.column_kind_refusal`."""
    from pyspark.sql import types as T

    if isinstance(data_type, T.StructType):
        return "struct"
    if isinstance(data_type, T.MapType):
        return "map"
    if isinstance(data_type, T.ArrayType):
        return "list"
    if isinstance(data_type, T.BooleanType):
        return "boolean"
    if isinstance(data_type, T.NumericType):
        return "number"
    text_types = (T.StringType, getattr(T, "CharType", T.StringType), getattr(T, "VarcharType", T.StringType))
    if isinstance(data_type, text_types):
        return "text"
    if isinstance(data_type, (T.DateType, T.TimestampType, getattr(T, "TimestampNTZType", T.TimestampType))):
        return "date/time"
    if isinstance(data_type, T.BinaryType):
        return "binary"
    if isinstance(data_type, T.NullType):
        return "null"
    return "other"


def java_available() -> bool:
    """True when a Java runtime is on PATH or JAVA_HOME (Spark needs one)."""
    import shutil

    home = os.environ.get("JAVA_HOME")
    if home and (Path(home) / "bin" / "java").exists():
        return True
    return shutil.which("java") is not None


def standalone_master_unreachable(master: str, timeout: float = 5.0) -> str | None:
    """Why no master of a standalone URL (``spark://host:port[,host:port...]``) accepts a connection, or None
    when one does (or the URL is not a standalone one). Spark itself retries a master that does not answer for
    a minute, prints Java stack traces and ends with a message that does not name the master; a TCP
    connection tells a wrong host or port in a few seconds."""
    import socket

    if not master.startswith("spark://"):
        return None
    reasons = []
    for address in master[len("spark://") :].split(","):
        host, _, port_text = address.strip().rpartition(":")
        host = host.strip("[]")  # an IPv6 address: [::1]:7077
        if not host or not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return (
                f"--master {master!r} is not a Spark master URL: use spark://HOST:PORT "
                "(the master's port, 7077 by default)"
            )
        try:
            with socket.create_connection((host, int(port_text)), timeout=timeout):
                return None
        except OSError as exc:
            reasons.append(f"{host}:{port_text}: {exc.strerror or exc}")
    return (
        f"no Spark master answers at {master} ({'; '.join(reasons)}): start the master "
        "(spark-class org.apache.spark.deploy.master.Master) or correct --master"
    )


def write_package_zip(package: Path, directory: str) -> str:
    """The ``.py`` files of ``package`` (a directory) in a zip in ``directory``, as ``<package name>/...`` (the
    layout ``zipimport`` reads; the executors' code needs no data files); its path. The file is named by its
    content's hash: a long-lived session given the zip of a second release fetches it to the same name on the
    executors, which Spark refuses for different contents."""
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(package.rglob("*.py")):
            if "__pycache__" not in path.parts:
                zf.write(path, path.relative_to(package.parent).as_posix())
    data = buffer.getvalue()
    archive = os.path.join(directory, f"{package.name}-{hashlib.sha256(data).hexdigest()[:16]}.zip")
    with open(archive, "wb") as out:
        out.write(data)
    return archive


def _gini_udf(by: list[str], lower: float, upper: float, beta: float):
    def per_cell(pdf: pd.DataFrame) -> pd.DataFrame:
        from dpcore.engines.base import gini_cell as cell_fn  # imported in the executor

        xs = np.sort(pdf["__c"].to_numpy(dtype=float))
        n, g, s = cell_fn(xs, lower=lower, upper=upper, beta=beta)
        # object / numpy dtypes: pandas 3's Arrow-backed "str" columns do not convert in PySpark's serializer
        row = {c: pd.Series([pdf[c].iloc[0] if len(pdf) else None], dtype=object) for c in by}
        row.update(
            {
                "n": np.array([n], dtype=np.int64),
                "confidential_gini": np.array([g], dtype=float),
                "confidential_smooth_sensitivity": np.array([s], dtype=float),
            }
        )
        return pd.DataFrame(row)

    return per_cell


class SparkEngine(Engine):
    name = "spark"

    def _start(self) -> None:
        master = self.options.master
        try:
            from pyspark import SparkConf
            from pyspark.sql import SparkSession
        except ImportError:
            raise DPInputError(
                "the spark engine needs PySpark: pip install 'dpcore[spark]' (and a Java runtime)"
            ) from None
        if not java_available() and SparkSession.getActiveSession() is None:
            raise DPInputError(
                "the spark engine needs Java (e.g. Debian's default-jre-headless); none found on PATH or JAVA_HOME"
            )
        root = str(Path(__file__).resolve().parents[2])
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if root not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        self._owns_session = SparkSession.getActiveSession() is None
        builder = SparkSession.builder.appName("dpcore-release")
        configured = SparkConf().contains("spark.master")
        if master:
            builder = builder.master(master)
        elif not configured:
            builder = builder.master("local[*]")
        master_url = master or ("local[*]" if not configured else SparkConf().get("spark.master"))
        assert master_url is not None  # configured: SparkConf contains spark.master
        local = master_url.startswith("local")
        import warnings

        warnings.filterwarnings("ignore", category=FutureWarning, module=r"pyspark(\..*)?")  # "pandas >= 3" notes
        if self.progress.quiet:
            builder = builder.config("spark.ui.showConsoleProgress", "false")
        builder = (
            builder.config("spark.ui.enabled", "false")
            .config("spark.sql.session.timeZone", "UTC")
            .config("spark.sql.execution.arrow.pyspark.enabled", "true")
            .config("spark.local.dir", os.path.join(self.workdir, "spark_local"))
        )
        if local:
            builder = builder.config("spark.sql.shuffle.partitions", str(LOCAL_SHUFFLE_PARTITIONS))
        elif self._owns_session:
            why = standalone_master_unreachable(master_url)
            if why is not None:
                raise DPInputError(why)
        with self.progress.step(f"starting Spark ({master or ('local[*]' if not configured else 'spark-submit')})"):
            try:
                self.spark = builder.getOrCreate()
            except Exception as exc:  # Java missing or broken: PySparkRuntimeError, OSError, ...
                raise DPInputError(f"Spark could not start: {base.first_line(exc)}") from None
        self.spark.sparkContext.setLogLevel("ERROR")
        if not local:
            self._ship_dpcore()
        self.d = sqlmod.SPARK
        self._prepared = False

    def _ship_dpcore(self) -> None:
        """Send this driver's dpcore to the executors of a cluster (``SparkContext.addPyFile``): the per-cell
        Gini and the record fingerprint run dpcore's code in the executors, which a standalone, YARN or
        Kubernetes worker cannot import from the driver's ``PYTHONPATH`` (it starts its executors with its
        own environment). The zip is first on the executors' path, so they run the driver's version even where
        another dpcore is installed. A dpcore imported from a zip (``spark-submit --py-files dpcore.zip``) is
        already shipped by the submission."""
        package = Path(__file__).resolve().parents[1]
        if not package.is_dir():
            return
        with self.progress.step("shipping dpcore to the executors (SparkContext.addPyFile)"):
            self.spark.sparkContext.addPyFile(write_package_zip(package, self.workdir))

    def _sql(self, query: str) -> Any:
        from pyspark.errors import PySparkException

        try:
            return self.spark.sql(query)
        except PySparkException as exc:
            raise DPInputError(f"Spark could not read the data: {base.first_line(exc)}") from None

    def _collect(self, query: str) -> pd.DataFrame:
        from py4j.protocol import Py4JJavaError
        from pyspark.errors import PySparkException

        try:
            return self._sql(query).toPandas()
        except (PySparkException, Py4JJavaError) as exc:
            raise self._spark_error(exc, "Spark failed") from None

    def _stage_duckdb(self) -> str:
        import duckdb

        out = os.path.join(self.workdir, "stage.parquet")
        con = duckdb.connect(self.source.location, read_only=True)
        try:
            con.execute(f"COPY ({self.source.query}) TO {sqlmod.DUCKDB.text(out)} (FORMAT parquet)")
        except duckdb.Error as exc:
            raise DPInputError(f"DuckDB could not read the data: {base.first_line(exc)}") from None
        finally:
            con.close()
        return out

    # complexity above the cap: one branch per source kind and the CSV checks, in order
    def prepare(self) -> None:  # noqa: C901
        if self._prepared:
            return
        from pyspark.errors import PySparkException

        s, spec, d = self.source, self.spec, self.d
        reader = self.spark.read
        try:
            if s.kind == "csv":
                df = self._read_csv()
            elif s.kind == "parquet":
                df = reader.option("mergeSchema", "true").parquet(*s.paths)
            elif s.kind == "duckdb":
                with self.progress.step("staging the DuckDB query to Parquet"):
                    df = reader.parquet(self._stage_duckdb())
            elif s.kind == "postgresql":
                with self.progress.step("staging the PostgreSQL query to Parquet"):
                    df = reader.parquet(base.stage_postgres(s, self.workdir, self.progress))
            else:  # pragma: no cover
                raise DPInputError(f"unknown source kind {s.kind!r}")
        except PySparkException as exc:
            raise DPInputError(f"Spark could not read the data: {base.first_line(exc)}") from None
        self._missing_columns(df.columns)
        kinds = {f.name: column_kind(f.dataType) for f in df.schema.fields}
        self._check_column_kinds(kinds)
        df.createOrReplaceTempView("dp_src")
        if kinds[spec.income] != "number":
            bad = self._collect(sqlmod.nonnumeric_probe(d, spec.income))
            from .base import csv_delimiter, decide_income_format

            delimiter = csv_delimiter(self.source)
            # the app's number rule when a plain parse fails, and always in a ';' file (as the DuckDB engine)
            if (len(bad) and not pd.isna(bad.iloc[0, 0])) or delimiter == ";":
                import dataclasses

                shapes = dict(self._collect(sqlmod.income_shapes(d, spec.income)).itertuples(index=False))
                fmt = decide_income_format(spec.income, shapes, delimiter)
                if fmt != "plain":
                    self.spec = spec = dataclasses.replace(spec, income_format=fmt)
                    bad = self._collect(sqlmod.nonnumeric_probe(d, spec.income, fmt))
                if len(bad) and not pd.isna(bad.iloc[0, 0]):
                    raise base.income_not_numeric(spec.income, bad.iloc[0, 0])
        self._sql(f"CREATE OR REPLACE TEMP VIEW dp_valid AS {sqlmod.valid_view(d, spec)}")
        if spec.missing_income == "refuse":
            missing = int(self._collect("SELECT COUNT(*) AS missing FROM dp_valid WHERE __x IS NULL").iloc[0, 0])
            if missing:
                raise base.missing_income_refused(spec.income, missing)
        if spec.negative_incomes == "refuse":
            negative = int(self._collect("SELECT COUNT(*) AS negative FROM dp_valid WHERE __x < 0").iloc[0, 0])
            if negative:
                raise base.negative_income_refused(spec.income, negative)
        for i, col in enumerate(spec.outcome_columns):
            bad = int(self._collect(f"SELECT COUNT(*) AS bad FROM dp_valid WHERE __o{i} = -1").iloc[0, 0])
            if bad:
                raise DPInputError(f"the outcome column {col!r} has {bad} value(s) other than 0/1/true/false/yes/no")
        self._sql(f"CREATE OR REPLACE TEMP VIEW dp_base AS {sqlmod.base_view(d, spec)}")
        self._prepared = True

    def has_rows(self) -> bool:
        """Whether the source has a row (LIMIT 1 on the unbounded rows)."""
        self.prepare()
        return len(self._collect("SELECT 1 AS one FROM dp_valid LIMIT 1")) > 0

    def record_fingerprints(self, versions: Any) -> Any:
        """The record fingerprints of the source in each of ``versions`` (:mod:`dpcore.record_fingerprint`) from
        Spark's own scan of every column (CSV all as text with the shared header layout's names; Parquet with its
        types): each partition adds its row codes up in ``mapInArrow``, the driver adds the partial sums (the
        combination does not depend on the order of rows or partitions). Other sources: the Arrow reader."""
        from pyspark.sql import types as T

        from ..record_fingerprint import RecordFingerprint, RecordFingerprints, check_versions
        from .base import csv_layout
        from .fingerprint import source_record_fingerprints

        versions = check_versions(versions)

        s = self.source
        if s.kind == "csv":
            frames = []
            for path in s.paths:
                layout = csv_layout(path)
                if not layout.columns:
                    return source_record_fingerprints(s, versions, workdir=self.workdir, progress=self.progress)
                schema = T.StructType([T.StructField(c.strip(), T.StringType(), True) for c in layout.columns])
                frames.append(
                    self._csv_reader(layout)
                    .option("mode", "FAILFAST")
                    .option("enforceSchema", True)
                    .schema(schema)
                    .csv(path)
                )
            df = frames[0]
            for other in frames[1:]:
                df = df.unionByName(other)
        elif s.kind == "parquet":
            df = self.spark.read.option("mergeSchema", "true").parquet(*s.paths)
        else:
            return source_record_fingerprints(s, versions, workdir=self.workdir, progress=self.progress)

        def partial_sums(batches):
            import pyarrow as pa

            from dpcore.record_fingerprint import RecordFingerprint as Partial

            accs = [Partial(version=v) for v in versions]
            for batch in batches:  # Arrow record batches: the fingerprint's Arrow path
                for acc in accs:
                    acc.update(batch)
            yield pa.RecordBatch.from_pydict(
                {
                    "version": [acc.version for acc in accs],
                    "rows": [acc.rows for acc in accs],
                    "sum1": [str(acc.sum1) for acc in accs],
                    "sum2": [str(acc.sum2) for acc in accs],
                },
                schema=pa.schema(
                    [("version", pa.int32()), ("rows", pa.int64()), ("sum1", pa.string()), ("sum2", pa.string())]
                ),
            )

        totals = {v: RecordFingerprint(version=v) for v in versions}
        for row in df.mapInArrow(partial_sums, "version int, rows long, sum1 string, sum2 string").collect():
            totals[int(row["version"])].merge(row["rows"], int(row["sum1"]), int(row["sum2"]))
        return RecordFingerprints(tuple((v, acc.hexdigest()) for v, acc in totals.items()))

    def _read_csv(self) -> Any:
        """Each CSV file read with the header layout every engine uses (delimiter, names; every column as
        text) as an explicit schema (Spark keeps a BOM in the first name and names the columns of every
        file after the first file's header), strictly (FAILFAST: a row whose fields do not match the
        header is refused, as in the other engines); the needed columns stacked by name."""
        from pyspark.sql import types as T

        needed = self._needed()
        frames = []
        self._layouts = self._csv_layouts()
        for layout in self._layouts:
            reader = self._csv_reader(layout)
            if layout.columns:
                schema = T.StructType([T.StructField(c, T.StringType(), True) for c in layout.read_names(needed)])
                reader = reader.schema(schema).option("mode", "FAILFAST").option("enforceSchema", True)
            frames.append(reader.csv(layout.path).select(*[f"`{c.replace('`', '``')}`" for c in needed]))
        out = frames[0]
        for df in frames[1:]:
            out = out.unionByName(df)
        return out

    def _csv_reader(self, layout: Any) -> Any:
        """Spark's CSV reader in the dialect every engine reads: a header line, the header's delimiter, double
        quotes (a quote inside one doubled), UTF-8, line ends inside quoted values."""
        return (
            self.spark.read.option("header", True)
            .option("sep", layout.delimiter)
            .option("quote", '"')
            .option("escape", '"')
            .option("encoding", "UTF-8")
            .option("multiLine", True)
        )

    def _spark_error(self, exc: Exception, prefix: str) -> DPInputError:
        """Spark's errors as the messages of every engine where they mean the same (a malformed CSV row);
        others as their first line."""
        text = str(exc)
        if self.source.kind == "csv" and "Malformed" in text and getattr(self, "_layouts", None):
            layout = next((lay for lay in self._layouts if lay.path in text), self._layouts[0])
            return base.csv_fields_error(layout.path, len(layout.columns))
        return DPInputError(f"{prefix}: {base.first_line(exc)}")

    def histogram(self, by: Sequence[str], edges: Sequence[float]) -> pd.DataFrame:
        self.prepare()
        frame = self._collect(sqlmod.histogram_sql(self.d, by, edges))
        frame["bin"] = frame["bin"].astype(np.int64)
        frame["count"] = frame["count"].astype(np.int64)
        return base.sort_cells(frame, by, within=("bin",))

    def sums(self, by: Sequence[str], lower: float, upper: float) -> pd.DataFrame:
        self.prepare()
        frame = self._collect(sqlmod.sums_sql(self.d, by, lower, upper))
        frame["n"] = frame["n"].astype(np.int64)
        frame["sum_cents"] = [
            0 if v is None or (isinstance(v, float) and np.isnan(v)) else int(v) for v in frame["sum_cents"]
        ]
        frame["sum_cents"] = frame["sum_cents"].astype(object)
        return base.sort_cells(frame, by)

    def outcomes(self, by: Sequence[str], statistic: StatisticSpec) -> pd.DataFrame:
        self.prepare()
        frame = self._collect(sqlmod.outcomes_sql(self.d, by, statistic, self.spec))
        for c in ("n_exposed", "n_reference", "cases_exposed", "cases_reference"):
            frame[c] = frame[c].fillna(0).astype(np.int64)
        return base.sort_cells(frame, by)

    def gini_inputs(self, by: Sequence[str], lower: float, upper: float, beta: float) -> pd.DataFrame:
        from pyspark.errors import PySparkException
        from pyspark.sql import types as T

        self.prepare()
        by = list(by)
        df = self._sql(sqlmod.clipped_sql(self.d, by, lower, upper, order=False))
        fields = [T.StructField(c, T.StringType(), True) for c in by]
        fields += [
            T.StructField("n", T.LongType(), False),
            T.StructField("confidential_gini", T.DoubleType(), False),
            T.StructField("confidential_smooth_sensitivity", T.DoubleType(), False),
        ]
        schema = T.StructType(fields)
        with self.progress.step(f"gini: per-cell smooth sensitivity in the executors (applyInPandas by {by or 'all'})"):
            try:
                if by:
                    grouped = df.groupBy(*by)
                else:
                    from pyspark.sql import functions as F

                    grouped = df.withColumn("__all", F.lit(1)).groupBy("__all")
                    df = None
                frame = grouped.applyInPandas(_gini_udf(by, lower, upper, beta), schema=schema).toPandas()
            except PySparkException as exc:
                raise DPInputError(f"Spark failed: {base.first_line(exc)}") from None
        if not by and frame.empty:
            frame = pd.DataFrame({"n": [0], "confidential_gini": [0.0], "confidential_smooth_sensitivity": [0.0]})
        frame["n"] = frame["n"].astype(np.int64)
        return base.sort_cells(frame, by)

    def close(self) -> None:
        try:
            if self._owns_session and getattr(self, "spark", None) is not None:
                self.spark.stop()
        finally:
            super().close()
