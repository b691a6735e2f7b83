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

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._domain.model import STATES, Claim, Episode, Scope, TimeQuery
from ..schema import PredicateSpec

__all__ = [
    "NO_SETTLEMENT", "STATES", "RankFields", "Settlement", "Store", "SweepWindow", "TimeQuery",
    "Written",
]


class RankFields(NamedTuple):
    """What ``search()`` reads of a claim to rank it, without building the ``Claim``.

    A store may offer ``rank_fields(claim_ids) -> dict[str, RankFields]`` (``SQLiteStore``
    does), giving these fields as ``claims_at`` would (``valid_from`` in microseconds,
    like every instant at this seam); search then builds whole claims only for the
    results it returns. It is optional: without it, search ranks the candidates from
    ``claims_at``.
    """

    text: str
    predicate: str
    valid_from: int | None
    confidence: float
    observations: int
    salience: float


NO_SETTLEMENT = "settle() named no claim to insert or to reinforce"
"""The ``StoreError`` message for a ``Settlement`` that names neither."""


class Settlement(NamedTuple):
    """What one new claim does to its slot: the writer's answer to a store that offers
    ``write_claim`` (see ``Store``).

    Either ``insert`` is the claim to store (it may end earlier than the one written:
    a later value already holds the slot) and ``reinforce`` is ``None``, or ``insert``
    is ``None`` and the write is another observation of the believed ``reinforce``.
    ``end`` holds ``(claim, valid_to, at)`` and ``retire`` ``(claim, at)``: the closures
    the inserted claim causes, each naming it as the claim that closed them.
    """

    insert: Claim | None
    reinforce: Claim | None
    end: Sequence[tuple[Claim, int, int]]
    retire: Sequence[tuple[Claim, int]]


Written = tuple[Claim | None, Claim | None, list[Claim], list[Claim]]
"""What ``write_claim`` did: ``(added, reinforced, ended, retired)``, ``None`` for the
one of the first two not written."""


@dataclass(frozen=True, slots=True)
class SweepWindow:
    """One window of still-believed claims handed to consolidation, column by column
    (a row object per claim would cost more than the sweep's arithmetic).

    Rows of one slot (``slots[i]``: tenant, user, agent, session, subject key,
    predicate) are adjacent and never split across windows. Instants are integer
    microseconds; an open ``valid_to`` is ``2**63 - 1``. ``storage`` is the storage
    strength (never decays), ``retrieval`` the retrieval strength as last stored, and
    ``observed_at`` the last observation (the claim's ``recorded_at`` until a
    re-observation). ``vectors`` has a zero row where ``has_vector`` is false (and no
    columns while the store holds no vector at all).
    ``next`` is what to pass as ``after`` for the following window; ``None`` after the
    last one.
    """

    ids: tuple[str, ...]
    rowids: npt.NDArray[np.int64]
    slots: tuple[tuple[str, ...], ...]
    polarity: npt.NDArray[np.int64]
    object_keys: tuple[str, ...]
    valid_from: npt.NDArray[np.int64]
    valid_to: npt.NDArray[np.int64]
    memory_types: tuple[str, ...]
    observations: npt.NDArray[np.int64]
    storage: npt.NDArray[np.float64]
    retrieval: npt.NDArray[np.float64]
    observed_at: npt.NDArray[np.int64]
    vectors: npt.NDArray[np.float32]
    has_vector: npt.NDArray[np.bool_]
    next: tuple[str, ...] | None

    def __len__(self) -> int:
        return len(self.ids)


