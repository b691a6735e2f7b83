"""Exact dot products of a sparse query with sparse rows, from per-dimension postings.

The lexical embedder (``HashingEmbedder``) hashes a text's trigrams and words into a few
dozen of its 512 buckets, so its rows and its queries are mostly zeros. A dot product
then only involves the query's nonzero dimensions; kept column-wise (for each dimension,
the slots where it is nonzero and their values), ranking 8,000 short claims reads about
1 MB instead of the 16 MB a dense pass streams from memory. The products are summed in
float64, so this is at least as exact as the dense pass (and rows with equal products
tie exactly, whatever the order of their dimensions).

Postings are built lazily per block of ``BLOCK`` slots, from the rows this process maps:

* slots written past a block's postings (the *tail*) are scored densely until there are
  more than ``STALE`` of them, then the block is rebuilt;
* a block holding a slot this process rewrites or zeroes is dropped (``forget``);
* a slot that was all zeros when its block was built (no vector yet) is scored densely
  on every use, so a vector another process writes there later is seen;
* a block whose rows are not sparse (more than ``DENSE_SHARE`` nonzero: a semantic
  embedder's) keeps no postings and is scored densely.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["BLOCK", "COLUMN_SHARE", "DENSE_SHARE", "STALE", "Postings", "is_sparse"]

BLOCK = 1 << 14
"""Slots per block of postings: small enough that rebuilding one is quick (~10 ms at
512-d), large enough that few blocks are looped over in Python."""
STALE = 1024
"""Tail slots scored densely before their block is rebuilt."""
DENSE_SHARE = 0.25
"""A query or a block with more than this share of nonzero values is scored densely."""
COLUMN_SHARE = 0.125
"""A dimension nonzero in more than this share of a block's slots is kept as a dense
column: reading a value and adding it in order is cheaper than gathering, scaling and
scattering ~1/8 as many postings (the words and trigrams in nearly every text)."""

Matrix = npt.NDArray[np.float32]
Dot = Callable[[Matrix, Matrix], Matrix]


def is_sparse(vector: Matrix) -> bool:
    """Whether scoring ``vector`` from postings is worth it (few nonzero dimensions)."""
    return 0 < int(np.count_nonzero(vector)) <= DENSE_SHARE * int(vector.shape[0])


class _Block:
    """What slots ``[first, end)`` hold, column by column: a dimension nonzero in more than
    ``COLUMN_SHARE`` of them as a dense ``columns`` row (``column_of[d]``; -1 for none),
    any other as a posting list: ``offsets[starts[d]:starts[d + 1]]`` are the slots (from
    ``first``) where it is nonzero, ``values`` the values there. ``starts`` is ``None``
    for a dense block. ``blank``: the slots that were all zeros."""

    __slots__ = ("blank", "column_of", "columns", "end", "first", "offsets", "starts",
                 "values")

    def __init__(self, rows: Matrix, first: int) -> None:
        self.first, self.end = first, first + rows.shape[0]
        filled = rows != 0
        self.blank = first + np.flatnonzero(~filled.any(axis=1))
        self.starts: npt.NDArray[np.intp] | None = None
        if np.count_nonzero(filled) > DENSE_SHARE * filled.size:
            return
        common = filled.sum(axis=0) > COLUMN_SHARE * rows.shape[0]
        self.column_of = np.cumsum(common) - 1
        self.column_of[~common] = -1
        self.columns = np.ascontiguousarray(rows[:, common].T, dtype=np.float64)
        filled[:, common] = False
        dims, offsets = np.nonzero(filled.T)  # dimension-major: each posting list in slot order
        self.starts = np.searchsorted(dims, np.arange(rows.shape[1] + 1))
        self.offsets = offsets.astype(np.intp)
        self.values = rows[offsets, dims].astype(np.float64)

    def scores(self, dims: npt.NDArray[np.intp], weights: npt.NDArray[np.float64]
               ) -> npt.NDArray[np.float64]:
        """Each slot's dot product with the query whose nonzero ``dims`` hold ``weights``."""
        starts = self.starts
        assert starts is not None  # noqa: S101 - the caller scores dense blocks itself
        column = self.column_of[dims]
        listed = column < 0
        out = np.zeros(self.end - self.first, dtype=np.float64)
        spans = [(int(starts[d]), int(starts[d + 1])) for d in dims[listed].tolist()]
        if spans:
            offsets = np.concatenate([self.offsets[a:b] for a, b in spans])
            products = np.concatenate([self.values[a:b] * w for (a, b), w in
                                       zip(spans, weights[listed].tolist())])
            out += np.bincount(offsets, weights=products, minlength=out.shape[0])
        if not listed.all():
            out += np.einsum("i,ij->j", weights[~listed], self.columns[column[~listed]])
        return out


class Postings:
    """Blocks of postings over a sidecar's rows (the caller serializes ``blocks``,
    ``forget`` and ``clear``)."""

    def __init__(self) -> None:
        self._blocks: dict[int, _Block] = {}

    def forget(self, slots: npt.NDArray[np.int64]) -> None:
        """Drop the blocks whose postings hold any of ``slots`` (rewritten or zeroed)."""
        if slots.size == 1:  # a single write (every add() of a turn): no np.unique
            slot = int(slots[0])
            block = self._blocks.get(slot // BLOCK)
            if block is not None and slot < block.end:
                del self._blocks[slot // BLOCK]
            return
        for index in np.unique(slots // BLOCK).tolist():
            block = self._blocks.get(index)
            if block is not None and bool((slots[slots // BLOCK == index] < block.end).any()):
                del self._blocks[index]

    def clear(self) -> None:
        """Drop every block."""
        self._blocks.clear()

    def blocks(self, rows: Matrix) -> list[_Block]:
        """The blocks over ``rows``, built or rebuilt where needed. Blocks are never
        changed once built, so the caller may score them after letting go of its lock."""
        return [self._block(rows, first, min(first + BLOCK, rows.shape[0]))
                for first in range(0, rows.shape[0], BLOCK)]

    @staticmethod
    def scores(blocks: list[_Block], rows: Matrix, vector: Matrix, dot: Dot) -> Matrix:
        """Every row's dot product with ``vector``, from postings where the rows are
        sparse and by ``dot`` elsewhere (tails, blank slots, dense blocks)."""
        dims = np.flatnonzero(vector)
        weights = vector[dims].astype(np.float64)
        out = np.empty(rows.shape[0], dtype=np.float32)
        for block in blocks:
            first, end = block.first, min(block.first + BLOCK, rows.shape[0])
            if block.starts is None:
                out[first:end] = dot(rows[first:end], vector)
                continue
            covered = min(block.end, end)
            out[first:covered] = block.scores(dims, weights)[: covered - first]
            if covered < end:
                out[covered:end] = dot(rows[covered:end], vector)
            blank = block.blank[block.blank < end]
            if blank.size:
                out[blank] = dot(rows[blank], vector)
        return out

    def _block(self, rows: Matrix, first: int, end: int) -> _Block:
        """The block starting at ``first``, built or rebuilt if its tail is too long."""
        block = self._blocks.get(first // BLOCK)
        if block is None or end - block.end > STALE:
            block = self._blocks[first // BLOCK] = _Block(rows[first:end], first)
        return block
