"""``python -m dpcore plan PLAN.toml --data SOURCE --out SOLVED.toml``: the DP snapshot charged once to the plan's
population in a real SQLite ledger (refused like a release without one), reused by later runs (nothing more
spent), the solved plan releasable as it is; plan files with accuracy targets (docs/plan_format.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import tomllib
from test_snapshot import DOCUMENT_FIELDS

from dpcore import cli, ledger
from dpcore.plan import PlanError, parse_plan

PLAN = """
version = 1
population = "people"
income = "income"
cap_epsilon = 10.0
planning_epsilon = 0.1

[keys]
state = ["CO", "TX"]

[[statistics]]
kind = "mean"
by = ["state"]
lower = 0
upper = 200000
half_width = 4000
"""


GINI = """
[[statistics]]
kind = "gini"
by = ["state"]
lower = 0
upper = 200000
half_width = 0.06
"""

MEDIAN = """
[[statistics]]
kind = "percentiles"
by = ["state"]
bins = "pseo"
q = [50]
half_width = 10000
"""


@pytest.fixture()
def setup(tmp_path):
    gen = np.random.default_rng(5)
    n = 1200
    df = pd.DataFrame(
        {"state": gen.choice(["CO", "TX"], n), "income": np.round(gen.lognormal(10.5, 0.7, n))},
    )
    data = tmp_path / "data.csv"
    df.to_csv(data, index=False)
    plan = tmp_path / "plan.toml"
    plan.write_text(PLAN)
    return tmp_path, plan, data


def _cli(capsys, *args):
    code = cli.main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _error(err: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.startswith("dpcore: error")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def _entries(url: str, population: str = "people"):
    return ledger.open_ledger(url, create=False).require_population(population).entries()


def test_plan_charges_the_snapshot_once_reuses_it_and_the_solved_plan_releases(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    solved = tmp / "solved.toml"
    code, out, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved, "--ledger", url, "--init-ledger")
    assert code == 0, err
    assert out.strip() == str(solved)
    (entry,) = _entries(url)  # exactly planning_epsilon, once
    assert entry.cost.kind == "pure" and entry.cost.epsilon == pytest.approx(0.1)
    assert entry.record["kind"] == "dpcore snapshot"
    # the stored document is public settings and DP outputs only (the cells' sizes are noisy: none is stored)
    doc = entry.result["snapshot"]
    assert set(doc) == set(DOCUMENT_FIELDS) and doc["schema"]["cell_sizes"] is None and not doc["simulated"]
    assert doc["cells"] == ["CO", "TX"] and len(doc["noisy_sizes"]) == 2
    text = solved.read_text()
    assert "planning_epsilon = 0.1" in text.split("version = 1")[0]  # the header states the snapshot's epsilon
    assert "drawn 20" in text and f"ledger entry {entry.id}" in text
    raw = tomllib.loads(text)
    eps = raw["statistics"][0]["epsilon"]
    assert 0 < eps <= 10 and raw["statistics"][0]["half_width"] == 4000
    # the mean by declared cells with noisy sizes is approximate (the cells' sizes come from the snapshot)
    assert "01_mean_by_state: epsilon" in text and "(approximate; 5 simulated releases" in text

    # planning again (another target) reuses the stored snapshot: nothing more is charged, nothing read
    plan.write_text(PLAN.replace("half_width = 4000", "half_width = 2000"))
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved, "--ledger", url)
    assert code == 0, err
    assert "reusing the DP snapshot" in err and "reused: nothing more spent" in solved.read_text()
    assert len(_entries(url)) == 1
    eps2 = tomllib.loads(solved.read_text())["statistics"][0]["epsilon"]
    # the release's interval also carries the noisy n (n_epsilon = 0.1: about +-8% of a mean at n = 600), which
    # the planner's model leaves out: the simulated release on the synthetic data says so, and no epsilon is
    # added that would not help
    assert "MISSES the" in solved.read_text() and "dpcore: warning:" in err and "n_epsilon" in err

    # SOLVED.toml is releasable as it is: check reads it, release charges its epsilon
    code, out, err = _cli(capsys, "check", solved)
    assert code == 0 and f"epsilon = {eps2 + 0.1:g} of cap 10" in out, err  # + the noisy sizes' n_epsilon
    code, _, err = _cli(capsys, "release", solved, "--data", data, "--out", tmp / "rel", "--ledger", url, "--quiet")
    assert code == 0, err
    entries = _entries(url)
    assert len(entries) == 2 and entries[1].cost.epsilon == pytest.approx(eps2 + 0.1)  # + the noisy sizes
    assert len(pd.read_csv(tmp / "rel" / "01_mean_by_state.csv")) == 2


def test_plan_is_refused_without_a_ledger_or_a_registered_population(setup, capsys, monkeypatch):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'none.db'}"
    monkeypatch.setenv("DPCORE_LEDGER_URL", url)
    solved = tmp / "solved.toml"
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved)
    assert code == 2 and "--init-ledger" in _error(err)
    assert not (tmp / "none.db").exists() and not solved.exists()
    other = f"sqlite:///{tmp / 'other.db'}"
    ledger.init_ledger(other).register_population("someone-else", 10.0)
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved, "--ledger", other)
    assert code == 2 and "people" in _error(err) and not solved.exists()
    assert ledger.open_ledger(other, create=False).require_population("someone-else").entries() == []
    # a population without the budget for the snapshot: refused before reading any data, nothing charged
    small = f"sqlite:///{tmp / 'small.db'}"
    acct = ledger.init_ledger(small).register_population("people", 10.0)
    acct.charge("earlier releases", 9.95)
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved, "--ledger", small)
    assert code != 0 and "refused" in _error(err) and not solved.exists()
    assert len(ledger.open_ledger(small, create=False).require_population("people").entries()) == 1


def test_public_data_plans_directly_without_a_ledger_and_charges_nothing(setup, capsys, monkeypatch):
    tmp, plan, data = setup
    monkeypatch.setenv("DPCORE_LEDGER_URL", f"sqlite:///{tmp / 'none.db'}")
    solved = tmp / "solved.toml"
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved, "--public-data")
    assert code == 0, err
    text = solved.read_text()
    assert "declared public (--public-data): nothing was charged" in text
    assert not (tmp / "none.db").exists()
    assert parse_plan(text).statistics[0].epsilon > 0


def test_a_target_no_epsilon_meets_is_said_after_the_charge_and_replanning_is_free(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    plan.write_text(PLAN.replace("half_width = 4000", "half_width = 0.5"))
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", tmp / "s.toml", "--ledger", url, "--init-ledger")
    assert code == 2 and "cannot be met" in _error(err) and "costs nothing more" in _error(err)
    assert len(_entries(url)) == 1 and not (tmp / "s.toml").exists()


def test_a_solved_plan_over_the_budget_left_is_written_with_a_warning(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    plan.write_text(PLAN.replace("cap_epsilon = 10.0", "cap_epsilon = 1.0").replace("= 4000", "= 300"))
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", tmp / "s.toml", "--ledger", url, "--init-ledger")
    assert code == 2 and "not releasable" in _error(err)  # beyond the cap itself: no plan to write
    plan.write_text(PLAN.replace("cap_epsilon = 10.0", "cap_epsilon = 1.0").replace("= 4000", "= 3000"))
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", tmp / "s.toml", "--ledger", url)
    assert code == 0, err
    eps = tomllib.loads((tmp / "s.toml").read_text())["statistics"][0]["epsilon"]
    if eps + 0.1 + 0.1 > 1.0:  # the plan plus its noisy sizes, after the snapshot
        assert "dpcore: warning:" in err


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda t: t.replace("half_width = 4000", "half_width = 4000\nrelative_half_width = 0.1"), "give one"),
        (lambda t: t.replace("half_width = 4000", "half_width = -1"), "half_width"),
        (lambda t: t.replace("half_width = 4000", "relative_half_width = 20"), "share of the value"),
        (lambda t: t.replace("planning_epsilon = 0.1", "planning_epsilon = 11"), "planning_epsilon"),
        (lambda t: t.replace("planning_epsilon = 0.1", "planning_epsilon = 0"), "planning_epsilon"),
        (lambda t: t.replace("half_width = 4000", ""), "epsilon"),
    ],
)
def test_plan_files_with_targets_are_validated(edit, words):
    with pytest.raises(PlanError, match=words):
        parse_plan(edit(PLAN), solving=True)


def test_a_plan_still_to_solve_is_refused_by_check_and_release_naming_the_command(setup, capsys):
    tmp, plan, data = setup
    with pytest.raises(PlanError, match="dpcore plan"):
        parse_plan(PLAN)
    code, _, err = _cli(capsys, "check", plan)
    assert code == 2 and "dpcore plan" in _error(err)
    # with an epsilon beside the target, the plan is a release plan as it is (the target is kept for re-planning)
    spec = parse_plan(PLAN.replace("half_width = 4000", "half_width = 4000\nepsilon = 1.0")).statistics[0]
    assert spec.epsilon == 1.0 and spec.half_width == 4000 and spec.to_dict()["half_width"] == 4000


def test_plan_refuses_what_it_cannot_plan_before_any_charge(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    plan.write_text(PLAN.replace("[keys]\nstate = [\"CO\", \"TX\"]\n", ""))  # undeclared cells, noisy sizes
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", tmp / "s.toml", "--ledger", url, "--init-ledger")
    assert code == 2 and "[keys]" in _error(err)
    plan.write_text(PLAN + PLAN[PLAN.index("[[statistics]]") :].replace('by = ["state"]', 'by = ["region"]'))
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", tmp / "s.toml", "--ledger", url, "--init-ledger")
    assert code == 2 and "one set of cells" in _error(err)
    assert not (tmp / "ledger.db").exists()  # refused from the plan alone: not even the ledger is created


def test_with_public_sizes_a_real_release_of_the_solved_plan_meets_its_targets(setup, capsys):
    tmp, plan, data = setup
    url = f"sqlite:///{tmp / 'ledger.db'}"
    plan.write_text(PLAN.replace("planning_epsilon = 0.1", 'planning_epsilon = 0.1\ncell_sizes = "public"') + GINI)
    solved = tmp / "solved.toml"
    code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", solved, "--ledger", url, "--init-ledger")
    assert code == 0, err
    text = solved.read_text()
    assert "01_mean_by_state: epsilon" in text and "(exact: public inputs only; 5 simulated releases" in text
    assert (
        "(exact: public inputs only; 5 simulated releases on the planning data: 100% of cells within 1.25x, meets"
        in text
    )
    # the Gini's check is random (a snapshot's synthetic data, 5 simulated releases): it may say MISSES (measured:
    # 1 run in 6 here, the epsilon raised as far as it helped), and then warns
    assert "02_gini_by_state: epsilon" in text and ("MISSES" in text) == ("warning" in err)
    code, _, err = _cli(capsys, "release", solved, "--data", data, "--out", tmp / "rel", "--ledger", url, "--quiet")
    assert code == 0, err
    mean = pd.read_csv(tmp / "rel" / "01_mean_by_state.csv")
    gini = pd.read_csv(tmp / "rel" / "02_gini_by_state.csv")
    assert ((mean["mean_upper"] - mean["mean_lower"]) / 2 <= 4000 * 1.25).all()
    # the mean's half-width with public sizes is a function of public inputs (exact); the Gini's follows its
    # noisy sensitivity bound, different in every real (unseeded) release: one release of two cells may miss
    # (seen in CI: 3x), so how often releases meet it is measured in docs/planner.md, not asserted here
    assert len(gini) == 2 and ((gini["gini_lower"] >= 0) & (gini["gini_upper"] <= 1)).all()
    assert (gini["gini_lower"] <= gini["gini_upper"]).all()


def test_neighbouring_sources_get_the_same_charge_and_the_same_public_settings(setup, capsys):
    """Neighbours (one person's income replaced, within their cell) are planned alike: one charge of
    planning_epsilon, the same public settings in the stored record, the same SOLVED.toml but for the epsilons
    (functions of the snapshot, a DP output)."""
    tmp, plan, data = setup
    frame = pd.read_csv(data)
    neighbour = frame.copy()
    neighbour.loc[0, "income"] = 5_000_000.0  # above the upper bound: the largest change one person can make
    sources = [data, tmp / "neighbour.csv"]
    neighbour.to_csv(sources[1], index=False)
    charges, texts = [], []
    for i, source in enumerate(sources):
        url = f"sqlite:///{tmp / f'ledger{i}.db'}"
        out = tmp / f"solved{i}.toml"
        code, _, err = _cli(capsys, "plan", plan, "--data", source, "--out", out, "--ledger", url, "--init-ledger")
        assert code == 0, err
        charges.append([(e.cost.kind, e.cost.epsilon, e.record["schema"]) for e in _entries(url)])
        raw = tomllib.loads(out.read_text())
        for stat in raw["statistics"]:
            stat.pop("epsilon")
        texts.append(raw)
    assert charges[0] == charges[1] and [c[:2] for c in charges[0]] == [("pure", pytest.approx(0.1))]
    assert texts[0] == texts[1]


def test_one_release_must_meet_the_share_of_cells_with_high_probability():
    from dpcore import plan_command

    # 3 cells: 80% of them is all 3, so each must meet its target with p = 0.9^(1/3)
    assert plan_command.required_share(3) == pytest.approx(0.9 ** (1 / 3), abs=1e-9)
    # 7 cells: >= 6 of 7 with probability 0.9 needs p ~ 0.92, above the share itself; many cells approach 0.8
    seven = plan_command.required_share(7)
    assert 0.9 < seven < 0.95
    assert 0.8 < plan_command.required_share(400) < seven
    assert plan_command.required_share(0) == 0.0


def test_the_release_check_counts_every_cell_of_every_simulated_release(tmp_path, monkeypatch):
    """One release's Gini half-width varies (its noisy sensitivity bound): a check on each cell's median over the
    simulated releases passes a plan whose every single release misses the target in one of its 3 cells."""
    from types import SimpleNamespace

    from dpcore import plan_command
    from dpcore.engines import execute

    plan_file = tmp_path / "plan.toml"
    plan_file.write_text(
        PLAN.replace("planning_epsilon = 0.1", 'planning_epsilon = 0.1\ncell_sizes = "public"').replace(
            'state = ["CO", "TX"]', 'state = ["CO", "TX", "UT"]'
        )
        + GINI
        + MEDIAN
    )
    plan = plan_command.load_plan(plan_file, solving=True)
    planning = SimpleNamespace(values=np.ones(3), cells=np.array(["CO", "TX", "UT"]))

    def fake_release(sub, source, *, out_dir, seed, public_data):  # release `seed` misses in cell seed % 3 (1.5x)
        out_dir.mkdir()
        for spec in sub.statistics:
            rotating = np.where(np.arange(3) == seed % 3, 1.5, 1.0)
            col, half = {"gini": ("gini", 0.06 * rotating), "percentiles": ("p50", 10_000.0 * rotating)}.get(
                spec.kind, ("mean", np.full(3, 4000.0))
            )
            pd.DataFrame({col: 0.4, f"{col}_lower": 0.4 - half, f"{col}_upper": 0.4 + half}).to_csv(
                out_dir / f"SIMULATION_{spec.name}.csv", index=False
            )

    monkeypatch.setattr(execute, "run_plan", fake_release)
    check = plan_command.release_check(plan, planning, seeds=(0, 1, 2))
    gini = next(s.name for s in plan.statistics if s.kind == "gini")
    mean = next(s.name for s in plan.statistics if s.kind == "mean")
    assert check.shares[gini] == pytest.approx(6 / 9) and not check.meets(gini)
    # the epsilon is raised so that the pairs' required quantile comes within 1.25x (half-width ~ 1/epsilon)
    assert check.factors[gini] == pytest.approx(0.09 / 0.06 / 1.25)
    assert check.meets(mean) and mean not in check.factors
    # a median on histogram bins (method "histogram", the default) is checked the same way
    median = next(s.name for s in plan.statistics if s.kind == "percentiles")
    assert check.shares[median] == pytest.approx(6 / 9) and check.factors[median] == pytest.approx(1.5 / 1.25)


# the plan's header (population, cap, planning epsilon, declared cells) with a relative risk to plan
RISK_PLAN = (
    PLAN.split("[[statistics]]")[0]
    + """
[[statistics]]
kind = "relative_risk"
by = ["state"]
group = "group"
exposed = "a"
reference = "b"
outcome_below = 30000
relative_half_width = 0.5
"""
)


def test_the_snapshot_risk_table_is_counted_by_the_engine_from_the_statistic():
    """The snapshot's confidential 2x2 table per cell (cases and non-cases, exposed then reference) comes from
    Engine.outcomes given the plan's relative-risk statistic (counted here by hand)."""
    from dpcore import engines, plan_command

    plan = parse_plan(RISK_PLAN, solving=True)
    df = pd.DataFrame(
        {
            "state": ["CO", "CO", "TX", "TX", "TX", "CO"],
            "group": ["a", "b", "a", "b", "a", "a"],
            "income": [10_000, 50_000, 20_000, 10_000, 90_000, 40_000],
        }
    )
    with engines.open_engine("pandas", engines.frame_source(df), engines.EngineSpec.from_plan(plan)) as eng:
        eng.prepare()
        tables, cells, _ = plan_command._engine_tables(eng, plan, ("state",), [("CO",), ("TX",)])
    assert cells == [("CO",), ("TX",)]
    # CO: exposed incomes 10k (a case) and 40k, reference 50k; TX: exposed 20k (a case) and 90k, reference 10k (a case)
    assert tables.confidential_risk.tolist() == [[[1, 1], [0, 1]], [[1, 1], [1, 0]]]


def test_a_median_planned_on_the_snapshots_draws_is_charged_once_and_follows_from_the_stored_document(setup, capsys):
    """The median's width is averaged over data sets drawn from the snapshot's law (post-processing): the plan
    costs planning_epsilon once, and planning again from the stored document alone (nothing read, nothing charged)
    solves the same epsilon, so the solved plan is a function of the DP snapshot and publishable."""
    tmp, plan, data = setup
    plan.write_text(PLAN.split("[[statistics]]")[0] + MEDIAN)
    url = f"sqlite:///{tmp / 'ledger.db'}"
    texts = []
    for i in range(2):
        out = tmp / f"solved{i}.toml"
        init = ["--init-ledger"] if i == 0 else []
        code, _, err = _cli(capsys, "plan", plan, "--data", data, "--out", out, "--ledger", url, *init)
        assert code == 0, err
        texts.append(tomllib.loads(out.read_text()))
    (entry,) = _entries(url)
    assert entry.cost.kind == "pure" and entry.cost.epsilon == pytest.approx(0.1)
    assert texts[0] == texts[1] and 0 < texts[0]["statistics"][0]["epsilon"] <= 10
