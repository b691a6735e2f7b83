"""Instants: datetimes at the API edge, integer microseconds in storage."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from memvara import InvalidTimeError
from memvara._domain.time import from_micros, to_micros


def test_round_trip_through_microseconds_is_exact() -> None:
    instant = datetime(2024, 2, 29, 12, 30, 1, 999_999, tzinfo=timezone.utc)
    assert from_micros(to_micros(instant, "at")) == instant
    assert from_micros(to_micros(instant, "at")).tzinfo is timezone.utc


def test_naive_is_utc_and_an_offset_is_honoured() -> None:
    naive = datetime(2024, 1, 1, 9)
    berlin = datetime(2024, 1, 1, 10, tzinfo=timezone(timedelta(hours=1)))
    assert to_micros(naive, "at") == to_micros(berlin, "at")


def test_converting_one_object_twice_or_one_instant_twice_agrees() -> None:
    # to_micros remembers the last object it converted and from_micros the last
    # instant it made: a repeat returns the same answer, and a new value is converted.
    a = datetime(2024, 1, 1, tzinfo=timezone.utc)
    b = datetime(2025, 1, 1, tzinfo=timezone.utc)
    assert to_micros(a, "at") == to_micros(a, "at") == 1_704_067_200_000_000
    assert to_micros(b, "at") == 1_735_689_600_000_000
    assert from_micros(1_704_067_200_000_000) is from_micros(1_704_067_200_000_000)
    assert from_micros(1_735_689_600_000_000) == b
    assert from_micros(0) == datetime(1970, 1, 1, tzinfo=timezone.utc)


@pytest.mark.parametrize("bad", [None, "2024-01-01", 1_700_000_000, 1.5])
def test_what_is_not_a_datetime_is_refused_even_right_after_a_conversion(bad: object) -> None:
    to_micros(datetime(2024, 1, 1, tzinfo=timezone.utc), "at")
    with pytest.raises(InvalidTimeError, match="valid_from"):
        to_micros(bad, "valid_from")
