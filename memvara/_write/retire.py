"""Retiring without a replacement: belief in a whole slot, or in one claim, ends.

The rows stay (``history()`` and earlier ``known_at`` reads still see them); nothing is
said about the world. Each retirement is dated no earlier than the row was recorded.
"""

from __future__ import annotations

from datetime import datetime

from .._domain import args as _args
from .._domain.model import Claim, Scope
from .._domain.time import to_micros
from ..schema import PredicateRegistry
from ..store.base import Store
from .writer import Writer

__all__ = ["delete", "forget"]


def forget(
    writer: Writer, store: Store, registry: PredicateRegistry, scope: Scope,
    subject: str, predicate: str, at: datetime | None,
) -> list[Claim]:
    """Retire every still-believed claim of one slot at exactly ``scope``."""
    slot = (writer.key_of(scope, _args.check_text(subject, "subject")),
            registry.canonical(_args.check_text(predicate, "predicate")))
    when = writer.now() if at is None else to_micros(at, "at")
    with store.transaction():
        believed = store.slot_claims(scope, [slot])[slot]
        return store.retire_claims(
            [(c, max(when, to_micros(c.recorded_at, "recorded_at")), None) for c in believed])


def delete(writer: Writer, store: Store, scope: Scope, claim_id: str, at: datetime | None) -> bool:
    """Retire one claim visible from ``scope``; ``False`` if none or already retired."""
    claim_id = _args.check_claim_id(claim_id)
    when = writer.now() if at is None else to_micros(at, "at")
    with store.transaction():
        claim = store.get_claim(claim_id, scope)
        if claim is None or claim.invalidated_at is not None:
            return False
        store.retire_claims([(claim, max(when, to_micros(claim.recorded_at, "recorded_at")), None)])
        return True
