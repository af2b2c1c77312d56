"""The plan file's Gini has an optional ``noise`` field ("cauchy" when absent, or
"laplace" with its ``delta``), so the planner writes a Laplace-noise Gini into the release plan and
``python -m dpcore release`` (dpcore.engines.execute.run_plan) releases it with the calibration the
planner solved with, at the privacy cost the planner stated. The Laplace log-normal stays refused (no
floating-point-safe sampler). Neighbouring data sets refuse and release alike, and no record holds the
data-dependent noise scale S_beta(X)/alpha."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import tomllib

from dpcore import planner, release
from dpcore.engines import draws, execute, parse_source
from dpcore.engines import record as engine_record
from dpcore.gini import CONFIDENTIAL_SCALE_LABEL
from dpcore.noise import smooth as smooth_noise
from dpcore.plan import (
    EXAMPLE_PLAN,
    PlanError,
    parse_plan,
    plan_from_dict,
    plan_from_planner_choices,
    plan_to_toml,
    write_plan,
)
from dpcore.views import planner as planner_experiments

DELTA = 1e-7


def _laplace_raw(**gini) -> dict:
    raw = tomllib.loads(EXAMPLE_PLAN)
    raw["statistics"][1].pop("gamma", None)
    raw["statistics"][1].update({"noise": "laplace", "delta": DELTA, **gini})
    raw["cap_delta"] = 1e-6
    return raw


def _error(raw: dict) -> str:
    with pytest.raises(PlanError) as info:
        plan_from_dict(raw)
    return str(info.value)


# ---------------------------------------------------------------------------------------------
# The format: default, round trip, validation
# ---------------------------------------------------------------------------------------------

OLD_PLAN_FILE = """# written by the planner before the noise field existed
version = 1
dataset = "old"
income = "income"
cap_epsilon = 1.5

