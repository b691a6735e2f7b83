"""The same writes on SQLite and on PostgreSQL give the same answers, read for read.

Two memories, one per backend, share a clock and take the same operations in lockstep:
single and bulk writes, supersessions on both clocks, forgets, deletes, turns, erasures
and purges in several scopes. After each step every read is compared: listings in each
state and at past instants, counts, histories, ``why()``, neighbourhoods, stats, the
text candidates (ids and BM25 scores, which must be the same doubles: FTS5's tokens and
arithmetic), the vector candidates (cosines to float32 rounding) and ``search()``.

These stores stay under ``PLAN_MIN_ROWS`` (2,048) rows, where both backends run the
exact query: the lists are the exact BM25 ranking on both. Past it both plan the text
search the same way (``store/sqlite/_bm25.py``, ``store/postgres/_plan.py``), which
leaves floor words out of the scores and may fill the tail from a window:
``tests/test_postgres_plan.py`` asserts the planned lists are still equal, ids and
scores with ``==``, and shows where they differ from the exact ranking.
"""

from __future__ import annotations

import base64
import hashlib
import io
import random
from dataclasses import replace
from collections.abc import Iterator
from datetime import timedelta

import numpy as np
import pytest

from memvara import (
    STATES,
    Claim,
    ImportConflictError,
    Memvara,
    NullLLM,
    Scope,
    StoreError,
    export_jsonl,
    import_jsonl,
)
from memvara.store.base import TransferStore
from memvara.store import TimeQuery
from memvara._domain.time import to_micros
from memvara.embed import HashingEmbedder

from .conftest import Clock, embed_all
from .postgres_server import dsn, schema  # noqa: F401 - the fixtures the tests below take

WORDS = ("tea coffee berlin paris lisbon acme globex running runs ran runner pottery"
         " guitar chess kayak sailing quiet loud river mountain green blue red").split()
PEOPLE = ("Alice", "Bob", "Carol", "Dana")
TERMS = (["tea"], ["green", "tea"], ["running"], ["runs", "runner", "ran"], ["berlin"],
         ["pottery", "river", "chess"], ["nothing_matches_this"], ["alice"], ["café"])


@pytest.fixture
def pair(clock: Clock, dsn: str, schema: str) -> Iterator[tuple[Memvara, Memvara]]:
    from memvara.store.postgres import PostgresStore

    lite = Memvara(clock=clock, llm=NullLLM())
    pg = Memvara(store=PostgresStore(dsn, schema=schema), clock=clock, llm=NullLLM())
    try:
        yield lite, pg
    finally:
        lite.close()
        pg.close()


def phrase(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 6)))


def compare_reads(lite: Memvara, pg: Memvara, instants: list[int]) -> int:
    """Compare every read; how many text matches were compared (so a run that matched
    nothing cannot pass unnoticed)."""
    matched = 0
    for scope in (Scope(), Scope(user="u1"), Scope(user="u1", agent="a1"), Scope(user="u2")):
        a, b = lite.store, pg.store
        for states in (["live"], ["ended"], ["retired"], list(STATES)):
            for known in instants[-3:]:
                for valid in (None, known, instants[0]):
                    tq = TimeQuery(known_at=known, valid_at=valid)
                    assert a.find_claims(scope, tq, states) == b.find_claims(scope, tq, states)
                    assert a.count_claims(scope, tq, states) == b.count_claims(scope, tq, states)
            tq = TimeQuery(known_at=instants[-1], valid_at=instants[-1])
            for terms in TERMS:
                found = a.search_claims_text(scope, tq, states, None, terms, 7)
                assert found == b.search_claims_text(scope, tq, states, None, terms, 7), terms
                matched += len(found)
            assert (a.search_episodes_text(scope, tq, ["tea", "river"], 5)
                    == b.search_episodes_text(scope, tq, ["tea", "river"], 5))
            query = HashingEmbedder().encode(["green tea by the river"])[0]
            near_a = a.search_claims_vector(scope, tq, states, None, query, 6)
            near_b = b.search_claims_vector(scope, tq, states, None, query, 6)
            assert [k for k, _ in near_a] == [k for k, _ in near_b]
            assert [s for _, s in near_a] == pytest.approx([s for _, s in near_b], abs=1e-5)
            assert (a.unembedded_claims(scope, tq, states, None)
                    == b.unembedded_claims(scope, tq, states, None))
        now = instants[-1]
        assert a.stats(scope, now) == b.stats(scope, now)
        for person in PEOPLE:
            for predicate in ("lives_in", "likes"):
                tq = TimeQuery(known_at=now, valid_at=None)
                assert (a.slot_history(scope, [person.lower()], predicate, tq)
                        == b.slot_history(scope, [person.lower()], predicate, tq))
    handle_a, handle_b = lite.scope(user="u1"), pg.scope(user="u1")
    for query in ("where does alice live", "green tea", "pottery by the river"):
        found_a = handle_a.search(query, k=6)
        found_b = handle_b.search(query, k=6)
        assert [(r.kind, r.text) for r in found_a] == [(r.kind, r.text) for r in found_b]
        assert [r.score for r in found_a] == pytest.approx([r.score for r in found_b], abs=1e-5)
    for claim in lite.get_all(states=STATES):
        why_a, why_b = lite.why(claim.id), pg.why(claim.id)
        assert why_a is not None and why_b is not None
        assert (why_a.claim, why_a.episodes, why_a.superseded, why_a.closed_by) == (
            why_b.claim, why_b.episodes, why_b.superseded, why_b.closed_by)
    assert [p.render() for p in lite.neighborhood("Alice")] == [
        p.render() for p in pg.neighborhood("Alice")]
    return matched


