"""The vector sidecar: fixed-width float32 rows in one memory-mapped file.

Vectors live here and only here (never also as BLOBs in SQLite), one slot per claim or
episode; the database row holds the slot number. The file is a 64-byte header (magic,
width) followed by ``capacity`` rows; it grows by doubling and never shrinks. Erasure
zeroes a slot's bytes and the slot is reused.

Growing maps a new, larger view; a reader still holding the old view keeps reading valid
memory, so readers never take a lock here. A ``path`` of ``None`` keeps the rows in
process memory, for ``:memory:`` stores.
"""

from __future__ import annotations

import errno
import os
import struct
import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .._errors import DimensionMismatchError, StorageFullError, StoreCorruptError, StoreError

__all__ = ["VectorFile"]

_MAGIC = b"MVVECS01"
_HEADER = 64
_MIN_CAPACITY = 64
_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}

Matrix = npt.NDArray[np.float32]


class VectorFile:
    """Slots of float32 vectors, in a sidecar file or in memory."""

    def __init__(self, path: str | None, dim: int | None) -> None:
        self._path = path
        self._dim = dim
        self._lock = threading.Lock()
        self._rows: Matrix | None = None  # a plain ndarray view: memmap indexing is slower
        self._mapping: np.memmap[tuple[int, int], np.dtype[np.float32]] | None = None
        if path is not None and os.path.exists(path):
            self._open_existing(path)

    @property
    def dim(self) -> int | None:
        """The width of every row, fixed by the first write; ``None`` before it."""
        return self._dim

    @property
    def capacity(self) -> int:
        """How many slots the current mapping holds."""
        rows = self._rows
        return 0 if rows is None else int(rows.shape[0])

    def _open_existing(self, path: str) -> None:
        with open(path, "rb") as handle:
            header = handle.read(_HEADER)
        if len(header) < _HEADER or header[:8] != _MAGIC:
            raise StoreCorruptError(f"{path}: not a memvara vector sidecar (bad header)")
        (dim,) = struct.unpack_from("<I", header, 8)
        if self._dim is not None and dim != self._dim:
            raise StoreCorruptError(
                f"{path}: sidecar holds {dim}-d vectors but the store records {self._dim}-d"
            )
        self._dim = dim
        self._map(self._file_capacity())

    def slots_on_disk(self) -> int:
        """How many slots the file holds (``-1`` when there is no file; for an
        in-memory sidecar, its capacity)."""
        if self._path is None:
            return self.capacity
        if not os.path.exists(self._path):
            return -1
        return self._file_capacity()  # an existing file was opened, so its width is known

    def _file_capacity(self) -> int:
        assert self._path is not None and self._dim is not None  # noqa: S101 - internal
        size = os.path.getsize(self._path)
        return max(0, (size - _HEADER) // (self._dim * 4))

    def _map(self, capacity: int) -> None:
        if capacity == 0:
            self._rows = self._mapping = None
            return
        assert self._dim is not None  # noqa: S101 - internal invariant
        if self._path is None:
            grown = np.zeros((capacity, self._dim), dtype=np.float32)
            if self._rows is not None:
                grown[: self._rows.shape[0]] = self._rows
            self._rows = grown
        else:
            self._mapping = np.memmap(
                self._path, dtype=np.float32, mode="r+", offset=_HEADER,
                shape=(capacity, self._dim),
            )
            self._rows = self._mapping.view(np.ndarray)

    def _create(self, dim: int) -> None:
        self._dim = dim
        if self._path is not None:
            with open(self._path, "wb") as handle:
                handle.write(_MAGIC + struct.pack("<I", dim).ljust(_HEADER - 8, b"\x00"))

    def _ensure(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        if self._path is not None:
            on_disk = self._file_capacity()  # another process may have grown it
            if needed <= on_disk:
                self._map(on_disk)
                return
        capacity = max(_MIN_CAPACITY, self.capacity)
        while capacity < needed:
            capacity *= 2
        if self._path is not None:
            assert self._dim is not None  # noqa: S101 - internal invariant
            try:
                with open(self._path, "r+b") as handle:
                    handle.truncate(_HEADER + capacity * self._dim * 4)
            except OSError as exc:
                if exc.errno in _FULL:
                    raise StorageFullError(
                        f"{self._path}: no room to grow the vector sidecar ({exc.strerror})"
                    ) from exc
                raise StoreError(f"{self._path}: cannot grow the vector sidecar: {exc}") from exc
        self._map(capacity)

    def write(self, slots: Sequence[int], vectors: Matrix) -> None:
        """Store ``vectors[i]`` in ``slots[i]``, growing the file if needed."""
        if len(slots) == 0:
            return
        width = int(vectors.shape[1])
        with self._lock:
            if self._dim is not None and width != self._dim:
                raise DimensionMismatchError(
                    f"vectors are {width}-d but this store holds {self._dim}-d vectors"
                )
            if self._rows is None and (self._path is None or not os.path.exists(self._path)):
                self._create(width)  # the first vector (the width may be known already)
            self._ensure(max(slots) + 1)
            rows = self._rows
            assert rows is not None  # noqa: S101 - _ensure mapped it
            if len(slots) == 1:
                rows[slots[0]] = vectors[0]
            else:
                rows[np.asarray(slots, dtype=np.int64)] = vectors

    def read(self, slots: Sequence[int]) -> Matrix:
        """The vectors in ``slots``, as a new array; zeros for slots never written.

        A read never grows the file; it only maps what another writer already grew.
        """
        if self._dim is None:
            return np.zeros((len(slots), 0), dtype=np.float32)
        index = np.asarray(slots, dtype=np.int64)
        if index.size and int(index.max()) >= self.capacity and self._path is not None:
            with self._lock:
                on_disk = self._file_capacity()
                if on_disk > self.capacity:
                    self._map(on_disk)
        rows = self._rows
        if rows is not None and (not index.size or int(index.max()) < rows.shape[0]):
            return rows.take(index, axis=0)  # the common case: one gather, no mask
        out = np.zeros((len(slots), self._dim), dtype=np.float32)
        if rows is not None:
            inside = index < rows.shape[0]
            out[inside] = rows[index[inside]]
        return out

    def zero(self, slots: Sequence[int]) -> None:
        """Overwrite ``slots`` with zeros and push the bytes to the file."""
        if not slots or self._rows is None:
            return
        with self._lock:
            rows = self._rows
            index = np.asarray([s for s in slots if s < rows.shape[0]], dtype=np.int64)
            rows[index] = 0.0
            self._flush_locked()

    def flush(self) -> None:
        """Write dirty pages of the mapping back to the file."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._mapping is not None:
            self._mapping.flush()

    def close(self) -> None:
        """Flush and drop the mapping; readers' old views stay valid until released."""
        with self._lock:
            self._flush_locked()
            self._rows = self._mapping = None
