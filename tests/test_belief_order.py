"""Backdated writes: a ``recorded_at`` earlier than now, as a replayed log has.

Belief is recorded in order slot by slot: a write may be backdated behind nothing it
contradicts. One that would land behind a value it contradicts that was recorded, ended
or retired after it is refused, naming that change, and nothing of it is written: a
past view ("what did we believe then?") never holds two values of a single-valued slot,
and an old write never undoes news it could not have known.
"""

from __future__ import annotations

import pytest

from datetime import timedelta

from memvara import Claim, InvalidTimeError, Memvara, NullLLM, Scope

from .conftest import AUG, JAN, JUL, JUN, MAR, NOW, SEP, Clock, day

FEB = day("2026-02-01")
APR = day("2026-04-01")
MAY = day("2026-05-01")


def believed(mem: Memvara, *, valid_at: object, known_at: object) -> list[str]:
    return sorted(c.object for c in mem.get_all(
        valid_at=valid_at, known_at=known_at, predicate="lives_in"))  # type: ignore[arg-type]


def test_a_log_replayed_in_order_answers_every_past_question(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Porto", valid_from=FEB, recorded_at=MAR)
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAY, recorded_at=JUN)

    assert believed(mem, valid_at=JUL, known_at=APR) == ["Porto"]  # Lisbon not yet known
    assert believed(mem, valid_at=FEB, known_at=FEB) == ["Berlin"]  # Porto not yet known
    assert believed(mem, valid_at=MAR, known_at=JUL) == ["Porto"]
    assert believed(mem, valid_at=JUL, known_at=JUL) == ["Lisbon"]


@pytest.mark.parametrize(("second", "change"), [
    ({"valid_from": JAN, "recorded_at": JUN}, "'Berlin' (which 'Porto' contradicts) was retired"),
    ({"valid_from": MAY, "recorded_at": JUN},
     "'Berlin' (which 'Porto' contradicts) was recorded as ended"),
    ({"valid_from": JAN, "recorded_at": JUN, "close": "retired"},
     "'Berlin' (which 'Porto' contradicts) was retired"),
])
def test_a_write_behind_a_later_change_is_refused_and_writes_nothing(
    mem: Memvara, second: dict[str, object], change: str,
) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", **second)  # type: ignore[arg-type]
    before = [(c.id, c.state, c.valid_to) for c in mem.history("user", "lives_in")]
    anchor = mem.anchor()

    with pytest.raises(InvalidTimeError, match="^recorded_at: ") as error:
        mem.remember("user", "lives_in", "Porto", valid_from=FEB, recorded_at=MAR)

    assert f"{change}; a slot's beliefs are recorded in order" in str(error.value)
    assert JUN.isoformat() in str(error.value)
    assert [(c.id, c.state, c.valid_to) for c in mem.history("user", "lives_in")] == before
    assert mem.anchor() == anchor  # not a record more in the write log


def test_a_value_recorded_later_stands_in_the_way_too(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAY, recorded_at=JUN)
    mem.remember("user", "likes", "jazz", recorded_at=JUN)

    with pytest.raises(InvalidTimeError, match="'Lisbon' .which 'Porto' contradicts. was recorded;"):
        mem.remember("user", "lives_in", "Porto", valid_from=FEB, recorded_at=MAR)
    with pytest.raises(InvalidTimeError, match="'jazz' .which 'jazz' contradicts. was recorded;"):
        mem.remember("user", "likes", "jazz", polarity=-1, recorded_at=MAR)


def test_what_a_write_does_not_contradict_is_taken_behind_later_changes(mem: Memvara) -> None:
    mem.remember("user", "likes", "jazz", recorded_at=JUN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAY, recorded_at=JUN)

    assert mem.remember("user", "likes", "rock", recorded_at=MAR).added  # many-valued
    again = mem.remember("user", "likes", "jazz", recorded_at=MAR)  # the same value again
    assert [c.object for c in again.reinforced] == ["jazz"]
    assert mem.remember("user", "lives_in", "Lisbon", valid_from=FEB, recorded_at=MAR).added
    assert believed(mem, valid_at=JUL, known_at=JUL) == ["Lisbon"]


def test_a_stretch_of_valid_time_no_later_value_touches_is_taken(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAY, recorded_at=JUN)
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, valid_to=FEB, recorded_at=JUN)

    receipt = mem.remember("user", "lives_in", "Porto", valid_from=FEB, valid_to=MAY,
                           recorded_at=MAR)  # between the two: it contradicts neither
    assert [c.object for c in receipt.added] == ["Porto"] and not receipt.ended
    assert believed(mem, valid_at=MAR, known_at=APR) == ["Porto"]
    with pytest.raises(InvalidTimeError, match="'Lisbon' .which 'Rome' contradicts."):
        mem.remember("user", "lives_in", "Rome", valid_from=FEB, valid_to=JUL, recorded_at=MAR)


