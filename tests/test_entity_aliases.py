"""Entities beyond the fold: aliases an owner (or a model) decides, per tenant and user.

The fold settles spelling ("Acme Corp." is "acme"); an alias settles names ("Big Blue" is
"IBM"). Once learned it applies to new writes and widens ``history()``; claims already
written keep their key until ``backfill_entities()`` re-files them, stamping each one.
"""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Sequence

import pytest

from memvara import Claim, Episode, InvalidArgumentError, Memvara, SQLiteStore

from .conftest import AUG, JAN, JUN, MAR, Clock, FakeLLM


def _objects(claims: Sequence[Claim]) -> list[str]:
    return [c.object for c in claims]


def test_either_name_reaches_both_names_claims(mem: Memvara) -> None:
    assert mem.backfill_entities(dry_run=False) == []  # nothing learned, nothing to do
    mem.remember("IBM", "headquartered_in", "Armonk", valid_from=JAN, recorded_at=JAN)
    mem.remember("Big Blue", "ceo", "Arvind", valid_from=MAR, recorded_at=MAR)
    mem.remember("Big Blue", "headquartered_in", "New York", valid_from=MAR, recorded_at=MAR)
    assert _objects(mem.history("Big Blue", "headquartered_in")) == ["New York"]
    mem.alias_entity("Big Blue", "IBM")
    for probe in ("Big Blue", "IBM", "big blue", "IBM Corp."):
        assert _objects(mem.history(probe, "headquartered_in")) == ["Armonk", "New York"], probe


