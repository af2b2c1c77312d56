"""AppTest tests of the release panel (ui/planner/release_panel.py, Release mode of the planner page) with the
durable ledger: a reload (a new session) with the same file finds the spent budget, the metrics are
read after the release, the cap is fixed, the archive exports, random groups are refused.

Every test points DPCORE_LEDGER_URL at its own temp database (never the user's default ledger)."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest
from support.postgres import PostgresUnavailable, postgres_server

from dpcore import ledger as ledger_lib

REPO = Path(__file__).resolve().parent.parent
RELEASE = "Release: make the real release (spends budget)"
HARNESS = (
    f"import runpy, sys\nsys.path.insert(0, {str(REPO)!r})\n"
    "from ui.sidebar import render_sidebar\nrender_sidebar()\n"
    f"runpy.run_path({str(REPO / 'app_pages' / 'planner.py')!r})\n"
    "from ui.notices import run_completed\nrun_completed()\n"  # as app.py does after the page
)


def _csv(seed: int = 404) -> bytes:
    gen = np.random.default_rng(seed)
    n = 2000
    income = np.round(gen.lognormal(10.6, 0.8, n), 2)
    region = gen.choice(np.array(["north", "south", "west"]), n)
    return pd.DataFrame({"income": income, "region": region}).to_csv(index=False).encode()


def _session(csv: bytes, stats: str = "gini,group_means", group: str | None = "region") -> AppTest:
    """A fresh browser session (as after a reload): upload the file, open Release mode."""
    at = AppTest.from_string(HARNESS, default_timeout=240)
    query = {"data_source": "Upload a CSV or Parquet file", "planner_mode": RELEASE, "planner_stats": stats}
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", csv, "text/csv")).run()
    create = [b for b in at.button if b.key == "planner_create_ledger"]
    if create:  # the first use of a ledger asks once
        create[0].click().run()
    if group is not None:
        at.selectbox(key="planner_groupcol").set_value(group).run()
        declare_groups(at, "north, south, west")
    assert not at.exception, [e.value for e in at.exception]
    return at


def declare_groups(at: AppTest, labels: str) -> None:
    """Declare the group labels (and their sizes) public, as a data owner does before a group release."""
    if not [c for c in at.checkbox if c.key == "planner_labels_public"]:
        return  # no group statistic (or random groups): nothing to declare
    at.checkbox(key="planner_labels_public").check().run()
    at.text_input(key="planner_public_labels").set_value(labels).run()
    at.checkbox(key="planner_sizes_public").check().run()


def _metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def _confirmation(at: AppTest):
    """The confirmation box of the next release (a new box after every release)."""
    (box,) = [c for c in at.checkbox if c.key.startswith("planner_confirm")]
    return box


def _release(at: AppTest) -> None:
    _confirmation(at).check().run()
    at.button(key="planner_release").click().run()
    assert not at.exception, [e.value for e in at.exception]


@pytest.fixture
def ledger_url(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(ledger_lib.ENV_VAR, url)
    return url


def _reload_keeps_budget(url: str) -> None:
    csv = _csv()
    first = _session(csv)
    assert _metric(first, "Spent so far") == "ε = 0"
    first.number_input(key="planner_cap").set_value(3.0).run()
    first.number_input(key="planner_rel_eps_gini").set_value(0.5).run()
    first.number_input(key="planner_rel_eps_group_means").set_value(0.75).run()
    _release(first)
    assert not first.error, [e.value for e in first.error]
    assert any("Released" in s.value for s in first.success)
    # the metrics are read after the release (not stale)
    assert _metric(first, "Spent so far") == "ε = 1.25" and _metric(first, "Remaining") == "ε = 1.75"
    fingerprint = ledger_lib.dataset_fingerprint(csv, "income")
    acct = ledger_lib.open_ledger(url).source_population(fingerprint)
    assert acct is not None and acct.spent_epsilon() == 1.25 and acct.cap_epsilon == 3.0
    (entry,) = acct.entries()
    records = entry.result["records"]
    assert records[0]["dataset"]["ledger_account"] == acct.public_id
    assert fingerprint not in json.dumps(entry.result)  # the content hash never reaches a record
    assert records[0]["dataset"]["income_column"] == "income" and records[0]["dataset"]["group_column"] == "region"
    assert records[0]["dataset"]["n"] == 2000 and records[0]["dataset"]["label"] == "confidential.csv"
    assert records[0]["dataset"]["missing_values"].startswith("no row is left out")  # the command line's rule

    # a reload: a brand-new session with the same file finds the budget, and the cap is fixed
    second = _session(csv)
    assert _metric(second, "Spent so far") == "ε = 1.25" and _metric(second, "Remaining") == "ε = 1.75"
    assert not [w for w in second.number_input if w.key == "planner_cap"], "the cap must not be editable any more"
    assert not [b for b in second.button if "new ledger" in b.label.lower() or "reset" in b.label.lower()]
    archive = second.dataframe[0].value
    assert list(archive["entry"]) == [entry.id] and "Gini" in archive["release"].iloc[0]
    exports = {b.label for b in second.get("download_button")}
    assert {"Export the archive (JSON)", "Export the archive (CSV)"} <= exports
    # a second release from the new session is refused when it would exceed the cap, and charged otherwise
    second.number_input(key="planner_rel_eps_gini").set_value(1.0).run()
    second.number_input(key="planner_rel_eps_group_means").set_value(1.0).run()
    # over the cap the release cannot even be asked for: the box and the button are disabled, the reason said
    assert second.button(key="planner_release").disabled and _confirmation(second).disabled
    assert any("needs ε = 2 but only ε = 1.75 remains" in w.value for w in second.warning), [
        w.value for w in second.warning
    ]
    assert _metric(second, "Spent so far") == "ε = 1.25"
    second.number_input(key="planner_rel_eps_group_means").set_value(0.5).run()
    _release(second)
    assert _metric(second, "Spent so far") == "ε = 2.75" and _metric(second, "Remaining") == "ε = 0.25"
    assert len(second.dataframe[-1].value) == 2  # the archive now lists both releases
    assert ledger_lib.open_ledger(url).source_population(fingerprint).spent_epsilon() == 2.75

    # the same file with another income column is another account; another file too
    third = _session(_csv(seed=405))
    assert _metric(third, "Spent so far") == "ε = 0"


def test_reload_finds_the_spent_budget_sqlite(ledger_url):
    _reload_keeps_budget(ledger_url)


def test_reload_finds_the_spent_budget_postgresql(monkeypatch):
    try:
        with postgres_server() as url:
            monkeypatch.setenv(ledger_lib.ENV_VAR, url)
            _reload_keeps_budget(url)
    except PostgresUnavailable as exc:
        pytest.skip(f"PostgreSQL test server unavailable: {exc}")


def test_random_groups_are_refused(ledger_url):
    at = _session(_csv(), stats="gini,group_means", group=None)
    errors = [e.value for e in at.error]
    assert any("random groups" in e and "Mean income by group" in e for e in errors), errors
    assert at.button(key="planner_release").disabled
    assert ledger_lib.open_ledger(ledger_url).accounts() == []
    # without group statistics the release goes ahead
    fresh = _session(_csv(), stats="gini", group=None)
    assert not fresh.error
    _release(fresh)
    assert not fresh.error, [e.value for e in fresh.error]
    assert len(ledger_lib.open_ledger(ledger_url).accounts()) == 1


def test_archive_exports_parse(ledger_url):
    at = _session(_csv(), stats="gini", group=None)
    _release(at)
    buttons = {b.label: b for b in at.get("download_button")}
    assert "Export the archive (JSON)" in buttons and "Download the release record (JSON)" in buttons
    acct = ledger_lib.open_ledger(ledger_url).accounts()[0]
    doc = json.loads(acct.export("json"))
    assert doc["accounts"][0]["entries"][0]["result"]["records"][0]["statistic"] == "Gini index"
    rows = pd.read_csv(io.StringIO(acct.export("csv")))
    assert len(rows) == 1 and rows["kind"].iloc[0] == "pure"


def test_bad_ledger_url_shows_an_error(monkeypatch):
    monkeypatch.setenv(ledger_lib.ENV_VAR, "mysql://somewhere/db")
    at = _session(_csv(), stats="gini", group=None)
    assert any("unsupported ledger URL" in e.value for e in at.error)
    assert not at.exception


def _spent_epsilon(url: str, csv: bytes) -> tuple[float, int]:
    acct = ledger_lib.open_ledger(url).source_population(ledger_lib.dataset_fingerprint(csv, "income"))
    return (acct.spent_epsilon(), len(acct.entries())) if acct is not None else (0.0, 0)


def test_one_click_one_charge_and_a_new_confirmation_per_release(ledger_url):
    """A second click (a double click's second message, sent by the browser before it saw the release,
    with the old box still ticked) charges nothing: the confirmation is used up by the release."""
    csv = _csv()
    at = _session(csv, stats="gini", group=None)
    at.number_input(key="planner_rel_eps_gini").set_value(0.5).run()
    _release(at)
    assert _spent_epsilon(ledger_url, csv) == (0.5, 1)
    # the status reads the ledger after the release
    text = " ".join(m.value for m in at.markdown)
    assert "No release has been made from these data yet" not in text and "1 release so far" in text
    assert _metric(at, "Spent so far") == "ε = 0.5"
    assert any(s.value.startswith("Released.") for s in at.success)
    # a new, unticked box; the button disabled until it is ticked
    box = _confirmation(at)
    assert box.key != "planner_confirm" and not box.value
    button = at.button(key="planner_release")
    assert button.disabled
    # the stale second click: the old box ticked in the message, the button still live in the browser
    at.session_state["planner_confirm"] = True
    button.proto.disabled = False
    button.click().run()
    assert not at.exception
    assert _spent_epsilon(ledger_url, csv) == (0.5, 1), "a second click spent the budget again"
    # a new confirmation makes a new release (and spends again)
    _release(at)
    assert _spent_epsilon(ledger_url, csv) == (1.0, 2)
    assert "2 releases so far" in " ".join(m.value for m in at.markdown)


def test_a_release_refuses_a_damaged_ledger_before_the_charge(ledger_url):
    """The app keeps its ledger open: each release runs verify's checks first, so an entry damaged since (here by
    someone with write access) refuses the next release with verify's summary, and nothing is charged."""
    import sqlite3

    csv = _csv()
    at = _session(csv, stats="gini", group=None)
    at.number_input(key="planner_rel_eps_gini").set_value(0.5).run()
    _release(at)
    assert _spent_epsilon(ledger_url, csv) == (0.5, 1)
    conn = sqlite3.connect(ledger_lib.sqlite_path(ledger_url), isolation_level=None)
    conn.execute("DROP TRIGGER dpcore_entries_no_update")
    conn.execute("UPDATE dpcore_entries SET record = substr(record, 1, 20) WHERE id = 1")
    conn.close()
    summary = ledger_lib.open_ledger(ledger_url, create=False).verify().summary()
    assert summary.startswith("ledger DAMAGED") and "entry 1 was edited" in summary
    _release(at)
    errors = [e.value for e in at.error]
    assert any(summary in e and "Nothing was charged" in e for e in errors), errors
    with sqlite3.connect(ledger_lib.sqlite_path(ledger_url)) as raw:
        assert raw.execute("SELECT COUNT(*) FROM dpcore_entries").fetchone()[0] == 1


