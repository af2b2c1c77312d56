"""Peak memory (RSS) of the pandas engine on a large sparse CSV, and the time of a wide CSV in DuckDB.

    .venv/bin/python benchmarks/bench_engine_memory.py [--mb 400] [--tree DIR] [--wide-columns 10000]

1. Writes a sparse CSV of about ``--mb`` megabytes (3 columns the plan reads, 24 mostly empty ones),
   then, in a fresh subprocess per run, reads it with the pandas engine and computes a histogram, clipped
   sums and the Gini inputs by one cell column; prints the subprocess's peak RSS (``ru_maxrss``).
2. Writes a CSV of ``--wide-columns`` columns (2,000 rows) and times ``prepare`` + one aggregate on it
   in DuckDB and pandas.

``--tree DIR`` imports dpcore from another checkout (e.g. ``git archive HEAD~3 dpcore | tar -x -C /tmp/old``)
to compare before and after in one run. Not part of pytest (no timed tests).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r"""
import resource, sys, time
sys.path.insert(0, {tree!r})
from dpcore.engines import EngineSpec, open_engine, parse_source
from dpcore.plan import plan_from_dict
plan = plan_from_dict({{"version": 1, "dataset": "bench", "income": "earnings", "cap_epsilon": 3.0, "cell_sizes": "public",
    "statistics": [{{"kind": "percentiles", "by": ["state"], "epsilon": 1.0}},
                   {{"kind": "mean", "by": ["state"], "epsilon": 1.0, "lower": 0, "upper": 500000}},
                   {{"kind": "gini", "by": ["state"], "epsilon": 1.0, "lower": 0, "upper": 2000000}}]}})
start = time.perf_counter()
with open_engine({engine!r}, parse_source({path!r}), EngineSpec.from_plan(plan)) as eng:
    eng.histogram(["state"], plan.statistics[0].bins)
    eng.sums(["state"], 0, 500000)
    additive = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    eng.gini_inputs(["state"], 0, 2e6, 0.1)
print(additive, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, time.perf_counter() - start)
"""


def write_sparse_csv(path: str, megabytes: float, seed: int = 7) -> int:
    """A sparse CSV: earnings, state, employed and 24 filler columns, about 1 in 50 filled."""
    rng = np.random.default_rng(seed)
    fillers = 24
    header = ",".join(["earnings", "state", "employed"] + [f"f{i}" for i in range(fillers)])
    rows = 0
    with open(path, "w") as f:
        f.write(header + "\n")
        while f.tell() < megabytes * 1e6:
            n = 100_000
            earnings = np.round(rng.lognormal(10.5, 0.9, n), 2)
            states = rng.choice(["CO", "TX", "VA", "WY", "NY", "CA"], n)
            employed = rng.integers(0, 2, n)
            filled = rng.random((n, fillers)) < 0.02
            lines = []
            for i in range(n):
                extra = ",".join("x" if v else "" for v in filled[i])
                lines.append(f"{earnings[i]},{states[i]},{employed[i]},{extra}")
            f.write("\n".join(lines) + "\n")
            rows += n
    return rows


def peak_rss(tree: str, engine: str, path: str) -> tuple[float, float, float]:
    """(peak RSS MB after reading + histogram + sums, peak RSS MB after the Gini too, seconds)."""
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(tree=tree, engine=engine, path=path)],
        capture_output=True,
        text=True,
        check=True,
    )
    additive, total, seconds = out.stdout.split()[-3:]
    return float(additive), float(total), float(seconds)


def write_wide_csv(path: str, columns: int, rows: int = 2000) -> None:
    rng = np.random.default_rng(1)
    with open(path, "w") as f:
        f.write(",".join(["earnings", "state"] + [f"c{i}" for i in range(columns - 2)]) + "\n")
        filler = "," * (columns - 2)
        for _ in range(rows):
            f.write(f"{rng.lognormal(10, 1):.2f},{rng.choice(['A', 'B'])}{filler}\n")


def wide_seconds(tree: str, path: str, engine: str = "duckdb") -> float:
    code = (
        f"import sys, time; sys.path.insert(0, {tree!r})\n"
        "from dpcore.engines import EngineSpec, open_engine, parse_source\n"
        "spec = EngineSpec('earnings', ('state',))\n"
        "t = time.perf_counter()\n"
        f"with open_engine({engine!r}, parse_source({path!r}), spec) as eng:\n"
        "    eng.sums(['state'], 0, 1e6)\n"
        "print(time.perf_counter() - t)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mb",
        type=float,
        action="append",
        default=None,
        help="size(s) of the sparse CSV in MB (default 400; give two to see the growth)",
    )
    parser.add_argument(
        "--tree", action="append", default=None, help="dpcore checkout(s) to compare (default: this one)"
    )
    parser.add_argument("--wide-columns", type=int, default=10_000)
    parser.add_argument("--skip-memory", action="store_true")
    args = parser.parse_args()
    trees = args.tree or [ROOT]
    with tempfile.TemporaryDirectory(prefix="bench-engine-") as tmp:
        for size in [] if args.skip_memory else (args.mb or [400]):
            path = os.path.join(tmp, "sparse.csv")
            t = time.perf_counter()
            rows = write_sparse_csv(path, size)
            print(
                f"sparse CSV: {os.path.getsize(path) / 1e6:.0f} MB, {rows:,} rows, 27 columns "
                f"(written in {time.perf_counter() - t:.0f} s)"
            )
            for tree in trees:
                additive, total, seconds = peak_rss(tree, "pandas", path)
                print(
                    f"  pandas engine, tree {tree}: peak RSS {additive:,.0f} MB reading + histogram + sums, "
                    f"{total:,.0f} MB with the Gini (8 bytes per row of its cells), {seconds:.1f} s"
                )
            os.remove(path)
        wide = os.path.join(tmp, "wide.csv")
        write_wide_csv(wide, args.wide_columns)
        print(f"wide CSV: {args.wide_columns:,} columns x 2,000 rows, {os.path.getsize(wide) / 1e6:.0f} MB")
        for tree in trees:
            for engine in ("duckdb", "pandas"):
                print(
                    f"  {engine} engine, tree {tree}: {wide_seconds(tree, wide, engine):.2f} s "
                    "(prepare + sums by one column)"
                )


if __name__ == "__main__":
    main()
