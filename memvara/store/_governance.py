"""What a store must offer for governance, as optional protocols (exported by
``memvara.store.base``): ``WriteLogStore`` for the tamper-evident write log,
``ArchiveStore`` for retention.

The log is the store's to keep because it must be written in the same transaction as
the rows it describes, whatever write path made them: a store appends one record per
committed write transaction, chained as ``memvara._domain.ledger`` says, without the
write path asking. The facade names the verb and the actor (``logged``); a write path
adds what the rows cannot show (``log_note``). A store without this protocol keeps no
log, and ``verify()``/``anchor()`` on it raise ``StoreError``.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .._domain.ledger import Anchor
from .._domain.model import Claim, Scope
from .._domain.review import Review
from .._errors import ClaimNotFoundError
from ._transfer import ClaimRecord

__all__ = [
    "ArchiveStore", "ForgetStore", "GovernanceTransferStore", "LogRecord", "ReviewStore",
    "SubjectErasure", "Tombstone", "WriteLogStore", "still_archived",
]

LogRecord = tuple[int, int, str, str, str, str]
"""``(seq, at, actor, action, body, hash)``: one record as stored."""


@runtime_checkable
class WriteLogStore(Protocol):
    """A store that appends a chained record for every write transaction it commits.

    Every committed transaction that inserted, ended, retired, un-retired, re-filed,
    reinforced (``observations``), promoted (``memory_type``), decayed (``salience``) or
    deleted a claim, or inserted, edited or deleted a turn, or carried a ``log_note``,
    appends exactly one record in that transaction: ``seq`` one past the last, ``at`` and
    ``actor``/``action`` from the outermost ``logged()`` open on the committing thread
    (else ``"write"``, ``""`` and the store's wall clock), a ``body`` that is
    ``ledger.canonical_body`` of ``{op: [rowids...], "notes": [...]}`` (ops as in
    ``memvara.store.sqlite._log.LOG_OPS``), and ``hash = ledger.record_hash(previous
    hash or ledger.genesis(log_identity()), seq, at, actor, action, body)``. A rolled-back
    transaction appends nothing. The body never holds text: rowids, counts and
    ``log_digest`` values.
    """

    def snapshot(self) -> AbstractContextManager[None]:
        """As ``Store.snapshot``: ``verify()`` reads the head and every record in one."""
        ...

    def logged(
        self, action: str, actor: str, at: int, *, named: bool = False,
    ) -> AbstractContextManager[None]:
        """Name the records this thread's transactions append inside: the API verb, who
        asked, when (UTC microseconds). ``named``: the caller chose the actor, and each
        claim added inside records it for ``claim_actor``. Nested: the outermost wins."""
        ...

    def log_note(self, kind: str, **fields: object) -> None:
        """Add ``{kind: fields}`` (JSON values: ids, counts, digests) to the ``notes`` of
        the record this thread's open write transaction will append (opening one, and so
        appending a record of its own, when none is open)."""
        ...

    def log_digest(self, text: str) -> str:
        """``text`` keyed by this store's secret (HMAC-SHA256, hex): equal texts give
        equal digests in one store, and nobody without the secret can test a guess."""
        ...

    def log_identity(self) -> str:
        """This store's identity: fixed when the store is made, different for every
        store, named in its anchors and its genesis hash."""
        ...

    def log_head(self) -> Anchor:
        """The last record's anchor; ``seq`` 0 and the genesis hash when there is none."""
        ...

    def log_records(self, after: int, limit: int) -> list[LogRecord]:
        """Up to ``limit`` records with ``seq > after``, ascending, exactly as stored
        (no check: ``verify()`` does that)."""
        ...

    def claim_actor(self, claim_id: str) -> str | None:
        """The actor named for claim ``claim_id`` (an id the caller found visible): by a
        ``named`` write, or the ``ClaimRecord`` a restore carried; ``None`` when none
        was (its actor is then its scope's default: ``default_actor``)."""
        ...


def still_archived(claim_ids: Collection[str], found: Collection[str]) -> None:
    """Inside ``restore_archived``'s transaction, given the ids it ``found`` archived:
    ``ClaimNotFoundError`` (nothing is restored) unless every id asked for is among
    them. A caller that checked before the transaction began may have been overtaken by
    another writer restoring or erasing one since."""
    held = set(found)
    gone = [i for i in claim_ids if i not in held]
    if gone:
        raise ClaimNotFoundError(gone[0], f"the archive no longer holds claim {', '.join(gone[:5])}"
                                 " (restored or erased meanwhile); nothing was restored",
                                 argument="claim_ids")


