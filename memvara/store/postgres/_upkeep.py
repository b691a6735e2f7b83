"""Consolidation, erasure, re-filing under learned entities and re-embedding, for the
PostgreSQL store.

Erasure deletes the rows, their tokens and their vectors in one transaction, then runs
``VACUUM`` on the tables it touched so the dead row versions (MVCC keeps them until no
transaction can see them) are reclaimed. What a server keeps outside its tables is
beyond a client's reach: the write-ahead log holds the deleted text until its segments
are recycled, and WAL archives, replicas and backups hold it for as long as they are
kept (docs/postgres.md, "What erasure means on a server").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.model import Claim, Scope
from ..._errors import DimensionMismatchError, StoreError
from .._scrubbed_claims import without_sources
from ..base import SweepWindow
from ..sqlite._rows import claim_rowid, decode_claim
from . import _sql
from ._reads import Reads
from ._writes import _LINK, CLAIM_COLUMNS, slot_lock

__all__ = ["Upkeep"]

_SWEEP_KEY = "s_user, s_tenant, s_agent, s_session, subject_key, predicate"
_SWEEP_COLUMNS = (
    "rowid, id, s_tenant, s_user, s_agent, s_session, subject_key, predicate, polarity,"
    " coalesce(object_key, ''), valid_from, coalesce(valid_to, 9223372036854775807),"
    " memory_type, observations, salience_base, salience,"
    " coalesce(observed_at, recorded_at), emb::real[]"
)
_IN_SLOT = ("valid_to NULLS FIRST, recorded_at, valid_from, valid_to_known_at NULLS FIRST,"
            " revised, rowid")
"""A slot's rows in the SQLite store's index order (``claims_slot``'s later columns)."""
_ERASED = ("claim_terms", "claim_sources", "claim_closures", "claims", "episode_terms",
           "episodes", "extraction_backlog", "term_stats")


class _DryRun(Exception):
    """Raised inside a transaction to roll back a change that was only being tried."""


class Upkeep(Reads):
    """``sweep_claims``, ``apply_sweep``, ``erase_claim``, ``purge``, ``rekey_subjects``
    and the re-embedding methods."""

    # -- consolidation ------------------------------------------------------------
    def sweep_claims(self, scope: Scope, after: tuple[str, ...] | None, limit: int) -> SweepWindow:
        """The next window of whole slots; see ``Store.sweep_claims``."""
        where, params = _sql.scope_subtree(scope)
        sql = f"SELECT {_SWEEP_COLUMNS} FROM claims WHERE invalidated_at IS NULL AND {where}"
        limit = max(1, limit)
        cursor = "" if after is None else f" AND ({_SWEEP_KEY}) > (%s, %s, %s, %s, %s, %s)"
        rows = self._query(sql + cursor + f" ORDER BY {_SWEEP_KEY}, {_IN_SLOT} LIMIT %s",
                           [*params, *(after or ()), limit + 1])
        if len(rows) <= limit:
            return self._window(rows, None)
        cut = limit
        while cut and rows[cut - 1][2:8] == rows[limit][2:8]:
            cut -= 1
        if cut:
            rows = rows[:cut]
        else:  # one slot larger than a window: all of it, alone
            rows = self._query(sql + f" AND ({_SWEEP_KEY}) = (%s, %s, %s, %s, %s, %s)"
                               f" ORDER BY {_IN_SLOT}", [*params, *_key(rows[0])])
        return self._window(rows, _key(rows[-1]))

    def _window(self, rows: Sequence[Any], following: tuple[str, ...] | None) -> SweepWindow:
        cols: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [()] * 18
        has = np.asarray([v is not None for v in cols[17]], dtype=np.bool_)
        dim = self.dim if rows and self.dim is not None else 0
        vectors = np.zeros((len(rows), dim), dtype=np.float32)
        for i, emb in enumerate(cols[17]):
            if emb is not None:
                vectors[i] = emb
        return SweepWindow(
            ids=cols[1], rowids=np.asarray(cols[0], dtype=np.int64),
            slots=tuple(zip(cols[2], cols[3], cols[4], cols[5], cols[6], cols[7])),
            polarity=np.asarray(cols[8], dtype=np.int64), object_keys=cols[9],
            valid_from=np.asarray(cols[10], dtype=np.int64),
            valid_to=np.asarray(cols[11], dtype=np.int64), memory_types=cols[12],
            observations=np.asarray(cols[13], dtype=np.int64),
            storage=np.asarray(cols[14], dtype=np.float64),
            retrieval=np.asarray(cols[15], dtype=np.float64),
            observed_at=np.asarray(cols[16], dtype=np.int64),
            vectors=vectors, has_vector=has, next=following,
        )

    def apply_sweep(
        self, retrieval: Sequence[tuple[str, float]], memory_types: Sequence[tuple[str, str]],
        folds: Sequence[tuple[str, Sequence[str], int, float, int]], at: int,
    ) -> None:
        """Write one consolidation window; see ``Store.apply_sweep``. The slots of the
        claims it changes are locked first, in the order every writer takes them, so it
        never holds a row a writer of that slot waits for while it waits for another."""
        changed = [*(cid for cid, _ in retrieval), *(cid for cid, _ in memory_types),
                   *(cid for fold in folds for cid in (fold[0], *fold[1]))]
        with self._writing() as conn:
            slots = self._exec(conn, "SELECT DISTINCT s_tenant, s_user, s_agent, s_session,"
                               " subject_key, predicate FROM claims WHERE rowid = ANY(%s)",
                               [[claim_rowid(cid) for cid in changed]]).fetchall()
            self._lock_slots(conn, [slot_lock(self._schema, slot[:4], slot[4:]) for slot in slots])
            self._many(conn, "UPDATE claims SET salience = %s WHERE rowid = %s AND id = %s",
                       [(value, claim_rowid(cid), cid) for cid, value in retrieval])
            self._many(conn, "UPDATE claims SET memory_type = %s WHERE rowid = %s AND id = %s",
                       [(kind, claim_rowid(cid), cid) for cid, kind in memory_types])
            for survivor, losers, observations, storage, observed_at in folds:
                members = [survivor, *losers]
                found = {cid: (rowid, cited) for rowid, cid, cited in self._exec(
                    conn, "SELECT rowid, id, sources FROM claims WHERE rowid = ANY(%s)",
                    [[claim_rowid(c) for c in members]]).fetchall()}
                if any(cid not in found for cid in members):
                    raise StoreError("a claim being merged is not in the store")
                sources = list(dict.fromkeys(
                    s for cid in members for s in json.loads(found[cid][1] or "[]")))
                rowid = found[survivor][0]
                self._exec(conn, "UPDATE claims SET observations = %s, salience_base = %s,"
                           " observed_at = %s, sources = %s WHERE rowid = %s",
                           [observations, storage, observed_at,
                            json.dumps(sources, ensure_ascii=False) if sources else None, rowid])
                self._many(conn, _LINK, [(s, rowid) for s in sources])
                self._many(conn, "UPDATE claims SET invalidated_at = greatest(%s, recorded_at),"
                           " invalidated_by = %s WHERE rowid = %s AND id = %s",
                           [(at, survivor, found[cid][0], cid) for cid in losers])

    # -- erasure ------------------------------------------------------------------
    def _drop_references(self, conn: Any, gone: list[str]) -> None:
        """Other rows naming an erased claim as what ended or retired them (live,
        archived, an earlier end) or as a source lose the id: it carries a digest of the
        claim's content, which would confirm a guess of the erased value."""
        for table in ("claims", "claims_archive"):
            for column in ("invalidated_by", "ended_by"):
                self._exec(conn, f"UPDATE {table} SET {column} = NULL WHERE {column} = ANY(%s)",
                           [gone])
        self._exec(conn, "UPDATE claim_closures SET ended_by = NULL WHERE ended_by = ANY(%s)", [gone])
        dropped = set(gone)  # claims citing one as their source keep the rest
        for table, rows in (
            ("claims", self._exec(conn, (
                "SELECT rowid, sources FROM claims WHERE rowid IN (SELECT claim_rowid FROM"
                " claim_sources WHERE source = ANY(%s)) FOR UPDATE"), [gone]).fetchall()),
            ("claims_archive", self._exec(conn, (
                "SELECT rowid, sources FROM claims_archive WHERE sources IS NOT NULL AND EXISTS"
                " (SELECT 1 FROM json_array_elements_text(sources::json) s WHERE s = ANY(%s))"
                " FOR UPDATE"), [gone]).fetchall())):
            for rowid, sources in rows:
                self._exec(conn, f"UPDATE {table} SET sources = %s WHERE rowid = %s",
                           [without_sources(sources, dropped), rowid])
        self._exec(conn, "DELETE FROM claim_sources WHERE source = ANY(%s)", [gone])

    def _delete(self, conn: Any, table: str, where: str, params: Sequence[object]) -> tuple[int, int]:
        """Delete ``table``'s rows matching ``where`` with their tokens (and, for
        claims, sources and closures; for turns, marks); how many, and how many had a
        vector."""
        gone = self._exec(conn, f"DELETE FROM {table} WHERE {where}"
                          " RETURNING rowid, tokens, emb IS NOT NULL", params).fetchall()
        rowids = [r[0] for r in gone]
        self._unindex(conn, table, rowids, sum(int(r[1]) for r in gone))
        if table == "claims":
            self._exec(conn, "DELETE FROM claim_sources WHERE claim_rowid = ANY(%s)", [rowids])
            self._exec(conn, "DELETE FROM claim_closures WHERE claim_rowid = ANY(%s)", [rowids])
        else:
            self._exec(conn, "DELETE FROM extraction_backlog WHERE episode_rowid = ANY(%s)", [rowids])
        if self._vacuum not in self._after_commit:
            self._after_commit.append(self._vacuum)
        return len(gone), sum(1 for r in gone if r[2])

    def _vacuum(self) -> None:
        """Reclaim the erased rows' dead versions (after the commit; outside any
        transaction, as ``VACUUM`` must run)."""
        with self._lock:
            for table in _ERASED:
                self._exec(self._writer, f"VACUUM {table}")

    def erase_claim(self, claim_id: str, scope: Scope, *, sources: bool) -> dict[str, int]:
        """Remove one claim everywhere; see ``Store.erase_claim``."""
        counts = dict.fromkeys(("claims", "episodes", "embeddings", "sources"), 0)
        where, params = _sql.scope_visible(scope)
        with self._writing() as conn:
            self._lock_claim_slot(conn, claim_id, where, params)  # none is mid-settle
            row = self._exec(conn, f"SELECT sources FROM claims WHERE rowid = %s AND id = %s"
                             f" AND {where} FOR UPDATE",
                             [claim_rowid(claim_id), claim_id, *params]).fetchone()
            if row is None:
                return counts
            cited = json.loads(row[0]) if row[0] else []
            counts["sources"] = len(cited)
            counts["claims"], counts["embeddings"] = self._delete(
                conn, "claims", "rowid = %s", [claim_rowid(claim_id)])
            self._drop_references(conn, [claim_id])
            if sources and cited:
                orphans = [s for s in cited if self._exec(
                    conn, "SELECT 1 FROM claim_sources WHERE source = %s LIMIT 1",
                    [s]).fetchone() is None]
                counts["episodes"], vectors = self._delete(
                    conn, "episodes", f"id = ANY(%s) AND {where}", [orphans, *params])
                counts["embeddings"] += vectors
        return counts

    def purge(self, scope: Scope) -> dict[str, int]:
        """Remove ``scope`` and everything beneath it; see ``Store.purge``."""
        where, params = _sql.scope_subtree(scope)
        with self._writing() as conn:
            (links,) = self._exec(conn, "SELECT count(*) FROM claim_sources WHERE claim_rowid IN"
                                  f" (SELECT rowid FROM claims WHERE {where})", params).fetchone()
            claims, claim_vectors = self._delete(conn, "claims", where, params)
            episodes, episode_vectors = self._delete(conn, "episodes", where, params)
        return {"claims": claims, "episodes": episodes,
                "embeddings": claim_vectors + episode_vectors, "sources": int(links)}

    # -- learned entities -----------------------------------------------------------
    def rekey_subjects(
        self, owner: Scope, mapping: Mapping[str, str], at: int, *, dry_run: bool
    ) -> list[Claim]:
        """Re-file an owner's claims under learned entities; see ``Store.rekey_subjects``."""
        if not mapping:
            return []
        olds = list(mapping)
        rows: list[Any] = []
        try:
            with self._writing() as conn, self.transaction():
                rows = self._exec(conn, (
                    "UPDATE claims SET subject_key = m.new, meta = (coalesce(meta, '{}')::jsonb"
                    " || jsonb_build_object('entity_backfill', jsonb_build_object("
                    "'from', claims.subject_key, 'to', m.new, 'at', %s::bigint)))::text"
                    " FROM unnest(%s::text[], %s::text[]) AS m (old, new)"
                    " WHERE claims.subject_key = m.old AND s_user = %s AND s_tenant = %s"
                    f" RETURNING {', '.join('claims.' + c.strip() if not c.strip().startswith('NULL') else c for c in CLAIM_COLUMNS.split(','))}, m.old"),
                    [at, olds, [mapping[o] for o in olds], owner.user or "",
                     owner.tenant or ""]).fetchall()
                if dry_run:
                    raise _DryRun
        except _DryRun:
            pass
        place = {old: i for i, old in enumerate(olds)}
        rows.sort(key=lambda row: (place[row[-1]], row[0]))
        return [decode_claim(row[:-1], None) for row in rows]

    # -- re-embedding -------------------------------------------------------------
    def vector_texts(self, table: str, after: int, limit: int) -> list[tuple[int, str]]:
        """A page of ``(rowid, text)``; see ``Store.vector_texts``."""
        column = "text" if table == "claims" else "content"
        return [(int(r), str(t)) for r, t in self._query(
            f"SELECT rowid, {column} FROM {'claims' if table == 'claims' else 'episodes'}"
            " WHERE rowid > %s ORDER BY rowid LIMIT %s", [after, limit])]

    @property
    def embedder_label(self) -> str | None:
        """The label of the last ``rebuild_vectors``, if any."""
        rows = self._query("SELECT value FROM store_meta WHERE key = 'embedder'")
        return str(rows[0][0]) if rows else None

    def rebuild_vectors(
        self, dim: int, label: str
    ) -> AbstractContextManager[Callable[[str, Sequence[int], npt.NDArray[np.float32]], None]]:
        """Replace every vector at once; see ``Store.rebuild_vectors``."""
        return self._rebuild(dim, label)

    @contextmanager
    def _rebuild(
        self, dim: int, label: str
    ) -> Iterator[Callable[[str, Sequence[int], npt.NDArray[np.float32]], None]]:
        fresh: dict[str, dict[int, npt.NDArray[np.float32]]] = {"claims": {}, "episodes": {}}

        def put(table: str, rowids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
            if vectors.shape[1:] != (dim,):
                raise DimensionMismatchError(
                    f"vectors are {vectors.shape[1:]} but this rebuild writes {dim}-d ones")
            fresh[table].update(zip(rowids, np.asarray(vectors, dtype=np.float32)))

        yield put
        with self._writing() as conn:
            for table, vectors in fresh.items():
                self._exec(conn, f"UPDATE {table} SET emb = NULL WHERE emb IS NOT NULL")
                self._many(conn, f"UPDATE {table} SET emb = %s WHERE rowid = %s",
                           [(v, r) for r, v in vectors.items()])
            self._many(conn, "INSERT INTO store_meta (key, value) VALUES (%s, %s)"
                       " ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                       [("vector_dim", str(dim)), ("embedder", label)])
            self._dim = dim


def _key(row: Sequence[Any]) -> tuple[str, ...]:
    """A sweep row's slot in ``_SWEEP_KEY`` order."""
    return (row[3], row[2], row[4], row[5], row[6], row[7])
