"""The timings behind constants and choices in dpcore's code (docs/benchmarks.md, "Timings behind choices in the
code"): the code states the choice, this script measures the time that justifies it.

* cold imports a command-line release avoids by importing lazily: pandas, scipy.special, scipy.stats (each in a
  fresh interpreter that has imported numpy; dpcore.lazy, dpcore.ratio.accuracy, dpcore.posterior);
* checking a release plan, per statistic (dpcore.plan.MAX_STATISTICS);
* the planner's expected width of a percentile interval at bin-noise scales 20 and 67
  (dpcore.views.planner.widths.INTERVAL_MAX_BIN_SCALE) and of a Gini interval at epsilon 0.05 and 0.02
  (INTERVAL_MIN_GINI_EPSILON), on n = 10,000 planning incomes;
* the exact smooth sensitivity of the Gini at the Laplace log-normal's beta = LLN_BETA_FRACTION eps_c and at half
  that (dpcore.noise.smooth.lognormal.LLN_BETA_FRACTION), epsilon = 1, n = 10,000.

Run: .venv/bin/python benchmarks/bench_code_choices.py [--runs 3] [--skip-gini-interval]
Prints a table; no asserts. The machine's load average is printed with it: on the shared 2-core VM the figures
move with the other sessions' work.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np

from dpcore import gini, planner
from dpcore.data import lognormal_incomes
from dpcore.noise import smooth as smooth_noise
from dpcore.plan import plan_from_dict
from dpcore.views.planner import widths as planner_widths

IMPORT_SNIPPET = "import numpy, time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"


GINI_PLAN_SNIPPET = (
    "import time; from dpcore.mechanisms import GiniIntervalMechanism; "
    "m = GiniIntervalMechanism({eps}, 0.0, 1e6, level=0.95, planning_n=10_000); "
    "t = time.perf_counter(); m.plan; print(time.perf_counter() - t)"
)


def fresh(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter (nothing imported or cached before it)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env).stdout


def cold_import(module: str, runs: int) -> float:
    return statistics.median(float(fresh(IMPORT_SNIPPET.format(module=module))) for _ in range(runs))


def timed(fn, runs: int = 1) -> float:
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def plan_check_per_statistic(n_statistics: int) -> float:
    raw = {
        "version": 1,
        "dataset": "bench",
        "income": "income",
        "cap_epsilon": float(n_statistics),
        "cell_sizes": "public",
        "statistics": [
            {"kind": "mean", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 500_000} for _ in range(n_statistics)
        ],
    }
    return timed(lambda: plan_from_dict(raw)) / n_statistics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--skip-gini-interval", action="store_true", help="skip the Gini widths (10 s and more)")
    args = parser.parse_args()
    rows: list[tuple[str, str]] = []
    for module in ("pandas", "scipy.special", "scipy.stats"):
        rows.append((f"cold import of {module} (numpy already imported)", f"{cold_import(module, args.runs):.2f} s"))
    per = plan_check_per_statistic(1_000)
    rows.append(
        ("checking a plan, per statistic (1,000 statistics)", f"{1e3 * per:.2f} ms (x 100,000: {per * 1e5:.0f} s)")
    )

    values = lognormal_incomes(10_000, rng=2026)
    groups = planner.planning_groups(values.size, seed=0)
    cells = planner.make_statistic("percentiles", values, groups)
    for scale in (20.0, 66.7):
        eps = 2.0 / scale  # replace-one histogram: scale 2/epsilon
        # the first call at a scale (the law of the noisy cumulative counts is then kept in a cache), without the
        # planner's cut at INTERVAL_MAX_BIN_SCALE
        seconds = timed(lambda eps=eps: planner_widths._percentile_widths(cells, eps, 0.95, 0))
        rows.append((f"percentile interval width, bin-noise scale {scale:g} (epsilon {eps:.3g})", f"{seconds:.2f} s"))
    if not args.skip_gini_interval:
        for eps in (0.05, 0.02, 0.001):  # the split's optimisation, which the planner skips below epsilon 0.05
            seconds = statistics.median(float(fresh(GINI_PLAN_SNIPPET.format(eps=eps))) for _ in range(args.runs))
            rows.append((f"Gini interval plan at epsilon {eps:g} (n = 10,000; a fresh process)", f"{seconds:.1f} s"))

    xs = np.sort(np.clip(values, 0.0, 1e6))
    eps_c = math.sqrt(2.0 * smooth_noise.rho_for_approx_dp(1.0, smooth_noise.DEFAULT_DELTA))
    for fraction in (smooth_noise.LLN_BETA_FRACTION, smooth_noise.LLN_BETA_FRACTION / 2):
        beta = fraction * eps_c
        seconds = timed(lambda beta=beta: gini.smooth_sensitivity(xs, lower=0.0, upper=1e6, beta=beta), args.runs)
        rows.append(
            (f"exact Gini smooth sensitivity, beta = {fraction:g} eps_c = {beta:.3g} (epsilon 1)", f"{seconds:.2f} s")
        )

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    load = ", ".join(f"{v:.1f}" for v in os.getloadavg())
    print(f"{stamp}; {os.cpu_count()} cores; load average {load}")
    width = max(len(r[0]) for r in rows)
    for what, figure in rows:
        print(f"{what.ljust(width)}  {figure}")


if __name__ == "__main__":
    main()
