"""The storage seam: what a memvara backend must do, and nothing about how.

This module is public on purpose: a third party can implement ``Store`` (Postgres,
pgvector, anything) and pass it as ``Memvara(store=...)``. The seam speaks primitives:
frozen ``Claim``/``Episode``/``Scope`` values, ids, strings, integer microseconds and
numpy arrays. Instants are integers (UTC microseconds since the epoch) because every
comparison the rules below make must be exact.

The rules every backend must keep (``SQLiteStore`` compiles each in one place):

**Visibility.** A claim is visible at ``TimeQuery(known_at=K, valid_at=V)`` exactly when
``recorded_at <= K < invalidated_at`` and ``valid_from <= V < valid_to``, a missing end
being +infinity, and an end learned after ``K`` (``valid_to_known_at > K``) being
missing to that reader. With ``valid_at=None`` only the belief half applies.

**Materialization.** A claim read at ``known_at=K`` is returned as it was believed at
``K``: an ``invalidated_at`` later than ``K`` reads as ``None`` (with
``invalidated_by``), and so does a ``valid_to`` learned after ``K``.

**States.** ``live`` is visible; ``ended`` is believed at ``K`` with an end learned by
``K`` that is at or before ``V``; ``retired`` has ``invalidated_at <= K``. All three
together is the belief floor ``recorded_at <= K`` alone, not their union.

**Scope.** A read at scope ``S`` sees a row when, at every level (tenant, user, agent,
session), the row's level is unset or equals ``S``'s. Writes that look a slot up use the
exact scope. A purge takes the scope and every narrower one beneath it.

**Transactions.** ``transaction()`` nests (the outermost commits). Any exception inside
rolls the whole outermost transaction's effects back when it propagates out of it, and
every method called inside runs in it. Backend exceptions are raised as
``memvara.StoreError`` subclasses.

**Erasure.** ``erase_claim``, ``purge`` and ``reset`` remove text from every place the
backend keeps it (rows, text indexes, vectors, logs) before returning.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._model import STATES, Claim, Episode, Scope, TimeQuery
from ..schema import PredicateSpec

__all__ = ["STATES", "Store", "TimeQuery"]


@runtime_checkable
class Store(Protocol):
    """A bitemporal claim store. See the module docstring for the rules it must keep."""

    @property
    def dim(self) -> int | None:
        """The vector width this store holds, or ``None`` before the first vector."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction (nested calls become savepoints)."""
        ...

    def close(self) -> None:
        """Release every resource. Idempotent; later calls raise ``ClosedError``."""
        ...

    # -- writes -------------------------------------------------------------------
    def insert_claims(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[Claim]:
        """Insert new claims (row ``i`` of ``vectors`` belongs to ``claims[i]``).

        ``subject_keys[i]``, when given, is the key ``claims[i]`` is filed under (its
        subject's ``entity_key``, or the entity a learned alias maps it to).

        Returns the claims as stored, with ``id`` assigned. Every time field the caller
        leaves ``None`` except the ends must already be filled in by the caller.
        """
        ...

    def claims_missing_vectors(self) -> list[tuple[str, str]]:
        """``(claim_id, text)`` of every claim stored without a vector, oldest first.

        Single writes store claims without vectors so that one batched encode serves
        many; the writer embeds this backlog once it is large, and a vector search
        embeds it first.
        """
        ...

    def set_claim_vectors(
        self, claim_ids: Sequence[str], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Store ``vectors[i]`` as the vector of ``claim_ids[i]``, for those that still
        exist and still have none; returns how many were stored."""
        ...

    def insert_episodes(
        self, episodes: Sequence[Episode], vectors: npt.NDArray[np.float32] | None
    ) -> list[Episode]:
        """Insert raw turns (``recorded_at`` set; ``ts`` defaults to it); returns them
        as stored, with ``id`` assigned where the caller left it empty."""
        ...

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        """The episode if visible from ``scope``; else ``None``."""
        ...

    def known_contents(self, scope: Scope, contents: Collection[str]) -> set[str]:
        """Which of ``contents`` an episode at exactly ``scope`` already holds, verbatim
        (the write path's exact-duplicate check)."""
        ...

    def recent_episode_vectors(self, scope: Scope, limit: int) -> npt.NDArray[np.float32]:
        """The vectors of the ``limit`` most recently recorded episodes at exactly
        ``scope`` that have one, one row each (the near-duplicate check)."""
        ...

    def slot_claims(
        self,
        scope: Scope,
        slots: Collection[tuple[str, str]],
        *,
        ending_after: int | None = None,
    ) -> dict[tuple[str, str], list[Claim]]:
        """Still-believed claims (``invalidated_at IS NULL``) in each ``(subject_key,
        predicate)`` slot at exactly ``scope``, oldest ``valid_from`` first; with
        ``ending_after``, only those whose valid time is open or ends after it."""
        ...

    def end_claims(self, ends: Sequence[tuple[str, int, int, str | None]]) -> list[Claim]:
        """For each ``(claim_id, valid_to, at, by)``, set ``valid_to`` as learned at ``at``
        because claim ``by`` (if any) took over (keeping an end learned earlier readable
        to readers before ``at``); returns the claims as updated, in order."""
        ...

    def retire_claims(self, retires: Sequence[tuple[str, int, str | None]]) -> list[Claim]:
        """For each ``(claim_id, at, by)``, withdraw belief at ``at`` (replaced by claim
        ``by``, if any); returns the claims as updated, in order."""
        ...

    def reinforce_claim(self, claim_id: str, sources: Sequence[str]) -> Claim:
        """Count one more observation of a claim and merge in ``sources``."""
        ...

    # -- reads --------------------------------------------------------------------
    def get_claim(self, claim_id: str, scope: Scope) -> Claim | None:
        """The claim as currently recorded, if visible from ``scope``; else ``None``."""
        ...

    def find_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *, limit: int | None = None
    ) -> list[Claim]:
        """Claims in ``states`` at ``tq``, newest recorded first, materialized at ``tq``."""
        ...

    def count_claims(self, scope: Scope, tq: TimeQuery, states: Collection[str]) -> int:
        """How many claims ``find_claims`` would return with no limit."""
        ...

    def slot_history(
        self, scope: Scope, subject_keys: Collection[str], predicate: str, tq: TimeQuery
    ) -> list[Claim]:
        """Every claim of the slot visible at ``tq`` (ended and retired ones included),
        in recorded order, materialized at ``tq``."""
        ...

    def stats(self, scope: Scope, now: int) -> dict[str, int]:
        """``episodes``, ``claims``, ``live_claims``, ``ended_claims``, ``invalidated``
        and ``embeddings`` at ``now`` (see the spec's "Counting claims")."""
        ...

    # -- retrieval candidates -------------------------------------------------------------
    def search_claims_text(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, match: str, limit: int,
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(claim_id, bm25)`` pairs, best first (higher is better), for
        the FTS5 expression ``match`` among the claims visible from ``scope`` in
        ``states`` at ``tq`` (and of ``memory_types``, when given). The filter applies
        before the limit, so an old claim is never crowded out by live ones."""
        ...

    def search_claims_vector(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, vector: npt.NDArray[np.float32], limit: int,
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(claim_id, cosine)`` pairs, nearest first, among the same
        claims as ``search_claims_text`` that have a vector."""
        ...

    def claims_at(self, claim_ids: Sequence[str], tq: TimeQuery) -> dict[str, Claim]:
        """The claims with these ids, materialized as believed at ``tq``."""
        ...

    def search_episodes_text(
        self, scope: Scope, tq: TimeQuery, match: str, limit: int
    ) -> list[tuple[str, float]]:
        """``search_claims_text`` for turns: those visible from ``scope``, recorded by
        ``known_at`` and said by ``valid_at``."""
        ...

    def search_episodes_vector(
        self, scope: Scope, tq: TimeQuery, vector: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        """``search_claims_vector`` for the turns ``search_episodes_text`` admits."""
        ...

    def episodes_by_ids(self, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The episodes with these ids."""
        ...

    # -- learned entity aliases -------------------------------------------------------
    def learn_alias(self, owner: Scope, alias_key: str, entity_key: str, at: int, via: str) -> None:
        """Record that, for ``owner`` (its tenant and user), ``alias_key`` names the
        entity ``entity_key``; ``via`` says who decided (a model, a person)."""
        ...

    def aliases(self, owner: Scope) -> dict[str, str]:
        """``alias_key -> entity_key`` learned for exactly ``owner``'s tenant and user."""
        ...

    def rekey_subjects(
        self, owner: Scope, mapping: Mapping[str, str], at: int, *, dry_run: bool
    ) -> list[Claim]:
        """File the claims in ``owner``'s subtree whose subject key is a key of
        ``mapping`` under the mapped key instead, stamping each one's ``meta`` with the
        change; returns them as they are (or, with ``dry_run``, would be) afterwards."""
        ...

    def entity_surfaces(self, owner: Scope, limit: int) -> list[str]:
        """The most recent distinct subjects and objects written in ``owner``'s subtree,
        newest first (the candidates an alias may resolve to)."""
        ...

    # -- erasure ------------------------------------------------------------------
    def erase_claim(self, claim_id: str, scope: Scope, *, sources: bool) -> dict[str, int]:
        """Remove one claim everywhere (and, with ``sources``, the turns no surviving
        claim cites); returns per-table counts, all zero if no such claim is visible."""
        ...

    def purge(self, scope: Scope) -> dict[str, int]:
        """Remove everything at ``scope`` and beneath it; returns per-table counts."""
        ...

    # -- learned schema -------------------------------------------------------------
    def load_predicates(self) -> list[PredicateSpec]:
        """Every persisted predicate spec."""
        ...

    def save_predicates(self, specs: Sequence[PredicateSpec]) -> None:
        """Persist (insert or replace) predicate specs."""
        ...

    def clear_predicates(self) -> int:
        """Forget every persisted predicate spec; returns how many there were."""
        ...

