"""Hybrid retrieval at one instant: BM25 and vector candidates, fused by rank, rescored.

Both retrievers search only what the read may see: the scope, the time pair and the
states are applied *before* each list is cut, so a time-travel or audit search finds
its answer even when live rows would match better. The two ranked lists (claims and,
when asked, turns, ranked together) are fused with Reciprocal Rank Fusion (ranks, not
scores: BM25 and cosine are not on one scale), then each claim is rescaled by recency
(decay by its predicate's volatility: a static fact never fades, a fast one halves in a
week), confidence and salience. A turn is a record, not a fact that goes stale: it is
not rescaled. Equal scores are
ordered by a hash of the text, so two ingests of one corpus rank identically.

Candidates are ranked from their ``RankFields`` when the store offers them; whole
``Claim`` objects are built only for the results returned (and handed to a reranker).
"""

from __future__ import annotations

import functools
import hashlib
import math
import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

import numpy as np
import numpy.typing as npt

from .answer_types import asks_time, says_time
from .._domain.model import Claim, Episode, Scope, TimeQuery
from .._domain.terms import query_terms
from .._domain.results import Explanation, Retrieved
from .query_dates import named_spans
from .weights import CANDIDATES, RRF_K, WEIGHTS, Weights
from .._domain.time import to_micros
from .._write.encode import encode_checked
from .._write.writer import Writer
from ..embed import Embedder
from ..rerank import Reranker
from ..telemetry import Recorder
from ..schema import PredicateRegistry
from ..store.base import RankFields, RankingStore, SimilarityStore, Store
from .matching import matching
from .waiting import WaitingVectors

__all__ = ["Retriever"]

_T = TypeVar("_T")


@dataclass(slots=True)
class _Hit:
    vector_rank: int | None = None
    vector_score: float | None = None
    bm25_rank: int | None = None
    bm25_score: float | None = None

    def fused(self, vector_weight: float) -> float:
        total = 0.0
        if self.vector_rank is not None:
            total += vector_weight / (RRF_K + self.vector_rank)
        if self.bm25_rank is not None:
            total += 1.0 / (RRF_K + self.bm25_rank)
        return total * (RRF_K + 1) / (1.0 + vector_weight)  # first in both lists: 1.0


