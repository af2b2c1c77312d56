"""AppTest tests of the "Play the attacker" page (app_pages/attacker.py)."""

from __future__ import annotations

import re

import pytest
from support import assert_clean, metrics, open_page, page_text, query_param

from dpcore import classroom as classroom_lib
from dpcore.views import attacker as attacker_lib

PAGE = "app_pages/attacker.py"


def _seeds_with_secrets(mechanism: str, epsilon: float) -> tuple[int, int]:
    setup = attacker_lib.game_setup(mechanism, epsilon)
    by_secret: dict[bool, int] = {}
    seed = 1
    while len(by_secret) < 2:
        by_secret.setdefault(attacker_lib.play_round(setup, seed).confidential_secret, seed)
        seed += 1
    return by_secret[True], by_secret[False]


def _screen(at) -> str:
    return page_text(at) + "\n" + repr(sorted(metrics(at).items())) + "\n" + repr([b.label for b in at.button])


def _masked(at, view: attacker_lib.AttackerView) -> str:
    """The screen with the round number and the released numbers replaced by placeholders."""
    text = _screen(at)
    text = re.sub(r"Published (.*?): \*\*[^*]+\*\*", r"Published \1: **<release>**", text)
    text = re.sub(r"bin: \*\*-?\d+\*\*", "bin: **<count>**", text)
    return text.replace(f"Round {view.round.round_seed} ", "Round <seed> ")


def test_opens_with_defaults():
    at = open_page(PAGE)
    assert_clean(at)
    assert at.title[0].value == "Play the attacker"
    text = page_text(at)
    assert "Neighbouring datasets" in text and "e^ε / (1 + e^ε)" in text
    assert [b.label for b in at.button][:2] == ["Guess A: the target is in", "Guess B: the target is not in"]


@pytest.mark.parametrize("mechanism", attacker_lib.MECHANISMS)
def test_nothing_secret_on_screen_before_the_guess(mechanism):
    """Two rounds whose secrets differ show the same screen, except the release and the round number:
    the screen before a guess is a function of public information and the release only."""
    seed_in, seed_out = _seeds_with_secrets(mechanism, 1.0)
    screens = []
    for seed in (seed_in, seed_out):
        at = open_page(PAGE, atk_mech=mechanism, atk_eps="1.0", atk_round=str(seed))
        assert_clean(at)
        view = attacker_lib.attacker_view(mechanism, 1.0, seed)
        text = _screen(at)
        for word in ("The answer was", "You were", "optimal attacker compares", "guessed"):
            assert word not in text, word
        screens.append(_masked(at, view))
    assert screens[0] == screens[1]


def test_guess_reveals_answer_and_scores():
    seed_in, _ = _seeds_with_secrets("count", 2.0)
    at = open_page(PAGE, atk_mech="count", atk_eps="2.0", atk_round=str(seed_in))
    at.button(key="atk_guess_in").click().run()
    assert_clean(at)
    assert any("You were **right**" in s.value for s in at.success)
    assert metrics(at)["You"] == "100.0%"  # every rate with one decimal, as the class table shows it
    assert metrics(at)["DP bound e^ε/(1+e^ε)"] == f"{attacker_lib.attacker_bound(2.0):.1%}"
    at.button(key="atk_next").click().run()
    assert_clean(at)
    assert at.query_params["atk_round"] in (str(seed_in + 1), [str(seed_in + 1)])
    assert "Guess A: the target is in" in [b.label for b in at.button]


@pytest.mark.parametrize("mechanism", attacker_lib.MECHANISMS)
def test_each_statistic_and_epsilon(mechanism):
    at = open_page(PAGE, atk_mech=mechanism)
    assert_clean(at)
    at.select_slider(key="atk_eps").set_value(0.25).run()
    assert_clean(at)


def test_computer_plays_1000_rounds():
    at = open_page(PAGE, atk_mech="count_geometric", atk_eps="1.0")
    at.button(key="atk_sim").click().run()
    assert_clean(at)
    text = page_text(at)
    assert "played **1,000 rounds**" in text
    assert f"the DP bound is **{attacker_lib.attacker_bound(1.0):.1%}**" in text


