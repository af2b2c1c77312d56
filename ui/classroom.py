"""Class mode of the attacker game in the app: joining a session, the teacher's projector view, live results.

A student's class session lives in ``st.session_state`` (:data:`JOINED_KEY`) as well as in the URL
(``atk_class``): the sidebar's page links carry no query parameters, so the URL alone would lose the
session on the first page change; every page that makes links (the attacker page, the Lessons page)
puts the code back into the URL and into the links it draws. The teacher's role (``atk_role``) is kept
the same way on those two pages (:func:`keep_role`). A code from the URL or a text box is
checked against the code alphabet and the stored sessions before anything says "joined", and a
refusal never repeats what was typed. The storage is :mod:`dpcore.classroom`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast
from urllib.parse import urlsplit, urlunsplit

import streamlit as st

from dpcore import classroom as classroom_lib
from dpcore.validation import DPInputError
from ui.common import PERSISTENT_VALUES, write_url_value

#: URL query parameter of the class code (also read by the Lessons page)
CODE_PARAM = "atk_class"
#: URL query parameter and widget key of the attacker page's "I am" (the teacher sees the projector view)
ROLE_PARAM = "atk_role"
ROLES = ("student", "teacher")
#: session_state: the ClassSession this browser session joined (survives page changes)
JOINED_KEY = "atk_joined_class"
#: session_state: this browser session's random student id (never stored: see dpcore.classroom)
STUDENT_ID_KEY = "atk_student_id"
#: URL query parameter of the student id (a reload keeps the student's rounds: their seeds derive from it)
STUDENT_PARAM = "atk_sid"
#: session_state: the rounds this browser played (the score's source), and their URL query parameter
HISTORY_KEY = "atk_history"
PLAYED_PARAM = "atk_played"
#: the most rounds the URL keeps (about 30 characters each)
MAX_PLAYED_IN_LINK = 200
_MESSAGE_KEY = "atk_class_message"
CODE_INPUT_KEY = "atk_code_input"
#: seconds between two refreshes of the teacher's results (a fragment: only the table reruns)
LIVE_REFRESH_SECONDS = 5
ATTACKER_PATH = "attacker"
FALLBACK_BASE_URL = "http://localhost:8501"


@st.cache_resource(show_spinner=False, max_entries=4)
def _open_store(url: str) -> classroom_lib.Classroom:
    return classroom_lib.open_classroom(url)


def store() -> classroom_lib.Classroom:
    """The class-mode store of this process (``dpcore.classroom.default_url()``)."""
    return _open_store(classroom_lib.default_url())


def app_base_url() -> str:
    """The app's address as the browser sees it (``st.context.url`` without the page path), so the link a
    teacher projects is the one students can open; the Host header when the browser has not said yet
    (AppTest, the first run), else http://localhost:8501."""
    url = st.context.url
    if url:
        parts = urlsplit(url)
        path = parts.path.rstrip("/")
        for page_path in (ATTACKER_PATH, "lessons"):  # the pages that draw class links
            if path.endswith("/" + page_path):
                path = path[: -len(page_path) - 1]
                break
        return urlunsplit((parts.scheme, parts.netloc, path, "", ""))
    host = st.context.headers.get("Host") if st.context.headers else None
    return f"http://{host}" if host else FALLBACK_BASE_URL


def join_link(code: str, base_url: str) -> str:
    """The address students open to join session ``code`` (the session carries its statistic)."""
    return f"{base_url.rstrip('/')}/{ATTACKER_PATH}?{CODE_PARAM}={classroom_lib.normalise_code(code)}"


def _lookup(text: str) -> classroom_lib.ClassSession:
    """The stored session a typed or linked code names; a DPInputError whose text is safe to show."""
    code = classroom_lib.normalise_code(text)
    session = store().session(code)
    if session is None:
        raise DPInputError(
            f"no class session has the code {code}: check the code on the board "
            "(the teacher makes codes on the Play the attacker page)"
        )
    return session


def _join(session: classroom_lib.ClassSession | None) -> None:
    """Join ``session`` (None: leave): session_state, the URL and the student's code box agree. Called
    before the code box is drawn (or from its own callback), when its value may still be set."""
    if session is None:
        st.session_state.pop(JOINED_KEY, None)
        if CODE_PARAM in st.query_params:
            del st.query_params[CODE_PARAM]
    else:
        st.session_state[JOINED_KEY] = session
        st.query_params[CODE_PARAM] = session.code
    st.session_state[CODE_INPUT_KEY] = session.code if session is not None else ""


