"""Timing of the DP Gini core (dpcore.gini, dpcore.bounds). Prints a table of medians.

Run: .venv/bin/python benchmarks/bench_gini.py [--repeats 5]
Targets (the project's performance targets): exact smooth sensitivity n = 115,777, eps = 0.25, gamma = 2:
< 0.5 s; n = 1,000,000: < 5 s; 1e6 simulated releases with error summary: < 0.5 s.
Data: log-normal incomes (mu 10.3, sigma 1), U = 2.5 * max, L = 0 (the paper's Section 5.1 setup).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore.bounds import dp_upper_bound
from dpcore.gini import (
    error_summary,
    gini_extremes_curve,
    release_gini,
    simulate_releases_from_scale,
    smooth_sensitivity,
)
from dpcore.noise import smooth_noise_calibration


def timeit(fn, repeats: int) -> tuple[float, float]:
    ts = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), max(ts)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    data = {n: np.round(rng.lognormal(10.3, 1.0, n)) for n in (115_777, 1_000_000)}
    cal = smooth_noise_calibration(0.25, 2.0, mode="tight")
    rows = []

    for n, x in data.items():
        U = 2.5 * float(x.max())
        for method in ("exact", "fast"):
            ss = smooth_sensitivity(x, lower=0.0, upper=U, beta=cal.beta, method=method)
            med, worst = timeit(
                lambda: smooth_sensitivity(x, lower=0.0, upper=U, beta=cal.beta, method=method), args.repeats
            )
            target = {115_777: 0.5, 1_000_000: 5.0}[n]
            rows.append(
                (
                    f"smooth_sensitivity {method}, n={n:,}, eps=0.25, gamma=2",
                    med,
                    worst,
                    f"< {target} s",
                    f"S={ss.value:.3g}, k*={ss.k_star}, k evaluated={ss.A.size - 1}",
                )
            )
        med, worst = timeit(lambda: release_gini(x, epsilon=0.25, gamma=2.0, lower=0.0, upper=U, rng=1), args.repeats)
        rows.append((f"release_gini (exact, tight), n={n:,}", med, worst, "", "incl. calibration + clipping"))

    x = data[115_777]
    U = 2.5 * float(x.max())
    med, worst = timeit(lambda: gini_extremes_curve(np.sort(x), 50, 0.0, U), args.repeats)
    rows.append(("min/max Gini curve k = 0..50, n=115,777", med, worst, "", "O(n k_max)"))

    def sim():
        r = simulate_releases_from_scale(0.52, 0.011, 2.0, 1_000_000, rng=2)
        error_summary(r - 0.52, gamma=2.0)

    med, worst = timeit(sim, args.repeats)
    rows.append(("1e6 simulated releases + error summary", med, worst, "< 0.5 s", "gamma = 2"))

    med, worst = timeit(lambda: dp_upper_bound(x, rng=3), args.repeats)
    rows.append(("dp_upper_bound (AboveThreshold), n=115,777", med, worst, "", "eps 0.075 + 0.075"))

    w = max(len(r[0]) for r in rows)
    print(f"{'what':<{w}}  {'median s':>9}  {'max s':>7}  {'target':>8}  note")
    for name, med, worst, target, note in rows:
        print(f"{name:<{w}}  {med:9.3f}  {worst:7.3f}  {target:>8}  {note}")


if __name__ == "__main__":
    main()