def test_bad_class_code_shows_error(tmp_path, monkeypatch):
    monkeypatch.setenv(classroom_lib.ENV_VAR, f"sqlite:///{tmp_path}/classroom.db")
    at = open_page(PAGE)
    at.text_input(key="atk_code_input").input("ZZ").run()
    assert_clean(at, expected_error="session code")


@pytest.fixture
def class_store(tmp_path, monkeypatch):
    monkeypatch.setenv(classroom_lib.ENV_VAR, f"sqlite:///{tmp_path}/classroom.db")
    return classroom_lib.open_classroom()


def _class_texts(at) -> str:
    return page_text(at) + "\n" + "\n".join(str(e.value) for e in at.error)


@pytest.mark.parametrize(
    "code,says",
    [
        ("ZZZZZZ", "no class session has the code ZZZZZZ"),  # well formed, but no teacher made it
        ("<SCRIPT>alert(1)</SCRIPT>", "that is not a session code"),
        ("K7QX2O", "that is not a session code"),  # O is not in the code alphabet
    ],
)
def test_a_code_from_the_url_is_checked_before_joining(class_store, code, says):
    """One clear error, no "Joined"/"You are in" text, nothing of the raw input echoed, no guess pooled."""
    at = open_page(PAGE, atk_class=code)
    assert_clean(at, expected_error=says)
    assert len(at.error) == 1
    text = _class_texts(at)
    assert "Joined" not in text and "Class session **" not in text
    assert "<script" not in text.lower() and "alert(1)" not in text and "K7QX2O" not in text
    assert query_param(at, "atk_class") is None  # the refused code left the address
    at.button(key="atk_guess_in").click().run()
    assert_clean(at)
    assert class_store.pooled("ZZZZZZ") == []


def test_a_typed_code_joins_only_an_existing_session(class_store):
    code = class_store.create_session()
    at = open_page(PAGE)
    at.text_input(key="atk_code_input").input("ZZZZZZ").run()
    assert_clean(at, expected_error="no class session has the code ZZZZZZ")
    assert "Class session **" not in page_text(at)
    at.text_input(key="atk_code_input").input(code.lower()).run()
    assert_clean(at)
    assert f"Class session **{code}**" in page_text(at) and query_param(at, "atk_class") == code


def test_class_mode_pools_guesses(class_store):
    code = class_store.create_session("mean")
    guessed = {True: 0, False: 0}
    for _ in range(2):  # two students, each one guess "A" on their round 1
        student = open_page(PAGE, atk_eps="1.0", atk_class=code)
        assert_clean(student)
        assert student.selectbox(key="atk_mech").value == "mean"  # the session's statistic by default
        student.button(key="atk_guess_in").click().run()
        assert_clean(student)
        guessed[any("You were **right**" in s.value for s in student.success)] += 1
    teacher = open_page(PAGE, atk_role="teacher", atk_class=code)
    assert_clean(teacher)
    table = teacher.dataframe[-1].value
    assert list(table["guesses"]) == [2] and list(table["right"]) == [guessed[True]]
    assert "statistic" not in table.columns  # one statistic per session, named in the projector view
    assert f"**2 guesses** from the class so far, **{guessed[True]}** right" in page_text(teacher)


def _release_line(at) -> str:
    return next(m.value for m in at.markdown if m.value.startswith("Published"))


def test_students_of_a_class_get_their_own_rounds(class_store):
    """Round 1 of two students is two different rounds (seeds from the class code and each browser
    session), while without a class round 1 is the same round for everyone."""
    code = class_store.create_session("mean")
    in_class = [_release_line(open_page(PAGE, atk_class=code, atk_round="1")) for _ in range(2)]
    alone = [_release_line(open_page(PAGE, atk_mech="mean", atk_round="1")) for _ in range(2)]
    assert in_class[0] != in_class[1]
    assert alone[0] == alone[1]


def test_another_statistic_is_practice_and_not_pooled(class_store):
    code = class_store.create_session()  # count_geometric, as the lessons use
    at = open_page(PAGE, atk_class=code, atk_mech="gini")
    assert_clean(at)
    assert any("Practice" in w.value for w in at.warning)
    at.button(key="atk_guess_in").click().run()
    assert_clean(at)
    assert class_store.pooled(code) == []


