"""Vectors a search computes for rows the store holds none for yet.

Single writes store their claims without vectors (``_write.writer``: one batched encode
serves ``EMBED_BATCH`` of them), and a read may not store any (a search never writes:
``store.base``, "Reads never write"). So a search asks the store which of the rows its
filter admits wait (``Store.unembedded_claims``, ``unembedded_episodes``), encodes
those itself and ranks them with the stored ones. The vectors are kept in this process,
by row id and text, up to ``CACHED`` of them (the least recently used go first), so the
next search encodes only what is new; an entry goes when the writer stores that row's
vector (``Writer.on_embedded``), the embedder changes, or anything is erased.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .._write.encode import encode_checked
from ..embed import Embedder

__all__ = ["CACHED", "WaitingVectors"]

CACHED = 4096
"""The most vectors of waiting rows one process keeps (8 MiB at 512-d): the writer
stores a backlog once 256 claims wait, so this covers it many times over."""

_Key = tuple[str, str, str]  # (table, row id, text)


class WaitingVectors:
    """The vectors of rows that wait for the store's, computed for searches."""

    def __init__(self, limit: int = CACHED) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._vectors: OrderedDict[_Key, npt.NDArray[np.float32]] = OrderedDict()
        self._embedder: Embedder | None = None  # whose vectors these are

    def cosines(
        self, embedder: Embedder, table: str, rows: Sequence[tuple[str, str]],
        vector: npt.NDArray[np.float32],
    ) -> dict[str, float]:
        """``vector``'s dot product with the vector of each ``(row id, text)`` of
        ``table`` (``claims`` or ``episodes``), encoding the ones not kept yet in one
        call (outside the lock: a search's encoding holds up no other search's)."""
        if not rows:
            return {}
        keys = [(table, key, text) for key, text in rows]
        found: dict[_Key, npt.NDArray[np.float32]] = {}
        with self._lock:
            if embedder is not self._embedder:  # another model's vectors mean nothing now
                self._vectors.clear()
                self._embedder = embedder
            for key in keys:
                if key in self._vectors:
                    self._vectors.move_to_end(key)
                    found[key] = self._vectors[key]
        missing = [key for key in dict.fromkeys(keys) if key not in found]
        if missing:
            found.update(zip(missing, encode_checked(embedder, [text for _, _, text in missing])))
            with self._lock:
                if self._embedder is embedder:
                    self._vectors.update((key, found[key]) for key in missing)
                    while len(self._vectors) > self._limit:
                        self._vectors.popitem(last=False)
        matrix = np.stack([found[key] for key in keys])
        scores = np.einsum("ij,j->i", matrix, vector.astype(np.float32, copy=False))
        return {key: float(score) for (_, key, _), score in zip(keys, scores.tolist())}

    def drop(self, table: str, ids: Sequence[str]) -> None:
        """Forget the vectors of these rows of ``table``: the store holds theirs now."""
        if not ids:
            return
        gone = set(ids)
        with self._lock:
            for key in [key for key in self._vectors if key[0] == table and key[1] in gone]:
                del self._vectors[key]

    def clear(self) -> None:
        """Forget every vector kept."""
        with self._lock:
            self._vectors.clear()

    def __len__(self) -> int:
        return len(self._vectors)
