"""``PostgresStore``: memvara's ``Store`` on PostgreSQL with pgvector, for agents on
many machines sharing one memory.

Assembled like ``SQLiteStore``, one part per concept: ``_connect.Connections``
(connections, transactions, snapshots, errors), ``_writes`` (claims, turns, aliases,
predicate specs in), ``_reads`` (reads, retrieval candidates, provenance, the graph),
``_upkeep`` (consolidation, erasure, re-filing, re-embedding), ``_transfer``
(export and import), ``_log`` (the tamper-evident write log), ``_archive``
(retention), ``_forget`` (a subject's erasure, tombstones), ``_reviews`` (the review queue). The read rules are
compiled in ``_sql``; text ranking is FTS5's BM25 on FTS5's tokens (``_text``).
"""

from __future__ import annotations

from ._text import Tokenizer
from ._reviews import Reviews

__all__ = ["PostgresStore"]


class PostgresStore(Reviews):
    """A ``Store`` in one schema of a PostgreSQL database with pgvector.

    Implements the core ``Store`` protocol, ``TransferStore`` (export and import),
    ``RankingStore``, ``SimilarityStore``, ``WriteLogStore``, ``ArchiveStore``,
    ``ForgetStore`` and ``ReviewStore``; not the write fast paths
    (the writer uses the core methods, to the same results). Several stores share one database
    through ``schema``; several processes and machines share one store.

    Args:
        dsn: a libpq connection string or URL (``postgresql://user:pw@host:5432/db``).
        schema: the PostgreSQL schema holding this store's tables (created if missing).
        lock_timeout: seconds a write waits for a row another writer holds.
        read_only: open an existing schema and refuse every write (``ReadOnlyStoreError``);
            nothing is created.

    Raises:
        StoreError: the server cannot be reached (the message names host and port), or
            has no pgvector (the message says how to install it).
        SchemaVersionError: the schema was written by a newer memvara.
        NotAStoreError: ``read_only`` and the schema holds no store.
        InvalidArgumentError: ``dsn`` or ``schema`` is not one.
        ImportError: psycopg or pgvector is not installed (``memvara[postgres]``).
    """

    def __init__(
        self, dsn: str, *, schema: str = "memvara", lock_timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        super().__init__(dsn, schema=schema, lock_timeout=lock_timeout, read_only=read_only)
        self._tokenizer = Tokenizer()

    def close(self) -> None:
        """Close every connection. Idempotent; reads and writes after it raise
        ``ClosedError``."""
        super().close()
        self._tokenizer.close()
