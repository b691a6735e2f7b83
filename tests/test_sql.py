"""The read rules as SQL text: one place, testable without a database."""

from __future__ import annotations

import sqlite3

import pytest

from memvara import Scope
from memvara.store import STATES, TimeQuery
from memvara.store.sqlite import _sql


def test_scope_visible_inherits_and_fails_closed() -> None:
    sql, params = _sql.scope_visible(Scope(user="alice", session="s1"))
    assert sql == ("s_tenant = '' AND s_user IN ('', ?) AND s_agent = ''"
                   " AND s_session IN ('', ?)")
    assert params == ["alice", "s1"]


def test_scope_exact_and_subtree() -> None:
    assert _sql.scope_exact(Scope(user="a"))[1] == ["", "a", "", ""]
    assert _sql.scope_subtree(Scope(user="a")) == ("s_tenant = ? AND s_user = ?", ["", "a"])
    assert _sql.scope_subtree(Scope()) == ("1", [])


def test_all_states_compile_to_the_belief_floor() -> None:
    tq = TimeQuery(known_at=5, valid_at=7)
    assert _sql.states_filter(STATES, tq) == ("recorded_at <= ?", [5])


def test_visibility_without_valid_time_is_belief_only() -> None:
    sql, params = _sql.visible(TimeQuery(known_at=5, valid_at=None))
    assert "valid_from" not in sql and params == [5, 5]


def _rows(where: str, params: list[object]) -> list[int]:
    conn = sqlite3.connect(":memory:")
    conn.executescript(
        "CREATE TABLE claims (id INTEGER, recorded_at, invalidated_at, valid_from, valid_to,"
        " valid_to_known_at, revised DEFAULT 0);"
        "CREATE TABLE claim_closures (claim_rowid, known_at, valid_to);"
        # 1: live; 2: ended at 20 (learned at 25); 3: retired at 30; 4: scheduled from 50
        "INSERT INTO claims VALUES (1, 0, NULL, 0, NULL, NULL, 0), (2, 0, NULL, 0, 20, 25, 0),"
        " (3, 0, 30, 0, NULL, NULL, 0), (4, 0, NULL, 50, NULL, NULL, 0);"
    )
    try:
        return [r[0] for r in conn.execute(f"SELECT id FROM claims WHERE {where} ORDER BY id", params)]
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("known", "valid", "states", "expected"),
    [
        (40, 40, ["live"], [1, 3][:1]),
        (40, 40, ["ended"], [2]),
        (40, 40, ["retired"], [3]),
        (40, 40, ["live", "ended"], [1, 2]),
        (40, 40, list(STATES), [1, 2, 3, 4]),
        (22, 22, ["live"], [1, 2, 3]),   # the end of 2 is not yet learned at 22
        (22, 22, ["ended"], []),
        (40, None, ["ended"], [2]),
    ],
)
def test_state_predicates_against_rows(known: int, valid: int | None, states: list[str],
                                       expected: list[int]) -> None:
    sql, params = _sql.states_filter(states, TimeQuery(known_at=known, valid_at=valid))
    assert _rows(sql, params) == expected
