"""Bad input at the public API: a memvara error naming the argument, and no change stored.

Each case runs against a memory holding a little data and checks the counts (and the
rows themselves) are unchanged afterwards.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date, datetime

import pytest

from memvara import (
    Claim,
    ClosedError,
    InvalidArgumentError,
    InvalidTimeError,
    Memvara,
    MemvaraError,
)
from memvara.store import STATES

from .conftest import JAN, JUN, Clock


@pytest.fixture
def seeded(clock: Clock) -> Iterator[Memvara]:
    mem = Memvara(clock=clock, user="alice")
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "likes", "tea")
    yield mem
    mem.close()


Call = Callable[[Memvara], object]

CASES: list[tuple[str, Call, str]] = [
    ("subject not a string", lambda m: m.remember(3, "likes", "x"), "subject"),  # type: ignore[arg-type]
    ("empty subject", lambda m: m.remember("", "likes", "x"), "subject"),
    ("blank object", lambda m: m.remember("u", "likes", "  "), "object"),
    ("object None", lambda m: m.remember("u", "likes", None), "object"),  # type: ignore[arg-type]
    ("predicate empty", lambda m: m.remember("u", "", "x"), "predicate"),
    ("predicate list", lambda m: m.remember("u", ["likes"], "x"), "predicate"),  # type: ignore[arg-type]
    ("lone surrogate", lambda m: m.remember("u", "likes", "a\ud800b"), "object"),
    ("valid_from a string", lambda m: m.remember("u", "likes", "x", valid_from="2026-01-01"), "valid_from"),  # type: ignore[arg-type]
    ("valid_from a date", lambda m: m.remember("u", "likes", "x", valid_from=date(2026, 1, 1)), "valid_from"),  # type: ignore[arg-type]
    ("valid_to before valid_from", lambda m: m.remember("u", "likes", "x", valid_from=JUN, valid_to=JAN), "valid_to"),
    ("valid_to equal to valid_from", lambda m: m.remember("u", "likes", "x", valid_from=JUN, valid_to=JUN), "valid_to"),
    ("recorded_at an int", lambda m: m.remember("u", "likes", "x", recorded_at=1700000000), "recorded_at"),  # type: ignore[arg-type]
    ("confidence above 1", lambda m: m.remember("u", "likes", "x", confidence=1.5), "confidence"),
    ("confidence NaN", lambda m: m.remember("u", "likes", "x", confidence=float("nan")), "confidence"),
    ("confidence a string", lambda m: m.remember("u", "likes", "x", confidence="high"), "confidence"),  # type: ignore[arg-type]
    ("polarity 0", lambda m: m.remember("u", "likes", "x", polarity=0), "polarity"),
    ("polarity True", lambda m: m.remember("u", "likes", "x", polarity=True), "polarity"),
    ("unknown memory type", lambda m: m.remember("u", "likes", "x", memory_type="dream"), "memory_type"),
    ("sources a string", lambda m: m.remember("u", "likes", "x", sources="ep1"), "sources"),
    ("sources with a blank", lambda m: m.remember("u", "likes", "x", sources=["ep1", ""]), "sources"),
    ("meta not JSON", lambda m: m.remember("u", "likes", "x", meta={"when": datetime.now()}), "meta"),
    ("meta NaN", lambda m: m.remember("u", "likes", "x", meta={"score": float("inf")}), "meta"),
    ("text blank", lambda m: m.remember("u", "likes", "x", text=" "), "text"),
    ("extractor blank", lambda m: m.remember("u", "likes", "x", extractor=""), "extractor"),
    ("unknown close", lambda m: m.remember("u", "lives_in", "x", close="deleted"), "close"),
    ("states unknown", lambda m: m.get_all(states=["alive"]), "states"),
    ("states empty", lambda m: m.count(states=[]), "states"),
    ("states a string", lambda m: m.get_all(states="live"), "states"),
    ("states and include_invalidated", lambda m: m.get_all(states=["live"], include_invalidated=True), "states"),
    ("include_invalidated not bool", lambda m: m.count(include_invalidated="yes"), "include_invalidated"),  # type: ignore[arg-type]
    ("valid_at not a datetime", lambda m: m.get_all(valid_at="now"), "valid_at"),  # type: ignore[arg-type]
    ("known_at not a datetime", lambda m: m.history("user", "lives_in", known_at=3), "known_at"),  # type: ignore[arg-type]
    ("as_of not a datetime", lambda m: m.count(as_of=date(2026, 1, 1)), "as_of"),  # type: ignore[arg-type]
    ("get with a non-string id", lambda m: m.get(123), "claim_id"),  # type: ignore[arg-type]
    ("delete with an empty id", lambda m: m.delete(""), "claim_id"),
    ("delete at a string", lambda m: m.delete("c1", at="now"), "at"),  # type: ignore[arg-type]
    ("forget with no predicate", lambda m: m.forget("user", ""), "predicate"),
    ("forget at a string", lambda m: m.forget("user", "likes", at="now"), "at"),  # type: ignore[arg-type]
    ("supersede a blank id", lambda m: m.supersede(" ", Claim("u", "likes", "x")), "claim_id"),
    ("history empty subject", lambda m: m.history("", "likes"), "subject"),
    ("scope level blank", lambda m: m.count(session=""), "session"),
    ("scope level a list", lambda m: m.remember("u", "likes", "x", user=["bob"]), "user"),  # type: ignore[arg-type]
    ("scope level a number", lambda m: m.get_all(agent=7), "agent"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize(("label", "call", "argument"), CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_named_and_changes_nothing(
    seeded: Memvara, label: str, call: Call, argument: str
) -> None:
    before = (seeded.stats(), seeded.get_all(states=STATES))
    with pytest.raises(InvalidArgumentError) as caught:
        call(seeded)
    assert argument in str(caught.value), label
    assert isinstance(caught.value, (MemvaraError, ValueError))
    assert (seeded.stats(), seeded.get_all(states=STATES)) == before


def test_time_errors_are_a_subclass_with_their_own_code(seeded: Memvara) -> None:
    with pytest.raises(InvalidTimeError) as caught:
        seeded.remember("u", "likes", "x", valid_from="yesterday")  # type: ignore[arg-type]
    assert caught.value.code == "invalid_time" and caught.value.argument == "valid_from"


def test_a_broken_embedder_is_refused_before_anything_is_written(clock: Clock) -> None:
    import numpy as np

    class Broken:
        dim = 4

        def __init__(self, result: object) -> None:
            self.result = result

        def encode(self, texts: object) -> object:
            return self.result

    for result, problem in [(np.zeros((2, 4), dtype=np.float32), "shape"),
                            (np.full((1, 4), np.nan, dtype=np.float32), "NaN"),
                            ([[0.0] * 4], "shape")]:
        with pytest.raises(InvalidArgumentError, match=problem):
            Memvara(embedder=Broken(result), clock=clock)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [({"path": 3}, "path"), ({"clock": "now"}, "clock"), ({"registry": {}}, "registry"),
     ({"embedder": object()}, "embedder"), ({"path": "x.db", "store": object()}, "store"),
     ({"llm": object()}, "llm"), ({"telemetry": print}, "telemetry"), ({"redactor": str}, "redactor")],
)
def test_bad_constructor_arguments(kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=argument):
        Memvara(**kwargs)  # type: ignore[arg-type]


def test_a_clock_returning_garbage_is_named(clock: Clock) -> None:
    with Memvara(clock=lambda: "noon") as mem:  # type: ignore[arg-type, return-value]
        with pytest.raises(InvalidTimeError, match="clock"):
            mem.remember("u", "likes", "x")


def test_use_after_close_raises_everywhere(clock: Clock) -> None:
    mem = Memvara(clock=clock)
    handle = mem.scope(user="bob")
    claim = mem.remember("u", "likes", "x").added[0]
    mem.close()
    mem.close()  # idempotent
    assert "closed" in repr(mem)
    calls: list[Call] = [
        lambda m: m.remember("u", "likes", "y"), lambda m: m.get(claim.id),
        lambda m: m.get_all(), lambda m: m.count(), lambda m: m.history("u", "likes"),
        lambda m: m.stats(), lambda m: m.forget("u", "likes"), lambda m: m.delete(claim.id),
        lambda m: m.erase(claim.id), lambda m: m.purge(), lambda m: m.reset(),
        lambda m: m.scope(user="x"), lambda m: m.remember_many([]),
        lambda m: m.supersede(claim.id, Claim("u", "likes", "z")),
    ]
    for call in calls:
        with pytest.raises(ClosedError):
            call(mem)
    with pytest.raises(ClosedError):
        handle.get_all()
    with pytest.raises(ClosedError), mem:  # entering a closed memory fails; it used to pass
        pass
