"""Aggregation engines (dpcore.engines): brute-force aggregates, identical tables across pandas / DuckDB /
Spark, contribution bounding by person, SQL sources (DuckDB file, PostgreSQL), clear errors."""

from __future__ import annotations

import hashlib
import math
import os

import numpy as np
import pandas as pd
import pytest

from dpcore import engines, noise
from dpcore import gini as gini_module
from dpcore.engines import EngineSpec, execute, open_engine, parse_source
from dpcore.plan import StatisticSpec, plan_from_dict
from dpcore.validation import DPInputError

# the relative-risk statistics Engine.outcomes counts for
TREATED_EMPLOYED = StatisticSpec(
    1, "relative_risk", 1.0, group="treated", exposed="yes", reference="no", outcome="employed"
)

BY3 = ["institution", "degree_level", "cohort"]


def make_frame(n: int = 3000, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "person": rng.integers(0, n // 3, n).astype(str),
            "institution": rng.choice(["A", "B", "C'q"], n),
            "degree_level": rng.choice([1, 2], n),
            "cohort": rng.choice([2010, 2015], n),
            "state": rng.choice(["CO", "TX", "VA"], n),
            "earnings": np.round(rng.lognormal(10.8, 0.8, n), 2),
            "treated": rng.choice(["yes", "no", "maybe"], n),
            "employed": rng.choice([0, 1], n),
        }
    )
    df.loc[3, "state"] = None  # a missing cell label is its own cell
    df.loc[5, "earnings"] = np.nan  # kept in n: the statistic's lower bound, the first bin
    df.loc[6, "earnings"] = 0.0
    df.loc[7, "earnings"] = 5e6  # clipped
    df.loc[8, "state"] = "WY"  # a one-row cell (Gini released as 0: n = 1 is public)
    return df


def plan_dict(**top) -> dict:
    raw = {
        "version": 1,
        "dataset": "test-dataset",
        "income": "earnings",
        "cap_epsilon": 4.0,
        "cell_sizes": "public",
        "statistics": [
            {"kind": "percentiles", "by": BY3, "epsilon": 1.0, "bins": "pseo", "q": [25, 50, 75]},
            {"kind": "gini", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 2_000_000},
            {"kind": "mean", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 500_000},
            {"kind": "mean", "epsilon": 0.25, "lower": 1000, "upper": 300_000},
            {
                "kind": "relative_risk",
                "by": ["institution"],
                "epsilon": 0.5,
                "group": "treated",
                "exposed": "yes",
                "reference": "no",
                "outcome": "employed",
            },
            {
                "kind": "relative_risk",
                "epsilon": 0.25,
                "group": "treated",
                "exposed": "yes",
                "reference": "no",
                "outcome_below": 40000,
            },
        ],
    }
    raw.update(top)
    return raw


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("engines")
    df = make_frame()
    df.to_parquet(d / "data.parquet", index=False)
    df.to_csv(d / "data.csv", index=False)
    # a directory of two Parquet files
    (d / "parts").mkdir()
    df.iloc[:1000].to_parquet(d / "parts" / "a.parquet", index=False)
    df.iloc[1000:].to_parquet(d / "parts" / "b.parquet", index=False)
    import duckdb

    con = duckdb.connect(str(d / "data.duckdb"))
    con.execute("CREATE TABLE earnings_table AS SELECT * FROM read_parquet(?)", [str(d / "data.parquet")])
    con.close()
    return d


def _run(plan, source, engine, out, seed=5, **kw):  # synthetic data: declared public, so it may be simulated
    return execute.run_plan(plan, source, engine=engine, out_dir=out, seed=seed, public_data=True, **kw)


def _assert_same_tables(a: dict, b: dict):
    assert a.keys() == b.keys()
    for name in a:
        pd.testing.assert_frame_equal(a[name], b[name], check_exact=True, check_dtype=True, obj=name)


