"""Plans with a percentiles statistic of method = "exponential": the checks, the plan form and the command line."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from dpcore import cli, percentiles
from dpcore.plan import PlanError, parse_plan, plan_to_toml

HEAD = """
version = 1
dataset = "pseo-like"
income = "earnings"
cap_epsilon = 3.0
cell_sizes = "public"
"""


def _plan(statistic: str, head: str = HEAD):
    return parse_plan(
        head + "\n[[statistics]]\nkind = \"percentiles\"\nby = [\"institution\"]\nepsilon = 1.0\n" + statistic
    )


def test_exponential_defaults_and_round_trip():
    spec = _plan('method = "exponential"\n').statistics[0]
    assert spec.method == "exponential" and spec.q == (50.0,) and spec.bins_scheme == "pseo-fine"
    assert spec.bins == tuple(float(v) for v in percentiles.fine_candidate_grid())
    again = parse_plan(plan_to_toml(_plan('method = "exponential"\nq = [25, 50]\n'))).statistics[0]
    assert (again.method, again.q, again.bins_scheme) == ("exponential", (25.0, 50.0), "pseo-fine")
    listed = _plan('method = "exponential"\ncandidates = [0, 20000, 40000, 80000]\n').statistics[0]
    assert listed.bins == (0.0, 20000.0, 40000.0, 80000.0) and listed.to_dict()["candidates"] == list(listed.bins)
    histogram = _plan("").statistics[0]
    assert histogram.method == "histogram" and "method" not in histogram.to_dict()  # histogram plans unchanged


@pytest.mark.parametrize(
    "statistic,field,words",
    [
        ('method = "exponential"\nq = [10, 25, 50, 75, 90, 95]\n', "q", 'use method = "histogram"'),
        ('method = "exponential"\nq = [50, 100]\n', "q", "below 100"),
        ('method = "exponential"\nbins = "pseo"\n', "bins", "candidates"),
        ('candidates = "pseo-fine"\n', "candidates", "exponential"),
        ('method = "smooth"\n', "method", "'histogram' or 'exponential'"),
        ('method = "exponential"\ncandidates = "fine"\n', "candidates", "pseo-fine"),
        ('method = "exponential"\ncandidates = [0, 30000, 20000]\n', "candidates", "strictly increasing"),
    ],
)
def test_exponential_refusals(statistic, field, words):
    with pytest.raises(PlanError, match=f"field '{field}'") as info:
        _plan(statistic)
    assert words in str(info.value)


@pytest.fixture()
def data(tmp_path):
    rng = np.random.default_rng(5)
    n = 2000
    df = pd.DataFrame(
        {"institution": rng.choice(["A", "B", "C"], n), "earnings": np.round(rng.lognormal(11.0, 0.75, n))}
    )
    path = tmp_path / "data.parquet"
    df.to_parquet(path, index=False)
    return tmp_path, path, df


def test_command_line_releases_the_exponential_median(data, capsys):
    tmp, path, df = data
    plan = tmp / "plan.toml"
    plan.write_text(
        HEAD + '\n[[statistics]]\nkind = "percentiles"\nname = "median"\nby = ["institution"]\n'
        'epsilon = 1.0\nmethod = "exponential"\n'
    )
    out = tmp / "out"
    code = cli.main(
        [
            "release",
            str(plan),
            "--data",
            str(path),
            "--out",
            str(out),
            "--engine",
            "pandas",
            "--ledger",
            f"sqlite:///{tmp / 'ledger.db'}",
            "--init-ledger",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    table = pd.read_csv(out / "median.csv")
    assert list(table.columns) == ["institution", "n", "p50"]
    truth = df.groupby("institution").earnings.median()
    grid = percentiles.fine_candidate_grid()
    assert set(table.p50) <= set(grid)  # the released value is a candidate of the public grid
    assert np.all(np.abs(table.set_index("institution").p50 / truth - 1) < 0.1)  # 650 rows a cell at epsilon 1
    record = json.loads((out / "release_record.json").read_text())
    stat = record["statistics"][0]
    assert stat["method"] == "exponential" and "make_noisy_max" in stat["measurement"]
    assert stat["map_epsilon"] == pytest.approx(1.0) and record["privacy"]["cost"]["epsilon"] == pytest.approx(1.0)
    assert stat["candidates"] == [float(v) for v in grid]


def test_noisy_cell_sizes_double_the_score_sensitivity(data, capsys):
    tmp, path, _ = data
    plan = tmp / "plan.toml"
    head = HEAD.replace('cell_sizes = "public"', 'cell_sizes = "noisy"')
    plan.write_text(
        head + '\n[keys]\ninstitution = ["A", "B", "C"]\n\n[[statistics]]\nkind = "percentiles"\n'
        'by = ["institution"]\nepsilon = 1.0\nmethod = "exponential"\nq = [25, 75]\n'
    )
    out = tmp / "sim"
    code = cli.main(
        [
            "release",
            str(plan),
            "--data",
            str(path),
            "--out",
            str(out),
            "--engine",
            "pandas",
            "--seed",
            "3",
            "--public-data",
            "--quiet",
        ]
    )
    assert code == 0, capsys.readouterr().err
    record = json.loads((out / "release_record.json").read_text())
    assert "score sensitivity 2" in record["statistics"][0]["noise"]
    table = pd.read_csv(next(out.glob("SIMULATION_*.csv")))
    assert {"p25", "p75"} <= set(table.columns) and np.all(table.p25 <= table.p75)
