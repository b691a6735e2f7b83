"""Reads never write: what the write side has not stored yet, a read computes in memory.

Single writes leave their text above the index's watermark (``TEXT_INDEX_BATCH``) and
their claims without vectors (``EMBED_BATCH``); the writes pay both backlogs down. A
search must not: it would take the write lock, wait out another process's writer, and
fail on a read-only store. So the store's text search scores the waiting rows itself
(``store/sqlite/_tail.py``) and the retriever encodes the waiting claims and turns
(``_read/waiting.py``). These tests hold both to the answers a caught-up store gives,
and every read to "no write, no wait" while another process holds the write lock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memvara import Claim, Episode, HashingEmbedder, Memvara, NullLLM, SQLiteStore
from memvara._domain.model import Scope, TimeQuery
from memvara._domain.terms import query_terms
from memvara._read.waiting import WaitingVectors
from memvara.store import STATES
from memvara.store.sqlite import TEXT_INDEX_BATCH, _bm25, _tail

from .conftest import JAN, Clock, FakeLLM, catch_up, has_backlog
from .test_faults import write_lock_held

EVER = TimeQuery(2**62, None)
WRITE_WORDS = ("INSERT", "UPDATE", "DELETE", "REPLACE", "CREATE", "DROP", "ALTER",
               "BEGIN IMMEDIATE", "BEGIN EXCLUSIVE", "PRAGMA JOURNAL_MODE", "PRAGMA WAL")
TALK = [
    "Melanie: I signed up for a pottery class last week",
    "Caroline: how did the pottery go?",
    "Melanie: we were awestruck and humbled, the kiln was huge",
    "Caroline: I went camping with the kids in the mountains",
    "Melanie: camping sounds lovely, did you see any bears?",
    "Caroline: no bears, but a lot of rain and one very wet tent",
]


def sqlite(mem: Memvara) -> SQLiteStore:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    return store


def write_one_at_a_time(mem: Memvara, clock: Clock, rows: int) -> None:
    """``rows`` claims (and a few turns), each its own write, as an agent writes."""
    for i in range(rows):
        mem.remember(f"user_{i % 17}", ("likes", "lives_in", "works_at")[i % 3],
                     f"thing {i % 11} in city_{i % 5}", user=("alice", "bob", None)[i % 3])
        if i % 40 == 0:
            mem.add([Episode(t, role="user") for t in TALK[(i // 40) % 3 * 2:][:2]])
        clock.advance(minutes=7)
    mem.remember("user_3", "likes", "old jazz", valid_from=JAN, recorded_at=JAN)
    mem.delete(mem.remember("user_4", "likes", "durian").added[0].id)


QUERIES = ["where does user_3 live", "thing 7", "city_2 things", "pottery class kiln",
           "camping bears", "durian", "old jazz", "user", "who likes what in city_4"]
READS = [(Scope(), EVER, ("live",)), (Scope(), EVER, STATES),
         (Scope(), TimeQuery(2**62, int(JAN.timestamp() * 1e6) + 1), ("live",)),
         (Scope(user="alice"), EVER, ("live",)), (Scope(user="bob"), EVER, ("retired",))]


def text_lists(store: SQLiteStore) -> list[object]:
    """Every text list the queries give under every filter, claims and turns."""
    out: list[object] = []
    for query in QUERIES:
        terms = query_terms(query)
        for scope, tq, states in READS:
            for limit in (3, 50):
                out.append(store.search_claims_text(scope, tq, states, None, terms, limit))
                out.append(store.search_claims_text(scope, tq, states, ["semantic"], terms, limit))
            out.append(store.search_episodes_text(scope, tq, terms, 50))
    return out


@pytest.mark.parametrize("path", ["memory", "file"])
@pytest.mark.parametrize("rows", [30, TEXT_INDEX_BATCH + 60])
def test_waiting_text_is_found_and_scored_as_the_flushed_index_scores_it(
    tmp_path: Path, clock: Clock, path: str, rows: int,
) -> None:
    # Below MIRROR_ROWS indexed rows the whole table is mirrored in memory: the lists
    # equal the flushed index's, score for score, with every filter applied before the
    # cut (scope, time travel, states, memory types).
    target = ":memory:" if path == "memory" else str(tmp_path / "m.db")
    with Memvara(target, clock=clock, llm=NullLLM()) as mem:
        write_one_at_a_time(mem, clock, rows)
        store = sqlite(mem)
        assert store.has_backlog()
        waiting = text_lists(store)
        assert any(waiting)
        assert store.flush_text_index() > 0  # they did wait
        assert text_lists(store) == waiting


@pytest.mark.parametrize("path", ["memory", "file"])
def test_a_search_over_waiting_rows_ranks_as_after_the_backlogs_are_paid(
    tmp_path: Path, clock: Clock, path: str,
) -> None:
    target = ":memory:" if path == "memory" else str(tmp_path / "m.db")
    with Memvara(target, clock=clock, llm=NullLLM()) as mem:
        write_one_at_a_time(mem, clock, 120)
        def searches() -> list[object]:
            return [[(r.text, round(r.score, 6), r.explain.bm25_rank, r.explain.vector_rank)
                     for r in mem.search(q, k=8, include_episodes=True)] for q in QUERIES]

        before = searches()
        assert sqlite(mem).has_backlog() and mem.stats()["embeddings"] < 120
        catch_up(mem)
        assert not sqlite(mem).has_backlog()
        assert searches() == before


def test_waiting_rows_join_a_large_index_on_its_own_scale(
    clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # From MIRROR_ROWS indexed rows on, only the waiting rows are mirrored, and each is
    # scored from the index's statistics: a waiting row with the very text of an indexed
    # one scores exactly what FTS5 gives that one.
    monkeypatch.setattr(_tail, "MIRROR_ROWS", 64)
    monkeypatch.setattr(_bm25, "PLAN_MIN_ROWS", 64)  # the planner counts phrases from here
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        indexed = mem.remember_many([
            Claim(f"user_{i}", "likes", f"thing {i % 13}", text=f"user_{i} likes thing {i % 13}")
            for i in range(TEXT_INDEX_BATCH + 40)]).added
        store = sqlite(mem)
        assert not store.has_backlog() or mem.stats()["embeddings"]
        twin = mem.remember("someone", "likes", "thing 5", text="user_5 likes thing 5").added[0]
        alone = mem.remember("someone", "likes", "zither", user="alice").added[0]
        terms = query_terms("user_5 thing 5")
        found = dict(store.search_claims_text(Scope(), EVER, ("live",), None, terms, 10))
        original = next(c.id for c in indexed if c.text == "user_5 likes thing 5")
        # As FTS5 would score it, up to the planner's own approximation for the indexed
        # one: "user" and "thing" are in every row, and the planner drops such a phrase
        # (it adds under 2.2e-6 to any score; _bm25.IDF_FLOOR).
        assert found[twin.id] == pytest.approx(found[original], abs=2 * 2.2e-6)
        plain = query_terms("5")  # a query the planner does not split: bit for bit
        found = dict(store.search_claims_text(Scope(), EVER, ("live",), None, plain, 40))
        assert found[twin.id] == found[original]
        # The filter holds for waiting rows too: alice's claim only from alice's scope.
        zither = query_terms("zither")
        assert store.search_claims_text(Scope(), EVER, ("live",), None, zither, 5) == []
        (hit,) = store.search_claims_text(Scope(user="alice"), EVER, ("live",), None, zither, 5)
        assert hit[0] == alone.id and hit[1] > 0
        ranked = [key for key, _ in store.search_claims_text(
            Scope(), EVER, ("live",), None, terms, 20)]
        store.flush_text_index()
        after = [key for key, _ in store.search_claims_text(
            Scope(), EVER, ("live",), None, terms, 20)]
        assert set(ranked[:2]) == set(after[:2]) == {twin.id, original}
        assert set(ranked[:5]) == set(after[:5])


def test_waiting_rows_instances_are_read_once_and_follow_the_rows(
    clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_tail, "MIRROR_ROWS", 64)
    monkeypatch.setattr(_bm25, "PLAN_MIN_ROWS", 64)
    statements: list[str] = []
    store = SQLiteStore(tracer=lambda sql, _: statements.append(sql))
    with Memvara(store=store, clock=clock, llm=NullLLM()) as mem:
        mem.remember_many([Claim(f"user_{i}", "likes", f"thing {i % 13}")
                           for i in range(TEXT_INDEX_BATCH + 40)])
        first = mem.remember("user_1", "likes", "thing 3").added[0]
        second = mem.remember("user_2", "likes", "thing 3").added[0]
        terms = query_terms("thing 3")

        def found(words: list[str] = terms) -> dict[str, float]:
            return dict(store.search_claims_text(Scope(), EVER, ("live",), None, words, 400))

        assert {first.id, second.id} <= set(found())
        store._tail._mirrors["claims"].instances.clear()
        assert found() == found()  # read again from what was kept: the same scores
        with store._writing() as conn:  # a waiting row deleted behind the index's back
            conn.execute("DELETE FROM claims WHERE id = ?", (first.id,))
        assert first.id not in found() and second.id in found()
        # "user" is in every row: alone it is scored, not only matched.
        alone = found(query_terms("user"))
        assert alone[second.id] > 0
        monkeypatch.setattr(_tail, "_PHRASES", 1)  # a mirror keeps one phrase's instances
        third = mem.remember("newcomer", "likes", "thing 3").added[0]
        assert {second.id, third.id} <= set(found())
        assert len(store._tail._mirrors["claims"].instances) == 1
        # Mirrored whole again (the index is "small" now): rows below those looked at
        # join the mirror, and what was kept is looked at afresh.
        monkeypatch.setattr(_tail, "MIRROR_ROWS", 10**6)
        assert second.id in found()
        assert store._tail._mirrors["claims"].instances == {}


def test_the_mirror_follows_rows_that_go_and_drops_erased_text(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        keep = mem.remember("user", "likes", "saxophone solos").added[0]
        gone = mem.remember("user", "likes", "saxophone quartets").added[0]
        store = sqlite(mem)
        terms = query_terms("saxophone")
        assert {k for k, _ in store.search_claims_text(Scope(), EVER, ("live",), None, terms, 5)} \
            == {keep.id, gone.id}
        assert store._tail._mirrors["claims"].rows
        assert mem.erase(gone.id)  # erasure flushes the index and drops the mirrors
        assert store._tail._mirrors == {}
        assert [k for k, _ in store.search_claims_text(
            Scope(), EVER, ("live",), None, terms, 5)] == [keep.id]
        later = mem.remember("user", "likes", "saxophone reeds").added[0]
        last = mem.remember("user", "likes", "saxophone cases").added[0]
        assert {k for k, _ in store.search_claims_text(Scope(), EVER, ("live",), None, terms, 5)} \
            == {keep.id, later.id, last.id}
        with store._writing() as conn:  # a row deleted behind the index's back
            conn.execute("DELETE FROM claims WHERE id = ?", (later.id,))
        assert {k for k, _ in store.search_claims_text(
            Scope(), EVER, ("live",), None, terms, 5)} == {keep.id, last.id}
        store.flush_text_index()
        store.search_claims_text(Scope(), EVER, ("live",), None, terms, 5)
        assert not store._tail._mirrors["claims"].rows  # nothing waits: the copy is gone
        store._tail.forget("claims")  # and forgetting again costs nothing
        store._tail.forget("episodes")


def test_a_filter_that_admits_few_reads_the_mirror_in_steps(clock: Clock) -> None:
    # Dave's 150 claims rank first (ties go by rowid) and carol's filter admits none of
    # them: her one claim is found past two steps of the ranked list.
    with Memvara(clock=clock, llm=NullLLM(), user="dave") as mem:
        mem.remember_many([Claim(f"u{i}", "likes", "tea") for i in range(150)])
        mine = mem.remember("me", "likes", "tea", user="carol").added[0]
        store = sqlite(mem)
        terms = query_terms("tea")
        got = store.search_claims_text(Scope(user="carol"), EVER, ("live",), None, terms, 3)
        assert [key for key, _ in got] == [mine.id]
        assert len(store.search_claims_text(Scope(user="dave"), EVER, ("live",), None,
                                            terms, 3)) == 3


# -- vectors -----------------------------------------------------------------------------
def test_claims_waiting_for_vectors_are_ranked_by_vectors_computed_in_memory(
    clock: Clock,
) -> None:
    with Memvara(clock=clock, llm=NullLLM(), vector_weight=1.0) as mem:
        for i in range(30):
            mem.remember(f"user_{i}", "likes", f"green tea number {i}")
        store = sqlite(mem)
        query = HashingEmbedder().encode(["green tea number 7"])[0]
        waiting = store.unembedded_claims(Scope(), EVER, ("live",), None)
        assert len(waiting) == 30 and store.search_claims_vector(
            Scope(), EVER, ("live",), None, query, 5) == []  # stored vectors only
        assert store.unembedded_claims(Scope(), EVER, ("retired",), None) == []
        assert store.unembedded_claims(Scope(), EVER, ("live",), ["episodic"]) == []
        before = [(r.text, r.explain.vector_rank, round(r.explain.vector_score or 0, 6))
                  for r in mem.search("green tea number 7", k=10)]
        retriever = mem._core.retriever
        assert len(retriever._waiting) == 30  # kept for the next search
        catch_up(mem)
        assert len(retriever._waiting) == 0  # the writer stored them: dropped
        assert store.unembedded_claims(Scope(), EVER, ("live",), None) == []
        assert [(r.text, r.explain.vector_rank, round(r.explain.vector_score or 0, 6))
                for r in mem.search("green tea number 7", k=10)] == before


def test_a_full_text_list_orders_its_ties_by_waiting_vectors_too(clock: Clock) -> None:
    # With a lexical embedder and a full text list, the vectors only order the text
    # candidates' ties, read from claim_similarities; waiting claims get theirs here.
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        for i in range(40):
            mem.remember(f"user_{i}", "likes", "green tea" if i % 2 else "green tea leaves")
        before = [r.text for r in mem.search("green tea", k=10)]
        catch_up(mem)
        assert [r.text for r in mem.search("green tea", k=10)] == before


def test_turns_without_vectors_are_encoded_by_the_search(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM(), vector_weight=1.0) as mem:
        store = sqlite(mem)
        assert store.unembedded_episodes(Scope(), EVER) == []
        with store.transaction():
            stored = store.insert_episodes(
                [Episode(t, role="user", recorded_at=clock.now, scope=Scope()) for t in TALK],
                None)
        waiting = store.unembedded_episodes(Scope(), EVER)
        assert [key for key, _ in waiting] == [e.id for e in stored]
        assert store.unembedded_episodes(Scope(), TimeQuery(0, None)) == []
        hits = mem.search("kiln awestruck", k=3, include_episodes=True)
        assert hits[0].text == TALK[2] and hits[0].explain.vector_rank == 1
        # A re-embedding covers them; turns written while it ran would wait again.
        assert mem.reembed() == len(TALK)
        assert store.unembedded_episodes(Scope(), EVER) == []
        assert mem.search("kiln awestruck", k=1, include_episodes=True)[0].text == TALK[2]


def test_a_rebuild_that_misses_turns_written_meanwhile_marks_them_waiting(clock: Clock) -> None:
    with Memvara(clock=clock, llm=NullLLM()) as mem:
        mem.add([Episode(t, role="user") for t in TALK[:3]])
        store = sqlite(mem)
        embedder = HashingEmbedder()
        with store.rebuild_vectors(embedder.dim, "hashing") as put:
            texts = store.vector_texts("episodes", 0, 2)  # the rebuild reads two pages...
            put("episodes", [p for p, _ in texts], embedder.encode([t for _, t in texts]))
        waiting = store.unembedded_episodes(Scope(), EVER)
        assert [text for _, text in waiting] == [TALK[2]]  # ...the third waits again
        hit = mem.search("kiln awestruck humbled", k=1, include_episodes=True)[0]
        assert hit.text == TALK[2] and hit.explain.vector_rank is not None


def test_the_kept_vectors_are_bounded_and_follow_the_embedder() -> None:
    kept = WaitingVectors(limit=3)
    first, second = HashingEmbedder(), HashingEmbedder(dim=256)
    query = first.encode(["tea"])[0]
    rows = [(f"c{i}", f"tea number {i}") for i in range(5)]
    scores = kept.cosines(first, "claims", rows, query)
    assert list(scores) == [key for key, _ in rows] and len(kept) == 3
    assert scores == pytest.approx(dict(zip(
        [k for k, _ in rows], (first.encode([t for _, t in rows]) @ query).tolist())))
    assert kept.cosines(first, "claims", [], query) == {}
    kept.drop("episodes", ["c4"])  # another table's row of that id: kept
    assert len(kept) == 3
    kept.drop("claims", ["c4"])
    kept.drop("claims", [])
    assert len(kept) == 2
    other = second.encode(["tea"])[0]
    kept.cosines(second, "claims", rows[:1], other)  # another model: the rest is gone
    assert len(kept) == 1
    kept.clear()
    assert len(kept) == 0


def test_a_model_swapped_while_encoding_keeps_no_stale_vectors() -> None:
    kept = WaitingVectors()
    later = HashingEmbedder()

    class Swapping(HashingEmbedder):
        def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            kept.cosines(later, "claims", [("c9", "other")], later.encode(["x"])[0])
            return super().encode(texts)

    swapping = Swapping()
    kept.cosines(swapping, "claims", [("c1", "tea")], swapping.encode(["tea"])[0])
    assert len(kept) == 1  # only the later model's vector: this one's came too late


# -- no read writes, or waits for a writer -------------------------------------------------
@pytest.fixture
def waiting_store(tmp_path: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """A store file whose rows wait for the text index and their vectors, kept open by
    its writer (as an agent's process would), with some named ids."""
    path = str(tmp_path / "memory.db")
    clock = Clock()
    said = "Melanie: the pottery class starts again on Monday"
    llm = FakeLLM({said: [("Melanie", "attends", "pottery class")]})
    with Memvara(path, clock=clock, llm=llm) as writer:
        write_one_at_a_time(writer, clock, 40)
        receipt = writer.add(Episode(said, role="user"))
        claim = receipt.added[0]
        writer.remember("Melanie", "works_at", "Acme")
        writer.remember("acme", "located_in", "Porto")
        assert has_backlog(writer)
        yield path, {"claim": claim.id, "turn": claim.sources[0]}


def every_read(mem: Memvara, ids: dict[str, str]) -> list[object]:
    return [
        [(r.text, round(r.score, 6)) for r in mem.search("pottery class", k=5)],
        [(r.text, round(r.score, 6)) for r in mem.search("kiln", include_episodes=True)],
        mem.recall("what does Melanie do"),
        mem.get_all(),
        mem.count(states=STATES),
        mem.get(ids["claim"]),
        mem.history("Melanie", "attends"),
        mem.why(ids["claim"]),
        mem.produced(ids["turn"]),
        mem.episodes(),
        [p.render() for p in mem.neighborhood("Melanie")],
        [p.render() for p in mem.paths_between("Melanie", "porto")],
        mem.stats(),
    ]


@pytest.mark.parametrize("by", ["connection", "process"])
def test_every_read_answers_while_another_process_holds_the_write_lock(
    waiting_store: tuple[str, dict[str, str]], by: str,
) -> None:
    # With a busy timeout of 50 ms, anything that tried to take the write lock (or
    # wait for it) would raise StoreLockedError; a tracer shows nothing tried to write.
    path, ids = waiting_store
    statements: list[str] = []
    store = SQLiteStore(path, busy_timeout=0.05, tracer=lambda sql, _: statements.append(sql))
    with Memvara(store=store, llm=NullLLM()) as mem:
        expected = every_read(mem, ids)
        statements.clear()
        with write_lock_held(path, by):
            assert every_read(mem, ids) == expected
        assert [s for s in statements if s.lstrip().upper().startswith(WRITE_WORDS)] == []
    # (close() then pays the text backlog down: a write, like any other.)


def test_reads_take_their_normal_time_beside_a_writer_with_the_default_timeout(
    waiting_store: tuple[str, dict[str, str]],
) -> None:
    # The default busy timeout is 30 s: a read that waited for the writer would take it.
    path, ids = waiting_store
    with Memvara(path, llm=NullLLM()) as mem:
        expected = every_read(mem, ids)
        with write_lock_held(path, "process"):
            started = time.monotonic()
            assert every_read(mem, ids) == expected
            assert time.monotonic() - started < 10
