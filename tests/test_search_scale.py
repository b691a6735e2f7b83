"""search() on large stores: candidates found without scoring every row, same answers.

The store's two candidate lists take shortcuts past a size (``store/_bm25.py``,
``store/_nearest.py``, ``VectorFile.top``). These tests shrink the thresholds so a few
hundred claims take every path, and hold each path to the plain query that scores
every admitted row: exact where the module says exact, and within its stated bound
where it says approximate. The filter (scope, time, states) must hold on every path.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from memvara import STATES, Claim, Memvara, SQLiteStore
from memvara._domain.model import Scope, TimeQuery
from memvara._read.retrieve import _ordered, _tiebreak
from memvara.store.sqlite import _bm25, _nearest, _signs, _sparse, _vectors
from memvara._domain.terms import query_terms
from memvara.store.sqlite._fts import match_any
from memvara.store.sqlite._vectors import VectorFile

from .conftest import Clock, catch_up
from .store_without import store_without

OLD = datetime(2020, 1, 1, tzinfo=timezone.utc)
_PREDICATES = (("lives_in", "city_{}"), ("works_at", "org_{}"), ("likes", "thing_{}"),
               ("speaks", "lang_{}"))


def _store(mem: Memvara) -> SQLiteStore:
    store = mem.store
    assert isinstance(store, SQLiteStore)
    return store


def _fill(mem: Memvara, subjects: int, *, user: str | None = None) -> None:
    """``4 * subjects`` claims in bench/search.py's shape: every text says "user"."""
    mem.remember_many([
        Claim(f"user_{s}", p, o.format(s % 13), scope=Scope(user=user))
        for s in range(subjects) for p, o in _PREDICATES
    ])


def small_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    """Plan text searches and rank vectors first from a few dozen rows up."""
    monkeypatch.setattr(_bm25, "PLAN_MIN_ROWS", 0)
    monkeypatch.setattr(_bm25, "budget", lambda rows: 16)
    monkeypatch.setattr(_nearest, "SCAN_MIN", 16)
    monkeypatch.setattr(_vectors, "EXACT_SLOTS", 1 << 20)


@pytest.fixture(name="small_plans")
def _small_plans(monkeypatch: pytest.MonkeyPatch) -> None:
    small_plans(monkeypatch)


@pytest.fixture(params=["memory", "file"])
def big(request: pytest.FixtureRequest, tmp_path: Path, clock: Clock) -> Iterator[Memvara]:
    path = ":memory:" if request.param == "memory" else str(tmp_path / "big.db")
    with Memvara(path, clock=clock) as mem:
        _fill(mem, 150)
        # Claims that only a time-travel read sees, and a few of a user's own.
        mem.remember("user_7", "lives_in", "old_town", valid_from=OLD,
                     valid_to=OLD + timedelta(days=300), recorded_at=OLD)
        mem.remember("user_7", "likes", "old_jazz", valid_from=OLD, recorded_at=OLD)
        mem.delete(mem.remember("user_8", "likes", "durian").added[0].id)
        _fill(mem, 5, user="alice")
        catch_up(mem)  # index and embed everything: these tests are about the index
        yield mem


# -- reference: the plain queries every shortcut must agree with ------------------------
def _plain_text(store: SQLiteStore, where: str, params: Sequence[object], match: str,
                limit: int) -> list[tuple[str, float]]:
    return [(cid, -float(score)) for cid, score in store._query(
        "SELECT claims.id, bm25(claims_fts) AS score FROM claims_fts"
        " JOIN claims ON claims.rowid = claims_fts.rowid"
        f" WHERE claims_fts MATCH ? AND {where} ORDER BY score, claims.rowid LIMIT ?",
        [match, *params, limit])]


