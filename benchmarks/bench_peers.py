"""dpcore beside its peers: the same DP workloads on the same table, each tool in a fresh process.

Workloads (the PSEO-like table of benchmarks/make_pseo_like.py, generated under the gitignored ``artifacts/``):

* ``hist``: the 21-bin PSEO histogram (Foote et al. 2019, Table 1 edges) of every cell institution x
  degree_level x cohort (28,600 cells, 600,600 noisy counts), ``--rows`` rows;
* ``mean``: the mean of earnings clipped to [0, 500,000] by state (50 states), ``--rows`` rows;
* ``hist-large``: ``hist`` on ``--large-rows`` rows, for dpcore, OpenDP's polars measurement and the bare
  scan only (the other peers take minutes at ``--rows`` already).

Tools (``--peers``):

* ``dpcore``: the real release, ``python -m dpcore release PLAN --engine duckdb`` charged to a fresh SQLite
  ledger (``--init-ledger``): the record fingerprint of every row (the file's first release), OpenDP's noise,
  the record, CSV and Parquet outputs;
* ``dpcore-known``: the same release into a ledger that already holds one release of these bytes (made before
  the timed run, not timed): the file's byte key finds its population and the record fingerprint is skipped,
  as for every release of a file after its first (or after ``dpcore ledger population attach``);
* ``opendp-polars``: OpenDP's polars API with the measurement built once (``make_private_lazyframe`` with the
  noise scale given, as a program that knows its scale does) and invoked on the Parquet scan;
* ``opendp-release``: the same query through ``Context.compositor(...).query()...release()``, the documented
  path (it searches the scale by bisection, building the measurement at every step);
* ``tumult``: Tumult Analytics (Spark ``local[*]``, driver memory ``--spark-memory``);
* ``pipelinedp``: PipelineDP's local backend (plain Python iterables);
* ``duckdb``: the bare scan without DP (the physical floor: the same aggregate, read in DuckDB).

Privacy parameters, matched to dpcore's: epsilon = ``--epsilon`` (1) per workload, neighbours = replace one row,
cells public (PSEO publishes its cells and their sizes):

* dpcore: ``cell_sizes = "public"``; histogram: discrete Laplace of scale 2/epsilon on every count (a replaced
  row leaves one bin and enters another: L1 sensitivity 2); mean: Laplace of scale (U - L)/epsilon on the
  clipped sum, divided by the public n;
* OpenDP: ``unit_of(changes=1)`` (replace one) with a margin whose lengths are invariant (public cells and
  sizes): the same scales, 2/epsilon and (U - L)/epsilon on an integer sum, checked by the privacy map
  (``map(1) == epsilon``); the histogram joins the public keys (cells x 21 bins, ``with_keys``);
* Tumult: ``AddMaxRows(2)`` (a replace is one row out and one in) at epsilon: counts get Tumult's discrete
  Laplace of scale 2/epsilon; its average has no public-n option, so it also noises the count (its own split);
* PipelineDP: add/remove one row (contribution bounds already enforced: one row per person) at epsilon/2,
  which by group privacy is epsilon for a replace: Laplace of scale 2/epsilon on counts; its MEAN noises a
  count and a normalised sum.

Each run is a fresh process (interpreter start, imports, reading the Parquet files included); runs alternate
across tools (round 1: every tool once, round 2: ...); a tool whose run took more than ``--slow-after`` seconds
is not run again for that workload, and a run is stopped after ``--timeout`` seconds (recorded as
"> N s (stopped)"). Peak RSS is the largest of the sampled resident memory of the whole process tree (every
0.1 s: Spark's JVM included) and the main process's own high-water mark (``wait4``). Each peer lives in its own
virtualenv, created on first use under ``~/.cache/dpcore-bench-peers/<venv>`` with pip from the package
registry (never in the project's requirements). Results go to ``artifacts/bench_peers.json``; ``--write-doc``
writes them into docs/benchmarks.md between the ``bench_peers`` markers (versions, machine, date, load, one table
per workload) and leaves the rest of the file as it is. Run the heavy workloads one at a time on a 2-core machine.

Run: .venv/bin/python benchmarks/bench_peers.py            # 1M rows, dpcore / OpenDP polars / DuckDB, ~1 min
     .venv/bin/python benchmarks/bench_peers.py --rows 10000000 --workloads hist mean hist-large \\
         --large-rows 100000000 --peers dpcore opendp-polars opendp-release tumult pipelinedp duckdb --write-doc
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV_ROOT = Path.home() / ".cache" / "dpcore-bench-peers"
RESULTS = ROOT / "artifacts" / "bench_peers.json"
CELLS = ("institution", "degree_level", "cohort")
N_INSTITUTIONS, DEGREES, COHORTS, N_STATES = 650, tuple(range(1, 12)), (2001, 2004, 2007, 2010), 50
MEAN_BOUNDS = (0, 500_000)
ALL_TOOLS = ("dpcore", "dpcore-known", "opendp-polars", "opendp-release", "tumult", "pipelinedp", "duckdb")
LARGE_TOOLS = ("dpcore", "dpcore-known", "opendp-polars", "duckdb")
WORKLOADS = ("hist", "mean", "hist-large")
LABELS = {
    "dpcore": "dpcore release (CLI, SQLite ledger), first release of the file",
    "dpcore-known": "dpcore release, the file already attached to its population",
    "opendp-polars": "OpenDP polars, measurement built once",
    "opendp-release": "OpenDP polars, `query.release()` as documented",
    "tumult": "Tumult Analytics",
    "pipelinedp": "PipelineDP (local backend)",
    "duckdb": "bare DuckDB scan, no DP",
}
#: tool -> (virtualenv name, pip requirements, distributions whose versions are reported)
VENVS = {
    "opendp-polars": ("opendp", ["opendp[polars]==0.16.*", "pyarrow"], ["opendp", "polars"]),
    "opendp-release": ("opendp", ["opendp[polars]==0.16.*", "pyarrow"], ["opendp", "polars"]),
    "tumult": ("tumult", ["tmlt.analytics==0.21.*", "pyarrow"], ["tmlt.analytics", "pyspark"]),
    "pipelinedp": ("pipelinedp", ["pipeline-dp==0.3.*", "pyarrow", "numpy"], ["pipeline-dp"]),
}


# --------------------------------------------------------------------------------------------------------------
# workers: run inside a peer's virtualenv (``--worker TOOL``); they import only that peer's packages


def _inner_edges(edges: list[float]) -> list[float]:
    """dpcore's bin of a value is the number of inner edges at or below it (values below the first edge fall in
    the first bin, above the last in the last), so the peers bin with the inner edges, left-closed."""
    return edges[1:-1]


def _worker_opendp(args: argparse.Namespace, *, documented: bool) -> dict:
    import opendp.prelude as dp
    import polars as pl
    from opendp.domains import _lazyframe_from_domain

    dp.enable_features("contrib")
    # OpenDP's frame domains have no 8- or 16-bit integers: widen while scanning (no data-dependent step)
    lf = pl.scan_parquet(f"{args.data}/*.parquet").select(
        pl.col("institution").cast(pl.Int32),
        pl.col("degree_level").cast(pl.Int32),
        pl.col("cohort").cast(pl.Int32),
        pl.col("state").cast(pl.String),
        pl.col("earnings"),
    )
    labels = [str(b) for b in range(len(args.edges) - 1)]
    if args.workload == "mean":
        by, scale = ["state"], (MEAN_BOUNDS[1] - MEAN_BOUNDS[0]) / args.epsilon
        margin = dp.polars.Margin(by=by, invariant="lengths", max_length=args.rows, max_groups=N_STATES)
        aggregate = pl.col("earnings").fill_null(0.0).cast(pl.Int64).dp.mean(MEAN_BOUNDS)
        keys = None
    else:
        by, scale = [*CELLS, "bin"], 2.0 / args.epsilon
        margin = dp.polars.Margin(
            by=list(CELLS),
            invariant="lengths",
            max_length=args.rows,
            max_groups=N_INSTITUTIONS * len(DEGREES) * len(COHORTS),
        )
        aggregate = dp.len(signed=True)
        keys = (
            pl.DataFrame({"institution": pl.Series(range(N_INSTITUTIONS), dtype=pl.Int32)})
            .join(pl.DataFrame({"degree_level": pl.Series(DEGREES, dtype=pl.Int32)}), how="cross")
            .join(pl.DataFrame({"cohort": pl.Series(COHORTS, dtype=pl.Int32)}), how="cross")
            .join(pl.DataFrame({"bin": pl.Series(labels, dtype=pl.Categorical)}), how="cross")
        )
    binned = pl.col("earnings").fill_null(0.0).cut(_inner_edges(args.edges), labels=labels, left_closed=True)

    def query(frame):
        frame = frame.with_columns(binned.alias("bin")) if keys is not None else frame
        return frame.group_by(*by).agg(aggregate)

    if documented:
        context = dp.Context.compositor(
            data=lf,
            privacy_unit=dp.unit_of(changes=1),
            privacy_loss=dp.loss_of(epsilon=args.epsilon),
            split_evenly_over=1,
            margins=[margin],
        )
        q = query(context.query())
        out = (q.with_keys(keys) if keys is not None else q).release().collect()
        return {"released": out.height, "map_epsilon": args.epsilon}
    domain = dp.with_margin(dp.domain_of(lf, infer=True), margin)
    metric, d_in = dp.unit_of(changes=1)
    plan = query(_lazyframe_from_domain(domain))
    if keys is not None:  # what ``with_keys`` writes: a left join from the public keys
        plan = keys.lazy().join(plan, how="left", on=by, nulls_equal=True)
    meas = dp.m.make_private_lazyframe(
        input_domain=domain, input_metric=metric, output_measure=dp.max_divergence(), lazyframe=plan, global_scale=scale
    )
    map_epsilon = meas.map(d_in)
    if map_epsilon > args.epsilon * (1 + 1e-9):
        raise SystemExit(f"OpenDP's privacy map gives epsilon {map_epsilon} > {args.epsilon}: parameters do not match")
    out = meas(lf).collect()
    return {"released": out.height, "map_epsilon": map_epsilon, "scale": scale}


def _worker_tumult(args: argparse.Namespace) -> dict:
    from pyspark.sql import SparkSession
    from pyspark.sql import functions as F  # Spark's own convention
    from tmlt.analytics import AddMaxRows, BinningSpec, KeySet, PureDPBudget, QueryBuilder, Session

    # Spark's Python workers must run this virtualenv's interpreter (the one that has tmlt), not the PATH's
    os.environ["PYSPARK_PYTHON"] = os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    spark = (
        SparkSession.builder.master("local[*]")
        .config("spark.driver.memory", args.spark_memory)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.warehouse.dir", args.tmp)
        .config("spark.local.dir", args.tmp)
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    df = spark.read.parquet(str(args.data)).select(
        F.col("institution").cast("int"),
        F.col("degree_level").cast("int"),
        F.col("cohort").cast("int"),
        F.col("state").cast("string"),
        F.coalesce(F.col("earnings"), F.lit(0.0)).alias("earnings"),
    )
    session = Session.from_dataframe(
        privacy_budget=PureDPBudget(args.epsilon), source_id="pseo", dataframe=df, protected_change=AddMaxRows(2)
    )
    if args.workload == "mean":
        keys = KeySet.from_dict({"state": [f"S{i + 1:02d}" for i in range(N_STATES)]})
        query = QueryBuilder("pseo").groupby(keys).average("earnings", *map(float, MEAN_BOUNDS))
    else:
        labels = [str(b) for b in range(len(args.edges) - 1)]
        spec = BinningSpec(bin_edges=[-1e15, *_inner_edges(args.edges), 1e15], names=labels, right=False)
        keys = KeySet.from_dict(
            {
                "institution": list(range(N_INSTITUTIONS)),
                "degree_level": list(DEGREES),
                "cohort": list(COHORTS),
                "bin": labels,
            }
        )
        query = QueryBuilder("pseo").bin_column("earnings", spec, name="bin").groupby(keys).count()
    out = session.evaluate(query, PureDPBudget(args.epsilon)).toPandas()
    spark.stop()
    return {"released": len(out)}


def _worker_pipelinedp(args: argparse.Namespace) -> dict:
    import numpy as np
    import pipeline_dp
    import pyarrow.parquet as pq

    table = pq.read_table(str(args.data), columns=[*CELLS, "state", "earnings"])
    earnings = np.nan_to_num(table["earnings"].to_numpy(), nan=0.0)
    if args.workload == "mean":
        rows = list(zip(table["state"].to_pylist(), earnings.tolist(), strict=True))
        public = [f"S{i + 1:02d}" for i in range(N_STATES)]
        params = pipeline_dp.AggregateParams(
            metrics=[pipeline_dp.Metrics.MEAN],
            min_value=float(MEAN_BOUNDS[0]),
            max_value=float(MEAN_BOUNDS[1]),
            **_pipelinedp_bounds(),
        )
        extractors = pipeline_dp.DataExtractors(partition_extractor=lambda r: r[0], value_extractor=lambda r: r[1])
    else:
        bins = np.searchsorted(np.asarray(_inner_edges(args.edges)), earnings, side="right")
        columns = [table[c].to_numpy().tolist() for c in CELLS]
        rows = list(zip(*columns, bins.tolist(), strict=True))
        public = [
            (i, d, c, b)
            for i in range(N_INSTITUTIONS)
            for d in DEGREES
            for c in COHORTS
            for b in range(len(args.edges) - 1)
        ]
        params = pipeline_dp.AggregateParams(metrics=[pipeline_dp.Metrics.COUNT], **_pipelinedp_bounds())
        extractors = pipeline_dp.DataExtractors(partition_extractor=lambda r: r, value_extractor=lambda r: 0)
    # add/remove one row at epsilon/2 is epsilon for a replace (group privacy over the two changes)
    accountant = pipeline_dp.NaiveBudgetAccountant(total_epsilon=args.epsilon / 2, total_delta=0)
    engine = pipeline_dp.DPEngine(accountant, pipeline_dp.LocalBackend())
    result = engine.aggregate(rows, params, extractors, public_partitions=public)
    accountant.compute_budgets()
    return {"released": sum(1 for _ in result)}


def _pipelinedp_bounds() -> dict:
    import pipeline_dp

    return {
        "noise_kind": pipeline_dp.NoiseKind.LAPLACE,
        "max_partitions_contributed": 1,
        "max_contributions_per_partition": 1,
        "contribution_bounds_already_enforced": True,
    }


def worker_main(args: argparse.Namespace) -> None:
    """The body of one peer run (in the peer's virtualenv); prints one JSON line for the parent."""
    t0 = time.perf_counter()
    if args.worker == "tumult":
        out = _worker_tumult(args)
    elif args.worker == "pipelinedp":
        out = _worker_pipelinedp(args)
    else:
        out = _worker_opendp(args, documented=args.worker == "opendp-release")
    out["inside_s"] = time.perf_counter() - t0
    print(json.dumps(out), flush=True)


# --------------------------------------------------------------------------------------------------------------
# the parent: data, virtualenvs, alternating measured runs, the doc


def ensure_venv(tool: str, log) -> Path:
    """The python of ``tool``'s virtualenv, created and filled from the package registry on first use."""
    name, requirements, _ = VENVS[tool]
    venv = VENV_ROOT / name
    python = venv / "bin" / "python"
    stamp = venv / ".dpcore-bench-requirements"
    if python.exists() and stamp.exists() and stamp.read_text() == "\n".join(requirements):
        return python
    log(f"creating {venv} ({' '.join(requirements)}); this takes a few minutes once")
    subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--upgrade", "pip"], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "-q", *requirements], check=True)
    stamp.write_text("\n".join(requirements))
    return python


def tool_versions(tool: str, python: Path | None) -> str:
    import duckdb

    if tool in ("dpcore", "dpcore-known", "duckdb"):
        import dpcore

        return (
            f"dpcore {dpcore.__version__}, DuckDB {duckdb.__version__}"
            if tool.startswith("dpcore")
            else f"DuckDB {duckdb.__version__}"
        )
    dists = VENVS[tool][2]
    code = "import importlib.metadata as m, sys; print(', '.join(f'{d} {m.version(d)}' for d in sys.argv[1:]))"
    return subprocess.run([str(python), "-c", code, *dists], capture_output=True, text=True, check=True).stdout.strip()


def measured_run(cmd: list[str], *, timeout: float, env: dict[str, str], cwd: Path) -> dict:
    """Wall time, peak RSS and status of one fresh process (its own process group: a stop kills the JVM too)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_release_scale import tree_rss_kb  # the process tree's resident memory, as that benchmark measures it

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=str(cwd), start_new_session=True)
        peak_kb, status, rusage = 0, None, None
        while status is None:
            pid, code, rusage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                status = "ok" if code == 0 else f"exit {os.waitstatus_to_exitcode(code)}"
                break
            if time.perf_counter() - t0 > timeout:
                os.killpg(proc.pid, signal.SIGKILL)
                _, _, rusage = os.wait4(proc.pid, 0)
                status = "stopped"
                break
            peak_kb = max(peak_kb, tree_rss_kb(proc.pid))
            time.sleep(0.1)
        proc.returncode = 0  # reaped by wait4 above; keeps Popen from waiting again
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    peak_kb = max(peak_kb, rusage.ru_maxrss if rusage else 0)
    result = {"wall_s": wall, "peak_rss_mb": peak_kb / 1024, "status": status}
    if status not in ("ok", "stopped"):  # the last line naming an error (a JVM's stack trace ends with "at ..." lines)
        lines = [line.strip() for line in stderr.splitlines() if line.strip()]
        named = [line for line in lines if "Error" in line or "Exception" in line]
        result["error"] = (named or lines or [""])[-1][:300]
    steps = [line.split("] ", 1)[-1] for line in stderr.splitlines() if "step times:" in line]
    if steps:
        result["steps"] = steps[-1]
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    if lines:
        result["worker"] = json.loads(lines[-1])
    return result


PLANS = {
    "hist": '''[[statistics]]
kind = "percentiles"
by = ["institution", "degree_level", "cohort"]
epsilon = {eps!r}
bins = "pseo"
q = [25, 50, 75]
''',
    "mean": '''[[statistics]]
kind = "mean"
by = ["state"]
epsilon = {eps!r}
lower = {lo}
upper = {hi}
''',
}

BARE_MEAN = """
import sys, duckdb
rows = duckdb.connect().execute(
    f"SELECT state, COUNT(*), SUM(LEAST(GREATEST(COALESCE(earnings, {sys.argv[2]}), {sys.argv[2]}), {sys.argv[3]})) "
    f"FROM read_parquet('{sys.argv[1]}/*.parquet') GROUP BY ALL").fetchall()
print(len(rows), "state sums")
"""


def write_plan(kind: str, epsilon: float, path: Path) -> Path:
    """The workload as a dpcore plan: public cells and sizes (as PSEO), one statistic at ``epsilon``; the cap
    holds two releases (``dpcore-known`` releases into a ledger that already holds one)."""
    head = (
        f'version = 1\ndataset = "pseo-like-benchmark"\nincome = "earnings"\ncap_epsilon = {2 * epsilon!r}\n'
        'cell_sizes = "public"\n\n'
    )
    path.write_text(head + PLANS[kind].format(eps=epsilon, lo=MEAN_BOUNDS[0], hi=MEAN_BOUNDS[1]))
    return path


def command(tool: str, kind: str, data: Path, rows: int, run: int, ctx: dict) -> list[str]:
    """The fresh process of one run of ``tool`` on workload ``kind`` (``hist`` or ``mean``)."""
    work: Path = ctx["work"]
    if tool in ("dpcore", "dpcore-known"):
        plan = write_plan(kind, ctx["epsilon"], work / f"plan-{kind}.toml")
        return [
            sys.executable,
            "-m",
            "dpcore",
            "release",
            str(plan),
            "--data",
            str(data),
            "--engine",
            "duckdb",
            "--out",
            str(work / f"out-{kind}-{rows}-{run}"),
            "--tmpdir",
            str(work),
            "--ledger",
            f"sqlite:///{work}/ledger-{tool}-{kind}-{rows}-{run}.db",
            *(["--init-ledger"] if tool == "dpcore" else []),
        ]
    if tool == "duckdb":
        from bench_release_scale import BARE_SCAN

        if kind == "mean":
            return [sys.executable, "-c", BARE_MEAN, str(data), str(MEAN_BOUNDS[0]), str(MEAN_BOUNDS[1])]
        return [sys.executable, "-c", BARE_SCAN, str(data), ",".join(repr(e) for e in ctx["edges"])]
    return [
        str(ctx["pythons"][tool]),
        str(Path(__file__).resolve()),
        "--worker",
        tool,
        "--workload",
        kind,
        "--data",
        str(data),
        "--rows",
        str(rows),
        "--epsilon",
        repr(ctx["epsilon"]),
        "--edges",
        *map(repr, ctx["edges"]),
        "--spark-memory",
        ctx["spark_memory"],
        "--tmp",
        str(work),
    ]


def ensure_data(rows: int, log) -> Path:
    import make_pseo_like

    data = ROOT / "artifacts" / f"pseo_like_{rows}"
    if not any(data.glob("*.parquet")):
        t0 = time.perf_counter()
        make_pseo_like.generate(rows, data)
        log(f"generated {rows:,} rows in {time.perf_counter() - t0:.0f} s -> {data}")
    return data


def run_workload(workload: str, rows: int, tools: list[str], ctx: dict, log) -> list[dict]:
    """Alternating rounds over ``tools``; a tool slower than ``slow_after`` (or stopped) runs only once."""
    kind = "mean" if workload == "mean" else "hist"
    data = ensure_data(rows, log)
    results: list[dict] = []
    once: set[str] = set()
    for run in range(ctx["repeats"]):
        for tool in tools:
            if tool in once:
                continue
            env = (
                {**os.environ, "PYTHONPATH": str(ROOT)}
                if tool.startswith("dpcore")
                else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            )
            if tool == "dpcore-known":  # untimed: the file's first release, which attaches its bytes
                first = [*command(tool, kind, data, rows, run, ctx), "--init-ledger"]
                subprocess.run(first, env=env, cwd=ROOT, check=True, capture_output=True, timeout=ctx["timeout"])
                shutil.rmtree(ctx["work"] / f"out-{kind}-{rows}-{run}", ignore_errors=True)
            load = os.getloadavg()[0]
            res = measured_run(command(tool, kind, data, rows, run, ctx), timeout=ctx["timeout"], env=env, cwd=ROOT)
            shutil.rmtree(ctx["work"] / f"out-{kind}-{rows}-{run}", ignore_errors=True)
            res.update(workload=workload, rows=rows, tool=tool, run=run, load_before=load)
            results.append(res)
            log(
                f"{workload:10s} {rows:>12,} {tool:15s} wall {res['wall_s']:7.1f} s  peak RSS "
                f"{res['peak_rss_mb']:7.0f} MB  load {load:.1f}  {res['status']} {res.get('error', '')}"
                + (f"\n{'':40}{res['steps']}" if res.get("steps") else "")
            )
            if res["status"] != "ok" or res["wall_s"] > ctx["slow_after"]:
                once.add(tool)
    return results


# --------------------------------------------------------------------------------------------------------------
# the doc section


def _mb(x: float) -> str:
    return f"{x / 1024:.1f} GB" if x >= 1024 else f"{x:.0f} MB"


def summarize(runs: list[dict]) -> dict:
    """Median wall over the successful runs, their range, the largest peak RSS, and how a failed run ended."""
    ok = [r for r in runs if r["status"] == "ok"]
    walls = sorted(r["wall_s"] for r in ok)
    failed = [r for r in runs if r["status"] != "ok"]
    out = {
        "runs": len(runs),
        "ok": len(ok),
        "median_s": statistics.median(walls) if walls else None,
        "min_s": walls[0] if walls else None,
        "max_s": walls[-1] if walls else None,
        "peak_rss_mb": max((r["peak_rss_mb"] for r in runs), default=0.0),
    }
    if failed:
        f = failed[0]
        out["stop_s"] = f["wall_s"]
        out["failure"] = (
            f"> {f['wall_s']:.0f} s (stopped)"
            if f["status"] == "stopped"
            else f"{f['status']}: {f.get('error', '')[:120]}"
        )
    by_wall = sorted((r for r in ok if r.get("steps")), key=lambda r: r["wall_s"])
    if by_wall:  # the step times of the run whose wall time is the median
        out["steps"] = by_wall[(len(by_wall) - 1) // 2]["steps"]
    return out


def _wall_cell(s: dict) -> str:
    if s["median_s"] is None:
        return s.get("failure", "failed")
    if s["ok"] == 1:
        return f"{s['median_s']:.1f} s"
    return f"{s['median_s']:.1f} s ({s['min_s']:.1f}–{s['max_s']:.1f})"


WORKLOAD_TITLES = {
    "hist": "{rows} rows: 28,600 cells × 21 PSEO bins (600,600 noisy counts)",
    "mean": "{rows} rows: mean of earnings in [0, 500,000] by 50 states",
    "hist-large": "{rows} rows: 28,600 cells × 21 PSEO bins (600,600 noisy counts)",
}


def _rows_label(rows: int) -> str:
    return f"{rows // 1_000_000}M" if rows % 1_000_000 == 0 else f"{rows:,}"


def workload_table(workload: str, rows: int, runs: list[dict], versions: dict[str, str]) -> str:
    """One workload as a markdown table: tool, versions, wall (median and range), peak RSS, runs, x bare scan."""
    tools = [t for t in ALL_TOOLS if any(r["tool"] == t for r in runs)]
    summaries = {t: summarize([r for r in runs if r["tool"] == t]) for t in tools}
    floor = summaries.get("duckdb", {}).get("median_s")
    loads = [r["load_before"] for r in runs]
    lines = [
        f"#### {WORKLOAD_TITLES[workload].format(rows=_rows_label(rows))}",
        "",
        f"Load average (1 min) before the runs: {min(loads):.1f}–{max(loads):.1f}.",
        "",
        "| tool | versions | wall: median (range) | peak RSS | runs | × bare scan |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for tool in tools:
        s = summaries[tool]
        ratio = f"{s['median_s'] / floor:.1f}×" if floor and s["median_s"] is not None else "-"
        if tool == "duckdb":
            ratio = "1×"
        elif floor and s["median_s"] is None and "stopped" in s.get("failure", ""):
            ratio = f"> {s['stop_s'] / floor:.0f}×"
        rss = _mb(s["peak_rss_mb"])
        if s["median_s"] is None:
            rss += " (at stop)" if "stopped" in s.get("failure", "") else " (at failure)"
        earlier = sorted({r["measured"] for r in runs if r["tool"] == tool and r.get("measured")})
        label = LABELS[tool] + (f" (measured {', '.join(earlier)}, kept from an earlier run)" if earlier else "")
        scan_dates = sorted({r.get("measured") or "" for r in runs if r["tool"] == "duckdb"})
        if earlier and tool != "duckdb" and scan_dates != earlier and ratio != "-":
            ratio += " (another run's scan)"
        lines.append(
            f"| {label} | {versions.get(tool, '')} | {_wall_cell(s)} | {rss} | {s['ok']}/{s['runs']} | {ratio} |"
        )
    for tool, what in (("dpcore", "first release"), ("dpcore-known", "file already attached")):
        steps = summaries.get(tool, {}).get("steps")
        if steps:
            lines += ["", f"dpcore's own progress line ({what}, median run): {steps}."]
    return "\n".join(lines)


MATCHING = """How each tool's parameters were set to match dpcore's (ε = {eps:g} per workload, neighbours = replace one
row, cells and cell sizes public as in PSEO):

* **dpcore**: `cell_sizes = "public"`; histogram: discrete Laplace of scale 2/ε on every count (a replaced row
  leaves one bin and enters another: L1 sensitivity 2); mean: Laplace of scale (U − L)/ε on the clipped sum,
  divided by the public n.
* **OpenDP**: `unit_of(changes=1)` (replace one) and a margin with invariant lengths (public cells and sizes):
  the same scales, 2/ε on the counts and (U − L)/ε on an integer sum, checked by the privacy map
  (`map(1) == ε`); the histogram is joined to the public keys (cells × 21 bins, `with_keys`). "Built once": one
  `make_private_lazyframe` with the scale given; `query.release()`: the documented `Context` path, which
  searches the scale by bisection and builds the measurement at each step.
* **Tumult Analytics**: `AddMaxRows(2)` (a replace is one row out and one in) at ε: its counts get a discrete
  Laplace of scale 2/ε; its `average` has no public-n option and also noises the count (its own split of ε).
* **PipelineDP**: add/remove one row (`contribution_bounds_already_enforced`: one row per person) at ε/2, which by
  group privacy is ε for a replace: Laplace of scale 2/ε on the counts; its `MEAN` noises a count and a
  normalised sum.
* **bare DuckDB scan**: the same aggregate without noise (the physical floor): the 21-bin histogram by cell, or
  the clipped sum and count by state.

Every run is a fresh process (interpreter start, imports and the Parquet read included), runs alternate across
tools, and a tool slower than {slow:.0f} s runs once; a run is stopped after {timeout:.0f} s. dpcore's run is the
whole real release (the record fingerprint that attaches the source to its population in the ledger, the
charge, the noise, the percentiles, CSV + Parquet + record written); the peers stop at their noisy table in
memory. Peak RSS: the process tree's resident memory sampled every 0.1 s (Spark's JVM
included) or the main process's high-water mark, whichever is larger."""


