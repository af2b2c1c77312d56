"""The DP snapshot (dpcore.snapshot) and planning on it (dpcore.views.private_plan): its privacy (each table's
sensitivity under the stated neighbouring relation, the charge, neighbours alike), its document, its
post-processing, and the planning numbers that are exact on it. The measured honesty is in
benchmarks/bench_snapshot.py (docs/planner.md); the cheap checks here use seeded simulations."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from dpcore import budget, ledger, planner
from dpcore import snapshot as snap_lib
from dpcore.mechanisms import snapshot as snap_mech
from dpcore.validation import DPInputError
from dpcore.views import private_plan
from dpcore.views.planner import HalfWidthTarget, expected_interval_width, solve_epsilon_for_half_width

CELLS = ("north", "south", "west")


def _records(n_per_cell: int = 600, seed: int = 0):
    """Incomes (a point mass at 0, log-normal cells of different levels), cells, exposure groups."""
    gen = np.random.default_rng(seed)
    xs, gs = [], []
    for i, cell in enumerate(CELLS):
        x = gen.lognormal(10.2 + 0.3 * i, 0.8, n_per_cell)
        x[gen.random(n_per_cell) < 0.1] = 0.0
        xs.append(x)
        gs.append(np.full(n_per_cell, cell))
    x, g = np.concatenate(xs), np.concatenate(gs)
    exposure = np.where(gen.random(x.size) < 0.5, "a", np.where(gen.random(x.size) < 0.8, "b", "other"))
    return x, g, exposure


def _schema(**kw) -> snap_mech.SnapshotSchema:
    return snap_mech.SnapshotSchema(upper=1e6, cells=CELLS, **kw)


RISK = snap_mech.RiskSchema("a", "b", outcome_below=20_000.0)
#: every field of a snapshot's JSON document: the schema's public settings and DP outputs, nothing else
DOCUMENT_FIELDS = (
    "format",
    "created",
    "simulated",
    "planning_epsilon",
    "schema",
    "edges",
    "cells",
    "noisy_histogram",
    "noisy_sizes",
    "noisy_risk",
    "risk_axes",
    "mechanism",
    "measurements",
)


# ---------------------------------------------------------------------------------------------
# The schema and the mechanism
# ---------------------------------------------------------------------------------------------


def test_schema_bins_and_the_public_split_of_planning_epsilon():
    s = _schema(risk=RISK)
    edges = s.edges
    assert edges[0] == 0.0 and edges[1] == pytest.approx(1_000.0) and edges[-1] == 1e6
    assert edges.size == snap_mech.DEFAULT_LOG_BINS + 2 and s.has_floor_bin
    assert np.allclose(np.diff(np.log(edges[1:])), math.log(1000) / snap_mech.DEFAULT_LOG_BINS)  # log-spaced
    assert s.tables == ("histogram", "sizes", "risk")
    assert sum(s.epsilons.values()) == pytest.approx(snap_mech.DEFAULT_PLANNING_EPSILON)
    assert s.epsilons["histogram"] == pytest.approx(0.06)
    public = _schema(cell_sizes=(600, 600, 600))
    assert public.tables == ("histogram",) and public.epsilons == {"histogram": pytest.approx(0.1)}
    assert "within their cell" in public.neighbouring and "may change" in s.neighbouring
    positive = snap_mech.SnapshotSchema(upper=1e5, lower=100.0)
    assert positive.edges[0] == 100.0 and not positive.has_floor_bin and positive.labels == (snap_mech.ALL_CELLS,)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"upper": 0.0}, "upper"),
        ({"upper": 1e6, "cells": "north"}, "list of cell labels"),
        ({"upper": 1e6, "cells": ("a", "a")}, "listed once"),
        ({"upper": 1e6, "cells": ("a", "b"), "cell_sizes": (3,)}, "one public size per declared cell"),
        ({"upper": 1e6, "planning_epsilon": 0.0}, "planning_epsilon"),
        ({"upper": 1e6, "shares": {"histogram": 1.0, "bins": 2.0}}, "unknown snapshot tables"),
        ({"upper": 1e6, "floor": 2e6}, "floor"),
    ],
)
def test_schema_refuses_bad_settings_in_words(kwargs, words):
    with pytest.raises(DPInputError, match=words):
        snap_mech.SnapshotSchema(**kwargs)


def test_mechanism_scales_are_the_sensitivity_two_calibration_and_cost_planning_epsilon():
    """The proof: each table has L1 sensitivity 2 under the stated relation (next test), so discrete Laplace of
    scale 2/epsilon_i is epsilon_i-DP, and the tables compose to planning_epsilon. A scale of 1/epsilon_i (the
    add/remove calibration) would double the real loss: this checks the scales the draws use."""
    s = _schema(risk=RISK, planning_epsilon=0.2)
    mech = snap_mech.SnapshotMechanism(s)
    eps = s.epsilons
    assert mech.histogram_mechanism.noise_scale == pytest.approx(2.0 / eps["histogram"])
    assert mech.histogram_mechanism.relation == "replace"
    assert mech.sizes_mechanism is not None and mech.sizes_mechanism.noise_scale == pytest.approx(2.0 / eps["sizes"])
    assert mech.risk_mechanism is not None and mech.risk_mechanism.noise_scale == pytest.approx(2.0 / eps["risk"])
    cost = mech.privacy_cost()
    assert cost.kind == "pure" and cost.epsilon == pytest.approx(0.2)
    rec = mech.record()
    assert rec["neighbouring"] == s.neighbouring and rec["epsilon"] == 0.2
    assert hash(mech) == hash(snap_mech.SnapshotMechanism(s)) and mech.kind == "snapshot"  # public parameters only
    assert set(rec) >= {"histogram", "sizes", "risk", "epsilons"}


def _neighbour(x, g, e, gen, *, keep_cell: bool):
    """Replace one record: a new income (anywhere, including outside the bounds), cell and exposure."""
    i = int(gen.integers(x.size))
    x2, g2, e2 = x.copy(), g.copy(), e.copy()
    x2[i] = gen.choice([0.0, -50.0, 5e6, float(gen.lognormal(10.5, 1.5))])
    if not keep_cell:
        g2[i] = gen.choice([*CELLS, "undeclared"])
    e2[i] = gen.choice(["a", "b", "other"])
    return x2, g2, e2


@pytest.mark.parametrize("public_sizes", [False, True])
def test_neighbours_change_every_table_by_at_most_two_in_l1(public_sizes):
    x, g, e = _records(200)
    schema = _schema(risk=RISK, cell_sizes=(200, 200, 200) if public_sizes else None)
    base = snap_lib.confidential_tables(x, schema, cells=g, risk_groups=e)
    gen = np.random.default_rng(1)
    largest = {"histogram": 0, "sizes": 0, "risk": 0}
    for _ in range(400):
        x2, g2, e2 = _neighbour(x, g, e, gen, keep_cell=public_sizes)
        other = snap_lib.confidential_tables(x2, schema, cells=g2, risk_groups=e2)
        d = {
            "histogram": int(np.abs(base.confidential_histogram - other.confidential_histogram).sum()),
            "sizes": int(np.abs(base.confidential_sizes - other.confidential_sizes).sum()),
            "risk": int(np.abs(base.confidential_risk - other.confidential_risk).sum()),
        }
        for k, v in d.items():
            largest[k] = max(largest[k], v)
    assert largest["histogram"] == 2 and largest["risk"] == 2  # reached: a sensitivity of 1 would be wrong
    assert largest["sizes"] == (0 if public_sizes else 2)


def _population(tmp_path, name: str = "people", cap: float = 1.0):
    """A population registered in a new SQLite ledger (the account a real snapshot is charged to)."""
    return ledger.open_ledger(f"sqlite:///{tmp_path / name}.db").register_population(name, cap)


def test_neighbours_get_the_same_charge_and_the_same_public_document(tmp_path):
    x, g, e = _records(200)
    schema = _schema(risk=RISK)
    x2, g2, e2 = _neighbour(x, g, e, np.random.default_rng(3), keep_cell=False)
    docs, charges = [], []
    for i, (xx, gg, ee) in enumerate(((x, g, e), (x2, g2, e2))):
        acct = _population(tmp_path, f"people{i}")
        snap = snap_lib.take_snapshot(xx, schema, cells=gg, risk_groups=ee, account=acct)  # real draws (OpenDP)
        assert not snap.simulated
        charges.append([(en.cost.kind, en.cost.epsilon, en.record["schema"]) for en in acct.entries()])
        doc = json.loads(snap.to_json())
        for k in ("created", "noisy_histogram", "noisy_sizes", "noisy_risk"):
            doc.pop(k)
        docs.append(doc)
    assert charges[0] == charges[1] and [c[:2] for c in charges[0]] == [("pure", pytest.approx(0.1))]
    assert docs[0] == docs[1]


def test_a_real_snapshot_is_charged_to_a_durable_account_before_it_is_drawn_and_stored_there(tmp_path, monkeypatch):
    x, g, _ = _records(100)
    drawn = []
    real_draw = snap_mech.SnapshotMechanism.draw
    monkeypatch.setattr(
        snap_mech.SnapshotMechanism, "draw", lambda self, *a, **k: drawn.append(1) or real_draw(self, *a, **k)
    )
    with pytest.raises(DPInputError, match="account"):
        snap_lib.take_snapshot(x, _schema(), cells=g)
    with pytest.raises(TypeError, match="durable ledger"):
        snap_lib.take_snapshot(x, _schema(), cells=g, account=budget.Ledger())
    small = _population(tmp_path, "small", cap=0.05)
    with pytest.raises(ledger.BudgetExceeded, match="refused"):
        snap_lib.take_snapshot(x, _schema(), cells=g, account=small)
    acct = _population(tmp_path)
    with pytest.raises(DPInputError, match="finite"):
        snap_lib.take_snapshot(np.append(x, np.nan), _schema(), cells=np.append(g, "north"), account=acct)
    assert drawn == [] and small.entries() == [] and acct.entries() == []
    assert snap_lib.stored_snapshot(acct, _schema(), "file.csv") is None
    snap = snap_lib.take_snapshot(x, _schema(), cells=g, account=acct, source="file.csv")
    (entry,) = acct.entries()
    assert drawn == [1] and entry.cost.epsilon == pytest.approx(0.1) and entry.record["kind"] == "dpcore snapshot"
    again = snap_lib.stored_snapshot(acct, _schema(), "file.csv")  # re-planning reads it back: nothing more spent
    assert again is not None and np.array_equal(again.noisy_histogram, snap.noisy_histogram)
    assert again.created == snap.created and not again.simulated
    assert snap_lib.stored_snapshot(acct, _schema(), "other.csv") is None
    assert snap_lib.stored_snapshot(acct, _schema(planning_epsilon=0.2), "file.csv") is None


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda x, g, e: snap_lib.confidential_tables(x, _schema(), cells=None), "give each record's cell"),
        (lambda x, g, e: snap_lib.confidential_tables(x, _schema(), cells=g[:-1]), "one cell per record"),
        (lambda x, g, e: snap_lib.confidential_tables(x, snap_mech.SnapshotSchema(upper=1e6), cells=g), "declare"),
        (lambda x, g, e: snap_lib.confidential_tables(x, _schema(risk=RISK), cells=g), "exposure group"),
        (
            lambda x, g, e: snap_lib.confidential_tables(
                x, _schema(risk=snap_mech.RiskSchema("a", "b")), cells=g, risk_groups=e, outcome=np.full(x.size, 2)
            ),
            "0/1",
        ),
        (
            lambda x, g, e: snap_lib.confidential_tables(
                x, _schema(risk=snap_mech.RiskSchema("a", "b")), cells=g, risk_groups=e
            ),
            "outcome",
        ),
    ],
)
def test_bad_records_are_refused_in_words(call, words):
    x, g, e = _records(50)
    with pytest.raises(DPInputError, match=words):
        call(x, g, e)


def test_records_of_undeclared_cells_are_left_out_and_the_outcome_column_counts():
    x = np.array([0.0, 5e4, 5e4, 1e5, 2e7, -3.0])
    g = np.array(["north", "north", "south", "elsewhere", "west", "west"])
    e = np.array(["a", "b", "a", "a", "b", "other"])
    schema = _schema(risk=snap_mech.RiskSchema("a", "b"))
    t = snap_lib.confidential_tables(x, schema, cells=g, risk_groups=e, outcome=[1, 0, 1, 1, 0, 1])
    assert t.confidential_sizes.tolist() == [2, 1, 2]
    assert t.confidential_histogram[2, -1] == 1 and t.confidential_histogram[2, 0] == 1  # clipped into the end bins
    assert t.confidential_risk[0].tolist() == [[1, 0], [0, 1]]  # north: a case in "a", a non-case in "b"
    assert t.confidential_risk[2].tolist() == [[0, 0], [0, 1]]  # west: "other" is in neither group


# ---------------------------------------------------------------------------------------------
# The document
# ---------------------------------------------------------------------------------------------


def test_document_round_trip_holds_only_public_settings_and_dp_outputs():
    x, g, e = _records(100)
    snap = snap_lib.take_snapshot(x, _schema(risk=RISK), cells=g, risk_groups=e, rng=5)
    doc = json.loads(snap.to_json())
    assert set(doc) == set(DOCUMENT_FIELDS)
    assert doc["simulated"] is True and doc["planning_epsilon"] == 0.1
    back = snap_lib.snapshot_from_json(snap.to_json())
    assert back.schema == snap.schema and back.created == snap.created and back.simulated
    assert np.array_equal(back.noisy_histogram, snap.noisy_histogram)
    assert np.array_equal(back.noisy_sizes, snap.noisy_sizes) and np.array_equal(back.noisy_risk, snap.noisy_risk)
    a = snap_lib.synthetic_data(snap, seed=2)
    b = snap_lib.synthetic_data(back, seed=2)
    assert np.array_equal(a.values, b.values) and np.array_equal(a.cells, b.cells)


@pytest.mark.parametrize(
    "edit, words",
    [
        (lambda d: d.update(format="other"), "not a dpcore snapshot"),
        (lambda d: d.update(planning_epsilon=0.01), "planning_epsilon"),
        (lambda d: d["edges"].__setitem__(3, 1.0), "edges"),
        (lambda d: d.update(noisy_histogram=d["noisy_histogram"][:-1]), "shape"),
        (lambda d: d["noisy_sizes"].__setitem__(0, 1.5), "integers"),
        (lambda d: d.update(noisy_risk=[[[1, 2], [3, 4]]] * 3), "without a relative risk"),
        (lambda d: d["schema"].update(colour="red"), "unknown snapshot schema fields"),
        (lambda d: d.update(simulated="no"), "true or false"),
    ],
)
def test_a_document_that_does_not_add_up_is_refused(edit, words):
    x, g, _ = _records(50)
    doc = json.loads(snap_lib.take_snapshot(x, _schema(), cells=g, rng=1).to_json())
    edit(doc)
    with pytest.raises(DPInputError, match=words):
        snap_lib.snapshot_from_json(json.dumps(doc))
    with pytest.raises(DPInputError, match="JSON"):
        snap_lib.snapshot_from_json("{not json")


# ---------------------------------------------------------------------------------------------
# Post-processing
# ---------------------------------------------------------------------------------------------


def test_with_little_noise_the_synthetic_data_follow_the_records():
    x, g, _ = _records(1500)
    snap = snap_lib.take_snapshot(x, _schema(planning_epsilon=1e4), cells=g, rng=0)
    syn = snap_lib.synthetic_data(snap, seed=0)
    assert syn.source == "snapshot" and syn.snapshot_epsilon == 1e4 and syn.labels == CELLS
    for cell in CELLS:
        real, fake = x[g == cell], syn.cell_values(cell)
        assert fake.size == real.size  # the sizes' noise is below 1/2 at this epsilon
        assert fake.min() >= 0.0 and fake.max() <= 1e6
        assert fake.mean() == pytest.approx(real.mean(), rel=0.03)
        for q in (25, 50, 75, 90):  # within the 54% bins, interpolated by the fitted density (p10 is in [0, 1000))
            assert np.percentile(fake, q) == pytest.approx(np.percentile(real, q), rel=0.08)


def test_public_sizes_are_the_synthetic_cell_sizes():
    x, g, _ = _records(300)
    snap = snap_lib.take_snapshot(x, _schema(cell_sizes=(300, 300, 300)), cells=g, rng=4)
    assert snap.noisy_sizes is None
    syn = snap_lib.synthetic_data(snap)
    assert [syn.cell_values(c).size for c in CELLS] == [300, 300, 300]


def test_estimated_sizes_combine_the_count_and_the_histogram_without_bias():
    x, g, _ = _records(400)
    schema = _schema()
    draws = np.array([snap_lib.estimated_sizes(snap_lib.take_snapshot(x, schema, cells=g, rng=s)) for s in range(300)])
    count_sd = math.sqrt(2.0) * 2.0 / schema.epsilons["sizes"]  # the noisy count alone (discrete Laplace sd)
    err = draws - 400.0
    assert abs(err.mean()) < 4.0 * err.std() / math.sqrt(err.size)  # unbiased, within Monte Carlo error
    assert err.std() < 0.9 * count_sd  # tighter than the count alone


def test_the_fit_puts_less_mass_in_empty_top_bins_than_clamping():
    """Clamping the noisy counts at 0 gives each empty bin about scale/2 people; the bias-corrected smooth fit far
    fewer, so the synthetic mean is not inflated by the top bins' noise (the reason for the fit)."""
    gen = np.random.default_rng(0)
    x = gen.lognormal(10.3, 0.5, 1500)  # nobody above about 200,000: the top bins are empty
    schema = snap_mech.SnapshotSchema(upper=1e6)
    top = schema.edges[:-1] >= 2e5
    clamp, fit = [], []
    for seed in range(12):
        snap = snap_lib.take_snapshot(x, schema, rng=seed)
        noisy = snap.noisy_histogram[0].astype(float)
        clamped = np.maximum(noisy, 0.0) / np.maximum(noisy, 0.0).sum()
        p = snap_lib.fit_histogram(noisy, 1500.0, snap.mechanism.histogram_mechanism.noise_scale, seed=seed)[0]
        clamp.append(clamped[top].sum())
        fit.append(p[top].sum())
    assert np.mean(fit) < 0.5 * np.mean(clamp)