# ---------------------------------------------------------------------------------------------
# Brute-force aggregates (pandas engine and DuckDB against numpy written here)
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_aggregates_match_brute_force(data_dir, engine):
    df = make_frame()  # the missing income stays in n (missing_income = "lower")
    plan = plan_from_dict(plan_dict())
    with open_engine(engine, parse_source(str(data_dir / "data.parquet")), EngineSpec.from_plan(plan)) as eng:
        edges = plan.statistics[0].bins
        hist = eng.histogram(BY3, edges)
        key = df[BY3].astype(str).agg("|".join, axis=1)
        bins = np.clip(np.searchsorted(edges, df["earnings"].fillna(-np.inf), side="right") - 1, 0, len(edges) - 2)
        expected = pd.Series(1, index=pd.MultiIndex.from_arrays([key, bins])).groupby(level=[0, 1]).sum()
        got = pd.Series(
            hist["count"].to_numpy(), index=pd.MultiIndex.from_arrays([hist[BY3].agg("|".join, axis=1), hist["bin"]])
        )
        assert got.sort_index().equals(expected.sort_index())

        sums = eng.sums(["state"], 0, 500_000)
        got = sums.assign(state=sums["state"].fillna("~")).set_index("state")
        for state, g in df.groupby(df["state"].fillna("~")):
            cents = np.floor(np.clip(g["earnings"].fillna(0), 0, 500_000) * 100 + 0.5).astype(np.int64)
            assert int(got.loc[state, "n"]) == len(g) and int(got.loc[state, "sum_cents"]) == int(cents.sum())
        assert len(got) == df["state"].fillna("~").nunique()

        beta = noise.smooth_noise_calibration(0.5, 2.0).beta
        gi = eng.gini_inputs(["state"], 0, 2e6, beta)
        assert list(gi["state"]) == [None, "CO", "TX", "VA", "WY"]  # canonical order: missing first, then text
        for _, row in gi.iterrows():
            g = df[df["state"].isna()] if row["state"] is None else df[df["state"] == row["state"]]
            xs = np.sort(np.clip(g["earnings"].fillna(0).to_numpy(), 0, 2e6))
            assert row["n"] == xs.size
            if xs.size >= 2:
                assert row["confidential_gini"] == pytest.approx(gini_module.gini(xs), rel=1e-12)
                ss = gini_module.smooth_sensitivity(xs, lower=0, upper=2e6, beta=beta)
                assert row["confidential_smooth_sensitivity"] == pytest.approx(ss.value, rel=1e-12)
            else:
                assert row["confidential_gini"] == 0 and row["confidential_smooth_sensitivity"] == 0

        oc = eng.outcomes(["institution"], TREATED_EMPLOYED).set_index("institution")
        for inst, g in df.groupby("institution"):
            ex, ref = g[g.treated == "yes"], g[g.treated == "no"]
            assert tuple(oc.loc[inst]) == (len(ex), len(ref), int(ex.employed.sum()), int(ref.employed.sum()))


def test_gini_cell_public_edge_cases():
    assert engines.gini_cell(np.array([5.0]), lower=0, upper=10, beta=0.1) == (1, 0.0, 0.0)
    n, g, s = engines.gini_cell(np.zeros(4), lower=0, upper=10, beta=0.1)
    assert (n, g) == (4, 0.0) and s == pytest.approx(gini_module.gini_global_sensitivity(4, 0, 10)) and s == 0.75
    # smoothness across the all-zero neighbour: S(all zero) <= e^beta S(one positive)
    beta = 0.2
    _, _, s1 = engines.gini_cell(np.array([0.0, 0, 0, 10]), lower=0, upper=10, beta=beta)
    assert s <= math.exp(beta) * s1 + 1e-12