class Retriever:
    """Searches one store with one embedder and registry; the writer says which
    computed vectors the store now holds (``WaitingVectors``)."""

    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        registry: PredicateRegistry,
        writer: Writer,
        vector_weight: float | None = None,
        *,
        reranker: Reranker | None = None,
        rerank_top_n: int = 20,
        recorder: Recorder | None = None,
        weights: Weights = WEIGHTS,
    ) -> None:
        self._store = store
        # The store's optional fast paths (``store.base``), looked up once: each is the
        # store itself where it offers that path, else None and the core methods serve.
        self._ranking: RankingStore | None = store if isinstance(store, RankingStore) else None
        self._similar: SimilarityStore | None = (
            store if isinstance(store, SimilarityStore) else None)
        self.weights = weights
        self._embedder = embedder
        self._registry = registry
        self._waiting = WaitingVectors()  # vectors of rows the store holds none for yet
        writer.on_embedded.append(lambda ids: self._waiting.drop("claims", ids))
        if vector_weight is None:
            lexical = getattr(embedder, "lexical", False) is True
            vector_weight = weights.lexical_vector if lexical else weights.semantic_vector
        self.vector_weight = vector_weight
        self._reranker = reranker
        self._rerank_top_n = rerank_top_n
        self._recorder = recorder

    def search(
        self,
        query: str,
        scope: Scope,
        tq: TimeQuery,
        states: Collection[str],
        *,
        k: int,
        min_score: float,
        memory_types: Collection[str] | None,
        include_episodes: bool,
    ) -> list[Retrieved]:
        """The ``k`` best results for ``query``; see ``Memvara.search``. It writes
        nothing: rows the store's text index has not caught up with are found by the
        store's text search, and rows waiting for a vector are encoded here, in memory
        (``_waiting``)."""
        words = query_terms(query)  # what the text searches look for
        terms = words if include_episodes else []  # for the turns' words
        limit = max(CANDIDATES, 4 * k)
        reorders = self.vector_weight >= _reordering_weight(limit)
        # Where vectors can reorder text ranks and turns are searched, the query is encoded
        # once the turns' words have named its speakers, without their names
        # (``_without_names``): inside the snapshot (an in-memory store's lock is held
        # while it encodes), as the names are read there.
        late = reorders and bool(terms) and bool(self.weights.speaker)
        vector = None if late else encode_checked(self._embedder, [query])[0]
        # One snapshot: the lists, the fields they are ranked by and the claims returned
        # all see one state of the store, so a write landing mid-search changes nothing.
        with self._store.snapshot():
            store = self._store
            by_text = [] if not words else store.search_claims_text(
                scope, tq, states, memory_types, words, limit)
            turn_text: list[tuple[str, float]] = []
            read: dict[str, Episode] = {}  # turns _with_neighbours read (words, dates)
            named: set[str] = set()  # the speakers the query names, by _with_neighbours
            if include_episodes and words:
                turn_text = self._with_neighbours(
                    store.search_episodes_text(scope, tq, words, limit), tq,
                    named_spans(query), read, asks_time(query), terms, named)
            if vector is None:
                vector = encode_checked(self._embedder, [_without_names(query, named)])[0]
            short = len(by_text) + len(turn_text) < k  # vectors fill what text leaves
            waiting = self._waiting_cosines(
                "claims", store.unembedded_claims(scope, tq, states, memory_types), vector)
            by_vector = self._vector_list(
                lambda n: _with_waiting(store.search_claims_vector(
                    scope, tq, states, memory_types, vector, n), waiting, n),
                k, limit, short, reorders,
                lambda: self._similarities("claim_similarities", by_text, vector, waiting))
            claims, decoded = self._rank_fields(
                list(dict.fromkeys(i for i, _ in [*by_vector, *by_text])), tq)
            texts = {cid: c.text for cid, c in claims.items()}
            episodes: dict[str, Episode] = {}
            if include_episodes:
                # One list per retriever over claims and turns together, so a claim's rank is
                # its place among everything searched, not among the few claims.
                turns_waiting = self._waiting_cosines(
                    "episodes", store.unembedded_episodes(scope, tq), vector)
                turn_vector = self._vector_list(
                    lambda n: _with_waiting(store.search_episodes_vector(
                        scope, tq, vector, n), turns_waiting, n),
                    k, limit, short, reorders,
                    lambda: self._similarities(
                        "episode_similarities", turn_text, vector, turns_waiting))
                if reorders:
                    turn_vector = self._with_turn_similarities(
                        turn_vector, turn_text, vector, turns_waiting)
                episodes = {**read, **store.episodes_by_ids(
                    [i for i in dict.fromkeys(i for i, _ in [*turn_vector, *turn_text])
                     if i not in read])}
                texts.update((eid, e.content) for eid, e in episodes.items())
                by_vector = [*by_vector, *turn_vector]
                by_text = [*by_text, *turn_text]
            factors = self._claim_factors(tq)
            scored = [
                _Scored(key, texts[key], hit, self.vector_weight,
                        *(factors(claims[key]) if key in claims else _RECORD))
                for key, hit in _merge(by_vector, by_text, texts).items()
            ]
            scored = _ordered(  # only what matches the query (``matching``), never padding
                matching(query, self._embedder, [c for c in scored if c.score >= min_score]),
                lambda c: c.score, lambda c: c.text)
            keep = k if self._reranker is None else max(k, self._rerank_top_n)
            results = self._results(scored[:keep], decoded, episodes, tq)
        if self._reranker is not None and results:
            results = self._rerank(query, results)
        return results[:k]

    def _vector_list(
        self, search: Callable[[int], list[tuple[str, float]]], k: int, limit: int,
        short: bool, reorders: bool,
        among: Callable[[], list[tuple[str, float]] | None] = lambda: None,
    ) -> list[tuple[str, float]]:
        """The vector candidates: ``limit`` of them, or, where the weight is too small for
        a vector rank to reorder BM25 ranks (not ``reorders``: ``_reordering_weight``),
        less. Then a vector-only candidate reaches the results only when the text lists
        hold fewer than ``k`` (``short``): if they do not, the vectors only order the
        text candidates' ties, and their cosines (``among``, when the store can give
        them) are the list, with no vector scored beyond them. If they do, ``k + 1`` fill
        them; if that cut splits a tie (the ``k``-th and the one after score alike),
        which of the tied is kept would be settled by storage order, not content: then
        all ``limit`` are asked for."""
        if reorders:
            return search(limit)
        if not short:
            ordered = among()
            if ordered is not None:
                return ordered
        found = search(k + 1)
        if not short or len(found) <= k or round(found[k - 1][1], 9) > round(found[k][1], 9):
            return found
        return search(limit)

    def forget_waiting(self) -> None:
        """Drop every vector searches computed for waiting rows (after an erasure: none
        outlives its row)."""
        self._waiting.clear()

    def _waiting_cosines(
        self, table: str, rows: list[tuple[str, str]], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """The cosine of ``vector`` with each ``(id, text)`` row of ``table`` that waits
        for its vector, encoded in memory (or kept from an earlier search)."""
        return self._waiting.cosines(self._embedder, table, rows, vector)

    def _similarities(
        self, method: Literal["claim_similarities", "episode_similarities"],
        found: list[tuple[str, float]], vector: npt.NDArray[np.float32],
        waiting: dict[str, float],
    ) -> list[tuple[str, float]] | None:
        """The cosine of ``vector`` with each candidate of the text list ``found``, from
        the store's ``method`` (a ``SimilarityStore``'s) or, for a candidate waiting for
        its vector, from ``waiting``; ``None`` when the store has no such method."""
        similar = self._similar
        if similar is None:
            return None
        similarities = (similar.claim_similarities if method == "claim_similarities"
                        else similar.episode_similarities)
        stored = similarities([key for key, _ in found], vector)
        return [*stored.items(), *((key, waiting[key]) for key, _ in found
                                   if key in waiting and key not in stored)]

    def _with_turn_similarities(
        self, found: list[tuple[str, float]], turn_text: list[tuple[str, float]],
        vector: npt.NDArray[np.float32], waiting: dict[str, float],
    ) -> list[tuple[str, float]]:
        """The vector list of turns, joined by every turn of the text list it lacks, with
        its cosine (``Store.episode_similarities``, when the store has it): the text list
        holds the neighbours its matches lend to, several times ``limit`` turns, and a
        turn given no vector rank would be ranked by its words alone. Called only where the
        vector weight can reorder text ranks (``_reordering_weight``): a lexical
        embedder's vectors only break ties. See ``Weights.semantic_vector``."""
        have = {key for key, _ in found}
        missing = [(key, score) for key, score in turn_text if key not in have]
        if not missing:
            return found
        extra = self._similarities("episode_similarities", missing, vector, waiting)
        return found if extra is None else [*found, *extra]

    def _rank_fields(
        self, claim_ids: list[str], tq: TimeQuery
    ) -> tuple[dict[str, RankFields], dict[str, Claim]]:
        """What the candidates are ranked by, and any whole claims already read: from the
        store's ``rank_fields`` when it has one (whole claims are then read for the
        results only), else from ``claims_at``."""
        if self._ranking is not None:
            return self._ranking.rank_fields(claim_ids), {}
        claims = self._store.claims_at(claim_ids, tq)
        return {cid: RankFields(
            c.text, c.predicate,
            None if c.valid_from is None else to_micros(c.valid_from, "valid_from"),
            c.confidence, c.observations, c.salience,
        ) for cid, c in claims.items()}, claims

    def _results(
        self, scored: list[_Scored], decoded: dict[str, Claim],
        episodes: dict[str, Episode], tq: TimeQuery,
    ) -> list[Retrieved]:
        """The results for the best ``scored`` candidates, whole claims read now."""
        full = {c.key: decoded[c.key] for c in scored if c.key in decoded}
        missing = [c.key for c in scored if c.key not in full and c.key not in episodes]
        if missing:
            full.update(self._store.claims_at(missing, tq))
        return [
            _result("claim", c.text, c.hit, self.vector_weight, c.recency, c.confidence,
                    c.salience, claim=full[c.key]) if c.key in full
            else _result("episode", c.text, c.hit, self.vector_weight, 1.0, 1.0, 1.0,
                         episode=episodes[c.key])
            for c in scored if c.key in full or c.key in episodes
        ]

    def _rerank(self, query: str, results: list[Retrieved]) -> list[Retrieved]:
        """Reorder the fused top ``rerank_top_n`` by the reranker; on any failure of the
        reranker keep the fused order (and count it), since a search must still answer."""
        head, tail = results[: self._rerank_top_n], results[self._rerank_top_n :]
        try:
            scores = [float(x) for x in self._reranker.rerank(query, [r.text for r in head])]  # type: ignore[union-attr]
            if len(scores) != len(head) or not all(math.isfinite(x) for x in scores):
                raise ValueError(f"{len(scores)} scores for {len(head)} texts, or not finite")
        except Exception:  # noqa: BLE001 - any reranker failure falls back, counted
            if self._recorder is not None:
                self._recorder.record("rerank.failed")
            return results
        order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
        reranked = [
            replace(head[i], explain=replace(head[i].explain, rerank=scores[i])) for i in order
        ]
        return reranked + tail

    def _with_neighbours(
        self, found: list[tuple[str, float]], tq: TimeQuery,
        spans: Sequence[tuple[int, int]] = (), read: dict[str, Episode] | None = None,
        time_asked: bool = False, terms: Sequence[str] = (), named: set[str] | None = None,
    ) -> list[tuple[str, float]]:
        """BM25 turn matches, each scaled by its length (``Weights.turn_length_prior``) and by the
        query words it holds (``Weights.term_coverage``, ``terms``; the matches are read
        for both, into ``read``), with ``Weights.neighbour`` of each one's
        score added to the turns just before and after it and ``Weights.second_neighbour``
        to the turns two away (which join the list if they matched nothing), then
        ``Weights.date`` of the best score added to each turn stamped inside one of
        ``spans`` (the dates the query names) and ``Weights.answer_type`` of it to each
        turn that says when, if the query asks when (``time_asked``), then each turn
        said by a speaker the query names multiplied by ``1 + Weights.speaker`` (only for
        these are the lent-to turns read too, for their stamps, words and speaker labels;
        the query words naming a speaker are added to ``named``),
        best first, rescaled so the best keeps the best raw score: turns stay on the scale
        of the claims they are ranked with."""
        weights = self.weights
        own = dict(found)
        seen: dict[str, Episode] = {} if read is None else read
        weighed = bool(weights.turn_length_prior or weights.term_coverage or weights.speaker)
        if weighed:  # the matches are read for their length, words and speaker
            seen.update(self._store.episodes_by_ids(list(own)))
            # A match the store no longer returns (erased since the text index answered,
            # in a store without snapshot reads) weighs nothing and lends nothing.
            own = {key: score for key, score in own.items() if key in seen}
        if not own:
            return []
        raw_best = max(own.values())
        if weighed:
            stems = _stems(terms)
            for key in own:
                text = seen[key].content.casefold()
                covered = _covered(text, stems)
                own[key] *= (max(1, len(_WORD.findall(text))) ** weights.turn_length_prior
                             * (1.0 + weights.term_coverage * max(0, covered - 1)))
        smoothed = dict(own)
        near = self._store.episode_neighbours(tq, list(own))
        for key, pair in near.items():
            for other in pair:
                if other is not None:
                    smoothed[other] = smoothed.get(other, 0.0) + weights.neighbour * own[key]
        # The turns two away are the neighbours' neighbours on the same side: asked for
        # only where a neighbour did not match itself (a match's neighbours are known).
        unknown = [o for pair in near.values() for o in pair if o is not None and o not in near]
        far = dict(near)
        if unknown:
            far.update(self._store.episode_neighbours(tq, list(dict.fromkeys(unknown))))
        for key, pair in near.items():
            for side, other in enumerate(pair):
                beyond = None if other is None else far.get(other, (None, None))[side]
                if beyond is not None:
                    lent = weights.second_neighbour * own[key]
                    smoothed[beyond] = smoothed.get(beyond, 0.0) + lent
        # The query words some matched turn's speaker label holds: the speakers it names.
        named = set() if named is None else named
        if weights.speaker and terms:
            asked = set(terms)
            for key in own:
                named.update(asked.intersection(_speaker(seen[key].content)))
        if spans or time_asked or named:
            unread = [key for key in smoothed if key not in seen]
            if unread:
                seen.update(self._store.episodes_by_ids(unread))
            best = max(own.values())
            for key, episode in [(key, seen[key]) for key in smoothed if key in seen]:
                at = None if episode.ts is None else to_micros(episode.ts, "ts")
                if at is not None and any(start <= at < end for start, end in spans):
                    smoothed[key] += weights.date * best
                if time_asked and says_time(episode.content):
                    smoothed[key] += weights.answer_type * best
                if named and not named.isdisjoint(_speaker(episode.content)):
                    smoothed[key] *= 1.0 + weights.speaker
        scale = raw_best / max(smoothed.values())
        return sorted(((key, score * scale) for key, score in smoothed.items()),
                      key=lambda item: (-item[1], item[0]))

    def _claim_factors(self, tq: TimeQuery) -> Callable[[RankFields], tuple[float, float, float]]:
        """For one search: a claim's ``(recency, confidence, salience)``, what its fused
        score is scaled by (each predicate's half-life looked up once)."""
        half_lives: dict[str, float | None] = {}
        reference = (tq.valid_at if tq.valid_at is not None else tq.known_at) / 1e6
        registry = self._registry

        def factors(claim: RankFields) -> tuple[float, float, float]:
            predicate = claim.predicate
            if predicate in half_lives:
                half_life_s = half_lives[predicate]
            else:
                half_life = registry.spec(predicate).volatility.half_life
                half_life_s = half_lives[predicate] = (
                    None if half_life is None else half_life.total_seconds())
            recency = 1.0
            if half_life_s is not None and claim.valid_from is not None:
                # 0.5 ** (age / half-life), the age measured at the read's valid instant
                recency = float(0.5 ** (max(0.0, reference - claim.valid_from / 1e6)
                                        / half_life_s))
            if claim.observations == 1 and claim.salience == 1.0:
                return recency, claim.confidence, 1.0  # the formula below, at its start
            salience = min(2.0, 1.0 + 0.25 * math.log2(max(1, claim.observations)))
            # Retrieval strength kept by consolidate() (1.0 until it runs, 0.1 at the
            # floor), softened to 0.55..1: a forgotten fact still ranks, it just yields
            # ties and near-ties.
            salience *= 0.5 + 0.5 * claim.salience
            return recency, claim.confidence, salience

        return factors


_WORD = re.compile(r"\w+")
_STEM_MIN = 4
"""The fewest letters ``_stems`` keeps of a query term."""
_RECORD = (1.0, 1.0, 1.0)
"""A turn's factors: a record of what was said, not a fact that goes stale, so no decay."""


class _Scored:
    """One candidate with its final score, before any result object is built."""

    __slots__ = ("confidence", "hit", "key", "recency", "salience", "score", "text")

    def __init__(self, key: str, text: str, hit: _Hit, vector_weight: float,
                 recency: float, confidence: float, salience: float) -> None:
        self.key, self.text, self.hit = key, text, hit
        self.recency, self.confidence, self.salience = recency, confidence, salience
        self.score = hit.fused(vector_weight) * recency * confidence * salience


def _stems(terms: Sequence[str]) -> list[re.Pattern[str]]:
    """What a word of a turn must start with to count as each query term for
    ``Weights.term_coverage``, as a pattern searched in the casefolded turn: the term
    less its last two letters, at least its first four (whole when shorter), each once.
    A crude, deterministic stand-in for the index's Porter stemmer: "camped" -> "camp"
    counts "camping" too, though "camping" -> "campi" does not count "camped"."""
    stems = dict.fromkeys(term[:max(_STEM_MIN, len(term) - 2)] for term in terms)
    return [re.compile(r"(?<!\w)" + re.escape(stem)) for stem in stems]


_LABEL = re.compile(r"\s*([^\W\d_][\w.' -]{0,40}?):(?:\s|$)")
"""A transcript line's speaker label: up to 41 characters before the first colon and a
space, starting with a letter ("Melanie: ...", "Dr. Ruth Smith: ...")."""


def _speaker(text: str) -> frozenset[str]:
    """The words of ``text``'s speaker label (``_LABEL``, as ``query_terms`` reads a
    query), or none when it has no label or the label starts lower-case ("note: ...",
    "so: ..."): whom a turn stored as a transcript line is said by, for
    ``Weights.speaker``."""
    found = _LABEL.match(text)
    if found is None or found.group(1)[:1].islower():
        return frozenset()
    return _label_terms(found.group(1))


_NAME_WORD = re.compile(r"(\w+)(?:['\u2019]s)?\b")
"""A query word, with its possessive "'s" when it has one."""


def _without_names(query: str, named: set[str]) -> str:
    """``query`` without the words (and their possessives) that name a speaker in
    ``named`` (casefolded, as ``query_terms`` reads them), for the query vector: a
    sentence embedder weighs a name much like a topic, so "What has Melanie painted?"
    lies near every turn that mentions Melanie (hers, labelled, and the ones that say
    "Thanks, Melanie!"), not near the ones about painting; whose turn it is, the text
    list already weighs (``Weights.speaker``). ``query`` itself when nothing is named or
    nothing else would be left."""
    if not named:
        return query
    left = _NAME_WORD.sub(
        lambda word: "" if not named.isdisjoint(query_terms(word.group(1))) else word.group(0),
        query)
    left = " ".join(left.split())
    return left if any(ch.isalnum() for ch in left) else query


@functools.lru_cache(maxsize=1 << 10)
def _label_terms(label: str) -> frozenset[str]:
    """A speaker label's words; cached: a conversation has few speakers."""
    return frozenset(query_terms(label))


def _covered(text: str, stems: Sequence[re.Pattern[str]]) -> int:
    """How many of ``stems`` start a word of ``text`` (casefolded)."""
    return sum(1 for stem in stems if stem.search(text) is not None)


def _with_waiting(
    found: list[tuple[str, float]], waiting: dict[str, float], limit: int
) -> list[tuple[str, float]]:
    """A vector list from the store joined by the rows waiting for their vectors (their
    cosines computed in memory), best first, cut at ``limit``: what the list would be
    with their vectors stored (equal scores keep the stored rows first)."""
    if not waiting:
        return found
    have = {key for key, _ in found}
    joined = [*found, *((key, score) for key, score in waiting.items() if key not in have)]
    return sorted(joined, key=lambda item: -item[1])[:limit]


def _reordering_weight(limit: int) -> float:
    """The least vector weight at which a vector rank can reorder two of ``limit`` BM25
    ranks: the largest share a vector rank adds (rank 1: ``w / (RRF_K + 1)``) against
    the smallest gap between two BM25 ranks (the last two). Below it (a lexical
    embedder's ``Weights.lexical_vector``), the vector list orders no BM25 candidate and
    lifts no candidate of its own above one (before recency, confidence and salience
    rescale them): it only fills a short text list (``Retriever._vector_list``)."""
    gap = 1.0 / (RRF_K + limit - 1) - 1.0 / (RRF_K + limit)
    return gap * (RRF_K + 1)


def _merge(
    vector: Sequence[tuple[str, float]],
    text: Sequence[tuple[str, float]],
    texts: dict[str, str],
) -> dict[str, _Hit]:
    """Rank each list (equal scores ordered by content, not by row order) and join them;
    ids with no text (gone since the lists were read) are dropped."""
    hits: dict[str, _Hit] = {}
    for rank, (key, score) in enumerate(_ranked(vector, texts), start=1):
        hit = hits.setdefault(key, _Hit())
        hit.vector_rank, hit.vector_score = rank, score
    for rank, (key, score) in enumerate(_ranked(text, texts), start=1):
        hit = hits.setdefault(key, _Hit())
        hit.bm25_rank, hit.bm25_score = rank, score
    return hits


def _ranked(
    found: Sequence[tuple[str, float]], texts: dict[str, str]
) -> list[tuple[str, float]]:
    """A list best first, scores compared to 9 decimals (so float noise does not decide)."""
    kept = [(round(score, 9), key, score) for key, score in found if key in texts]
    return [(key, score) for _, key, score in
            _ordered(kept, lambda item: item[0], lambda item: texts[item[1]])]


def _ordered(
    items: list[_T], score: Callable[[_T], float], text: Callable[[_T], str]
) -> list[_T]:
    """``items`` by descending score, equal scores by a hash of their text: the order of
    ``sorted(key=(-score, _tiebreak(text)))``, hashing only texts whose scores tie."""
    ordered = sorted(items, key=score, reverse=True)  # stable
    start, end = 0, len(ordered)
    while start < end:
        stop, value = start + 1, score(ordered[start])
        while stop < end and score(ordered[stop]) == value:
            stop += 1
        if stop - start > 1:
            ordered[start:stop] = sorted(ordered[start:stop],
                                         key=lambda item: _tiebreak(text(item)))
        start = stop
    return ordered


def _result(
    kind: str, text: str, hit: _Hit, vector_weight: float, recency: float, confidence: float,
    salience: float, *, claim: Claim | None = None, episode: Episode | None = None,
) -> Retrieved:
    fused = hit.fused(vector_weight)
    score = fused * recency * confidence * salience
    explain = Explanation(
        hit.vector_rank, hit.vector_score, hit.bm25_rank, hit.bm25_score,
        fused, recency, confidence, salience, score,
    )
    return Retrieved(kind, text, score, explain, claim=claim, episode=episode)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=1 << 14)
def _tiebreak(text: str) -> str:
    """A text's place among equal scores. Cached: searches over one store tie on the
    same texts again and again (~80 of ~95 candidates a search on bench/search.py)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()