def test_teacher_projector_view_has_the_full_link_a_qr_code_and_live_results(class_store):
    code = class_store.create_session()
    at = open_page(PAGE, atk_role="teacher", atk_class=code)
    assert_clean(at)
    link = f"http://localhost:8501/attacker?atk_class={code}"  # AppTest has no browser URL: the fallback host
    assert link in [c.value for c in at.code]
    images = at.get("image")
    assert images and images[0].proto.imgs[0].url.startswith("data:image/svg+xml;base64,")
    assert "update by themselves every" in page_text(at)
    # the table is the first thing after the projector's text: before the game's controls
    assert "No guesses in this session yet." in page_text(at)


def test_teacher_creates_a_session_with_its_statistic(class_store):
    at = open_page(PAGE, atk_role="teacher")
    at.selectbox(key="atk_class_mech").set_value("mean").run()
    at.button(key="atk_create").click().run()
    assert_clean(at)
    code = query_param(at, "atk_class")
    assert class_store.session(code) == classroom_lib.ClassSession(code, "mean")
    assert at.selectbox(key="atk_mech").value == "mean"


def test_one_round_is_said_in_the_singular():
    at = open_page(PAGE, atk_mech="count", atk_round="3")
    at.button(key="atk_guess_in").click().run()
    text = page_text(at)
    assert "After 1 round your rate" in text and "1 rounds" not in text


def _pooled_table_app():
    import streamlit as st  # noqa: F401 - runs inside the AppTest script

    from dpcore.classroom import PooledRate
    from ui.attacker.views import pooled_table

    pooled_table([PooledRate("count", 1.0, 18, 11)])


def test_the_class_table_gives_every_rate_with_one_decimal():
    """The projected class results: the summary line and every rate of the table as 61.1% (it mixed 61.11%,
    82.7% and 61%)."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(_pooled_table_app, default_timeout=60)
    at.run()
    assert not at.exception
    assert "right (61.1%)" in " ".join(m.value for m in at.markdown)
    table = at.dataframe[0].value
    rates = [table[c].iloc[0] for c in ("class rate", "95% low", "95% high", "bound")]
    assert rates[0] == "61.1%" and all(re.fullmatch(r"\d{1,3}\.\d%", r) for r in rates), rates


def _reload(at, page: str = PAGE):
    """A reload: a new session opened with the address the browser shows."""
    return open_page(page, **{k: (v[0] if isinstance(v, list) else v) for k, v in at.query_params.items()})


def test_a_students_score_and_rounds_survive_a_reload_and_a_lesson_link(class_store):
    """A student's score and round were lost on a reload (the session went) and sent back to round 1 by a lesson
    link: the rounds played and the student id are in the address (a reload replays the same rounds, answered),
    the round is kept, and a lesson link in a class session names no round."""
    from ui.lessons import views as lessons_views

    code = class_store.create_session("mean")
    student = open_page(PAGE, atk_eps="1.0", atk_class=code)
    first_round = _release_line(student)
    student.button(key="atk_guess_in").click().run()
    assert metrics(student)["You"] in ("0.0%", "100.0%")
    again = _reload(student)
    assert_clean(again)
    assert metrics(again)["You"] == metrics(student)["You"]  # the score, from the address
    back = open_page(
        PAGE,
        atk_eps="1.0",
        atk_class=code,
        atk_round="1",
        atk_sid=query_param(again, "atk_sid"),
        atk_played=query_param(again, "atk_played"),
    )
    assert _release_line(back) == first_round and "The answer was" in page_text(back)  # the same round 1
    step = next(s for lesson in lessons_views.LESSONS for s in lesson.steps if s.page == "app_pages/attacker.py")
    assert "atk_round" not in lessons_views.step_params(step, class_store.session(code))


def test_the_score_without_a_class_survives_a_reload():
    at = open_page(PAGE, atk_mech="count", atk_eps="1.0", atk_round="3")
    at.button(key="atk_guess_in").click().run()
    assert_clean(at)
    assert "You" in metrics(at) and query_param(at, "atk_played")
    assert metrics(_reload(at))["You"] == metrics(at)["You"]