def test_demonstration_account_is_named_and_the_file_account_is_kept(ledger_url):
    """After a reload the upload is gone and Release mode shows the synthetic data's account: it must
    not read as a reset of the file's budget."""
    at = AppTest.from_string(HARNESS, default_timeout=240)
    at.query_params["planner_mode"] = RELEASE
    at.query_params["planner_stats"] = "mean"
    at.run()
    assert not at.exception
    info = " ".join(i.value for i in at.info)
    assert "Shown: the demonstration account" in info and "Your file's account is kept" in info


def test_missing_ledger_is_created_only_when_asked(tmp_path, monkeypatch):
    path = tmp_path / "new" / "ledger.db"
    monkeypatch.setenv(ledger_lib.ENV_VAR, f"sqlite:///{path}")
    at = AppTest.from_string(HARNESS, default_timeout=240)
    at.query_params["planner_mode"] = RELEASE
    at.query_params["planner_stats"] = "mean"
    at.run()
    assert not at.exception
    assert any(f"No budget ledger exists at `{path}` yet. Create it?" in w.value for w in at.warning)
    assert not path.exists(), "the ledger was created without asking"
    assert at.button(key="planner_release").disabled
    at.button(key="planner_create_ledger").click().run()
    assert not at.exception and path.exists()
    assert not [b for b in at.button if b.key == "planner_create_ledger"]
    assert any("Created the budget ledger" in s.value for s in at.success)


