"""search(): lexical and vector candidates, filtered first, fused by rank, explained."""

from __future__ import annotations

import math
import re
import zlib
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import numpy as np
import numpy.typing as npt
import pytest

from memvara import (
    STATES, Claim, Episode, HashingEmbedder, InvalidArgumentError, Memvara, SQLiteStore,
)
from memvara._domain.model import TimeQuery
from memvara._domain.terms import query_terms
from memvara._read import retrieve
from memvara._read.weights import WEIGHTS
from memvara._domain.time import to_micros
from memvara.store.sqlite._fts import match_any
from memvara.store.sqlite._rows import claim_rowid

from .conftest import AUG, JAN, JUN, NOW, Clock, FakeLLM, embed_all, has_backlog
from .store_without import store_without


def _texts(mem: Memvara, query: str, **kwargs: object) -> list[str]:
    return [r.text for r in mem.search(query, **kwargs)]  # type: ignore[arg-type]


def test_the_spec_first_example(clock: Clock) -> None:
    now = NOW
    with Memvara(user="alice", clock=clock) as mem:
        mem.remember("user", "lives_in", "Berlin", valid_from=now - timedelta(days=800),
                     recorded_at=now - timedelta(days=800))
        mem.remember("user", "lives_in", "Lisbon", valid_from=now - timedelta(days=30),
                     recorded_at=now - timedelta(days=30))
        assert _texts(mem, "where do they live?") == ["user lives in Lisbon"]
        assert _texts(mem, "where do they live?", as_of=now - timedelta(days=365)) == [
            "user lives in Berlin"]


def test_a_search_into_the_past_is_not_crowded_out_by_live_matches(mem: Memvara) -> None:
    old = datetime(2020, 1, 1, tzinfo=timezone.utc)
    mem.remember("alice", "lives_in", "Paris", valid_from=old, valid_to=old + timedelta(days=400),
                 recorded_at=old)
    for i in range(200):  # many live claims that match the query better, word for word
        mem.remember(f"alice {i}", "lives_in", f"alice lives somewhere {i}")
    found = mem.search("where does alice live", k=1, valid_at=old + timedelta(days=30))
    assert [r.text for r in found] == ["alice lives in Paris"]
    # The audit view: every state, valid time unconstrained; recency is still measured
    # from valid_at, so asking from 2020 keeps a six-year-old fact from fading.
    audit = mem.search("Paris", k=3, states=STATES, valid_at=old)
    assert audit[0].text == "alice lives in Paris"
    faded = mem.search("Paris", k=300, states=STATES)
    paris = next(r for r in faded if r.text == "alice lives in Paris")
    assert paris.explain.bm25_rank == 1 and paris.explain.recency < 0.15  # SLOW: ~3 half-lives


def test_retired_and_ended_claims_only_come_back_when_asked(mem: Memvara) -> None:
    gone = mem.remember("user", "likes", "durian", valid_from=JAN, recorded_at=JAN).added[0]
    mem.delete(gone.id)
    assert _texts(mem, "durian") == []
    assert _texts(mem, "durian", states=["retired"]) == ["user likes durian"]
    assert _texts(mem, "durian", include_invalidated=True) == ["user likes durian"]


def test_scope_isolation(mem: Memvara) -> None:
    mem.remember("alice", "likes", "jazz", user="alice")
    mem.remember("bob", "likes", "jazz", user="bob", session="s1")
    assert _texts(mem, "jazz", user="alice") == ["alice likes jazz"]
    assert _texts(mem, "jazz", user="bob") == []  # the session's scratch is below bob
    assert _texts(mem, "jazz", user="bob", session="s2") == []
    assert _texts(mem, "jazz", user="bob", session="s1") == ["bob likes jazz"]


def test_claims_written_one_at_a_time_are_searchable_at_once(mem: Memvara) -> None:
    mem.remember("user", "working_on", "ERR_7734_TLSHANDSHAKE")
    (hit,) = mem.search("ERR_7734_TLSHANDSHAKE", k=1)
    assert hit.explain.bm25_rank == 1 and hit.explain.vector_rank == 1
    # Found by its waiting text and a vector encoded in memory: the search stored nothing.
    assert mem.stats()["embeddings"] == 0 and has_backlog(mem)


def test_every_result_explains_its_score(mem: Memvara) -> None:
    mem.remember("user", "lives_in", "Berlin")
    mem.remember("user", "lives_in", "Berlin")  # reinforced: more salient
    (r,) = mem.search("where does the user live", k=1)
    summary = r.explain.summary()
    assert re.fullmatch(
        r"vector#1\(-?\d\.\d{3}\) bm25#1\(-?\d+\.\d{2}\) recency=\d\.\d{2} conf=1\.00"
        r" sal=1\.25 -> \d\.\d{4}", summary), summary
    e = r.explain
    assert math.isclose(r.score, e.fused * e.recency * e.confidence * e.salience)
    assert e.fused == pytest.approx(1.0)  # first in both lists


def test_recency_decays_by_the_predicates_volatility(clock: Clock) -> None:
    with Memvara(clock=clock) as mem:
        mem.remember("task", "working_on", "quarterly report", valid_from=NOW - timedelta(days=14))
        mem.remember("place", "born_in", "quarterly town", valid_from=NOW - timedelta(days=3650))
        by_text = {r.text: r.explain.recency for r in mem.search("quarterly", k=5)}
    assert by_text["task is working on quarterly report"] == pytest.approx(0.25)  # FAST: two half-lives
    assert by_text["place was born in quarterly town"] == 1.0  # STATIC: never fades


