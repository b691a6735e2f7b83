"""The entity fold: one stable key for every spelling of a name.

A new value replaces an old one only if the two facts share a key, so ``Acme``,
``Acme Corp.`` and ``ACME, Inc.`` must fold to the same one. The fold is a pure function
defined for every string: no model, no cache, and a name never seen before gets its key
at once, the same on every call. It does not know the world: ``Big Blue`` and ``IBM`` stay two keys.
"""

from __future__ import annotations

import functools
import unicodedata

from .._errors import InvalidArgumentError

__all__ = ["entity_key", "folded_words"]

# Company-form words dropped from the end of a name. Only trailing ones, and never the
# whole name: "Inc" alone stays "inc".
_LEGAL_SUFFIXES = frozenset(
    """
    inc incorporated corp corporation co company cos ltd limited llc llp lp plc gmbh mbh
    ag kg sa sas sarl bv nv spa srl pty pte oy ab asa kk se sl sa de cv
    """.split()
)

# Below this code point, combining marks are accents on Latin, Greek or Cyrillic letters
# and folding them away is what users expect ("Café" == "cafe"). In other scripts a mark
# can be a vowel, so it is kept.
_ACCENTED_SCRIPTS_END = 0x0530


def _strip_accents(text: str) -> str:
    out: list[str] = []
    base = 0
    for ch in text:
        if unicodedata.combining(ch):
            if base < _ACCENTED_SCRIPTS_END:
                continue
        else:
            base = ord(ch)
        out.append(ch)
    return "".join(out)


# ASCII punctuation, symbols and control characters become spaces: the fast path for
# plain ASCII names, equivalent to the Unicode path below on ASCII input.
_ASCII_SPACES = str.maketrans({
    chr(c): " " for c in range(128) if not chr(c).isalnum()
})


def _tokens(text: str) -> list[str]:
    if text.isascii():
        return text.lower().translate(_ASCII_SPACES).split()
    chars = [
        " " if unicodedata.category(ch)[0] in "PSZC" else ch
        for ch in _strip_accents(unicodedata.normalize("NFKD", text)).casefold()
    ]
    return "".join(chars).split()


def entity_key(name: str) -> str:
    """Fold a surface form to the key claims are matched on.

    NFKD, accents off Latin/Greek/Cyrillic letters, casefold, punctuation and symbols to
    spaces, whitespace collapsed, and trailing legal-form words (``Inc``, ``Corp.``,
    ``GmbH``...) dropped, so ``entity_key("Acme Corp.") == entity_key("ACME, Inc.") ==
    entity_key("acme")``.

    A name made only of punctuation folds to its casefolded, whitespace-collapsed self,
    so the key is never empty for non-blank input.

    Args:
        name: any spelling of an entity.

    Returns:
        The folded key; equal keys are one entity to every keyed lookup.

    Raises:
        InvalidArgumentError: ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise InvalidArgumentError("name", f"expected a string, got {type(name).__name__}")
    return _fold(name)


@functools.lru_cache(maxsize=65_536)
def _fold(name: str) -> str:
    tokens = _tokens(name)
    while len(tokens) > 1 and tokens[-1] in _LEGAL_SUFFIXES:
        tokens.pop()
    if tokens:
        return " ".join(tokens)
    return " ".join(name.casefold().split())


def folded_words(text: str) -> list[tuple[str, int, int]]:
    """The words of ``text`` (runs of letters, marks and digits), each folded as
    ``entity_key`` folds (NFKD, accents off Latin/Greek/Cyrillic letters, casefold) with
    its start and end in ``text``: where a name that folds to a key was written, however
    it was accented or cased ("ZOË" and "Zoë" for the key "zoe")."""
    words: list[tuple[str, int, int]] = []
    start = -1
    for i, ch in enumerate(f"{text} "):  # a space closes the last word
        if unicodedata.category(ch)[0] in "LMN":
            if start < 0:
                start = i
        elif start >= 0:
            folded = _strip_accents(unicodedata.normalize("NFKD", text[start:i])).casefold()
            words.append((folded, start, i))
            start = -1
    return words