def test_fit_histogram_refuses_bad_input_and_handles_empty_cells():
    p = snap_lib.fit_histogram([[5.0, -3.0, 8.0], [0.0, 0.0, 0.0]], [10.0, 0.0], 2.0, bootstrap_fits=3)
    assert p.shape == (2, 3) and np.allclose(p.sum(axis=1), 1.0) and np.allclose(p[1], 1 / 3)
    with pytest.raises(DPInputError, match="one size per cell"):
        snap_lib.fit_histogram([[1.0, 2.0]], [1.0, 2.0], 1.0)
    with pytest.raises(DPInputError, match="scale"):
        snap_lib.fit_histogram([[1.0, 2.0]], [1.0], 0.0)


# ---------------------------------------------------------------------------------------------
# Planning on it
# ---------------------------------------------------------------------------------------------

MEAN = {"kind": "group_means", "params": {"lower": 0, "upper": 1e6}, "half_width": 20_000}
COUNT = {"kind": "count", "params": {"threshold": 50_000}, "half_width": 30}


def test_with_public_sizes_the_mean_and_the_count_are_planned_exactly():
    """A mean's absolute half-width depends on the public clip range and n only, a count's in people on nothing:
    on a snapshot with public sizes they are the numbers planned on the records, to the last digit."""
    x, g, _ = _records(500)
    schema = _schema(cell_sizes=(500, 500, 500))
    items = [MEAN, COUNT, {**MEAN, "half_width": 0.05, "relative": True}]
    direct = private_plan.solve_plan(snap_lib.planning_data_from_records(x, schema, cells=g), items)
    syn = snap_lib.synthetic_data(snap_lib.take_snapshot(x, schema, cells=g, rng=9))
    on_snapshot = private_plan.solve_plan(syn, items)
    assert [r.exact for r in on_snapshot.rows] == [True, True, False]
    assert on_snapshot.rows[0].epsilon == direct.rows[0].epsilon
    assert on_snapshot.rows[1].epsilon == direct.rows[1].epsilon
    assert on_snapshot.source == "snapshot" and on_snapshot.snapshot_epsilon == 0.1 and direct.source == "data"
    assert all(r.exact for r in direct.rows)  # the records' own numbers
    noisy = snap_lib.synthetic_data(snap_lib.take_snapshot(x, _schema(), cells=g, rng=9))
    assert not private_plan.solve_plan(noisy, [MEAN]).rows[0].exact


