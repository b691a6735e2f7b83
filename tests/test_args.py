"""Resolution of one call's scope, instants and states."""

from __future__ import annotations

import pytest

from memvara import InvalidArgumentError, Scope
from memvara._domain.args import (
    UNSET, Unset, check_memory_types, check_roles, check_sources, resolve_scope, resolve_states,
    resolve_time,
)
from memvara._domain.time import to_micros

from .conftest import JAN, JUN


def test_unset_is_a_falsy_singleton() -> None:
    assert Unset() is UNSET and not UNSET and repr(UNSET) == "UNSET"


def test_resolve_scope_without_keywords_is_the_base() -> None:
    base = Scope("t", "u", "a", "s")
    assert resolve_scope(base, UNSET, UNSET, UNSET, UNSET) is base
    assert resolve_scope(base, "t2", UNSET, UNSET, UNSET) == Scope("t2")


def test_resolve_time_defaults() -> None:
    tq = resolve_time(None, None, None, 99)
    assert (tq.known_at, tq.valid_at) == (99, 99)
    assert resolve_time(None, None, None, 99, valid_default_now=False).valid_at is None
    tq = resolve_time(JAN, JUN, None, 99)
    assert (tq.valid_at, tq.known_at) == (to_micros(JAN, "x"), to_micros(JUN, "x"))


def test_resolve_states() -> None:
    assert resolve_states(None, None) == {"live"}
    assert resolve_states(("ended", "retired"), None) == {"ended", "retired"}
    assert resolve_states(None, True) == {"live", "ended", "retired"}
    with pytest.raises(InvalidArgumentError, match="states"):
        resolve_states(3, None)


def test_check_roles_shows_the_roles_it_was_given() -> None:
    assert check_roles(["user", "tool"]) == {"user", "tool"}
    assert check_roles(r for r in ("user", "user")) == {"user"}  # a generator; a repeat is harmless
    bad = "roles: expected a non-empty list drawn from ['user', 'assistant', 'system', 'tool'], got "
    for given, shown in ((["robot"], "['robot']"), (["user", 5], "['user', 5]"), ([], "[]"),
                         ("user", "'user'"), (7, "7")):
        with pytest.raises(InvalidArgumentError) as caught:
            check_roles(given)
        assert str(caught.value) == bad + shown


def test_check_memory_types_shows_the_types_it_was_given() -> None:
    assert check_memory_types(t for t in ("semantic", "episodic")) == {"semantic", "episodic"}
    bad = ("memory_types: expected a non-empty list drawn from ['semantic', 'episodic',"
           " 'procedural'], got ")
    for given, shown in ((["dreams"], "['dreams']"), (["semantic", ["x"]], "['semantic', ['x']]"),
                         ([], "[]"), ("semantic", "'semantic'"), (7, "7")):
        with pytest.raises(InvalidArgumentError) as caught:
            check_memory_types(given)
        assert str(caught.value) == bad + shown


def test_check_sources_names_the_bad_one_by_its_index() -> None:
    assert check_sources(s for s in ("e1", "doc-7")) == ("e1", "doc-7")
    with pytest.raises(InvalidArgumentError, match=r"^sources\[1\]: expected a string, got int$"):
        check_sources(["e1", 2])
    with pytest.raises(InvalidArgumentError, match=r"^sources\[0\]: must not be empty"):
        check_sources([" "])
    with pytest.raises(InvalidArgumentError, match="^sources: expected a list of source id strings, got 'e1'$"):
        check_sources("e1")
