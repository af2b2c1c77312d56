"""AppTest tests of the "Play the attacker" page (app_pages/attacker.py)."""
from __future__ import annotations

import re

import pytest

from dpcore import classroom as classroom_lib
from dpcore.experiments import attacker as attacker_lib
from support import assert_clean, metrics, open_page, page_text

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
    assert metrics(at)["You"] == "100%"
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


def test_class_mode_pools_guesses(tmp_path, monkeypatch):
    monkeypatch.setenv(classroom_lib.ENV_VAR, f"sqlite:///{tmp_path}/classroom.db")
    code = classroom_lib.open_classroom().create_session()
    seed_in, seed_out = _seeds_with_secrets("mean", 1.0)
    for seed, guess_key in ((seed_in, "atk_guess_in"), (seed_out, "atk_guess_in")):  # one right, one wrong
        student = open_page(PAGE, atk_mech="mean", atk_eps="1.0", atk_round=str(seed), atk_class=code)
        student.button(key=guess_key).click().run()
        assert_clean(student)
    teacher = open_page(PAGE, atk_role="teacher", atk_class=code)
    assert_clean(teacher)
    table = teacher.dataframe[-1].value
    assert list(table["guesses"]) == [2] and list(table["right"]) == [1]
