"""Embedders: text in, fixed-width float32 vectors out.

``Embedder`` is the protocol every backend implements. ``HashingEmbedder`` is the
default: deterministic character n-gram and word hashing, no model and no download, so
the library works offline and tests are reproducible. It is lexical, not semantic: it
will not put "physician" near "doctor".

``SentenceTransformerEmbedder`` (a local transformer, ``pip install
'memvara[local-embed]'``) and ``CachingEmbedder`` (an LRU in front of any embedder) are
lazy attributes: naming one imports its module, and only building a
``SentenceTransformerEmbedder`` imports sentence-transformers and torch.
"""

from __future__ import annotations

import importlib
import math
import zlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from .._errors import InvalidArgumentError

if TYPE_CHECKING:
    from .cache import CachingEmbedder
    from .sentence import SentenceTransformerEmbedder

__all__ = [
    "CachingEmbedder",
    "Embedder",
    "HashingEmbedder",
    "SentenceTransformerEmbedder",
    "lexical_similarities",
    "similarity_floor",
]

_LAZY = {"CachingEmbedder": ".cache", "SentenceTransformerEmbedder": ".sentence"}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value: object = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of one fixed width.

    Contract: ``encode(texts)`` returns a C-contiguous ``float32`` array of shape
    ``(len(texts), dim)`` with finite values, the same output for the same input, and
    rows in input order. An empty sequence yields shape ``(0, dim)``. The store checks the
    shape and finiteness of what it is given and raises rather than store a bad vector.
    """

    @property
    def dim(self) -> int:
        """The width of every vector this embedder returns."""
        ...

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``, one row each."""
        ...


def similarity_floor(embedder: object) -> float:
    """The cosine at or above which ``embedder`` declares a vector match a match on its
    own (its ``similarity_floor`` attribute, 0 to 1); 0.0 when it declares none.

    Search keeps a result that shares a word with the query (the text list found it)
    or whose cosine reaches this floor (for a lexical embedder, its exact cosine too:
    ``lexical_similarities``): it never pads ``k`` with results that match nothing."""
    floor = getattr(embedder, "similarity_floor", 0.0)
    if isinstance(floor, bool) or not isinstance(floor, (int, float)) or not 0.0 <= floor <= 1.0:
        return 0.0
    return float(floor)


def lexical_similarities(embedder: object) -> Callable[[str, Sequence[str]], list[float]] | None:
    """``embedder``'s exact similarity: its ``lexical_similarities(query, texts)``, the
    cosine of ``query`` with each text, one float each in order, over the features its
    vectors are made of, before they are hashed into ``dim`` buckets; ``None`` unless it
    declares itself ``lexical`` and has one.

    Search judges a result that only the vectors found against the floor on this cosine
    too: hashed, two texts sharing no feature still score up to ~0.3 from collisions. A
    semantic embedder's cosine is its judgement of meaning, not a collision: none."""
    if getattr(embedder, "lexical", False) is not True:
        return None
    exact = getattr(embedder, "lexical_similarities", None)
    return cast("Callable[[str, Sequence[str]], list[float]]", exact) if callable(exact) else None


_U64 = np.uint64
_P1, _P2, _P3 = _U64(0x9E3779B97F4A7C15), _U64(0xC2B2AE3D27D4EB4F), _U64(0x165667B19E3779F9)
_MIX = _U64(0xFF51AFD7ED558CCD)
_WORD_WEIGHT = 2.0
_PUNCT = ".,;:!?\"'()[]{}"

# The same hash in plain Python integers, for inputs too small to repay numpy's
# per-call overhead (a single remember() embeds one short line).
_M64 = (1 << 64) - 1
_T1, _T2, _T3 = ([(b * int(p)) & _M64 for b in range(256)] for p in (_P1, _P2, _P3))
_SMALL_INPUT = 256
"""Up to this many bytes in a batch, ``encode`` hashes in Python rather than numpy."""
_BLOCK_VALUES = 1 << 17
"""``encode`` sums and normalizes a large batch this many vector values at a time (1 MB
of float64): the dense work stays in cache, and its buffers are reused rather than
paged in fresh for each batch. Over 5,000 of bench/perf.py's texts, two alternating
rounds on a loaded machine: CPU median 5.69 and 5.46 us a text, against 6.32 and 6.43
in one block; instruction counts barely differ, so the gain is memory traffic. Each
row is computed as in one block, so the vectors are the same bits."""
_TRIGRAM_CACHE_SIZE = 1 << 16
_WORD_CACHE_SIZE = 1 << 16


