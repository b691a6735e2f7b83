"""``SQLiteStore`` as a backend that lacks some of the optional fast paths.

The services check a store's optional protocols (``memvara.store.base``) once, when a
memory is built, so a test hides a fast path before it builds one. It cannot patch
``SQLiteStore`` itself: ``typing`` caches which classes satisfy a protocol, so a method
set to ``None`` on a class already checked still counts. A fresh subclass that sets the
methods to ``None`` is checked afresh, and ``None`` marks a method absent.
"""

from __future__ import annotations

from typing import cast

from memvara import SQLiteStore

OPTIONAL = (
    "write_claim", "insert_claim_ids", "slot_claims_across", "rank_fields",
    "claim_similarities", "episode_similarities", "flush_text_index",
)
"""Every optional method ``SQLiteStore`` has: without them it is a bare ``Store``."""


def store_without(*names: str) -> type[SQLiteStore]:
    """A subclass of ``SQLiteStore`` without the methods ``names`` (default: every one
    of ``OPTIONAL``). To see an existing store that way, set its ``__class__`` to it."""
    hidden = dict.fromkeys(names or OPTIONAL)
    return cast("type[SQLiteStore]", type("SQLiteStoreWithout", (SQLiteStore,), hidden))
