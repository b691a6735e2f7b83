"""``why()`` and ``produced()``: a claim's sources and fate, and a turn's claims.

Both read inside one store snapshot, so the claim, what closed it and the turns it cites
are one consistent state even while writers commit.
"""

from __future__ import annotations

from .._domain.model import Claim, Scope, TimeQuery

from .._domain.ledger import default_actor
from .._domain.results import Provenance
from .._domain.time import to_micros
from ..store.base import Store, WriteLogStore

__all__ = ["claims_from", "provenance"]


def provenance(store: Store, claim_id: str, scope: Scope, tq: TimeQuery) -> Provenance | None:
    """Where ``claim_id`` came from and what became of it, as believed at ``tq.known_at``
    (and in force at ``tq.valid_at`` when set); ``None`` when it is not visible so.

    The turns it cites are kept only if recorded by ``known_at``; the claim that closed
    it is read at the same belief instant, at any valid time.
    """
    with store.snapshot():
        found = store.claim_at(claim_id, scope, tq)
        if found is None:
            return None
        claim, ended_by = found
        closer_id = claim.invalidated_by or ended_by
        closer = None if closer_id is None else store.claim_at(
            closer_id, scope, TimeQuery(known_at=tq.known_at, valid_at=None)
        )
        episodes = [store.get_episode(source, scope) for source in claim.sources]
        return Provenance(
            claim=claim,
            episodes=tuple(
                e for e in episodes if e is not None and e.recorded_at is not None
                and to_micros(e.recorded_at, "recorded_at") <= tq.known_at
            ),
            superseded=tuple(store.superseded_by(claim_id, scope, tq)),
            closed_by=None if closer is None else closer[0],
            actor=_actor(store, claim),
        )


def _actor(store: Store, claim: Claim) -> str | None:
    """Who wrote ``claim``: the actor its write named, else its scope's default; ``None``
    for a store that keeps no log."""
    if not isinstance(store, WriteLogStore):
        return None
    named = store.claim_actor(claim.id)
    return default_actor(claim.scope) if named is None else named


def claims_from(store: Store, episode_id: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
    """The claims citing turn ``episode_id``, oldest first; empty when the turn is not
    visible from ``scope``."""
    with store.snapshot():
        if store.get_episode(episode_id, scope) is None:
            return []
        return store.claims_citing(episode_id, scope, tq)
