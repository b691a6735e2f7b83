"""The storage seam: what a memvara backend must do, and nothing about how.

This module is public on purpose: a third party can implement ``Store`` (PostgreSQL,
pgvector, anything) and pass it as ``Memvara(store=...)``. The seam speaks primitives:
frozen ``Claim``/``Episode``/``Scope`` values, ids, strings, integer microseconds and
numpy arrays, and no backend's dialect (a text search gets the query's words, never a
query expression). Instants are integers (UTC microseconds since the epoch) because
every comparison the rules below make must be exact.

The rules every backend must keep (``SQLiteStore`` compiles each in one place):

**Visibility.** A claim is visible at ``TimeQuery(known_at=K, valid_at=V)`` exactly when
``recorded_at <= K < invalidated_at`` and ``valid_from <= V < valid_to``, a missing end
being +infinity, and an end learned after ``K`` (``valid_to_known_at > K``) being
missing to that reader (the latest end learned by ``K`` counts instead, if any). With
``valid_at=None`` only the belief half applies.

**Materialization.** A claim read at ``known_at=K`` is returned as it was believed at
``K``: an ``invalidated_at`` later than ``K`` reads as ``None`` (with
``invalidated_by``), and so does a ``valid_to`` learned after ``K``. A claim read
without a ``TimeQuery`` is the record as it stands now.

**States.** ``live`` is visible; ``ended`` is believed at ``K`` with an end learned by
``K`` that is at or before ``V`` (any end, with ``valid_at=None``); ``retired`` has
``invalidated_at <= K``. All three together is the belief floor ``recorded_at <= K``
alone, not their union.

**Timeline.** Where a method says "on the timeline at ``tq``": recorded by
``known_at`` (retired rows included) and, when ``valid_at`` is set, in force at it by
the end believed at ``known_at``.

**Scope.** A read "visible from ``S``" sees a row when, at every level (tenant, user,
agent, session), the row's level is unset or equals ``S``'s. "At exactly ``S``" means
every level equal (unset matching unset): writes look their slots up that way. "``S``'s
subtree" fixes the levels down to the deepest one ``S`` sets and takes anything below.

**Transactions.** ``transaction()`` nests (the outermost commits). An exception leaving
a context undoes what was done inside it (a nested one: back to its savepoint), so one
leaving the outermost undoes everything; every method called inside, on the same
thread, runs in it.

**Reads never write.** A method that reads (the sections "reads", "retrieval
candidates" and "provenance and the graph", and the reading methods of the others)
writes no row, takes no write lock and never waits for a writer, of this process or
another; a store opened read-only answers every read. What the write side has not
caught up with yet, a read answers from the rows themselves:

* *Text a backend indexes later* (``SQLiteStore`` indexes single writes in batches):
  ``search_claims_text`` and ``search_episodes_text`` still find every row written,
  scored as the index will score it (``SQLiteStore``: with FTS5's tokenizer and BM25,
  in memory, never persisted; ``store/sqlite/_tail.py``), the read's filter applied
  before the cut.
* *Vectors not stored yet* (the writer stores small writes' claims with none, and
  embeds them in batches): a vector search and a similarity read leave such rows out,
  and ``unembedded_claims`` and ``unembedded_episodes`` list the ones a search's filter
  admits, with their text; the search encodes those itself, in memory.

**Errors.** Backend exceptions are raised as ``memvara.StoreError`` subclasses, chained:
``StoreLockedError`` (another writer held the lock too long), ``ReadOnlyStoreError``,
``StorageFullError``, ``StoreCorruptError``, ``NotAStoreError``; ``ClosedError`` for
a read or a write after ``close()``; ``DimensionMismatchError`` for a vector of another
width than ``dim``. A method's ``Raises:`` section names only what else it raises.

**Erasure.** ``erase_claim`` and ``purge`` (and so ``reset``) remove text from every
place the backend keeps it (rows, text indexes, vectors, logs) before returning.

**Optional fast paths.** ``Store`` is the required core. A backend may also implement
``SingleWriteStore``, ``BulkWriteStore``, ``RankingStore``, ``SimilarityStore`` and
``DeferredTextIndexStore`` (exported here; each documented in ``_optional.py``). The
services check ``isinstance(store, ...)`` once, when they are built, and use a fast path
where it is offered and the core methods otherwise, to the same results. A class that
sets a method to ``None`` does not offer it (``typing``'s rule for these checks).
The value types the seam passes (``RankFields``, ``Settlement``, ``Written``,
``SweepWindow``) live in ``_values.py`` and are exported here too.

**Export and import.** ``TransferStore`` (optional; ``_transfer.py``, exported here with the
records it passes: ``ClaimRecord``, ``Closure``, ``AliasRecord``, ``Conflict``, ``WaitingMark``)
dumps a scope's rows whole and restores them as they were, for ``export_jsonl`` and
``import_jsonl``, which refuse a store without it.

**The write log.** ``WriteLogStore`` (optional; ``_governance.py``, exported here with
``LogRecord``) appends one chained record per committed write transaction, whatever
wrote it; ``verify()``, ``anchor()`` and ``why()``'s actor read it back.
``ArchiveStore`` (optional, same module) moves old claims out of reach and back, for
``prune()``, ``restore_archived()`` and ``archived()``; ``ForgetStore`` erases a subject
across its lineage and keeps the tombstones, for ``forget_subject()``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from .._domain.model import STATES, Claim, Episode, Scope, TimeQuery
from ..schema import PredicateSpec
from ._optional import (
    BulkWriteStore,
    DeferredTextIndexStore,
    RankingStore,
    SimilarityStore,
    SingleWriteStore,
    Vectors,
)
from ._governance import (
    ArchiveStore, ForgetStore, GovernanceTransferStore, LogRecord, ReviewStore, SubjectErasure,
    Tombstone, WriteLogStore,
)
from ._transfer import AliasRecord, ClaimRecord, Closure, Conflict, TransferStore, WaitingMark
from ._values import NO_SETTLEMENT, RankFields, Settlement, SweepWindow, Written

__all__ = [
    "AliasRecord", "ArchiveStore", "BulkWriteStore", "ClaimRecord", "Closure", "Conflict",
    "DeferredTextIndexStore", "ForgetStore", "GovernanceTransferStore", "LogRecord",
    "ReviewStore", "NO_SETTLEMENT", "RankFields", "RankingStore", "STATES",
    "Settlement", "SimilarityStore", "SingleWriteStore", "Store", "SubjectErasure", "SweepWindow",
    "TimeQuery", "Tombstone", "TransferStore", "WaitingMark", "WriteLogStore", "Written",
]


@runtime_checkable
class Store(Protocol):
    """A bitemporal claim store: the methods every backend must have. See the module
    docstring for the rules they keep and the errors every one of them may raise."""

    @property
    def dim(self) -> int | None:
        """The vector width this store holds, or ``None`` before the first vector."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction; nested calls become savepoints (see the module docstring).

        Raises:
            StoreLockedError: another writer kept the store locked past the timeout.
        """
        ...

    def snapshot(self) -> AbstractContextManager[None]:
        """A context in which this thread's reads all see one state of the store: a
        search or a graph walk runs inside one, so a write landing mid-way cannot make it
        stitch two states together. Nested or inside a write transaction: a no-op."""
        ...

    def close(self) -> None:
        """Release every resource. Idempotent; a read or a write after it raises
        ``ClosedError``."""
        ...

    # -- writes -------------------------------------------------------------------
    def insert_claims(
        self, claims: Sequence[Claim], vectors: Vectors | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[Claim]:
        """Insert new claims, each a new row (an id a claim carries is ignored).

        Args:
            claims: built by the writer: ``recorded_at`` and ``valid_from`` set, any end
                (``valid_to``, ``invalidated_at``) already decided.
            vectors: row ``i`` is ``claims[i]``'s; ``None`` stores them without one
                (they join ``claims_missing_vectors``).
            subject_keys: the key ``claims[i]`` is filed under (its subject's
                ``entity_key``, or the entity a learned alias maps it to); default the fold.

        Returns:
            The claims as stored, in order, each with its new id (deterministic: no
            clock or random value in it). Each claim's ``sources`` are indexed for
            ``claims_citing``.
        """
        ...

    def claims_missing_vectors(self) -> list[tuple[str, str]]:
        """``(claim_id, text)`` of every claim stored without a vector, oldest first.

        Single writes store claims without vectors so that one batched encode serves
        many; the writer embeds this backlog once it is large (a search encodes the
        ones it needs in memory: ``unembedded_claims``). Read on the writer's side: it
        may be called inside a transaction.
        """
        ...

    def set_claim_vectors(self, claim_ids: Sequence[str], vectors: Vectors) -> int:
        """Store ``vectors[i]`` as the vector of ``claim_ids[i]``, for those that still
        exist and still have none (others are skipped).

        Returns:
            How many were stored.
        """
        ...

    def insert_episodes(
        self, episodes: Sequence[Episode], vectors: Vectors | None
    ) -> list[Episode]:
        """Insert raw turns (``recorded_at`` set; ``ts`` defaults to it).

        Returns:
            The turns as stored, in order, with ``ts`` set and an id assigned
            (deterministically) where the caller left it empty.
        """
        ...

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        """The turn with this id if it is visible from ``scope``; else ``None``."""
        ...

    def copies_of(
        self, scope: Scope, contents: Collection[str]
    ) -> dict[str, list[tuple[str, int]]]:
        """For each of ``contents`` that a turn at exactly ``scope`` holds verbatim, the
        ``(role, ts)`` of every such turn (``ts`` in storage microseconds): the write
        path's check for a copy of a turn, said again within a short window."""
        ...

    def recent_turns(self, scope: Scope, limit: int) -> tuple[list[tuple[str, int]], Vectors]:
        """The ``(role, ts)`` and the vectors of the ``limit`` turns most recently
        inserted at exactly ``scope``, newest first, one row each: zeros for a turn
        stored without a vector, no columns while the store holds no vector (the
        near-copy check)."""
        ...

    def mark_unextracted(self, episode_ids: Sequence[str], at: int, reason: str,
                         speakers: Mapping[str, str] | None = None, meta: str | None = None) -> None:
        """Mark stored turns as waiting for extraction (the model failed on them) at
        ``at``, with ``reason`` (an error's class name), who said those in ``speakers``
        (a message's ``name``) and the call's ``meta`` (JSON). Marking one again
        replaces its mark. Called inside the write's transaction."""
        ...

    def unextracted_marks(self, episode_ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """``(speaker, meta)`` of each of these waiting turns marked with either."""
        ...

    def unextracted_episodes(self, scope: Scope, limit: int) -> list[Episode]:
        """Up to ``limit`` marked turns written at ``scope`` or any scope beneath it (as
        ``purge`` reaches), first stored first."""
        ...

    def clear_unextracted(self, episode_ids: Sequence[str]) -> None:
        """Remove the marks of these turns (they were read again); erasing a turn
        removes its mark too."""
        ...

    def slot_claims(
        self, scope: Scope, slots: Collection[tuple[str, str]], *,
        ending_after: int | None = None,
    ) -> dict[tuple[str, str], list[Claim]]:
        """The still-believed claims (``invalidated_at`` unset) of each ``(subject_key,
        predicate)`` slot at exactly ``scope``, as recorded now.

        Args:
            ending_after: only claims whose valid time is open or ends after it.

        Returns:
            Every slot asked, as a key (an empty list for a slot with none), its claims
            by ``valid_from``, then insertion. Called inside the writer's transaction.
        """
        ...

    def end_claims(self, ends: Sequence[tuple[Claim, int, int, str | None]]) -> list[Claim]:
        """For each ``(claim, valid_to, at, by)``, end the claim's valid time at
        ``valid_to``, as learned at ``at``, because claim ``by`` (if any) took over. An
        end learned before stays readable to readers with ``known_at`` before ``at``.

        Each ``claim`` is the record as read in the caller's current transaction: the
        store updates the row with its id and may build the result from it.

        Returns:
            The claims as updated, in order.

        Raises:
            StoreError: a claim is not in the store.
        """
        ...

    def retire_claims(self, retires: Sequence[tuple[Claim, int, str | None]]) -> list[Claim]:
        """For each ``(claim, at, by)``, withdraw belief at ``at`` (replaced by claim
        ``by``, if any); ``claim`` is read in the caller's transaction, as for
        ``end_claims``.

        Returns:
            The claims as updated, in order.

        Raises:
            StoreError: a claim is not in the store.
        """
        ...

    def reinforce_claim(self, claim_id: str, sources: Sequence[str], at: int) -> Claim:
        """Count one more observation of a claim, made at ``at``, and merge in ``sources``
        (kept in order, each once, and indexed for ``claims_citing``).

        Storage strength grows by ``memvara._domain.salience.reinforced_storage`` (more
        for a claim nearly forgotten at ``at``: the spacing effect); retrieval strength
        resets to 1.0 and the last observation becomes ``at`` (kept if later already).

        Returns:
            The claim as recorded now.
        """
        ...

    # -- consolidation ------------------------------------------------------------
    def sweep_claims(
        self, scope: Scope, after: tuple[str, ...] | None, limit: int
    ) -> SweepWindow:
        """The next window of still-believed claims in ``scope``'s subtree, slot by
        slot, after the slot ``after`` (``None``: from the start); see ``SweepWindow``.

        A window holds whole slots: it stops at the last slot boundary within ``limit``
        rows (at least one), or holds one slot alone when that slot has more.
        Consolidation reads each window inside the transaction that writes it.
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
        """The claim as recorded now, in any state, if visible from ``scope``; else
        ``None`` (also for a string that is no claim id)."""
        ...

    def find_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *, limit: int | None = None,
        offset: int = 0, subject_keys: Collection[str] | None = None,
        predicate: str | None = None,
    ) -> list[Claim]:
        """The claims visible from ``scope`` in any of ``states`` at ``tq``, newest
        recorded first (then latest inserted: a stable order, so pages do not overlap),
        materialized at ``tq``.

        Args:
            limit: at most this many (``None``: all).
            offset: skip this many of the ordered list first.
            subject_keys: only claims filed under one of these subject keys.
            predicate: only claims with this canonical predicate.
        """
        ...

    def count_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *,
        subject_keys: Collection[str] | None = None, predicate: str | None = None,
    ) -> int:
        """How many claims ``find_claims`` would return with no limit or offset."""
        ...

    def list_episodes(
        self, scope: Scope, tq: TimeQuery, *, roles: Collection[str] | None = None,
        limit: int | None = None, offset: int = 0,
    ) -> list[Episode]:
        """The turns visible from ``scope`` recorded by ``tq.known_at`` (and said by
        ``tq.valid_at`` when it is set), oldest said first (then first inserted), only
        those of ``roles`` when given, ``offset`` skipped, at most ``limit``."""
        ...

    def slot_history(
        self, scope: Scope, subject_keys: Collection[str], predicate: str, tq: TimeQuery
    ) -> list[Claim]:
        """The claims visible from ``scope`` filed under any of ``subject_keys`` with
        ``predicate``, on the timeline at ``tq``, oldest recorded first (then inserted),
        materialized at ``tq``."""
        ...

    def stats(self, scope: Scope, now: int) -> dict[str, int]:
        """Counts of the rows visible from ``scope``: ``episodes`` and ``claims`` (all
        of them), ``live_claims``, ``ended_claims`` and ``invalidated`` (the claims in
        each state at ``known_at = valid_at = now``), and ``embeddings`` (claims and
        turns with a vector)."""
        ...

    # -- retrieval candidates -----------------------------------------------------
    def search_claims_text(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, terms: Sequence[str], limit: int,
    ) -> list[tuple[str, float]]:
        """The best full-text matches among the claims visible from ``scope`` in
        ``states`` at ``tq`` (and of ``memory_types``, when given). The filter applies
        before the limit, so an old claim is never crowded out by live ones.

        Args:
            terms: the words to look for, as ``memvara._domain.terms.query_terms`` gives
                them: a row matching any of them is a match. Words, never syntax: a
                backend must quote them. An empty list matches nothing.

        Returns:
            Up to ``limit`` ``(claim_id, score)`` pairs, best first, higher better
            (``SQLiteStore``: BM25, negated). A backend may cut cost where exact ranking
            would score most of a large store, and must say how; ``SQLiteStore`` is exact
            for the rows matching a rarer word and fills the rest of the list from a
            window (``store/sqlite/_bm25.py``). A row its text index does not hold yet
            (a ``DeferredTextIndexStore``'s) is found all the same, scored as the index
            will score it, without writing (see "Reads never write").
        """
        ...

    def search_claims_vector(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, vector: Vectors, limit: int,
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` ``(claim_id, cosine)`` pairs, nearest first, among the same
        claims as ``search_claims_text`` that have a vector (filter before the limit,
        too). ``SQLiteStore`` ranks the sidecar first and filters in rank order, exact
        up to 8,192 slots, with a sign-bit first pass past that (``_nearest.py``)."""
        ...

    def unembedded_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None,
    ) -> list[tuple[str, str]]:
        """``(claim_id, text)`` of the claims ``search_claims_vector``'s filter admits
        that have no vector yet, oldest first: those it leaves out. A search encodes
        them in memory and ranks them with the rest. Read without waiting on a writer;
        a backend that stores every vector as it is given one returns what the writer
        stored without (``insert_claims(..., None)``)."""
        ...

    def unembedded_episodes(self, scope: Scope, tq: TimeQuery) -> list[tuple[str, str]]:
        """``(episode_id, content)`` of the turns ``search_episodes_vector``'s filter
        admits that have no vector (stored without one, or written while
        ``rebuild_vectors`` ran), oldest first; as ``unembedded_claims``."""
        ...

    def claims_at(self, claim_ids: Sequence[str], tq: TimeQuery) -> dict[str, Claim]:
        """The claims with these ids, in any scope (the caller's search filtered them),
        materialized at ``tq``; an id with no claim is left out."""
        ...

    def search_episodes_text(
        self, scope: Scope, tq: TimeQuery, terms: Sequence[str], limit: int
    ) -> list[tuple[str, float]]:
        """``search_claims_text`` for turns: those visible from ``scope``, recorded by
        ``known_at`` and said (``ts``) by ``valid_at`` when it is set."""
        ...

    def search_episodes_vector(
        self, scope: Scope, tq: TimeQuery, vector: Vectors, limit: int
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
        """The turns with these ids, in any scope; an unknown id is left out."""
        ...

    # -- re-embedding -------------------------------------------------------------
    def vector_texts(self, table: str, after: int, limit: int) -> list[tuple[int, str]]:
        """Up to ``limit`` ``(position, text)`` pairs of ``table`` (``"claims"``: the
        claim's text; ``"episodes"``: the turn's content) after position ``after`` (0:
        from the start), in insertion order: what each row's vector encodes, a page at a
        time. A position is an integer the store gives (``SQLiteStore``: the rowid) and
        takes back in ``rebuild_vectors``' ``put``."""
        ...

    @property
    def embedder_label(self) -> str | None:
        """The ``label`` of the last ``rebuild_vectors`` (which embedder made the
        vectors), or ``None`` if the store was never re-embedded."""
        ...

    def rebuild_vectors(
        self, dim: int, label: str
    ) -> AbstractContextManager[Callable[[str, Sequence[int], Vectors], None]]:
        """A context yielding ``put(table, positions, vectors)``, which stores new
        ``dim``-wide vectors aside; on a clean exit they replace every vector of the
        store at once and ``label`` is recorded as ``embedder_label`` (rows never
        ``put`` lose their vectors: claims join the embedding backlog), and an
        exception leaves the old ones untouched. The caller encodes between ``put``
        calls, so no transaction is held while it does.

        Raises:
            DimensionMismatchError: ``put`` got vectors that are not ``dim`` wide.
        """
        ...

    # -- provenance and the graph -------------------------------------------------
    def claim_at(
        self, claim_id: str, scope: Scope, tq: TimeQuery
    ) -> tuple[Claim, str | None] | None:
        """The claim if visible from ``scope`` and on the timeline at ``tq`` (every state
        counts), materialized at ``tq``, with the id of the claim whose write ended its
        valid time as believed then (or ``None``); else ``None``."""
        ...

    def superseded_by(self, claim_id: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """The claims visible from ``scope`` that ``claim_id`` retired (by
        ``tq.known_at``) or whose valid time it ended (as believed then), oldest
        recorded first, materialized at ``tq``."""
        ...

    def claims_citing(self, source: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """The claims visible from ``scope`` whose sources include ``source``, on the
        timeline at ``tq`` (every state counts), oldest recorded first, materialized at
        ``tq``."""
        ...

    def predicate_in_use(self, predicate: str) -> bool:
        """Whether any claim in the store, in any scope and state, has ``predicate``
        (a walk's filter may name a relation the registry never classified)."""
        ...

    def graph_edges(
        self, scope: Scope, tq: TimeQuery, keys: Collection[str],
        predicates: Collection[str] | None, fanout: int,
    ) -> list[tuple[Claim, str, str]]:
        """``(claim, subject_key, object_key)`` for the live claims at ``tq`` visible from
        ``scope`` with positive polarity whose subject key or object key is in ``keys``
        (and whose predicate is in ``predicates``, when given): an edge in each direction
        it touches ``keys``, materialized at ``tq``. At most ``fanout`` a key on each
        side, the most recently recorded, so a hub entity costs a bounded read."""
        ...

    # -- learned entity aliases ---------------------------------------------------
    def learn_alias(self, owner: Scope, alias_key: str, entity_key: str, at: int, via: str) -> None:
        """Record that, for ``owner`` (its tenant and user), ``alias_key`` names the
        entity ``entity_key`` (replacing what it named before), learned at ``at``;
        ``via`` says who decided (a model, a person)."""
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
        """File every claim (any state) of ``owner``'s tenant and user, at any agent and
        session, whose subject key is a key of ``mapping`` under the mapped key instead,
        stamping each one's ``meta["entity_backfill"]`` with ``from``, ``to`` and ``at``.

        Returns:
            The claims as recorded afterwards (with ``dry_run``: as they would be, and
            nothing is written), in the mapping's order, then insertion order.
        """
        ...

    def entity_surfaces(self, owner: Scope, limit: int) -> list[str]:
        """Up to ``limit`` distinct subjects and objects of the claims last written for
        ``owner``'s tenant and user (any agent and session), newest first: the names an
        alias may resolve to."""
        ...

    # -- erasure ------------------------------------------------------------------
    def erase_claim(self, claim_id: str, scope: Scope, *, sources: bool) -> dict[str, int]:
        """Remove one claim visible from ``scope`` everywhere, and with ``sources`` the
        turns it cited, visible from ``scope``, that no remaining claim cites.

        Returns:
            ``claims``, ``episodes`` and ``embeddings`` removed, and ``sources`` the
            claim cited; all zero when no such claim is visible.
        """
        ...

    def purge(self, scope: Scope) -> dict[str, int]:
        """Remove every claim and turn in ``scope``'s subtree, everywhere.

        Returns:
            ``claims``, ``episodes`` and ``embeddings`` removed, and ``sources``: the
            claims' links to the turns they cited.
        """
        ...

    # -- learned schema -----------------------------------------------------------
    def load_predicates(self) -> list[PredicateSpec]:
        """Every persisted predicate spec, by name."""
        ...

    def save_predicates(self, specs: Sequence[PredicateSpec]) -> None:
        """Persist predicate specs, replacing any of the same name."""
        ...

    def clear_predicates(self) -> int:
        """Forget every persisted predicate spec; returns how many there were."""
        ...