[[statistics]]
kind = "gini"
name = "01_gini"
by = []
epsilon = 1.25
lower = 0.0
upper = 1000000.0
gamma = 2.0
calibration = "tight"
"""


def test_an_old_plan_file_loads_as_the_generalized_cauchy_and_is_written_as_before():
    plan = parse_plan(OLD_PLAN_FILE)
    gini = plan.statistics[0]
    assert (gini.noise, gini.delta, gini.gamma, gini.calibration) == ("cauchy", None, 2.0, "tight")
    assert plan.noise_delta == 0.0 and plan.cap_delta is None
    text = write_plan(plan)
    assert "noise" not in text and "delta" not in text  # a Cauchy plan is written exactly as before
    assert text.split("\n", 2)[2] == "\n".join(OLD_PLAN_FILE.split("\n")[1:]).replace(
        'version = 1', 'version = 1  # plan format version'
    ).replace('dataset = "old"', 'dataset = "old"  # the ledger account (id and label)').replace(
        'income = "income"', 'income = "income"  # income column'
    ).replace('cap_epsilon = 1.5', "cap_epsilon = 1.5  # the dataset's total budget in the ledger")
    assert parse_plan(text) == plan
    assert parse_plan(EXAMPLE_PLAN).statistics[1].noise == "cauchy"


def test_a_laplace_gini_round_trips():
    plan = plan_from_dict(_laplace_raw(calibration="paper"))
    gini = plan.statistics[1]
    assert (gini.noise, gini.delta, gini.calibration, gini.gamma) == ("laplace", DELTA, "paper", None)
    assert plan.noise_delta == DELTA and plan.cap_delta == 1e-6
    text = plan_to_toml(plan)
    entry = tomllib.loads(text)["statistics"][1]
    assert entry["noise"] == "laplace" and entry["delta"] == DELTA and "gamma" not in entry
    assert parse_plan(text) == plan
    # delta defaults to 1e-6 (dpcore.noise.smooth.DEFAULT_DELTA)
    raw = _laplace_raw()
    del raw["statistics"][1]["delta"]
    assert plan_from_dict(raw).statistics[1].delta == smooth_noise.DEFAULT_DELTA


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            dict(noise="gaussian"),
            "statistics[2] (gini): field 'noise' must be \"cauchy\" (the default) or \"laplace\", got 'gaussian'",
        ),
        (dict(noise=3), "field 'noise' must be \"cauchy\" (the default) or \"laplace\", got 3"),
        (dict(noise=["laplace"]), "field 'noise' must be"),
        (
            dict(noise="laplace_lognormal"),
            "statistics[2] (gini): field 'noise' 'laplace_lognormal' cannot be released: "
            "there is no floating-point-safe sampler",
        ),
        (dict(gamma=2.0), "statistics[2] (gini): field 'gamma' is the generalized Cauchy's tail exponent"),
        (dict(delta=0.0), "statistics[2] (gini): field 'delta' must be in (0, 1e-3)"),
        (dict(delta=0.01), "field 'delta' must be in (0, 1e-3)"),
        (dict(delta="1e-6"), "statistics[2] (gini): field 'delta' must be a number"),
        (dict(calibration="loose"), "statistics[2] (gini): field 'calibration' must be 'tight' or 'paper'"),
    ],
)
def test_bad_noise_fields_are_refused_precisely(change, expected):
    assert expected in _error(_laplace_raw(**change))


def test_delta_without_laplace_and_the_delta_cap_are_checked():
    raw = tomllib.loads(EXAMPLE_PLAN)
    raw["statistics"][1]["delta"] = 1e-6
    assert "statistics[2] (gini): field 'delta' applies to noise = \"laplace\" only" in _error(raw)
    raw = _laplace_raw()
    del raw["cap_delta"]
    assert "plan: field 'cap_delta' is required when a Gini uses noise = \"laplace\"" in _error(raw)
    assert "spend delta = 1e-07 in total, more than cap_delta = 5e-08" in _error(_laplace_raw() | {"cap_delta": 5e-8})


# ---------------------------------------------------------------------------------------------
# Planner -> plan -> release: the same calibration, the same cost
# ---------------------------------------------------------------------------------------------


def _incomes(n: int = 600, seed: int = 4) -> np.ndarray:
    return np.round(np.random.default_rng(seed).lognormal(10.4, 0.8, n), 2)


@pytest.fixture(scope="module")
def planned():
    """What the planner page does for a Laplace-noise Gini: solve epsilon, write the plan."""
    values = _incomes()
    stat = planner.make_statistic("gini", values, upper=1e6, noise="laplace", delta=DELTA)
    eps = planner.solve_epsilon(stat, planner.AccuracyTarget(0.2, 0.9)).epsilon
    plan, left_out = plan_from_planner_choices(
        ["gini"], lambda kind: stat, {"gini": eps}, dataset="light", income="income", cap_epsilon=eps
    )
    return values, stat, eps, plan, left_out


def test_the_planner_writes_the_laplace_gini_with_its_delta(planned):
    _, stat, eps, plan, left_out = planned
    assert left_out == []
    (gini,) = plan.statistics
    assert (gini.kind, gini.noise, gini.delta, gini.epsilon, gini.calibration) == (
        "gini",
        "laplace",
        DELTA,
        eps,
        stat.calibration,
    )
    assert plan.cap_delta == DELTA and plan.cap_epsilon == eps
    assert parse_plan(write_plan(plan)) == plan


def test_the_planner_leaves_the_lognormal_gini_out_and_says_why():
    values = _incomes(200)
    lln = planner.make_statistic("gini", values, upper=1e6, noise="laplace_lognormal", delta=DELTA)
    mean = planner.make_statistic("mean", values, upper=5e5)
    plan, left_out = plan_from_planner_choices(
        ["gini", "mean"],
        {"gini": lln, "mean": mean}.get,
        {"gini": 1.0, "mean": 0.5},
        dataset="d",
        income="income",
        cap_epsilon=1.5,
    )
    assert [s.kind for s in plan.statistics] == ["mean"] and plan.cap_delta is None
    assert left_out == [
        "gini: the Gini with noise 'laplace_lognormal' cannot be released (no floating-point-safe "
        "sampler); plan it with the Laplace or the generalized Cauchy noise to write it into a plan"
    ]


def _write(tmp_path, name: str, values: np.ndarray):
    folder = tmp_path / name
    folder.mkdir()
    pd.DataFrame({"income": values}).to_csv(folder / "data.csv", index=False)
    return parse_source(str(folder / "data.csv"))


def test_the_release_uses_the_planners_calibration_and_records_its_exact_cost(planned, tmp_path):
    values, stat, eps, plan, _ = planned
    cal = stat.mechanism_at(eps).smooth_calibration  # what the planner solved with
    released = draws.gini_mechanism(plan.statistics[0], 1)
    # the release splits epsilon between the value and the bound on S that its interval needs: the value's
    # calibration is the planner's at epsilon_value and the bound's beta
    assert released.value_mechanism.smooth_calibration.noise == cal.noise
    assert released.plan.epsilon_value + released.plan.epsilon_bound == pytest.approx(eps)
    planner_cost = planner_experiments.statistic_cost(stat, eps)
    assert (planner_cost.kind, planner_cost.epsilon, planner_cost.delta) == ("approx", eps, DELTA)
    cost = engine_record.plan_cost(plan)
    assert [(c.epsilon, c.delta) for _, c in cost.per_statistic] == [(eps, DELTA)]
    assert cost.privacy_cost() == planner_cost
    url = f"sqlite:///{tmp_path}/ledger.db"
    result = execute.run_plan(
        plan, _write(tmp_path, "d", values), engine="pandas", out_dir=tmp_path / "out", ledger_url=url, init_ledger=True
    )
    record = result.record
    assert record["mode"] == "release"
    assert record["privacy"]["cost"] == {"epsilon": eps, "delta": DELTA}
    assert record["ledger"]["charged"] == planner_cost.to_dict()
    (info,) = record["statistics"]
    value_mechanism = draws.gini_mechanism(plan.statistics[0], 1).value_mechanism
    assert (info["alpha"], info["beta"], info["noise_scale"]) == (
        value_mechanism.alpha,
        value_mechanism.smoothness,
        CONFIDENTIAL_SCALE_LABEL,
    )
    assert info["measurement"].startswith("OpenDP") and "make_laplace" in info["measurement"]
    released = result.tables["01_gini"]["gini"].item()
    assert 0.0 <= released <= 1.0 and released == round(released, 9)
    scale = stat.scale(eps)  # S_beta(X)/alpha: confidential, never in the record
    assert repr(scale) not in json.dumps(record) and f"{scale:.6g}" not in json.dumps(record)
    # the ledger now refuses a second release of the same plan (its delta cap is the plan's delta)
    with pytest.raises(Exception, match="refused before reading any data|exceed"):
        execute.run_plan(
            plan, _write(tmp_path, "d2", values), engine="pandas", out_dir=tmp_path / "out2", ledger_url=url
        )


def test_simulated_plan_release_follows_the_planners_noise_law(planned, tmp_path):
    """Simulations of the plan (seeded) have the planner's error law: Laplace with scale S_beta(X)/alpha."""
    values, stat, eps, plan, _ = planned
    source = _write(tmp_path, "d", values)
    draws = np.array(
        [
            execute.run_plan(plan, source, engine="pandas", out_dir=tmp_path / f"s{i}", seed=i, public_data=True)
            .tables["01_gini"]["gini"]
            .item()
            for i in range(60)
        ]
    )
    from scipy import stats

    centre = float(stat._clipped)
    assert stats.kstest((draws - centre) / stat.scale(eps), "laplace").pvalue > 1e-3


