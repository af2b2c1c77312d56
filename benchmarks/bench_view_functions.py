"""Time of one call of each Gini / percentile view function (what a page's cached view call costs on a
cache miss, i.e. after a slider move), at the pages' default settings. Prints a table; not part of pytest.

    .venv/bin/python benchmarks/bench_view_functions.py [repeats]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dpcore.data import build_dataset
from dpcore.views import gini as gini_experiments
from dpcore.views import percentiles as percentile_experiments


def _time(call, repeats: int) -> tuple[float, float]:
    call()  # warm-up (imports, calibration caches)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), max(times)


def main(repeats: int = 5) -> None:
    incomes = build_dataset(None).values  # the sidebar's default: log-normal, n = 10,000
    gini_default = dict(epsilon=1.0, gamma=2.0, lower=0.0, upper=2_000_000.0)
    rows = [
        ("gini_view, default (exact bound)", lambda: gini_experiments.gini_view(incomes, **gini_default)),
        ("gini_view, fast bound", lambda: gini_experiments.gini_view(incomes, **gini_default, method="fast")),
        (
            "gini_view, DP upper bound",
            lambda: gini_experiments.gini_view(incomes, **{**gini_default, "upper": None, "upper_epsilon": 0.15}),
        ),
        ("cell_view, synthetic cell n = 200", lambda: percentile_experiments.cell_view()),
        ("cell_curves_view, n = 200", lambda: percentile_experiments.cell_curves_view()),
    ]
    if percentile_experiments.pseo_cells() is not None:
        rows.append(("many_cells_view, 300 cells", lambda: percentile_experiments.many_cells_view()))
    print(f"{'view call':45s} {'median s':>9s} {'worst s':>9s}   ({repeats} repeats)")
    for label, call in rows:
        median, worst = _time(call, repeats)
        print(f"{label:45s} {median:9.3f} {worst:9.3f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)