def test_by_cell_is_every_cell_solved_and_the_largest_epsilon():
    x, g, _ = _records(500)
    data = snap_lib.planning_data_from_records(x, _schema(), cells=g)
    item = {"kind": "mean", "params": {"lower": 0, "upper": 1e6}, "half_width": 0.05, "relative": True}
    row = private_plan.solve_plan(data, [{**item, "by_cell": True}]).rows[0]
    assert [c for c, _ in row.cells] == list(CELLS) and row.epsilon == max(e for _, e in row.cells)
    for cell, eps in row.cells:
        stat = planner.make_statistic("mean", x[g == cell], None, lower=0, upper=1e6)
        assert eps == solve_epsilon_for_half_width(stat, HalfWidthTarget(0.05, relative=True)).epsilon
    whole = private_plan.solve_plan(data, [item]).rows[0]
    assert whole.cells == () and whole.epsilon < row.epsilon  # the whole source is larger than any cell


def test_relative_risk_is_planned_from_the_risk_table():
    x, g, e = _records(800)
    schema = _schema(risk=RISK)
    data = snap_lib.planning_data_from_records(x, schema, cells=g, risk_groups=e)
    t = data.risk.sum(axis=0)
    item = {"kind": "ratio", "half_width": 0.5}
    stat = private_plan.plan_statistics(data, private_plan.plan_items([item])[0])[0][1]
    assert (stat.x, stat.y, stat.n_x, stat.n_y) == (t[0, 0], t[1, 0], t[0].sum(), t[1].sum())
    by_cell = private_plan.solve_plan(data, [{**item, "by_cell": True}]).rows[0]
    assert len(by_cell.cells) == 3 and by_cell.exact  # planned on the records: their own numbers
    no_risk = snap_lib.planning_data_from_records(x, _schema(), cells=g)
    view = private_plan.solve_plan(no_risk, [item, MEAN])
    assert [r.kind for r in view.rows] == ["group_means"] and "declare one" in view.failures[0][1]
    with pytest.raises(DPInputError, match="no params"):
        private_plan.plan_items([{"kind": "ratio", "params": {"threshold": 1}, "half_width": 0.1}])


