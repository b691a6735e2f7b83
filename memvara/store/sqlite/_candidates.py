"""Retrieval candidates: the BM25 and vector lists a search fuses, each filtered before
it is cut, and what search reads of the candidates (rank fields, cosines, turns and
their neighbours). The text lists are planned in ``_bm25``, the vector lists in
``_nearest``; the words a search looks for become an FTS5 expression only in ``_fts``.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.model import Claim, Episode, Scope, TimeQuery
from ..._domain.time import from_micros
from ..base import RankFields
from . import _bm25
from . import _sql
from ._core import RESERVATION, TEXT_INDEXES, UNEMBEDDED_EPISODES
from ._fts import match_any
from ._nearest import nearest_admitted
from ._reads import Reads
from ._rows import claim_rowid, decode_claim, scope_of
from ._vectors import dot

__all__ = ["Candidates"]

_RANK_COLUMNS = "text, predicate, valid_from, confidence, observations, salience"
"""What ``search()`` ranks a claim by, in ``RankFields``' order."""


class Candidates(Reads):
    """The ``Store`` methods under "retrieval candidates", and the optional ones search
    uses where a store has them (``RankingStore``, ``SimilarityStore``)."""

    def _claim_filter(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None,
    ) -> tuple[str, list[object]]:
        scope_sql, params = _sql.scope_visible(scope, "claims.")
        state_sql, state_params = _sql.states_filter(states, tq, "claims.")
        where = f"{scope_sql} AND {state_sql}"
        params = [*params, *state_params]
        if memory_types is not None:
            types = sorted(memory_types)
            where += f" AND claims.memory_type IN ({','.join('?' * len(types))})"
            params += types
        return where, params

    def search_claims_text(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, terms: Sequence[str], limit: int,
    ) -> list[tuple[str, float]]:
        """The best BM25 matches for any of ``terms`` among the claims the filter admits
        (without scoring every row a common word matches: ``_bm25``); see
        ``Store.search_claims_text``."""
        where, params = self._claim_filter(scope, tq, states, memory_types)
        return self._text_matches("claims", terms, where, params, limit,
                                  getattr(self._local, "ranked", None))

    def _text_matches(
        self, table: str, terms: Sequence[str], where: str, params: Sequence[object],
        limit: int, ranked: dict[str, tuple[Any, ...]] | None = None,
    ) -> list[tuple[str, float]]:
        match = match_any(terms)  # the words, quoted: never FTS5 syntax
        if match is None:
            return []
        fts, column = TEXT_INDEXES[table]
        columns = _RANK_COLUMNS.split(", ") if ranked is not None else ()
        with self._search_reads() as (query, settled):
            (top, indexed), = query(f"SELECT {RESERVATION % (table, table)}", [])
            if top <= indexed:  # the index holds every row
                self._tail.forget(table)
                found = _bm25.top_matches(
                    query, self._term_counts, table=table, fts=fts, column=column,
                    match=match, where=where, params=params, limit=limit, plan=settled,
                    columns=columns, seen=ranked,
                )
            else:  # rows wait above the watermark: searched in memory (``_tail``)
                found = self._tail.top_matches(
                    query, self._term_counts, table=table, fts=fts, column=column,
                    match=match, where=where, params=params, limit=limit,
                    indexed=int(indexed), plan=settled, columns=columns, seen=ranked,
                )
        return [(key, -score or 0.0) for _, key, score in found]  # never -0.0

    def search_claims_vector(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, vector: npt.NDArray[np.float32], limit: int,
    ) -> list[tuple[str, float]]:
        """The nearest claims by cosine among those the filter admits, ranked over the
        sidecar first and filtered in rank order (``_nearest``); see
        ``Store.search_claims_vector``."""
        where, params = self._claim_filter(scope, tq, states, memory_types)
        return self._nearest("claims", scope, where, params, vector, limit,
                             getattr(self._local, "ranked", None))

    def _nearest(
        self, table: str, scope: Scope, where: str, params: Sequence[object],
        vector: npt.NDArray[np.float32], limit: int,
        ranked: dict[str, tuple[Any, ...]] | None = None,
    ) -> list[tuple[str, float]]:
        scope_where, scope_params = _sql.scope_visible(scope, f"{table}.")
        with self._search_reads() as (query, _):
            return nearest_admitted(
                query, self._vectors[table], table=table, where=where, params=params,
                scope_where=scope_where, scope_params=scope_params, vector=vector, limit=limit,
                columns="" if ranked is None else f", {_RANK_COLUMNS}", seen=ranked,
            )

    def unembedded_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None,
    ) -> list[tuple[str, str]]:
        """The claims ``search_claims_vector``'s filter admits that wait for a vector;
        see ``Store.unembedded_claims``. Only rows above the vector watermark can wait,
        so this reads a rowid range."""
        where, params = self._claim_filter(scope, tq, states, memory_types)
        return [(str(key), str(text)) for key, text in self._query(
            "SELECT claims.id, claims.text FROM claims NOT INDEXED WHERE claims.rowid >"
            " (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'vectors_claims')"
            f" AND claims.vec_slot IS NULL AND {where} ORDER BY claims.rowid", params)]

    def unembedded_episodes(self, scope: Scope, tq: TimeQuery) -> list[tuple[str, str]]:
        """The turns ``search_episodes_vector``'s filter admits that have no vector; see
        ``Store.unembedded_episodes``. Turns are stored with their vectors; only one
        stored without (``insert_episodes(..., None)``) or written while a re-embedding
        ran lacks one, and both mark where such rows start (``UNEMBEDDED_EPISODES``), so
        with none this reads nothing."""
        where, params = self._episode_filter(scope, tq)
        return [(str(key), str(text)) for key, text in self._query(
            "SELECT episodes.id, episodes.content FROM episodes NOT INDEXED"
            " WHERE episodes.rowid >= (SELECT CAST(value AS INTEGER) FROM store_meta"
            f" WHERE key = '{UNEMBEDDED_EPISODES}')"
            f" AND episodes.vec_slot IS NULL AND {where} ORDER BY episodes.rowid", params)]

    def claims_at(self, claim_ids: Sequence[str], tq: TimeQuery) -> dict[str, Claim]:
        """The claims with these ids, materialized as believed at ``tq``."""
        columns, params = self._select_at(tq)
        found: dict[str, Claim] = {}
        for start in range(0, len(claim_ids), 400):
            chunk = list(claim_ids[start : start + 400])
            for row in self._query(
                f"SELECT {columns} FROM claims WHERE rowid IN ({','.join('?' * len(chunk))})",
                [*params, *(claim_rowid(c) for c in chunk)],
            ):
                if row[1] in chunk:
                    found[row[1]] = decode_claim(row, tq.known_at)
        return found

    def rank_fields(self, claim_ids: Sequence[str]) -> dict[str, RankFields]:
        """What ``search()`` ranks each of these claims by, without decoding whole claims
        (see ``RankFields``); ids with no row are left out."""
        found: dict[str, RankFields] = {}
        ranked = getattr(self._local, "ranked", None) or {}
        missing: list[str] = []
        for cid in claim_ids:
            row = ranked.get(cid)
            if row is None:
                missing.append(cid)
            else:
                found[cid] = RankFields._make(row)
        for start in range(0, len(missing), 400):
            chunk = set(missing[start : start + 400])
            for row in self._query(
                    f"SELECT id, {_RANK_COLUMNS} FROM claims"
                    f" WHERE rowid IN ({','.join('?' * len(chunk))})",
                    [claim_rowid(c) for c in chunk]):
                if row[0] in chunk:
                    found[row[0]] = RankFields._make(row[1:])  # columns in field order
        return found

    def _episode_filter(self, scope: Scope, tq: TimeQuery) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope, "episodes.")
        where += " AND episodes.recorded_at <= ?"
        params.append(tq.known_at)
        if tq.valid_at is not None:
            where += " AND episodes.ts <= ?"
            params.append(tq.valid_at)
        return where, params

    def search_episodes_text(
        self, scope: Scope, tq: TimeQuery, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """The best BM25 matches for any of ``terms`` among the turns visible at ``tq``."""
        where, params = self._episode_filter(scope, tq)
        return self._text_matches("episodes", terms, where, params, limit)

    def search_episodes_vector(
        self, scope: Scope, tq: TimeQuery, vector: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        """The nearest turns visible at ``tq``, by cosine."""
        where, params = self._episode_filter(scope, tq)
        return self._nearest("episodes", scope, where, params, vector, limit)

    def episode_similarities(
        self, episode_ids: Sequence[str], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """The cosine of ``vector`` with each of these turns' vectors (any scope: the
        caller's search already filtered); a turn with no vector, or a ``vector`` of
        another width, is left out. ``search()`` ranks by it the turns its text list
        found that the vector list did not reach, and, with a lexical embedder, orders
        the ties of a full text list by it."""
        return self._cosines("episodes", episode_ids, vector)

    def claim_similarities(
        self, claim_ids: Sequence[str], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """The cosine of ``vector`` with each of these claims' vectors, as
        ``episode_similarities`` gives turns': ``search()`` with a lexical embedder orders
        its text candidates' ties by it, instead of scoring every vector."""
        return self._cosines("claims", claim_ids, vector)

    def _cosines(
        self, table: str, keys: Sequence[str], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """``vector``'s cosine with the stored vector of each row of ``table`` (``claims``,
        found by the rowid its id carries, or ``episodes``, by id) in ``keys``."""
        vectors = self._vectors[table]
        if not keys or vectors.dim != vector.shape[0]:
            return {}
        ids: list[str] = []
        slots: list[int] = []
        with self._search_reads() as (query, _):
            for start in range(0, len(keys), 400):
                chunk = set(keys[start : start + 400])
                column, params = (("rowid", [claim_rowid(key) for key in chunk])
                                  if table == "claims" else ("id", list(chunk)))
                for key, slot in query(
                    f"SELECT id, vec_slot FROM {table} WHERE vec_slot IS NOT NULL"
                    f" AND {column} IN ({','.join('?' * len(chunk))})", params,
                ):
                    if key in chunk:
                        ids.append(key)
                        slots.append(int(slot))
            if not ids:
                return {}
            scores = dot(vectors.read(slots), vector)
        return {key: float(score) for key, score in zip(ids, scores.tolist())}

    def episodes_by_ids(self, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The episodes with these ids (any scope: the caller's search already filtered)."""
        found: dict[str, Episode] = {}
        for start in range(0, len(episode_ids), 400):
            chunk = list(episode_ids[start : start + 400])
            for eid, tenant, user, agent, session, role, content, ts, recorded in self._query(
                "SELECT id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"
                f" FROM episodes WHERE id IN ({','.join('?' * len(chunk))})", chunk,
            ):
                found[eid] = Episode(content=content, role=role, ts=from_micros(ts),
                                     recorded_at=from_micros(recorded),
                                     scope=scope_of(tenant, user, agent, session), id=eid)
        return found

    def episode_neighbours(
        self, tq: TimeQuery, episode_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        """Each episode's turns just before and after it; see ``Store.episode_neighbours``."""
        seen = "o.recorded_at <= ?" + ("" if tq.valid_at is None else " AND o.ts <= ?")
        bound = [tq.known_at] if tq.valid_at is None else [tq.known_at, tq.valid_at]
        same = (
            "o.s_tenant = e.s_tenant AND o.s_user = e.s_user AND o.s_agent = e.s_agent"
            f" AND o.s_session = e.s_session AND {seen}"
        )
        found: dict[str, tuple[str | None, str | None]] = {}
        for start in range(0, len(episode_ids), 400):
            chunk = list(episode_ids[start : start + 400])
            for eid, before, after in self._query(
                f"SELECT e.id,"
                f" (SELECT o.id FROM episodes o WHERE {same} AND o.rowid < e.rowid"
                f"  ORDER BY o.rowid DESC LIMIT 1),"
                f" (SELECT o.id FROM episodes o WHERE {same} AND o.rowid > e.rowid"
                f"  ORDER BY o.rowid LIMIT 1)"
                f" FROM episodes e WHERE e.id IN ({','.join('?' * len(chunk))})",
                [*bound, *bound, *chunk],
            ):
                found[eid] = (before, after)
        return found
