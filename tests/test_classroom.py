"""Class mode storage (dpcore.classroom): SQLite by default, PostgreSQL by URL."""
from __future__ import annotations

import os
import sqlite3

import pytest

from dpcore import classroom as classroom_lib
from dpcore.validation import DPInputError


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request, tmp_path):
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path}/sub/classroom.db"
    import psycopg

    server = request.getfixturevalue("pg_server")
    name = f"classroom_{os.getpid()}_{tmp_path.name.replace('-', '_').lower()}"[:60]
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    return server.rsplit("/", 1)[0] + "/" + name


def test_two_sessions_pool_their_guesses(url):
    teacher = classroom_lib.open_classroom(url)
    code = teacher.create_session()
    other = teacher.create_session()
    assert code != other and len(code) == 6
    # two students, each with their own connection to the store (two app sessions)
    alice, bob = classroom_lib.open_classroom(url), classroom_lib.open_classroom(url)
    for i, correct in enumerate([True, True, False]):
        alice.record_guess(code, round_id=i, mechanism="count", epsilon=1.0, guess=True, correct=correct)
    for i, correct in enumerate([True, False]):
        bob.record_guess(code.lower(), round_id=100 + i, mechanism="count", epsilon=1.0, guess=False, correct=correct)
    bob.record_guess(code, round_id=7, mechanism="gini", epsilon=0.5, guess=True, correct=True)
    bob.record_guess(other, round_id=8, mechanism="count", epsilon=1.0, guess=True, correct=False)
    pooled = {(r.mechanism, r.epsilon): r for r in teacher.pooled(code)}
    assert pooled[("count", 1.0)].guesses == 5 and pooled[("count", 1.0)].correct == 3
    assert pooled[("count", 1.0)].rate == pytest.approx(0.6)
    assert pooled[("gini", 0.5)].guesses == 1
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
    code = store.create_session()
    store.record_guess(code, round_id=3, mechanism="mean", epsilon=2.0, guess=False, correct=True)
    with sqlite3.connect(path) as conn:
        columns = [row[1] for row in conn.execute("PRAGMA table_info(dpcore_classroom_guesses)")]
        sessions = [row[1] for row in conn.execute("PRAGMA table_info(dpcore_classroom_sessions)")]
    assert columns == ["code", "round_id", "mechanism", "epsilon", "guess", "correct"]
    assert sessions == ["code"]


def test_default_location_is_beside_the_ledger(tmp_path, monkeypatch):
    monkeypatch.delenv(classroom_lib.ENV_VAR, raising=False)
    monkeypatch.setenv("DPCORE_LEDGER_URL", f"sqlite:///{tmp_path}/ledger/ledger.db")
    assert classroom_lib.default_url() == f"sqlite:///{tmp_path}/ledger/classroom.db"
    monkeypatch.setenv(classroom_lib.ENV_VAR, f"sqlite:///{tmp_path}/x.db")
    assert classroom_lib.default_url() == f"sqlite:///{tmp_path}/x.db"
    with pytest.raises(DPInputError):
        classroom_lib.open_classroom("mysql://x")