@pytest.mark.parametrize("scale", [0.7, 5.0, 100.0])
def test_the_posterior_mean_of_a_noisy_count_is_the_sum_over_the_posterior(scale):
    """The closed form against the posterior summed term by term (flat prior on k >= 0, weights q^|o - k|)."""
    noisy = np.array([-300, -5, 0, 1, 3, 50, 120, 400, 2000])
    k = np.arange(0.0, 2000 + 60 * scale)
    w = np.exp(-np.abs(noisy[:, None] - k[None, :]) / scale)
    summed = (w @ k) / w.sum(axis=1)
    got = snap_lib.discrete_laplace_posterior_mean(noisy, scale)
    assert np.allclose(got, summed, rtol=1e-10, atol=1e-9)
    assert got[0] == pytest.approx(math.exp(-1 / scale) / -math.expm1(-1 / scale))  # o <= 0: geometric mean q/(1-q)
    with pytest.raises(DPInputError, match="scale"):
        snap_lib.discrete_laplace_posterior_mean(noisy, 0.0)


def test_a_relative_risk_whose_noisy_count_is_negative_is_still_planned():
    """The noise of the risk table (scale 100 at the default split) is of the size of a cell's cases: a reference
    group's noisy cases below 0 are read as the posterior mean of the count (about the scale), not clamped to 0,
    which made the relative risk undefined and the target unreachable."""
    x, g, e = _records(800)
    schema = _schema(risk=RISK)
    drawn = snap_lib.take_snapshot(x, schema, cells=g, risk_groups=e, rng=5)
    noisy = drawn.noisy_risk.copy()
    noisy[0] = [[180, 420], [-7, 510]]  # exposed: 180 cases of 600; reference: cases below 0 after the noise
    snap = snap_lib.Snapshot(schema, drawn.noisy_histogram, drawn.noisy_sizes, noisy, drawn.created, True)
    scale = snap.mechanism.risk_mechanism.noise_scale
    syn = snap_lib.synthetic_data(snap)
    view = private_plan.solve_plan(syn, [{"kind": "ratio", "half_width": 0.5, "by_cell": True}])
    assert not view.failures and view.rows[0].epsilon > 0
    assert syn.risk[0, 1, 0] == pytest.approx(math.exp(-1 / scale) / -math.expm1(-1 / scale))
    assert np.allclose(syn.risk, snap_lib.discrete_laplace_posterior_mean(noisy, scale))