def test_a_ledger_that_is_not_one_is_an_error_naming_it(tmp_path, monkeypatch):
    path = tmp_path / "ledger.db"
    path.write_bytes(b"")  # truncated to 0 bytes: never taken as a new, empty ledger
    monkeypatch.setenv(ledger_lib.ENV_VAR, f"sqlite:///{path}")
    at = AppTest.from_string(HARNESS, default_timeout=240)
    at.query_params["planner_mode"] = RELEASE
    at.query_params["planner_stats"] = "mean"
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("budget ledger cannot be used" in e and str(path) in e for e in errors), errors
    assert not [b for b in at.button if b.key in ("planner_release", "planner_create_ledger")]


def test_a_wait_for_the_ledger_lock_is_said(ledger_url):
    """Another release holding the ledger's write lock: the release waits, and says so."""
    import sqlite3
    import threading
    import time

    from ui import accounts

    csv = _csv()
    at = _session(csv, stats="mean", group=None)
    _confirmation(at).check().run()
    path = ledger_url[len("sqlite:///") :]
    holder = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN IMMEDIATE")  # what a racing release holds while it charges
    said_before = accounts.lock_waits_said()

    def let_go() -> None:  # once the panel has said that it waits (at most 60 s), the racing release ends
        deadline = time.monotonic() + 60
        while accounts.lock_waits_said() == said_before and time.monotonic() < deadline:
            time.sleep(0.05)
        holder.execute("ROLLBACK")

    racing = threading.Thread(target=let_go)
    racing.start()
    try:
        at.button(key="planner_release").click().run()
    finally:
        racing.join()
        holder.close()
    assert not at.exception
    done = [s.value for s in at.success if s.value.startswith("Released.")]
    assert done and "waiting for the ledger lock held by another release" in done[0], done


