"""``CachingEmbedder``: an LRU of text -> vector in front of any embedder.

Agents repeat themselves: the same query, the same boilerplate turn, the same rendered
claim text on a re-embed. A model embedder spends milliseconds per text; a dictionary
lookup does not.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from .._errors import InvalidArgumentError
from . import Embedder, lexical_similarities, similarity_floor

__all__ = ["CachingEmbedder"]


class CachingEmbedder:
    """Serves repeated texts from memory and sends only the rest to ``inner``.

    Each ``encode`` looks every text up, sends the distinct texts it lacks to the inner
    embedder in **one** call, stores their rows, and evicts the least recently used
    entries beyond ``max_entries``. Every returned row is a row the inner embedder
    produced for that exact string, so for an embedder whose rows do not depend on their
    batch (``HashingEmbedder``) the output is bit-identical to calling it directly. (A
    transformer's row can differ in its last bits with the batch it was padded in; a
    cached row is the one from the batch the text first arrived in.)

    It is transparent to search: ``.dim``, ``.lexical``, ``.similarity_floor`` and
    ``.lexical_similarities`` are the inner embedder's.

    Thread-safe: the table and counters sit behind a lock, which is *not* held during the
    inner call, so a slow model does not block hits from other threads. Two threads that
    miss on the same text at once may both encode it.

    Args:
        inner: the embedder to cache in front of; anything with ``.dim`` and ``.encode``.
        max_entries: how many distinct texts to keep.

    Raises:
        InvalidArgumentError: ``inner`` is not an embedder, or ``max_entries`` is not an
            int >= 1.
    """

    def __init__(self, inner: Embedder, max_entries: int = 10_000) -> None:
        if not isinstance(inner, Embedder):
            raise InvalidArgumentError("inner", "expected an object with .dim and .encode(texts)")
        if isinstance(max_entries, bool) or not isinstance(max_entries, int) or max_entries < 1:
            raise InvalidArgumentError("max_entries", f"expected an int >= 1, got {max_entries!r}")
        self._inner = inner
        self._dim = inner.dim
        self._max_entries = max_entries
        self._entries: OrderedDict[str, npt.NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()
        self._hits = 0
        self._misses = 0

    @property
    def dim(self) -> int:
        """The inner embedder's width."""
        return self._dim

    @property
    def lexical(self) -> bool:
        """Whether the inner embedder declares itself lexical (``HashingEmbedder`` does),
        passed through so that search weighs the cached vectors as it would the inner's."""
        return getattr(self._inner, "lexical", False) is True

    @property
    def similarity_floor(self) -> float:
        """The inner embedder's declared floor (see ``memvara.embed.similarity_floor``)."""
        return similarity_floor(self._inner)

    @property
    def lexical_similarities(self) -> Callable[[str, Sequence[str]], list[float]] | None:
        """The inner embedder's exact similarity, or ``None`` (see
        ``memvara.embed.lexical_similarities``): search judges the cached vectors' floor
        as it would the inner's."""
        return lexical_similarities(self._inner)

    @property
    def inner(self) -> Embedder:
        """The embedder behind the cache."""
        return self._inner

    @property
    def max_entries(self) -> int:
        """The most distinct texts kept."""
        return self._max_entries

    @property
    def hits(self) -> int:
        """Rows served without asking the inner embedder (a text repeated within one call
        counts as a hit after its first occurrence)."""
        return self._hits

    @property
    def misses(self) -> int:
        """Texts sent to the inner embedder. ``hits + misses`` is every row ever returned."""
        return self._misses

    def __len__(self) -> int:
        """How many texts are cached now."""
        return len(self._entries)

    def __repr__(self) -> str:
        return f"CachingEmbedder({self._inner!r}, max_entries={self._max_entries})"

    def clear(self) -> None:
        """Drop every cached vector (after swapping the inner model, say); the counters
        keep counting."""
        with self._lock:
            self._entries.clear()

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``: the inner embedder's rows, from the cache where it has them.

        Raises:
            InvalidArgumentError: ``texts`` is a bare string or holds a non-string, or the
                inner embedder returned an array of the wrong shape.
        """
        if isinstance(texts, str):
            raise InvalidArgumentError("texts", "expected a sequence of strings, not one string")
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidArgumentError(f"texts[{i}]", f"expected str, got {type(text).__name__}")
        out = np.empty((len(texts), self._dim), dtype=np.float32)
        wanted: dict[str, list[int]] = {}  # each missing text -> the rows it fills
        with self._lock:
            entries = self._entries
            for row, text in enumerate(texts):
                vector = entries.get(text)
                if vector is not None:
                    entries.move_to_end(text)
                    out[row] = vector
                else:
                    wanted.setdefault(text, []).append(row)
            self._misses += len(wanted)
            self._hits += len(texts) - len(wanted)
        if not wanted:
            return out
        missing = list(wanted)
        fresh = self._inner.encode(missing)
        if getattr(fresh, "shape", None) != (len(missing), self._dim):
            raise InvalidArgumentError(
                "inner",
                f"encode() must return shape ({len(missing)}, {self._dim}),"
                f" got {getattr(fresh, 'shape', type(fresh).__name__)}",
            )
        with self._lock:
            for text, row_vector in zip(missing, fresh):
                # One private row per entry: the caller cannot edit it, and an evicted
                # entry frees its memory rather than pinning the whole batch.
                vector = np.array(row_vector, dtype=np.float32)
                vector.flags.writeable = False
                for row in wanted[text]:
                    out[row] = vector
                entries[text] = vector
                entries.move_to_end(text)
            while len(entries) > self._max_entries:
                entries.popitem(last=False)
        return out