def step(rng: random.Random, mem: Memvara, op: int, clock: Clock, seed: int) -> object:
    """Operation ``op`` (drawn once, applied to both memories with a twin generator)."""
    user = rng.choice([None, "u1", "u2"])
    handle = mem.scope(user=user, agent=rng.choice([None, "a1"]) if user else None)
    person = rng.choice(PEOPLE)
    if op == 0:
        return handle.remember(person, "lives_in", rng.choice(["Berlin", "Paris", "Lisbon"]),
                               text=f"{person} lives in {phrase(rng)}").added
    if op == 1:
        return handle.remember(person, "likes", phrase(rng), sources=[f"s{seed}"]).added
    if op == 2:
        return handle.remember(person, "lives_in", "Porto",
                               valid_from=clock() - timedelta(days=rng.randint(1, 30))).added
    if op == 3:
        return handle.add([f"{person}: {phrase(rng)}", f"assistant: {phrase(rng)}"]).added
    if op == 4:
        return handle.forget(person, "likes")
    if op == 5:
        claims = handle.get_all(states=STATES)
        return handle.delete(claims[rng.randrange(len(claims))].id) if claims else None
    if op == 6:
        claims = handle.get_all(states=STATES)
        return handle.erase(claims[rng.randrange(len(claims))].id, sources=True) if claims else None
    if op == 7:
        return embed_all(mem)
    return handle.remember_many([Claim(person, "knows", p) for p in PEOPLE if p != person]).added


@pytest.mark.parametrize("seed", [1, 2])
def test_the_same_operations_read_the_same_on_both_backends(
    pair: tuple[Memvara, Memvara], clock: Clock, seed: int
) -> None:
    lite, pg = pair
    ops = random.Random(seed)
    instants: list[int] = []
    matched = 0
    for i in range(40):
        op = ops.choices(range(9), weights=[4, 4, 2, 2, 1, 1, 1, 1, 1])[0]
        results = [step(random.Random(seed * 1000 + i), mem, op, clock, i) for mem in (lite, pg)]
        assert results[0] == results[1], (i, op)
        clock.advance(minutes=7)
        instants.append(to_micros(clock(), "now"))
        if i % 8 == 7:
            matched += compare_reads(lite, pg, instants)
    assert matched > 100
    assert lite.purge(user="u1") == pg.purge(user="u1")
    compare_reads(lite, pg, instants)


def test_an_export_imports_into_the_other_backend_and_reads_the_same(
    pair: tuple[Memvara, Memvara], clock: Clock
) -> None:
    lite, pg = pair
    instants: list[int] = []
    for i in range(30):  # written into SQLite only; PostgreSQL gets them by import
        op = random.Random(i).choices(range(9), weights=[4, 4, 2, 2, 1, 1, 1, 1, 1])[0]
        step(random.Random(100 + i), lite, op, clock, i)
        clock.advance(minutes=7)
        instants.append(to_micros(clock(), "now"))
    lite.alias_entity("ally", "Alice", user="u1")
    embed_all(lite)  # an import embeds every row: so that both hold the same vectors
    dump = io.StringIO()
    counts = export_jsonl(lite, dump)
    assert counts["claims"] > 20
    dump.seek(0)
    assert import_jsonl(pg, dump)["claims"] == counts["claims"]
    assert compare_reads(lite, pg, instants) > 0
    dump.seek(0)
    with pytest.raises(ImportConflictError, match="already in the store"):
        import_jsonl(pg, dump)
    back = io.StringIO()  # and back: PostgreSQL's dump into a fresh SQLite store
    assert export_jsonl(pg, back) == counts
    back.seek(0)
    with Memvara(clock=clock, llm=NullLLM()) as again:
        import_jsonl(again, back)
        compare_reads(again, pg, instants)
    store = pg.store
    assert isinstance(store, TransferStore)
    assert store.dump_counts(Scope(user="u1", agent="a1"))["aliases"] == 0
    record = next(store.dump_claims(Scope()))
    wrong = replace(record, claim=replace(record.claim, id="not-a-claim-id"))
    assert [c.problem for c in store.restore_conflicts([wrong, record, record], [], [])] == [
        "'not-a-claim-id' is not a claim id this store can restore (c<rowid>-<8 hex digits>)",
        f"claim {record.claim.id!r} is already in the store",
        f"claim {record.claim.id!r} needs row {record.claim.id[1:].split('-')[0]}, as claim"
        f" {record.claim.id!r} earlier in the file does"]
    taken = replace(record, claim=replace(record.claim, id=record.claim.id[:-8] + "00000000"))
    assert "which holds claim" in store.restore_conflicts([taken], [], [])[0].problem
    alias = store.dump_aliases(Scope())[0]
    other = replace(alias, entity_key="bob")
    assert "names 'alice' in the store" in store.restore_conflicts([], [], [other])[0].problem
    vector = np.zeros((1, pg.embedder.dim), np.float32)
    with pytest.raises(StoreError, match="names 'alice' in the store"):
        store.restore([], vector[:0], [], vector[:0], [other])
    with pytest.raises(StoreError, match="cannot restore"):
        store.restore([wrong], vector, [], vector[:0], [])
    assert store.restore([], vector[:0], [], vector[:0], [alias]) == {
        "claims": 0, "episodes": 0, "aliases": 0}  # the same alias, kept as it is


