"""The plan file the planner offers is the release Release mode makes: the same ε per statistic (the
accuracy-first ε rounded up to the field's 4 decimals, or the user's own field values) and the same cap,
from one function (ui.planner.choices.release_choices); a plan that spends more than the total ε the user
can afford says so. Before, the file held an even split of the total-ε slider (ε 0.5 x 4, cap 2) while
Release mode used the accuracy-first ε, and nothing was said when the plan totalled 6.2 next to "2"."""

from __future__ import annotations

import hashlib
import io
import zipfile

import pytest
import tomllib
from streamlit.testing.v1 import AppTest
from support import assert_clean, open_page

from ui.planner import sections as planner_sections
from ui.planner.choices import round_up

PAGE = "app_pages/planner.py"
SHARE = planner_sections.SHARE.heading
RELEASE = "Release: make the real release (spends budget)"
PLAN = "Plan: choose ε on planning data"


def _plan_file(at) -> dict:
    texts = [c.value for c in at.code if "cap_epsilon" in c.value]
    assert texts, "the plan file's text is not shown"
    return tomllib.loads(texts[0])


def _release_fields(at) -> tuple[dict[str, float], float]:
    epsilons = {
        w.key.removeprefix("planner_rel_eps_"): float(w.value)
        for w in at.number_input
        if w.key.startswith("planner_rel_eps_")
    }
    return epsilons, float(at.number_input(key="planner_cap").value)


def test_downloaded_plan_is_what_release_mode_releases():
    at = open_page(PAGE, timeout=240, data_n="2000", planner_stats="gini,mean", planner_total="2.0")
    assert_clean(at)
    plan = dict(at.session_state["_planner_plan"])
    assert sum(plan.values()) > 2.0  # the answer says it does not fit the total ε the user can afford
    assert any("more than the ε = 2 you can afford" in w.value for w in at.warning)
    at.radio(key="planner_view").set_value(SHARE).run()
    assert_clean(at)
    written = _plan_file(at)
    in_file = {item["kind"]: item["epsilon"] for item in written["statistics"]}
    # the accuracy-first ε (rounded up as the release fields are), not an even split of the slider's 2
    assert in_file == {kind: round_up(eps) for kind, eps in plan.items()}
    assert in_file != {"gini": 1.0, "mean": 1.0}
    total = sum(in_file.values())
    assert total > 2.0 and any("more than your total ε = 2" in w.value for w in at.warning)

    at.radio(key="planner_mode").set_value(RELEASE).run()
    assert not at.exception
    epsilons, cap = _release_fields(at)
    assert epsilons == pytest.approx(in_file, abs=0) and cap == written["cap_epsilon"]

    # a field changed in Release mode is what the next plan file carries
    at.number_input(key="planner_rel_eps_mean").set_value(0.5).run()
    at.number_input(key="planner_cap").set_value(9.0).run()
    at.radio(key="planner_mode").set_value(PLAN).run()
    assert_clean(at)
    rewritten = _plan_file(at)
    assert {item["kind"]: item["epsilon"] for item in rewritten["statistics"]} == {**in_file, "mean": 0.5}
    assert rewritten["cap_epsilon"] == 9.0


@pytest.fixture
def ledger_url(tmp_path, monkeypatch):
    from dpcore import ledger as ledger_lib

    url = f"sqlite:///{tmp_path}/ledger.db"
    monkeypatch.setenv(ledger_lib.ENV_VAR, url)
    return url


def _plan_text(at) -> str:
    texts = [str(c.value) for c in at.code if "cap_epsilon" in str(c.value)]
    assert texts, "the plan file's text is not shown"
    return texts[0]


def _share_view(at) -> str:
    at.radio(key="planner_mode").set_value(PLAN).run()
    at.radio(key="planner_view").set_value(SHARE).run()
    assert not at.exception, [e.value for e in at.exception]
    return _plan_text(at)


