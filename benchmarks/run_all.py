"""All quality-gate figures in one run (prints tables; no asserts): the project's performance targets and more.

  1. the performance targets, each a median over repeated runs:
     slider change (AppTest rerun, every page), exact Gini smooth sensitivity for n = 115,777 and
     n = 1,000,000 (eps = 0.25, gamma = 2), 1,000,000 simulated releases with an error summary,
     cold start to the first page rendered. A figure whose dpcore function does not exist yet is
     printed as "n/a (not yet implemented)".
  2. slider-change latency per page (benchmarks/bench_pages.py),
  3. cold start (benchmarks/bench_startup.py),
  4. peak memory of a 1,000,000-row CSV upload (benchmarks/bench_upload_memory.py).
The header names the date and the machine. With ``--write-doc`` each measure run becomes one block of
docs/benchmarks.md (a table with the machine, the date and the load average under which it was taken); the
blocks of measures not re-run, the hand-written history and the peers section (written by
benchmarks/bench_peers.py) are kept as they are, so a partial run never erases figures it did not measure.

Run: .venv/bin/python benchmarks/run_all.py [--quick] [--everything] [--write-doc]
     --quick       fewer repetitions (about a minute less)
     --everything  also run the other benchmarks/bench_*.py scripts of the method pages (not bench_peers.py,
                   which installs the peers' virtualenvs and runs for minutes: run it on its own)
     --write-doc   write the measured blocks into docs/benchmarks.md
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import io
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
for p in (ROOT, ROOT / "tests", ROOT / "benchmarks"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

NA = "n/a (not yet implemented)"
MINE = {"run_all.py", "bench_pages.py", "bench_startup.py", "bench_upload_memory.py"}
#: not run by --everything: it creates the peers' virtualenvs from the package registry and runs for minutes
OWN_RUN = {"bench_peers.py"}
DOC = ROOT / "docs" / "benchmarks.md"


def machine_facts() -> dict[str, str]:
    """Date (UTC), CPU model, cores, RAM, OS, Python and the 1-minute load average: what every table states."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    try:
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem = int(next(line for line in meminfo if line.startswith("MemTotal")).split()[1])
        ram = f"{mem / 2**20:.0f} GB"
    except (OSError, StopIteration):
        ram = "unknown"
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return {
        "date": f"{dt.datetime.now(dt.timezone.utc):%Y-%m-%d %H:%M} UTC",
        "cpu": cpu,
        "cores": str(os.cpu_count()),
        "ram": ram,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "load": f"{load:.1f}",
    }


def machine_line(facts: dict[str, str], extra: str = "") -> str:
    """One sentence naming the date, the machine and the load (the first line of every block of the doc)."""
    return (
        f"Measured {facts['date']} on {facts['cpu']}, {facts['cores']} cores, {facts['ram']} RAM "
        f"({facts['os']}, Python {facts['python']}{', ' + extra if extra else ''}); "
        f"load average at start {facts['load']}."
    )


def machine() -> str:
    import numpy
    import streamlit

    facts = machine_facts()
    return (
        f"{facts['date']}; {facts['cpu']}; {facts['cores']} cores; {facts['ram']} RAM; {facts['os']}; "
        f"Python {facts['python']}, numpy {numpy.__version__}, streamlit {streamlit.__version__}; "
        f"load average at start {facts['load']}"
    )


def _markers(name: str, writer: str) -> tuple[str, str]:
    return (f"<!-- begin {name}; written by {writer}, edits inside are overwritten -->", f"<!-- end {name} -->")


