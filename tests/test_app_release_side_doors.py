"""Release mode of the app on neighbouring uploads: one person's income present vs empty.

The sidebar's cleaning removes rows with a missing income (exploration pages keep that); a release must not:
a removed row would change the published n and a group's size when only one person's value goes missing.
Release mode counts such rows at each statistic's public lower bound (the command line's
``missing_income = "lower"``), and the record says so (``dataset.missing_values``), never how many.

Each test points DPCORE_LEDGER_URL at its own temp SQLite database."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore import ledger as ledger_lib
from dpcore import release as release_lib

REPO = Path(__file__).resolve().parent.parent
RELEASE = "Release: make the real release (spends budget)"
HARNESS = (
    f"import runpy, sys\nsys.path.insert(0, {str(REPO)!r})\n"
    "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
    f"runpy.run_path({str(REPO / 'app_pages' / 'planner.py')!r})\n"
)


def _neighbours() -> tuple[bytes, bytes]:
    """Two files that differ in one person's income only: present in one, empty in the other. That person is
    alone in the region "island"."""
    gen = np.random.default_rng(2407)
    n = 600
    frame = pd.DataFrame(
        {"income": np.round(gen.lognormal(10.6, 0.8, n), 2), "region": gen.choice(np.array(["north", "south"]), n)}
    )
    frame.loc[n - 1, "region"] = "island"
    present = frame.to_csv(index=False).encode()
    frame["income"] = frame["income"].astype(object)
    frame.loc[n - 1, "income"] = None
    return present, frame.to_csv(index=False).encode()


@pytest.fixture
def ledger_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(ledger_lib.ENV_VAR, url)
    return url


def _session(csv: bytes, name: str, stats: str = "gini,mean,group_means") -> AppTest:
    """A fresh session: upload ``csv``, open Release mode with ``stats`` by region."""
    at = AppTest.from_string(HARNESS, default_timeout=240)
    for k, v in {
        "data_source": "Upload a CSV or Parquet file",
        "planner_mode": RELEASE,
        "planner_stats": stats,
    }.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value((name, csv, "text/csv")).run()
    create = [b for b in at.button if b.key == "planner_create_ledger"]
    if create:
        create[0].click().run()
    at.selectbox(key="planner_groupcol").set_value("region").run()
    return at


def _declare(at: AppTest, labels: str) -> None:
    at.checkbox(key="planner_labels_public").check().run()
    at.text_input(key="planner_public_labels").set_value(labels).run()
    at.checkbox(key="planner_sizes_public").check().run()


def _release_records(
    csv: bytes, name: str, labels: str = "north, south, island", stats: str = "gini,mean,group_means"
) -> list[dict]:
    """Upload ``csv`` in a fresh session, declare the regions, release ``stats``, return the records."""
    at = _session(csv, name, stats)
    _declare(at, labels)
    at.text_input(key=next(t.key for t in at.text_input if t.key.startswith("planner_account_label"))).set_value(
        name
    ).run()
    (box,) = [c for c in at.checkbox if c.key.startswith("planner_confirm")]
    box.check().run()
    at.button(key="planner_release").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("Released" in s.value for s in at.success), [e.value for e in at.error]
    return [r.to_dict() if hasattr(r, "to_dict") else r for r in at.session_state["planner_records"]]


def _public_n(records: list[dict]) -> list:
    """Everything about n a record publishes: the dataset's n and each group's size."""
    return [(r["dataset"]["n"], (r.get("parameters") or {}).get("group_sizes")) for r in records]


def test_a_missing_income_does_not_change_the_published_n(ledger_url):
    present, missing = _neighbours()
    with_income = _release_records(present, "present.csv")
    without_income = _release_records(missing, "missing.csv")
    assert _public_n(with_income) == _public_n(without_income)
    assert with_income[0]["dataset"]["n"] == 600
    sizes = next(r["parameters"]["group_sizes"] for r in without_income if r["parameters"].get("group_sizes"))
    assert sizes["island"] == 1  # the person whose income is missing stays in their (declared) group
    for record in with_income + without_income:
        assert record["dataset"]["missing_values"] == release_lib.MISSING_INCOME_AT_LOWER_BOUND


def test_missing_income_value_is_the_public_lower_bound():
    assert release_lib.missing_income_value("gini", {"lower": 5.0, "upper": 9.0}) == 5.0
    assert release_lib.missing_income_value("mean", {"upper": 9.0}) == 0.0
    assert release_lib.missing_income_value("ratio", {"threshold": 100.0}) == 100.0  # income < 100 is a case
    assert release_lib.missing_income_value("count", {"threshold": 100.0}) < 100.0  # counted: income >= 100
    values, groups = release_lib.with_missing_incomes(
        "group_means", {"lower": 1.0, "upper": 9.0}, [2.0, 3.0], ["a", "b"], ["c"], 1
    )
    assert values.tolist() == [2.0, 3.0, 1.0] and groups.tolist() == ["a", "b", "c"]
    with pytest.raises(ValueError, match="a group label for each"):
        release_lib.with_missing_incomes("group_means", {"upper": 9.0}, [2.0], ["a"], [], 1)


def test_a_one_person_group_is_not_published_without_a_declaration(ledger_url):
    present, _ = _neighbours()
    at = _session(present, "present.csv", "group_means")
    assert at.button(key="planner_release").disabled
    (box,) = [c for c in at.checkbox if c.key.startswith("planner_confirm")]
    assert box.disabled
    assert any("Group statistics need public groups" in w.value for w in at.warning), [w.value for w in at.warning]
    # ticking the labels alone is not enough: exact sizes need their own declaration (the PSEO assumption)
    at.checkbox(key="planner_labels_public").check().run()
    at.text_input(key="planner_public_labels").set_value("north, south, island").run()
    assert at.button(key="planner_release").disabled
    assert (
        ledger_lib.open_ledger(ledger_url).source_population(ledger_lib.dataset_fingerprint(present, "income")) is None
    )  # nothing charged, no account


def test_declared_groups_are_listed_whatever_group_one_person_is_in(ledger_url):
    """Neighbours: the lone islander of one file lives in the north in the other. With north and south declared,
    both records list exactly the declared groups (the islander's row is left out by the public rule)."""
    present, _ = _neighbours()
    frame = pd.read_csv(__import__("io").BytesIO(present))
    frame.loc[frame["region"] == "island", "region"] = "north"
    moved = frame.to_csv(index=False).encode()
    listed = []
    for csv, name in ((present, "island.csv"), (moved, "north.csv")):
        (record,) = _release_records(csv, name, labels="south, north", stats="group_means")
        listed.append(list(record["labels"]))
        assert record["dataset"]["group_labels"]["declared_public"] == ["south", "north"]
    assert listed[0] == listed[1] and "island" not in " ".join(listed[0])
