"""No simulation door: seeded noise never turns confidential values into published numbers without a charge.

The attack (an audit of the command line and the API): a simulation's noise is regenerated from its seed,
which the record names, so running the same plan with that seed on a file with the same cells and
subtracting recovers every true aggregate exactly -- a lone person's income of 87,000.00 -- and nothing
was charged. The same with ``make_release(items, account, rng=42)`` (charged, but reproducible from 42)
and with a public ``release`` method on the planner's statistics (real noise, no ledger at all).
Now: ``--seed`` runs only on data declared public (``--public-data``), every simulated table says so in a
column and in its file name, a ledger account refuses a caller's generator, and the planner's statistics
offer ``simulate_draw`` (numpy, no ledger) but no public release method.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import budget, cli, ledger, planner, release
from dpcore.engines import execute, output, parse_source
from dpcore.plan import plan_from_dict
from dpcore.rng import SecureRandom
from dpcore.validation import DPInputError

ROOT = Path(__file__).resolve().parents[1]
TARGET_INCOME = 87_000.00

#: a whole-table mean and percentiles: no cell keys involved, so the attack needs no small cell
PLAN_TOML = """
version = 1
dataset = "payroll-2026"
income = "earnings"
cap_epsilon = 2.0

[[statistics]]
kind = "mean"
by = []
epsilon = 1.0
lower = 0
upper = 200000

[[statistics]]
kind = "percentiles"
by = []
epsilon = 0.5
bins = "pseo"
q = [50]
"""


@pytest.fixture()
def files(tmp_path):
    """A confidential file whose last row is the target, and the attacker's dummy: the same rows (cells, n)
    with the target's income set to 0 -- everything the attacker knows except the one value sought."""
    rng = np.random.default_rng(24)
    others = np.round(rng.lognormal(10.6, 0.6, 199), 2)
    confidential = pd.DataFrame({"earnings": np.append(others, TARGET_INCOME)})
    dummy = pd.DataFrame({"earnings": np.append(others, 0.0)})
    confidential.to_parquet(tmp_path / "confidential.parquet", index=False)
    dummy.to_parquet(tmp_path / "dummy.parquet", index=False)
    (tmp_path / "plan.toml").write_text(PLAN_TOML)
    return tmp_path


