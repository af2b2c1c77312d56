"""Cell keys and cell sizes that protect one person (dpcore.cell_keys, the plan's [keys] / cell_sizes).

The attacks reproduced (each failed on the code before cell keys): neighbouring files that differ in one person's
cell (a one-person cell in one, none in the other) listed different cells with exact n; ``by = ["pid"]`` was
accepted; small cells were published without a word. Real releases (OpenDP noise, a SQLite ledger in a temp dir).
"""

from __future__ import annotations

import io
import math
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest

from dpcore import cell_keys, ledger, mechanisms, stratified
from dpcore.engines import execute, parse_source, record
from dpcore.mechanisms.counts import threshold_measurement
from dpcore.plan import PlanError, load_plan, parse_plan, plan_from_dict, plan_from_planner, write_plan
from dpcore.validation import DPInputError

ENGINES = ["pandas", "duckdb"]


def base_frame(n: int = 3000, seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "pid": [f"p{i}" for i in range(n)],
            "state": rng.choice(["CO", "TX"], n),
            "earnings": np.round(rng.lognormal(10.5, 0.7, n), 2),
            "treated": rng.choice(["yes", "no"], n),
            "employed": rng.choice([0, 1], n),
        }
    )


@pytest.fixture(scope="module")
def neighbours(tmp_path_factory):
    """Two files that differ in one person: alone in 'WY' (their own cell) in one, in 'CO' in the other."""
    d = tmp_path_factory.mktemp("keys")
    df = base_frame()
    alone = df.copy()
    alone.loc[0, ["state", "earnings", "treated", "employed"]] = ["WY", 87000.0, "yes", 1]
    moved = df.copy()
    moved.loc[0, ["state", "earnings", "treated", "employed"]] = ["CO", 87000.0, "yes", 1]
    alone.to_csv(d / "alone.csv", index=False)
    moved.to_csv(d / "moved.csv", index=False)
    return d


def raw_plan(**top) -> dict:
    raw = {
        "version": 1,
        "dataset": "keys-test",
        "income": "earnings",
        "cap_epsilon": 100.0,
        "statistics": [
            {"kind": "percentiles", "by": ["state"], "epsilon": 1.0},
            {"kind": "mean", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 500_000},
            {
                "kind": "relative_risk",
                "by": ["state"],
                "epsilon": 0.5,
                "group": "treated",
                "exposed": "yes",
                "reference": "no",
                "outcome": "employed",
            },
        ],
    }
    raw.update(top)
    return raw


def release(plan, path, engine, tmp_path, name):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    return execute.run_plan(
        plan,
        parse_source(str(path)),
        engine=engine,
        out_dir=tmp_path / name,
        ledger_url=url,
        init_ledger=not (tmp_path / "ledger.db").exists(),
    )


def cells_of(result) -> dict[str, list]:
    return {name: table["state"].astype(str).tolist() for name, table in result.tables.items()}


@pytest.mark.parametrize("engine", ENGINES)
def test_neighbours_in_another_cell_list_the_same_cells_without_declared_keys(neighbours, tmp_path, engine):
    """No [keys]: cells are selected with DP, so the one-person cell 'WY' is not listed (it would need a noisy
    count of at least the threshold, 462 rows: probability <= 1e-10) and both neighbours list CO and TX."""
    plan = plan_from_dict(raw_plan())
    a = release(plan, neighbours / "alone.csv", engine, tmp_path, "a")
    b = release(plan, neighbours / "moved.csv", engine, tmp_path, "b")
    assert cells_of(a) == cells_of(b)
    assert all(sorted(c) == ["CO", "TX"] for c in cells_of(a).values())
    for result in (a, b):
        for table in result.tables.values():
            assert "WY" not in set(table["state"].astype(str))
        per = result.record["privacy"]["per_statistic"]
        assert [p["epsilon"] for p in per] == [1.1, 0.6, 0.6]  # each statistic + n_epsilon 0.1
        assert [p["delta"] for p in per] == [1e-10] * 3  # the selection's delta, charged
        assert result.record["cells"]["cell_sizes"] == "noisy"
        mean_noise = result.record["statistics"][1]["noise"]
        assert (
            "= 1e+08 cents" in mean_noise and "divided by the noisy n" in mean_noise
        )  # 2 x 500,000.00: a row may move
        info = [s["cells"] for s in result.record["statistics"]]
        assert all(i["selection_threshold"] == mechanisms.selection_threshold(0.1, 1e-10, 1) for i in info)
    entries = ledger.open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}").find_account("keys-test").entries()
    assert len(entries) == 2


