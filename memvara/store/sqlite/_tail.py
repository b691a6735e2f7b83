"""The rows a text index has not caught up with, searched in memory.

Rows written one at a time wait above the index's watermark until ``TEXT_INDEX_BATCH``
of them do (``_core``). A search must still find them, and may not index them itself:
a read never writes (it would take the write lock, wait for another process's writer,
and fail on a read-only store). So it reads them and scores them here, in an in-memory
SQLite database of this process holding an FTS5 table per store table, made with the
store's own tokenizer (read from its ``CREATE VIRTUAL TABLE``): the rows are tokenized
exactly as the index will tokenize them, and nothing is persisted. How, by the index's
size:

* **Below ``MIRROR_ROWS`` (2,048) indexed rows** the in-memory table mirrors the whole table,
  the indexed rows and the waiting ones, and FTS5 ranks there. Its statistics (rows,
  tokens, each phrase's rows) are then exactly those the index will have once it holds
  the waiting rows, so the list is the one a flushed index gives, score for score. A
  small index is where the waiting rows weigh most: a store of 100 claims written one
  at a time has none indexed at all, and the index's own statistics would give every
  word FTS5's floor IDF.
* **From ``MIRROR_ROWS`` on** it mirrors only the waiting rows (at most
  ``TEXT_INDEX_BATCH - 1``, against at least 2,048 indexed). The index answers for its
  rows as before (``_bm25.top_matches``); each waiting row is scored with FTS5's
  ``bm25()`` arithmetic (``_bm25.share``) from the *index's* statistics (its rows, its
  average length, each phrase's rows, as the planner counts them) and the row's own
  length and instances of each phrase (``highlight()``'s marks, two characters an
  instance: a phrase whose instances overlap, one repeating its own first words, counts
  fewer there than FTS5 would), so it ranks on the scale of the rows it joins. What this
  leaves out is the waiting rows' own share of the statistics, at most an eighth; and,
  beside a rarer phrase, a phrase in half the indexed rows or more is only matched, not
  scored (FTS5's floor IDF: it adds under 2.2e-6), as the planner does (``_bm25``).

Either way the waiting rows that match are then filtered by the read's filter (scope,
time, states) and merged with the indexed ones before the list is cut. The mirror is
kept in step by its rows' count and highest rowid (rows are only appended above the
highest, or deleted; a row's text is never rewritten by memvara), so a search re-reads
only new rows' text.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from . import _bm25

__all__ = ["MIRROR_ROWS", "TailSearch"]

MIRROR_ROWS = 2048
"""Below this many indexed rows a table is mirrored whole (the module docstring): the
size under which the text planner runs FTS5's plain query too (``_bm25.PLAN_MIN_ROWS``),
and a few hundred microseconds' copy, once, of what a search then reads anyway."""

_TOKENIZE = re.compile(r"tokenize\s*=\s*'((?:[^']|'')*)'", re.IGNORECASE)
_CHUNK = 400  # rowids bound in one statement
_PHRASES = 1024  # phrases whose instances a mirror keeps


@dataclass
class _Mirror:
    """The rows of one table that the in-memory FTS5 table ``name`` holds: every row
    above ``floor``, as of ``version`` (``(floor, count, highest rowid)``)."""

    name: str
    rows: set[int] = field(default_factory=set)
    version: tuple[int, int, int] | None = None
    sizes: dict[int, int] = field(default_factory=dict)
    """Each row's length in tokens, as FTS5 counts it (its ``docsize``)."""
    instances: dict[str, tuple[int, dict[int, int]]] = field(default_factory=dict)
    """Per phrase: the highest rowid looked at, and each row's instances of it. Rows
    only come above the highest (a row's text is never rewritten), so a later search
    reads the new rows only."""


