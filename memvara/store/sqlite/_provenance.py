"""Provenance and the graph: one claim with what closed it, the claims it closed, the
claims citing a source, and a bounded hop of edges; each at one pinned instant.
"""

from __future__ import annotations

from collections.abc import Collection

from ..._domain.model import Claim, Scope, TimeQuery
from . import _sql
from ._reads import Reads
from ._rows import claim_rowid, decode_claim

__all__ = ["Provenance"]


class Provenance(Reads):
    """``claim_at``, ``superseded_by``, ``claims_citing``, ``predicate_in_use`` and
    ``graph_edges`` (``snapshot``, which a walk runs in, is ``Connections``')."""

    def claim_at(
        self, claim_id: str, scope: Scope, tq: TimeQuery
    ) -> tuple[Claim, str | None] | None:
        """The claim as believed at ``tq`` and the claim that ended it then; see
        ``Store.claim_at``."""
        closer, params = _sql.effective_closer(tq.known_at)
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        span, span_params = _sql.timeline(tq)
        rows = self._query(
            f"SELECT {closer}, {columns} FROM claims WHERE rowid = ? AND id = ? AND {where}"
            f" AND {span}",
            [*params, *column_params, claim_rowid(claim_id), claim_id, *where_params,
             *span_params],
        )
        if not rows:
            return None
        return decode_claim(rows[0][1:], tq.known_at), rows[0][0]

    def superseded_by(self, claim_id: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """The claims ``claim_id`` closed, as believed at ``tq``; see
        ``Store.superseded_by``."""
        closer, params = _sql.effective_closer(tq.known_at)
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        rows = self._query(
            # NOT INDEXED: the rowids are few; left to itself the planner walks every
            # entry of the visible scope in claims_slot (14.5 ms against 0.14 ms for
            # why() at 60,000 claims of one scope, in review).
            f"SELECT {columns} FROM claims NOT INDEXED WHERE rowid IN ("
            " SELECT rowid FROM claims WHERE invalidated_by = ?"
            " UNION SELECT rowid FROM claims WHERE ended_by = ?"
            " UNION SELECT claim_rowid FROM claim_closures WHERE ended_by = ?)"
            f" AND {where} AND recorded_at <= ?"
            f" AND ((invalidated_by = ? AND invalidated_at <= ?) OR {closer} = ?)"
            " ORDER BY recorded_at, rowid",
            [*column_params, claim_id, claim_id, claim_id, *where_params, tq.known_at,
             claim_id, tq.known_at, *params, claim_id],
        )
        return [decode_claim(row, tq.known_at) for row in rows]

    def claims_citing(self, source: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """Claims whose sources include ``source``, visible at ``tq``; see
        ``Store.claims_citing``."""
        columns, params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        span, span_params = _sql.timeline(tq)
        rows = self._query(
            f"SELECT {columns} FROM claims NOT INDEXED WHERE rowid IN"  # see superseded_by
            " (SELECT claim_rowid FROM claim_sources WHERE source = ?)"
            f" AND {where} AND {span} ORDER BY recorded_at, rowid",
            [*params, source, *where_params, *span_params],
        )
        return [decode_claim(row, tq.known_at) for row in rows]

    def predicate_in_use(self, predicate: str) -> bool:
        """Whether any claim has this predicate; see ``Store.predicate_in_use``."""
        return bool(self._query("SELECT 1 FROM claims WHERE predicate = ? LIMIT 1", [predicate]))

    def graph_edges(
        self,
        scope: Scope,
        tq: TimeQuery,
        keys: Collection[str],
        predicates: Collection[str] | None,
        fanout: int,
    ) -> list[tuple[Claim, str, str]]:
        """Live, positive claims touching ``keys``, at most ``fanout`` a key a side; see
        ``Store.graph_edges``."""
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        live, live_params = _sql.visible(tq)
        marks = ",".join("?" * len(keys))
        extra, extra_params = "", []
        if predicates is not None:
            extra = f" AND predicate IN ({','.join('?' * len(predicates))})"
            extra_params = list(predicates)
        found: list[tuple[Claim, str, str]] = []
        # INDEXED BY: left to itself the planner may walk claims_slot by its scope prefix
        # alone, every row of a scope (it cannot know a key list is far more selective
        # than a scope); named, it probes each visible scope for each key.
        for side, index in (("subject_key", "claims_slot"), ("object_key", "claims_object")):
            rows = self._query(
                f"SELECT * FROM (SELECT {columns}, subject_key, object_key, row_number()"
                f" OVER (PARTITION BY {side} ORDER BY recorded_at DESC, rowid DESC) AS n"
                f" FROM claims INDEXED BY {index} WHERE {side} IN ({marks})"
                f" AND polarity > 0{extra}"
                f" AND {where} AND {live}) WHERE n <= ?",
                [*column_params, *keys, *extra_params, *where_params, *live_params, fanout],
            )
            found.extend(
                (decode_claim(row[:-3], tq.known_at), row[-3], row[-2]) for row in rows
            )
        return found
