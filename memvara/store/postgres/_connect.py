"""Connections, transactions and snapshots of the PostgreSQL store; the state every
part of it shares, the hook each part sets itself up in on opening (``_on_open``), and
psycopg's errors turned into memvara's.

One writer connection per store, taken under a lock for a transaction (``BEGIN`` /
``SAVEPOINT`` as the SQLite store does); one reader connection per thread, in
autocommit, so a read never waits for a writer (MVCC). A thread's reads inside its own
write go through the writer, so they see what it wrote.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

from ..._errors import (
    ClosedError,
    InvalidArgumentError,
    NotAStoreError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StoreCorruptError,
    StoreError,
    StoreLockedError,
)
from ..._optional import require
from ._schema import SCHEMA_VERSION, TERM_TABLES, ddl, upgrade

__all__ = ["Connections", "HINT"]

HINT = "PostgresStore needs psycopg and pgvector: pip install 'memvara[postgres]'"
ANALYZE_MIN_ROWS = 1_000
"""Rows a text table must gain through one store before it takes fresh statistics."""
ANALYZE_GROWTH = 0.2
"""...and the share of the table's size, as the planner last knew it, they must reach."""
_SCHEMA_NAME = re.compile(r"[a-z_][a-z0-9_]{0,62}")
_PGVECTOR_HINT = (
    "the PostgreSQL server has no pgvector extension available to this role: install it"
    " on the server (Debian/Ubuntu: apt install postgresql-<version>-pgvector, or build"
    " https://github.com/pgvector/pgvector with `make && make install`; .ci/postgres-up"
    " builds it from Debian's source package), then run CREATE EXTENSION vector as a"
    " superuser in this database"
)


