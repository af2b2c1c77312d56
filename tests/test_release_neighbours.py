"""Data-independent release mode.

For every statistic kind, neighbouring data sets either both release or both refuse with the same
message, decided from public inputs only; and the release records of neighbours agree on every
field except the released values (the only data-dependent output) and the time stamp.
Starts from the audit's reproducer: planner.make_statistic + release.make_release with relative
risk x = 1 vs x = 0.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore import ledger, planner, release
from dpcore.validation import DPInputError

#: DP outputs, the clock, and the ledger entry's number (the ledger's own sequence: public, not the data's)
VARYING = {"released", "timestamp", "released_lower", "released_upper", "published_inputs", "ledger_entry_id"}
ACCOUNT: list = []


@pytest.fixture(scope="module", autouse=True)
def _account(tmp_path_factory):
    """One durable account pays every release of this module (a real release is charged to a durable ledger)."""
    folder = tmp_path_factory.mktemp("neighbours")
    db = ledger.init_ledger(f"sqlite:///{folder}/ledger.db")
    ACCOUNT[:] = [db.account("neighbours", cap_epsilon=1000.0, label="neighbours", cap_delta=1e-3)]
    yield
    ACCOUNT.clear()


def _release(stat, eps=1.0):
    return release.make_release([(stat, eps)], ACCOUNT[0])[0]


def _outcome(build):
    """('released', record dict without the varying fields) or ('refused', message)."""
    try:
        rec = _release(build())
    except DPInputError as exc:
        return "refused", str(exc)
    d = rec.to_dict()
    return "released", {k: v for k, v in d.items() if k not in VARYING}


def _assert_alike(build_a, build_b):
    a, b = _outcome(build_a), _outcome(build_b)
    assert a[0] == b[0] == "released", (a, b)
    assert a[1] == b[1]


GROUPS = np.array(["a"] * 6 + ["b"] * 6)


def _incomes():
    return np.array([30_000.0, 45_000, 52_000, 61_000, 75_000, 90_000] * 2)


def test_audit_reproducer_relative_risk_x_one_vs_zero():
    x1 = _incomes()
    x0 = x1.copy()
    x1[0] = 5_000.0  # one person of group a below the threshold: x = 1
    assert np.count_nonzero(x0[GROUPS == "a"] < 10_000) == 0
    _assert_alike(
        lambda: planner.make_statistic("ratio", x1, GROUPS, threshold=10_000),
        lambda: planner.make_statistic("ratio", x0, GROUPS, threshold=10_000),
    )


def test_relative_risk_y_one_vs_zero_and_both_zero():
    y1 = _incomes()
    y1[6] = 5_000.0  # group b: y = 1
    y0 = _incomes()
    _assert_alike(
        lambda: planner.make_statistic("ratio", y1, GROUPS, threshold=10_000),
        lambda: planner.make_statistic("ratio", y0, GROUPS, threshold=10_000),
    )
    rec = _release(planner.make_statistic("ratio", y0, GROUPS, threshold=10_000))
    assert np.isfinite(rec.released[0])  # x~ / max(y~, 1): post-processing, defined for every noisy pair


def test_gini_all_zero_vs_one_positive_income():
    zeros = np.zeros(12)
    one = zeros.copy()
    one[3] = 30_000.0
    _assert_alike(
        lambda: planner.make_statistic("gini", zeros, upper=100_000.0),
        lambda: planner.make_statistic("gini", one, upper=100_000.0),
    )
    rec = _release(planner.make_statistic("gini", zeros, upper=100_000.0))
    assert 0.0 <= rec.released[0] <= 1.0 and rec.delta == 0.0


def test_count_zero_vs_one_releases_a_noisy_count():
    x0 = _incomes()
    x1 = x0.copy()
    x1[0] = 500_000.0
    _assert_alike(
        lambda: planner.make_statistic("count", x0, threshold=200_000),
        lambda: planner.make_statistic("count", x1, threshold=200_000),
    )


def test_mean_and_group_means_neighbours():
    x0 = _incomes()
    x1 = x0.copy()
    x1[4] = 0.0
    _assert_alike(
        lambda: planner.make_statistic("mean", x0, upper=100_000.0),
        lambda: planner.make_statistic("mean", x1, upper=100_000.0),
    )
    _assert_alike(
        lambda: planner.make_statistic("group_means", x0, GROUPS, upper=100_000.0),
        lambda: planner.make_statistic("group_means", x1, GROUPS, upper=100_000.0),
    )


@pytest.mark.parametrize("relation", ["replace", "add_remove"])
def test_percentiles_empty_cell_vs_one_record(relation):
    other = np.array([20_000.0, 40_000.0, 60_000.0])

    def build(cell):
        return planner.PercentilesStatistic((other, cell), relation=relation, cell_labels=("A", "B"), n_sims=100)

    a = _outcome(lambda: build(np.zeros(0)))
    b = _outcome(lambda: build(np.array([55_000.0])))
    assert a[0] == b[0] == "released"
    # the cell sizes are public in the replace-one relation the cost is stated in: only they may differ
    a_params, b_params = a[1].pop("parameters"), b[1].pop("parameters")
    assert a[1] == b[1]
    assert a_params["cells"] == {"A": 3, "B": 0} and b_params["cells"] == {"A": 3, "B": 1}


def test_percentiles_one_person_replaced_within_a_cell():
    x0 = _incomes()
    x1 = x0.copy()
    x1[2] = 250_000.0
    _assert_alike(
        lambda: planner.make_statistic("percentiles", x0, GROUPS, n_sims=100),
        lambda: planner.make_statistic("percentiles", x1, GROUPS, n_sims=100),
    )


def test_one_group_vs_two_groups_is_decided_by_the_public_group_labels():
    # Group labels (and sizes) are public in every grouped relation of dpcore (replace one person's value
    # within their group), so one group vs two is not a neighbouring pair; what we require is that the
    # decision depends on the labels only, never on the incomes.
    one_group = np.array(["a"] * 12)
    messages = set()
    for x in (_incomes(), np.where(_incomes() > 50_000, 1_000.0, _incomes()), np.zeros(12)):
        with pytest.raises(DPInputError) as exc:
            planner.make_statistic("ratio", x, one_group, threshold=10_000)
        messages.add(str(exc.value))
    assert messages == {"a relative risk needs two groups; the data have one"}
    # group means release with one group as with two (each group is its own parallel part)
    x0 = _incomes()
    x1 = x0.copy()
    x1[0] = 0.0
    _assert_alike(
        lambda: planner.make_statistic("group_means", x0, one_group, upper=100_000.0),
        lambda: planner.make_statistic("group_means", x1, one_group, upper=100_000.0),
    )


def test_planning_still_refuses_undefined_relative_errors_but_release_does_not():
    stat = planner.RatioStatistic(0, 5, 100, 100)
    with pytest.raises(DPInputError, match="x = 0 on the planning data"):
        stat.prob_within(1.0, 0.1)
    assert np.isfinite(stat._draw(1.0).values[0])  # the real draw
    gini = planner.make_statistic("gini", np.zeros(10), upper=1e5)
    with pytest.raises(DPInputError, match="undefined"):
        gini.prob_within(1.0, 0.1)


# ---------------------------------------------------------------------------------------------
# add/remove percentiles: charged 2 epsilon under replace-one, and the record says so
# ---------------------------------------------------------------------------------------------


def test_add_remove_percentiles_charged_twice_epsilon_and_record_matches():
    cells = (np.array([20_000.0, 40_000.0, 60_000.0]), np.array([30_000.0, 80_000.0]))
    st = planner.PercentilesStatistic(cells, relation="add_remove", n_sims=100)
    assert st.privacy_cost(0.5).epsilon == pytest.approx(1.0)
    before = ACCOUNT[0].spent_epsilon()
    rec = release.make_release([(st, 0.5)], ACCOUNT[0])[0]
    assert ACCOUNT[0].spent_epsilon() - before == pytest.approx(1.0)
    assert rec.epsilon == pytest.approx(1.0)
    assert "replace one person" in rec.neighbouring and "2 epsilon" in rec.neighbouring
    replace = planner.PercentilesStatistic(cells, relation="replace", n_sims=100)
    assert replace.privacy_cost(0.5).epsilon == pytest.approx(0.5)


def test_add_remove_per_bin_noise_really_costs_two_epsilon_under_replace_one():
    # brute force: one person moving from bin i to bin j changes two counts by 1; with epsilon per bin
    # (add/remove calibration) the exact log-likelihood ratio of the two-bin output reaches 2 epsilon
    from dpcore import noise

    eps = 0.7
    k = np.arange(-40, 41)
    before = noise.two_sided_geometric_pmf(k[:, None] - 5, eps) * noise.two_sided_geometric_pmf(k[None, :] - 3, eps)
    after = noise.two_sided_geometric_pmf(k[:, None] - 4, eps) * noise.two_sided_geometric_pmf(k[None, :] - 4, eps)
    worst = float(np.max(np.abs(np.log(before / after))))
    assert worst == pytest.approx(2 * eps)
    st = planner.PercentilesStatistic((np.array([1.0, 2.0]),), relation="add_remove", n_sims=100)
    assert st.privacy_cost(eps).epsilon >= worst - 1e-12
