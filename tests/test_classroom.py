"""Class mode storage (dpcore.classroom): SQLite by default, PostgreSQL by URL."""

from __future__ import annotations

import sqlite3

import pytest
from support.postgres import fresh_database

from dpcore import classroom as classroom_lib
from dpcore.validation import DPInputError


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/sub/classroom.db"
    return fresh_database(request.getfixturevalue("pg_server"), "classroom")


def test_two_sessions_pool_their_guesses(url):
    teacher = classroom_lib.open_classroom(url)
    code = teacher.create_session("count")
    other = teacher.create_session("count")
    assert code != other and len(code) == 6
    # two students, each with their own connection to the store (two app sessions)
    alice, bob = classroom_lib.open_classroom(url), classroom_lib.open_classroom(url)
    for i, correct in enumerate([True, True, False]):
        alice.record_guess(code, round_id=i, mechanism="count", epsilon=1.0, guess=True, correct=correct)
    for i, correct in enumerate([True, False]):
        bob.record_guess(code.lower(), round_id=100 + i, mechanism="count", epsilon=1.0, guess=False, correct=correct)
    bob.record_guess(code, round_id=7, mechanism="count", epsilon=0.5, guess=True, correct=True)
    bob.record_guess(other, round_id=8, mechanism="count", epsilon=1.0, guess=True, correct=False)
    pooled = {(r.mechanism, r.epsilon): r for r in teacher.pooled(code)}
    assert pooled[("count", 1.0)].guesses == 5 and pooled[("count", 1.0)].correct == 3
    assert pooled[("count", 1.0)].rate == pytest.approx(0.6)
    assert pooled[("count", 0.5)].guesses == 1
    assert [r.guesses for r in teacher.pooled(other)] == [1]


def test_unknown_code_and_bad_input_refused(url):
    store = classroom_lib.open_classroom(url)
    with pytest.raises(DPInputError, match="no class session"):
        store.record_guess("ABCDEF", round_id=1, mechanism="count", epsilon=1.0, guess=True, correct=True)
    code = store.create_session()
    with pytest.raises(DPInputError):
        store.record_guess("AB", round_id=1, mechanism="count", epsilon=1.0, guess=True, correct=True)
    with pytest.raises(DPInputError):
        store.record_guess(code, round_id=-1, mechanism="count", epsilon=1.0, guess=True, correct=True)
    with pytest.raises(DPInputError):
        store.record_guess(code, round_id=1, mechanism="count", epsilon=0.0, guess=True, correct=True)
    assert store.pooled(code) == []


def test_sqlite_stores_nothing_but_the_guess(tmp_path):
    path = tmp_path / "c.db"
    store = classroom_lib.open_classroom(path)
    code = store.create_session("mean")
    store.record_guess(code, round_id=3, mechanism="mean", epsilon=2.0, guess=False, correct=True)
    with sqlite3.connect(path) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(dpcore_classroom_guesses)")]
        sessions = [row[1] for row in conn.execute("PRAGMA table_info(dpcore_classroom_sessions)")]
    assert columns == ["code", "round_id", "mechanism", "epsilon", "guess", "correct"]
    assert sessions == ["code", "mechanism"]


def test_a_session_pools_one_statistic(url):
    """The session carries its statistic (default: the discrete Laplace count, which reaches the bound);
    a guess at another statistic is refused, so the teacher's table never splits."""
    store = classroom_lib.open_classroom(url)
    default, means = store.create_session(), store.create_session("mean")
    assert store.session(default) == classroom_lib.ClassSession(default, "count_geometric")
    assert store.session(means.lower()).mechanism == "mean"
    assert store.session("ZZZZZZ") is None  # a well-formed code that no teacher made
    with pytest.raises(DPInputError, match="pools guesses at count_geometric only"):
        store.record_guess(default, round_id=1, mechanism="count", epsilon=1.0, guess=True, correct=True)
    with pytest.raises(DPInputError, match="statistic is one of"):
        store.create_session("median")
    store.record_guess(default, round_id=1, mechanism="count_geometric", epsilon=1.0, guess=True, correct=True)
    assert [(r.mechanism, r.guesses) for r in store.pooled(default)] == [("count_geometric", 1)]


def test_a_store_from_before_session_statistics_is_upgraded(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE dpcore_classroom_sessions (code TEXT PRIMARY KEY)")
        conn.execute("INSERT INTO dpcore_classroom_sessions VALUES ('K7QX2M')")
    store = classroom_lib.open_classroom(path)
    assert store.session("K7QX2M") == classroom_lib.ClassSession("K7QX2M", None)
    store.record_guess("K7QX2M", round_id=1, mechanism="gini", epsilon=1.0, guess=True, correct=False)
    assert store.session(store.create_session("mean")).mechanism == "mean"


def test_code_refusal_names_the_rule_not_the_input():
    for bad in ("<script>alert(1)</script>", "ZZ", "K7QX2O", "K7QX2M7"):
        with pytest.raises(DPInputError) as info:
            classroom_lib.normalise_code(bad)
        assert bad.upper() not in str(info.value).upper() and "6 characters" in str(info.value)
    assert classroom_lib.normalise_code(" k7qx-2m ") == "K7QX2M"


def test_each_student_gets_their_own_rounds():
    """Rounds are seeded by (code, student id, round number): two students on round 1 see different
    rounds, one student replays the same round from its number, seeds fit the store's 63 bits."""
    alice, bob = classroom_lib.new_student_id(), classroom_lib.new_student_id()
    assert alice != bob and alice.isalnum()
    seeds = {classroom_lib.student_round_seed("K7QX2M", who, r) for who in (alice, bob) for r in range(1, 51)}
    assert len(seeds) == 100 and all(0 <= s < 2**63 for s in seeds)
    assert classroom_lib.student_round_seed("k7qx2m", alice, 3) == classroom_lib.student_round_seed("K7QX2M", alice, 3)
    assert classroom_lib.student_round_seed("K7QX2N", alice, 3) != classroom_lib.student_round_seed("K7QX2M", alice, 3)
    with pytest.raises(DPInputError):
        classroom_lib.student_round_seed("K7QX2M", "<b>", 1)
    with pytest.raises(DPInputError):
        classroom_lib.student_round_seed("K7QX2M", alice, -1)


def test_default_location_is_beside_the_ledger(tmp_path, monkeypatch):
    monkeypatch.delenv(classroom_lib.ENV_VAR, raising=False)
    monkeypatch.setenv("DPCORE_LEDGER_URL", f"sqlite:///{tmp_path}/ledger/ledger.db")
    assert classroom_lib.default_url() == f"sqlite:///{tmp_path}/ledger/classroom.db"
    monkeypatch.setenv(classroom_lib.ENV_VAR, f"sqlite:///{tmp_path}/x.db")
    assert classroom_lib.default_url() == f"sqlite:///{tmp_path}/x.db"
    with pytest.raises(DPInputError):
        classroom_lib.open_classroom("mysql://x")
