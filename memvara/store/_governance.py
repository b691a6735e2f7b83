"""What a store must offer for governance: ``WriteLogStore``, an optional protocol
(exported by ``memvara.store.base``), for the tamper-evident write log.

The log is the store's to keep because it must be written in the same transaction as
the rows it describes, whatever write path made them: a store appends one record per
committed write transaction, chained as ``memvara._domain.ledger`` says, without the
write path asking. The facade names the verb and the actor (``logged``); a write path
adds what the rows cannot show (``log_note``). A store without this protocol keeps no
log, and ``verify()``/``anchor()`` on it raise ``StoreError``.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Protocol, runtime_checkable

from .._domain.ledger import Anchor

__all__ = ["LogRecord", "WriteLogStore"]

LogRecord = tuple[int, int, str, str, str, str]
"""``(seq, at, actor, action, body, hash)``: one record as stored."""


@runtime_checkable
class WriteLogStore(Protocol):
    """A store that appends a chained record for every write transaction it commits.

    Every committed transaction that inserted, ended, retired, un-retired, re-filed or
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

    def logged(self, action: str, actor: str, at: int) -> AbstractContextManager[None]:
        """Name the records this thread's transactions append inside: the API verb, who
        asked, when (UTC microseconds). Nested: the outermost name wins."""
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
        """The ``actor`` of the record that added claim ``claim_id`` (an id the caller
        found visible), or for a restored claim the actor its ``ClaimRecord`` carried;
        ``None`` when no record did."""
        ...
