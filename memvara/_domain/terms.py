"""What a text search looks for: the content words of a query.

One definition for every backend: ``query_terms`` gives the words, casefolded (NFKC),
stop words left out, each once, in order, at most ``MAX_TERMS``. The read path hands
that list to ``Store.search_claims_text`` and ``Store.search_episodes_text``; each
backend turns it into its own query language (``SQLiteStore``: an FTS5 ``MATCH``
expression, quoted in ``store/sqlite/_fts.py``). A word is a run of letters and digits
with at most one inner apostrophe (``don't``), so punctuation, symbols and control
characters never become words, and no word holds a quote or an operator character.

The index folds less than ``casefold`` and NFKC do (SQLite's ``unicode61`` lowercases
and drops accents, but keeps ``ß``, ligatures and full-width letters), so a word those
change is also looked for as typed, lowercased: "Straße" finds a stored "Straße" as
well as "strasse".
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator

__all__ = ["MAX_TERMS", "STOP_WORDS", "query_terms"]

STOP_WORDS = frozenset("""
a about above after again against all am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each few for from further had hadn't has hasn't have
haven't having he he'd he'll he's her here here's hers herself him himself his how how's
i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
myself no nor not of off on once only or other ought our ours ourselves out over own same
shan't she she'd she'll she's should shouldn't so some such than that that's the their
theirs them themselves then there there's these they they'd they'll they're they've this
those through to too under until up very was wasn't we we'd we'll we're we've were
weren't what what's when when's where where's which while who who's whom why why's with
won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
""".split())

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?", re.UNICODE)
MAX_TERMS = 32
"""The most words one search looks for: the first ones of a longer query."""


def query_terms(text: str) -> list[str]:
    """The content words of ``text`` a search looks for: casefolded (NFKC), stop words
    left out, each once, in order, at most ``MAX_TERMS``; after a word the folding
    changed in a way the index does not (``_as_indexed``), that word as typed."""
    terms: list[str] = []
    for word in _words(text):
        if word in STOP_WORDS or word in terms:
            continue
        terms.append(word)
        if len(terms) == MAX_TERMS:
            break
    return terms


def _words(text: str) -> Iterator[str]:
    """Every word of ``text`` folded, each followed by its typed spelling where that
    differs in the index's eyes; ASCII text folds to its lowercase (the usual case)."""
    if text.isascii():
        yield from _WORD.findall(text.lower())
        return
    seen: set[str] = set()  # a chunk said again adds no word
    for chunk in text.split():  # neither folding makes or joins whitespace
        if chunk in seen:
            continue
        seen.add(chunk)
        if chunk.isascii():
            yield from _WORD.findall(chunk.lower())
            continue
        yield from _WORD.findall(_folded(chunk))
        yield from (typed for typed in (w.lower() for w in _WORD.findall(chunk))
                    if _as_indexed(typed) != _as_indexed(_folded(typed)))


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u02bc": "'"})
"""A typographic apostrophe (a right single quote, a modifier letter) is an apostrophe:
"Melanie\u2019s" is the word "melanie's", not "melanie" and an "s" found in every
possessive."""


def _folded(text: str) -> str:
    """``text`` casefolded between two NFKC passes (casefold can decompose: "ǰ"), a
    dotted capital I's casefold ("i" and a combining dot) made a plain "i", as the index
    makes it, so that "İstanbul" stays one word, and apostrophes made ``'``."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", text).casefold())
    return folded.replace("i\u0307", "i").translate(_APOSTROPHES)


def _as_indexed(word: str) -> str:
    """About what the index makes of ``word`` (lowercase, accents and final sigma
    folded): where a word's fold and its typed spelling differ here, the index holds
    them apart."""
    decomposed = unicodedata.normalize("NFD", word.lower()).replace("\u03c2", "\u03c3")
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))
