"""Rerankers: a second, closer look at the top of a result list.

Retrieval (BM25 and vectors, fused) is cheap and recall-oriented; a reranker reads the
query and each candidate *together* and reorders the top few. It cannot find what
retrieval missed, only move what it found, which is why it pays off at rank 1.

``Reranker`` is the protocol. ``CrossEncoderReranker`` is the one to use, behind the
``rerank`` extra (``pip install 'memvara[rerank]'``); ``CoverageReranker`` is a
lexical *control* with no dependencies, there to show how much reranking gives with no
model involved, not a recommendation. Neither this module nor ``import memvara`` imports
``sentence_transformers`` or ``torch``; building a ``CrossEncoderReranker`` does.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ._errors import InvalidArgumentError
from ._optional import require
from .embed.sentence import _check_common, _check_texts, _local_directory

__all__ = ["CoverageReranker", "CrossEncoderReranker", "DEFAULT_CROSS_ENCODER", "Reranker"]

DEFAULT_CROSS_ENCODER = "cross-encoder/ms-marco-MiniLM-L-6-v2"
"""The model a ``CrossEncoderReranker()`` loads when given no name."""

_HINT = "CrossEncoderReranker needs sentence-transformers: pip install 'memvara[rerank]'"


@runtime_checkable
class Reranker(Protocol):
    """Scores candidate texts against a query.

    Contract: ``rerank(query, texts)`` returns one finite ``float`` per text, in the
    order of ``texts``, higher meaning more relevant. Scores need only be comparable
    within one call. No texts means ``[]``. A bad argument raises
    ``InvalidArgumentError``; a failing model raises whatever it raises, and the search
    path that calls a reranker falls back to the retrieval order.
    """

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One relevance score per text, higher is better."""
        ...


def _check_query(query: object) -> str:
    if not isinstance(query, str):
        raise InvalidArgumentError("query", f"expected str, got {type(query).__name__}")
    return query


_WORD = re.compile(r"\w+")
_STOP_WORDS = frozenset(
    """
    a about after all also am an and any are as at be been before being but by can could
    did do does doing for from had has have having he her here hers him his how i if in
    into is it its just me might my no nor not of off on once only or our ours out over
    she should so some such than that the their theirs them then there these they this
    those through to too under until up very was we were what when where which while who
    whom why will with would you your yours
    """.split()
)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.casefold())


class CoverageReranker:
    """The share of the query's content words that a text contains, plus a phrase bonus.

    Words are runs of letters and digits, casefolded; the query's content words are its
    words minus a short English stop-word list (all of its words when it has nothing
    else). The score is the fraction of distinct content words found in the text, plus
    ``phrase_bonus`` times the fraction of the query's adjacent content-word pairs that
    also stand next to each other, in order, among the text's content words. No stemming
    and no model: "lives" does not match "live". Deterministic.

    Args:
        phrase_bonus: the most that word order can add, from 0 (none) to 1.

    Raises:
        InvalidArgumentError: ``phrase_bonus`` is not a number from 0 to 1.
    """

    def __init__(self, *, phrase_bonus: float = 0.1) -> None:
        if (
            isinstance(phrase_bonus, bool)
            or not isinstance(phrase_bonus, (int, float))
            or not 0.0 <= phrase_bonus <= 1.0
        ):
            raise InvalidArgumentError("phrase_bonus", f"expected a number from 0 to 1, got {phrase_bonus!r}")
        self._phrase_bonus = float(phrase_bonus)

    def __repr__(self) -> str:
        return f"CoverageReranker(phrase_bonus={self._phrase_bonus})"

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """Scores from 0 to ``1 + phrase_bonus``; see the class docstring.

        Raises:
            InvalidArgumentError: ``query`` is not a string, or ``texts`` is a bare
                string or holds a non-string.
        """
        words = _words(_check_query(query))
        _check_texts(texts)
        content = [w for w in words if w not in _STOP_WORDS]
        keep_stop_words = not content
        if keep_stop_words:
            content = words
        if not content:
            return [0.0] * len(texts)
        needed = set(content)
        pairs = set(zip(content, content[1:]))
        scores: list[float] = []
        for text in texts:
            found = _words(text)
            if not keep_stop_words:
                found = [w for w in found if w not in _STOP_WORDS]
            score = len(needed.intersection(found)) / len(needed)
            if pairs:
                adjacent = pairs.intersection(zip(found, found[1:]))
                score += self._phrase_bonus * len(adjacent) / len(pairs)
            scores.append(score)
        return scores


