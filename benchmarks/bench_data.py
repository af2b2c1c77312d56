"""Timings for data input, generators, the sidebar and the About page (prints tables; no asserts).

Run: .venv/bin/python benchmarks/bench_data.py
"""

from __future__ import annotations

import io
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore import data


def timed(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def row(label: str, seconds: float) -> None:
    print(f"| {label:<58} | {seconds * 1000:>10.1f} |")


def header(title: str) -> None:
    print(f"\n{title}\n| {'what':<58} | {'best ms':>10} |\n|{'-' * 60}|{'-' * 12}|")


def main() -> None:
    rng = np.random.default_rng(0)
    header("Reading and validating files (in memory)")
    for n in (10_000, 100_000, 1_000_000):
        frame = pd.DataFrame(
            {"id": np.arange(n), "income": rng.lognormal(10, 1, n).round(2), "group": rng.choice(["a", "b", "c"], n)}
        )
        csv = frame.to_csv(index=False).encode()
        buf = io.BytesIO()
        frame.to_parquet(buf)
        pq = buf.getvalue()
        row(f"CSV  {n:>9,} rows x 3 cols ({len(csv) / 2**20:.1f} MB)", timed(lambda: data.load_income_file(csv)))
        row(f"Parquet {n:>6,} rows x 3 cols ({len(pq) / 2**20:.1f} MB)", timed(lambda: data.load_income_file(pq)))
    cell = b"income,comment\n1," + b"x" * 10_000_000 + b"\n2,b\n"
    row("CSV with 10 MB of text in one cell", timed(lambda: data.load_income_file(cell), 1))
    row("bundled example (Engel 1857)", timed(data.load_example))
    for key in ("acs", "pseo"):
        row(f"bundled example: {key} (gzip CSV, whole file)", timed(lambda: data.load_example(key), 1))
    for key in data.SHARED_DATASETS:
        if data.shared_data_path(data.SHARED_DATASETS[key].file_name):
            row(f"shared file: {key}", timed(lambda: data.load_shared(key), 1))
    row("build_dataset(default recipe): log-normal n = 10,000", timed(lambda: data.build_dataset()))

    header("Synthetic generators")
    row("log-normal, n = 1,000,000", timed(lambda: data.lognormal_incomes(1_000_000, rng=1)))
    row(
        "Pareto-tail calibration to a Gini (Brent + quadrature)", timed(lambda: data.ParetoTailMixture.calibrated(0.45))
    )
    row(
        "Pareto-tailed, n = 1,000,000 (calibration + draws)",
        timed(lambda: data.pareto_mixture_incomes(1_000_000, gini=0.45, rng=1)),
    )
    row("two-point (Prop. 5.1), n = 1,000,000", timed(lambda: data.two_point_incomes(1_000_000, 0.5)))

    from streamlit.testing.v1 import AppTest

    header("AppTest reruns (sidebar harness: render_sidebar only)")
    at = AppTest.from_string("from ui.sidebar import render_sidebar\nrender_sidebar()\n", default_timeout=60)
    at.run()
    times = []
    for v in [1.0, 1.1, 0.9, 1.2, 0.8, 1.3, 0.7, 1.4, 0.6, 1.5]:
        t = time.perf_counter()
        at.sidebar.slider(key="data_sigma").set_value(v).run()
        times.append(time.perf_counter() - t)
    row("sigma slider (new data each time, n = 10,000) median", statistics.median(times))
    row("sigma slider worst", max(times))
    times = []
    for s in range(10):
        t = time.perf_counter()
        at.sidebar.number_input(key="seed").set_value(100 + s).run()
        times.append(time.perf_counter() - t)
    row("noise seed change (data memoised) median", statistics.median(times))
    row("noise seed change worst", max(times))

    header("AppTest reruns (About page)")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("app_pages/about.py").run()
    times = []
    for v in [0.5, 1.0, 2.0, 3.0, 0.2, 5.0, 1.5, 0.1, 8.0, 1.0]:
        t = time.perf_counter()
        at.slider(key="about_eps").set_value(v).run()
        times.append(time.perf_counter() - t)
    row("epsilon slider median", statistics.median(times))
    row("epsilon slider worst", max(times))


if __name__ == "__main__":
    main()
