"""Timings for the stratified-means part (prints tables; no asserts).

Run: .venv/bin/python benchmarks/bench_stratified.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore import coinpress as cp
from dpcore import stratified as sm
from dpcore.views import stratified as sx


def best_of(fn, repeat: int = 5) -> float:
    out = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out = min(out, time.perf_counter() - t)
    return out


def row(label: str, seconds: float) -> None:
    print(f"| {label:<66} | {seconds * 1000:>9.1f} |")


def header(title: str) -> None:
    print(f"\n### {title}\n")
    print(f"| {'what':<66} | {'ms':>9} |")
    print(f"|{'-' * 68}|{'-' * 11}|")


def core() -> None:
    header("dpcore (best of 5)")
    for n, k in [(10_000, 9), (196_967, 18), (1_000_000, 18)]:
        m = sx.gaussian_mixture(n, k, 0.3, rng=1)
        row(
            f"stratified_mean, n={n:,}, k={k}",
            best_of(lambda: sm.stratified_mean(m.values, m.groups, epsilon=1.0, clip_range=3.0, rng=1)),
        )
        row(
            f"stratified_coinpress, n={n:,}, k={k}, t=2",
            best_of(
                lambda: cp.stratified_coinpress(m.values, m.groups, rho=0.5, lower=-3, upper=3, sigma=m.sigmas, rng=1)
            ),
        )
        row(
            f"simulate_laplace_releases x1000, n={n:,}, k={k}",
            best_of(
                lambda: sx.simulate_laplace_releases(
                    m.values, m.groups, epsilon=1.0, clip_range=3.0, n_sims=1000, rng=1
                )
            ),
        )
        pw = sm.public_weights(m.groups[::2], sm.group_index(m.groups).labels)
        row(
            f"simulate_methods (5 methods) x200, n={n:,}, k={k}",
            best_of(
                lambda: sx.simulate_methods(
                    m.values,
                    m.groups,
                    epsilon=1.0,
                    clip_range=3.0,
                    lower=-3,
                    upper=3,
                    sigma=m.sigmas,
                    sigma_global=1.5,
                    public_w=pw,
                    n_sims=200,
                    rng=1,
                ),
                repeat=3,
            ),
        )
    m = sx.gaussian_mixture(1_000_000, 18, 0.3, rng=1)
    row(
        "1,000,000 simulated stratified Laplace releases, k=18 (+ error summary)",
        best_of(
            lambda: np.sqrt(
                np.mean(
                    (
                        sx.simulate_laplace_releases(
                            m.values, m.groups, epsilon=1.0, clip_range=3.0, n_sims=1_000_000, rng=1
                        ).strat_overall
                    )
                    ** 2
                )
            ),
            repeat=2,
        ),
    )
    header("paper-figure sweeps (one call each)")
    t = time.perf_counter()
    sx.synthetic_sweep("n", [2000, 4000, 6000, 8000, 10_000], runs=20, rng=1)
    row("synthetic_sweep vs n, 5 points x 20 runs x 5 methods", time.perf_counter() - t)
    t = time.perf_counter()
    sx.synthetic_sweep("k", [2, 3, 6, 9, 12, 18], runs=20, rng=1)
    row("synthetic_sweep vs k, 6 points x 20 runs", time.perf_counter() - t)


def page(quick: bool) -> None:
    from streamlit.testing.v1 import AppTest

    header("page reruns (AppTest; first run includes imports and data)")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    base = []
    for _ in range(5):
        t = time.perf_counter()
        at.run()
        base.append(time.perf_counter() - t)
    row("baseline: plain rerun of the About page (machine load reference)", statistics.median(base))
    at.switch_page("app_pages/stratified.py")
    t = time.perf_counter()
    at.run()
    row("open the page (default settings)", time.perf_counter() - t)
    times = []
    values = [0.5, 1.0, 2.0, 0.3, 1.5, 0.7, 3.0, 1.0] if not quick else [0.5, 1.0, 2.0]
    for v in values:
        t = time.perf_counter()
        at.select_slider(key="strat_eps").set_value(v).run()
        times.append(time.perf_counter() - t)
    row(f"epsilon slider change: median of {len(times)}", statistics.median(times))
    row(f"epsilon slider change: worst of {len(times)}", max(times))
    times = []
    for v in [0.5, 1.0, 2.0, 5.0, 0.3] if not quick else [0.5, 1.0]:
        t = time.perf_counter()
        at.select_slider(key="strat_eps").set_value(v).run()
        times.append(time.perf_counter() - t)
    row("epsilon slider revisits (cached): median", statistics.median(times))
    times = []
    for v in [12, 6, 18, 9] if not quick else [12, 9]:
        t = time.perf_counter()
        at.slider(key="strat_k").set_value(v).run()
        times.append(time.perf_counter() - t)
    row("k slider change (new data + simulation): median", statistics.median(times))
    row("k slider change: worst", max(times))
    times = []
    for m in ["StratCoinpress", "Global Laplace", "CoinPress", "Stratified Laplace"]:
        t = time.perf_counter()
        at.selectbox(key="strat_method").set_value(m).run()
        times.append(time.perf_counter() - t)
    row("method change: median", statistics.median(times))
    at.radio(key="strat_data").set_value("ACS 2019 excerpt").run()
    times = []
    for v in [0.5, 1.0, 2.0] if not quick else [0.5]:
        t = time.perf_counter()
        at.select_slider(key="strat_eps").set_value(v).run()
        times.append(time.perf_counter() - t)
    row("ACS view, epsilon change: median", statistics.median(times))
    assert not at.exception


if __name__ == "__main__":
    quick = "--quick" in sys.argv
    import os

    print(f"CPUs: {os.cpu_count()}, load average: {os.getloadavg()}")
    core()
    page(quick)
