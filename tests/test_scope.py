"""Scoping: tenant > user > agent > session, with inheritance, failing closed."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from memvara import Claim, InvalidArgumentError, Memvara, Scope
from memvara.store import STATES

from .conftest import JAN, JUN, Clock


def objects(claims: list[Claim]) -> list[str]:
    return sorted(c.object for c in claims)


@pytest.fixture
def layered(clock: Clock) -> Iterator[Memvara]:
    """One fact at each level of alice's scope, plus siblings and strangers."""
    mem = Memvara(clock=clock, tenant="t1")
    mem.remember("x", "likes", "tenant-wide", user=None)
    mem.remember("x", "likes", "alice-user", user="alice")
    mem.remember("x", "likes", "alice-agent", user="alice", agent="helper")
    mem.remember("x", "likes", "alice-session", user="alice", agent="helper", session="s1")
    mem.remember("x", "likes", "sibling-session", user="alice", agent="helper", session="s2")
    mem.remember("x", "likes", "sibling-agent", user="alice", agent="other")
    mem.remember("x", "likes", "bob", user="bob")
    mem.remember("x", "likes", "other-tenant", tenant="t2", user="alice")
    yield mem
    mem.close()


def test_a_session_read_inherits_broader_memory_and_never_a_siblings(layered: Memvara) -> None:
    session = layered.scope(user="alice", agent="helper", session="s1")
    assert objects(session.get_all()) == [
        "alice-agent", "alice-session", "alice-user", "tenant-wide"
    ]
    assert session.count() == 4
    assert session.stats()["claims"] == 4
    assert [c.object for c in session.history("x", "likes")] == [
        "tenant-wide", "alice-user", "alice-agent", "alice-session"
    ]


def test_a_user_read_does_not_see_narrower_scratch(layered: Memvara) -> None:
    assert objects(layered.get_all(user="alice")) == ["alice-user", "tenant-wide"]
    assert objects(layered.get_all(user="bob")) == ["bob", "tenant-wide"]
    assert objects(layered.get_all(user=None)) == ["tenant-wide"]


def test_other_tenants_are_invisible(layered: Memvara) -> None:
    assert objects(layered.get_all(tenant="t2", user="alice")) == ["other-tenant"]
    assert layered.get_all(tenant="t3", user="alice") == []
    assert layered.count(tenant=None, states=STATES) == 0  # the root holds nothing here


def test_get_by_id_is_scope_checked(layered: Memvara) -> None:
    (bob,) = [c for c in layered.get_all(user="bob") if c.object == "bob"]
    assert layered.get(bob.id, user="bob") == bob
    assert layered.get(bob.id, user="alice") is None
    assert not layered.delete(bob.id, user="alice")
    assert not layered.erase(bob.id, user="alice")
    assert layered.get(bob.id, user="bob") == bob


def test_writes_settle_against_their_own_scope_only(clock: Clock) -> None:
    with Memvara(clock=clock) as mem:
        mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN, user="alice")
        receipt = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN,
                               user="alice", session="s1")
        assert receipt.closed == ()  # a session cannot close the user's durable memory
        assert objects(mem.get_all(user="alice")) == ["Berlin"]
        assert objects(mem.get_all(user="alice", session="s1")) == ["Berlin", "Lisbon"]
        assert mem.forget("user", "lives_in", user="alice", session="s1")[0].object == "Lisbon"
        assert objects(mem.get_all(user="alice")) == ["Berlin"]


def test_scope_keywords_replace_a_level_and_clear_narrower_ones(clock: Clock) -> None:
    with Memvara(clock=clock, tenant="t", user="alice", agent="a", session="s") as mem:
        assert mem.default_scope == Scope("t", "alice", "a", "s")
        assert mem.scope(user="bob").default_scope == Scope("t", "bob")
        assert mem.scope(session="s2").default_scope == Scope("t", "alice", "a", "s2")
        assert mem.scope(agent=None).default_scope == Scope("t", "alice")
        nested = mem.scope(user="bob").scope(session="x")
        assert nested.default_scope == Scope("t", "bob", None, "x")
        assert "bob" in repr(nested)
        nested.remember("x", "likes", "y")
        assert mem.count(user="bob", session="x") == 1
        assert mem.count(user="bob") == 0


@pytest.mark.parametrize("bad", ["", "   ", 3, "a\x00b"])
def test_blank_or_non_string_scope_levels_are_refused(clock: Clock, bad: object) -> None:
    with pytest.raises(InvalidArgumentError, match="user"):
        Memvara(clock=clock, user=bad)  # type: ignore[arg-type]
    with Memvara(clock=clock) as mem:
        with pytest.raises(InvalidArgumentError, match="user"):
            mem.get_all(user=bad)  # type: ignore[arg-type]


def test_purge_takes_narrower_scopes_with_it_and_nothing_else(layered: Memvara) -> None:
    counts = layered.purge(user="alice")
    assert counts["claims"] == 5  # user, agent, two sessions, sibling agent
    assert objects(layered.get_all(user="bob")) == ["bob", "tenant-wide"]
    assert objects(layered.get_all(tenant="t2", user="alice")) == ["other-tenant"]
    assert objects(layered.get_all(user="alice", agent="helper", session="s1")) == ["tenant-wide"]
