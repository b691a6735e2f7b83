"""Encoding text through a user's embedder, checked before anything is stored."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from .._errors import InvalidArgumentError
from ..embed import Embedder, HashingEmbedder

__all__ = ["encode_checked"]


def encode_checked(embedder: Embedder, texts: list[str]) -> npt.NDArray[np.float32]:
    """``embedder.encode(texts)``, refusing output of the wrong shape or with NaN/inf
    (our own ``HashingEmbedder`` is trusted and not re-checked)."""
    vectors = embedder.encode(texts)
    if type(embedder) is HashingEmbedder:
        return vectors
    dim = embedder.dim
    if not isinstance(vectors, np.ndarray) or vectors.shape != (len(texts), dim):
        raise InvalidArgumentError(
            "embedder", f"encode() must return shape ({len(texts)}, {dim}),"
            f" got {getattr(vectors, 'shape', type(vectors).__name__)}"
        )
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    if not np.isfinite(vectors).all():
        raise InvalidArgumentError("embedder", "encode() returned NaN or infinite values")
    return vectors
