"""Slider-change latency of every page (AppTest reruns at default settings; prints a table).

For each page of app.py's PAGES list: open it, then move its main slider (the epsilon slider when
there is one) one step up / down, alternately, and time ``AppTest.run()``; ``--repeats`` reruns per
page. Reports the first rerun (cold caches for that value), the median and the worst.
Target (the project's performance target): median < 0.2 s, worst < 0.5 s. No asserts: this prints.

Run: .venv/bin/python benchmarks/bench_pages.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from quality_support import discover_pages, main_slider, move_slider, open_page


def measure_page(page, repeats: int = 15) -> dict:
    """Times of ``repeats`` reruns after a main-slider move on ``page`` (seconds)."""
    t0 = time.perf_counter()
    at = open_page(page, timeout=300)
    open_s = time.perf_counter() - t0
    knob = main_slider(at)
    label = knob.label if knob is not None else "(no slider: plain rerun)"
    times, cpu, errors = [], [], [e.value for e in at.exception]
    for _ in range(repeats):
        knob = main_slider(at)
        if knob is not None:
            move_slider(knob)
        t, c = time.perf_counter(), time.process_time()
        at.run()
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
        errors += [e.value for e in at.exception]
    return {
        "page": page.name,
        "slider": label,
        "open_s": open_s,
        "times": times,
        "first": times[0],
        "median": statistics.median(times),
        "worst": max(times),
        "cpu_median": statistics.median(cpu),
        "errors": errors,
    }


def measure_pages(repeats: int = 15) -> list[dict]:
    return [measure_page(pg, repeats) for pg in discover_pages()]


def print_table(rows: list[dict]) -> None:
    print("\nSlider change latency per page (AppTest rerun, default settings; target median < 0.2 s, worst < 0.5 s)")
    print(
        "(wall-clock times; 'CPU s' is the process CPU time of the median rerun, which does not "
        "grow when other jobs share the machine)"
    )
    print(
        f"| {'page':<12} | {'main slider':<34} | {'open s':>7} | {'first s':>7} | {'median s':>8} | "
        f"{'worst s':>7} | {'CPU s':>6} | {'runs':>4} | meets |"
    )
    print(f"|{'-' * 14}|{'-' * 36}|{'-' * 9}|{'-' * 9}|{'-' * 10}|{'-' * 9}|{'-' * 8}|{'-' * 6}|{'-' * 7}|")
    for r in rows:
        ok = "yes" if r["median"] < 0.2 and r["worst"] < 0.5 and not r["errors"] else "NO"
        print(
            f"| {r['page']:<12} | {r['slider'][:34]:<34} | {r['open_s']:7.2f} | {r['first']:7.3f} | "
            f"{r['median']:8.3f} | {r['worst']:7.3f} | {r['cpu_median']:6.3f} | {len(r['times']):4d} | {ok:<5} |"
        )
        if r["errors"]:
            print(f"|   errors on {r['page']}: {r['errors'][:2]}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    print_table(measure_pages(args.repeats))


if __name__ == "__main__":
    main()
