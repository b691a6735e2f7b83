"""The vector sidecar: fixed-width float32 rows in one memory-mapped file.

Vectors live here and only here (never also as BLOBs in SQLite), one slot per claim or
episode; the database row holds the slot number. The file is a 64-byte header (magic,
width) followed by ``capacity`` rows; it grows by an eighth at a time (``_GROWTH``) and
never shrinks. Erasure zeroes a slot's bytes and the slot is reused.

Growing maps a new, larger view; a reader still holding the old view keeps reading valid
memory, so readers never take a lock here. A ``path`` of ``None`` keeps the rows in
process memory, for ``:memory:`` stores.

Several processes may share one file. Each writes only under the database's write lock,
at slots it reserved there, so writes never overlap; what another process did is picked
up lazily: a file it created is opened (``_adopt``), a file it grew is mapped again.

``top`` ranks the first ``count`` slots against a query vector in one contiguous pass.
Past ``EXACT_SLOTS`` it first ranks them by the Hamming distance of their sign bits
(``_signs``) and scores only the nearest ``PREFILTER`` (or more) exactly. The sign bits
live in process memory, are taken lazily, and follow this process's writes; a slot that
was all zeros when its bits were taken (no vector yet) is looked at again on every
ranking, so a vector another process writes there later is seen. (A slot another
process rewrites after this one took its bits would keep stale bits: slots are written
once per row, so that takes a rolled-back write whose rowid was then reused.)
"""

from __future__ import annotations

import errno
import os
import struct
import threading
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from ..._errors import (
    DimensionMismatchError, ReadOnlyStoreError, StorageFullError, StoreCorruptError, StoreError,
)
from . import _signs
from . import _sparse

__all__ = ["EXACT_SLOTS", "PREFILTER", "SPARSE_SLOTS", "VectorFile", "dot", "read_header"]

EXACT_SLOTS = 1 << 13
"""Up to this many slots ``top`` scores every one exactly (16 MB at 512-d)."""
SPARSE_SLOTS = 2048
"""From this many slots on, a sparse query (``HashingEmbedder``'s) is scored exactly from
postings of the nonzero values (``_sparse``) when the rows are sparse too: ~0.4 ms
against ~1-2 ms for the dense pass at 8,000 slots, and exact where the sign-bit pass
approximates."""
PREFILTER = 2048
"""Past ``EXACT_SLOTS``, how many slots the sign-bit pass hands to exact scoring, at
least: also at least a 32nd of the slots and 8 per wanted one. With all-MiniLM-L6-v2
vectors of LOCOMO's turns, a pool of 2% of the rows held 97% of the exact top 10 (77%
of the top 50), 5% held 99.8% (95%); see docs/INTERNALS.md for the lexical embedder."""

_MAGIC = b"MVVECS01"
_HEADER = 64
_MIN_CAPACITY = 64
_GROWTH = 8
"""A file grows by ``1/_GROWTH`` of its capacity (or to what a write needs, if more), so
its apparent size stays within an eighth of what its rows use: doubling left a file up
to twice their size, and a file's size is what a copy or a backup takes. Growing a file
only extends it and maps it again; the rows in process memory are copied on each
growth, so they double instead."""
_FULL = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}

Matrix = npt.NDArray[np.float32]
Slots = npt.NDArray[np.int64]


def _einsum_dot(rows: Matrix, vector: Matrix) -> Matrix:
    scores: Matrix = np.einsum("ij,j->i", rows, vector)
    return scores


dot: Callable[[Matrix, Matrix], Matrix] = getattr(np, "vecdot", _einsum_dot)
"""Each row's dot product with a vector, on this thread: ``numpy.vecdot`` (numpy 2) or
``einsum``. Not ``@``: BLAS splits a matrix-vector product across threads, and on a busy
machine the call then waits for a second core (a p50 of 8 ms against 0.75 ms for 8,000
rows here while other processes ran)."""


