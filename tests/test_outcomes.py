"""One-shot outcomes (ui.notices.outcome_to_show): what a click did stays on the page until a run that drew it
has completed. A run stopped halfway (Streamlit stops a run at its next element when the browser sends
another message, e.g. a double click's second click) must not lose "Released." or a refusal."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parent.parent

SCRIPT = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
import streamlit as st
from ui.notices import outcome_to_show, run_completed

st.session_state.setdefault("made", 0)
if st.button("make"):
    st.session_state["made"] += 1
    st.session_state["outcome"] = "made " + str(st.session_state["made"])
shown = outcome_to_show("outcome")
if shown is not None:
    st.success(shown)
if st.session_state.get("stop_halfway"):
    st.stop()  # a run that does not reach its end, as one stopped by the browser's next message
run_completed()
"""


def _successes(at: AppTest) -> list[str]:
    return [s.value for s in at.success]


def test_an_outcome_is_shown_until_a_completed_run_showed_it():
    at = AppTest.from_string(SCRIPT, default_timeout=30).run()
    assert _successes(at) == []
    at.button[0].click().run()
    assert _successes(at) == ["made 1"]
    at.run()  # the next run (any widget) no longer says it
    assert _successes(at) == []
    assert "outcome" not in at.session_state


def test_a_run_stopped_halfway_does_not_lose_the_outcome():
    at = AppTest.from_string(SCRIPT, default_timeout=30).run()
    at.session_state["stop_halfway"] = True
    at.button[0].click().run()
    assert _successes(at) == ["made 1"]
    at.session_state["stop_halfway"] = False
    at.run()  # drawn again: the stopped run's elements were dropped by the browser
    assert _successes(at) == ["made 1"]
    at.run()
    assert _successes(at) == []


def test_a_new_outcome_under_the_same_key_is_not_taken_for_the_old_one():
    at = AppTest.from_string(SCRIPT, default_timeout=30).run()
    at.button[0].click().run()
    assert _successes(at) == ["made 1"]
    at.button[0].click().run()  # the old one was shown by a completed run; the new one is said
    assert _successes(at) == ["made 2"]
    at.run()
    assert _successes(at) == []


FRAGMENT_RUN_SCRIPT = f"""
import sys
sys.path.insert(0, {str(REPO)!r})
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx
from ui.notices import outcome_to_show

st.session_state.setdefault("outcome", "made")
# what a fragment's own rerun sets (AppTest always runs the whole script): app.py's run_completed does not run
get_script_run_ctx().fragment_ids_this_run = ["a fragment"]
shown = outcome_to_show("outcome")
st.success(str(shown))
st.write(str("outcome" in st.session_state))
"""


def test_in_a_fragment_rerun_the_outcome_is_taken_at_once():
    at = AppTest.from_string(FRAGMENT_RUN_SCRIPT, default_timeout=30).run()
    assert _successes(at) == ["made"]
    assert [m.value for m in at.markdown] == ["False"], "taken: no completed run would mark it shown"