# ---------------------------------------------------------------------------------------------
# Identical tables
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("unit", [False, True])
def test_pandas_and_duckdb_identical(data_dir, tmp_path, unit):
    top = {"privacy_unit": "person", "max_rows_per_person": 2, "bounding_seed": 11} if unit else {}
    plan = plan_from_dict(plan_dict(**top))
    results = {}
    for engine, data in [
        ("pandas", "data.parquet"),
        ("duckdb", "data.parquet"),
        ("duckdb", "data.csv"),
        ("pandas", "data.csv"),
        ("duckdb", "parts"),
    ]:
        results[(engine, data)] = _run(plan, parse_source(str(data_dir / data)), engine, tmp_path / f"{engine}-{data}")
    ref = results[("pandas", "data.parquet")].tables
    for key, res in results.items():
        _assert_same_tables(ref, res.tables)
    # the sorted DuckDB stream (used beyond GINI_BUFFER_BYTES) gives the same Gini table
    import dpcore.engines.duckdb_engine as duck

    old = duck.GINI_BUFFER_BYTES
    duck.GINI_BUFFER_BYTES = 0
    try:
        res = _run(plan, parse_source(str(data_dir / "data.parquet")), "duckdb", tmp_path / "sorted")
    finally:
        duck.GINI_BUFFER_BYTES = old
    _assert_same_tables(ref, res.tables)
    tables = list(ref.values())
    gini = ref["02_gini_by_state"]
    assert gini.loc[gini.state == "WY", "gini"].item() == 0.0 and gini.loc[gini.state == "WY", "n"].item() == 1
    bins = {f"noisy_bin_{j:02d}" for j in range(1, 22)}  # the noisy histogram: the intervals are computed from it
    intervals = {f"p{q}_{end}" for q in (25, 50, 75) for end in ("lower", "upper")}
    assert set(tables[0].columns) == {*BY3, "n", "p25", "p50", "p75", "simulation", *bins, *intervals}  # says so
    # another seed gives other noise (the seed is used)
    other = _run(plan, parse_source(str(data_dir / "data.parquet")), "pandas", tmp_path / "other", seed=6)
    assert not other.tables["03_mean_by_state"]["mean"].equals(ref["03_mean_by_state"]["mean"])


def _spark_reason() -> str | None:
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:  # found, not imported: this runs at collection
        return "pyspark is not installed (pip install 'dpcore[spark]')"
    from dpcore.engines.spark_engine import java_available

    if not java_available():
        return "no Java runtime (Debian's default-jre-headless; .ci/run installs it)"
    return None


# The smallest local Spark that still runs every code path of the engine: one core, no UI, no
# progress bars, no compression of tiny shuffles (the engine sets its own shuffle partitions), and a
# driver JVM that only uses the quick JIT tier and the one-thread collector: a test's few small queries
# end before C2's compilations pay off (measured: the test's Spark runs from 56 s to 29 s of CPU, the
# queries and their whole-stage code generation unchanged).
SPARK_TEST_CONFIG = {
    "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.default.parallelism": "1",
    "spark.sql.shuffle.partitions": "1",
    "spark.shuffle.compress": "false",
    "spark.rdd.compress": "false",
    "spark.driver.memory": "512m",
}


def _stop_spark_jvm() -> None:
    """Stop the Py4J gateway's JVM too: ``SparkSession.stop`` leaves it running (and using CPU) until the
    test process ends; it dies when its stdin pipe closes (pyspark.java_gateway)."""
    from pyspark import SparkContext

    gateway = SparkContext._gateway  # no public way to end the gateway
    if gateway is None:
        return
    proc = getattr(gateway, "proc", None)
    try:
        gateway.shutdown()
    finally:
        if proc is not None:
            if proc.stdin is not None:
                proc.stdin.close()
            try:
                proc.wait(timeout=30)
            except Exception:  # still alive after 30 s: kill it
                proc.kill()
        SparkContext._gateway = None
        SparkContext._jvm = None


@pytest.fixture(scope="module")
def spark_session():
    """One local[1] SparkSession for the module (JVM included, stopped at the end)."""
    import sys

    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)  # the workers need this venv (pandas, dpcore)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [root, *[p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]]
    )
    builder = SparkSession.builder.master("local[1]").appName("dpcore-tests")
    for key, value in SPARK_TEST_CONFIG.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        yield spark
    finally:
        spark.stop()
        _stop_spark_jvm()


SPARK_REASON = _spark_reason()


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_spark_identical_to_pandas_and_duckdb(data_dir, tmp_path, spark_session):
    """The Spark engine (on the session of the test: the engine uses an active session, as under
    spark-submit) gives the pandas tables exactly, from Parquet and from CSV."""
    plan = plan_from_dict(plan_dict(privacy_unit="person", max_rows_per_person=2, bounding_seed=11))
    ref = _run(plan, parse_source(str(data_dir / "data.parquet")), "pandas", tmp_path / "pandas").tables
    duck = _run(plan, parse_source(str(data_dir / "data.csv")), "duckdb", tmp_path / "duck").tables
    sp = _run(plan, parse_source(str(data_dir / "data.parquet")), "spark", tmp_path / "spark").tables
    sp_csv = _run(plan, parse_source(str(data_dir / "data.csv")), "spark", tmp_path / "spark-csv").tables
    _assert_same_tables(ref, duck)
    _assert_same_tables(ref, sp)
    _assert_same_tables(ref, sp_csv)