def _cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _error_line(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("dpcore:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_seed_on_data_not_declared_public_is_refused_before_reading_any_data(files, capsys):
    """Before: exit 0, the simulation of the confidential file written and nothing charged."""
    out = files / "sim"
    code, _, err = _cli(
        capsys,
        "release",
        files / "plan.toml",
        "--data",
        files / "confidential.parquet",
        "--engine",
        "pandas",
        "--out",
        out,
        "--seed",
        7,
    )
    line = _error_line(err)
    assert code == 2, err
    assert "refused before reading any data" in line and "invertible" in line
    assert "--public-data" in line and "real release" in line
    assert not out.exists()
    # the API refuses the same, before the output folder is even taken
    plan = plan_from_dict(__import__("tomllib").loads(PLAN_TOML))
    with pytest.raises(DPInputError, match="invertible"):
        execute.run_plan(
            plan, parse_source(str(files / "confidential.parquet")), engine="pandas", out_dir=files / "api", seed=7
        )
    assert not (files / "api").exists()


def test_declared_public_simulation_is_invertible_so_every_table_is_marked(files, capsys):
    """Why the declaration is required: with the recorded seed the attacker regenerates the noise on the dummy
    file and the difference gives the target's income to the cent. So a simulation is only for data that may
    be revealed, and its tables can never pass for a release: a ``simulation`` column in every table, every
    file name starting with SIMULATION_, the record's mode saying simulation."""
    runs = {}
    for name in ("confidential", "dummy"):
        out = files / f"sim-{name}"
        code, stdout, err = _cli(
            capsys,
            "release",
            files / "plan.toml",
            "--data",
            files / f"{name}.parquet",
            "--engine",
            "pandas",
            "--out",
            out,
            "--seed",
            7,
            "--public-data",
            "--quiet",
        )
        assert code == 0, err
        runs[name] = out
    record = json.loads((runs["confidential"] / "release_record.json").read_text())
    seed = record["simulation"]["seed"]
    assert seed == 7 and record["simulation"]["public_data"] is True
    assert "simulation" in record["mode"] and "ledger" not in record
    table_files = sorted(p.name for p in runs["confidential"].iterdir() if p.suffix in (".csv", ".parquet"))
    assert len(table_files) == 4 and all(f.startswith(output.SIMULATION_PREFIX) for f in table_files)
    assert {f for s in record["statistics"] for f in s["files"]} == set(table_files)
    assert set(table_files) <= set(record["files"])
    for f in table_files:
        path = runs["confidential"] / f
        table = pd.read_csv(path) if f.endswith(".csv") else pd.read_parquet(path)
        assert "simulation" in table.columns and table["simulation"].astype(bool).all(), f
    # the inversion: same seed, same cells, so the same noise; the difference of the means times n
    mean_file = next(f for f in table_files if "mean" in f and f.endswith(".parquet"))
    conf, dummy = (pd.read_parquet(runs[k] / mean_file) for k in ("confidential", "dummy"))
    recovered = float((conf["mean"].iloc[0] - dummy["mean"].iloc[0]) * conf["n"].iloc[0])
    # the published means have honest digits (a step <= 1/20 of the interval): the income is still recovered to
    # within n steps, a few thousand here, and exactly from the unrounded numbers a simulation reproduces
    step = float(conf["mean_upper"].iloc[0] - conf["mean_lower"].iloc[0]) / 20
    assert recovered == pytest.approx(TARGET_INCOME, abs=float(conf["n"].iloc[0]) * step)


def test_bundled_public_example_may_be_simulated(tmp_path, capsys):
    """The bundled examples are public domain (dpcore/examples/README.md): --public-data is the honest
    declaration for them."""
    plan = tmp_path / "engel.toml"
    plan.write_text(PLAN_TOML.replace('"earnings"', '"income"').replace('"payroll-2026"', '"engel-1857"'))
    out = tmp_path / "engel"
    code, _, err = _cli(
        capsys,
        "release",
        plan,
        "--data",
        ROOT / "dpcore" / "examples" / "engel1857_belgium.csv",
        "--engine",
        "pandas",
        "--out",
        out,
        "--seed",
        3,
        "--public-data",
        "--quiet",
    )
    assert code == 0, err
    assert sorted(p.name for p in out.glob("*.csv")) == ["SIMULATION_01_mean.csv", "SIMULATION_02_percentiles.csv"]


@pytest.fixture()
def account(tmp_path):
    return ledger.open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}").account("payroll-2026", cap_epsilon=10.0)


@pytest.mark.parametrize("caller_rng", [42, np.random.default_rng(42)], ids=["seed", "generator"])
def test_ledger_account_refuses_a_callers_generator(account, caller_rng):
    """Before: charged, yet two calls with rng=42 gave identical numbers (the noise regenerable from 42)."""
    incomes = np.append(np.random.default_rng(1).lognormal(10.6, 0.6, 99), TARGET_INCOME)
    stat = planner.make_statistic("mean", incomes, upper=200_000)
    with pytest.raises(DPInputError, match="secure sampler") as refused:
        release.make_release([(stat, 1.0)], account, rng=caller_rng)
    assert "Nothing was charged" in str(refused.value)
    assert account.entries() == [] and account.spent_epsilon() == 0.0


def test_ledger_account_releases_with_the_secure_sampler(account):
    incomes = np.random.default_rng(1).lognormal(10.6, 0.6, 100)
    stat = planner.make_statistic("count", incomes, threshold=40_000)
    (first,) = release.make_release([(stat, 1.0)], account)
    (second,) = release.make_release([(stat, 1.0)], account, rng=SecureRandom())
    for rec in (first, second):
        assert "OpenDP" in rec.measurement and "SIMULATION" not in rec.sampler
    assert len(account.entries()) == 2


def test_a_seeded_release_is_a_simulation_and_an_in_memory_budget_no_release():
    """Before: make_release on an in-memory budget with rng=5 drew seeded noise and called it a release; a
    seeded draw is simulate_release's now (never charged, labelled), and make_release takes a durable account."""
    incomes = np.random.default_rng(1).lognormal(10.6, 0.6, 100)
    stat = planner.make_statistic("mean", incomes, upper=200_000)
    (rec,) = release.simulate_release([(stat, 1.0)], rng=5)
    assert "SIMULATION" in rec.sampler and "simulation" in rec.measurement and rec.ledger_entry_id is None
    with pytest.raises(TypeError, match="durable"):
        release.make_release([(stat, 1.0)], budget.Ledger(), rng=5)
    with pytest.raises(DPInputError, match="simulate_release draws numpy noise"):
        release.simulate_release([(stat, 1.0)], rng=SecureRandom())


KINDS = {
    "count": dict(threshold=40_000),
    "mean": dict(upper=2e5),
    "group_means": dict(upper=2e5),
    "percentiles": dict(n_sims=100),
    "ratio": dict(threshold=40_000),
    "gini": dict(upper=2e5),
}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_planned_statistics_have_no_public_release(kind):
    """Before: ``stat.release(eps)`` drew real noise with no ledger (and ``release_draw`` the same)."""
    assert not hasattr(planner.PlannedStatistic, "release")
    x = np.random.default_rng(3).lognormal(10.3, 0.7, 120)
    stat = planner.make_statistic(kind, x, np.where(np.arange(120) % 2 == 0, "a", "b"), **KINDS[kind])
    drawing = [name for name in dir(stat) if "release" in name and not name.startswith(("_", "check_"))]
    assert drawing == [], drawing
    values = stat.simulate_draw(0.8, rng=5)
    assert values.shape == (len(stat.labels),) and np.array_equal(values, stat.simulate_draw(0.8, rng=5))
    with pytest.raises(DPInputError, match="make_release"):
        stat.simulate_draw(0.8, rng=SecureRandom())
