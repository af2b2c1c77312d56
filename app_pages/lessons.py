"""Lessons: ready lesson paths for a 50-minute class, a printable handout, and a before/after view.

Thin page: the lessons (preset links + questions + answers, the class session's code in every link
when there is one) and the two handouts (students', teacher's) live in :mod:`ui.lessons.views`; the
before/after section is one cached call of :func:`dpcore.views.gini.gini_view` per ε, drawn with
the Gini page's own figure builder on fixed axes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import streamlit as st

from dpcore import defaults
from dpcore.views import gini as gini_experiments
from ui import classroom
from ui.common import guard, privacy_note, qp_select_slider, qp_toggle, seed
from ui.lessons import views as lessons_views
from ui.sidebar import current_dataset, current_dataset_key

EPS_OPTIONS = [0.05, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 5.0]
GINI_DEFAULTS: dict[str, Any] = {
    "gamma": defaults.GINI_GAMMA,
    "lower": defaults.INCOME_LOWER,
    "upper": defaults.INCOME_UPPER,
    "upper_epsilon": 0.0,
    "calibration": defaults.GINI_CALIBRATION,
    "method": "exact",
    "prior": "uniform",
}


@st.cache_resource(show_spinner=False, max_entries=64)
def _panel(data_key: tuple, _values: np.ndarray, epsilon: float, seed_value: int) -> tuple:
    """One side of the before/after view, once per (data, ε, seed) in this process and shared by every
    session (moving one ε recomputes one side, and a seen ε builds nothing): the Gini page's
    view and its figure spec (None when saturated). ``data_key`` is the sidebar's recipe key of ``_values``."""
    view = gini_experiments.gini_view(_values, epsilon=epsilon, seed=seed_value, **GINI_DEFAULTS)
    return view, None if view.saturated else lessons_views.releases_spec(view)


@st.fragment
def _before_after_section() -> None:
    """The two ε sliders and the charts: a slider move reruns only this section."""
    c1, c2 = st.columns(2)
    eps_before = float(qp_select_slider("ε before", "les_eps_a", EPS_OPTIONS, 0.1, container=c1))
    eps_after = float(qp_select_slider("ε after", "les_eps_b", EPS_OPTIONS, 4.0, container=c2))
    ds = current_dataset()
    if ds.n < 2:
        st.error(f"The Gini needs at least 2 records; the sidebar data have {ds.n}.")
        return
    panels = None
    with guard("the before/after view"):
        panels = tuple(_panel(current_dataset_key(), ds.values, eps, seed()) for eps in (eps_before, eps_after))
    if panels is not None:
        if any(view.saturated for view, _ in panels):
            st.info("At one of these ε the releases are pure noise on this data (see the Gini page); pick a larger ε.")
        else:
            lessons_views.before_after(panels, (eps_before, eps_after))


st.title("Lessons: teach differential privacy in one class")
st.markdown(
    "Four ready lessons for a 50-minute class. Each is a sequence of links that open a page with its "
    "settings preset (charts where ε changes the spread open with **fixed axes**, so the change is visible), "
    "a question to ask the class, and the answer to look for. Students can follow the same links on their "
    "own devices. Print a handout below (the students' has no answers), or project this page."
)
privacy_note(
    "as on each linked page (replace one person; n public).",
    "the lesson settings themselves; the game and the synthetic data are public.",
)

klass = classroom.current_class()  # a class session joined on the attacker page (or in this URL)
classroom.keep_role()  # a teacher printing the handouts is still a teacher back in the game, also after a reload
classroom.show_class_message()
if klass is not None:
    st.info(
        f"Class session **{klass.code}**: every link below keeps it, and the attacker game's steps play the "
        "session's statistic, so the class's guesses pool into one table."
    )
# in a class session students open this page too: the answers start hidden there (the teacher's handout has them)
show_answers = qp_toggle(
    "Show the answers to look for",
    "les_answers",
    klass is None,
    help="Switch off when projecting this page to the class.",
)
for item in lessons_views.LESSONS:
    with st.container(border=True):
        lessons_views.lesson(item, show_answers=show_answers, class_session=klass)

st.header("Handouts")
st.markdown(
    "Two versions: the **student handout** has the links and the questions only; the **teacher's "
    "handout** adds the answer to look for under each question."
    + (f" The links join class session {klass.code}." if klass is not None else "")
)
if "les_base" not in st.session_state:
    st.session_state["les_base"] = classroom.app_base_url()  # the address this browser uses
base_url = st.text_input(
    "Address of this app (for the links in the handouts)",
    key="les_base",
    help="The address students type, e.g. https://dp.example.edu",
)
if not base_url.startswith(("http://", "https://")):
    st.error("The address must start with http:// or https:// (e.g. http://localhost:8501).")
else:
    lessons_views.handout_downloads(base_url, class_session=klass)

st.header("Before / after: the Gini chart at two ε")
st.markdown(
    "The same data, the same mechanism, two privacy levels, the same axes. Left: smooth-sensitivity "
    "releases; right (in each chart): the textbook Laplace mechanism."
)
_before_after_section()
