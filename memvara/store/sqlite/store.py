"""``SQLiteStore``: claims and episodes in SQLite (WAL, FTS5), vectors in a sidecar.

One writer connection behind a lock; reads on per-thread connections, so a read never
queues behind a write (an in-memory database has one connection, shared under the lock).
Every ``sqlite3`` exception is translated to a ``StoreError`` here and chained.

Works on SQLite 3.35 and newer (CPython here links 3.40.1); nothing newer is required.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from ..._errors import (
    ClosedError,
    DimensionMismatchError,
    NotAStoreError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StorageFullError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
)
from ..._domain.salience import reinforced_storage, retrievability
from ..._domain.entities import entity_key as fold_entity
from ..._domain.model import Claim, Episode, Scope, TimeQuery, set_new_claim_id
from ..._domain.time import from_micros, to_micros
from ...schema import Cardinality, PredicateSpec, Volatility
from . import _bm25
from . import _sql
from ._migrations import APPLICATION_ID, FOLD_FUNCTION, MIGRATIONS, SCHEMA_VERSION
from ._rows import (
    CLAIM_COLUMNS,
    claim_row,
    claim_rowid,
    decode_claim,
    ended,
    insert_statement,
    new_id,
    retired,
    scope_levels,
    scope_of,
    single_insert,
    with_id,
)
from ._nearest import nearest_admitted
from ._vectors import VectorFile, dot, read_header
from ..base import NO_SETTLEMENT, RankFields, Settlement, SweepWindow, Written

__all__ = ["SQLiteStore"]

MIN_SQLITE = (3, 35, 0)
_MEMORY = ":memory:"
_ERASE_COUNTS = ("claims", "episodes", "embeddings", "sources")
_TEXT_INDEXES = {"claims": ("claims_fts", "text"), "episodes": ("episodes_fts", "content")}
_SIDECARS = {"claims": ".vecs", "episodes": ".episodes.vecs"}
"""Each table's vectors, in a file beside the database; a row's vector is at its rowid."""
_RESERVATION = (
    "(SELECT coalesce(max(rowid), 0) FROM %s),"
    " (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_%s')"
)
"""Where new rows of a table go: its highest rowid and its text index's watermark."""
_END_SQL = (
    "UPDATE claims SET valid_to = ?, valid_to_known_at = ?, ended_by = ?,"
    " revised = revised OR (valid_to IS NOT NULL AND valid_to_known_at < ?)"
    " WHERE rowid = ? AND id = ?"
)
"""End a claim's valid time (an end it had already is kept by ``claims_keep_closure``)."""
_RETIRE_SQL = (
    "UPDATE claims SET invalidated_at = ?, invalidated_by = ? WHERE rowid = ? AND id = ?"
)
"""Withdraw belief in a claim, naming the claim that took its place (or none)."""
_LINK_SOURCE_SQL = "INSERT OR IGNORE INTO claim_sources (source, claim_rowid) VALUES (?, ?)"
"""Index one of a claim's sources, for ``claims_citing`` (a link held already is kept)."""
_WAITING_FOR_VECTORS = (
    "rowid > (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'vectors_claims')"
    " AND vec_slot IS NULL"
)
"""The claims waiting for a vector: only rows above the watermark can be, so finding
them reads a rowid range (the table's tail), with no index of its own to keep."""
_ADVANCE_VECTOR_WATERMARK = (
    "UPDATE store_meta SET value = coalesce("
    "(SELECT min(rowid) - 1 FROM claims"
    "  WHERE rowid > CAST(store_meta.value AS INTEGER) AND vec_slot IS NULL),"
    " (SELECT coalesce(max(rowid), 0) FROM claims))"
    " WHERE key = 'vectors_claims'"
)
"""Move the watermark to just below the first claim still waiting (or to the last row
when none waits). New rows always go above it: they start above the text index's
watermark, which erasure first moves past every row it removes."""
_RANK_COLUMNS = "text, predicate, valid_from, confidence, observations, salience"
"""What ``search()`` ranks a claim by, in ``RankFields``' order."""

TEXT_INDEX_BATCH = 256
"""Rows written one at a time wait for the full-text index until this many do."""

CHECKPOINT_PAGES = 4000
"""The writer copies the write-ahead log into the database once it holds this many pages
(16 MiB at 4 KiB; SQLite's default is 1,000). A checkpoint costs two ``fdatasync`` calls
(~3 ms each on this project's machine) plus one write per distinct page, and a revising
``remember()`` appends ~8 pages, mostly the same hot ones: at 100k claims, 1,000 pages
were 116 commits and 335 distinct pages, 4,000 pages are 464 commits and 1,003 distinct
pages. So per write, a quarter of the syncs and three quarters of the copying, for a
larger pause once every few hundred writes."""

_REKEY_CHUNK = 400
"""Aliases re-filed by one statement in ``rekey_subjects`` (2,003 bound values)."""
_ROWID_OF_ID = "CAST(substr(?2, 2, instr(?2, '-') - 2) AS INTEGER)"
"""The rowid in claim id ``?2`` (``c<rowid>-<digest>``); 0, no row, for anything else."""
_SWEEP_KEY_COLUMNS = ("s_user", "s_tenant", "s_agent", "s_session", "subject_key", "predicate")
"""A slot in ``claims_slot``'s column order, so consolidation walks that index in order."""
_SWEEP_KEY = ", ".join(_SWEEP_KEY_COLUMNS)
_SWEEP_COLUMNS = (
    "rowid, id, s_tenant, s_user, s_agent, s_session, subject_key, predicate, polarity,"
    " coalesce(object_key, ''), valid_from, coalesce(valid_to, 9223372036854775807),"
    " memory_type, observations, salience_base, salience,"
    " coalesce(observed_at, recorded_at), coalesce(vec_slot, 0)"
)


def _is_busy(exc: sqlite3.Error) -> bool:
    """Whether SQLite refused because another connection holds a lock (SQLITE_BUSY)."""
    message = str(exc).lower()
    return "locked" in message or "busy" in message


_sleep = time.sleep  # the retry's pause (a test steps it instead of waiting)


def _retry_busy(step: Callable[[], object], timeout: float) -> None:
    """Run ``step``; while SQLite answers "database is locked", try again, backing off
    from 1 ms to 50 ms, until ``timeout`` seconds have passed, then raise.

    SQLite's busy handler (the connection's ``timeout``) already waits out another
    connection's lock for ordinary statements and ``BEGIN IMMEDIATE``, so those need no
    retry. Switching a new file to WAL is the exception: when two processes open one
    new file at once, the loser gets SQLITE_BUSY at once, without waiting.
    """
    deadline = time.monotonic() + timeout
    pause = 0.001
    while True:
        try:
            step()
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise
        _sleep(pause)
        pause = min(pause * 2, 0.05)


def _translate(exc: sqlite3.Error) -> StoreError:
    """Map a backend exception to the memvara error a caller can act on."""
    message = str(exc).lower()
    if _is_busy(exc):
        return StoreLockedError(f"the store stayed locked by another writer: {exc}")
    if "readonly" in message or "read-only" in message:
        return ReadOnlyStoreError(f"the store cannot be written: {exc}")
    if "full" in message:
        return StorageFullError(f"no space left for the store: {exc}")
    if "not a database" in message:
        return NotAStoreError(f"not a memvara store: {exc}")
    if "malformed" in message or "corrupt" in message:
        return StoreCorruptError(f"the store's file is damaged: {exc}")
    return StoreError(f"{type(exc).__name__}: {exc}")


@functools.lru_cache(maxsize=64)
def _slot_sql(n_slots: int, bounded: bool, reserve: bool = False, scoped: bool = False) -> str:
    """``slot_claims``' query for ``n_slots`` slots (built once per shape).

    The wanted slots drive the loop (CROSS JOIN fixes the order), so each is one probe
    of the slot index whatever the planner thinks of the scope. With ``reserve`` the
    wanted slots are LEFT JOINed instead (an empty slot still yields one row, of NULLs)
    and every row carries the claims table's reservation (``_reserve``'s two numbers),
    so ``write_claim`` needs no statement of its own to place its row; its few rows
    come unordered (``_by_start`` sorts them: a temporary b-tree for ORDER BY
    cost each single write ~2% of its instructions).
    With ``scoped`` (``slot_claims_across``) each wanted row names its scope too, after
    its slot, so one statement serves many scopes.
    """
    if scoped:
        columns = "k, p, " + ", ".join(f"w{i}" for i in range(len(_sql.SCOPE_COLUMNS)))
        where = " AND ".join(
            f"claims.{column} = wanted.w{i}" for i, column in enumerate(_sql.SCOPE_COLUMNS))
    else:
        columns = "k, p"
        where, _ = _sql.scope_exact(Scope(), "claims.")
    if bounded:
        where += " AND (claims.valid_to IS NULL OR claims.valid_to > ?)"
    extra, join, condition = (
        (f", {_RESERVATION % ('claims', 'claims')}", "LEFT JOIN", "AND") if reserve
        else ("", "CROSS JOIN", "WHERE")
    )
    row = "(" + ", ".join(["?"] * (columns.count(",") + 1)) + ")"
    return (
        f"WITH wanted ({columns}) AS (VALUES {','.join([row] * n_slots)})"
        f" SELECT {CLAIM_COLUMNS}, claims.subject_key{extra} FROM wanted {join} claims"
        f" ON claims.subject_key = wanted.k AND claims.predicate = wanted.p"
        f" {condition} {where} AND claims.invalidated_at IS NULL"
        + ("" if reserve else " ORDER BY claims.valid_from, claims.rowid")
    )


def _by_start(row: Sequence[Any]) -> tuple[int, int]:
    """A slot row's place in ``slot_claims``' order: ``valid_from``, then rowid."""
    return (row[10], row[0])


def _sweep_fixed(scope: Scope) -> int:
    """How many leading ``_SWEEP_KEY_COLUMNS`` a sweep of ``scope``'s subtree holds
    equal: ``scope_subtree`` fixes the levels from the tenant down to the deepest one
    set, which is a prefix of the index only once the user is among them."""
    deepest = _sql.deepest_level(scope)
    return deepest + 1 if deepest >= 1 else 0


