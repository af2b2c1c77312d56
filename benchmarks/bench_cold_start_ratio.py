"""Cold start of the app against a bare one-slider Streamlit app, in headless Chromium (prints a table).

Design target (the project's performance target): app cold start to first page rendered <= 1.2x a bare
one-slider Streamlit app on the same machine. Runs alternate (app, bare, app, bare, ...) so that a
change in the machine's load hits both; each run is a fresh `streamlit run` process (nothing cached,
nothing imported) and a fresh browser context, timed from Popen to the page's title rendered and the
script finished (the same end point as benchmarks/bench_startup.py, the same for both apps).

Next to the wall time, costs that a busy machine inflates less: the server process's CPU time
(user + system, from Popen to the end point: imports, start-up, the first script run), the browser
tab's main-thread task time (Chrome's Performance.getMetrics "TaskDuration": parsing the frontend,
rendering the page; wall time of the tasks, so it grows with the load too) and the CPU time of the
tab's renderer process (all its threads, from Chrome's SystemInfo.getProcessInfo: what rendering the
page cost, whatever the load). On 2 shared cores the wall-time ratio moves with the load; the CPU
columns say where the difference comes from.

``--app DIR`` (repeatable) measures other copies of the app too, in the same alternation: e.g. the
tree before a change, exported with ``git archive <commit> app.py app_pages ui dpcore .streamlit |
tar -x -C /tmp/before``, for a before/after comparison under the same load.

Run: .venv/bin/python benchmarks/bench_cold_start_ratio.py [--runs 3] [--app /tmp/before]
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
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from bench_startup import process_cpu_seconds
from quality_support import chromium_available, free_port, launch_chromium, python_executable, wait_for_app_idle

BARE_APP = 'import streamlit as st\n\nst.title("Bare app")\nst.slider("x", 0, 100, 50)\n'


class ColdStart(NamedTuple):
    wall: float  # seconds from Popen to the first page
    server_cpu: float  # the server process's CPU seconds by then
    main_thread: float  # the tab's main-thread task seconds (wall time of its tasks)
    renderer_cpu: float  # CPU seconds of the tab's renderer process during the page load


def _renderer_cpu(browser_cdp) -> dict[int, float]:
    info = browser_cdp.send("SystemInfo.getProcessInfo")["processInfo"]
    return {proc["id"]: proc["cpuTime"] for proc in info if proc["type"] == "renderer"}


def cold_start(browser, script: Path, cwd: Path) -> ColdStart:
    port = free_port()
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [
                python_executable(),
                "-m",
                "streamlit",
                "run",
                str(script),
                "--server.headless",
                "true",
                "--server.port",
                str(port),
                "--server.fileWatcherType",
                "none",
                "--browser.gatherUsageStats",
                "false",
            ],
            cwd=str(cwd),
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
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
            browser_cdp = browser.new_browser_cdp_session()
            before = _renderer_cpu(browser_cdp)
            page.goto(f"http://localhost:{port}")
            page.wait_for_selector('[data-testid="stMain"] h1', timeout=120_000)
            wait_for_app_idle(page, timeout_ms=120_000)
            elapsed = time.perf_counter() - t0 - 0.4  # wait_for_app_idle ends with a 0.4 s quiet period
            server_cpu = process_cpu_seconds(proc.pid) or float("nan")
            after = _renderer_cpu(browser_cdp)
            metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            browser_cdp.detach()
            context.close()
            renderer = sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())
            return ColdStart(elapsed, server_cpu, metrics.get("TaskDuration", float("nan")), renderer)
        finally:
            proc.terminate()
            proc.wait(timeout=20)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(
        "--app",
        action="append",
        default=[],
        type=Path,
        help="another copy of the app (a directory holding app.py) to measure in the same alternation",
    )
    args = ap.parse_args()
    if not chromium_available():
        print("chromium or playwright not available: nothing measured")
        return
    from playwright.sync_api import sync_playwright

    apps = [("app (app.py, default page)", ROOT)] + [(f"app in {path}", path.resolve()) for path in args.app]
    runs: dict[str, list[ColdStart]] = {label: [] for label, _ in apps}
    bare: list[ColdStart] = []
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory(prefix="bare_app_") as tmp, sync_playwright() as p:
        bare_script = Path(tmp) / "bare.py"
        bare_script.write_text(BARE_APP)
        browser = launch_chromium(p)
        cold_start(browser, bare_script, Path(tmp))  # warm the OS file cache and Chromium once
        for label, path in apps[1:]:
            cold_start(browser, path / "app.py", path)  # and the other trees' files
        for _ in range(args.runs):
            for label, path in apps:
                runs[label].append(cold_start(browser, path / "app.py", path))
            bare.append(cold_start(browser, bare_script, Path(tmp)))
            loads.append(os.getloadavg()[0])
        browser.close()
    print(
        f"\nCold start to first page rendered in Chromium ({args.runs} alternating runs, load average "
        f"{min(loads):.2f}-{max(loads):.2f}, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())})"
    )
    print("| what | median s | runs | server CPU s | browser main-thread s | renderer CPU s | ratio to bare |")
    print("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
    bare_wall = statistics.median(r.wall for r in bare)
    for label, results in [*runs.items(), ("bare one-slider app", bare)]:
        wall = statistics.median(r.wall for r in results)
        print(
            f"| {label} | {wall:.2f} | {', '.join(f'{r.wall:.2f}' for r in results)} | "
            f"{statistics.median(r.server_cpu for r in results):.2f} | "
            f"{statistics.median(r.main_thread for r in results):.2f} | "
            f"{statistics.median(r.renderer_cpu for r in results):.2f} | {wall / bare_wall:.2f} |"
        )
    print("(medians; the target is the first row's ratio <= 1.2)")


if __name__ == "__main__":
    main()
