"""The nearest rows a read may see, by cosine: rank the sidecar first, filter the best.

Filtering first means asking SQL for every row the scope, time and states admit, then
gathering and scoring their vectors: per query, one Python object per admitted row and
a scattered read of the sidecar (about 100 ms at 100,000 claims here). Instead:

1. Rank the first ``count`` slots of the sidecar, all of them, in one contiguous matrix
   product (``VectorFile.top``; past ``EXACT_SLOTS`` after a sign-bit pass).
2. Ask SQL which of the best ``want`` slots (``limit`` and a quarter) the filter admits,
   a primary-key probe each. The first ``limit`` admitted, in rank order, are the
   answer: any admitted row outside the ``want`` best ranks below all of them.
3. Fewer than ``limit`` admitted: if the scope has few rows (counted through the scope
   index, stopping at ``sqrt(2 * limit * count)``, where probing and scanning cost about
   the same), scan; else multiply ``want`` by 8 and repeat, and once ``want`` passes an
   eighth of the slots, scan. The scan selects what the filter admits and scores those,
   exactly as before; so a time-travel or audit search that live rows would crowd out
   still finds its answer, and only costs more.

A store of at most ``SCAN_MIN`` rows is always scanned.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from ._vectors import VectorFile, dot

__all__ = ["SCAN_MIN", "nearest_admitted"]

SCAN_MIN = 1024
"""A scope with fewer rows than this is scanned, never ranked first."""
_CHUNK = 4096

Query = Callable[[str, Sequence[object]], list[Any]]


def nearest_admitted(
    query: Query,
    vectors: VectorFile,
    *,
    table: str,
    where: str,
    params: Sequence[object],
    scope_where: str,
    scope_params: Sequence[object],
    vector: npt.NDArray[np.float32],
    limit: int,
    columns: str = "",
    seen: dict[str, tuple[Any, ...]] | None = None,
) -> list[tuple[str, float]]:
    """Up to ``limit`` ``(id, cosine)`` of ``table``'s rows that ``where`` admits and that
    have a vector, nearest first (equal scores by rowid); ``scope_where`` is the part of
    ``where`` an index can count. With ``columns`` (``", a, b"``), the probe that admits
    a ranked row also reads those columns into ``seen[id]``: it reads the row anyway."""
    if limit <= 0 or vectors.dim != vector.shape[0]:
        return []
    (top,) = query(f"SELECT max(rowid) FROM {table}", [])[0]
    if top is None:
        return []
    count = int(top) + 1
    if count > SCAN_MIN:
        scan_at = max(SCAN_MIN, math.isqrt(2 * limit * count))

        def scope_is_small() -> bool:
            (seen,) = query(
                f"SELECT count(*) FROM (SELECT 1 FROM {table} WHERE {scope_where} LIMIT ?)",
                [*scope_params, scan_at],
            )[0]
            return bool(seen < scan_at)

        found = _ranked_first(query, vectors, table, where, params, vector, limit, count,
                              scope_is_small, columns, seen)
        if found is not None:
            return found
    return _scan(query, vectors, table, where, params, vector, limit)


def _admitted(
    query: Query, table: str, where: str, params: Sequence[object], rowids: Sequence[int],
    columns: str = "", seen: dict[str, tuple[Any, ...]] | None = None,
) -> dict[int, str]:
    found: dict[int, str] = {}
    for start in range(0, len(rowids), _CHUNK):
        chunk = rowids[start : start + _CHUNK]
        rows = query(
            f"SELECT rowid, id{columns} FROM {table} NOT INDEXED WHERE rowid IN ({','.join('?' * len(chunk))})"
            f" AND vec_slot = rowid AND {where}", [*chunk, *params])
        for row in rows:
            found[row[0]] = row[1]
            if seen is not None:
                seen[row[1]] = row[2:]
    return found


def _ranked_first(
    query: Query, vectors: VectorFile, table: str, where: str, params: Sequence[object],
    vector: npt.NDArray[np.float32], limit: int, count: int,
    scope_is_small: Callable[[], bool], columns: str, seen: dict[str, tuple[Any, ...]] | None,
) -> list[tuple[str, float]] | None:
    """Steps 1-3 of the module docstring; ``None`` when it is time to scan."""
    admitted: dict[int, str] = {}
    checked: set[int] = set()
    want = limit + (limit + 3) // 4
    while True:
        slots, scores = vectors.top(vector, count, want)
        ranked = slots.tolist()
        fresh = [slot for slot in ranked if slot not in checked]
        admitted.update(_admitted(query, table, where, params, fresh, columns, seen))
        checked.update(fresh)
        kept = [(admitted[slot], float(score))
                for slot, score in zip(ranked, scores.tolist()) if slot in admitted]
        if len(kept) >= limit:
            return kept[:limit]
        if want == limit + (limit + 3) // 4 and scope_is_small():
            return None
        want *= 8
        if 8 * want > count:
            return None


def _scan(
    query: Query, vectors: VectorFile, table: str, where: str, params: Sequence[object],
    vector: npt.NDArray[np.float32], limit: int,
) -> list[tuple[str, float]]:
    """Score every row the filter admits (the exact path, and the last resort)."""
    rows = query(
        f"SELECT {table}.vec_slot, {table}.rowid FROM {table} WHERE {where}"
        f" AND {table}.vec_slot IS NOT NULL", params,
    )
    if not rows:
        return []
    slots = np.array([slot for slot, _ in rows], dtype=np.int64)
    scores = dot(vectors.read(slots.tolist()), vector)
    best = np.lexsort((slots, -scores))[:limit]
    rowids = [rows[i][1] for i in best.tolist()]
    ids = dict(query(
        f"SELECT rowid, id FROM {table} WHERE rowid IN ({','.join('?' * len(rowids))})",
        rowids,
    ))
    return [(ids[rows[i][1]], float(scores[i])) for i in best.tolist() if rows[i][1] in ids]