def test_the_synthetic_data_say_where_the_snapshot_stops_resolving_the_tail():
    """resolved_upper: the lowest edge above a cell's mode from which a bin's fitted count is below one bin's noise
    sd; on 600 log-normal incomes per cell at epsilon 0.1 that is well below the 500,000 clip bound of the
    planner's group means (their clipping bias there is the fitted tail's), and with little noise every bin is
    resolved."""
    edges = np.array([0.0, 1.0, 10.0, 100.0, 1000.0, 10000.0])
    sd = math.sqrt(snap_lib._discrete_laplace_variance(5.0))  # 7.0 people
    counts = [[50.0, 20.0, 90.0, 30.0, 6.0], [5.0, 80.0, 40.0, 10.0, 8.0]]
    assert snap_lib.resolved_upper(edges, counts, 5.0) == 1000.0  # cell 0: the bin from 1,000 holds 6 < sd
    assert snap_lib.resolved_upper(edges, [counts[1]], 5.0) is None  # every bin above its mode holds > sd
    assert sd > 6.0 and snap_lib.resolved_upper(edges, [counts[1]], 5.0, floor_bin=False) is None
    with pytest.raises(DPInputError, match="one fitted count per bin"):
        snap_lib.resolved_upper(edges, [[1.0, 2.0]], 5.0)
    x, g, _ = _records(600)
    noisy = snap_lib.synthetic_data(snap_lib.take_snapshot(x, _schema(), cells=g, rng=3))
    assert noisy.resolved_upper is not None and noisy.resolved_upper < 500_000
    exact = snap_lib.synthetic_data(snap_lib.take_snapshot(x, _schema(planning_epsilon=50.0), cells=g, rng=3))
    assert exact.resolved_upper is None or exact.resolved_upper > noisy.resolved_upper
    assert snap_lib.planning_data_from_records(x, _schema(), cells=g).resolved_upper is None


