"""Retention: claims moved out of ``claims`` into ``claims_archive`` and back.

A move is a copy and a delete in one transaction. The delete runs the table's own
triggers (the text index entry, the source links, the earlier ends go), so every read
stops seeing the row exactly as if it had been erased; the copy keeps every column, the
earlier ends as JSON, and the vector stays in its sidecar slot, so a restore puts back
the row a read saw before, with its id, its search entry and its vector. Rows are
picked into a temporary table first, so 100,000 of them cost three set statements,
not 100,000 probes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterator, Mapping, Sequence

from ..._domain.model import Claim, Scope
from ..._errors import StoreError
from .._governance import still_archived
from .._transfer import ClaimRecord
from . import _sql
from ._core import StoreCore
from ._log import relabel
from ._rows import ARCHIVED_COLUMNS, CLAIM_COLUMNS, archived_record, claim_rowid, decode_claim

__all__ = ["Archive"]

_PICKED = "temp.mv_archive_picked"

_STOPPED = (
    "CASE WHEN invalidated_at IS NOT NULL THEN 'retired'"
    " WHEN valid_to IS NOT NULL AND valid_to <= :now THEN 'ended' ELSE 'live' END"
)
"""A row's state at ``:now`` as believed now (``Claim.state``'s rule, in SQL)."""

_OLD = {
    "ended": "(invalidated_at IS NULL AND valid_to IS NOT NULL AND valid_to < :ended)",
    "retired": "(invalidated_at IS NOT NULL AND invalidated_at < :retired)",
    "live": "(invalidated_at IS NULL AND (valid_to IS NULL OR valid_to > :now)"
            " AND coalesce(observed_at, recorded_at) < :live)",
}
"""When a row of each state is old: it stopped holding (ended: its valid time's end;
retired: belief's end) before the cutoff; a live row, last observed before it."""

_EVICT_ORDER = (
    f"ORDER BY ({_STOPPED}) != 'ended', salience,"
    " coalesce(invalidated_at, valid_to, observed_at, recorded_at), rowid"
)
"""The capacity bound's order: ended rows first, least salient first, then the one that
stopped holding earliest."""

_CLOSURES = (
    "CASE WHEN revised THEN (SELECT json_group_array(json_array(known_at, valid_to, ended_by))"
    " FROM claim_closures WHERE claim_rowid = claims.rowid) END"
)


class Archive(StoreCore):
    """``archive_claims``, ``restore_archived`` and ``archived_claims``."""

    _claim_columns: str | None = None

    def _columns(self, conn: sqlite3.Connection) -> str:
        """Every column of ``claims``, which ``claims_archive`` must also have."""
        if self._claim_columns is None:
            have = [r[1] for r in conn.execute("PRAGMA table_info(claims)")]
            kept = {r[1] for r in conn.execute("PRAGMA table_info(claims_archive)")}
            missing = [c for c in have if c not in kept]
            if missing:
                raise StoreError(f"claims_archive lacks the claim columns {missing}: a"
                                 " migration added them to claims only")
            self._claim_columns = ", ".join(have)
        return self._claim_columns

    def _pick(self, conn: sqlite3.Connection, sql: str, params: Mapping[str, object] | Sequence[object]) -> int:
        conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_PICKED[5:]} (rowid INTEGER PRIMARY KEY)")
        conn.execute(f"DELETE FROM {_PICKED}")
        return conn.execute(f"INSERT OR IGNORE INTO {_PICKED} (rowid) {sql}", params).rowcount

    def archive_claims(
        self, scope: Scope, cutoffs: Mapping[str, int], keep_at_most: int | None, now: int,
    ) -> dict[str, int]:
        """Move old rows of ``scope``'s subtree to the archive; see ``ArchiveStore``."""
        where, params = _sql.scope_subtree(scope)
        named = dict(zip((f"s{i}" for i in range(len(params))), params))
        where = _named(where, len(params))
        values: dict[str, object] = {**named, "now": now, **cutoffs}
        old = " OR ".join(_OLD[state] for state in cutoffs) or "0"
        with self._writing() as conn:
            columns = self._columns(conn)
            self._index_all(conn)  # every row below the text watermark: new rows go above
            picked = self._pick(conn, (
                f"SELECT rowid FROM claims WHERE {where} AND vec_slot IS NOT NULL AND ({old})"),
                values)
            evicted = 0
            if keep_at_most is not None and cutoffs:
                (held,) = conn.execute(f"SELECT count(*) FROM claims WHERE {where}", named).fetchone()
                excess = held - picked - keep_at_most
                if excess > 0:
                    states = ",".join(f"'{state}'" for state in cutoffs)
                    evicted = conn.execute(
                        f"INSERT INTO {_PICKED} (rowid) SELECT rowid FROM claims WHERE {where}"
                        f" AND vec_slot IS NOT NULL AND rowid NOT IN (SELECT rowid FROM {_PICKED})"
                        f" AND ({_STOPPED}) IN ({states}) {_EVICT_ORDER} LIMIT :excess",
                        {**values, "excess": excess}).rowcount
            counts = dict(conn.execute(
                f"SELECT {_STOPPED}, count(*) FROM claims WHERE rowid IN (SELECT rowid FROM {_PICKED})"
                " GROUP BY 1", {"now": now}).fetchall())
            self._move(conn, columns, "?", [now])
        return {**{state: int(counts.get(state, 0)) for state in cutoffs}, "evicted": evicted}

    def _move(self, conn: sqlite3.Connection, columns: str, at: str, params: Sequence[object]) -> None:
        """Move the picked claims to the archive, each archived at ``at`` (SQL)."""
        conn.execute(
            f"INSERT INTO claims_archive ({columns}, archived_at, closures)"
            f" SELECT {columns}, {at}, {_CLOSURES} FROM claims"
            f" WHERE rowid IN (SELECT rowid FROM {_PICKED})", params)
        conn.execute(f"DELETE FROM claims WHERE rowid IN (SELECT rowid FROM {_PICKED})")
        relabel(conn, "erased", "archived", _PICKED)
        self._after_commit.append(self._tail.close)  # the in-memory text mirror

    def archive_restored(self, archived: Sequence[tuple[str, int]]) -> int:
        """Inside an import's transaction: move claims it just restored to the archive,
        each at its own instant; see ``GovernanceTransferStore``."""
        if not archived:
            return 0
        with self._writing() as conn:
            columns = self._columns(conn)
            self._pick(conn, "SELECT rowid FROM claims WHERE id IN (SELECT json_extract(value, '$[0]')"
                       " FROM json_each(?))", [json.dumps(archived)])
            self._move(conn, columns, "(SELECT json_extract(value, '$[1]') FROM json_each(?)"
                       " WHERE json_extract(value, '$[0]') = claims.id)", [json.dumps(archived)])
        return len(archived)

    def dump_archived(self, scope: Scope) -> Iterator[tuple[ClaimRecord, int]]:
        """The archive of ``scope``'s subtree as export records, row order, each with when
        it was archived; see ``GovernanceTransferStore``."""
        where, params = _sql.scope_subtree(scope)
        for row in self._query(f"SELECT {CLAIM_COLUMNS}, {ARCHIVED_COLUMNS} FROM claims_archive"
                               f" WHERE {where} ORDER BY rowid", params):
            yield archived_record(row)

    def restore_archived(self, scope: Scope, claim_ids: Collection[str] | None) -> list[str]:
        """Put archived rows back; see ``ArchiveStore``."""
        where, params = _sql.scope_subtree(scope)
        chosen = ""
        if claim_ids is not None:
            rowids = [claim_rowid(i) for i in claim_ids]
            chosen = f" AND rowid IN ({','.join('?' * len(rowids))}) AND id IN ({','.join('?' * len(rowids))})"
            params = [*params, *rowids, *claim_ids]
        with self._writing() as conn:
            columns = self._columns(conn)
            self._pick(conn, f"SELECT rowid FROM claims_archive WHERE {where}{chosen}", params)
            if claim_ids is not None:
                still_archived(claim_ids, [r for (r,) in conn.execute(
                    f"SELECT id FROM claims_archive WHERE rowid IN (SELECT rowid FROM {_PICKED})")])
            back = f"rowid IN (SELECT rowid FROM {_PICKED})"
            conn.execute(f"INSERT INTO claims ({columns}) SELECT {columns} FROM claims_archive"
                         f" WHERE {back}")
            conn.execute(
                "INSERT OR REPLACE INTO claim_closures (claim_rowid, known_at, valid_to, ended_by)"
                " SELECT a.rowid, json_extract(c.value, '$[0]'), json_extract(c.value, '$[1]'),"
                " json_extract(c.value, '$[2]') FROM claims_archive a, json_each(a.closures) c"
                f" WHERE a.{back} AND a.closures IS NOT NULL")
            conn.execute(
                "INSERT OR IGNORE INTO claim_sources (source, claim_rowid) SELECT s.value, a.rowid"
                f" FROM claims_archive a, json_each(a.sources) s WHERE a.{back}"
                " AND a.sources IS NOT NULL")
            # below the text watermark, so the range insert never reaches them
            conn.execute(f"INSERT INTO claims_fts (rowid, text) SELECT rowid, text FROM claims_archive"
                         f" WHERE {back}")
            ids = [r[0] for r in conn.execute(
                f"DELETE FROM claims_archive WHERE {back} RETURNING id").fetchall()]
            self._log_inserted("restored", [r for (r,) in conn.execute(f"SELECT rowid FROM {_PICKED}")])
            self._after_commit.append(self._tail.close)
        return sorted(ids, key=claim_rowid)

    def archived_claims(
        self, scope: Scope, slot: tuple[str, str] | None = None,
    ) -> list[tuple[Claim, int]]:
        """Archived rows of ``scope``'s subtree (of one slot), oldest row first, each with
        when it was archived; see ``ArchiveStore``."""
        where, params = _sql.scope_subtree(scope)
        if slot is not None:
            where += " AND subject_key = ? AND predicate = ?"
            params = [*params, *slot]
        rows = self._query(f"SELECT {CLAIM_COLUMNS}, archived_at FROM claims_archive"
                           f" WHERE {where} ORDER BY rowid", params)
        return [(decode_claim(row, None), int(row[25])) for row in rows]


def _named(where: str, count: int) -> str:
    """``scope_subtree``'s ``?`` placeholders as ``:s0``, ``:s1``, ... (the prune's other
    values are named)."""
    for i in range(count):
        where = where.replace("?", f":s{i}", 1)
    return where