def _os_error(path: str, doing: str, exc: OSError) -> StoreError:
    """The memvara error for a failed ``doing`` (``create``, ``grow``) of the sidecar."""
    if exc.errno in _FULL:
        return StorageFullError(f"{path}: no room to {doing} the vector sidecar ({exc.strerror})")
    return StoreError(f"{path}: cannot {doing} the vector sidecar: {exc}")


def read_header(path: str) -> tuple[int, int] | None:
    """``(dim, generation)`` from a sidecar's header; ``None`` if it is not one."""
    try:
        with open(path, "rb") as handle:
            header = handle.read(_HEADER)
    except OSError:
        return None
    if len(header) < _HEADER or header[:8] != _MAGIC:
        return None
    dim, generation = struct.unpack_from("<II", header, 8)
    return int(dim), int(generation)


class VectorFile:
    """Slots of float32 vectors, in a sidecar file or in memory."""

    def __init__(
        self, path: str | None, dim: int | None, generation: int = 0, *, read_only: bool = False
    ) -> None:
        self._path = path
        self._read_only = read_only  # mapped read-only: writing raises (the store refuses first)
        self._dim = dim
        self._generation = generation  # stamped in the header of a file this creates
        self._lock = threading.Lock()
        self._rows: Matrix | None = None  # a plain ndarray view: memmap indexing is slower
        self._mapping: np.memmap[tuple[int, int], np.dtype[np.float32]] | None = None
        # Sign bits of slots [0, _signed), word-major; _blank: those of them that were all
        # zeros when taken (rechecked on each use: another process may fill them).
        self._signs: _signs.Bits | None = None
        self._signed = 0
        self._blank: set[int] = set()
        self._postings = _sparse.Postings()  # for sparse queries over sparse rows
        if path is not None and os.path.exists(path):
            self._open_existing(path)

    @property
    def dim(self) -> int | None:
        """The width of every row, fixed by the first write (here or, for a file, by
        another process writing the same store); ``None`` before it."""
        if self._dim is None and self._path is not None:
            with self._lock:
                self._adopt()
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
        (dim,) = struct.unpack_from("<I", header, 8)  # the generation is read_header's
        if self._dim is not None and dim != self._dim:
            raise StoreCorruptError(
                f"{path}: sidecar holds {dim}-d vectors but the store records {self._dim}-d"
            )
        self._dim = dim
        self._map(self._file_capacity())

    def _adopt(self) -> None:
        """Open the file if another process created it after this one opened the store
        (caller holds ``_lock``)."""
        path = self._path
        if path is not None and self._dim is None and os.path.exists(path):
            self._open_existing(path)

    def _cover(self, top: int) -> None:
        """Map what another process has grown the file to, if slot ``top`` lies past
        this process's mapping (caller holds ``_lock``). Not a file a re-embedding put
        in its place (another generation, perhaps another width): read as this one's
        rows, its bytes were wrong vectors; the store maps it when it follows."""
        if top >= self.capacity and self._path is not None and self._dim is not None \
                and read_header(self._path) == (self._dim, self._generation):
            on_disk = self._file_capacity()
            if on_disk > self.capacity:
                self._map(on_disk)

    def slots_on_disk(self) -> int:
        """How many slots the file holds (``-1`` when there is no file; for an
        in-memory sidecar, its capacity)."""
        if self._path is None:
            return self.capacity
        if not os.path.exists(self._path):
            return -1
        with self._lock:
            self._adopt()  # another process may have created it since this one looked
        return self._file_capacity()

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
                self._path, dtype=np.float32, mode="r" if self._read_only else "r+",
                offset=_HEADER, shape=(capacity, self._dim),
            )
            self._rows = self._mapping.view(np.ndarray)

    def _create(self, dim: int) -> None:
        if self._path is not None:
            # Written aside and renamed into place, so a process opening the store at
            # this moment finds no file or a whole header, never a torn one.
            temp = f"{self._path}.{os.getpid()}.new"
            try:
                with open(temp, "wb") as handle:
                    handle.write(_MAGIC + struct.pack("<II", dim, self._generation)
                                 .ljust(_HEADER - 8, b"\x00"))
                os.replace(temp, self._path)
            except OSError as exc:
                if os.path.exists(temp):
                    os.remove(temp)
                raise _os_error(self._path, "create", exc) from exc
        self._dim = dim

    def _ensure(self, needed: int) -> None:
        if needed <= self.capacity:
            return
        if self._path is None:  # rows in process memory are copied to grow: double them
            capacity = max(_MIN_CAPACITY, self.capacity)
            while capacity < needed:
                capacity *= 2
            self._map(capacity)
            return
        on_disk = self._file_capacity()  # another process may have grown it
        if needed <= on_disk:
            self._map(on_disk)
            return
        capacity = max(_MIN_CAPACITY, needed, on_disk + on_disk // _GROWTH)
        assert self._dim is not None  # noqa: S101 - internal invariant
        try:
            with open(self._path, "r+b") as handle:
                handle.truncate(_HEADER + capacity * self._dim * 4)
        except OSError as exc:
            raise _os_error(self._path, "grow", exc) from exc
        self._map(capacity)

    def write(self, slots: Sequence[int], vectors: Matrix) -> None:
        """Store ``vectors[i]`` in ``slots[i]``, growing the file if needed."""
        if len(slots) == 0:
            return
        self._check_writable()
        width = int(vectors.shape[1])
        with self._lock:
            self._adopt()
            if self._dim is not None and width != self._dim:
                raise DimensionMismatchError(
                    f"vectors are {width}-d but this store holds {self._dim}-d vectors"
                )
            if self._rows is None and (self._path is None or not os.path.exists(self._path)):
                self._create(width)  # the first vector (the width may be known already)
            self._ensure(max(slots) + 1)
            rows = self._rows
            assert rows is not None  # noqa: S101 - _ensure mapped it
            first, count = slots[0], len(slots)
            index = np.asarray(slots, dtype=np.int64)
            if count == 1:
                rows[first] = vectors[0]
            elif slots[-1] - first == count - 1 and bool((np.diff(index) == 1).all()):
                rows[first : first + count] = vectors  # a batch's new rows: one copy
            else:
                rows[index] = vectors
            self._resign(index)

    def _check_writable(self) -> None:
        if self._read_only:
            raise ReadOnlyStoreError(f"{self._path}: the vector sidecar was opened read-only")

    def read(self, slots: Sequence[int]) -> Matrix:
        """The vectors in ``slots``, as a new array; zeros for slots never written.

        A read never grows the file; it only maps what another writer already grew.
        """
        if self.dim is None:
            return np.zeros((len(slots), 0), dtype=np.float32)
        assert self._dim is not None  # noqa: S101 - ``dim`` just set it
        index = np.asarray(slots, dtype=np.int64)
        if index.size and int(index.max()) >= self.capacity and self._path is not None:
            with self._lock:
                self._cover(int(index.max()))
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
        if not slots:
            return
        self._check_writable()
        with self._lock:
            self._adopt()
            self._cover(max(slots))  # rows another process wrote past this mapping
            rows = self._rows
            if rows is None:
                return
            index = np.asarray([s for s in slots if s < rows.shape[0]], dtype=np.int64)
            rows[index] = 0.0
            self._resign(index)
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
            self._signs, self._signed, self._blank = None, 0, set()
            self._postings.clear()

    # -- ranking ------------------------------------------------------------------------
    def _head(self, count: int) -> Matrix | None:
        """The first ``count`` rows (fewer if the file holds fewer), mapping what another
        writer grew since this process last looked."""
        rows = self._rows
        if (rows is None or count > rows.shape[0]) and self._path is not None:
            with self._lock:
                self._adopt()
                self._cover(count - 1)
            rows = self._rows
        return None if rows is None else rows[:count]

    def top(self, vector: Matrix, count: int, want: int) -> tuple[Slots, Matrix]:
        """The ``want`` slots among the first ``count`` with the highest dot product with
        ``vector``, best first (equal scores by slot), and their scores.

        Exact up to ``EXACT_SLOTS`` slots, and whenever the pool the sign bits would hand
        on (``PREFILTER``) covers every slot; past that, exact over the pool's slots.
        """
        rows = self._head(count)
        if rows is None or self._dim != vector.shape[0] or want <= 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        count = rows.shape[0]
        pool = max(PREFILTER, count // 32, 8 * want)
        if count >= SPARSE_SLOTS and _sparse.is_sparse(vector):
            slots = np.arange(count, dtype=np.int64)
            with self._lock:
                blocks = self._postings.blocks(rows)
            scores = _sparse.Postings.scores(blocks, rows, vector, dot)
        elif count <= EXACT_SLOTS or pool >= count:
            slots = np.arange(count, dtype=np.int64)
            scores = dot(rows, vector)
        else:
            slots = self._nearest_signs(rows, vector, pool)
            scores = dot(rows[slots], vector)
        if want < slots.shape[0]:
            kth = np.partition(scores, slots.shape[0] - want)[slots.shape[0] - want]
            keep = np.flatnonzero(scores >= kth)  # ties at the cut stay, in slot order
            slots, scores = slots[keep], scores[keep]
        order = np.argsort(-scores, kind="stable")[:want]
        return slots[order], scores[order]

    def _nearest_signs(self, rows: Matrix, vector: Matrix, pool: int) -> Slots:
        """The ``pool`` slots of ``rows`` nearest ``vector`` by sign bits, ascending
        (equal distances by slot)."""
        bits = self._bits(rows)
        near = _signs.distances(bits, _signs.pack(vector.reshape(1, -1)))
        # Distances are small integers: a histogram finds the cut faster than a partition.
        cut = int(np.searchsorted(np.cumsum(np.bincount(near)), pool))
        inside = np.flatnonzero(near < cut)
        edge = np.flatnonzero(near == cut)[: pool - inside.shape[0]]
        return np.sort(np.concatenate((inside, edge)))

    def _bits(self, rows: Matrix) -> _signs.Bits:
        """Sign bits of every slot of ``rows``, taking those not yet taken."""
        count = rows.shape[0]
        with self._lock:
            signs = self._signs
            if signs is None or signs.shape[1] < count:
                grown = np.zeros(((rows.shape[1] + 63) // 64, max(count, 2 * self._signed)),
                                 dtype=np.uint64)
                if signs is not None:
                    grown[:, : self._signed] = signs[:, : self._signed]
                self._signs = signs = grown
            if self._signed < count:
                fresh = rows[self._signed : count]
                signs[:, self._signed : count] = _signs.pack(fresh)
                self._blank.update((self._signed + np.flatnonzero(~fresh.any(axis=1))).tolist())
                self._signed = count
            if self._blank:
                blank = np.fromiter(self._blank, dtype=np.int64, count=len(self._blank))
                blank = blank[blank < count]
                filled = blank[rows[blank].any(axis=1)]
                if filled.size:
                    signs[:, filled] = _signs.pack(rows[filled])
                    self._blank.difference_update(filled.tolist())
            return signs[:, :count]

    def _resign(self, slots: Slots) -> None:
        """Keep the sign bits and postings of ``slots`` current after this process wrote
        them (called with the lock held)."""
        self._postings.forget(slots)
        signs, rows = self._signs, self._rows
        if signs is None or rows is None:
            return
        slots = slots[slots < self._signed]
        if slots.size:
            written = rows[slots]
            signs[:, slots] = _signs.pack(written)
            blank = slots[~written.any(axis=1)].tolist()
            self._blank.difference_update(slots.tolist())
            self._blank.update(blank)