@pytest.mark.parametrize("engine", ENGINES)
def test_declared_keys_list_every_declared_cell_and_only_those(neighbours, tmp_path, engine):
    """[keys]: the declared cells, in declared order, whatever the data hold: 'AK' (absent) is listed with a noisy
    n, 'WY' (not declared) is dropped; the neighbours list the same cells."""
    plan = plan_from_dict(raw_plan(keys={"state": ["TX", "CO", "AK"]}))
    a = release(plan, neighbours / "alone.csv", engine, tmp_path, "a")
    b = release(plan, neighbours / "moved.csv", engine, tmp_path, "b")
    assert cells_of(a) == cells_of(b) == {name: ["TX", "CO", "AK"] for name in a.tables}
    assert [p["delta"] for p in a.record["privacy"]["per_statistic"]] == [0.0, 0.0, 0.0]  # no selection
    ak = a.tables["02_mean_by_state"].set_index("state").loc["AK"]
    assert ak["n"] >= 0  # a noisy count (clamped at 0), not a missing row
    exact = pd.read_csv(neighbours / "alone.csv").groupby("state").size()
    n_co = [int(t.set_index("state").loc["CO", "n"]) for name, t in a.tables.items() if "n" in t.columns]
    assert n_co and all(v >= 0 for v in n_co) and exact["CO"] > 0


def test_by_a_column_unique_per_row_is_refused_before_any_charge_with_public_cell_sizes(neighbours, tmp_path):
    """Public cell sizes would publish every person's cell with n = 1: refused (cells and sizes are public there,
    so the refusal is a function of public information)."""
    plan = plan_from_dict(
        {
            **raw_plan(cell_sizes="public"),
            "statistics": [{"kind": "mean", "by": ["pid"], "epsilon": 0.5, "lower": 0, "upper": 500_000}],
        }
    )
    with pytest.raises(DPInputError, match=r"nearly one cell per row.*nothing was charged"):
        release(plan, neighbours / "alone.csv", "duckdb", tmp_path, "out")
    account = ledger.open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}").find_account("keys-test")
    assert account is None or not account.entries()
    assert not (tmp_path / "out").exists()


def test_by_a_column_unique_per_row_is_released_empty_with_protected_cell_sizes(neighbours, tmp_path):
    """Protected cell sizes: the cells are selected with DP, which lists no one-person cell, so ``by = ["pid"]``
    is released as an empty table and charged, never refused (counting the data's cells would be a refusal on one
    person: one row moving to a new cell can tip the count over half the rows)."""
    plan = plan_from_dict(
        {**raw_plan(), "statistics": [{"kind": "mean", "by": ["pid"], "epsilon": 0.5, "lower": 0, "upper": 500_000}]}
    )
    result = release(plan, neighbours / "alone.csv", "duckdb", tmp_path, "out")
    assert len(result.tables["01_mean_by_pid"]) == 0
    account = ledger.open_ledger(f"sqlite:///{tmp_path / 'ledger.db'}").find_account("keys-test")
    assert [e.epsilon for e in account.entries()] == [pytest.approx(0.6)]


@pytest.mark.parametrize("engine", ENGINES)
def test_public_cell_sizes_publish_exact_n_and_warn_about_small_cells(neighbours, tmp_path, engine):
    """cell_sizes = "public" (the PSEO assumption): the cells present with their exact n, as before, and the
    one-person cell is named in a warning of the record."""
    plan = plan_from_dict(raw_plan(cell_sizes="public"))
    result = release(plan, neighbours / "alone.csv", engine, tmp_path, "out")
    exact = pd.read_csv(neighbours / "alone.csv").groupby("state").size()
    table = result.tables["01_percentiles_by_state"].set_index("state")
    assert table["n"].to_dict() == exact.to_dict()
    assert [p["epsilon"] for p in result.record["privacy"]["per_statistic"]] == [1.0, 0.5, 0.5]
    warnings = result.record["cells"]["warnings"]
    assert len(warnings) == 3 and all("fewer than 10 rows" in w for w in warnings)


