"""The two clocks, exactly: valid time and transaction time move independently.

These are the spec's examples ("Facts are structured and bitemporal", "Reading one
population", "Counting claims") plus the rules the visibility predicate must keep.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from memvara import Claim, InvalidArgumentError, Memvara
from memvara.store import STATES

from .conftest import AUG, JAN, JUL, JUN, MAR, NOW, SEP


def objects(claims: list[Claim]) -> list[str]:
    return [c.object for c in claims]


def test_a_move_ends_the_old_value_on_valid_time_and_keeps_believing_it(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    receipt = mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)

    assert objects(list(receipt.ended)) == ["Berlin"]
    assert receipt.retired == ()
    berlin = receipt.ended[0]
    assert berlin.state == "ended"
    assert berlin.valid_to == JUN
    assert berlin.invalidated_at is None
    assert objects(mem.get_all()) == ["Lisbon"]
    assert objects(mem.get_all(valid_at=MAR)) == ["Berlin"]


def test_close_retired_ends_belief_and_leaves_the_interval(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    receipt = mem.remember("user", "lives_in", "Lisbon", close="retired")

    (berlin,) = receipt.retired
    assert berlin.state == "retired"
    assert berlin.valid_to is None
    assert berlin.invalidated_at == NOW
    assert berlin.invalidated_by == receipt.added[0].id
    # Retired, so not even the past holds it any more...
    assert objects(mem.get_all(valid_at=MAR)) == []
    # ...but what we believed before the correction still does.
    assert objects(mem.get_all(valid_at=MAR, known_at=MAR)) == ["Berlin"]


def test_an_end_learned_at_x_is_open_to_a_reader_before_x(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=AUG)

    # In July we had not yet learned of the June move: Berlin, open-ended.
    (believed,) = mem.get_all(as_of=JUL)
    assert believed.object == "Berlin"
    assert believed.valid_to is None and believed.state == "live"
    (timeline_then,) = mem.history("user", "lives_in", known_at=JUL)
    assert timeline_then.valid_to is None
    # Today we know it ended in June.
    assert [(c.object, c.valid_to) for c in mem.history("user", "lives_in")] == [
        ("Berlin", JUN), ("Lisbon", None)
    ]


def test_a_late_correction_is_invisible_as_of_then_and_visible_valid_at_then(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=AUG)

    assert objects(mem.get_all(as_of=JUN)) == ["Berlin"]
    assert objects(mem.get_all(valid_at=JUN)) == ["Lisbon"]
    assert mem.count(as_of=JUN) == 1 and mem.count(valid_at=JUN) == 1


def test_known_at_returns_what_we_believed_after_later_supersessions(mem: Memvara) -> None:
    mem.remember("user", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "works_at", "Globex", valid_from=JUN, recorded_at=JUN)
    mem.remember("user", "works_at", "Initech", valid_from=AUG, recorded_at=AUG)

    assert objects(mem.get_all(known_at=MAR)) == ["Acme"]
    assert objects(mem.get_all(known_at=JUL)) == ["Globex"]
    assert mem.count(known_at=MAR) == 1
    assert objects(mem.history("user", "works_at", known_at=JUL)) == ["Acme", "Globex"]
    assert [c.state for c in mem.history("user", "works_at", known_at=JUL)] == ["ended", "live"]
    assert mem.stats()["ended_claims"] == 2


def test_as_of_is_exact_sugar_for_both_clocks(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=AUG)
    for instant in (JAN, MAR, JUN, JUL, AUG, SEP):
        assert mem.get_all(as_of=instant) == mem.get_all(valid_at=instant, known_at=instant)
        assert mem.count(as_of=instant) == mem.count(valid_at=instant, known_at=instant)
        assert mem.history("user", "lives_in", as_of=instant) == mem.history(
            "user", "lives_in", valid_at=instant, known_at=instant
        )


@pytest.mark.parametrize("other", ["valid_at", "known_at"])
def test_as_of_with_either_clock_raises(mem: Memvara, other: str) -> None:
    with pytest.raises(InvalidArgumentError, match="as_of"):
        mem.get_all(as_of=JUN, **{other: JUN})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="as_of"):
        mem.count(as_of=JUN, **{other: JUN})  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="as_of"):
        mem.history("user", "lives_in", as_of=JUN, **{other: JUN})  # type: ignore[arg-type]


def test_spec_states_example(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    mem.remember("user", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    mem.forget("user", "works_at")

    assert objects(mem.get_all(states=["live"])) == ["Lisbon"]
    assert objects(mem.get_all(states=["ended"])) == ["Berlin"]
    assert objects(mem.get_all(states=["retired"])) == ["Acme"]
    assert objects(mem.get_all(valid_at=MAR, states=["live"])) == ["Berlin"]
    assert objects(mem.get_all(valid_at=MAR, states=STATES)) == ["Lisbon", "Acme", "Berlin"]
    assert objects(mem.get_all(valid_at=AUG, states=STATES)) == ["Lisbon", "Acme", "Berlin"]


def test_all_states_is_the_belief_floor_not_the_union(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JAN)  # scheduled
    # In March, Lisbon is recorded but not yet in force: no single state names it.
    parts = [objects(mem.get_all(valid_at=MAR, states=[s])) for s in STATES]
    assert parts == [["Berlin"], [], []]
    assert sorted(objects(mem.get_all(valid_at=MAR, states=STATES))) == ["Berlin", "Lisbon"]
    assert mem.get_all(valid_at=MAR, include_invalidated=True) == mem.get_all(
        valid_at=MAR, states=STATES
    )
    assert mem.get_all(include_invalidated=False) == mem.get_all(states=["live"])


def test_spec_four_claim_stats_example(mem: Memvara) -> None:
    """One live, one ended, one ended-then-retired, one recorded now but in force next year."""
    mem.remember("a", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("a", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)  # Berlin ends
    acme = mem.remember("b", "works_at", "Acme", valid_from=JAN, valid_to=MAR, recorded_at=JAN)
    assert mem.delete(acme.added[0].id)  # ended, then retired
    mem.remember("c", "works_at", "Initech", valid_from=NOW + timedelta(days=365))

    stats = mem.stats()
    assert stats == {
        "episodes": 0, "claims": 4, "live_claims": 1, "ended_claims": 1,
        "invalidated": 1, "embeddings": 0,  # exactly the spec's: too few to embed yet
    }
    # The cheaper spellings the spec warns about are each wrong on this store.
    everything = mem.get_all(states=STATES)
    assert sum(c.invalidated_at is None for c in everything) == 3
    assert sum(c.valid_to is not None for c in everything) == 2
    assert stats["claims"] - stats["live_claims"] - stats["invalidated"] == 2


def test_valid_time_and_belief_boundaries_are_half_open(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JUN, recorded_at=JUN)
    tick = timedelta(microseconds=1)
    assert objects(mem.get_all(as_of=JAN)) == ["Berlin"]
    assert objects(mem.get_all(as_of=JAN - tick)) == []
    assert objects(mem.get_all(as_of=JUN - tick)) == ["Berlin"]
    assert objects(mem.get_all(as_of=JUN)) == ["Lisbon"]


def test_naive_datetimes_are_read_as_utc_and_returned_aware(mem: Memvara) -> None:
    receipt = mem.remember("user", "born_in", "Osaka", valid_from=datetime(1990, 1, 1))
    (claim,) = receipt.added
    assert claim.valid_from is not None and claim.valid_from.tzinfo is not None
    assert claim.valid_from.utcoffset() == timedelta(0)
    assert claim.recorded_at == NOW  # true since 1990, known since today
    assert objects(mem.get_all(valid_at=datetime(2000, 1, 1))) == ["Osaka"]
    assert objects(mem.get_all(as_of=datetime(2000, 1, 1))) == []