def test_episodes_rank_alongside_claims_and_k_means_k(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add([Episode(f"the kettle order number {i} is late", ts=JUN) for i in range(30)])
        mem.remember("user", "ordered", "a kettle")
        assert all(r.kind == "claim" for r in mem.search("kettle", k=50))
        mixed = mem.search("kettle", k=20, include_episodes=True)
        assert len(mixed) == 20
        assert {r.kind for r in mixed} == {"claim", "episode"}
        turn = next(r for r in mixed if r.kind == "episode")
        assert turn.episode is not None and turn.id == turn.episode.id


def test_turns_from_after_valid_at_are_not_searched(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add([Episode("the kettle arrived broken", ts=AUG)])
        assert [r.kind for r in mem.search("kettle", include_episodes=True)] == ["episode"]
        assert mem.search("kettle", include_episodes=True, valid_at=JUN) == []


def test_equal_scores_rank_by_content_so_ingest_order_does_not_matter(clock: Clock) -> None:
    facts = [Claim(f"u{i}", "likes", "tea") for i in range(12)]
    rankings = []
    for order in (facts, facts[::-1]):
        with Memvara(clock=Clock()) as mem:
            mem.remember_many(list(order))
            rankings.append(_texts(mem, "tea", k=12))
    assert rankings[0] == rankings[1]


def test_memory_types_and_min_score_filter(mem: Memvara) -> None:
    mem.remember("user", "likes", "tea", memory_type="semantic")
    mem.remember("user", "drank", "tea at noon", memory_type="episodic")
    assert _texts(mem, "tea", memory_types=["episodic"]) == ["user drank tea at noon"]
    best = mem.search("tea", k=2)
    assert len(mem.search("tea", min_score=best[0].score)) == 1
    assert mem.search("tea", min_score=2.0) == []


@pytest.mark.parametrize("query", [
    'NEAR(tea coffee)', '"', '""', 'text:*', '^tea', '(tea', 'tea)', 'tea AND NOT coffee',
    "'; DROP TABLE claims; --", "tea\x00\x01\x1f", "\U0001f375 tea", "t\u0301ea", "\u202etea",
    "*", "-", "OR", "claims_fts MATCH 'x'", "a" * 5000,
])
def test_hostile_query_text_is_only_words(mem: Memvara, query: str) -> None:
    mem.remember("user", "likes", "tea")
    mem.remember("user", "said", "NEAR the AND gate")
    results = mem.search(query)
    assert all(r.kind == "claim" for r in results)
    assert mem.count() == 2  # nothing was dropped


def test_fts_syntax_words_are_searched_for_literally(mem: Memvara) -> None:
    mem.remember("user", "said", "NEAR the AND gate")
    mem.remember("user", "likes", "tea")
    hit = mem.search("NEAR", k=1)[0]
    assert hit.text == "user said NEAR the AND gate" and hit.explain.bm25_rank == 1
    assert query_terms('a "quoted" NEAR(x, y) text:z') == ["quoted", "near", "x", "y", "text", "z"]
    assert match_any(query_terms('a "quoted" NEAR(x, y) text:z')) == (
        '"quoted" OR "near" OR "x" OR "y" OR "text" OR "z"')
    assert query_terms("the of and ...") == [] and match_any([]) is None
    # whatever a caller passes, a term is a quoted literal, never syntax
    assert match_any(['a"b', "NEAR(x", "*"]) == '"a""b" OR "NEAR(x" OR "*"'



@pytest.mark.parametrize(("stored", "queries"), [
    ("Hauptstraße 5", ["Hauptstraße", "hauptstraße"]),  # casefold makes ß "ss"; the index keeps ß
    ("the \ufb01le server", ["\ufb01le"]),  # a ligature, which NFKC makes "fi"
    ("the file server", ["\ufb01le", "file"]),
    ("\uff21\uff23\uff2d\uff25 corp", ["\uff21\uff23\uff2d\uff25", "\uff41\uff43\uff4d\uff45"]),  # full-width
    ("Acme corp", ["\uff21\uff23\uff2d\uff25", "acme"]),
    ("a \uff12\uff10\uff12\uff14 model", ["\uff12\uff10\uff12\uff14"]),
    ("the \u0130stanbul office", ["\u0130stanbul", "istanbul"]),  # casefold: i + a dot above
    ("\u01c5emal Begi\u0107", ["\u01c5emal", "\u01c4EMAL"]),  # NFKC splits the digraph: D + \u017e
    ("Zoë Kravitz", ["Zoë", "zoe", "ZOË"]),
    ("Zoe Saldana", ["Zoë", "zoe"]),
])
def test_a_stored_word_is_found_by_its_own_spelling(
    mem: Memvara, stored: str, queries: list[str],
) -> None:
    # The index folds case and accents as SQLite's unicode61 does (no NFKC, ß kept); the
    # query's words are folded further (NFKC, casefold), so each is also searched as typed.
    # (The index does not apply NFKC: "file" does not find a stored "\ufb01le".)
    mem.remember("user", "likes", stored)
    mem.remember("user", "owns", "a boat")
    for indexed in (False, True):  # waiting for the text index, then in it (SQLite)
        if indexed and isinstance(mem.store, SQLiteStore):
            mem.store.flush_text_index()
        for query in queries:
            found = [r.text for r in mem.search(query) if r.explain.bm25_rank is not None]
            assert found == [f"user likes {stored}"], query


def test_a_typographic_apostrophe_is_an_apostrophe(mem: Memvara) -> None:
    # "Melanie\u2019s" and "don\u2019t" were the words "melanie", "s", "don" and "t": "s"
    # and "t" matched every possessive and every "can't" in the store.
    mem.remember("user", "likes", "green tea")
    mem.remember("ann", "said", "Ann's cat can't swim")
    for query in ("What is Melanie\u2019s favourite tea?", "I don\u2019t like tea", "Melanie\u02bcs tea"):
        hits = [r.text for r in mem.search(query) if r.explain.bm25_rank is not None]
        assert hits == ["user likes green tea"], query
    assert query_terms("Melanie\u2019s tea, I don\u2019t") == ["melanie's", "tea"]
    assert query_terms("Melanie\u02bcs") == ["melanie's", "melanie\u02bcs"]  # \u02bc is a letter


def test_query_words_are_searched_folded_and_as_typed() -> None:
    assert query_terms("Hauptstraße straße") == ["hauptstrasse", "hauptstraße", "strasse", "straße"]
    assert query_terms("\u0130stanbul istanbul") == ["istanbul"]  # not "i" + a dot, "stanbul"
    assert query_terms("\ufb01le FILE") == ["file", "\ufb01le"]
    assert query_terms("Zoë Zoë zoe ZOE") == ["zoë", "zoe"]  # the index folds the accent itself
    assert query_terms("\u01c5emal \u01f0") == ["d\u017eemal", "\u01c6emal", "\u01f0"]  # NFKC splits a digraph
    assert query_terms("\u03a3\u0399\u03a3\u03a5\u03a6\u039f\u03a3") == ["\u03c3\u03b9\u03c3\u03c5\u03c6\u03bf\u03c3"]

@pytest.mark.parametrize(("kwargs", "argument"), [
    ({"query": ""}, "query"), ({"query": "   "}, "query"), ({"query": 7}, "query"),
    ({"k": 0}, "k"), ({"k": -1}, "k"), ({"k": "3"}, "k"), ({"k": True}, "k"),
    ({"k": 10**12}, "k"), ({"min_score": -0.1}, "min_score"), ({"min_score": 2.5}, "min_score"),
    ({"min_score": float("nan")}, "min_score"), ({"min_score": "0"}, "min_score"),
    ({"memory_types": ["dreams"]}, "memory_types"), ({"memory_types": "semantic"}, "memory_types"),
    ({"memory_types": []}, "memory_types"), ({"memory_types": [["x"]]}, "memory_types"),
    ({"include_episodes": "yes"}, "include_episodes"), ({"states": ["gone"]}, "states"),
    ({"as_of": NOW, "valid_at": NOW}, "as_of"),
])
def test_bad_search_arguments_are_refused(mem: Memvara, kwargs: dict[str, object], argument: str) -> None:
    args: dict[str, object] = {"query": "tea", **kwargs}
    query = args.pop("query")
    with pytest.raises(InvalidArgumentError) as caught:
        mem.search(query, **args)  # type: ignore[arg-type]
    assert caught.value.argument == argument


def test_a_long_query_keeps_its_first_32_content_words(mem: Memvara) -> None:
    words = [f"w{i}" for i in range(40)]
    terms = query_terms(" ".join(words))
    assert terms == words[:32]
    mem.remember("user", "likes", "w39 only")
    assert mem.search(" ".join(words), k=1)[0].explain.bm25_rank is None  # w39 was not asked


def test_the_vector_rankings_weight_follows_the_embedder(clock: Clock) -> None:
    from memvara import HashingEmbedder

    class Semantic:
        """Stands in for a semantic embedder: not lexical, so its ranking counts."""

        dim = 8

        def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            return HashingEmbedder(dim=8).encode(texts)

    with Memvara(clock=clock) as lexical, Memvara(clock=clock, embedder=Semantic()) as semantic, \
            Memvara(clock=clock, vector_weight=0.5) as chosen:
        assert lexical._core.retriever.vector_weight == WEIGHTS.lexical_vector
        assert semantic._core.retriever.vector_weight == WEIGHTS.semantic_vector
        assert chosen._core.retriever.vector_weight == 0.5
        for mem in (lexical, semantic):
            mem.remember("user", "likes", "tea")
            (hit,) = mem.search("tea")
            assert hit.explain.fused == pytest.approx(1.0)  # first in both lists, either way
    for bad in (-1, 11, "1", True, float("nan")):
        with pytest.raises(InvalidArgumentError) as caught:
            Memvara(clock=clock, vector_weight=bad)  # type: ignore[arg-type]
        assert caught.value.argument == "vector_weight"


def test_with_a_lexical_embedder_bm25_decides_and_vectors_only_break_ties(mem: Memvara) -> None:
    mem.remember("user", "likes", "green tea")
    mem.remember("user", "likes", "tea")
    mem.remember("user", "likes", "teapots")  # no word "tea": found by trigrams only
    found = mem.search("tea", k=3)
    assert [r.explain.bm25_rank is not None for r in found] == [True, True, False]
    assert found[-1].text == "user likes teapots"


def test_a_lexical_vector_list_is_asked_for_k_candidates_and_ranks_the_same(
    mem: Memvara, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # At the lexical weight a vector rank can neither reorder two BM25 ranks nor lift a
    # claim of its own above one, so the vector list only matters where the text list
    # holds fewer than k: k + 1 candidates, the extra one to see whether a tie was cut
    # (then the whole list is asked for, so ties are settled by content, not storage).
    # Where the text list holds k, no vector is searched: the text candidates' own
    # cosines order their ties (claim_similarities).
    from memvara._read import retrieve as _retrieve

    for i in range(30):
        mem.remember(f"user_{i}", "likes", f"green tea number {i}")
        mem.remember(f"user_{i}", "owns", f"teapot {i}")  # no word "tea": trigrams only
    asked: list[int] = []
    store = mem.store
    search_vector = store.search_claims_vector

    def recorded(*args: object) -> list[tuple[str, float]]:
        asked.append(int(args[-1]))  # type: ignore[call-overload]
        return search_vector(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "search_claims_vector", recorded)
    enough = mem.search("tea", k=5)  # 30 text matches: no vector-only claim can enter
    short = mem.search("green tea number 7", k=40)  # 31 text matches: vectors fill 9
    assert asked == [41, 160]  # teapots but 7 score alike past the 40th: a tie cut
    # Vectors may fill the 9 places the text list leaves, but only with what reaches the
    # embedder's similarity floor, counted without hashing: the other teapots share only
    # " te" and "tea" (0.054-0.057 exactly; hashed, 3 of them scored 0.108-0.163).
    assert len(short) == 31 and all(r.explain.bm25_rank is not None for r in short)
    exact = HashingEmbedder().lexical_similarities(
        "green tea number 7", [f"user_{i} owns teapot {i}" for i in (10, 11, 17)])
    assert max(exact) < HashingEmbedder.similarity_floor
    monkeypatch.setattr(_retrieve, "_reordering_weight", lambda limit: 0.0)
    assert [r.text for r in mem.search("tea", k=5)] == [r.text for r in enough]
    assert [r.text for r in mem.search("green tea number 7", k=40)] == [r.text for r in short]
    assert asked[2:] == [50, 160]
    monkeypatch.undo()
    pairs = [(f"user_{i}", "likes", f"oolong {i}") for i in range(3)]
    for subject, predicate, obj in pairs:  # three claims: the text list is short of k=5
        mem.remember(subject, predicate, obj)
    asked.clear()
    monkeypatch.setattr(store, "search_claims_vector", recorded)
    mem.search("oolong please", k=5)
    assert asked == [6]  # the 5th and 6th vector scores differ: no tie cut, no second ask


def test_a_store_with_no_text_index_to_flush_still_finds_what_waits(
    clock: Clock,
) -> None:
    # flush_text_index() is optional (DeferredTextIndexStore), and no read calls it:
    # the store's text search finds the rows its index does not hold yet by itself.
    with Memvara(store=store_without("flush_text_index")(), clock=clock) as mem:
        claim = mem.remember("user", "working_on", "ERR_7734_TLSHANDSHAKE").added[0]
        (hit,) = mem.search("ERR_7734_TLSHANDSHAKE", k=1)
        assert hit.claim == claim and hit.explain.vector_rank == 1
        assert hit.explain.bm25_rank == 1
        assert mem.stats()["embeddings"] == 0


def test_a_stale_claim_id_gets_no_cosine_from_the_row_its_rowid_names(mem: Memvara) -> None:
    # A claim id carries its row's rowid and a digest of what the claim says: an id with
    # a live row's rowid but another digest names no claim, so it scores nothing.
    claim = mem.remember("user", "likes", "green tea").added[0]
    embed_all(mem)
    store = mem.store
    assert isinstance(store, SQLiteStore)
    query = HashingEmbedder().encode(["green tea"])[0]
    stale = claim.id.rsplit("-", 1)[0] + "-00000000"
    assert claim_rowid(stale) == claim_rowid(claim.id) and stale != claim.id
    assert store.claim_similarities([stale], query) == {}
    assert list(store.claim_similarities([claim.id], query)) == [claim.id]


def test_claim_similarities_are_the_cosines_of_the_claims_asked(
    mem: Memvara, clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    for i in range(12):
        mem.remember(f"user_{i}", "likes", f"green tea number {i}")
    embed_all(mem)  # stored vectors: what claim_similarities reads
    store = mem.store
    assert isinstance(store, SQLiteStore)
    ids = [r.claim.id for r in mem.search("green tea", k=12)]  # type: ignore[union-attr]
    query = HashingEmbedder().encode(["green tea"])[0]
    stored = store.vectors([claim_rowid(cid) for cid in ids])
    stale = ids[0].rsplit("-", 1)[0] + "-00000000"  # its rowid, another claim's digest
    got = store.claim_similarities([*ids, "c99999-00000000", stale], query)
    assert got == pytest.approx(dict(zip(ids, (stored @ query).tolist())))
    assert store.claim_similarities(ids, query[:8]) == {}  # another width
    assert store.claim_similarities([], query) == {}
    assert store.claim_similarities(["c99999-00000000"], query) == {}  # no such claim
    # A store without the method (it is optional) searches the vectors for k + 1 instead.
    asked: list[int] = []
    search_vector = store.search_claims_vector

    def recorded(*args: object) -> list[tuple[str, float]]:
        asked.append(int(args[-1]))  # type: ignore[call-overload]
        return search_vector(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(store, "search_claims_vector", recorded)
    with_cosines = [r.text for r in mem.search("green tea", k=5)]
    assert asked == []
    # (A memory checks its store's fast paths once, when it is built.)
    monkeypatch.setattr(store, "__class__", store_without("claim_similarities"))
    without = Memvara(store=store, clock=clock)  # closed by mem: the same store
    assert [r.text for r in without.search("green tea", k=5)] == with_cosines
    assert asked == [6]


# -- a turn lends part of its score to the turns around it --------------------------------
def test_a_reply_without_the_question_s_words_is_found_through_its_neighbour(
    clock: Clock,
) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add([Episode("Melanie: guess what we did at the weekend", role="user"),
                 Episode("Caroline: how did the pottery class go on Friday?", role="user"),
                 Episode("Melanie: we were awestruck and humbled, honestly", role="user"),
                 Episode("Caroline: that sounds lovely", role="user")])
        for i in range(30):  # spelled like the query (the vectors' favourites), no shared word
            mem.add(Episode(f"Melanie: potters {i} love classic classy pottage", role="user"))
        found = _texts(mem, "pottery class", k=4, include_episodes=True)
        assert found[0] == "Caroline: how did the pottery class go on Friday?"
        # the turns on either side share no word with the query: they get half its score
        assert set(found[1:3]) == {"Melanie: we were awestruck and humbled, honestly",
                                   "Melanie: guess what we did at the weekend"}
        # the turn two after it, a quarter: still ahead of every turn the query misses
        assert found[3] == "Caroline: that sounds lovely"
        scores = [r.explain.bm25_score or 0.0 for r in mem.search(
            "pottery class", k=4, include_episodes=True)]
        assert scores[1:] == pytest.approx([0.5 * scores[0], 0.5 * scores[0], 0.25 * scores[0]])


class _Meanings:
    """A non-lexical embedder whose cosines are set by hand: "pottery" is the query's
    meaning, "awestruck" is a little of it (0.3), "remark" more (0.8, each in its own
    direction besides, so no two are near duplicates)."""

    dim = 64

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = np.zeros((len(texts), self.dim), dtype=np.float64)
        for i, text in enumerate(texts):
            if "pottery" in text:
                rows[i, 0] = 1.0
            elif "awestruck" in text:
                rows[i, 0], rows[i, 1] = 0.3, math.sqrt(1 - 0.09)
            else:
                rng = np.random.default_rng(zlib.crc32(text.encode()))
                rest = rng.standard_normal(self.dim - 2)
                rows[i, 0] = 0.8 if "remark" in text else 0.0
                rows[i, 2:] = rest / np.linalg.norm(rest) * math.sqrt(1 - rows[i, 0] ** 2)
        return rows.astype(np.float32)


def test_every_turn_the_text_list_holds_gets_a_vector_rank(
    clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    with Memvara(clock=clock, llm=FakeLLM(), embedder=_Meanings()) as mem:
        mem.add([Episode("Caroline: how did the pottery class go?", role="user"),
                 Episode("Melanie: we were awestruck, honestly", role="user")])
        for i in range(60):  # nearer the query than the reply: they fill the vector list
            mem.add(Episode(f"John: remark {i} about the weather", role="user"))
        found = mem.search("pottery class", k=12, include_episodes=True)
        reply = next(r for r in found if r.text == "Melanie: we were awestruck, honestly")
        # found by its neighbour's words, and ranked by its meaning too, after the 50 the
        # vector list holds (the pottery turn and 49 remarks)
        assert reply.explain.bm25_rank == 2
        assert reply.explain.vector_rank == 51
        assert reply.explain.vector_score == pytest.approx(0.3, abs=1e-6)
        store = mem.store
        assert isinstance(store, SQLiteStore)
        episode_id = reply.episode.id  # type: ignore[union-attr]
        query = _Meanings().encode(["pottery"])[0]
        assert store.episode_similarities([episode_id, "e-missing"], query) == pytest.approx(
            {episode_id: 0.3}, abs=1e-6)
        assert store.episode_similarities([episode_id], query[:8]) == {}  # another width
        assert store.episode_similarities([], query) == {}
        assert store.episode_similarities(["e-missing"], query) == {}  # no such turn
        # A store without the method (it is optional) still searches: the reply is then
        # ranked by its neighbour's words alone, as before.
        monkeypatch.setattr(store, "__class__", store_without("episode_similarities"))
        without = Memvara(store=store, clock=clock, llm=FakeLLM(), embedder=_Meanings())
        found = without.search("pottery class", k=12, include_episodes=True)
        reply = next(r for r in found if r.text == "Melanie: we were awestruck, honestly")
        assert reply.explain.bm25_rank == 2 and reply.explain.vector_rank is None
    with Memvara(clock=clock, llm=FakeLLM()) as lexical:  # hashed vectors only break ties
        lexical.add([Episode("Caroline: how did the pottery class go?", role="user"),
                     Episode("Melanie: we were awestruck, honestly", role="user")])
        for i in range(60):
            lexical.add(Episode(f"John: remark {i} about the weather", role="user"))
        asked: list[Sequence[str]] = []

        def similarities(ids: Sequence[str], vector: object) -> dict[str, float]:
            asked.append(ids)
            return {}

        monkeypatch.setattr(lexical.store, "episode_similarities", similarities)
        found = lexical.search("pottery class", k=2, include_episodes=True)
        assert found[1].text == "Melanie: we were awestruck, honestly"
        # the text list holds k turns: no vector is searched, and only the listed turns
        # (the match and the two it lends to) are asked their cosines, to order ties
        assert [len(ids) for ids in asked] == [3]


# -- a date the query names is evidence for the turns stamped on it --------------------------
def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).replace(tzinfo=timezone.utc)


def test_a_turn_stamped_on_the_date_the_query_names_ranks_first(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add(Episode("Maria: we donated old clothes", ts=_utc("2023-08-16T15:00")))
        for i in range(6):  # far from both, so no neighbour lends to either
            mem.add(Episode(f"John: remark {i} about the weather", ts=_utc("2023-07-20T10:00")))
        mem.add(Episode("Maria: we donated old clothes to the shelter", ts=_utc("2023-07-01T09:00")))
        undated, dated = "Maria: we donated old clothes to the shelter", "Maria: we donated old clothes"
        question = "What did Maria donate to the shelter"
        assert _texts(mem, f"{question}?", k=2, include_episodes=True) == [undated, dated]
        for named in ("on 16 August, 2023", "on August 16th, 2023", "on 2023-08-16",
                      "the day after 15 August 2023",  # a day's span reaches a day past it
                      "in August 2023"):
            assert _texts(mem, f"{question} {named}?", k=2, include_episodes=True) == [
                dated, undated], named
        # another month: the other turn keeps its lead, and that month's turns gain
        in_july = mem.search(f"{question} in July 2023?", k=3, include_episodes=True)
        assert in_july[0].text == undated and in_july[1].text.startswith("John: remark")
        # the gain is WEIGHTS.date of the best turn score, added: not a filter
        plain = mem.search(f"{question}?", k=2, include_episodes=True)
        boosted = mem.search(f"{question} on 16 August, 2023?", k=2, include_episodes=True)
        best, own = (r.explain.bm25_score or 0.0 for r in plain)
        scale = best / (own + WEIGHTS.date * best)  # rescaled: the best keeps the best raw score
        assert [r.explain.bm25_score for r in boosted] == pytest.approx(
            [(own + WEIGHTS.date * best) * scale, best * scale])


def test_a_named_date_never_brings_in_a_turn_no_word_found(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add(Episode("the pottery class was fun", ts=_utc("2023-01-10T12:00")))
        for i in range(4):
            mem.add(Episode(f"filler turn {i}", ts=_utc("2023-02-01T12:00")))
        mem.add(Episode("an unrelated turn that day", ts=_utc("2023-03-05T12:00")))
        found = _texts(mem, "pottery class on 5 March 2023", k=5, include_episodes=True)
        assert found[0] == "the pottery class was fun"
        assert "an unrelated turn that day" not in [
            r.text for r in mem.search("pottery class on 5 March 2023", k=5,
                                       include_episodes=True) if r.explain.bm25_rank is not None]


# -- the answer a question asks for, a turn's length and the question words it holds ------
def _apart(mem: Memvara, turns: Sequence[str]) -> None:
    """Stores ``turns`` with three unmatched turns between each two, so no turn lends to
    another (neighbours and the turns two away are fillers)."""
    for i, text in enumerate(turns):
        mem.add(Episode(text))
        for j in range(3):
            mem.add(Episode(f"filler {i} {j} nothing"))


def test_a_when_question_ranks_the_turn_that_says_when_first(clock: Clock) -> None:
    said_when = "Caroline: the support group was great yesterday"
    plain = "Caroline: the support group was great"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, [said_when, plain])
        # the shorter turn leads on its words alone ...
        assert _texts(mem, "What about Caroline's support group?", k=2,
                      include_episodes=True) == [plain, said_when]
        # ... the turn that says when leads when the question asks when
        found = mem.search("When did Caroline go to the support group?", k=2,
                           include_episodes=True)
        assert [r.text for r in found] == [said_when, plain]
        unlifted = mem.search("Caroline support group", k=2, include_episodes=True)
        best = max(r.explain.bm25_score or 0.0 for r in unlifted)
        own = {r.text: r.explain.bm25_score or 0.0 for r in unlifted}
        # added: WEIGHTS.answer_type of the best turn score, then rescaled to the best raw
        lifted = own[said_when] + WEIGHTS.answer_type * best
        assert [r.explain.bm25_score for r in found] == pytest.approx(
            [best, own[plain] * best / lifted])


def test_a_when_question_brings_in_no_turn_its_words_did_not_find(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, ["Caroline: the support group was great", "Melanie: see you tomorrow"])
        found = mem.search("When did Caroline go to the support group?", k=5,
                           include_episodes=True)
        assert "Melanie: see you tomorrow" not in [
            r.text for r in found if r.explain.bm25_rank is not None]


def _own_scores(mem: Memvara, query: str) -> dict[str, float]:
    return {r.text: r.explain.bm25_score or 0.0
            for r in mem.search(query, k=10, include_episodes=True)
            if r.explain.bm25_rank is not None and not r.text.startswith("filler")}


def _scores_without_and_with(
    mem: Memvara, monkeypatch: pytest.MonkeyPatch, constant: str, query: str,
) -> tuple[dict[str, float], dict[str, float]]:
    """``_own_scores`` with the search weight ``constant`` set to 0, then as it is."""
    retriever = mem._core.retriever
    with monkeypatch.context() as patched:
        patched.setattr(retriever, "weights", replace(retriever.weights, **{constant: 0.0}))
        plain = _own_scores(mem, query)
    return plain, _own_scores(mem, query)


def test_a_longer_turn_loses_less_to_its_length(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    short, long = "pottery is fun", "pottery is fun and the whole class came along today"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, [short, long])
        # plain: FTS5's BM25 (b = 0.75) alone
        plain, scored = _scores_without_and_with(mem, monkeypatch, "turn_length_prior", "pottery")
    words = len(long.split()) / len(short.split())
    assert scored[long] / scored[short] > plain[long] / plain[short]
    assert scored[long] / scored[short] == pytest.approx(
        plain[long] / plain[short] * words ** WEIGHTS.turn_length_prior)


def test_a_turn_holding_more_of_the_question_s_words_gains(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    both, one = "we camped near the lake", "we camped and camped and camped"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, [both, one])
        plain, scored = _scores_without_and_with(
            mem, monkeypatch, "term_coverage", "Where has Melanie camped at the lake?")
    # "camped" is in both turns, "lake" only in the first
    assert scored[both] / scored[one] > plain[both] / plain[one]
    assert scored[both] / scored[one] == pytest.approx(
        plain[both] / plain[one] * (1 + WEIGHTS.term_coverage))


def test_stems_stand_in_for_the_index_stemmer() -> None:
    stems = retrieve._stems(["camping", "art", "lake", "lakes"])
    assert [stem.pattern for stem in stems] == ["(?<!\\w)campi", "(?<!\\w)art", "(?<!\\w)lake"]
    assert retrieve._covered("we camped by the lakes", retrieve._stems(["camped", "lakes"])) == 2
    assert retrieve._covered("the artist", retrieve._stems(["art"])) == 1
    assert retrieve._covered("tar and start", retrieve._stems(["art"])) == 0


def test_a_turn_said_by_the_speaker_the_query_names_gains(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the same words, both names in each: BM25 alone cannot tell them apart
    hers = "Melanie: Caroline, we painted the lake"
    to_her = "Caroline: Melanie, we painted the lake"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, [hers, to_her])
        plain, scored = _scores_without_and_with(
            mem, monkeypatch, "speaker", "What has Melanie painted?")
        assert plain[hers] == pytest.approx(plain[to_her])
        assert scored[hers] / scored[to_her] == pytest.approx(
            plain[hers] / plain[to_her] * (1 + WEIGHTS.speaker))
        assert _texts(mem, "What has Melanie painted?", k=2, include_episodes=True) == [
            hers, to_her]
        assert _texts(mem, "What has Caroline painted?", k=2, include_episodes=True) == [
            to_her, hers]
        # naming both, or neither, lifts neither
        for query in ("What have Melanie and Caroline painted?", "Who painted the lake?"):
            both = _own_scores(mem, query)
            assert both[hers] == pytest.approx(both[to_her]), query


def _counting_turn_reads(mem: Memvara, monkeypatch: pytest.MonkeyPatch,
                         lost: str = "") -> list[list[str]]:
    """Record each ``episodes_by_ids`` call's ids; the turn whose text is ``lost`` is
    never returned, as by a store whose row went between the text match and the read."""
    store = mem.store
    read = store.episodes_by_ids
    calls: list[list[str]] = []

    def episodes_by_ids(ids: Sequence[str]) -> dict[str, Episode]:
        calls.append(list(ids))
        return {key: e for key, e in read(ids).items() if e.content != lost}

    monkeypatch.setattr(store, "episodes_by_ids", episodes_by_ids)
    return calls


def test_with_every_turn_factor_off_turns_rank_on_bm25_and_are_read_once(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    short, long = "pottery is fun", "pottery is fun and the whole class came along today"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, [short, long])
        store = mem.store
        raw = store.search_episodes_text(mem.default_scope, TimeQuery(2**62, None),
                                         query_terms("pottery"), 10)
        bm25 = {store.episodes_by_ids([key])[key].content: score for key, score in raw}
        retriever = mem._core.retriever
        monkeypatch.setattr(retriever, "weights", replace(
            retriever.weights, turn_length_prior=0.0, term_coverage=0.0, speaker=0.0))
        calls = _counting_turn_reads(mem, monkeypatch)
        scored = _own_scores(mem, "pottery")
    assert scored == pytest.approx(bm25)  # neither rescaled nor lent to (three fillers apart)
    assert len(calls) == 1  # only the results are read, not the matches to weigh them


def test_a_matched_turn_the_store_cannot_read_back_is_left_out(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between the text match and the read of the matched turns (their length, words and
    # speaker), one turn went: the search still answers, from the turns it could read.
    hers, gone = "Melanie: we painted the lake", "Melanie: we painted the lake again"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        _apart(mem, [hers, gone])
        assert _texts(mem, "What has Melanie painted?", k=2, include_episodes=True) == [
            hers, gone]
        calls = _counting_turn_reads(mem, monkeypatch, lost=gone)
        found = _texts(mem, "What has Melanie painted?", k=10, include_episodes=True)
    assert found[0] == hers and gone not in found
    assert len(calls[0]) == 2  # both matches were asked for, to weigh them


def test_a_matched_turn_the_store_cannot_read_back_lends_its_neighbour_nothing(
    clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    gone, after = "Melanie: we painted the lake", "Caroline: that sounds lovely"
    barn = "Melanie: we painted the barn"
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add(Episode(gone))
        _apart(mem, [after, barn])  # after is the turn next to gone; barn is far from both
        assert set(_own_scores(mem, "painted")) == {gone, after, barn}  # after: lent to
        _counting_turn_reads(mem, monkeypatch, lost=gone)
        # erased since the text index answered: it neither ranks nor lends
        assert set(_own_scores(mem, "painted")) == {barn}


class _Recording:
    """A semantic embedder (not lexical: its ranks count) that records what it encodes."""

    dim = 16

    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        from memvara import HashingEmbedder
        self.seen.extend(texts)
        return HashingEmbedder(dim=16).encode(texts)


def test_a_semantic_query_vector_leaves_out_the_speakers_the_query_names(
    clock: Clock,
) -> None:
    embedder = _Recording()
    with Memvara(clock=clock, llm=FakeLLM(), embedder=embedder) as mem:
        _apart(mem, ["Melanie: Caroline, we painted the lake", "Caroline: lovely!"])
        for query, encoded in [
            ("What has Melanie painted?", "What has painted?"),
            ("What did Melanie and Caroline paint?", "What did and paint?"),
            # a possessive alone names no speaker (WEIGHTS.speaker), but goes with a name
            ("What did Melanie's kids paint?", "What did Melanie's kids paint?"),
            ("Did Melanie paint Melanie's kids?", "Did paint kids?"),
            ("Who painted the lake?", "Who painted the lake?"),  # names no speaker
            ("Melanie?", "Melanie?"),  # nothing else left: the query whole
            ("What has Mel painted?", "What has Mel painted?"),  # no label holds "mel"
        ]:
            embedder.seen.clear()
            mem.search(query, k=4, include_episodes=True)
            assert embedder.seen == [encoded], query
            embedder.seen.clear()
            mem.search(query, k=4)  # no turns searched: none named
            assert embedder.seen == [query], query
    from memvara import HashingEmbedder

    class Hashing(HashingEmbedder):
        def __init__(self) -> None:
            super().__init__()
            self.seen: list[str] = []

        def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
            self.seen.extend(texts)
            return super().encode(texts)

    hashing = Hashing()
    with Memvara(clock=clock, llm=FakeLLM(), embedder=hashing) as lexical:
        _apart(lexical, ["Melanie: Caroline, we painted the lake"])
        hashing.seen.clear()
        lexical.search("What has Melanie painted?", k=4, include_episodes=True)
        assert hashing.seen == ["What has Melanie painted?"]  # its vectors break ties only


def test_names_are_left_out_of_a_query_word_by_word() -> None:
    without = retrieve._without_names
    assert without("What has Melanie painted?", {"melanie"}) == "What has painted?"
    assert without("Did Melanie\u2019s and MELANIE's kids paint?", {"melanie"}) == (
        "Did and kids paint?")
    assert without("Did Melanies paint? it's Mel", {"melanie"}) == (
        "Did Melanies paint? it's Mel")  # whole words only
    assert without("What has Melanie painted?", set()) == "What has Melanie painted?"
    assert without("Melanie, Caroline?", {"melanie", "caroline"}) == "Melanie, Caroline?"


def test_a_speaker_label_is_read_from_a_transcript_line() -> None:
    assert retrieve._speaker("Melanie: we painted the lake") == {"melanie"}
    assert retrieve._speaker("Dr. Ruth Smith: take two") == {"dr", "ruth", "smith"}
    assert retrieve._speaker("Jon:") == {"jon"}
    assert retrieve._speaker("note: buy milk") == frozenset()  # lower-case: not a name
    assert retrieve._speaker("Meet at 10:30 tomorrow") == frozenset()  # no colon and space
    assert retrieve._speaker("we painted the lake") == frozenset()


def test_a_neighbour_comes_only_from_the_turn_s_own_scope_and_time(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.add(Episode("the pottery class was on Friday"), user="u1")
        mem.add(Episode("a secret of another user"), user="u2")  # next rowid, other scope
        said = clock.now
        clock.advance(days=1)
        mem.add(Episode("we were awestruck"), user="u1")  # u1's next turn, a day later
        assert "a secret of another user" not in _texts(
            mem, "pottery class", k=10, include_episodes=True, user="u1")
        at_the_time = _texts(mem, "pottery class", k=10, include_episodes=True, user="u1",
                             as_of=said)
        assert at_the_time == ["the pottery class was on Friday"]
        assert "we were awestruck" in _texts(
            mem, "pottery class", k=10, include_episodes=True, user="u1")
        neighbours = mem.store.episode_neighbours(
            TimeQuery(known_at=to_micros(said, "t"), valid_at=None), ["e-unknown"])
        assert neighbours == {}


def test_search_returns_only_what_matches_and_k_is_an_upper_bound(clock: Clock) -> None:
    with Memvara(clock=clock, llm=FakeLLM()) as mem:
        mem.remember("user", "lives_in", "Lisbon")
        mem.remember("user", "working_on", "ERR_7734_TLSHANDSHAKE")
        mem.remember("user", "likes", "pottery")
        # Before, the other two facts padded k with scores of about 0.001.
        assert [r.text for r in mem.search("Lisbon?", k=10)] == ["user lives in Lisbon"]
        assert mem.search("quantum chromodynamics", k=10) == []
        assert len(mem.search("user", k=10)) == 3  # each shares the word


class _Scripted:
    """An embedder whose vectors are chosen per text, declaring a floor."""

    lexical = False

    def __init__(self, vectors: dict[str, list[float]], floor: object) -> None:
        self._vectors = vectors
        self.similarity_floor = floor

    @property
    def dim(self) -> int:
        return 2

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        rows = [self._vectors.get(t, [0.0, 1.0]) for t in texts]
        out = np.asarray(rows, dtype=np.float32).reshape(len(texts), 2)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.ascontiguousarray(out / np.where(norms == 0, 1, norms), dtype=np.float32)


def test_a_vector_only_result_must_reach_the_embedder_s_floor(clock: Clock) -> None:
    close, far = [1.0, 0.3], [0.1, 1.0]  # cosines with the query [1, 0]: 0.96 and 0.10
    embedder = _Scripted({"q": [1.0, 0.0], "ann near": close, "ann far": far}, 0.5)
    with Memvara(clock=clock, llm=FakeLLM(), embedder=embedder) as mem:
        mem.remember("ann", "is", "near", text="ann near")
        mem.remember("ann", "is", "far", text="ann far")
        assert [r.text for r in mem.search("q", k=5)] == ["ann near"]
        embedder.similarity_floor = 0.0
        assert [r.text for r in mem.search("q", k=5)] == ["ann near", "ann far"]


def test_unrelated_facts_are_not_results_though_hashed_vectors_collide(mem: Memvara) -> None:
    # HashingEmbedder hashes trigrams and words into 512 buckets: "Kiwi" shares no feature
    # with these facts, yet its vector scores 0.26-0.28 with each, above the floor (0.1).
    for obj in ("jazz", "Acme", "pottery"):
        mem.remember("Bruno", "likes", obj)
    texts = [r.text for r in mem.search("Bruno")]
    embedder = HashingEmbedder()
    hashed = embedder.encode(["Kiwi"]) @ embedder.encode(texts).T
    assert len(texts) == 3 and hashed.min() > HashingEmbedder.similarity_floor
    assert mem.search("Kiwi", k=10) == []  # the floor is judged on the exact cosine, 0.0
    assert mem.recall("Kiwi") == ""  # nothing unrelated pasted into a prompt


@pytest.mark.parametrize("query, found", [
    ("Lisbn", "user lives in Lisbon"), ("Portugese", "Kofi speaks Portuguese"),
    ("tea", "user owns a teapot"),
])
def test_a_misspelt_or_partial_word_is_still_found_by_its_spelling(
    mem: Memvara, query: str, found: str,
) -> None:
    mem.remember("user", "lives_in", "Lisbon")
    mem.remember("Kofi", "speaks", "Portuguese")
    mem.remember("user", "owns", "a teapot")
    (hit,) = mem.search(query, k=10)
    assert hit.text == found and hit.explain.bm25_rank is None  # the vectors alone found it
    assert found in mem.recall(query)


def test_only_a_lexical_embedder_s_exact_similarity_judges_the_floor(clock: Clock) -> None:
    class Spelled(_Scripted):
        def lexical_similarities(self, query: str, texts: Sequence[str]) -> list[float]:
            return [0.9 if "near" in text else 0.05 for text in texts]

    # cosines with the query [1, 0]: 0.96 and 0.89, both above the floor
    embedder = Spelled({"q": [1.0, 0.0], "ann near": [1.0, 0.3], "ann far": [1.0, 0.5]}, 0.5)
    with Memvara(clock=clock, llm=FakeLLM(), embedder=embedder) as mem:
        mem.remember("ann", "is", "near", text="ann near")
        mem.remember("ann", "is", "far", text="ann far")
        assert [r.text for r in mem.search("q", k=5)] == ["ann near", "ann far"]  # semantic
        embedder.lexical = True
        assert [r.text for r in mem.search("q", k=5)] == ["ann near"]


@pytest.mark.parametrize("declared, floor", [
    (0.3, 0.3), (1, 1.0), (None, 0.0), (True, 0.0), ("0.3", 0.0), (-0.1, 0.0), (1.5, 0.0),
])
def test_an_embedder_s_floor_is_read_defensively(declared: object, floor: float) -> None:
    from memvara.embed import similarity_floor

    class Declares:
        similarity_floor = declared

    assert similarity_floor(Declares()) == floor
    assert similarity_floor(object()) == 0.0