@runtime_checkable
class ArchiveStore(Protocol):
    """A store that moves claims out of reach and back (retention: ``prune()``).

    An archived claim is gone from every read of the ``Store`` protocol (no read sees
    it, as after an erase) but kept whole, to come back with ``restore_archived`` as it
    was: id, clocks, text, sources, earlier ends, search entry, vector. A claim still
    waiting for its vector is never archived.
    """

    def archive_claims(
        self, scope: Scope, cutoffs: Mapping[str, int], keep_at_most: int | None, now: int,
    ) -> dict[str, int]:
        """In one transaction, archive the claims of ``scope``'s subtree that stopped
        holding before ``cutoffs[state]`` (microseconds): for ``"ended"`` its
        ``valid_to``, for ``"retired"`` its ``invalidated_at``, for ``"live"`` (only when
        given) its last observation. Then, if ``keep_at_most`` is set and the subtree
        still holds more claims than that, archive more rows of those states, whatever
        their age: ended ones first, least salient first, then the earliest stopped.
        ``now`` is the store clock's instant (states are read at it; ``archived_at``).

        Returns:
            How many were archived in each state of ``cutoffs``, and ``evicted``: how
            many of them the capacity bound took.
        """
        ...

    def restore_archived(self, scope: Scope, claim_ids: Collection[str] | None) -> list[str]:
        """Put back, in one transaction, the archived claims of ``scope``'s subtree
        (only ``claim_ids`` of them, when given: ids the archive does not hold there are
        skipped); their ids, in row order."""
        ...

    def archived_claims(
        self, scope: Scope, slot: tuple[str, str] | None = None,
    ) -> list[tuple[Claim, int]]:
        """The archived claims of ``scope``'s subtree (of one ``(subject_key,
        predicate)`` slot, when given), oldest row first, each with the instant it was
        archived (microseconds); as they stand now (``Claim`` with every closure)."""
        ...


@dataclass(frozen=True, slots=True)
class Tombstone:
    """What ``erase_subject`` records of an erasure: its ``id``, when (microseconds), why,
    who asked, and the subject as a digest keyed by the store's secret."""

    id: str
    at: int
    reason: str
    requested_by: str
    subject_digest: str


@dataclass(frozen=True, slots=True)
class SubjectErasure:
    """What ``erase_subject`` did: the counts (``claims``, ``archived``,
    ``episodes_erased``, ``episodes_scrubbed``, ``claims_scrubbed``, ``aliases``), the
    erased claims' and turns' ids, and every name of the subject it found (for outside
    targets; the caller drops them)."""

    counts: dict[str, int]
    claim_ids: tuple[str, ...]
    episode_ids: tuple[str, ...]
    names: tuple[str, ...]


@runtime_checkable
class ForgetStore(Protocol):
    """A store that erases a subject across its lineage (``forget_subject()``)."""

    def erase_subject(
        self, scope: Scope, keys: Sequence[str], names: Sequence[str], tombstone: Tombstone,
    ) -> SubjectErasure | None:
        """``None``, writing nothing, when no claim of ``scope``'s subtree (live or
        archived) has one of ``keys`` as its subject or object key. Otherwise, in one
        transaction, in that subtree: erase every claim whose subject
        key or object key is one of ``keys`` (live, ended, retired or archived), then every
        claim citing an erased claim as a source, again until none is left; erase the
        turns no surviving claim cites among those they cited; erase the aliases of
        ``keys`` the subtree's owners learned; replace each name (``names`` and the
        subjects and objects found under ``keys``) in every other turn of the subtree by
        ``_domain.erasure.ERASED``, dropping those turns' vectors, and in the text,
        metadata and sources of every other claim of the subtree, archived ones too
        (``store/_scrubbed_claims``: a changed text is indexed again and its vector
        dropped); clear other rows' references to the erased ids; add a tombstone (``reason`` and ``requested_by``
        scrubbed of the names too) and a ``log_note("tombstone", ...)``. Nothing of the
        erased text may remain in any file the store keeps once it returns (rows, text
        indexes, vectors, the write-ahead log)."""
        ...

    def tombstones(self, subject_digest: str | None = None) -> list[dict[str, object]]:
        """Every tombstone (of one subject digest), oldest first: ``id``, ``at``,
        ``reason``, ``requested_by``, ``subject_digest``, ``scope`` (its dict),
        ``erased`` (the counts) and ``targets`` (name: confirmed)."""
        ...

    def confirm_targets(self, tombstone_id: str, targets: dict[str, bool]) -> None:
        """Merge outside targets' confirmations into a tombstone (and the log)."""
        ...