def replace_block(text: str, name: str, body: str, *, writer: str = "benchmarks/run_all.py --write-doc") -> str:
    """``text`` with the block ``name`` (between its begin/end markers) replaced by ``body``, or appended at the
    end when the document has no such block yet. Everything outside the markers is left byte for byte, so
    two writers (run_all.py, bench_peers.py) each own their blocks and never overwrite the other's."""
    begin, end = _markers(name, writer)
    pattern = re.compile(rf"<!-- begin {re.escape(name)};[^\n]*-->\n.*?<!-- end {re.escape(name)} -->", re.DOTALL)
    block = f"{begin}\n{body.strip()}\n{end}"
    if pattern.search(text):
        return pattern.sub(lambda _: block, text, count=1)
    return text.rstrip("\n") + "\n\n" + block + "\n"


def write_doc(blocks: dict[str, str], *, path: Path = DOC, writer: str = "benchmarks/run_all.py --write-doc") -> None:
    """Write ``blocks`` (name -> markdown) into ``path``; blocks not given keep their current content."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    for name, body in blocks.items():
        text = replace_block(text, name, body, writer=writer)
    path.write_text(text, encoding="utf-8")


def captured(fn: Callable[..., object], *args: object) -> str:
    """What ``fn(*args)`` prints (also echoed to the terminal): the tables below are printed as markdown."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn(*args)
    print(buf.getvalue(), end="")
    return buf.getvalue()


def doc_block(title: str, printed: str, facts: dict[str, str], *, extra: str = "") -> str:
    """One measure as a doc block: a heading, the machine and date line, then the printed table (pipe lines
    are kept as the table, the other printed lines become the caption under the machine line)."""
    lines = printed.strip("\n").splitlines()
    caption = [line.strip() for line in lines if line.strip() and not line.startswith("|")]
    table = [line.rstrip() for line in lines if line.startswith("|")]
    parts = [f"### {title}", "", machine_line(facts, extra)]
    if caption:
        parts += ["", " ".join(caption)]
    if table:
        parts += ["", *table]
    return "\n".join(parts)


def text_block(title: str, output: str, facts: dict[str, str]) -> str:
    """A script's printed output as it is (not every script prints a table), under its heading and machine line."""
    return "\n".join([f"### {title}", "", machine_line(facts), "", "```text", output.strip("\n"), "```"])


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
    """(what, target, times or NA) for the dpcore figures of the performance targets."""
    rows: list[tuple[str, str, list[float] | str]] = []
    for n, target in ((115_777, "< 0.5 s"), (1_000_000, "< 5 s")):
        what = f"exact Gini smooth sensitivity, n = {n:,}, eps = 0.25, gamma = 2"
        try:
            gini, x, beta = _gini_setup(n)

            def fn(gini=gini, x=x, beta=beta):
                return gini.smooth_sensitivity(x, lower=0.0, upper=1_000_000.0, beta=beta, method="exact")
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
            gini.simulate_gini_releases(
                x,
                epsilon=1.0,
                gamma=2.0,
                lower=0.0,
                upper=1_000_000.0,
                n_releases=1_000_000,
                rng=np.random.default_rng(2),
            )

        end_to_end()
        rows.append((what, "(context)", timed(end_to_end, repeats)))
    except (ImportError, AttributeError):
        rows.append((what, "(context)", NA))
    return rows