def doc_section(payload: dict) -> str:
    """The bench_peers block of docs/benchmarks.md: when, where, versions, how the parameters match, a table per
    workload."""
    from run_all import machine_line

    facts, cfg = payload["facts"], payload["config"]
    parts = [
        "## dpcore and its peers",
        "",
        f"Written by `benchmarks/bench_peers.py --write-doc`. {machine_line(facts)} Load average at the end "
        f"{payload['load_end']:.1f}. Command: `{payload['command']}`.",
        "",
        MATCHING.format(eps=cfg["epsilon"], slow=cfg["slow_after"], timeout=cfg["timeout"]),
    ]
    for workload in WORKLOADS:
        runs = [r for r in payload["runs"] if r["workload"] == workload]
        if runs:
            parts += ["", workload_table(workload, runs[0]["rows"], runs, payload["versions"])]
    return "\n".join(parts)


def kept_from(earlier: dict, payload: dict) -> dict:
    """``payload`` with the runs of ``earlier`` for the (workload, tool) pairs it did not measure (e.g. peers that
    take many minutes), each marked with the date it was measured; the doc's table says so beside the tool."""
    measured = {(r["workload"], r["tool"]) for r in payload["runs"]}
    kept = [
        {**r, "measured": r.get("measured") or earlier["facts"]["date"]}
        for r in earlier["runs"]
        if (r["workload"], r["tool"]) not in measured
    ]
    versions = {
        **{t: v for t, v in earlier["versions"].items() if any(r["tool"] == t for r in kept)},
        **payload["versions"],
    }
    return {**payload, "runs": payload["runs"] + kept, "versions": versions}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of the hist and mean workloads")
    ap.add_argument("--large-rows", type=int, default=None, help="rows of hist-large (default 10 x --rows)")
    ap.add_argument("--repeats", type=int, default=3, help="alternating rounds (a slow tool runs once)")
    ap.add_argument("--peers", nargs="+", default=["dpcore", "opendp-polars", "duckdb"], choices=ALL_TOOLS)
    ap.add_argument("--workloads", nargs="+", default=["hist", "mean"], choices=WORKLOADS)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before a run is stopped")
    ap.add_argument("--slow-after", type=float, default=120.0, help="a run slower than this is not repeated")
    ap.add_argument("--spark-memory", default="8g", help="Tumult's Spark driver memory")
    ap.add_argument("--write-doc", action="store_true", help="write the results into docs/benchmarks.md")
    ap.add_argument("--doc", type=Path, default=ROOT / "docs" / "benchmarks.md")
    ap.add_argument(
        "--keep-from",
        type=Path,
        default=None,
        help="an earlier results file whose runs of workloads x tools not measured now are kept (marked)",
    )
    ap.add_argument(
        "--from-results",
        action="store_true",
        help=f"run nothing: print (and with --write-doc write) the section of the last results ({RESULTS})",
    )
    # worker mode (inside a peer's virtualenv)
    ap.add_argument("--worker", choices=[t for t in ALL_TOOLS if t in VENVS], help=argparse.SUPPRESS)
    ap.add_argument("--workload", choices=["hist", "mean"], help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--edges", type=float, nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--tmp", default=tempfile.gettempdir(), help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:
        worker_main(args)
        return
    for p in (ROOT, ROOT / "benchmarks"):
        if str(p) not in sys.path:
            sys.path.insert(0, str(p))
    from run_all import write_doc

    def log(text: str) -> None:
        print(text, flush=True)

    if args.from_results:
        payload = json.loads(RESULTS.read_text())
    else:
        earlier = json.loads(args.keep_from.read_text()) if args.keep_from else None
        payload = measure(args, argv, log)
        if earlier is not None:
            payload = kept_from(earlier, payload)
            RESULTS.write_text(json.dumps(payload, indent=1))
    section = doc_section(payload)
    print("\n" + section)
    if args.write_doc:
        write_doc({"bench_peers": section}, path=args.doc, writer="benchmarks/bench_peers.py --write-doc")
        log(f"\nwrote the bench_peers section of {args.doc} (results: {RESULTS})")


def measure(args: argparse.Namespace, argv: list[str] | None, log) -> dict:
    """Every chosen workload x tool, alternating; the payload (also saved to ``RESULTS``) the doc is written from."""
    from run_all import machine_facts

    from dpcore import percentiles

    facts = machine_facts()
    tools = list(dict.fromkeys(args.peers))
    if "tumult" in tools and not shutil.which("java"):
        log("tumult: no Java runtime on PATH (Spark needs one, e.g. Debian's default-jre-headless): skipped")
        tools.remove("tumult")
    pythons = {t: ensure_venv(t, log) for t in tools if t in VENVS}
    versions = {t: tool_versions(t, pythons.get(t)) for t in tools}
    work = Path(tempfile.mkdtemp(prefix="bench-peers-"))
    ctx = {
        "work": work,
        "epsilon": args.epsilon,
        "edges": [float(e) for e in percentiles.bin_edges("pseo")],
        "pythons": pythons,
        "repeats": args.repeats,
        "timeout": args.timeout,
        "slow_after": args.slow_after,
        "spark_memory": args.spark_memory,
    }
    runs: list[dict] = []
    try:
        for workload in args.workloads:
            rows = (args.large_rows or 10 * args.rows) if workload == "hist-large" else args.rows
            chosen = [t for t in tools if workload != "hist-large" or t in LARGE_TOOLS]
            runs += run_workload(workload, rows, chosen, ctx, log)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    payload = {
        "facts": facts,
        "load_end": os.getloadavg()[0],
        "versions": versions,
        "runs": runs,
        "command": "python benchmarks/bench_peers.py " + " ".join(argv if argv is not None else sys.argv[1:]),
        "config": {"epsilon": args.epsilon, "timeout": args.timeout, "slow_after": args.slow_after},
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(payload, indent=1))
    return payload


if __name__ == "__main__":
    main()
