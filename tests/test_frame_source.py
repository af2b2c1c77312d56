"""An in-memory table as a release's source (dpcore.engines.frame_source, the pandas engine): the app's Release
mode releases an uploaded file's parsed records without writing them to disk, through run_plan as the command
line does. The same records give the same release as their CSV file, and attach to the population by the app's
fingerprint of them (dpcore.ledger.dataset_fingerprints)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from dpcore import ledger
from dpcore.engines import execute, frame_source, parse_source
from dpcore.plan import plan_from_dict
from dpcore.validation import DPInputError

PLAN = {
    "version": 1,
    "population": "households",
    "income": "income",
    "cap_epsilon": 3.0,
    "cell_sizes": "public",
    "statistics": [
        {"kind": "mean", "by": ["region"], "epsilon": 0.5, "lower": 0, "upper": 200_000},
        {"kind": "percentiles", "by": ["region"], "epsilon": 1.0, "bins": "pseo", "q": [50]},
        {"kind": "gini", "epsilon": 0.5, "lower": 0, "upper": 500_000},
    ],
}


@pytest.fixture
def frame():
    gen = np.random.default_rng(4)
    income = np.round(gen.lognormal(10.6, 0.8, 600), 2)
    income[:3] = np.nan  # missing incomes: kept in n at the lower bound, by the plan's rule, in both sources
    return pd.DataFrame({"income": income, "region": gen.choice(["north", "south", "west"], 600), "id": range(600)})


def test_a_frame_releases_as_its_csv_file(frame, tmp_path):
    path = tmp_path / "data.csv"
    frame.to_csv(path, index=False)
    plan = plan_from_dict(PLAN)
    runs = {}
    for name, source in (("file", parse_source(str(path))), ("frame", frame_source(frame, "upload.csv"))):
        runs[name] = execute.run_plan(plan, source, engine="pandas", out_dir=tmp_path / name, seed=7, public_data=True)
    for stat in plan.statistics:  # the same cells, sizes and (seeded) noisy values
        pd.testing.assert_frame_equal(runs["file"].tables[stat.name], runs["frame"].tables[stat.name])
    assert runs["frame"].record["source"] == "in-memory table upload.csv"
    differing = {k for k in runs["file"].record if runs["file"].record[k] != runs["frame"].record[k]}
    assert differing <= {"source", "created", "files", "statistics"}


def test_a_frame_joins_its_population_by_the_apps_fingerprint(frame, tmp_path):
    url = f"sqlite:///{tmp_path}/ledger.db"
    db = ledger.init_ledger(url)
    db.register_population("households", 3.0)
    result = execute.run_plan(
        plan_from_dict(PLAN),
        frame_source(frame, "upload.csv"),
        engine="pandas",
        out_dir=tmp_path / "out",
        ledger_url=url,
    )
    assert result.ledger_entry_id is not None
    app_fingerprint = ledger.dataset_fingerprints(frame, db.record_fingerprint_versions)
    assert db.source_population(app_fingerprint).population == "households"


def test_only_the_pandas_engine_reads_a_frame(frame, tmp_path):
    with pytest.raises(DPInputError, match="pandas engine"):
        execute.run_plan(
            plan_from_dict(PLAN),
            frame_source(frame, "upload.csv"),
            engine="duckdb",
            out_dir=tmp_path / "o",
            seed=1,
            public_data=True,
        )
    with pytest.raises(TypeError):
        frame_source(frame.to_dict(), "x")
