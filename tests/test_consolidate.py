"""``consolidate()``: decay toward a floor, merge near-duplicates, promote patterns.

Salience has two parts (Bjork & Bjork): storage strength, which only grows, and
retrieval strength (``Claim.salience``), which decays with disuse and is what search
ranks by. Consolidation runs off the write path, in windows of about 500 rows that each
commit on their own, and is idempotent.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager

import numpy as np
import pytest

from memvara import (
    Claim,
    MemoryRecorder,
    Memvara,
    NullLLM,
    Scope,
    ScopedMemvara,
    SQLiteStore,
    StorageFullError,
)
from memvara._write import consolidate as _consolidate
from memvara._write.consolidate import (
    FLOOR,
    PROMOTE_AFTER,
    SPACING_GAIN,
    plan_window,
    reinforced_storage,
    retrievability,
)
from memvara.store.base import SweepWindow

from .conftest import JAN, JUL, JUN, MAR, Clock

DAY_US = 86_400 * 1_000_000
ZEROS = {"decayed": 0, "merged": 0, "promoted": 0}


def storage_of(mem: Memvara, claim_id: str) -> float:
    """A claim's storage strength, read through the store protocol's sweep."""
    window = mem.store.sweep_claims(Scope(), None, 10_000)
    return float(window.storage[window.ids.index(claim_id)])


def salience(mem: Memvara | ScopedMemvara, claim_id: str) -> float:
    claim = mem.get(claim_id)
    assert claim is not None
    return claim.salience


# -- the math ---------------------------------------------------------------------------
def test_retrieval_strength_is_one_when_observed_and_halves_toward_the_floor() -> None:
    assert retrievability(1.0, 0.0) == 1.0
    assert retrievability(1.0, 30 * DAY_US) == pytest.approx(FLOOR + (1 - FLOOR) / 2)
    assert retrievability(1.0, 1e6 * DAY_US) == pytest.approx(FLOOR)
    assert retrievability(1.0, 1e6 * DAY_US) >= FLOOR


def test_storage_strength_slows_decay() -> None:
    month = 30 * DAY_US
    assert retrievability(3.0, month) > retrievability(1.0, month)
    assert retrievability(2.0, 2 * month) == pytest.approx(retrievability(1.0, month))


def test_a_reinforcement_gains_inversely_to_retrievability() -> None:
    assert reinforced_storage(1.0, 1.0) == pytest.approx(1.0 + SPACING_GAIN)
    assert reinforced_storage(1.0, FLOOR) == pytest.approx(1.0 + SPACING_GAIN / FLOOR)
    assert reinforced_storage(1.0, 0.0) == reinforced_storage(1.0, FLOOR)  # never divides by 0


def window_of(
    objects: Sequence[str],
    *,
    vectors: Sequence[Sequence[float]] | None = None,
    polarity: Sequence[int] | None = None,
    subjects: Sequence[str] | None = None,
) -> SweepWindow:
    """A window of fresh claims ``c1, c2, ...`` valid from 0, open-ended, in the slot
    ``(user, likes)`` unless ``subjects`` says otherwise."""
    n = len(objects)
    has = vectors is not None
    return SweepWindow(
        ids=tuple(f"c{i + 1}" for i in range(n)),
        rowids=np.arange(1, n + 1, dtype=np.int64),
        slots=tuple(("", "", "", "", s, "likes") for s in subjects or ["user"] * n),
        polarity=np.asarray(polarity or [1] * n, dtype=np.int64),
        object_keys=tuple(objects),
        valid_from=np.zeros(n, dtype=np.int64),
        valid_to=np.full(n, np.iinfo(np.int64).max, dtype=np.int64),
        memory_types=("semantic",) * n,
        observations=np.ones(n, dtype=np.int64),
        storage=np.ones(n),
        retrieval=np.ones(n),
        observed_at=np.zeros(n, dtype=np.int64),
        vectors=np.asarray(vectors if has else np.zeros((n, 0)), dtype=np.float32),
        has_vector=np.full(n, has),
        next=None,
    )


def test_the_plan_is_a_pure_function_of_a_window() -> None:
    assert plan_window(window_of([]), 0).empty
    assert plan_window(window_of(["tea", "coffee"]), 0).empty  # no vectors: keys decide
    plan = plan_window(window_of(["nyc", "new york", "tea"],
                                 vectors=[[1, 0], [0.999, 0.02], [0, 1]]), 0)
    assert plan.folds == [("c1", ("c2",), 2, 1.0, 0)]
    assert plan.merged == 1 and plan.decayed == 0


def test_only_claims_of_one_slot_are_compared() -> None:
    same = [[1.0, 0.0]] * 4
    plan = plan_window(window_of(["a", "b", "c", "d"], vectors=same,
                                 subjects=["ann", "ann", "bob", "bob"]), 0)
    assert plan.folds == [("c1", ("c2",), 2, 1.0, 0), ("c3", ("c4",), 2, 1.0, 0)]


def test_opposite_polarity_is_never_a_duplicate() -> None:
    assert plan_window(window_of(["tea", "tea"], polarity=[1, -1]), 0).empty
    same = [[1.0, 0.0], [1.0, 0.0]]
    assert plan_window(window_of(["tea", "teas"], vectors=same, polarity=[1, -1]), 0).empty


# -- decay ------------------------------------------------------------------------------
def test_decay_lowers_retrieval_strength_toward_the_floor_and_never_below(
    mem: Memvara, clock: Clock
) -> None:
    cid = mem.remember("user", "likes", "jazz").added[0].id
    assert mem.consolidate() == ZEROS  # seen just now: nothing to decay
    clock.advance(days=30)
    assert mem.consolidate() == {"decayed": 1, "merged": 0, "promoted": 0}
    assert salience(mem, cid) == pytest.approx(FLOOR + (1 - FLOOR) / 2)
    clock.advance(days=3650)
    mem.consolidate()
    assert FLOOR <= salience(mem, cid) < FLOOR + 1e-3


def test_storage_strength_never_decays(mem: Memvara, clock: Clock) -> None:
    cid = mem.remember("user", "likes", "jazz").added[0].id
    clock.advance(days=400)
    mem.consolidate()
    assert storage_of(mem, cid) == 1.0
    assert salience(mem, cid) < 0.2


def test_a_second_run_at_the_same_instant_changes_nothing(mem: Memvara, clock: Clock) -> None:
    for i in range(20):
        mem.remember(f"user_{i}", "likes", "jazz", memory_type="episodic")
        mem.remember(f"user_{i}", "likes", "jazz", memory_type="episodic")
    clock.advance(days=10)
    first = mem.consolidate()
    assert first["decayed"] == 20
    assert mem.consolidate() == ZEROS


def test_an_empty_store_has_nothing_to_do(mem: Memvara) -> None:
    assert mem.consolidate() == ZEROS


def test_a_re_observation_resets_retrieval_strength(mem: Memvara, clock: Clock) -> None:
    cid = mem.remember("user", "likes", "jazz").added[0].id
    clock.advance(days=60)
    mem.consolidate()
    assert salience(mem, cid) < 0.5
    (again,) = mem.remember("user", "likes", "jazz").reinforced
    assert again.id == cid and again.salience == 1.0
    assert mem.consolidate() == ZEROS  # observed just now


def test_the_spacing_effect(mem: Memvara, clock: Clock) -> None:
    """Re-meeting a nearly forgotten fact adds more storage strength than re-meeting a
    fresh one, and the better-stored fact then fades more slowly."""
    fresh = mem.remember("user", "likes", "jazz").added[0].id
    spaced = mem.remember("user", "likes", "tea").added[0].id
    mem.remember("user", "likes", "jazz")  # massed: at once
    clock.advance(days=365)
    mem.remember("user", "likes", "tea")  # spaced: nearly forgotten
    massed_gain = storage_of(mem, fresh) - 1.0
    spaced_gain = storage_of(mem, spaced) - 1.0
    assert massed_gain == pytest.approx(SPACING_GAIN)
    assert spaced_gain > 9 * massed_gain
    clock.advance(days=90)
    mem.consolidate()
    assert salience(mem, spaced) > retrievability(1.0 + massed_gain, 90 * DAY_US)


def test_a_late_arriving_observation_does_not_move_the_last_one_back(
    mem: Memvara, clock: Clock
) -> None:
    cid = mem.remember("user", "likes", "jazz").added[0].id
    mem.remember("user", "likes", "jazz", recorded_at=JAN)  # learned long ago, told now
    clock.advance(days=30)
    mem.consolidate()
    assert salience(mem, cid) == pytest.approx(
        retrievability(1.0 + SPACING_GAIN, 30 * DAY_US)
    )


def test_search_ranks_by_retrieval_strength(mem: Memvara, clock: Clock) -> None:
    cid = mem.remember("user", "likes", "jazz").added[0].id
    clock.advance(days=90)
    mem.consolidate()
    (hit,) = mem.search("jazz")
    assert hit.id == cid
    # observed once (no observation boost); retrieval strength softened to 0.55..1
    assert hit.explain.salience == pytest.approx(0.5 + 0.5 * salience(mem, cid))
    assert hit.explain.salience < 1.0


# -- merge ------------------------------------------------------------------------------
def test_duplicates_merge_into_the_oldest_which_folds_in_sources_and_counts(
    mem: Memvara,
) -> None:
    """Two names of one company, filed apart until an alias re-filed them together."""
    first = mem.remember("Big Blue", "employs", "alice", sources=["e1"]).added[0]
    second = mem.remember("IBM", "employs", "Alice", sources=["e2", "e3"]).added[0]
    mem.remember("IBM", "employs", "Alice", sources=["e3"])
    mem.alias_entity("Big Blue", "IBM")
    mem.backfill_entities(dry_run=False)
    assert mem.consolidate() == {"decayed": 0, "merged": 1, "promoted": 0}
    survivor = mem.get(first.id)
    assert survivor is not None and survivor.state == "live"
    assert survivor.observations == 3
    assert survivor.sources == ("e1", "e2", "e3")
    loser = mem.get(second.id)
    assert loser is not None and loser.state == "retired"
    assert loser.invalidated_by == first.id
    assert [c.id for c in mem.history("IBM", "employs")] == [first.id, second.id]
    assert mem.consolidate() == ZEROS
    assert isinstance(mem.store, SQLiteStore) and mem.store.integrity_problems() == []


def test_the_survivor_is_the_same_whatever_the_write_order(clock: Clock) -> None:
    survivors = []
    for order in (("NYC", "New York City"), ("New York City", "NYC")):
        with Memvara(clock=clock, llm=NullLLM()) as mem:
            ids = [mem.remember("user", "visited", obj, text="user visited New York").added[0].id
                   for obj in order]
            assert mem.consolidate()["merged"] == 1
            kept = [c for c in mem.get_all() if c.predicate == "visited"]
            assert [c.id for c in kept] == [ids[0]]
            survivors.append(kept[0].object)
    assert survivors == ["NYC", "New York City"]  # the first written, each time


def test_near_duplicate_vectors_merge_but_distinct_values_do_not(mem: Memvara) -> None:
    mem.remember("user", "likes", "NYC", text="user likes New York")
    mem.remember("user", "likes", "New York City", text="user likes New York")
    mem.remember("user", "likes", "tea")
    mem.remember("user", "likes", "coffee")
    mem.remember("user", "likes", "tea", polarity=-1, valid_from=JAN)
    assert mem.consolidate()["merged"] == 1
    assert sorted(c.object for c in mem.get_all()) == ["NYC", "coffee", "tea"]


def insert_unsettled(mem: Memvara, claims: Sequence[Claim]) -> list[Claim]:
    """Store claims as written, skipping the write path's own reinforcement (as two
    processes, or rows re-filed under one key, can leave them)."""
    writer = mem._core.writer
    now = writer.now()
    return mem.store.insert_claims([writer.prepare(c, Scope(), now) for c in claims], None)


def test_duplicates_with_disjoint_valid_times_are_two_facts(mem: Memvara) -> None:
    """Lived in Berlin, moved away, moved back (and was seen there twice since)."""
    before, back, again = insert_unsettled(mem, [
        Claim("user", "visits", "Berlin", valid_from=JAN, valid_to=MAR),
        Claim("user", "visits", "berlin", valid_from=JUN),
        Claim("user", "visits", "BERLIN", valid_from=JUL),
    ])
    assert mem.consolidate()["merged"] == 1
    assert [c.state for c in mem.history("user", "visits")] == ["ended", "live", "retired"]
    assert mem.get(again.id).invalidated_by == back.id  # type: ignore[union-attr]
    assert mem.get(before.id).state == "ended"  # type: ignore[union-attr]


def test_a_slot_larger_than_a_window_is_swept_whole(
    mem: Memvara, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_consolidate, "WINDOW_ROWS", 4)
    first = mem.remember("user", "likes", "NYC", text="user likes New York").added[0]
    for i in range(10):
        mem.remember("user", "likes", f"thing {i}")
    mem.remember("user", "likes", "New York City", text="user likes New York")
    mem.remember("zed", "likes", "jazz")
    assert mem.consolidate()["merged"] == 1
    assert mem.get(first.id).observations == 2  # type: ignore[union-attr]


def test_exact_duplicates_are_found_in_slots_too_large_to_compare_vectors(
    mem: Memvara,
) -> None:
    many = [Claim("user", "likes", f"thing {i}") for i in range(_consolidate.VECTOR_SLOT_CAP)]
    mem.remember_many(many)
    insert_unsettled(mem, [Claim("user", "likes", "Thing 0")])
    assert mem.consolidate()["merged"] == 1


# -- promotion --------------------------------------------------------------------------
def test_an_episodic_claim_seen_often_enough_becomes_semantic(mem: Memvara) -> None:
    for _ in range(PROMOTE_AFTER):
        often = mem.remember("user", "drinks", "espresso", memory_type="episodic").added
    once = mem.remember("user", "drinks", "tea", memory_type="episodic").added[0]
    for _ in range(PROMOTE_AFTER - 2):
        mem.remember("user", "drinks", "tea", memory_type="episodic")
    assert not often  # every later write reinforced the first
    assert mem.consolidate() == {"decayed": 0, "merged": 0, "promoted": 1}
    kinds = {c.object: c.memory_type for c in mem.get_all()}
    assert kinds == {"espresso": "semantic", "tea": "episodic"}
    assert mem.get(once.id).observations == PROMOTE_AFTER - 1  # type: ignore[union-attr]


def test_merged_observations_promote_in_the_same_run(mem: Memvara) -> None:
    a = mem.remember("user", "visits", "NYC", memory_type="episodic",
                     text="user visits New York").added[0]
    for _ in range(2):
        mem.remember("user", "visits", "NYC", memory_type="episodic")
    for _ in range(2):
        mem.remember("user", "visits", "New York City", memory_type="episodic",
                     text="user visits New York")
    assert mem.consolidate() == {"decayed": 0, "merged": 1, "promoted": 1}
    survivor = mem.get(a.id)
    assert survivor is not None
    assert survivor.observations == 5 and survivor.memory_type == "semantic"
    assert mem.consolidate() == ZEROS


# -- scope ------------------------------------------------------------------------------
def test_a_scoped_run_covers_its_subtree_and_leaves_siblings_alone(
    mem: Memvara, clock: Clock
) -> None:
    bob = mem.remember("bob", "likes", "jazz", user="bob").added[0].id
    bobs_session = mem.remember("bob", "likes", "tea", user="bob", session="s1").added[0].id
    alice = mem.remember("alice", "likes", "jazz", user="alice").added[0].id
    shared = mem.remember("team", "likes", "jazz").added[0].id
    clock.advance(days=30)
    assert mem.consolidate(user="bob")["decayed"] == 2
    assert salience(mem.scope(user="bob"), bob) < 1.0
    assert salience(mem.scope(user="bob", session="s1"), bobs_session) < 1.0
    assert salience(mem.scope(user="alice"), alice) == 1.0
    assert salience(mem, shared) == 1.0
    assert mem.scope(user="alice").consolidate()["decayed"] == 1


def test_equal_claims_in_sibling_scopes_do_not_merge(mem: Memvara) -> None:
    mem.remember("team", "uses", "vim", user="bob")
    mem.remember("team", "uses", "vim", user="alice")
    assert mem.consolidate()["merged"] == 0


# -- windows ----------------------------------------------------------------------------
class FailingStore(SQLiteStore):
    """Fails the ``fail_at``-th window, after that window's writes have run."""

    def __init__(self, path: str, fail_at: int) -> None:
        super().__init__(path)
        self.fail_at = fail_at
        self.windows = 0

    def apply_sweep(
        self,
        retrieval: Sequence[tuple[str, float]],
        memory_types: Sequence[tuple[str, str]],
        folds: Sequence[tuple[str, Sequence[str], int, float, int]],
        at: int,
    ) -> None:
        super().apply_sweep(retrieval, memory_types, folds, at)
        self.windows += 1
        if self.windows == self.fail_at:
            raise StorageFullError("no space left for the store: injected")