#: odd input files (tests/test_engine_inputs.py) also run through Spark, here where the module's JVM runs
SPARK_ODD_FILES = (
    "semicolons",
    "BOM",
    "text in income",
    "a row with an extra field",
    "boolean income parquet",
    "struct by parquet",
)


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_the_spark_engine_gives_the_same_record_fingerprint(tmp_path, spark_session):
    """Spark's partial row sums (mapInArrow) give the population fingerprint of every other reader
    (tests/test_population.py: the same records as a reordered CRLF CSV and as Parquet); here, in the module's
    one JVM."""
    from test_population import _records, _variants

    from dpcore import ledger
    from dpcore.engines.fingerprint import engine_record_fingerprints

    files = _variants(tmp_path)
    expected = ledger.dataset_fingerprints(_records(), (1, 2))  # each version from the partitions' partial sums
    for kind in ("crlf_reordered", "parquet"):
        with open_engine("spark", parse_source(files[kind]), EngineSpec("wage", ())) as eng:
            assert engine_record_fingerprints(eng, (1, 2)) == expected, kind
            assert engine_record_fingerprints(eng).latest == expected.latest, kind  # the newest by default


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_rows_without_a_privacy_unit_are_each_their_own_person_in_every_engine(tmp_path, spark_session):
    """A missing privacy unit (null, or the empty text of a Parquet column) is a person of its own in pandas,
    DuckDB and Spark: every such row is kept. ``PARTITION BY`` pooled them as one person and kept m of them, so one
    person's id going missing dropped another person's row (the published n moved)."""
    frame = pd.DataFrame(
        {
            "pid": ["a", "a", "a", None, None, "", "", "b"],
            "state": ["CO", "TX", "CO", "CO", "TX", "TX", "CO", "TX"],
            "wage": [10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0],
        }
    )
    frame.to_parquet(tmp_path / "units.parquet", index=False)
    frame.to_csv(tmp_path / "units.csv", index=False)  # None and "" both an empty field
    spec = EngineSpec("wage", ("state",), privacy_unit="pid", max_rows_per_person=2, bounding_seed=3)
    for name in ("units.parquet", "units.csv"):
        sums = {}
        for engine in ("pandas", "duckdb", "spark"):
            with open_engine(engine, parse_source(str(tmp_path / name)), spec) as eng:
                sums[engine] = eng.sums(["state"], 0.0, 100.0).sort_values("state").reset_index(drop=True)
        # 'a' keeps 2 of its 3 rows, 'b' its one, each of the 4 rows without an id is kept: 7 rows
        assert int(sums["pandas"]["n"].sum()) == 7, name
        pd.testing.assert_frame_equal(sums["duckdb"], sums["pandas"], check_dtype=False)
        pd.testing.assert_frame_equal(sums["spark"], sums["pandas"], check_dtype=False)
    # whether a source has a row at all (asked before the charge when a statistic's cells are empty): every engine
    frame.iloc[:0].to_parquet(tmp_path / "none.parquet", index=False)
    for engine in ("pandas", "duckdb", "spark"):
        for name, rows in (("units.csv", True), ("none.parquet", False)):
            with open_engine(engine, parse_source(str(tmp_path / name)), spec) as eng:
                assert eng.has_rows() is rows, (engine, name)


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_spark_agrees_on_a_few_odd_files(tmp_path, spark_session):
    """Spark gives the same message or the same tables as pandas on the odd files (CSV layout, column
    types, strict rows; the full matrix of pandas and DuckDB is in test_engine_inputs)."""
    from test_engine_inputs import CASES, assert_same_outcome, outcome, write_input_files

    files = write_input_files(str(tmp_path), SPARK_ODD_FILES)
    for name in SPARK_ODD_FILES:
        assert_same_outcome(name, CASES[name][1], {e: outcome(e, files[name]) for e in ("pandas", "spark")})


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_spark_keeps_missing_values_in_n(tmp_path, spark_session):
    """A missing income and outcome keep their row in n in Spark too (test_missing_values, on this session)."""
    from test_missing_values import spark_case

    spark_case(tmp_path)


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_spark_declared_and_selected_cells_match_pandas(tmp_path, spark_session):
    """Declared keys and DP-selected cells with Spark equal pandas' tables (test_keys, on this session)."""
    from test_keys import spark_keys_case

    spark_keys_case(tmp_path)


