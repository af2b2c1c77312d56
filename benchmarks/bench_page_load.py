"""Page load of every page against a bare one-page Streamlit app, in headless Chromium (prints a table).

Target: every page loads within 1.5x a bare Streamlit page (``st.title`` only) measured in the
same run on a warm server, and within 2x on its first visit after a server start.

What one load is: a new browser context (a new visitor: no cookies, no HTTP cache, a new Streamlit session)
opens the page's URL; the load ends when Streamlit's own script-run state (stApp's
``data-test-script-state``, the attribute Streamlit's end-to-end tests wait on) last turned ``notRunning``
and then stayed so for ``--quiet`` seconds (so a run that follows the first one, e.g. a fragment or an
``st.rerun``, is counted in). The time is read inside the page: ``performance.now()`` at that last
transition, which counts from the navigation's start; a MutationObserver installed before the page's own
scripts records every transition, so no polling interval is added. Also recorded: when the main area's first
heading appeared (the first screen; polled every 50 ms), the server process's CPU seconds during the load, and
for a first visit the server's start (its command's start to its first answer to ``/_stcore/health``): a
launcher that imports before it listens moves time there, which the table shows beside the load.

* **warm**: one server per app, every page visited once first (imports done, caches filled); then
  ``--rounds`` rounds, each loading the bare page, every page of the app(s), the bare page again.
* **first visit**: ``--first-rounds`` rounds; per round and per page a fresh ``streamlit run`` whose first
  visitor opens that page (a deep link), and a fresh bare server likewise (before every page: the ratios
  compare loads made seconds apart). The visit comes as soon as the server answers its health check, or
  ``--first-after`` seconds later (a visitor who opens the page a little after the start, while a launcher
  that warms pages after it listens has done so).

The machine is shared: ratios are taken within the same run (medians of the page over medians of the bare
page), and per round (a page's load over the bare loads of the same round), whose range is the spread.

``--app DIR`` (repeatable) measures other copies of the app too, in the same alternation: e.g. the tree
before a change, exported with ``git archive <commit> | tar -x -C /tmp/before/repo`` (a ``shared``
symlink beside it gives it ``../shared``).

Run: .venv/bin/python benchmarks/bench_page_load.py [--rounds 5] [--first-rounds 2] [--pages gini planner]
     [--app /tmp/before/repo] [--json out.json] [--write-doc]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests", ROOT / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

from bench_startup import process_cpu_seconds
from quality_support import chromium_available, discover_pages, launch_chromium, python_executable, streamlit_server

BARE_APP = 'import streamlit as st\n\nst.title("Bare app")\n'
BARE = "bare"

# Installed before the page's own scripts: every change of stApp's script-run state with its time
# (performance.now(): milliseconds since the navigation started), and the first main-area heading.
RECORDER_JS = """(() => {
    window.__dpStates = [];
    window.__dpHeadingAt = null;
    const note = (el) => {
        const state = el.getAttribute('data-test-script-state');
        const last = window.__dpStates[window.__dpStates.length - 1];
        if (!last || last[0] !== state) window.__dpStates.push([state, performance.now()]);
    };
    new MutationObserver((records) => {
        for (const r of records) if (r.target.getAttribute('data-testid') === 'stApp') note(r.target);
    }).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-test-script-state']});
})();"""

# Polled every 50 ms by Playwright: true once the app is connected, not running, shows no skeleton, and its
# run state has not changed for quietMs. Also notes when the first heading of the main area appeared.
DONE_JS = """(quietMs) => {
    const now = performance.now();
    if (window.__dpHeadingAt === null && document.querySelector('[data-testid="stMain"] h1'))
        window.__dpHeadingAt = now;
    const app = document.querySelector('[data-testid="stApp"]');
    const states = window.__dpStates || [];
    if (!app || states.length === 0) return false;
    const [state, at] = states[states.length - 1];
    return state === 'notRunning' && app.getAttribute('data-test-connection-state') === 'CONNECTED'
        && app.getAttribute('data-test-script-state') === 'notRunning'
        && states.some((s) => s[0] === 'running')
        && !document.querySelector('[data-testid="stSkeleton"]') && now - at >= quietMs;
}"""


@dataclass
class Load:
    app: str  # "bare" or the label of an app tree
    page: str  # the page's route ("" = the default page) or "bare"
    kind: str  # "warm" or "first"
    round: int
    seconds: float  # navigation start -> the last transition to notRunning
    heading_s: float  # navigation start -> first main-area h1 seen (50 ms polls)
    runs: int  # script runs seen (transitions to running)
    server_cpu: float  # the server process's CPU seconds during the load
    load_average: float
    server_start_s: float = float("nan")  # first visits: the server's start -> its first answer to /_stcore/health


@dataclass
class Server:
    proc: subprocess.Popen
    port: int
    start_s: float  # the command's start -> the first answer to /_stcore/health

    @property
    def url(self) -> str:
        return f"http://localhost:{self.port}"

    def cpu(self) -> float:
        return process_cpu_seconds(self.proc.pid) or float("nan")


@contextlib.contextmanager
def streamlit(script: Path, cwd: Path, log_dir: Path, *, run_sh: bool = False) -> Iterator[Server]:
    """``streamlit run script`` in ``cwd`` on a free port (its own throw-away ledger), stopped afterwards;
    ``run_sh``: the app started as its README says, ``bash run.sh app`` (``deploy/run_app.py``)."""
    server_dir = Path(tempfile.mkdtemp(prefix="server-", dir=log_dir))  # its log and its ledger
    command = (
        ("bash", str(cwd / "run.sh"), "app") if run_sh else (python_executable(), "-m", "streamlit", "run", str(script))
    )
    with streamlit_server(
        server_dir,
        timeout=120,
        extra_args=("--browser.gatherUsageStats", "false"),
        extra_env={"DPCORE_LEDGER_URL": f"sqlite:///{server_dir}/ledger.db"},
        command=command,
        cwd=cwd,
    ) as server:
        yield Server(server.proc, server.port, server.started_in)


def load_once(browser, server: Server, route: str, *, quiet: float) -> tuple[float, float, int, float]:
    """One load of ``server``'s ``route`` in a new browser context: (seconds, heading seconds, runs, server CPU)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        context.add_init_script(RECORDER_JS)
        page = context.new_page()
        cpu0 = server.cpu()
        page.goto(f"{server.url}/{route}", wait_until="commit", timeout=120_000)
        page.wait_for_function(DONE_JS, arg=quiet * 1000, polling=50, timeout=180_000)
        cpu = server.cpu() - cpu0
        states, heading = page.evaluate("() => [window.__dpStates, window.__dpHeadingAt]")
        problems = page.query_selector_all('[data-testid="stException"]')
        if problems:
            raise RuntimeError(f"exception on /{route}: {problems[0].inner_text()[:500]}")
        finished = [t for state, t in states if state == "notRunning"][-1]
        runs = sum(1 for state, _ in states if state == "running")
        return finished / 1000, (heading if heading is not None else float("nan")) / 1000, runs, cpu
    finally:
        context.close()


