"""An ε solved on the confidential file is not published as if it were public.

The audit found the accuracy-first ε solved on an uploaded confidential file pre-filling Release mode and
written into the decision memo: the smallest ε meeting a target is a function of the records (neighbouring
files gave 7.977 and 7.844), not a DP output, so releasing at exactly that ε publishes it. The planner now
remembers which data each plan was solved on; Release mode (and the plan file, which is what Release mode
releases) starts from an ε solved on public or synthetic data only, and the memos mark or omit the rest.
"""

from __future__ import annotations

import numpy as np
import pytest
import tomllib
from streamlit.testing.v1 import AppTest
from test_release_panel import HARNESS, RELEASE, _csv

from dpcore import ledger as ledger_lib
from dpcore import planner as planner_lib
from dpcore import release as release_lib
from dpcore.views import planner as planner_experiments
from ui.planner import choices, plan_state, release_panel
from ui.planner import sections as planner_sections
from ui.planner import views as planner_views

PLAN = "Plan: choose ε on planning data"


def test_epsilon_solved_on_the_confidential_file_does_not_start_the_release(tmp_path, monkeypatch):
    monkeypatch.setenv(ledger_lib.ENV_VAR, f"sqlite:///{tmp_path}/ledger.db")
    at = AppTest.from_string(HARNESS, default_timeout=300)
    for key, value in {
        "data_source": "Upload a CSV or Parquet file",
        "planner_mode": PLAN,
        "planner_stats": "gini",
        "planner_total": "2.0",
    }.items():
        at.query_params[key] = value
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", _csv(), "text/csv")).run()
    assert not at.exception
    plan = dict(at.session_state[plan_state.PLAN_KEY])
    assert at.session_state[plan_state.PLAN_SOURCE_KEY]["confidential"] is True
    planned = choices.round_up(plan["gini"])
    assert planned != 2.0  # the budget-first split of the total (one statistic): distinguishable
    at.radio(key="planner_mode").set_value(RELEASE).run()
    assert not at.exception
    field = at.number_input(key="planner_rel_eps_gini").value
    assert field == pytest.approx(2.0) and field != pytest.approx(planned)  # was the planned ε
    assert any("solved on the **confidential file**" in w.value for w in at.warning)
    # the plan file for the command line is what Release mode releases: not the confidential ε either
    at.radio(key="planner_mode").set_value(PLAN).run()
    at.radio(key="planner_view").set_value(planner_sections.SHARE.heading).run()
    assert not at.exception
    texts = [c.value for c in at.code if "cap_epsilon" in c.value]
    assert texts and tomllib.loads(texts[0])["statistics"][0]["epsilon"] == pytest.approx(2.0)
    assert any("solved on the **confidential file**" in w.value for w in at.warning)
    at.radio(key="planner_mode").set_value(RELEASE).run()
    # typing the planned ε is the user's choice; the page never compares the release with the confidential plan
    at.number_input(key="planner_rel_eps_gini").set_value(round(planned / 2, 4)).run()
    assert not [w.value for w in at.warning if "instead of the planned" in w.value]


@pytest.fixture
def release_records(tmp_path):
    values = np.random.default_rng(7).lognormal(10.0, 0.5, 2000)
    db = ledger_lib.init_ledger(f"sqlite:///{tmp_path}/ledger.db")
    account = db.account("memo-side-door", cap_epsilon=5.0, label="survey.csv")
    records = release_lib.make_release(
        [(planner_lib.make_statistic("gini", values, upper=200_000.0), 1.25)],
        account,
        dataset={"income_column": "income", "n": 2000, "source": "upload"},
    )
    return records, account


def test_release_memo_shows_the_typed_epsilon_never_the_confidential_plan(release_records):
    records, account = release_records
    plan = {"gini": 7.977}  # as solved on the confidential file
    targets = {"gini": "within ±0.01 of the true Gini (1 Gini point) with 90% probability"}
    page = release_panel.release_memo(records, account, account.entries(), plan, targets, plan_confidential=True)
    assert "7.977" not in page
    assert "1.25" in page and "confidential (solved on the confidential file)" in page
    public = release_panel.release_memo(records, account, account.entries(), plan, targets)
    assert "7.977" in public  # an ε planned on public or synthetic data is shown as planned


def test_plan_memo_of_a_confidential_file_is_marked_confidential():
    values = np.random.default_rng(2).lognormal(10.0, 0.7, 1500)
    specs = (planner_experiments.StatisticTarget("gini", (("upper", 500_000.0),), None, 0.9, abs_error=0.01),)
    stats = (planner_lib.make_statistic("gini", values, upper=500_000.0),)
    view = planner_experiments.accuracy_first(stats, specs, dots_seed=1)
    summary = {"name": "confidential.csv", "n": 1500, "source": "uploaded file (confidential)"}
    marked = planner_views.plan_memo(view, 2.0, summary, confidential=True)
    assert "CONFIDENTIAL planning memo" in marked and "Do not publish them" in marked
    assert "CONFIDENTIAL" not in planner_views.plan_memo(view, 2.0, summary)


def test_the_rule_is_dpcores_an_epsilon_solved_on_confidential_data_never_starts_a_release():
    """The rule lives in dpcore (the panel calls it): the plan's ε starts a release only when solved on public or
    synthetic data, rounded up to the field's 4 decimals; solved on a confidential file, or on data not known to be
    public, the budget-first split starts it."""
    from dpcore.planner.release_epsilons import release_epsilons

    planned, split = {"gini": 0.73214, "mean": 0.2}, {"gini": 1.0, "mean": 0.5, "count": 0.25}
    kinds = ["gini", "mean", "count"]
    assert release_epsilons(kinds, planned, split, planned_on_confidential=False) == {
        "gini": 0.7322,
        "mean": 0.2,
        "count": 0.25,
    }
    for unknown_or_confidential in (True, None):
        assert release_epsilons(kinds, planned, split, planned_on_confidential=unknown_or_confidential) == split
    assert release_epsilons(["mean"], {}, {}, planned_on_confidential=False) == {"mean": 0.1}
