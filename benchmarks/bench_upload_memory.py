"""Peak memory of a 1,000,000-row CSV upload (prints a table).

Each measurement runs in a fresh Python process (peak RSS cannot be reset inside a process):
  * "dpcore.data": the bytes of the file go through ``dpcore.data.load_income_file`` (read_table
    + clean_income_column), what the sidebar calls;
  * "app (AppTest)": the same bytes uploaded through the sidebar's st.file_uploader in an AppTest
    of the whole app (includes st.cache_data copies and the page rendering on the upload);
  * "tracemalloc": Python/numpy allocations during load_income_file (peak of traced memory).
Reported: file size, RSS before the load, peak RSS, and the extra peak over the RSS before the
load (what one upload costs the server). The CSV is synthetic (income, group, weight).

Run: .venv/bin/python benchmarks/bench_upload_memory.py [--rows 1000000] [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

CHILD = r"""
import json, resource, sys, time
sys.path[:0] = [{root!r}, {tests!r}]
mode, path = sys.argv[1], sys.argv[2]

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")

def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

import numpy, pandas
from dpcore import data
if mode == "app":
    from quality_support import app_script, find_upload_widget
    from streamlit.testing.v1 import AppTest
    at = AppTest.from_file(str(app_script()), default_timeout=600)
    at.run()
    widget = find_upload_widget(at)
raw = open(path, "rb").read()
before, peak_before = rss_mb(), peak_mb()
t0 = time.perf_counter()
if mode == "dpcore":
    ds = data.load_income_file(raw, name="big.csv")
    n = ds.values.size
elif mode == "tracemalloc":
    import tracemalloc
    tracemalloc.start()
    ds = data.load_income_file(raw, name="big.csv")
    n = ds.values.size
    traced_peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
else:
    widget.set_value(("big.csv", raw, "text/csv"))
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    ds = at.session_state["dataset"]
    n = ds.values.size
    assert ds.source == "upload", ds.source
seconds = time.perf_counter() - t0
out = dict(mode=mode, rows=n, seconds=seconds, rss_before=before, peak_before=peak_before,
           peak_after=peak_mb(), rss_after=rss_mb())
if mode == "tracemalloc":
    out["traced_peak"] = traced_peak
print(json.dumps(out))
"""


def make_csv(rows: int, path: Path) -> float:
    g = np.random.default_rng(0)
    income = g.lognormal(10.4, 0.9, rows).round(2)
    group = g.choice(np.array(["north", "south", "east", "west"]), rows)
    weight = g.uniform(0.5, 3.0, rows).round(3)
    import pandas as pd

    pd.DataFrame({"income": income, "group": group, "weight": weight}).to_csv(path, index=False)
    return path.stat().st_size / 2**20


def run_child(mode: str, path: Path) -> dict:
    from quality_support import python_executable

    code = CHILD.format(root=str(ROOT), tests=str(ROOT / "tests"))
    res = subprocess.run(
        [python_executable(), "-c", code, mode, str(path)], cwd=ROOT, capture_output=True, text=True, timeout=1200
    )
    if res.returncode != 0:
        return {"mode": mode, "error": res.stderr.strip().splitlines()[-1] if res.stderr.strip() else "failed"}
    return json.loads(res.stdout.strip().splitlines()[-1])


def measure_upload_memory(rows: int = 1_000_000, runs: int = 3, modes=("dpcore", "app", "tracemalloc")) -> dict:
    with tempfile.TemporaryDirectory(prefix="qg_mem_") as tmp:
        path = Path(tmp) / "big.csv"
        size_mb = make_csv(rows, path)
        results = {m: [run_child(m, path) for _ in range(runs)] for m in modes}
    return {"rows": rows, "file_mb": size_mb, "results": results}


def print_table(summary: dict) -> None:
    print(
        f"\nPeak memory of one {summary['rows']:,}-row CSV upload ({summary['file_mb']:.1f} MB file); "
        "medians over fresh processes"
    )
    print(
        f"| {'path':<16} | {'load s':>7} | {'RSS before MB':>13} | {'peak MB':>8} | {'extra peak MB':>13} | "
        f"{'x file':>6} | {'runs':>4} |"
    )
    print(f"|{'-' * 18}|{'-' * 9}|{'-' * 15}|{'-' * 10}|{'-' * 15}|{'-' * 8}|{'-' * 6}|")
    for mode, rs in summary["results"].items():
        ok = [r for r in rs if "error" not in r]
        if not ok:
            print(f"| {mode:<16} | failed: {rs[0].get('error', '?')[:80]}")
            continue
        med = lambda k: statistics.median(r[k] for r in ok)
        extra = statistics.median(r["peak_after"] - r["rss_before"] for r in ok)
        if mode == "tracemalloc":
            extra = med("traced_peak")
            print(
                f"| {mode:<16} | {med('seconds'):7.2f} | {'-':>13} | {'-':>8} | {extra:13.0f} | "
                f"{extra / summary['file_mb']:6.1f} | {len(ok):4d} |  (traced Python/numpy allocations)"
            )
            continue
        print(
            f"| {mode:<16} | {med('seconds'):7.2f} | {med('rss_before'):13.0f} | {med('peak_after'):8.0f} | "
            f"{extra:13.0f} | {extra / summary['file_mb']:6.1f} | {len(ok):4d} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print_table(measure_upload_memory(args.rows, args.runs))


if __name__ == "__main__":
    main()