def test_group_privacy_gives_back_the_plans_delta():
    raw = _laplace_raw()
    raw.update(privacy_unit="person", max_rows_per_person=3)
    plan = plan_from_dict(raw)
    gini = plan.statistics[1]
    value = draws.gini_mechanism(gini, 3).value_mechanism  # the value's share of epsilon, per cell
    cell, eps_cell = value.delta_cell, value.epsilon_cell
    assert 3 * math.exp(2 * eps_cell) * cell <= DELTA and cell > 0.99 * DELTA / (3 * math.exp(2 * eps_cell))
    released = draws.gini_mechanism(gini, 3)
    cal = released.value_mechanism.smooth_calibration
    assert (cal.epsilon, cal.delta) == (released.plan.epsilon_value, cell) and cal.certificate <= cell
    _, total = engine_record.plan_cost(plan).per_statistic[1]
    eps_total, delta_total = total.epsilon, total.delta
    assert eps_total == gini.epsilon and delta_total == pytest.approx(DELTA, rel=1e-9) and delta_total <= DELTA
    assert draws.gini_mechanism(plan_from_dict(_laplace_raw()).statistics[1], 1).value_mechanism.delta_cell == DELTA


# ---------------------------------------------------------------------------------------------
# Neighbouring data sets
# ---------------------------------------------------------------------------------------------


