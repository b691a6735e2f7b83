"""The predicate registry: cardinality, volatility, aliases, defaults."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memvara import (
    BUILTIN_PREDICATES,
    Cardinality,
    InvalidArgumentError,
    PredicateRegistry,
    PredicateSpec,
    Volatility,
)


def test_lives_in_aliases_are_one_slot() -> None:
    registry = PredicateRegistry()
    for name in ["lives_in", "resides_in", "based_in", "moved_to", "Resides In", "based-in"]:
        assert registry.canonical(name) == "lives_in"
    assert registry.spec("moved_to").cardinality is Cardinality.ONE


def test_seed_cardinalities() -> None:
    registry = PredicateRegistry()
    for name in ["lives_in", "works_at", "name"]:
        assert registry.spec(name).cardinality is Cardinality.ONE
    for name in ["likes", "speaks", "allergic_to"]:
        assert registry.spec(name).cardinality is Cardinality.MANY


def test_unknown_predicates_are_many_and_slow() -> None:
    spec = PredicateRegistry().spec("Favourite Colour")
    assert spec == PredicateSpec("favourite_colour", Cardinality.MANY, Volatility.SLOW)
    assert not PredicateRegistry().is_known("favourite_colour")
    assert "favourite_colour" not in PredicateRegistry()
    assert "likes" in PredicateRegistry() and 3 not in PredicateRegistry()


def test_volatility_half_lives() -> None:
    assert Volatility.STATIC.half_life is None
    assert Volatility.SLOW.half_life == timedelta(days=730)
    assert Volatility.FAST.half_life == timedelta(days=7)


def test_register_adds_and_replaces() -> None:
    registry = PredicateRegistry([])
    assert len(registry) == 0
    spec = PredicateSpec("plan", Cardinality.ONE, aliases=("subscription",))
    assert registry.register(spec) is spec
    assert registry.register(PredicateSpec("plan", Cardinality.ONE, aliases=("subscription",))) == spec
    assert registry.canonical("subscription") == "plan"
    with pytest.raises(InvalidArgumentError, match="already registered"):
        registry.register(PredicateSpec("plan", Cardinality.MANY))
    registry.register(PredicateSpec("plan", Cardinality.MANY, aliases=("tier",)), replace=True)
    assert registry.canonical("subscription") == "subscription"
    assert registry.canonical("tier") == "plan"
    assert list(registry) == [PredicateSpec("plan", Cardinality.MANY, aliases=("tier",))]


def test_the_resolved_names_cache_is_bounded_and_a_full_cache_still_answers() -> None:
    registry = PredicateRegistry()
    for i in range(65_536):  # as many distinct raw names as the cache holds
        registry.canonical(f"custom {i}")
    assert len(registry._resolved) == 65_536
    assert registry.canonical("Resides In") == "lives_in"  # resolved, but not kept
    assert registry.canonical("Favourite Colour") == "favourite_colour"
    assert len(registry._resolved) == 65_536
    assert registry.canonical("custom 7") == "custom_7"  # a cached name, from the cache


def test_alias_collisions_are_refused() -> None:
    registry = PredicateRegistry()
    with pytest.raises(InvalidArgumentError, match="belongs to 'lives_in'"):
        registry.register(PredicateSpec("home", aliases=("based_in",)))
    with pytest.raises(InvalidArgumentError, match="alias of 'lives_in'"):
        registry.register(PredicateSpec("resides_in"))
    with pytest.raises(InvalidArgumentError, match="spec"):
        registry.register("likes")  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", ["", "   ", "_-_", 7, None, "a\x00b"])
def test_bad_predicate_names_are_refused(bad: object) -> None:
    with pytest.raises(InvalidArgumentError, match="predicate"):
        PredicateRegistry().canonical(bad)


def test_spec_validation() -> None:
    with pytest.raises(InvalidArgumentError, match="cardinality"):
        PredicateSpec("x", "one")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="volatility"):
        PredicateSpec("x", Cardinality.ONE, "slow")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="aliases"):
        PredicateSpec("x", aliases="y")  # type: ignore[arg-type]
    assert PredicateSpec("Billing Address").name == "billing_address"


def test_builtins_are_consistent() -> None:
    registry = PredicateRegistry(BUILTIN_PREDICATES)
    assert len(registry) == len(BUILTIN_PREDICATES)


@pytest.mark.parametrize("specs", [None, 5, "lives_in"])
def test_a_registry_of_something_other_than_specs_is_refused_by_name(specs: object) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        PredicateRegistry(specs)  # type: ignore[arg-type]
    assert str(caught.value) == ("specs: expected an iterable of PredicateSpec, such as"
                                 f" BUILTIN_PREDICATES + (PredicateSpec(...),), got {specs!r}")
