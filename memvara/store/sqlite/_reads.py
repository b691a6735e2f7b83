"""Reads of claims at one instant: one claim, a filtered list, a count, a slot's
timeline and the population counts. The filters come from ``_sql``, where each rule is
compiled once; ``_select_at`` is what materializes a row as believed at ``known_at``.
"""

from __future__ import annotations

from collections.abc import Collection

from ..._domain.model import Claim, Scope, TimeQuery
from . import _sql
from ._core import StoreCore
from ._rows import CLAIM_COLUMNS, claim_rowid, decode_claim

__all__ = ["Reads"]


class Reads(StoreCore):
    """``get_claim``, ``find_claims``, ``count_claims``, ``slot_history``, ``stats``."""

    def get_claim(self, claim_id: str, scope: Scope) -> Claim | None:
        """The claim if visible from ``scope``; see ``Store.get_claim``."""
        where, params = _sql.scope_visible(scope)
        rows = self._query(
            f"SELECT {CLAIM_COLUMNS} FROM claims WHERE rowid = ? AND id = ? AND {where}",
            [claim_rowid(claim_id), claim_id, *params],
        )
        return decode_claim(rows[0], None) if rows else None

    def _filtered(
        self, scope: Scope, tq: TimeQuery, states: Collection[str]
    ) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope)
        state_sql, state_params = _sql.states_filter(states, tq)
        return f"{where} AND {state_sql}", [*params, *state_params]

    def _select_at(self, tq: TimeQuery) -> tuple[str, list[object]]:
        """The columns ``decode_claim`` needs to materialize a row as believed at ``tq``."""
        end, end_params = _sql.effective_end(tq.known_at)
        known, known_params = _sql.effective_end_known(tq.known_at)
        return f"{CLAIM_COLUMNS}, {end}, {known}", [*end_params, *known_params]

    def find_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *, limit: int | None = None
    ) -> list[Claim]:
        """Claims in ``states`` at ``tq``; see ``Store.find_claims``."""
        columns, params = self._select_at(tq)
        where, where_params = self._filtered(scope, tq, states)
        sql = f"SELECT {columns} FROM claims WHERE {where} ORDER BY recorded_at DESC, rowid DESC"
        params += where_params
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [decode_claim(row, tq.known_at) for row in self._query(sql, params)]

    def count_claims(self, scope: Scope, tq: TimeQuery, states: Collection[str]) -> int:
        """How many claims ``find_claims`` would return; see ``Store.count_claims``."""
        where, params = self._filtered(scope, tq, states)
        return int(self._query(f"SELECT count(*) FROM claims WHERE {where}", params)[0][0])

    def slot_history(
        self, scope: Scope, subject_keys: Collection[str], predicate: str, tq: TimeQuery
    ) -> list[Claim]:
        """A slot's timeline at ``tq``; see ``Store.slot_history``."""
        keys = list(dict.fromkeys(subject_keys))
        columns, args = self._select_at(tq)
        where, params = _sql.scope_visible(scope)
        span, span_params = _sql.timeline(tq)
        sql = (
            f"SELECT {columns} FROM claims WHERE subject_key IN ({','.join('?' * len(keys))})"
            f" AND predicate = ? AND {where} AND {span} ORDER BY recorded_at, rowid"
        )
        args += [*keys, predicate, *params, *span_params]
        return [decode_claim(row, tq.known_at) for row in self._query(sql, args)]

    def stats(self, scope: Scope, now: int) -> dict[str, int]:
        """Population counts at ``now``; see ``Store.stats``."""
        tq = TimeQuery(known_at=now, valid_at=now)
        where, params = _sql.scope_visible(scope)
        live, live_p = _sql.states_filter(["live"], tq)
        ended, ended_p = _sql.states_filter(["ended"], tq)
        retired, retired_p = _sql.states_filter(["retired"], tq)
        claims = self._query(
            f"SELECT count(*), coalesce(sum({live}), 0), coalesce(sum({ended}), 0),"
            f" coalesce(sum({retired}), 0), count(vec_slot) FROM claims WHERE {where}",
            [*live_p, *ended_p, *retired_p, *params],
        )[0]
        episodes = self._query(
            f"SELECT count(*), count(vec_slot) FROM episodes WHERE {where}", params
        )[0]
        return {
            "episodes": int(episodes[0]),
            "claims": int(claims[0]),
            "live_claims": int(claims[1]),
            "ended_claims": int(claims[2]),
            "invalidated": int(claims[3]),
            "embeddings": int(claims[4]) + int(episodes[1]),
        }
