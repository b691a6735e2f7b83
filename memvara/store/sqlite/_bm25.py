"""The best BM25 matches without scoring every row that shares a common word.

A question like "where does user_12 live?" asks FTS5 for ``"user" OR "12" OR "live"``.
When most claims say "user", FTS5 computes BM25 for every one of them before ``LIMIT``
applies, so the plain query costs the size of the table, not of the answer. Here each
phrase is first counted (``hits``, cached until the index changes) and put in a class:

* **rare**: the rarest phrases, while each matches at most ``budget(N)`` rows (a 64th
  of the rows, at least 256) and together at most two budgets, and always the rarest
  one if it matches at most eight budgets. Every row matching one is a *candidate*,
  scored exactly: by a first query over the rare phrases, then ``(rare) AND (common)``,
  which FTS5 drives from the rare phrases' short row lists, for the common phrases'
  share.
* **floor**: phrases in at least half of the rows. FTS5 gives them an IDF of ``1e-6``
  (its formula goes negative there), so they add less than ``2.2e-6`` to any score;
  they are left out of the expressions rather than making FTS5 count every row to
  score them. This is the one approximation the exact path makes.
* **common**: the rest.

A phrase adds at most ``(K1 + 1) * idf`` to a row's score (the term-frequency factor
``tf * (K1 + 1) / (tf + K1 * (1 - b + b * len / avg))`` stays below ``K1 + 1``), so a row
that matches no rare phrase scores below the sum of those ceilings over the common and
floor phrases. Candidates scoring above it are certainly the head of the exact list;
when ``limit`` of them do (MaxScore, from the text retrieval literature), the list is
exact. Otherwise the rest of the list is filled from a **window**: the first
``window(limit)`` rows, in rowid order, that match a common phrase, scored over the
common phrases (and, if still short, rows matching only floor phrases, scored 0). The
window is the approximation that keeps a query whose only other words are common from
scoring a quarter of the table; it is exact whenever it holds every such row.

``bm25()`` recounts every phrase it scores, on every query, so scoring a common phrase
costs a scan of its rows each time. When the common class is one single-token phrase,
its share of a score is computed here from the cached counts instead (``_Search``), bit
for bit as ``bm25()`` would: the window needs no recount at all, and the rows holding a
rare phrase and the common one are looked up one by one when that is cheaper.

The filter (scope, time, states) is joined into every query, so it applies before any
cut, as in the plain query. Small indexes, and queries whose phrases together match at
most one budget of rows, run the plain query unchanged.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = [
    "B",
    "IDF_FLOOR",
    "K1",
    "MARK_HITS",
    "PLAN_MIN_ROWS",
    "SEEK_HITS",
    "Counts",
    "Split",
    "TermCounts",
    "budget",
    "ceiling",
    "idf",
    "phrases_of",
    "rows_indexed",
    "share",
    "split",
    "top_matches",
    "varints",
    "window",
]

K1 = 1.2
"""FTS5's ``bm25()`` term-frequency saturation."""
B = 0.75
"""FTS5's ``bm25()`` length normalization."""
IDF_FLOOR = 1e-6
"""FTS5's IDF for a phrase in at least half of the rows (the formula is <= 0 there)."""
PLAN_MIN_ROWS = 2048
"""Below this many indexed rows the plain query is cheap enough: no counting, no split."""
_CACHED_PHRASES = 4096

Query = Callable[[str, Sequence[object]], list[Any]]
Match = tuple[int, str, float]
"""``(rowid, id, bm25)``, FTS5's sign: lower is better."""

_PHRASE = re.compile(r'"((?:[^"]|"")*)"')


def idf(rows: int, hits: int) -> float:
    """The IDF FTS5's ``bm25()`` gives a phrase found in ``hits`` of ``rows`` rows."""
    value = math.log((rows - hits + 0.5) / (hits + 0.5))
    return value if value > 0.0 else IDF_FLOOR


def ceiling(rows: int, hits: int) -> float:
    """More than the phrase can add to any row's score, whatever its count and length."""
    return (K1 + 1.0) * idf(rows, hits)


