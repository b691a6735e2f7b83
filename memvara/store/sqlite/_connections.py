"""The base of ``SQLiteStore``: its connections, transactions and read snapshots.

One writer connection behind a lock; reads on per-thread connections, so a read never
queues behind a write (an in-memory database has one connection, shared under the lock).
Every ``sqlite3`` exception met here is raised as a ``StoreError`` (``translate``).

``SQLiteStore`` is one class made of parts (see ``store.py``): this one holds the state
every other part reads through ``self``, and the ways to reach the database: ``_query``
for a read, ``_writing()`` for a write inside this thread's transaction (opening one
when there is none), ``_write_side_query`` for a read that belongs to a write.

Works on SQLite 3.35 and newer (CPython here links 3.40.1); nothing newer is required.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import urllib.parse
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, suppress
from typing import Any

from ..._caller import user_stacklevel
from ..._errors import (
    ClosedError, InvalidArgumentError, NotAStoreError, ReadOnlyStoreError, StoreError,
)
from . import _bm25
from ._translate import is_busy, retry_busy, translate

__all__ = ["CHECKPOINT_PAGES", "MEMORY", "MIN_SQLITE", "Connections"]

MIN_SQLITE = (3, 35, 0)
MEMORY = ":memory:"
"""The path of a store that lives in memory, on one shared connection."""

CHECKPOINT_PAGES = 4000
"""The writer copies the write-ahead log into the database once it holds this many pages
(16 MiB at 4 KiB; SQLite's default is 1,000). A checkpoint costs two ``fdatasync`` calls
(~3 ms each on this project's machine) plus one write per distinct page, and a revising
``remember()`` appends ~8 pages, mostly the same hot ones: at 100k claims, 1,000 pages
were 116 commits and 335 distinct pages, 4,000 pages are 464 commits and 1,003 distinct
pages. So per write, a quarter of the syncs and three quarters of the copying, for a
larger pause once every few hundred writes."""


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
            raise translate(exc) from exc


class _Transaction:
    """``SQLiteStore.transaction()``; a class for the same reason as ``_Translating``."""

    __slots__ = ("_store", "_opened")

    def __init__(self, store: Connections) -> None:
        self._store = store
        self._opened = (0, 0)

    def __enter__(self) -> None:
        self._opened = self._store._begin()

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        self._store._end(*self._opened, failed=exc is not None)


class Connections:
    """Connections, transactions and snapshots: the part of ``SQLiteStore`` every other
    part stands on (see ``SQLiteStore`` for the arguments)."""

    _log_inserted: Callable[[str, Sequence[int]], None]
    """``_log_inserted(op, rowids)``: inside a write transaction, the rows of ``claims``
    or ``episodes`` a write just inserted (``op``: ``"added"``, ``"restored"`` from the
    archive, or ``"turns_added"``). Every path that inserts claims or turns calls it; the
    write log (``_log.WriteLog``, which sets it) records them, and finds in the record's
    own insert any row no path named."""

    def __init__(
        self,
        path: str | os.PathLike[str] = MEMORY,
        *,
        busy_timeout: float = 30.0,
        tracer: Callable[[str, Sequence[object]], None] | None = None,
        read_only: bool = False,
    ) -> None:
        if sqlite3.sqlite_version_info < MIN_SQLITE:
            raise StoreError(
                f"SQLite {sqlite3.sqlite_version} is too old; memvara needs 3.35 or newer"
            )
        if not isinstance(read_only, bool):
            raise InvalidArgumentError(
                "read_only", f"expected True or False, got {read_only!r:.40}")
        if isinstance(busy_timeout, bool) or not isinstance(busy_timeout, (int, float)) \
                or not 0 <= busy_timeout <= 86_400:
            raise InvalidArgumentError(
                "busy_timeout", f"expected seconds from 0 to 86,400, got {busy_timeout!r:.40}")
        if tracer is not None and not callable(tracer):  # sqlite3 would swallow the failed calls
            raise InvalidArgumentError("tracer", f"expected a callable taking (sql, params), got"
                                       f" {tracer!r:.40}")
        if not isinstance(path, (str, os.PathLike)):
            raise InvalidArgumentError("path", f"expected a file path or ':memory:', got {path!r:.60}")
        name = os.fspath(path)
        if not name:  # SQLite would open a private temporary file, gone at close
            raise InvalidArgumentError("path", "must not be empty: pass a file path, or ':memory:'"
                                       " for a store in RAM")
        if "\x00" in name or name.startswith("file:"):  # SQLite reads "file:" as a URI
            raise InvalidArgumentError("path", f"expected a file path or ':memory:', got {name!r:.60}"
                                       " (a SQLite URI or a NUL character is not taken)")
        self._memory = name == MEMORY
        self._path = name if self._memory else os.path.expanduser(name)
        self._busy = busy_timeout
        self._tracer = tracer
        self._lock = threading.RLock()
        self._local = threading.local()
        self._readers: list[sqlite3.Connection] = []
        self._readers_lock = threading.RLock()  # re-entrant: _enter_read opens one under it
        self._reads = 0
        """Reads running on reader connections (``_enter_read``): ``close()`` waits for
        them, as closing a connection under another thread's statement can crash the
        interpreter (CPython's ``sqlite3`` does not guard it)."""
        self._reads_done = threading.Condition(self._readers_lock)
        self._readers_closed = False
        self._depth = 0
        self._owner: int | None = None
        self._after_commit: list[Callable[[], None]] = []
        self._closed = False
        self._read_only: str | None = None
        """Why this store refuses every write (``None``: it takes them)."""
        self._uri: str | None = None
        """What a read-only file store's connections open (a ``file:`` URI with
        ``mode=ro``, or ``immutable``); ``None``: the plain path."""
        if self._memory and read_only:
            raise InvalidArgumentError(
                "read_only", "an in-memory store starts empty: there is nothing to open read-only")
        self._writer = self._open(read_only)

    @property
    def read_only(self) -> bool:
        """Whether this store refuses writes: opened with ``read_only=True``, or found
        unwritable when it opened (every write then raises ``ReadOnlyStoreError``)."""
        return self._read_only is not None

    def _open(self, read_only: bool) -> sqlite3.Connection:
        """The writer connection, or for a read-only store the connection that reads what
        opening it needs. A file that cannot be written is opened read-only (with a
        warning, unless ``read_only`` asked for it): its reads still answer."""
        if self._memory:
            return self._connect(readonly=False)
        why = _check_file(self._path, read_only)
        if why is None:
            existed = os.path.exists(self._path)
            try:
                return self._connect(readonly=False)
            except ReadOnlyStoreError as exc:  # SQLite could not write what access() allows
                if not existed:  # nothing there to read
                    raise
                why = f"SQLite cannot write it ({exc.__cause__})"
        self._read_only = why
        conn = self._connect_read_only()
        if not read_only:  # once it opened: a file it cannot open either just fails
            warnings.warn(
                f"{self._path}: opened read-only, as {why}: reads answer, writes raise"
                " ReadOnlyStoreError (pass read_only=True to open it so on purpose)",
                UserWarning, stacklevel=user_stacklevel(),  # the user's SQLiteStore() or Memvara()
            )
        return conn

    def _connect_read_only(self) -> sqlite3.Connection:
        """Open the file with SQLite's ``mode=ro``. In a folder that cannot be written,
        with no ``-shm`` beside the file, SQLite cannot open its write-ahead log's index
        even to read; the file is then opened ``immutable`` (read as it is, with no
        locks), which is safe only with no ``-wal`` file either: then no process can be
        writing it, as none could create the log."""
        self._uri = "file:" + urllib.parse.quote(os.path.abspath(self._path)) + "?mode=ro"
        try:
            return self._connect(readonly=True)
        except ReadOnlyStoreError:
            if os.path.exists(self._path + "-wal"):
                raise
        self._uri += "&immutable=1"
        return self._connect(readonly=True)

    def _connect(self, *, readonly: bool) -> sqlite3.Connection:
        target = self._path if self._uri is None else self._uri
        try:
            conn = sqlite3.connect(target, timeout=self._busy, isolation_level=None,
                                   check_same_thread=False, uri=self._uri is not None)
        except sqlite3.Error as exc:
            raise self._open_error(exc) from exc
        try:
            if not self._memory and not readonly:
                retry_busy(lambda: conn.execute("PRAGMA journal_mode = WAL"), self._busy)
            elif self._uri is not None:  # opening reads nothing yet: fail here, not later
                conn.execute("SELECT count(*) FROM sqlite_master")
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
            raise self._open_error(exc) from exc
        if self._tracer is not None:
            tracer = self._tracer
            conn.set_trace_callback(lambda sql: tracer(sql, ()))
        return conn

    def _open_error(self, exc: sqlite3.Error) -> StoreError:
        """What opening the file met, as memvara's error, naming the path and the fix."""
        message = str(exc)
        if is_busy(exc):  # another process held the new file past the busy timeout
            return translate(exc)
        if "unable to open" in message or "readonly" in message or "read-only" in message:
            return ReadOnlyStoreError(
                f"{self._path}: SQLite cannot open it ({message}); check that the file and"
                " its folder can be read (and written, unless you pass read_only=True)")
        if "not a database" in message:
            return NotAStoreError(
                f"{self._path}: not a memvara store: the file is not a SQLite database"
                " (pass the path of a store, or of a file that does not exist yet to"
                " create one there)")
        found = translate(exc)
        return type(found)(f"{self._path}: {found}")

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
                conn = self._enter_read()
                try:
                    yield conn
                finally:
                    self._leave_read()
        except sqlite3.Error as exc:
            raise translate(exc) from exc

    def _enter_read(self) -> sqlite3.Connection:
        """This thread's reader connection, counted as in use until ``_leave_read``."""
        with self._readers_lock:
            if self._readers_closed:
                raise ClosedError("the store is closed")
            conn = self._conn()
            self._reads += 1
        self._local.reads = getattr(self._local, "reads", 0) + 1
        return conn

    def _leave_read(self) -> None:
        self._local.reads -= 1
        with self._readers_lock:
            self._reads -= 1
            self._reads_done.notify_all()

    def _close_readers(self) -> None:
        """Refuse new reads, wait for those running on other threads, close every
        reader connection."""
        with self._readers_lock:
            self._readers_closed = True
            mine = getattr(self._local, "reads", 0)  # this thread's own: never waited for
            self._reads_done.wait_for(lambda: self._reads == mine)
            for conn in self._readers:
                conn.close()
            self._readers.clear()

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
                raise translate(exc) from exc

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
            if self._read_only is not None:
                raise ReadOnlyStoreError(
                    f"{self._path}: this store is read-only, as {self._read_only}:"
                    " it answers reads and refuses every write")
            depth = self._depth
            try:
                self._writer.execute("BEGIN IMMEDIATE" if depth == 0 else f"SAVEPOINT sp{depth}")
            except sqlite3.Error as exc:
                raise translate(exc) from exc
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

    def _seal(self) -> None:
        """Runs inside every outermost write transaction just before it commits (the
        write log's one choke point, ``_log.WriteLog``); what it raises rolls it back."""

    def _commit(self, depth: int) -> None:
        if depth == 0:
            try:
                self._seal()
            except BaseException:
                self._rollback(0, 0)
                raise
        try:
            self._writer.execute("COMMIT" if depth == 0 else f"RELEASE sp{depth}")
        except sqlite3.Error as exc:  # pragma: no cover - COMMIT fails only on I/O errors
            self._rollback(depth, 0 if depth == 0 else len(self._after_commit))
            raise translate(exc) from exc
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
                raise translate(exc) from exc

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._closed

    @property
    def path(self) -> str:
        """The database path (``":memory:"`` for an in-memory store)."""
        return self._path

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
        if self._owner == threading.get_ident():  # inside this thread's own write
            yield
            return
        conn = self._enter_read()
        try:
            if conn.in_transaction:  # a snapshot already open here
                yield
                return
            try:
                conn.execute("BEGIN")  # WAL: the first read fixes what every later one sees
            except sqlite3.Error as exc:  # pragma: no cover - BEGIN DEFERRED takes no lock
                raise translate(exc) from exc
            try:
                with self._ranking():
                    yield
            finally:
                with suppress(sqlite3.ProgrammingError):  # this thread closed the store
                    conn.execute("COMMIT")
        finally:
            self._leave_read()

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


def _check_file(path: str, read_only: bool) -> str | None:
    """Why the store file at ``path`` is to be opened read-only (``read_only``, or it
    cannot be written); ``None``: it can be written, or it does not exist yet and its
    folder can. Raises, naming the path and the fix, where no store can be opened there
    at all: a folder given as the path, a folder that does not exist, no file to open
    read-only, a new file in a folder that cannot be written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise NotAStoreError(
            f"{path}: a folder, not a store file; pass the path of a file inside it"
            f" (such as {os.path.join(path, 'memory.db')})")
    if not os.path.isdir(folder):
        state = "is not a folder" if os.path.exists(folder) else "does not exist"
        raise StoreError(
            f"{path}: the folder {folder} {state}; create it first (os.makedirs), or pass"
            " a path in a folder that exists")
    if os.path.exists(path) and not os.path.isfile(path):
        raise NotAStoreError(f"{path}: not a regular file (a device, a pipe or a socket); pass"
                             " the path of a store file")
    if not os.path.exists(path):
        if read_only:
            raise StoreError(
                f"{path}: no such store; read_only=True opens an existing store only")
        if not os.access(folder, os.W_OK):
            raise ReadOnlyStoreError(
                f"{path}: no store there, and its folder {folder} cannot be written to"
                " create one; pass a path in a folder you can write")
        return None
    if read_only:
        return "it was opened with read_only=True"
    if not os.access(path, os.W_OK):
        return "the file cannot be written"
    wal = all(os.access(path + suffix, os.W_OK) for suffix in ("-wal", "-shm"))
    if not os.access(folder, os.W_OK) and not wal:
        return (f"its folder {folder} cannot be written, and SQLite keeps its write-ahead"
                " log (-wal, -shm) beside the file")
    return None
