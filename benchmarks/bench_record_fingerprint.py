"""Time the record fingerprint (dpcore.record_fingerprint) that attaches a source to its population.

A release reads its source once more to fingerprint every record and column: this prints that pass's
wall and CPU time per engine and fingerprint version (1: hashed row texts; 2: column codes, what a new
ledger computes; "1+2": both in one pass, what a ledger holding version-1 sources computes) for a CSV and a
Parquet file of N rows (default 1,000,000) with 6 columns, beside the size of the file.
Usage: .venv/bin/python benchmarks/bench_record_fingerprint.py [N]
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dpcore.engines import EngineSpec, open_engine, parse_source
from dpcore.engines.fingerprint import engine_record_fingerprints


def main(n: int) -> None:
    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "pid": np.arange(n),
            "income": np.round(rng.lognormal(10, 0.8, n), 2),
            "hours": rng.integers(0, 80, n),
            "state": rng.choice(["CA", "TX", "NY", "WA"], n),
            "sex": rng.choice(["f", "m"], n),
            "age": rng.integers(16, 90, n),
        }
    )
    with tempfile.TemporaryDirectory() as tmp:
        csv, parquet = Path(tmp) / "data.csv", Path(tmp) / "data.parquet"
        frame.to_csv(csv, index=False)
        frame.to_parquet(parquet)
        for path in (csv, parquet):
            size = path.stat().st_size / 1e6
            for engine in ("duckdb", "pandas"):
                for versions in ((1,), (2,), (1, 2)):
                    with open_engine(engine, parse_source(str(path)), EngineSpec("income", ())) as eng:
                        t0, c0 = time.perf_counter(), time.process_time()
                        fp = engine_record_fingerprints(eng, versions).latest
                        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                    print(
                        f"{path.suffix[1:]:8s} {size:7.1f} MB  {engine:7s} v{'+'.join(map(str, versions)):3s} "
                        f"{n:>10,} rows: {wall:6.2f} s wall, {cpu:6.2f} s CPU (this process; "
                        f"{n / wall / 1e6:.2f} M rows/s)  {fp[:12]}"
                    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
