"""Erasure: a claim or a scope removed from every place its text lives (the rows, the
FTS index, the vector sidecar, the write-ahead log), unlike retiring, which keeps the row.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Collection, Sequence

from ..._domain.model import Scope
from . import _sql
from .._scrubbed_claims import without_sources
from ._core import StoreCore
from ._rows import claim_rowid
from ._translate import translate

__all__ = ["Erasure"]

_ERASE_COUNTS = ("claims", "episodes", "embeddings", "sources")


class Erasure(StoreCore):
    """``erase_claim`` and ``purge``."""

    def _scrub(self, conn: sqlite3.Connection, fts_tables: Collection[str]) -> None:
        """Merge FTS segments so deleted tokens leave the index, then truncate the WAL."""
        for table in fts_tables:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        # The rows searches mirrored in memory (``_tail``) hold text too: dropped.
        self._after_commit.append(self._tail.close)
        if not self._memory:
            self._after_commit.append(self._checkpoint)

    def _checkpoint(self, wait: bool = True) -> None:
        """Copy the log into the file and truncate it. While another connection reads a
        snapshot that needs the log (after waiting ``busy_timeout`` for it the first
        time), its frames, erased text among them, stay: truncating is tried again after
        each later commit, without waiting, until it succeeds."""
        try:
            if not wait:
                self._writer.execute("PRAGMA busy_timeout = 0")
            ((busy, _, _),) = self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
            if not wait:
                self._writer.execute(f"PRAGMA busy_timeout = {round(self._busy * 1000)}")
        except sqlite3.Error as exc:  # pragma: no cover - the erase itself has committed
            raise translate(exc) from exc
        if busy:
            self._after_commit.append(functools.partial(self._checkpoint, wait=False))

    def _drop_references(self, conn: sqlite3.Connection, gone: list[str]) -> None:
        """Other rows naming an erased claim as what ended or retired them (live,
        archived, an earlier end) or as a source lose the id: it carries a digest of the
        claim's content, which would confirm a guess of the erased value."""
        ids = json.dumps(gone)
        for table in ("claims", "claims_archive"):
            for column in ("invalidated_by", "ended_by"):
                conn.execute(f"UPDATE {table} SET {column} = NULL"
                             f" WHERE {column} IN (SELECT value FROM json_each(?))", (ids,))
        conn.execute("UPDATE claim_closures SET ended_by = NULL"
                     " WHERE ended_by IN (SELECT value FROM json_each(?))", (ids,))
        citing = conn.execute(  # claims citing one as their source keep the rest
            "SELECT rowid, sources FROM claims WHERE rowid IN (SELECT claim_rowid FROM"
            " claim_sources WHERE source IN (SELECT value FROM json_each(?)))", (ids,)).fetchall()
        citing_archived = conn.execute(
            "SELECT rowid, sources FROM claims_archive WHERE sources IS NOT NULL AND EXISTS"
            " (SELECT 1 FROM json_each(claims_archive.sources) s WHERE s.value IN"
            " (SELECT value FROM json_each(?)))", (ids,)).fetchall()
        dropped = set(gone)
        for table, rows in (("claims", citing), ("claims_archive", citing_archived)):
            conn.executemany(f"UPDATE {table} SET sources = ? WHERE rowid = ?",
                             [(without_sources(sources, dropped), rowid) for rowid, sources in rows])
        conn.execute("DELETE FROM claim_sources WHERE source IN (SELECT value FROM json_each(?))",
                     (ids,))

    def _delete_episodes(self, conn: sqlite3.Connection, where: str, params: Sequence[object]) -> tuple[int, list[int]]:
        rows = conn.execute(
            f"DELETE FROM episodes WHERE {where} RETURNING vec_slot, rowid", params
        ).fetchall()
        gone = [r[1] for r in rows]
        for start in range(0, len(gone), 400):  # their marks as waiting for extraction
            chunk = gone[start : start + 400]
            conn.execute("DELETE FROM extraction_backlog WHERE episode_rowid IN"
                         f" ({','.join('?' * len(chunk))})", chunk)
        return len(rows), [r[0] for r in rows if r[0] is not None]

    def erase_claim(self, claim_id: str, scope: Scope, *, sources: bool) -> dict[str, int]:
        """Remove one claim everywhere; see ``Store.erase_claim``."""
        counts = dict.fromkeys(_ERASE_COUNTS, 0)
        where, params = _sql.scope_visible(scope)
        with self._writing() as conn:
            self._index_all(conn)
            row = conn.execute(
                f"SELECT rowid, sources, vec_slot FROM claims WHERE rowid = ? AND id = ?"
                f" AND {where}",
                [claim_rowid(claim_id), claim_id, *params],
            ).fetchone()
            if row is None:
                return counts
            rowid, cited, slot = row
            cited_ids = json.loads(cited) if cited else []
            counts["sources"] = len(cited_ids)
            conn.execute("DELETE FROM claims WHERE rowid = ?", (rowid,))
            self._drop_references(conn, [claim_id])
            counts["claims"] = 1
            freed = [] if slot is None else [slot]
            episode_slots: list[int] = []
            fts = ["claims_fts"]
            if sources and cited_ids:
                orphans = [
                    source for source in cited_ids
                    if conn.execute("SELECT 1 FROM claim_sources WHERE source = ? LIMIT 1",
                                    (source,)).fetchone() is None
                ]
                if orphans:
                    ep_where = f"id IN ({','.join('?' * len(orphans))}) AND {where}"
                    counts["episodes"], episode_slots = self._delete_episodes(
                        conn, ep_where, [*orphans, *params]
                    )
                    fts.append("episodes_fts")
            counts["embeddings"] = len(freed) + len(episode_slots)
            self._zero_vectors("claims", freed)
            self._zero_vectors("episodes", episode_slots)
            self._scrub(conn, fts)
        return counts

    def purge(self, scope: Scope) -> dict[str, int]:
        """Remove ``scope`` and everything beneath it; see ``Store.purge``."""
        where, params = _sql.scope_subtree(scope)
        with self._writing() as conn:
            self._index_all(conn)
            (links,) = conn.execute(
                f"SELECT count(*) FROM claim_sources WHERE claim_rowid IN"
                f" (SELECT rowid FROM claims WHERE {where})", params
            ).fetchone()
            claim_slots = conn.execute(
                f"DELETE FROM claims WHERE {where} RETURNING vec_slot", params
            ).fetchall()
            n_episodes, episode_slots = self._delete_episodes(conn, where, params)
            freed = [r[0] for r in claim_slots if r[0] is not None]
            self._zero_vectors("claims", freed)
            self._zero_vectors("episodes", episode_slots)
            self._scrub(conn, ["claims_fts", "episodes_fts"])
        return {
            "claims": len(claim_slots),
            "episodes": n_episodes,
            "embeddings": len(freed) + len(episode_slots),
            "sources": int(links),
        }
