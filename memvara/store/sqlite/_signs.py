"""One bit per dimension: the sign pattern of a vector, and Hamming distance between them.

The vector search's first pass on a large sidecar (``VectorFile.top``). A 512-d float32
vector is 2 KB; its signs are 64 bytes, so ranking 100,000 rows by Hamming distance reads
6.4 MB instead of 200 MB. Two vectors pointing the same way agree on most signs, so the
rows nearest by cosine are, with high probability, among the nearest by Hamming distance;
those are then scored exactly. Bits are kept word-major, ``(words, rows)``, so each pass
of the distance loop is one contiguous XOR and popcount over every row.

``numpy.bitwise_count`` (numpy 2) counts bits; older numpy uses a 16-bit lookup table.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["distances", "pack", "popcount"]

Bits = npt.NDArray[np.uint64]

_TABLE = np.array([i.bit_count() for i in range(1 << 16)], dtype=np.uint8)


def pack(rows: npt.NDArray[np.float32]) -> Bits:
    """The sign bits of ``rows`` (``(n, dim)``) as ``(ceil(dim / 64), n)`` words; a bit
    is set where the value is above zero, so an all-zero row packs to all-zero words."""
    n, dim = rows.shape
    words = (dim + 63) // 64
    packed = np.zeros((n, words * 8), dtype=np.uint8)
    packed[:, : (dim + 7) // 8] = np.packbits(rows > 0, axis=1, bitorder="little")
    return np.ascontiguousarray(packed.view(np.uint64).T)


def _table_popcount(words: Bits) -> npt.NDArray[np.uint8]:
    halves: npt.NDArray[np.uint8] = _TABLE[words.view(np.uint16)].reshape(-1, 4)
    counted: npt.NDArray[np.uint8] = halves.sum(axis=1, dtype=np.uint8)
    return counted


popcount = getattr(np, "bitwise_count", _table_popcount)
"""Set bits per ``uint64`` word: ``numpy.bitwise_count`` where numpy has it (2.0+)."""


def distances(bits: Bits, query: Bits) -> npt.NDArray[np.uint16]:
    """Hamming distance from ``query`` (``(words, 1)``) to each column of ``bits``."""
    out = np.zeros(bits.shape[1], dtype=np.uint16)
    scratch = np.empty(bits.shape[1], dtype=np.uint64)
    for word in range(bits.shape[0]):
        np.bitwise_xor(bits[word], query[word, 0], out=scratch)
        out += popcount(scratch)
    return out
