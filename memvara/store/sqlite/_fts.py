"""Query words to an FTS5 ``MATCH`` expression that means "any of these words".

The only place words reach ``MATCH``: every term is taken as a string literal,
double-quoted with inner quotes doubled, so ``NEAR``, ``AND``/``OR``/``NOT``, column
filters (``text:``), prefix ``*``, initial ``^``, parentheses and SQL fragments are words
to look for, never syntax, whatever a caller passes. The read path passes the words of
``memvara._domain.terms.query_terms``, which keeps only characters the tokenizer would
index, so control characters and punctuation cannot reach the parser either.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["match_any", "quote"]


def quote(term: str) -> str:
    """``term`` as an FTS5 string literal (a phrase of its tokens, never syntax)."""
    return '"' + term.replace('"', '""') + '"'


def match_any(terms: Sequence[str]) -> str | None:
    """An FTS5 expression matching rows with any of ``terms``, or ``None`` when there
    are none."""
    if not terms:
        return None
    return " OR ".join(quote(term) for term in terms)
