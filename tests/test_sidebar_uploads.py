"""AppTest of the sidebar's upload section with each bad file of tests/upload_files.py.

The bugs these guard against: the quoted thousands file silently used another column, the decimal-comma file
said "no numeric column", UTF-16 and .xlsx were refused, and a failed upload's error stayed
beside the next good one in the browser (tests/test_browser_paths.py checks the page itself).
"""

from __future__ import annotations

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest
from upload_files import bad_files

from ui import sidebar as sb

HARNESS = """
import streamlit as st
from ui.sidebar import render_sidebar, current_dataset
render_sidebar()
ds = current_dataset()
st.write(f"dataset: {ds.name} | n={ds.n} | source={ds.source} | column={ds.column}")
"""
FILES = bad_files()


def _upload(name: str, content: bytes, at: AppTest | None = None) -> AppTest:
    if at is None:
        at = AppTest.from_string(HARNESS, default_timeout=60)
        at.query_params["data_source"] = sb.SRC_UPLOAD
        at.run()
    at.sidebar.file_uploader(key="data_upload").set_value((name, content, "application/octet-stream")).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def test_excel_is_an_accepted_upload_type():
    assert {"xlsx", "xls"} <= set(sb._UPLOAD_TYPES)  # no raw MIME-type error from Streamlit's filter


@pytest.mark.parametrize("name", sorted(FILES))
def test_each_bad_file_loads_right_or_shows_a_clear_error(name):
    content, expect = FILES[name]
    at = _upload(name, content)
    data = at.session_state["dataset"]
    if "error" in expect:
        assert any(expect["error"] in e for e in _errors(at)), _errors(at)
        assert data.source == "synthetic"  # the default data, said on screen
        return
    assert not _errors(at), _errors(at)
    assert data.source == "upload" and data.column == expect["column"]
    np.testing.assert_allclose(data.values, expect["values"])
    assert any(f"Income column in use: **{expect['column']}**" in s.value for s in at.sidebar.success)


def test_ambiguous_income_column_is_not_replaced_until_the_user_chooses():
    content, _ = FILES["ambiguous.csv"]
    at = _upload("ambiguous.csv", content)
    assert at.sidebar.selectbox(key="data_col").value is None  # not 'hours' in its place
    assert at.session_state["dataset"].source == "synthetic"
    at.sidebar.selectbox(key="data_col").set_value("hours").run()
    assert at.session_state["dataset"].column == "hours"
    assert any("**hours** (your choice)" in s.value for s in at.sidebar.success)


def test_no_stale_error_after_a_good_upload():
    at = _upload("old.xls", FILES["old.xls"][0])
    assert _errors(at)
    _upload("incomes.xlsx", FILES["incomes.xlsx"][0], at)
    assert not _errors(at) and at.session_state["dataset"].name == "incomes.xlsx"


def test_a_change_of_income_column_is_announced():
    at = _upload("a.csv", b"id,income\n1,10\n2,20\n3,30\n")
    assert at.session_state["dataset"].column == "income"
    _upload("b.csv", b"id,wage\n1,5\n2,6\n", at)
    assert at.session_state["dataset"].column == "wage"
    assert any("changed from `income` (a.csv) to `wage` (b.csv)" in i.value for i in at.sidebar.info)


def test_lookalike_keeps_the_group_columns_with_synthetic_incomes():
    content = b"income,region\n" + b"".join(f"{1000 + 7 * i},{'NS'[i % 2]}\n".encode() for i in range(200))
    at = _upload("groups.csv", content)
    real = at.session_state["dataset"]
    at.sidebar.toggle(key="data_lookalike").set_value(True).run()
    data = at.session_state["dataset"]
    assert data.source == "synthetic" and data.n == real.n and data.column == "income"
    assert list(data.frame["region"]) == list(real.frame["region"])  # groups kept (sizes are public)
    np.testing.assert_array_equal(data.frame["income"].to_numpy(), data.values)
    assert not np.array_equal(np.sort(data.values), np.sort(real.values))  # incomes are synthetic


GOOD_INCOME_FILE = ("a.csv", b"id,income\n1,10\n2,20\n3,30\n")


@pytest.mark.parametrize(
    "refused",
    [
        ("ambiguous.csv", FILES["ambiguous.csv"][0]),  # income-like column unreadable: no column chosen
        ("words.csv", b"id,income\n1,abc\n2,def\n"),  # the same with a single other numeric column
        ("text.csv", b"name,city\na,b\nc,d\n"),  # no numeric column at all
        ("old.xls", FILES["old.xls"][0]),  # a file that cannot be read
    ],
)
def test_the_next_upload_after_a_refused_one_picks_its_own_income_column(refused):
    """The bug this guards against: after a refused upload the next file kept "No income column chosen"
    (the column choice of the refused file stayed in the widget state). Each new file starts from its
    own guess; a second upload of a refused file and then the good one are checked too."""
    at = _upload(*refused)
    assert at.session_state["dataset"].source == "synthetic"
    for _ in range(2):
        _upload(*GOOD_INCOME_FILE, at)
        data = at.session_state["dataset"]
        assert (data.source, data.name, data.column) == ("upload", "a.csv", "income")
        assert not _errors(at), _errors(at)
        assert not any("No income column chosen" in c.value for c in at.sidebar.caption)
        assert any("Income column in use: **income**" in s.value for s in at.sidebar.success)
        _upload(*refused, at)
        assert at.session_state["dataset"].source == "synthetic"


def test_a_column_the_user_chose_is_kept_while_the_same_file_stays():
    """The reset above happens only when the file changes: a rerun with the same file keeps the choice."""
    at = _upload("two.csv", b"income,wage\n1,5\n2,6\n3,9\n")
    at.sidebar.selectbox(key="data_col").set_value("wage").run()
    at.sidebar.toggle(key="data_lookalike").set_value(False).run()  # any rerun
    assert at.session_state["dataset"].column == "wage"


def test_a_csv_of_millions_of_columns_is_refused_with_a_clear_message():
    """The audit's 10,000,000-column upload stalled the app's process; refused from its header line (here
    1,000,000 columns, 4 MB: the same rule) with the command line's words, and the default data stay."""
    wide = b",".join([b"x"] * 1_000_000) + b"\n" + b",".join([b"1"] * 1_000_000) + b"\n"
    at = _upload("wide.csv", wide)
    assert any(
        "wide.csv has a header line longer than 1,048,576 bytes (at most 50,000 columns are read)" in e
        for e in _errors(at)
    ), _errors(at)
    assert at.session_state["dataset"].source == "synthetic"
