"""Text search on a large store without scoring every row a common word matches.

The exact query (``_text.bm25_sql``) counts and scores every row any query word
matches: a question with "user" in it scores every claim that says "user" (0.4 s at
100,000 claims, 8 s at 1,000,000 here). This is the SQLite store's plan
(``store/sqlite/_bm25.py``), made with the same functions, so the two backends make the
same approximations and return the same lists:

1. Read each query token's row count from ``term_stats`` (kept by every write at its
   commit, ``_schema``), and count each phrase of several tokens from its rarest one,
   stopping at half the rows (a phrase there has FTS5's floor IDF whatever its exact
   count). The IDFs follow, as ``bm25()`` computes them. Inside its own write
   transaction a writer sees its uncommitted rows but not yet their counts, and a store
   opened read-only at schema version 1 has none: there the tokens are counted in the
   term table, stopping at half the rows (50-98 ms of a search at 1,000,000 claims).
2. Classify the phrases (``_bm25.split``): **rare** (few rows), **common**, **floor**
   (in half the rows or more: they add less than ``2.2e-6`` to any score and are left
   out of it).
3. Score exactly every row matching a rare phrase, over the rare and common phrases
   (in that order, as FTS5 sums ``(rare) AND (common)``). Those scoring above the most
   a row matching no rare phrase can score are the exact head of the list.
4. If fewer than ``limit`` are, fill from the **window**: the first ``limit`` rows in
   rowid order matching a common phrase, scored over the common phrases, then rows
   matching only floor phrases, scored 0.

Every query reads a row's phrases from its own postings (the ``doc`` index), so its
cost is the candidates' and the window's rows, plus the counting. Stores under
``PLAN_MIN_ROWS`` rows, one-phrase questions, and questions whose phrases together
match at most one budget of rows run the exact query, as on SQLite.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..sqlite._bm25 import PLAN_MIN_ROWS, idf, split, window
from ._schema import TERM_TABLES

__all__ = ["top_matches"]

Query = Callable[[str, Sequence[object]], list[Any]]



def top_matches(
    query: Query, table: str, phrases: Sequence[Sequence[str]], where: str,
    params: Sequence[object], limit: int, *, kept: bool = True,
    pending: tuple[int, int, Mapping[str, int]] = (0, 0, {}),
) -> list[tuple[str, float]] | None:
    """Up to ``limit`` ``(id, score)`` of ``table``'s rows matching a phrase and ``where``
    (its parameters: ``params``), best first, then by rowid, as the module docstring
    plans them; ``None`` when the exact query is the one to run. ``kept``: read the
    tokens' counts from ``term_stats`` rather than count them. ``pending``: the rows,
    tokens and rows per token the reader's open write added (counted at its commit)."""
    if len(phrases) < 2:
        return None
    terms = TERM_TABLES[table]
    (docs, tokens), = query("SELECT sum(docs), sum(tokens) FROM text_stats WHERE tbl = %s",
                            [table])
    rows = int(docs or 0) + pending[0]
    if rows < PLAN_MIN_ROWS:
        return None
    average = float(int(tokens or 0) + pending[1]) / float(rows)
    cap = (rows + 1) // 2
    distinct = [list(dict.fromkeys(p)) for p in phrases]
    wanted = list(dict.fromkeys(t for p in distinct for t in p))
    if kept:
        raw = dict(pending[2])
        for tok, n in query("SELECT term, sum(docs) FROM term_stats WHERE tbl = %s"
                            " AND term = ANY(%s) GROUP BY term", [table, wanted]):
            raw[str(tok)] = raw.get(str(tok), 0) + int(n)
    else:  # the term table holds the open write's rows already
        raw = {str(tok): int(n) for tok, n in query(
            f"SELECT u.tok, (SELECT count(*) FROM (SELECT 1 FROM {terms} t WHERE t.term = u.tok"
            " LIMIT %s) AS x) FROM unnest(%s::text[]) AS u(tok)", [cap, wanted])}
    # up to the cap, as counted: the same drivers whatever the exact count past it
    counted = {tok: min(raw.get(tok, 0), cap) for tok in wanted}
    drivers = [min(p, key=counted.__getitem__) for p in distinct]  # first of the rarest
    hits: dict[str, int] = {}
    for i, (tokens_, driver) in enumerate(zip(distinct, drivers)):
        others = [t for t in tokens_ if t != driver]
        hits[str(i)] = counted[driver] if not others else int(query(
            f"SELECT count(*) FROM (SELECT 1 FROM {terms} a WHERE a.term = %s AND (SELECT"
            f" count(*) FROM {terms} b WHERE b.doc = a.doc AND b.term = ANY(%s)) = %s"
            " LIMIT %s) AS x", [driver, others, len(others), cap])[0][0])
    classes = split(list(hits), hits, rows)
    if classes is None:
        return None

    def scored(keys: Sequence[str], first: int, cut: int | None) -> list[Any]:
        order = [int(k) for k in keys]
        return _scored(query, table, [distinct[i] for i in order],
                       [idf(rows, hits[str(i)]) for i in order],
                       [drivers[i] for i in order[:first]], first, average, where, params, cut)

    found: dict[int, tuple[str, float]] = {}
    if classes.rare:
        for rowid, key, score in scored([*classes.rare, *classes.common],
                                        len(classes.rare), None):
            found[rowid] = (key, float(score))
    sure = sum(1 for _, score in found.values() if score > classes.ceiling * (1 + 1e-9))
    if sure < limit:  # the head is exact; fill the rest from the window
        if classes.common:
            for rowid, key, score in scored(classes.common, len(classes.common),
                                            window(limit)):
                found.setdefault(rowid, (key, float(score)))
        if classes.floor and len(found) < limit:
            for rowid, key, _ in scored(classes.floor, len(classes.floor),
                                        limit + len(found)):
                found.setdefault(rowid, (key, 0.0))
    ranked = sorted(found.items(), key=lambda item: (-item[1][1], item[0]))[:limit]
    return [(key, score or 0.0) for _, (key, score) in ranked]