def test_cost_includes_noisy_sizes_and_selection_in_dpcore_check(tmp_path):
    from dpcore import cli

    path = tmp_path / "plan.toml"
    write_plan(plan_from_dict(raw_plan(n_epsilon=0.2, selection_delta=1e-11)), path)
    cost = record.plan_cost(load_plan(path))
    assert cost.epsilon == pytest.approx(2.0 + 3 * 0.2) and cost.delta == pytest.approx(3e-11)
    out = io.StringIO()
    with redirect_stdout(out):
        assert cli.main(["check", str(path)]) == 0
    assert "epsilon = 2.6 of cap 100" in out.getvalue() and "delta = 3e-11" in out.getvalue()
    # declared keys: no selection delta; public sizes: no n_epsilon
    assert record.plan_cost(plan_from_dict(raw_plan(keys={"state": ["CO"]}))).delta == 0.0
    assert record.plan_cost(plan_from_dict(raw_plan(cell_sizes="public"))).epsilon == pytest.approx(2.0)


def test_plan_fields(tmp_path):
    gini_by = {"kind": "gini", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 1e6}
    with pytest.raises(PlanError, match=r"statistics\[1\] \(gini\): field 'by' needs cell_sizes = \"public\""):
        plan_from_dict({**raw_plan(), "statistics": [gini_by]})
    plan_from_dict({**raw_plan(cell_sizes="public"), "statistics": [gini_by]})
    with pytest.raises(PlanError, match="field 'cell_sizes' must be"):
        plan_from_dict(raw_plan(cell_sizes="exact"))
    with pytest.raises(PlanError, match=r"\[keys\] field 'state' lists a value twice"):
        plan_from_dict(raw_plan(keys={"state": ["CO", "CO"]}))
    with pytest.raises(PlanError, match="DP cell selections spend delta"):
        plan_from_dict(raw_plan(selection_delta=1e-9))  # 3 selections > the default 1e-9 cap
    # a keys file, relative to the plan file; the plan round-trips with its keys
    (tmp_path / "keys.csv").write_text("state,treated\nCO,yes\nTX,no\nCO,no\n", encoding="utf-8")
    text = write_plan(plan_from_dict(raw_plan(keys={"state": ["CO", "TX"]})))
    assert "[keys]\nstate = [\"CO\", \"TX\"]" in text and parse_plan(text).keys.cells(["state"]) == [("CO",), ("TX",)]
    (tmp_path / "plan.toml").write_text(text.replace('state = ["CO", "TX"]', 'file = "keys.csv"'), encoding="utf-8")
    keys = load_plan(tmp_path / "plan.toml").keys
    assert keys.cells(["state"]) == [("CO",), ("TX",)] and keys.count(["treated", "state"]) == 3


def test_mean_sensitivity_when_rows_move_between_cells():
    """Replace one person whose row may move between cells: one cell loses a value, another gains one."""
    assert stratified.mean_sum_sensitivity_cents(0, 100, 1, cells_move=False) == 100
    assert stratified.mean_sum_sensitivity_cents(0, 100, 1, cells_move=True) == 200
    assert stratified.mean_sum_sensitivity_cents(-50, 100, 2, cells_move=True) == 2 * 200
    assert stratified.mean_sum_sensitivity_cents(-50, 50, 1, cells_move=True) == 100


def test_selection_threshold_is_the_smallest_meeting_delta():
    import opendp.prelude as dp  # noqa: F401  (the map is OpenDP's)

    t = mechanisms.selection_threshold(0.1, 1e-10, 1)
    meas = threshold_measurement
    assert meas(0.1, 1, t).map((2, 2, 1))[1] <= 1e-10 < meas(0.1, 1, t - 1).map((2, 2, 1))[1]
    assert meas(0.1, 1, t).map((2, 2, 1))[0] == pytest.approx(0.1)
    assert mechanisms.selection_threshold(0.1, 1e-10, 2) > t  # m rows per person: a higher threshold


def test_planner_writes_keys_and_cell_sizes():
    item = {"kind": "mean", "by": ["state"], "epsilon": 0.5, "lower": 0, "upper": 1e5}
    noisy = write_plan(plan_from_planner([item], dataset="d", income="earnings", cap_epsilon=1.0))
    assert 'cell_sizes = "noisy"' in noisy
    declared = plan_from_planner(
        [item], dataset="d", income="earnings", cap_epsilon=1.0, keys={"state": ["CO", "TX"]}, cell_sizes="public"
    )
    text = write_plan(declared)
    assert 'cell_sizes = "public"' in text and "[keys]" in text and parse_plan(text) == declared
    assert math.isclose(declared.total_epsilon, 0.5)