def test_a_write_at_or_after_the_retirement_or_in_another_slot_is_taken(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JAN, recorded_at=JUN)

    assert mem.remember("user", "lives_in", "Porto", valid_from=FEB, recorded_at=JUN).added
    assert mem.remember("user", "works_at", "Acme", valid_from=FEB, recorded_at=MAR).added
    assert mem.remember("ana", "lives_in", "Rome", valid_from=FEB, recorded_at=MAR).added
    assert mem.remember("user", "lives_in", "Rome", user="u2", recorded_at=MAR).added


def test_a_batch_is_checked_claim_by_claim_as_if_remembered_in_order(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    batch = [
        Claim("user", "likes", "tea"),  # recorded now
        Claim("user", "works_at", "Acme", valid_from=FEB, recorded_at=FEB),
        Claim("user", "lives_in", "Lisbon", valid_from=JAN, recorded_at=JUN),  # retires Berlin
        Claim("user", "lives_in", "Porto", valid_from=FEB, recorded_at=MAR),  # behind that
    ]

    with pytest.raises(InvalidTimeError, match=r"^claims\[3\]\.recorded_at"):
        mem.remember_many(batch)

    assert [c.object for c in mem.history("user", "lives_in")] == ["Berlin"]
    assert mem.history("user", "works_at") == [] and mem.history("user", "likes") == []
    assert [c.object for c in mem.remember_many(batch[:3]).added] == ["tea", "Acme", "Lisbon"]


def test_a_batch_recorded_now_or_later_is_not_checked_slot_by_slot(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN)
    mem.remember("user", "lives_in", "Lisbon", valid_from=JAN, recorded_at=JUN)
    batch = [Claim("user", "lives_in", "Porto"), Claim("ana", "lives_in", "Rome")]

    receipt = mem.remember_many(batch, user=None)

    assert [c.object for c in receipt.added] == ["Porto", "Rome"]
    assert receipt.added[0].scope == Scope()


def test_check_conflict_raises_what_remember_would(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAY, recorded_at=JUN)

    with pytest.raises(InvalidTimeError, match="^recorded_at: .* 'Lisbon' .which 'Porto'"):
        mem.check_conflict("user", "lives_in", "Porto", valid_from=FEB, recorded_at=MAR)
    assert mem.check_conflict("user", "lives_in", "Porto", recorded_at=JUN).action == "add"


def test_supersede_checks_a_backdated_new_claim_as_remember_does(mem: Memvara) -> None:
    berlin = mem.remember("user", "lives_in", "Berlin", valid_from=JAN, recorded_at=JAN).added[0]
    mem.remember("user", "lives_in", "Lisbon", valid_from=MAY, recorded_at=JUN)
    before = [(c.id, c.state, c.valid_to) for c in mem.history("user", "lives_in")]

    with pytest.raises(InvalidTimeError, match=r"^new_claim\.recorded_at: .* recorded in order"):
        mem.supersede(berlin.id, Claim("user", "lives_in", "Porto", valid_from=FEB,
                                       recorded_at=MAR))

    assert [(c.id, c.state, c.valid_to) for c in mem.history("user", "lives_in")] == before
    assert mem.supersede(berlin.id, Claim("user", "lives_in", "Porto", valid_from=FEB)).added


def test_a_clock_that_steps_back_learns_no_earlier_than_what_a_write_closes(
    clock: Clock,
) -> None:
    """A clock stepped back (or a writer that read it first and committed last): a write
    is recorded no earlier than the values it closes or ends at, so no past view holds
    two values and no end is believed before the value that set it was known."""
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        mem.remember("user", "lives_in", "Berlin")
        clock.advance(days=10)
        lisbon = mem.remember("user", "lives_in", "Lisbon", close="retired").added[0]
        clock.advance(days=-5)  # the clock steps back five days
        porto = mem.remember("user", "lives_in", "Porto", valid_from=MAR).added[0]

        assert porto.recorded_at == lisbon.recorded_at  # not five days before it
        assert porto.valid_to == lisbon.valid_from and porto.valid_to_known_at == lisbon.recorded_at
        for days in (1, 7, 11):
            at = NOW + timedelta(days=days)
            assert len(mem.get_all(valid_at=at, known_at=at, predicate="lives_in")) == 1, days
