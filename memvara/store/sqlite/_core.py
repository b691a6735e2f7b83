"""The store's files: schema migrations, the vector sidecars, and the watermarks that
say which rows the text index and the sidecar already hold.

``StoreCore`` opens a file (migrating an older one, refusing a newer or foreign one,
settling a re-embedding a crash interrupted) and closes it; every section of
``SQLiteStore`` (``store.py``) subclasses it and shares its state through ``self``.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ..._domain.entities import entity_key as fold_entity
from ..._errors import (
    DimensionMismatchError,
    NotAStoreError,
    ReadOnlyStoreError,
    SchemaVersionError,
    StoreCorruptError,
    StoreError,
)
from . import _bm25
from ._connections import MEMORY, Connections, _Translating
from ._migrations import APPLICATION_ID, FOLD_FUNCTION, MIGRATIONS, SCHEMA_VERSION
from ._tail import TailSearch
from ._translate import translate
from ._vectors import VectorFile, read_header

__all__ = [
    "ADVANCE_VECTOR_WATERMARK", "RESERVATION", "SIDECARS", "TEXT_INDEXES", "TEXT_INDEX_BATCH",
    "UNEMBEDDED_EPISODES", "StoreCore",
]

TEXT_INDEXES = {"claims": ("claims_fts", "text"), "episodes": ("episodes_fts", "content")}
SIDECARS = {"claims": ".vecs", "episodes": ".episodes.vecs"}
"""Each table's vectors, in a file beside the database; a row's vector is at its rowid."""
RESERVATION = (
    "(SELECT coalesce(max(rowid), 0) FROM %s),"
    " (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = 'fts_%s')"
)
"""Where new rows of a table go: its highest rowid and its text index's watermark."""
_GENERATION = (
    "CAST(coalesce((SELECT value FROM store_meta WHERE key = 'vectors_generation'), 0)"
    " AS INTEGER)"
)
"""How many times the store's vectors were rebuilt (``_write_vectors`` reopens its
sidecars when another process rebuilt them)."""
ADVANCE_VECTOR_WATERMARK = (
    "UPDATE store_meta SET value = coalesce("
    "(SELECT min(rowid) - 1 FROM claims"
    "  WHERE rowid > CAST(store_meta.value AS INTEGER) AND vec_slot IS NULL),"
    " (SELECT coalesce(max(rowid), 0) FROM claims))"
    " WHERE key = 'vectors_claims'"
)
"""Move the watermark to just below the first claim still waiting (or to the last row
when none waits). New rows always go above it: they start above the text index's
watermark, which erasure first moves past every row it removes."""

TEXT_INDEX_BATCH = 256
"""Rows written one at a time wait for the full-text index until this many do."""
UNEMBEDDED_EPISODES = "episodes_unembedded"
"""The ``store_meta`` key of the lowest rowid of a turn that may have no vector: set
only where one is stored without (``insert_episodes(..., None)``, a re-embedding that
missed rows written meanwhile), so reads look for such turns only where they can be."""


ZERO_PENDING = "zero_pending_"
"""``store_meta`` keys (``zero_pending_claims``, ...): the vector slots an erasure has
committed to zeroing, until they are zero on disk."""