def test_a_relative_risk_on_counts_hidden_by_the_noise_is_planned_with_a_warning():
    """Per cell, the cases (about 100-200 of 800) are within twice the noise's sd (141 at the default split): the
    row says its epsilon may be off several-fold; summed over the cells, or with a snapshot 100 times less noisy,
    or on the records themselves, it does not."""
    x, g, e = _records(800)
    item = {"kind": "ratio", "half_width": 1.0}
    syn = snap_lib.synthetic_data(snap_lib.take_snapshot(x, _schema(risk=RISK), cells=g, risk_groups=e, rng=4))
    assert syn.risk_noise_sd == pytest.approx(math.sqrt(snap_lib._discrete_laplace_variance(100.0)))
    by_cell = private_plan.solve_plan(syn, [{**item, "by_cell": True}])
    assert private_plan.RISK_NOISE_NOTE in by_cell.rows[0].note, by_cell.failures
    exact = snap_lib.synthetic_data(
        snap_lib.take_snapshot(x, _schema(risk=RISK, planning_epsilon=10.0), cells=g, risk_groups=e, rng=4)
    )
    records = snap_lib.planning_data_from_records(x, _schema(risk=RISK), cells=g, risk_groups=e)
    for data, by in ((exact, True), (records, True), (records, False)):
        row = private_plan.solve_plan(data, [{**item, "by_cell": by}]).rows[0]
        assert private_plan.RISK_NOISE_NOTE not in row.note
    assert not private_plan.risk_within_noise(syn, private_plan.plan_items([{**item, "kind": "mean"}])[0])


