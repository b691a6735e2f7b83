"""Corrections made after the fact: undo a mistaken write, and ask what a write would do.

A revert is stored with the two clocks the store already has, so nothing is rewritten:
the mistake is retired, and each claim it closed comes back as a *copy* recorded at the
revert (``meta["restored_from"]`` names the original, ``meta["reverts"]`` the mistake).
An original the mistake had *ended* is retired in favour of its copy, so a read at an
earlier ``known_at`` still sees the end that was believed then; one it had *retired*
stays retired. Each copy settles against its slot like any write, so a value written
since the mistake still bounds it: two values of one slot never hold at one instant.
"""

from __future__ import annotations

from dataclasses import replace

from .._domain import args as _args
from .._domain.model import Claim, Scope, TimeQuery
from .._domain.results import ConflictCheck, WriteReceipt
from .._domain.time import from_micros, to_micros
from .._errors import ClaimNotFoundError, InvalidArgumentError
from ..store.base import Store
from .writer import Writer

__all__ = ["RESTORED_FROM", "REVERTS", "check_conflict", "revert"]

RESTORED_FROM = "restored_from"
"""The ``meta`` key of a restored copy naming the claim it restores."""
REVERTS = "reverts"
"""The ``meta`` key of a restored copy naming the claim whose revert wrote it."""


def revert(writer: Writer, store: Store, scope: Scope, claim_id: object) -> WriteReceipt:
    """Retire the claim ``claim_id`` as a mistake and restore what it closed (see the
    module); one transaction, dated at the writer's clock."""
    claim_id = _args.check_claim_id(claim_id)
    with store.transaction():  # read and changed in one (a locking store: slots first)
        mistake = store.get_claim(claim_id, scope)
        if mistake is None:
            raise ClaimNotFoundError(claim_id)
        if RESTORED_FROM in mistake.meta:
            raise InvalidArgumentError("claim_id", (
                f"claim {claim_id!r} was written by reverting {mistake.meta.get(REVERTS)!r};"
                " a revert is not undone by another: remember() or supersede() what is true"))
        now = writer.now()
        closed = [c for c in store.superseded_by(claim_id, scope, TimeQuery(now, None))
                  if c.invalidated_at is None or c.invalidated_by == claim_id]
        if not closed:
            raise InvalidArgumentError("claim_id", (
                f"claim {claim_id!r} closed no claim that is still closed by it: nothing to"
                " restore (delete() retires a claim without restoring anything)"))
        at = max(now, to_micros(mistake.recorded_at, "recorded_at"),
                 *(to_micros(c.recorded_at, "recorded_at") for c in closed))
        restored = [(c, _copy(c, _end_before(store, scope, c), mistake.id, at)) for c in closed]
        _lock_slots(writer, store, [mistake, *(copy for _, copy in restored)])
        return writer.restore(mistake, restored, at)


def _lock_slots(writer: Writer, store: Store, claims: list[Claim]) -> None:
    """Look up (a store that locks in a write, PostgreSQL, locks) the slots of
    ``claims``, scope by scope in one order: restoring then takes no slot lock after it
    has changed a row, which an erase of that row, holding the slot, would wait for."""
    slots: dict[Scope, set[tuple[str, str]]] = {}
    for claim in claims:
        key = writer.key_of(claim.scope, claim.subject)
        slots.setdefault(claim.scope, set()).add((key, claim.predicate))
    for held in sorted(slots, key=repr):
        store.slot_claims(held, slots[held])


def _end_before(store: Store, scope: Scope, closed: Claim) -> int | None:
    """The end of valid time ``closed`` had before the mistake set one (``None``: open).
    A retired claim's interval was never touched; an ended one's is read as believed
    just before its end was learned."""
    if closed.invalidated_at is not None or closed.valid_to_known_at is None:
        return None if closed.valid_to is None else to_micros(closed.valid_to, "valid_to")
    before = to_micros(closed.valid_to_known_at, "valid_to_known_at") - 1
    found = store.claim_at(closed.id, scope, TimeQuery(before, None))
    if found is None or found[0].valid_to is None:
        return None
    return to_micros(found[0].valid_to, "valid_to")


def _copy(original: Claim, end: int | None, mistake_id: str, at: int) -> Claim:
    recorded = from_micros(at)
    return replace(
        original, id="", recorded_at=recorded, invalidated_at=None, invalidated_by=None,
        valid_to=None if end is None else from_micros(end),
        valid_to_known_at=None if end is None else recorded,
        meta={**original.meta, RESTORED_FROM: original.id, REVERTS: mistake_id},
    )


def check_conflict(
    writer: Writer, store: Store, claim: Claim, close: str, now: int
) -> ConflictCheck:
    """What ``remember()`` of ``claim`` (as ``Writer.build`` made it at ``now``) would do,
    or the error it would raise for a claim recorded behind what it contradicts."""
    check = writer.in_order([claim], now, lambda _: "recorded_at")
    if check is not None:
        check(0)
    slot = (writer.key_of(claim.scope, claim.subject), claim.predicate)
    found = store.slot_claims(  # read as the write would, without writing
        claim.scope, [slot], ending_after=to_micros(claim.valid_from, "valid_from"))[slot]
    settled = writer.settle(claim, found, close)
    if settled.reinforce is not None:
        return ConflictCheck("reinforce", claim, reinforces=settled.reinforce)
    assert settled.insert is not None  # noqa: S101 - a settlement inserts or reinforces
    key = writer.key_of(claim.scope, claim.object)
    corrected = next((old for old, _ in settled.retire if old.polarity == claim.polarity
                      and writer.key_of(claim.scope, old.object) == key), None)
    return ConflictCheck(
        "add" if corrected is None else "correct", settled.insert, corrects=corrected,
        ends=tuple(old for old, _, _ in settled.end),
        retires=tuple(old for old, _ in settled.retire if old is not corrected),
    )

