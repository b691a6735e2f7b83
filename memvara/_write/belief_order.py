"""Belief is recorded in order, slot by slot.

A write may carry an earlier ``recorded_at`` than now (a replayed log, a fact noted
late), as long as no value it contradicts over a shared stretch of valid time was
recorded, ended or retired after it.
Settled against such a change, a past view ("what did we believe then?") would see two
values at once, or an old write would undo news it could not have known; mending either
would rewrite what was believed then. Such a write is refused, naming the change. What
it does not contradict (another value of a many-valued slot, the same value again) is
taken as before: each closure is dated no earlier than the row it closes was recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from .._domain.model import Claim, Scope, TimeQuery
from .._domain.time import from_micros, iso, to_micros
from .._errors import InvalidTimeError
from ..schema import Cardinality, PredicateRegistry
from ..store.base import Store
from .reconcile import overlaps

__all__ = ["refuse_rewriting"]

_EVERY_ROW = TimeQuery(known_at=(1 << 63) - 1, valid_at=None)
"""A slot's whole record (retired rows included), as the store holds it now."""


def refuse_rewriting(
    store: Store,
    registry: PredicateRegistry,
    key_of: Callable[[Scope, str], str],
    claim: Claim,
    now: int,
    argument: str,
) -> None:
    """Raise ``InvalidTimeError`` (named ``argument``) if ``claim`` is recorded before
    ``now`` and before a change to a value it contradicts in its slot at its exact scope,
    over valid time the two may share. ``key_of`` folds an entity as the writer does.
    Called inside the write's transaction."""
    recorded = to_micros(claim.recorded_at, "recorded_at")
    if recorded >= now:
        return
    scope, key = claim.scope, key_of(claim.scope, claim.object)
    single = registry.spec(claim.predicate).cardinality is Cardinality.ONE

    def contradicted(row: Claim) -> bool:  # as settling would see the two (reconcile)
        if key_of(scope, row.object) == key:
            return row.polarity != claim.polarity
        return single and claim.polarity > 0 and row.polarity > 0

    start, end = to_micros(claim.valid_from, "valid_from"), _end(claim, recorded)
    rows = store.slot_history(scope, [key_of(scope, claim.subject)], claim.predicate, _EVERY_ROW)
    later = [change for row in rows
             if row.scope == scope and contradicted(row) and overlaps(
                 start, end, to_micros(row.valid_from, "valid_from"), _end(row, recorded))
             for change in _changes(row) if to_micros(change[0], "recorded_at") > recorded]
    if later:
        at, _, obj, verb = max(later)  # at one instant, a closure before a recording
        raise InvalidTimeError(argument, (
            f"{iso(from_micros(recorded))} is before {iso(at)}, when {obj!r} (which"
            f" {claim.object!r} contradicts) was {verb}; a slot's beliefs are recorded"
            " in order, so record this at or after that instant"))


def _end(row: Claim, recorded: int) -> int | None:
    """``row``'s end of valid time if it was known by ``recorded`` (or when the row was
    recorded, if later), else ``None``: the widest interval it was ever believed over
    from then on (an end revised later counts as unknown, which only refuses more)."""
    known = row.valid_to_known_at
    if row.valid_to is None or known is None:
        return None
    by = max(recorded, to_micros(row.recorded_at, "recorded_at"))
    if to_micros(known, "valid_to_known_at") > by:
        return None
    return to_micros(row.valid_to, "valid_to")


def _changes(row: Claim) -> list[tuple[datetime, int, str, str]]:
    """When ``row`` changed its slot's beliefs: the instant, a rank, the value, the verb."""
    assert row.recorded_at is not None  # noqa: S101 - a stored row is recorded
    changes = [(row.recorded_at, 0, row.object, "recorded")]
    if row.valid_to_known_at is not None:
        changes.append((row.valid_to_known_at, 1, row.object, "recorded as ended"))
    if row.invalidated_at is not None:
        changes.append((row.invalidated_at, 2, row.object, "retired"))
    return changes
