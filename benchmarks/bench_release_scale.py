"""Release at scale: wall time and peak RSS of `python -m dpcore release` per engine.

Data: a PSEO-like Parquet table (benchmarks/make_pseo_like.py: 28,600 cells = 650 institutions x 11 degree
levels x 4 cohorts, 50 states), generated under the gitignored ``artifacts/`` when missing. Plan: the
issue's example (percentiles by institution x degree_level x cohort, Gini and mean by state; epsilon 2).
Each run is a fresh ``python -m dpcore release`` process: ``--mode release`` (default) is a real release
charged to a fresh SQLite ledger (OpenDP noise, drawn on every core), ``--mode simulation`` the
``--seed 1 --public-data`` run (numpy noise, no ledger). With ``--bare-scan`` each release is followed by
the physical floor, a fresh process running the same 21-bin histogram over the same files in DuckDB
without DP (``BARE_SCAN``), and the table gives release / bare-scan in the same run; the release's own
"step times" progress line (scan, aggregate, noise, write) is printed too. ``--code DIR`` runs another
checkout (e.g. ``git archive HEAD~5 | tar -x -C /tmp/before``) for before/after. Peak RSS is the largest sum of the
resident memory of the process and all its children (Spark's JVM included), sampled every 0.1 s; CPU
is user + system time of the whole process tree (sampled for processes that are not waited for, e.g.
Spark's JVM and its Python workers; a process that ends between two samples loses at most 0.1 s).
The pandas engine runs under an address-space limit (``--pandas-limit-gb``, default 12) so that running
out of memory is reported instead of taking the shared machine down.

Run: .venv/bin/python benchmarks/bench_release_scale.py [--rows 10000000 100000000] [--engines duckdb spark pandas]
     .venv/bin/python benchmarks/bench_release_scale.py --engines duckdb --bare-scan --repeat 3 [--data-root /tmp]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from dpcore import percentiles


def example_plan(code: Path) -> str:
    """The issue's example plan as the checkout that runs knows it (its plan fields may differ from ours)."""
    text = subprocess.run(
        [sys.executable, "-c", "from dpcore import plan; print(plan.EXAMPLE_PLAN)"],
        cwd=str(code),
        env={**os.environ, "PYTHONPATH": str(code)},
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return text.replace('dataset = "pseo-earnings-2019"', 'dataset = "pseo-like-benchmark"')


#: the physical floor: the percentiles statistic's 21-bin histogram by cell, no DP, in a fresh DuckDB process
#: (the bin is the number of inner PSEO edges at or below the value: vectorised comparisons, no join)
BARE_SCAN = """
import sys, duckdb
edges = [float(v) for v in sys.argv[2].split(",")]
bin_expr = " + ".join(f"(earnings >= {e!r})::INTEGER" for e in edges[1:-1])
rows = duckdb.connect().execute(
    f"SELECT institution, degree_level, cohort, {bin_expr} AS bin, COUNT(*) AS n "
    f"FROM read_parquet('{sys.argv[1]}/*.parquet') WHERE earnings IS NOT NULL GROUP BY ALL").fetchall()
print(len(rows), "cell x bin counts")
"""


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as fh:
                ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        tree.setdefault(ppid, []).append(int(entry))
    return tree


def _rss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cpu_s(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime
    except (OSError, IndexError, ValueError):
        return 0.0


def tree_rss_kb(root: int, cpu_seen: dict[int, float] | None = None) -> int:
    """Resident memory of ``root`` and all its descendants; records each process's CPU time in ``cpu_seen``."""
    tree = _children()
    total, stack = 0, [root]
    while stack:
        pid = stack.pop()
        total += _rss_kb(pid)
        if cpu_seen is not None:
            cpu_seen[pid] = max(cpu_seen.get(pid, 0.0), _cpu_s(pid))
        stack.extend(tree.get(pid, []))
    return total


def run_once(cmd: list[str], *, limit_gb: float | None, timeout: float, code: Path = ROOT) -> dict:
    def limit() -> None:
        if limit_gb:
            size = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(
        cmd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=limit,
        cwd=str(code),
        env={**os.environ, "PYTHONPATH": str(code)},
    )
    peak = 0
    stop = threading.Event()
    cpu_seen: dict[int, float] = {}

    def sample() -> None:
        nonlocal peak
        while not stop.is_set():
            peak = max(peak, tree_rss_kb(proc.pid, cpu_seen))
            stop.wait(0.1)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        out, err = proc.communicate(timeout=timeout)
        status = "ok" if proc.returncode == 0 else f"exit {proc.returncode}"
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        status = f"timeout {timeout:.0f} s"
    stop.set()
    sampler.join()
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # waited-for children (exact) or the sampled CPU of the whole tree (includes Spark's JVM and workers)
    cpu = max((after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), sum(cpu_seen.values()))
    if status != "ok":
        tail = (err or "").strip().splitlines()[-1:] or [""]
        if "MemoryError" in (err or "") or "Cannot allocate" in (err or "") or "memory" in tail[0].lower():
            status = f"out of memory (limit {limit_gb:g} GB)" if limit_gb else "out of memory"
        status += f": {tail[0][:160]}"
    steps = [line.split("] ", 1)[-1] for line in (err or "").splitlines() if "step times:" in line]
    return {
        "wall_s": wall,
        "cpu_s": cpu,
        "peak_rss_mb": peak / 1024,
        "status": status,
        "steps": steps[-1] if steps else "",
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    ap.add_argument("--engines", nargs="+", default=["duckdb", "spark", "pandas"])
    ap.add_argument("--mode", choices=["release", "simulation"], default="release")
    ap.add_argument("--bare-scan", action="store_true", help="after each release, time the bare DuckDB scan")
    ap.add_argument("--repeat", type=int, default=1, help="alternating runs per engine (and bare scan)")
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose dpcore runs (default: this one)")
    ap.add_argument("--data-root", type=Path, default=ROOT / "artifacts")
    ap.add_argument("--pandas-limit-gb", type=float, default=12.0)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--memory-limit", default=None, help="DuckDB memory limit passed to the command")
    args = ap.parse_args()
    import make_pseo_like

    work = Path(tempfile.mkdtemp(prefix="bench-release-"))
    plan = work / "plan.toml"
    plan.write_text(example_plan(args.code))
    edges = ",".join(repr(float(v)) for v in percentiles.bin_edges("pseo"))
    rows_out = []

    def record(res: dict, rows: int, engine: str, size_mb: float, load: float) -> None:
        res.update(rows=rows, engine=engine, size_mb=size_mb, load_before=load, load_after=os.getloadavg()[0])
        rows_out.append(res)
        print(
            f"{rows:>11,} {engine:9s} wall {res['wall_s']:7.1f} s  cpu {res['cpu_s']:7.1f} s  "
            f"peak RSS {res['peak_rss_mb']:7.0f} MB  load {load:.1f}->{res['load_after']:.1f}  {res['status']}"
            + (f"\n{'':12}{res['steps']}" if res["steps"] else ""),
            flush=True,
        )

    try:
        for rows in args.rows:
            data = args.data_root / f"pseo_like_{rows}"
            if not any(data.glob("*.parquet")):
                t0 = time.perf_counter()
                make_pseo_like.generate(rows, data)
                print(f"generated {rows:,} rows in {time.perf_counter() - t0:.0f} s -> {data}", flush=True)
            size_mb = sum(p.stat().st_size for p in data.glob("*.parquet")) / 1e6
            for run in range(args.repeat):
                for engine in args.engines:
                    out = work / f"out-{engine}-{rows}-{run}"
                    cmd = [
                        sys.executable,
                        "-m",
                        "dpcore",
                        "release",
                        str(plan),
                        "--data",
                        str(data),
                        "--engine",
                        engine,
                        "--out",
                        str(out),
                        "--tmpdir",
                        str(work),
                    ]
                    if args.mode == "release":
                        cmd += ["--ledger", f"sqlite:///{work}/ledger-{engine}-{rows}-{run}.db", "--init-ledger"]
                    else:
                        cmd += ["--seed", "1", "--public-data"]
                    if args.memory_limit and engine == "duckdb":
                        cmd += ["--memory-limit", args.memory_limit]
                    load = os.getloadavg()[0]
                    res = run_once(
                        cmd,
                        limit_gb=args.pandas_limit_gb if engine == "pandas" else None,
                        timeout=args.timeout,
                        code=args.code,
                    )
                    record(res, rows, engine, size_mb, load)
                    shutil.rmtree(out, ignore_errors=True)
                    if args.bare_scan:
                        load = os.getloadavg()[0]
                        res = run_once(
                            [sys.executable, "-c", BARE_SCAN, str(data), edges], limit_gb=None, timeout=args.timeout
                        )
                        record(res, rows, "bare-scan", size_mb, load)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n({args.mode}; code {args.code}; {os.cpu_count()} cores)")
    print("| rows | engine | wall (s) | CPU (s) | peak RSS (MB) | status | load avg (1 min) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows_out:
        print(
            f"| {r['rows']:,} | {r['engine']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | "
            f"{r['status']} | {r['load_before']:.1f} |"
        )
    for rows in args.rows:
        ok = [r for r in rows_out if r["rows"] == rows and r["status"] == "ok"]

        def median_wall(engine: str) -> float | None:
            walls = sorted(r["wall_s"] for r in ok if r["engine"] == engine)
            return walls[len(walls) // 2] if walls else None

        bare = median_wall("bare-scan")
        for engine in args.engines:
            wall = median_wall(engine)
            if wall is not None and bare:
                print(
                    f"{rows:,} rows: {engine} release / bare DuckDB scan (medians) = {wall:.1f} / {bare:.1f} s "
                    f"= {wall / bare:.1f}x"
                )
        duck, pandas = median_wall("duckdb"), median_wall("pandas")
        if duck and pandas:
            peak = {e: max(r["peak_rss_mb"] for r in ok if r["engine"] == e) for e in ("duckdb", "pandas")}
            print(
                f"{rows:,} rows: pandas / duckdb wall = {pandas / duck:.1f}x, "
                f"peak RSS = {peak['pandas'] / peak['duckdb']:.1f}x"
            )


if __name__ == "__main__":
    main()
