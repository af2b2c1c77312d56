"""The DuckDB engine gives its working memory back after the aggregates (DuckDBEngine.release_memory): the same
aggregates and the same record fingerprint afterwards, and the connection's memory is returned."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd

from dpcore.engines import EngineSpec, open_engine, parse_source
from dpcore.engines.fingerprint import source_record_fingerprints
from dpcore.percentiles import PSEO_BIN_EDGES


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as fh:
        return int(fh.read().split("VmRSS:")[1].split()[0]) / 1024


def test_release_memory_keeps_aggregates_and_fingerprint(tmp_path):
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {"earnings": np.round(rng.lognormal(10.5, 0.8, 5000)), "state": rng.choice(["CO", "TX", "WA"], 5000)}
    )
    path = tmp_path / "d.parquet"
    frame.to_parquet(path, index=False)
    source = parse_source(str(path))
    with open_engine("duckdb", source, EngineSpec("earnings", ("state",))) as eng:
        eng.prepare()
        before = eng.histogram(["state"], PSEO_BIN_EDGES)
        eng.release_memory()
        # no connection is open again until something asks (a release that asks nothing more never pays for one)
        assert eng._con is None
        assert eng.record_fingerprints((1, 2)) == source_record_fingerprints(source, (1, 2))
        after = eng.histogram(["state"], PSEO_BIN_EDGES)  # the source is read (and checked) again on demand
    pd.testing.assert_frame_equal(before, after)


def test_release_memory_returns_the_query_memory(tmp_path):
    if not os.path.exists(f"/proc/{os.getpid()}/status"):
        return
    rng = np.random.default_rng(4)
    n = 800_000
    frame = pd.DataFrame({"earnings": rng.integers(0, 10**6, n), "key": rng.integers(0, 200_000, n).astype(str)})
    path = tmp_path / "big.parquet"
    frame.to_parquet(path, index=False)
    del frame
    with open_engine("duckdb", parse_source(str(path)), EngineSpec("earnings", ("key",))) as eng:
        eng.prepare()
        eng.histogram(["key"], PSEO_BIN_EDGES)
        held = _rss_mb()
        eng.release_memory()
        freed = held - _rss_mb()
    assert freed > 20, f"closing the aggregate's connection gave back only {freed:.0f} MB of {held:.0f} MB"
