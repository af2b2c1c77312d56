"""Cold start of the app: from `streamlit run app.py` to the first page rendered (prints a table).

Each run starts a fresh server process (nothing cached, nothing imported) and measures
  1. process start -> /_stcore/health answers,
  2. process start -> the first page is rendered in headless Chromium (title shown, script done),
     when /usr/bin/chromium and playwright are available,
  3. for comparison, a fresh Python process running the app once with AppTest (imports + script).
Target (the project's performance target): cold start to first page rendered < 3 s. No asserts: this prints.

Run: .venv/bin/python benchmarks/bench_startup.py [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from quality_support import (
    chromium_available,
    launch_chromium,
    python_executable,
    streamlit_server,
    wait_for_app_idle,
)

APPTEST_SNIPPET = """
import sys, time
t0 = time.perf_counter()
sys.path[:0] = [{root!r}, {tests!r}]
from quality_support import app_script
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(str(app_script()), default_timeout=300)
at.run()
assert not at.exception, [e.value for e in at.exception]
print(time.perf_counter() - t0)
"""


def process_cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process (Linux /proc), or None elsewhere."""
    import os

    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def one_cold_start(browser=None) -> dict:
    out = {}
    with tempfile.TemporaryDirectory(prefix="qg_start_") as tmp:
        t0 = time.perf_counter()
        with streamlit_server(Path(tmp), timeout=120) as srv:
            out["health_s"] = srv.started_in
            if browser is not None:
                context = browser.new_context()
                page = context.new_page()
                page.goto(srv.url)
                page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
                wait_for_app_idle(page, timeout_ms=120_000)
                # wait_for_app_idle ends with a 0.4 s quiet period: not part of the start-up
                out["first_render_s"] = time.perf_counter() - t0 - 0.4
                cpu = process_cpu_seconds(srv.proc.pid)
                if cpu is not None:
                    out["server_cpu_s"] = cpu
                context.close()
    return out


def apptest_cold_run() -> float:
    code = APPTEST_SNIPPET.format(root=str(ROOT), tests=str(ROOT / "tests"))
    res = subprocess.run([python_executable(), "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise RuntimeError(res.stderr[-2000:])
    return float(res.stdout.strip().splitlines()[-1])


def measure_startup(runs: int = 3) -> dict:
    results = []
    if chromium_available():
        from playwright.sync_api import sync_playwright

        with sync_playwright() as p:
            browser = launch_chromium(p)
            for _ in range(runs):
                results.append(one_cold_start(browser))
            browser.close()
    else:
        for _ in range(runs):
            results.append(one_cold_start(None))
    apptest = [apptest_cold_run() for _ in range(runs)]
    summary = {"health_s": [r["health_s"] for r in results], "apptest_s": apptest}
    for key in ("first_render_s", "server_cpu_s"):
        if results and all(key in r for r in results):
            summary[key] = [r[key] for r in results]
    return summary


def print_table(summary: dict) -> None:
    print("\nCold start (fresh process each run; target: first page rendered < 3 s)")
    print(f"| {'what':<58} | {'median s':>8} | {'worst s':>7} | {'runs':>4} |")
    print(f"|{'-' * 60}|{'-' * 10}|{'-' * 9}|{'-' * 6}|")
    labels = {
        "health_s": "streamlit run -> /_stcore/health answers",
        "first_render_s": "streamlit run -> first page rendered in Chromium",
        "server_cpu_s": "  server CPU time used until then (load-independent)",
        "apptest_s": "fresh python -> app.py run once by AppTest (imports incl.)",
    }
    for key, label in labels.items():
        xs = summary.get(key)
        if not xs:
            print(f"| {label:<58} | {'n/a':>8} | {'n/a':>7} | {0:4d} |  (chromium not available)")
            continue
        print(f"| {label:<58} | {statistics.median(xs):8.2f} | {max(xs):7.2f} | {len(xs):4d} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print_table(measure_startup(args.runs))


if __name__ == "__main__":
    main()