class HashingEmbedder:
    """Feature hashing of byte trigrams and whole words into ``dim`` signed buckets.

    Each text is casefolded with whitespace collapsed; every UTF-8 byte trigram and every
    word adds ``±1`` (words ``±2``) to a bucket chosen by a fixed hash, and rows are
    L2-normalized. The trigrams are hashed for a whole batch at once in numpy, so
    encoding costs microseconds per short text.

    Args:
        dim: vector width (default 512).

    Raises:
        InvalidArgumentError: ``dim`` is not an integer from 8 to 65,536.
    """

    lexical = True
    """Its vectors encode spelling, not meaning: search weighs them as a tie-breaker."""

    similarity_floor = 0.1
    """A text sharing one word with a short query scores about 0.25 or more (a word
    counts twice its trigrams); texts sharing only stray trigrams stay near 0.05. Counted
    exactly, that is (``lexical_similarities``): hashed, a text sharing no feature can
    score 0.3, so search judges the floor on both."""

    def __init__(self, dim: int = 512) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int) or not 8 <= dim <= 65_536:
            raise InvalidArgumentError("dim", f"expected an int from 8 to 65536, got {dim!r}")
        self._dim = dim
        self._trigram_cache: dict[tuple[int, int, int], tuple[int, float]] = {}
        self._word_cache: dict[str, tuple[int, float]] = {}
        self._spelling_cache: dict[str, tuple[tuple[tuple[int, float], ...], int, int]] = {}

    @property
    def dim(self) -> int:
        """The vector width."""
        return self._dim

    def __repr__(self) -> str:
        return f"HashingEmbedder(dim={self._dim})"

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``; see the class docstring for the features.

        Raises:
            InvalidArgumentError: ``texts`` is a bare string or holds a non-string.
        """
        if isinstance(texts, str):
            raise InvalidArgumentError("texts", "expected a sequence of strings, not one string")
        n, dim = len(texts), self._dim
        if n == 0:
            return np.zeros((0, dim), dtype=np.float32)
        folded: list[str] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidArgumentError(f"texts[{i}]", f"expected str, got {type(text).__name__}")
            folded.append(" " + " ".join(text.casefold().split()) + " ")
        encoded = [s.encode("utf-8", "surrogatepass") for s in folded]
        if sum(map(len, encoded)) <= _SMALL_INPUT:
            return self._encode_small(folded)
        out = np.empty((n, dim), dtype=np.float32)
        rows = max(1, _BLOCK_VALUES // dim)
        for start in range(0, n, rows):
            stop = min(n, start + rows)
            tri_index, tri_weight = self._trigrams(encoded[start:stop])
            word_index, word_weight = self._words(folded[start:stop])
            vectors = np.bincount(
                np.concatenate((tri_index, word_index)),
                weights=np.concatenate((tri_weight, word_weight)),
                minlength=(stop - start) * dim,
            ).reshape(stop - start, dim)
            norms = np.sqrt(np.einsum("ij,ij->i", vectors, vectors))
            norms[norms == 0] = 1.0  # a row with no features stays zero
            # Divided in float64 and rounded once into the output: the same bits as
            # dividing in place and copying, in one pass and without a masked loop.
            np.divide(vectors, norms[:, None], out=out[start:stop], casting="unsafe")
        return out

    def lexical_similarities(self, query: str, texts: Sequence[str]) -> list[float]:
        """The cosine of ``query`` with each of ``texts`` over the features ``encode``
        hashes (byte trigrams and words, words weighing twice), counted exactly: what
        the vectors' cosine estimates, without ``dim`` buckets' collisions. "Kiwi" and
        "Bruno owns jazz" share no feature and score 0.0 here, 0.28 as vectors.

        Raises:
            InvalidArgumentError: ``query`` is not a string, or ``texts`` is a bare
                string or holds a non-string.
        """
        if not isinstance(query, str):
            raise InvalidArgumentError("query", f"expected str, got {type(query).__name__}")
        if isinstance(texts, str):
            raise InvalidArgumentError("texts", "expected a sequence of strings, not one string")
        asked = _exact_features(query)
        out: list[float] = []
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidArgumentError(f"texts[{i}]", f"expected str, got {type(text).__name__}")
            out.append(_cosine(asked, _exact_features(text)))
        return out

    def _encode_small(self, folded: list[str]) -> npt.NDArray[np.float32]:
        """``encode`` for a few short texts: the same features, the same bits out.

        A text's trigrams are those of each word with a space either side plus one
        across each space between two words, so each word's features (its trigrams and
        itself) are memoized together: a text costs a lookup a word, not a trigram
        (text reuses a small vocabulary). The sums are of small integers, so they are
        exact in any order, and dividing in float64 before rounding to float32 matches
        the numpy path bit for bit.
        """
        dim = self._dim
        known, spelled = self._trigram_cache, self._spelling_cache
        if len(known) > _TRIGRAM_CACHE_SIZE:
            known.clear()
        if len(spelled) > _WORD_CACHE_SIZE:
            spelled.clear()
        vectors = np.zeros((len(folded), dim), dtype=np.float32)
        for row, text in enumerate(folded):
            buckets: dict[int, float] = {}
            get = buckets.get
            last = -1  # the last byte of the word before, once there is one
            for word in text.split():
                spelling = spelled.get(word)
                if spelling is None:
                    spelling = spelled[word] = self._spelling(word)
                features, first, end = spelling
                if last >= 0:
                    across = known.get((last, 32, first))
                    if across is None:
                        across = known[(last, 32, first)] = self._trigram_feature(last, 32, first)
                    buckets[across[0]] = get(across[0], 0.0) + across[1]
                for bucket, weight in features:
                    buckets[bucket] = get(bucket, 0.0) + weight
                last = end
            norm = math.sqrt(sum(v * v for v in buckets.values()))
            if norm > 0:
                k = len(buckets)
                vectors[row, np.fromiter(buckets, np.intp, k)] = np.fromiter(
                    buckets.values(), np.float64, k) / norm
        return vectors

    def _spelling(self, word: str) -> tuple[tuple[tuple[int, float], ...], int, int]:
        """A word's features as ``_encode_small`` adds them: the trigrams of the word with
        a space either side and the word's own feature (none for punctuation alone), and
        its first and last byte (for the trigrams across the spaces beside it)."""
        data = b" " + word.encode("utf-8", "surrogatepass") + b" "
        features = [self._trigram_feature(*trigram) for trigram in zip(data, data[1:], data[2:])]
        bucket, weight = self._word_feature(word)
        if weight:
            features.append((bucket, weight))
        return tuple(features), data[1], data[-2]

    def _trigram_feature(self, a: int, b: int, c: int) -> tuple[int, float]:
        """The bucket and sign of one byte trigram: ``_trigrams``' hash, one at a time."""
        h = (_T1[a] + _T2[b] + _T3[c]) & _M64
        h ^= h >> 31
        h = (h * 0xFF51AFD7ED558CCD) & _M64
        h ^= h >> 29
        return h % self._dim, (-1.0 if h >> 63 else 1.0)

    def _trigrams(
        self, encoded: list[bytes]
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        lengths = np.fromiter((len(b) for b in encoded), dtype=np.int64, count=len(encoded))
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8).astype(_U64)
        owner = np.repeat(np.arange(len(encoded), dtype=np.int64), lengths)
        same_text = owner[:-2] == owner[2:]
        h = data[:-2] * _P1 + data[1:-1] * _P2 + data[2:] * _P3
        h ^= h >> _U64(31)
        h *= _MIX
        h ^= h >> _U64(29)
        index = (h % _U64(self._dim)).astype(np.int64) + owner[:-2] * self._dim
        weight = np.where((h >> _U64(63)) == 1, -1.0, 1.0)
        return index[same_text], weight[same_text]

    def _words(self, folded: list[str]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        dim = self._dim
        known = self._word_cache
        if len(known) > _WORD_CACHE_SIZE:
            known.clear()
        index: list[int] = []
        weight: list[float] = []
        for row, text in enumerate(folded):
            base = row * dim
            for word in text.split():
                feature = known.get(word)
                if feature is None:
                    feature = known[word] = self._word_feature(word)
                if feature[1]:
                    index.append(base + feature[0])
                    weight.append(feature[1])
        return np.array(index, dtype=np.int64), np.array(weight, dtype=np.float64)

    def _word_feature(self, word: str) -> tuple[int, float]:
        """The bucket and signed weight of one whitespace-separated token (weight 0 when
        it is only punctuation)."""
        word = word.strip(_PUNCT)
        if not word:
            return 0, 0.0
        h = zlib.crc32(word.encode("utf-8", "surrogatepass"))
        return h % self._dim, (-_WORD_WEIGHT if h & 0x80000000 else _WORD_WEIGHT)


def _exact_features(text: str) -> dict[bytes | str, float]:
    """``text``'s features as ``HashingEmbedder.encode`` counts them, unhashed: each byte
    trigram of the folded text (a ``bytes`` key) and each word without its surrounding
    punctuation (a ``str`` key, ``_WORD_WEIGHT`` an occurrence)."""
    folded = " " + " ".join(text.casefold().split()) + " "
    data = folded.encode("utf-8", "surrogatepass")
    features: dict[bytes | str, float] = {}
    for i in range(len(data) - 2):
        trigram = data[i:i + 3]
        features[trigram] = features.get(trigram, 0.0) + 1.0
    for token in folded.split():
        word = token.strip(_PUNCT)
        if word:
            features[word] = features.get(word, 0.0) + _WORD_WEIGHT
    return features


def _cosine(a: dict[bytes | str, float], b: dict[bytes | str, float]) -> float:
    """The cosine of two feature counts; 0.0 when either has none."""
    if len(a) > len(b):
        a, b = b, a
    dot = sum(value * b.get(key, 0.0) for key, value in a.items())
    norms = math.sqrt(sum(v * v for v in a.values()) * sum(v * v for v in b.values()))
    return dot / norms if norms else 0.0
