"""Real-release noise on 1 thread against every core: wall and CPU seconds of dpcore.noise.secure's draws.

Draws the discrete Laplace (the percentiles histogram: 28,600 cells x 21 bins = 600,600 counts at 10M
rows of benchmarks/make_pseo_like.py) and the float Laplace (sums) with ``threads=1`` and with the
default (every core this process may use), alternating runs, and prints the medians with the load
average (the machine may be shared: a busy machine hides the speed-up, the CPU column shows whether the
threads ran side by side: CPU > wall). The old path, a Python list handed to one OpenDP call, is timed
too ("list, 1 call").

Run: .venv/bin/python benchmarks/bench_noise_cores.py [--counts 600600] [--reals 28600] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore.noise import secure as secure_noise
from dpcore.noise.guarantees import load_opendp


def timed(fn) -> tuple[float, float]:
    t0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - t0, time.process_time() - c0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--counts", type=int, default=600_600, help="discrete Laplace draws (histogram counts)")
    ap.add_argument("--reals", type=int, default=28_600, help="float Laplace draws (sums)")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    counts = np.random.default_rng(0).integers(0, 500, args.counts).astype(np.int64)
    reals = np.random.default_rng(1).uniform(0, 1e9, args.reals)
    scale = 2.0 * 3 / 1.0  # the example plan's percentiles: 2m/epsilon with m = 3 rows per person
    dp = load_opendp()
    list_meas = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T="i64")), dp.l1_distance(T="i64"), scale=scale)
    cases = {
        "counts, list, 1 call": lambda: list_meas([int(v) for v in counts]),
        "counts, numpy, 1 thread": lambda: secure_noise.release_integer_counts(counts, scale=scale, threads=1),
        "counts, numpy, every core": lambda: secure_noise.release_integer_counts(counts, scale=scale),
        "reals, numpy, 1 thread": lambda: secure_noise.release_real_values(reals, scale=1e5, threads=1),
        "reals, numpy, every core": lambda: secure_noise.release_real_values(reals, scale=1e5),
    }
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
    for _ in range(args.repeat):
        for name, fn in cases.items():
            load = os.getloadavg()[0]
            wall, cpu = timed(fn)
            results[name].append((wall, cpu, load))
            print(f"{name:28s} wall {wall:6.2f} s  CPU {cpu:6.2f} s  load {load:.1f}", flush=True)
    threads = secure_noise.noise_threads(args.counts)
    print(
        f"\n{args.counts:,} counts, {args.reals:,} reals; every core = {threads} thread(s) "
        f"({os.cpu_count()} cores); medians of {args.repeat}"
    )
    print("| draw | wall (s) | CPU (s) | load avg (1 min) |")
    print("| --- | --- | --- | --- |")
    for name, rows in results.items():
        print(
            f"| {name} | {statistics.median(r[0] for r in rows):.2f} | {statistics.median(r[1] for r in rows):.2f} "
            f"| {statistics.median(r[2] for r in rows):.1f} |"
        )


if __name__ == "__main__":
    main()
