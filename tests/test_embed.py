"""The default embedder: deterministic, fixed width, normalized, lexical."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from memvara import Embedder, HashingEmbedder, InvalidArgumentError


def test_shape_dtype_and_norm() -> None:
    vectors = HashingEmbedder(dim=64).encode(["user lives in Berlin", "I like sushi", ""])
    assert vectors.shape == (3, 64) and vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    np.testing.assert_allclose(np.linalg.norm(vectors[:2], axis=1), 1.0, rtol=1e-5)
    assert not vectors[2].any()  # empty text is the zero vector


def test_deterministic_across_instances_and_batches() -> None:
    texts = ["alpha beta", "gamma", "ERR_7734_TLSHANDSHAKE"]
    one = HashingEmbedder().encode(texts)
    other = np.vstack([HashingEmbedder().encode([t]) for t in texts])
    np.testing.assert_array_equal(one, other)


def test_similar_text_is_closer_than_unrelated_text() -> None:
    a, b, c = HashingEmbedder().encode(["user lives in Berlin", "user lives in berlin.", "I like sushi"])
    assert float(a @ b) > 0.9 > float(a @ c)


def test_unusual_text_encodes() -> None:
    vectors = HashingEmbedder(dim=32).encode(["东京 🙂", "a\x00b", "\ud800 lone", "x" * 100_000])
    assert np.isfinite(vectors).all()


def test_empty_batch() -> None:
    assert HashingEmbedder(dim=16).encode([]).shape == (0, 16)


def test_it_satisfies_the_protocol() -> None:
    assert isinstance(HashingEmbedder(), Embedder)
    assert repr(HashingEmbedder(dim=8)) == "HashingEmbedder(dim=8)"


@pytest.mark.parametrize("dim", [0, 7, 70_000, 3.5, True, "512"])
def test_bad_dims_are_refused(dim: object) -> None:
    with pytest.raises(InvalidArgumentError, match="dim"):
        HashingEmbedder(dim=dim)  # type: ignore[arg-type]


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(InvalidArgumentError, match="texts"):
        HashingEmbedder().encode("one string")
    with pytest.raises(InvalidArgumentError, match=r"texts\[1\]"):
        HashingEmbedder().encode(["ok", 3])  # type: ignore[list-item]


def test_lexical_similarities_are_the_vectors_cosines_without_collisions() -> None:
    texts = ["tea in Lisbon!", "user owns a teapot", "Lisbon, Lisbon", "东京 🙂 \ud800", "", "?"]
    # Wide enough that these few features never share a bucket: the vectors' cosines
    # are then the exact ones, which the method computes at any width.
    wide = HashingEmbedder(dim=65_536)
    hashed = (wide.encode(["tea in Lisbon"]) @ wide.encode(texts).T)[0]
    exact = HashingEmbedder(dim=8).lexical_similarities("tea in Lisbon", texts)
    np.testing.assert_allclose(exact, hashed, atol=1e-6)
    assert exact[0] > 0.9 and exact[-2:] == [0.0, 0.0]  # "!" changes two trigrams, no word
    # At the default width "Kiwi" and "Bruno owns jazz" share buckets, not features.
    narrow = HashingEmbedder()
    assert float(narrow.encode(["Kiwi"])[0] @ narrow.encode(["Bruno owns jazz"])[0]) > 0.25
    assert narrow.lexical_similarities("Kiwi", ["Bruno owns jazz"]) == [0.0]
    assert narrow.lexical_similarities("Kiwi", []) == []


def test_lexical_similarities_refuse_bad_inputs() -> None:
    with pytest.raises(InvalidArgumentError, match="^query: "):
        HashingEmbedder().lexical_similarities(None, ["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="^texts: "):
        HashingEmbedder().lexical_similarities("a", "one string")
    with pytest.raises(InvalidArgumentError, match=r"^texts\[1\]: "):
        HashingEmbedder().lexical_similarities("a", ["ok", 3])  # type: ignore[list-item]


def test_only_a_lexical_embedder_offers_its_exact_similarity() -> None:
    from memvara.embed import lexical_similarities

    class Semantic:
        lexical = False

        def lexical_similarities(self, query: str, texts: Sequence[str]) -> list[float]:
            return [0.0] * len(texts)

    class Unable:
        lexical = True
        lexical_similarities = 0.5

    hashing = HashingEmbedder()
    assert lexical_similarities(hashing) == hashing.lexical_similarities
    assert lexical_similarities(Semantic()) is None  # its cosines are not collisions
    assert lexical_similarities(Unable()) is None and lexical_similarities(object()) is None


def test_small_inputs_hashed_in_python_match_the_numpy_path_bit_for_bit() -> None:
    import random

    from memvara.embed import _SMALL_INPUT

    rng = random.Random(7)
    alphabet = "abcdefghij klmnop QRS.,!\u00e9\u4e2d\U0001f642\t"
    texts = ["", " ", "a", "ab", "abc", "user lives in Berlin"] + [
        "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 60))) for _ in range(500)
    ]
    embedder = HashingEmbedder(dim=64)
    padding = "x" * (_SMALL_INPUT + 1)  # pushes a batch onto the numpy path
    for text in texts:
        small = embedder.encode([text])
        batched = embedder.encode([text, padding])[:1]
        assert small.dtype == np.float32
        assert np.array_equal(small, batched), text


def test_the_feature_memos_are_bounded_and_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    import memvara.embed as embed

    monkeypatch.setattr(embed, "_TRIGRAM_CACHE_SIZE", 2)
    monkeypatch.setattr(embed, "_WORD_CACHE_SIZE", 2)
    embedder, fresh = HashingEmbedder(), HashingEmbedder()
    long = " ".join(f"word{i}" for i in range(60))  # the numpy path
    texts = ["user lives in Berlin", "user works at Acme", "user lives in Berlin", long, long]
    for text in texts:
        assert np.array_equal(embedder.encode([text]), fresh.encode([text]))
        assert len(embedder._trigram_cache) <= 2 + len(text) + 2
        assert len(embedder._word_cache) <= 2 + len(text.split())
        assert len(embedder._spelling_cache) <= 2 + len(text.split())


def test_words_are_hashed_without_surrounding_punctuation() -> None:
    embedder = HashingEmbedder(dim=64)
    assert embedder._word_feature("(Berlin),") == embedder._word_feature("Berlin")
    assert embedder._word_feature("...") == (0, 0.0)  # only punctuation: no word feature
    assert embedder._word_feature("Berlin")[1] in (2.0, -2.0)
