"""Missing values move only noisy numbers: neighbouring files that differ in one person's outcome (a value vs
empty) or income (a value vs empty) give the same public numbers (the cells and every exact n) in every
engine, and with a ``privacy_unit`` the same rows are kept. The noisy inputs (outcome counts, clipped sums,
histogram bins) move by at most what the noise is calibrated for.

The engines' aggregates are compared directly: the cell lists and the n columns are what a release publishes
(as PSEO publishes cell counts), whatever noise is added afterwards.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import ledger
from dpcore.engines import EngineSpec, execute, open_engine, parse_source
from dpcore.plan import PlanError, StatisticSpec, parse_plan, plan_from_dict, plan_to_toml
from dpcore.validation import DPInputError

# the relative-risk statistics Engine.outcomes counts for
TREATED_EMPLOYED = StatisticSpec(
    1, "relative_risk", 1.0, group="treated", exposed="yes", reference="no", outcome="employed"
)
TREATED_BELOW_40K = StatisticSpec(
    1, "relative_risk", 1.0, group="treated", exposed="yes", reference="no", outcome_below=40_000
)

EDGES = [0.0, 20_000.0, 50_000.0, 100_000.0, 1e6]
LOWER, UPPER = 1_000.0, 200_000.0
ENGINES = ("pandas", "duckdb")


def base_frame() -> pd.DataFrame:
    """40 rows, people p0..p19 with two rows each; Wyoming is a one-row cell (the lone person)."""
    rng = np.random.default_rng(24)
    n = 40
    df = pd.DataFrame(
        {
            "row_id": [f"r{i:02d}" for i in range(n)],
            "person": [f"p{i // 2}" for i in range(n)],
            "state": rng.choice(["CO", "TX"], n).astype(object),
            "treated": rng.choice(["yes", "no"], n),
            "employed": rng.choice(["1", "0"], n).astype(object),
            "earnings": np.round(rng.lognormal(10.5, 0.8, n), 2).astype(object),
        }
    )
    df.loc[0, ["state", "treated", "employed", "earnings"]] = ["WY", "yes", "1", "87000.00"]
    return df


def _write(df: pd.DataFrame, path: Path) -> str:
    df.to_csv(path, index=False)  # None -> an empty field: a missing value
    return str(path)


def plan_raw(**top) -> dict:
    # cell sizes public (the PSEO setting): the exact n are published, so they must not move
    raw = {
        "version": 1,
        "dataset": "missing-values",
        "income": "earnings",
        "cap_epsilon": 5.0,
        "cell_sizes": "public",
        "statistics": [
            {"kind": "percentiles", "by": ["state"], "epsilon": 1.0, "bins": EDGES, "q": [50]},
            {"kind": "mean", "by": ["state"], "epsilon": 1.0, "lower": LOWER, "upper": UPPER},
            {"kind": "gini", "by": ["state"], "epsilon": 1.0, "lower": LOWER, "upper": UPPER},
            {
                "kind": "relative_risk",
                "by": ["state"],
                "epsilon": 0.5,
                "group": "treated",
                "exposed": "yes",
                "reference": "no",
                "outcome": "employed",
            },
            {
                "kind": "relative_risk",
                "by": ["state"],
                "epsilon": 0.5,
                "group": "treated",
                "exposed": "yes",
                "reference": "no",
                "outcome_below": 40_000,
            },
        ],
    }
    raw.update(top)
    return raw


def aggregates(engine: str, path: str, plan_top: dict | None = None, by=("state",)) -> dict[str, pd.DataFrame]:
    """Every aggregate a release of the plan computes, by ``by``."""
    plan = plan_from_dict(plan_raw(**(plan_top or {})))
    spec = EngineSpec.from_plan(plan)
    if "row_id" in by:  # the row id as a cell column: the sums list every kept row
        spec = EngineSpec(
            spec.income,
            (*spec.text_columns, "row_id"),
            spec.privacy_unit,
            spec.max_rows_per_person,
            spec.bounding_seed,
            spec.outcome_columns,
            spec.missing_income,
        )
    by = list(by)
    with open_engine(engine, parse_source(path), spec) as eng:
        hist = eng.histogram(by, EDGES).sort_values([*by, "bin"], kind="stable").reset_index(drop=True)
        return {
            "histogram": hist,
            "histogram_n": hist.groupby(by, dropna=False, sort=True)["count"].sum().reset_index(),
            "sums": eng.sums(by, LOWER, UPPER),
            "gini": eng.gini_inputs(by, LOWER, UPPER, 0.05),
            "outcomes": eng.outcomes(by, TREATED_EMPLOYED),
            "outcomes_below": eng.outcomes(by, TREATED_BELOW_40K),
        }


def public_part(agg: dict[str, pd.DataFrame], by=("state",)) -> dict[str, pd.DataFrame]:
    """What a release publishes exactly: the cells and their sizes."""
    by = list(by)
    return {
        "histogram_n": agg["histogram_n"],
        "sums": agg["sums"][[*by, "n"]],
        "gini": agg["gini"][[*by, "n"]],
        "outcomes": agg["outcomes"][[*by, "n_exposed", "n_reference"]],
        "outcomes_below": agg["outcomes_below"][[*by, "n_exposed", "n_reference"]],
    }


def assert_same_public(a: dict, b: dict) -> None:
    for name in a:
        pd.testing.assert_frame_equal(a[name].reset_index(drop=True), b[name].reset_index(drop=True), obj=name)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("missing_values")
    base = base_frame()
    no_outcome = base.copy()
    no_outcome.loc[0, "employed"] = None  # the lone person's outcome: 1 -> empty
    no_income = base.copy()
    no_income.loc[0, "earnings"] = None  # the lone person's income: 87,000 -> empty
    inf_income = base.copy()
    inf_income.loc[0, "earnings"] = "inf"  # not finite: the same rule as missing
    all_missing = base.copy()
    all_missing["earnings"] = None
    return {
        "base": _write(base, d / "base.csv"),
        "no_outcome": _write(no_outcome, d / "no_outcome.csv"),
        "no_income": _write(no_income, d / "no_income.csv"),
        "inf_income": _write(inf_income, d / "inf.csv"),
        "all_missing": _write(all_missing, d / "all_missing.csv"),
        "dir": str(d),
    }


@pytest.mark.parametrize("engine", ENGINES)
def test_a_missing_outcome_stays_in_n_and_is_not_a_case(files, engine):
    base = aggregates(engine, files["base"])
    neighbour = aggregates(engine, files["no_outcome"])
    assert_same_public(public_part(base), public_part(neighbour))
    assert list(base["outcomes"]["state"]) == ["CO", "TX", "WY"]
    wy = [t["outcomes"].set_index("state").loc["WY"] for t in (base, neighbour)]
    assert (wy[0]["n_exposed"], wy[0]["cases_exposed"]) == (1, 1)
    assert (wy[1]["n_exposed"], wy[1]["cases_exposed"]) == (1, 0)  # the only noisy input that moved: by 1


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("variant", ["no_income", "inf_income"])
def test_a_missing_income_keeps_its_one_person_cell_in_every_table(files, engine, variant):
    base = aggregates(engine, files["base"])
    neighbour = aggregates(engine, files[variant])
    assert_same_public(public_part(base), public_part(neighbour))
    for table in ("sums", "gini", "outcomes", "histogram_n"):
        assert "WY" in list(neighbour[table]["state"]), table
    # the rule: the mean and the Gini count it at the public lower bound, the histogram in its first bin,
    # an income-threshold outcome as not a case
    sums = neighbour["sums"].set_index("state").loc["WY"]
    assert (sums["n"], sums["sum_cents"]) == (1, round(LOWER * 100))
    hist = neighbour["histogram"]
    assert hist[hist["state"] == "WY"][["bin", "count"]].values.tolist() == [[0, 1]]
    below = neighbour["outcomes_below"].set_index("state").loc["WY"]
    assert (below["n_exposed"], below["cases_exposed"]) == (1, 0)


@pytest.mark.parametrize("engine", ENGINES)
def test_privacy_unit_keeps_the_same_rows_when_an_income_goes_missing(files, engine, tmp_path):
    """m = 1 of two rows per person: blanking the income (or the outcome) of a kept row keeps that row,
    so the kept rows (listed by their row id) and every cell size are the same."""
    bounded = {"privacy_unit": "person", "max_rows_per_person": 1, "bounding_seed": 3}
    by = ("state", "row_id")
    base = base_frame()
    kept = set(aggregates(engine, files["base"], bounded, by)["sums"]["row_id"])
    assert len(kept) == 20
    # with the row id among the key columns, k1 differs per row, so the sample is fixed by the rows alone: a
    # filter on missing values before the sampling (the old engines) would keep the person's other row
    public = public_part(aggregates(engine, files["base"], bounded))
    for person in ("p0", "p1"):
        rows = base.index[base["person"] == person]
        row = next(i for i in rows if base.loc[i, "row_id"] in kept)
        for column in ("earnings", "employed"):
            neighbour = base.copy()
            neighbour.loc[row, column] = None
            path = _write(neighbour, tmp_path / f"{person}_{column}.csv")
            assert set(aggregates(engine, path, bounded, by)["sums"]["row_id"]) == kept, (person, column)
            # by the plan's cells only (k2, which reads the values, may pick another row of the same cells)
            assert_same_public(public, public_part(aggregates(engine, path, bounded)))


def test_pandas_and_duckdb_agree_on_missing_values(files):
    for name in ("no_outcome", "no_income", "inf_income", "all_missing"):
        a, b = aggregates("pandas", files[name]), aggregates("duckdb", files[name])
        for table in a:
            pd.testing.assert_frame_equal(a[table], b[table], check_dtype=False, obj=f"{name}: {table}")


def test_missing_income_is_a_plan_field():
    plan = plan_from_dict(plan_raw())
    assert plan.missing_income == "lower" and "missing_income" not in plan_to_toml(plan)  # default not written
    refuse = plan_from_dict(plan_raw(missing_income="refuse"))
    assert parse_plan(plan_to_toml(refuse)).missing_income == "refuse"
    with pytest.raises(PlanError, match="field 'missing_income' must be one of 'lower', 'refuse'"):
        plan_from_dict(plan_raw(missing_income="drop"))


@pytest.mark.parametrize("engine", ENGINES)
def test_missing_income_refuse_stops_before_reading_further(files, engine):
    with pytest.raises(DPInputError, match="has 1 missing or non-finite value.*missing_income = 'refuse'"):
        aggregates(engine, files["no_income"], {"missing_income": "refuse"})
    aggregates(engine, files["base"], {"missing_income": "refuse"})  # none missing: accepted


def test_a_release_states_the_rule_and_releases_all_missing_incomes(files, tmp_path):
    """A real release (SQLite ledger): the record's ``missing_values`` states the rules; a file whose incomes
    are all missing is released like any other (refusing it would reveal that they are all missing);
    ``missing_income = "refuse"`` refuses before the charge."""
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    plan = plan_from_dict(plan_raw(cap_delta=1e-9))
    result = execute.run_plan(
        plan,
        parse_source(files["all_missing"]),
        engine="pandas",
        out_dir=tmp_path / "out",
        ledger_url=url,
        init_ledger=True,
    )
    rules = result.record["missing_values"]
    assert rules["income"].startswith("lower:") and "not a case" in rules["outcome"]
    assert "before any missing value" in rules["privacy_unit"]
    assert len(result.tables) == len(plan.statistics)
    refuse = plan_from_dict(plan_raw(cap_delta=1e-9, missing_income="refuse", dataset="missing-values-refuse"))
    with pytest.raises(DPInputError, match="nothing was charged"):
        execute.run_plan(
            refuse, parse_source(files["no_income"]), engine="duckdb", out_dir=tmp_path / "out2", ledger_url=url
        )
    account = ledger.open_ledger(url).find_account("missing-values-refuse")
    assert account is None or not account.entries()


def spark_case(tmp_path: Path) -> None:
    """Spark (one case, run by tests/test_engines.py on its Spark session; the SQL is the DuckDB engine's): the
    lone person's income and outcome both missing keep their cell and its n. Two aggregates only (a Spark job
    each)."""
    both = base_frame()
    both.loc[0, ["earnings", "employed"]] = None
    path = _write(both, tmp_path / "both.csv")
    base = _write(base_frame(), tmp_path / "base.csv")
    plan = plan_from_dict(plan_raw())
    with open_engine("spark", parse_source(path), EngineSpec.from_plan(plan)) as eng:
        sums = eng.sums(["state"], LOWER, UPPER)
        outcomes = eng.outcomes(["state"], TREATED_EMPLOYED)
    expected = aggregates("pandas", path)
    public = public_part(aggregates("pandas", base))
    pd.testing.assert_frame_equal(sums, expected["sums"], check_dtype=False)
    pd.testing.assert_frame_equal(outcomes, expected["outcomes"], check_dtype=False)
    pd.testing.assert_frame_equal(sums[["state", "n"]], public["sums"], check_dtype=False)
    pd.testing.assert_frame_equal(
        outcomes[["state", "n_exposed", "n_reference"]], public["outcomes"], check_dtype=False
    )
