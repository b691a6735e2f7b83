"""Instants at the API edge and in storage.

The API accepts only ``datetime`` (a naive one is read as UTC); storage holds integer
microseconds since the epoch, UTC, so comparisons in SQL are exact integer comparisons
and no timezone or float rounding can reorder two writes. Everything handed back is
timezone-aware UTC. ``None`` as an interval end means "open": +infinity.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from .._errors import InvalidTimeError

__all__ = [
    "Clock",
    "from_micros",
    "instant_pair",
    "iso",
    "now_micros",
    "optional_micros",
    "parse_instant",
    "system_clock",
    "to_micros",
]

Clock = Callable[[], datetime]
"""A zero-argument callable returning the current instant; injectable for tests."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_UTC = timezone.utc
_FIRST = (datetime.min.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND
_LAST = (datetime.max.replace(tzinfo=timezone.utc) - _EPOCH) // _MICROSECOND


def system_clock() -> datetime:
    """The wall clock, timezone-aware UTC."""
    return datetime.now(timezone.utc)


_last_converted: tuple[object, int] = (object(), 0)
"""The last instant ``to_micros`` converted and its result. A write converts one
``recorded_at`` (and often one ``valid_from``) for every claim of a batch: the same
object each time, so it is converted once. Datetimes are immutable, and the pair is
replaced whole, so a reader on another thread sees an old pair or a new one."""
_last_made: tuple[int, datetime] = (0, _EPOCH)
"""The last instant ``from_micros`` made: a write stamps each claim with the same
instant, and handing back one object lets ``to_micros`` find it above."""


def to_micros(value: object, argument: str) -> int:
    """Convert a datetime to integer UTC microseconds, naming ``argument`` on bad input."""
    global _last_converted
    last = _last_converted
    if value is last[0]:
        return last[1]
    if value.__class__ is datetime and value.tzinfo is _UTC:  # every stored instant
        micros = (value - _EPOCH) // _MICROSECOND  # any UTC datetime is within range
        _last_converted = (value, micros)
        return micros
    if not isinstance(value, datetime):
        raise InvalidTimeError(
            argument, f"expected a datetime, got {type(value).__name__} {value!r:.60}"
        )
    tz = value.tzinfo
    if tz is not _UTC and (tz is None or tz.utcoffset(value) is None):
        value = value.replace(tzinfo=_UTC)
    micros = (value - _EPOCH) // _MICROSECOND
    if not _FIRST <= micros <= _LAST:  # an offset pushed it past year 1 or 9999 in UTC
        raise InvalidTimeError(argument, f"{value!r:.60} is outside the years 1 to 9999 in UTC")
    _last_converted = (value, micros)
    return micros


def instant_pair(value: object, argument: str) -> tuple[int, datetime]:
    """Storage microseconds and the aware UTC datetime for one instant argument."""
    micros = to_micros(value, argument)
    if isinstance(value, datetime) and value.tzinfo is timezone.utc:
        return micros, value
    return micros, from_micros(micros)


def optional_micros(value: object, argument: str) -> int | None:
    """``to_micros`` that passes ``None`` through (an open interval end)."""
    return None if value is None else to_micros(value, argument)


def from_micros(value: int) -> datetime:
    """The timezone-aware UTC datetime for stored microseconds."""
    global _last_made
    last = _last_made
    if value == last[0]:
        return last[1]
    made = _EPOCH + _MICROSECOND * value
    _last_made = (value, made)
    return made


def now_micros(clock: Clock) -> int:
    """Read an injected clock, validating what it returns."""
    return to_micros(clock(), "clock()")


_INSTANT = re.compile(
    r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,6}))?"
    r"(Z|z|[+-]\d{2}:?\d{2})"
)


def parse_instant(text: object, argument: str = "text") -> datetime:
    """The instant an ISO-8601 string names, which must carry a UTC offset
    (``2026-06-24T09:30:00+02:00``, or ``Z`` for UTC): a JSON form, a CLI option or a
    tool argument never leaves the zone to a guess. The same on every supported Python.

    Raises:
        InvalidTimeError: not a string, not ISO-8601, or without an offset; the message
            names ``argument``.
    """
    if not isinstance(text, str):
        raise InvalidTimeError(argument, f"expected an ISO-8601 string, got {type(text).__name__}")
    match = _INSTANT.fullmatch(text.strip())
    if match is None:
        raise InvalidTimeError(
            argument, f"expected an ISO-8601 instant with a UTC offset, such as"
            f" 2026-06-24T09:30:00+00:00, got {text!r:.60}")
    day, clock, fraction, offset = match.groups()
    if offset in ("Z", "z"):
        offset = "+00:00"
    elif ":" not in offset:
        offset = f"{offset[:3]}:{offset[3:]}"
    normal = f"{day}T{clock}{'.' + fraction.ljust(6, '0') if fraction else ''}{offset}"
    try:
        return datetime.fromisoformat(normal)
    except ValueError as exc:  # a day or hour out of range
        raise InvalidTimeError(argument, f"{text!r:.60} is not a valid instant: {exc}") from None


def iso(value: datetime) -> str:
    """An instant as ISO-8601 with its offset (a naive one is read as UTC, as everywhere
    in the API)."""
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        value = value.replace(tzinfo=_UTC)
    return value.isoformat()
