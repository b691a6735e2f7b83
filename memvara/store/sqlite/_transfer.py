"""Export and import: a scope's rows dumped whole, and put back as they were.

A claim goes back at the rowid its id names (``c<rowid>-<hash>``), so the id still
finds it with one primary-key probe; a rowid already taken is a conflict, reported,
never overwritten. Turns get new rowids in their old order (their ids do not encode
one). The text index and the vectors are brought up to date in the same transaction,
including for a rowid at or below the text index's watermark (a claim erased and now
restored), which the watermark's range insert would never reach.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.model import Episode, Scope
from ..._domain.time import from_micros, to_micros
from ..._errors import StoreError
from .._transfer import AliasRecord, ClaimRecord, Closure, Conflict, WaitingMark
from . import _sql
from ._core import ADVANCE_VECTOR_WATERMARK, StoreCore
from ._episodes import content_hash
from ._log import keep_actors
from ._rows import (
    CLAIM_COLUMNS, INSERT_SQL, claim_row, claim_rowid, decode_claim, scope_levels, scope_of,
)
from ._writes import LINK_SOURCE_SQL

__all__ = ["Transfer"]

_rowid = claim_rowid.__wrapped__
"""``claim_rowid`` past its cache: a restore parses each id once or twice, and a
hundred thousand of them would only push out the ids searches keep asking for."""

_FETCH = 1024
"""Rows a dump fetches from its cursor at a time."""
_CHUNK = 400
"""Values a lookup binds in one ``IN (...)`` list."""

_DUMP_CLAIMS = (
    f"SELECT {CLAIM_COLUMNS}, subject_key, ended_by, salience_base, observed_at,"
    " CASE WHEN revised THEN (SELECT json_group_array(json_array(known_at, valid_to, ended_by))"
    " FROM claim_closures WHERE claim_rowid = claims.rowid) END,"
    " (SELECT actor FROM claim_log WHERE claim_rowid = claims.rowid)"
    " FROM claims WHERE {where} ORDER BY rowid"
)
"""Every claim of a subtree with what ``Claim`` does not show; the earlier ends only
for a revised row (the flag says whether ``claim_closures`` holds any)."""
_DUMP_EPISODES = (
    "SELECT id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"
    " FROM episodes WHERE {where} ORDER BY rowid"
)
_HEAD, _VALUES = INSERT_SQL[:-1].split(" VALUES ")
_RESTORE_SQL = (
    f"{_HEAD[:-1]}, salience, salience_base, observed_at, ended_by, revised)"
    f" VALUES {_VALUES}, ?, ?, ?, ?, ?)"
)
"""``INSERT_SQL`` and the columns only a restore sets (a new claim has their defaults)."""


def _alias_subtree(scope: Scope) -> tuple[str, list[object]]:
    """``_sql.scope_subtree`` for aliases, which are owned at ``(tenant, user)``: a
    scope set below the user owns none."""
    if _sql.deepest_level(scope) > 1:
        return "0", []
    return _sql.scope_subtree(Scope(scope.tenant, scope.user))


class Transfer(StoreCore):
    """``TransferStore``: the dumps, ``restore_conflicts`` and ``restore``."""

    def dump_counts(self, scope: Scope) -> dict[str, int]:
        """How many rows the dumps give; see ``TransferStore.dump_counts``."""
        where, params = _sql.scope_subtree(scope)
        alias_where, alias_params = _alias_subtree(scope)
        claims, episodes, aliases = self._query(
            f"SELECT (SELECT count(*) FROM claims WHERE {where}),"
            f" (SELECT count(*) FROM episodes WHERE {where}),"
            f" (SELECT count(*) FROM entity_aliases WHERE {alias_where})",
            [*params, *params, *alias_params],
        )[0]
        return {"claims": claims, "episodes": episodes, "aliases": aliases}

    def _rows(self, sql: str, params: Sequence[object]) -> Iterator[Any]:
        """The rows of one query, fetched ``_FETCH`` at a time."""
        with self._reading() as conn:
            cursor = conn.execute(sql, params)
            while rows := cursor.fetchmany(_FETCH):
                yield from rows

    def dump_claims(self, scope: Scope) -> Iterator[ClaimRecord]:
        """A subtree's claims; see ``TransferStore.dump_claims``."""
        where, params = _sql.scope_subtree(scope)
        for row in self._rows(_DUMP_CLAIMS.format(where=where), params):
            subject_key, ended_by, storage, observed_at, closures, actor = row[25:]
            yield ClaimRecord(
                decode_claim(row, None), subject_key, ended_by, float(storage), observed_at,
                tuple(Closure(*c) for c in sorted(json.loads(closures))) if closures else (),
                actor,
            )

    def dump_episodes(self, scope: Scope) -> Iterator[Episode]:
        """A subtree's turns; see ``TransferStore.dump_episodes``."""
        where, params = _sql.scope_subtree(scope)
        for eid, tenant, user, agent, session, role, content, ts, recorded in self._rows(
                _DUMP_EPISODES.format(where=where), params):
            yield Episode(
                content=content, role=role, ts=from_micros(ts), recorded_at=from_micros(recorded),
                scope=scope_of(tenant, user, agent, session), id=eid,
            )

    def dump_waiting(self, scope: Scope) -> list[WaitingMark]:
        """A subtree's waiting turns; see ``TransferStore.dump_waiting``."""
        where, params = _sql.scope_subtree(scope, "e.")
        return [WaitingMark(eid, at, reason, speaker, meta)
                for eid, at, reason, speaker, meta in self._query(
                    "SELECT e.id, b.failed_at, b.reason, b.speaker, b.meta"
                    " FROM extraction_backlog b JOIN episodes e ON e.rowid = b.episode_rowid"
                    f" WHERE {where} ORDER BY e.rowid", params)]

    def dump_aliases(self, scope: Scope) -> list[AliasRecord]:
        """A subtree's learned aliases; see ``TransferStore.dump_aliases``."""
        where, params = _alias_subtree(scope)
        return [
            AliasRecord(scope_of(tenant, user, "", ""), alias, entity, learned, via)
            for tenant, user, alias, entity, learned, via in self._query(
                "SELECT s_tenant, s_user, alias_key, entity_key, learned_at, via"
                f" FROM entity_aliases WHERE {where} ORDER BY s_tenant, s_user, alias_key",
                params,
            )
        ]

    # -- restoring ------------------------------------------------------------------
    def restore_conflicts(
        self, claims: Sequence[ClaimRecord], episodes: Sequence[Episode],
        aliases: Sequence[AliasRecord],
    ) -> list[Conflict]:
        """What stops a restore; see ``TransferStore.restore_conflicts``."""
        found = self._claim_conflicts(claims)
        ids = {episode.id: i for i, episode in enumerate(episodes)}
        wanted = list(ids)
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            for (held,) in self._query(
                    f"SELECT id FROM episodes WHERE id IN ({','.join('?' * len(chunk))})", chunk):
                found.append(Conflict(
                    "episode", ids[held], f"episode {held!r} is already in the store"))
        for i, alias in enumerate(aliases):
            problem = self._alias_conflict(alias)
            if problem is not None:
                found.append(Conflict("alias", i, problem))
        order = {"claim": 0, "episode": 1, "alias": 2}
        return sorted(found, key=lambda c: (order[c.kind], c.index))

    def _claim_conflicts(self, claims: Sequence[ClaimRecord]) -> list[Conflict]:
        found: list[Conflict] = []
        place: dict[int, int] = {}
        for i, record in enumerate(claims):
            cid = record.claim.id
            rowid = _rowid(cid)
            if not rowid:
                found.append(Conflict("claim", i, f"{cid!r} is not a claim id this store can"
                                      " restore (c<rowid>-<8 hex digits>)"))
            elif rowid in place:
                other = claims[place[rowid]].claim.id
                found.append(Conflict("claim", i, f"claim {cid!r} needs row {rowid},"
                                      f" as claim {other!r} earlier in the file does"))
            else:
                place[rowid] = i
        (top,) = self._query("SELECT coalesce(max(rowid), 0) FROM claims")[0]
        wanted = [rowid for rowid in place if rowid <= top]  # above the top: all free
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            for rowid, held in self._query(
                    f"SELECT rowid, id FROM claims WHERE rowid IN ({','.join('?' * len(chunk))})",
                    chunk):
                cid = claims[place[rowid]].claim.id
                found.append(Conflict("claim", place[rowid], (
                    f"claim {cid!r} is already in the store" if held == cid
                    else f"claim {cid!r} needs row {rowid}, which holds claim {held!r}")))
        return found

    def _alias_conflict(self, alias: AliasRecord) -> str | None:
        """Why ``alias`` cannot be restored (its owner maps the key elsewhere), or None."""
        rows = self._query(
            "SELECT entity_key FROM entity_aliases WHERE s_tenant = ? AND s_user = ?"
            " AND alias_key = ?",
            [alias.owner.tenant or "", alias.owner.user or "", alias.alias_key],
        )
        if rows and rows[0][0] != alias.entity_key:
            return (f"alias {alias.alias_key!r} of {alias.owner} names {rows[0][0]!r} in"
                    f" the store, not {alias.entity_key!r}")
        return None

    def restore(
        self, claims: Sequence[ClaimRecord], claim_vectors: npt.NDArray[np.float32],
        episodes: Sequence[Episode], episode_vectors: npt.NDArray[np.float32],
        aliases: Sequence[AliasRecord],
    ) -> dict[str, int]:
        """Put records back as they were; see ``TransferStore.restore``.

        A conflicting claim or turn fails on the table's own key (a taken rowid, a held
        turn id), which rolls the transaction back; an alias is checked first, since
        ``INSERT OR IGNORE`` keeps the one the owner has for the same entity.
        """
        with self._writing() as conn:
            self._index_all(conn)  # every row up to the watermark is in the text index
            for alias in aliases:
                problem = self._alias_conflict(alias)
                if problem is not None:
                    raise StoreError(problem)
            learned = sum(conn.execute(
                "INSERT OR IGNORE INTO entity_aliases"
                " (s_tenant, s_user, alias_key, entity_key, learned_at, via)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (a.owner.tenant or "", a.owner.user or "", a.alias_key, a.entity_key,
                 a.learned_at, a.via),
            ).rowcount for a in aliases)
            self._restore_episodes(conn, episodes, episode_vectors)
            self._restore_claims(conn, claims, claim_vectors)
            self._index_all(conn)
        return {"claims": len(claims), "episodes": len(episodes), "aliases": learned}

    def _restore_episodes(
        self, conn: sqlite3.Connection, episodes: Sequence[Episode],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        """New rowids, in order, above every row the text index has seen; vectors first,
        since their slots are rows no one holds."""
        if not episodes:
            return
        last, _, slots = self._reserve(conn, "episodes", len(episodes), vectors)
        conn.executemany(
            "INSERT INTO episodes (rowid, id, s_tenant, s_user, s_agent, s_session, role,"
            " content, ts, recorded_at, content_hash, vec_slot)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(last + offset, e.id, *scope_levels(e.scope), e.role, e.content,
              to_micros(e.ts, "ts"), to_micros(e.recorded_at, "recorded_at"),
              content_hash(e.content), slot)
             for offset, (e, slot) in enumerate(zip(episodes, slots), start=1)],
        )
        self._log_inserted("turns_added", range(last + 1, last + 1 + len(episodes)))

    def _restore_claims(
        self, conn: sqlite3.Connection, claims: Sequence[ClaimRecord],
        vectors: npt.NDArray[np.float32],
    ) -> None:
        if not claims:
            return
        (indexed,) = conn.execute(
            "SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_claims'").fetchone()
        rows: list[tuple[object, ...]] = []
        links: list[tuple[str, int]] = []
        closures: list[tuple[int, int, int, str | None]] = []
        below: list[tuple[int, str]] = []  # rows the watermark's range insert will not reach
        rowids: list[int] = []
        for record in claims:
            claim = record.claim
            rowid = _rowid(claim.id)
            if not rowid:
                raise StoreError(f"{claim.id!r} is not a claim id this store can restore")
            _, row = claim_row(claim, rowid, rowid, record.subject_key)
            rows.append((rowid, claim.id, *row[2:], claim.salience, record.storage,
                         record.observed_at, record.ended_by, int(bool(record.closures))))
            rowids.append(rowid)
            links.extend((source, rowid) for source in dict.fromkeys(claim.sources))
            closures.extend((rowid, c.known_at, c.valid_to, c.ended_by) for c in record.closures)
            if rowid <= indexed:
                below.append((rowid, claim.text))
        conn.executemany(_RESTORE_SQL, rows)
        self._log_inserted("added", rowids)
        self._write_vectors(conn, "claims", rowids, vectors)
        conn.execute(ADVANCE_VECTOR_WATERMARK)
        conn.executemany(LINK_SOURCE_SQL, links)
        conn.executemany(
            "INSERT INTO claim_closures (claim_rowid, known_at, valid_to, ended_by)"
            " VALUES (?, ?, ?, ?)", closures)
        conn.executemany("INSERT INTO claims_fts (rowid, text) VALUES (?, ?)", below)
        keep_actors(conn, [(rowid, record.actor) for rowid, record in zip(rowids, claims)
                           if record.actor is not None])