def _public_part(record: dict) -> dict:
    keep = {k: record[k] for k in ("mode", "dataset", "engine", "plan", "plan_sha256", "privacy", "statistics")}
    keep["charged"] = record.get("ledger", {}).get("charged")
    return keep


@pytest.mark.parametrize("case", ["one_record_replaced", "all_zero_vs_one_positive", "one_row_vs_two_rows"])
def test_neighbours_release_and_refuse_alike(tmp_path, case):
    """Replace one record: whether the plan releases or is refused, and every record field but the released
    Gini, are the same (real releases, OpenDP sampler)."""
    base = {
        "one_record_replaced": _incomes(300, 9),
        "all_zero_vs_one_positive": np.zeros(5),
        "one_row_vs_two_rows": np.array([1000.0, 2000.0]),
    }[case]
    neighbour = base.copy()
    neighbour[0] = 999_999.0 if case != "one_row_vs_two_rows" else 0.0
    raw = {
        "version": 1,
        "dataset": "nb",
        "income": "income",
        "cap_epsilon": 1.0,
        "cap_delta": DELTA,
        "statistics": [{"kind": "gini", "epsilon": 1.0, "lower": 0, "upper": 1e6, "noise": "laplace", "delta": DELTA}],
    }
    plan = plan_from_dict(raw)
    records = []
    for name, values in (("a", base), ("b", neighbour)):
        url = f"sqlite:///{tmp_path}/{name}.db"
        result = execute.run_plan(
            plan,
            _write(tmp_path, name, values),
            engine="pandas",
            out_dir=tmp_path / f"o{name}",
            ledger_url=url,
            init_ledger=True,
        )
        records.append(_public_part(result.record))
        # a second release is refused on both (the cap is spent), before reading any data
        with pytest.raises(Exception) as info:
            execute.run_plan(
                plan,
                _write(tmp_path, name + "2", values),
                engine="pandas",
                out_dir=tmp_path / f"p{name}",
                ledger_url=url,
            )
        records[-1]["refusal"] = str(info.value)
    assert records[0] == records[1]
    # the Laplace log-normal is refused alike, from the plan alone
    raw["statistics"][0]["noise"] = "laplace_lognormal"
    with pytest.raises(PlanError, match="no floating-point-safe sampler"):
        plan_from_dict(raw)


def test_in_app_release_record_of_a_laplace_gini_has_no_noise_scale(release_account):
    """dpcore.release (Release mode of the planner page): the measurement named OpenDP's sampler with its
    scale, which is S_beta(X)/alpha here (data-dependent); records of neighbours must match but for the value."""
    base = _incomes(300, 11)
    neighbour = base.copy()
    neighbour[0] = 900_000.0
    out = []
    for values in (base, neighbour):
        stat = planner.make_statistic("gini", values, upper=1e6, noise="laplace", delta=DELTA)
        (rec,) = release.make_release([(stat, 1.0)], release_account)
        d = rec.to_dict()
        assert repr(stat.scale(1.0)) not in json.dumps(d) and f"scale={CONFIDENTIAL_SCALE_LABEL}" in d["measurement"]
        out.append(
            {
                k: v
                for k, v in d.items()
                # DP outputs, the clock, and the ledger's entry number (its own sequence: public)
                if k
                not in (
                    "released",
                    "timestamp",
                    "released_lower",
                    "released_upper",
                    "published_inputs",
                    "ledger_entry_id",
                )
            }
        )
    assert out[0] == out[1]