def _sweep_key(row: Sequence[Any]) -> tuple[str, ...]:
    """A ``_SWEEP_COLUMNS`` row's slot, as ``_SWEEP_KEY`` orders it."""
    return (row[3], row[2], row[4], row[5], row[6], row[7])


class _Translating:
    """The writer's connection inside this thread's own write transaction, with
    ``sqlite3`` errors raised as memvara's. A class, not a ``contextmanager``
    generator: a single write enters three of these, and the generator's machinery cost
    ~5% of its instructions (callgrind)."""

    __slots__ = ("_conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def __enter__(self) -> sqlite3.Connection:
        return self._conn

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if isinstance(exc, sqlite3.Error):
            raise _translate(exc) from exc


class _Transaction:
    """``SQLiteStore.transaction()``; a class for the same reason as ``_Translating``."""

    __slots__ = ("_store", "_opened")

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store
        self._opened = (0, 0)

    def __enter__(self) -> None:
        self._opened = self._store._begin()

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        self._store._end(*self._opened, failed=exc is not None)


class _DryRun(Exception):
    """Raised inside a transaction to roll back a change that was only being tried."""


def content_hash(text: str) -> str:
    """A stable digest of a turn's content (dedupe key; never decides an order alone)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


class SQLiteStore:
    """The default ``Store``: one SQLite file plus vector sidecars beside it
    (``<path>.vecs`` for claims, ``<path>.episodes.vecs`` for episodes).

    Args:
        path: a database file (created if missing) or ``":memory:"``.
        busy_timeout: seconds a writer waits for another process's lock.
        tracer: called with ``(sql, params)`` before every statement (tests count queries).

    Raises:
        NotAStoreError: the file is not SQLite, or is another application's database.
        SchemaVersionError: the file was written by a newer memvara.
        StoreError: SQLite is too old or lacks FTS5.
    """

    FILE_SUFFIXES: tuple[str, ...] = ("", "-wal", "-shm", *_SIDECARS.values())
    """What a store at ``path`` may add to the name of each of its files."""

    def __init__(
        self,
        path: str | os.PathLike[str] = _MEMORY,
        *,
        busy_timeout: float = 30.0,
        tracer: Callable[[str, Sequence[object]], None] | None = None,
    ) -> None:
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise StoreError(
                f"SQLite {sqlite3.sqlite_version} is too old; memvara needs 3.35 or newer"
            )
        self._path = os.fspath(path)
        self._memory = self._path == _MEMORY
        self._busy = busy_timeout
        self._tracer = tracer
        self._lock = threading.RLock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.Lock()
        self._depth = 0
        self._owner: int | None = None
        self._after_commit: list[Callable[[], None]] = []
        self._closed = False
        self._term_counts = _bm25.TermCounts()  # phrase counts for text search plans
        self._writer = self._connect(readonly=False)
        try:
            self._migrate()
            self._generation = int(self._meta("vectors_generation") or 0)
            self._settle_sidecars()
            self._vectors = self._open_sidecars()
            self._check_sidecars()
        except BaseException:
            self._writer.close()
            raise

    def _open_sidecars(self) -> dict[str, VectorFile]:
        dim = self._meta("vector_dim")
        return {
            table: VectorFile(
                None if self._memory else self._path + suffix,
                None if dim is None else int(dim),
                self._generation,
            )
            for table, suffix in _SIDECARS.items()
        }

    def _settle_sidecars(self) -> None:
        """Finish or undo a ``rebuild_vectors`` a crash interrupted.

        A rebuild writes ``<sidecar>.new`` files stamped with the next generation, commits
        that generation to ``store_meta``, then renames them over the live ones. So a
        live file stamped with an older generation than the store's means the rename did
        not happen: the ``.new`` file is the one to use (or, with none, the table had no
        vectors to carry over). A ``.new`` file the store never committed to is dropped.
        """
        if self._memory:
            return
        for suffix in _SIDECARS.values():
            live, fresh = self._path + suffix, self._path + suffix + ".new"
            live_header, fresh_header = read_header(live), read_header(fresh)
            if live_header is not None and live_header[1] < self._generation:
                if fresh_header is not None and fresh_header[1] == self._generation:
                    os.replace(fresh, live)
                else:
                    os.remove(live)
            elif fresh_header is not None or os.path.exists(fresh):
                os.remove(fresh)

    def _check_sidecars(self) -> None:
        """Refuse a store whose rows point at vectors its sidecar no longer holds: the
        sidecar is the only copy, and a later write would grow it over the gap."""
        for table, sidecar in self._vectors.items():
            try:
                (top,) = self._writer.execute(
                    f"SELECT max(rowid) FROM {table} WHERE vec_slot IS NOT NULL"
                ).fetchone()
            except sqlite3.Error as exc:
                raise _translate(exc) from exc
            if top is None:
                continue
            on_disk = sidecar.slots_on_disk()
            if on_disk <= top:
                name = self._path + _SIDECARS[table]
                state = "is missing" if on_disk < 0 else f"holds {on_disk} of {top + 1} slots"
                raise StoreCorruptError(
                    f"{name} {state}: the vectors of stored {table} are lost (the sidecar"
                    " holds the only copy); restore it from a backup"
                )

    # -- connections and transactions ----------------------------------------------
    def _connect(self, *, readonly: bool) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self._path, timeout=self._busy, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise _translate(exc) from exc
        try:
            if not self._memory and not readonly:
                _retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL"), self._busy)
            conn.execute("PRAGMA synchronous = NORMAL")
            # Page cache, in KiB (SQLite's default is 2 MiB): slot lookups and closures
            # touch random pages of the indexes, so a revising write at 100k claims
            # stops waiting on the OS for them. Filled only as pages are read.
            conn.execute(f"PRAGMA cache_size = {-16384 if readonly else -65536}")
            conn.execute("PRAGMA secure_delete = ON")
            if readonly:
                conn.execute("PRAGMA query_only = ON")
            else:
                conn.execute(f"PRAGMA wal_autocheckpoint = {CHECKPOINT_PAGES}")
        except sqlite3.DatabaseError as exc:
            conn.close()
            if _is_busy(exc):  # another process held the new file past the busy timeout
                raise _translate(exc) from exc
            folder = os.path.dirname(os.path.abspath(self._path))
            if "unable to open" in str(exc) and not os.access(folder, os.W_OK):
                raise ReadOnlyStoreError(
                    f"{folder}: the store's folder cannot be written, and SQLite keeps its"
                    " write-ahead log (-wal, -shm) beside the database"
                ) from exc
            raise NotAStoreError(f"{self._path}: not a memvara store ({exc})") from exc
        if self._tracer is not None:
            tracer = self._tracer
            conn.set_trace_callback(lambda sql: tracer(sql, ()))
        return conn

    def _conn(self) -> sqlite3.Connection:
        """The connection this thread should use right now."""
        if self._closed:
            raise ClosedError("the store is closed")
        if self._memory or self._owner == threading.get_ident():
            return self._writer
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect(readonly=True)
            self._local.conn = conn
            with self._readers_lock:  # not the write lock: a reader never waits on a writer
                self._readers.append(conn)
        return conn

    def _reading(self) -> AbstractContextManager[sqlite3.Connection]:
        """A connection for a read, holding the lock only where one must be shared."""
        if self._owner == threading.get_ident() and not self._closed:
            return _Translating(self._writer)  # inside this thread's write: no lock to take
        return self._shared_read()

    @contextmanager
    def _shared_read(self) -> Iterator[sqlite3.Connection]:
        try:
            if self._memory:
                with self._lock:
                    yield self._conn()
            else:
                yield self._conn()
        except sqlite3.Error as exc:
            raise _translate(exc) from exc

    def _write_side_query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """A read that belongs to a write (duplicate checks, the vector backlog): on the
        writer's connection, whose page cache the last write left warm. A reader's cache
        is dropped whenever another connection commits, which cost ~0.3 ms a query here."""
        with self._lock:
            if self._closed:
                raise ClosedError("the store is closed")
            try:
                return self._writer.execute(sql, params).fetchall()
            except sqlite3.Error as exc:
                raise _translate(exc) from exc

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        with self._reading() as conn:
            return conn.execute(sql, params).fetchall()

    @contextmanager
    def _search_reads(self) -> Iterator[tuple[_bm25.Query, bool]]:
        """The reads behind one candidate list, in one snapshot, and whether they are
        settled: ``False`` inside this thread's write transaction, where the text index
        may hold changes its records do not show yet."""
        with self._snapshot():
            yield self._query, self._owner != threading.get_ident()

    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction: ``BEGIN IMMEDIATE`` outermost, ``SAVEPOINT`` nested."""
        return _Transaction(self)

    def _begin(self) -> tuple[int, int]:
        """Take the lock and open a transaction or savepoint; its depth and the
        after-commit mark, for ``_end``. The lock is held until ``_end``."""
        self._lock.acquire()
        try:
            if self._closed:
                raise ClosedError("the store is closed")
            depth = self._depth
            try:
                self._writer.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            except sqlite3.Error as exc:
                raise _translate(exc) from exc
        except BaseException:
            self._lock.release()
            raise
        self._depth = depth + 1
        self._owner = threading.get_ident()  # "this thread is inside its own write"
        return depth, len(self._after_commit)

    def _end(self, depth: int, mark: int, *, failed: bool) -> None:
        """Commit what ``_begin`` opened, or roll it back if it ``failed``; release."""
        try:
            if failed:
                self._rollback(depth, mark)
            else:
                self._commit(depth)
        finally:
            self._depth = depth
            if depth == 0:
                self._owner = None
            self._lock.release()

    def _rollback(self, depth: int, mark: int) -> None:
        conn = self._writer
        try:
            if depth == 0:
                conn.execute("ROLLBACK")
            else:
                conn.execute(f"ROLLBACK TO sp{depth}")
                conn.execute(f"RELEASE sp{depth}")
        except sqlite3.Error:  # pragma: no cover - SQLite already rolled back on its own
            pass
        del self._after_commit[mark:]  # what a rolled-back step scheduled never happened

    def _commit(self, depth: int) -> None:
        try:
            self._writer.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
        except sqlite3.Error as exc:  # pragma: no cover - COMMIT fails only on I/O errors
            self._rollback(depth, 0 if depth == 0 else len(self._after_commit))
            raise _translate(exc) from exc
        if depth == 0:
            hooks, self._after_commit = self._after_commit, []
            for hook in hooks:
                hook()

    def _writing(self) -> AbstractContextManager[sqlite3.Connection]:
        """The writer inside a transaction, opening one only if this thread has none.

        A store method called inside a caller's transaction needs no savepoint of its
        own: if it fails, the exception unwinds through the caller's transaction. (Only
        this thread sets ``_owner`` to itself, under the lock it then holds, so reading
        it without the lock cannot mistake another thread's write for its own.)
        """
        if self._owner == threading.get_ident():  # set only while _depth > 0
            return _Translating(self._writer)
        return self._new_write()

    @contextmanager
    def _new_write(self) -> Iterator[sqlite3.Connection]:
        with self.transaction():
            try:
                yield self._writer
            except sqlite3.Error as exc:
                raise _translate(exc) from exc

    def close(self) -> None:
        """Close every connection and the sidecar. Idempotent."""
        with self._lock:
            if self._closed:
                return
            with self._readers_lock:
                for conn in self._readers:
                    conn.close()
                self._readers.clear()
            if not self._memory:
                try:
                    self.flush_text_index()
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except (StoreError, sqlite3.Error):  # pragma: no cover - needs a failing disk
                    pass  # best effort: unindexed rows wait for the next flush, WAL replays
            self._closed = True
            self._writer.close()
            for sidecar in self._vectors.values():
                sidecar.close()

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._closed

    @property
    def path(self) -> str:
        """The database path (``":memory:"`` for an in-memory store)."""
        return self._path

    # -- schema ---------------------------------------------------------------------
    def _migrate(self) -> None:
        conn = self._writer
        try:
            # One statement, so one snapshot: read apart, another process's migration
            # could commit between the reads and make a half-seen file look foreign.
            version, app_id, tables = conn.execute(
                "SELECT (SELECT user_version FROM pragma_user_version),"
                " (SELECT application_id FROM pragma_application_id),"
                " (SELECT count(*) FROM sqlite_master)"
            ).fetchone()
        except sqlite3.DatabaseError as exc:  # pragma: no cover - _connect's pragmas fail first
            raise NotAStoreError(f"{self._path}: not a memvara store ({exc})") from exc
        if (tables and app_id != APPLICATION_ID) or (version and app_id != APPLICATION_ID):
            raise NotAStoreError(f"{self._path}: a SQLite database, but not a memvara store")
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{self._path}: written by a newer memvara (schema {version});"
                f" this version reads schema {SCHEMA_VERSION} and older"
            )
        if version == SCHEMA_VERSION:
            return
        try:
            conn.create_function(FOLD_FUNCTION, 1, fold_entity, deterministic=True)
            conn.execute("BEGIN IMMEDIATE")
            # Two processes opening one new (or old) file at once both read the old
            # version above; the one that waited for the lock finds it migrated, and
            # checks the file afresh instead of running the steps a second time.
            if conn.execute("PRAGMA user_version").fetchone()[0] != version:
                conn.execute("ROLLBACK")
                return self._migrate()
            for step in MIGRATIONS[version:]:
                for statement in step:
                    conn.execute(statement)
            conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:  # pragma: no cover - needs a failing disk mid-migration
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise _translate(exc) from exc

    def _meta(self, key: str) -> str | None:
        row = self._writer.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    @property
    def dim(self) -> int | None:
        """The vector width this store holds, or ``None`` before the first vector."""
        return self._vectors["claims"].dim or self._vectors["episodes"].dim

    @property
    def files(self) -> list[str]:
        """Every file this store keeps on disk now (database, WAL, sidecars): what to
        copy for a backup after ``close()``, and what erasure must scrub."""
        if self._memory:
            return []
        names = [self._path + suffix for suffix in self.FILE_SUFFIXES]
        return [name for name in names if os.path.exists(name)]

    # -- vectors ----------------------------------------------------------------------
    def _write_vectors(
        self,
        conn: sqlite3.Connection,
        table: str,
        rowids: Sequence[int],
        vectors: npt.NDArray[np.float32],
    ) -> list[int]:
        """Write ``vectors[i]`` at slot ``rowids[i]`` (a row's vector sits at its rowid)."""
        (generation,) = conn.execute(
            "SELECT CAST(coalesce((SELECT value FROM store_meta"
            " WHERE key = 'vectors_generation'), 0) AS INTEGER)"
        ).fetchone()
        if generation != self._generation:  # another process re-embedded the store
            self._generation = int(generation)
            for sidecar in self._vectors.values():
                sidecar.close()
            self._vectors = self._open_sidecars()
        if self.dim is None:
            conn.execute(
                "INSERT OR REPLACE INTO store_meta (key, value) VALUES ('vector_dim', ?)",
                (str(int(vectors.shape[1])),),
            )
        width = int(vectors.shape[1])
        if self.dim is not None and width != self.dim:
            raise DimensionMismatchError(
                f"vectors are {width}-d but this store holds {self.dim}-d vectors"
            )
        slots = list(rowids)
        self._vectors[table].write(slots, vectors)
        return slots

    def _zero_vectors(self, table: str, slots: list[int]) -> None:
        """Zero the vectors in ``slots`` once the transaction commits.

        The rows were under the text index's watermark (erasure flushes it first), and
        new rowids start above it, so no later row can have been given these slots.
        """
        if slots:
            self._after_commit.append(lambda: self._vectors[table].zero(slots))

    def vectors(self, slots: Sequence[int], table: str = "claims") -> npt.NDArray[np.float32]:
        """The stored vectors of ``table`` (``claims`` or ``episodes``) at ``slots``."""
        return self._vectors[table].read(slots)

    # -- writes -----------------------------------------------------------------------
    def _reserve(
        self,
        conn: sqlite3.Connection,
        table: str,
        n: int,
        vectors: npt.NDArray[np.float32] | None,
    ) -> tuple[int, int, list[int | None]]:
        """Where ``n`` new rows of ``table`` go: the rowid before them, the text index's
        watermark, and each row's vector slot (its rowid; the vectors are written now).

        New rowids start above the watermark even when the rows under it were erased,
        so a row the index never saw is never taken for one it holds.
        """
        last, indexed = conn.execute(f"SELECT {_RESERVATION % (table, table)}").fetchone()
        last = max(int(last), int(indexed))
        if vectors is None:
            return last, int(indexed), [None] * n
        rowids = range(last + 1, last + 1 + n)
        return last, int(indexed), list(self._write_vectors(conn, table, rowids, vectors))

    def _index_text(
        self, conn: sqlite3.Connection, table: str, indexed: int, top: int, *, force: bool
    ) -> int:
        """Index the rows of ``table`` above the watermark ``indexed`` up to ``top``, if
        ``force`` or at least ``TEXT_INDEX_BATCH`` of them wait; how many were indexed.
        """
        if top <= indexed or (not force and top - indexed < TEXT_INDEX_BATCH):
            return 0
        fts, column = _TEXT_INDEXES[table]
        done = conn.execute(
            f"INSERT INTO {fts} (rowid, {column}) SELECT rowid, {column} FROM {table}"
            " WHERE rowid > ? AND rowid <= ?", (indexed, top)
        ).rowcount
        conn.execute("UPDATE store_meta SET value = ? WHERE key = ?", (str(top), f"fts_{table}"))
        return int(done)

    def flush_text_index(self) -> int:
        """Index every row still waiting for the full-text index; how many there were.

        Single writes leave their text unindexed until ``TEXT_INDEX_BATCH`` rows wait
        (one FTS5 flush then serves them all); a text search calls this first, and
        ``close()`` and erasure do too.
        """
        with self._writing() as conn:
            return self._index_all(conn)

    def _index_all(self, conn: sqlite3.Connection) -> int:
        done = 0
        for table in _TEXT_INDEXES:
            top, indexed = conn.execute(
                f"SELECT (SELECT coalesce(max(rowid), 0) FROM {table}),"
                " (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = ?)",
                (f"fts_{table}",),
            ).fetchone()
            done += self._index_text(conn, table, int(indexed), int(top), force=True)
        return done

    def insert_claims(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[Claim]:
        """Insert new claims; see ``Store.insert_claims``."""
        ids = self._insert_claims(claims, vectors, subject_keys)
        return [with_id(claim, cid) for claim, cid in zip(claims, ids)]

    def insert_claim_ids(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None = None,
    ) -> list[str]:
        """``insert_claims``, returning only the new ids: the writer sets each on the
        claim it built for the write (``_model.set_new_claim_id``) rather than have a
        copy made (~2 us a claim). Optional for a store."""
        return self._insert_claims(claims, vectors, subject_keys)

    def _insert_claims(
        self,
        claims: Sequence[Claim],
        vectors: npt.NDArray[np.float32] | None,
        subject_keys: Sequence[str] | None,
    ) -> list[str]:
        if not claims:
            return []
        with self._writing() as conn:
            last, indexed, slots = self._reserve(conn, "claims", len(claims), vectors)
            rows: list[tuple[object, ...]] = []
            ids: list[str] = []
            links: list[tuple[str, int]] = []
            for offset, (claim, slot) in enumerate(zip(claims, slots), start=1):
                rowid = last + offset
                key = None if subject_keys is None else subject_keys[offset - 1]
                cid, row = claim_row(claim, rowid, slot, key)
                rows.append(row)
                if claim.sources:
                    links.extend((source, rowid) for source in dict.fromkeys(claim.sources))
                ids.append(cid)
            conn.executemany(*insert_statement(rows))
            if vectors is not None:  # written with their vectors: nothing new waits
                conn.execute(_ADVANCE_VECTOR_WATERMARK)
            self._index_text(conn, "claims", indexed, last + len(rows), force=False)
            if links:
                conn.executemany(_LINK_SOURCE_SQL, links)
            return ids

    def has_backlog(self) -> bool:
        """Whether rows wait for the text index or a vector; see ``Store.has_backlog``."""
        return bool(self._query(
            f"SELECT EXISTS (SELECT 1 FROM claims WHERE {_WAITING_FOR_VECTORS})"
            " OR (SELECT coalesce(max(rowid), 0) FROM claims)"
            " > (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_claims')"
            " OR (SELECT coalesce(max(rowid), 0) FROM episodes)"
            " > (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_episodes')"
        )[0][0])

    def claims_missing_vectors(self) -> list[tuple[str, str]]:
        """Claims stored without a vector; see ``Store.claims_missing_vectors``."""
        return [(cid, text) for cid, text in self._write_side_query(
            f"SELECT id, text FROM claims WHERE {_WAITING_FOR_VECTORS} ORDER BY rowid"
        )]

    def set_claim_vectors(
        self, claim_ids: Sequence[str], vectors: npt.NDArray[np.float32]
    ) -> int:
        """Store claims' vectors; see ``Store.set_claim_vectors``."""
        if not claim_ids:
            return 0
        with self._writing() as conn:
            keep: list[int] = []
            rowids: list[int] = []
            for start in range(0, len(claim_ids), 400):
                chunk = list(claim_ids[start : start + 400])
                wanted = {claim_rowid(cid): (start + i, cid) for i, cid in enumerate(chunk)}
                # One statement marks the rows that still wait and names them: the
                # vectors are written below, in the same transaction, before it commits.
                for (rowid,) in conn.execute(
                    "UPDATE claims SET vec_slot = rowid"
                    f" WHERE rowid IN ({','.join('?' * len(wanted))})"
                    f" AND id IN ({','.join('?' * len(chunk))}) AND vec_slot IS NULL"
                    " RETURNING rowid",
                    [*wanted, *chunk],
                ).fetchall():
                    keep.append(wanted[rowid][0])
                    rowids.append(rowid)
            if rowids:
                self._write_vectors(conn, "claims", rowids, vectors[keep])
                conn.execute(_ADVANCE_VECTOR_WATERMARK)
            return len(rowids)

    def insert_episodes(
        self, episodes: Sequence[Episode], vectors: npt.NDArray[np.float32] | None
    ) -> list[Episode]:
        """Insert raw turns; see ``Store.insert_episodes``."""
        if not episodes:
            return []
        with self._writing() as conn:
            last, indexed, slots = self._reserve(conn, "episodes", len(episodes), vectors)
            rows: list[tuple[object, ...]] = []
            stored: list[Episode] = []
            for offset, (episode, slot) in enumerate(zip(episodes, slots), start=1):
                rowid = last + offset
                eid = episode.id or new_id("e", rowid, episode.scope, episode.role,
                                            episode.content, episode.ts, episode.recorded_at)
                recorded = to_micros(episode.recorded_at, "recorded_at")
                ts = recorded if episode.ts is None else to_micros(episode.ts, "ts")
                rows.append((rowid, eid, *scope_levels(episode.scope),
                             episode.role, episode.content, ts, recorded,
                             content_hash(episode.content), slot))
                stored.append(replace(episode, id=eid, ts=from_micros(ts)))
            conn.executemany(
                "INSERT INTO episodes (rowid, id, s_tenant, s_user, s_agent, s_session, role,"
                " content, ts, recorded_at, content_hash, vec_slot)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            self._index_text(conn, "episodes", indexed, last + len(rows), force=False)
            return stored

    def get_episode(self, episode_id: str, scope: Scope) -> Episode | None:
        """The episode if visible from ``scope``; see ``Store.get_episode``."""
        where, params = _sql.scope_visible(scope)
        rows = self._query(
            "SELECT id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"
            f" FROM episodes WHERE id = ? AND {where}", [episode_id, *params]
        )
        if not rows:
            return None
        eid, tenant, user, agent, session, role, content, ts, recorded = rows[0]
        return Episode(content=content, role=role, ts=from_micros(ts),
                       recorded_at=from_micros(recorded),
                       scope=scope_of(tenant, user, agent, session), id=eid)

    def known_contents(self, scope: Scope, contents: Collection[str]) -> set[str]:
        """Contents already held at ``scope``; see ``Store.known_contents``."""
        wanted = {content_hash(c): c for c in contents}
        if not wanted:
            return set()
        where, params = _sql.scope_exact(scope)
        found: set[str] = set()
        hashes = list(wanted)
        for start in range(0, len(hashes), 400):
            chunk = hashes[start : start + 400]
            for digest, content in self._write_side_query(
                f"SELECT content_hash, content FROM episodes WHERE content_hash IN"
                f" ({','.join('?' * len(chunk))}) AND {where}", [*chunk, *params]
            ):
                if wanted.get(digest) == content:
                    found.add(content)
        return found

    def recent_episode_vectors(self, scope: Scope, limit: int) -> npt.NDArray[np.float32]:
        """Recent episodes' vectors; see ``Store.recent_episode_vectors``."""
        where, params = _sql.scope_exact(scope)
        # rowid, not vec_slot: the scope index covers it, so no row is read. A turn stored
        # without a vector reads as zeros, which resembles nothing.
        slots = [r[0] for r in self._write_side_query(
            f"SELECT rowid FROM episodes WHERE {where} ORDER BY rowid DESC LIMIT ?",
            [*params, limit],
        )]
        return self._vectors["episodes"].read(slots)

    def slot_claims(
        self,
        scope: Scope,
        slots: Collection[tuple[str, str]],
        *,
        ending_after: int | None = None,
    ) -> dict[tuple[str, str], list[Claim]]:
        """Still-believed claims per slot at exactly ``scope``; see ``Store.slot_claims``."""
        found: dict[tuple[str, str], list[Claim]] = {slot: [] for slot in slots}
        if not found:
            return found
        keys = list(found)
        where: list[object] = [*scope_levels(scope)]
        if ending_after is not None:
            where.append(ending_after)
        with self._reading() as conn:
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                for row in conn.execute(
                    _slot_sql(len(chunk), ending_after is not None),
                    [*(part for pair in chunk for part in pair), *where],
                ).fetchall():
                    found[(row[-1], row[7])].append(decode_claim(row[:-1], None))
        return found

    def slot_claims_across(
        self,
        wanted: Mapping[Scope, Collection[tuple[str, str]]],
        *,
        ending_after: int | None = None,
    ) -> dict[Scope, dict[tuple[str, str], list[Claim]]]:
        """``slot_claims`` for the ``(subject_key, predicate)`` slots of many scopes at
        once, per scope; a slot that holds no such claim is left out. A bulk write whose
        claims land in a thousand users' scopes reads their slots in a few statements,
        not one per scope. Optional for a store; without it the writer asks
        ``slot_claims`` scope by scope."""
        found: dict[Scope, dict[tuple[str, str], list[Claim]]] = {scope: {} for scope in wanted}
        keys = [(scope, slot) for scope, slots in wanted.items() for slot in slots]
        tail: list[object] = [] if ending_after is None else [ending_after]
        with self._reading() as conn:
            for start in range(0, len(keys), 400):
                chunk = keys[start : start + 400]
                params: list[object] = []
                for scope, (key, predicate) in chunk:
                    params.extend((key, predicate))
                    params.extend(scope_levels(scope))
                for row in conn.execute(
                    _slot_sql(len(chunk), ending_after is not None, scoped=True),
                    [*params, *tail],
                ).fetchall():
                    claim = decode_claim(row[:-1], None)
                    found[claim.scope].setdefault((row[-1], row[7]), []).append(claim)
        return found

    def write_claim(
        self,
        claim: Claim,
        subject_key: str,
        vector: npt.NDArray[np.float32] | None,
        settle: Callable[[list[Claim]], Settlement],
    ) -> Written:
        """One claim's whole write; see ``Store`` (an optional fast path).

        The statements are the general path's (``slot_claims``, ``insert_claims``,
        ``end_claims``, ``retire_claims``), on one connection taken once, and the slot
        read also places the new row (see ``_slot_sql``): 3-4% fewer instructions a
        single ``remember()`` (callgrind, an 8,000-claim store).
        """
        with self._writing() as conn:
            start = to_micros(claim.valid_from, "valid_from")
            rows = conn.execute(
                _slot_sql(1, True, True),
                [subject_key, claim.predicate, *scope_levels(claim.scope), start],
            ).fetchall()
            last, indexed = rows[0][-2], rows[0][-1]
            if rows[0][0] is None:  # a row of NULLs: the slot is empty
                found = []
            else:
                if len(rows) > 1:
                    rows.sort(key=_by_start)
                found = [decode_claim(row, None) for row in rows]
            new, old, ends, retires = settle(found)
            if new is None:
                if old is None:
                    raise StoreError(NO_SETTLEMENT)
                return None, self.reinforce_claim(
                    old.id, claim.sources, to_micros(claim.recorded_at, "recorded_at")), [], []
            rowid = max(int(last), int(indexed)) + 1
            slot = None
            if vector is not None:
                (slot,) = self._write_vectors(conn, "claims", [rowid], vector)
            cid, row = claim_row(new, rowid, slot, subject_key)
            conn.execute(*single_insert(row))
            if vector is not None:
                conn.execute(_ADVANCE_VECTOR_WATERMARK)
            self._index_text(conn, "claims", int(indexed), rowid, force=False)
            if new.sources:
                conn.executemany(
                    _LINK_SOURCE_SQL, [(source, rowid) for source in dict.fromkeys(new.sources)])
            stored = set_new_claim_id(new, cid)
            return (
                stored,
                None,
                [self._end_row(conn, c, valid_to, at, cid) for c, valid_to, at in ends],
                [self._retire_row(conn, c, at, cid) for c, at in retires],
            )

    def end_claims(self, ends: Sequence[tuple[Claim, int, int, str | None]]) -> list[Claim]:
        """Set each ``(claim, valid_to, at, by)``; see ``Store.end_claims``.

        An end learned earlier is kept in ``claim_closures`` by the ``claims_keep_closure``
        trigger, so a reader between the two closures still sees the end believed then.
        The result is built from the claim passed in: reading the row back with
        ``RETURNING`` cost ~28 us a claim here, twice the update itself.
        """
        if not ends:
            return []
        with self._writing() as conn:
            return [self._end_row(conn, claim, valid_to, at, by)
                    for claim, valid_to, at, by in ends]

    def retire_claims(self, retires: Sequence[tuple[Claim, int, str | None]]) -> list[Claim]:
        """Withdraw belief for each ``(claim, at, by)``; see ``Store.retire_claims``."""
        if not retires:
            return []
        with self._writing() as conn:
            return [self._retire_row(conn, claim, at, by) for claim, at, by in retires]

    def _end_row(
        self, conn: sqlite3.Connection, claim: Claim, valid_to: int, at: int, by: str | None
    ) -> Claim:
        """End one claim's valid time at ``valid_to``, learned at ``at``, closed by ``by``."""
        self._check_updated(conn.execute(_END_SQL, (
            valid_to, at, by, at, claim_rowid(claim.id), claim.id)).rowcount, claim.id)
        return ended(claim, valid_to, at)

    def _retire_row(
        self, conn: sqlite3.Connection, claim: Claim, at: int, by: str | None
    ) -> Claim:
        """Withdraw belief in one claim at ``at``, in favour of ``by``."""
        self._check_updated(conn.execute(_RETIRE_SQL, (
            at, by, claim_rowid(claim.id), claim.id)).rowcount, claim.id)
        return retired(claim, at, by)

    @staticmethod
    def _check_updated(count: int, claim_id: str) -> None:
        if count != 1:
            raise StoreError(f"claim {claim_id!r} is not in the store")

    @staticmethod
    def _updated(row: Sequence[object] | None, claim_id: str) -> Claim:
        if row is None:  # pragma: no cover - the id was read in this same transaction
            raise StoreError(f"claim {claim_id!r} vanished during the write")
        return decode_claim(row, None)

    def reinforce_claim(self, claim_id: str, sources: Sequence[str], at: int) -> Claim:
        """Count another observation and merge ``sources``; see ``Store.reinforce_claim``."""
        with self._writing() as conn:
            row = conn.execute(
                "SELECT rowid, sources, salience_base, coalesce(observed_at, recorded_at)"
                " FROM claims WHERE rowid = ? AND id = ?", (claim_rowid(claim_id), claim_id)
            ).fetchone()
            if row is None:  # pragma: no cover - the id was read in this same transaction
                raise StoreError(f"claim {claim_id!r} vanished during the write")
            rowid, old, storage, observed = row
            merged = list(dict.fromkeys([*(json.loads(old) if old else []), *sources]))
            conn.executemany(_LINK_SOURCE_SQL, [(s, rowid) for s in sources])
            strength = reinforced_storage(storage, retrievability(storage, max(0, at - observed)))
            return self._updated(conn.execute(
                "UPDATE claims SET observations = observations + 1, sources = ?,"
                " salience_base = ?, salience = 1.0, observed_at = ?"
                f" WHERE rowid = ? RETURNING {CLAIM_COLUMNS}",
                (json.dumps(merged, ensure_ascii=False) if merged else None, strength,
                 max(observed, at), rowid),
            ).fetchone(), claim_id)

    # -- consolidation ------------------------------------------------------------------
    def sweep_claims(
        self, scope: Scope, after: tuple[str, ...] | None, limit: int
    ) -> SweepWindow:
        """The next window of whole slots; see ``Store.sweep_claims``.

        Walks ``claims_slot`` in order from the slot ``after``, so a sweep reads the
        index once: the cursor compares only the key columns the scope leaves free (a
        row-value comparison that starts at a column the scope fixes is not a range to
        SQLite, and each window would walk the scope from its start: 2.47 s against
        0.57 s for 80,000 claims of one user, in review). The planner's own choice, the
        scope index before schema 5, sorted the scope's rows again for every window. A
        scope that sets its tenant but no user has no prefix of the index to range over.
        """
        where, params = _sql.scope_subtree(scope)
        sql = (f"SELECT {_SWEEP_COLUMNS} FROM claims INDEXED BY claims_slot"
               f" WHERE invalidated_at IS NULL AND {where}")
        limit = max(1, limit)
        free = _SWEEP_KEY_COLUMNS[_sweep_fixed(scope):]
        cursor = (f" AND ({', '.join(free)}) > ({', '.join('?' * len(free))})")
        rows = self._query(  # one row more than the window, to see if its last slot goes on
            sql + ("" if after is None else cursor) + f" ORDER BY {_SWEEP_KEY} LIMIT ?",
            [*params, *(after or ())[-len(free):], limit + 1],
        )
        if len(rows) <= limit:
            return self._sweep_window(rows, None)
        cut = limit
        while cut and rows[cut - 1][2:8] == rows[limit][2:8]:
            cut -= 1  # the last slot goes on: leave it to the next window
        if cut:
            rows = rows[:cut]
        else:  # one slot larger than a window: all of it, alone
            key = _sweep_key(rows[0])
            rows = self._query(sql + f" AND ({_SWEEP_KEY}) = (?, ?, ?, ?, ?, ?)", [*params, *key])
        return self._sweep_window(rows, _sweep_key(rows[-1]))

    def _sweep_window(
        self, rows: Sequence[Any], following: tuple[str, ...] | None
    ) -> SweepWindow:
        n = len(rows)
        cols: list[tuple[Any, ...]] = list(zip(*rows)) if rows else [()] * 18
        slots = np.asarray(cols[17], dtype=np.int64)
        return SweepWindow(
            ids=cols[1],
            rowids=np.asarray(cols[0], dtype=np.int64),
            slots=tuple(zip(cols[2], cols[3], cols[4], cols[5], cols[6], cols[7])),
            polarity=np.asarray(cols[8], dtype=np.int64),
            object_keys=cols[9],
            valid_from=np.asarray(cols[10], dtype=np.int64),
            valid_to=np.asarray(cols[11], dtype=np.int64),
            memory_types=cols[12],
            observations=np.asarray(cols[13], dtype=np.int64),
            storage=np.asarray(cols[14], dtype=np.float64),
            retrieval=np.asarray(cols[15], dtype=np.float64),
            observed_at=np.asarray(cols[16], dtype=np.int64),
            vectors=self._vectors["claims"].read(slots.tolist()) if n else
            np.zeros((0, 0), dtype=np.float32),
            has_vector=slots > 0,
            next=following,
        )

    def apply_sweep(
        self,
        retrieval: Sequence[tuple[str, float]],
        memory_types: Sequence[tuple[str, str]],
        folds: Sequence[tuple[str, Sequence[str], int, float, int]],
        at: int,
    ) -> None:
        """Write one consolidation window; see ``Store.apply_sweep``."""
        with self._writing() as conn:
            # The rowid is parsed from the id by SQLite, not Python: a sweep rewrites
            # every row, and claim_rowid() was its largest Python cost (and the longest
            # stretch a reader thread waited for the GIL).
            conn.executemany(
                f"UPDATE claims SET salience = ?1 WHERE rowid = {_ROWID_OF_ID} AND id = ?2",
                [(value, cid) for cid, value in retrieval],
            )
            conn.executemany(
                f"UPDATE claims SET memory_type = ?1 WHERE rowid = {_ROWID_OF_ID} AND id = ?2",
                [(kind, cid) for cid, kind in memory_types],
            )
            for survivor, losers, observations, storage, observed_at in folds:
                self._fold(conn, survivor, losers, observations, storage, observed_at, at)

    def _fold(
        self, conn: sqlite3.Connection, survivor: str, losers: Sequence[str],
        observations: int, storage: float, observed_at: int, at: int,
    ) -> None:
        members = [survivor, *losers]
        found = {cid: (rowid, cited) for rowid, cid, cited in conn.execute(
            f"SELECT rowid, id, sources FROM claims WHERE rowid IN ({','.join('?' * len(members))})",
            [claim_rowid(cid) for cid in members],
        )}
        if any(cid not in found for cid in members):  # pragma: no cover - read in this transaction
            raise StoreError("a claim being merged vanished during consolidation")
        sources = list(dict.fromkeys(
            source for cid in members for source in json.loads(found[cid][1] or "[]")
        ))
        rowid = found[survivor][0]
        conn.execute(
            "UPDATE claims SET observations = ?, salience_base = ?, observed_at = ?, sources = ?"
            " WHERE rowid = ?",
            (observations, storage, observed_at,
             json.dumps(sources, ensure_ascii=False) if sources else None, rowid),
        )
        conn.executemany(_LINK_SOURCE_SQL, [(source, rowid) for source in sources])
        conn.executemany(
            "UPDATE claims SET invalidated_at = max(?, recorded_at), invalidated_by = ?"
            " WHERE rowid = ? AND id = ?",
            [(at, survivor, found[cid][0], cid) for cid in losers],
        )

    # -- reads ------------------------------------------------------------------------
    def get_claim(self, claim_id: str, scope: Scope) -> Claim | None:
        """The claim if visible from ``scope``; see ``Store.get_claim``."""
        where, params = _sql.scope_visible(scope)
        rows = self._query(
            f"SELECT {CLAIM_COLUMNS} FROM claims WHERE rowid = ? AND id = ? AND {where}",
            [claim_rowid(claim_id), claim_id, *params],
        )
        return decode_claim(rows[0], None) if rows else None

    def _filtered(
        self, scope: Scope, tq: TimeQuery, states: Collection[str]
    ) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope)
        state_sql, state_params = _sql.states_filter(states, tq)
        return f"{where} AND {state_sql}", [*params, *state_params]

    def _select_at(self, tq: TimeQuery) -> tuple[str, list[object]]:
        """The columns ``decode_claim`` needs to materialize a row as believed at ``tq``."""
        end, end_params = _sql.effective_end(tq.known_at)
        known, known_params = _sql.effective_end_known(tq.known_at)
        return f"{CLAIM_COLUMNS}, {end}, {known}", [*end_params, *known_params]

    # -- retrieval candidates -------------------------------------------------------------
    def _claim_filter(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None,
    ) -> tuple[str, list[object]]:
        scope_sql, params = _sql.scope_visible(scope, "claims.")
        state_sql, state_params = _sql.states_filter(states, tq, "claims.")
        where = f"{scope_sql} AND {state_sql}"
        params = [*params, *state_params]
        if memory_types is not None:
            types = sorted(memory_types)
            where += f" AND claims.memory_type IN ({','.join('?' * len(types))})"
            params += types
        return where, params

    def search_claims_text(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, match: str, limit: int,
    ) -> list[tuple[str, float]]:
        """The best BM25 matches among the claims the filter admits (without scoring
        every row a common word matches: ``_bm25``); see ``Store.search_claims_text``."""
        where, params = self._claim_filter(scope, tq, states, memory_types)
        return self._text_matches("claims", match, where, params, limit,
                                  getattr(self._local, "ranked", None))

    def _text_matches(
        self, table: str, match: str, where: str, params: Sequence[object], limit: int,
        ranked: dict[str, tuple[Any, ...]] | None = None,
    ) -> list[tuple[str, float]]:
        fts, column = _TEXT_INDEXES[table]
        with self._search_reads() as (query, settled):
            found = _bm25.top_matches(
                query, self._term_counts, table=table, fts=fts, column=column, match=match,
                where=where, params=params, limit=limit, plan=settled,
                columns=_RANK_COLUMNS.split(", ") if ranked is not None else (), seen=ranked,
            )
        return [(key, -score or 0.0) for _, key, score in found]  # never -0.0

    def search_claims_vector(
        self, scope: Scope, tq: TimeQuery, states: Collection[str],
        memory_types: Collection[str] | None, vector: npt.NDArray[np.float32], limit: int,
    ) -> list[tuple[str, float]]:
        """The nearest claims by cosine among those the filter admits, ranked over the
        sidecar first and filtered in rank order (``_nearest``); see
        ``Store.search_claims_vector``."""
        where, params = self._claim_filter(scope, tq, states, memory_types)
        return self._nearest("claims", scope, where, params, vector, limit,
                             getattr(self._local, "ranked", None))

    def _nearest(
        self, table: str, scope: Scope, where: str, params: Sequence[object],
        vector: npt.NDArray[np.float32], limit: int,
        ranked: dict[str, tuple[Any, ...]] | None = None,
    ) -> list[tuple[str, float]]:
        scope_where, scope_params = _sql.scope_visible(scope, f"{table}.")
        with self._search_reads() as (query, _):
            return nearest_admitted(
                query, self._vectors[table], table=table, where=where, params=params,
                scope_where=scope_where, scope_params=scope_params, vector=vector, limit=limit,
                columns="" if ranked is None else f", {_RANK_COLUMNS}", seen=ranked,
            )

    def claims_at(self, claim_ids: Sequence[str], tq: TimeQuery) -> dict[str, Claim]:
        """The claims with these ids, materialized as believed at ``tq``."""
        columns, params = self._select_at(tq)
        found: dict[str, Claim] = {}
        for start in range(0, len(claim_ids), 400):
            chunk = list(claim_ids[start : start + 400])
            for row in self._query(
                f"SELECT {columns} FROM claims WHERE rowid IN ({','.join('?' * len(chunk))})",
                [*params, *(claim_rowid(c) for c in chunk)],
            ):
                if row[1] in chunk:
                    found[row[1]] = decode_claim(row, tq.known_at)
        return found

    def rank_fields(self, claim_ids: Sequence[str]) -> dict[str, RankFields]:
        """What ``search()`` ranks each of these claims by, without decoding whole claims
        (see ``RankFields``); ids with no row are left out."""
        found: dict[str, RankFields] = {}
        ranked = getattr(self._local, "ranked", None) or {}
        missing: list[str] = []
        for cid in claim_ids:
            row = ranked.get(cid)
            if row is None:
                missing.append(cid)
            else:
                found[cid] = RankFields._make(row)
        for start in range(0, len(missing), 400):
            chunk = set(missing[start : start + 400])
            for row in self._query(
                    f"SELECT id, {_RANK_COLUMNS} FROM claims"
                    f" WHERE rowid IN ({','.join('?' * len(chunk))})",
                    [claim_rowid(c) for c in chunk]):
                if row[0] in chunk:
                    found[row[0]] = RankFields._make(row[1:])  # columns in field order
        return found

    def _episode_filter(self, scope: Scope, tq: TimeQuery) -> tuple[str, list[object]]:
        where, params = _sql.scope_visible(scope, "episodes.")
        where += " AND episodes.recorded_at <= ?"
        params.append(tq.known_at)
        if tq.valid_at is not None:
            where += " AND episodes.ts <= ?"
            params.append(tq.valid_at)
        return where, params

    def search_episodes_text(
        self, scope: Scope, tq: TimeQuery, match: str, limit: int
    ) -> list[tuple[str, float]]:
        """The best BM25 matches among the turns visible at ``tq``."""
        where, params = self._episode_filter(scope, tq)
        return self._text_matches("episodes", match, where, params, limit)

    def search_episodes_vector(
        self, scope: Scope, tq: TimeQuery, vector: npt.NDArray[np.float32], limit: int
    ) -> list[tuple[str, float]]:
        """The nearest turns visible at ``tq``, by cosine."""
        where, params = self._episode_filter(scope, tq)
        return self._nearest("episodes", scope, where, params, vector, limit)

    def episode_similarities(
        self, episode_ids: Sequence[str], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """The cosine of ``vector`` with each of these turns' vectors (any scope: the
        caller's search already filtered); a turn with no vector, or a ``vector`` of
        another width, is left out. ``search()`` ranks by it the turns its text list
        found that the vector list did not reach, and, with a lexical embedder, orders
        the ties of a full text list by it."""
        return self._cosines("episodes", episode_ids, vector)

    def claim_similarities(
        self, claim_ids: Sequence[str], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """The cosine of ``vector`` with each of these claims' vectors, as
        ``episode_similarities`` gives turns': ``search()`` with a lexical embedder orders
        its text candidates' ties by it, instead of scoring every vector."""
        return self._cosines("claims", claim_ids, vector)

    def _cosines(
        self, table: str, keys: Sequence[str], vector: npt.NDArray[np.float32]
    ) -> dict[str, float]:
        """``vector``'s cosine with the stored vector of each row of ``table`` (``claims``,
        found by the rowid its id carries, or ``episodes``, by id) in ``keys``."""
        vectors = self._vectors[table]
        if not keys or vectors.dim != vector.shape[0]:
            return {}
        ids: list[str] = []
        slots: list[int] = []
        with self._search_reads() as (query, _):
            for start in range(0, len(keys), 400):
                chunk = set(keys[start : start + 400])
                column, params = (("rowid", [claim_rowid(key) for key in chunk])
                                  if table == "claims" else ("id", list(chunk)))
                for key, slot in query(
                    f"SELECT id, vec_slot FROM {table} WHERE vec_slot IS NOT NULL"
                    f" AND {column} IN ({','.join('?' * len(chunk))})", params,
                ):
                    if key in chunk:
                        ids.append(key)
                        slots.append(int(slot))
            if not ids:
                return {}
            scores = dot(vectors.read(slots), vector)
        return {key: float(score) for key, score in zip(ids, scores.tolist())}

    def episodes_by_ids(self, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The episodes with these ids (any scope: the caller's search already filtered)."""
        found: dict[str, Episode] = {}
        for start in range(0, len(episode_ids), 400):
            chunk = list(episode_ids[start : start + 400])
            for eid, tenant, user, agent, session, role, content, ts, recorded in self._query(
                "SELECT id, s_tenant, s_user, s_agent, s_session, role, content, ts, recorded_at"
                f" FROM episodes WHERE id IN ({','.join('?' * len(chunk))})", chunk,
            ):
                found[eid] = Episode(content=content, role=role, ts=from_micros(ts),
                                     recorded_at=from_micros(recorded),
                                     scope=scope_of(tenant, user, agent, session), id=eid)
        return found

    def episode_neighbours(
        self, tq: TimeQuery, episode_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        """Each episode's turns just before and after it; see ``Store.episode_neighbours``."""
        seen = "o.recorded_at <= ?" + ("" if tq.valid_at is None else " AND o.ts <= ?")
        bound = [tq.known_at] if tq.valid_at is None else [tq.known_at, tq.valid_at]
        same = (
            "o.s_tenant = e.s_tenant AND o.s_user = e.s_user AND o.s_agent = e.s_agent"
            f" AND o.s_session = e.s_session AND {seen}"
        )
        found: dict[str, tuple[str | None, str | None]] = {}
        for start in range(0, len(episode_ids), 400):
            chunk = list(episode_ids[start : start + 400])
            for eid, before, after in self._query(
                f"SELECT e.id,"
                f" (SELECT o.id FROM episodes o WHERE {same} AND o.rowid < e.rowid"
                f"  ORDER BY o.rowid DESC LIMIT 1),"
                f" (SELECT o.id FROM episodes o WHERE {same} AND o.rowid > e.rowid"
                f"  ORDER BY o.rowid LIMIT 1)"
                f" FROM episodes e WHERE e.id IN ({','.join('?' * len(chunk))})",
                [*bound, *bound, *chunk],
            ):
                found[eid] = (before, after)
        return found

    def find_claims(
        self, scope: Scope, tq: TimeQuery, states: Collection[str], *, limit: int | None = None
    ) -> list[Claim]:
        """Claims in ``states`` at ``tq``; see ``Store.find_claims``."""
        columns, params = self._select_at(tq)
        where, where_params = self._filtered(scope, tq, states)
        sql = f"SELECT {columns} FROM claims WHERE {where} ORDER BY recorded_at DESC, rowid DESC"
        params += where_params
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [decode_claim(row, tq.known_at) for row in self._query(sql, params)]

    def count_claims(self, scope: Scope, tq: TimeQuery, states: Collection[str]) -> int:
        """How many claims ``find_claims`` would return; see ``Store.count_claims``."""
        where, params = self._filtered(scope, tq, states)
        return int(self._query(f"SELECT count(*) FROM claims WHERE {where}", params)[0][0])

    def slot_history(
        self, scope: Scope, subject_keys: Collection[str], predicate: str, tq: TimeQuery
    ) -> list[Claim]:
        """A slot's timeline at ``tq``; see ``Store.slot_history``."""
        keys = list(dict.fromkeys(subject_keys))
        columns, args = self._select_at(tq)
        where, params = _sql.scope_visible(scope)
        span, span_params = _sql.timeline(tq)
        sql = (
            f"SELECT {columns} FROM claims WHERE subject_key IN ({','.join('?' * len(keys))})"
            f" AND predicate = ? AND {where} AND {span} ORDER BY recorded_at, rowid"
        )
        args += [*keys, predicate, *params, *span_params]
        return [decode_claim(row, tq.known_at) for row in self._query(sql, args)]

    def stats(self, scope: Scope, now: int) -> dict[str, int]:
        """Population counts at ``now``; see ``Store.stats``."""
        tq = TimeQuery(known_at=now, valid_at=now)
        where, params = _sql.scope_visible(scope)
        live, live_p = _sql.states_filter(["live"], tq)
        ended, ended_p = _sql.states_filter(["ended"], tq)
        retired, retired_p = _sql.states_filter(["retired"], tq)
        claims = self._query(
            f"SELECT count(*), coalesce(sum({live}), 0), coalesce(sum({ended}), 0),"
            f" coalesce(sum({retired}), 0), count(vec_slot) FROM claims WHERE {where}",
            [*live_p, *ended_p, *retired_p, *params],
        )[0]
        episodes = self._query(
            f"SELECT count(*), count(vec_slot) FROM episodes WHERE {where}", params
        )[0]
        return {
            "episodes": int(episodes[0]),
            "claims": int(claims[0]),
            "live_claims": int(claims[1]),
            "ended_claims": int(claims[2]),
            "invalidated": int(claims[3]),
            "embeddings": int(claims[4]) + int(episodes[1]),
        }

    # -- re-embedding -------------------------------------------------------------------
    def vector_texts(self, table: str, after: int, limit: int) -> list[tuple[int, str]]:
        """What ``table``'s vectors encode, a page at a time; see ``Store.vector_texts``."""
        column = _TEXT_INDEXES[table][1]
        return [(int(rowid), str(text)) for rowid, text in self._query(
            f"SELECT rowid, {column} FROM {table} WHERE rowid > ? ORDER BY rowid LIMIT ?",
            [after, limit],
        )]

    @property
    def embedder_label(self) -> str | None:
        """What the last ``rebuild_vectors`` said made the vectors; see
        ``Store.embedder_label``."""
        return self._meta("embedder")

    def rebuild_vectors(
        self, dim: int, label: str
    ) -> AbstractContextManager[Callable[[str, Sequence[int], npt.NDArray[np.float32]], None]]:
        """Replace every vector; see ``Store.rebuild_vectors``."""
        return self._rebuild_vectors(dim, label)

    @contextmanager
    def _rebuild_vectors(
        self, dim: int, label: str
    ) -> Iterator[Callable[[str, Sequence[int], npt.NDArray[np.float32]], None]]:
        generation = self._generation + 1
        fresh: dict[str, VectorFile] = {}
        for table, suffix in _SIDECARS.items():
            path = None if self._memory else self._path + suffix + ".new"
            if path is not None and os.path.exists(path):
                os.remove(path)  # an earlier rebuild that never committed
            fresh[table] = VectorFile(path, None, generation)
        covered = dict.fromkeys(_SIDECARS, 0)

        def put(table: str, rowids: Sequence[int], vectors: npt.NDArray[np.float32]) -> None:
            if vectors.shape[1:] != (dim,):
                raise DimensionMismatchError(
                    f"vectors are {vectors.shape[1:]} but this rebuild writes {dim}-d ones"
                )
            fresh[table].write(list(rowids), vectors)
            covered[table] = max(covered[table], max(rowids, default=0))

        try:
            yield put
            for sidecar in fresh.values():
                sidecar.flush()
            # The store lock spans the commit and the swap, so no write of this process
            # lands in a sidecar between the two.
            with self._lock:
                with self.transaction():
                    for table, top in covered.items():
                        # Rows written since the caller's last page have no new vector:
                        # they join the backlog (claims are embedded by the next write).
                        self._writer.execute(
                            f"UPDATE {table} SET vec_slot = NULL WHERE vec_slot IS NOT NULL"
                            " AND rowid > ?", (top,))
                        self._writer.execute(
                            f"UPDATE {table} SET vec_slot = rowid WHERE vec_slot IS NULL"
                            " AND rowid <= ?", (top,))
                    self._writer.execute(
                        "INSERT OR REPLACE INTO store_meta (key, value)"
                        " VALUES ('vector_dim', ?), ('vectors_generation', ?), ('embedder', ?),"
                        " ('vectors_claims', ?)",
                        (str(dim), str(generation), label, str(covered["claims"])),
                    )
                    self._writer.execute(_ADVANCE_VECTOR_WATERMARK)
                for sidecar in self._vectors.values():
                    sidecar.close()
                self._generation = generation
                if self._memory:
                    self._vectors = fresh
                else:
                    for sidecar in fresh.values():
                        sidecar.close()
                    self._settle_sidecars()  # committed: the new files take the live names
                    self._vectors = self._open_sidecars()
        except BaseException:
            for sidecar in fresh.values():
                sidecar.close()
            for suffix in _SIDECARS.values():
                if not self._memory and os.path.exists(self._path + suffix + ".new"):
                    os.remove(self._path + suffix + ".new")
            raise

    # -- provenance and the graph -------------------------------------------------------
    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one state of the store; see ``Store.snapshot``."""
        return self._snapshot()

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        if self._memory:
            with self._lock:  # one shared connection: hold it, no write can interleave
                with self._ranking():
                    yield
            return
        conn = self._conn()
        if conn.in_transaction:  # inside a write, or a snapshot already open here
            yield
            return
        try:
            conn.execute("BEGIN")  # WAL: the first read fixes what every later one sees
        except sqlite3.Error as exc:  # pragma: no cover - BEGIN DEFERRED takes no lock
            raise _translate(exc) from exc
        try:
            with self._ranking():
                yield
        finally:
            conn.execute("COMMIT")

    @contextmanager
    def _ranking(self) -> Iterator[None]:
        """For one snapshot: the rank fields of the claims its vector and text searches
        returned (the queries that admit a row read it anyway), so ``rank_fields`` asks
        SQL only for the rest. Kept per thread; a nested snapshot shares its outer one's."""
        if getattr(self._local, "ranked", None) is not None:
            yield
            return
        self._local.ranked = {}
        try:
            yield
        finally:
            self._local.ranked = None

    def claim_at(
        self, claim_id: str, scope: Scope, tq: TimeQuery
    ) -> tuple[Claim, str | None] | None:
        """The claim as believed at ``tq`` and the claim that ended it then; see
        ``Store.claim_at``."""
        closer, params = _sql.effective_closer(tq.known_at)
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        span, span_params = _sql.timeline(tq)
        rows = self._query(
            f"SELECT {closer}, {columns} FROM claims WHERE rowid = ? AND id = ? AND {where}"
            f" AND {span}",
            [*params, *column_params, claim_rowid(claim_id), claim_id, *where_params,
             *span_params],
        )
        if not rows:
            return None
        return decode_claim(rows[0][1:], tq.known_at), rows[0][0]

    def superseded_by(self, claim_id: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """The claims ``claim_id`` closed, as believed at ``tq``; see
        ``Store.superseded_by``."""
        closer, params = _sql.effective_closer(tq.known_at)
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        rows = self._query(
            # NOT INDEXED: the rowids are few; left to itself the planner walks every
            # entry of the visible scope in claims_slot (14.5 ms against 0.14 ms for
            # why() at 60,000 claims of one scope, in review).
            f"SELECT {columns} FROM claims NOT INDEXED WHERE rowid IN ("
            " SELECT rowid FROM claims WHERE invalidated_by = ?"
            " UNION SELECT rowid FROM claims WHERE ended_by = ?"
            " UNION SELECT claim_rowid FROM claim_closures WHERE ended_by = ?)"
            f" AND {where} AND recorded_at <= ?"
            f" AND ((invalidated_by = ? AND invalidated_at <= ?) OR {closer} = ?)"
            " ORDER BY recorded_at, rowid",
            [*column_params, claim_id, claim_id, claim_id, *where_params, tq.known_at,
             claim_id, tq.known_at, *params, claim_id],
        )
        return [decode_claim(row, tq.known_at) for row in rows]

    def claims_citing(self, source: str, scope: Scope, tq: TimeQuery) -> list[Claim]:
        """Claims whose sources include ``source``, visible at ``tq``; see
        ``Store.claims_citing``."""
        columns, params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        span, span_params = _sql.timeline(tq)
        rows = self._query(
            f"SELECT {columns} FROM claims NOT INDEXED WHERE rowid IN"  # see superseded_by
            " (SELECT claim_rowid FROM claim_sources WHERE source = ?)"
            f" AND {where} AND {span} ORDER BY recorded_at, rowid",
            [*params, source, *where_params, *span_params],
        )
        return [decode_claim(row, tq.known_at) for row in rows]

    def predicate_in_use(self, predicate: str) -> bool:
        """Whether any claim has this predicate; see ``Store.predicate_in_use``."""
        return bool(self._query("SELECT 1 FROM claims WHERE predicate = ? LIMIT 1", [predicate]))

    def graph_edges(
        self,
        scope: Scope,
        tq: TimeQuery,
        keys: Collection[str],
        predicates: Collection[str] | None,
        fanout: int,
    ) -> list[tuple[Claim, str, str]]:
        """Live, positive claims touching ``keys``, at most ``fanout`` a key a side; see
        ``Store.graph_edges``."""
        columns, column_params = self._select_at(tq)
        where, where_params = _sql.scope_visible(scope)
        live, live_params = _sql.visible(tq)
        marks = ",".join("?" * len(keys))
        extra, extra_params = "", []
        if predicates is not None:
            extra = f" AND predicate IN ({','.join('?' * len(predicates))})"
            extra_params = list(predicates)
        found: list[tuple[Claim, str, str]] = []
        # INDEXED BY: left to itself the planner may walk claims_slot by its scope prefix
        # alone, every row of a scope (it cannot know a key list is far more selective
        # than a scope); named, it probes each visible scope for each key.
        for side, index in (("subject_key", "claims_slot"), ("object_key", "claims_object")):
            rows = self._query(
                f"SELECT * FROM (SELECT {columns}, subject_key, object_key, row_number()"
                f" OVER (PARTITION BY {side} ORDER BY recorded_at DESC, rowid DESC) AS n"
                f" FROM claims INDEXED BY {index} WHERE {side} IN ({marks})"
                f" AND polarity > 0{extra}"
                f" AND {where} AND {live}) WHERE n <= ?",
                [*column_params, *keys, *extra_params, *where_params, *live_params, fanout],
            )
            found.extend(
                (decode_claim(row[:-3], tq.known_at), row[-3], row[-2]) for row in rows
            )
        return found

    # -- learned entity aliases ---------------------------------------------------------
    def learn_alias(self, owner: Scope, alias_key: str, entity_key: str, at: int, via: str) -> None:
        """Record an alias for ``owner``; see ``Store.learn_alias``."""
        with self._writing() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO entity_aliases"
                " (s_tenant, s_user, alias_key, entity_key, learned_at, via)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (owner.tenant or "", owner.user or "", alias_key, entity_key, at, via),
            )

    def aliases(self, owner: Scope) -> dict[str, str]:
        """The aliases learned for ``owner``; see ``Store.aliases``."""
        return dict(self._query(
            "SELECT alias_key, entity_key FROM entity_aliases WHERE s_tenant = ? AND s_user = ?",
            [owner.tenant or "", owner.user or ""],
        ))

    def alias_owners(self) -> set[tuple[str | None, str | None]]:
        """Who has learned aliases; see ``Store.alias_owners``."""
        return {(tenant or None, user or None) for tenant, user in self._query(
            "SELECT DISTINCT s_tenant, s_user FROM entity_aliases"
        )}

    def rekey_subjects(
        self, owner: Scope, mapping: Mapping[str, str], at: int, *, dry_run: bool
    ) -> list[Claim]:
        """Re-file claims under learned entities; see ``Store.rekey_subjects``.

        One statement for each ``_REKEY_CHUNK`` aliases of the mapping, so the owner's
        entries in ``claims_slot`` are walked once a chunk: since schema 5 the index is
        led by the scope, and a subject key without its agent and session is no prefix
        of it. A chunk binds five values an alias, within SQLite's default limit on
        bound values (32,766). The claims come back in the mapping's order, then by rowid.
        """
        if not mapping:
            return []
        olds = list(mapping)
        rows: list[Any] = []
        try:
            with self.transaction(), self._writing() as conn:
                for start in range(0, len(olds), _REKEY_CHUNK):
                    chunk = olds[start : start + _REKEY_CHUNK]
                    case = f"CASE subject_key {' '.join(['WHEN ? THEN ?'] * len(chunk))} END"
                    pairs = [value for old in chunk for value in (old, mapping[old])]
                    rows.extend(conn.execute(
                        f"UPDATE claims SET subject_key = {case}, meta = json_set("
                        "coalesce(meta, '{}'), '$.entity_backfill',"
                        f" json_object('from', subject_key, 'to', {case}, 'at', ?))"
                        f" WHERE s_user = ? AND s_tenant = ? AND subject_key IN"
                        f" ({','.join('?' * len(chunk))}) RETURNING {CLAIM_COLUMNS},"
                        " json_extract(meta, '$.entity_backfill.from')",
                        (*pairs, *pairs, at, owner.user or "", owner.tenant or "", *chunk),
                    ).fetchall())
                if dry_run:
                    raise _DryRun
        except _DryRun:
            pass
        place = {old: i for i, old in enumerate(olds)}
        rows.sort(key=lambda row: (place[row[-1]], row[0]))
        return [decode_claim(row[:-1], None) for row in rows]

    def entity_surfaces(self, owner: Scope, limit: int) -> list[str]:
        """Recent subjects and objects of ``owner``; see ``Store.entity_surfaces``."""
        rows = self._write_side_query(
            "SELECT subject, object FROM claims WHERE s_tenant = ? AND s_user = ?"
            " ORDER BY rowid DESC LIMIT ?", [owner.tenant or "", owner.user or "", limit],
        )
        return list(dict.fromkeys(surface for pair in rows for surface in pair))[:limit]

    # -- erasure ----------------------------------------------------------------------
    def _scrub(self, conn: sqlite3.Connection, fts_tables: Collection[str]) -> None:
        """Merge FTS segments so deleted tokens leave the index, then truncate the WAL."""
        for table in fts_tables:
            conn.execute(f"INSERT INTO {table} ({table}) VALUES ('optimize')")
        if not self._memory:
            self._after_commit.append(self._checkpoint)

    def _checkpoint(self) -> None:
        try:
            self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        except sqlite3.Error as exc:  # pragma: no cover - the erase itself has committed
            raise _translate(exc) from exc

    def _delete_episodes(self, conn: sqlite3.Connection, where: str, params: Sequence[object]) -> tuple[int, list[int]]:
        rows = conn.execute(
            f"DELETE FROM episodes WHERE {where} RETURNING vec_slot", params
        ).fetchall()
        return len(rows), [r[0] for r in rows if r[0] is not None]

    def erase_claim(self, claim_id: str, scope: Scope, *, sources: bool) -> dict[str, int]:
        """Remove one claim everywhere; see ``Store.erase_claim``."""
        counts = dict.fromkeys(_ERASE_COUNTS, 0)
        where, params = _sql.scope_visible(scope)
        with self._writing() as conn:
            self._index_all(conn)
            row = conn.execute(
                f"SELECT rowid, sources, vec_slot FROM claims WHERE rowid = ? AND id = ?"
                f" AND {where}",
                [claim_rowid(claim_id), claim_id, *params],
            ).fetchone()
            if row is None:
                return counts
            rowid, cited, slot = row
            cited_ids = json.loads(cited) if cited else []
            counts["sources"] = len(cited_ids)
            conn.execute("DELETE FROM claims WHERE rowid = ?", (rowid,))
            counts["claims"] = 1
            freed = [] if slot is None else [slot]
            episode_slots: list[int] = []
            fts = ["claims_fts"]
            if sources and cited_ids:
                orphans = [
                    source for source in cited_ids
                    if conn.execute("SELECT 1 FROM claim_sources WHERE source = ? LIMIT 1",
                                    (source,)).fetchone() is None
                ]
                if orphans:
                    ep_where = f"id IN ({','.join('?' * len(orphans))}) AND {where}"
                    counts["episodes"], episode_slots = self._delete_episodes(
                        conn, ep_where, [*orphans, *params]
                    )
                    fts.append("episodes_fts")
            counts["embeddings"] = len(freed) + len(episode_slots)
            self._zero_vectors("claims", freed)
            self._zero_vectors("episodes", episode_slots)
            self._scrub(conn, fts)
        return counts

    def purge(self, scope: Scope) -> dict[str, int]:
        """Remove ``scope`` and everything beneath it; see ``Store.purge``."""
        where, params = _sql.scope_subtree(scope)
        with self._writing() as conn:
            self._index_all(conn)
            (links,) = conn.execute(
                f"SELECT count(*) FROM claim_sources WHERE claim_rowid IN"
                f" (SELECT rowid FROM claims WHERE {where})", params
            ).fetchone()
            claim_slots = conn.execute(
                f"DELETE FROM claims WHERE {where} RETURNING vec_slot", params
            ).fetchall()
            n_episodes, episode_slots = self._delete_episodes(conn, where, params)
            freed = [r[0] for r in claim_slots if r[0] is not None]
            self._zero_vectors("claims", freed)
            self._zero_vectors("episodes", episode_slots)
            self._scrub(conn, ["claims_fts", "episodes_fts"])
        return {
            "claims": len(claim_slots),
            "episodes": n_episodes,
            "embeddings": len(freed) + len(episode_slots),
            "sources": int(links),
        }

    # -- learned schema ---------------------------------------------------------------
    def load_predicates(self) -> list[PredicateSpec]:
        """Every persisted predicate spec."""
        rows = self._query("SELECT name, cardinality, volatility, aliases FROM predicates ORDER BY name")
        return [
            PredicateSpec(name, Cardinality(card), Volatility(vol), tuple(json.loads(aliases)))
            for name, card, vol, aliases in rows
        ]

    def save_predicates(self, specs: Sequence[PredicateSpec]) -> None:
        """Persist predicate specs (insert or replace)."""
        if not specs:
            return
        with self._writing() as conn:
            conn.executemany(
                "INSERT OR REPLACE INTO predicates (name, cardinality, volatility, aliases)"
                " VALUES (?, ?, ?, ?)",
                [(s.name, s.cardinality.value, s.volatility.value, json.dumps(list(s.aliases)))
                 for s in specs],
            )

    def clear_predicates(self) -> int:
        """Forget every persisted predicate spec."""
        with self._writing() as conn:
            return len(conn.execute("DELETE FROM predicates RETURNING name").fetchall())

    # -- integrity --------------------------------------------------------------------
    def integrity_problems(self) -> list[str]:
        """Every inconsistency found (an empty list means the store is sound).

        ``PRAGMA integrity_check``; each FTS index's own check plus its document count
        against its table's rows (external-content FTS cannot see a row deleted behind
        its back); the sidecar's allocated slots against the rows that hold one; and no
        claim without a vector at or below the vector watermark, where none is looked for.
        """
        problems = [r[0] for r in self._query("PRAGMA integrity_check") if r[0] != "ok"]
        with self._writing() as conn:
            for table, fts in (("claims", "claims_fts"), ("episodes", "episodes_fts")):
                try:
                    conn.execute(f"INSERT INTO {fts} ({fts}) VALUES ('integrity-check')")
                except sqlite3.DatabaseError as exc:  # pragma: no cover - needs a damaged segment
                    problems.append(f"{fts}: {exc}")
                (rows,) = conn.execute(
                    f"SELECT count(*) FROM {table} WHERE rowid <= (SELECT CAST(value AS INTEGER)"
                    " FROM store_meta WHERE key = ?)", (f"fts_{table}",)
                ).fetchone()
                (docs,) = conn.execute(f"SELECT count(*) FROM {fts}_docsize").fetchone()
                if rows != docs:
                    problems.append(f"{fts}: indexes {docs} documents for {rows} rows")
            for table, sidecar in self._vectors.items():
                (misplaced, top) = conn.execute(
                    f"SELECT count(*) FILTER (WHERE vec_slot != rowid), max(vec_slot)"
                    f" FROM {table}"
                ).fetchone()
                if misplaced:
                    problems.append(f"{table}: {misplaced} rows point at another row's vector")
                if top is not None:
                    sidecar.read([top])  # maps whatever another process has grown
                if top is not None and top >= sidecar.capacity:
                    problems.append(
                        f"{table}: row {top} has a vector but the sidecar holds"
                        f" {sidecar.capacity} slots"
                    )
            (lost,) = conn.execute(
                "SELECT count(*) FROM claims WHERE vec_slot IS NULL AND rowid <= (SELECT"
                " CAST(value AS INTEGER) FROM store_meta WHERE key = 'vectors_claims')"
            ).fetchone()
            if lost:
                problems.append(
                    f"claims: {lost} rows at or below the vector watermark have no vector")
        return problems

