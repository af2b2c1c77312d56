"""Neighbouring files behave alike on the command line: the audit's pairs, each run through ``dpcore release``.

Each pair differs in one person. Both files must give the same exit code, the same charge on the ledger, the same
table columns and the same public numbers (cells and exact n where the sizes are public), and release records
that agree on every field but the time, the source path and the hashes of the noisy tables (tests in the style of
tests/test_release_neighbours.py, which checks the app's path). The pairs:

* one person's region moved to a region of their own (protected cell sizes): it used to tip the "nearly one cell
  per row" refusal (6 cells for 10 rows) while the other file was released and charged;
* the only exposed person of a relative risk moved out of the exposure groups (protected sizes): it used to be
  refused ("the data have no row", for 31 rows) while the other was released and charged;
* one person's privacy unit blanked (a missing id): every row without an id was pooled as one person, so the
  blanked row dropped another's (n = 22 against 21).

The app's Release mode makes group statistics only on group labels and sizes declared public, so moving a person
between groups is not a neighbouring change there, and it has no privacy unit: these pairs do not apply to it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import cli, ledger

ENGINES = ("duckdb", "pandas")

#: record fields that may differ between neighbours: the clock, the source's path, the hashes of the noisy files
VARYING = {"created", "source", "files"}


def _plan(statistics: str, **top: object) -> str:
    lines = ["version = 1", 'dataset = "neighbours"', 'income = "income"', "cap_epsilon = 10.0", "cap_delta = 1e-9"]
    lines += [f"{k} = {json.dumps(v)}" for k, v in top.items()]
    return "\n".join(lines) + "\n" + statistics


def _release(tmp: Path, name: str, plan_text: str, frame: pd.DataFrame, engine: str, capsys) -> dict:
    """One run of the command line; what a neighbour may compare: exit code, message, charges, tables, record."""
    folder = tmp / f"{name}-{engine}"
    folder.mkdir()
    (folder / "plan.toml").write_text(plan_text)
    frame.to_csv(folder / "data.csv", index=False)  # None -> an empty field
    url = f"sqlite:///{folder / 'ledger.db'}"
    args = ["release", folder / "plan.toml", "--data", folder / "data.csv", "--out", folder / "out"]
    code = cli.main([str(a) for a in [*args, "--ledger", url, "--init-ledger", "--engine", engine, "--quiet"]])
    err = capsys.readouterr().err
    errors = [line for line in err.splitlines() if line.startswith("dpcore: error:")]
    account = ledger.open_ledger(url).find_account("neighbours")
    charges = [(e.epsilon, e.delta) for e in account.entries()] if account is not None else []
    out = folder / "out"
    tables, record = {}, None
    if (out / "release_record.json").exists():
        record = json.loads((out / "release_record.json").read_text())
        for stat in record["statistics"]:
            tables[stat["name"]] = pd.read_csv(out / f"{stat['name']}.csv", keep_default_na=False)
        record = {k: v for k, v in record.items() if k not in VARYING}
    return {"code": code, "errors": errors, "charges": charges, "tables": tables, "record": record}


def _assert_alike(a: dict, b: dict, public: tuple[str, ...] = ()) -> None:
    """Same exit, message, charge, record (but the varying fields), table columns; equal ``public`` columns."""
    assert (a["code"], a["errors"]) == (b["code"], b["errors"])
    assert a["charges"] == b["charges"]
    assert a["record"] == b["record"]
    assert a["tables"].keys() == b["tables"].keys()
    for name, table in a["tables"].items():
        other = b["tables"][name]
        assert list(table.columns) == list(other.columns)
        shown = [c for c in public if c in table.columns]
        assert table[shown].to_dict("records") == other[shown].to_dict("records"), name


MEAN_BY_REGION = """
[[statistics]]
kind = "mean"
by = ["region"]
epsilon = 1.0
lower = 0
upper = 500000
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_one_region_moved_releases_alike_with_protected_cell_sizes(tmp_path, capsys, engine):
    shared = pd.DataFrame(
        {"region": ["a", "a", "b", "b", "c", "c", "d", "d", "e", "e"], "income": [1000.0 * i for i in range(10)]}
    )
    alone = shared.copy()
    alone.loc[0, "region"] = "f"  # 6 cells for 10 rows: more than half
    plan = _plan(MEAN_BY_REGION)
    a = _release(tmp_path, "shared", plan, shared, engine, capsys)
    b = _release(tmp_path, "alone", plan, alone, engine, capsys)
    _assert_alike(a, b)
    assert a["code"] == 0 and a["charges"] == [(pytest.approx(1.1), pytest.approx(1e-10))]
    # DP selection: no cell of 2 rows reaches the threshold (462 rows at n_epsilon 0.1): both tables list none
    assert len(a["tables"]["01_mean_by_region"]) == len(b["tables"]["01_mean_by_region"]) == 0