def test_the_command_line_releases_a_laplace_gini_plan_and_says_its_delta(tmp_path, capsys):
    from dpcore import cli

    source_dir = tmp_path / "data"
    source_dir.mkdir()
    pd.DataFrame({"income": _incomes(400, 2)}).to_csv(source_dir / "data.csv", index=False)
    raw = {
        "version": 1,
        "dataset": "cli",
        "income": "income",
        "cap_epsilon": 1.0,
        "cap_delta": DELTA,
        "statistics": [{"kind": "gini", "epsilon": 1.0, "lower": 0, "upper": 1e6, "noise": "laplace", "delta": DELTA}],
    }
    (tmp_path / "plan.toml").write_text(write_plan(plan_from_dict(raw)), encoding="utf-8")
    code = cli.main(
        [
            "release",
            str(tmp_path / "plan.toml"),
            "--data",
            str(source_dir / "data.csv"),
            "--out",
            str(tmp_path / "out"),
            "--engine",
            "pandas",
            "--ledger",
            f"sqlite:///{tmp_path}/l.db",
            "--init-ledger",
        ]
    )
    _, err = capsys.readouterr()
    assert code == 0 and "charged the ledger: entry 1, epsilon = 1, delta = 1e-07" in err
    record = json.loads((tmp_path / "out" / "release_record.json").read_text())
    assert record["privacy"]["per_statistic"][0]["delta"] == DELTA
    assert tomllib.loads((tmp_path / "out" / "plan.toml").read_text())["statistics"][0]["noise"] == "laplace"


def test_cauchy_gini_is_pure_dp_for_any_rows_per_person():
    """The certified sampler runs in its pure-DP mode (window [0, 1], scale floor) on every path: a Cauchy Gini
    records delta 0, and its epsilon is m times the per-cell certificate (group privacy), never below epsilon."""
    for m in (1, 3):
        raw = tomllib.loads(EXAMPLE_PLAN)
        if m > 1:
            raw.update(privacy_unit="person", max_rows_per_person=m)
        spec = next(s for s in plan_from_dict(raw).statistics if s.kind == "gini")
        assert spec.noise == "cauchy"
        mech = draws.gini_mechanism(spec, m)
        loss, excess = mech.value_mechanism.certified
        assert engine_record.statistic_delta(spec, m) == 0.0
        value_eps = m * max(loss + excess, mech.plan.epsilon_value)
        assert mech.privacy_cost().epsilon == value_eps + m * mech.plan.epsilon_bound == pytest.approx(spec.epsilon)
        assert mech.privacy_cost().kind == "pure"


@pytest.mark.parametrize("rng", [None, 3], ids=["real", "simulation"])
def test_a_confidential_scale_is_named_by_its_label_only(rng):
    """release_real_values(confidential_scale_label=...): the number appears nowhere in the draw's texts."""
    from dpcore.noise import secure as secure_noise

    scale = 0.012345678901
    draw = secure_noise.release_real_values(
        [0.3], scale=scale, rng=rng, sensitivity=None, confidential_scale_label=CONFIDENTIAL_SCALE_LABEL
    )
    texts = f"{draw.measurement} {draw.privacy_map}"
    assert repr(scale) not in texts and "0.0123" not in texts
    assert CONFIDENTIAL_SCALE_LABEL in draw.measurement
    plain = secure_noise.release_real_values([0.3], scale=scale, rng=rng)
    assert repr(scale) in plain.measurement  # a public scale is still named
