"""What a store must offer for a lossless export and import (``export_jsonl`` and
``import_jsonl``): ``TransferStore``, an optional protocol, and the records it passes.

Public through ``memvara.store.base``, which re-exports every name here. A claim is
more than the ``Claim`` a read returns: the store also keeps the entity its subject is
filed under, the claim whose write ended it, the ends it had before a revision, and its
storage strength. ``ClaimRecord`` carries those too, so an import puts back the row a
read, a ``why()``, a ``history()`` and the next write all see as before.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from .._domain.model import Claim, Episode, Scope
from ._optional import Vectors

__all__ = ["AliasRecord", "ClaimRecord", "Closure", "Conflict", "TransferStore", "WaitingMark"]


@dataclass(frozen=True, slots=True)
class Closure:
    """An end of valid time a claim had before a later write revised it: the end
    ``valid_to``, learned at ``known_at``, set by the write of claim ``ended_by``."""

    known_at: int
    valid_to: int
    ended_by: str | None


@dataclass(frozen=True, slots=True)
class ClaimRecord:
    """One claim as the store keeps it, instants in microseconds.

    Attributes:
        claim: the record as it stands now (``id`` set; read without a ``TimeQuery``).
        subject_key: the entity key the claim is filed under: its subject's
            ``entity_key``, or the entity a learned alias or a backfill mapped it to.
        ended_by: the claim whose write ended its valid time, if any.
        storage: its storage strength (consolidation; 1.0 until reinforced).
        observed_at: when it was last observed, if a reinforcement moved it past its
            ``recorded_at``.
        closures: its earlier ends, oldest learned first.
        actor: who wrote it, as the write log names them (``None``: no record says).
            A ``WriteLogStore`` restores it: ``claim_actor`` then answers it.
    """

    claim: Claim
    subject_key: str
    ended_by: str | None = None
    storage: float = 1.0
    observed_at: int | None = None
    closures: tuple[Closure, ...] = ()
    actor: str | None = None


@dataclass(frozen=True, slots=True)
class AliasRecord:
    """A learned alias: for ``owner`` (a tenant and user), ``alias_key`` names the
    entity ``entity_key``, learned at ``learned_at`` (microseconds), decided ``via``."""

    owner: Scope
    alias_key: str
    entity_key: str
    learned_at: int
    via: str


@dataclass(frozen=True, slots=True)
class WaitingMark:
    """A turn waiting for extraction (``Store.mark_unextracted``): the model failed on
    turn ``episode_id`` at ``failed_at`` (microseconds) with ``reason``; who said it
    (``None``: the scope's user) and its call's ``meta`` as JSON (``None``: none)."""

    episode_id: str
    failed_at: int
    reason: str
    speaker: str | None
    meta: str | None


@dataclass(frozen=True, slots=True)
class Conflict:
    """Why the record at ``index`` of its ``kind`` (``"claim"``, ``"episode"`` or
    ``"alias"``) cannot be restored into this store."""

    kind: str
    index: int
    problem: str


@runtime_checkable
class TransferStore(Protocol):
    """A store that can dump a scope's rows whole and restore them as they were
    (``SQLiteStore`` does). ``export_jsonl`` and ``import_jsonl`` refuse a store without
    it. Learned predicates travel through the core ``load_predicates`` and
    ``save_predicates``.

    Dumps are reads: call them inside ``snapshot()`` for one state of the store. A
    scope's subtree is ``purge()``'s: the scope and every scope beneath it. An alias
    belongs to the scope of its owner (its tenant and user, agent and session unset).
    """

    def dump_counts(self, scope: Scope) -> dict[str, int]:
        """How many ``claims``, ``episodes`` and ``aliases`` the dumps of ``scope``'s
        subtree give."""
        ...

    def dump_claims(self, scope: Scope) -> Iterator[ClaimRecord]:
        """Every claim in ``scope``'s subtree, in any state, in insertion order."""
        ...

    def dump_episodes(self, scope: Scope) -> Iterator[Episode]:
        """Every turn in ``scope``'s subtree, in insertion order."""
        ...

    def dump_waiting(self, scope: Scope) -> list[WaitingMark]:
        """The marks of the waiting turns in ``scope``'s subtree, in the turns' order.
        An import puts them back with ``mark_unextracted``, after ``restore``."""
        ...

    def dump_aliases(self, scope: Scope) -> list[AliasRecord]:
        """Every alias owned in ``scope``'s subtree, by owner, then alias key."""
        ...

    def restore_conflicts(
        self, claims: Sequence[ClaimRecord], episodes: Sequence[Episode],
        aliases: Sequence[AliasRecord],
    ) -> list[Conflict]:
        """What stops ``restore`` from putting these records back, by kind, then index
        (empty: nothing): a claim or turn whose id the store holds already, a claim id
        this store cannot give a row (``SQLiteStore``: ``c<rowid>-<hash>`` whose rowid
        is free), an alias its owner has learned for another entity. A read; call it
        inside the transaction that restores, so nothing can change in between."""
        ...

    def restore(
        self, claims: Sequence[ClaimRecord], claim_vectors: Vectors,
        episodes: Sequence[Episode], episode_vectors: Vectors,
        aliases: Sequence[AliasRecord],
    ) -> dict[str, int]:
        """Put the records back as they were: the same ids, clocks, scopes and fields,
        searchable by text and by vector (row ``i`` of ``claim_vectors`` is
        ``claims[i]``'s, of ``episode_vectors`` ``episodes[i]``'s). Nothing is settled:
        the rows are history. Turns keep their order among themselves. An alias the
        owner already has for the same entity is kept as it is.

        Returns:
            ``claims``, ``episodes`` and ``aliases`` written.

        Raises:
            StoreError: a record ``restore_conflicts`` reports (call it first).
            DimensionMismatchError: vectors of another width than the store's.
        """
        ...
