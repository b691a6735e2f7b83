"""Retention on PostgreSQL: claims moved out of ``claims`` into ``claims_archive`` and
back, as the SQLite store does (``store/sqlite/_archive.py``).

A move is a copy and a delete in one transaction: the copy keeps every column (the
vector too) and the earlier ends as JSON; the delete takes the row's tokens, source
links and earlier ends with it, so every read stops seeing it exactly as if it had been
erased. A restore puts the row back at its id and rowid and indexes its text again. The
write log records the moves as ``archived`` and ``restored``, not as erasures and adds.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from ..._domain.model import Claim, Scope
from .._governance import still_archived
from .._transfer import ClaimRecord
from ..sqlite._rows import ARCHIVED_COLUMNS, archived_record, claim_rowid, decode_claim
from . import _sql
from ._log import WriteLog
from ._writes import CLAIM_COLUMNS

__all__ = ["Archive"]

ARCHIVE_DDL = (
    # the claims' own columns, whatever they are when the archive is made
    "CREATE TABLE claims_archive (LIKE claims INCLUDING DEFAULTS)",
    "ALTER TABLE claims_archive ADD PRIMARY KEY (rowid), ADD COLUMN archived_at BIGINT NOT NULL,"
    " ADD COLUMN closures TEXT",
    "CREATE INDEX claims_archive_slot ON claims_archive (s_user, s_tenant, s_agent, s_session,"
    " subject_key, predicate)",
)

_STOPPED = ("CASE WHEN invalidated_at IS NOT NULL THEN 'retired'"
            " WHEN valid_to IS NOT NULL AND valid_to <= %s THEN 'ended' ELSE 'live' END")
"""A row's state at the instant given (``Claim.state``'s rule, in SQL)."""

_OLD = {
    "ended": "(invalidated_at IS NULL AND valid_to IS NOT NULL AND valid_to < %s)",
    "retired": "(invalidated_at IS NOT NULL AND invalidated_at < %s)",
    "live": "(invalidated_at IS NULL AND (valid_to IS NULL OR valid_to > %s)"
            " AND coalesce(observed_at, recorded_at) < %s)",
}
"""When a row of each state is old (a live row's condition takes ``now`` first)."""

_CLOSURES = (
    "CASE WHEN revised THEN (SELECT json_agg(json_build_array(known_at, valid_to, ended_by))::text"
    " FROM claim_closures WHERE claim_rowid = claims.rowid) END"
)


class Archive(WriteLog):
    """``archive_claims``, ``restore_archived`` and ``archived_claims``."""

    def _on_open(self, writer: Any) -> None:
        super()._on_open(writer)
        if not self._read_only:
            self._ensure_tables(writer, "claims_archive", ARCHIVE_DDL)
        self._claim_columns = ", ".join(r[0] for r in self._query(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = %s"
            " AND table_name = 'claims' ORDER BY ordinal_position", [self._schema]))

    def archive_claims(
        self, scope: Scope, cutoffs: Mapping[str, int], keep_at_most: int | None, now: int,
    ) -> dict[str, int]:
        """Move old rows of ``scope``'s subtree to the archive; see ``ArchiveStore``."""
        where, params = _sql.scope_subtree(scope)
        old = " OR ".join(_OLD[state] for state in cutoffs) or "FALSE"
        cut = [v for state in cutoffs for v in ([now, cutoffs[state]] if state == "live"
                                                else [cutoffs[state]])]
        with self._writing() as conn:
            picked = [r[0] for r in self._exec(conn, (
                f"SELECT rowid FROM claims WHERE {where} AND emb IS NOT NULL AND ({old})"
                " ORDER BY rowid FOR UPDATE"), [*params, *cut]).fetchall()]
            evicted = 0
            if keep_at_most is not None and cutoffs:
                (held,) = self._exec(conn, f"SELECT count(*) FROM claims WHERE {where}",
                                     params).fetchone()
                excess = held - len(picked) - keep_at_most
                if excess > 0:
                    more = [r[0] for r in self._exec(conn, (
                        f"SELECT rowid FROM claims WHERE {where} AND emb IS NOT NULL"
                        f" AND NOT rowid = ANY(%s) AND ({_STOPPED}) = ANY(%s)"
                        f" ORDER BY ({_STOPPED}) <> 'ended', salience,"
                        " coalesce(invalidated_at, valid_to, observed_at, recorded_at), rowid"
                        " LIMIT %s FOR UPDATE"),
                        [*params, picked, now, list(cutoffs), now, excess]).fetchall()]
                    evicted = len(more)
                    picked += more
            counts = dict(self._exec(conn, f"SELECT {_STOPPED}, count(*) FROM claims"
                                     " WHERE rowid = ANY(%s) GROUP BY 1", [now, picked]).fetchall())
            self._move(conn, picked, [now] * len(picked))
        return {**{state: int(counts.get(state, 0)) for state in cutoffs}, "evicted": evicted}

    def _move(self, conn: Any, rowids: Sequence[int], ats: Sequence[int]) -> None:
        """Move these claims to the archive, each archived at its instant."""
        columns = self._claim_columns
        self._exec(conn, (
            f"INSERT INTO claims_archive ({columns}, archived_at, closures)"
            f" SELECT {', '.join(f'claims.{c}' for c in columns.split(', '))}, a.at, {_CLOSURES}"
            " FROM claims JOIN unnest(%s::bigint[], %s::bigint[]) AS a(row, at)"
            " ON claims.rowid = a.row"), [list(rowids), list(ats)])
        gone = self._exec(conn, "DELETE FROM claims WHERE rowid = ANY(%s)"
                          " RETURNING rowid, tokens", [list(rowids)]).fetchall()
        for table in ("claim_sources", "claim_closures"):
            self._exec(conn, f"DELETE FROM {table} WHERE claim_rowid = ANY(%s)", [list(rowids)])
        self._unindex(conn, "claims", [r[0] for r in gone], sum(int(r[1]) for r in gone))
        self._relabel(conn, "erased", "archived", rowids)

    def archive_restored(self, archived: Sequence[tuple[str, int]]) -> int:
        """Inside an import's transaction: move claims it just restored to the archive,
        each at its own instant; see ``GovernanceTransferStore``."""
        with self._writing() as conn:
            self._move(conn, [claim_rowid(i) for i, _ in archived], [at for _, at in archived])
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
        if claim_ids is not None:
            where += " AND rowid = ANY(%s) AND id = ANY(%s)"
            params = [*params, [claim_rowid(i) for i in claim_ids], list(claim_ids)]
        columns = self._claim_columns
        with self._writing() as conn:
            rows = self._exec(conn, f"SELECT rowid, text, id FROM claims_archive WHERE {where}"
                              " ORDER BY rowid FOR UPDATE", params).fetchall()
            rowids = [int(r[0]) for r in rows]
            if claim_ids is not None:
                still_archived(claim_ids, [r[2] for r in rows])
            self._exec(conn, f"INSERT INTO claims ({columns}) SELECT {columns} FROM claims_archive"
                       " WHERE rowid = ANY(%s)", [rowids])
            self._exec(conn, (
                "INSERT INTO claim_closures (claim_rowid, known_at, valid_to, ended_by)"
                " SELECT a.rowid, (c->>0)::bigint, (c->>1)::bigint, c->>2 FROM claims_archive a,"
                " json_array_elements(a.closures::json) c WHERE a.rowid = ANY(%s)"), [rowids])
            self._exec(conn, (
                "INSERT INTO claim_sources (source, claim_rowid) SELECT s, a.rowid"
                " FROM claims_archive a, json_array_elements_text(a.sources::json) s"
                " WHERE a.rowid = ANY(%s) ON CONFLICT DO NOTHING"), [rowids])
            self._index(conn, "claims", rowids, [r[1] for r in rows])
            ids = [r[0] for r in self._exec(conn, "DELETE FROM claims_archive WHERE rowid = ANY(%s)"
                                            " RETURNING id", [rowids]).fetchall()]
            self._relabel(conn, "added", "restored", rowids)
        return sorted(ids, key=claim_rowid)

    def archived_claims(
        self, scope: Scope, slot: tuple[str, str] | None = None,
    ) -> list[tuple[Claim, int]]:
        """Archived rows of ``scope``'s subtree (of one slot), oldest row first, each with
        when it was archived; see ``ArchiveStore``."""
        where, params = _sql.scope_subtree(scope)
        if slot is not None:
            where += " AND subject_key = %s AND predicate = %s"
            params = [*params, *slot]
        rows = self._query(f"SELECT {CLAIM_COLUMNS}, archived_at FROM claims_archive"
                           f" WHERE {where} ORDER BY rowid", params)
        return [(decode_claim(row, None), int(row[25])) for row in rows]
