"""All quality-gate figures in one run (prints tables; no asserts): design.md section 6 and more.

  1. design.md section 6 targets, each a median over repeated runs:
     slider change (AppTest rerun, every page), exact Gini smooth sensitivity for n = 115,777 and
     n = 1,000,000 (eps = 0.25, gamma = 2), 1,000,000 simulated releases with an error summary,
     cold start to the first page rendered. A figure whose dpcore function does not exist yet is
     printed as "n/a (not yet implemented)".
  2. slider-change latency per page (benchmarks/bench_pages.py),
  3. cold start (benchmarks/bench_startup.py),
  4. peak memory of a 1,000,000-row CSV upload (benchmarks/bench_upload_memory.py).
The header names the date and the machine, so the figures can go into the README as they are.

Run: .venv/bin/python benchmarks/run_all.py [--quick] [--everything]
     --quick       fewer repetitions (about a minute less)
     --everything  also run the other benchmarks/bench_*.py scripts of the method pages
"""
from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests", ROOT / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

NA = "n/a (not yet implemented)"
MINE = {"run_all.py", "bench_pages.py", "bench_startup.py", "bench_upload_memory.py"}


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        mem = int(next(l for l in Path("/proc/meminfo").read_text().splitlines() if l.startswith("MemTotal")).split()[1])
        mem_s = f"{mem / 2**20:.0f} GB RAM"
    except (OSError, StopIteration):
        mem_s = "RAM unknown"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    import numpy
    import streamlit

    return (f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC; {cpu}; {os.cpu_count()} cores; {mem_s}; "
            f"{platform.system()} {platform.release()}; Python {platform.python_version()}, numpy "
            f"{numpy.__version__}, streamlit {streamlit.__version__}; load average at start {load:.1f}")


def timed(fn: Callable[[], object], repeats: int) -> list[float]:
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _gini_setup(n: int):
    from dpcore import gini, noise

    x = np.clip(np.random.default_rng(115_777).lognormal(10.4, 0.9, n), 0.0, 1_000_000.0)  # public [L, U]
    beta = noise.smooth_noise_calibration(0.25, 2.0, mode="tight").beta
    return gini, x, beta


def design_figures(repeats: int) -> list[tuple[str, str, list[float] | str]]:
    """(what, target, times or NA) for the dpcore figures of design.md section 6."""
    rows: list[tuple[str, str, list[float] | str]] = []
    for n, target in ((115_777, "< 0.5 s"), (1_000_000, "< 5 s")):
        what = f"exact Gini smooth sensitivity, n = {n:,}, eps = 0.25, gamma = 2"
        try:
            gini, x, beta = _gini_setup(n)
            fn = lambda: gini.smooth_sensitivity(x, lower=0.0, upper=1_000_000.0, beta=beta, method="exact")  # noqa: E731
        except (ImportError, AttributeError):
            rows.append((what, target, NA))
            continue
        fn()  # warm-up (imports, first allocation)
        rows.append((what, target, timed(fn, repeats if n < 500_000 else max(2, repeats // 2))))

    what = "1,000,000 simulated releases of one statistic + error summary"
    try:
        from dpcore import gini

        sim = gini.simulate_releases_from_scale
        summary = gini.error_summary

        def releases():
            draws = sim(0.45, 0.01, 2.0, 1_000_000, rng=np.random.default_rng(1))
            summary(draws - 0.45, gamma=2.0)

        releases()
        rows.append((what, "< 0.5 s", timed(releases, repeats)))
    except (ImportError, AttributeError):
        rows.append((what, "< 0.5 s", NA))

    what = "  same, end to end: simulate_gini_releases on n = 10,000 (S_beta once)"
    try:
        from dpcore import gini

        x = np.random.default_rng(3).lognormal(10.4, 0.9, 10_000)

        def end_to_end():
            gini.simulate_gini_releases(x, epsilon=1.0, gamma=2.0, lower=0.0, upper=1_000_000.0,
                                        n_releases=1_000_000, rng=np.random.default_rng(2))

        end_to_end()
        rows.append((what, "(context)", timed(end_to_end, repeats)))
    except (ImportError, AttributeError):
        rows.append((what, "(context)", NA))
    return rows


def print_design_table(rows, pages, startup) -> None:
    print("\nDesign targets (design.md section 6); medians over repeated runs")
    print(f"| {'what':<72} | {'target':<22} | {'median s':>8} | {'worst s':>7} | {'runs':>4} | meets |")
    print(f"|{'-' * 74}|{'-' * 24}|{'-' * 10}|{'-' * 9}|{'-' * 6}|{'-' * 7}|")

    def line(what, target, times, meets):
        if isinstance(times, str):
            print(f"| {what:<72} | {target:<22} | {times}")
            return
        print(f"| {what:<72} | {target:<22} | {statistics.median(times):8.3f} | {max(times):7.3f} | "
              f"{len(times):4d} | {meets:<5} |")

    if pages:
        meds = [p["median"] for p in pages]
        worst = max(p["worst"] for p in pages)
        ok = "yes" if max(meds) < 0.2 and worst < 0.5 else "NO"
        print(f"| {'slider change, any page, default settings (AppTest rerun)':<72} | "
              f"{'median < 0.2, worst < 0.5':<22} | {max(meds):8.3f} | {worst:7.3f} | "
              f"{sum(len(p['times']) for p in pages):4d} | {ok:<5} |  (median = slowest page's median)")
    for what, target, times in rows:
        if isinstance(times, str):
            line(what, target, times, "")
            continue
        limit = {"< 0.5 s": 0.5, "< 5 s": 5.0}.get(target)
        meets = "" if limit is None else ("yes" if statistics.median(times) < limit else "NO")
        line(what, target, times, meets)
    if startup and startup.get("first_render_s"):
        xs = startup["first_render_s"]
        line("app cold start to first page rendered (Chromium)", "< 3 s", xs,
             "yes" if statistics.median(xs) < 3 else "NO")
    elif startup:
        print(f"| {'app cold start to first page rendered':<72} | {'< 3 s':<22} | n/a (chromium not available)")


def run_other_benchmarks() -> None:
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        if script.name in MINE:
            continue
        print(f"\n===== {script.name} =====", flush=True)
        t = time.perf_counter()
        res = subprocess.run([sys.executable, str(script)], cwd=ROOT, text=True, capture_output=True, timeout=3600)
        print(res.stdout.rstrip())
        if res.returncode != 0:
            print(f"(exit code {res.returncode}: {res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ''})")
        print(f"({script.name} took {time.perf_counter() - t:.1f} s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--everything", action="store_true")
    args = ap.parse_args()
    repeats = 3 if args.quick else 7

    import bench_pages
    import bench_startup
    import bench_upload_memory

    print(f"Quality-gate benchmarks. Machine: {machine()}")
    rows = design_figures(repeats)
    pages = bench_pages.measure_pages(repeats=8 if args.quick else 15)
    startup = bench_startup.measure_startup(runs=2 if args.quick else 3)
    memory = bench_upload_memory.measure_upload_memory(1_000_000, runs=1 if args.quick else 3)

    print_design_table(rows, pages, startup)
    bench_pages.print_table(pages)
    bench_startup.print_table(startup)
    bench_upload_memory.print_table(memory)
    if args.everything:
        run_other_benchmarks()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at the end: {load:.1f} (figures taken on a busy machine are slower)")


if __name__ == "__main__":
    main()