def test_a_snapshot_plans_the_mean_within_the_issue_factor():
    """Cheap honesty check at n = 1,500 per cell (benchmarks/bench_snapshot.py measures the median, the Gini and
    the real files): the mean by cell with an absolute target (through the noisy sizes) and with a target relative
    to each cell's mean (through the fitted distribution), within 0.67-1.5x of the epsilon solved on the records."""
    x, g, _ = _records(1500)
    schema = _schema()
    items = [
        {**MEAN, "half_width": 2_000},
        {"kind": "mean", "params": {"lower": 0, "upper": 1e6}, "half_width": 0.05, "relative": True, "by_cell": True},
    ]
    direct = private_plan.solve_plan(snap_lib.planning_data_from_records(x, schema, cells=g), items)
    for seed in range(3):
        syn = snap_lib.synthetic_data(snap_lib.take_snapshot(x, schema, cells=g, rng=11 + seed), seed=seed)
        plan = private_plan.solve_plan(syn, items)
        for a, b in zip(plan.rows, direct.rows, strict=True):
            assert 0.67 <= a.epsilon / b.epsilon <= 1.5, (seed, a.kind, a.epsilon, b.epsilon)


# ---------------------------------------------------------------------------------------------
# Draws from the snapshot's law: a percentile's planned width averaged over them
# ---------------------------------------------------------------------------------------------


def _share_below(values: np.ndarray, edge: float) -> float:
    return float(np.mean(values < edge))


def test_posterior_draws_spread_a_cells_share_at_an_edge_as_the_snapshot_errs():
    """The parametric bootstrap's draws are as far from the synthetic data as the synthetic data are from the
    records: the spread of a cell's share below a public edge over one snapshot's draws is within a factor 2 of
    the spread of the synthetic share over independent snapshots (what the snapshot does not know)."""
    x, g, _ = _records(1500)
    schema = _schema()
    edge = float(np.median(x[g == "south"]))
    across = []
    for seed in range(16):
        syn = snap_lib.synthetic_data(snap_lib.take_snapshot(x, schema, cells=g, rng=100 + seed), draws=0)
        assert syn.draws == ()
        across.append(_share_below(syn.cell_values("south"), edge))
    syn = snap_lib.synthetic_data(snap_lib.take_snapshot(x, schema, cells=g, rng=7), seed=3)
    assert len(syn.draws) == snap_lib.DEFAULT_DRAWS
    within = [_share_below(d, edge) for d in syn.cell_draws("south")]
    assert all(d.shape == syn.values.shape for d in syn.draws)  # one value per record of the synthetic data
    assert 0.5 <= np.std(within) / np.std(across) <= 2.0, (np.std(within), np.std(across))
    assert 0.01 < np.std(within) < 0.06  # 1.5-6% of the ranks at n = 1,500, epsilon 0.075 (docs/planner.md)


def test_posterior_draws_are_post_processing_of_the_public_document():
    """The draws depend on the snapshot's document and a seed only: the document read back gives the same draws,
    so a plan made from them is as publishable as the snapshot; the records give none (they are known)."""
    x, g, _ = _records(300)
    snap = snap_lib.take_snapshot(x, _schema(), cells=g, rng=5)
    again = snap_lib.snapshot_from_json(snap.to_json())
    a, b = snap_lib.posterior_draws(snap, 3, seed=2), snap_lib.posterior_draws(again, 3, seed=2)
    assert len(a) == 3 and all(np.array_equal(u, v) for u, v in zip(a, b, strict=True))
    assert not np.array_equal(a[0], a[1])
    assert snap_lib.posterior_draws(snap, 0) == ()
    assert snap_lib.planning_data_from_records(x, _schema(), cells=g).draws == ()
    with pytest.raises(DPInputError, match="posterior draws"):
        snap_lib.posterior_draws(snap, -1)