def current_class() -> classroom_lib.ClassSession | None:
    """The session of this browser session: a new code from the URL is checked first (one error message on
    refusal, and the session is left), otherwise the one joined before, whose code goes back into the URL.
    Touches the store only when the URL names a code not joined yet."""
    joined: classroom_lib.ClassSession | None = st.session_state.get(JOINED_KEY)
    requested = st.query_params.get(CODE_PARAM)
    if requested is not None and (joined is None or requested != joined.code):
        try:
            joined = _lookup(str(requested))
        except (ValueError, TypeError) as exc:
            st.session_state[_MESSAGE_KEY] = f"Not joined to a class: {exc}."
            joined = None
        _join(joined)
    elif joined is not None and requested is None:
        st.query_params[CODE_PARAM] = joined.code
    return joined


def current_role() -> str:
    """This browser session's role in class mode: the attacker page's radio (kept for the session when
    another page is shown: ``ui.common``'s persistent values), else the URL's (a reload), else student."""
    role = st.session_state.get(ROLE_PARAM, st.session_state.get(PERSISTENT_VALUES, {}).get(ROLE_PARAM))
    if role in ROLES:
        return str(role)
    linked = st.query_params.get(ROLE_PARAM)
    return str(linked) if linked in ROLES else ROLES[0]


def keep_role() -> str:
    """On a class page that does not draw the role's radio (Lessons, where a teacher prints the handouts):
    the role stays this session's and goes into the URL, so a teacher who reloads there or comes back to the
    game is still shown the projector view, not a student's; a student's progress goes there too
    (:func:`keep_progress`)."""
    role = current_role()
    st.session_state.setdefault(PERSISTENT_VALUES, {})[ROLE_PARAM] = role
    write_url_value(ROLE_PARAM, role, is_default=role == ROLES[0])
    keep_progress()
    return role


def show_class_message() -> None:
    """The one message of the last join attempt (a refusal), shown until a completed run has shown it."""
    from ui.notices import outcome_to_show

    message = outcome_to_show(_MESSAGE_KEY)
    if message:
        st.error(message)


def student_id() -> str:
    """This student's id: the session's, else the link's (a reload), else a new one; kept in the URL."""
    state = st.session_state
    if STUDENT_ID_KEY not in state:
        linked = st.query_params.get(STUDENT_PARAM)
        valid = isinstance(linked, str) and 1 <= len(linked) <= 64 and linked.isalnum()
        state[STUDENT_ID_KEY] = linked if valid else classroom_lib.new_student_id()
    write_url_value(STUDENT_PARAM, state[STUDENT_ID_KEY], is_default=False)
    return str(state[STUDENT_ID_KEY])


def _played_text(history: list[dict]) -> str:
    """The rounds as link text: mechanism~ε~round seed (base 36)~guess,right,optimal-right (1/0), joined by dots."""
    return ".".join(
        f"{h['mechanism']}~{h['epsilon']:g}~{int(h['round']):x}~"
        f"{int(bool(h['guess']))}{int(bool(h['correct']))}{int(bool(h['optimal_correct']))}"
        for h in history[-MAX_PLAYED_IN_LINK:]
    )


def _played_from_text(text: str, mechanisms: Any) -> list[dict]:
    """The rounds a link names (malformed entries are left out: the score is the player's own)."""
    rounds = []
    for entry in str(text).split(".")[:MAX_PLAYED_IN_LINK]:
        parts = entry.split("~")
        if len(parts) != 4 or parts[0] not in mechanisms or len(parts[3]) != 3 or set(parts[3]) - {"0", "1"}:
            continue
        try:
            epsilon, round_seed = float(parts[1]), int(parts[2], 16)
        except ValueError:
            continue
        guess, correct, optimal = (c == "1" for c in parts[3])
        rounds.append(
            {
                "mechanism": parts[0],
                "epsilon": epsilon,
                "round": round_seed,
                "guess": guess,
                "correct": correct,
                "optimal_correct": optimal,
            }
        )
    return rounds


def played_rounds(mechanisms: Any) -> list[dict]:
    """The rounds this browser played (the list the page appends to): the session's, else the link's (a reload
    of the game or of the Lessons page keeps a student's score)."""
    state = st.session_state
    if HISTORY_KEY not in state:
        linked = st.query_params.get(PLAYED_PARAM)
        state[HISTORY_KEY] = _played_from_text(linked, mechanisms) if linked else []
    return state[HISTORY_KEY]