def test_planner_page_declares_public_cells_of_public_data_only():
    """The declaration of the groups the plan file and Release mode start from: the PSEO table keeps its published
    cell sizes (its catalogue entry says so); a public real file declares its labels, with noisy sizes; synthetic
    data (invented labels) and uploads declare nothing, whatever the file is called."""
    import dataclasses

    from dpcore import data
    from ui.planner.choices import declaration_defaults, release_cells

    def cells(ds, column):
        return release_cells(declaration_defaults(ds, column), column, ["group_means"])[:2]

    for pseo in (data.load_shared("pseo"), data.build_dataset({"kind": "example", "name": "pseo"})):
        keys, cell_sizes = cells(pseo, "institution")
        assert cell_sizes == "public" and len(keys["institution"]) == pseo.frame["institution"].nunique()
    acs = data.load_shared("acs")
    keys, cell_sizes = cells(acs, "ST")
    assert cell_sizes == "noisy" and keys["ST"] == sorted({str(int(v)) for v in acs.frame["ST"]})
    synthetic = data.build_dataset({"kind": "lognormal", "n": 200, "sigma": 0.9, "seed": 1})
    assert cells(synthetic, "group") == (None, "noisy")
    # the name decides nothing: an upload of the PSEO table itself, or public data merely named "PSEO ..."
    upload = dataclasses.replace(
        pseo, name="PSEO_extract_2024.csv", source="upload", confidential=True, public_cell_sizes=False
    )
    assert cells(upload, "institution") == (None, "noisy")
    renamed = dataclasses.replace(acs, name="PSEO look-alike")
    assert cells(renamed, "ST")[1] == "noisy"


def test_declared_cells_without_rows_are_released_not_refused(neighbours, tmp_path):
    """Every row in undeclared cells: the statistic's declared cells hold no row. Refusing would reveal that
    count (it is protected); the cells are released as noise like any other, and charged."""
    plan = plan_from_dict(raw_plan(keys={"state": ["AK", "AL"]}))
    result = release(plan, neighbours / "alone.csv", "pandas", tmp_path, "out")
    assert all(table["state"].tolist() == ["AK", "AL"] for table in result.tables.values())
    assert result.ledger_entry_id is not None


def test_a_keys_file_of_combinations_restricts_the_cells(tmp_path):
    """file = "keys.csv": only the listed combinations are cells (not the cross product); the record says how
    the cells and their n were obtained, and what one person can change when rows move between cells."""
    df = base_frame(n=600)
    df["level"] = (df.index % 2) + 1
    df.to_csv(tmp_path / "data.csv", index=False)
    (tmp_path / "keys.csv").write_text("state,level\nCO,1\nTX,2\nAK,1\n", encoding="utf-8")
    raw = raw_plan(keys={"file": "keys.csv"})
    raw["statistics"] = [{"kind": "mean", "by": ["state", "level"], "epsilon": 1.0, "lower": 0, "upper": 1e5}]
    (tmp_path / "plan.toml").write_text(write_plan(plan_from_dict(raw, tmp_path)), encoding="utf-8")
    plan = load_plan(tmp_path / "plan.toml")
    result = release(plan, tmp_path / "data.csv", "duckdb", tmp_path, "out")
    table = next(iter(result.tables.values()))
    assert list(zip(table["state"], table["level"], strict=True)) == [("CO", "1"), ("TX", "2"), ("AK", "1")]
    assert result.record["cells"]["keys"] == {"file": str(tmp_path / "keys.csv")}
    assert "move between cells" in result.record["privacy"]["what_one_person_can_change"]