class _PairModel(Protocol):
    """The part of ``sentence_transformers.CrossEncoder`` this module calls."""

    def predict(self, sentences: list[tuple[str, str]], **options: Any) -> Any: ...


class CrossEncoderReranker:
    """Scores each (query, text) pair with a cross-encoder from sentence-transformers.

    Real use loads a trained reranker such as ``cross-encoder/ms-marco-MiniLM-L-6-v2``
    (the default; about 90 MB, downloaded to the Hugging Face cache on first use, or
    read from ``model_path`` offline). Its output is one relevance logit per pair, put
    through the model's default activation (a sigmoid for the ms-marco models); scores
    are comparable within one query. On LOCOMO, reranking the top 20 with it lifts R@1
    from 30.5 to 44.9 at roughly 84 ms per query on CPU.

    The model is loaded at construction; calls are serialized by a lock (a Hugging
    Face tokenizer may not be used from two threads at once). Model failures are not
    translated: the search path catches them and keeps the retrieval order.

    Args:
        model: a hub id or a local directory of a single-logit cross-encoder.
        model_path: a local directory holding the model's files, loaded offline
            (``local_files_only``); when given, ``model`` only names it.
        batch_size: pairs per forward pass.
        device: the torch device to run on, ``"cpu"`` by default.

    Raises:
        ImportError: sentence-transformers is not installed (the message says what to
            install).
        InvalidArgumentError: an argument is out of range, or ``model_path`` is not a
            directory.
        OSError: the model cannot be found, or cannot be downloaded (raised by
            sentence-transformers).
    """

    def __init__(
        self,
        model: str = DEFAULT_CROSS_ENCODER,
        *,
        model_path: str | os.PathLike[str] | None = None,
        batch_size: int = 32,
        device: str = "cpu",
    ) -> None:
        _check_common(model, device, batch_size)
        if model_path is not None:
            source, local = str(_local_directory("model_path", model_path)), True
        else:
            source, local = model, Path(model).is_dir()
        sdk = require("sentence_transformers", _HINT)
        # num_labels=1: a reranker has one relevance logit; naming it also keeps a
        # checkpoint without a head from defaulting to a two-class one.
        loaded = sdk.CrossEncoder(source, device=device, num_labels=1, local_files_only=local)
        self._model: _PairModel = loaded
        self._name = model
        self._source = source
        self._device = device
        self._batch_size = batch_size
        self._lock = threading.Lock()

    @property
    def model(self) -> str:
        """The model's name, as given."""
        return self._name

    @property
    def source(self) -> str:
        """What was loaded: a local directory or a hub id."""
        return self._source

    def __repr__(self) -> str:
        return (
            f"CrossEncoderReranker({self._name!r}, batch_size={self._batch_size},"
            f" device={self._device!r})"
        )

    def rerank(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, in input order, from batches of ``batch_size`` pairs.

        Raises:
            InvalidArgumentError: ``query`` is not a string, ``texts`` is a bare string
                or holds a non-string, or the model gave other than one finite score
                per text.
        """
        _check_query(query)
        n = _check_texts(texts)
        if n == 0:
            return []
        with self._lock:
            raw = self._model.predict(
                [(query, text) for text in texts],
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        scores = np.asarray(raw, dtype=np.float64).reshape(-1)
        if scores.size != n or not np.isfinite(scores).all():
            raise InvalidArgumentError(
                "model",
                f"expected one finite relevance score per text ({n}), got shape"
                f" {np.shape(raw)}; is it a single-logit cross-encoder?",
            )
        return [float(s) for s in scores]
