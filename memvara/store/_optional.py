"""The optional fast paths a ``Store`` may also implement (see ``memvara.store.base``,
which re-exports them): each a ``runtime_checkable`` protocol, checked once when the
services are built. ``SQLiteStore`` implements them all; a backend without one gets the
same results through the core ``Store`` methods.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._domain.model import Claim, Scope
from ._values import RankFields, Settlement, Written

__all__ = [
    "BulkWriteStore", "DeferredTextIndexStore", "RankingStore", "SimilarityStore",
    "SingleWriteStore", "Vectors",
]

Vectors = npt.NDArray[np.float32]
"""Vectors, one row each (``(n, dim)``), or one query vector (``(dim,)``)."""


@runtime_checkable
class SingleWriteStore(Protocol):
    """A store that takes one claim's whole write in one call (``SQLiteStore`` does;
    3-4% fewer instructions a single ``remember()``). Without it the writer calls
    ``slot_claims``, ``insert_claims``, ``end_claims`` and ``retire_claims``."""

    def write_claim(
        self, claim: Claim, subject_key: str, vector: Vectors | None,
        settle: Callable[[list[Claim]], Settlement],
    ) -> Written:
        """One claim's write, inside the writer's transaction, doing what the core
        methods would:

        1. Read the slot ``(subject_key, claim.predicate)`` at ``claim.scope`` as
           ``slot_claims(..., ending_after=claim.valid_from)`` would.
        2. Call ``settle(found)`` before writing anything; let what it raises propagate.
        3. Apply the ``Settlement``. To reinforce: ``reinforce_claim(reinforce.id,
           claim.sources, claim.recorded_at in microseconds)`` (``vector`` is unused).
           To insert: ``insert_claims([insert], vector, [subject_key])`` (``vector`` is
           ``(1, dim)`` or ``None``), then ``end_claims`` and ``retire_claims`` with the
           new claim's id as ``by``. The claim to insert was built for this write: the
           store may set its id on it in place (``memvara._domain.model.set_new_claim_id``).

        Returns:
            ``(added, reinforced, ended, retired)``, the claims those methods return
            (``None`` for the one of the first two not written).

        Raises:
            StoreError: ``NO_SETTLEMENT``, when the settlement names neither.
        """
        ...


@runtime_checkable
class BulkWriteStore(Protocol):
    """A store with batch paths for ``remember_many()``: one slot read across many
    scopes, and inserts that return bare ids. Without it the writer reads
    ``slot_claims`` scope by scope and takes copies from ``insert_claims``."""

    def insert_claim_ids(
        self, claims: Sequence[Claim], vectors: Vectors | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[str]:
        """``insert_claims``, returning only the new ids, in order: the writer sets
        each on the claim it built for the write rather than have a copy made."""
        ...

    def slot_claims_across(
        self, wanted: Mapping[Scope, Collection[tuple[str, str]]], *,
        ending_after: int | None = None,
    ) -> dict[Scope, dict[tuple[str, str], list[Claim]]]:
        """``slot_claims`` for the slots of many scopes at once: every scope asked as a
        key; a slot that holds no such claim is left out of its scope's dict."""
        ...


@runtime_checkable
class RankingStore(Protocol):
    """A store that gives search the fields it ranks by without whole claims."""

    def rank_fields(self, claim_ids: Sequence[str]) -> dict[str, RankFields]:
        """Each claim's ``RankFields``, as ``claims_at`` would give its values (the
        fields do not depend on ``known_at``); an id with no claim is left out."""
        ...


@runtime_checkable
class SimilarityStore(Protocol):
    """A store that scores given rows against a query vector: search then orders the
    ties of a text list by cosine instead of searching every vector."""

    def claim_similarities(self, claim_ids: Sequence[str], vector: Vectors) -> dict[str, float]:
        """The cosine of ``vector`` with each of these claims' vectors (any scope: the
        caller's search filtered them); a claim with no vector or no row, or a
        ``vector`` of another width, is left out."""
        ...

    def episode_similarities(
        self, episode_ids: Sequence[str], vector: Vectors
    ) -> dict[str, float]:
        """``claim_similarities`` for turns."""
        ...


@runtime_checkable
class DeferredTextIndexStore(Protocol):
    """A store whose text index lags single writes (``SQLiteStore`` indexes them in
    batches; ``SQLiteStore.has_backlog()`` is then true). Its text searches still find the rows the
    index does not hold yet, without writing (``Store``'s "Reads never write"); this
    method lets an owner catch the index up on purpose. A read never calls it."""

    def flush_text_index(self) -> int:
        """Index every row still waiting for the text index (a write: it takes the
        write lock); returns how many there were."""
        ...
