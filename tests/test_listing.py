"""The reads adapters page through: ``get_all``/``count`` narrowed by subject and
predicate, in a stable order with ``limit``/``offset``, and ``episodes()`` listing the
stored turns."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memvara import Episode, InvalidArgumentError, Memvara, NullLLM

from .conftest import AUG, JAN, JUN, Clock


@pytest.fixture
def mem(clock: Clock) -> Memvara:
    memory = Memvara(clock=clock, llm=NullLLM())
    for i in range(7):
        memory.remember("ann", "likes", f"fruit {i}", recorded_at=JAN + timedelta(days=i % 3))
    memory.remember("ann", "lives_in", "Oslo", valid_from=JAN, recorded_at=JAN)
    memory.remember("ann", "lives_in", "Rome", valid_from=JUN, recorded_at=JUN)
    memory.remember("bob", "likes", "tea", recorded_at=JAN)
    return memory


def test_subject_and_predicate_narrow_get_all_and_count(mem: Memvara) -> None:
    with mem:
        assert mem.count() == 9 and mem.count(subject="ann") == 8
        assert mem.count(subject="ANN ", predicate="likes") == 7  # folded, as history() reads
        assert [c.object for c in mem.get_all(subject="ann", predicate="lives_in")] == ["Rome"]
        assert [c.object for c in mem.get_all(predicate="lives_in", states=["ended"])] == ["Oslo"]
        assert mem.get_all(subject="nobody") == [] and mem.count(predicate="likes") == 8
        mem.alias_entity("Annie", "ann")
        assert mem.count(subject="Annie") == 8  # an alias reaches the entity's claims


def test_pages_are_stable_and_do_not_overlap(mem: Memvara) -> None:
    with mem:
        everything = mem.get_all()
        pages = [mem.get_all(limit=4, offset=start) for start in range(0, 12, 4)]
        assert [c.id for page in pages for c in page] == [c.id for c in everything]
        assert [len(p) for p in pages] == [4, 4, 1]
        assert mem.get_all(limit=0) == [] and mem.get_all(offset=100) == []
        assert mem.get_all(offset=8) == everything[8:]
        recorded = [c.recorded_at for c in everything]
        assert recorded == sorted(recorded, reverse=True)  # type: ignore[type-var]


@pytest.mark.parametrize("kwargs, named", [
    ({"limit": -1}, "limit"), ({"limit": "3"}, "limit"), ({"limit": True}, "limit"),
    ({"offset": -1}, "offset"), ({"offset": 1.5}, "offset"),
    ({"subject": ""}, "subject"), ({"predicate": 3}, "predicate"),
])
def test_bad_paging_and_filters_are_named(mem: Memvara, kwargs: dict[str, object], named: str) -> None:
    with mem:
        with pytest.raises(InvalidArgumentError) as caught:
            mem.get_all(**kwargs)  # type: ignore[arg-type]
        assert caught.value.argument == named


def test_episodes_lists_turns_oldest_first_with_time_and_paging(clock: Clock) -> None:
    clock.now = JUN + timedelta(days=1)
    with Memvara(clock=clock, llm=NullLLM(), user="ann") as mem:
        mem.add(["I live in Oslo", "hello there"], ts=JUN)
        mem.add([{"role": "assistant", "content": "Noted, Oslo."}], ts=JAN)
        clock.now = AUG + timedelta(days=60)
        mem.add("I moved to Rome", ts=AUG)
        turns = mem.episodes()
        assert [t.content for t in turns] == [
            "Noted, Oslo.", "I live in Oslo", "hello there", "I moved to Rome"]
        assert all(isinstance(t, Episode) and t.id for t in turns)
        assert [t.content for t in mem.episodes(roles=["assistant"])] == ["Noted, Oslo."]
        assert [t.content for t in mem.episodes(valid_at=JUN)] == turns_before(turns, 3)
        assert [t.content for t in mem.episodes(known_at=AUG)] == turns_before(turns, 3)
        assert [t.id for t in mem.episodes(limit=2, offset=1)] == [t.id for t in turns[1:3]]
        assert mem.episodes(user="bob") == []  # another user's turns are not visible
        assert len(mem.scope(session="s1").episodes()) == 4  # a session inherits its user's
        with pytest.raises(InvalidArgumentError, match="^roles: "):
            mem.episodes(roles=["robot"])
        with pytest.raises(InvalidArgumentError, match="^roles: "):
            mem.episodes(roles="user")


def turns_before(turns: list[Episode], n: int) -> list[str]:
    return [t.content for t in turns[:n]]
