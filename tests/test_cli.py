"""The release command line: python -m dpcore release PLAN --data SOURCE --engine ... --out DIR [--ledger] [--seed]."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import tomllib

from dpcore import cli, ledger
from dpcore import plan as plan_module
from dpcore.plan import write_plan

ROOT = Path(__file__).resolve().parents[1]

PLAN = plan_module.EXAMPLE_PLAN


@pytest.fixture()
def setup(tmp_path):
    rng = np.random.default_rng(2)
    n = 1500
    df = pd.DataFrame(
        {
            "institution": rng.choice(["A", "B"], n),
            "degree_level": rng.choice([1, 2, 3], n),
            "cohort": rng.choice([2010, 2015], n),
            "state": rng.choice(["CO", "TX"], n),
            "earnings": np.round(rng.lognormal(10.8, 0.8, n)),
        }
    )
    data = tmp_path / "data.parquet"
    df.to_parquet(data, index=False)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    return tmp_path, plan, data


def _cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _one_line_error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("dpcore:")]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


def test_release_end_to_end_with_ledger(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    out = tmp / "out"
    # no ledger yet: refused (never created silently), nothing written; --init-ledger creates it
    code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--ledger", url)
    assert code == 2 and "--init-ledger" in _one_line_error(err)
    assert not (tmp / "ledger.db").exists() and not out.exists()
    code, stdout, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--ledger", url, "--init-ledger")
    assert code == 0, err
    assert stdout.strip().splitlines()[-1] == str(out)
    assert "charging the plan" in err and "done in" in err  # progress on stderr
    names = ["01_percentiles_by_institution_degree-level_cohort", "02_gini_by_state", "03_mean_by_state"]
    for name in names:
        csv = pd.read_csv(out / f"{name}.csv", keep_default_na=False)
        pq = pd.read_parquet(out / f"{name}.parquet")
        assert len(csv) == len(pq) > 0
    record = json.loads((out / "release_record.json").read_text())
    assert record["mode"] == "release"
    assert record["privacy"]["cost"]["epsilon"] == pytest.approx(2.0)
    assert record["privacy"]["cost"]["delta"] == 0.0  # the certified Gini sampler in its pure-DP mode
    assert "OpenDP" in record["statistics"][0]["measurement"]
    assert "certified generalized-Cauchy" in record["statistics"][1]["measurement"]
    assert set(record["files"]) >= {f"{n}.csv" for n in names} | {"plan.toml"}
    assert not any("confidential" in key for key in json.dumps(record).split('"'))
    db = ledger.open_ledger(url)
    acct = db.find_account("pseo-earnings-2019")
    entries = acct.entries()
    assert len(entries) == 1 and entries[0].epsilon == pytest.approx(2.0)
    assert record["ledger"]["entry_id"] == entries[0].id
    assert entries[0].record["plan"]["dataset"] == "pseo-earnings-2019"
    # a second run would exceed the cap (2 + 2 > 3): refused before reading data, nothing written
    code, _, err = _cli(
        capsys, "release", plan, "--data", tmp / "missing.parquet", "--out", tmp / "out2", "--ledger", url
    )
    assert code == 2
    line = _one_line_error(err)
    assert "refused before reading any data" in line or "no such file" in line
    code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", tmp / "out2", "--ledger", url)
    assert code == 2 and "refused before reading any data" in _one_line_error(err)
    assert not (tmp / "out2").exists()
    assert len(acct.entries()) == 1
    # --init-ledger on a ledger that holds charges is refused (a script always passing it cannot recreate a
    # ledger that vanished)
    code, _, err = _cli(
        capsys, "release", plan, "--data", data, "--out", tmp / "out2", "--ledger", url, "--init-ledger"
    )
    assert code == 2 and "already holds charges" in _one_line_error(err)
    assert len(acct.entries()) == 1


def test_simulation_charges_nothing(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    code, _, err = _cli(
        capsys,
        "release",
        plan,
        "--data",
        data,
        "--out",
        tmp / "sim",
        "--ledger",
        url,
        "--seed",
        7,
        "--public-data",
        "--engine",
        "pandas",
    )
    assert code == 0, err
    assert "SIMULATION" in err
    record = json.loads((tmp / "sim" / "release_record.json").read_text())
    assert record["mode"] == "simulation, not a release" and record["simulation"]["seed"] == 7
    assert "ledger" not in record
    assert "simulation" in record["statistics"][0]["measurement"]
    if (tmp / "ledger.db").exists():
        acct = ledger.open_ledger(url).find_account("pseo-earnings-2019")
        assert acct is None or acct.entries() == []
    # same seed, other engine: the same tables
    code, _, err = _cli(
        capsys, "release", plan, "--data", data, "--out", tmp / "sim2", "--seed", 7, "--public-data", "--quiet"
    )
    assert code == 0 and err == ""
    for name in ("02_gini_by_state", "03_mean_by_state", "01_percentiles_by_institution_degree-level_cohort"):
        f = f"SIMULATION_{name}.csv"  # a simulation's tables say so in their names
        assert (tmp / "sim" / f).read_bytes() == (tmp / "sim2" / f).read_bytes()


def test_failed_run_leaves_out_dir_empty(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    out = tmp / "empty"
    out.mkdir()
    bad_plan = tmp / "bad.toml"
    bad_plan.write_text(PLAN.replace('income = "earnings"', 'income = "salary"'))
    code, _, err = _cli(capsys, "release", bad_plan, "--data", data, "--out", out, "--ledger", url, "--init-ledger")
    assert code == 2
    assert "column 'salary' is not in the data" in _one_line_error(err)
    assert list(out.iterdir()) == []
    assert [p.name for p in tmp.iterdir() if p.name.startswith(".empty")] == []  # no temp dir left beside it
    assert ledger.open_ledger(url).find_account("pseo-earnings-2019").entries() == []  # nothing charged
    # a failure while writing (after the charge) leaves DIR empty too
    from dpcore.engines import execute

    real = execute.write_outputs

    def broken(out_dir, *args, **kwargs):
        def boom(*a, **k):
            raise OSError("disk full")

        original = pd.DataFrame.to_parquet
        pd.DataFrame.to_parquet = boom
        try:
            return real(out_dir, *args, **kwargs)
        finally:
            pd.DataFrame.to_parquet = original

    execute.write_outputs = broken
    try:
        code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--ledger", url)
    finally:
        execute.write_outputs = real
    # one line saying that epsilon was spent, and why nothing was written; exit 3 (charged, not delivered)
    line = _one_line_error(err)
    assert code == cli.EXIT_CHARGED_NOT_DELIVERED == 3
    assert "epsilon = 2 was charged" in line and "was charged to account 'pseo-earnings-2019'" in line
    assert "nothing was written: disk full" in line
    assert list(out.iterdir()) == []
    assert [p.name for p in tmp.iterdir() if p.name.startswith(".empty")] == []
    # the charge happened before the noise (charge first, then reveal): the budget is spent
    assert len(ledger.open_ledger(url).find_account("pseo-earnings-2019").entries()) == 1


def test_out_dir_not_empty_is_refused(setup, capsys):
    tmp, plan, data = setup
    out = tmp / "full"
    out.mkdir()
    (out / "keep.txt").write_text("x")
    code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", out, "--seed", 1, "--public-data")
    assert code == 2 and "is not empty" in _one_line_error(err)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--engine", "polars"], "unknown engine 'polars'"),
        (["--seed", "abc"], "--seed must be a non-negative integer"),
    ],
)
def test_bad_arguments(setup, capsys, args, message):
    tmp, plan, data = setup
    code, _, err = _cli(capsys, "release", plan, "--data", data, "--out", tmp / "o", *args)
    assert code == 2 and message in _one_line_error(err)


def test_bad_plan_and_bad_data(setup, capsys):
    tmp, plan, data = setup
    bad = tmp / "bad.toml"
    bad.write_text(PLAN.replace("upper = 500000", "upper = -1"))
    code, _, err = _cli(capsys, "release", bad, "--data", data, "--out", tmp / "o", "--seed", 1, "--public-data")
    assert code == 2
    assert "statistics[3] (mean): field 'upper' must be greater than lower" in _one_line_error(err)
    df = pd.read_parquet(data).astype({"earnings": object})
    df.loc[3, "earnings"] = "n/a"
    df.to_csv(tmp / "text.csv", index=False)
    code, _, err = _cli(
        capsys, "release", plan, "--data", tmp / "text.csv", "--out", tmp / "o", "--seed", 1, "--public-data"
    )
    assert code == 2 and "income column 'earnings' is not numeric: found 'n/a'" in _one_line_error(err)
    code, _, err = _cli(capsys)
    assert code == 2
    with pytest.raises(SystemExit) as info:
        cli.main(["release", str(plan)])  # --data missing
    assert info.value.code == 2
    _, err = capsys.readouterr()
    assert "the following arguments are required" in _one_line_error(err)


def test_check_command(setup, capsys):
    tmp, plan, _ = setup
    code, out, _ = _cli(capsys, "check", plan)
    assert code == 0 and "epsilon = 2 of cap 3" in out and "02_gini_by_state: gini by state" in out


def test_check_names_where_delta_comes_from(tmp_path, capsys):
    """The certified Gini sampler is pure (delta 0) in every release: a plan's delta comes from its DP cell
    selections (and noise = "laplace" Ginis), and `dpcore check` says so."""
    raw = {
        "version": 1,
        "dataset": "where-delta",
        "income": "earnings",
        "cap_epsilon": 5.0,
        "statistics": [
            {"kind": "gini", "epsilon": 0.5, "lower": 0, "upper": 1_000_000},
            {"kind": "mean", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 500_000},
        ],
    }
    path = tmp_path / "plan.toml"
    write_plan(plan_module.plan_from_dict(raw), path)
    code, out, _ = _cli(capsys, "check", path)
    first = out.splitlines()[0]
    assert code == 0 and "delta = 1e-10 (from the DP cell selection of 1 statistic(s))" in first
    assert "Gini" not in first
    raw["statistics"][0].update(noise="laplace", delta=1e-6)
    write_plan(plan_module.plan_from_dict({**raw, "cap_delta": 1e-5}), path)
    code, out, _ = _cli(capsys, "check", path)
    assert 'the DP cell selection of 1 statistic(s) and 1 Gini(s) with noise = "laplace"' in out.splitlines()[0]


def test_the_docs_say_what_the_command_line_does():
    """The Gini's sampler runs in its pure-DP mode on the command line as in the app (one mechanism: window [0, 1],
    scale floor, no sampler delta), the plan's population must be registered, and an exponential-quantile table
    has no interval: the docs say so, not the (epsilon, 7e-23) mode, an account created by the plan, or an interval
    on every table."""
    from dpcore.engines.draws import gini_mechanism

    plan = plan_module.parse_plan(PLAN)
    gini = next(s for s in plan.statistics if s.kind == "gini")
    record = gini_mechanism(gini, plan.rows_per_person).value_mechanism.record()
    assert record["output_window"] == [0.0, 1.0] and record["min_noise_scale"] > 0
    assert "sampler_delta_per_cell" not in record
    docs = {
        n: " ".join((ROOT / "docs" / n).read_text().split())
        for n in ("secure_noise.md", "privacy.md", "release_cli.md")
    }
    assert "generalized Cauchy, certified sampler, pure mode | 1e-6 / [0, 1]" in docs["secure_noise.md"]
    assert "(ε, δ) mode | 1e-6 / ±2^52" not in docs["secure_noise.md"]
    assert "δ ≈ 7e-23 per cell at ε = 0.5 (as recorded)" not in docs["privacy.md"]
    assert "created with the plan's caps when new" not in docs["release_cli.md"]
    assert "an unregistered population is refused" in docs["release_cli.md"]
    assert (
        "An exponential-mechanism quantile table (`method = \"exponential\"`) carries no interval"
        in docs["release_cli.md"]
    )


def test_subprocess_module_and_console_script_entry(setup):
    tmp, plan, data = setup
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [
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
            str(tmp / "sub"),
            "--seed",
            "3",
            "--public-data",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "sub" / "release_record.json").exists()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dpcore",
            "release",
            str(plan),
            "--data",
            str(data),
            "--engine",
            "nope",
            "--out",
            str(tmp / "sub2"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 2 and proc.stderr.strip().count("\n") == 0 and "unknown engine" in proc.stderr
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert meta["project"]["scripts"]["dpcore"] == "dpcore.cli:main"
    assert "examples/*" in meta["tool"]["setuptools"]["package-data"]["dpcore"]
    assert {"spark", "postgres"} <= set(meta["project"]["optional-dependencies"])


def test_run_sh_release_passthrough(setup):
    """bash run.sh release ... runs python -m dpcore release from the caller's directory (relative paths)."""
    import hashlib

    tmp, plan, data = setup
    venv = tmp / "venv"
    (venv / "bin").mkdir(parents=True)
    wrapper = venv / "bin" / "python"
    wrapper.write_text(f"#!/bin/sh\nexec {sys.executable} \"$@\"\n")
    wrapper.chmod(0o755)
    digest = hashlib.sha1((ROOT / "requirements.txt").read_bytes() + (ROOT / "requirements-dev.txt").read_bytes())
    (venv / f".installed-app-{digest.hexdigest()[:12]}").touch()  # nothing gets installed
    proc = subprocess.run(
        [
            "bash",
            str(ROOT / "run.sh"),
            "release",
            plan.name,
            "--data",
            data.name,
            "--out",
            "runsh",
            "--seed",
            "1",
            "--public-data",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp,
        env={**os.environ, "VENV": str(venv)},
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp / "runsh" / "release_record.json").exists()


def test_plan_written_by_library_runs(setup, capsys):
    from dpcore import planner
    from dpcore.plan import plan_from_planner

    tmp, _, data = setup
    x = pd.read_parquet(data)["earnings"].to_numpy()
    plan = plan_from_planner(
        [
            (planner.make_statistic("gini", x, upper=2e6), 0.5),
            (planner.make_statistic("mean", x, lower=0, upper=5e5), 0.5),
        ],
        dataset="from-planner",
        income="earnings",
        cap_epsilon=2.0,
    )
    path = tmp / "downloaded.toml"
    write_plan(plan, path)
    code, _, err = _cli(capsys, "release", path, "--data", data, "--out", tmp / "p", "--seed", 2, "--public-data")
    assert code == 0, err
    assert len(pd.read_csv(tmp / "p" / "SIMULATION_01_gini.csv")) == 1
