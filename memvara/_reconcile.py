"""Contradiction resolution: what a new claim does to the claims already in its slot.

Pure logic over values, no store and no model. A slot is ``(folded subject, canonical
predicate)`` at one exact scope; objects compare by their folded key. Two claims in a
slot conflict when they say opposite things about one object (polarity differs), or
when the predicate is single-valued and both assert different objects.

For each still-believed claim ``X`` in the slot whose valid interval overlaps the new
claim ``N``'s:

* same object, same polarity: ``N`` is a re-observation; ``X`` is reinforced and
  nothing is written.
* conflicting, ``close="retired"``: ``X`` was wrong; belief in it ends.
* conflicting, ``close="ended"`` (the default): if ``X`` started earlier, its valid time
  ends where ``N`` starts; if it started at the same instant, ``N`` replaces it outright
  (retired: a zero-length interval would be a fact that was never true); if it starts
  later, ``X`` is the newer news and ``N``'s valid time ends where ``X`` begins.

Every closure is dated on the belief clock at the write's ``recorded_at`` (never before
the closed claim was itself recorded).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ._entities import entity_key
from ._model import Claim
from ._time import optional_micros, to_micros
from .schema import Cardinality

__all__ = ["Plan", "plan_write"]


@dataclass(slots=True)
class Plan:
    """What to do for one new claim: reinforce an old one, or insert it and close others."""

    reinforce: Claim | None = None
    end: list[tuple[Claim, int, int]] = field(default_factory=list)  # (claim, valid_to, at)
    retire: list[tuple[Claim, int]] = field(default_factory=list)  # (claim, at)
    valid_to: int | None = None  # the new claim's end, possibly bounded by a later value


def _conflicts(new: Claim, old: Claim, cardinality: Cardinality) -> bool:
    same_object = entity_key(new.object) == entity_key(old.object)
    if same_object:
        return new.polarity != old.polarity
    return cardinality is Cardinality.ONE and new.polarity > 0 and old.polarity > 0


def _end(claim: Claim) -> int | None:
    return optional_micros(claim.valid_to, "valid_to")


def _overlaps(start: int, end: int | None, other_start: int, other_end: int | None) -> bool:
    return (end is None or other_start < end) and (other_end is None or start < other_end)


def plan_write(
    new: Claim, existing: Sequence[Claim], cardinality: Cardinality, close: str
) -> Plan:
    """Decide how ``new`` (times already filled in) settles against its slot.

    Args:
        new: the claim being written, with ``valid_from`` and ``recorded_at`` set.
        existing: the slot's still-believed claims at the write's exact scope.
        cardinality: the predicate's cardinality.
        close: ``"ended"`` or ``"retired"``, how a conflicting value is closed.
    """
    start = to_micros(new.valid_from, "valid_from")
    recorded = to_micros(new.recorded_at, "recorded_at")
    plan = Plan(valid_to=_end(new))
    for old in existing:
        if (
            entity_key(new.object) == entity_key(old.object)
            and new.polarity == old.polarity
            and _overlaps(start, plan.valid_to, to_micros(old.valid_from, "valid_from"), _end(old))
        ):
            return Plan(reinforce=old)
    conflicting = [old for old in existing if _conflicts(new, old, cardinality)]
    if close == "ended":
        for old in conflicting:
            old_start = to_micros(old.valid_from, "valid_from")
            if old_start > start and (plan.valid_to is None or old_start < plan.valid_to):
                plan.valid_to = old_start
    for old in conflicting:
        old_start, old_end = to_micros(old.valid_from, "valid_from"), _end(old)
        if not _overlaps(start, plan.valid_to, old_start, old_end):
            continue
        at = max(recorded, to_micros(old.recorded_at, "recorded_at"))
        if close == "retired" or old_start == start:
            plan.retire.append((old, at))
        else:
            plan.end.append((old, start, at))
    return plan