def test_a_release_above_the_delta_cap_cannot_be_asked_for(ledger_url):
    """The Gini's Laplace noise spends δ: with a δ cap of 0 the ledger would refuse it, so the box and the
    button are disabled and the reason said before a click (it was a refusal after the click)."""
    at = AppTest.from_string(HARNESS, default_timeout=240)
    for k, v in {
        "data_source": "Upload a CSV or Parquet file",
        "planner_mode": RELEASE,
        "planner_stats": "gini",
        "planner_gini_noise": "laplace",
        "planner_gini_delta": "1e-06",
    }.items():
        at.query_params[k] = v
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("confidential.csv", _csv(), "text/csv")).run()
    create = [b for b in at.button if b.key == "planner_create_ledger"]
    if create:
        create[0].click().run()
    at.selectbox(key="planner_cap_delta").set_value(0.0).run()
    assert not at.exception
    assert _confirmation(at).disabled and at.button(key="planner_release").disabled
    assert any("spends δ = 1e-06" in w.value and "δ cap of at least 1e-06" in w.value for w in at.warning)
    at.selectbox(key="planner_cap_delta").set_value(1e-6).run()
    assert not _confirmation(at).disabled
    _release(at)
    assert any(s.value.startswith("Released.") for s in at.success), [e.value for e in at.error]


def test_a_declared_group_without_rows_is_said_before_the_click(ledger_url):
    """A mean by group of a declared group with no row cannot be released: said before the confirmation (the sizes
    are declared public, so it reveals nothing more), the button disabled, nothing charged; not a lower-case
    error after a click that also used up the ticked confirmation."""
    csv = _csv()
    at = _session(csv, stats="gini,group_means", group="region")
    at.text_input(key="planner_public_labels").set_value("north, south, west, east").run()
    warnings = [w.value for w in at.warning if "has no row" in w.value]
    assert warnings and warnings[0].startswith("**The declared group 'east' has no row**"), warnings
    assert at.button(key="planner_release").disabled and _confirmation(at).disabled
    assert _spent_epsilon(ledger_url, csv) == (0.0, 0)


