"""The Spark engine on a real Spark standalone cluster (a master and a worker from pyspark's own spark-class,
tests/support/spark_cluster.py): ``dpcore release --engine spark --master spark://...`` gives DuckDB's tables
byte for byte. The worker runs without this checkout on its PYTHONPATH (a node that never saw dpcore): the
engine must ship dpcore to its executors. Skipped, with the reason, where pyspark or Java is missing."""

from __future__ import annotations

import json
import os
import socket
import subprocess
from pathlib import Path

import pytest
from support import PYTHON, REPO_ROOT
from test_engines import SPARK_REASON, make_frame, plan_dict

from dpcore.engines import EngineSpec, execute, open_engine, parse_source
from dpcore.plan import plan_from_dict, write_plan
from dpcore.validation import DPInputError

needs_spark = pytest.mark.skipif(SPARK_REASON is not None, reason=str(SPARK_REASON))

SEED = 7


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """One master and one worker (1 core, 512 MB) for the module, stopped at the end."""
    from support.spark_cluster import SparkClusterUnavailable, spark_cluster

    try:
        with spark_cluster(tmp_path_factory.mktemp("spark-cluster")) as running:
            yield running
    except SparkClusterUnavailable as exc:
        pytest.skip(f"Spark standalone cluster unavailable: {exc}")


def _record_without_run_details(out: Path) -> dict:
    """The release record without what differs between two runs of one plan: the time, the engine's name and
    the hashes of the release cards (which print the time)."""
    record = json.loads((out / "release_record.json").read_text())
    for key in ("created", "engine"):
        record.pop(key)
    for name in ("SIMULATION_release_card.html", "SIMULATION_release_card.md"):
        record["files"].pop(name)
    return record


@needs_spark
def test_a_release_on_a_standalone_cluster_gives_duckdbs_tables(cluster, tmp_path, monkeypatch):
    """A seeded simulation of a plan with every statistic kind (the Gini's per-cell smooth sensitivity runs
    dpcore's code in the executor) and contribution bounding by person, from a relative Parquet directory (the
    driver resolves it; the executor's working directory is elsewhere): every table file equals DuckDB's."""
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir()
    frame = make_frame()
    frame.iloc[:1500].to_parquet(warehouse / "part-0.parquet", index=False)
    frame.iloc[1500:].to_parquet(warehouse / "part-1.parquet", index=False)
    plan = plan_from_dict(plan_dict(privacy_unit="person", max_rows_per_person=2, bounding_seed=11))
    write_plan(plan, tmp_path / "plan.toml")

    monkeypatch.chdir(tmp_path)  # the same relative source text in both records
    execute.run_plan(
        plan, parse_source("warehouse"), engine="duckdb", out_dir="out-duckdb", seed=SEED, public_data=True
    )
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), **cluster.driver_env}
    try:
        proc = subprocess.run(
            [PYTHON, "-m", "dpcore", "release", "plan.toml", "--data", "warehouse", "--engine", "spark"]
            + ["--master", cluster.master_url, "--seed", str(SEED), "--public-data", "--out", "out-spark", "--quiet"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
    except subprocess.TimeoutExpired as exc:  # e.g. an executor that never started: the daemons' logs say why
        pytest.fail(f"the release on the cluster did not end in 600 s: {exc.stderr!r:.3000}\n{cluster.log_tails()}")
    assert proc.returncode == 0, f"{proc.stderr[-3000:]}\n{cluster.log_tails()}"

    duck, spark = tmp_path / "out-duckdb", tmp_path / "out-spark"
    tables = sorted(p.name for p in duck.iterdir() if p.suffix in (".csv", ".parquet"))
    assert len(tables) == 2 * len(plan.statistics)
    assert sorted(p.name for p in spark.iterdir()) == sorted(p.name for p in duck.iterdir())
    for name in tables:
        assert (spark / name).read_bytes() == (duck / name).read_bytes(), name
    assert _record_without_run_details(spark) == _record_without_run_details(duck)
    assert json.loads((spark / "release_record.json").read_text())["engine"] == "spark"
    master_log = cluster.logs[0].read_text(errors="replace")
    assert "Registering app dpcore-release" in master_log  # the release ran on the cluster, not in local mode


@needs_spark
def test_a_master_that_does_not_answer_is_named_at_once(tmp_path):
    """A wrong --master (nothing listening there) is one line naming it, before Spark starts: Spark itself
    retries for a minute, prints Java stack traces and names no master."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # bound, never listening: the connection is refused
        frame = make_frame(n=30)
        frame.to_parquet(tmp_path / "data.parquet", index=False)
        url = f"spark://127.0.0.1:{port}"
        with pytest.raises(DPInputError, match=rf"^no Spark master answers at {url} \(127\.0\.0\.1:{port}: "):
            open_engine("spark", parse_source(str(tmp_path / "data.parquet")), EngineSpec("earnings", ()), master=url)
    with pytest.raises(DPInputError, match=r"is not a Spark master URL: use spark://HOST:PORT"):
        open_engine(
            "spark", parse_source(str(tmp_path / "data.parquet")), EngineSpec("earnings", ()), master="spark://db"
        )


def test_the_shipped_dpcore_zip_holds_the_package_and_is_named_by_its_content(tmp_path):
    """The zip the engine gives a cluster's executors: dpcore's modules under ``dpcore/`` (what ``zipimport``
    reads), no bytecode caches; the same files give the same bytes and name (Spark refuses a second file of
    one name with other contents on an executor)."""
    import zipfile

    import dpcore
    from dpcore.engines.spark_engine import write_package_zip

    package = Path(dpcore.__file__).parent
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = write_package_zip(package, str(tmp_path / "a")), write_package_zip(package, str(tmp_path / "b"))
    assert Path(first).name == Path(second).name and Path(first).read_bytes() == Path(second).read_bytes()
    modules = {p.relative_to(package.parent).as_posix() for p in package.rglob("*.py") if "__pycache__" not in p.parts}
    assert {"dpcore/__init__.py", "dpcore/engines/base.py"} <= modules
    assert sorted(zipfile.ZipFile(first).namelist()) == sorted(modules)
