"""Play the attacker: guess a secret from one DP release; see the bound e^ε/(1+e^ε) hold.

Thin page: class mode (:mod:`ui.classroom`, at the top: the teacher's projector view and live
results, or the student's session) -> controls -> one cached call to
:func:`dpcore.views.attacker.attacker_view` -> renderers in :mod:`ui.attacker.views`. Nothing
secret is drawn before the round has a guess. In a class session each student's round seed comes from
the class code, a per-browser-session id and the round number (``dpcore.classroom.student_round_seed``),
and guesses are pooled at the session's statistic only.
"""

from __future__ import annotations

import streamlit as st

from dpcore import classroom as classroom_lib
from dpcore.views import attacker as attacker_lib
from ui import classroom
from ui.attacker import views as attacker_views
from ui.common import guard, privacy_note, qp_number, qp_radio, qp_select_slider, qp_selectbox, run_on_button, seed
from ui.notices import outcome_to_show

EPS_OPTIONS = [0.1, 0.25, 0.5, 1.0, 2.0, 3.0, 5.0]
HISTORY = attacker_views.HISTORY_KEY


@st.cache_data(show_spinner=False, max_entries=64)
def _view(mechanism: str, epsilon: float, round_seed: int) -> attacker_lib.AttackerView:
    return attacker_lib.attacker_view(mechanism, epsilon, round_seed)


@st.cache_data(show_spinner=False, max_entries=32)
def _simulate(mechanism: str, epsilon: float, rounds: int, sim_seed: int) -> attacker_lib.SuccessSummary:
    return attacker_lib.simulate_optimal_attacker(mechanism, epsilon, rounds=rounds, seed=sim_seed)


st.title("Play the attacker")
projector_slot = st.container()  # a teacher's projector view goes first: it is the part of the page projected
attacker_views.intro()
privacy_note(
    "data sets A and B differ in **one person** (the target replaced by a stand-in; n is the same).",
    "everything you see above the release: both data sets, their true statistics, ε and the noise law. "
    "Only the coin (A or B) and the noise draw are secret.",
)

# ---- class mode (the teacher's projector view is drawn into projector_slot, above the introduction) ---
klass = classroom.current_class()
with st.expander(
    "Class mode: pool the class's guesses", expanded=klass is None and classroom.current_role() == "teacher"
):
    st.markdown(
        "The teacher creates a session code; students open this page with the code (link or QR code) "
        "and play; the teacher sees the class's pooled success rate. Stored per guess: the code, the "
        "round's seed, the statistic, ε, the guess and whether it was right — nothing about the student."
    )
    role = qp_radio("I am", classroom.ROLE_PARAM, list(classroom.ROLES), "student", horizontal=True, persistent=True)
    if role == "teacher":
        classroom.teacher_controls(list(attacker_lib.MECHANISMS), attacker_views.MECHANISM_LABELS)
    else:
        classroom.student_controls(klass)
classroom.show_class_message()
class_mechanism = klass.mechanism if klass is not None else None
if klass is not None and role == "teacher":
    with projector_slot:
        classroom.projector(
            klass,
            classroom.app_base_url(),
            attacker_views.MECHANISM_LABELS.get(class_mechanism or "", "any statistic"),
            attacker_views.pooled_table,
        )
in_class = klass is not None and role == "student"

# ---- controls -----------------------------------------------------------------------------------
c1, c2, c3 = st.columns(3)
mechanism = qp_selectbox(
    "Statistic released",
    "atk_mech",
    list(attacker_lib.MECHANISMS),
    class_mechanism or "count",
    container=c1,
    format_func=attacker_views.MECHANISM_LABELS.get,
)
eps = float(
    qp_select_slider(
        "Privacy loss ε", "atk_eps", EPS_OPTIONS, 1.0, container=c2, help="Smaller ε = more noise = harder to guess."
    )
)
round_number = int(
    qp_number(
        "Round",
        "atk_round",
        1,
        min_value=0,
        max_value=10**12,
        step=1,
        container=c3,
        help="Your rounds in a class session are your own; otherwise the round number is "
        "its seed: share it to replay the same coin and noise.",
    )
)
pooled = in_class and class_mechanism in (None, mechanism)
if in_class and klass is not None:
    attacker_views.class_note(klass.code, attacker_views.MECHANISM_LABELS.get(class_mechanism or "", ""), pooled)
round_seed = (
    classroom_lib.student_round_seed(klass.code, classroom.student_id(), round_number)
    if in_class and klass is not None
    else round_number
)

# ---- the one view call ----------------------------------------------------------------------------
found = None
with guard("this round"):
    found = _view(str(mechanism), eps, round_seed)
if found is None:
    st.stop()
view = found

history: list[dict] = classroom.played_rounds(attacker_lib.MECHANISMS)  # the session's, or a reloaded link's
classroom.keep_progress()  # the rounds (and a class student's id) in the URL: a reload keeps the score
round_key = (view.setup.mechanism, view.setup.epsilon, view.round.round_seed)
answered = {(h["mechanism"], h["epsilon"], h["round"]): h for h in history}


def _record(guess: bool) -> None:
    if round_key in {(h["mechanism"], h["epsilon"], h["round"]) for h in st.session_state[HISTORY]}:
        return  # one guess per round
    correct = guess == view.confidential_secret
    st.session_state[HISTORY].append(
        {
            "mechanism": round_key[0],
            "epsilon": round_key[1],
            "round": round_key[2],
            "guess": guess,
            "correct": correct,
            "optimal_correct": view.round.optimal_guess == view.confidential_secret,
        }
    )
    if pooled and klass is not None:
        try:
            classroom.store().record_guess(
                klass.code,
                round_id=round_key[2],
                mechanism=round_key[0],
                epsilon=round_key[1],
                guess=guess,
                correct=correct,
            )
        except ValueError as exc:
            st.session_state["atk_class_error"] = str(exc)


def _next_round() -> None:
    st.session_state["atk_round"] = int(st.session_state.get("atk_round", round_number)) + 1


attacker_views.candidates(view)
attacker_views.release(view, class_round=(round_number, klass.code) if in_class and klass is not None else None)
if round_key in answered:
    attacker_views.reveal(view, answered[round_key]["guess"], _next_round)
else:
    st.markdown("**Your guess:** which data set was used?")
    attacker_views.guess_buttons(_record)
if (class_error := outcome_to_show("atk_class_error")) is not None:
    st.error(f"Your guess was not sent to the class: {class_error}")
attacker_views.score(history, view.setup.mechanism, view.setup.epsilon)

# ---- the computer plays ----------------------------------------------------------------------------
st.header("Let the computer play 1,000 rounds")
st.markdown(
    "The **Bayes-optimal attacker** guesses A exactly when the release is at least as likely under A as "
    "under B (a likelihood-ratio test using the noise density). No strategy does better on average."
)
summary = run_on_button(
    "Let the computer play 1,000 rounds",
    "atk_sim",
    lambda: _simulate(str(mechanism), eps, 1000, seed()),
    what="the simulation",
)
if summary is not None and (summary.mechanism, summary.epsilon) == (mechanism, eps):
    attacker_views.simulation(summary)
