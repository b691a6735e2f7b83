"""The default embedder: deterministic, fixed width, normalized, lexical."""

from __future__ import annotations

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
