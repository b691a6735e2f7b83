"""The echo guard: text the memory produced is never read back as new evidence.

An agent pastes ``recall()``'s block into its prompt, and the assistant restates what it
was told; fed back through ``add()``, either would count the memory's own output as a
fresh observation, reinforcing a fact or, worse, reviving one that was closed. Two rules
keep that from happening:

* ``strip_blocks``: the lines of a ``recall()`` block (a line holding one of its
  headers, and the ``- ...`` items under it) are removed from a turn before any tier
  reads it. The turn itself is stored as it was said.
* ``echoes``: a claim read from a turn that is not the user's (an assistant, system or
  tool turn) may add what the slot never held, but never re-states a value the slot
  holds or held, believed or closed: that is the memory talking to itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .._domain.blocks import EPISODE_HEADER, HEADER, HISTORY_HEADER
from .._domain.model import Claim, Scope, TimeQuery
from ..store.base import Store

__all__ = ["echoes", "strip_blocks"]

_HEADERS = frozenset(" ".join(h.split()) for h in (HEADER, EPISODE_HEADER, HISTORY_HEADER))


def strip_blocks(text: str) -> str:
    """``text`` less every ``recall()`` block in it (``text`` itself when it holds none)."""
    if not any(header in text for header in _HEADERS):
        return text
    kept: list[str] = []
    inside = False
    for line in text.splitlines():
        plain = " ".join(line.split())
        if plain in _HEADERS:
            inside = True
        elif not (inside and plain.startswith("- ")):
            inside = False
            kept.append(line)
    return "\n".join(kept).strip()


def echoes(
    store: Store, claims: Sequence[Claim], key_of: Callable[[Scope, str], str], at: int,
) -> list[Claim]:
    """The ``claims`` (each read from a turn that is not the user's) that re-state a value
    their slot holds or held: one lookup per slot, every state counted."""
    found: list[Claim] = []
    held: dict[tuple[Scope, str, str], set[tuple[str, int]]] = {}
    for claim in claims:
        scope = claim.scope
        slot = (scope, key_of(scope, claim.subject), claim.predicate)
        values = held.get(slot)
        if values is None:
            rows = store.slot_history(scope, [slot[1]], claim.predicate, TimeQuery(at, None))
            values = held[slot] = {(key_of(scope, c.object), c.polarity) for c in rows}
        if (key_of(scope, claim.object), claim.polarity) in values:
            found.append(claim)
    return found
