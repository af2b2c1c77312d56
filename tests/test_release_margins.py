"""A plan with ``margins`` released by the command line on PSEO-shaped data: every level measured through its own
registered mechanism with its share of epsilon, the charge their sum, the published bins non-negative integers
that add up exactly at every level, the least-squares estimates beside them, the record and the card stating
the hierarchy, the intervals recomputable from the files, neighbouring data sets released alike."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dpcore import cli, ledger
from dpcore.engines import draws
from dpcore.mechanisms import HistogramMechanism
from dpcore.plan import parse_plan
from dpcore.release import read_release, recompute_intervals
from dpcore.views import percentiles as percentile_experiments

BY = ["state", "institution", "degree_level", "cohort"]

PLAN = """
version = 1
dataset = "pseo-margins"
income = "earnings"
cap_epsilon = 5.0
cell_sizes = "{sizes}"

[[statistics]]
kind = "percentiles"
name = "earn"
by = ["state", "institution", "degree_level", "cohort"]
epsilon = 1.5
q = [25, 50, 75]
margins = {margins}
"""


@pytest.fixture(scope="module")
def pseo_rows() -> pd.DataFrame:
    """Earnings rows of the real PSEO table's cells of two states (institution x degree x cohort), each cell's
    published quartiles kept and its size cut to a twentieth (the test stays cheap; the shape is PSEO's)."""
    from dpcore.data import real_data_path

    cells = percentile_experiments.load_pseo_cells(real_data_path("pseo_earnings_co_tx.csv.gz"), agg_level=44)
    cells = cells[cells.state.isin(["MI", "WI"])].reset_index(drop=True)
    cells["n"] = np.maximum(cells["n"] // 20, 3)
    values, idx = percentile_experiments.synthesize_cells(cells, rng=1)
    frame = pd.DataFrame({c: cells[c].to_numpy()[idx] for c in BY})
    frame["earnings"] = np.round(values)
    return frame


def _release(tmp: Path, name: str, frame: pd.DataFrame, *, sizes="public", margins='[["state"], []]', seed=None):
    folder = tmp / name
    folder.mkdir()
    (folder / "plan.toml").write_text(PLAN.format(sizes=sizes, margins=margins))
    frame.to_parquet(folder / "data.parquet", index=False)
    args = ["release", folder / "plan.toml", "--data", folder / "data.parquet", "--out", folder / "out", "--quiet"]
    url = f"sqlite:///{folder / 'ledger.db'}"
    if seed is None:
        args += ["--ledger", url, "--init-ledger"]
    else:
        args += ["--seed", seed, "--public-data"]
    code = cli.main([str(a) for a in args])
    charges = []
    if seed is None and (folder / "ledger.db").exists():
        account = ledger.open_ledger(url).find_account("pseo-margins")
        charges = [(e.epsilon, e.delta) for e in account.entries()] if account is not None else []
    return code, folder / "out", charges


def _bins(table: pd.DataFrame, prefix: str = "bin_") -> list[str]:
    return [c for c in table.columns if c.startswith(prefix) and c[len(prefix) :].isdigit()]


def _assert_adds_up(cells: pd.DataFrame, state: pd.DataFrame, total: pd.DataFrame) -> None:
    bins = _bins(cells)
    assert len(bins) == 21
    for t in (cells, state, total):
        values = t[bins].to_numpy()
        assert values.dtype.kind == "i" and (values >= 0).all()  # non-negative whole counts
    by_state = cells.groupby("state")[bins].sum().sort_index()
    np.testing.assert_array_equal(by_state.to_numpy(), state.set_index("state").sort_index()[bins].to_numpy())
    np.testing.assert_array_equal(state[bins].sum().to_numpy(), total[bins].to_numpy()[0])
    # the published n of a margin is the sum of its cells'
    assert (
        state.set_index("state").sort_index()["n"].tolist() == cells.groupby("state")["n"].sum().sort_index().tolist()
    )
    assert int(total["n"].iloc[0]) == int(cells["n"].sum())


def test_release_with_margins_adds_up_at_every_level(tmp_path, pseo_rows):
    code, out, charges = _release(tmp_path, "a", pseo_rows)
    assert code == 0
    assert charges == [(pytest.approx(1.5), 0.0)]  # the levels' shares compose to the statistic's epsilon
    cells, state, total = (pd.read_csv(out / f) for f in ("earn.csv", "earn__state.csv", "earn__total.csv"))
    assert (out / "earn__state.parquet").exists() and (out / "earn__total.parquet").exists()
    assert len(state) == 2 and len(total) == 1
    _assert_adds_up(cells, state, total)
    for t in (cells, state, total):
        assert len(_bins(t, "ls_bin_")) == 21 and (t["ls_sd"] > 0).all()  # the least squares beside the counts
        for q in ("p25", "p50", "p75"):
            assert (t[f"{q}_lower"] <= t[q]).all() and (t[q] <= t[f"{q}_upper"]).all()
    # the state and national sds are smaller than the cells' (every level informs them)
    assert state["ls_sd"].max() < cells["ls_sd"].min()
    record = json.loads((out / "release_record.json").read_text())
    stat = record["statistics"][0]
    assert [lv["name"] for lv in stat["levels"]] == ["earn", "earn__state", "earn__total"]
    assert [lv["epsilon"] for lv in stat["levels"]] == pytest.approx([0.5, 0.5, 0.5])
    assert [lv["noise_scale"] for lv in stat["levels"]] == pytest.approx([4.0, 4.0, 4.0])
    assert stat["levels"][1]["files"] == ["earn__state.csv", "earn__state.parquet"]
    assert "least-squares" in stat["post_processing"] and "add up exactly" in stat["post_processing"]
    assert "OpenDP" in stat["measurement"]
    assert set(record["files"]) >= {"earn__state.csv", "earn__total.parquet"}
    card = (out / "release_card.md").read_text()
    assert "Hierarchy of 3 levels" in card and "a margin of earn" in card
    assert "earnings percentiles with margins" in card and "coverage is measured" in card
    assert "earn\\_\\_state" in card and "earn\\_\\_total" in card
    # anyone holding the files recomputes every level's intervals and honest digits from them alone
    rec, tables = read_release(out)
    for name, table in recompute_intervals(rec, tables).items():
        pd.testing.assert_frame_equal(table, tables[name], check_dtype=False)


def test_each_level_is_drawn_through_its_registered_mechanism_with_its_share():
    plan = parse_plan(
        PLAN.format(sizes="public", margins='[["state"], []]').replace("epsilon = 1.5", "epsilon = 2.0")
        + "epsilon_split = [2, 1, 1]"
    )
    mechanisms = draws.statistic_mechanisms(plan, plan.statistics[0])
    levels = mechanisms.levels()
    assert all(type(m) is HistogramMechanism for m in levels)
    assert [m.epsilon for m in levels] == pytest.approx([1.0, 0.5, 0.5])
    assert sum(m.privacy_cost().epsilon for m in mechanisms.all()) == pytest.approx(2.0)


def test_simulation_writes_every_level_as_a_simulation(tmp_path, pseo_rows):
    code, out, _ = _release(tmp_path, "sim", pseo_rows, seed=5)
    assert code == 0
    names = sorted(p.name for p in out.glob("*.csv"))
    assert names == ["SIMULATION_earn.csv", "SIMULATION_earn__state.csv", "SIMULATION_earn__total.csv"]
    tables = [
        pd.read_csv(out / n)
        for n in ("SIMULATION_earn.csv", "SIMULATION_earn__state.csv", "SIMULATION_earn__total.csv")
    ]
    assert all(t["simulation"].all() for t in tables)
    _assert_adds_up(*tables)
    # the free-space estimate before the charge counts every level's table (within a factor 2 of what is written)
    from dpcore.engines import output

    block = os.statvfs(out).f_frsize
    used = sum(-(-f.stat().st_size // block) * block for f in out.iterdir())
    plan = parse_plan((out / "plan.toml").read_text())
    estimate = output.output_bytes(plan, {"earn": tables[0][BY]}, block)
    assert used / 2 <= estimate <= 2 * used


def test_neighbours_with_public_cells_release_alike(tmp_path, pseo_rows):
    """One person's earnings changed: same exit, same charge, same tables' columns and public columns (labels, n)."""
    other = pseo_rows.copy()
    other.loc[0, "earnings"] = 600_000.0
    a, b = _release(tmp_path, "a", pseo_rows), _release(tmp_path, "b", other)
    assert a[0] == b[0] == 0 and a[2] == b[2]
    varying = {"created", "source", "files"}  # the clock, the path, the hashes of the noisy files
    records = [json.loads((r[1] / "release_record.json").read_text()) for r in (a, b)]
    assert [{k: v for k, v in r.items() if k not in varying} for r in records[:1]] == [
        {k: v for k, v in r.items() if k not in varying} for r in records[1:]
    ]
    for name in ("earn.csv", "earn__state.csv", "earn__total.csv"):
        ta, tb = pd.read_csv(a[1] / name), pd.read_csv(b[1] / name)
        assert list(ta.columns) == list(tb.columns)
        labels = [c for c in ["n", *BY] if c in ta.columns]
        assert ta[labels].equals(tb[labels])


def test_neighbours_with_protected_cells_release_alike(tmp_path, pseo_rows):
    """cell_sizes = "noisy": the cells are selected with DP and the margins sum the selected ones. One person moved
    to an institution of their own (a new cell and a new node of no margin but its state's): both release, with
    the same charge and the same columns; every level still adds up, over the cells that were selected."""
    other = pseo_rows.copy()
    other.loc[0, "institution"] = "A COLLEGE OF ONE"
    a = _release(tmp_path, "a", pseo_rows, sizes="noisy")
    b = _release(tmp_path, "b", other, sizes="noisy")
    assert a[0] == b[0] == 0 and a[2] == b[2] == [(pytest.approx(1.6), pytest.approx(1e-10))]
    for out in (a[1], b[1]):
        tables = [pd.read_csv(out / n) for n in ("earn.csv", "earn__state.csv", "earn__total.csv")]
        assert "A COLLEGE OF ONE" not in set(tables[0]["institution"])  # one person's cell is not selected
        _assert_adds_up(*tables)
        stat = json.loads((out / "release_record.json").read_text())["statistics"][0]
        assert stat["n_noise_scale"] > 0
    assert pd.read_csv(a[1] / "earn.csv").columns.tolist() == pd.read_csv(b[1] / "earn.csv").columns.tolist()


def test_no_cell_selected_releases_empty_levels_alike(tmp_path):
    """Too few rows for the DP selection to keep any cell: every level is released empty (no refusal that one
    person could tip), and the charge is the same with one row more."""
    small = pd.DataFrame(
        {"state": ["MI", "WI"], "institution": ["A", "B"], "degree_level": [5, 5], "cohort": [2001, 2001]}
    )
    small["earnings"] = [30_000.0, 40_000.0]
    bigger = pd.concat([small, small.iloc[:1]], ignore_index=True)
    a = _release(tmp_path, "a", small, sizes="noisy")
    b = _release(tmp_path, "b", bigger, sizes="noisy")
    assert a[0] == b[0] == 0 and a[2] == b[2]
    for out in (a[1], b[1]):
        for name in ("earn.csv", "earn__state.csv", "earn__total.csv"):
            assert len(pd.read_csv(out / name)) == 0


def test_declared_keys_make_the_tree_public(tmp_path, pseo_rows):
    """cell_sizes = "noisy" with the cells declared in [keys]: every declared cell is released (absent ones as
    zeros) and the margins are sums of the declared cells, whatever the data; no DP selection, so no delta."""
    keys = {c: sorted(pseo_rows[c].unique().tolist()) for c in BY}
    declared = "\n[keys]\n" + "\n".join(f"{c} = {json.dumps(v)}" for c, v in keys.items()) + "\n"
    folder = tmp_path / "keys"
    folder.mkdir()
    (folder / "plan.toml").write_text(PLAN.format(sizes="noisy", margins='[["state"], []]') + declared)
    pseo_rows.to_parquet(folder / "data.parquet", index=False)
    url = f"sqlite:///{folder / 'ledger.db'}"
    args = ["release", folder / "plan.toml", "--data", folder / "data.parquet", "--out", folder / "out", "--quiet"]
    assert cli.main([str(a) for a in [*args, "--ledger", url, "--init-ledger"]]) == 0
    entries = ledger.open_ledger(url).find_account("pseo-margins").entries()
    assert [(e.epsilon, e.delta) for e in entries] == [(pytest.approx(1.6), 0.0)]
    tables = [pd.read_csv(folder / "out" / n) for n in ("earn.csv", "earn__state.csv", "earn__total.csv")]
    assert len(tables[0]) == int(np.prod([len(v) for v in keys.values()])) and len(tables[1]) == 2
    _assert_adds_up(*tables)


def test_a_value_rounded_past_its_wide_interval_is_inside_the_published_interval():
    """A small cell of a four-level PSEO release (5,073 cells at epsilon 1): its p50 interval is [22,876, inf), so
    its honest step is $20,000 and the value rounds to 20,000, below the interval; the published interval is
    widened to the bin edges around the rounded value (idempotent on its own output)."""
    from dpcore.percentiles import PSEO_BIN_EDGES
    from dpcore.published import published_table

    counts = [0, 12, 10, 21, 4, 0, 2, 0, 0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
    estimates = [-26.95, 13.83, 11.98, 22.53, 6.78, 2.4, 4.76, -7.64, -2.96, 5.07, 16.51]
    estimates += [-3.85, 6.72, -0.86, -3.25, 7.53, 0.56, -14.96, 1.37, 3.14, 6.89]
    table = pd.DataFrame({"n": [44], "p50": [0.0]})
    for j in range(21):
        table[f"bin_{j + 1:02d}"] = [counts[j]]
    for j in range(21):
        table[f"ls_bin_{j + 1:02d}"] = [estimates[j]]
    table["ls_sd"] = [11.238]
    stat = {"bin_edges": list(PSEO_BIN_EDGES), "q": [50.0]}
    out = published_table("percentiles_consistent", table, stat, 0.95)
    assert out["p50"][0] == 20_000.0
    assert out["p50_lower"][0] <= out["p50"][0] <= out["p50_upper"][0]
    assert out["p50_lower"][0] == PSEO_BIN_EDGES[1]  # the bin that holds 20,000
    pd.testing.assert_frame_equal(published_table("percentiles_consistent", out, stat, 0.95), out)