def test_a_failing_window_rolls_back_alone_and_a_rerun_completes(
    db_path: str, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_consolidate, "WINDOW_ROWS", 4)
    store = FailingStore(db_path, fail_at=2)
    with Memvara(store=store, clock=clock, llm=NullLLM()) as mem:
        ids = {f"s{i:02}": mem.remember(f"s{i:02}", "likes", "jazz").added[0].id
               for i in range(12)}
        survivor = mem.remember("s05", "likes", "NYC", text="s05 likes New York").added[0]
        loser = mem.remember("s05", "likes", "New York City", text="s05 likes New York").added[0]
        clock.advance(days=30)
        with pytest.raises(StorageFullError):
            mem.consolidate()
        # windows are whole slots in slot order: s00-s03, then s04-s05 (four rows)...
        assert [salience(mem, ids[f"s{i:02}"]) < 1.0 for i in range(6)] == [True] * 4 + [False] * 2
        assert all(salience(mem, ids[f"s{i:02}"]) == 1.0 for i in range(6, 12))
        # ...and the failed window left nothing half-done: no retirement, no fold
        assert mem.get(loser.id).state == "live"  # type: ignore[union-attr]
        assert mem.get(survivor.id).observations == 1  # type: ignore[union-attr]
        assert store.integrity_problems() == []
        assert mem.consolidate() == {"decayed": 9, "merged": 1, "promoted": 0}
        assert mem.get(loser.id).invalidated_by == survivor.id  # type: ignore[union-attr]
        assert mem.consolidate() == ZEROS


