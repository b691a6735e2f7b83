"""Contradiction resolution: what a new claim does to the claims already in its slot.

Pure logic over values, no store and no model. A slot is ``(folded subject, canonical
predicate)`` at one exact scope; objects compare by their folded key. Two claims in a
slot conflict when they say opposite things about one object (polarity differs), or
when the predicate is single-valued and both assert different objects.

For each still-believed claim ``X`` in the slot whose valid interval overlaps the new
claim ``N``'s:

* same object, same polarity: ``N`` is a re-observation; ``X`` is reinforced and
  nothing is written -- unless the predicate is single-valued and ``N`` starts earlier
  than ``X``: then ``N`` is a *correction* of ``X``'s start. ``X`` is retired, ``N``
  is written over the union of the two intervals, and the conflicting values inside
  it are closed as below, except that one starting inside ``N`` is retired (it was
  never true, as we now know) rather than bounding ``N``.
* conflicting, ``close="retired"``: ``X`` was wrong; belief in it ends.
* conflicting, ``close="ended"`` (the default): if ``X`` started earlier, its valid time
  ends where ``N`` starts; if it started at the same instant, ``N`` replaces it outright
  (retired: a zero-length interval would be a fact that was never true); if it starts
  later, ``X`` is the newer news and ``N``'s valid time ends where ``X`` begins.

Every closure is dated on the belief clock at the write's ``recorded_at`` (never before
the closed claim was itself recorded).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from .._domain.entities import entity_key
from .._domain.model import Claim
from .._domain.time import to_micros
from ..schema import Cardinality

__all__ = ["Plan", "overlaps", "plan_write"]


@dataclass(slots=True)
class Plan:
    """What to do for one new claim: reinforce an old one, or insert it and close others."""

    reinforce: Claim | None = None
    correct: Claim | None = None  # the same value, started later: retired, N replaces it
    end: list[tuple[Claim, int, int]] = field(default_factory=list)  # (claim, valid_to, at)
    retire: list[tuple[Claim, int]] = field(default_factory=list)  # (claim, at)
    valid_to: int | None = None  # the new claim's end, possibly bounded by a later value
    bounded_by: Claim | None = None  # that later value, when one bounds it


def _micros(value: datetime | None) -> int | None:
    return None if value is None else to_micros(value, "valid_to")


def overlaps(start: int, end: int | None, other_start: int, other_end: int | None) -> bool:
    """Whether two half-open valid intervals share an instant (``None``: open-ended)."""
    return (end is None or other_start < end) and (other_end is None or start < other_end)


def plan_write(
    new: Claim,
    existing: Sequence[Claim],
    cardinality: Cardinality,
    close: str,
    key_of: Callable[[str], str] = entity_key,
) -> Plan:
    """Decide how ``new`` (times already filled in) settles against its slot.

    Args:
        new: the claim being written, with ``valid_from`` and ``recorded_at`` set.
        existing: the slot's still-believed claims at the write's exact scope.
        cardinality: the predicate's cardinality.
        close: ``"ended"`` or ``"retired"``, how a conflicting value is closed.
        key_of: an object's entity key (the fold, or a learned alias on top of it).
    """
    plan = Plan(valid_to=_micros(new.valid_to))
    if not existing:
        return plan
    start = to_micros(new.valid_from, "valid_from")
    recorded = to_micros(new.recorded_at, "recorded_at")
    key = key_of(new.object)
    single = cardinality is Cardinality.ONE and new.polarity > 0
    conflicting: list[tuple[Claim, int, int | None]] = []
    for old in existing:
        old_start, old_end = to_micros(old.valid_from, "valid_from"), _micros(old.valid_to)
        if key_of(old.object) == key:
            if old.polarity == new.polarity:
                if not overlaps(start, plan.valid_to, old_start, old_end):
                    continue
                if not (single and start < old_start) or plan.correct is not None:
                    return Plan(reinforce=old)
                plan.correct = old
                plan.valid_to = _union_end(plan.valid_to, old_end)
                plan.retire.append((old, max(recorded, to_micros(old.recorded_at, "recorded_at"))))
                continue
        elif not (single and old.polarity > 0):
            continue
        conflicting.append((old, old_start, old_end))
    if close == "ended" and plan.correct is None:
        for old, old_start, _ in conflicting:
            if old_start > start and (plan.valid_to is None or old_start < plan.valid_to):
                plan.valid_to, plan.bounded_by = old_start, old
    for old, old_start, old_end in conflicting:
        if not overlaps(start, plan.valid_to, old_start, old_end):
            continue
        at = max(recorded, to_micros(old.recorded_at, "recorded_at"))
        if close == "retired" or old_start >= start:  # later: only inside a correction
            plan.retire.append((old, at))
        else:
            plan.end.append((old, start, at))
    return plan


def _union_end(end: int | None, other_end: int | None) -> int | None:
    """The later of two ends of overlapping intervals (``None``: open)."""
    return None if end is None or other_end is None else max(end, other_end)
