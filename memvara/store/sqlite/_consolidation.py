"""Consolidation's reads and writes: windows of whole slots, walked in index order, and
one window's new strengths, memory types and merges written back.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..._domain.model import Scope
from ..._errors import StoreError
from ..base import SweepWindow
from . import _sql
from ._core import StoreCore
from ._rows import claim_rowid
from ._writes import LINK_SOURCE_SQL

__all__ = ["Consolidation"]

_ROWID_OF_ID = "CAST(substr(:id, 2, instr(:id, '-') - 2) AS INTEGER)"
"""The rowid in claim id ``:id`` (``c<rowid>-<digest>``); 0, no row, for anything else.
Named, not numbered (``?2``): CPython 3.12 before 3.12.4 took ``?NNN`` for a name and
warned (``DeprecationWarning``) at every row bound from a tuple (cpython#117995)."""
_SWEEP_KEY_COLUMNS = ("s_user", "s_tenant", "s_agent", "s_session", "subject_key", "predicate")
"""A slot in ``claims_slot``'s column order, so consolidation walks that index in order."""
_SWEEP_KEY = ", ".join(_SWEEP_KEY_COLUMNS)
_SWEEP_COLUMNS = (
    "rowid, id, s_tenant, s_user, s_agent, s_session, subject_key, predicate, polarity,"
    " coalesce(object_key, ''), valid_from, coalesce(valid_to, 9223372036854775807),"
    " memory_type, observations, salience_base, salience,"
    " coalesce(observed_at, recorded_at), coalesce(vec_slot, 0)"
)


def _sweep_fixed(scope: Scope) -> int:
    """How many leading ``_SWEEP_KEY_COLUMNS`` a sweep of ``scope``'s subtree holds
    equal: ``scope_subtree`` fixes the levels from the tenant down to the deepest one
    set, which is a prefix of the index only once the user is among them."""
    deepest = _sql.deepest_level(scope)
    return deepest + 1 if deepest >= 1 else 0


def _sweep_key(row: Sequence[Any]) -> tuple[str, ...]:
    """A ``_SWEEP_COLUMNS`` row's slot, as ``_SWEEP_KEY`` orders it."""
    return (row[3], row[2], row[4], row[5], row[6], row[7])


class Consolidation(StoreCore):
    """``sweep_claims`` and ``apply_sweep``."""

    def sweep_claims(
        self, scope: Scope, after: tuple[str, ...] | None, limit: int
    ) -> SweepWindow:
        """The next window of whole slots; see ``Store.sweep_claims``.

        Walks ``claims_slot`` in order from the slot ``after``, so a sweep reads the
        index once: the cursor compares only the key columns the scope leaves free (a
        row-value comparison that starts at a column the scope fixes is not a range to
        SQLite, and each window would walk the scope from its start: 2.47 s against
        0.57 s for 80,000 claims of one user, in review). The planner's own choice, the
        scope index before schema 5, sorted the scope's rows again for every window. A
        scope that sets its tenant but no user has no prefix of the index to range over.
        """
        where, params = _sql.scope_subtree(scope)
        sql = (f"SELECT {_SWEEP_COLUMNS} FROM claims INDEXED BY claims_slot"
               f" WHERE invalidated_at IS NULL AND {where}")
        limit = max(1, limit)
        free = _SWEEP_KEY_COLUMNS[_sweep_fixed(scope):]
        cursor = (f" AND ({', '.join(free)}) > ({', '.join('?' * len(free))})")
        rows = self._query(  # one row more than the window, to see if its last slot goes on
            sql + ("" if after is None else cursor) + f" ORDER BY {_SWEEP_KEY} LIMIT ?",
            [*params, *(after or ())[-len(free):], limit + 1],
        )
        if len(rows) <= limit:
            return self._sweep_window(rows, None)
        cut = limit
        while cut and rows[cut - 1][2:8] == rows[limit][2:8]:
            cut -= 1  # the last slot goes on: leave it to the next window
        if cut:
            rows = rows[:cut]
        else:  # one slot larger than a window: all of it, alone
            key = _sweep_key(rows[0])
            rows = self._query(sql + f" AND ({_SWEEP_KEY}) = (?, ?, ?, ?, ?, ?)", [*params, *key])
        return self._sweep_window(rows, _sweep_key(rows[-1]))

    def _sweep_window(
        self, rows: Sequence[Any], following: tuple[str, ...] | None
    ) -> SweepWindow:
        n = len(rows)
        cols: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [()] * 18
        slots = np.asarray(cols[17], dtype=np.int64)
        return SweepWindow(
            ids=cols[1],
            rowids=np.asarray(cols[0], dtype=np.int64),
            slots=tuple(zip(cols[2], cols[3], cols[4], cols[5], cols[6], cols[7])),
            polarity=np.asarray(cols[8], dtype=np.int64),
            object_keys=cols[9],
            valid_from=np.asarray(cols[10], dtype=np.int64),
            valid_to=np.asarray(cols[11], dtype=np.int64),
            memory_types=cols[12],
            observations=np.asarray(cols[13], dtype=np.int64),
            storage=np.asarray(cols[14], dtype=np.float64),
            retrieval=np.asarray(cols[15], dtype=np.float64),
            observed_at=np.asarray(cols[16], dtype=np.int64),
            vectors=self._vectors["claims"].read(slots.tolist()) if n else
            np.zeros((0, 0), dtype=np.float32),
            has_vector=slots > 0,
            next=following,
        )

    def apply_sweep(
        self,
        retrieval: Sequence[tuple[str, float]],
        memory_types: Sequence[tuple[str, str]],
        folds: Sequence[tuple[str, Sequence[str], int, float, int]],
        at: int,
    ) -> None:
        """Write one consolidation window; see ``Store.apply_sweep``."""
        with self._writing() as conn:
            # The rowid is parsed from the id by SQLite, not Python: a sweep rewrites
            # every row, and claim_rowid() was its largest Python cost (and the longest
            # stretch a reader thread waited for the GIL).
            conn.executemany(
                f"UPDATE claims SET salience = :value WHERE rowid = {_ROWID_OF_ID} AND id = :id",
                [{"value": value, "id": cid} for cid, value in retrieval],
            )
            conn.executemany(
                f"UPDATE claims SET memory_type = :value WHERE rowid = {_ROWID_OF_ID} AND id = :id",
                [{"value": kind, "id": cid} for cid, kind in memory_types],
            )
            for survivor, losers, observations, storage, observed_at in folds:
                self._fold(conn, survivor, losers, observations, storage, observed_at, at)

    def _fold(
        self, conn: sqlite3.Connection, survivor: str, losers: Sequence[str],
        observations: int, storage: float, observed_at: int, at: int,
    ) -> None:
        members = [survivor, *losers]
        found = {cid: (rowid, cited) for rowid, cid, cited in conn.execute(
            f"SELECT rowid, id, sources FROM claims WHERE rowid IN ({','.join('?' * len(members))})",
            [claim_rowid(cid) for cid in members],
        )}
        if any(cid not in found for cid in members):  # pragma: no cover - read in this transaction
            raise StoreError("a claim being merged vanished during consolidation")
        sources = list(dict.fromkeys(
            source for cid in members for source in json.loads(found[cid][1] or "[]")
        ))
        rowid = found[survivor][0]
        conn.execute(
            "UPDATE claims SET observations = ?, salience_base = ?, observed_at = ?, sources = ?"
            " WHERE rowid = ?",
            (observations, storage, observed_at,
             json.dumps(sources, ensure_ascii=False) if sources else None, rowid),
        )
        conn.executemany(LINK_SOURCE_SQL, [(source, rowid) for source in sources])
        conn.executemany(
            "UPDATE claims SET invalidated_at = max(?, recorded_at), invalidated_by = ?"
            " WHERE rowid = ? AND id = ?",
            [(at, survivor, found[cid][0], cid) for cid in losers],
        )