def measure(args) -> list[Load]:
    from playwright.sync_api import sync_playwright

    pages = [pg.route for pg in discover_pages() if not args.pages or (pg.route or "about") in args.pages]
    apps = [("app", ROOT)] + [(f"app in {path}", path.resolve()) for path in args.app]
    loads: list[Load] = []

    def record(app: str, page: str, kind: str, rnd: int, result, start_s: float = float("nan")) -> None:
        seconds, heading, runs, cpu = result
        loads.append(Load(app, page, kind, rnd, seconds, heading, runs, cpu, os.getloadavg()[0], start_s))
        print(
            f"  {kind} {rnd} {app} /{page}: {seconds:.2f} s (heading {heading:.2f} s, {runs} runs, "
            f"server CPU {cpu:.2f} s, server start {start_s:.2f} s)",
            flush=True,
        )

    with tempfile.TemporaryDirectory(prefix="bench_page_load_") as tmp, sync_playwright() as playwright:
        tmp_path = Path(tmp)
        bare_script = tmp_path / "bare.py"
        bare_script.write_text(BARE_APP)
        browser = launch_chromium(playwright)
        try:
            if args.rounds:
                with contextlib.ExitStack() as stack:
                    bare = stack.enter_context(streamlit(bare_script, tmp_path, tmp_path))
                    servers = {
                        label: stack.enter_context(streamlit(path / "app.py", path, tmp_path)) for label, path in apps
                    }
                    load_once(browser, bare, "", quiet=args.quiet)  # warm: imports, caches, the OS file cache
                    for server in servers.values():
                        for route in pages:
                            load_once(browser, server, route, quiet=args.quiet)
                    for rnd in range(args.rounds):
                        record(BARE, BARE, "warm", rnd, load_once(browser, bare, "", quiet=args.quiet))
                        for route in pages:
                            for label, server in servers.items():
                                record(label, route, "warm", rnd, load_once(browser, server, route, quiet=args.quiet))
                        record(BARE, BARE, "warm", rnd, load_once(browser, bare, "", quiet=args.quiet))
            for rnd in range(args.first_rounds):
                for route in pages:
                    with streamlit(bare_script, tmp_path, tmp_path) as bare:
                        time.sleep(args.first_after)
                        record(BARE, BARE, "first", rnd, load_once(browser, bare, "", quiet=args.quiet), bare.start_s)
                    for label, path in apps:
                        with streamlit(path / "app.py", path, tmp_path, run_sh=args.run_sh) as server:
                            time.sleep(args.first_after)
                            load = load_once(browser, server, route, quiet=args.quiet)
                            record(label, route, "first", rnd, load, server.start_s)
        finally:
            browser.close()
    return loads


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


