"""Re-embedding: every vector of the store replaced at once, by new sidecar files
written aside and swapped in under a new generation once the database commits to it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager

import numpy as np
import numpy.typing as npt

from ..._errors import DimensionMismatchError, ReadOnlyStoreError
from ._core import (
    ADVANCE_VECTOR_WATERMARK, SIDECARS, TEXT_INDEXES, UNEMBEDDED_EPISODES, StoreCore,
)
from ._vectors import VectorFile

__all__ = ["Reembedding"]


class Reembedding(StoreCore):
    """``vector_texts``, ``embedder_label`` and ``rebuild_vectors``."""

    def vector_texts(self, table: str, after: int, limit: int) -> list[tuple[int, str]]:
        """What ``table``'s vectors encode, a page at a time; see ``Store.vector_texts``."""
        column = TEXT_INDEXES[table][1]
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
        if self._read_only is not None:  # before any file is written aside
            raise ReadOnlyStoreError(
                f"{self._path}: this store is read-only, as {self._read_only}: its vectors"
                " cannot be rebuilt")
        generation = self._generation + 1
        fresh: dict[str, VectorFile] = {}
        for table, suffix in SIDECARS.items():
            path = None if self._memory else self._path + suffix + ".new"
            if path is not None and os.path.exists(path):
                os.remove(path)  # an earlier rebuild that never committed
            fresh[table] = VectorFile(path, None, generation)
        covered = dict.fromkeys(SIDECARS, 0)

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
                        # they join the backlog (claims are embedded by the next write;
                        # searches encode both kinds for themselves meanwhile).
                        lost = self._writer.execute(
                            f"UPDATE {table} SET vec_slot = NULL WHERE vec_slot IS NOT NULL"
                            " AND rowid > ?", (top,)).rowcount
                        if table == "episodes":
                            self._writer.execute(
                                "DELETE FROM store_meta WHERE key = ?", (UNEMBEDDED_EPISODES,))
                            if lost:
                                self._writer.execute(
                                    "INSERT INTO store_meta (key, value) VALUES (?, ?)",
                                    (UNEMBEDDED_EPISODES, top + 1))
                        self._writer.execute(
                            f"UPDATE {table} SET vec_slot = rowid WHERE vec_slot IS NULL"
                            " AND rowid <= ?", (top,))
                    self._writer.execute(
                        "INSERT OR REPLACE INTO store_meta (key, value)"
                        " VALUES ('vector_dim', ?), ('vectors_generation', ?), ('embedder', ?),"
                        " ('vectors_claims', ?)",
                        (str(dim), str(generation), label, str(covered["claims"])),
                    )
                    self._writer.execute(ADVANCE_VECTOR_WATERMARK)
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
            for suffix in SIDECARS.values():
                if not self._memory and os.path.exists(self._path + suffix + ".new"):
                    os.remove(self._path + suffix + ".new")
            raise
