"""Reads of the PostgreSQL store: claims at an instant, turns, retrieval candidates,
provenance and the graph. Every filter comes from ``_sql``; every read runs on this
thread's reader (in autocommit, or in its ``snapshot()``), so it never waits for a
writer.
"""

from __future__ import annotations

import threading
from collections.abc import Collection, Sequence

import numpy as np
import numpy.typing as npt

from ..._domain.model import Claim, Episode, Scope, TimeQuery
from ..base import RankFields
from ..sqlite._rows import claim_rowid, decode_claim
from . import _sql
from ._plan import top_matches
from ._text import bm25_sql
from ._writes import _EPISODE_COLUMNS, CLAIM_COLUMNS, Writes, episode_of

__all__ = ["Reads"]


class Reads(Writes):
    """The read side of ``Store`` (see ``memvara.store.base``)."""

    def _select_at(self, tq: TimeQuery) -> tuple[str, list[object]]:
        """The columns ``decode_claim`` needs to materialize a row as believed at ``tq``."""
        end, end_params = _sql.effective_end(tq.known_at, "claims.")
        known, known_params = _sql.effective_end_known(tq.known_at, "claims.")
        columns = ", ".join(c if c.startswith("NULL") else f"claims.{c}"
                            for c in (part.strip() for part in CLAIM_COLUMNS.split(",")))
        return f"{columns}, {end}, {known}", [*end_params, *known_params]

    def get_claim(self, claim_id: str, scope: Scope) -> Claim | None:
        """The claim if visible from ``scope``; see ``Store.get_claim``. Inside this
        thread's write (a delete or supersede about to change it) its slot is locked
        first, as an erase of it and a writer settling it lock it, so none of them
        changes the row between this read and that change."""
        where, params = _sql.scope_visible(scope)
        if self._owner == threading.get_ident():
            self._lock_claim_slot(self._writer, claim_id, where, params)
        rows = self._query(f"SELECT {CLAIM_COLUMNS} FROM claims WHERE rowid = %s AND id = %s"
                           f" AND {where}", [claim_rowid(claim_id), claim_id, *params])
        return decode_claim(rows[0], None) if rows else None

    def _filtered(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        subject_keys: Collection[str] | None = None, predicate: str | None = None,
        memory_types: Collection[str] | None = None,
    ) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope, "claims.")
        state_sql, state_params = _sql.states_filter(states, tq, "claims.")
        sql, args = f"{where} AND {state_sql}", [*params, *state_params]
        if subject_keys is not None:
            sql += " AND claims.subject_key = ANY(%s)"
            args.append(list(subject_keys))
        if predicate is not None:
            sql += " AND claims.predicate = %s"
            args.append(predicate)
        if memory_types is not None:
            sql += " AND claims.memory_type = ANY(%s)"
            args.append(sorted(memory_types))
        return sql, args

    def find_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *, limit: int | None = None,
        offset: int = 0, subject_keys: Collection[str] | None = None,
        predicate: str | None = None,
    ) -> list[Claim]:
        """Claims in ``states`` at ``tq``; see ``Store.find_claims``."""
        columns, params = self._select_at(tq)
        where, where_params = self._filtered(scope, tq, states, subject_keys, predicate)
        return [decode_claim(row, tq.known_at) for row in self._query(
            f"SELECT {columns} FROM claims WHERE {where}"
            " ORDER BY recorded_at DESC, rowid DESC LIMIT %s OFFSET %s",
            [*params, *where_params, limit, offset])]

    def count_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *,
        subject_keys: Collection[str] | None = None, predicate: str | None = None,
    ) -> int:
        """How many claims ``find_claims`` would return; see ``Store.count_claims``."""
        where, params = self._filtered(scope, tq, states, subject_keys, predicate)
        return int(self._query(f"SELECT count(*) FROM claims WHERE {where}", params)[0][0])

    def list_episodes(
        self, scope: Scope, tq: TimeQuery, *, roles: Collection[str] | None = None,
        limit: int | None = None, offset: int = 0,
    ) -> list[Episode]:
        """Turns visible from ``scope`` at ``tq``; see ``Store.list_episodes``."""
        where, args = self._episode_filter(scope, tq)
        if roles is not None:
            where += " AND role = ANY(%s)"
            args.append(sorted(set(roles)))
        return [episode_of(row) for row in self._query(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE {where}"
            " ORDER BY ts, rowid LIMIT %s OFFSET %s", [*args, limit, offset])]

    def slot_history(
        self, scope: Scope, subject_keys: Collection[str], predicate: str, tq: TimeQuery
    ) -> list[Claim]:
        """A slot's timeline at ``tq``; see ``Store.slot_history``."""
        columns, args = self._select_at(tq)
        where, params = _sql.scope_visible(scope, "claims.")
        span, span_params = _sql.timeline(tq, "claims.")
        return [decode_claim(row, tq.known_at) for row in self._query(
            f"SELECT {columns} FROM claims WHERE subject_key = ANY(%s) AND predicate = %s"
            f" AND {where} AND {span} ORDER BY recorded_at, rowid",
            [*args, list(subject_keys), predicate, *params, *span_params])]

    def stats(self, scope: Scope, now: int) -> dict[str, int]:
        """Population counts at ``now``; see ``Store.stats``."""
        tq = TimeQuery(known_at=now, valid_at=now)
        where, params = _sql.scope_visible(scope)
        live, live_p = _sql.states_filter(["live"], tq)
        ended, ended_p = _sql.states_filter(["ended"], tq)
        retired, retired_p = _sql.states_filter(["retired"], tq)
        claims = self._query(
            f"SELECT count(*), count(*) FILTER (WHERE {live}), count(*) FILTER (WHERE {ended}),"
            f" count(*) FILTER (WHERE {retired}), count(emb) FROM claims WHERE {where}",
            [*live_p, *ended_p, *retired_p, *params])[0]
        episodes = self._query(f"SELECT count(*), count(emb) FROM episodes WHERE {where}", params)[0]
        return {"episodes": int(episodes[0]), "claims": int(claims[0]),
                "live_claims": int(claims[1]), "ended_claims": int(claims[2]),
                "invalidated": int(claims[3]), "embeddings": int(claims[4]) + int(episodes[1])}

    # -- retrieval candidates -------------------------------------------------------
    def _episode_filter(self, scope: Scope, tq: TimeQuery) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope, "episodes.")
        where += " AND episodes.recorded_at <= %s"
        params.append(tq.known_at)
        if tq.valid_at is not None:
            where += " AND episodes.ts <= %s"
            params.append(tq.valid_at)
        return where, params

    def _text(self, table: str, terms: Sequence[str], where: str, params: list[object],
              limit: int) -> list[tuple[str, float]]:
        phrases = [p for p in self._tokenizer.phrases(terms) if p] if terms else []
        if not phrases:
            return []
        pending = self._pending(table)
        planned = top_matches(self._query, table, phrases, where, params, limit,
                              kept=self._version >= 2, pending=pending)
        if planned is not None:
            return planned
        sql, head = bm25_sql(table, phrases, where, pending[:2])
        return [(str(key), float(score) or 0.0)
                for key, score in self._query(sql, [*head, *params, limit])]

    def search_claims_text(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, terms: Sequence[str], limit: int,
    ) -> list[tuple[str, float]]:
        """FTS5's BM25 over the claims the filter admits (``_text``); exact: every
        matching row is scored. See ``Store.search_claims_text``."""
        where, params = self._filtered(scope, tq, states, memory_types=memory_types)
        return self._text("claims", terms, where, params, limit)

    def search_episodes_text(
        self, scope: Scope, tq: TimeQuery, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """``search_claims_text`` for turns."""
        where, params = self._episode_filter(scope, tq)
        return self._text("episodes", terms, where, params, limit)

    def _nearest(self, table: str, where: str, params: list[object],
                 vector: npt.NDArray[np.float32], limit: int) -> list[tuple[str, float]]:
        if self.dim is None or vector.shape[0] != self.dim:
            return []
        query = np.asarray(vector, dtype=np.float32)
        return [(str(key), float(score)) for key, score in self._query(
            f"SELECT {table}.id, -({table}.emb <#> %s) FROM {table}"
            f" WHERE {table}.emb IS NOT NULL AND {where}"
            f" ORDER BY {table}.emb <#> %s, {table}.rowid LIMIT %s",
            [query, *params, query, limit])]

    def search_claims_vector(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, vector: npt.NDArray[np.float32], limit: int,
    ) -> list[tuple[str, float]]:
        """The nearest claims by inner product (the vectors are unit length: cosine),
        exact over the rows the filter admits; see ``Store.search_claims_vector``."""
        where, params = self._filtered(scope, tq, states, memory_types=memory_types)
        return self._nearest("claims", where, params, vector, limit)

    def search_episodes_vector(
        self, scope: Scope, tq: TimeQuery, vector: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        """``search_claims_vector`` for turns."""
        where, params = self._episode_filter(scope, tq)
        return self._nearest("episodes", where, params, vector, limit)

    def unembedded_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None,
    ) -> list[tuple[str, str]]:
        """Admitted claims with no vector yet; see ``Store.unembedded_claims``."""
        where, params = self._filtered(scope, tq, states, memory_types=memory_types)
        return [(str(k), str(t)) for k, t in self._query(
            f"SELECT claims.id, claims.text FROM claims WHERE claims.emb IS NULL AND {where}"
            " ORDER BY claims.rowid", params)]

    def unembedded_episodes(self, scope: Scope, tq: TimeQuery) -> list[tuple[str, str]]:
        """Admitted turns with no vector; see ``Store.unembedded_episodes``."""
        where, params = self._episode_filter(scope, tq)
        return [(str(k), str(t)) for k, t in self._query(
            "SELECT episodes.id, episodes.content FROM episodes WHERE episodes.emb IS NULL"
            f" AND {where} ORDER BY episodes.rowid", params)]

    def claims_at(self, claim_ids: Sequence[str], tq: TimeQuery) -> dict[str, Claim]:
        """The claims with these ids, materialized at ``tq``; see ``Store.claims_at``."""
        columns, params = self._select_at(tq)
        wanted = set(claim_ids)
        return {row[1]: decode_claim(row, tq.known_at) for row in self._query(
            f"SELECT {columns} FROM claims WHERE rowid = ANY(%s)",
            [*params, [claim_rowid(c) for c in wanted]]) if row[1] in wanted}

    def rank_fields(self, claim_ids: Sequence[str]) -> dict[str, RankFields]:
        """What ``search()`` ranks each claim by (``RankingStore``)."""
        wanted = set(claim_ids)
        return {row[0]: RankFields._make(row[1:]) for row in self._query(
            "SELECT id, text, predicate, valid_from, confidence, observations, salience"
            " FROM claims WHERE rowid = ANY(%s)", [[claim_rowid(c) for c in wanted]])
            if row[0] in wanted}

    def claim_similarities(self, claim_ids: Sequence[str], vector: npt.NDArray[np.float32]) -> dict[str, float]:
        """The cosine of ``vector`` with each of these claims' vectors (``SimilarityStore``)."""
        wanted = set(claim_ids)
        return {k: v for k, v in self._cosines(
            "claims", "rowid", [claim_rowid(c) for c in wanted], vector).items() if k in wanted}

    def episode_similarities(self, episode_ids: Sequence[str], vector: npt.NDArray[np.float32]) -> dict[str, float]:
        """``claim_similarities`` for turns."""
        return self._cosines("episodes", "id", list(episode_ids), vector)

    def _cosines(self, table: str, column: str, keys: list[object],
                 vector: npt.NDArray[np.float32]) -> dict[str, float]:
        if not keys or self.dim != vector.shape[0]:
            return {}
        return {str(k): float(v) for k, v in self._query(
            f"SELECT id, -(emb <#> %s) FROM {table} WHERE {column} = ANY(%s) AND emb IS NOT NULL",
            [np.asarray(vector, dtype=np.float32), keys])}

    def episodes_by_ids(self, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The turns with these ids, in any scope; see ``Store.episodes_by_ids``."""
        return {row[0]: episode_of(row) for row in self._query(
            f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE id = ANY(%s)", [list(episode_ids)])}

    def episode_neighbours(
        self, tq: TimeQuery, episode_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        """Each turn's neighbours at its scope; see ``Store.episode_neighbours``."""
        seen = "o.recorded_at <= %s" + ("" if tq.valid_at is None else " AND o.ts <= %s")
        bound = [tq.known_at] if tq.valid_at is None else [tq.known_at, tq.valid_at]
        same = ("o.s_tenant = e.s_tenant AND o.s_user = e.s_user AND o.s_agent = e.s_agent"
                f" AND o.s_session = e.s_session AND {seen}")
        return {eid: (before, after) for eid, before, after in self._query(
            f"SELECT e.id, (SELECT o.id FROM episodes o WHERE {same} AND o.rowid < e.rowid"
            "  ORDER BY o.rowid DESC LIMIT 1),"
            f" (SELECT o.id FROM episodes o WHERE {same} AND o.rowid > e.rowid"
            "  ORDER BY o.rowid LIMIT 1) FROM episodes e WHERE e.id = ANY(%s)",
            [*bound, *bound, list(episode_ids)])}

    # -- provenance and the graph ---------------------------------------------------
    def claim_at(self, claim_id: str, scope: Scope, tq: TimeQuery) -> tuple[Claim, str | None] | None:
        """The claim at ``tq`` and what ended it then; see ``Store.claim_at``."""
        closer, params = _sql.effective_closer(tq.known_at, "claims.")
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope, "claims.")
        span, span_params = _sql.timeline(tq, "claims.")
        rows = self._query(
            f"SELECT {closer}, {columns} FROM claims WHERE rowid = %s AND id = %s AND {where}"
            f" AND {span}", [*params, *column_params, claim_rowid(claim_id), claim_id,
                             *where_params, *span_params])
        return (decode_claim(rows[0][1:], tq.known_at), rows[0][0]) if rows else None

    def superseded_by(self, claim_id: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """The claims ``claim_id`` closed, as believed at ``tq``; see ``Store.superseded_by``."""
        closer, params = _sql.effective_closer(tq.known_at, "claims.")
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope, "claims.")
        return [decode_claim(row, tq.known_at) for row in self._query(
            f"SELECT {columns} FROM claims WHERE rowid IN ("
            " SELECT rowid FROM claims WHERE invalidated_by = %s"
            " UNION SELECT rowid FROM claims WHERE ended_by = %s"
            " UNION SELECT claim_rowid FROM claim_closures WHERE ended_by = %s)"
            f" AND {where} AND recorded_at <= %s"
            f" AND ((invalidated_by = %s AND invalidated_at <= %s) OR {closer} = %s)"
            " ORDER BY recorded_at, rowid",
            [*column_params, claim_id, claim_id, claim_id, *where_params, tq.known_at,
             claim_id, tq.known_at, *params, claim_id])]

    def claims_citing(self, source: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """Claims citing ``source`` on the timeline at ``tq``; see ``Store.claims_citing``."""
        columns, params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope, "claims.")
        span, span_params = _sql.timeline(tq, "claims.")
        return [decode_claim(row, tq.known_at) for row in self._query(
            f"SELECT {columns} FROM claims WHERE rowid IN"
            " (SELECT claim_rowid FROM claim_sources WHERE source = %s)"
            f" AND {where} AND {span} ORDER BY recorded_at, rowid",
            [*params, source, *where_params, *span_params])]

    def predicate_in_use(self, predicate: str) -> bool:
        """Whether any claim has this predicate; see ``Store.predicate_in_use``."""
        return bool(self._query("SELECT 1 FROM claims WHERE predicate = %s LIMIT 1", [predicate]))

    def graph_edges(
        self, scope: Scope, tq: TimeQuery, keys: Collection[str],
        predicates: Collection[str] | None, fanout: int,
    ) -> list[tuple[Claim, str, str]]:
        """Live, positive claims touching ``keys``; see ``Store.graph_edges``."""
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope, "claims.")
        live, live_params = _sql.visible(tq, "claims.")
        extra, extra_params = "", []
        if predicates is not None:
            extra, extra_params = " AND predicate = ANY(%s)", [list(predicates)]
        found: list[tuple[Claim, str, str]] = []
        for side in ("subject_key", "object_key"):
            rows = self._query(
                f"SELECT * FROM (SELECT {columns}, subject_key, object_key, row_number()"
                f" OVER (PARTITION BY {side} ORDER BY recorded_at DESC, rowid DESC) AS n"
                f" FROM claims WHERE {side} = ANY(%s) AND polarity > 0{extra}"
                f" AND {where} AND {live}) AS edges WHERE n <= %s",
                [*column_params, list(keys), *extra_params, *where_params, *live_params, fanout])
            found.extend((decode_claim(row[:-3], tq.known_at), row[-3], row[-2]) for row in rows)
        return found

    def entity_surfaces(self, owner: Scope, limit: int) -> list[str]:
        """Recent subjects and objects of ``owner``; see ``Store.entity_surfaces``."""
        rows = self._query("SELECT subject, object FROM claims WHERE s_tenant = %s AND s_user = %s"
                           " ORDER BY rowid DESC LIMIT %s",
                           [owner.tenant or "", owner.user or "", limit])
        return list(dict.fromkeys(surface for pair in rows for surface in pair))[:limit]