def print_tables(loads: list[Load], header: str) -> None:
    print(header)
    for kind, title in (("warm", "Warm server"), ("first", "First visit after a server start")):
        mine = [ld for ld in loads if ld.kind == kind]
        bare = [ld.seconds for ld in mine if ld.app == BARE]
        if not bare:
            continue
        bare_median = _median(bare)
        target = 1.5 if kind == "warm" else 2.0
        bare_start = _median([ld.server_start_s for ld in mine if ld.app == BARE])
        print(
            f"\n{title} (target: ratio <= {target}); bare page median {bare_median:.2f} s "
            f"({min(bare):.2f}-{max(bare):.2f}, {len(bare)} loads)"
            + (f"; the bare server's start (to its first health answer) {bare_start:.2f} s" if kind == "first" else "")
        )
        start_head = " server start s |" if kind == "first" else ""
        print(
            "| app | page | median s (range) | first heading s | runs | server CPU s |"
            f"{start_head} ratio to bare | ratio per round |"
        )
        print("| --- | --- | ---: | ---: | ---: | ---: |" + (" ---: |" if kind == "first" else "") + " ---: | ---: |")
        labels = list(dict.fromkeys(ld.app for ld in mine if ld.app != BARE))
        routes = list(dict.fromkeys(ld.page for ld in mine if ld.app != BARE))
        for label in labels:
            for route in routes:
                rows = [ld for ld in mine if ld.app == label and ld.page == route]
                if not rows:
                    continue
                seconds = [ld.seconds for ld in rows]
                per_round = []
                for rnd in sorted({ld.round for ld in rows}):
                    bare_round = [ld.seconds for ld in mine if ld.app == BARE and ld.round == rnd]
                    page_round = [ld.seconds for ld in rows if ld.round == rnd]
                    per_round.append(_median(page_round) / _median(bare_round))
                start = f" {_median([ld.server_start_s for ld in rows]):.2f} |" if kind == "first" else ""
                print(
                    f"| {label} | /{route} | {_median(seconds):.2f} ({min(seconds):.2f}-{max(seconds):.2f}) | "
                    f"{_median([ld.heading_s for ld in rows]):.2f} | {max(ld.runs for ld in rows)} | "
                    f"{_median([ld.server_cpu for ld in rows]):.2f} |{start} **{_median(seconds) / bare_median:.2f}** | "
                    f"{min(per_round):.2f}-{max(per_round):.2f} |"
                )
    load_range = [ld.load_average for ld in loads]
    print(f"\nLoad average (1 min) during the run: {min(load_range):.1f}-{max(load_range):.1f}.")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="warm rounds (0: none)")
    ap.add_argument("--first-rounds", type=int, default=2, help="first-visit rounds (0: none)")
    ap.add_argument("--pages", nargs="*", default=[], help="routes to measure (about = the default page)")
    ap.add_argument("--quiet", type=float, default=0.5, help="seconds without a run that end a load")
    ap.add_argument(
        "--first-after",
        type=float,
        default=0.0,
        help="first visits: seconds between the server's first health answer and the visit (0: at once)",
    )
    ap.add_argument("--app", action="append", default=[], type=Path, help="another copy of the app (its folder)")
    ap.add_argument(
        "--run-sh", action="store_true", help="first visits: start the app with `bash run.sh app` (README's way)"
    )
    ap.add_argument("--json", type=Path, help="also write every load as JSON")
    ap.add_argument("--write-doc", action="store_true", help="write the tables into docs/benchmarks.md")
    args = ap.parse_args()
    if not chromium_available():
        print("chromium or playwright not available: nothing measured")
        return
    import run_all

    facts = run_all.machine_facts()
    loads = measure(args)
    if args.json:
        args.json.write_text(json.dumps([asdict(ld) for ld in loads], indent=1))
    header = (
        f"Page load in a new Chromium context, until Streamlit's script-run state last turned notRunning "
        f"({args.rounds} warm rounds, {args.first_rounds} first-visit rounds"
        + (", the app started by `bash run.sh app`" if args.run_sh else ", the app started by `streamlit run app.py`")
        + (f", first visits {args.first_after:g} s after the server's health answer" if args.first_after else "")
        + ")"
    )
    printed = run_all.captured(print_tables, loads, header)
    if args.write_doc:
        block = "\n".join(["### Page load against a bare Streamlit page", "", run_all.machine_line(facts), "", printed])
        run_all.write_doc({"bench_page_load": block}, writer="benchmarks/bench_page_load.py --write-doc")


if __name__ == "__main__":
    main()
