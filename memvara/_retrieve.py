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
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace

from ._model import Claim, Episode, Explanation, Retrieved, Scope, TimeQuery
from ._writes import Writer, encode_checked
from .embed import Embedder
from .rerank import Reranker
from .telemetry import Recorder
from .schema import PredicateRegistry
from .store._fts import match_any
from .store.base import Store

__all__ = ["LEXICAL_VECTOR_WEIGHT", "RRF_K", "SEMANTIC_VECTOR_WEIGHT", "Retriever"]

RRF_K = 60
"""Reciprocal Rank Fusion's damping constant (the usual 60)."""
_CANDIDATES = 50
"""Each retriever returns at least this many candidates (and at least 4 * k)."""


SEMANTIC_VECTOR_WEIGHT = 0.25
"""The vector list's weight against BM25's for a semantic embedder. On LOCOMO's
development split with all-MiniLM-L6-v2, tuned on conv-26/30/41 (R@12: 61.6 at weight 1,
62.3 at 0.75, 64.4 at 0.5, 65.5 at 0.35, 65.6 at 0.25; 62.8 BM25 alone) and checked on
conv-42/43/44 (62.8 at 0.25, 58.0 at 1, 61.6 BM25 alone): equal weight cost points, a
quarter weight earned them."""

LEXICAL_VECTOR_WEIGHT = 0.001
"""The vector list's weight in the fusion when the embedder is lexical (``HashingEmbedder``):
enough to order what BM25 leaves tied or unranked, too little to reorder BM25's ranks.
On LOCOMO's development split, tuned on conv-26/30/41 and checked on conv-42/43/44,
hashed vectors at weight 1, 0.5, 0.25 or 0.1 all lowered R@12 below BM25 alone."""


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
    """Searches one store with one embedder, registry and writer (for the backlogs)."""

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
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._registry = registry
        self._writer = writer
        if vector_weight is None:
            lexical = getattr(embedder, "lexical", False) is True
            vector_weight = LEXICAL_VECTOR_WEIGHT if lexical else SEMANTIC_VECTOR_WEIGHT
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
        """The ``k`` best results for ``query``; see ``Memvara.search``."""
        self._catch_up()
        match = match_any(query)
        vector = encode_checked(self._embedder, [query])[0]
        limit = max(_CANDIDATES, 4 * k)
        store = self._store
        by_vector = store.search_claims_vector(scope, tq, states, memory_types, vector, limit)
        by_text = [] if match is None else store.search_claims_text(
            scope, tq, states, memory_types, match, limit)
        claims = store.claims_at(list(dict.fromkeys(i for i, _ in [*by_vector, *by_text])), tq)
        texts = {cid: c.text for cid, c in claims.items()}
        episodes: dict[str, Episode] = {}
        if include_episodes:
            # One list per retriever over claims and turns together, so a claim's rank is
            # its place among everything searched, not among the few claims.
            turn_vector = store.search_episodes_vector(scope, tq, vector, limit)
            turn_text = [] if match is None else store.search_episodes_text(scope, tq, match, limit)
            episodes = store.episodes_by_ids(
                list(dict.fromkeys(i for i, _ in [*turn_vector, *turn_text])))
            texts.update((eid, e.content) for eid, e in episodes.items())
            by_vector = [*by_vector, *turn_vector]
            by_text = [*by_text, *turn_text]
        results = [
            self._claim_result(claims[key], hit, tq) if key in claims
            else self._episode_result(episodes[key], hit)
            for key, hit in _merge(by_vector, by_text, texts).items()
        ]
        results = [r for r in results if r.score >= min_score]
        results.sort(key=lambda r: (-r.score, _tiebreak(r.text)))
        if self._reranker is not None and results:
            results = self._rerank(query, results)
        return results[:k]

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

    def _catch_up(self) -> None:
        """Search what was written: index waiting text, embed waiting claims."""
        flush = getattr(self._store, "flush_text_index", None)
        if callable(flush):
            flush()
        self._writer.embed_missing()

    def _claim_result(self, claim: Claim, hit: _Hit, tq: TimeQuery) -> Retrieved:
        spec = self._registry.spec(claim.predicate)
        half_life = spec.volatility.half_life
        recency = 1.0
        if half_life is not None and claim.valid_from is not None:
            recency = _decay(tq, claim.valid_from.timestamp(), half_life.total_seconds())
        salience = min(2.0, 1.0 + 0.25 * math.log2(max(1, claim.observations)))
        return _result("claim", claim.text, hit, self.vector_weight, recency, claim.confidence,
                       salience, claim=claim)

    def _episode_result(self, episode: Episode, hit: _Hit) -> Retrieved:
        # A turn is a record of what was said, not a fact that goes stale: no decay.
        return _result("episode", episode.content, hit, self.vector_weight, 1.0, 1.0, 1.0,
                       episode=episode)


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


def _ranked(found: Sequence[tuple[str, float]], texts: dict[str, str]) -> list[tuple[str, float]]:
    kept = [(key, score) for key, score in found if key in texts]
    return sorted(kept, key=lambda pair: (-round(pair[1], 9), _tiebreak(texts[pair[0]])))


def _decay(tq: TimeQuery, since_s: float, half_life_s: float) -> float:
    """``0.5 ** (age / half_life)``, the age measured at the read's valid instant."""
    reference = (tq.valid_at if tq.valid_at is not None else tq.known_at) / 1e6
    age = max(0.0, reference - since_s)
    return float(0.5 ** (age / half_life_s))


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


def _tiebreak(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()