@runtime_checkable
class GovernanceTransferStore(Protocol):
    """What ``export_jsonl``/``import_jsonl`` need to carry the archive, the tombstones
    and the write logs (optional: a store without it exports and imports without them,
    and refuses a file that holds some)."""

    def dump_archived(self, scope: Scope) -> Iterator[tuple[ClaimRecord, int]]:
        """The archived claims of ``scope``'s subtree as ``TransferStore.dump_claims``
        gives claims, row order, each with the instant it was archived."""
        ...

    def archive_restored(self, archived: Sequence[tuple[str, int]]) -> int:
        """Inside the import's transaction, after ``restore``: move these claims (by id,
        just restored) to the archive, each archived at its instant."""
        ...

    def tombstones(self, subject_digest: str | None = None) -> list[dict[str, object]]:
        """As ``ForgetStore.tombstones``."""
        ...

    def restore_tombstones(self, tombstones: Sequence[Mapping[str, Any]]) -> int:
        """Inside the import's transaction: put tombstones back as exported (an id held
        already: ``StoreError``)."""
        ...

    def log_identity(self) -> str:
        """As ``WriteLogStore.log_identity``."""
        ...

    def log_records(self, after: int, limit: int) -> list[LogRecord]:
        """As ``WriteLogStore.log_records``."""
        ...

    def dump_reviews(self, scope: Scope) -> list[dict[str, Any]]:
        """The reviews of ``scope``'s subtree (``id``, ``scope`` as a dict, ``subject``,
        ``subject_key``, ``predicate``, ``object``, ``object_key``, ``polarity``,
        ``held``, ``opened_at``, ``status``, ``closed_at``, ``decided_by``, ``claim``),
        then its evidence (``review`` id or ``None``, ``scope``, the slot value's keys,
        ``ground``, ``observed_at``, ``actor``); instants in microseconds."""
        ...

    def reviews(self, scope: Scope, *, open_only: bool = True, visible: bool = False) -> list[Review]:
        """As ``ReviewStore.reviews``."""
        ...

    def restore_reviews(self, records: Sequence[Mapping[str, Any]]) -> int:
        """Inside the import's transaction: put back ``dump_reviews``' records as they
        were (a review id, or a ground of a slot value, held already: ``StoreError``)."""
        ...

    def foreign_logs(self) -> list[tuple[str, LogRecord]]:
        """Other stores' write-log records an import brought in: ``(store, record)``,
        by store and ``seq``."""
        ...

    def restore_logs(self, records: Sequence[tuple[str, LogRecord]]) -> int:
        """Inside the import's transaction: keep other stores' log records, whose chains
        the caller checked (a store and ``seq`` held already: ``StoreError``)."""
        ...


@runtime_checkable
class ReviewStore(Protocol):
    """A store that keeps the review queue (``observe()``, ``reviews()``, ``resolve()``).

    A slot value is ``(subject_key, predicate, object_key, polarity)`` at one exact scope.
    """

    def file_evidence(
        self, scope: Scope, slot: tuple[str, str, str, int], grounds: Sequence[str],
        at: int, actor: str,
    ) -> tuple[int, int, Review | None]:
        """In one transaction, file each ground for the value ``slot`` names at
        ``scope``: a ground filed for it before (ever), or twice in ``grounds``, is an
        echo and not filed; one filed while a review of the value is open joins it.
        Add a ``log_note("evidence", grounds=, echoes=)``. Returns the grounds now
        counted (the open review's, or those filed and not yet under a review), the
        echoes, and the open review."""
        ...

    def open_review(
        self, scope: Scope, subject: str, slot: tuple[str, str, str, int], obj: str,
        held: Sequence[str], at: int,
    ) -> Review:
        """Open a review of the value (``subject`` and ``obj`` as given, ``held`` the
        ids the slot holds) and put the evidence not yet under a review into it."""
        ...

    def reviews(self, scope: Scope, *, open_only: bool = True, visible: bool = False) -> list[Review]:
        """The reviews of ``scope``'s subtree (``visible``: of the scopes ``scope`` sees
        instead), oldest first; only open ones unless ``open_only`` is false."""
        ...

    def review(self, review: str, scope: Scope) -> Review | None:
        """Review ``review`` (its id) if it lies in ``scope``'s subtree, in any status."""
        ...

    def close_review(self, review: str, status: str, at: int, decided_by: str,
                     claim: str | None) -> bool:
        """Close an open review as ``"kept"`` or ``"accepted"`` (with the ``claim`` the
        accept wrote), and add a ``log_note("review", id=, decision=)``; ``False``,
        changing nothing, when it is not open (another writer closed it first)."""
        ...