# ---------------------------------------------------------------------------------------------
# Contribution bounding (privacy_unit, max_rows_per_person)
# ---------------------------------------------------------------------------------------------


def _expected_kept(df: pd.DataFrame, m: int, seed: int, key_columns) -> pd.DataFrame:
    df = df.copy()  # every row, a missing income included (its key part is skipped, as SQL's concat_ws)

    def md5(parts):
        return hashlib.md5("|".join(p for p in parts if p is not None).encode()).hexdigest()

    def keys(row):
        cells = [str(seed), row["person"], *[None if pd.isna(row[c]) else str(row[c]) for c in key_columns]]
        cents = None if pd.isna(row["earnings"]) else str(int(math.floor(min(max(row["earnings"], -1e15), 1e15) * 100)))
        return md5(cells), md5(cells + [cents, str(int(row["employed"]))])

    df["k1"], df["k2"] = zip(*df.apply(keys, axis=1), strict=True)
    return df.sort_values(["person", "k1", "k2"]).groupby("person").head(m)


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
@pytest.mark.parametrize("m", [1, 3])
def test_bounding_keeps_the_seeded_sample(data_dir, engine, m):
    df = make_frame()
    plan = plan_from_dict(plan_dict(privacy_unit="person", max_rows_per_person=m, bounding_seed=4))
    spec = EngineSpec.from_plan(plan)
    kept = _expected_kept(df, m, 4, spec.key_columns)
    assert kept.groupby("person").size().max() <= m
    with open_engine(engine, parse_source(str(data_dir / "data.parquet")), spec) as eng:
        sums = eng.sums(["state"], 0, 500_000)
    expected = kept.groupby(kept["state"].fillna("~"))["earnings"].agg(
        n="size", s=lambda x: int(np.floor(np.clip(x.fillna(0), 0, 500_000) * 100 + 0.5).sum())
    )
    got = sums.assign(state=sums["state"].fillna("~")).set_index("state")
    assert got["n"].to_dict() == expected["n"].to_dict()
    assert {k: int(v) for k, v in got["sum_cents"].items()} == expected["s"].to_dict()
    # another bounding seed keeps other rows (same counts per person, other incomes)
    plan2 = plan_from_dict(plan_dict(privacy_unit="person", max_rows_per_person=m, bounding_seed=5))
    with open_engine(engine, parse_source(str(data_dir / "data.parquet")), EngineSpec.from_plan(plan2)) as eng:
        sums2 = eng.sums(["state"], 0, 500_000)
    assert int(sums2["n"].sum()) == int(sums["n"].sum())
    if m == 1:
        assert list(sums2["sum_cents"]) != list(sums["sum_cents"])