@runtime_checkable
class Store(Protocol):
    """A bitemporal claim store. See the module docstring for the rules it must keep.

    Beyond these methods a store may offer faster paths that the writer and search use
    when present and do without otherwise (``SQLiteStore`` has them all):
    ``rank_fields`` (see ``RankFields``); ``claim_similarities(ids, vector)`` and
    ``episode_similarities(ids, vector)``, the cosine of a query with given rows;
    ``slot_claims_across({scope: slots}, ending_after=)``, ``slot_claims`` for many
    scopes at once, per scope, empty slots left out; ``insert_claim_ids``, which is
    ``insert_claims`` returning only the new ids (the writer then sets each on the claim
    it built, rather than receive a copy); and ``write_claim(claim, subject_key, vector,
    settle)``, one claim's whole write inside the writer's transaction, which must do
    what these general methods would:

    1. Read the slot ``(subject_key, claim.predicate)`` at ``claim.scope`` exactly: the
       still-believed claims whose valid time ends after ``claim.valid_from``, in
       ``slot_claims``' order (by ``valid_from``, then insertion).
    2. Call ``settle(found)`` before writing anything; let what it raises propagate.
    3. Apply the ``Settlement``. To reinforce: ``reinforce_claim(reinforce.id,
       claim.sources, claim.recorded_at in microseconds)`` (``vector`` is not used). To
       insert: ``insert_claims([insert], vector, [subject_key])`` (``vector`` is a
       ``(1, dim)`` array or ``None``), then ``end_claims`` and ``retire_claims`` with
       the new claim's id as ``by``. A settlement that names neither raises
       ``StoreError(NO_SETTLEMENT)``.
    4. Return ``(added, reinforced, ended, retired)``, the claims those methods return
       (``None`` for the one not written). The claim to insert was built for this
       write: the store may set its id on it in place
       (``memvara._model.set_new_claim_id``).
    """

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

    def has_backlog(self) -> bool:
        """Whether any row waits for the text index or its vector, read without waiting
        on a writer: a search catches up (which takes the write lock) only then."""
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

    def end_claims(self, ends: Sequence[tuple[Claim, int, int, str | None]]) -> list[Claim]:
        """For each ``(claim, valid_to, at, by)``, set ``valid_to`` as learned at ``at``
        because claim ``by`` (if any) took over (keeping an end learned earlier readable
        to readers before ``at``); returns the claims as updated, in order.

        Each ``claim`` is the record as read in the caller's current transaction: the
        store updates the row with its id and may build the result from it rather than
        read the row back.
        """
        ...

    def retire_claims(self, retires: Sequence[tuple[Claim, int, str | None]]) -> list[Claim]:
        """For each ``(claim, at, by)``, withdraw belief at ``at`` (replaced by claim
        ``by``, if any); returns the claims as updated, in order. ``claim`` is read in the
        caller's transaction, as for ``end_claims``."""
        ...

    def reinforce_claim(self, claim_id: str, sources: Sequence[str], at: int) -> Claim:
        """Count one more observation of a claim, made at ``at``, and merge in ``sources``.

        Storage strength grows by ``memvara._domain.salience.reinforced_storage`` (more for a
        claim nearly forgotten at ``at``: the spacing effect); retrieval strength resets
        to 1.0 and the last observation becomes ``at`` (kept if later already).
        """
        ...

    # -- consolidation ------------------------------------------------------------
    def sweep_claims(
        self, scope: Scope, after: tuple[str, ...] | None, limit: int
    ) -> SweepWindow:
        """The next window of still-believed claims (``invalidated_at IS NULL``) in
        ``scope`` and every scope beneath it, slot by slot, starting after the slot
        ``after`` (``None``: from the start).

        A window holds whole slots: it stops at the last slot boundary within ``limit``
        rows, or holds one slot alone when that slot has more. Consolidation reads each
        window inside the transaction that writes it.
        """
        ...

    def apply_sweep(
        self,
        retrieval: Sequence[tuple[str, float]],
        memory_types: Sequence[tuple[str, str]],
        folds: Sequence[tuple[str, Sequence[str], int, float, int]],
        at: int,
    ) -> None:
        """Write one consolidation window: set each ``(claim_id, retrieval strength)``
        and ``(claim_id, memory_type)``, and apply each fold ``(survivor_id, loser_ids,
        observations, storage strength, observed_at)``: the survivor takes those values
        and every loser's sources; each loser is retired at ``at`` (or its own
        ``recorded_at``, if later) with ``invalidated_by`` the survivor. Rows are kept,
        never deleted, so ``history()`` still shows what was merged."""
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
        before the limit, so an old claim is never crowded out by live ones.

        A backend may cut cost where exact ranking would score most of a large store,
        and must say how; ``SQLiteStore`` is exact for the rows matching a rarer query
        word and fills the rest of the list from a window (``store/_bm25.py``)."""
        ...

    def search_claims_vector(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, vector: npt.NDArray[np.float32], limit: int,
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(claim_id, cosine)`` pairs, nearest first, among the same
        claims as ``search_claims_text`` that have a vector (filter before the limit,
        too). ``SQLiteStore`` ranks the sidecar first and filters in rank order, exact
        up to 8,192 slots, with a sign-bit first pass past that (``store/_nearest.py``)."""
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

    def episode_neighbours(
        self, tq: TimeQuery, episode_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        """For each of ``episode_ids``, the ids of the turns stored just before and just
        after it at exactly its scope (insertion order), among those recorded by
        ``tq.known_at`` and said by ``tq.valid_at`` when set; ``None`` where there is
        none. A search lends a matching turn's score to the turns around it."""
        ...

    def episodes_by_ids(self, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The episodes with these ids."""
        ...

    # -- re-embedding ---------------------------------------------------------------
    def vector_texts(self, table: str, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` ``(rowid, text)`` pairs of ``table`` (``"claims"``: the
        claim's text; ``"episodes"``: the turn's content) with rowid above ``after``, in
        rowid order: what each row's vector encodes, read a page at a time."""
        ...

    @property
    def embedder_label(self) -> str | None:
        """The ``label`` of the last ``rebuild_vectors`` (which embedder made the
        vectors), or ``None`` if the store was never re-embedded."""
        ...

    def rebuild_vectors(
        self, dim: int, label: str
    ) -> AbstractContextManager[Callable[[str, Sequence[int], npt.NDArray[np.float32]], None]]:
        """A context yielding ``put(table, rowids, vectors)``, which stores new
        ``dim``-wide vectors aside; on a clean exit they replace every vector of the
        store at once and ``label`` is recorded as ``embedder_label`` (rows never
        ``put`` lose their vectors: claims join the embedding backlog), and an
        exception leaves the old ones untouched. The caller encodes between ``put``
        calls, so no transaction is held while it does."""
        ...

    # -- provenance and the graph ---------------------------------------------------
    def snapshot(self) -> AbstractContextManager[None]:
        """A context in which this thread's reads all see one state of the store: a
        graph walk runs its hops inside one, so a write landing mid-walk cannot make it
        stitch two states together. Nested or inside a write transaction: a no-op."""
        ...

    def claim_at(
        self, claim_id: str, scope: Scope, tq: TimeQuery
    ) -> tuple[Claim, str | None] | None:
        """The claim if visible from ``scope``, recorded by ``tq.known_at`` and in force
        at ``tq.valid_at`` (when set; every state counts), materialized at ``tq``, with
        the id of the claim whose write ended its valid time as believed then (or
        ``None``); else ``None``."""
        ...

    def superseded_by(self, claim_id: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """The claims visible from ``scope`` that ``claim_id`` retired (by
        ``tq.known_at``) or whose valid time it ended (as believed then), oldest
        recorded first, materialized at ``tq``."""
        ...

    def claims_citing(self, source: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """Claims visible from ``scope`` whose sources include ``source``, recorded by
        ``tq.known_at`` and in force at ``tq.valid_at`` when set (every state counts),
        oldest recorded first, materialized at ``tq``."""
        ...

    def predicate_in_use(self, predicate: str) -> bool:
        """Whether any claim in the store, in any scope and state, has ``predicate``
        (a walk's filter may name a relation the registry never classified)."""
        ...

    def graph_edges(
        self,
        scope: Scope,
        tq: TimeQuery,
        keys: Collection[str],
        predicates: Collection[str] | None,
        fanout: int,
    ) -> list[tuple[Claim, str, str]]:
        """``(claim, subject_key, object_key)`` for the live claims at ``tq`` visible from
        ``scope`` with positive polarity whose subject key or object key is in ``keys``
        (and whose predicate is in ``predicates``, when given): an edge in each direction
        it touches ``keys``. At most ``fanout`` a key on each side, most recently
        recorded first, so a hub entity costs a bounded read."""
        ...

    # -- learned entity aliases -------------------------------------------------------
    def learn_alias(self, owner: Scope, alias_key: str, entity_key: str, at: int, via: str) -> None:
        """Record that, for ``owner`` (its tenant and user), ``alias_key`` names the
        entity ``entity_key``; ``via`` says who decided (a model, a person)."""
        ...

    def aliases(self, owner: Scope) -> dict[str, str]:
        """``alias_key -> entity_key`` learned for exactly ``owner``'s tenant and user."""
        ...

    def alias_owners(self) -> set[tuple[str | None, str | None]]:
        """The ``(tenant, user)`` pairs that have learned any alias (few, usually none):
        a writer asks ``aliases()`` only for these."""
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