def keep_progress() -> None:
    """A student's progress in the URL of the class pages (the game and the Lessons page): the rounds played and,
    in a class session, the student id (so a reload keeps the score and replays the same rounds)."""
    history = st.session_state.get(HISTORY_KEY) or []
    write_url_value(PLAYED_PARAM, _played_text(history), is_default=not history)
    if STUDENT_ID_KEY in st.session_state:
        write_url_value(STUDENT_PARAM, st.session_state[STUDENT_ID_KEY], is_default=False)


def _join_typed_code() -> None:
    """on_change of the student's code box: join, leave (empty box) or say why not."""
    typed = str(st.session_state.get(CODE_INPUT_KEY) or "")
    if not typed.strip():
        _join(None)
        return
    try:
        session = _lookup(typed)
    except (ValueError, TypeError) as exc:
        st.session_state[_MESSAGE_KEY] = f"Not joined to a class: {exc}."
        return
    _join(session)
    if session.mechanism:
        st.session_state["atk_mech"] = session.mechanism


def student_controls(session: classroom_lib.ClassSession | None) -> None:
    if CODE_INPUT_KEY not in st.session_state:
        st.session_state[CODE_INPUT_KEY] = session.code if session else ""
    st.text_input(
        "Session code from your teacher",
        key=CODE_INPUT_KEY,
        max_chars=12,
        on_change=_join_typed_code,
        help="6 characters, e.g. K7QX2M; empty the box to leave the class.",
    )


def teacher_controls(mechanisms: list[str], labels: dict[str, str]) -> None:
    """The statistic of a new session and the button that makes it."""
    left, right = st.columns([2, 1], vertical_alignment="bottom")
    mechanism = cast(  # streamlit types selectbox's choice None when mypy targets 3.10 (its typing.Never is 3.11+)
        str,
        left.selectbox(
            "Statistic the class plays",
            mechanisms,
            key="atk_class_mech",
            index=mechanisms.index(classroom_lib.DEFAULT_CLASS_MECHANISM),
            format_func=lambda name: labels.get(name, name),
            help="One statistic per session, so the class's guesses pool into one rate. The "
            "discrete Laplace count reaches the bound e^ε/(1+e^ε) exactly.",
        ),
    )
    if right.button("Create a new session code", key="atk_create"):
        try:
            code = store().create_session(mechanism)
        except (ValueError, TypeError) as exc:
            st.error(f"Cannot create a class session: {exc}")
            return
        _join(classroom_lib.ClassSession(code, mechanism))
        st.session_state["atk_mech"] = mechanism
        st.rerun()


@st.cache_data(show_spinner=False, max_entries=16)
def qr_svg(text: str) -> str:
    """A QR code of ``text`` as inline SVG, made here by segno (no outside service sees the class link)."""
    import segno

    return segno.make(text, error="m").svg_inline(scale=8, border=2, dark="#000000", light="#ffffff")


def projector(
    session: classroom_lib.ClassSession, base_url: str, mechanism_label: str, pooled_table: Callable[[list], None]
) -> None:
    """For the teacher to project: the code, the full link, its QR code, and the class's results, which
    refresh by themselves every few seconds (only the results fragment reruns, not the page)."""
    link = join_link(session.code, base_url)
    with st.container(border=True):
        text, code_image = st.columns([3, 2])
        text.markdown(f"### Class session **{session.code}**")
        text.markdown(f"Students open this address (or scan the code), then play. Statistic: **{mechanism_label}**.")
        text.code(link, language=None, wrap_lines=True)  # a long host name wraps instead of scrolling
        code_image.image(
            qr_svg(link), width=240, caption="Scan to join the class", alt="QR code of the class's address shown here"
        )
        st.markdown(f"**The class's results** (update by themselves every {LIVE_REFRESH_SECONDS} seconds)")
        _live_results(session.code, pooled_table)


@st.fragment(run_every=LIVE_REFRESH_SECONDS)
def _live_results(code: str, pooled_table: Callable[[list], None]) -> None:
    try:
        rows = store().pooled(code)
    except (ValueError, TypeError) as exc:
        st.error(f"Cannot read the class results: {exc}")
        return
    pooled_table(rows)
