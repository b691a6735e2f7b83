"""The review queue's values: a review of a contested value, and what ``observe()``
did with one piece of evidence."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from .model import Scope, fields_dict

__all__ = ["Observation", "Review", "review_id", "review_rowid"]


def review_id(rowid: int) -> str:
    """The public id of review row ``rowid``."""
    return f"r{rowid}"


def review_rowid(value: str) -> int:
    """The row a review id names; ``0`` for a string that is not one."""
    digits = value[1:]
    if value[:1] != "r" or not digits.isascii() or not digits.isdigit() or len(digits) > 18:
        return 0
    return int(digits)


@dataclass(frozen=True, slots=True)
class Review:
    """A slot reopened because enough distinct grounds contradict what it holds.

    ``object`` (with ``polarity``) is the contested value the evidence supports;
    ``held`` the ids of the claims the slot held when the review opened. ``status`` is
    ``"open"`` until ``resolve()`` makes it ``"kept"`` (the slot stays as it was) or
    ``"accepted"`` (``claim`` is the claim the review wrote, citing the review).
    """

    id: str
    scope: Scope
    """Where the evidence was filed (and where an accepted value is written)."""
    subject: str
    predicate: str
    object: str
    polarity: int
    held: tuple[str, ...]
    grounds: int
    """Distinct grounds that supported the contested value."""
    opened_at: datetime
    status: Literal["open", "kept", "accepted"]
    closed_at: datetime | None = None
    decided_by: str | None = None
    claim: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """Every field, in JSON's types."""
        return fields_dict(self)


@dataclass(frozen=True, slots=True)
class Observation:
    """What ``observe()`` did: ``held`` when the slot holds the value already (nothing
    filed); else the ``grounds`` now counted for the value, the ``echoes`` (grounds
    given that were counted before) and the ``review`` open on it, if any."""

    held: bool
    grounds: int
    echoes: int
    review: Review | None

    def to_dict(self) -> dict[str, Any]:
        """Every field, in JSON's types."""
        return fields_dict(self)