def test_a_token_too_long_for_an_index_row_is_stored_and_found_as_on_sqlite(
        pair: tuple[Memvara, Memvara], dsn: str, schema: str) -> None:
    # A key, a hash or a blob pasted into a turn is one FTS5 token; PostgreSQL's btree
    # takes at most 2,704 bytes a row, so the term tables keep a long one by its digest.
    blob = base64.b64encode(random.Random(5).randbytes(2_400)).decode().translate(
        str.maketrans("+/", "xy"))  # 3,200 characters that do not compress
    for mem in pair:
        mem.add(f"my api key is {blob} keep it")
        mem.remember("bob", "key", "k1", text=f"key {blob[:2_600]}")  # just under the limit
        mem.remember("carol", "key", "k2", text=f"key {blob} and tea")
        mem.remember("dana", "likes", "tea")
    lite, pg = pair
    tq = TimeQuery(known_at=2**62, valid_at=None)
    for terms in ([blob], [blob[:2_600]], [blob, "tea"], ["tea"], ["key"]):
        found = lite.store.search_claims_text(Scope(), tq, STATES, None, terms, 5)
        assert found and found == pg.store.search_claims_text(Scope(), tq, STATES, None, terms, 5)
        assert (lite.store.search_episodes_text(Scope(), tq, terms[:1], 5)
                == pg.store.search_episodes_text(Scope(), tq, terms[:1], 5))
    assert [r.text for r in pg.search(blob, include_episodes=True)] == [
        r.text for r in lite.search(blob, include_episodes=True)]
    assert pg.erase(pg.get_all(subject="carol")[0].id)
    assert pg.store.search_claims_text(Scope(), tq, STATES, None, [blob], 5) == []
    import psycopg

    with psycopg.connect(dsn) as conn:  # its count went with it; the turn's is kept
        held = conn.execute(f"SELECT tbl, sum(docs) FROM {schema}.term_stats WHERE term = %s"
                            " GROUP BY tbl", ["#" + hashlib.sha256(blob.lower().encode()).hexdigest()])
        assert held.fetchall() == [("episodes", 1)]


def test_similarities_agree_and_skip_what_they_cannot_score(pair: tuple[Memvara, Memvara]) -> None:
    lite, pg = pair
    for mem in pair:
        for i in range(12):
            mem.remember(f"user_{i}", "likes", f"green tea number {i}")
        mem.add(["alice: pottery by the river", "assistant: lovely"])
        embed_all(mem)
    query = HashingEmbedder().encode(["green tea"])[0]
    ids = [c.id for c in lite.get_all()]
    stale = ids[0].rsplit("-", 1)[0] + "-00000000"  # its rowid, another digest
    got_a = lite.store.claim_similarities([*ids, stale, "c999-00000000"], query)  # type: ignore[attr-defined]
    got_b = pg.store.claim_similarities([*ids, stale, "c999-00000000"], query)  # type: ignore[attr-defined]
    assert sorted(got_a) == sorted(got_b) == sorted(ids)
    assert [got_a[k] for k in ids] == pytest.approx([got_b[k] for k in ids], abs=1e-5)
    turns = [e.id for e in lite.episodes()]
    assert turns == [e.id for e in pg.episodes()]
    sims_a = lite.store.episode_similarities([*turns, "e-missing"], query)  # type: ignore[attr-defined]
    sims_b = pg.store.episode_similarities([*turns, "e-missing"], query)  # type: ignore[attr-defined]
    assert sims_a == pytest.approx(sims_b, abs=1e-5) and len(sims_b) == 2
    assert pg.store.episode_similarities(turns, query[:8]) == {}  # type: ignore[attr-defined]
    assert pg.store.claim_similarities([], query) == {}  # type: ignore[attr-defined]
    assert (lite.store.rank_fields([*ids, stale])  # type: ignore[attr-defined]
            == pg.store.rank_fields([*ids, stale]))  # type: ignore[attr-defined]
    assert np.allclose(lite.store.recent_turns(Scope(), 5)[1], pg.store.recent_turns(Scope(), 5)[1])