def _scored(
    query: Query, table: str, phrases: Sequence[Sequence[str]], idfs: Sequence[float],
    drivers: Sequence[str], first: int, average: float, where: str,
    params: Sequence[object], cut: int | None,
) -> list[Any]:
    """``(rowid, id, score)`` of the rows holding a driver token that match one of the
    first ``first`` phrases and pass ``where``, scored over all of ``phrases`` in order
    with ``bm25()``'s arithmetic (``_text.bm25_sql``); with ``cut``, the first ``cut``
    by rowid."""
    values: list[str] = []
    head: list[object] = []
    for i, (tokens, weight) in enumerate(zip(phrases, idfs)):
        for token in tokens:
            values.append("(%s::int, %s::text, %s::int, %s::float8)")
            head.extend((i, token, len(tokens), weight))
    terms = TERM_TABLES[table]
    sql = (
        f"WITH q (i, tok, n, idf) AS (VALUES {', '.join(values)})"
        f" SELECT {table}.rowid, {table}.id, s.score FROM {table} CROSS JOIN LATERAL ("
        " SELECT sum(h.idf * ((h.tf * (1.2::float8 + 1.0::float8)) / (h.tf + 1.2::float8"
        f" * (1 - 0.75::float8 + 0.75::float8 * {table}.tokens / %s::float8)))"
        " ORDER BY h.i) AS score, min(h.i) AS first"
        f" FROM (SELECT q.i, min(t.tf) AS tf, max(q.idf) AS idf FROM {terms} t"
        f" JOIN q ON t.term = q.tok WHERE t.doc = {table}.rowid GROUP BY q.i"
        " HAVING count(*) = max(q.n)) AS h) AS s"
        f" WHERE {table}.rowid IN (SELECT doc FROM {terms} WHERE term = ANY(%s))"
        f" AND s.first < %s AND {where} ORDER BY {table}.rowid"
    )
    args: list[object] = [*head, average, list(dict.fromkeys(drivers)), first, *params]
    if cut is not None:
        sql += " LIMIT %s"
        args.append(cut)
    return query(sql, args)
