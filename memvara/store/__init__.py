"""Storage backends: the public ``Store`` protocol, the optional fast paths a backend
may add (``store.base``), and the default ``SQLiteStore``."""

from __future__ import annotations

from .._domain.model import STATES, TimeQuery
from .base import (
    BulkWriteStore,
    DeferredTextIndexStore,
    RankFields,
    RankingStore,
    SimilarityStore,
    SingleWriteStore,
    Store,
    TransferStore,
)
from .sqlite.store import SQLiteStore

__all__ = [
    "BulkWriteStore", "DeferredTextIndexStore", "RankFields", "RankingStore", "SQLiteStore",
    "STATES", "SimilarityStore", "SingleWriteStore", "Store", "TimeQuery", "TransferStore",
]