def print_design_table(rows, pages, startup) -> None:
    print("\nPerformance targets; medians over repeated runs")
    print(f"| {'what':<72} | {'target':<22} | {'median s':>8} | {'worst s':>7} | {'runs':>4} | meets |")
    print(f"|{'-' * 74}|{'-' * 24}|{'-' * 10}|{'-' * 9}|{'-' * 6}|{'-' * 7}|")

    def line(what, target, times, meets):
        if isinstance(times, str):
            print(f"| {what:<72} | {target:<22} | {times}")
            return
        print(
            f"| {what:<72} | {target:<22} | {statistics.median(times):8.3f} | {max(times):7.3f} | "
            f"{len(times):4d} | {meets:<5} |"
        )

    if pages:
        meds = [p["median"] for p in pages]
        worst = max(p["worst"] for p in pages)
        ok = "yes" if max(meds) < 0.2 and worst < 0.5 else "NO"
        print(
            f"| {'slider change, any page, default settings (AppTest rerun)':<72} | "
            f"{'median < 0.2, worst < 0.5':<22} | {max(meds):8.3f} | {worst:7.3f} | "
            f"{sum(len(p['times']) for p in pages):4d} | {ok:<5} |  (median = slowest page's median)"
        )
    for what, target, times in rows:
        if isinstance(times, str):
            line(what, target, times, "")
            continue
        limit = {"< 0.5 s": 0.5, "< 5 s": 5.0}.get(target)
        meets = "" if limit is None else ("yes" if statistics.median(times) < limit else "NO")
        line(what, target, times, meets)
    if startup and startup.get("first_render_s"):
        xs = startup["first_render_s"]
        line(
            "app cold start to first page rendered (Chromium)",
            "< 3 s",
            xs,
            "yes" if statistics.median(xs) < 3 else "NO",
        )
    elif startup:
        print(f"| {'app cold start to first page rendered':<72} | {'< 3 s':<22} | n/a (chromium not available)")


def run_other_benchmarks() -> dict[str, str]:
    """Run the other bench_*.py scripts one after the other; returns doc blocks of their printed output."""
    blocks: dict[str, str] = {}
    for script in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        if script.name in MINE | OWN_RUN:
            continue
        print(f"\n===== {script.name} =====", flush=True)
        facts = machine_facts()
        t = time.perf_counter()
        res = subprocess.run(
            [sys.executable, str(script)], cwd=ROOT, text=True, capture_output=True, timeout=3600, check=False
        )
        print(res.stdout.rstrip())
        output = res.stdout
        if res.returncode != 0:
            tail = res.stderr.strip().splitlines()[-1] if res.stderr.strip() else ""
            print(f"(exit code {res.returncode}: {tail})")
            output += f"\n(exit code {res.returncode}: {tail})"
        took = time.perf_counter() - t
        print(f"({script.name} took {took:.1f} s)")
        blocks[f"run_all:{script.stem}"] = text_block(f"`benchmarks/{script.name}` ({took:.0f} s)", output, facts)
    return blocks


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--everything", action="store_true")
    ap.add_argument("--write-doc", action="store_true", help="write the measured blocks into docs/benchmarks.md")
    ap.add_argument("--doc", type=Path, default=DOC, help="the file --write-doc writes (default docs/benchmarks.md)")
    args = ap.parse_args()
    repeats = 3 if args.quick else 7

    import bench_pages
    import bench_startup
    import bench_upload_memory
    import numpy
    import streamlit

    print(f"Quality-gate benchmarks. Machine: {machine()}")
    facts = machine_facts()
    versions = f"numpy {numpy.__version__}, streamlit {streamlit.__version__}"
    rows = design_figures(repeats)
    pages = bench_pages.measure_pages(repeats=8 if args.quick else 15)
    startup = bench_startup.measure_startup(runs=2 if args.quick else 3)
    memory = bench_upload_memory.measure_upload_memory(1_000_000, runs=1 if args.quick else 3)

    blocks = {
        "run_all:design": doc_block(
            "Performance targets",
            captured(print_design_table, rows, pages, startup),
            facts,
            extra=versions,
        ),
        "run_all:pages": doc_block(
            "Slider change per page", captured(bench_pages.print_table, pages), facts, extra=versions
        ),
        "run_all:startup": doc_block("Cold start", captured(bench_startup.print_table, startup), facts, extra=versions),
        "run_all:upload_memory": doc_block(
            "Peak memory of a CSV upload", captured(bench_upload_memory.print_table, memory), facts, extra=versions
        ),
    }
    if args.everything:
        blocks.update(run_other_benchmarks())
    if args.write_doc:
        write_doc(blocks, path=args.doc)
        print(f"\nwrote {len(blocks)} blocks into {args.doc}")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at the end: {load:.1f} (figures taken on a busy machine are slower)")


if __name__ == "__main__":
    main()