def test_one_person_changes_aggregates_within_the_calibrated_sensitivity(tmp_path):
    """Derivation check: replacing one person's (up to m) rows' values moves the histogram by <= 2m in L1
    (all cells), the clipped sum by <= m (cU - cL), the outcome counts by <= m (calibrated as 2m); the
    noise scales on the record are exactly these sensitivities / epsilon."""
    rng = np.random.default_rng(3)
    m = 3
    base = make_frame(600, seed=9)
    plan = plan_from_dict(plan_dict(privacy_unit="person", max_rows_per_person=m))
    spec = EngineSpec.from_plan(plan)
    edges = plan.statistics[0].bins
    worst = {"hist": 0, "sum": 0, "cases": 0}
    for trial in range(12):
        person = base["person"].iloc[rng.integers(len(base))]
        other = base.copy()
        rows = other.index[other["person"] == person]
        other.loc[rows, "earnings"] = rng.choice([0.0, 5e6, 12345.0], len(rows))
        other.loc[rows, "employed"] = 1 - other.loc[rows, "employed"]
        aggs = []
        for i, frame in enumerate((base, other)):
            path = tmp_path / f"n{trial}_{i}.parquet"
            frame.to_parquet(path, index=False)
            with open_engine("pandas", parse_source(str(path)), spec) as eng:
                aggs.append(
                    (
                        eng.histogram(BY3, edges),
                        eng.sums(["state"], 0, 500_000),
                        eng.outcomes(["institution"], TREATED_EMPLOYED),
                    )
                )
        (h0, s0, o0), (h1, s1, o1) = aggs
        key = BY3 + ["bin"]
        hd = h0.set_index(key)["count"].sub(h1.set_index(key)["count"], fill_value=0)
        worst["hist"] = max(worst["hist"], int(hd.abs().sum()))
        sd = np.abs(np.array(s0["sum_cents"], dtype=float) - np.array(s1["sum_cents"], dtype=float)).sum()
        worst["sum"] = max(worst["sum"], sd)
        assert list(s0["n"]) == list(s1["n"])  # cell sizes are public and unchanged by a value change
        cd = (
            (o0[["cases_exposed", "cases_reference"]] - o1[["cases_exposed", "cases_reference"]]).abs().to_numpy().sum()
        )
        worst["cases"] = max(worst["cases"], int(cd))
    assert worst["hist"] <= 2 * m and worst["sum"] <= m * 500_000 * 100 and worst["cases"] <= m
    assert worst["hist"] > 2  # the trials did move several rows: the bound is not vacuous


def test_record_noise_scales_follow_rows_per_person(data_dir, tmp_path):
    for m in (1, 4):
        top = {"privacy_unit": "person", "max_rows_per_person": m} if m > 1 else {}
        plan = plan_from_dict(plan_dict(**top))
        res = _run(plan, parse_source(str(data_dir / "data.parquet")), "pandas", tmp_path / f"m{m}")
        stats = {s["name"]: s for s in res.record["statistics"]}
        assert (
            f"scale 2m/epsilon = {2.0 * m / 1.0!r}"
            in stats["01_percentiles_by_institution_degree-level_cohort"]["noise"]
        )
        assert f"{m * 500_000 * 100:g} cents" in stats["03_mean_by_state"]["noise"]
        gini = stats["02_gini_by_state"]
        # the cell's epsilon/m is split between the value and the bound on S (dpcore.mechanisms.GiniIntervalMechanism)
        assert gini["epsilon_value"] + gini["epsilon_bound"] == pytest.approx(0.5)
        assert gini["epsilon_per_cell"] == pytest.approx(gini["epsilon_value"] / m)
        cal = noise.smooth_noise_calibration(gini["epsilon_per_cell"], 2.0, beta=gini["beta"])
        assert gini["alpha"] == cal.alpha
        assert f"by at most {2 * m} in L1" in res.record["privacy"]["what_one_person_can_change"]


# ---------------------------------------------------------------------------------------------
# Sources and errors
# ---------------------------------------------------------------------------------------------


def test_duckdb_file_source(data_dir, tmp_path):
    plan = plan_from_dict(plan_dict())
    ref = _run(plan, parse_source(str(data_dir / "data.parquet")), "duckdb", tmp_path / "ref").tables
    url = f"duckdb:///{data_dir / 'data.duckdb'}?query=SELECT * FROM earnings_table"
    for engine in ("duckdb", "pandas"):
        got = _run(plan, parse_source(url), engine, tmp_path / f"db-{engine}").tables
        _assert_same_tables(ref, got)
    got = _run(
        plan,
        parse_source(f"duckdb:///{data_dir / 'data.duckdb'}", "SELECT * FROM earnings_table WHERE true"),
        "duckdb",
        tmp_path / "db-q",
    ).tables
    _assert_same_tables(ref, got)


@pytest.fixture(scope="module")
def postgres_url(tmp_path_factory):
    from support.postgres import PostgresUnavailable, postgres_server

    try:
        with postgres_server() as url:  # system temp dir: the server user must traverse it
            yield url
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL unavailable: {exc}")


