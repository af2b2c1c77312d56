"""Timing of the Gini page and its library parts (prints tables; not part of pytest).

Run: .venv/bin/python benchmarks/bench_gini_page.py [--quick]

1. AppTest reruns of app_pages/gini.py after each widget change at default settings
   (target: median < 0.2 s, worst < 0.5 s on the 2-core machine).
2. dpcore.posterior: one posterior, and a vectorised batch of posteriors.
3. dpcore.views.gini: Figures 1, 3, 4 at the page's default sizes, error vs epsilon.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUICK = "--quick" in sys.argv


def _table(title: str, rows: list[tuple[str, float | str, ...]], header: tuple[str, ...]) -> None:
    print(f"\n{title}")
    widths = [
        max(len(str(h)), *(len(f"{r[i]:.3f}" if isinstance(r[i], float) else str(r[i])) for r in rows))
        for i, h in enumerate(header)
    ]
    print("  ".join(str(h).ljust(w) for h, w in zip(header, widths, strict=True)))
    for r in rows:
        print(
            "  ".join((f"{v:.3f}" if isinstance(v, float) else str(v)).ljust(w) for v, w in zip(r, widths, strict=True))
        )


def bench_page() -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    t = time.perf_counter()
    at.run()
    at.switch_page("app_pages/gini.py")
    at.run()
    first = time.perf_counter() - t
    assert not at.exception, [e.value for e in at.exception]

    def timed(action) -> float:
        t0 = time.perf_counter()
        action().run()
        dt = time.perf_counter() - t0
        assert not at.exception, [e.value for e in at.exception]
        return dt

    steps = [
        ("epsilon 1 -> 0.5", lambda: at.select_slider(key="gini_eps").set_value(0.5)),
        ("epsilon 0.5 -> 0.25", lambda: at.select_slider(key="gini_eps").set_value(0.25)),
        ("epsilon 0.25 -> 2", lambda: at.select_slider(key="gini_eps").set_value(2.0)),
        ("epsilon 2 -> 1 (seen before)", lambda: at.select_slider(key="gini_eps").set_value(1.0)),
        ("gamma 2 -> 4", lambda: at.select_slider(key="gini_gamma").set_value(4.0)),
        ("gamma 4 -> 2 (seen before)", lambda: at.select_slider(key="gini_gamma").set_value(2.0)),
        ("n 10000 -> 5000", lambda: at.slider(key="gini_n").set_value(5000)),
        ("n 5000 -> 10000 (seen before)", lambda: at.slider(key="gini_n").set_value(10_000)),
        ("bound exact -> fast", lambda: at.radio(key="gini_method").set_value("fast")),
        ("bound fast -> exact", lambda: at.radio(key="gini_method").set_value("exact")),
        ("calibration tight -> paper", lambda: at.radio(key="gini_cal").set_value("paper")),
        ("calibration paper -> tight", lambda: at.radio(key="gini_cal").set_value("tight")),
        ("U 2e6 -> 1e6", lambda: at.number_input(key="gini_U").set_value(1_000_000.0)),
    ]
    rows = [("first render (cold caches)", first)]
    times = []
    for name, action in steps:
        dt = timed(action)
        times.append(dt)
        rows.append((name, dt))
    rows.append(("median of the changes", statistics.median(times)))
    rows.append(("worst change", max(times)))
    _table("Gini page: AppTest rerun after one widget change (default settings, seconds)", rows, ("change", "seconds"))


def bench_posterior() -> None:
    from dpcore.noise import GeneralizedCauchy
    from dpcore.posterior import gini_posterior, gini_posterior_batch

    rows = []
    for scale in (1e-5, 0.01, 0.3):
        t = time.perf_counter()
        for _ in range(20):
            p = gini_posterior(0.47, noise_scale=scale, gamma=2.0)
            p.interval(0.95)
            p.interval(0.95, kind="hpd")
        rows.append((f"one posterior + 2 intervals, scale {scale:g}", (time.perf_counter() - t) / 20))
    n = 2000 if QUICK else 10_000
    rel = np.random.default_rng(1).uniform(size=n) + 0.05 * GeneralizedCauchy(2.0).rvs(n, 2)
    for kind in ("equal_tail", "hpd"):
        t = time.perf_counter()
        gini_posterior_batch(rel, noise_scale=0.05, gamma=2.0, kind=kind)
        rows.append((f"batch of {n:,} posteriors ({kind})", time.perf_counter() - t))
    _table("dpcore.posterior (seconds)", rows, ("task", "seconds"))


def bench_experiments() -> None:
    from dpcore.data import lognormal_incomes
    from dpcore.views import gini as E

    x = np.minimum(lognormal_incomes(10_000, rng=1), 2e6)
    draws = 10_000 if QUICK else 100_000
    rows = []
    t = time.perf_counter()
    E.error_vs_epsilon(x, lower=0.0, upper=2e6, gamma=2.0, epsilons=(0.05, 0.1, 0.25, 0.5, 1, 2, 5), method="fast")
    rows.append(("error vs epsilon, 7 epsilons x 2 calibrations, fast bound, n = 10,000", time.perf_counter() - t))
    t = time.perf_counter()
    E.figure1(x, upper=2e6, n_releases=draws, rng=1)
    rows.append((f"Figure 1, public U, {draws:,} releases per epsilon", time.perf_counter() - t))
    t = time.perf_counter()
    E.figure1(x, upper=None, n_releases=draws, n_upper_draws=20, rng=1)
    rows.append((f"Figure 1, DP U (20 draws), {draws:,} releases per epsilon", time.perf_counter() - t))
    t = time.perf_counter()
    E.figure3(n_draws=draws, rng=1)
    rows.append((f"Figure 3, 27 settings x 2 calibrations, {draws:,} draws", time.perf_counter() - t))
    t = time.perf_counter()
    E.figure4(n_draws=draws, rng=1)
    rows.append((f"Figure 4, 16 IQs x 3 epsilons x 2 calibrations, {draws:,} draws", time.perf_counter() - t))
    _table("dpcore.views.gini (seconds; calibrations cached after first use)", rows, ("task", "seconds"))


if __name__ == "__main__":
    bench_posterior()
    bench_experiments()
    bench_page()
