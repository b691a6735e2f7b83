"""Re-embedding a store after a model change: every claim and turn encoded again.

Pages of text are read and encoded with no transaction open (encoding is the slow part),
and handed to the store's ``rebuild_vectors``, which keeps the new vectors aside and
swaps them in at once, in one short transaction. Until then searches use the old ones.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .encode import encode_checked
from ..embed import Embedder
from ..store.base import Store

__all__ = ["REEMBED_BATCH", "fingerprint", "reembed_store"]

REEMBED_BATCH = 512
"""Texts encoded per call: big enough to batch a model, small enough to bound memory."""

_PROBE = ["memvara embedder fingerprint", "where does the user live?"]


def fingerprint(embedder: Embedder) -> str:
    """What identifies an embedder's vector space: its class, width, and the (rounded)
    vectors it gives two fixed texts. Two models of one width differ here."""
    vectors = np.round(encode_checked(embedder, list(_PROBE)).astype(np.float64), 4)
    digest = hashlib.blake2b(vectors.tobytes(), digest_size=8).hexdigest()
    kind = type(embedder)
    return f"{kind.__module__}.{kind.__qualname__}/{embedder.dim}/{digest}"


def reembed_store(store: Store, embedder: Embedder) -> int:
    """Encode every claim and turn in ``store`` with ``embedder`` and replace their
    vectors; how many rows were encoded."""
    done = 0
    with store.rebuild_vectors(embedder.dim, fingerprint(embedder)) as put:
        for table in ("claims", "episodes"):
            after = 0
            while page := store.vector_texts(table, after, REEMBED_BATCH):
                put(table, [rowid for rowid, _ in page],
                    encode_checked(embedder, [text for _, text in page]))
                done += len(page)
                after = page[-1][0]
    return done
