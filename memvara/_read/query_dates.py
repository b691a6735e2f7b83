"""The calendar dates a search query names, as spans of storage microseconds.

"What did Maria donate on 16 August, 2023?" names a day; "What happened to John's job in
August 2023?" names a month. A turn stamped inside that span is likelier to be the one
asked about than an equally worded turn from another day, and a question rarely repeats
the words of its answer, so search uses the span as evidence (see ``Weights.date`` in
``weights``). Only explicit dates are read, in English, with a year:

* a day: ``16 August 2023``, ``16th of August, 2023``, ``August 16, 2023``,
  ``Aug. 16th 2023``, ``2023-08-16``;
* a month: ``August 2023``, ``Aug, 2023`` (only where the month is not part of a day).

Relative dates ("last week", "two years ago") and a month without a year are not read:
they need an anchor the query does not give. A day's span runs from the start of the day
before to the end of the day after (UTC), so a turn stamped in another time zone still
falls in it; a month's is the calendar month (UTC). Deterministic, no model.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone

from .._domain.time import to_micros

__all__ = ["named_spans"]

_MONTHS = {
    name: number
    for number, names in enumerate((
        ("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"),
        ("may",), ("june", "jun"), ("july", "jul"), ("august", "aug"),
        ("september", "sep", "sept"), ("october", "oct"), ("november", "nov"),
        ("december", "dec"),
    ), start=1)
    for name in names
}
_MONTH = r"(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"
_DAYS = (
    re.compile(rf"\b{_DAY}(?:\s+of)?\s+{_MONTH},?\s+{_YEAR}\b"),
    re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b"),
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
)
_MONTH_YEAR = re.compile(rf"\b{_MONTH},?\s+{_YEAR}\b")
_DAY_US = 86_400_000_000
_DAY_SLACK_US = _DAY_US
"""How far a day's span reaches past each end of the day: a time zone's worth and more."""


def named_spans(query: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans, in microseconds since the epoch (the store's unit), of
    the days and months ``query`` names, in the order named, without repeats; ``[]``
    when it names none. Impossible dates ("31 February 2023") are skipped."""
    text = unicodedata.normalize("NFKC", query).casefold()
    spans: list[tuple[int, int]] = []
    for pattern in _DAYS:
        for found in pattern.finditer(text):
            month = found["month"]
            number = int(month) if month.isdigit() else _MONTHS[month]
            try:
                day = to_micros(datetime(int(found["year"]), number, int(found["day"]),
                                         tzinfo=timezone.utc), "query")
            except ValueError:
                continue
            _append(spans, day - _DAY_SLACK_US, day + _DAY_US + _DAY_SLACK_US)
        text = pattern.sub(" ", text)  # a day's month and year do not name a month too
    for found in _MONTH_YEAR.finditer(text):
        year, number = int(found["year"]), _MONTHS[found["month"]]
        try:
            start = to_micros(datetime(year, number, 1, tzinfo=timezone.utc), "query")
            end = to_micros(
                datetime(year + number // 12, number % 12 + 1, 1, tzinfo=timezone.utc), "query")
        except ValueError:  # year 0, or the month after December 9999
            continue
        _append(spans, start, end)
    return spans



def _append(spans: list[tuple[int, int]], start: int, end: int) -> None:
    if (start, end) not in spans:
        spans.append((start, end))
