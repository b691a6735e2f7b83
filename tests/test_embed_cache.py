"""``CachingEmbedder``: an LRU in front of any embedder, invisible in its output."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import memvara.embed
from memvara import Embedder, HashingEmbedder, InvalidArgumentError, Memvara
from memvara.embed import CachingEmbedder

from .conftest import Clock, embed_all
from .test_embed_sentence import load_minilm, needs_minilm


class Counting:
    """A ``HashingEmbedder`` that records every batch it is asked for."""

    def __init__(self, dim: int = 16) -> None:
        self.hashing = HashingEmbedder(dim)
        self.calls: list[list[str]] = []

    @property
    def dim(self) -> int:
        return self.hashing.dim

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return self.hashing.encode(texts)


def test_only_the_misses_reach_the_inner_embedder_in_one_call() -> None:
    inner = Counting()
    cache = CachingEmbedder(inner)
    first = cache.encode(["a", "b", "a"])
    assert inner.calls == [["a", "b"]]
    assert (cache.hits, cache.misses, len(cache)) == (1, 2, 2)
    second = cache.encode(["b", "c", "a", "d", "c"])
    assert inner.calls == [["a", "b"], ["c", "d"]]
    assert (cache.hits, cache.misses, len(cache)) == (1 + 3, 2 + 2, 4)
    np.testing.assert_array_equal(first, inner.hashing.encode(["a", "b", "a"]))
    np.testing.assert_array_equal(second, inner.hashing.encode(["b", "c", "a", "d", "c"]))
    cache.encode(["d", "a"])
    assert len(inner.calls) == 2  # all hits: no call at all


def test_output_is_the_inner_embedders_bit_for_bit() -> None:
    cache = CachingEmbedder(HashingEmbedder(64), max_entries=3)
    direct = HashingEmbedder(64)
    texts = ["user lives in Berlin", "", "东京 🙂", "ERR_7734", "user lives in Berlin", "x" * 500]
    for _ in range(2):
        got = cache.encode(texts)
        assert got.dtype == np.float32 and got.flags["C_CONTIGUOUS"] and got.shape == (6, 64)
        np.testing.assert_array_equal(got, direct.encode(texts))


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "b", "c", "d", "e", "ünï", ""]), max_size=6), max_size=8),
       st.integers(min_value=1, max_value=4))
def test_any_call_sequence_matches_the_inner_embedder(calls: list[list[str]], max_entries: int) -> None:
    inner = Counting(dim=8)
    cache = CachingEmbedder(inner, max_entries=max_entries)
    rows = 0
    for texts in calls:
        np.testing.assert_array_equal(cache.encode(texts), inner.hashing.encode(texts))
        rows += len(texts)
        assert len(cache) <= max_entries
    assert cache.hits + cache.misses == rows
    assert cache.misses == sum(len(c) for c in inner.calls)


def test_the_least_recently_used_entry_is_evicted() -> None:
    inner = Counting()
    cache = CachingEmbedder(inner, max_entries=2)
    cache.encode(["a", "b"])
    cache.encode(["a"])  # a is now more recent than b
    cache.encode(["c"])  # evicts b
    assert len(cache) == 2
    cache.encode(["a", "c"])
    assert inner.calls == [["a", "b"], ["c"]]
    cache.encode(["b"])
    assert inner.calls[-1] == ["b"]


def test_a_batch_larger_than_the_cache_is_still_answered_in_full() -> None:
    inner = Counting()
    cache = CachingEmbedder(inner, max_entries=2)
    texts = [str(i) for i in range(10)]
    np.testing.assert_array_equal(cache.encode(texts), inner.hashing.encode(texts))
    assert len(cache) == 2
    cache.encode(["8", "9"])
    assert len(inner.calls) == 1  # the last two stayed


def test_empty_input_calls_nothing() -> None:
    inner = Counting(dim=32)
    cache = CachingEmbedder(inner)
    assert cache.encode([]).shape == (0, 32)
    assert inner.calls == [] and (cache.hits, cache.misses) == (0, 0)


def test_callers_cannot_corrupt_the_cache() -> None:
    cache = CachingEmbedder(HashingEmbedder(16))
    first = cache.encode(["a"])
    first[:] = 42.0
    np.testing.assert_array_equal(cache.encode(["a"]), HashingEmbedder(16).encode(["a"]))


def test_clear_drops_entries_and_keeps_counting() -> None:
    inner = Counting()
    cache = CachingEmbedder(inner)
    cache.encode(["a", "b"])
    cache.clear()
    assert len(cache) == 0
    cache.encode(["a"])
    assert inner.calls[-1] == ["a"] and cache.misses == 3


def test_it_is_an_embedder_with_the_inner_width() -> None:
    inner = HashingEmbedder(24)
    cache = CachingEmbedder(inner, max_entries=5)
    assert isinstance(cache, Embedder)
    assert cache.dim == 24 and cache.inner is inner and cache.max_entries == 5
    assert repr(cache) == "CachingEmbedder(HashingEmbedder(dim=24), max_entries=5)"
    assert memvara.embed.CachingEmbedder is CachingEmbedder


def test_search_weighs_a_cached_embedder_as_it_would_the_inner_one(clock: Clock) -> None:
    from memvara._read.weights import WEIGHTS

    assert CachingEmbedder(HashingEmbedder()).lexical is True
    assert CachingEmbedder(Counting()).lexical is False  # says nothing: not lexical
    with Memvara(embedder=CachingEmbedder(HashingEmbedder()), clock=clock) as mem:
        assert mem._core.retriever.vector_weight == WEIGHTS.lexical_vector
        # and judges its floor on the inner embedder's exact similarity: these facts'
        # vectors score 0.26-0.28 with "Kiwi" from hash collisions alone
        mem.remember("Bruno", "owns", "jazz")
        mem.remember("Bruno", "speaks", "Acme")
        assert mem.search("Kiwi") == [] and len(mem.search("Bruno")) == 2
    exact = CachingEmbedder(HashingEmbedder()).lexical_similarities
    assert exact is not None and exact("Kiwi", ["Bruno owns jazz", "kiwi"]) == [0.0, 1.0]
    assert CachingEmbedder(Counting()).lexical_similarities is None


@pytest.mark.parametrize("max_entries", [0, -1, True, 1.5, "10"])
def test_bad_sizes_are_refused(max_entries: object) -> None:
    with pytest.raises(InvalidArgumentError, match="^max_entries: "):
        CachingEmbedder(HashingEmbedder(), max_entries=max_entries)  # type: ignore[arg-type]


def test_a_non_embedder_is_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="^inner: "):
        CachingEmbedder(object())  # type: ignore[arg-type]


def test_bad_texts_are_refused() -> None:
    cache = CachingEmbedder(HashingEmbedder())
    with pytest.raises(InvalidArgumentError, match="^texts: "):
        cache.encode("one string")
    with pytest.raises(InvalidArgumentError, match=r"^texts\[1\]: "):
        cache.encode(["ok", None])  # type: ignore[list-item]


class WrongShape:
    dim = 8

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        return np.zeros((1, 8), dtype=np.float32)  # one row, whatever was asked


def test_an_inner_embedder_breaking_the_contract_is_caught() -> None:
    cache = CachingEmbedder(WrongShape())
    assert cache.encode(["one"]).shape == (1, 8)
    with pytest.raises(InvalidArgumentError, match=r"^inner: encode\(\) must return shape \(2, 8\)"):
        cache.encode(["two", "three"])  # would otherwise broadcast one row into two


def test_threads_sharing_a_cache_get_correct_rows_and_consistent_counts() -> None:
    inner = HashingEmbedder(16)
    cache = CachingEmbedder(inner, max_entries=8)
    vocabulary = [f"text {i}" for i in range(12)]
    expected = {t: inner.encode([t])[0] for t in vocabulary}
    failures: list[str] = []

    def work(seed: int) -> None:
        rng = np.random.default_rng(seed)
        for _ in range(50):
            texts = [vocabulary[i] for i in rng.integers(0, len(vocabulary), size=5)]
            got = cache.encode(texts)
            for text, row in zip(texts, got):
                if not np.array_equal(row, expected[text]):
                    failures.append(text)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert cache.hits + cache.misses == 6 * 50 * 5
    assert len(cache) <= 8


def test_a_memory_runs_on_a_cached_embedder(clock: Clock) -> None:
    cache = CachingEmbedder(HashingEmbedder())
    with Memvara(embedder=cache, clock=clock) as mem:
        mem.remember("user", "lives_in", "Berlin")
        clock.advance(seconds=1)
        mem.remember("user", "works_at", "Kovac Labs")
        embed_all(mem)
        assert "Berlin" in mem.search("where does the user live?", k=1)[0].text
        misses = cache.misses
        mem.search("where does the user live?", k=1)
        assert cache.misses == misses  # the repeated query was a hit


@needs_minilm
def test_in_front_of_the_real_model() -> None:
    minilm = load_minilm().embedder
    cache = CachingEmbedder(minilm)
    texts = ["the user lives in Berlin", "she works at Kovac Labs", "the user lives in Berlin"]
    first = cache.encode(texts)
    assert (cache.hits, cache.misses) == (1, 2)
    np.testing.assert_array_equal(cache.encode(texts), first)  # all hits now
    assert (cache.hits, cache.misses) == (4, 2)
    # The rows are the model's; only the batch the text was padded in can move the last bits.
    np.testing.assert_allclose(first, minilm.encode(texts), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(first[0], first[2])
