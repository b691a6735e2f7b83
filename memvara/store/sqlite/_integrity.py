"""The store's self-check: SQLite's, each text index's against its table, and each
vector sidecar and watermark against the rows that point into it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from ._core import StoreCore

__all__ = ["Integrity"]


class Integrity(StoreCore):
    """``integrity_problems``."""

    @contextmanager
    def _read_view(self) -> Iterator[sqlite3.Connection]:
        """This thread's reading connection inside one snapshot."""
        with self._snapshot(), self._reading() as conn:
            yield conn

    def integrity_problems(self) -> list[str]:
        """Every inconsistency found (an empty list means the store is sound).

        ``PRAGMA integrity_check``; each FTS index's own check plus its document count
        against its table's rows (external-content FTS cannot see a row deleted behind
        its back); the sidecar's allocated slots against the rows that hold one; and no
        claim without a vector at or below the vector watermark, where none is looked for.
        """
        problems = [r[0] for r in self._query("PRAGMA integrity_check") if r[0] != "ok"]
        # FTS5's own check is an INSERT command: a read-only store skips it and compares
        # the counts below from one snapshot.
        writable = self._read_only is None
        with self._writing() if writable else self._read_view() as conn:
            for table, fts in (("claims", "claims_fts"), ("episodes", "episodes_fts")):
                try:
                    if writable:
                        conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')")
                except sqlite3.DatabaseError as exc:  # pragma: no cover - needs a damaged segment
                    problems.append(f"{fts}: {exc}")
                (rows,) = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE rowid <= (SELECT CAST(value AS INTEGER)"
                    " FROM store_meta WHERE key = ?)", (f"fts_{table}",)
                ).fetchone()
                (docs,) = conn.execute(f"SELECT count(*) FROM {fts}_docsize").fetchone()
                if rows != docs:
                    problems.append(f"{fts}: indexes {docs} documents for {rows} rows")
            for table, sidecar in self._vectors.items():
                (misplaced, top) = conn.execute(
                    f"SELECT count(*) FILTER (WHERE vec_slot != rowid), max(vec_slot)"
                    f" FROM {table}"
                ).fetchone()
                if misplaced:
                    problems.append(f"{table}: {misplaced} rows point at another row's vector")
                if top is not None:
                    sidecar.read([top])  # maps whatever another process has grown
                if top is not None and top >= sidecar.capacity:
                    problems.append(
                        f"{table}: row {top} has a vector but the sidecar holds"
                        f" {sidecar.capacity} slots"
                    )
            (lost,) = conn.execute(
                "SELECT count(*) FROM claims WHERE vec_slot IS NULL AND rowid <= (SELECT"
                " CAST(value AS INTEGER) FROM store_meta WHERE key = 'vectors_claims')"
            ).fetchone()
            if lost:
                problems.append(
                    f"claims: {lost} rows at or below the vector watermark have no vector")
        return problems
