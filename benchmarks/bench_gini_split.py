"""Cold cost of the Gini split optimiser and of the Gini page's first view at a new epsilon (prints tables).

Run: .venv/bin/python benchmarks/bench_gini_split.py [--quick]
     .venv/bin/python benchmarks/bench_gini_split.py --write-table   (rewrites dpcore/gini_split_table.py)

1. dpcore.intervals.optimise_gini_split, each case in a fresh process (nothing remembered: no calibration, no
   planning profile), the shipped table bypassed: CPU seconds of the search alone.
2. dpcore.views.gini.gini_view at the page's defaults (10,000 records, L = 0, U = 1,000,000, gamma 2) in a
   fresh process with an empty split cache (DPCORE_CACHE_DIR), after the page's own warm-up of its slider's
   calibrations: what a first visit at that epsilon waits for (the split comes from the shipped table).
CPU seconds are reported beside wall seconds: the 2-core machine is shared, wall time follows its load.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dpcore.defaults import GINI_EPSILON_STEPS

QUICK = "--quick" in sys.argv
TABLE = ROOT / "dpcore" / "gini_split_table.py"

#: the Gini page's epsilon slider (dpcore.defaults.GINI_EPSILON_STEPS; a test checks the table covers it)
PAGE_EPSILONS = GINI_EPSILON_STEPS
#: the noises a Gini is released with an interval for (dpcore.views.gini.PUBLISHED_NOISES)
PAGE_NOISES = ("cauchy", "laplace")

_SEARCH = """
import json, sys, time
from dpcore.intervals import gini_split as intervals_gini_split
args = json.loads(sys.argv[1])
t, c = time.perf_counter(), time.process_time()
plan = intervals_gini_split._optimise(intervals_gini_split.shipped_split_key(*args), None, None)
print(json.dumps([time.process_time() - c, time.perf_counter() - t, plan.epsilon_bound, plan.beta]))
"""

_VIEW = """
import json, sys, time
from dpcore.data import build_dataset
from dpcore.views import gini as gini_experiments
eps, noise, grid = json.loads(sys.argv[1])
ds = build_dataset(None)
gini_experiments.calibrate_epsilons(grid, gamma=2.0, noise=noise)  # the page's warm-up (app_pages/gini.py)
t, c = time.perf_counter(), time.process_time()
view = gini_experiments.gini_view(ds.values, epsilon=eps, gamma=2.0, lower=0.0, upper=1_000_000.0, noise=noise,
                                  n=ds.n, seed=2026)
print(json.dumps([time.process_time() - c, time.perf_counter() - t, view.published.epsilon_bound]))
"""


def page_defaults(eps: float, noise: str) -> tuple:
    """The checked arguments of dpcore.intervals.gini_split.shipped_split_key at the Gini page's defaults."""
    from dpcore import defaults
    from dpcore.data import DEFAULT_RECIPE
    from dpcore.noise import smooth as smooth_noise
    from dpcore.views import gini as gini_experiments

    delta = None if noise == "cauchy" else smooth_noise.DEFAULT_DELTA
    return (
        float(eps),
        delta,
        noise,
        int(DEFAULT_RECIPE["n"]),
        0.0,
        float(defaults.INCOME_UPPER),
        float(gini_experiments.PUBLISHED_LEVEL),
        "pivot",
        2.0,
        "tight",
    )


def _run(code: str, arg: object, env: dict | None = None) -> list:
    out = subprocess.run(
        [sys.executable, "-c", code, json.dumps(arg)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_search() -> None:
    cases = [
        (1.0, None, "cauchy", 500, 0.0, 1e6),
        (0.05, None, "cauchy", 2000, 0.0, 2e6),
        (0.5, None, "cauchy", 10000, 0.0, 1e6),
        (4.0, None, "cauchy", 121, 0.0, 1e6),
        (1.0, 1e-6, "laplace", 500, 0.0, 1e6),
        (1.0, 1e-6, "laplace", 10000, 0.0, 1e6),
    ]
    print("\n1. optimise_gini_split, fresh process, shipped table bypassed")
    print("epsilon  noise    n       cpu s  wall s  epsilon_bound  beta")
    for eps, delta, noise, n, lo, hi in cases[: 3 if QUICK else None]:
        cpu, wall, eb, beta = _run(_SEARCH, [eps, delta, noise, n, lo, hi, 0.95, "pivot", 2.0, "tight"])
        print(f"{eps:<8g} {noise:<8} {n:<7d} {cpu:6.2f}  {wall:6.2f}  {eb:<13.4g}  {beta:.4g}")


def bench_view() -> None:
    print("\n2. the Gini page's view at its defaults, fresh process, empty split cache")
    print("epsilon  noise    cpu s  wall s")
    for eps in (0.5,) if QUICK else (0.25, 0.5, 1.0, 2.0):
        for noise in PAGE_NOISES:
            with tempfile.TemporaryDirectory() as cache:
                cpu, wall, _ = _run(_VIEW, [eps, noise, list(PAGE_EPSILONS)], {"DPCORE_CACHE_DIR": cache})
            print(f"{eps:<8g} {noise:<8} {cpu:6.2f}  {wall:6.2f}")


def write_table() -> None:
    """Search every entry afresh and rewrite dpcore/gini_split_table.py (public inputs only)."""
    from dpcore.intervals import gini_split as intervals_gini_split

    lines = []
    for noise in PAGE_NOISES:
        for eps in PAGE_EPSILONS:
            args = page_defaults(eps, noise)
            inputs = intervals_gini_split.shipped_split_key(*args)
            plan = intervals_gini_split._optimise(inputs, None, None)
            key = tuple(inputs)  # written as a plain tuple, as the table's keys are
            value = {
                k: getattr(plan, k)
                for k in ("epsilon_value", "epsilon_bound", "beta", "eta", "model_width", "model_oracle_width")
            }
            pairs = [f"{k!r}: {v!r}" for k, v in value.items()]  # two per line: lines stay under 120 characters
            body = ",\n         ".join(", ".join(pairs[i : i + 2]) for i in range(0, len(pairs), 2))
            lines.append(f"    {key!r}:\n        {{{body}}},")
            print(key, value["epsilon_bound"], value["beta"], flush=True)
    text = TABLE.read_text(encoding="utf-8")
    head = text[: text.index("SPLITS: dict[tuple, dict[str, Any]] = {")]
    TABLE.write_text(head + "SPLITS: dict[tuple, dict[str, Any]] = {\n" + "\n".join(lines) + "\n}\n", encoding="utf-8")


if __name__ == "__main__":
    if "--write-table" in sys.argv:
        write_table()
    else:
        bench_search()
        bench_view()
