"""Cell keys with the Spark engine (one case: the key handling runs on the engines' aggregates, so Spark's cell
labels must map to the same text keys as pandas'): declared keys and DP selection give pandas' tables exactly."""
from __future__ import annotations

import os
import sys

import pytest

from dpcore.engines import execute, parse_source
from dpcore.plan import plan_from_dict
from test_engines import SPARK_REASON, SPARK_TEST_CONFIG, _stop_spark_jvm
from test_keys import base_frame, raw_plan


@pytest.fixture(scope="module")
def spark_session():
    from pyspark.sql import SparkSession

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    os.environ["PYTHONPATH"] = os.pathsep.join([root, *paths])
    builder = SparkSession.builder.master("local[1]").appName("dpcore-keys-tests")
    for key, value in SPARK_TEST_CONFIG.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    try:
        yield spark
    finally:
        spark.stop()
        _stop_spark_jvm()


@pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))
def test_spark_declared_and_selected_cells_match_pandas(tmp_path, spark_session):
    df = base_frame(n=1200)
    df.loc[0, "state"] = "WY"           # a one-person cell: dropped (not declared) / not selected
    df["level"] = (df.index % 2) + 1    # an integer cell column: keys declared as integers
    df.to_parquet(tmp_path / "data.parquet", index=False)
    for name, extra in [("declared", {"keys": {"state": ["CO", "TX", "AK"], "level": [1, 2]}}), ("selected", {})]:
        raw = raw_plan(**extra, n_epsilon=1.0)
        raw["statistics"][0]["by"] = ["state", "level"]
        plan = plan_from_dict(raw)
        tables = {}
        for engine in ("pandas", "spark"):
            result = execute.run_plan(plan, parse_source(str(tmp_path / "data.parquet")), engine=engine,
                                      out_dir=tmp_path / f"{name}-{engine}", seed=7, public_data=True)
            tables[engine] = result.tables
        for stat in tables["pandas"]:
            a = tables["pandas"][stat].reset_index(drop=True)
            b = tables["spark"][stat].reset_index(drop=True)
            assert a.astype(str).equals(b.astype(str)), stat
        cells = tables["spark"]["01_percentiles_by_state_level"]
        expected = 6 if name == "declared" else 4  # AK x {1, 2} listed only when declared; WY never
        assert len(cells) == expected and "WY" not in set(cells["state"])