def test_new_writes_under_either_name_settle_one_slot(mem: Memvara) -> None:
    mem.remember("Robert Smith", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    mem.alias_entity("Bob", "Robert Smith")
    receipt = mem.remember("Bob", "works_at", "Globex", valid_from=JUN, recorded_at=JUN)
    assert [(c.object, c.state) for c in receipt.ended] == [("Acme", "ended")]
    assert _objects(mem.history("Bob", "works_at")) == ["Acme", "Globex"]


def test_a_bulk_write_under_an_alias_settles_the_entitys_slot(mem: Memvara) -> None:
    mem.remember("Robert Smith", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    mem.alias_entity("Bob", "Robert Smith")
    receipt = mem.remember_many([
        Claim("Bob", "works_at", "Globex", valid_from=JUN, recorded_at=JUN),
        Claim("Ann", "works_at", "Initech", valid_from=JUN, recorded_at=JUN),
    ])
    assert [(c.object, c.state) for c in receipt.ended] == [("Acme", "ended")]
    assert _objects(mem.history("Robert Smith", "works_at")) == ["Acme", "Globex"]


def test_an_aliased_object_is_the_same_value(mem: Memvara) -> None:
    mem.alias_entity("Big Blue", "IBM")
    first = mem.remember("user", "works_at", "IBM").added[0]
    again = mem.remember("user", "works_at", "Big Blue")
    assert again.added == () and again.reinforced[0].id == first.id


def test_aliases_belong_to_one_owner_and_never_climb(mem: Memvara) -> None:
    team = mem.scope(tenant="acme")
    team.alias_entity("Bob", "Robert Smith")  # the tenant's own decision
    ann = team.scope(user="ann")
    ann.remember("Robert Smith", "works_at", "Acme", valid_from=JAN, recorded_at=JAN)
    ann.remember("Bob", "works_at", "Globex", valid_from=JUN, recorded_at=JUN)
    assert _objects(ann.history("Bob", "works_at")) == ["Globex"]  # not ann's alias
    ann.alias_entity("Bob", "Robert Smith")
    assert _objects(ann.history("Bob", "works_at")) == ["Acme", "Globex"]
    assert _objects(team.scope(user="cy").history("Bob", "works_at")) == []


def test_an_alias_of_an_alias_names_the_same_entity(mem: Memvara) -> None:
    mem.alias_entity("BB", "Big Blue")
    mem.alias_entity("Big Blue", "IBM")
    mem.alias_entity("Blue", "BB")
    mem.remember("IBM", "founded_in", "1911")
    for probe in ("BB", "Blue", "Big Blue", "IBM"):
        assert _objects(mem.history(probe, "founded_in")) == ["1911"], probe


def test_backfill_is_a_dry_run_unless_asked_and_stamps_what_it_changes(mem: Memvara, clock: Clock) -> None:
    old = mem.remember("Bob", "works_at", "Acme", valid_from=JAN, recorded_at=JAN).added[0]
    mem.alias_entity("Bob", "Robert Smith")
    preview = mem.backfill_entities()
    assert [c.id for c in preview] == [old.id]
    assert preview[0].meta["entity_backfill"] == {"from": "bob", "to": "robert smith", "at": preview[0].meta["entity_backfill"]["at"]}  # type: ignore[index]
    assert mem.get(old.id) == old  # nothing changed
    changed = mem.backfill_entities(dry_run=False)
    assert [c.id for c in changed] == [old.id] and mem.get(old.id) == changed[0]
    assert "entity_backfill" in mem.get(old.id).meta  # type: ignore[union-attr]
    receipt = mem.remember("Robert Smith", "works_at", "Globex", valid_from=AUG, recorded_at=AUG)
    assert [c.id for c in receipt.ended] == [old.id]  # now one slot
    assert mem.backfill_entities(dry_run=False) == []  # idempotent


@pytest.mark.skipif(sys.version_info < (3, 11), reason="Connection.setlimit is new in 3.11")
def test_a_backfill_of_many_aliases_binds_within_sqlites_limit(mem: Memvara) -> None:
    # SQLite builds default to 32,766 bound values a statement (this one allows more):
    # a lower limit stands in for a mapping of thousands of aliases.
    store = mem._core.store
    assert isinstance(store, SQLiteStore)
    set_limit = getattr(store._writer, "setlimit")  # noqa: B009 - typed for Python 3.10
    set_limit(getattr(sqlite3, "SQLITE_LIMIT_VARIABLE_NUMBER"), 2_100)  # noqa: B009
    olds = [mem.remember(f"Nick {i}", "works_at", "Acme").added[0] for i in (499, 0, 450)]
    for i in range(500):  # learned after the writes, so those claims wait for a backfill
        mem.alias_entity(f"nick {i}", f"person {i}")
    changed = mem.backfill_entities(dry_run=False)
    assert [c.id for c in changed] == [olds[1].id, olds[2].id, olds[0].id]  # mapping order
    assert [mem.history(f"person {i}", "works_at")[0].id for i in (499, 0, 450)] == [
        c.id for c in olds]


class _Resolver(FakeLLM):
    """A fake model that also says which known name a new one refers to."""

    def __init__(self, facts: dict[str, list[tuple[str, str, str]]], same: dict[str, str]) -> None:
        super().__init__(facts)
        self.same = same
        self.resolve_calls: list[tuple[str, list[str]]] = []

    def resolve_entity(self, surface: str, candidates: Sequence[str]) -> str | None:
        self.resolve_calls.append((surface, list(candidates)))
        return self.same.get(surface)


def test_add_asks_the_model_once_per_new_name_when_resolution_is_on(clock: Clock) -> None:
    from memvara import MemoryRecorder

    rec = MemoryRecorder()
    model = _Resolver({"Moved over to Big Blue last week": [("user", "works_at", "Big Blue"),
                                                             (" ", "likes", "IBM")],
                       "Big Blue is treating me well": [("user", "likes", "Big Blue")]},
                      same={"Big Blue": "IBM"})
    with Memvara(clock=clock, llm=model, resolve_entities=True, telemetry=rec) as mem:
        first = mem.remember("user", "works_at", "IBM").added[0]
        receipt = mem.add("Moved over to Big Blue last week")
        assert receipt.added == () and receipt.reinforced[0].id == first.id
        assert [s for s, _ in model.resolve_calls] == ["Big Blue"]
        assert "IBM" in model.resolve_calls[0][1]
        clock.advance(minutes=1)
        mem.add("Big Blue is treating me well")
        assert len(model.resolve_calls) == 1  # the name is known now
    assert rec.total("llm.calls", kind="resolve_entity") == 1


def test_resolution_is_off_unless_asked_and_needs_a_model_that_can(clock: Clock) -> None:
    model = _Resolver({"Joined Big Blue": [("user", "works_at", "Big Blue")]}, same={"Big Blue": "IBM"})
    with Memvara(clock=clock, llm=model) as mem:
        mem.remember("user", "works_at", "IBM")
        mem.add("Joined Big Blue")
        assert model.resolve_calls == []
    with pytest.raises(InvalidArgumentError, match="resolve_entity"):
        Memvara(clock=clock, llm=FakeLLM(), resolve_entities=True)
    with pytest.raises(InvalidArgumentError) as caught:
        Memvara(clock=clock, llm=model, resolve_entities="yes")  # type: ignore[arg-type]
    assert caught.value.argument == "resolve_entities"


def test_a_model_answer_outside_the_candidates_or_the_same_name_is_ignored(clock: Clock) -> None:
    model = _Resolver({"I'm at Acme, Inc. now": [("user", "works_at", "Acme, Inc."),
                                                  ("Acme, Inc.", "makes", "anvils")],
                       "Ping again": [("user", "likes", "Zed")]},
                      same={"Acme, Inc.": "Acme", "Zed": "Nobody We Know"})
    with Memvara(clock=clock, llm=model, resolve_entities=True) as mem:
        mem.add(Episode("Ping"))  # no names known yet: nothing to ask about
        assert model.resolve_calls == []
        mem.remember("user", "works_at", "Acme")
        mem.add("I'm at Acme, Inc. now")  # "acme" is known by its fold; "anvils" is new
        assert [s for s, _ in model.resolve_calls] == ["anvils"]
        mem.remember("user", "likes", "Zed2")
        clock.advance(minutes=1)
        mem.add("Ping again")
        assert [s for s, _ in model.resolve_calls] == ["anvils", "Zed"]
        assert mem.store.aliases(mem.default_scope) == {}  # "Nobody We Know" is no candidate


@pytest.mark.parametrize(("surface", "entity", "argument"), [
    ("", "IBM", "surface"), ("Big Blue", " ", "entity"), ("Acme Corp.", "ACME, Inc.", "surface"),
])
def test_bad_aliases_are_refused(mem: Memvara, surface: str, entity: str, argument: str) -> None:
    with pytest.raises(InvalidArgumentError) as caught:
        mem.alias_entity(surface, entity)
    assert caught.value.argument == argument
    with pytest.raises(InvalidArgumentError):
        mem.backfill_entities(dry_run="no")  # type: ignore[arg-type]


def test_writes_for_owners_without_aliases_ask_the_store_nothing(clock: Clock) -> None:
    # Thousands of users and no aliases is the common case: one read of who has any,
    # then no alias lookup per write, however many users outnumber the cache.
    seen: list[str] = []
    store = SQLiteStore(tracer=lambda sql, params: seen.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        mem.alias_entity("Bob", "Robert Smith", user="ann")
        seen.clear()
        for i in range(50):
            mem.remember(f"user_{i}", "works_at", "Acme", user=f"user_{i}")
        mem.remember("Bob", "works_at", "Globex", user="ann")
        lookups = [sql for sql in seen if "entity_aliases" in sql]
        assert len(lookups) == 1 and "s_user = 'ann'" in lookups[0]  # ann's, once
        assert [c.subject for c in mem.get_all(user="ann")] == ["Bob"]
        assert mem.history("Robert Smith", "works_at", user="ann")[0].object == "Globex"


def test_a_writer_keeps_a_bounded_number_of_owners_aliases(
    mem: Memvara, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memvara._write.aliases as aliases

    monkeypatch.setattr(aliases, "ALIAS_OWNERS_CACHED", 2)
    for name in ("ann", "bob", "cy", "dee"):
        mem.alias_entity("Bob", "Robert Smith", user=name)
        mem.remember("Robert Smith", "works_at", "Acme", user=name, valid_from=JAN, recorded_at=JAN)
    for name in ("ann", "dee"):
        receipt = mem.remember("Bob", "works_at", "Globex", user=name)
        assert _objects(receipt.ended) == ["Acme"], name