def test_out_of_range_fields_are_said_in_words(ledger_url):
    """An ε or cap out of range only turned its field red ("between 0.00 and 100.00" while 0 was refused): the page
    now says which field, its range and its value, and refuses; an ε of 100 is allowed but said to protect almost
    nothing."""
    at = _session(_csv(), stats="gini", group=None)
    at.number_input(key="planner_rel_eps_gini").set_value(0.0).run()
    errors = [e.value for e in at.error]
    assert any("ε for Gini index must be between 0.0001 and 100 (it is 0)" in e for e in errors), errors
    assert at.button(key="planner_release").disabled
    at.number_input(key="planner_rel_eps_gini").set_value(0.5).run()
    at.number_input(key="planner_cap").set_value(0.0).run()
    assert any("The ε cap must be between 0.001 and 100 (it is 0)" in e.value for e in at.error)
    assert at.button(key="planner_release").disabled
    at.number_input(key="planner_cap").set_value(100.0).run()
    at.number_input(key="planner_rel_eps_gini").set_value(100.0).run()
    assert not at.error, [e.value for e in at.error]
    assert any("ε = 100 protects almost nothing" in w.value for w in at.warning)
    at.number_input(key="planner_rel_eps_gini").set_value(150.0).run()
    assert any("must be between 0.0001 and 100 (it is 150)" in e.value for e in at.error)


def _release_cut_by_a_click(through_run_to_the_end: bool) -> Any:
    """A script whose 'release' meets a click (a rerun request) before its Streamlit call, then notes that it ended."""

    def script():
        import streamlit as st
        from streamlit.runtime.scriptrunner_utils.script_requests import RerunData
        from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

        from ui.accounts import run_to_the_end

        def release() -> None:
            ctx = get_script_run_ctx()
            ctx.script_requests.request_rerun(RerunData(query_string=ctx.query_string))  # a click arrives
            st.caption("Waiting for the ledger")  # a Streamlit call, as the lock-wait note is
            st.session_state["ended"] = True

        if not st.session_state.get("clicked"):
            st.session_state["clicked"] = True
            if st.session_state["through"]:
                run_to_the_end(release)
            else:
                release()
        st.write(f"ended: {st.session_state.get('ended', False)}")

    at = AppTest.from_function(script, default_timeout=60)
    at.session_state["through"] = through_run_to_the_end
    return at.run()


def test_a_second_run_of_the_session_reads_the_ledger_after_the_first_runs_release():
    """Streamlit's fast reruns start a double click's second run while the first is still releasing; the second
    run's page is the one shown. ``wait_for_work_in_progress`` (called by the release panel before it reads the
    account) waits for the release that ``run_to_the_end`` is making, so the page shows it and its outcome; without
    the wait the read comes first (the browser test saw "0 releases so far", the release charged once)."""
    import threading
    import time

    from ui import accounts

    def two_runs(wait: bool) -> list[str]:
        order: list[str] = []
        started = threading.Event()

        def release() -> None:
            started.set()
            time.sleep(0.2)
            order.append("charged")

        first = threading.Thread(target=accounts.run_to_the_end, args=(release,))
        first.start()
        started.wait()
        if wait:
            accounts.wait_for_work_in_progress()
        order.append("read")
        first.join()
        return order

    assert two_runs(wait=True) == ["charged", "read"]
    assert two_runs(wait=False) == ["read", "charged"]


def test_a_click_during_a_release_does_not_cut_it():
    """A new click stops a run at its next Streamlit call; a release run by ``run_to_the_end`` ends first (the
    click is honoured after it), while the same work run in the script's thread is cut where it stood."""
    cut = _release_cut_by_a_click(through_run_to_the_end=False)
    assert [m.value for m in cut.markdown] == ["ended: False"]  # the hazard is real
    whole = _release_cut_by_a_click(through_run_to_the_end=True)
    assert not whole.exception
    assert [m.value for m in whole.markdown] == ["ended: True"]
