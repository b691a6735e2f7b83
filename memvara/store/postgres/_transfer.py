"""Export and import for the PostgreSQL store (``TransferStore``): a scope's rows dumped
whole, and put back as they were.

As in the SQLite store, a claim goes back at the row its id names (``c<rowid>-<hash>``),
so the id keeps addressing it; a row already taken is a conflict, reported, never
overwritten, and the claims' sequence is moved past every restored row. Turns get new
rows in their old order. Tokens, vectors, source links and earlier ends are written in
the same transaction. The store keeps no write log, so a dump names no actor.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.model import Episode, Scope
from ..._domain.time import to_micros
from ..._errors import StoreError
from .._transfer import AliasRecord, ClaimRecord, Closure, Conflict, WaitingMark
from ..sqlite._rows import claim_row, claim_rowid, decode_claim, scope_levels, scope_of
from . import _sql
from ._upkeep import Upkeep
from ._writes import _EPISODE_COLUMNS, _LINK, CLAIM_COLUMNS, content_hash, episode_of

__all__ = ["Transfer"]

_DUMP_CLAIMS = (
    f"SELECT {CLAIM_COLUMNS}, subject_key, ended_by, salience_base, observed_at,"
    " CASE WHEN revised THEN (SELECT json_agg(json_build_array(known_at, valid_to, ended_by))"
    " FROM claim_closures WHERE claim_rowid = claims.rowid) END"
    " FROM claims WHERE {where} ORDER BY rowid"
)
_RESTORE = (
    "INSERT INTO claims (rowid, id, s_tenant, s_user, s_agent, s_session, subject,"
    " subject_key, predicate, object, polarity, valid_from, valid_to, valid_to_known_at,"
    " recorded_at, invalidated_at, invalidated_by, confidence, memory_type, text, extractor,"
    " meta, sources, observations, emb, object_key, tokens, salience, salience_base,"
    " observed_at, ended_by, revised) VALUES (" + ", ".join(["%s"] * 32) + ")"
)


def _alias_subtree(scope: Scope) -> tuple[str, list[object]]:
    """``scope_subtree`` for aliases, owned at ``(tenant, user)``: a scope set below
    the user owns none."""
    if scope.agent is not None or scope.session is not None:
        return "FALSE", []
    return _sql.scope_subtree(Scope(scope.tenant, scope.user))


class Transfer(Upkeep):
    """``TransferStore``: the dumps, ``restore_conflicts`` and ``restore``."""

    def dump_counts(self, scope: Scope) -> dict[str, int]:
        """How many rows the dumps give; see ``TransferStore.dump_counts``."""
        where, params = _sql.scope_subtree(scope)
        alias_where, alias_params = _alias_subtree(scope)
        claims, episodes, aliases = self._query(
            f"SELECT (SELECT count(*) FROM claims WHERE {where}),"
            f" (SELECT count(*) FROM episodes WHERE {where}),"
            f" (SELECT count(*) FROM entity_aliases WHERE {alias_where})",
            [*params, *params, *alias_params])[0]
        return {"claims": int(claims), "episodes": int(episodes), "aliases": int(aliases)}

    def dump_claims(self, scope: Scope) -> Iterator[ClaimRecord]:
        """A subtree's claims, in insertion order; see ``TransferStore.dump_claims``."""
        where, params = _sql.scope_subtree(scope)
        for row in self._query(_DUMP_CLAIMS.format(where=where), params):
            subject_key, ended_by, storage, observed_at, closures = row[25:]
            yield ClaimRecord(
                decode_claim(row, None), subject_key, ended_by, float(storage), observed_at,
                tuple(Closure(*c) for c in sorted(closures)) if closures else (), None)

    def dump_episodes(self, scope: Scope) -> Iterator[Episode]:
        """A subtree's turns, in insertion order; see ``TransferStore.dump_episodes``."""
        where, params = _sql.scope_subtree(scope)
        for row in self._query(
                f"SELECT {_EPISODE_COLUMNS} FROM episodes WHERE {where} ORDER BY rowid", params):
            yield episode_of(row)

    def dump_waiting(self, scope: Scope) -> list[WaitingMark]:
        """A subtree's waiting turns; see ``TransferStore.dump_waiting``."""
        where, params = _sql.scope_subtree(scope, "e.")
        return [WaitingMark(eid, int(at), reason, speaker, meta)
                for eid, at, reason, speaker, meta in self._query(
                    "SELECT e.id, b.failed_at, b.reason, b.speaker, b.meta"
                    " FROM extraction_backlog b JOIN episodes e ON e.rowid = b.episode_rowid"
                    f" WHERE {where} ORDER BY e.rowid", params)]

    def dump_aliases(self, scope: Scope) -> list[AliasRecord]:
        """A subtree's learned aliases; see ``TransferStore.dump_aliases``."""
        where, params = _alias_subtree(scope)
        return [AliasRecord(scope_of(tenant, user, "", ""), alias, entity, learned, via)
                for tenant, user, alias, entity, learned, via in self._query(
                    "SELECT s_tenant, s_user, alias_key, entity_key, learned_at, via FROM"
                    f" entity_aliases WHERE {where} ORDER BY s_tenant, s_user, alias_key",
                    params)]

    # -- restoring ------------------------------------------------------------------
    def restore_conflicts(
        self, claims: Sequence[ClaimRecord], episodes: Sequence[Episode],
        aliases: Sequence[AliasRecord],
    ) -> list[Conflict]:
        """What stops a restore; see ``TransferStore.restore_conflicts``."""
        found: list[Conflict] = []
        place: dict[int, int] = {}
        for i, record in enumerate(claims):
            cid = record.claim.id
            rowid = claim_rowid(cid)
            if not rowid:
                found.append(Conflict("claim", i, f"{cid!r} is not a claim id this store can"
                                      " restore (c<rowid>-<8 hex digits>)"))
            elif rowid in place:
                found.append(Conflict("claim", i, f"claim {cid!r} needs row {rowid}, as claim"
                                      f" {claims[place[rowid]].claim.id!r} earlier in the file does"))
            else:
                place[rowid] = i
        for rowid, held in self._query("SELECT rowid, id FROM claims WHERE rowid = ANY(%s)",
                                       [list(place)]):
            cid = claims[place[rowid]].claim.id
            found.append(Conflict("claim", place[rowid], (
                f"claim {cid!r} is already in the store" if held == cid
                else f"claim {cid!r} needs row {rowid}, which holds claim {held!r}")))
        ids = {episode.id: i for i, episode in enumerate(episodes)}
        for (held,) in self._query("SELECT id FROM episodes WHERE id = ANY(%s)", [list(ids)]):
            found.append(Conflict("episode", ids[held], f"episode {held!r} is already in the store"))
        for i, alias in enumerate(aliases):
            problem = self._alias_conflict(alias)
            if problem is not None:
                found.append(Conflict("alias", i, problem))
        order = {"claim": 0, "episode": 1, "alias": 2}
        return sorted(found, key=lambda c: (order[c.kind], c.index))

    def _alias_conflict(self, alias: AliasRecord) -> str | None:
        rows = self._query(
            "SELECT entity_key FROM entity_aliases WHERE s_tenant = %s AND s_user = %s"
            " AND alias_key = %s", [alias.owner.tenant or "", alias.owner.user or "",
                                    alias.alias_key])
        if rows and rows[0][0] != alias.entity_key:
            return (f"alias {alias.alias_key!r} of {alias.owner} names {rows[0][0]!r} in"
                    f" the store, not {alias.entity_key!r}")
        return None

    def restore(
        self, claims: Sequence[ClaimRecord], claim_vectors: npt.NDArray[np.float32],
        episodes: Sequence[Episode], episode_vectors: npt.NDArray[np.float32],
        aliases: Sequence[AliasRecord],
    ) -> dict[str, int]:
        """Put records back as they were; see ``TransferStore.restore``. A taken row or
        a held turn id fails on the table's own key, rolling everything back."""
        with self._writing() as conn:
            for alias in aliases:
                problem = self._alias_conflict(alias)
                if problem is not None:
                    raise StoreError(problem)
            learned = sum(self._exec(conn, (
                "INSERT INTO entity_aliases (s_tenant, s_user, alias_key, entity_key,"
                " learned_at, via) VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING"),
                [a.owner.tenant or "", a.owner.user or "", a.alias_key, a.entity_key,
                 a.learned_at, a.via]).rowcount for a in aliases)
            if episodes:
                self._restore_episodes(conn, episodes, episode_vectors)
            if claims:
                self._restore_claims(conn, claims, claim_vectors)
        return {"claims": len(claims), "episodes": len(episodes), "aliases": learned}

    def _restore_episodes(self, conn: Any, episodes: Sequence[Episode],
                          vectors: npt.NDArray[np.float32]) -> None:
        self._check_width(conn, vectors)
        rowids = self._rowids(conn, "episodes", len(episodes))
        lengths = self._index(conn, "episodes", rowids, [e.content for e in episodes])
        self._many(conn, (
            "INSERT INTO episodes (rowid, id, s_tenant, s_user, s_agent, s_session, role,"
            " content, ts, recorded_at, content_hash, tokens, emb)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"),
            [(rowid, e.id, *scope_levels(e.scope), e.role, e.content, to_micros(e.ts, "ts"),
              to_micros(e.recorded_at, "recorded_at"), content_hash(e.content), length, vector)
             for rowid, e, length, vector in zip(rowids, episodes, lengths, vectors)])

    def _restore_claims(self, conn: Any, claims: Sequence[ClaimRecord],
                        vectors: npt.NDArray[np.float32]) -> None:
        self._check_width(conn, vectors)
        rowids = [claim_rowid(record.claim.id) for record in claims]
        if not all(rowids):
            raise StoreError("a claim id this store cannot restore (c<rowid>-<8 hex digits>)")
        lengths = self._index(conn, "claims", rowids, [r.claim.text for r in claims])
        rows: list[tuple[object, ...]] = []
        for record, rowid, length, vector in zip(claims, rowids, lengths, vectors):
            claim = record.claim
            _, row = claim_row(claim, rowid, None, record.subject_key)
            rows.append((rowid, claim.id, *row[2:24], vector, row[25], length, claim.salience,
                         record.storage, record.observed_at, record.ended_by,
                         bool(record.closures)))
        self._many(conn, _RESTORE, rows)
        self._many(conn, _LINK, [(s, rowid) for record, rowid in zip(claims, rowids)
                                 for s in dict.fromkeys(record.claim.sources)])
        self._many(conn, "INSERT INTO claim_closures (claim_rowid, known_at, valid_to, ended_by)"
                   " VALUES (%s, %s, %s, %s)",
                   [(rowid, c.known_at, c.valid_to, c.ended_by)
                    for record, rowid in zip(claims, rowids) for c in record.closures])
        self._exec(conn, "SELECT setval('claims_rowid', %s) FROM claims_rowid"
                   " WHERE NOT is_called OR last_value < %s", [max(rowids), max(rowids)])
