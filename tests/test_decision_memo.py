"""The decision memo (ui.memo, built by ui.planner.release_panel.release_memo and ui.planner.views.plan_memo):
small and offline (an inline SVG chart, no plotly.js: the file was 4.8 MB), numbers written for people
(a released income of 22,329 was "2.233e+04"), an "accuracy it buys" column, and a data table that fits
(the dataset's identity is a two-column list instead of one row of many columns)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpcore import ledger as ledger_lib
from dpcore import planner as planner_lib
from dpcore import release as release_lib
from ui import memo as memo_html
from ui.planner import release_panel

MAX_BYTES = 300_000


@pytest.fixture
def release_memo_text(tmp_path) -> str:
    """A real release (mean and Gini of incomes around 22,000) through a real ledger (secure noise: an account
    refuses a caller's seed)."""
    values = np.random.default_rng(7).lognormal(10.0, 0.5, 2000)
    db = ledger_lib.init_ledger(f"sqlite:///{tmp_path}/ledger.db")
    account = db.account("memo-test", cap_epsilon=5.0, label="survey.csv")
    stats = [
        (planner_lib.make_statistic("mean", values, upper=200_000.0), 1.0),
        (planner_lib.make_statistic("gini", values, upper=200_000.0), 1.5),
    ]
    records = release_lib.make_release(
        stats,
        account,
        dataset={
            "income_column": "income",
            "group_column": None,
            "n": 2000,
            "source": "upload",
            "file_name": "survey.csv",
        },
    )
    plan = {"mean": 0.8, "gini": 2.0}
    targets = {
        "mean": "relative error at most 5% with 95% probability",
        "gini": "within ±0.01 of the true Gini (1 Gini point) with 90% probability",
    }
    return release_panel.release_memo(records, account, account.entries(), plan, targets), records


def test_release_memo_is_small_offline_and_readable(release_memo_text):
    page, records = release_memo_text
    assert len(page.encode()) < MAX_BYTES
    assert "<script" not in page and "src=" not in page and "<svg" in page  # opens offline, draws its chart
    mean = next(r for r in records if r.kind == "mean").released[0]
    assert 1000 <= mean < 1e6
    assert f"{mean:,.0f}" in page  # thousands separators
    assert not re.search(r"\d\.\d+e\+0\d", page), "a number in scientific notation"
    assert "accuracy it buys" in page
    assert "relative error at most 5% with 95% probability (the plan" in page  # ε 1.0 >= planned 0.8
    assert "less than planned: within ±0.01 of the true Gini" in page  # ε 1.5 < planned 2


def test_data_section_is_a_two_column_list(release_memo_text):
    page, _ = release_memo_text
    data = page.split("<h2>Data</h2>", 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", data)
    assert len(rows) >= 4
    assert all(len(re.findall(r"<t[hd]", row)) == 2 for row in rows)


def test_number_format():
    fmt = memo_html.format_number
    assert fmt(22329.4) == "22,329" and fmt(-1234567.0) == "-1,234,567" and fmt(4.7775) == "4.7775"
    assert fmt(0.4738193) == "0.47382" and fmt(1e-8) == "1e-08" and fmt(0.0) == "0" and fmt(12) == "12"
    assert fmt(None) == "" and fmt("text") == "text" and fmt(True) == "True"


def test_the_data_section_speaks_words_not_python(release_memo_text):
    """Field names in words and nested fields (the declared group labels and their rule) as text: the memo showed
    raw keys (income_column) and a raw Python dict ({'declared_public': [...]})."""
    page, _ = release_memo_text
    data = page.split("<h2>Data</h2>", 1)[1].split("</table>", 1)[0]
    assert "Income column" in data and "income_column" not in data and "_" not in re.sub(r"<[^>]+>", "", data)
    nested = memo_html.decision_memo_html(
        title="t",
        dataset={"group_labels": {"declared_public": ["CO", "TX"], "rule": "rows of other groups are left out"}},
        plan_rows=[{"statistic": "Mean income by group", "labels": ["CO", "TX"]}],
        total_epsilon=1.0,
    )
    assert "{" not in nested.split("<body>", 1)[1] and "[" not in nested.split("<body>", 1)[1]
    assert "Group labels" in nested and "declared public: CO, TX; rule: rows of other groups are left out" in nested
    assert "<td>CO, TX</td>" in nested
