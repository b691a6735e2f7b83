"""Text search with FTS5's tokens and FTS5's BM25, in PostgreSQL.

So that a question ranks the same on either backend, rows are tokenized here by FTS5
itself (an in-memory SQLite table with the SQLite store's tokenizer,
``porter unicode61 remove_diacritics 2``; ``fts5vocab`` lists each row's tokens), and
each row's tokens are kept in a side table ``<table>_terms (term, doc, tf)`` with its
length in ``<table>.tokens``. The search computes ``bm25()`` as FTS5 does: the same
IDF (floored at 1e-6), k1 = 1.2, b = 0.75, the index's row count and average length
(``text_stats``), the same operations in the same order, summed over the query's
phrases in order, so the scores are the same doubles.

One difference: a query word FTS5 splits into several tokens (``don't`` is ``don``
``t``) is a phrase to FTS5, matched only where its tokens stand side by side; here a row
matches it when it holds all of them, with the smallest of their counts.

A token longer than ``MAX_TERM_BYTES`` (a key, a hash or a blob pasted into a turn) is
kept, and looked up, as ``#`` and its SHA-256: PostgreSQL's btree refuses an index row of
more than 2,704 bytes, and FTS5 never makes a token holding ``#``, so the stand-in still
matches that token and only it, counted as FTS5 counts it.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Sequence

from ..._errors import ClosedError
from ._schema import TERM_TABLES

__all__ = ["MAX_TERM_BYTES", "TOKENIZER", "Tokenizer", "bm25_sql", "term"]

MAX_TERM_BYTES = 2_600
"""The longest token (in UTF-8) the term tables keep as it is; see the module docstring."""

TOKENIZER = "porter unicode61 remove_diacritics 2"
"""The SQLite store's FTS5 tokenizer (``store/sqlite/_migrations.py``)."""


def term(token: str) -> str:
    """How the term tables hold ``token``: as it is, or its digest if it is too long."""
    if len(token) * 4 <= MAX_TERM_BYTES:  # short enough in any encoding: the usual case
        return token
    data = token.encode()
    return token if len(data) <= MAX_TERM_BYTES else "#" + hashlib.sha256(data).hexdigest()


class Tokenizer:
    """FTS5's tokenizer, run in memory; one per store (a lock guards its connection)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._closed = False
        self._conn = sqlite3.connect(":memory:", check_same_thread=False)
        self._conn.execute(f"CREATE VIRTUAL TABLE t USING fts5 (body, tokenize = '{TOKENIZER}')")
        self._conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab (t, instance)")

    def counts(self, texts: Sequence[str]) -> list[dict[str, int]]:
        """Each text's tokens and how often each occurs (its length is their sum)."""
        found: list[dict[str, int]] = [{} for _ in texts]
        with self._lock:
            self._check_open()
            self._conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)",
                                   [(i + 1, text) for i, text in enumerate(texts)])
            for doc, token, count in self._conn.execute(
                    "SELECT doc, term, count(*) FROM v GROUP BY doc, term"):
                found[doc - 1][term(token)] = count
            self._conn.execute("DELETE FROM t")
        return found

    def phrases(self, terms: Sequence[str]) -> list[list[str]]:
        """Each query word's tokens, in order (a word FTS5 drops has none)."""
        found: list[list[str]] = [[] for _ in terms]
        with self._lock:
            self._check_open()
            self._conn.executemany("INSERT INTO t (rowid, body) VALUES (?, ?)",
                                   [(i + 1, word) for i, word in enumerate(terms)])
            for doc, token in self._conn.execute("SELECT doc, term FROM v ORDER BY doc, offset"):
                found[doc - 1].append(term(token))
            self._conn.execute("DELETE FROM t")
        return found

    def _check_open(self) -> None:
        if self._closed:  # a read or write another thread began before close()
            raise ClosedError("the store is closed")

    def close(self) -> None:
        """Close the connection, once no thread is tokenizing on it: closed under one,
        its next statement raised a raw ``sqlite3.ProgrammingError``."""
        with self._lock:
            self._closed = True
            self._conn.close()


def bm25_sql(table: str, phrases: Sequence[Sequence[str]], where: str,
             pending: tuple[int, int] = (0, 0)) -> tuple[str, list[object]]:
    """The query ranking ``table``'s rows that match any phrase and pass ``where`` (its
    parameters follow these, then the limit): ``(id, score)``, best first, then by
    insertion. ``phrases`` must hold at least one token. ``pending``: the rows and
    tokens the reader's open write added, which ``text_stats`` counts at its commit."""
    rows: list[str] = []
    params: list[object] = []
    for i, tokens in enumerate(phrases):
        for token in dict.fromkeys(tokens):
            rows.append("(%s::int, %s::text, %s::int)")
            params.extend((i, token, len(set(tokens))))
    terms = TERM_TABLES[table]
    sql = (
        f"WITH q (i, tok, n) AS (VALUES {', '.join(rows)}),"
        f" hits AS MATERIALIZED (SELECT t.doc, q.i, min(t.tf) AS tf FROM {terms} t"
        "  JOIN q ON t.term = q.tok GROUP BY t.doc, q.i HAVING count(*) = max(q.n)),"
        " df AS (SELECT i, count(*)::float8 AS n FROM hits GROUP BY i),"
        " st AS (SELECT (coalesce(sum(docs), 0) + %s)::float8 AS rows,"
        "  (coalesce(sum(tokens), 0) + %s)::float8 AS toks"
        "  FROM text_stats WHERE tbl = %s),"
        " w AS (SELECT df.i, CASE WHEN ln((st.rows - df.n + 0.5::float8) / (df.n + 0.5::float8))"
        "  > 0 THEN ln((st.rows - df.n + 0.5::float8) / (df.n + 0.5::float8)) ELSE 1e-6::float8"
        "  END AS idf, st.toks / st.rows AS avg FROM df, st)"
        f" SELECT {table}.id, sum(w.idf * ((h.tf * (1.2::float8 + 1.0::float8)) / (h.tf"
        f"  + 1.2::float8 * (1 - 0.75::float8 + 0.75::float8 * {table}.tokens / w.avg)))"
        "  ORDER BY h.i) AS score"
        f" FROM hits h JOIN w ON w.i = h.i JOIN {table} ON {table}.rowid = h.doc"
        f" WHERE {where} GROUP BY {table}.rowid, {table}.id"
        f" ORDER BY score DESC, {table}.rowid LIMIT %s"
    )
    return sql, [*params, *pending, table]
