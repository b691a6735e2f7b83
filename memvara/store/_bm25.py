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
    "IDF_FLOOR",
    "K1",
    "PLAN_MIN_ROWS",
    "Split",
    "TermCounts",
    "budget",
    "ceiling",
    "idf",
    "phrases_of",
    "rows_indexed",
    "split",
    "top_matches",
    "window",
]

K1 = 1.2
"""FTS5's ``bm25()`` term-frequency saturation (its ``b`` is 0.75; no bound here needs it)."""
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
    """How many rows matching a common phrase are scored when the candidates fall short."""
    return 2 * limit


def phrases_of(match: str) -> list[str] | None:
    """The quoted phrases of an ``"a" OR "b"`` expression (as ``match_any`` builds it),
    still quoted; ``None`` for any other expression, which is then run as given."""
    found = [m.group(0) for m in _PHRASE.finditer(match)]
    if not found or " OR ".join(found) != match:
        return None
    return list(dict.fromkeys(found))


def rows_indexed(averages: bytes) -> int | None:
    """The row count at the head of an FTS5 averages record (``<fts>_data`` id 1), the
    ``N`` its ``bm25()`` uses; ``None`` if the record is cut short. The number is a
    SQLite varint: seven bits a byte, high bit set on all but the last, and a ninth
    byte, when there is one, giving all eight of its bits."""
    value = 0
    for i, byte in enumerate(averages[:9]):
        if i == 8:
            return (value << 8) | byte
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value
    return None


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
    ) -> tuple[int, dict[str, int]] | None:
        """``(N, hits per phrase)`` for ``fts``; ``None`` when the index is too small to
        plan for (or has no averages record)."""
        records = dict(query(f"SELECT id, block FROM {fts}_data WHERE id IN (1, 10)", []))
        version = (bytes(records.get(1, b"")), bytes(records.get(10, b"")))
        rows = rows_indexed(version[0])
        if rows is None or rows < PLAN_MIN_ROWS:
            return None
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
        return rows, {p: counts[p] for p in phrases}


def _any(phrases: Sequence[str]) -> str:
    return " OR ".join(phrases)


def top_matches(
    query: Query,
    counts: TermCounts,
    *,
    table: str,
    fts: str,
    match: str,
    where: str,
    params: Sequence[object],
    limit: int,
    plan: bool = True,
) -> list[Match]:
    """Up to ``limit`` of ``table``'s rows matching ``match`` and ``where``, best first
    (ties by rowid), as the plain query ``... MATCH ? AND where ORDER BY bm25, rowid
    LIMIT ?`` returns them, or as the module docstring bounds the difference.
    ``plan=False`` runs the plain query: inside a write transaction the index may hold
    changes its records do not show yet."""
    phrases = phrases_of(match)
    planned = None if not plan or phrases is None or len(phrases) < 2 else (
        counts.rows_and_hits(query, fts, phrases))
    if phrases is not None and planned is not None:
        rows, hits = planned
        classes = split(phrases, hits, rows)
        if classes is not None:
            return _split_search(query, table, fts, classes, where, params, limit)
    return [(rowid, key, float(score)) for rowid, key, score in query(
        f"{_joined(table, fts, where)} ORDER BY score, {table}.rowid LIMIT ?",
        [match, *params, limit])]


def _joined(table: str, fts: str, where: str, *, scored: bool = True) -> str:
    # CROSS JOIN keeps the text index outside: driven from the table, SQLite would probe
    # the index once per row, and every probe recounts each phrase's rows for its IDF.
    score = f"bm25({fts})" if scored else "0.0"
    return (
        f"SELECT {table}.rowid, {table}.id, {score} AS score FROM {fts}"
        f" CROSS JOIN {table} ON {table}.rowid = {fts}.rowid WHERE {fts} MATCH ? AND {where}"
    )


def _split_search(
    query: Query, table: str, fts: str, classes: Split, where: str,
    params: Sequence[object], limit: int,
) -> list[Match]:
    found: dict[int, tuple[str, float]] = {}
    if classes.rare:
        rare = _any(classes.rare)
        for rowid, key, score in query(_joined(table, fts, where), [rare, *params]):
            found[rowid] = (key, float(score))
        if classes.common and found:
            both = f"({rare}) AND ({_any(classes.common)})"
            for rowid, score in query(
                    f"SELECT rowid, bm25({fts}) FROM {fts} WHERE {fts} MATCH ?", [both]):
                if rowid in found:
                    found[rowid] = (found[rowid][0], float(score))
    sure = sum(1 for _, score in found.values() if -score > classes.ceiling * (1 + 1e-9))
    if sure < limit:  # the head is exact; fill the rest from the window
        by_rowid = f" ORDER BY {fts}.rowid LIMIT ?"
        if classes.common:
            for rowid, key, score in query(_joined(table, fts, where) + by_rowid,
                                           [_any(classes.common), *params, window(limit)]):
                found.setdefault(rowid, (key, float(score)))
        if classes.floor and len(found) < limit:
            for rowid, key, score in query(_joined(table, fts, where, scored=False) + by_rowid,
                                           [_any(classes.floor), *params, limit + len(found)]):
                found.setdefault(rowid, (key, float(score)))
    ranked = sorted(found.items(), key=lambda item: (item[1][1], item[0]))[:limit]
    return [(rowid, key, score) for rowid, (key, score) in ranked]