class TailSearch:
    """One store's in-memory text search of the rows its indexes do not hold yet."""

    def __init__(self) -> None:
        self._lock = threading.Lock()  # one in-memory connection, shared by reader threads
        self._conn: sqlite3.Connection | None = None
        self._mirrors: dict[str, _Mirror] = {}

    def close(self) -> None:
        """Drop the in-memory tables."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
            self._conn, self._mirrors = None, {}

    def forget(self, table: str) -> None:
        """Empty ``table``'s mirror: its index holds every row again."""
        with self._lock:
            mirror = self._mirrors.get(table)
            if mirror is not None and mirror.rows and self._conn is not None:
                self._conn.execute(f"DELETE FROM {mirror.name}")
                self._mirrors[table] = _Mirror(mirror.name)

    def top_matches(
        self,
        query: _bm25.Query,
        counts: _bm25.TermCounts,
        *,
        table: str,
        fts: str,
        column: str,
        match: str,
        where: str,
        params: Sequence[object],
        limit: int,
        indexed: int,
        plan: bool = True,
        columns: Sequence[str] = (),
        seen: dict[str, tuple[Any, ...]] | None = None,
    ) -> list[_bm25.Match]:
        """``_bm25.top_matches`` for a table whose rows above ``indexed`` (the index's
        watermark) are not in its index ``fts`` yet: those rows found and scored here
        (the module docstring), the read's filter applied to them, merged before the cut."""
        reads = _bm25._Reads(query, ", ".join(f"{table}.{c}" for c in columns), seen)
        (averages,) = query(
            f"SELECT (SELECT block FROM {fts}_data WHERE id = 1)", [])[0]
        in_index = _bm25.rows_indexed(bytes(averages or b"")) or 0
        phrases = _bm25.phrases_of(match) or [match]
        stats = None if in_index < MIRROR_ROWS else counts.rows_and_hits(query, fts, phrases)
        if stats is None:  # a small index (or one the planner does not count): mirror all
            with self._lock:  # one state of the mirror from its update to its answer
                name = self._sync(query, table, fts, column, 0)
                ranked = [(int(rowid), float(score)) for rowid, score in self._db().execute(
                    f"SELECT rowid, bm25({name}) FROM {name} WHERE {name} MATCH ?"
                    f" ORDER BY bm25({name}), rowid", [match])]
            return self._admitted(reads, table, where, params, ranked, limit)
        found = _bm25.top_matches(
            query, counts, table=table, fts=fts, column=column, match=match, where=where,
            params=params, limit=limit, plan=plan, columns=columns, seen=seen)
        scores: dict[int, float] = {}
        # A phrase in half the indexed rows or more adds under 2.2e-6 to a score (FTS5's
        # floor IDF): beside another phrase it is only matched, as the planner does.
        floor = {p for p in phrases if 2 * stats.hits[p] >= stats.rows}
        if len(floor) == len(phrases):
            floor = set()
        with self._lock:
            self._sync(query, table, fts, column, indexed)
            mirror = self._mirrors[table]
            for phrase in phrases:  # in query order: bm25() sums its phrases in order
                weight = _bm25.idf(stats.rows, stats.hits[phrase])
                for rowid, count in self._instances(mirror, phrase).items():
                    if rowid not in mirror.rows:  # deleted since it was looked at
                        continue
                    if phrase in floor:
                        scores.setdefault(rowid, 0.0)
                    else:
                        scores[rowid] = scores.get(rowid, 0.0) + _bm25.share(
                            weight, count, mirror.sizes[rowid], stats.average)
        ranked = sorted(((rowid, -score) for rowid, score in scores.items()),
                        key=lambda item: (item[1], item[0]))
        waiting = self._admitted(reads, table, where, params, ranked, limit)
        return sorted([*found, *waiting], key=lambda item: (item[2], item[0]))[:limit]

    def _admitted(
        self, reads: _bm25._Reads, table: str, where: str, params: Sequence[object],
        ranked: list[tuple[int, float]], limit: int,
    ) -> list[_bm25.Match]:
        """The first ``limit`` of ``ranked`` (``(rowid, bm25)``, best first) that the
        read's filter ``where`` admits, as matches."""
        found: list[_bm25.Match] = []
        step = max(limit, 64)
        for start in range(0, len(ranked), step):
            part = ranked[start : start + step]
            for at in range(0, len(part), _CHUNK):
                chunk = part[at : at + _CHUNK]
                ids = {int(rowid): str(key) for rowid, key, _ in reads(
                    # NOT INDEXED: a primary-key probe each (led by the scope index,
                    # SQLite would walk the scope's rows).
                    f"SELECT {table}.rowid, {table}.id, 0{reads.columns} FROM {table}"
                    f" NOT INDEXED WHERE {table}.rowid IN ({','.join('?' * len(chunk))})"
                    f" AND {where}",
                    [*(rowid for rowid, _ in chunk), *params], 3)}
                found.extend((rowid, ids[rowid], score) for rowid, score in chunk
                             if rowid in ids)
            if len(found) >= limit:
                break
        return found[:limit]

    def _instances(self, mirror: _Mirror, phrase: str) -> dict[int, int]:
        """Each mirrored row's instances of ``phrase`` (the rows that hold it), reading
        only rows not looked at before (caller holds ``_lock``)."""
        top = 0 if mirror.version is None else mirror.version[2]
        seen, found = mirror.instances.get(phrase, (0, {}))
        if top > seen:
            name = mirror.name
            for rowid, marks in self._db().execute(
                    f"SELECT rowid, length(highlight({name}, 0, '[', ']')) - length(body)"
                    f" FROM {name} WHERE {name} MATCH ? AND rowid > ?", [phrase, seen]):
                found[int(rowid)] = int(marks) // 2  # "[" and "]": two characters each
            if len(mirror.instances) >= _PHRASES:
                mirror.instances.clear()
            mirror.instances[phrase] = (top, found)
        return found

    def _db(self) -> sqlite3.Connection:
        """The in-memory database (caller holds ``_lock``)."""
        if self._conn is None:
            self._conn = sqlite3.connect(":memory:", isolation_level=None,
                                         check_same_thread=False)
        return self._conn

    def _sync(
        self, query: _bm25.Query, table: str, fts: str, column: str, floor: int
    ) -> str:
        """Bring ``table``'s mirror to every row above ``floor``, as this read sees the
        table; the name of its in-memory FTS5 table (caller holds ``_lock``: another
        reader's snapshot may see other rows, so the mirror is updated and read under
        one hold)."""
        (count, top), = query(  # the whole table: counted from its smallest index
            f"SELECT count(*), coalesce(max(rowid), 0) FROM {table}"
            + (" WHERE rowid > ?" if floor else ""), [floor] if floor else [])
        version = (floor, int(count), int(top))
        mirror = self._mirrors.get(table)
        if mirror is None:
            mirror = self._create(query, table, fts)
        if mirror.version == version:
            return mirror.name
        present = {int(rowid) for (rowid,) in query(
            f"SELECT rowid FROM {table} WHERE rowid > ?", [floor])}
        conn = self._db()
        gone = sorted(mirror.rows - present)
        for at in range(0, len(gone), _CHUNK):
            chunk = gone[at : at + _CHUNK]
            conn.execute(f"DELETE FROM {mirror.name} WHERE rowid IN"
                         f" ({','.join('?' * len(chunk))})", chunk)
        for rowid in gone:
            del mirror.sizes[rowid]
        new = sorted(present - mirror.rows)
        if new and mirror.version is not None and new[0] <= mirror.version[2]:
            mirror.instances.clear()  # rows below those looked at: look again
        for at in range(0, len(new), _CHUNK):
            chunk = new[at : at + _CHUNK]
            marks = ','.join('?' * len(chunk))
            conn.executemany(
                f"INSERT INTO {mirror.name} (rowid, body) VALUES (?, ?)",
                query(f"SELECT rowid, {column} FROM {table} WHERE rowid IN ({marks})",
                      chunk))
            for rowid, size in conn.execute(
                    f"SELECT id, sz FROM {mirror.name}_docsize WHERE id IN ({marks})",
                    chunk):
                mirror.sizes[int(rowid)] = (_bm25.varints(bytes(size), 1) or [0])[0]
        mirror.rows, mirror.version = present, version
        return mirror.name

    def _create(self, query: _bm25.Query, table: str, fts: str) -> _Mirror:
        """``table``'s mirror, with the tokenizer of the store's index ``fts`` (caller
        holds ``_lock``)."""
        rows = query("SELECT sql FROM sqlite_master WHERE name = ?", [fts])
        spec = _TOKENIZE.search(str(rows[0][0])) if rows else None
        tokenize = "" if spec is None else f", tokenize = '{spec.group(1)}'"
        mirror = _Mirror(f"waiting_{table}")
        self._db().execute(f"CREATE VIRTUAL TABLE {mirror.name} USING fts5 (body{tokenize})")
        self._mirrors[table] = mirror
        return mirror
