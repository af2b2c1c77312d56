"""AppTest of the planner on a confidential upload: "plan privately" (one confirmation stating the cost, the DP
snapshot charged once to the population in a real SQLite ledger, reused on every rerun; every number then from
its synthetic data and marked publishable) beside "explore the raw file" (everything marked confidential)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from streamlit.testing.v1 import AppTest
from support import assert_clean, page_text

from dpcore import ledger
from ui import private_source

PAGE = "app_pages/planner.py"


def _harness() -> AppTest:
    from support.pages import REPO_ROOT

    harness = (
        f"import runpy, sys\nsys.path.insert(0, {str(REPO_ROOT)!r})\n"
        "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
        f"runpy.run_path({str(REPO_ROOT / PAGE)!r})\n"
    )
    return AppTest.from_string(harness, default_timeout=240)


def _assert_clean_on_the_snapshot(at) -> None:
    """assert_clean, but for the one outcome a real snapshot may draw: the synthetic data of an unseeded DP
    snapshot (charged, so never seeded) can make a tight target unreachable at any epsilon (clipping bias of its
    log-uniform top bin, seen in CI: group means at 5%), which the page says in an error box, by design."""
    assert not at.exception, [str(e.value)[:1000] for e in at.exception]
    errors = [str(e.value) for e in at.error]
    assert all("does not reach" in e for e in errors), errors


def test_plan_privately_charges_the_snapshot_once_and_marks_the_plan_publishable(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(ledger.ENV_VAR, url)  # never the user's ledger
    ledger.init_ledger(url)
    gen = np.random.default_rng(38)
    n = 3000
    income = np.round(gen.lognormal(10.6, 0.8, n), 2)
    region = gen.choice(np.array(["north", "south", "west"]), n)
    region[:7] = "isle"  # a small group: the raw file's page says its exact size, a private plan never does
    csv = pd.DataFrame({"income": income, "region": region}).to_csv(index=False).encode()
    at = _harness()
    for k, v in {"data_source": "Upload a CSV or Parquet file", "planner_stats": "mean,group_means"}.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", csv, "text/csv")).run()
    assert at.session_state["dataset"].confidential
    assert at.radio(key=private_source.SOURCE_KEY).value == private_source.RAW  # the default: nothing charged
    assert "exploring the raw confidential file" in page_text(at)
    # computed from the records: the tables, memo and script say so in their labels and names (the release
    # plan file carries no epsilon solved on the records, so it is not)
    marked = {str(b.proto.label): b.proto.label.endswith("— CONFIDENTIAL") for b in at.get("download_button")}
    assert any(marked.values()) and all(v for k, v in marked.items() if "release plan" not in k), marked
    at.selectbox(key="planner_groupcol").set_value("region").run()
    assert "has only 7 records" in page_text(at)  # read off the records: confidential
    at.radio(key=private_source.SOURCE_KEY).set_value(private_source.PRIVATE).run()
    assert "has only 7 records" not in page_text(at)
    at.text_input(key="planner_snapshot_cells").set_value("north, south, west").run()
    assert_clean(at)
    text = page_text(at)
    assert "costs ε = 0.1 of the population's budget, once" in text
    db = ledger.open_ledger(url, create=False)
    assert all(not a.entries() for a in db.accounts())  # nothing is charged before the confirmation
    at.button(key="planner_take_snapshot").click().run()
    _assert_clean_on_the_snapshot(at)
    (acct,) = [a for a in ledger.open_ledger(url, create=False).accounts() if a.entries()]
    (entry,) = acct.entries()
    assert entry.cost.epsilon == 0.1 and entry.record["kind"] == "dpcore snapshot"
    text = page_text(at)
    assert "Planning on a DP snapshot of your file" in text and "publishable" in text
    assert "CONFIDENTIAL" not in text and "smallest ε" in text
    assert not any("CONFIDENTIAL" in str(b.proto.label) for b in at.get("download_button"))
    assert "the snapshot's bins hold fewer people than their noise" in text  # its tail: 3,000 people, ε 0.1
    # a rerun (any widget) reuses the stored snapshot: nothing more is charged
    at.run()
    _assert_clean_on_the_snapshot(at)
    assert len(acct.entries()) == 1 and "Planning on a DP snapshot of your file" in page_text(at)
    # the raw file beside it: everything said confidential, nothing charged
    at.radio(key=private_source.SOURCE_KEY).set_value(private_source.RAW).run()
    assert_clean(at)
    assert "exploring the raw confidential file" in page_text(at) and len(acct.entries()) == 1
