"""The calendar dates a search query names (``memvara._read.query_dates``)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from memvara._read.query_dates import named_spans
from memvara._domain.time import to_micros


def _at(text: str) -> int:
    return to_micros(datetime.fromisoformat(text).replace(tzinfo=timezone.utc), "t")


AUG_16 = (_at("2023-08-15"), _at("2023-08-18"))
"""16 August 2023 with a day of slack on either side."""


@pytest.mark.parametrize("query", [
    "What did Maria donate on 16 August, 2023?",
    "what did maria donate on 16 august 2023",
    "the 16th of August 2023",
    "on August 16, 2023",
    "on Aug. 16th 2023",
    "on 2023-08-16",
])
def test_a_day_is_read_in_its_common_spellings(query: str) -> None:
    assert named_spans(query) == [AUG_16]


def test_a_month_with_a_year_is_the_calendar_month() -> None:
    assert named_spans("What happened in August 2023?") == [(_at("2023-08-01"), _at("2023-09-01"))]
    assert named_spans("in Dec, 2023") == [(_at("2023-12-01"), _at("2024-01-01"))]


def test_a_day_s_month_is_not_read_again_as_a_month() -> None:
    assert named_spans("on 16 August 2023, or later in August 2023") == [
        AUG_16, (_at("2023-08-01"), _at("2023-09-01"))]
    assert named_spans("16 August 2023 and August 16, 2023") == [AUG_16]  # no repeats


@pytest.mark.parametrize("query", [
    "what did she do last week?",  # relative: no anchor
    "what did she do in August?",  # no year
    "May I ask about 2023?",  # "may" the verb
    "on 31 February 2023",  # no such day, and not read as the month either
    "on 0000-01-01", "in December 9999",  # outside the calendar
    "",
])
def test_what_names_no_date_gives_no_span(query: str) -> None:
    assert named_spans(query) == []
