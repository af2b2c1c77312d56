"""Release at scale: wall time and peak RSS of `python -m dpcore release` per engine (issue 16).

Data: a PSEO-like Parquet table (benchmarks/make_pseo_like.py: 28,600 cells = 650 institutions x 11 degree
levels x 4 cohorts, 50 states), generated under the gitignored ``artifacts/`` when missing. Plan: the
issue's example (percentiles by institution x degree_level x cohort, Gini and mean by state; epsilon 2).
Each run is a fresh ``python -m dpcore release ... --seed 1`` process (simulation: no ledger; the
aggregation, which is what scales, is the same as in a release); peak RSS is the largest sum of the
resident memory of the process and all its children (Spark's JVM included), sampled every 0.1 s; CPU
is user + system time of the whole process tree (sampled for processes that are not waited for, e.g.
Spark's JVM and its Python workers; a process that ends between two samples loses at most 0.1 s).
The pandas engine runs under an address-space limit (``--pandas-limit-gb``, default 12) so that running
out of memory is reported instead of taking the shared machine down.

Run: .venv/bin/python benchmarks/bench_release_scale.py [--rows 10000000 100000000] [--engines duckdb spark pandas]
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

from dpcore import plan as plan_module  # noqa: E402  (after the path set-up)

PLAN = plan_module.EXAMPLE_PLAN.replace('dataset = "pseo-earnings-2019"', 'dataset = "pseo-like-benchmark"')


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


def run_once(cmd: list[str], *, limit_gb: float | None, timeout: float) -> dict:
    def limit() -> None:
        if limit_gb:
            size = int(limit_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=limit,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
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
    return {"wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak / 1024, "status": status}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, nargs="+", default=[10_000_000])
    ap.add_argument("--engines", nargs="+", default=["duckdb", "spark", "pandas"])
    ap.add_argument("--data-root", type=Path, default=ROOT / "artifacts")
    ap.add_argument("--pandas-limit-gb", type=float, default=12.0)
    ap.add_argument("--timeout", type=float, default=1800.0)
    ap.add_argument("--memory-limit", default=None, help="DuckDB memory limit passed to the command")
    args = ap.parse_args()
    import make_pseo_like

    work = Path(tempfile.mkdtemp(prefix="bench-release-"))
    plan = work / "plan.toml"
    plan.write_text(PLAN)
    rows_out = []
    try:
        for rows in args.rows:
            data = args.data_root / f"pseo_like_{rows}"
            if not any(data.glob("*.parquet")):
                t0 = time.perf_counter()
                make_pseo_like.generate(rows, data)
                print(f"generated {rows:,} rows in {time.perf_counter() - t0:.0f} s -> {data}", flush=True)
            size_mb = sum(p.stat().st_size for p in data.glob("*.parquet")) / 1e6
            for engine in args.engines:
                out = work / f"out-{engine}-{rows}"
                cmd = [sys.executable, "-m", "dpcore", "release", str(plan), "--data", str(data), "--engine", engine,
                       "--out", str(out), "--seed", "1", "--quiet", "--tmpdir", str(work)]
                if args.memory_limit and engine == "duckdb":
                    cmd += ["--memory-limit", args.memory_limit]
                load = os.getloadavg()[0]
                res = run_once(cmd, limit_gb=args.pandas_limit_gb if engine == "pandas" else None,
                               timeout=args.timeout)
                res.update(rows=rows, engine=engine, size_mb=size_mb, load_before=load, load_after=os.getloadavg()[0])
                rows_out.append(res)
                print(f"{rows:>11,} {engine:7s} wall {res['wall_s']:7.1f} s  cpu {res['cpu_s']:7.1f} s  "
                      f"peak RSS {res['peak_rss_mb']:7.0f} MB  load {load:.1f}->{res['load_after']:.1f}  {res['status']}",
                      flush=True)
                shutil.rmtree(out, ignore_errors=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\n| rows | engine | wall (s) | CPU (s) | peak RSS (MB) | status | load avg (1 min) |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows_out:
        print(f"| {r['rows']:,} | {r['engine']} | {r['wall_s']:.1f} | {r['cpu_s']:.1f} | {r['peak_rss_mb']:.0f} | "
              f"{r['status']} | {r['load_before']:.1f} |")
    for rows in args.rows:
        by = {r["engine"]: r for r in rows_out if r["rows"] == rows and r["status"] == "ok"}
        if "duckdb" in by and "pandas" in by:
            print(f"{rows:,} rows: pandas / duckdb wall = {by['pandas']['wall_s'] / by['duckdb']['wall_s']:.1f}x, "
                  f"peak RSS = {by['pandas']['peak_rss_mb'] / by['duckdb']['peak_rss_mb']:.1f}x")


if __name__ == "__main__":
    main()