class Connections:
    """Opens the schema and hands out connections (see the module docstring)."""

    def __init__(
        self, dsn: str, *, schema: str = "memvara", lock_timeout: float = 30.0,
        read_only: bool = False,
    ) -> None:
        if not isinstance(dsn, str) or not dsn:
            raise InvalidArgumentError("dsn", f"expected a PostgreSQL connection string, got {dsn!r:.60}")
        if not isinstance(schema, str) or not _SCHEMA_NAME.fullmatch(schema):
            raise InvalidArgumentError(
                "schema", f"expected a lower-case SQL identifier ([a-z_][a-z0-9_]*), got {schema!r:.60}")
        if schema.startswith("pg_") or schema == "information_schema":
            raise InvalidArgumentError("schema", f"{schema!r} is reserved for PostgreSQL's own schemas")
        self._pg = require("psycopg", HINT)
        self._vector = require("pgvector.psycopg", HINT)
        self._dsn, self._schema, self._read_only = dsn, schema, read_only
        self._lock_ms = int(lock_timeout * 1000)
        try:
            params = self._pg.conninfo.conninfo_to_dict(dsn)
        except self._pg.ProgrammingError as exc:  # libpq's words, without the string (its password)
            raise InvalidArgumentError("dsn", "not a PostgreSQL connection string or URL: "
                                       + str(exc).strip().replace(dsn, "<dsn>")) from None
        self._where = f"{params.get('host') or 'localhost'}:{params.get('port') or 5432}"
        self._lock = threading.RLock()
        self._local = threading.local()
        self._readers: list[tuple[threading.Thread, Any]] = []  # each reader and its thread
        self._readers_lock = threading.Lock()
        self._depth = 0
        self._owner: int | None = None
        self._after_commit: list[Callable[[], None]] = []
        # text-index deltas (table, rows, tokens, rows per token), applied at commit
        self._stats: list[tuple[str, int, int, Mapping[str, int]]] = []
        # tokens a committed erase left at count 0 whose sweep could not get its locks
        self._unswept: dict[str, set[str]] = {}
        # rows this store added to each text table since it last took its statistics,
        # and the table's size as the planner knew it then (``_refresh_statistics``)
        self._grown: dict[str, int] = {}
        self._planned: dict[str, float] = {}
        self._version = SCHEMA_VERSION  # as found on opening (a read-only store is not upgraded)
        self._closed = False
        self._dim: int | None = None
        self._writer = self._connect(create=True)
        try:
            self._on_open(self._writer)
        except BaseException:  # a store that did not open holds no connection
            self._shut()
            raise

    # -- opening ------------------------------------------------------------------
    def _on_open(self, writer: Any) -> None:
        """Ready each part of the store once the schema is made or checked: called once,
        at the end of opening, with the writer (autocommit). A part that keeps tables or
        state of its own extends it, ``super()._on_open(writer)`` first, so the parts
        set up in the order they are stacked. What it raises fails the open, after every
        connection is closed."""

    def _ensure_tables(self, writer: Any, marker: str, statements: Sequence[str]) -> None:
        """Create ``statements``' objects in the schema unless table ``marker`` is there
        already (under the schema's advisory lock, so two openers make them once). A
        note in store_meta says they were made: one missing after that was dropped
        outside memvara (the write log, say), and is refused rather than made empty."""
        made = f"made:{marker}"
        with self._translated(), writer.transaction():
            writer.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                           [f"memvara-schema:{self._schema}"])
            noted = writer.execute("SELECT 1 FROM store_meta WHERE key = %s", [made]).fetchone()
            if writer.execute("SELECT to_regclass(%s)", [f"{self._schema}.{marker}"]).fetchone()[0]:
                if noted is None:  # made before the note was kept
                    writer.execute("INSERT INTO store_meta (key, value) VALUES (%s, '1')", [made])
                return
            if noted is not None:
                raise StoreCorruptError(
                    f"{self._where}: the schema {self._schema!r} lacks its table {marker!r}:"
                    " it was changed outside memvara; restore it from a backup")
            for statement in statements:
                writer.execute(statement)
            writer.execute("INSERT INTO store_meta (key, value) VALUES (%s, '1')", [made])

    def _connect(self, *, create: bool = False) -> Any:
        try:
            conn = self._pg.connect(self._dsn, autocommit=True, connect_timeout=10)
        except self._pg.OperationalError as exc:
            # unreachable, a wrong password, no such database: libpq's reason says which
            raise StoreError(f"cannot connect to PostgreSQL at {self._where}: {exc}".strip()) from exc
        try:
            if create:
                self._create(conn)
            conn.execute(f"SET search_path TO {self._schema}, public")
            conn.execute(f"SET lock_timeout = {self._lock_ms}")
            self._vector.register_vector(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _create(self, conn: Any) -> None:
        """Check pgvector and the schema's version; create the schema if it is missing,
        upgrade it if an older memvara made it (under an advisory lock, so two processes
        opening a schema make or upgrade it once)."""
        with self._translated():
            if conn.execute("SELECT 1 FROM pg_get_keywords() WHERE word = %s AND catcode IN ('R', 'T')",
                            [self._schema]).fetchone() is not None:
                raise InvalidArgumentError("schema", f"{self._schema!r} is a reserved SQL word")
            if self._read_only:
                self._version = self._check_version(conn)
                return
            if conn.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'").fetchone() is None:
                try:
                    conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
                except self._pg.Error as exc:
                    raise StoreError(f"{self._where}: {_PGVECTOR_HINT} ({exc})") from exc
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                             [f"memvara-schema:{self._schema}"])
                found = conn.execute(
                    "SELECT 1 FROM information_schema.tables WHERE table_schema = %s"
                    " AND table_name = 'store_meta'", [self._schema]).fetchone()
                if found is None:
                    conn.execute(f"CREATE SCHEMA IF NOT EXISTS {self._schema}")
                    conn.execute(f"SET LOCAL search_path TO {self._schema}, public")
                    for statement in ddl():
                        conn.execute(statement)
                    return
                version = self._check_version(conn)
                if version < SCHEMA_VERSION:
                    conn.execute(f"SET LOCAL search_path TO {self._schema}, public")
                    for statement in upgrade(version):
                        conn.execute(statement)

    def _check_version(self, conn: Any) -> int:
        """Refuse a schema a newer memvara wrote (or, read-only, one that is missing)."""
        found = conn.execute(
            "SELECT 1 FROM information_schema.tables WHERE table_schema = %s"
            " AND table_name = 'store_meta'", [self._schema]).fetchone()
        if found is None:
            raise NotAStoreError(f"no memvara store in schema {self._schema!r} at {self._where}"
                                 " (a read-only store is never created)")
        (version,) = conn.execute(
            f"SELECT max(value) FROM {self._schema}.store_meta WHERE key = 'schema_version'").fetchone()
        if not (isinstance(version, str) and version.isdigit()):  # not a table of ours
            raise NotAStoreError(f"schema {self._schema!r} at {self._where} has a store_meta table"
                                 f" with no memvara schema version (found {version!r:.40})")
        if int(version) > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"schema {self._schema!r} at {self._where} was written by a newer memvara"
                f" (schema version {version}, this one reads up to {SCHEMA_VERSION})")
        return int(version)

    # -- errors -------------------------------------------------------------------
    @contextmanager
    def _translated(self) -> Iterator[None]:
        """psycopg's errors as memvara's, chained."""
        try:
            yield
        except self._pg.Error as exc:
            errors = self._pg.errors
            if isinstance(exc, (errors.LockNotAvailable, errors.DeadlockDetected)):
                raise StoreLockedError(f"{self._where}: {exc}") from exc
            if isinstance(exc, errors.ProgramLimitExceeded):  # an OperationalError, not a drop
                raise StoreError(
                    f"{self._where}: a value is too long for PostgreSQL's index (a subject,"
                    " object, source, alias or id over ~2,600 bytes that does not compress);"
                    f" the transaction was rolled back whole: {exc}") from exc
            if isinstance(exc, self._pg.OperationalError):
                raise StoreError(
                    f"lost the connection to PostgreSQL at {self._where}; the transaction"
                    f" was rolled back whole: {exc}") from exc
            if isinstance(exc, (errors.UndefinedTable, errors.UndefinedColumn)):
                raise StoreCorruptError(
                    f"{self._where}: the schema {self._schema!r} lacks part of the store"
                    f" ({str(exc).splitlines()[0]}):"
                    " it was changed outside memvara; restore it from a backup") from exc
            if isinstance(exc, errors.InsufficientPrivilege) and not self._read_only:
                raise StoreError(f"{self._where}: {exc} (a role that may only read opens the"
                                 " store with read_only=True)") from exc
            raise StoreError(f"{self._where}: {exc}") from exc

    # -- connections --------------------------------------------------------------
    def _check_open(self) -> None:
        if self._closed:
            raise ClosedError("the store is closed")

    def _reader(self) -> Any:
        """This thread's read connection (the writer inside its own write)."""
        self._check_open()
        if self._owner == threading.get_ident():
            return self._writer
        conn = getattr(self._local, "conn", None)
        if conn is None or conn.closed:
            conn = self._connect()
            self._local.conn = conn
            with self._readers_lock:  # an ended thread's reader is closed, not kept
                ended = [c for thread, c in self._readers if not thread.is_alive()]
                self._readers = [(thread, c) for thread, c in self._readers
                                 if thread.is_alive() and not c.closed]
                self._readers.append((threading.current_thread(), conn))
            for old in ended:
                old.close()
        return conn

    def _query(self, sql: str, params: Sequence[object] = ()) -> list[Any]:
        """The rows of a read; once more on a fresh connection if this thread's reader
        had dropped (a server restart, an idle timeout), as a read changes nothing. Not
        inside a write or a snapshot, whose transaction went with the connection."""
        conn = self._reader()
        try:
            with self._translated():
                return list(conn.execute(sql, params).fetchall())
        except StoreError:
            if not conn.closed or conn is self._writer or getattr(self._local, "snapshot", False):
                raise
        with self._translated():
            return list(self._reader().execute(sql, params).fetchall())

    def _exec(self, conn: Any, sql: str, params: Sequence[object] = ()) -> Any:
        """Run one statement of a write on ``conn``; its cursor."""
        with self._translated():
            return conn.execute(sql, params)

    def _many(self, conn: Any, sql: str, rows: Sequence[Sequence[object]]) -> int:
        """Run ``sql`` once a row, sent together (psycopg pipelines ``executemany``); the
        rows it changed, summed over them. One row is sent plainly: a pipeline's entry,
        sync and exit cost more than the round trip it would share."""
        if not rows:
            return 0
        with self._translated(), conn.cursor() as cur:
            if len(rows) == 1:
                cur.execute(sql, rows[0])
            else:
                cur.executemany(sql, rows)
            return int(cur.rowcount)

    # -- transactions -------------------------------------------------------------
    def transaction(self) -> AbstractContextManager[None]:
        """A write transaction: ``BEGIN`` outermost, ``SAVEPOINT`` nested."""
        return self._transaction()

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._lock.acquire()
        try:
            self._check_open()
            if self._read_only:
                raise ReadOnlyStoreError(
                    f"schema {self._schema!r} at {self._where} was opened read-only:"
                    " it answers reads and refuses every write")
            depth = self._depth
            if depth == 0:
                self._begin()
            else:
                self._exec(self._writer, f"SAVEPOINT sp{depth}")
        except BaseException:
            self._lock.release()
            raise
        self._depth, self._owner = depth + 1, threading.get_ident()
        marks = (len(self._after_commit), len(self._stats))
        try:
            yield
        except BaseException:
            self._end(depth, marks, failed=True)
            raise
        else:
            self._end(depth, marks, failed=False)

    def _begin(self) -> None:
        """``BEGIN`` on the writer; on a fresh connection if it had dropped since its last
        transaction (a server restart, an idle timeout): nothing of this one was sent yet,
        so trying once more loses nothing."""
        if not self._writer.closed:
            try:
                self._exec(self._writer, "BEGIN")
                return
            except StoreError:
                self._writer.close()
        self._writer = self._connect()
        self._exec(self._writer, "BEGIN")

    def _end(self, depth: int, marks: tuple[int, int], *, failed: bool) -> None:
        try:
            if not failed:
                try:
                    if depth == 0:  # the commit's statements pipelined: two round trips
                        with self._translated(), self._writer.pipeline():
                            self._seal()
                            self._apply_stats()
                            self._writer.execute("COMMIT")
                    else:
                        self._exec(self._writer, f"RELEASE SAVEPOINT sp{depth}")
                except BaseException:
                    self._rollback(depth, marks)
                    raise
            else:
                self._rollback(depth, marks)
        finally:
            self._depth = depth
            if depth == 0:
                self._owner = None
                hooks, self._after_commit = self._after_commit, []
            else:
                hooks = []
            self._lock.release()
        for hook in hooks:
            hook()

    def _rollback(self, depth: int, marks: tuple[int, int]) -> None:
        """Undo what the transaction (or savepoint) at ``depth`` did, and what it
        scheduled; on a dropped connection the server has undone it already."""
        del self._after_commit[marks[0]:]
        del self._stats[marks[1]:]
        if self._writer.closed:
            return
        with self._translated():
            if depth == 0:
                self._writer.execute("ROLLBACK")
            else:
                self._writer.execute(f"ROLLBACK TO SAVEPOINT sp{depth}")
                self._writer.execute(f"RELEASE SAVEPOINT sp{depth}")

    def _seal(self) -> None:
        """Runs inside every outermost write transaction just before it commits (the
        write log's one choke point, ``_log.WriteLog``); what it raises rolls it back.
        It runs in the commit's pipeline: a statement's rows arrive when fetched, and an
        error may surface at a later fetch or at the ``COMMIT``."""

    def _apply_stats(self) -> None:
        """Add the transaction's text-index deltas to this connection's shard, as its
        last statements: a writer waits on a shard only while its holder commits, so the
        shards never join a lock cycle with the slot locks (``_writes``). Every writer
        takes the rows in one order (``text_stats`` by table, then ``term_stats`` by
        table and token), so two sharing a shard wait for each other, never in a cycle."""
        totals: dict[str, list[int]] = {}
        terms: dict[str, dict[str, int]] = {}
        for table, docs, tokens, counts in self._stats:
            total = totals.setdefault(table, [0, 0])
            total[0] += docs
            total[1] += tokens
            held = terms.setdefault(table, {})
            for term, n in counts.items():
                held[term] = held.get(term, 0) + n
        self._stats = []
        for table, (docs, _) in totals.items():
            if docs > 0:
                self._grown[table] = self._grown.get(table, 0) + docs
        if any(n >= ANALYZE_MIN_ROWS and n >= ANALYZE_GROWTH * self._planned.get(table, 0.0)
               for table, n in self._grown.items()):
            self._after_commit.append(self._refresh_statistics)
        for table, (docs, tokens) in sorted(totals.items()):
            self._exec(self._writer, (
                "INSERT INTO text_stats (tbl, shard, docs, tokens)"
                " VALUES (%s, pg_backend_pid() %% 64, %s, %s) ON CONFLICT (tbl, shard) DO UPDATE"
                " SET docs = text_stats.docs + excluded.docs,"
                " tokens = text_stats.tokens + excluded.tokens"), [table, docs, tokens])
        spent: dict[str, list[str]] = {}
        for table, counts in sorted(terms.items()):
            changed = sorted((t, n) for t, n in counts.items() if n)
            self._exec(self._writer, (
                "INSERT INTO term_stats (tbl, term, shard, docs) SELECT %s, d.term,"
                " pg_backend_pid() %% 64, d.docs FROM unnest(%s::text[], %s::bigint[])"
                " WITH ORDINALITY AS d(term, docs, i) ORDER BY d.i"
                " ON CONFLICT (tbl, term, shard) DO UPDATE SET docs = term_stats.docs + excluded.docs"
            ), [table, [t for t, _ in changed], [n for _, n in changed]])
            spent[table] = [t for t, n in changed if n < 0]
        for table, waiting in self._unswept.items():
            spent[table] = sorted(waiting.union(spent.get(table, ())))
        if any(spent.values()):
            self._after_commit.insert(0, lambda: self._drop_spent(spent))

    def _pending(self, table: str) -> tuple[int, int, dict[str, int]]:
        """What this thread's open write has added to ``table``'s counts so far (rows,
        tokens, rows per token): its reads see its rows, not yet their counts."""
        docs = tokens = 0
        terms: dict[str, int] = {}
        if self._owner == threading.get_ident():
            for tbl, d, t, counts in self._stats:
                if tbl == table:
                    docs, tokens = docs + d, tokens + t
                    for term, n in counts.items():
                        terms[term] = terms.get(term, 0) + n
        return docs, tokens, terms

    def _refresh_statistics(self) -> None:
        """After a commit: fresh planner statistics for a text table (and its terms) this
        store has grown by ``ANALYZE_MIN_ROWS`` rows and a fifth of its size since it last
        took them. Autovacuum would, but only after its next nap (a minute by default),
        and until then the planner can take a bulk-filled table for nearly empty and read
        a slot through the scope's every row (9-11 ms a write at 20,000 claims, against
        ~0.3 ms with statistics). The write has committed: an ``ANALYZE`` that cannot get
        its lock at once (autovacuum is at it) is skipped, not raised."""
        with self._lock:
            for table, grown in sorted(self._grown.items()):
                if grown < ANALYZE_MIN_ROWS:
                    continue
                try:
                    with self._translated():
                        known = self._planned.get(table)
                        if known is None:  # reltuples: -1 (or 0) before any statistics
                            (found,) = self._writer.execute(
                                "SELECT reltuples FROM pg_class WHERE oid = %s::regclass",
                                [table]).fetchone()
                            known = self._planned[table] = max(0.0, float(found))
                        if grown < ANALYZE_GROWTH * known:
                            continue
                        with self._writer.transaction():
                            self._writer.execute("SET LOCAL lock_timeout = 50")
                            self._writer.execute(f"ANALYZE {table}, {TERM_TABLES[table]}")
                except StoreError:
                    continue
                self._planned[table], self._grown[table] = known + grown, 0

    def _drop_spent(self, spent: Mapping[str, Sequence[str]]) -> None:
        """After a commit that took rows off these tokens' counts: delete the counts of
        those now held by no row (so a token of erased text leaves no trace). In its own
        transaction, locking a token's shards first (in the order every writer takes
        them), then deleting them only if they sum to 0: a shard row another writer adds
        meanwhile is not among them, and deleting rows that sum to 0 changes no count.

        The write itself has committed by then, so a sweep that fails (it could not get
        its locks within ``lock_timeout``, or the connection dropped) does not fail it:
        the tokens are kept and swept by this store's next commit or its ``close()``."""
        try:
            self._sweep(spent)
        except StoreError:
            self._unswept = {table: set(tokens) for table, tokens in spent.items() if tokens}
        else:
            self._unswept = {}

    def _sweep(self, spent: Mapping[str, Sequence[str]]) -> None:
        with self._lock, self._translated(), self._writer.transaction():
            for table, tokens in sorted(spent.items()):
                held: dict[str, list[tuple[int, int]]] = {}
                for term, shard, docs in self._writer.execute(
                        "SELECT term, shard, docs FROM term_stats WHERE tbl = %s"
                        " AND term = ANY(%s) ORDER BY term, shard FOR UPDATE",
                        [table, sorted(tokens)]).fetchall():
                    held.setdefault(str(term), []).append((int(shard), int(docs)))
                gone = [(term, shard) for term, rows in held.items()
                        if sum(docs for _, docs in rows) == 0 for shard, _ in rows]
                self._writer.execute(
                    "DELETE FROM term_stats WHERE tbl = %s AND (term, shard) IN"
                    " (SELECT * FROM unnest(%s::text[], %s::int[]))",
                    [table, [t for t, _ in gone], [s for _, s in gone]])

    @contextmanager
    def _writing(self) -> Iterator[Any]:
        """The writer inside a transaction, opening one only if this thread has none."""
        if self._owner == threading.get_ident():
            yield self._writer
            return
        with self.transaction():
            yield self._writer

    def snapshot(self) -> AbstractContextManager[None]:
        """Reads inside see one state of the store; see ``Store.snapshot``."""
        return self._snapshot()

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        conn = self._reader()
        if conn is self._writer or getattr(self._local, "snapshot", False):
            yield
            return
        begin = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"
        try:
            self._exec(conn, begin)
        except StoreError:  # dropped while idle: nothing was read yet, so on a fresh one
            conn = self._reader()
            self._exec(conn, begin)
        self._local.snapshot = True
        try:
            yield
        finally:
            self._local.snapshot = False
            if not conn.closed:
                conn.execute("COMMIT")

    @property
    def read_only(self) -> bool:
        """Whether this store was opened read-only."""
        return self._read_only

    @property
    def schema(self) -> str:
        """The PostgreSQL schema this store's tables live in."""
        return self._schema

    @property
    def closed(self) -> bool:
        """Whether ``close()`` has run."""
        return self._closed

    def close(self) -> None:
        """Close every connection (after one more try at a sweep a lock held off).
        Idempotent."""
        with self._lock:
            if self._closed:
                return
            if self._unswept:
                self._drop_spent({table: sorted(tokens) for table, tokens in self._unswept.items()})
            self._shut()

    def _shut(self) -> None:
        """Mark the store closed and close every connection it opened."""
        self._closed = True
        with self._readers_lock:
            readers, self._readers = self._readers, []
        for conn in [self._writer, *(c for _, c in readers)]:
            conn.close()