def test_the_plan_file_is_the_release_with_declared_groups(ledger_url, tmp_path):
    """Public labels and sizes declared, the cap and two ε typed in Release mode: the plan file carries that very
    release (the same ε, total and cap, cell_sizes = "public", the declared labels as [keys]), the declaration
    survives the switch to Plan mode and back, and the release then made charges and lists what the file says."""
    from test_release_panel import _csv, _release, _session

    from dpcore import ledger as ledger_lib
    from dpcore import release as release_lib
    from ui.planner import release_panel

    csv = _csv()
    at = _session(csv, stats="gini,group_means")  # Release mode, groups of "region" declared (labels and sizes)
    at.number_input(key="planner_cap").set_value(3.0).run()
    at.number_input(key="planner_rel_eps_gini").set_value(0.5).run()
    at.number_input(key="planner_rel_eps_group_means").set_value(0.75).run()
    assert any("costs ε = 1.25 in total" in c.value for c in at.caption)
    text = _share_view(at)
    written = tomllib.loads(text)
    assert {item["kind"]: item["epsilon"] for item in written["statistics"]} == {"gini": 0.5, "mean": 0.75}
    assert written["cap_epsilon"] == 3.0 and "# total epsilon 1.25 of cap 3" in text
    assert written["cell_sizes"] == "public" and written["keys"] == {"region": ["north", "south", "west"]}
    assert any("total ε = 1.25; cap ε = 3" in m.value for m in at.markdown)

    at.radio(key="planner_mode").set_value(RELEASE).run()  # the Release fields as they were left
    assert at.checkbox(key="planner_labels_public").value and at.checkbox(key="planner_sizes_public").value
    assert at.text_input(key="planner_public_labels").value == "north, south, west"
    assert at.number_input(key="planner_cap").value == 3.0
    assert at.number_input(key="planner_rel_eps_group_means").value == 0.75
    _release(at)
    assert not at.error, [e.value for e in at.error]
    account = ledger_lib.open_ledger(ledger_url).source_population(ledger_lib.dataset_fingerprint(csv, "income"))
    (entry,) = account.entries()
    records = entry.result["records"]
    assert account.cap_epsilon == written["cap_epsilon"] and account.spent_epsilon() == pytest.approx(1.25)
    assert [r["epsilon"] for r in records] == [s["epsilon"] for s in written["statistics"]]
    means = next(r for r in records if r["kind"] == "group_means")
    assert means["labels"] == written["keys"]["region"]
    # the whole release as one zip, laid out as the command line's --out folder (its own writer)
    assert "Download the whole release (zip)" in {b.proto.label for b in at.get("download_button")}
    records, plan = at.session_state["planner_records"], at.session_state["planner_records_plan"]
    with zipfile.ZipFile(io.BytesIO(release_panel.release_zip(records, plan, account.cap_epsilon))) as archive:
        archive.extractall(tmp_path)
    folder = tmp_path / release_panel.release_folder_name(records)
    assert folder.name == f"dp_release_{entry.id}"
    files = {path.name for path in folder.iterdir()}
    assert {"plan.toml", "release_record.json", "release_card.html", "release_card.md"} <= files
    assert tomllib.loads((folder / "plan.toml").read_text(encoding="utf-8")) == written
    record, tables = release_lib.read_release(folder)  # what the command line's readers read
    assert set(record["files"]) == files - {"release_record.json"}
    assert all(hashlib.sha256((folder / f).read_bytes()).hexdigest() == h for f, h in record["files"].items())
    assert "release_record.json beside this card" in (folder / "release_card.html").read_text(encoding="utf-8")
    table = tables[means["statistic"]]
    assert list(table["released number"]) == means["labels"]
    assert (
        list(table["value_lower"]) == means["released_lower"] and list(table["value_upper"]) == means["released_upper"]
    )
    # and the file written after the release is the same release (the account's cap, now fixed)
    assert tomllib.loads(_share_view(at)) == written


def test_an_upload_named_pseo_gets_no_public_cell_sizes(ledger_url):
    """Only the bundled PSEO table (its catalogue entry) has public cell sizes: an upload called PSEO_... is
    planned with noisy sizes and no [keys], like any confidential file."""
    from test_release_panel import HARNESS, _csv

    at = AppTest.from_string(HARNESS, default_timeout=240)
    for key, value in {"data_source": "Upload a CSV or Parquet file", "planner_stats": "gini,group_means"}.items():
        at.query_params[key] = value
    at.run()
    at.sidebar.file_uploader(key="data_upload").set_value(("PSEO_extract_2024.csv", _csv(), "text/csv")).run()
    at.selectbox(key="planner_groupcol").set_value("region").run()
    text = _share_view(at)
    written = tomllib.loads(text)
    assert written["dataset"] == "PSEO_extract_2024.csv"
    assert written["cell_sizes"] == "noisy" and "keys" not in written
    # the noisy sizes cost the plan ε = 0.1 more (the mean by group), said and counted in the total and the cap
    assert any("Release mode cannot release the group statistics" in i.value for i in at.info)
    assert written["cap_epsilon"] >= sum(s["epsilon"] for s in written["statistics"]) + 0.1 - 1e-12
