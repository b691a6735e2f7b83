"""A write reads its slot's still-valid claims by seeking the slot index, however many
ended claims the slot holds (``_writes._slot_sql``): the plan and the answers."""

from __future__ import annotations

from collections.abc import Sequence

from memvara import Memvara, Scope, SQLiteStore
from memvara.store.sqlite._writes import _slot_sql

from .conftest import Clock


def _said_often(
    times: int, traced: list[tuple[str, Sequence[object]]], clock: Clock | None = None,
) -> Memvara:
    """A memory where ``maya`` moved ``times`` times, a day apart: one live city, the
    rest ended."""
    clock = clock or Clock()
    store = SQLiteStore(":memory:", tracer=lambda sql, params: traced.append((sql, params)))
    mem = Memvara(store=store, clock=clock)
    for i in range(times):
        clock.advance(days=1)
        mem.remember("maya", "lives_in", f"City {i}", user="u")
    return mem


def _slot_reads(traced: list[tuple[str, Sequence[object]]]) -> list[tuple[str, Sequence[object]]]:
    return [(sql, params) for sql, params in traced if sql.startswith("WITH wanted")]


def test_a_single_write_seeks_the_live_end_of_a_long_slot() -> None:
    traced: list[tuple[str, Sequence[object]]] = []
    clock = Clock()
    mem = _said_often(30, traced, clock)
    with mem:
        clock.advance(days=1)
        traced.clear()
        receipt = mem.remember("maya", "lives_in", "Lisbon", user="u")
        assert len(_slot_reads(traced)) == 1  # the write read its slot once
        store = mem.store
        assert isinstance(store, SQLiteStore)
        # The statement as the write runs it, its values bound (a trace inlines them,
        # and two conditions spelled alike are folded back into one by the planner).
        params = ["maya", "lives_in", "", "u", "", "", "", "u", "", "", 10**17]
        plan = [row[-1] for row in store._query(
            f"EXPLAIN QUERY PLAN {_slot_sql(1, True, True)}", params)]
        seeks = [step for step in plan if "USING INDEX claims_slot" in step]
        # one seek for the open-ended claims, one for those ending after the write
        assert any("MULTI-INDEX OR" in step for step in plan), plan
        assert len(seeks) == 2, plan
        assert any("valid_to=?" in step for step in seeks), plan
        assert any("valid_to>?" in step for step in seeks), plan
        # and the answer: the one live city was read and ended
        assert [c.object for c in receipt.ended] == ["City 29"]
        assert [c.object for c in mem.get_all(user="u")] == ["Lisbon"]
        assert len(mem.history("maya", "lives_in", user="u")) == 31


def test_the_bounded_reads_answer_as_before() -> None:
    """The store-level reads built on the same query: one scope and many slots, with
    and without a bound, and across scopes."""
    traced: list[tuple[str, Sequence[object]]] = []
    mem = _said_often(5, traced)
    with mem:
        mem.remember("maya", "likes", "tea", user="u")
        mem.remember("maya", "lives_in", "Oslo", user="v")
        store = mem.store
        assert isinstance(store, SQLiteStore)
        key = "maya"
        u, v = Scope(user="u"), Scope(user="v")
        live = store.slot_claims(u, [(key, "lives_in"), (key, "likes")], ending_after=0)
        assert [c.object for c in live[(key, "lives_in")]] == [f"City {i}" for i in range(5)]
        assert [c.object for c in live[(key, "likes")]] == ["tea"]
        far = 10**18  # after every end: only the open-ended claims are still valid
        late = store.slot_claims(u, [(key, "lives_in"), (key, "likes")], ending_after=far)
        assert [c.object for c in late[(key, "lives_in")]] == ["City 4"]
        everything = store.slot_claims(u, [(key, "lives_in")])
        assert len(everything[(key, "lives_in")]) == 5
        across = store.slot_claims_across(
            {u: [(key, "lives_in")], v: [(key, "lives_in")]}, ending_after=far)
        assert [c.object for c in across[u][(key, "lives_in")]] == ["City 4"]
        assert [c.object for c in across[v][(key, "lives_in")]] == ["Oslo"]
        unbounded = store.slot_claims_across({u: [(key, "lives_in")]})
        assert len(unbounded[u][(key, "lives_in")]) == 5
