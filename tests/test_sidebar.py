"""AppTest for the shared sidebar (ui.sidebar): data sources, upload, bad input, URL state.

The sidebar is driven through a two-line harness script rather than app.py: in Streamlit 1.67
AppTest re-executes only the page file after the first run of an st.navigation app, so the
sidebar in app.py can only be exercised on a first run (see test_app_pages.py, which does that
through URL query parameters).
"""

from __future__ import annotations

import io
import time

import numpy as np
import pandas as pd
import pytest
from streamlit.testing.v1 import AppTest

from dpcore.gini import gini
from ui import sidebar as sb

HARNESS = """
import streamlit as st
from ui.sidebar import render_sidebar, current_dataset
render_sidebar()
ds = current_dataset()
st.write(f"dataset: {ds.name} | n={ds.n} | source={ds.source}")
"""

CSV = b"id,income,sex\n1,1000,F\n2,2500.5,M\n3,,F\n4,40000,M\n5,31000,F\n"


def _app(**query) -> AppTest:
    at = AppTest.from_string(HARNESS, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = str(v)
    at.run()
    assert not at.exception
    return at


def _ds(at: AppTest):
    return at.session_state["dataset"]


def _errors(at: AppTest) -> list[str]:
    return [e.value for e in at.error]


def _choose(at: AppTest, label: str) -> AppTest:
    at.sidebar.selectbox(key="data_source").set_value(label).run()
    assert not at.exception
    return at


def test_default_dataset_and_notes():
    at = _app()
    ds = _ds(at)
    assert ds.source == "synthetic" and ds.n == sb.DEFAULT_N and not ds.confidential
    assert not _errors(at)
    assert any("Planning is not release" in i.value for i in at.info)
    assert at.number_input(key="seed").value == 2026
    # a default is not added to a link without it (a visit's first run leaves the URL, and the browser's
    # history, as they were: ui.browser_history); a chosen source is written
    assert "data_source" not in at.query_params
    _choose(at, sb.SRC_PARETO)
    assert at.query_params["data_source"] in (sb.SRC_PARETO, [sb.SRC_PARETO])


def test_every_source_loads():
    at = _app()
    options = at.sidebar.selectbox(key="data_source").options
    assert options[:4] == [sb.SRC_LOGNORMAL, sb.SRC_PARETO, sb.SRC_TWO_POINT, sb.SRC_EXAMPLE]
    # the upload's option names every format it reads (its URL value stays "Upload a CSV or Parquet file")
    assert options[-1] == sb.SOURCE_SHOWN[sb.SRC_UPLOAD] == "Upload a CSV, Excel (.xlsx) or Parquet file"
    seen = {}
    for label in options[:-1]:
        _choose(at, label)
        assert not _errors(at), label
        seen[label] = _ds(at)
    assert seen[sb.SRC_EXAMPLE].n == 235 and seen[sb.SRC_EXAMPLE].source == "example"
    two = seen[sb.SRC_TWO_POINT]
    assert two.bounds is not None and np.unique(two.values).size == 2
    assert gini(two.values) == pytest.approx(0.45, abs=1e-12)
    assert seen[sb.SRC_PARETO].name.startswith("Synthetic Pareto-tailed")
    for label in options[4:-1]:  # the ../shared files, only listed when present
        assert seen[label].source == "shared" and seen[label].n > 1000


def test_shared_sources_listed_only_when_present(monkeypatch, tmp_path):
    """The sidebar lists the real files of dpcore.data's catalogue (no copy of it): without ../shared/data
    the CPS extract (never bundled) is not offered, ACS and PSEO are (from the copies bundled in
    dpcore/examples); the CPS file, once there, is."""
    from dpcore.data import SHARED_DATASETS

    monkeypatch.setattr("dpcore.data.catalogue.SHARED_DATA_DIR", tmp_path)
    real = [sb.SHARED_LABELS["acs"], sb.SHARED_LABELS["pseo"]]
    assert sb._source_options() == [
        sb.SRC_LOGNORMAL,
        sb.SRC_PARETO,
        sb.SRC_TWO_POINT,
        sb.SRC_EXAMPLE,
        *real,
        sb.SRC_UPLOAD,
    ]
    (tmp_path / SHARED_DATASETS["cps"].file_name).write_bytes(b"x")
    assert sb._source_options()[4:-1] == [sb.SHARED_LABELS["cps"], *real]


def test_shared_source_with_clip_policy(cps_path):
    at = _app(data_source=sb.SHARED_LABELS["cps"])
    assert _ds(at).n == 8194 - 21
    at.sidebar.radio(key="data_shared_neg").set_value("clip").run()
    assert _ds(at).n == 8194 and (_ds(at).values >= 0).all()


def test_url_reproduces_a_synthetic_view():
    at = _app(data_source=sb.SRC_PARETO, data_gini="0.3", data_n="100000", data_seed="7")
    ds = _ds(at)
    assert ds.n == 100_000 and "Gini 0.30" in ds.name
    # the population Gini is 0.3; a sample of 1e5 is within a few standard errors (SE ~ 0.001)
    assert gini(ds.values) == pytest.approx(0.3, abs=0.01)
    again = _app(data_source=sb.SRC_PARETO, data_gini="0.3", data_n="100000", data_seed="7")
    np.testing.assert_array_equal(_ds(again).values, ds.values)
    other = _app(data_source=sb.SRC_PARETO, data_gini="0.3", data_n="100000", data_seed="8")
    assert not np.array_equal(_ds(other).values, ds.values)


def test_sliders_change_the_data():
    at = _app()
    at.sidebar.slider(key="data_sigma").set_value(1.5).run()
    assert "sigma=1.5" in _ds(at).name
    at.sidebar.select_slider(key="data_n").set_value(1000).run()
    assert _ds(at).n == 1000
    # moving the noise seed does not redraw the data
    before = _ds(at).values
    at.sidebar.number_input(key="seed").set_value(99).run()
    assert at.session_state["seed"] == 99
    np.testing.assert_array_equal(_ds(at).values, before)


def test_two_point_iq_below_minimum_shows_error_and_falls_back():
    at = _app(data_source=sb.SRC_TWO_POINT, data_gini="0.8", data_iq="2")  # minimum IQ is 5
    errs = _errors(at)
    assert len(errs) == 1 and "below the minimum" in errs[0]
    assert _ds(at).name == sb.default_dataset().name  # the pages keep working on the default
    at.sidebar.select_slider(key="data_iq").set_value(20).run()
    assert not _errors(at) and _ds(at).bounds is not None


def _upload(at: AppTest, name: str, content: bytes, mime: str = "text/csv") -> AppTest:
    _choose(at, sb.SRC_UPLOAD)
    at.sidebar.file_uploader(key="data_upload").set_value((name, content, mime)).run()
    assert not at.exception
    return at


def test_upload_csv_column_choice_and_confidential_warning():
    at = _app()
    _choose(at, sb.SRC_UPLOAD)
    assert _ds(at).source == "synthetic" and not _errors(at)  # no file yet: default data
    _upload(at, "incomes.csv", CSV)
    ds = _ds(at)
    assert ds.source == "upload" and ds.confidential and ds.column == "income"
    np.testing.assert_array_equal(ds.values, [1000, 2500.5, 40000, 31000])
    assert any("dropped 1 of 5 rows" in n for n in ds.notes)
    assert any("not private" in w.value for w in at.sidebar.warning)
    assert at.sidebar.selectbox(key="data_col").options == ["id", "income"]
    at.sidebar.selectbox(key="data_col").set_value("id").run()
    np.testing.assert_array_equal(_ds(at).values, [1, 2, 3, 4, 5])
    # the digest of the bytes is computed once per uploaded file and remembered
    assert at.session_state["_data_upload_digest"][1] == __import__("hashlib").sha256(CSV).hexdigest()


def test_upload_parquet():
    buf = io.BytesIO()
    pd.DataFrame({"wage": [10.0, 20.0, 30.0], "g": ["a", "b", "c"]}).to_parquet(buf)
    at = _upload(_app(), "w.parquet", buf.getvalue(), "application/octet-stream")
    assert _ds(at).column == "wage" and _ds(at).n == 3 and not _errors(at)


def test_upload_negative_policy():
    at = _upload(_app(), "neg.csv", b"income\n10\n-5\n20\n")
    errs = _errors(at)
    assert len(errs) == 1 and "1 negative value" in errs[0]
    assert _ds(at).source == "synthetic"  # fell back, page still works
    at.sidebar.radio(key="data_neg").set_value("drop").run()
    assert not _errors(at) and _ds(at).n == 2
    at.sidebar.radio(key="data_neg").set_value("clip").run()
    np.testing.assert_array_equal(_ds(at).values, [10, 0, 20])


@pytest.mark.parametrize(
    "content,message",
    [
        (b"\x00\x01\x02binary" * 50, "not a text file"),
        (b"", "empty"),
        (b"id,income\n", "no data rows"),
        (b"name\nabc\ndef\n", "no numeric column"),
        (b"income\n5\n", "at least 2"),
    ],
)
def test_bad_upload_shows_error_and_keeps_working(content, message):
    at = _upload(_app(), "bad.csv", content)
    errs = _errors(at)
    assert len(errs) == 1 and message in errs[0], errs
    assert _ds(at).source == "synthetic"
    assert "dataset:" in at.markdown[-1].value  # the page below still rendered


#: The sidebar as app.py draws it: a notice area at the top of the main area first (ui.common.open_notice_area).
HARNESS_WITH_NOTICE_AREA = """
import streamlit as st
from ui.common import open_notice_area
from ui.sidebar import render_sidebar, current_dataset
open_notice_area()
render_sidebar()
st.write(f"dataset: {current_dataset().name}")
from ui.data_note import data_note
data_note(uses_sidebar=True)
"""


def test_refused_upload_is_said_in_the_main_area_too():
    """The main area said "synthetic data in use" while only the sidebar said the file was refused."""
    at = AppTest.from_string(HARNESS_WITH_NOTICE_AREA, default_timeout=60)
    at.run()
    _upload(at, "neg.csv", b"income\n10\n-5\n20\n")
    (main_error,) = [e.value for e in at.main.error]
    assert main_error.startswith("Your file was refused: ") and "1 negative value" in main_error, main_error
    assert "default synthetic data" in main_error
    assert len(at.sidebar.error) == 1 and "1 negative value" in at.sidebar.error[0].value
    (note,) = [i.value for i in at.main.info if "Data on this page" in i.value]
    assert "were refused (see the message above), so these are the default data" in note, note
    at.sidebar.radio(key="data_neg").set_value("drop").run()  # a usable choice: no error anywhere
    assert not at.error and _ds(at).n == 2
    assert not any("refused" in i.value for i in at.main.info)


def test_upload_without_a_usable_income_column_says_so_in_the_main_area():
    at = AppTest.from_string(HARNESS_WITH_NOTICE_AREA, default_timeout=60)
    at.run()
    _upload(at, "odd.csv", b"income,other\n10,1\nabc,2\nxyz,3\n")
    (notice,) = [w.value for w in at.main.warning]
    assert notice.startswith("Your file odd.csv is not in use yet: choose its income column"), notice
    assert "default synthetic data" in notice


PAGE_BEFORE_SIDEBAR = """
import streamlit as st
from ui.common import seed
st.session_state["seed_seen_by_the_page"] = seed()
from ui.sidebar import render_sidebar
render_sidebar(defer_default=True, compact=True, data_used=False)
"""


@pytest.mark.parametrize("link_seed,seed", [("5", 5), ("-4", 0), (None, sb.DEFAULT_SEED)])
def test_a_page_drawn_before_the_sidebar_uses_the_links_seed(link_seed, seed):
    """Pages that use no data are drawn before the sidebar (app.py); on a shared link's first run the
    page must draw with the link's seed, the one the sidebar then shows, not the default."""
    at = AppTest.from_string(PAGE_BEFORE_SIDEBAR, default_timeout=60)
    if link_seed is not None:
        at.query_params["seed"] = link_seed
    at.run()
    assert not at.exception
    assert at.session_state["seed_seen_by_the_page"] == seed == at.session_state["seed"]
    at.run()
    assert at.session_state["seed_seen_by_the_page"] == seed


def test_lookalike_replaces_the_upload():
    at = _upload(_app(), "incomes.csv", CSV)
    at.sidebar.toggle(key="data_lookalike").set_value(True).run()
    ds = _ds(at)
    assert ds.source == "synthetic" and not ds.confidential and ds.n == 4  # same public n


def test_sidebar_rerun_is_fast():
    at = _app()
    at.run()
    times = []
    for v in (1.0, 1.1, 0.9):
        t = time.perf_counter()
        at.sidebar.slider(key="data_sigma").set_value(v).run()
        times.append(time.perf_counter() - t)
    print("sidebar reruns (s):", [round(x, 3) for x in times])  # timings live in benchmarks/
    assert not at.exception


def test_second_upload_without_the_chosen_column():
    at = _upload(_app(), "a.csv", CSV)
    at.sidebar.selectbox(key="data_col").set_value("id").run()
    at.sidebar.file_uploader(key="data_upload").set_value(("b.csv", b"wage\n5\n6\n7\n", "text/csv")).run()
    assert not at.exception and not _errors(at)
    assert _ds(at).column == "wage" and _ds(at).n == 3
    at.sidebar.file_uploader(key="data_upload").set_value(None).run()  # file removed: default data
    assert not at.exception and _ds(at).source == "synthetic"


def test_dataset_key_always_names_the_data_in_use():
    at = _app()
    assert at.session_state["_data_memo"][0] == sb.DEFAULT_KEY
    _choose(at, sb.SRC_EXAMPLE)
    assert at.session_state["_data_memo"][0] == ("example", "engel")
    _choose(at, sb.SRC_UPLOAD)  # no file yet -> default data, default key
    assert at.session_state["_data_memo"][0] == sb.DEFAULT_KEY
    at.sidebar.file_uploader(key="data_upload").set_value(("a.csv", CSV, "text/csv")).run()
    key = at.session_state["_data_memo"][0]
    assert key[0] == "upload" and key[2:] == ("a.csv", "income", "refuse")
    at.sidebar.file_uploader(key="data_upload").set_value(("b.csv", b"\x00binary", "text/csv")).run()
    assert _errors(at) and at.session_state["_data_memo"][0] == sb.DEFAULT_KEY  # fallback -> default key
    assert at.session_state["_data_memo"][1] is _ds(at)


# ---------------------------------------------------------------------------------------------
# The landing page's sidebar defers the default data (cold start)
# ---------------------------------------------------------------------------------------------

DEFERRING_HARNESS = """
import streamlit as st
from ui.sidebar import render_sidebar, current_dataset, current_dataset_key
render_sidebar(defer_default=True)
st.write(f"key: {current_dataset_key()}")
if st.button("use the data", key="use"):
    st.write(f"built: {current_dataset().name} n={current_dataset().n}")
"""


def test_deferred_default_builds_nothing_until_a_choice():
    at = AppTest.from_string(DEFERRING_HARNESS, default_timeout=60)
    at.run()
    assert not at.exception and not _errors(at)
    assert isinstance(_ds(at), sb.DeferredDataset) and "_data_memo" not in at.session_state
    assert _ds(at).key == sb.DEFAULT_KEY and _ds(at).source == "synthetic" and _ds(at).n == sb.DEFAULT_N
    assert any("key: " + str(sb.DEFAULT_KEY) in m.value for m in at.markdown)
    assert any("default synthetic data" in c.value for c in at.sidebar.caption)
    assert at.sidebar.selectbox(key="data_source").value == sb.SRC_LOGNORMAL
    assert any("Planning is not release" in i.value for i in at.info)
    at.run()  # a rerun with the defaults the sidebar wrote in the URL: still nothing built
    assert isinstance(_ds(at), sb.DeferredDataset)
    at.button(key="use").click().run()  # a page asking for data gets the built default
    assert any(m.value == f"built: {sb.default_dataset().name} n={sb.DEFAULT_N}" for m in at.markdown)
    _choose(at, sb.SRC_EXAMPLE)  # a real choice is built at once
    assert _ds(at).n == 235 and at.session_state["_data_memo"][0] == ("example", "engel")
    _choose(at, sb.SRC_LOGNORMAL)  # back to the default: the memo names the data in use
    assert at.session_state["_data_memo"][0] == sb.DEFAULT_KEY and _ds(at).name == sb.default_dataset().name


@pytest.mark.parametrize(
    "query",
    [{"data_source": "no such source"}, {"data_n": "-5"}, {"data_source": sb.SRC_TWO_POINT, "data_gini": "0.6"}],
)
def test_deferred_default_still_builds_what_the_url_asks_for(query):
    """A URL with anything but the defaults is built on the first run (an unknown source -> the default
    data; an n out of range -> the nearest allowed n, with a notice)."""
    at = AppTest.from_string(DEFERRING_HARNESS, default_timeout=60)
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception
    ds = _ds(at)
    if "data_gini" in query:
        assert ds.bounds is not None and "Gini 0.600" in ds.name
    elif "data_n" in query:  # below the smallest n: the smallest n, and the reader is told
        assert ds.n == 100 and any("the smallest allowed is 100, used instead" in w.value for w in at.warning)
    else:
        assert ds.name == sb.default_dataset().name


def test_landing_page_imports_no_pandas_or_data_modules():
    """A plain first visit of app.py (the landing page) in a fresh process: the page and the sidebar are
    drawn without importing pandas, scipy, the page experiments or a plotly figure module of ours (cold start;
    the sidebar reads dpcore.data's catalogue, which imports pandas and scipy only when data are read)."""
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    code = (
        "import sys\n"
        "from streamlit.testing.v1 import AppTest\n"
        f"at = AppTest.from_file({str(root / 'app.py')!r}, default_timeout=120)\n"
        "at.run()\n"
        "assert not at.exception, [e.value for e in at.exception]\n"
        "assert at.title[0].value.startswith('What differential privacy does')\n"
        "heavy = ['pandas', 'scipy', 'dpcore.views']\n"
        "figures = [name for name in sys.modules if name == 'ui.figure_specs'\n"
        "           or (name.startswith('ui.') and name.endswith('.plots'))]  # ui/<page>/plots.py\n"
        "print(sorted([name for name in sys.modules if name in heavy] + figures))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout
