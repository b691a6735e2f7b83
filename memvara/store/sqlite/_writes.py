"""Claim writes: inserts, the vector backlog, slot reads, closures and reinforcement,
and ``write_claim``, one claim's whole write in one call.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._domain.model import Claim, Scope, set_new_claim_id
from ..._domain.salience import reinforced_storage, retrievability
from ..._domain.time import to_micros
from ..._errors import StoreError
from ..base import NO_SETTLEMENT, Settlement, Written
from . import _sql
from ._core import ADVANCE_VECTOR_WATERMARK, RESERVATION, StoreCore
from ._rows import (
    CLAIM_COLUMNS,
    claim_row,
    claim_rowid,
    decode_claim,
    ended,
    insert_statement,
    retired,
    scope_levels,
    single_insert,
    with_id,
)

__all__ = ["LINK_SOURCE_SQL", "Writes"]

_END_SQL = (
    "UPDATE claims SET valid_to = ?, valid_to_known_at = ?, ended_by = ?,"
    " revised = revised OR (valid_to IS NOT NULL AND valid_to_known_at < ?)"
    " WHERE rowid = ? AND id = ?"
)
"""End a claim's valid time (an end it had already is kept by ``claims_keep_closure``)."""
_RETIRE_SQL = (
    "UPDATE claims SET invalidated_at = ?, invalidated_by = ? WHERE rowid = ? AND id = ?"
)
"""Withdraw belief in a claim, naming the claim that took its place (or none)."""
LINK_SOURCE_SQL = "INSERT OR IGNORE INTO claim_sources (source, claim_rowid) VALUES (?, ?)"
"""Index one of a claim's sources, for ``claims_citing`` (a link held already is kept)."""
_WAITING_FOR_VECTORS = (
    "rowid > (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'vectors_claims')"
    " AND vec_slot IS NULL"
)
"""The claims waiting for a vector: only rows above the watermark can be, so finding
them reads a rowid range (the table's tail), with no index of its own to keep."""


@functools.lru_cache(maxsize=64)
def _slot_sql(n_slots: int, bounded: bool, reserve: bool = False, scoped: bool = False) -> str:
    """``slot_claims``' query for ``n_slots`` slots (built once per shape).

    The wanted slots drive the loop (CROSS JOIN fixes the order), so each is one probe
    of the slot index whatever the planner thinks of the scope. With ``reserve`` the
    wanted slots are LEFT JOINed instead (an empty slot still yields one row, of NULLs)
    and every row carries the claims table's reservation (``_reserve``'s two numbers),
    so ``write_claim`` needs no statement of its own to place its row; its few rows
    come unordered (``_by_start`` sorts them: a temporary b-tree for ORDER BY
    cost each single write ~2% of its instructions).
    With ``scoped`` (``slot_claims_across``) each wanted row names its scope too, after
    its slot, so one statement serves many scopes.

    ``bounded`` keeps the claims still valid after a time (``?``, last). For one scope
    it is two whole conditions joined by OR, one with ``valid_to IS NULL`` and one with
    ``valid_to > ?``, each a seek of the slot index (SQLite's multi-index OR; the
    scope's values are bound twice, once for each: ``?NNN`` would bind them once, but
    CPython 3.12 before 3.12.4 reads ``?NNN`` as a name and warns, see
    ``_consolidation``). ``(valid_to IS NULL OR valid_to > ?)`` after the rest ends the seek
    at ``invalidated_at`` and reads every ended claim's index entry: a slot said 500
    times cost each write to it ~60 us more (docs/perf-log.md, 2026-12-01). Across
    scopes the planner folds the two back into one seek without ``invalidated_at``,
    slower than the plain OR, so ``scoped`` keeps that.
    """
    levels = len(_sql.SCOPE_COLUMNS)
    believed = (" AND claims.subject_key = wanted.k AND claims.predicate = wanted.p"
                " AND claims.invalidated_at IS NULL")
    if scoped:
        columns = "k, p, " + ", ".join(f"w{i}" for i in range(levels))
        where = " AND ".join(f"claims.{column} = wanted.w{i}"
                             for i, column in enumerate(_sql.SCOPE_COLUMNS)) + believed
        if bounded:
            where += " AND (claims.valid_to IS NULL OR claims.valid_to > ?)"
    else:
        columns = "k, p"
        where = " AND ".join(f"claims.{column} = ?" for column in _sql.SCOPE_COLUMNS) + believed
        if bounded:  # the scope's values bound again: see above
            where = (f"({where} AND claims.valid_to IS NULL)"
                     f" OR ({where} AND claims.valid_to > ?)")
    extra, join, condition = (
        (f", {RESERVATION % ('claims', 'claims')}", "LEFT JOIN", "ON") if reserve
        else ("", "CROSS JOIN", "WHERE")
    )
    row = "(" + ", ".join(["?"] * (columns.count(",") + 1)) + ")"
    return (
        f"WITH wanted ({columns}) AS (VALUES {','.join([row] * n_slots)})"
        f" SELECT {CLAIM_COLUMNS}, claims.subject_key{extra} FROM wanted {join} claims"
        f" {condition} {where}"
        + ("" if reserve else " ORDER BY claims.valid_from, claims.rowid")
    )


def _by_start(row: Sequence[Any]) -> tuple[int, int]:
    """A slot row's place in ``slot_claims``' order: ``valid_from``, then rowid."""
    return (row[10], row[0])


class Writes(StoreCore):
    """Claims in: see ``Store``'s "writes" for what each method promises."""

    def insert_claims(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[Claim]:
        """Insert new claims; see ``Store.insert_claims``."""
        ids = self._insert_claims(claims, vectors, subject_keys)
        return [with_id(claim, cid) for claim, cid in zip(claims, ids)]

    def insert_claim_ids(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[str]:
        """``insert_claims``, returning only the new ids: the writer sets each on the
        claim it built for the write (``_model.set_new_claim_id``) rather than have a
        copy made (~2 us a claim). Optional for a store."""
        return self._insert_claims(claims, vectors, subject_keys)

    def _insert_claims(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None,
    ) -> list[str]:
        if not claims:
            return []
        with self._writing() as conn:
            last, indexed, slots = self._reserve(conn, "claims", len(claims), vectors)
            rows: list[tuple[object, ...]] = []
            ids: list[str] = []
            links: list[tuple[str, int]] = []
            for offset, (claim, slot) in enumerate(zip(claims, slots), start=1):
                rowid = last + offset
                key = None if subject_keys is None else subject_keys[offset - 1]
                cid, row = claim_row(claim, rowid, slot, key)
                rows.append(row)
                if claim.sources:
                    links.extend((source, rowid) for source in dict.fromkeys(claim.sources))
                ids.append(cid)
            conn.executemany(*insert_statement(rows))
            self._log_inserted("added", range(last + 1, last + 1 + len(rows)))
            if vectors is not None:  # written with their vectors: nothing new waits
                conn.execute(ADVANCE_VECTOR_WATERMARK)
            self._index_text(conn, "claims", indexed, last + len(rows), force=False)
            if links:
                conn.executemany(LINK_SOURCE_SQL, links)
            return ids

    def has_backlog(self) -> bool:
        """Whether any row waits for the text index or its vector (the writes pay the
        backlogs down; no read needs them paid)."""
        return bool(self._query(
            f"SELECT EXISTS (SELECT 1 FROM claims WHERE {_WAITING_FOR_VECTORS})"
            " OR (SELECT coalesce(max(rowid), 0) FROM claims)"
            " > (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_claims')"
            " OR (SELECT coalesce(max(rowid), 0) FROM episodes)"
            " > (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_episodes')"
        )[0][0])

    def claims_missing_vectors(self) -> list[tuple[str, str]]:
        """Claims stored without a vector; see ``Store.claims_missing_vectors``."""
        return [(cid, text) for cid, text in self._write_side_query(
            f"SELECT id, text FROM claims WHERE {_WAITING_FOR_VECTORS} ORDER BY rowid"
        )]

    def set_claim_vectors(
        self, claim_ids: Sequence[str], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Store claims' vectors; see ``Store.set_claim_vectors``."""
        if not claim_ids:
            return 0
        with self._writing() as conn:
            keep: list[int] = []
            rowids: list[int] = []
            for start in range(0, len(claim_ids), 400):
                chunk = list(claim_ids[start : start + 400])
                wanted = {claim_rowid(cid): (start + i, cid) for i, cid in enumerate(chunk)}
                # One statement marks the rows that still wait and names them: the
                # vectors are written below, in the same transaction, before it commits.
                for (rowid,) in conn.execute(
                    "UPDATE claims SET vec_slot = rowid"
                    f" WHERE rowid IN ({','.join('?' * len(wanted))})"
                    f" AND id IN ({','.join('?' * len(chunk))}) AND vec_slot IS NULL"
                    " RETURNING rowid",
                    [*wanted, *chunk],
                ).fetchall():
                    keep.append(wanted[rowid][0])
                    rowids.append(rowid)
            if rowids:
                self._write_vectors(conn, "claims", rowids, vectors[keep])
                conn.execute(ADVANCE_VECTOR_WATERMARK)
            return len(rowids)

    def slot_claims(
        self,
        scope: Scope,
        slots: Collection[tuple[str, str]],
        *,
        ending_after: int | None = None,
    ) -> dict[tuple[str, str], list[Claim]]:
        """Still-believed claims per slot at exactly ``scope``; see ``Store.slot_claims``."""
        found: dict[tuple[str, str], list[Claim]] = {slot: [] for slot in slots}
        if not found:
            return found
        keys = list(found)
        where: list[object] = [*scope_levels(scope)]
        if ending_after is not None:
            where.extend([*where, ending_after])
        with self._reading() as conn:
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                for row in conn.execute(
                    _slot_sql(len(chunk), ending_after is not None),
                    [*(part for pair in chunk for part in pair), *where],
                ).fetchall():
                    found[(row[-1], row[7])].append(decode_claim(row[:-1], None))
        return found

    def slot_claims_across(
        self,
        wanted: Mapping[Scope, Collection[tuple[str, str]]],
        *,
        ending_after: int | None = None,
    ) -> dict[Scope, dict[tuple[str, str], list[Claim]]]:
        """``slot_claims`` for the ``(subject_key, predicate)`` slots of many scopes at
        once, per scope; a slot that holds no such claim is left out. A bulk write whose
        claims land in a thousand users' scopes reads their slots in a few statements,
        not one per scope. Optional for a store; without it the writer asks
        ``slot_claims`` scope by scope."""
        found: dict[Scope, dict[tuple[str, str], list[Claim]]] = {scope: {} for scope in wanted}
        keys = [(scope, slot) for scope, slots in wanted.items() for slot in slots]
        tail: list[object] = [] if ending_after is None else [ending_after]
        with self._reading() as conn:
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                params: list[object] = []
                for scope, (key, predicate) in chunk:
                    params.extend((key, predicate))
                    params.extend(scope_levels(scope))
                for row in conn.execute(
                    _slot_sql(len(chunk), ending_after is not None, scoped=True),
                    [*params, *tail],
                ).fetchall():
                    claim = decode_claim(row[:-1], None)
                    found[claim.scope].setdefault((row[-1], row[7]), []).append(claim)
        return found

    def write_claim(
        self,
        claim: Claim,
        subject_key: str,
        vector: npt.NDArray[np.float32] | None,
        settle: Callable[[list[Claim]], Settlement],
    ) -> Written:
        """One claim's whole write; see ``Store`` (an optional fast path).

        The statements are the general path's (``slot_claims``, ``insert_claims``,
        ``end_claims``, ``retire_claims``), on one connection taken once, and the slot
        read also places the new row (see ``_slot_sql``): 3-4% fewer instructions a
        single ``remember()`` (callgrind, an 8,000-claim store).
        """
        with self._writing() as conn:
            start = to_micros(claim.valid_from, "valid_from")
            levels = scope_levels(claim.scope)
            rows = conn.execute(
                _slot_sql(1, True, True),
                [subject_key, claim.predicate, *levels, *levels, start],
            ).fetchall()
            last, indexed = rows[0][-2], rows[0][-1]
            if rows[0][0] is None:  # a row of NULLs: the slot is empty
                found = []
            else:
                if len(rows) > 1:
                    rows.sort(key=_by_start)
                found = [decode_claim(row, None) for row in rows]
            new, old, ends, retires, bounded_by = settle(found)
            if new is None:
                if old is None:
                    raise StoreError(NO_SETTLEMENT)
                return None, self.reinforce_claim(
                    old.id, claim.sources, to_micros(claim.recorded_at, "recorded_at")), [], []
            rowid = max(int(last), int(indexed)) + 1
            slot = None
            if vector is not None:
                (slot,) = self._write_vectors(conn, "claims", [rowid], vector)
            cid, row = claim_row(new, rowid, slot, subject_key)
            conn.execute(*single_insert(row))
            if bounded_by is not None:  # a later value ends it: named as what ended it
                conn.execute("UPDATE claims SET ended_by = ? WHERE rowid = ?", (bounded_by, rowid))
            self._log_inserted("added", (rowid,))
            if vector is not None:
                conn.execute(ADVANCE_VECTOR_WATERMARK)
            self._index_text(conn, "claims", int(indexed), rowid, force=False)
            if new.sources:
                conn.executemany(
                    LINK_SOURCE_SQL, [(source, rowid) for source in dict.fromkeys(new.sources)])
            stored = set_new_claim_id(new, cid)
            return (
                stored,
                None,
                [self._end_row(conn, c, valid_to, at, cid) for c, valid_to, at in ends],
                [self._retire_row(conn, c, at, cid) for c, at in retires],
            )

    def end_claims(self, ends: Sequence[tuple[Claim, int, int, str | None]]) -> list[Claim]:
        """Set each ``(claim, valid_to, at, by)``; see ``Store.end_claims``.

        An end learned earlier is kept in ``claim_closures`` by the ``claims_keep_closure``
        trigger, so a reader between the two closures still sees the end believed then.
        The result is built from the claim passed in: reading the row back with
        ``RETURNING`` cost ~28 us a claim here, twice the update itself.
        """
        if not ends:
            return []
        with self._writing() as conn:
            return [self._end_row(conn, claim, valid_to, at, by)
                    for claim, valid_to, at, by in ends]

    def retire_claims(self, retires: Sequence[tuple[Claim, int, str | None]]) -> list[Claim]:
        """Withdraw belief for each ``(claim, at, by)``; see ``Store.retire_claims``."""
        if not retires:
            return []
        with self._writing() as conn:
            return [self._retire_row(conn, claim, at, by) for claim, at, by in retires]

    def _end_row(
        self, conn: sqlite3.Connection, claim: Claim, valid_to: int, at: int, by: str | None
    ) -> Claim:
        """End one claim's valid time at ``valid_to``, learned at ``at``, closed by ``by``."""
        self._check_updated(conn.execute(_END_SQL, (
            valid_to, at, by, at, claim_rowid(claim.id), claim.id)).rowcount, claim.id)
        return ended(claim, valid_to, at)

    def _retire_row(
        self, conn: sqlite3.Connection, claim: Claim, at: int, by: str | None
    ) -> Claim:
        """Withdraw belief in one claim at ``at``, in favour of ``by``."""
        self._check_updated(conn.execute(_RETIRE_SQL, (
            at, by, claim_rowid(claim.id), claim.id)).rowcount, claim.id)
        return retired(claim, at, by)

    @staticmethod
    def _check_updated(count: int, claim_id: str) -> None:
        if count != 1:
            raise StoreError(f"claim {claim_id!r} is not in the store")

    @staticmethod
    def _updated(row: Sequence[object] | None, claim_id: str) -> Claim:
        if row is None:  # pragma: no cover - the id was read in this same transaction
            raise StoreError(f"claim {claim_id!r} vanished during the write")
        return decode_claim(row, None)

    def reinforce_claim(self, claim_id: str, sources: Sequence[str], at: int) -> Claim:
        """Count another observation and merge ``sources``; see ``Store.reinforce_claim``."""
        with self._writing() as conn:
            row = conn.execute(
                "SELECT rowid, sources, salience_base, coalesce(observed_at, recorded_at)"
                " FROM claims WHERE rowid = ? AND id = ?", (claim_rowid(claim_id), claim_id)
            ).fetchone()
            if row is None:  # pragma: no cover - the id was read in this same transaction
                raise StoreError(f"claim {claim_id!r} vanished during the write")
            rowid, old, storage, observed = row
            merged = list(dict.fromkeys([*(json.loads(old) if old else []), *sources]))
            conn.executemany(LINK_SOURCE_SQL, [(s, rowid) for s in sources])
            strength = reinforced_storage(storage, retrievability(storage, max(0, at - observed)))
            return self._updated(conn.execute(
                "UPDATE claims SET observations = observations + 1, sources = ?,"
                " salience_base = ?, salience = 1.0, observed_at = ?"
                f" WHERE rowid = ? RETURNING {CLAIM_COLUMNS}",
                (json.dumps(merged, ensure_ascii=False) if merged else None, strength,
                 max(observed, at), rowid),
            ).fetchone(), claim_id)
