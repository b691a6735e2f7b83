"""The near-duplicate check's memory of each scope's latest turns (``_write/recent.py``).

Through ``add()`` (tests/test_add.py) a repeated turn is skipped; here the ring itself:
what it holds after more turns than it keeps, roles and the window, another embedder's
width, and a scope it no longer holds."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt
import pytest

from memvara import Scope, SQLiteStore
from memvara._write.recent import RecentTurns

ANN = Scope(user="ann")
MINUTE = 60_000_000


def unit(i: int, dim: int = 8) -> npt.NDArray[np.float32]:
    """A row of unit vectors, each orthogonal to every other ``i``."""
    out = np.zeros((1, dim), dtype=np.float32)
    out[0, i % dim] = 1.0
    return out


@pytest.fixture
def recent() -> Iterator[RecentTurns]:
    store = SQLiteStore()
    yield RecentTurns(store, turns=3, scopes=2, threshold=0.97)
    store.close()


def test_a_scope_with_no_turns_holds_nothing_near(recent: RecentTurns) -> None:
    assert recent.near(ANN, ["user"], [0], unit(0), MINUTE) == [False]


def test_a_turn_is_near_a_remembered_one_of_its_role_within_the_window(recent: RecentTurns) -> None:
    recent.near(ANN, ["user"], [0], unit(0), MINUTE)  # the scope is read (empty) and held
    recent.remember(ANN, ["user"], [0], unit(0))
    assert recent.near(ANN, ["user"], [MINUTE], unit(0), MINUTE) == [True]
    assert recent.near(ANN, ["assistant"], [MINUTE], unit(0), MINUTE) == [False]  # another role
    assert recent.near(ANN, ["user"], [MINUTE + 1], unit(0), MINUTE) == [False]  # outside the window
    assert recent.near(ANN, ["user"], [0], unit(1), MINUTE) == [False]  # another text


def test_the_ring_keeps_the_latest_turns_only(recent: RecentTurns) -> None:
    recent.near(ANN, ["user"], [0], unit(0), MINUTE)
    recent.remember(ANN, ["user"] * 2, [0, 0], np.vstack([unit(0), unit(1)]))
    recent.remember(ANN, ["user"] * 3, [0, 0, 0], np.vstack([unit(2), unit(3), unit(4)]))  # wraps
    several = np.vstack([unit(i) for i in range(5)])
    assert recent.near(ANN, ["user"] * 5, [0] * 5, several, MINUTE) == [False, False, True, True, True]
    recent.remember(ANN, ["user"] * 4, [0] * 4, np.vstack([unit(i) for i in (5, 6, 7, 0)]))  # more than it keeps
    assert recent.near(ANN, ["user"] * 4, [0] * 4, np.vstack([unit(i) for i in (5, 6, 7, 0)]),
                       MINUTE) == [False, True, True, True]


def test_a_scope_not_held_is_read_again_from_the_store(recent: RecentTurns) -> None:
    recent.remember(ANN, ["user"], [0], unit(0))  # never read: nothing held to add to
    assert recent.near(ANN, ["user"], [0], unit(0), MINUTE) == [False]  # the store holds no turn
    for user in ("bob", "cy"):  # two more scopes evict ann's (it holds two)
        recent.near(Scope(user=user), ["user"], [0], unit(0), MINUTE)
    recent.remember(ANN, ["user"], [0], unit(0))
    assert recent.near(ANN, ["user"], [0], unit(0), MINUTE) == [False]


def test_another_width_starts_the_scope_afresh_and_clear_forgets_all(recent: RecentTurns) -> None:
    recent.near(ANN, ["user"], [0], unit(0), MINUTE)
    recent.remember(ANN, ["user"], [0], unit(0))
    assert recent.near(ANN, ["user"], [0], unit(0, dim=16), MINUTE) == [False]  # another embedder
    recent.remember(ANN, ["user"], [0], unit(0, dim=16))
    assert recent.near(ANN, ["user"], [0], unit(0, dim=16), MINUTE) == [True]
    recent.clear()
    assert recent.near(ANN, ["user"], [0], unit(0, dim=16), MINUTE) == [False]
