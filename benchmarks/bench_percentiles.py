"""Timing figures for the percentile estimators. Prints tables; not part of pytest.

.venv/bin/python benchmarks/bench_percentiles.py [--quick]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore import percentiles as P
from dpcore.data import shared_data_path
from dpcore.views import percentiles as PX


def timeit(fn, repeat=5):
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return statistics.median(out), max(out)


def library_table():
    print("\n## dpcore.percentiles (median / worst of 5, seconds)")
    print(f"| {'operation':<62} | median | worst |")
    print(f"|{'-' * 64}|--------|-------|")
    rows = []
    for n in (200, 10_000, 1_000_000):
        x = PX.synthesize_cell_earnings(31_000, 42_000, 56_000, n, rng=1)
        rows.append((f"release_percentiles, n = {n:,}", lambda x=x: P.release_percentiles(x, epsilon=1.0, rng=2)))
        rows.append(
            (
                f"release_percentiles_smooth (tight, 3 percentiles), n = {n:,}",
                lambda x=x: P.release_percentiles_smooth(x, epsilon=1.0, rng=2),
            )
        )
        rows.append((f"release_percentiles_em, n = {n:,}", lambda x=x: P.release_percentiles_em(x, epsilon=1.0, rng=2)))
    counts = P.histogram_counts(PX.synthesize_cell_earnings(31_000, 42_000, 56_000, 500, rng=1)).counts
    rows.append(
        (
            "1,000,000 simulated releases of one cell (21 bins, 3 percentiles)",
            lambda: P.simulate_histogram_percentiles(
                counts, P.PSEO_BIN_EDGES, epsilon=1.0, q=(25, 50, 75), n_draws=1_000_000, rng=3
            ),
        )
    )
    noisy = counts + 3
    rows.append(
        (
            "credible intervals, 2,000 posterior draws",
            lambda: P.percentile_credible_intervals(noisy, P.PSEO_BIN_EDGES, epsilon_bin=0.5, n_samples=2000, rng=4),
        )
    )
    for name, fn in rows:
        med, worst = timeit(fn, 3 if "1,000,000" in name else 5)
        print(f"| {name:<62} | {med:6.3f} | {worst:5.3f} |")


def figures_table(n_cells=300):
    path = shared_data_path("pseo_earnings_co_tx.csv.gz")
    if path is None:
        print("\n(PSEO table absent: figure timings skipped)")
        return
    cells = PX.load_pseo_cells(path).sample(n_cells, random_state=1)
    vals, cell = PX.synthesize_cells(cells, rng=1)
    panel = PX.make_cell_panel(vals, cell, q=[50])
    eps = np.round(np.arange(0.1, 3.0001, 0.1), 1)
    print(f"\n## Figures 1-3 simulation, {n_cells} cells, 20 draws, 30 epsilons (seconds)")
    for label, kw in [
        ("histograms: 2 schemes x bins 10/15/20/25", dict(rivals=())),
        ("smooth sensitivity, paper + tight constants", dict(schemes=(), rivals=("smooth_paper", "smooth_tight"))),
        ("exponential mechanism", dict(schemes=(), rivals=("em",))),
    ]:
        t = time.perf_counter()
        PX.simulate_accuracy(panel, epsilons=eps, q=50, bin_counts=(10, 15, 20, 25), rng=2, **kw)
        print(f"| {label:<48} | {time.perf_counter() - t:6.2f} |")
    t = time.perf_counter()
    PX.simulate_accuracy(panel, epsilons=[1.0], q=50, bin_counts=tuple(range(10, 31)), rivals=(), rng=2)
    print(f"| {'Figure 3: bins 10..30, one epsilon':<48} | {time.perf_counter() - t:6.2f} |")


def page_table():
    from streamlit.testing.v1 import AppTest

    print("\n## AppTest reruns of app_pages/percentiles.py (seconds)")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=300)
    at.run()
    t = time.perf_counter()
    at.switch_page("app_pages/percentiles.py")
    at.run()
    print(f"| first render of the page (cold caches) | {time.perf_counter() - t:6.3f} |")
    assert not at.exception
    moves = [("perc_eps", v) for v in (0.5, 1.0, 1.5, 0.5, 2.0, 1.0)] + [("perc_bins", v) for v in (15, 20, 25, 20)]
    per_key: dict[str, list[float]] = {}
    for key, v in moves:
        t = time.perf_counter()
        at.slider(key=key).set_value(v).run()
        per_key.setdefault(key, []).append(time.perf_counter() - t)
        assert not at.exception
    for key, ts in per_key.items():
        print(f"| slider {key:<10} reruns: median {statistics.median(ts):.3f}, worst {max(ts):.3f} ({len(ts)} moves) |")


if __name__ == "__main__":
    library_table()
    if "--quick" not in sys.argv:
        figures_table()
    page_table()
