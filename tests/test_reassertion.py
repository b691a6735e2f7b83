"""A copy of a turn is skipped; a statement made again later is a new turn, and its
claims re-assert. Tier 0 skips a turn only when it repeats one of the same role and
scope said within ``duplicate_window``, repeats a turn earlier in the same call, or
names an episode id already stored."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memvara import Episode, InvalidArgumentError, Memvara, NullLLM

from .conftest import JAN, JUN, SEP, Clock


def test_a_move_back_is_a_move(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), user="maya") as mem:
        for when, text in ((JAN, "I live in Berlin"), (JUN, "I live in Lisbon"),
                           (SEP, "I live in Berlin")):
            clock.now = when + timedelta(hours=1)
            receipt = mem.add(text, ts=when)
            assert receipt.skipped == ()
        assert [c.object for c in mem.get_all()] == ["Berlin"]
        assert mem.get_all()[0].valid_from == SEP
        assert [(c.object, c.state) for c in mem.history("maya", "lives_in")] == [
            ("Berlin", "ended"), ("Lisbon", "ended"), ("Berlin", "live")]
        assert len(mem.episodes()) == 3


def test_a_copy_within_the_window_is_skipped(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        mem.add("I live in Berlin", ts=JAN)
        again = mem.add("I live in Berlin", ts=JAN + timedelta(minutes=9))
        assert [s.reason for s in again.skipped] == ["duplicate"]
        near = mem.add("i live in BERLIN", ts=JAN + timedelta(minutes=5))
        assert [s.reason for s in near.skipped] == ["near_duplicate"]
        later = mem.add("I live in Berlin", ts=JAN + timedelta(minutes=11))
        assert later.skipped == () and len(later.reinforced) == 1
        other_role = mem.add([Episode("I live in Berlin", role="assistant", ts=JAN)])
        assert other_role.skipped == ()  # same words, another speaker: not a copy


def test_two_identical_turns_in_one_call_are_one(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        receipt = mem.add([Episode("I live in Oslo", ts=JAN), Episode("I live in Oslo", ts=SEP)])
        assert [s.reason for s in receipt.skipped] == ["duplicate"]
        assert len(mem.episodes()) == 1


def test_an_episode_id_already_stored_is_a_copy(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        first = mem.add([Episode("I live in Oslo", ts=JAN, id="turn-1")])
        assert mem.episodes()[0].id == "turn-1" and first.added[0].sources == ("turn-1",)
        again = mem.add([Episode("I moved to Rome", ts=SEP, id="turn-1")])
        assert [s.reason for s in again.skipped] == ["duplicate"]
        assert [c.object for c in mem.get_all()] == ["Oslo"]


def test_the_window_is_a_setting(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), duplicate_window=timedelta(days=365)) as mem:
        mem.add("I live in Berlin", ts=JAN)
        assert [s.reason for s in mem.add("I live in Berlin", ts=SEP).skipped] == ["duplicate"]
    with Memvara(clock=clock, llm=NullLLM(), duplicate_window=timedelta(0)) as mem:
        mem.add("I live in Berlin", ts=JAN)
        assert mem.add("I live in Berlin", ts=JAN + timedelta(seconds=1)).skipped == ()
    for bad in (timedelta(seconds=-1), 600, None):
        with pytest.raises(InvalidArgumentError, match="^duplicate_window: "):
            Memvara(llm=NullLLM(), duplicate_window=bad)  # type: ignore[arg-type]
