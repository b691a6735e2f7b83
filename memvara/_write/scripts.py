"""Which writing system a text is mostly written in, for tagging telemetry.

The rule-based parts of memvara (the salience gate, the fast extractor, the built-in
redactor) are written with Latin-script text in mind. When they silently do less on
other scripts, the only way to see it is to slice their counters by script, so the write
path asks ``script_of`` about every turn while telemetry is on. It therefore has to be
cheap on short strings, and it has to give the same answer for the same text.

The answer is one of ``SCRIPTS``:

================  ==========================================================
``latin``         Latin letters, including accented, fullwidth and IPA forms
``cyrillic``      Cyrillic
``greek``         Greek (Coptic letters are ``other``)
``arabic``        Arabic, including presentation forms
``hebrew``        Hebrew
``han``           CJK ideographs, when no kana or Hangul is present
``japanese``      kana (hiragana, katakana), together with any ideographs
``hangul``        Hangul syllables and jamo, together with any ideographs
``devanagari``    Devanagari
``thai``          Thai
``other``         letters of any other script (Armenian, Georgian, Tamil, ...)
``none``          no letters at all: digits, punctuation, emoji, empty text
================  ==========================================================

The set is small on purpose: a tag with hundreds of values makes the series unreadable,
and these cover the populations a deployment is likely to see; everything else is
``other``, which is still a visible slice.

How "dominant" is decided:

- Only letters count (``str.isalpha``); digits, punctuation, marks and symbols do not.
- A letter's script is read from its Unicode name (``CYRILLIC SMALL LETTER A``,
  ``CJK UNIFIED IDEOGRAPH-4E00``), so new code points in a newer Unicode database are
  classified without a table to maintain here.
- Ideographs are shared by Chinese, Japanese and Korean. Kana only occur in Japanese, so
  any kana make the ideographs Japanese; otherwise any Hangul makes them Korean. A
  Japanese sentence with more kanji than kana is still ``japanese``.
- Each CJK character (ideograph, kana, Hangul syllable) weighs ``3`` letters, roughly
  the Latin letters needed to write the same content. Without that, "我住在Berlin" would
  be Latin because one foreign name outnumbers the sentence around it.
- Ties go to the script listed first in ``SCRIPTS``, so the answer is deterministic.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["SCRIPTS", "letter_script", "script_of"]

SCRIPTS: Final = (
    "latin",
    "cyrillic",
    "greek",
    "arabic",
    "hebrew",
    "han",
    "japanese",
    "hangul",
    "devanagari",
    "thai",
    "other",
    "none",
)
"""Every value ``script_of`` can return, in tie-breaking order."""

_NAME_WORDS: Final[dict[str, str]] = {
    "LATIN": "latin",
    "CYRILLIC": "cyrillic",
    "GREEK": "greek",
    "ARABIC": "arabic",
    "HEBREW": "hebrew",
    "CJK": "han",
    "IDEOGRAPHIC": "han",  # the iteration marks 々 and 〻, and 〆
    "HIRAGANA": "japanese",
    "KATAKANA": "japanese",
    "KATAKANA-HIRAGANA": "japanese",  # the prolonged sound mark ー
    "HENTAIGANA": "japanese",
    "HANGUL": "hangul",
    "DEVANAGARI": "devanagari",
    "THAI": "thai",
}
"""Words of a Unicode character name that identify its script. The first such word in
a name decides, so ``FULLWIDTH LATIN CAPITAL LETTER A`` is Latin and ``MODIFIER LETTER
SMALL GREEK GAMMA`` is Greek."""

_CJK_WEIGHT: Final = 3
_CJK: Final = frozenset(("han", "japanese", "hangul"))
_RANK: Final = {script: i for i, script in enumerate(SCRIPTS)}
_ASCII_LETTER: Final = re.compile(r"[A-Za-z]")
_CODE: Final = {script: chr(ord("a") + i) for i, script in enumerate(SCRIPTS)}
"""Each script as one character, the alphabet ``text.translate`` rewrites a text into."""
_SCRIPT_OF_CODE: Final = {code: script for script, code in _CODE.items()}
_TABLE_LIMIT: Final = 1 << 16


def letter_script(char: str) -> str | None:
    """The script of one character, or ``None`` when it is not a letter."""
    if not char.isalpha():
        return None
    if char.isascii():
        return "latin"
    for word in unicodedata.name(char, "").split():
        script = _NAME_WORDS.get(word)
        if script is not None:
            return script
    return "other"


class _Table(dict[int, str]):
    """A ``str.translate`` table from code point to script code (``""`` drops a
    non-letter), filled on first sight of each character.

    Translating in C and counting the result is several times faster than a Python
    loop over the characters. The table stops growing at ``_TABLE_LIMIT`` entries so a
    stream of distinct ideographs cannot grow it without bound; past that, unseen
    characters are classified every time, which is slower but still correct.
    """

    def __missing__(self, point: int) -> str:
        script = letter_script(chr(point))
        code = "" if script is None else _CODE[script]
        if len(self) < _TABLE_LIMIT:
            self[point] = code
        return code


_TABLE: Final = _Table()


def script_of(text: str) -> str:
    """The writing system most of ``text``'s letters belong to.

    Args:
        text: any string; it is not validated (the caller already has).

    Returns:
        One of ``SCRIPTS``; ``"none"`` when the text has no letters.
    """
    if text.isascii():  # the common case, answered without looking at each character
        return "latin" if _ASCII_LETTER.search(text) else "none"
    codes = text.translate(_TABLE)
    weights: dict[str, int] = {}
    for code in set(codes):
        script = _SCRIPT_OF_CODE[code]
        count = codes.count(code)
        weights[script] = count * _CJK_WEIGHT if script in _CJK else count
    if len(weights) < 2:
        return next(iter(weights), "none")
    if "han" in weights:
        host = "japanese" if "japanese" in weights else "hangul" if "hangul" in weights else None
        if host is not None:
            weights[host] += weights.pop("han")
    return max(weights, key=lambda script: (weights[script], -_RANK[script]))