def budget(rows: int) -> int:
    """How many (phrase, row) hits are scored exhaustively: a 64th of the rows, at
    least 256 (about 2 us a hit here, so 3 ms at 100,000 claims)."""
    return max(256, rows // 64)


def window(limit: int) -> int:
    """How many rows matching a common phrase are scored when the candidates fall short:
    ``limit``, enough to fill the list whatever the rare phrases found. (Twice that was
    ~12% of a search at 8,000 claims, to pick the best of an arbitrary, rowid-ordered
    sample instead of taking it whole.)"""
    return limit


def phrases_of(match: str) -> list[str] | None:
    """The quoted phrases of an ``"a" OR "b"`` expression (as ``match_any`` builds it),
    still quoted; ``None`` for any other expression, which is then run as given."""
    found = [m.group(0) for m in _PHRASE.finditer(match)]
    if not found or " OR ".join(found) != match:
        return None
    return list(dict.fromkeys(found))


def varints(record: bytes, count: int) -> list[int] | None:
    """The first ``count`` SQLite varints of ``record`` (``None`` if it is cut short):
    seven bits a byte, high bit set on all but the last, and a ninth byte, when there
    is one, giving all eight of its bits. FTS5 writes its counts this way."""
    values: list[int] = []
    at = 0
    while len(values) < count:
        value = 0
        for i in range(8):
            if at + i >= len(record):
                return None
            byte = record[at + i]
            value = (value << 7) | (byte & 0x7F)
            if not byte & 0x80:
                size = i + 1
                break
        else:  # eight bytes with the high bit set: the ninth gives all eight of its bits
            if at + 8 >= len(record):
                return None
            value = (value << 8) | record[at + 8]
            size = 9
        values.append(value)
        at += size
    return values


def rows_indexed(averages: bytes) -> int | None:
    """The row count at the head of an FTS5 averages record (``<fts>_data`` id 1), the
    ``N`` its ``bm25()`` uses; ``None`` if the record is cut short."""
    found = varints(averages, 1)
    return None if found is None else found[0]


def share(idf_: float, frequency: int, tokens: int, average: float) -> float:
    """What one phrase adds to a row's score, as FTS5's ``bm25()`` computes it (same
    operations, same order, so the same double): ``frequency`` instances in a row of
    ``tokens`` tokens, the index averaging ``average`` tokens a row."""
    return idf_ * ((frequency * (K1 + 1.0)) / (frequency + K1 * (1 - B + B * tokens / average)))


@dataclass(frozen=True)
class Counts:
    """An index's row count, its average tokens a row (as ``bm25()`` computes it), and
    how many rows each phrase matches."""

    rows: int
    average: float
    hits: dict[str, int]


@dataclass(frozen=True)
class Split:
    """The phrases of one query by class (see the module docstring); a row matching no
    ``rare`` phrase scores below ``ceiling``."""

    rare: tuple[str, ...]
    common: tuple[str, ...]
    floor: tuple[str, ...]
    ceiling: float


def split(phrases: Sequence[str], hits: Mapping[str, int], rows: int) -> Split | None:
    """Classify ``phrases`` (``None``: run the plain query, which is then cheap, or
    gains nothing from a split). Ties in ``hits`` keep query order."""
    if sum(hits[p] for p in phrases) <= budget(rows):
        return None
    kept = sorted((p for p in phrases if 2 * hits[p] < rows), key=lambda p: hits[p])
    floor = tuple(p for p in phrases if 2 * hits[p] >= rows)
    if not kept:
        return None
    rare: list[str] = []
    total = 0
    for phrase in kept:
        fits = hits[phrase] <= budget(rows) and total + hits[phrase] <= 2 * budget(rows)
        if not fits and (rare or hits[phrase] > 8 * budget(rows)):
            break
        rare.append(phrase)
        total += hits[phrase]
    common = tuple(kept[len(rare):])
    if not common and not floor:
        return None
    above = sum(ceiling(rows, hits[p]) for p in (*common, *floor))
    return Split(tuple(rare), common, floor, above)


class TermCounts:
    """How many rows each phrase matches, per text index, cached until the index changes.

    The version of an index is its FTS5 averages and structure records (``<fts>_data``
    ids 1 and 10): every committed change to the index writes a segment, and the
    structure record counts segment writes, so it never repeats. (Inside a write
    transaction the records lag the index; ``top_matches(plan=False)`` is for that.)
    Counting stops at half the rows, which is enough to know a phrase has the floor IDF.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cache: dict[str, tuple[tuple[bytes, ...], dict[str, int]]] = {}

    def rows_and_hits(
        self, query: Query, fts: str, phrases: Sequence[str]
    ) -> Counts | None:
        """The counts ``bm25()`` uses for ``fts`` and ``phrases``; ``None`` when the index
        is too small to plan for (or has no averages record)."""
        records = dict(query(f"SELECT id, block FROM {fts}_data WHERE id IN (1, 10)", []))
        version = (bytes(records.get(1, b"")), bytes(records.get(10, b"")))
        totals = varints(version[0], 2)  # rows, then tokens (one indexed column)
        if totals is None or totals[0] < PLAN_MIN_ROWS:
            return None
        rows, tokens = totals
        with self._lock:
            cached = self._cache.get(fts)
            counts = dict(cached[1]) if cached is not None and cached[0] == version else {}
        cap = (rows + 1) // 2
        for phrase in phrases:
            if phrase not in counts:
                counts[phrase] = int(query(
                    f"SELECT count(*) FROM (SELECT 1 FROM {fts} WHERE {fts} MATCH ? LIMIT ?)",
                    [phrase, cap],
                )[0][0])
        with self._lock:
            self._cache[fts] = (version, counts if len(counts) <= _CACHED_PHRASES else {})
        return Counts(rows, tokens / rows, {p: counts[p] for p in phrases})


def _any(phrases: Sequence[str]) -> str:
    return " OR ".join(phrases)


def top_matches(
    query: Query,
    counts: TermCounts,
    *,
    table: str,
    fts: str,
    column: str,
    match: str,
    where: str,
    params: Sequence[object],
    limit: int,
    plan: bool = True,
    columns: Sequence[str] = (),
    seen: dict[str, tuple[Any, ...]] | None = None,
) -> list[Match]:
    """Up to ``limit`` of ``table``'s rows matching ``match`` and ``where``, best first
    (ties by rowid), as the plain query ``... MATCH ? AND where ORDER BY bm25, rowid
    LIMIT ?`` returns them, or as the module docstring bounds the difference.
    ``column`` is the indexed column. ``plan=False`` runs the plain query: inside a
    write transaction the index may hold changes its records do not show yet. With
    ``columns`` (of ``table``), the queries that return a row also read those columns
    into ``seen[id]``: they read the row anyway, to filter it."""
    reads = _Reads(query, ", ".join(f"{table}.{c}" for c in columns), seen)
    phrases = phrases_of(match)
    planned = None if not plan or phrases is None or len(phrases) < 2 else (
        counts.rows_and_hits(query, fts, phrases))
    if phrases is not None and planned is not None:
        classes = split(phrases, planned.hits, planned.rows)
        if classes is not None:
            return _Search(reads, table, fts, column, where, params, planned).run(
                classes, limit)
    return [(rowid, key, float(score)) for rowid, key, score in reads(
        f"{_joined(table, fts, where, reads.columns)} ORDER BY score, {table}.rowid LIMIT ?",
        [match, *params, limit], 3)]


def _joined(table: str, fts: str, where: str, columns: str, *, scored: bool = True) -> str:
    # CROSS JOIN keeps the text index outside: driven from the table, SQLite would probe
    # the index once per row, and every probe recounts each phrase's rows for its IDF.
    score = f"bm25({fts})" if scored else "0.0"
    return (
        f"SELECT {table}.rowid, {table}.id, {score} AS score{columns} FROM {fts}"
        f" CROSS JOIN {table} ON {table}.rowid = {fts}.rowid WHERE {fts} MATCH ? AND {where}"
    )


class _Reads:
    """Runs the queries that return rows: each row's first ``width`` values are handed
    on, the rest (``columns``, when asked for) kept in ``seen`` by the row's id."""

    def __init__(self, query: Query, columns: str, seen: dict[str, tuple[Any, ...]] | None):
        self.query = query
        self.columns = f", {columns}" if columns and seen is not None else ""
        self._seen = seen if self.columns else None

    def __call__(self, sql: str, params: Sequence[object], width: int) -> list[Any]:
        rows = self.query(sql, params)
        if self._seen is None:
            return rows
        for row in rows:
            self._seen[row[1]] = tuple(row[width:])
        return [row[:width] for row in rows]


_ONE_TOKEN = re.compile(r'"[a-z0-9]+"')
SEEK_HITS = 1024
"""A row looked up by rowid in the text index costs about what ``bm25()`` spends
counting this many of a phrase's rows for its IDF (~30 us against ~30 ns a row here)."""
MARK_HITS = 64
"""Scoring a row from its ``highlight()`` marks and its length costs about what
``bm25()`` spends counting this many of a phrase's rows (~2 us a row here): the window
is scored that way only when the phrase has more rows than this many windows (at
8,000 claims ``bm25()`` is still cheaper; from about 30,000 it is not)."""


class _Search:
    """One planned text search (the module docstring's steps).

    ``bm25()`` recounts the rows of every phrase it scores, on every query: for a common
    phrase that is a scan of tens of thousands of rows, repeated by each query that
    scores it. Where the one common phrase is one token, its share of a row's score is
    computed here instead, from the counts already cached and the row's instances of it
    (the marks ``highlight()`` puts around them) and length (``<fts>_docsize``), by
    ``bm25()``'s own arithmetic (``share``).
    """

    def __init__(self, reads: _Reads, table: str, fts: str, column: str, where: str,
                 params: Sequence[object], counts: Counts) -> None:
        self.reads, self.query, self.table, self.fts = reads, reads.query, table, fts
        self.column, self.where, self.params, self.counts = column, where, params, counts

    def run(self, classes: Split, limit: int) -> list[Match]:
        query, reads, table, fts, where, params = (
            self.query, self.reads, self.table, self.fts, self.where, self.params)
        columns = reads.columns
        found: dict[int, tuple[str, float]] = {}
        common = _any(classes.common)
        alone = classes.common[0] if len(classes.common) == 1 else None
        if alone is not None and not _ONE_TOKEN.fullmatch(alone):
            alone = None
        if classes.rare:
            rare = _any(classes.rare)
            for rowid, key, score in reads(
                    _joined(table, fts, where, columns), [rare, *params], 3):
                found[rowid] = (key, float(score))
            if classes.common and found:
                both = f"({rare}) AND ({common})"
                if alone is None or not self._add_shares(found, alone, both):
                    for rowid, score in query(
                            f"SELECT rowid, bm25({fts}) FROM {fts} WHERE {fts} MATCH ?", [both]):
                        if rowid in found:
                            found[rowid] = (found[rowid][0], float(score))
        sure = sum(1 for _, score in found.values() if -score > classes.ceiling * (1 + 1e-9))
        if sure < limit:  # the head is exact; fill the rest from the window
            by_rowid = f" ORDER BY {fts}.rowid LIMIT ?"
            if alone is not None and self.counts.hits[alone] > MARK_HITS * window(limit):
                for rowid, key, marks, size in reads(
                        f"SELECT {table}.rowid, {table}.id, {self._marks(table)},"
                        f" {self._size(table)}{columns}"
                        f" FROM {fts} CROSS JOIN {table} ON {table}.rowid = {fts}.rowid"
                        f" WHERE {fts} MATCH ? AND {where}{by_rowid}",
                        [alone, *params, window(limit)], 4):
                    found.setdefault(rowid, (key, -self._share(alone, marks, size)))
            elif classes.common:
                for rowid, key, score in reads(_joined(table, fts, where, columns) + by_rowid,
                                               [common, *params, window(limit)], 3):
                    found.setdefault(rowid, (key, float(score)))
            if classes.floor and len(found) < limit:
                for rowid, key, score in reads(
                        _joined(table, fts, where, columns, scored=False) + by_rowid,
                        [_any(classes.floor), *params, limit + len(found)], 3):
                    found.setdefault(rowid, (key, float(score)))
        ranked = sorted(found.items(), key=lambda item: (item[1][1], item[0]))[:limit]
        return [(rowid, key, score) for rowid, (key, score) in ranked]

    def _marks(self, source: str) -> str:
        # highlight() wraps each instance in "[" and "]": two characters an instance.
        return f"length(highlight({self.fts}, 0, '[', ']')) - length({source}.{self.column})"

    def _size(self, source: str) -> str:
        return f"(SELECT sz FROM {self.fts}_docsize WHERE id = {source}.rowid)"

    def _share(self, phrase: str, marks: int, size: bytes | None) -> float:
        tokens = varints(size or b"", 1)
        return share(idf(self.counts.rows, self.counts.hits[phrase]), marks // 2,
                     0 if tokens is None else tokens[0], self.counts.average)

    def _add_shares(self, found: dict[int, tuple[str, float]], phrase: str, both: str) -> bool:
        """Add ``phrase``'s share to the rows of ``found`` that hold it (``both`` finds
        them) when looking them up one by one is cheaper than ``bm25()`` recounting the
        phrase; ``False`` (and nothing changed) when it is not."""
        fts = self.fts
        holding = [rowid for (rowid,) in self.query(
            f"SELECT rowid FROM {fts} WHERE {fts} MATCH ?", [both]) if rowid in found]
        if len(holding) * SEEK_HITS > self.counts.hits[phrase]:
            return False
        if holding:
            for rowid, marks, size in self.query(
                    f"SELECT rowid, {self._marks(fts)}, {self._size(fts)} FROM {fts}"
                    f" WHERE {fts} MATCH ? AND rowid IN ({','.join('?' * len(holding))})",
                    [phrase, *holding]):
                key, score = found[rowid]
                found[rowid] = (key, score - self._share(phrase, marks, size))
        return True
