"""What kind of answer a search query asks for, and whether a text carries one.

Classic question answering: a question's first words say what its answer looks like,
and a reply rarely repeats the question's words. "When did Caroline go to the support
group?" is answered by a turn that says *when* ("yesterday", "last Friday", "two weeks
ago", "in May 2023"), whatever else it shares with the question. Search uses that as
evidence for turns the question's words (or their neighbours') already found (see
``Weights.answer_type`` in ``weights``); it finds nothing by itself.

Only one answer type is read, in English: *time*, asked by a query that starts with
"when", "since when", "how long" (a duration is a time too), or "what"/"which" and
"year", "month", "day", "date", "week", "weekday", "season", "time of year". A text
carries a time when it names a weekday, a month (capitalized: "may" and "march" are
verbs too), a year from 1900 to 2099 (or a decade, "the 1990s"), a day of the month
("the 16th"), a day relative to today ("yesterday", "tonight", "last week", "next
summer", "ago", "recently"), a part of one ("this morning") or a count of days, weeks,
months, years or decades ("for seven years", "a few days").
Deterministic, no model.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["asks_time", "says_time"]

_ASKS_TIME = re.compile(
    r"^\W*(?:when|since\s+when|how\s+long"
    r"|(?:what|which)\s+(?:year|month|day|date|week|weekday|season|time\s+of\s+year))\b",
    re.IGNORECASE,
)
_WEEKDAYS = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday".split())
_DAY_WORDS = _WEEKDAYS | frozenset(
    "weekend weekends yesterday today tonight tomorrow recently lately ago".split())
"""Words that say when by themselves (compared casefolded)."""
_PERIODS = _WEEKDAYS | frozenset(
    "week weekend month year summer winter spring fall autumn night morning evening "
    "afternoon time".split())
_PERIODS = _PERIODS | frozenset(word + "s" for word in _PERIODS)
_RELATIVE = frozenset("last next this past".split())
"""Words that say when before a period ("last week", "this morning", "next summer")."""
_UNITS = frozenset("day days week weeks month months year years decade decades".split())
_COUNTS = frozenset(
    "a an one two three four five six seven eight nine ten eleven twelve few several "
    "of".split())
"""Words that say when before a unit ("two weeks", "a few days", "a couple of years");
and digits."""
_MONTHS = frozenset(
    "January February March April May June July August September October November "
    "December Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec".split())
"""Months, compared as written: "may" and "march" are verbs too."""
_NUMBERED = re.compile(r"(?<![^\W_])(?:(?:19|20)\d{2}s?|\d{1,2}(?:st|nd|rd|th))(?![^\W_])",
                       re.IGNORECASE)
"""A year (or a decade, "1990s") or a day of the month ("16th"), a whole word."""
_WORD = re.compile(r"[^\W_]+")


def asks_time(query: str) -> bool:
    """Whether ``query`` asks when something happened ("When did ...?")."""
    return _ASKS_TIME.search(unicodedata.normalize("NFKC", query)) is not None


def says_time(text: str) -> bool:
    """Whether ``text`` says when: a weekday, a month, a year, a day of the month, a day
    relative to today or a count of days to years (see the module's docstring)."""
    text = unicodedata.normalize("NFKC", text)
    words = _WORD.findall(text)
    if not _MONTHS.isdisjoint(words):
        return True
    folded = _WORD.findall(text.casefold())
    distinct = frozenset(folded)
    if not _DAY_WORDS.isdisjoint(distinct) or _NUMBERED.search(text) is not None:
        return True
    relative = not _RELATIVE.isdisjoint(distinct) and not _PERIODS.isdisjoint(distinct)
    counted = not _UNITS.isdisjoint(distinct)
    if not (relative or counted):
        return False
    for word, after in zip(folded, folded[1:]):  # a word and the next
        if relative and word in _RELATIVE and after in _PERIODS:
            return True
        if counted and after in _UNITS and (word in _COUNTS or word.isdigit()):
            return True
    return False
