"""Timings of the planner: dpcore solvers and the page (AppTest reruns). Prints tables; no asserts.

Run from the repository root:  .venv/bin/python benchmarks/bench_planner.py
The load average is printed too: on a shared 2-core machine the numbers scale with it.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))


from dpcore import ledger as L
from dpcore import planner as P
from dpcore import release as R
from dpcore.data import lognormal_incomes
from ui.planner import sections as planner_sections


def timed(fn, repeat: int = 1) -> tuple[float, object]:
    out, times = None, []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def bench_dpcore() -> None:
    print("\n## dpcore.planner: smallest epsilon per statistic (cold = new object, warm = cached per-eps work)")
    print(f"{'statistic':<40} {'n':>9} {'cold s':>8} {'warm s':>8} {'epsilon':>10}")
    for n in (10_000, 115_777):
        x = lognormal_incomes(n, sigma=0.9, rng=1)
        g = P.planning_groups(n, seed=1)
        for kind, params, tol, conf in [
            ("gini", {"upper": 1e6}, 0.10, 0.90),
            ("percentiles", {}, 0.10, 0.90),
            ("group_means", {"upper": 5e5}, 0.05, 0.95),
            ("ratio", {"threshold": 20_000.0}, 0.10, 0.95),
            ("mean", {"upper": 5e5}, 0.05, 0.95),
            ("count", {"threshold": 1e5}, 0.05, 0.95),
        ]:
            target = P.AccuracyTarget(tol, conf)
            t_build, stat = timed(lambda: P.make_statistic(kind, x, g, **params))
            t_cold, sol = timed(lambda: P.solve_epsilon(stat, target))
            t_warm, _ = timed(lambda: P.solve_epsilon(stat, P.AccuracyTarget(tol * 1.2, conf)))
            print(f"{stat.name[:40]:<40} {n:>9,} {t_build + t_cold:>8.3f} {t_warm:>8.3f} {sol.epsilon:>10.4g}")


_HALF_WIDTH_RUN = """
import json, sys, time
from dpcore import planner as P
from dpcore.intervals import gini_split
from dpcore.data import lognormal_incomes
from dpcore.views import planner as planner_views
import dpcore.views.gini, pandas, scipy.optimize  # imports out of the timing
calls = []
search = gini_split._optimise
gini_split._optimise = lambda *a, **k: calls.append(a[0].epsilon) or search(*a, **k)
if sys.argv[1] == "off":
    planner_views._shipped_gini_epsilons = lambda stat, level: []
stat = P.make_statistic("gini", lognormal_incomes(10_000, sigma=0.9, rng=2026), None, upper=1e6)
t = time.perf_counter()
sol = planner_views.solve_epsilon_for_half_width(stat, planner_views.HalfWidthTarget(0.01))
print(json.dumps([time.perf_counter() - t, len(calls), sol.epsilon]))
"""


def bench_half_width() -> None:
    """A first half-width plan of the default Gini (n = 10,000, U = 1e6, ±0.01 Gini points), each in a fresh process
    and a new split cache, with and without the bracket on the shipped splits (alternating, same run)."""
    import json
    import subprocess
    import tempfile

    print("\n## dpcore.views.planner: a first half-width plan of the Gini (fresh process, empty split cache)")
    for bracket in ("on", "off", "on", "off"):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, DPCORE_CACHE_DIR=cache, PYTHONPATH=str(REPO))
            out = subprocess.run(
                [sys.executable, "-c", _HALF_WIDTH_RUN, bracket], env=env, capture_output=True, text=True, check=True
            )
        seconds, optimisations, epsilon = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"bracket {bracket:<3}: {seconds:6.2f} s, {optimisations} split optimisations, ε = {epsilon:.6g}")


def bench_release() -> None:
    print("\n## dpcore.release: one real release (OpenDP and the certified sampler) of the four default statistics")
    x = lognormal_incomes(10_000, sigma=0.9, rng=2)
    g = P.planning_groups(x.size, seed=2)
    stats = [
        P.make_statistic(k, x, g, **p)
        for k, p in [
            ("gini", {"upper": 1e6}),
            ("percentiles", {"n_sims": 200}),
            ("group_means", {"upper": 5e5}),
            ("ratio", {"threshold": 20_000.0}),
        ]
    ]
    account = L.init_ledger(f"sqlite:///{tempfile.mkdtemp()}/ledger.db").account("bench", cap_epsilon=1000.0)
    t, _ = timed(lambda: R.make_release([(s, 0.5) for s in stats], account), repeat=3)
    print(f"release of 4 statistics: {t:.3f} s (best of 3; includes the certified Gini calibration)")


def bench_page() -> None:
    from streamlit.testing.v1 import AppTest

    print("\n## app_pages/planner.py (AppTest), default settings; only the chosen view is computed")
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=600)
    at.run()
    at.switch_page("app_pages/planner.py")
    t, _ = timed(lambda: at.run())
    print(f"first render (cold caches): {t:.2f} s")
    reruns = [timed(lambda: at.run())[0] for _ in range(10)]
    print(f"plain rerun: median {statistics.median(reruns):.3f} s, worst {max(reruns):.3f} s (10 reruns)")
    # (view, widget kind, key, value): the sliders of each view, visited in turn
    moves = [
        (None, "number_input", "planner_gini_err", 0.012),
        (None, "number_input", "planner_gini_err", 0.01),
        (None, "slider", "planner_percentiles_conf", 91),
        (None, "slider", "planner_percentiles_conf", 90),
        (None, "slider", "planner_group_means_tol", 6),
        (None, "slider", "planner_ratio_conf", 96),
        (None, "slider", "planner_total", 3.0),
        (planner_sections.BUDGET.heading, "slider", "planner_eps_gini", 1.0),
        (None, "slider", "planner_total", 2.0),
        (planner_sections.RISK.heading, "slider", "planner_risk_eps", 2.0),
        (None, "slider", "planner_prior", 5.0),
    ]
    print(f"{'slider':<28} {'value':>7} {'rerun s':>8} {'CPU s':>7}")
    times, cpu = [], []
    for view, kind, key, value in moves:
        if view is not None:
            at.radio(key="planner_view").set_value(view).run()
        widget = getattr(at, kind)(key=key).set_value(value)
        c = time.process_time()
        t, _ = timed(lambda: widget.run())
        times.append(t)
        cpu.append(time.process_time() - c)
        print(f"{key:<28} {value:>7} {t:>8.3f} {cpu[-1]:>7.3f}")
    print(
        f"slider changes: median {statistics.median(times):.3f} s (CPU {statistics.median(cpu):.3f} s), "
        f"worst {max(times):.3f} s"
    )
    errors = [e.value for e in at.exception] + [e.value for e in at.error]
    print("errors:", errors or "none")


if __name__ == "__main__":
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)")
    bench_dpcore()
    bench_half_width()
    bench_release()
    bench_page()
    print(f"\nload average at end: {os.getloadavg()[0]:.1f}")
