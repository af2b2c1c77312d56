"""One budget per population, across the app and the command line (docs/ledger.md, "Populations").

The attacks these tests reproduce, each of which opened a fresh budget for the same people before
populations: the same file released under another plan name; a re-saved copy (CRLF line ends,
reordered rows, a trailing newline, other quoting, a Parquet copy) or another income column of the same
file uploaded to the app; the app and the command line spending separate accounts for the same file.
Each runs on SQLite and on a throw-away PostgreSQL server (tests/support/postgres.py via conftest).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from support.postgres import fresh_database

from dpcore import ledger as L
from dpcore import planner, release
from dpcore.data import read_table
from dpcore.engines import EngineSpec, execute, open_engine, parse_source
from dpcore.engines.fingerprint import engine_record_fingerprints, source_record_fingerprints
from dpcore.ledger.backends import schema as ledger_schema
from dpcore.plan import parse_plan
from dpcore.validation import DPInputError

_DB_COUNTER = [0]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/ledger/ledger.db"
    else:
        url = fresh_database(request.getfixturevalue("pg_server"), "population_test")
    L.init_ledger(url)
    return url


def _records(n: int = 60) -> pd.DataFrame:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "pid": [f"p{i:03d}" for i in range(n)],
            "wage": np.round(rng.lognormal(10, 0.7, n), 2),
            "hours": rng.integers(10, 60, n),
            "state": rng.choice(["CA", "NA", "TX"], n),
        }
    )  # "NA": a state, and a missing word


def _variants(tmp_path) -> dict[str, str]:
    """The same records as files that differ in every byte-level way a re-save can change."""
    frame = _records()
    paths = {
        "csv": tmp_path / "survey.csv",
        "renamed": tmp_path / "copy_for_b.csv",
        "crlf_reordered": tmp_path / "resaved.csv",
        "quoted_trailing": tmp_path / "quoted.csv",
        "columns_reordered": tmp_path / "cols.csv",
        "parquet": tmp_path / "survey.parquet",
    }
    text = frame.to_csv(index=False)
    paths["csv"].write_text(text)
    paths["renamed"].write_text(text)
    paths["crlf_reordered"].write_bytes(
        frame.sample(frac=1.0, random_state=3).to_csv(index=False, lineterminator="\r\n").encode()
    )
    paths["quoted_trailing"].write_text(frame.to_csv(index=False, quoting=1) + "\n")
    paths["columns_reordered"].write_text(frame[["state", "hours", "wage", "pid"]].to_csv(index=False))
    frame.to_parquet(paths["parquet"])
    return {k: str(v) for k, v in paths.items()}


def _plan(population: str, *, income: str = "wage", cap: float = 1.0, epsilon: float = 0.5, dataset: str | None = None):
    head = f'population = "{population}"\n' if population else ""
    return parse_plan(
        textwrap.dedent(f"""\
        version = 1
        {head}dataset = "{dataset or population or 'survey'}"
        income = "{income}"
        cap_epsilon = {cap}
        cell_sizes = "public"

        [[statistics]]
        kind = "mean"
        epsilon = {epsilon}
        lower = 0
        upper = 200000
        """)
    )


def _release(plan, path, tmp_path, url, name, engine="duckdb"):
    return execute.run_plan(plan, parse_source(path), engine=engine, out_dir=tmp_path / name, ledger_url=url)


# ----------------------------------------------------------------------------------------------------
# The fingerprint: same records, same fingerprint, in every engine and in the app's parser
# ----------------------------------------------------------------------------------------------------
def test_every_engine_and_the_app_give_one_fingerprint_for_the_same_records(tmp_path):
    files = _variants(tmp_path)
    spec = EngineSpec("wage", ())
    expected = L.dataset_fingerprints(_records(), (1, 2))  # both versions, each the same in every reading
    assert L.dataset_fingerprint(_records()) == expected.of(2) == expected.latest
    for kind, path in files.items():
        source = parse_source(path)
        assert source_record_fingerprints(source).latest == expected.latest, kind  # the newest by default
        assert source_record_fingerprints(source, (1, 2)) == expected, kind
        for engine in ("duckdb", "pandas"):
            with open_engine(engine, source, spec) as eng:
                assert engine_record_fingerprints(eng, (1, 2)) == expected, (kind, engine)
        raw = open(path, "rb").read()
        assert L.dataset_fingerprints(read_table(raw)[0], (1, 2)) == expected, kind  # the app's parsed upload
        assert L.dataset_fingerprint(raw, "hours") == expected.latest, kind  # another income column: same people
        assert L.dataset_fingerprints(path) == expected, kind  # every version by default
    # the key of the app before populations (the file's bytes and income column) gave each copy its own budget
    old_keys = {L.file_bytes_fingerprint(open(p, "rb").read(), "wage") for p in files.values()}
    assert len(old_keys) == len(files) - 1  # only the byte-identical renamed copy shared one
    assert L.file_bytes_fingerprint(open(files["csv"], "rb").read(), "hours") not in old_keys
    changed = _records()
    changed.loc[5, "wage"] += 1.0  # one person's value: other records
    assert L.dataset_fingerprint(changed) != expected
    assert L.dataset_fingerprint(_records().iloc[1:]) != expected


#: re-saves that keep the records (docs/privacy.md lists them): one fingerprint, one budget
SAME_RECORDS = ("bom", "crlf", "reordered_rows", "tsv", "quoted", "reordered_columns", "xlsx", "parquet")
#: changes that make other records (docs/privacy.md lists them): another source, which only the data owner can
#: attach to the population (`dpcore ledger population attach`)
OTHER_RECORDS = ("dropped_row", "duplicated_row", "renamed_column", "rounded_incomes", "rescaled_incomes", "index")


def _resaves(tmp_path) -> dict[str, bytes]:
    frame = _records()
    text = frame.to_csv(index=False)
    xlsx = tmp_path / "copy.xlsx"
    frame.to_excel(xlsx, index=False)
    parquet = tmp_path / "copy.parquet"
    frame.to_parquet(parquet, index=False)
    return {
        "bom": b"\xef\xbb\xbf" + text.encode(),
        "crlf": frame.to_csv(index=False, lineterminator="\r\n").encode(),
        "reordered_rows": frame.sample(frac=1.0, random_state=5).to_csv(index=False).encode(),
        "tsv": frame.to_csv(index=False, sep="\t").encode(),
        "quoted": frame.to_csv(index=False, quoting=1).encode(),
        "reordered_columns": frame[["state", "hours", "wage", "pid"]].to_csv(index=False).encode(),
        "xlsx": xlsx.read_bytes(),
        "parquet": parquet.read_bytes(),
        "dropped_row": frame.iloc[1:].to_csv(index=False).encode(),
        "duplicated_row": pd.concat([frame, frame.iloc[:1]]).to_csv(index=False).encode(),
        "renamed_column": frame.rename(columns={"wage": "earnings"}).to_csv(index=False).encode(),
        "rounded_incomes": frame.assign(wage=frame["wage"].round(0)).to_csv(index=False).encode(),
        "rescaled_incomes": frame.assign(wage=frame["wage"] / 1000).to_csv(index=False).encode(),
        "index": frame.to_csv().encode(),  # pandas' default to_csv() writes the index as a first column
    }


def test_what_a_resaved_copy_keeps_and_what_makes_other_records(tmp_path):
    """Exactly what docs/privacy.md promises of "a re-saved copy finds the same budget": the re-saves in
    SAME_RECORDS give the records' fingerprint in the app's parser and (CSV, TSV, Parquet) in the engines' reading;
    the changes in OTHER_RECORDS give another one (they are other records, however close)."""
    expected = L.dataset_fingerprint(_records())
    for kind, data in _resaves(tmp_path).items():
        app = L.dataset_fingerprint(read_table(data, file_name=f"copy-{kind}")[0])
        assert (app == expected) == (kind in SAME_RECORDS), kind
        if kind != "xlsx":  # the command line reads CSV and Parquet
            path = tmp_path / f"copy-{kind}.{'parquet' if kind == 'parquet' else 'csv'}"
            path.write_bytes(data)
            engine = source_record_fingerprints(parse_source(str(path))).latest
            assert (engine == expected) == (kind in SAME_RECORDS), kind
    promised = " ".join((ROOT / "docs" / "privacy.md").read_text().split())
    assert "not a dropped or duplicated row, a renamed column, rounded or rescaled incomes" in promised
    assert "pandas' default `to_csv()`" in promised


def test_canonical_values_are_defined_exactly():
    from dpcore.record_fingerprint import NULL_MARK, canonical_values

    got = list(
        canonical_values(
            pd.Series(["87,000", " 87000.0 ", "8.7e4", "NA", "", None, "TRUE", "x", "-0", "1.5"], dtype=object)
        )
    )
    assert got == ["87000", "87000", "87000", NULL_MARK, NULL_MARK, NULL_MARK, "true", "x", "0", "1.5"]
    assert list(canonical_values(pd.Series([87000.0, np.nan, 1.5, 2.0**60]))) == [
        "87000",
        NULL_MARK,
        "1.5",
        repr(2.0**60),
    ]
    assert list(canonical_values(pd.Series([True, False]))) == ["true", "false"]
    # numbers are written by NumPy's vectorised float -> str, which must be Python's repr exactly
    rng = np.random.default_rng(0)
    x = np.concatenate(
        [
            rng.lognormal(10, 3, 200_000),
            -rng.lognormal(0, 20, 200_000),
            rng.standard_normal(100_000) * 1e-300,
            [0.1, 1e-5, 1e16, 1e22, 5e-324, 1.7976931348623157e308, 9007199254740993.0, 123456789012345678.0],
        ]
    )
    x = x[np.isfinite(x) & ~((np.abs(x) < 2.0**53) & (np.floor(x) == x))]
    assert list(canonical_values(pd.Series(x))) == [repr(float(v)) for v in x]


# ----------------------------------------------------------------------------------------------------
# The command line: a plan names a registered population; a second name for the same records is refused
# ----------------------------------------------------------------------------------------------------
def test_a_plan_cannot_create_a_population(url, tmp_path):
    files = _variants(tmp_path)
    with pytest.raises(L.PopulationError, match="not registered.*population add households --cap-epsilon"):
        _release(_plan("households"), files["csv"], tmp_path, url, "out")
    assert not (tmp_path / "out").exists()
    db = L.open_ledger(url, create=False)
    assert db.populations() == [] and db.accounts() == []


def test_the_same_file_under_another_plan_name_is_refused(url, tmp_path):
    # the audit: two plan names, two fresh caps, both spent in full on the same people
    files = _variants(tmp_path)
    db = L.open_ledger(url, create=False)
    db.register_population("households A", 1.0)
    db.register_population("households B", 1.0)
    _release(_plan("households A", epsilon=1.0), files["csv"], tmp_path, url, "a")
    for kind in ("renamed", "crlf_reordered", "parquet"):
        with pytest.raises(L.PopulationError, match="already belong to the population 'households A'") as info:
            _release(_plan("households B", epsilon=1.0), files[kind], tmp_path, url, f"b-{kind}")
        assert "nothing was charged" in str(info.value) and "new account" not in str(info.value)
        assert not (tmp_path / f"b-{kind}").exists()
    assert db.population("households B").spent_epsilon() == 0.0
    assert db.population("households A").spent_epsilon() == pytest.approx(1.0)


def test_old_plans_name_their_population_by_dataset(url, tmp_path):
    files = _variants(tmp_path)
    L.open_ledger(url, create=False).register_population("survey-2023", 1.0)
    plan = _plan("", dataset="survey-2023")  # a plan written before populations: no population field
    assert plan.population == "survey-2023"
    _release(plan, files["csv"], tmp_path, url, "out", engine="pandas")
    assert L.open_ledger(url, create=False).population("survey-2023").spent_epsilon() == pytest.approx(0.5)


def test_resaved_copies_and_other_income_columns_spend_one_budget(url, tmp_path):
    files = _variants(tmp_path)
    db = L.open_ledger(url, create=False)
    db.register_population("households", 1.0)
    _release(_plan("households"), files["crlf_reordered"], tmp_path, url, "one", engine="pandas")
    _release(_plan("households", income="hours"), files["parquet"], tmp_path, url, "two")
    with pytest.raises(L.BudgetExceeded):  # a third copy finds the budget spent
        _release(_plan("households"), files["quoted_trailing"], tmp_path, url, "three")
    acct = db.population("households")
    assert acct.spent_epsilon() == pytest.approx(1.0) and db.source_count(acct.dataset_id) == 1


def test_a_population_cap_is_fixed(url):
    db = L.open_ledger(url, create=False)
    db.register_population("households", 2.0, 1e-8)
    assert db.register_population("households", 2.0, 1e-8).cap_epsilon == 2.0  # the same caps: idempotent
    with pytest.raises(L.PopulationError, match="can never be raised or reset") as info:
        db.register_population("households", 4.0, 1e-8)
    assert "new account" not in str(info.value)
    with pytest.raises(DPInputError, match="64 hex"):
        db.register_population("a" * 64, 1.0)
    from dpcore import budget

    pure = db.register_population("pure households", 2.0)
    with pytest.raises(DPInputError, match="fixed when a population is registered") as info:
        pure.charge("release: Gini (Laplace)", cost=budget.approx(0.5, 1e-9))
    assert "new account" not in str(info.value)  # no hint to open a second budget for the same people


# ----------------------------------------------------------------------------------------------------
# The app and the command line spend one budget
# ----------------------------------------------------------------------------------------------------
def test_the_app_and_the_command_line_charge_one_account(url, tmp_path):
    from ui import accounts

    files = _variants(tmp_path)
    db = L.open_ledger(url, create=False)
    # the app: an upload of the re-saved copy, released with income column "wage" (Release mode's functions)
    raw = open(files["crlf_reordered"], "rb").read()
    fingerprint = L.dataset_fingerprint(raw)
    assert (
        accounts.upload_population_account(db, fingerprint, L.file_bytes_fingerprint(raw, "wage")) is None
    )  # no release yet
    acct = accounts.population_for_release(db, fingerprint, "households", 1.0, 0.0)
    values = read_table(raw)[0]["wage"].to_numpy(dtype=float)
    release.make_release(
        [(planner.make_statistic("mean", values, upper=200000.0), 0.5)],
        acct,
        dataset={"income_column": "wage", "n": len(values)},
    )
    # another upload of the same records (CSV as first written, another income column) finds that budget
    raw_again = open(files["csv"], "rb").read()
    found = accounts.upload_population_account(
        db, L.dataset_fingerprint(raw_again), L.file_bytes_fingerprint(raw_again, "hours")
    )
    assert found is not None and found.population == "households" and found.spent_epsilon() == pytest.approx(0.5)
    # the command line, on the Parquet copy: the same population, the same budget
    _release(_plan("households"), files["parquet"], tmp_path, url, "cli")
    assert db.population("households").spent_epsilon() == pytest.approx(1.0)
    with pytest.raises(L.BudgetExceeded):
        _release(_plan("households"), files["csv"], tmp_path, url, "cli2")
    # and a new app population for the same records is refused, naming the one they belong to
    with pytest.raises(L.PopulationError, match="'households'"):
        accounts.population_for_release(db, fingerprint, "households (new cap)", 5.0, 0.0)


def test_an_old_app_account_keyed_by_bytes_becomes_the_population_of_its_records(url, tmp_path):
    files = _variants(tmp_path)
    raw = open(files["csv"], "rb").read()
    db = L.open_ledger(url, create=False)
    old = db.account(L.file_bytes_fingerprint(raw, "wage"), cap_epsilon=1.0, label="survey (app)")
    old.charge("release: mean", epsilon=0.75)
    from ui import accounts

    # the migration to schema 3 gives every old account a population; this one was made through the API on
    # schema 3, so it gets its population row here as the migration would have written it
    with db.database.locked(None) as conn:
        ph = db.database.ph
        conn.execute(
            f"INSERT INTO dpcore_populations(name, dataset_id, created, software) VALUES ({ph}, {ph}, {ph}, {ph})",
            ("survey (app)", old.dataset_id, "2026-01-01", "test"),
        )
    resaved = open(files["crlf_reordered"], "rb").read()
    found = accounts.upload_population_account(db, L.dataset_fingerprint(raw), L.file_bytes_fingerprint(raw, "wage"))
    assert found is not None and found.dataset_id == old.dataset_id and found.spent_epsilon() == 0.75
    # the re-saved copy (other bytes) now finds the same budget through its records
    assert accounts.upload_population_account(db, L.dataset_fingerprint(resaved), None).dataset_id == old.dataset_id


# ----------------------------------------------------------------------------------------------------
# Migration: a schema-2 ledger's accounts become populations
# ----------------------------------------------------------------------------------------------------
def _downgrade_to_schema_2(db) -> None:
    """Turn a fresh schema-3 ledger back into what schema 2 wrote (no population tables, version 2)."""
    backend = db.database
    with backend.locked(None) as conn:
        backend.drop_triggers(conn)
        conn.execute("DROP TABLE dpcore_sources")
        conn.execute("DROP TABLE dpcore_populations")
        conn.execute("DELETE FROM dpcore_meta WHERE key = 'record_fingerprints'")
        conn.execute("UPDATE dpcore_meta SET value = '2' WHERE key = 'schema_version'")
        backend.create_triggers(conn)


def test_a_schema_2_ledger_migrates_its_accounts_to_populations(url):
    db = L.open_ledger(url, create=False)
    plan_account = db.account("cps-2023", cap_epsilon=2.0, label="cps-2023")  # the command line's key: a name
    app_account = db.account(L.file_bytes_fingerprint(b"income\n1\n", "income"), cap_epsilon=3.0, label="survey.csv")
    twin = db.account(L.file_bytes_fingerprint(b"income\n2\n", "income"), cap_epsilon=1.0, label="survey.csv")
    plan_account.charge("release plan", epsilon=0.5)
    app_account.charge("release: Gini", epsilon=1.0)
    _downgrade_to_schema_2(db)
    migrated = L.open_ledger(url, create=False)
    report = migrated.verify()
    assert report.ok and report.schema_version == 4, report.problems
    names = {a.population: a for a in migrated.populations()}
    assert set(names) == {"cps-2023", "survey.csv", f"account-{twin.public_id[:12]}"}
    assert names["cps-2023"].dataset_id == "cps-2023" and names["cps-2023"].spent_epsilon() == 0.5
    assert names["survey.csv"].dataset_id == app_account.dataset_id and names["survey.csv"].spent_epsilon() == 1.0
    # old plans (dataset = "cps-2023") keep their budget; the chain goes on across the upgrade
    names["cps-2023"].charge("after the upgrade", epsilon=0.25)
    assert migrated.verify().ok and migrated.population("cps-2023").spent_epsilon() == 0.75
    with migrated.database.reading() as conn:
        assert conn.execute("SELECT value FROM dpcore_meta WHERE key = 'migrated_2_to_3'").fetchone() is not None


def test_population_tables_are_append_only(url, tmp_path):
    db = L.open_ledger(url, create=False)
    db.register_population("households", 1.0)
    db.attach_source(L.dataset_fingerprint(_records()), "households")
    db.register_population("other", 1.0)
    backend = db.database
    for sql in (
        "UPDATE dpcore_sources SET dataset_id = 'other'",
        "DELETE FROM dpcore_sources",
        "UPDATE dpcore_populations SET dataset_id = 'other' WHERE name = 'households'",
        "DELETE FROM dpcore_populations",
    ):
        with pytest.raises(L.LedgerError):
            with backend.locked(None) as conn:
                try:
                    conn.execute(sql)
                except Exception as exc:  # the driver's error, as a ledger fault (what a caller would see)
                    raise L.LedgerError(str(exc)) from None
    assert db.source_population(L.dataset_fingerprint(_records())).population == "households"


def test_verify_finds_a_source_or_population_without_its_account(tmp_path):
    import sqlite3

    path = tmp_path / "ledger.db"
    db = L.open_ledger(path)
    db.register_population("households", 1.0)
    assert db.verify().ok
    raw = sqlite3.connect(path)  # someone with write access, foreign keys off (SQLite's default)
    with raw:
        raw.execute("INSERT INTO dpcore_sources VALUES (?, 'ghost', '2026-01-01', 'x')", ("a" * 64,))
        raw.execute("INSERT INTO dpcore_populations VALUES ('ghosts', 'ghost', '2026-01-01', 'x')")
    raw.close()
    report = L.open_ledger(path, create=False).verify()
    assert not report.ok
    assert any("population(s) without their account: ghosts" in p for p in report.problems)
    assert any("1 source(s) attached to no account" in p for p in report.problems)


def test_the_population_commands(url, tmp_path, capsys):
    from dpcore import ledger_cli

    files = _variants(tmp_path)

    def run(*args):
        code = ledger_cli.main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    code, out, _ = run("population", "add", "households", "--cap-epsilon", "2", "--cap-delta", "1e-8", "--ledger", url)
    assert code == 0 and "registered: population 'households'" in out
    assert run("population", "add", "households", "--cap-epsilon", "2", "--cap-delta", "1e-8", "--ledger", url)[0] == 0
    code, _, err = run("population", "add", "households", "--cap-epsilon", "3", "--ledger", url)
    assert code == 2 and err.count("\n") == 1 and "can never be raised or reset" in err
    assert run("population", "add", "others", "--cap-epsilon", "1", "--ledger", url)[0] == 0
    code, out, _ = run("population", "attach", "households", files["csv"], files["parquet"], "--ledger", url)
    assert code == 0 and out.count("attached") == 2
    code, _, err = run("population", "attach", "others", files["crlf_reordered"], "--ledger", url)
    assert code == 2 and "already belong to the population 'households'" in err and "Traceback" not in err
    code, out, _ = run("population", "list", "--ledger", url)
    assert code == 0 and "households" in out and "1 source(s) attached" in out and "0 source(s) attached" in out
    fingerprint = L.dataset_fingerprint(files["csv"])
    assert fingerprint not in out and fingerprint not in run("show", url)[1]  # fingerprints stay in the ledger


def test_a_decimal_comma_file_has_one_fingerprint_in_the_app_and_the_engines(tmp_path):
    # a spreadsheet export: ';' between fields, decimal commas, dots between thousands
    path = tmp_path / "export.csv"
    path.write_bytes(b"income;region\n45,5;north\n1.234,56;south\n12,25;west\n2.500.000;north\n")
    frame, _ = read_table(path.read_bytes())
    assert frame["income"].tolist() == [45.5, 1234.56, 12.25, 2500000.0]  # the app reads numbers
    expected = L.dataset_fingerprint(frame)
    assert expected == L.dataset_fingerprint(
        pd.DataFrame({"income": [2500000.0, 45.5, 1234.56, 12.25], "region": ["north", "north", "south", "west"]})
    )
    for engine in ("duckdb", "pandas"):  # the engines read the same cells as text
        with open_engine(engine, parse_source(str(path)), EngineSpec("income", ())) as eng:
            assert engine_record_fingerprints(eng).latest == expected, engine


def test_the_same_files_again_skip_the_record_fingerprint_and_reach_the_same_decision(url, tmp_path):
    import io

    from dpcore.engines import Progress
    from dpcore.engines.fingerprint import source_bytes_key

    files = _variants(tmp_path)
    db = L.open_ledger(url, create=False)
    db.register_population("households", 2.0)
    db.register_population("others", 2.0)

    def release(population, kind, name):
        out = io.StringIO()
        execute.run_plan(
            _plan(population, cap=2.0),
            parse_source(files[kind]),
            engine="duckdb",
            out_dir=tmp_path / name,
            ledger_url=url,
            progress=Progress(stream=out),
        )
        return out.getvalue()

    first = release("households", "csv", "one")
    assert "fingerprinting the source's records" in first and "fingerprinted by an earlier release" not in first
    again = release("households", "renamed", "two")  # the same bytes under another file name
    assert "fingerprinted by an earlier release" in again and "fingerprinting the source's records" not in again
    with pytest.raises(L.PopulationError, match="already belong to the population 'households'"):
        release("others", "renamed", "three")  # the byte key refuses another population, as the records would
    resaved = release("households", "crlf_reordered", "four")  # other bytes, the same records: fingerprinted
    assert "fingerprinting the source's records" in resaved
    acct = db.population("households")
    assert acct.spent_epsilon() == pytest.approx(1.5) and db.population("others").spent_epsilon() == 0.0
    assert db.source_count(acct.dataset_id) == 1  # one set of records; the two byte keys are not sources
    key = source_bytes_key(parse_source(files["csv"]))
    assert key == source_bytes_key(parse_source(files["renamed"])) != source_bytes_key(parse_source(files["parquet"]))
    assert db.source_population(key).dataset_id == acct.dataset_id
    assert key != L.dataset_fingerprint(_records())  # a byte key is never a record fingerprint (domain tag)


# ----------------------------------------------------------------------------------------------------
# Record fingerprint versions: a ledger holding version-1 sources keeps computing version 1
# ----------------------------------------------------------------------------------------------------
def _as_schema_3(db, sources: list[tuple[str, str]]) -> None:
    """Turn a ledger back into one of schema 3 (before fingerprint versions) whose sources ``(version-1
    fingerprint, dataset id)`` were attached as that software attached them (no version mark)."""
    backend = db.database
    with backend.locked(None) as conn:
        backend.drop_triggers(conn)
        ph = backend.ph
        conn.execute("DELETE FROM dpcore_meta WHERE key = 'record_fingerprints'")
        conn.execute("UPDATE dpcore_meta SET value = '3' WHERE key = 'schema_version'")
        for fingerprint, dataset_id in sources:
            conn.execute(
                f"INSERT INTO dpcore_sources(fingerprint, dataset_id, attached, software) VALUES ({ph}, {ph}, {ph}, {ph})",
                (fingerprint, dataset_id, "2026-01-01T00:00:00+00:00", "dpcore 0.9.0"),
            )
        backend.create_triggers(conn)
        if backend.name == "sqlite":  # its _drop_triggers dropped the population tables' triggers too
            for sql in ledger_schema.sqlite_v3_triggers().values():
                conn.execute(sql)


def test_a_new_ledger_computes_the_newest_fingerprint_only(url, tmp_path):
    db = L.open_ledger(url, create=False)
    assert db.record_fingerprint_versions == (2,)
    report = db.verify()
    assert report.ok and report.schema_version == L.SCHEMA_VERSION == 4, report.problems
    db.register_population("households", 1.0)
    files = _variants(tmp_path)
    db.attach_source(L.dataset_fingerprint(files["csv"]), "households")  # one hex: the newest version's
    assert db.source_population(L.dataset_fingerprints(files["parquet"])).population == "households"
    with pytest.raises(ValueError, match=r"version\(s\) \[2\] were not computed"):
        db.source_population(L.dataset_fingerprints(files["csv"], (1,)))
    assert db.source_count(db.population("households").dataset_id) == 1
    with db.database.reading() as conn:
        marks = {r[0].split(" ", 2)[-1] for r in conn.execute("SELECT software FROM dpcore_sources").fetchall()}
    assert marks == {"(records v2)"}


def test_a_schema_3_ledger_with_version_1_sources_keeps_finding_them(url, tmp_path, capsys):
    from dpcore import ledger_cli
    from ui import accounts

    files = _variants(tmp_path)
    db = L.open_ledger(url, create=False)
    db.register_population("households", 3.0)
    db.register_population("others", 3.0)
    households = db.population("households").dataset_id
    _as_schema_3(db, [(L.dataset_fingerprint(files["csv"], version=1), households)])
    upgraded = L.open_ledger(url, create=False)
    report = upgraded.verify()
    assert report.ok and report.schema_version == 4, report.problems
    assert upgraded.record_fingerprint_versions == (1, 2)
    with upgraded.database.reading() as conn:
        note = conn.execute("SELECT value FROM dpcore_meta WHERE key = 'migrated_3_to_4'").fetchone()[0]
    assert '"record_fingerprints": [1, 2]' in note

    # a re-saved copy under another population name: found by its version-1 fingerprint, in every path
    with pytest.raises(L.PopulationError, match="already belong to the population 'households'"):
        _release(_plan("others", cap=3.0), files["crlf_reordered"], tmp_path, url, "cli")
    resaved = L.dataset_fingerprints(read_table(open(files["quoted_trailing"], "rb").read())[0])
    assert accounts.upload_population_account(upgraded, resaved, None).population == "households"
    with pytest.raises(L.PopulationError, match="'households'"):
        accounts.population_for_release(upgraded, resaved, "others", 3.0, 0.0)
    assert ledger_cli.main(["population", "attach", "others", files["parquet"], "--ledger", url]) == 2
    assert "already belong to the population 'households'" in capsys.readouterr().err
    # one fingerprint (the newest version only) cannot be checked against version-1 sources: refused, not missed
    with pytest.raises(ValueError, match="holds sources attached by version 1"):
        upgraded.attach_source(L.dataset_fingerprint(files["parquet"]), "others")
    with pytest.raises(ValueError, match=r"version\(s\) \[1\] were not computed"):
        upgraded.source_population(L.dataset_fingerprints(files["parquet"], (2,)))
    assert upgraded.population("others").spent_epsilon() == 0.0
    with upgraded.database.reading() as conn:
        assert conn.execute("SELECT COUNT(*) FROM dpcore_sources").fetchone()[0] == 1  # nothing attached by refusals

    # released under its own population: the source gains its version-2 fingerprint, still one source
    _release(_plan("households", cap=3.0), files["parquet"], tmp_path, url, "own")
    assert upgraded.population("households").spent_epsilon() == pytest.approx(0.5)
    assert upgraded.source_count(households) == 1
    again = L.open_ledger(url, create=False)
    assert again.source_population(L.dataset_fingerprints(files["columns_reordered"])).population == "households"
    # other records: both versions attached, counted once
    other = tmp_path / "other.csv"
    _records(30).to_csv(other, index=False)
    assert ledger_cli.main(["population", "attach", "others", str(other), "--ledger", url]) == 0
    assert again.source_count(again.population("others").dataset_id) == 1
    assert again.verify().ok


def test_a_schema_3_ledger_without_sources_computes_the_newest_version(url):
    db = L.open_ledger(url, create=False)
    db.register_population("households", 1.0)
    _as_schema_3(db, [])
    upgraded = L.open_ledger(url, create=False)
    assert upgraded.record_fingerprint_versions == (2,) and upgraded.verify().ok


def test_a_ledger_of_a_newer_schema_is_refused_by_this_dpcore(url):
    db = L.open_ledger(url, create=False)
    backend = db.database
    with backend.locked(None) as conn:
        backend.set_schema_version(conn, L.SCHEMA_VERSION + 1)
    with pytest.raises(L.LedgerCorrupt, match="newer than this dpcore"):
        L.open_ledger(url, create=False)


def test_the_app_finds_a_version_1_source_of_an_upgraded_ledger(tmp_path, monkeypatch):
    """An upload whose records were attached by version 1 (before the upgrade) opens their population in the
    app: the panel computes version 1 too for this ledger, once, and asks no new population name."""
    from pathlib import Path

    from streamlit.testing.v1 import AppTest

    repo = Path(__file__).resolve().parent.parent
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(L.ENV_VAR, url)
    db = L.init_ledger(url)
    db.register_population("households", 2.0)
    raw = _records().sample(frac=1.0, random_state=9).to_csv(index=False).encode()  # a re-saved copy
    frame = read_table(raw)[0]
    _as_schema_3(db, [(L.dataset_fingerprint(frame, version=1), db.population("households").dataset_id)])
    harness = (
        f"import runpy, sys\nsys.path.insert(0, {str(repo)!r})\n"
        "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
        f"runpy.run_path({str(repo / 'app_pages' / 'planner.py')!r})\n"
    )
    at = AppTest.from_string(harness, default_timeout=240)
    at.query_params["data_source"] = "Upload a CSV or Parquet file"
    at.query_params["planner_mode"] = "Release: make the real release (spends budget)"
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("copy.csv", raw, "text/csv")).run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.session_state["planner_ledger"].population == "households"
    assert not [t for t in at.text_input if t.key.startswith("planner_account_label")]
    assert at.session_state["_release_fingerprint"][1].versions == (1, 2)
