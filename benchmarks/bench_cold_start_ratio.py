"""Cold start of the app against a bare one-slider Streamlit app, in headless Chromium (prints a table).

Design target (design.md section 6, issue 13): app cold start to first page rendered <= 1.2x a bare
one-slider Streamlit app on the same machine. Runs alternate (app, bare, app, bare, ...) so that a
change in the machine's load hits both; each run is a fresh `streamlit run` process (nothing cached,
nothing imported) and a fresh browser context, timed from Popen to the page's title rendered and the
script finished (the same end point as benchmarks/bench_startup.py).

Next to the wall time, two costs that a busy machine inflates less: the server process's CPU time
(user + system, from Popen to the end point: imports, start-up, the first script run) and the
browser tab's main-thread task time (Chrome's Performance.getMetrics "TaskDuration": parsing the
frontend, rendering the page). On 2 shared cores the wall-time ratio moves with the load; the CPU
columns say where the difference comes from.

Run: .venv/bin/python benchmarks/bench_cold_start_ratio.py [--runs 3]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from quality_support import chromium_available, free_port, launch_chromium, python_executable, wait_for_app_idle  # noqa: E402

from bench_startup import process_cpu_seconds  # noqa: E402

BARE_APP = 'import streamlit as st\n\nst.title("Bare app")\nst.slider("x", 0, 100, 50)\n'


def cold_start(browser, script: Path, cwd: Path) -> tuple[float, float, float]:
    """(wall seconds to the first page, server CPU seconds, browser main-thread task seconds)."""
    port = free_port()
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen([python_executable(), "-m", "streamlit", "run", str(script), "--server.headless", "true",
                                 "--server.port", str(port), "--server.fileWatcherType", "none",
                                 "--browser.gatherUsageStats", "false"],
                                cwd=str(cwd), stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            while True:
                try:
                    with urllib.request.urlopen(f"http://localhost:{port}/_stcore/health", timeout=2):
                        break
                except OSError:
                    if proc.poll() is not None:
                        log.seek(0)
                        raise RuntimeError(log.read().decode(errors="replace")[-2000:]) from None
                    time.sleep(0.05)
            context = browser.new_context()
            page = context.new_page()
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")
            page.goto(f"http://localhost:{port}")
            page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
            wait_for_app_idle(page, timeout_ms=120_000)
            elapsed = time.perf_counter() - t0 - 0.4  # wait_for_app_idle ends with a 0.4 s quiet period
            server_cpu = process_cpu_seconds(proc.pid) or float("nan")
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            context.close()
            return elapsed, server_cpu, metrics.get("TaskDuration", float("nan"))
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    if not chromium_available():
        print("chromium or playwright not available: nothing measured")
        return
    from playwright.sync_api import sync_playwright

    app, bare = [], []
    with tempfile.TemporaryDirectory(prefix="bare_app_") as tmp, sync_playwright() as p:
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text(BARE_APP)
        browser = launch_chromium(p)
        cold_start(browser, bare_script, Path(tmp))  # warm the OS file cache and Chromium once
        for _ in range(args.runs):
            app.append(cold_start(browser, ROOT / "app.py", ROOT))
            bare.append(cold_start(browser, bare_script, Path(tmp)))
        browser.close()
    print(f"\nCold start to first page rendered in Chromium ({args.runs} alternating runs, "
          f"load average {os.getloadavg()[0]:.2f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})")
    print("| what | median s | runs | server CPU s (median) | browser main-thread s (median) |")
    print("| --- | ---: | --- | ---: | ---: |")
    for label, runs in (("app (app.py, default page)", app), ("bare one-slider app", bare)):
        walls = [r[0] for r in runs]
        print(f"| {label} | {statistics.median(walls):.2f} | {', '.join(f'{x:.2f}' for x in walls)} | "
              f"{statistics.median(r[1] for r in runs):.2f} | {statistics.median(r[2] for r in runs):.2f} |")
    ratio = statistics.median(r[0] for r in app) / statistics.median(r[0] for r in bare)
    print(f"| ratio app / bare (target <= 1.2) | {ratio:.2f} | | | |")

if __name__ == "__main__":
    main()