RELATIVE_RISK = """
[[statistics]]
kind = "relative_risk"
epsilon = 1.0
group = "g"
exposed = "yes"
reference = "no"
outcome_below = 30000
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_the_only_exposed_person_moved_releases_alike(tmp_path, capsys, engine):
    one = pd.DataFrame({"g": ["yes"] + ["other"] * 30, "income": [1000.0 * i for i in range(31)]})
    none = one.copy()
    none.loc[0, "g"] = "other"  # no row in either exposure group
    plan = _plan(RELATIVE_RISK)
    a = _release(tmp_path, "one", plan, one, engine, capsys)
    b = _release(tmp_path, "none", plan, none, engine, capsys)
    _assert_alike(a, b)
    assert a["code"] == 0 and a["charges"] == [(pytest.approx(1.1), 0.0)]
    for result in (a, b):  # the whole table is one cell, listed whatever the data: noisy zeros, clamped at 0
        table = result["tables"]["01_relative_risk"]
        assert len(table) == 1
        assert (table[["n_exposed", "n_reference", "cases_exposed", "cases_reference"]].to_numpy() >= 0).all()


def test_empty_exposure_groups_with_public_sizes_are_refused_with_the_right_message(tmp_path, capsys):
    """With public cell sizes the exposure groups' sizes are published, so their being empty is public: refused,
    and said as it is (31 rows, none in the groups), not as an empty input."""
    frame = pd.DataFrame({"g": ["other"] * 31, "income": [1000.0 * i for i in range(31)]})
    result = _release(tmp_path, "public", _plan(RELATIVE_RISK, cell_sizes="public"), frame, "duckdb", capsys)
    assert result["code"] == 2 and result["charges"] == []
    (line,) = result["errors"]
    assert "the data have no row" not in line
    assert "no row of the data has 'g' = 'yes' or 'no'" in line and "nothing was charged" in line


MISSING_ID = """
[[statistics]]
kind = "mean"
epsilon = 1.0
lower = 0
upper = 500000

[[statistics]]
kind = "percentiles"
by = ["region"]
epsilon = 1.0
bins = [0, 20000, 50000, 1000000]
q = [50]
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_a_blanked_privacy_unit_moves_no_public_number(tmp_path, capsys, engine):
    """26 rows, 5 without an id, one row per person kept: every row without an id is its own person, so all 26 are
    counted, and blanking the victim's id too leaves every published n as it was (the cell sizes are public)."""
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(26)],
            "region": ["north"] * 13 + ["south"] * 13,
            "income": np.round(rng.uniform(5_000, 90_000, 26), 2),
        }
    )
    frame.loc[[3, 8, 14, 19, 25], "pid"] = None
    blanked = frame.copy()
    blanked.loc[0, "pid"] = None  # the victim
    plan = _plan(MISSING_ID, cell_sizes="public", privacy_unit="pid", max_rows_per_person=1)
    a = _release(tmp_path, "ids", plan, frame, engine, capsys)
    b = _release(tmp_path, "blanked", plan, blanked, engine, capsys)
    _assert_alike(a, b, public=("region", "n"))
    assert a["code"] == 0
    assert a["tables"]["01_mean"]["n"].tolist() == [26]  # no row dropped
    assert a["tables"]["02_percentiles_by_region"]["n"].tolist() == [13, 13]
