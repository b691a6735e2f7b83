"""``SQLiteStore``: claims and episodes in SQLite (WAL, FTS5), vectors in a sidecar.

The class is assembled from one part per concept, each a module beside this one:

* ``_connections.Connections``: connections, transactions, read snapshots; the state
  every part shares. ``_translate`` turns ``sqlite3`` errors into memvara's.
* ``_core.StoreCore(Connections)``: opening and closing the files: migrations, the
  vector sidecars, the text-index and vector watermarks.
* one mixin per section of the ``Store`` protocol, each a ``StoreCore`` subclass:
  ``_writes`` (claims in), ``_episodes`` (turns in), ``_consolidation``, ``_reads``,
  ``_candidates`` (retrieval), ``_reembed``, ``_provenance`` (and the graph),
  ``_aliases``, ``_erasure``, ``_predicates`` (the learned schema), ``_integrity``,
  ``_transfer`` (export and import) and ``_backlog`` (turns waiting for extraction).

Mixins over one shared base, not separate objects the store delegates to: the parts
share one set of connections, one lock and one transaction depth, and call each other's
helpers (an erase flushes the text index, a single write reinforces), so as objects they
would each hold the same state by reference and the store would forward ~60 methods.
Subclassing ``StoreCore`` lets ``mypy --strict`` check every ``self`` access of a part.
"""

from __future__ import annotations

from ._aliases import Aliases
from ._archive import Archive
from ._backlog import Backlog
from ._candidates import Candidates
from ._consolidation import Consolidation
from ._episodes import Episodes
from ._erasure import Erasure
from ._forget import Forgetting
from ._integrity import Integrity
from ._log import WriteLog
from ._predicates import Predicates
from ._provenance import Provenance
from ._reembed import Reembedding
from ._reviews import Reviews
from ._transfer import Transfer
from ._writes import Writes

__all__ = ["SQLiteStore"]


class SQLiteStore(
    WriteLog, Archive, Forgetting, Reviews, Writes, Episodes, Consolidation, Candidates, Reembedding, Provenance, Aliases, Erasure,
    Predicates, Integrity, Transfer, Backlog,
):
    """The default ``Store``: one SQLite file plus vector sidecars beside it
    (``<path>.vecs`` for claims, ``<path>.episodes.vecs`` for episodes).

    It implements ``Store`` and every optional protocol beside it in ``store.base``
    (``SingleWriteStore``, ``BulkWriteStore``, ``RankingStore``, ``SimilarityStore``,
    ``DeferredTextIndexStore``, ``TransferStore``).

    Args:
        path: a database file (created if missing; ``~`` is expanded) or ``":memory:"``.
        busy_timeout: seconds a writer waits for another process's lock.
        tracer: called with ``(sql, params)`` before every statement (tests count queries).
        read_only: open an existing store without writing anything (no migration, no
            settling of an interrupted re-embedding): every read answers, every write
            raises ``ReadOnlyStoreError``. A file or folder this process cannot write is
            opened so without it, with a warning.
        write_log: append a chained record to the write log for every write
            transaction (default). ``False`` is for measuring what the log costs: this
            process's writes then go unlogged, and ``verify()`` cannot see them.

    Raises:
        NotAStoreError: the path is a folder, or the file is not SQLite, or is another
            application's database.
        SchemaVersionError: the file was written by a newer memvara.
        ReadOnlyStoreError: the store is read-only and would need a write to open (a
            migration), or a new store's folder cannot be written.
        StoreError: the path's folder does not exist; ``read_only`` names no file; SQLite
            is too old or lacks FTS5.
    """