def test_postgresql_source(data_dir, tmp_path, postgres_url):
    import psycopg

    df = make_frame()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("DROP TABLE IF EXISTS earnings_table")
        conn.execute(
            "CREATE TABLE earnings_table (person text, institution text, degree_level bigint, cohort bigint, "
            "state text, earnings double precision, treated text, employed integer)"
        )
        with conn.cursor() as cur:
            cols = list(df.columns)
            rows = [
                tuple(
                    None if (isinstance(v, float) and np.isnan(v)) else (v.item() if hasattr(v, "item") else v)
                    for v in r
                )
                for r in df[cols].itertuples(index=False, name=None)
            ]
            cur.executemany("INSERT INTO earnings_table VALUES (%s, %s, %s, %s, %s, %s, %s, %s)", rows)
    plan = plan_from_dict(plan_dict())
    ref = _run(plan, parse_source(str(data_dir / "data.parquet")), "pandas", tmp_path / "ref").tables
    for engine in ("duckdb", "pandas"):
        got = _run(plan, parse_source(postgres_url, "SELECT * FROM earnings_table"), engine, tmp_path / engine)
        _assert_same_tables(ref, got.tables)
        assert "password" not in got.record["source"]
    with pytest.raises(DPInputError, match="PostgreSQL query failed"):
        _run(plan, parse_source(postgres_url, "SELECT * FROM no_such_table"), "duckdb", tmp_path / "bad")


def test_parse_source_messages(data_dir, tmp_path):
    assert parse_source(str(data_dir / "data.csv")).kind == "csv"
    assert parse_source(str(data_dir / "parts")).kind == "parquet"
    assert len(parse_source(str(data_dir / "parts" / "*.parquet")).paths) == 2
    for data, query, message in [
        (str(tmp_path / "nope.parquet"), None, "no such file"),
        ("postgresql://u@localhost/db", None, "needs --query"),
        (f"duckdb:///{data_dir / 'data.duckdb'}", None, "needs a query"),
        (str(data_dir / "data.duckdb"), None, "looks like a database"),
        (str(data_dir / "data.csv"), "SELECT 1", "--query applies to database sources"),
        ("duckdb://x.db", None, "duckdb:///relative"),
    ]:
        with pytest.raises(DPInputError, match=message):
            parse_source(data, query)


@pytest.mark.parametrize("engine", ["pandas", "duckdb"])
def test_errors_missing_column_nonnumeric_bad_outcome(tmp_path, engine):
    df = make_frame(200)
    df.to_parquet(tmp_path / "ok.parquet", index=False)
    plan = plan_from_dict(plan_dict(income="salary"))
    with pytest.raises(DPInputError, match="column 'salary' is not in the data"):
        _run(plan, parse_source(str(tmp_path / "ok.parquet")), engine, tmp_path / "out1")
    bad = df.astype({"earnings": object})
    bad.loc[10, "earnings"] = "12,5 k"
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(DPInputError, match="income column 'earnings' is not numeric: found '12,5 k'"):
        _run(plan_from_dict(plan_dict()), parse_source(str(tmp_path / "bad.csv")), engine, tmp_path / "out2")
    odd = df.astype({"employed": object})
    odd.loc[4, "employed"] = "maybe"
    odd.to_csv(tmp_path / "odd.csv", index=False)
    with pytest.raises(DPInputError, match="outcome column 'employed' has 1 value"):
        _run(plan_from_dict(plan_dict()), parse_source(str(tmp_path / "odd.csv")), engine, tmp_path / "out3")
    assert not any(tmp_path.glob("out*"))  # nothing written for a failed run


def test_unknown_engine():
    with pytest.raises(DPInputError, match="unknown engine 'polars'"):
        open_engine("polars", None, None)


def test_one_constructor_for_every_engine_and_its_options_reach_it(data_dir):
    """The engines share the base constructor (its checks before any reading, the scratch directory): an engine
    starts in ``_start`` and reads its own option from ``EngineOptions``; DuckDB's memory limit arrives."""
    from dpcore.engines.duckdb_engine import DuckDBEngine
    from dpcore.engines.pandas_engine import PandasEngine
    from dpcore.engines.spark_engine import SparkEngine

    for engine_class in (DuckDBEngine, PandasEngine, SparkEngine):
        assert "__init__" not in vars(engine_class), engine_class.__name__
    source = parse_source(str(data_dir / "data.parquet"))
    with open_engine("duckdb", source, EngineSpec("earnings", ()), memory_limit="300MB") as eng:
        assert eng.options == engines.EngineOptions(memory_limit="300MB")
        limit = eng.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]
        assert limit.replace(" ", "").upper() in ("300.0MB", "286.1MIB", "300MB")
