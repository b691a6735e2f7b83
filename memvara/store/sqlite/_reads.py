"""Reads of claims at one instant: one claim, a filtered list, a count, a slot's
timeline and the population counts. The filters come from ``_sql``, where each rule is
compiled once; ``_select_at`` is what materializes a row as believed at ``known_at``.
"""

from __future__ import annotations

from collections.abc import Collection

from ..._domain.model import Claim, Episode, Scope, TimeQuery
from ..._domain.time import from_micros
from . import _sql
from ._core import StoreCore
from ._rows import CLAIM_COLUMNS, claim_rowid, decode_claim, scope_of

__all__ = ["Reads"]


class Reads(StoreCore):
    """``get_claim``, ``find_claims``, ``count_claims``, ``list_episodes``,
    ``slot_history``, ``stats``."""

    def get_claim(self, claim_id: str, scope: Scope) -> Claim | None:
        """The claim if visible from ``scope``; see ``Store.get_claim``."""
        where, params = _sql.scope_visible(scope)
        rows = self._query(
            f"SELECT {CLAIM_COLUMNS} FROM claims WHERE rowid = ? AND id = ? AND {where}",
            [claim_rowid(claim_id), claim_id, *params],
        )
        return decode_claim(rows[0], None) if rows else None

    def _filtered(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        subject_keys: Collection[str] | None = None, predicate: str | None = None,
    ) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope)
        state_sql, state_params = _sql.states_filter(states, tq)
        sql, args = f"{where} AND {state_sql}", [*params, *state_params]
        if subject_keys is not None:
            keys = list(dict.fromkeys(subject_keys))
            sql += f" AND subject_key IN ({','.join('?' * len(keys))})" if keys else " AND 0"
            args += keys
        if predicate is not None:
            sql += " AND predicate = ?"
            args.append(predicate)
        return sql, args

    def _select_at(self, tq: TimeQuery) -> tuple[str, list[object]]:
        """The columns ``decode_claim`` needs to materialize a row as believed at ``tq``."""
        end, end_params = _sql.effective_end(tq.known_at)
        known, known_params = _sql.effective_end_known(tq.known_at)
        return f"{CLAIM_COLUMNS}, {end}, {known}", [*end_params, *known_params]

    def find_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *, limit: int | None = None,
        offset: int = 0, subject_keys: Collection[str] | None = None,
        predicate: str | None = None,
    ) -> list[Claim]:
        """Claims in ``states`` at ``tq``; see ``Store.find_claims``."""
        columns, params = self._select_at(tq)
        where, where_params = self._filtered(scope, tq, states, subject_keys, predicate)
        sql = f"SELECT {columns} FROM claims WHERE {where} ORDER BY recorded_at DESC, rowid DESC"
        params += where_params
        if limit is not None or offset:
            sql += " LIMIT ? OFFSET ?"
            params += [-1 if limit is None else limit, offset]
        return [decode_claim(row, tq.known_at) for row in self._query(sql, params)]

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
        where, args = _sql.scope_visible(scope)
        sql = (f"SELECT id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"
               f" FROM episodes WHERE {where} AND recorded_at <= ?")
        args.append(tq.known_at)
        if tq.valid_at is not None:
            sql += " AND ts <= ?"
            args.append(tq.valid_at)
        if roles is not None:
            wanted = sorted(set(roles))
            sql += f" AND role IN ({','.join('?' * len(wanted))})" if wanted else " AND 0"
            args += wanted
        sql += " ORDER BY ts, rowid LIMIT ? OFFSET ?"
        args += [-1 if limit is None else limit, offset]
        return [Episode(content=content, role=role, ts=from_micros(ts),
                        recorded_at=from_micros(recorded),
                        scope=scope_of(tenant, user, agent, session), id=eid)
                for eid, tenant, user, agent, session, role, content, ts, recorded
                in self._query(sql, args)]

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