class StoreCore(Connections):
    """A store's files, opened: see ``SQLiteStore`` for the arguments and errors."""

    FILE_SUFFIXES: tuple[str, ...] = ("", "-wal", "-shm", *SIDECARS.values())
    """What a store at ``path`` may add to the name of each of its files."""

    def __init__(
        self,
        path: str | os.PathLike[str] = MEMORY,
        *,
        busy_timeout: float = 30.0,
        tracer: Callable[[str, Sequence[object]], None] | None = None,
        read_only: bool = False,
    ) -> None:
        super().__init__(path, busy_timeout=busy_timeout, tracer=tracer, read_only=read_only)
        self._term_counts = _bm25.TermCounts()  # phrase counts for text search plans
        self._tail = TailSearch()  # text searches of rows the index does not hold yet
        self._zeroed: dict[str, str] = {}  # each table's erasure note this process zeroed
        try:
            self._migrate()
            self._generation = int(self._meta("vectors_generation") or 0)
            self._settle_sidecars()
            self._vectors = self._open_sidecars()
            self._check_sidecars()
            self._finish_zeroing()
        except BaseException:
            self._writer.close()
            raise

    # -- opening and closing ------------------------------------------------------------
    def _open_sidecars(self) -> dict[str, VectorFile]:
        dim = self._meta("vector_dim")
        return {
            table: VectorFile(
                None if self._memory else self._path + suffix,
                None if dim is None else int(dim),
                self._generation,
                read_only=self._read_only is not None,
            )
            for table, suffix in SIDECARS.items()
        }

    def _settle_sidecars(self) -> None:
        """Finish or undo a ``rebuild_vectors`` a crash interrupted.

        A rebuild writes ``<sidecar>.new`` files stamped with the next generation, commits
        that generation to ``store_meta``, then renames them over the live ones. So a
        live file stamped with an older generation than the store's means the rename did
        not happen: the ``.new`` file is the one to use (or, with none, the table had no
        vectors to carry over). A ``.new`` file the store never committed to is dropped,
        unless it is stamped with a generation still to come: a ``reembed()`` running in
        another process writes it (the next rebuild replaces it if that one died).
        """
        if self._memory:
            return
        for suffix in SIDECARS.values():
            live, fresh = self._path + suffix, self._path + suffix + ".new"
            live_header, fresh_header = read_header(live), read_header(fresh)
            stale = live_header is not None and live_header[1] < self._generation
            # a table that had no vector file before the rebuild has only the new one
            stale |= live_header is None and fresh_header is not None \
                and fresh_header[1] == self._generation
            if self._read_only is not None:
                if stale:  # settling renames files: refused, and the live file is stale
                    raise ReadOnlyStoreError(
                        f"{live}: a re-embedding was interrupted and must be settled"
                        f" before the vectors can be read, which writes; the store is"
                        f" read-only, as {self._read_only}: open it once writable")
                continue  # a leftover .new file the store never committed to: harmless
            if stale:
                if fresh_header is not None and fresh_header[1] == self._generation:
                    os.replace(fresh, live)
                else:
                    os.remove(live)
            elif fresh_header is not None and fresh_header[1] > self._generation:
                continue  # perhaps another process's rebuild, running: left alone
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
                raise translate(exc) from exc
            if top is None:
                continue
            on_disk = sidecar.slots_on_disk()
            if on_disk <= top:
                name = self._path + SIDECARS[table]
                state = "is missing" if on_disk < 0 else f"holds {on_disk} of {top + 1} slots"
                raise StoreCorruptError(
                    f"{name} {state}: the vectors of stored {table} are lost (the sidecar"
                    " holds the only copy); restore it from a backup"
                )

    def close(self) -> None:
        """Close every connection and the sidecar. Idempotent."""
        self._close_readers()  # first: a read waited for may itself wait on the lock
        with self._lock:
            if self._closed:
                return
            if not self._memory and self._read_only is None:
                try:
                    with self._writing() as conn:  # flush_text_index, which is optional
                        self._index_all(conn)
                    # Without waiting: a reader elsewhere on an older snapshot held close()
                    # for the whole busy timeout (30 s), for a truncation it only defers.
                    self._writer.execute("PRAGMA busy_timeout = 0")
                    self._writer.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except (StoreError, sqlite3.Error):  # pragma: no cover - needs a failing disk
                    pass  # best effort: unindexed rows wait for the next flush, WAL replays
            self._closed = True
            self._writer.close()
            self._tail.close()
            for sidecar in self._vectors.values():
                sidecar.close()

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
            raise NotAStoreError(
                f"{self._path}: a SQLite database, but not a memvara store (another"
                " application's); pass the path of a store, or of a new file to create one")
        if version > SCHEMA_VERSION:
            raise SchemaVersionError(
                f"{self._path}: written by a newer memvara (schema {version});"
                f" this version reads schema {SCHEMA_VERSION} and older"
            )
        if version == SCHEMA_VERSION:
            return
        if self._read_only is not None:  # migrating writes
            if not tables:
                raise NotAStoreError(
                    f"{self._path}: an empty file, not a memvara store yet, and the store"
                    f" is read-only, as {self._read_only}; open it writable to create one")
            raise ReadOnlyStoreError(
                f"{self._path}: written by an older memvara (schema {version}); this"
                f" version migrates it to schema {SCHEMA_VERSION} on open, which writes, and"
                f" the store is read-only, as {self._read_only}: open it once writable")
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
            raise translate(exc) from exc

    def _meta(self, key: str) -> str | None:
        """A ``store_meta`` value, read as a write's reads are (under the lock: another
        thread may be inside a write on that connection; closed: ``ClosedError``)."""
        rows = self._write_side_query("SELECT value FROM store_meta WHERE key = ?", (key,))
        return str(rows[0][0]) if rows else None

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
        generation: int | None = None,
    ) -> list[int]:
        """Write ``vectors[i]`` at slot ``rowids[i]`` (a row's vector sits at its rowid).
        ``generation``: the store's vector generation when the caller read it already,
        in this transaction."""
        if generation is None:
            (generation,) = conn.execute(f"SELECT {_GENERATION}").fetchone()
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
        """Zero the vectors in ``slots`` once the transaction commits. The slots are noted
        in ``store_meta`` in the same transaction, so a process killed between the commit
        and the zeroing leaves the note, and the next writable open zeroes them; a note
        this process has zeroed is replaced by the next erasure's, not added to.

        The rows were under the text index's watermark (erasure flushes it first), and
        new rowids start above it, so no later row can have been given these slots.
        """
        if not slots:
            return
        key = ZERO_PENDING + table
        noted = self._writer.execute("SELECT value FROM store_meta WHERE key = ?", (key,)).fetchone()
        held = [] if noted is None or noted[0] == self._zeroed.get(table) else json.loads(noted[0])
        note = json.dumps(sorted({*held, *slots}))
        self._writer.execute("INSERT OR REPLACE INTO store_meta (key, value) VALUES (?, ?)",
                             (key, note))
        self._after_commit.append(lambda: self._zero_noted(table, note))

    def _zero_noted(self, table: str, note: str) -> None:
        self._vectors[table].zero(json.loads(note))
        self._zeroed[table] = note

    def _finish_zeroing(self) -> None:
        """Zero the slots a killed process noted and never zeroed (see above)."""
        if self._read_only is not None:
            return
        for table in SIDECARS:
            note = self._meta(ZERO_PENDING + table)
            if note is not None:  # zeroed, then dropped (opening: the log is not up yet)
                self._vectors[table].zero(json.loads(note))
                with _Translating(self._writer) as conn:  # a failure closes the store unopened
                    conn.execute("BEGIN IMMEDIATE")
                    conn.execute("DELETE FROM store_meta WHERE key = ? AND value = ?",
                                 (ZERO_PENDING + table, note))
                    conn.execute("COMMIT")

    def vectors(self, slots: Sequence[int], table: str = "claims") -> npt.NDArray[np.float32]:
        """The stored vectors of ``table`` (``claims`` or ``episodes``) at ``slots``."""
        return self._vectors[table].read(slots)

    # -- where new rows go, and the text index catching up with them -----------------
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
        if vectors is None:
            last, indexed = conn.execute(f"SELECT {RESERVATION % (table, table)}").fetchone()
            return max(int(last), int(indexed)), int(indexed), [None] * n
        # One statement reads the vector generation too (a turn's add() writes a vector).
        last, indexed, generation = conn.execute(
            f"SELECT {RESERVATION % (table, table)}, {_GENERATION}").fetchone()
        last = max(int(last), int(indexed))
        rowids = range(last + 1, last + 1 + n)
        return last, int(indexed), list(
            self._write_vectors(conn, table, rowids, vectors, int(generation)))

    def _index_text(
        self, conn: sqlite3.Connection, table: str, indexed: int, top: int, *, force: bool
    ) -> int:
        """Index the rows of ``table`` above the watermark ``indexed`` up to ``top``, if
        ``force`` or at least ``TEXT_INDEX_BATCH`` of them wait; how many were indexed.
        """
        if top <= indexed or (not force and top - indexed < TEXT_INDEX_BATCH):
            return 0
        fts, column = TEXT_INDEXES[table]
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
        for table in TEXT_INDEXES:
            top, indexed = conn.execute(
                f"SELECT (SELECT coalesce(max(rowid), 0) FROM {table}),"
                " (SELECT CAST(value AS INTEGER) FROM store_meta WHERE key = ?)",
                (f"fts_{table}",),
            ).fetchone()
            done += self._index_text(conn, table, int(indexed), int(top), force=True)
        return done