def test_each_window_commits_on_its_own(
    mem: Memvara, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_consolidate, "WINDOW_ROWS", 3)
    for i in range(10):
        mem.remember(f"s{i}", "likes", "jazz")
    mem._core.writer.embed_missing()
    clock.advance(days=30)
    opened: list[int] = []
    real = mem.store.transaction

    def counted() -> AbstractContextManager[None]:
        opened.append(1)
        return real()

    monkeypatch.setattr(mem.store, "transaction", counted)
    assert mem.consolidate()["decayed"] == 10
    assert len(opened) == 4  # ceil(10 / 3) windows, each its own transaction


def test_every_run_reports_merges_to_telemetry_even_at_zero(clock: Clock) -> None:
    rec = MemoryRecorder()
    with Memvara(clock=clock, llm=NullLLM(), telemetry=rec) as mem:
        mem.consolidate()
        assert rec.values("consolidate.merged") == [0.0]


def test_a_claim_never_stored_a_vector_still_consolidates(db_path: str, clock: Clock) -> None:
    with Memvara(db_path, clock=clock, llm=NullLLM()) as mem:
        cid = mem.remember("user", "likes", "jazz").added[0].id
        clock.advance(days=1)
        window = mem.store.sweep_claims(Scope(), None, 10)
        assert window.has_vector.tolist() == [False] and window.vectors.shape == (1, 0)
        assert mem.consolidate()["decayed"] == 1
        assert salience(mem, cid) < 1.0