def _median_statistic(values: np.ndarray) -> planner.PercentilesStatistic:
    stat = planner.make_statistic("group_medians", values, np.full(values.size, "c"))
    assert isinstance(stat, planner.PercentilesStatistic)
    return stat


def _cell_with_median_at(share_below_edge: float, n: int = 1500) -> np.ndarray:
    """n incomes whose median sits ``share_below_edge`` of the ranks above the PSEO edge 27,512, in the bin
    [27,512, 31,857) that holds 30% of them (one bin: ±2,172; with [22,876, 27,512) too: ±4,490)."""
    gen = np.random.default_rng(0)
    k = int(round((0.5 - share_below_edge) * n))  # people below 27,512
    m = int(0.3 * n)  # people in the median's bin
    below = np.exp(gen.uniform(np.log(5_000), np.log(27_511), k))
    inside = gen.uniform(27_513, 31_856, m)
    above = np.exp(gen.uniform(np.log(31_858), np.log(200_000), n - k - m))
    return np.concatenate([below, inside, above])


def test_a_median_width_is_averaged_over_the_planning_draws():
    """A median 0.5% of the ranks above a bin edge needs a large epsilon for a one-bin interval (a step at a few
    people); planning data sets that put it 6% above (what a snapshot that cannot place it better says too) give
    the epsilon of the typical position, the average over the data sets. Draws equal to the data change nothing:
    the records' own plan (no draws) is the width on them."""
    near, far = _cell_with_median_at(0.005), _cell_with_median_at(0.06)
    target = HalfWidthTarget(4_000.0)
    eps_near = solve_epsilon_for_half_width(_median_statistic(near), target).epsilon
    eps_far = solve_epsilon_for_half_width(_median_statistic(far), target).epsilon
    assert eps_near > 3.0 * eps_far  # the step: where the median falls between two edges
    averaged = solve_epsilon_for_half_width(_median_statistic(near).with_draws([[far]] * 19), target)
    assert 0.67 <= averaged.epsilon / eps_far <= 1.5 and "20 planning data sets" in averaged.method
    for eps in (eps_far, eps_near):
        alone = expected_interval_width(_median_statistic(near), eps)
        assert expected_interval_width(_median_statistic(near).with_draws([[near]] * 19), eps).widths == alone.widths
    with pytest.raises(DPInputError, match="one array per cell"):
        _median_statistic(near).with_draws([[near, far]])


def test_planning_on_a_snapshot_attaches_its_draws_to_the_median_only():
    x, g, _ = _records(400)
    syn = snap_lib.synthetic_data(snap_lib.take_snapshot(x, _schema(), cells=g, rng=2), draws=2)
    item = private_plan.plan_items([{"kind": "group_medians", "half_width": 20_000}])[0]
    ((_, stat),) = private_plan.plan_statistics(syn, item)
    assert stat.draw_counts.shape[0] == 3 and np.array_equal(stat.draw_counts[0], stat.confidential_counts)
    cells_item = private_plan.plan_items([{"kind": "group_medians", "half_width": 20_000, "by_cell": True}])[0]
    by_cell = private_plan.plan_statistics(syn, cells_item)
    assert [s.draw_counts.shape[:2] for _, s in by_cell] == [(3, 1)] * 3
    mean = private_plan.plan_statistics(syn, private_plan.plan_items([MEAN])[0])[0][1]
    assert not hasattr(mean, "draw_counts")


def test_draws_fitted_side_by_side_are_those_fitted_one_at_a_time():
    """The further planning data sets are refitted together (one fit of all their tables) with each draw's jitter
    taken from a copy of the one stream: the same data sets, up to rounding, as fitting and drawing each in turn."""
    x, g, _ = _records(300)
    snap = snap_lib.take_snapshot(x, _schema(), cells=g, rng=6)
    schema = snap.schema
    sizes = np.rint(snap_lib.estimated_sizes(snap)).astype(np.int64)
    p = snap_lib._fit(snap, snap.noisy_histogram.astype(float), sizes, schema.fit_seed)
    q = math.exp(-1.0 / snap.mechanism.histogram_mechanism.noise_scale)
    gen = np.random.default_rng([4, 0x5EED])
    one_by_one = []
    for k in range(3):
        noise = gen.geometric(1.0 - q, p.shape) - gen.geometric(1.0 - q, p.shape)
        refit = snap_lib._fit(snap, sizes[:, None] * p + noise, sizes, schema.fit_seed + 1 + k)
        one_by_one.append(np.concatenate(snap_lib._draw_values(schema, refit, sizes, gen)))
    together = snap_lib.posterior_draws(snap, 3, seed=4)
    assert len(together) == 3
    for a, b in zip(one_by_one, together, strict=True):
        assert a.shape == b.shape and np.allclose(np.sort(a), np.sort(b), rtol=1e-6, atol=1e-6)
