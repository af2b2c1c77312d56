"""Link (URL query parameter) values the qp_* widgets of ui.common cannot show: never replaced silently.

A value out of range takes the nearest allowed value, a value between the options of a numeric choice the
nearest option, and an unreadable value the default; each time the top of the main area says what the link
asked for and what is used instead (``ui.common.main_notice`` into the area app.py opens). Every widget
kind is checked through a small harness script; the Gini page's own ε and target links as a user sent them.
"""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest
from support import assert_clean, open_page

HARNESS = """
import streamlit as st
from ui.common import open_notice_area, qp_number, qp_radio, qp_select_slider, qp_selectbox, qp_slider, qp_toggle
open_notice_area()
st.title("A page")
c1, c2 = st.columns(2)
st.session_state["shown"] = dict(
    t_slider=qp_slider("Epsilon (ε)", "t_slider", 0.05, 5.0, 1.0, 0.05, container=c1),
    t_k=qp_slider("Number of groups k", "t_k", 2, 40, 9, container=c2),
    t_eps=qp_select_slider("Privacy loss ε", "t_eps", [0.1, 0.5, 1.0, 5.0], 1.0),
    t_noise=qp_selectbox("Noise distribution", "t_noise", ["cauchy", "laplace"], "cauchy"),
    t_method=qp_radio("Sensitivity bound", "t_method", ["exact", "fast"], "exact"),
    t_target=qp_number("Your target", "t_target", 0.01, min_value=0.0005, max_value=0.5, step=0.001),
    t_round=qp_number("Round", "t_round", 1, min_value=0, max_value=100, step=1),
    t_axes=qp_toggle("Fixed axes", "t_axes", False),
)
"""

#: (parameter, value in the link, value used, what the notice says)
CASES = [
    ("t_slider", "1000", 5.0, "“Epsilon (ε)” = 1000; the largest allowed is 5, used instead."),
    ("t_slider", "-1", 0.05, "“Epsilon (ε)” = -1; the smallest allowed is 0.05, used instead."),
    ("t_slider", "abc", 1.0, "“Epsilon (ε)” = abc, which is not a number; 1 (the default) is used instead."),
    ("t_slider", "nan", 1.0, "which is not a number"),
    ("t_k", "100", 40, "the largest allowed is 40, used instead."),
    ("t_k", "2.6", 3, "“Number of groups k” = 2.6, which is not a whole number; 3 is used instead."),
    ("t_eps", "1000", 5.0, "“Privacy loss ε” = 1000; the largest allowed is 5, used instead."),
    ("t_eps", "0.7", 0.5, "= 0.7, which is not one of the choices; the nearest, 0.5, is used instead."),
    ("t_eps", "many", 1.0, "= many, which is not one of the choices; 1 (the default) is used instead."),
    (
        "t_noise",
        "student_t",
        "cauchy",
        "“Noise distribution” = student_t, which is not one of the choices; cauchy (the default)",
    ),
    ("t_method", "slow", "exact", "“Sensitivity bound” = slow, which is not one of the choices"),
    ("t_target", "0.9", 0.5, "“Your target” = 0.9; the largest allowed is 0.5, used instead."),
    ("t_round", "-3", 0, "the smallest allowed is 0, used instead."),
    ("t_round", "1e400", 100, "the largest allowed is 100, used instead."),
    ("t_axes", "maybe", False, "“Fixed axes” = maybe, which is neither on (1) nor off (0); off (the default)"),
]


def _run(**query: str) -> AppTest:
    at = AppTest.from_string(HARNESS, default_timeout=60)
    for key, value in query.items():
        at.query_params[key] = value
    at.run()
    assert_clean(at)
    return at


@pytest.mark.parametrize("key,raw,used,notice", CASES, ids=[f"{c[0]}={c[1]}" for c in CASES])
def test_a_link_value_the_widget_cannot_show_is_replaced_with_a_notice(key, raw, used, notice):
    at = _run(**{key: raw})
    assert at.session_state["shown"][key] == used
    assert at.query_params[key] == (str(used) if not isinstance(used, bool) else "0")  # the link now says it
    notices = [w.value for w in at.main.warning]
    assert len(notices) == 1 and notice in notices[0], notices
    # the notice sits at the top of the main area, above the page (not beside the widget)
    assert at.main.children[0].children[0].value == notices[0]


def test_valid_link_values_give_no_notice_and_a_notice_is_said_once():
    at = _run(
        t_slider="2.5",
        t_k="12",
        t_eps="1",
        t_noise="laplace",
        t_method="fast",
        t_target="0.02",
        t_round="7",
        t_axes="1",
    )
    assert not at.warning
    assert at.session_state["shown"] == dict(
        t_slider=2.5, t_k=12, t_eps=1.0, t_noise="laplace", t_method="fast", t_target=0.02, t_round=7, t_axes=True
    )
    at = _run(t_eps="1000")
    assert len(at.warning) == 1
    at.run()  # the next run keeps the value the notice named, and says nothing more
    assert not at.warning and at.session_state["shown"]["t_eps"] == 5.0


def test_gini_page_link_with_eps_1000_and_target_0_9():
    """The two links of the report: gini_eps=1000 was silently 1.0 and gini_target=0.9 silently 0.01."""
    at = open_page("app_pages/gini.py", gini_eps="1000", gini_target="0.9")
    assert_clean(at)
    assert at.select_slider(key="gini_eps").value == 5.0
    assert at.number_input(key="gini_target").value == 0.5
    notices = " ".join(w.value for w in at.warning)
    assert "“Privacy loss ε (log scale)” = 1000; the largest allowed is 5, used instead." in notices, notices
    assert "= 0.9; the largest allowed is 0.5, used instead." in notices, notices


def _visit_elsewhere_and_back(at, away: str, back: str):
    """What the sidebar's page links do: another page, then this page again, each opened with no query."""
    for page in (away, back):
        for key in list(at.query_params):
            del at.query_params[key]
        at.switch_page(page)
        at.run()
    return at


def test_a_page_keeps_its_settings_across_a_visit_elsewhere():
    """The Gini page's ε (and any setting moved from its default) is the one it had after a visit to another page
    by the sidebar (it went back to the default); a link naming the setting still wins, and a setting left at its
    default keeps following the default."""
    at = open_page("app_pages/gini.py")
    at.select_slider(key="gini_eps").set_value(0.5).run()
    at.radio(key="gini_cal").set_value("paper").run()
    _visit_elsewhere_and_back(at, "app_pages/lessons.py", "app_pages/gini.py")
    assert_clean(at)
    assert at.select_slider(key="gini_eps").value == 0.5 and at.radio(key="gini_cal").value == "paper"
    assert at.query_params.get("gini_eps") in ("0.5", ["0.5"])  # back in the address, for a reload or a link
    _visit_elsewhere_and_back(at, "app_pages/about.py", "app_pages/lessons.py")
    at.query_params["gini_eps"] = "2.0"  # a link to the page naming ε (a lesson's): the link's value
    at.switch_page("app_pages/gini.py").run()
    assert at.select_slider(key="gini_eps").value == 2.0 and at.radio(key="gini_cal").value == "paper"
