"""Timing of dpcore.ratio and of the ratios page (prints tables; not part of pytest).

Run: .venv/bin/python benchmarks/bench_ratio.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore import ratio as R
from ui.ratios.sections import VIEWS

P_GRID = tuple(round(0.1 * i, 1) for i in range(1, 10))


def _time(fn, repeat=5):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out), max(out)


def core() -> None:
    cases = [
        ("ratio_sample_accuracy (Claim 3.2)", lambda: R.ratio_sample_accuracy(30, 30, epsilon=1.0, alpha=0.1)),
        ("ratio_bias (Claim 3.4)", lambda: R.ratio_bias(20, 30, epsilon=1.0)),
        ("binomial_ratio_bias n=2000", lambda: R.binomial_ratio_bias(2000, 0.3, 0.2, epsilon=1.0)),
        (
            "simulate_rr_coverage 10k sims",
            lambda: R.simulate_rr_coverage(0.3, 0.2, 200, 200, epsilon=1.0, conservative=True, rng=1),
        ),
        (
            "simulate_rr_coverage 1M sims",
            lambda: R.simulate_rr_coverage(0.3, 0.2, 200, 200, epsilon=1.0, conservative=True, n_sims=1_000_000, rng=1),
        ),
        (
            "coverage_grid 9x9 x 1000 sims",
            lambda: R.coverage_grid(P_GRID, 200, 200, epsilon=1.0, conservative=True, n_sims=1000, rng=1),
        ),
        (
            "coverage_grid 9x9 x 10000 sims",
            lambda: R.coverage_grid(P_GRID, 200, 200, epsilon=1.0, conservative=True, n_sims=10_000, rng=1),
        ),
        ("simulate_rr_sampling 20k", lambda: R.simulate_rr_sampling(0.3, 0.2, 200, 200, epsilon=1.0, rng=1)),
        ("sample_accuracy_all (cached calibration)", lambda: R.sample_accuracy_all(60, 40, epsilon=1.0, n=200)),
        ("ratio_smooth_sensitivity y=10^5", lambda: R.ratio_smooth_sensitivity(50_000, 100_000, beta=0.01)),
        ("ptr_ratio (oracle proposal)", lambda: R.ptr_ratio(60, 40, epsilon=1.0, delta=0.005, rng=1)),
    ]
    R.sample_accuracy_all(60, 40, epsilon=1.0, n=200)  # warm the calibration cache
    print(f"{'dpcore.ratio call':45s} {'median s':>10s} {'worst s':>10s}")
    for name, fn in cases:
        med, worst = _time(fn)
        print(f"{name:45s} {med:10.4f} {worst:10.4f}")


def page() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("app_pages/ratios.py")
    t = time.perf_counter()
    at.run()
    print(f"\nratios page first render: {time.perf_counter() - t:.3f} s")
    print("(wall = elapsed; cpu = process CPU time, which is what the rerun costs on an idle machine)")
    print(
        f"{'view':32s} {'open wall':>10s} {'eps change: median wall':>24s} {'worst wall':>11s} "
        f"{'median cpu':>11s} {'worst cpu':>10s}"
    )
    for v in VIEWS:
        t = time.perf_counter()
        at.radio(key="ratio_view").set_value(v).run()
        first = time.perf_counter() - t
        walls, cpus = [], []
        for e in (0.5, 2.0, 0.25, 3.0, 0.1, 4.0, 8.0):  # each value new to the cache: worst case
            t, c = time.perf_counter(), time.process_time()
            at.select_slider(key="ratio_eps").set_value(e).run()
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - c)
        assert not at.exception
        print(
            f"{v:32s} {first:10.3f} {statistics.median(walls):24.3f} {max(walls):11.3f} "
            f"{statistics.median(cpus):11.3f} {max(cpus):10.3f}"
        )


if __name__ == "__main__":
    core()
    page()