def test_a_pure_epsilon_population_refuses_a_dp_selection_before_the_charge(neighbours, tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    ledger.init_ledger(url).register_population("keys-pure", 100.0)
    plan = plan_from_dict(raw_plan(dataset="keys-pure"))
    with pytest.raises(
        DPInputError,
        match=r"from the DP cell selection of 3 statistic\(s\)\); declare the cells in \[keys\].*nothing was charged",
    ):
        execute.run_plan(
            plan, parse_source(str(neighbours / "alone.csv")), engine="pandas", out_dir=tmp_path / "o", ledger_url=url
        )
    declared = plan_from_dict(raw_plan(dataset="keys-pure", keys={"state": ["CO", "TX"]}))  # pure epsilon: accepted
    result = execute.run_plan(
        declared, parse_source(str(neighbours / "alone.csv")), engine="pandas", out_dir=tmp_path / "o2", ledger_url=url
    )
    assert result.record["privacy"]["cost"]["delta"] == 0.0
    assert len(ledger.open_ledger(url).population("keys-pure").entries()) == 1


def spark_keys_case(tmp_path) -> None:
    """Declared keys and DP selection give pandas' tables exactly with the Spark engine (the key handling runs on
    the engines' aggregates, so Spark's cell labels must map to the same text keys); run by
    tests/test_engines.py on its Spark session (one JVM for the suite's Spark cases)."""
    df = base_frame(n=1200)
    df.loc[0, "state"] = "WY"  # a one-person cell: dropped (not declared) / not selected
    df["level"] = (df.index % 2) + 1  # an integer cell column: keys declared as integers
    df.to_parquet(tmp_path / "data.parquet", index=False)
    for name, extra in [("declared", {"keys": {"state": ["CO", "TX", "AK"], "level": [1, 2]}}), ("selected", {})]:
        raw = raw_plan(**extra, n_epsilon=1.0)
        raw["statistics"][0]["by"] = ["state", "level"]
        plan = plan_from_dict(raw)
        tables = {}
        for engine in ("pandas", "spark"):
            result = execute.run_plan(
                plan,
                parse_source(str(tmp_path / "data.parquet")),
                engine=engine,
                out_dir=tmp_path / f"{name}-{engine}",
                seed=7,
                public_data=True,
            )
            tables[engine] = result.tables
        for stat in tables["pandas"]:
            a = tables["pandas"][stat].reset_index(drop=True)
            b = tables["spark"][stat].reset_index(drop=True)
            assert a.astype(str).equals(b.astype(str)), stat
        cells = tables["spark"]["01_percentiles_by_state_level"]
        expected = 6 if name == "declared" else 4  # AK x {1, 2} listed only when declared; WY never
        assert len(cells) == expected and "WY" not in set(cells["state"])


# --- vectorised cell keys: identical to the row-by-row reference (the code before the speed fix) ---------------


def _ref_keys_of(frame, by):
    if not len(frame):
        return []
    columns = [[cell_keys.cell_text(v) for v in frame[c].tolist()] for c in by]
    return list(zip(*columns, strict=True))


def _ref_restrict_to_declared(frame, by, declared):
    by, declared = list(by), list(declared)
    order = {key: i for i, key in enumerate(declared)}
    position = np.array([order.get(k, -1) for k in _ref_keys_of(frame, by)], dtype=np.int64)
    kept = frame.loc[position >= 0].copy() if len(frame) else frame.copy()
    kept_pos = position[position >= 0]
    for j, c in enumerate(by):
        kept[c] = [declared[p][j] for p in kept_pos]
    missing = sorted(set(range(len(declared))) - set(kept_pos.tolist()))
    if missing:
        zeros = {c: [declared[p][j] for p in missing] for j, c in enumerate(by)}
        for c in frame.columns:
            if c not in by:
                zeros[c] = [0] * len(missing)
        filler = pd.DataFrame(zeros, columns=list(frame.columns))
        for c in frame.columns:
            if c not in by and frame[c].dtype != object:
                filler[c] = filler[c].astype(frame[c].dtype)
        kept = pd.concat([kept, filler], ignore_index=True) if len(kept) else filler
        kept_pos = np.concatenate([kept_pos, np.array(missing, dtype=np.int64)])
    kept["_declared_order"] = kept_pos
    return kept.sort_values("_declared_order", kind="stable").drop(columns="_declared_order").reset_index(drop=True)


def _ref_cell_counts(frame, kind, by):
    keys = _ref_keys_of(frame, by) if by else [()] * len(frame)
    if kind == "percentiles":
        totals = {}
        for k, c in zip(keys, frame["count"].to_numpy(np.int64), strict=True):
            totals[k] = totals.get(k, 0) + int(c)
        return list(totals), np.array(list(totals.values()), dtype=np.int64)
    if kind == "relative_risk":
        out_keys = [k + (g,) for k in keys for g in ("exposed", "reference")]
        counts = np.column_stack([frame["n_exposed"].to_numpy(np.int64), frame["n_reference"].to_numpy(np.int64)])
        return out_keys, counts.reshape(-1)
    return keys, frame["n"].to_numpy(np.int64)


def _ref_restrict_to_cells(frame, by, cells):
    mask = np.array([k in cells for k in _ref_keys_of(frame, by)], dtype=bool)
    return frame.loc[mask].reset_index(drop=True) if len(frame) else frame


def _label_columns(rng, n):
    """Label columns of many kinds: values that compare equal but read differently (True / 1, 1 / 1.0 / "1"),
    missing values of every sort, nullable and categorical dtypes."""
    import decimal

    small = rng.integers(0, 4, n)
    mixed_pool = [
        1,
        1.0,
        "1",
        True,
        False,
        0,
        0.0,
        None,
        np.nan,
        pd.NA,
        "x",
        2.5,
        np.int64(2),
        np.float32(2.5),
        np.bool_(True),
        "",
        "nan",
        -0.0,
        pd.NaT,
        10**16,
        1e16,
    ]

    def pick(pool):
        return [pool[i] for i in rng.integers(0, len(pool), n)]

    floats = rng.choice([0.0, 1.0, 2.5, np.nan, -0.0, 1e300, 0.1], n)
    return {
        "int": small,
        "float": floats,
        "float32": np.where(np.abs(floats) > 1e30, 7.0, floats).astype(np.float32),
        "bool": rng.integers(0, 2, n).astype(bool),
        "text": pd.Series(pick(["a", "b", None, "", "A", "é"]), dtype=object),
        "str": pd.Series(pick(["a", "b", None, "c"]), dtype="str"),
        "mixed": pd.Series(pick(mixed_pool), dtype=object),
        "bool_int": pd.Series(pick([True, False, 1, 0, None]), dtype=object),
        "int_float_str": pd.Series(pick([1, 1.0, "1", 2, 2.5, "2.5", None]), dtype=object),
        "decimal": pd.Series(
            pick([decimal.Decimal("1"), decimal.Decimal("1.0"), decimal.Decimal("NaN"), 1, None]), dtype=object
        ),
        "nullable": pd.array(pick([1, 2, None, 3]), dtype="Int64"),
        "nullbool": pd.array(pick([True, False, None]), dtype="boolean"),
        "category": pd.Categorical(pick(["u", "v", None, 3])),
        "when": pd.to_datetime(pd.Series(pick(["2020-01-01", "2021-06-30", None]))),
    }


_LABEL_KINDS = list(_label_columns(np.random.default_rng(0), 1))


@pytest.mark.parametrize("seed", range(40))
def test_vectorised_cell_keys_match_the_row_by_row_reference(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([0, 1, 7, 300, 300]))
    labels = _label_columns(rng, n)
    if seed < len(_LABEL_KINDS):  # every kind of column alone, then random combinations of 1 to 3
        by = [_LABEL_KINDS[seed]]
        n = 300
        labels = _label_columns(rng, n)
    else:
        by = [_LABEL_KINDS[i] for i in rng.choice(len(_LABEL_KINDS), int(rng.integers(1, 4)), replace=False)]
    frame = pd.DataFrame({c: labels[c] for c in by})
    frame["n"] = rng.integers(0, 50, n)
    frame["count"] = rng.integers(0, 9, n)
    frame["n_exposed"] = rng.integers(0, 9, n)
    frame["n_reference"] = rng.integers(0, 9, n)
    frame["sum_cents"] = rng.normal(0, 1e6, n)
    assert cell_keys.keys_of(frame, by) == _ref_keys_of(frame, by)
    for kind in ("percentiles", "relative_risk", "mean", "gini"):
        for cols in (by, []):
            keys, counts = cell_keys.cell_counts(frame, kind, cols)
            ref_keys, ref_counts = _ref_cell_counts(frame, kind, cols)
            assert keys == ref_keys and all(type(t) is str for k in keys for t in k)
            assert counts.dtype == ref_counts.dtype and counts.tolist() == ref_counts.tolist()
    distinct = list(dict.fromkeys(_ref_keys_of(frame, by)))
    chosen = {distinct[i] for i in range(len(distinct)) if rng.random() < 0.5} | {("zz",) * len(by)}
    pd.testing.assert_frame_equal(
        cell_keys.restrict_to_cells(frame, by, chosen), _ref_restrict_to_cells(frame, by, chosen)
    )
    declared = [k for k in distinct if rng.random() < 0.6] + [("never",) * len(by), ("",) * len(by)]
    declared = list(dict.fromkeys(declared[i] for i in rng.permutation(len(declared))))
    pd.testing.assert_frame_equal(
        cell_keys.restrict_to_declared(frame, by, declared), _ref_restrict_to_declared(frame, by, declared)
    )
