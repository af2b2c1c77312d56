"""Class mode of the attacker game in a real headless Chromium, as a teacher and a student use it.

The teacher makes a session and projects the top of the attacker page: the full address students
open (the browser's own address, not localhost:8501), its QR code (an inline SVG made on the server)
and the class's results. A student opens that address, guesses, goes to the Lessons page by the
sidebar's link (which carries no query parameters) and follows a lesson link back into the game:
the class code must survive both. The teacher's results must then change by themselves, through
fragment runs only (the ``run_every`` fragment: a whole-page rerun every few seconds per teacher
would be wasted work on a class server). Uses the shared ``app_server`` and ``tab`` fixtures
(tests/conftest.py); skipped when chromium or playwright is missing.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlparse

import pytest
from quality_support import chromium_available, visible_problems, wait_for_app_idle
from support.browser import open_tab, run_and_wait

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not chromium_available(),
        reason="needs /usr/bin/chromium and playwright (apt-get install chromium; .ci/run does it)",
    ),
]

MAIN = '[data-testid="stMain"]'
NAV_LESSONS = '[data-testid="stSidebarNav"] a[href$="/lessons"]'
LESSON_LINK = f'{MAIN} [data-testid="stPageLink-NavLink"]'


class RunLog:
    """The script runs a tab's server reports finished, each with the fragments it ran (none: a whole run)."""

    def __init__(self, page):
        self.runs: list[tuple[str, ...]] = []
        self._page = page
        page.on("websocket", self._websocket)

    def _websocket(self, websocket) -> None:
        websocket.on("framereceived", self._frame)

    def close(self) -> None:
        """Stop listening (the tab is the process's kept page: later tests would pay for parsing its frames)."""
        self._page.remove_listener("websocket", self._websocket)

    def _frame(self, payload) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if not isinstance(payload, (bytes, bytearray)):
            return
        msg = ForwardMsg()
        try:
            msg.ParseFromString(payload)
        except Exception:  # not a ForwardMsg
            return
        if msg.WhichOneof("type") == "script_finished":
            self.runs.append(tuple(msg.metadata.run.fragment_ids))


def _main_text(page) -> str:
    return page.inner_text(MAIN)


def _query(page) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlparse(page.evaluate("location.href")).query).items()}


@pytest.fixture
def teacher_runs(tab):
    """The runs of ``tab`` (the teacher's), logged from its first page load to the end of the test."""
    runs = RunLog(tab.page)
    yield runs
    runs.close()


def test_class_session_from_projector_to_student_and_back(app_server, browser, tab, teacher_runs):
    teacher, teacher_errors = tab.page, tab.errors
    teacher.set_default_timeout(60_000)
    runs = teacher_runs
    teacher.goto(f"{app_server.url}/attacker?atk_role=teacher")
    wait_for_app_idle(teacher, timeout_ms=90_000)
    run_and_wait(teacher, teacher.get_by_role("button", name="Create a new session code").click)
    code = _query(teacher).get("atk_class", "")
    assert re.fullmatch(r"[A-Z2-9]{6}", code), teacher.evaluate("location.href")
    link = f"{app_server.url}/attacker?atk_class={code}"
    assert link in _main_text(teacher)  # the browser's own address, for students to type
    qr = teacher.query_selector(f'{MAIN} img[src^="data:image/svg+xml"]')
    assert qr is not None and qr.bounding_box()["width"] >= 150  # large enough to scan from a projector
    assert "No guesses in this session yet." in _main_text(teacher)

    with open_tab(browser, timeout_ms=60_000) as student_tab:
        student = student_tab.page
        student.goto(link)
        wait_for_app_idle(student, timeout_ms=90_000)
        assert f"Class session {code}" in _main_text(student)
        run_and_wait(student, student.get_by_role("button", name="Guess A: the target is in").click)
        # the sidebar's link to the Lessons page has no query: the session comes back from session_state
        run_and_wait(student, student.locator(NAV_LESSONS).click)
        student.wait_for_function("code => location.href.includes('atk_class=' + code)", arg=code)
        hrefs = [a.get_attribute("href") for a in student.query_selector_all(LESSON_LINK)]
        assert hrefs and all(f"atk_class={code}" in href for href in hrefs), hrefs
        attacker_link = next(
            a for a in student.query_selector_all(LESSON_LINK) if "attacker?" in a.get_attribute("href")
        )
        run_and_wait(student, attacker_link.click)
        student.wait_for_function("() => location.pathname.endsWith('/attacker')")
        assert _query(student).get("atk_class") == code
        assert f"Class session {code}" in _main_text(student)
        assert "The answer was" in _main_text(student)  # the lesson's round 1 is the round already played
        run_and_wait(student, student.get_by_role("button", name="Next round").click)
        run_and_wait(student, student.get_by_role("button", name="Guess B: the target is not in").click)
        assert not student_tab.all_problems(), student_tab.all_problems()

    # the teacher touched nothing since: the table refreshes itself, by fragment runs only
    whole_runs_before = sum(1 for fragments in runs.runs if not fragments)
    teacher.wait_for_function(
        "() => document.querySelector('[data-testid=\"stMain\"]').innerText"
        ".includes('2 guesses from the class so far')",
        timeout=60_000,
    )
    assert sum(1 for fragments in runs.runs if not fragments) == whole_runs_before, runs.runs
    assert any(runs.runs[-3:]), runs.runs
    assert not visible_problems(teacher) and not teacher_errors, (visible_problems(teacher), teacher_errors)


def test_a_bad_code_in_a_link_is_one_error_and_no_session(app_server, tab):
    page = tab.page
    page.goto(f"{app_server.url}/attacker?atk_class=%3Cb%3EZZ%3C/b%3E")
    wait_for_app_idle(page, timeout_ms=90_000)
    problems = visible_problems(page)
    assert len(problems) == 1 and "not a session code" in problems[0], problems
    text = _main_text(page)
    assert "Class session" not in text and "<b>" not in text and "ZZ" not in text
    assert "atk_class" not in _query(page)


NAV_ATTACKER = '[data-testid="stSidebarNav"] a[href$="/attacker"]'
PROJECTOR = "Students open this address (or scan the code)"


def test_the_teacher_keeps_the_projector_view_across_pages_and_reloads(app_server, tab):
    """A teacher goes to the Lessons page by the sidebar (to print the handouts), reloads there, and comes back
    to the game by the sidebar, then reloads the game: the projector view each time, never a student's."""
    page = tab.page
    page.set_default_timeout(60_000)
    page.goto(f"{app_server.url}/attacker?atk_role=teacher")
    wait_for_app_idle(page, timeout_ms=90_000)
    run_and_wait(page, page.get_by_role("button", name="Create a new session code").click)
    assert PROJECTOR in _main_text(page)
    run_and_wait(page, page.locator(NAV_LESSONS).click)
    assert _query(page).get("atk_role") == "teacher", page.evaluate("location.href")
    page.reload()
    wait_for_app_idle(page, timeout_ms=90_000)
    run_and_wait(page, page.locator(NAV_ATTACKER).click)
    assert PROJECTOR in _main_text(page), "a student's view after the Lessons page and a reload there"
    assert "count towards the class" not in _main_text(page)
    page.reload()
    wait_for_app_idle(page, timeout_ms=90_000)
    assert PROJECTOR in _main_text(page), "a student's view after a reload of the game"
    assert not tab.all_problems(), tab.all_problems()