def _plain_vector(store: SQLiteStore, where: str, params: Sequence[object],
                  vector: npt.NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
    rows = store._query(f"SELECT claims.id, claims.rowid FROM claims WHERE {where}"
                        " AND claims.vec_slot IS NOT NULL ORDER BY claims.rowid", params)
    if not rows:
        return []
    scores = _vectors.dot(store.vectors([r for _, r in rows]), vector)
    best = np.argsort(-scores, kind="stable")[:limit]
    return [(rows[i][0], float(scores[i])) for i in best]


READS = [
    (Scope(), TimeQuery(2**62, None), ("live",)),
    (Scope(), TimeQuery(2**62, int(OLD.timestamp() * 1e6) + 1), ("live",)),
    (Scope(), TimeQuery(2**62, None), STATES),
    (Scope(), TimeQuery(2**62, None), ("retired",)),
    (Scope(user="alice"), TimeQuery(2**62, None), ("live",)),
]
QUERIES = ["where does user_7 live?", "where does user_140 live?", "user_3 lives in city_3",
           "what does the user like", "city_5", "user", "lives works", "old town jazz",
           "durian", "speaks lang_2 likes thing_2"]


@pytest.mark.parametrize(("scope", "tq", "states"), READS)
def test_text_candidates_agree_with_scoring_every_row(
    big: Memvara, small_plans: None, scope: Scope, tq: TimeQuery, states: tuple[str, ...],
) -> None:
    store = _store(big)
    where, params = store._claim_filter(scope, tq, states, None)
    for query in QUERIES:
        terms = query_terms(query)
        match = match_any(terms)  # what the store asks FTS5 for
        assert match is not None
        for limit in (3, 12, 50):
            got = store.search_claims_text(scope, tq, states, None, terms, limit)
            every = _plain_text(store, where, params, match, 10_000)
            scores = dict(every)
            assert len(got) == min(limit, len(every)), query
            assert all(key in scores for key, _ in got)  # the filter held
            assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
            for key, score in got:  # scored as FTS5 scores them, up to the floor phrases
                assert abs(score - scores[key]) < 1e-5 or score == 0.0
            phrases = _bm25.phrases_of(match)
            assert phrases is not None
            hits = {p: int(store._query(
                "SELECT count(*) FROM claims_fts WHERE claims_fts MATCH ?", [p])[0][0])
                for p in phrases}
            rows = int(store._query("SELECT count(*) FROM claims_fts")[0][0])
            classes = None if len(phrases) < 2 else _bm25.split(phrases, hits, rows)
            if classes is None:  # the plain query ran
                assert got == every[:limit]
            else:  # rows matching a rare phrase, and able to outscore the rest, are exact
                head = [key for key, s in every[:limit] if s > classes.ceiling + 1e-5]
                assert [key for key, _ in got[: len(head)]] == head, query


def test_the_bench_question_is_exact_where_the_rare_word_decides(
    big: Memvara, monkeypatch: pytest.MonkeyPatch,
) -> None:
    exact = big.search("where does user_7 live?", k=4)
    small_plans(monkeypatch)
    planned = big.search("where does user_7 live?", k=4)
    assert planned[0].text == "user_7 lives in city_7"
    assert [(r.text, r.score, r.explain.bm25_rank, r.explain.vector_rank) for r in planned] == [
        (r.text, r.score, r.explain.bm25_rank, r.explain.vector_rank) for r in exact]
    for p, e in zip(planned, exact):  # "user" is in every row: its 1e-6 IDF is left out
        assert p.explain.bm25_score == pytest.approx(e.explain.bm25_score, abs=2.2e-6)


def test_a_common_word_alone_fills_the_list_from_the_window(
    big: Memvara, small_plans: None,
) -> None:
    store = _store(big)
    tq = TimeQuery(2**62, None)
    # "lives" is common and "user" is in every row: no rare phrase, so the list is the
    # window's best, and only rows of the live view.
    got = store.search_claims_text(Scope(), tq, ("live",), None, ["user", "lives"], 10)
    where, params = store._claim_filter(Scope(), tq, ("live",), None)
    admitted = dict(_plain_text(store, where, params, '"user" OR "lives"', 10_000))
    assert len(got) == 10 and all(key in admitted for key, _ in got)
    # Only floor phrases match the rest: filled, scored 0 (FTS5 gives them ~1e-6).
    got = store.search_claims_text(Scope(), tq, ("live",), None, ["user", "durian"], 700)
    assert len(got) == 602 and got[-1][1] == 0.0 and str(got[-1][1]) == "0.0"


def test_a_time_travel_text_search_is_not_crowded_out(big: Memvara, small_plans: None) -> None:
    found = big.search("where does user_7 live?", k=1, valid_at=OLD + timedelta(days=30))
    assert [r.text for r in found] == ["user_7 lives in old_town"]


def test_inside_a_write_transaction_the_plain_query_runs(big: Memvara, small_plans: None) -> None:
    store = _store(big)
    seen: list[str] = []
    tq = TimeQuery(2**62, None)
    with store.transaction():
        store._query("SELECT 1")  # the writer's connection is this thread's now
        original = store._query

        def traced(sql: str, params: Sequence[object] = ()) -> list[object]:
            seen.append(sql)
            return original(sql, params)

        store._query = traced  # type: ignore[method-assign]
        try:
            store.search_claims_text(Scope(), tq, ("live",), None, ["user", "7"], 5)
        finally:
            del store._query
    assert not any("_data" in sql for sql in seen)  # no plan: the records may lag


@pytest.mark.parametrize("cheap", [True, False])
def test_one_common_word_is_scored_as_bm25_scores_it_without_recounting_it(
    clock: Clock, small_plans: None, monkeypatch: pytest.MonkeyPatch, cheap: bool,
) -> None:
    # "lives" is the one common phrase: its share of each row's score is computed from the
    # cached counts, the row's instances of it and its length, and equals FTS5's to the
    # last bit (some rows repeat it, so the count of instances matters). bm25() runs only
    # on the rare phrase, which is cheap to count. Where counting the common phrase is
    # cheaper than looking rows up (SEEK_HITS) or marking them (MARK_HITS), as in a small
    # index, bm25() scores the rows holding both and the window, as before.
    monkeypatch.setattr(_bm25, "SEEK_HITS", 1 if cheap else 10**9)
    monkeypatch.setattr(_bm25, "MARK_HITS", 0 if cheap else 10**9)
    statements: list[str] = []
    store = SQLiteStore(tracer=lambda sql, params: statements.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        mem.remember_many([Claim(f"user_{s}", "note", "town", text=f"user_{s} "
                                 + "lives " * (1 + s % 3) + "in a long sentence about town")
                           for s in range(0, 40, 7)])  # first: inside the window
        _fill(mem, 40)
        catch_up(mem)
        tq = TimeQuery(2**62, None)
        where, params = store._claim_filter(Scope(), tq, ("live",), None)
        statements.clear()
        got = store.search_claims_text(Scope(), tq, ("live",), None, ["7", "lives"], 30)
        scored = [sql for sql in statements if "bm25(claims_fts)" in sql]
        assert len(scored) == (1 if cheap else 3)  # the rare phrase (both, the window)
        exact = dict(_plain_text(store, where, params, '"7" OR "lives"', 10_000))
        alone = dict(_plain_text(store, where, params, '"lives"', 10_000))
        with_seven = dict(_plain_text(store, where, params, '"7"', 10_000))
        assert len(got) == 30
        for key, score in got:  # bit for bit, whichever list found the row
            assert score == (exact[key] if key in with_seven else alone[key])
        assert any(key in with_seven and key in alone for key, _ in got)
        repeated = {c.id for c in mem.get_all() if c.text.count("lives") > 1}
        assert len(repeated) == 4 and {key for key, _ in got} >= repeated


def test_a_rare_word_whose_rows_lack_the_common_word_needs_no_rescoring(
    clock: Clock, small_plans: None,
) -> None:
    # "durian" is rare and "lives" the one common word, but no row says both: the rows
    # holding both are looked up, none is found, and the rare row keeps bm25()'s score
    # of "durian" alone, with neither bm25() nor highlight() asked to score "lives" there.
    statements: list[str] = []
    store = SQLiteStore(tracer=lambda sql, params: statements.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        _fill(mem, 40)
        durian = mem.remember("user_3", "likes", "durian").added[0]
        catch_up(mem)
        tq = TimeQuery(2**62, None)
        where, params = store._claim_filter(Scope(), tq, ("live",), None)
        statements.clear()
        got = store.search_claims_text(Scope(), tq, ("live",), None, ["durian", "lives"], 5)
        searched = list(statements)
        exact = dict(_plain_text(store, where, params, '"durian" OR "lives"', 10_000))
    assert got[0] == (durian.id, exact[durian.id])  # bit for bit
    assert [sql for sql in searched if '("durian") AND ("lives")' in sql] == [
        "SELECT rowid FROM claims_fts WHERE claims_fts MATCH '(\"durian\") AND (\"lives\")'"]
    assert not [sql for sql in searched if "highlight(" in sql]
    scored = [sql for sql in searched if "bm25(claims_fts)" in sql]
    assert len(scored) == 2 and "ORDER BY" not in scored[0]  # the rare rows, then the window


def test_a_common_phrase_of_two_words_is_left_to_bm25(
    big: Memvara, small_plans: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # "lives in" is one common phrase of two tokens: highlight() marks each token, not
    # each instance, so its share is not computed here; bm25() scores it, as before.
    monkeypatch.setattr(_bm25, "MARK_HITS", 0)
    monkeypatch.setattr(_bm25, "SEEK_HITS", 1)
    store = _store(big)
    tq = TimeQuery(2**62, None)
    where, params = store._claim_filter(Scope(), tq, ("live",), None)
    # (a term of two words is a phrase: the store quotes each term whole)
    got = store.search_claims_text(Scope(), tq, ("live",), None, ["7", "lives in"], 30)
    exact = dict(_plain_text(store, where, params, '"7" OR "lives in"', 10_000))
    alone = dict(_plain_text(store, where, params, '"lives in"', 10_000))
    with_seven = dict(_plain_text(store, where, params, '"7"', 10_000))
    assert len(got) == 30
    for key, score in got:
        assert score == pytest.approx(exact[key] if key in with_seven else alone[key], abs=1e-9)


def test_phrase_counts_are_cached_until_the_index_changes(clock: Clock, small_plans: None) -> None:
    statements: list[str] = []
    store = SQLiteStore(tracer=lambda sql, params: statements.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        _fill(mem, 40)
        catch_up(mem)

        def counted() -> int:
            return sum("SELECT count(*) FROM (SELECT 1 FROM claims_fts" in s for s in statements)

        mem.search("where does user_7 live?")
        first = counted()
        assert first == 3  # user, 7, live
        mem.search("where does user_7 live?")
        assert counted() == first
        mem.remember("user_99", "lives_in", "somewhere")
        store.flush_text_index()
        mem.search("where does user_7 live?")  # the flush changed the index: counted again
        assert counted() == 2 * first


def test_rank_fields_of_claims_the_vector_probe_admitted_cost_no_query(
    clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Inside one snapshot the probe that admits a ranked row has read its rank fields;
    # rank_fields asks SQL only for the other ids, and both ways give the same fields.
    statements: list[str] = []
    store = SQLiteStore(str(tmp_path / "m.db"), tracer=lambda sql, params: statements.append(sql))
    with Memvara(store=store, clock=clock) as mem:
        _fill(mem, 2_000)
        catch_up(mem)
        tq = TimeQuery(known_at=10**18, valid_at=None)
        vector = mem._core.retriever._embedder.encode(["where does user_7 live?"])[0]
        others = [c.id for c in mem.get_all()[:5]]
        with store.snapshot():
            near = [cid for cid, _ in store.search_claims_vector(
                Scope(), tq, STATES, None, vector, 20)]
            statements.clear()
            wanted = list(dict.fromkeys([*near, *others]))
            inside = store.rank_fields(wanted)
            lookups = [s for s in statements if "FROM claims" in s]
        rest = [cid for cid in others if cid not in near]
        assert len(near) == 20 and rest and len(lookups) == 1
        asked = lookups[0].split("rowid IN (")[1].split(")")[0].split(",")
        assert len(asked) == len(rest)  # only the ids the probe did not read
        assert inside == store.rank_fields(wanted)  # outside a snapshot: all from SQL
        assert set(inside) == set(wanted)
        # The text search's queries read them too: planned as shipped (the rare phrase
        # and the window) and with every threshold shrunk (small_plans).
        for shrunk in (False, True):
            if shrunk:
                small_plans(monkeypatch)
            with store.snapshot():
                matched = [cid for cid, _ in store.search_claims_text(
                    Scope(), tq, STATES, None, query_terms("where does user_7 live?"), 30)]
                statements.clear()
                fields = store.rank_fields(matched)
                assert not [s for s in statements if "FROM claims" in s]
            assert len(matched) == 30 and fields == store.rank_fields(matched)


def test_bm25_bounds_and_records() -> None:
    assert _bm25.idf(100, 50) == _bm25.IDF_FLOOR  # log(1) = 0: FTS5 floors it
    assert _bm25.idf(100, 1) == pytest.approx(np.log(99.5 / 1.5))
    assert _bm25.ceiling(100, 1) == pytest.approx(2.2 * _bm25.idf(100, 1))
    assert _bm25.budget(100) == 256 and _bm25.budget(64_000) == 1000
    assert _bm25.window(50) == 50
    assert _bm25.rows_indexed(bytes([0x05, 0x20])) == 5
    assert _bm25.rows_indexed(bytes([0x81, 0x00])) == 128
    assert _bm25.rows_indexed(bytes([0xFF] * 8 + [0x01])) == ((1 << 56) - 1) << 8 | 1
    assert _bm25.rows_indexed(b"") is None and _bm25.rows_indexed(bytes([0x80])) is None
    # an averages record: rows, then the tokens of each column
    assert _bm25.varints(bytes([0x05, 0x81, 0x00, 0x7F]), 2) == [5, 128]
    assert _bm25.varints(bytes([0x05]), 2) is None and _bm25.varints(b"", 0) == []
    # a nine-byte varint, then a one-byte one; and eight bytes whose ninth is missing
    assert _bm25.varints(bytes([0x80] * 8 + [0x07, 0x03]), 2) == [7, 3]
    assert _bm25.rows_indexed(bytes([0xFF] * 8)) is None
    assert _bm25.phrases_of('"a" OR "b c" OR "a"') == ['"a"', '"b c"']
    assert _bm25.phrases_of('"a" AND "b"') is None and _bm25.phrases_of("a") is None
    assert _bm25.phrases_of('"say ""hi"""') == ['"say ""hi"""']


def test_phrases_split_rarest_first_within_the_budget() -> None:
    rows = 64_000  # budget 1000
    hits = {"a": 10, "b": 900, "c": 5_000, "d": 40_000}
    split = _bm25.split(list(hits), hits, rows)
    assert split is not None
    assert (split.rare, split.common, split.floor) == (("a", "b"), ("c",), ("d",))
    assert split.ceiling == pytest.approx(_bm25.ceiling(rows, 5_000) + 2.2e-6)
    # Each rare phrase fits in a budget, and all of them in two.
    hits = {"a": 900, "b": 950, "c": 990, "e": 10, "f": 1500}
    assert _bm25.split(["a", "b", "c"], hits, rows).rare == ("a", "b")  # type: ignore[union-attr]
    assert _bm25.split(["e", "f"], hits, rows).rare == ("e",)  # type: ignore[union-attr]
    # The rarest phrase is rare even past the budget, up to eight budgets.
    assert _bm25.split(["x", "y"], {"x": 7_000, "y": 20_000}, rows) == _bm25.Split(
        ("x",), ("y",), (), _bm25.ceiling(rows, 20_000))
    assert _bm25.split(["x", "y"], {"x": 9_000, "y": 20_000}, rows) == _bm25.Split(
        (), ("x", "y"), (), _bm25.ceiling(rows, 9_000) + _bm25.ceiling(rows, 20_000))
    assert _bm25.split(["a", "b"], {"a": 10, "b": 20}, rows) is None  # cheap: plain query
    assert _bm25.split(["d", "e"], {"d": 40_000, "e": 33_000}, rows) is None  # all floor
    assert _bm25.split(["x"], {"x": 5_000}, rows) is None  # all rare: nothing to split


# -- the vector side ----------------------------------------------------------------
@pytest.mark.parametrize(("scope", "tq", "states"), READS)
@pytest.mark.parametrize("exact_slots", [1 << 20, 0])
def test_vector_candidates_agree_with_scoring_every_row(
    big: Memvara, small_plans: None, monkeypatch: pytest.MonkeyPatch, exact_slots: int,
    scope: Scope, tq: TimeQuery, states: tuple[str, ...],
) -> None:
    monkeypatch.setattr(_vectors, "EXACT_SLOTS", exact_slots)
    monkeypatch.setattr(_vectors, "PREFILTER", 64)
    store = _store(big)
    where, params = store._claim_filter(scope, tq, states, None)
    for query in QUERIES:
        vector = big.embedder.encode([query])[0]
        every = _plain_vector(store, where, params, vector, 10_000)
        scores = dict(every)
        for limit in (3, 12, 50):
            got = store.search_claims_vector(scope, tq, states, None, vector, limit)
            assert len(got) == min(limit, len(every))
            assert all(scores[key] == score for key, score in got)  # exact, and admitted
            assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
            if exact_slots:  # every slot scored: the very list the scan gives
                assert got == every[:limit], query


@pytest.mark.parametrize(("scope", "tq", "states"), [READS[0], READS[2]])
def test_sparse_vector_candidates_are_the_exact_list(
    big: Memvara, small_plans: None, monkeypatch: pytest.MonkeyPatch,
    scope: Scope, tq: TimeQuery, states: tuple[str, ...],
) -> None:
    """Scored from postings, the list is every admitted row's product summed exactly
    (float64), nearest first, equal products by rowid. (The other reads admit few rows,
    which are scanned and scored by the dense pass, as before.)"""
    monkeypatch.setattr(_vectors, "SPARSE_SLOTS", 0)
    monkeypatch.setattr(_sparse, "BLOCK", 128)
    store = _store(big)
    where, params = store._claim_filter(scope, tq, states, None)
    rows = store._query(f"SELECT claims.id, claims.rowid FROM claims WHERE {where}"
                        " AND claims.vec_slot IS NOT NULL ORDER BY claims.rowid", params)
    for query in QUERIES:
        vector = big.embedder.encode([query])[0]
        assert _sparse.is_sparse(vector)
        exact = (store.vectors([r for _, r in rows]).astype(np.float64)
                 @ vector.astype(np.float64)).astype(np.float32)
        best = np.argsort(-exact, kind="stable")
        for limit in (3, 50):
            got = store.search_claims_vector(scope, tq, states, None, vector, limit)
            assert got == [(rows[i][0], float(exact[i])) for i in best[:limit]], query


def test_the_sign_pass_finds_a_stored_vector_asked_for_itself(
    big: Memvara, small_plans: None, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_vectors, "EXACT_SLOTS", 0)
    monkeypatch.setattr(_vectors, "PREFILTER", 16)
    store = _store(big)
    ((cid, slot),) = store._query(
        "SELECT id, vec_slot FROM claims WHERE text = 'user_99 likes thing_8'")
    vector = store.vectors([slot])[0]
    got = store.search_claims_vector(Scope(), TimeQuery(2**62, None), ("live",), None, vector, 5)
    assert got[0][0] == cid and got[0][1] == pytest.approx(1.0)


def test_a_small_scope_is_scanned_and_a_sparse_filter_widens(
    clock: Clock, small_plans: None,
) -> None:
    statements: list[str] = []
    store = SQLiteStore(tracer=lambda sql, params: statements.append(sql))
    live, every = TimeQuery(2**62, None), TimeQuery(2**62, None)
    with Memvara(store=store, clock=clock) as mem:
        _fill(mem, 100, user="carol")
        _fill(mem, 3, user="bob")  # bob sees his 12 claims, carol's 400 are not his
        catch_up(mem)
        vector = mem.embedder.encode(["user_1 lives"])[0]
        where, params = store._claim_filter(Scope(user="bob"), live, ("live",), None)
        statements.clear()
        bob = store.search_claims_vector(Scope(user="bob"), live, ("live",), None, vector, 20)
        assert bob == _plain_vector(store, where, params, vector, 20) and len(bob) == 12
        counts = [s for s in statements if "SELECT count(*) FROM (SELECT 1 FROM claims" in s]
        assert len(counts) == 1  # counted once, found small, scanned

    with Memvara(clock=clock) as mem:
        _fill(mem, 100)
        for claim in mem.search("user_5", k=2):
            assert claim.claim is not None
            mem.delete(claim.claim.id)
        catch_up(mem)
        store = _store(mem)
        vector = mem.embedder.encode(["user_1 lives"])[0]
        where, params = store._claim_filter(Scope(), every, ("retired",), None)
        retired = store.search_claims_vector(Scope(), every, ("retired",), None, vector, 5)
        assert retired == _plain_vector(store, where, params, vector, 5) and len(retired) == 2
        assert store.search_claims_vector(Scope(), live, ("live",), None,
                                          np.ones(7, dtype=np.float32), 5) == []


def test_an_empty_store_has_no_vector_candidates(mem: Memvara) -> None:
    store = _store(mem)
    vector = np.ones(mem.embedder.dim, dtype=np.float32)
    assert store.search_claims_vector(Scope(), TimeQuery(2**62, None), ("live",), None,
                                      vector, 5) == []
    assert store.search_episodes_vector(Scope(), TimeQuery(2**62, None), vector, 5) == []
    mem.remember_many([Claim(f"u{i}", "likes", "tea") for i in range(300)])
    for claim in mem.get_all(include_invalidated=True):
        mem.erase(claim.id)  # vectors were written, but no claim is left to rank
    assert store.dim == mem.embedder.dim
    assert store.search_claims_vector(Scope(), TimeQuery(2**62, None), ("live",), None,
                                      vector, 5) == []


def test_without_numpy_2_dot_products_use_einsum() -> None:
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((20, 8)).astype(np.float32)
    np.testing.assert_allclose(_vectors._einsum_dot(rows, rows[0]), rows @ rows[0], rtol=1e-5)


# -- the sidecar's ranking and its sign bits ----------------------------------------------
def _unit(rng: np.random.Generator, n: int, dim: int = 96) -> npt.NDArray[np.float32]:
    rows = rng.standard_normal((n, dim)).astype(np.float32)
    unit: npt.NDArray[np.float32] = (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(
        np.float32)
    return unit


@pytest.mark.parametrize("in_file", [True, False])
def test_top_is_exact_and_keeps_ties_in_slot_order(tmp_path: Path, in_file: bool) -> None:
    vf = VectorFile(str(tmp_path / "v.vecs") if in_file else None, None)
    rng = np.random.default_rng(1)
    rows = _unit(rng, 300)
    rows[[40, 10, 250]] = rows[5]  # four equal vectors
    vf.write(list(range(300)), rows)
    slots, scores = vf.top(rows[5], 300, 3)
    assert slots.tolist() == [5, 10, 40] and scores[0] == pytest.approx(1.0)
    slots, _ = vf.top(rows[5], 300, 1000)  # more than there are: every slot, ranked
    assert slots.shape == (300,)
    assert vf.top(rows[5], 300, 0)[0].size == 0
    assert vf.top(np.ones(3, dtype=np.float32), 300, 3)[0].size == 0  # another width
    assert VectorFile(None, None).top(rows[5], 10, 3)[0].size == 0  # nothing written
    vf.close()


def test_sign_bits_follow_every_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_vectors, "EXACT_SLOTS", 0)
    monkeypatch.setattr(_vectors, "PREFILTER", 4)
    path = str(tmp_path / "v.vecs")
    vf = VectorFile(path, None)
    rng = np.random.default_rng(2)
    rows = _unit(rng, 200)
    filled = [slot for slot in range(1, 150) if slot != 60]
    vf.write(filled, rows[filled])  # slots 0, 60 and 150.. stay empty
    assert vf.top(rows[7], 150, 1)[0].tolist() == [7]  # the bits are taken here
    vf.write([155], rows[195:196])  # past the slots with bits: taken when ranked
    vf.write([7], rows[190:191])  # this process rewrites a slot: its bits follow
    assert vf.top(rows[190], 150, 1)[0].tolist() == [7]
    vf.write([0], rows[191:192])  # an empty slot filled here
    assert vf.top(rows[191], 150, 1)[0].tolist() == [0]
    other = VectorFile(path, 96)  # another process fills an empty slot it never saw...
    other.write([60], rows[192:193])
    other.write([170], rows[193:194])  # ...and grows the file past what this one mapped
    assert vf.top(rows[192], 150, 1)[0].tolist() == [60]
    assert vf.top(rows[193], 1000, 1)[0].tolist() == [170]
    vf.zero([170])  # erased: its bits are cleared, and it is looked at again
    assert 170 not in vf.top(rows[193], 1000, 1)[0].tolist()
    other.write([170], rows[193:194])
    assert vf.top(rows[193], 1000, 1)[0].tolist() == [170]
    other.close()
    vf.close()  # drops the bits; a later ranking maps the file and takes them again
    assert vf.top(rows[190], 150, 1)[0].tolist() == [7]


def _sparse_rows(rng: np.random.Generator, n: int, dim: int = 64) -> npt.NDArray[np.float32]:
    """Rows like the hashing embedder's: a few nonzero buckets, two of them in every row."""
    rows = np.zeros((n, dim), dtype=np.float32)
    for row in rows:
        row[rng.choice(dim, size=5, replace=False)] = rng.choice([-2.0, -1.0, 1.0, 3.0], size=5)
        row[[0, 1]] += 1.0
    return rows


def test_postings_score_like_the_float64_product(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_sparse, "BLOCK", 32)
    monkeypatch.setattr(_sparse, "STALE", 4)
    rng = np.random.default_rng(6)
    rows = _sparse_rows(rng, 100)
    rows[[3, 40]] = 0.0  # blank slots
    rows[64:96] = rng.standard_normal((32, 64)).astype(np.float32)  # a dense block
    postings = _sparse.Postings()

    def check(count: int, query: npt.NDArray[np.float32]) -> None:
        want = (rows[:count].astype(np.float64) @ query.astype(np.float64)).astype(np.float32)
        got = postings.scores(postings.blocks(rows[:count]), rows[:count], query, _vectors.dot)
        dense = slice(64, min(count, 96))  # scored by the dense pass, to its rounding
        np.testing.assert_allclose(got[dense], want[dense], rtol=1e-5, atol=1e-6)
        got[dense] = want[dense]
        assert got.tolist() == want.tolist()

    query = rows[7].copy()
    query[9] = 0.5  # a bucket in no row: its postings are empty
    check(50, query)  # builds blocks 0 and 1 (18 slots)
    check(53, query)  # 3 slots past block 1's postings: scored densely
    check(60, query)  # 10 past: block 1 is rebuilt
    check(100, query)  # block 2 is dense, block 3 sparse
    check(100, np.eye(64, dtype=np.float32)[0])  # only a column
    check(100, np.eye(64, dtype=np.float32)[9])  # only a (missing) posting list
    rows[40] = rows[8]  # another process fills a blank slot: always scored densely
    check(100, query)
    rows[8] = rows[9]  # this process rewrites slot 8: told, the block is dropped
    postings.forget(np.array([8, 99, 200], dtype=np.int64))
    check(100, query)
    postings.forget(np.array([31], dtype=np.int64))  # block 0 is gone already
    postings.clear()
    check(30, query)  # rows shrank: the count, not the block, bounds the scores
    check(20, query)
    assert not _sparse.is_sparse(np.zeros(64, dtype=np.float32))
    assert not _sparse.is_sparse(np.ones(64, dtype=np.float32))


def test_sparse_ranking_follows_every_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_vectors, "SPARSE_SLOTS", 0)
    monkeypatch.setattr(_sparse, "BLOCK", 64)
    monkeypatch.setattr(_sparse, "STALE", 8)
    path = str(tmp_path / "v.vecs")
    vf = VectorFile(path, None)
    rows = _sparse_rows(np.random.default_rng(7), 200)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    filled = [slot for slot in range(1, 150) if slot != 60]
    vf.write(filled, rows[filled])
    assert vf.top(rows[7], 150, 1)[0].tolist() == [7]  # the postings are built here
    vf.write([155], rows[195:196])  # past the postings: scored densely
    vf.write([7], rows[190:191])  # this process rewrites a slot: its block is rebuilt
    assert vf.top(rows[190], 150, 1)[0].tolist() == [7]
    other = VectorFile(path, 64)  # another process fills an empty slot...
    other.write([60], rows[192:193])
    other.write([170], rows[193:194])  # ...and grows the file past this one's mapping
    assert vf.top(rows[192], 150, 1)[0].tolist() == [60]
    assert vf.top(rows[193], 1000, 1)[0].tolist() == [170]
    vf.zero([170])
    assert 170 not in vf.top(rows[193], 1000, 1)[0].tolist()
    other.close()
    vf.close()  # drops the postings; a later ranking builds them again
    assert vf.top(rows[190], 150, 1)[0].tolist() == [7]


def test_signs_pack_and_count_like_the_definition() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((50, 70)).astype(np.float32)
    rows[3] = 0.0
    bits = _signs.pack(rows)
    assert bits.shape == (2, 50) and bits.dtype == np.uint64 and not bits[:, 3].any()
    query = _signs.pack(rows[:1])
    want = [int(np.sum((rows[i] > 0) != (rows[0] > 0))) for i in range(50)]
    assert _signs.distances(bits, query).tolist() == want
    words = rng.integers(0, 2**63, size=1000, dtype=np.uint64)
    assert _signs._table_popcount(words).tolist() == [int(w).bit_count() for w in words]


# -- the retriever ------------------------------------------------------------------
def test_equal_scores_order_by_content_hash_like_a_full_sort() -> None:
    rng = random.Random(4)
    items = [(rng.choice([0.5, 0.25, 1.0, 0.125]), f"text {i}") for i in range(300)]
    expected = sorted(items, key=lambda it: (-it[0], _tiebreak(it[1])))
    assert _ordered(list(items), lambda it: it[0], lambda it: it[1]) == expected


def test_rank_fields_agree_with_the_claims(big: Memvara) -> None:
    store = _store(big)
    tq = TimeQuery(2**62, None)
    every = [cid for (cid,) in store._query("SELECT id FROM claims ORDER BY rowid")]
    ids = every[::7] + ["c999999-00000000", every[1].split("-")[0] + "-00000000"]
    assert every[1] not in ids  # the last two: no such row; a row's rowid, a forged digest
    claims = store.claims_at(ids, tq)
    fields = store.rank_fields(ids)
    assert fields.keys() == claims.keys()
    for cid, f in fields.items():
        c = claims[cid]
        assert f.valid_from is not None and c.valid_from is not None
        assert (f.text, f.predicate, f.confidence, f.observations, f.salience) == (
            c.text, c.predicate, c.confidence, c.observations, c.salience)
        assert f.valid_from == int(c.valid_from.timestamp() * 1_000_000)


def test_a_store_without_rank_fields_ranks_from_whole_claims(
    big: Memvara, clock: Clock, monkeypatch: pytest.MonkeyPatch,
) -> None:
    queries = ["where does user_7 live?", "durian", "old town", "city_3 speaks"]
    kwargs: list[dict[str, object]] = [{}, {"states": STATES}, {"valid_at": OLD},
                                       {"include_episodes": True}]
    fast = [[(r.text, r.score, r.explain) for r in big.search(q, k=7, **kw)]  # type: ignore[arg-type]
            for q in queries for kw in kwargs]
    # rank_fields is optional (RankingStore): a memory over the same store seen without
    # it ranks from claims_at instead.
    monkeypatch.setattr(big.store, "__class__", store_without("rank_fields"))
    without = Memvara(store=big.store, clock=clock)  # closed by big: the same store
    slow = [[(r.text, r.score, r.explain) for r in without.search(q, k=7, **kw)]  # type: ignore[arg-type]
            for q in queries for kw in kwargs]
    assert fast == slow
    assert all(r.claim is not None and r.claim.id for r in without.search("user_7", k=5))


def test_only_the_results_are_read_as_whole_claims(
    big: Memvara, monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = _store(big)
    asked: list[int] = []
    original = store.claims_at

    def counted(ids: Sequence[str], tq: TimeQuery) -> dict[str, Claim]:
        asked.append(len(ids))
        return original(ids, tq)

    monkeypatch.setattr(store, "claims_at", counted)
    found = big.search("where does user_7 live?", k=3)
    assert len(found) == 3 and asked == [3]
    assert found[0].claim is not None and found[0].claim.recorded_at is not None
